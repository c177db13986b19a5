/* Subflows: joined and detached, nested 10 deep, reused memory across runs,
 * failure and cancellation inside a subflow stop the whole run. */
#define _GNU_SOURCE
#include "test_util.h"

struct fan {
    int children;
    atomic_int ran, after;
    int seen_by_after;
};

static int spawn_children(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct fan *f = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < f->children; i++)
        if (weft_task_is_null(weft_emplace(g, bump, &f->ran))) return 1;
    return 0;
}

static int check_after(weft_ctx *ctx, void *arg) {
    struct fan *f = arg;
    f->seen_by_after = atomic_load(&f->ran);
    atomic_fetch_add(&f->after, 1);
    return 0;
}

TEST(joined_subflow_finishes_before_the_task_successors) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("joined");
    struct fan f = {.children = 500};
    weft_task s = weft_emplace_subflow(tf, spawn_children, &f);
    ASSERT_EQ(weft_task_get_kind(s), WEFT_TASK_SUBFLOW);
    ASSERT_OK(weft_precede(s, must_emplace(tf, check_after, &f)));
    for (int run = 1; run <= 3; run++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(f.seen_by_after, 500 * run);
    }
    ASSERT_EQ(atomic_load(&f.after), 3);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- nesting: each level spawns a leaf, a nested subflow, and a checker ----- */

struct nest {
    int depth;
    atomic_int leaves, checks_ok, checks_bad;
};
struct level {
    struct nest *n;
    int level;
    atomic_int below; /* leaves counted below this level */
};
static struct level levels[16];

static int count_leaf(weft_ctx *ctx, void *arg) {
    struct level *l = arg;
    atomic_fetch_add(&l->n->leaves, 1);
    for (int k = 0; k <= l->level; k++) atomic_fetch_add(&levels[k].below, 1);
    return 0;
}

static int nest_check(weft_ctx *ctx, void *arg) {
    struct level *l = arg; /* the nested subflow under l is done: all its leaves counted */
    int want = l->n->depth - l->level - 1;
    atomic_fetch_add(atomic_load(&levels[l->level + 1].below) == want ? &l->n->checks_ok : &l->n->checks_bad, 1);
    return 0;
}

static int nest_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct level *l = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace(g, count_leaf, l))) return 1;
    if (l->level + 1 >= l->n->depth) return 0;
    weft_task inner = weft_emplace_subflow(g, nest_fn, &levels[l->level + 1]);
    weft_task chk = weft_emplace(g, nest_check, l);
    return weft_precede(inner, chk) == WEFT_OK ? 0 : 1;
}

TEST(nested_subflows_ten_deep_join_level_by_level) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("nested");
    static struct nest n = {.depth = 10};
    for (int i = 0; i < 16; i++) levels[i] = (struct level){.n = &n, .level = i};
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, nest_fn, &levels[0])));
    for (int run = 1; run <= 4; run++) {
        for (int i = 0; i < 16; i++) atomic_store(&levels[i].below, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&n.leaves), 10 * run);
        ASSERT_EQ(atomic_load(&n.checks_ok), 9 * run);
        ASSERT_EQ(atomic_load(&n.checks_bad), 0);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ASSERT_OK(weft_taskflow_dump_dot(tf, out));
    fclose(out);
    ASSERT_TRUE(strstr(text, "cluster_9") != NULL); /* one cluster per level */
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- detached ---------------------------------------------------------------- */

static int slow_bump(weft_ctx *ctx, void *arg) {
    sleep_us(2000);
    return bump(ctx, arg);
}

static int spawn_detached(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct fan *f = arg;
    ASSERT_OK(weft_subflow_detach(sf));
    ASSERT_TRUE(weft_subflow_detached(sf));
    for (int i = 0; i < f->children; i++)
        if (weft_task_is_null(weft_emplace(weft_subflow_graph(sf), slow_bump, &f->ran))) return 1;
    return 0;
}

TEST(detached_subflow_finishes_before_the_run_future_is_ready) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("detached");
    struct fan f = {.children = 20};
    weft_task s = weft_emplace_subflow(tf, spawn_detached, &f);
    ASSERT_OK(weft_precede(s, must_emplace(tf, check_after, &f)));
    for (int run = 1; run <= 3; run++) {
        weft_future *fu;
        ASSERT_OK(weft_run(ex, tf, &fu));
        ASSERT_OK(weft_future_wait(fu));
        ASSERT_EQ(atomic_load(&f.ran), 20 * run); /* joined the end of the run */
        weft_future_destroy(fu);
    }
    ASSERT_OK(weft_run_n(ex, tf, 4, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&f.ran), 20 * 7);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- failure and cancellation ---------------------------------------------- */

