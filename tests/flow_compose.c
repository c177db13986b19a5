/* Composition: shared work (reference counts), reusable sub-graphs with named
 * entry and exit points, factories from typed parameters and their errors. */
#define _GNU_SOURCE
#include "test_util.h"

#include <pthread.h>

static atomic_int drops;
static void drop_state(void *state) { atomic_fetch_add(&drops, 1); }

TEST(shared_work_is_dropped_with_its_last_task) {
    weft_executor *ex = make_executor(2);
    atomic_int hits = 0;
    atomic_store(&drops, 0);
    weft_status err;
    ASSERT_NULL(weft_work_create(NULL, NULL, NULL, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    weft_work *w = weft_work_create(bump, &hits, drop_state, &err);
    ASSERT_NOT_NULL(w);
    weft_taskflow *a = make_taskflow("a"), *b = make_taskflow("b");
    for (int i = 0; i < 5; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_work(a, w)));
    weft_task tb = weft_emplace_work(b, w);
    ASSERT_STATUS(weft_task_set_work(tb, noop, NULL), WEFT_EINVAL); /* shared: not replaceable */
    ASSERT_EQ(weft_work_refs(w), 7);
    weft_work_release(w); /* the tasks keep it */
    ASSERT_OK(weft_run_and_wait(ex, a));
    ASSERT_OK(weft_run_and_wait(ex, b));
    ASSERT_EQ(atomic_load(&hits), 6);
    ASSERT_OK(weft_taskflow_clear(a));
    ASSERT_EQ(atomic_load(&drops), 0);
    ASSERT_OK(weft_taskflow_destroy(b));
    ASSERT_EQ(atomic_load(&drops), 1);
    ASSERT_OK(weft_taskflow_destroy(a));
    weft_executor_destroy(ex);
}

/* ---- a composition: in -> {left, right} -> out, plus a condition loop ------- */

struct stage {
    atomic_int in, mid, out;
};
static int st_in(weft_ctx *c, void *a) { return bump(c, &((struct stage *)a)->in); }
static int st_mid(weft_ctx *c, void *a) { return bump(c, &((struct stage *)a)->mid); }
static int st_out(weft_ctx *c, void *a) {
    struct stage *s = a; /* both mids of this copy's run are done */
    return atomic_load(&s->mid) >= 2 * (atomic_load(&s->out) + 1) ? bump(c, &s->out) : 1;
}

static weft_composition *make_diamond(struct stage *s) {
    weft_status err;
    weft_composition *c = weft_composition_create("diamond", &err);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task in = must_emplace(g, st_in, s), l = must_emplace(g, st_mid, s), r = must_emplace(g, st_mid, s);
    weft_task out = must_emplace(g, st_out, s);
    ASSERT_OK(weft_task_set_name(in, "in"));
    ASSERT_OK(weft_task_set_name(out, "out"));
    ASSERT_OK(weft_precede(in, l));
    ASSERT_OK(weft_precede(in, r));
    ASSERT_OK(weft_precede(l, out));
    ASSERT_OK(weft_precede(r, out));
    ASSERT_OK(weft_composition_set_entry(c, "in", in));
    ASSERT_OK(weft_composition_set_exit(c, "out", out));
    ASSERT_STATUS(weft_composition_set_entry(c, "x", WEFT_TASK_NULL), WEFT_EINVAL);
    return c;
}

struct seq {
    atomic_int step, bad;
};
static int expect_step(weft_ctx *c, void *a) { return 0; }

TEST(composition_copies_link_through_named_entries_and_exits) {
    weft_executor *ex = make_executor(2);
    struct stage s1 = {0};
    weft_composition *c = make_diamond(&s1);
    weft_taskflow *tf = make_taskflow("user");
    weft_task head = must_emplace(tf, expect_step, NULL);
    weft_instance i1, i2;
    ASSERT_STATUS(weft_composition_instantiate(c, weft_composition_graph(c), NULL, &i1), WEFT_EINVAL);
    ASSERT_OK(weft_composition_instantiate(c, tf, "first", &i1));
    ASSERT_OK(weft_composition_instantiate(c, tf, "second", &i2));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 9);
    weft_task e1 = weft_instance_entry(&i1, "in"), x1 = weft_instance_exit(&i1, "out");
    weft_task e2 = weft_instance_entry(&i2, "in"), x2 = weft_instance_exit(&i2, "out");
    ASSERT_TRUE(weft_task_is_null(weft_instance_entry(&i1, "nope")));
    ASSERT_STREQ(weft_task_name(e1), "first/in");
    ASSERT_STREQ(weft_task_name(x2), "second/out");
    ASSERT_OK(weft_precede(head, e1));
    ASSERT_OK(weft_precede(x1, e2)); /* copies in sequence */
    ASSERT_OK(weft_run_n(ex, tf, 3, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&s1.in), 6);
    ASSERT_EQ(atomic_load(&s1.mid), 12);
    ASSERT_EQ(atomic_load(&s1.out), 6);
    (void)x2;
    weft_composition_destroy(c); /* the copies stay */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&s1.out), 8);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* Copy 1 of {a} with entry "in" = a; then the composition grows by b and its
 * entry moves to b; copy 2 of {a, b} lands right after copy 1.  Copy 1 must
 * still resolve "in" to its own a (copy 1 + index of b would be copy 2's a). */
TEST(an_instance_keeps_resolving_to_its_own_copy_after_the_composition_changes) {
    weft_status err;
    weft_composition *c = weft_composition_create("grows", &err);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task a = must_emplace(g, noop, NULL);
    ASSERT_OK(weft_task_set_name(a, "a"));
    ASSERT_OK(weft_composition_set_entry(c, "in", a));
    ASSERT_OK(weft_composition_set_exit(c, "out", a));
    weft_taskflow *tf = make_taskflow("user");
    weft_instance i1, i2;
    ASSERT_OK(weft_composition_instantiate(c, tf, "one", &i1));
    weft_task b = must_emplace(g, noop, NULL);
    ASSERT_OK(weft_task_set_name(b, "b"));
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_composition_set_entry(c, "in", b));
    ASSERT_OK(weft_composition_set_entry(c, "extra", b)); /* a name copy 1 never had */
    ASSERT_OK(weft_composition_instantiate(c, tf, "two", &i2));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 3);
    ASSERT_STREQ(weft_task_name(weft_instance_entry(&i1, "in")), "one/a");
    ASSERT_STREQ(weft_task_name(weft_instance_exit(&i1, "out")), "one/a");
    ASSERT_TRUE(weft_task_is_null(weft_instance_entry(&i1, "extra")));
    ASSERT_STREQ(weft_task_name(weft_instance_entry(&i2, "in")), "two/b");
    ASSERT_STREQ(weft_task_name(weft_instance_entry(&i2, "extra")), "two/b");
    ASSERT_STREQ(weft_task_name(weft_instance_exit(&i2, "out")), "two/a");
    /* Linking copy 1's exit to copy 2's entry is an edge between the copies. */
    ASSERT_OK(weft_precede(weft_instance_exit(&i1, "out"), weft_instance_entry(&i2, "in")));
    ASSERT_EQ(weft_task_num_successors(weft_instance_entry(&i1, "in")), 1);
    weft_composition_destroy(c);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* An exit named on a task that was erased before the copy is the null task
 * in that instance, also after later tasks are added to the destination: the
 * copy's erased slot used to be reused by the next weft_emplace, and the exit
 * then named that unrelated task. */
