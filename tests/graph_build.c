/* Building taskflows: tasks, edges, names, user data, walking, clearing, DOT. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <unistd.h>

/* Tasks that record when they ran, from one global sequence. */
static atomic_int seq;
struct stamp {
    atomic_int start, finish, runs;
};

static int stamp_task(weft_ctx *ctx, void *arg) {
    struct stamp *s = arg;
    atomic_store(&s->start, atomic_fetch_add(&seq, 1));
    atomic_fetch_add(&s->runs, 1);
    atomic_store(&s->finish, atomic_fetch_add(&seq, 1));
    return 0;
}

static void assert_before(const struct stamp *a, const struct stamp *b, const char *what) {
    int fa = atomic_load(&a->finish), sb = atomic_load(&b->start);
    if (!(fa < sb)) TEST_FAIL_("edge %s not respected: finish %d, start %d", what, fa, sb);
}

/* ---- tasks ------------------------------------------------------------------- */

TEST(emplace_gives_tasks_indexed_in_emplace_order) {
    weft_taskflow *tf = make_taskflow("t");
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
    weft_task t[10];
    for (int i = 0; i < 10; i++) {
        t[i] = must_emplace(tf, noop, NULL);
        ASSERT_EQ(weft_task_index(t[i]), i);
        ASSERT_EQ(weft_taskflow_num_tasks(tf), i + 1);
        ASSERT_STREQ(weft_task_name(t[i]), "");
        ASSERT_NULL(weft_task_data(t[i]));
        ASSERT_EQ(weft_task_num_successors(t[i]), 0);
        ASSERT_EQ(weft_task_num_dependents(t[i]), 0);
        ASSERT_TRUE(weft_task_is_null(weft_task_successor(t[i], 0)));
        for (int j = 0; j < i; j++) ASSERT_FALSE(same_task(t[i], t[j]));
    }
    weft_task p = weft_placeholder(tf);
    ASSERT_FALSE(weft_task_is_null(p));
    ASSERT_EQ(weft_task_index(p), 10);
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 11);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_OK);
    ASSERT_STREQ(weft_taskflow_error_message(tf), "");

    ASSERT_TRUE(weft_task_is_null(WEFT_TASK_NULL));
    ASSERT_EQ(weft_task_index(WEFT_TASK_NULL), SIZE_MAX);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(many_tasks_keep_their_handles_valid_as_the_taskflow_grows) {
    /* Tasks come from a slab: handles taken early must survive later growth. */
    enum { N = 20000 };
    weft_taskflow *tf = make_taskflow(NULL);
    static weft_task t[N];
    static atomic_int count[N];
    for (int i = 0; i < N; i++) {
        t[i] = must_emplace(tf, bump, &count[i]);
        if (i) ASSERT_OK(weft_precede(t[i / 2], t[i]));
    }
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(weft_task_index(t[i]), i);
        ASSERT_EQ(weft_task_num_dependents(t[i]), i ? 1 : 0);
    }
    weft_executor *ex = make_executor(2);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    for (int i = 0; i < N; i++) ASSERT_EQ(atomic_load(&count[i]), 1);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(placeholder_runs_as_noop_until_given_work) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    atomic_int after = 0, p1 = 0, p2 = 0;
    weft_task p = weft_placeholder(tf);
    ASSERT_FALSE(weft_task_is_null(p));
    weft_task a = must_emplace(tf, bump, &after);
    ASSERT_OK(weft_precede(p, a));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&after), 1);

    ASSERT_OK(weft_task_set_work(p, bump, &p1));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&p1), 1);
    ASSERT_EQ(atomic_load(&after), 2);

    /* Replacing work, and setting it back to a no-op. */
    ASSERT_OK(weft_task_set_work(p, bump, &p2));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&p1), 1);
    ASSERT_EQ(atomic_load(&p2), 1);
    ASSERT_OK(weft_task_set_work(p, NULL, NULL));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&p1), 1);
    ASSERT_EQ(atomic_load(&p2), 1);
    ASSERT_EQ(atomic_load(&after), 4);

    /* set_work works on emplaced tasks too. */
    ASSERT_OK(weft_task_set_work(a, bump, &p1));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&p1), 2);
    ASSERT_EQ(atomic_load(&after), 4);

    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- edges ------------------------------------------------------------------- */