static int fail7(weft_ctx *ctx, void *arg) { return 7; }

static int spawn_failing(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, fail7, NULL), b = weft_emplace(g, bump, arg);
    ASSERT_OK(weft_task_set_name(a, "inner-fail"));
    return weft_precede(a, b) == WEFT_OK ? 0 : 1;
}

TEST(failing_task_inside_a_subflow_fails_the_whole_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("subfail");
    atomic_int inner = 0, after = 0;
    weft_task s = weft_emplace_subflow(tf, spawn_failing, &inner);
    ASSERT_OK(weft_precede(s, must_emplace(tf, bump, &after)));
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 3, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 7);
    ASSERT_STREQ(info.failed_task, "inner-fail");
    ASSERT_EQ(info.iterations, 0);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&inner) + atomic_load(&after), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static atomic_int gate;
static int wait_gate(weft_ctx *ctx, void *arg) {
    atomic_store(&gate, 1);
    while (!weft_ctx_cancelled(ctx)) sleep_us(100);
    return 0;
}
static int spawn_gated(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, wait_gate, NULL), b = weft_emplace(g, bump, arg);
    return weft_precede(a, b) == WEFT_OK ? 0 : 1;
}

TEST(cancelled_run_stops_inside_a_subflow) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("subcancel");
    atomic_int inner = 0;
    atomic_store(&gate, 0);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, spawn_gated, &inner)));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&gate, 1, 60));
    ASSERT_OK(weft_future_cancel(f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_GE(info.skipped, 1);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&inner), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(subflow_graph_cannot_be_destroyed_by_users) {
    ASSERT_NULL(weft_subflow_graph(NULL));
    ASSERT_STATUS(weft_subflow_detach(NULL), WEFT_EINVAL);
    weft_taskflow *tf = make_taskflow("x");
    ASSERT_TRUE(weft_task_is_null(weft_emplace_subflow(tf, NULL, NULL)));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

static int try_destroy(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_taskflow_destroy(g) != WEFT_EINVAL) return 1;
    if (weft_run(weft_ctx_executor(ctx), g, NULL) != WEFT_EINVAL) return 2;
    if (!weft_task_is_null(weft_emplace_module(arg, g))) return 3;
    return 0;
}

TEST(destroying_running_or_embedding_a_subflow_graph_is_refused) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("y"), *other = make_taskflow("other");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, try_destroy, other)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(other));
    weft_executor_destroy(ex);
}

/* ---- a subflow in a condition loop: rebuilt each time, memory reused --------- */

struct sloop {
    int n, iter;
    atomic_int children;
};
static int sloop_sub(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct sloop *l = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 8; i++)
        if (weft_task_is_null(weft_emplace(g, bump, &l->children))) return 1;
    return 0;
}
static int sloop_cond(weft_ctx *ctx, void *arg) {
    struct sloop *l = arg;
    return ++l->iter < l->n ? 0 : 1;
}
static int sloop_init(weft_ctx *ctx, void *arg) {
    ((struct sloop *)arg)->iter = 0;
    return 0;
}

TEST(subflow_inside_a_condition_loop_runs_each_iteration) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("sloop");
    struct sloop l = {.n = 50};
    weft_task init = must_emplace(tf, sloop_init, &l);
    weft_task s = weft_emplace_subflow(tf, sloop_sub, &l);
    weft_task c = weft_emplace_condition(tf, sloop_cond, &l);
    ASSERT_OK(weft_precede(init, s));
    ASSERT_OK(weft_precede(s, c));
    ASSERT_OK(weft_precede(c, s));
    ASSERT_OK(weft_run_n(ex, tf, 2, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&l.children), 2 * 50 * 8);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- explicit join inside the subflow's function ----------------------------- */

struct joined {
    atomic_int ran;
    int seen_after_join, late_status;
    bool late_says_joined;
};