TEST(an_instances_point_on_an_erased_task_stays_null_after_later_emplaces) {
    weft_status err;
    weft_composition *c = weft_composition_create("holes", &err);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task a = must_emplace(g, noop, NULL), b = must_emplace(g, noop, NULL);
    ASSERT_OK(weft_composition_set_entry(c, "in", a));
    ASSERT_OK(weft_composition_set_exit(c, "mid", b));
    ASSERT_OK(weft_task_erase(b));
    weft_taskflow *tf = make_taskflow("user");
    weft_instance in;
    ASSERT_OK(weft_composition_instantiate(c, tf, NULL, &in));
    ASSERT_TRUE(weft_task_is_null(weft_instance_exit(&in, "mid")));
    weft_task later = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_task_set_name(later, "unrelated"));
    ASSERT_TRUE(weft_task_is_null(weft_instance_exit(&in, "mid")));
    ASSERT_FALSE(weft_task_is_null(weft_instance_entry(&in, "in")));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 2);
    ASSERT_OK(weft_run_and_wait(NULL, tf));
    weft_composition_destroy(c);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* An erased task's handle is invalid (graph.h): before, set_entry/set_exit
 * took it with WEFT_OK, and once the slot was reused the name resolved, in
 * later copies, to the unrelated task that took it. */