TEST(precede_and_succeed_record_edges_in_both_directions) {
    weft_taskflow *tf = make_taskflow(NULL);
    struct stamp s[4] = { 0 };
    weft_task a = must_emplace(tf, stamp_task, &s[0]);
    weft_task b = must_emplace(tf, stamp_task, &s[1]);
    weft_task c = must_emplace(tf, stamp_task, &s[2]);
    weft_task d = must_emplace(tf, stamp_task, &s[3]);
    ASSERT_OK(weft_precede(a, b));   /* a -> b */
    ASSERT_OK(weft_succeed(c, a));   /* a -> c */
    ASSERT_OK(weft_precede(a, d));   /* a -> d */
    ASSERT_OK(weft_succeed(d, c));   /* c -> d */

    ASSERT_EQ(weft_task_num_successors(a), 3);
    ASSERT_TRUE(same_task(weft_task_successor(a, 0), b));
    ASSERT_TRUE(same_task(weft_task_successor(a, 1), c));
    ASSERT_TRUE(same_task(weft_task_successor(a, 2), d));
    ASSERT_TRUE(weft_task_is_null(weft_task_successor(a, 3)));
    ASSERT_TRUE(weft_task_is_null(weft_task_successor(a, SIZE_MAX)));
    ASSERT_EQ(weft_task_num_dependents(a), 0);
    ASSERT_EQ(weft_task_num_dependents(b), 1);
    ASSERT_EQ(weft_task_num_dependents(c), 1);
    ASSERT_EQ(weft_task_num_dependents(d), 2);
    ASSERT_EQ(weft_task_num_successors(c), 1);
    ASSERT_TRUE(same_task(weft_task_successor(c, 0), d));
    ASSERT_EQ(weft_task_num_successors(d), 0);

    weft_executor *ex = make_executor(4);
    for (int r = 1; r <= 20; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int i = 0; i < 4; i++) ASSERT_EQ(atomic_load(&s[i].runs), r);
        assert_before(&s[0], &s[1], "a->b");
        assert_before(&s[0], &s[2], "a->c");
        assert_before(&s[0], &s[3], "a->d");
        assert_before(&s[2], &s[3], "c->d");
    }
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(precede_many_and_succeed_many_add_every_edge) {
    enum { N = 6 };
    weft_taskflow *tf = make_taskflow(NULL);
    struct stamp s[N + 2] = { 0 };
    weft_task hub = must_emplace(tf, stamp_task, &s[N]);
    weft_task sink = must_emplace(tf, stamp_task, &s[N + 1]);
    weft_task leaf[N];
    for (int i = 0; i < N; i++) leaf[i] = must_emplace(tf, stamp_task, &s[i]);

    ASSERT_OK(weft_precede_many(hub, NULL, 0));
    ASSERT_OK(weft_succeed_many(sink, NULL, 0));
    ASSERT_EQ(weft_task_num_successors(hub), 0);
    ASSERT_EQ(weft_task_num_dependents(sink), 0);

    ASSERT_OK(weft_precede_many(hub, leaf, N));
    ASSERT_OK(weft_succeed_many(sink, leaf, N));
    ASSERT_EQ(weft_task_num_successors(hub), N);
    ASSERT_EQ(weft_task_num_dependents(sink), N);
    for (int i = 0; i < N; i++) {
        ASSERT_TRUE(same_task(weft_task_successor(hub, i), leaf[i]));
        ASSERT_EQ(weft_task_num_dependents(leaf[i]), 1);
        ASSERT_EQ(weft_task_num_successors(leaf[i]), 1);
        ASSERT_TRUE(same_task(weft_task_successor(leaf[i], 0), sink));
    }

    weft_executor *ex = make_executor(3);
    for (int r = 0; r < 20; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int i = 0; i < N; i++) {
            assert_before(&s[N], &s[i], "hub->leaf");
            assert_before(&s[i], &s[N + 1], "leaf->sink");
        }
    }
    for (int i = 0; i < N + 2; i++) ASSERT_EQ(atomic_load(&s[i].runs), 20);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(duplicate_edge_is_harmless) {
    weft_taskflow *tf = make_taskflow(NULL);
    struct stamp s[2] = { 0 };
    weft_task a = must_emplace(tf, stamp_task, &s[0]);
    weft_task b = must_emplace(tf, stamp_task, &s[1]);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_succeed(b, a));
    weft_executor *ex = make_executor(2);
    for (int r = 1; r <= 10; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&s[0].runs), r);
        ASSERT_EQ(atomic_load(&s[1].runs), r);
        assert_before(&s[0], &s[1], "a->b (x3)");
    }
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- names and user data ----------------------------------------------------- */