static int join_inside(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct joined *j = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 100; i++)
        if (weft_task_is_null(weft_emplace(g, bump, &j->ran))) return 1;
    if (weft_subflow_join(sf) != WEFT_OK || weft_subflow_join(sf) != WEFT_OK) return 2;
    j->seen_after_join = atomic_load(&j->ran);
    j->late_status = weft_task_is_null(weft_emplace(g, bump, &j->ran)) ? (int)weft_taskflow_last_error(g) : 0;
    j->late_says_joined = strstr(weft_taskflow_error_message(g), "joined") != NULL;
    /* A joined subflow cannot be detached (its graph has run): refused. */
    return weft_subflow_detach(sf) == WEFT_EINVAL && !weft_subflow_detached(sf) ? 0 : 3;
}

TEST(subflow_join_inside_the_function_runs_the_graph_there) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("sync");
    struct joined j = {0};
    ASSERT_STATUS(weft_subflow_join(NULL), WEFT_EINVAL);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, join_inside, &j)));
    for (int run = 1; run <= 3; run++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(j.seen_after_join, 100 * run);
        ASSERT_EQ(j.late_status, WEFT_EBUSY);
        ASSERT_TRUE(j.late_says_joined);
        ASSERT_EQ(atomic_load(&j.ran), 100 * run);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- nesting depth of joins: Taskflow's FibSubflow ---- */

typedef struct fibsf {
    int n;
    long result;
} fibsf;

static _Thread_local int join_depth;
static atomic_int max_depth;

static int fib_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    fibsf *f = arg;
    if (f->n < 2) {
        f->result = f->n;
        return 0;
    }
    fibsf a = {f->n - 1, 0}, b = {f->n - 2, 0};
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace_subflow(g, fib_subflow, &a)) ||
        weft_task_is_null(weft_emplace_subflow(g, fib_subflow, &b)))
        return 1;
    int d = ++join_depth;
    int m = atomic_load(&max_depth);
    while (d > m && !atomic_compare_exchange_weak(&max_depth, &m, d)) {
    }
    weft_status st = weft_subflow_join(sf); /* a and b live on this frame: join before returning */
    --join_depth;
    f->result = a.result + b.result;
    return st == WEFT_OK ? 0 : 1;
}

/* Before, a join's wait ran any job of its worker's deque, so the outer
 * levels' pending siblings ran nested under inner joins: at one worker the
 * joins nested 8361 deep for fib(20) (Taskflow: 19), an ASan stack overflow on
 * the default worker stack.  Now a join runs what it queued first. */
TEST(joins_nest_as_deep_as_the_recursion_not_as_the_work) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = make_taskflow("fib-subflow");
        fibsf f = {18, 0};
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, fib_subflow, &f)));
        atomic_store(&max_depth, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(f.result, 2584);
        printf("fib(18) by subflows on %u worker(s): joins nested %d deep\n", workers, atomic_load(&max_depth));
        /* With two workers a join that waits on a stolen child helps with
         * what it can steal, which nests too (as leapfrogging does). */
        if (workers == 1) ASSERT_LE(atomic_load(&max_depth), 18);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* weft_subflow_join seals the graph: a task added after it is refused with
 * WEFT_EBUSY and the graph unchanged, though its chunk still has room (the
 * emplace fast path counts that room; the seal must send it the slow way,
 * which refuses).  The next run of the task builds afresh. */
struct sealed_probe {
    weft_status after_join;
    bool refused;
    size_t tasks_after;
    atomic_int ran;
};

static int build_join_then_add(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    struct sealed_probe *p = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 5; i++)
        if (weft_task_is_null(weft_emplace(g, bump, &p->ran))) return 1;
    if (weft_subflow_join(sf) != WEFT_OK) return 2;
    p->refused = weft_task_is_null(weft_emplace(g, bump, &p->ran));
    p->after_join = weft_taskflow_last_error(g);
    p->tasks_after = weft_taskflow_num_tasks(g);
    return 0;
}

TEST(a_joined_subflows_graph_refuses_a_new_task_though_its_chunk_has_room) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("sealed");
    struct sealed_probe p = {0};
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, build_join_then_add, &p)));
    for (int run = 1; run <= 2; run++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_TRUE(p.refused);
        ASSERT_STATUS(p.after_join, WEFT_EBUSY);
        ASSERT_EQ(p.tasks_after, 5u);
        ASSERT_EQ(atomic_load(&p.ran), 5 * run);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