TEST(composition_points_refuse_an_erased_task) {
    weft_status err;
    weft_composition *c = weft_composition_create("erased-point", &err);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task e = must_emplace(g, noop, NULL);
    ASSERT_OK(weft_task_erase(e));
    ASSERT_STATUS(weft_composition_set_exit(c, "x", e), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "erased") != NULL);
    ASSERT_STATUS(weft_composition_set_entry(c, "x", e), WEFT_EINVAL);
    weft_composition_destroy(c);
}

/* A composition's graph is the composition's: weft_taskflow_destroy on it
 * is refused (as on a subflow's graph), and the composition stays usable.
 * Before, it freed the graph and weft_composition_destroy freed it again. */
TEST(destroying_a_compositions_graph_is_refused_and_the_composition_stays_usable) {
    weft_status err;
    weft_composition *c = weft_composition_create("owned", &err);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task a = must_emplace(g, noop, NULL);
    ASSERT_OK(weft_composition_set_entry(c, "in", a));
    ASSERT_STATUS(weft_taskflow_destroy(g), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "composition") != NULL);
    weft_taskflow *tf = weft_taskflow_create("user", &err);
    ASSERT_NOT_NULL(tf);
    weft_instance inst;
    ASSERT_OK(weft_composition_instantiate(c, tf, "i", &inst));
    ASSERT_FALSE(weft_task_is_null(weft_instance_entry(&inst, "in")));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_composition_destroy(c); /* frees the graph once (ASan: no double free) */
}

/* weft_mem_realloc takes a size of 0 as 1, as weft_mem_alloc and
 * weft_mem_free do: before, the C library's realloc(p, 0) freed p and
 * returned NULL ("failed, p unchanged" by the header), and a later free or
 * read of p was a use after free. */
TEST(mem_realloc_to_zero_keeps_a_block_the_caller_frees) {
    unsigned char *p = weft_mem_alloc(64);
    ASSERT_NOT_NULL(p);
    p[0] = 42;
    unsigned char *q = weft_mem_realloc(p, 64, 0);
    ASSERT_NOT_NULL(q);
    ASSERT_EQ(q[0], 42);
    weft_mem_free(q, 0);
}

/* ---- factories --------------------------------------------------------------- */

struct made {
    atomic_int hits;
    int64_t width;
    double scale;
    bool flag;
    char label[32];
};
static struct made made;

static weft_status build_fan(weft_composition *c, const weft_params *p, void *arg) {
    int64_t width;
    weft_status st = weft_params_get_int(p, "width", &width);
    if (st) return st;
    ASSERT_OK(weft_params_get_float(p, "scale", &made.scale));
    ASSERT_OK(weft_params_get_bool(p, "flag", &made.flag));
    const char *label;
    ASSERT_OK(weft_params_get_string(p, "label", &label));
    snprintf(made.label, sizeof made.label, "%s", label);
    made.width = width;
    weft_taskflow *g = weft_composition_graph(c);
    weft_task src = weft_placeholder(g);
    for (int64_t i = 0; i < width; i++) {
        weft_task t = weft_emplace(g, bump, &made.hits);
        if (weft_task_is_null(t) || weft_precede(src, t) != WEFT_OK) return weft_taskflow_last_error(g);
    }
    return weft_composition_set_entry(c, "src", src);
}

TEST(factory_builds_compositions_from_typed_parameters) {
    weft_executor *ex = make_executor(2);
    weft_status err;
    weft_factory *f = weft_factory_create("fan", build_fan, NULL, &err);
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_factory_require(f, "width", WEFT_PARAM_INT));
    ASSERT_OK(weft_factory_require(f, "scale", WEFT_PARAM_FLOAT));
    ASSERT_OK(weft_factory_require(f, "flag", WEFT_PARAM_BOOL));
    ASSERT_OK(weft_factory_require(f, "label", WEFT_PARAM_STRING));
    weft_params *p = weft_params_create(&err);
    ASSERT_OK(weft_params_set_int(p, "width", 5));
    ASSERT_OK(weft_params_set_int(p, "scale", 2)); /* an int is a fine float */
    ASSERT_OK(weft_params_set_bool(p, "flag", true));
    ASSERT_OK(weft_params_set_string(p, "label", "old"));
    ASSERT_OK(weft_params_set_string(p, "label", "fan-5")); /* replaced */
    weft_composition *c = weft_factory_make(f, p, &err);
    ASSERT_NOT_NULL(c);
    ASSERT_EQ(made.width, 5);
    ASSERT_TRUE(made.scale == 2.0 && made.flag);
    ASSERT_STREQ(made.label, "fan-5");
    weft_taskflow *tf = make_taskflow("uses-fan");
    weft_instance in;
    ASSERT_OK(weft_composition_instantiate(c, tf, NULL, &in));
    ASSERT_FALSE(weft_task_is_null(weft_instance_entry(&in, "src")));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&made.hits), 5);
    weft_composition_destroy(c);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_params_destroy(p);
    weft_factory_destroy(f);
    weft_executor_destroy(ex);
}