TEST(task_names_are_copied_and_null_clears) {
    weft_taskflow *tf = make_taskflow(NULL);
    weft_task t = must_emplace(tf, noop, NULL);
    char buf[32] = "alpha";
    ASSERT_OK(weft_task_set_name(t, buf));
    strcpy(buf, "XXXXX");
    ASSERT_STREQ(weft_task_name(t), "alpha");
    ASSERT_OK(weft_task_set_name(t, "beta"));
    ASSERT_STREQ(weft_task_name(t), "beta");
    ASSERT_OK(weft_task_set_name(t, NULL));
    ASSERT_STREQ(weft_task_name(t), "");
    ASSERT_OK(weft_task_set_name(t, ""));
    ASSERT_STREQ(weft_task_name(t), "");

    /* A long name is kept whole. */
    char longname[1001];
    memset(longname, 'n', 1000);
    longname[1000] = '\0';
    ASSERT_OK(weft_task_set_name(t, longname));
    ASSERT_EQ(strlen(weft_task_name(t)), 1000);
    ASSERT_STREQ(weft_task_name(t), longname);

    ASSERT_STREQ(weft_task_name(WEFT_TASK_NULL), "");
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(taskflow_name_is_copied_and_null_clears) {
    char buf[16] = "flow";
    weft_taskflow *tf = make_taskflow(buf);
    strcpy(buf, "XXXX");
    ASSERT_STREQ(weft_taskflow_name(tf), "flow");
    ASSERT_OK(weft_taskflow_set_name(tf, "renamed"));
    ASSERT_STREQ(weft_taskflow_name(tf), "renamed");
    strcpy(buf, "other");
    ASSERT_OK(weft_taskflow_set_name(tf, buf));
    buf[0] = 'X';
    ASSERT_STREQ(weft_taskflow_name(tf), "other");
    ASSERT_OK(weft_taskflow_set_name(tf, NULL));
    ASSERT_STREQ(weft_taskflow_name(tf), "");
    ASSERT_OK(weft_taskflow_destroy(tf));

    tf = make_taskflow(NULL);
    ASSERT_STREQ(weft_taskflow_name(tf), "");
    ASSERT_OK(weft_taskflow_destroy(tf));
}

struct data_probe {
    atomic_int ok, bad;
};

static int check_own_data(weft_ctx *ctx, void *arg) {
    struct data_probe *p = arg;
    weft_task self = weft_ctx_task(ctx);
    if (weft_task_data(self) == (void *)p) atomic_fetch_add(&p->ok, 1);
    else atomic_fetch_add(&p->bad, 1);
    return 0;
}

TEST(task_user_data_round_trips_and_is_visible_inside_the_task) {
    weft_taskflow *tf = make_taskflow(NULL);
    struct data_probe p = { 0 };
    weft_task t = must_emplace(tf, check_own_data, &p);
    weft_task u = must_emplace(tf, check_own_data, &p);
    ASSERT_NULL(weft_task_data(t));
    ASSERT_OK(weft_task_set_data(t, &p));
    ASSERT_OK(weft_task_set_data(u, &p));
    ASSERT_TRUE(weft_task_data(t) == (void *)&p);
    int other;
    ASSERT_OK(weft_task_set_data(u, &other));
    ASSERT_TRUE(weft_task_data(u) == (void *)&other);
    ASSERT_OK(weft_task_set_data(u, &p));

    weft_executor *ex = make_executor(2);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&p.ok), 2);
    ASSERT_EQ(atomic_load(&p.bad), 0);
    ASSERT_OK(weft_task_set_data(t, NULL));
    ASSERT_NULL(weft_task_data(t));
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

struct self_check {
    size_t index;
    const char *name;
    atomic_int *bad;
};

static int check_ctx_task(weft_ctx *ctx, void *arg) {
    struct self_check *c = arg;
    weft_task self = weft_ctx_task(ctx);
    if (weft_task_is_null(self) || weft_task_index(self) != c->index ||
        strcmp(weft_task_name(self), c->name) != 0)
        atomic_fetch_add(c->bad, 1);
    return 0;
}

TEST(ctx_task_is_the_running_task) {
    enum { N = 50 };
    weft_taskflow *tf = make_taskflow(NULL);
    atomic_int bad = 0;
    struct self_check c[N];
    char names[N][24];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "task-%d", i);
        c[i] = (struct self_check){ .index = (size_t)i, .name = names[i], .bad = &bad };
        weft_task t = must_emplace(tf, check_ctx_task, &c[i]);
        ASSERT_OK(weft_task_set_name(t, names[i]));
    }
    weft_executor *ex = make_executor(2);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&bad), 0);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- walking, clearing ------------------------------------------------------- */

struct visit_log {
    size_t seen[64];
    size_t n, stop_after;
};

static bool log_visit(weft_task t, void *arg) {
    struct visit_log *v = arg;
    if (v->n < 64) v->seen[v->n] = weft_task_index(t);
    v->n++;
    return v->n < v->stop_after;
}

TEST(for_each_task_visits_in_emplace_order_and_stops_when_told) {
    weft_taskflow *tf = make_taskflow(NULL);
    struct visit_log v = { .stop_after = SIZE_MAX };
    ASSERT_OK(weft_taskflow_for_each_task(tf, log_visit, &v));
    ASSERT_EQ(v.n, 0);

    weft_task t[20];
    for (int i = 0; i < 20; i++) t[i] = (i % 3) ? must_emplace(tf, noop, NULL) : weft_placeholder(tf);
    for (int i = 19; i > 0; i--) ASSERT_OK(weft_precede(t[i], t[i - 1])); /* edges don't matter */
    ASSERT_OK(weft_taskflow_for_each_task(tf, log_visit, &v));
    ASSERT_EQ(v.n, 20);
    for (size_t i = 0; i < 20; i++) ASSERT_EQ(v.seen[i], i);

    v = (struct visit_log){ .stop_after = 5 };
    ASSERT_OK(weft_taskflow_for_each_task(tf, log_visit, &v));
    ASSERT_EQ(v.n, 5);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(clear_removes_every_task_and_the_taskflow_can_be_rebuilt) {
    enum { N = 100 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("reuse");
    static atomic_int count[5][N];
    for (int round = 0; round < 5; round++) {
        int n = N - round * 10;
        weft_task t[N];
        for (int i = 0; i < n; i++) {
            t[i] = must_emplace(tf, bump, &count[round][i]);
            ASSERT_EQ(weft_task_index(t[i]), i);
            ASSERT_EQ(weft_task_num_dependents(t[i]), 0); /* no edges left over */
            if (i) ASSERT_OK(weft_precede(t[(i - 1) / 3], t[i]));
        }
        ASSERT_EQ(weft_taskflow_num_tasks(tf), n);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int r = 0; r <= round; r++)
            for (int i = 0; i < N - r * 10; i++) ASSERT_EQ(atomic_load(&count[r][i]), 1);

        ASSERT_OK(weft_taskflow_clear(tf));
        ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
        struct visit_log v = { .stop_after = SIZE_MAX };
        ASSERT_OK(weft_taskflow_for_each_task(tf, log_visit, &v));
        ASSERT_EQ(v.n, 0);
        ASSERT_STREQ(weft_taskflow_name(tf), "reuse");
        /* An empty taskflow runs and completes. */
        ASSERT_OK(weft_run_and_wait(ex, tf));
    }
    ASSERT_OK(weft_taskflow_clear(tf)); /* clearing an empty taskflow is fine */
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- DOT --------------------------------------------------------------------- */

static size_t count_substr(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static bool have_dot(void) { return system("command -v dot >/dev/null 2>&1") == 0; }

/* Renders `text` with `dot -Tsvg`; returns dot's exit status. */
static int render_with_dot(const char *text) {
    char path[] = "/tmp/weft-dot-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_TRUE(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ASSERT_NOT_NULL(f);
    fputs(text, f);
    ASSERT_EQ(fclose(f), 0);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o /dev/null", path);
    int rc = system(cmd);
    unlink(path);
    return rc;
}

static char *dump_to_string(const weft_taskflow *tf) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_taskflow_dump_dot(tf, f));
    ASSERT_EQ(fclose(f), 0);
    ASSERT_NOT_NULL(text);
    return text;
}

TEST(dump_dot_lists_every_task_and_edge) {
    weft_taskflow *tf = make_taskflow("dotflow");
    weft_task load = must_emplace(tf, noop, NULL);
    weft_task parse = must_emplace(tf, noop, NULL);
    weft_task emit = must_emplace(tf, noop, NULL);
    weft_task anon = must_emplace(tf, noop, NULL); /* index 3, label "#3" */
    weft_task odd = weft_placeholder(tf);
    ASSERT_OK(weft_task_set_name(load, "load"));
    ASSERT_OK(weft_task_set_name(parse, "parse"));
    ASSERT_OK(weft_task_set_name(emit, "emit"));
    ASSERT_OK(weft_task_set_name(odd, "say \"hi\" \\ {x} <y>")); /* needs escaping */
    ASSERT_OK(weft_precede(load, parse));
    ASSERT_OK(weft_precede(parse, emit));
    ASSERT_OK(weft_precede(load, anon));
    ASSERT_OK(weft_precede(anon, odd));

    char *text = dump_to_string(tf);
    ASSERT_TRUE(strstr(text, "digraph") != NULL);
    ASSERT_TRUE(strstr(text, "dotflow") != NULL);
    ASSERT_TRUE(strstr(text, "load") != NULL);
    ASSERT_TRUE(strstr(text, "parse") != NULL);
    ASSERT_TRUE(strstr(text, "emit") != NULL);
    ASSERT_TRUE(strstr(text, "#3") != NULL);
    ASSERT_TRUE(strstr(text, "hi") != NULL);
    if (count_substr(text, "->") != 4) TEST_FAIL_("expected 4 edges in:\n%s", text);

    if (have_dot()) {
        int rc = render_with_dot(text);
        if (rc != 0) TEST_FAIL_("dot -Tsvg rejected the dump (status %d):\n%s", rc, text);
    } else {
        printf("note: dot not on PATH, rendering not checked\n");
    }
    free(text);

    /* An empty taskflow is a valid, edgeless graph too. */
    ASSERT_OK(weft_taskflow_clear(tf));
    text = dump_to_string(tf);
    ASSERT_TRUE(strstr(text, "digraph") != NULL);
    ASSERT_EQ(count_substr(text, "->"), 0);
    if (have_dot()) ASSERT_EQ(render_with_dot(text), 0);
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(dump_dot_renders_with_graphviz) {
    if (!have_dot()) SKIP("dot (graphviz) is not on PATH");
    weft_taskflow *tf = make_taskflow("big \"quoted\" flow");
    weft_task t[200];
    for (int i = 0; i < 200; i++) {
        t[i] = must_emplace(tf, noop, NULL);
        if (i % 2) {
            char name[48];
            snprintf(name, sizeof name, "n%d-\"%d\"", i, i);
            ASSERT_OK(weft_task_set_name(t[i], name));
        }
        if (i) ASSERT_OK(weft_precede(t[(i - 1) / 2], t[i]));
    }
    char *text = dump_to_string(tf);
    ASSERT_EQ(count_substr(text, "->"), 199);
    int rc = render_with_dot(text);
    if (rc != 0) TEST_FAIL_("dot -Tsvg rejected the dump (status %d)", rc);
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(dump_dot_reports_a_failed_write) {
    FILE *full = fopen("/dev/full", "w");
    if (!full) SKIP("/dev/full is not available");
    weft_taskflow *tf = make_taskflow("full");
    /* Big enough that writes fail before any final flush. */
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 2000; i++) {
        weft_task t = must_emplace(tf, noop, NULL);
        ASSERT_OK(weft_task_set_name(t, "a-reasonably-long-task-name"));
        if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_STATUS(weft_taskflow_dump_dot(tf, full), WEFT_ESYS);
    fclose(full);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* Node chunks of a destroyed taskflow are cached for the next one (the block
 * cache): a new taskflow must still see blank tasks, whatever the old one wrote
 * into names, user data and successor arrays. */
static int nop_task(weft_ctx *ctx, void *arg) { return 0; }

TEST(tasks_on_reused_node_memory_start_blank) {
    enum { N = 200000 }; /* several chunks, the big ones included */
    static int cookie;
    for (int round = 0; round < 3; round++) {
        weft_taskflow *tf = weft_taskflow_create("reuse", NULL);
        ASSERT_TRUE(tf != NULL);
        weft_task prev = WEFT_TASK_NULL;
        for (int i = 0; i < N; i++) {
            weft_task t = must_emplace(tf, nop_task, NULL);
            ASSERT_EQ(weft_task_name(t)[0], 0);
            ASSERT_TRUE(weft_task_data(t) == NULL);
            ASSERT_EQ(weft_task_num_successors(t), 0);
            ASSERT_EQ(weft_task_num_dependents(t), 0);
            /* Dirty every cold field for the next round. */
            ASSERT_OK(weft_task_set_name(t, "x"));
            ASSERT_OK(weft_task_set_data(t, &cookie));
            if (i > 0) ASSERT_OK(weft_precede(prev, t));
            if (i > 1) ASSERT_OK(weft_precede(prev, t)); /* a second edge: spill array */
            prev = t;
        }
        ASSERT_OK(weft_taskflow_validate(tf, NULL));
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
}

/* Clearing keeps the node memory; a slot's cold part (name, data, successor
 * array, kind, weak edges) is zeroed when the slot is reused only if its last
 * user wrote it.  Rounds dirty different subsets of the slots (every 3rd, every
 * 5th, none) and check that every reused task starts blank. */
static int pick_first(weft_ctx *ctx, void *arg) { return 0; }

TEST(tasks_on_cleared_slots_start_blank_whichever_slots_were_written) {
    enum { N = 100000 };
    static int cookie;
    static const int every[] = { 3, 5, 0, 2 };
    weft_taskflow *tf = weft_taskflow_create("clear-reuse", NULL);
    ASSERT_TRUE(tf != NULL);
    for (size_t round = 0; round < sizeof every / sizeof every[0]; round++) {
        weft_task prev = WEFT_TASK_NULL;
        for (int i = 0; i < N; i++) {
            bool dirty = every[round] && i % every[round] == 0;
            weft_task t = dirty && i % 2 ? weft_emplace_condition(tf, pick_first, NULL) : must_emplace(tf, nop_task, NULL);
            ASSERT_FALSE(weft_task_is_null(t));
            if (!dirty || i % 2 == 0) ASSERT_EQ(weft_task_get_kind(t), WEFT_TASK_STATIC);
            ASSERT_EQ(weft_task_name(t)[0], 0);
            ASSERT_TRUE(weft_task_data(t) == NULL);
            ASSERT_EQ(weft_task_num_successors(t), 0);
            ASSERT_EQ(weft_task_num_dependents(t), 0);
            ASSERT_EQ(weft_task_num_weak_dependents(t), 0);
            if (dirty) {
                ASSERT_OK(weft_task_set_name(t, "x"));
                ASSERT_OK(weft_task_set_data(t, &cookie));
                if (i > 0) {
                    ASSERT_OK(weft_precede(prev, t));
                    ASSERT_OK(weft_precede(prev, t)); /* a spill array */
                }
            }
            prev = t;
        }
        ASSERT_EQ(weft_taskflow_num_tasks(tf), N);
        ASSERT_OK(weft_taskflow_clear(tf));
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* weft_task_set_data inside a run (allowed) writes a cold part without marking
 * the node, since running workers read the word holding the mark: a slot reused
 * after the next clear must still start blank. */
struct set_other {
    weft_task target;
    int cookie;
};

static int set_other_data(weft_ctx *ctx, void *arg) {
    struct set_other *s = arg;
    return weft_task_set_data(s->target, &s->cookie) == WEFT_OK ? 0 : 1;
}

TEST(data_set_during_a_run_is_gone_after_clear_and_reuse) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("data-in-run");
    struct set_other s;
    weft_task first = must_emplace(tf, set_other_data, &s);
    s.target = must_emplace(tf, nop_task, NULL);
    ASSERT_OK(weft_precede(first, s.target));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_TRUE(weft_task_data(s.target) == (void *)&s.cookie);
    ASSERT_OK(weft_taskflow_clear(tf));
    for (int i = 0; i < 4; i++) ASSERT_TRUE(weft_task_data(must_emplace(tf, nop_task, NULL)) == NULL);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* True if s is valid UTF-8 with no control character but newline. */
static bool valid_utf8_text(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned char c = *p;
        if (c < 0x80) {
            if (c < 0x20 && c != '\n') return false;
            p++;
            continue;
        }
        unsigned n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
        if (n == 0 || c > 0xf4) return false;
        for (unsigned i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80) return false;
        p += n;
    }
    return true;
}

TEST(dump_dot_writes_names_that_are_not_utf8_as_valid_utf8) {
    weft_taskflow *tf = make_taskflow("bad\xff" "flow");
    weft_task a = must_emplace(tf, noop, NULL), b = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_task_set_name(a, "caf\xc3\xa9"));          /* valid: kept */
    ASSERT_OK(weft_task_set_name(b, "x\xc3(\x01y\xed\xa0\x80")); /* cut, control, surrogate */
    ASSERT_OK(weft_precede(a, b));
    char *text = dump_to_string(tf);
    if (!valid_utf8_text(text)) TEST_FAIL_("the DOT text is not valid UTF-8:\n%s", text);
    ASSERT_TRUE(strstr(text, "caf\xc3\xa9") != NULL);
    ASSERT_TRUE(strstr(text, "x\xef\xbf\xbd(") != NULL); /* U+FFFD for the cut sequence */
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
}