TEST(factory_reports_missing_and_mistyped_parameters_by_name) {
    weft_status err;
    weft_factory *f = weft_factory_create("fan", build_fan, NULL, &err);
    ASSERT_OK(weft_factory_require(f, "width", WEFT_PARAM_INT));
    ASSERT_OK(weft_factory_require(f, "label", WEFT_PARAM_STRING));
    ASSERT_STATUS(weft_factory_require(f, "bad", (weft_param_type)9), WEFT_EINVAL);
    weft_params *p = weft_params_create(&err);
    ASSERT_OK(weft_params_set_int(p, "width", 3));
    ASSERT_NULL(weft_factory_make(f, p, &err));
    ASSERT_STATUS(err, WEFT_ENOENT);
    ASSERT_TRUE(strstr(weft_factory_error_message(f), "'label' is missing") != NULL);
    ASSERT_OK(weft_params_set_bool(p, "label", false));
    ASSERT_NULL(weft_factory_make(f, p, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_factory_error_message(f), "'label' is a bool, expected string") != NULL);
    ASSERT_OK(weft_params_set_string(p, "width", "wide"));
    int64_t v = 42;
    ASSERT_STATUS(weft_params_get_int(p, "width", &v), WEFT_EINVAL);
    ASSERT_EQ(v, 42);
    ASSERT_STREQ(weft_params_error_message(p), "parameter 'width' is a string, expected int");
    ASSERT_NULL(weft_factory_make(f, NULL, &err));
    ASSERT_STATUS(err, WEFT_ENOENT);
    ASSERT_NULL(weft_factory_make(NULL, p, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_NULL(weft_factory_create("x", NULL, NULL, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_STATUS(weft_params_set_int(NULL, "a", 1), WEFT_EINVAL);
    weft_params_destroy(p);
    weft_factory_destroy(f);
}

/* Gets on one parameter set from several threads at once, each failing with
 * its own name: a get only reads the set (its message is the thread's), so
 * each thread reads exactly its own message, and TSan sees no race.  (The set
 * used to keep the message, written through the const handle by every get.) */
struct reader {
    const weft_params *p;
    int id;
    atomic_int *go;
    int wrong;
};

static void *read_params(void *arg) {
    struct reader *r = arg;
    char name[16], want[64];
    snprintf(name, sizeof name, "nope%d", r->id);
    snprintf(want, sizeof want, "parameter '%s' is missing (want int)", name);
    while (!atomic_load(r->go)) {
    }
    for (int i = 0; i < 2000; i++) {
        int64_t v;
        bool b;
        if (weft_params_get_int(r->p, name, &v) != WEFT_ENOENT) r->wrong++;
        if (strcmp(weft_params_error_message(r->p), want) != 0) r->wrong++;
        if (strcmp(weft_last_error_message(), want) != 0) r->wrong++;
        if (weft_params_get_bool(r->p, "flag", &b) != WEFT_OK || !b) r->wrong++;
        if (weft_params_error_message(r->p)[0] != '\0') r->wrong++; /* last get succeeded */
    }
    return NULL;
}

TEST(params_gets_and_messages_are_safe_under_concurrent_reads) {
    weft_params *p = weft_params_create(NULL);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(weft_params_set_bool(p, "flag", true));
    atomic_int go;
    atomic_init(&go, 0);
    enum { T = 4 };
    struct reader r[T];
    pthread_t t[T];
    for (int i = 0; i < T; i++) {
        r[i] = (struct reader){p, i, &go, 0};
        ASSERT_EQ(pthread_create(&t[i], NULL, read_params, &r[i]), 0);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < T; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < T; i++) ASSERT_EQ(r[i].wrong, 0);
    weft_params_destroy(p);
}
