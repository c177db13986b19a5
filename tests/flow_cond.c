/* Condition tasks: loops iterate exactly N times, out-of-range and negative
 * indices, weak vs strong cycles, multi-conditions, random condition graphs
 * against a serial interpreter of the same graph. */
#define _GNU_SOURCE
#include "test_util.h"

/* ---- a counted loop: init -> body -> cond, cond -0-> body, cond -1-> done ---- */

struct loop {
    int n;
    atomic_int body, done, inits;
};

static int loop_init(weft_ctx *ctx, void *arg) {
    struct loop *l = arg;
    atomic_store(&l->body, 0);
    atomic_fetch_add(&l->inits, 1);
    return 0;
}
static int loop_body(weft_ctx *ctx, void *arg) { return bump(ctx, &((struct loop *)arg)->body); }
static int loop_cond(weft_ctx *ctx, void *arg) {
    struct loop *l = arg;
    return atomic_load(&l->body) < l->n ? 0 : 1;
}
static int loop_done(weft_ctx *ctx, void *arg) { return bump(ctx, &((struct loop *)arg)->done); }

static weft_taskflow *build_loop(struct loop *l) {
    weft_taskflow *tf = make_taskflow("loop");
    weft_task init = must_emplace(tf, loop_init, l);
    weft_task body = must_emplace(tf, loop_body, l);
    weft_task cond = weft_emplace_condition(tf, loop_cond, l);
    weft_task done = must_emplace(tf, loop_done, l);
    ASSERT_FALSE(weft_task_is_null(cond));
    ASSERT_OK(weft_precede(init, body));
    ASSERT_OK(weft_precede(body, cond));
    ASSERT_OK(weft_precede(cond, body)); /* index 0: weak back edge */
    ASSERT_OK(weft_precede(cond, done)); /* index 1 */
    ASSERT_OK(weft_task_set_name(cond, "cond"));
    ASSERT_EQ(weft_task_num_weak_dependents(body), 1);
    ASSERT_EQ(weft_task_num_dependents(body), 2);
    ASSERT_EQ(weft_task_get_kind(cond), WEFT_TASK_CONDITION);
    return tf;
}

TEST(condition_loop_iterates_exactly_n_times) {
    weft_executor *ex = make_executor(2);
    struct loop l = {.n = 1000};
    weft_taskflow *tf = build_loop(&l);
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.body), 1000);
    ASSERT_EQ(atomic_load(&l.done), 1);
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, 5, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 5);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&l.body), 1000);
    ASSERT_EQ(atomic_load(&l.done), 6);
    ASSERT_EQ(atomic_load(&l.inits), 6);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

struct until {
    atomic_int calls;
    int limit;
};
static bool until_pred(void *arg) {
    struct until *u = arg;
    return atomic_fetch_add(&u->calls, 1) >= u->limit;
}

TEST(run_until_repeats_a_condition_loop_between_iterations) {
    weft_executor *ex = make_executor(2);
    struct loop l = {.n = 10};
    weft_taskflow *tf = build_loop(&l);
    struct until u = {.limit = 7};
    weft_future *f;
    ASSERT_OK(weft_run_until(ex, tf, until_pred, &u, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&l.done), 7);
    ASSERT_EQ(atomic_load(&l.body), 10);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static int ret_arg(weft_ctx *ctx, void *arg) { return (int)(intptr_t)arg; }

TEST(condition_index_out_of_range_runs_no_successor) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("oor");
    atomic_int a = 0, b = 0;
    weft_task c = weft_emplace_condition(tf, ret_arg, (void *)(intptr_t)2);
    ASSERT_OK(weft_precede(c, must_emplace(tf, bump, &a)));
    ASSERT_OK(weft_precede(c, must_emplace(tf, bump, &b)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&a) + atomic_load(&b), 0);
    ASSERT_OK(weft_task_set_work(c, noop, NULL) == WEFT_EINVAL ? WEFT_OK : WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(negative_condition_fails_the_run_and_skips_the_rest) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("neg");
    atomic_int a = 0;
    weft_task c = weft_emplace_condition(tf, ret_arg, (void *)(intptr_t)-5);
    ASSERT_OK(weft_task_set_name(c, "chooser"));
    weft_task t = must_emplace(tf, bump, &a);
    ASSERT_OK(weft_precede(c, t));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, -5);
    ASSERT_STREQ(info.failed_task, "chooser");
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&a), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(cycle_through_weak_edge_is_a_loop_strong_cycle_is_an_error) {
    weft_taskflow *tf = make_taskflow("cyc");
    weft_task a = must_emplace(tf, noop, NULL), b = must_emplace(tf, noop, NULL);
    weft_task c = weft_emplace_condition(tf, ret_arg, (void *)(intptr_t)5);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(b, c));
    ASSERT_OK(weft_precede(c, a)); /* weak: a loop */
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    weft_task d = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_task_set_name(d, "dee"));
    ASSERT_OK(weft_task_set_name(b, "bee"));
    ASSERT_OK(weft_precede(b, d));
    ASSERT_OK(weft_precede(d, b)); /* strong: b -> d -> b */
    weft_task on = WEFT_TASK_NULL;
    ASSERT_STATUS(weft_taskflow_validate(tf, &on), WEFT_ECYCLE);
    ASSERT_TRUE(same_task(on, b) || same_task(on, d));
    ASSERT_TRUE(strstr(weft_taskflow_error_message(tf), "bee") || strstr(weft_taskflow_error_message(tf), "dee"));
    ASSERT_OK(weft_taskflow_destroy(tf));
}

static int pick_even(weft_ctx *ctx, void *arg, weft_branches *out) {
    (void)arg;
    for (unsigned i = 0; i < 64; i += 2) (void)weft_branches_add(out, i);
    ASSERT_STATUS(weft_branches_add(out, 64), WEFT_EINVAL);
    ASSERT_STATUS(weft_branches_add(NULL, 0), WEFT_EINVAL);
    return 0;
}

TEST(multi_condition_runs_exactly_the_picked_successors) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("multi");
    atomic_int c[10] = {0}, join = 0;
    weft_task m = weft_emplace_multi_condition(tf, pick_even, NULL);
    ASSERT_EQ(weft_task_get_kind(m), WEFT_TASK_MULTI_CONDITION);
    for (int i = 0; i < 10; i++) ASSERT_OK(weft_precede(m, must_emplace(tf, bump, &c[i])));
    ASSERT_OK(weft_run_n(ex, tf, 3, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    for (int i = 0; i < 10; i++) ASSERT_EQ(atomic_load(&c[i]), i % 2 ? 0 : 3);
    (void)join;
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* Picks 0, 63, 64, 70, 99 and 200 (no such successor: EINVAL, nothing picked). */
static int pick_wide(weft_ctx *cx, void *arg, weft_branches *out) {
    (void)cx;
    int *bad = arg;
    static const unsigned want[] = {0, 63, 64, 70, 99, 70};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (weft_branches_add(out, want[i]) != WEFT_OK) (*bad)++;
    if (weft_branches_add(out, 200) != WEFT_EINVAL) (*bad)++;
    return 0;
}

/* Taskflow's MultipleBranches has 100 successors.  Before, a pick of 64 or
 * more was refused (the set was one 64-bit word) and, in weft.hpp, dropped
 * without a word. */
TEST(multi_condition_picks_successors_beyond_the_64th) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = make_taskflow("wide");
        static atomic_int c[100];
        int bad = 0;
        weft_task m = weft_emplace_multi_condition(tf, pick_wide, &bad);
        for (int i = 0; i < 100; i++) {
            atomic_store(&c[i], 0);
            ASSERT_OK(weft_precede(m, must_emplace(tf, bump, &c[i])));
        }
        ASSERT_OK(weft_run_n(ex, tf, 4, NULL));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(bad, 0);
        for (int i = 0; i < 100; i++) {
            bool picked = i == 0 || i == 63 || i == 64 || i == 70 || i == 99;
            ASSERT_EQ(atomic_load(&c[i]), picked ? 4 : 0);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- random condition graphs vs a serial interpreter ------------------------- */

enum { RN = 60 };

struct rgraph {
    int n;
    bool cond[RN];
    int nsucc[RN], succ[RN][RN];
    int strong_in[RN], weak_in[RN];
    int choice[RN]; /* what condition i returns (may be out of range) */
    atomic_int runs[RN];
};

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random DAG in index order.  Targets of weak edges get exactly one in-edge
 * (that weak edge), so no task can be made ready twice: the outcome is then
 * independent of scheduling, which is what a race-free condition graph is. */
static void rgraph_make(struct rgraph *g, uint64_t seed) {
    memset(g, 0, sizeof *g);
    uint64_t s = seed | 1;
    g->n = RN;
    for (int i = 0; i < RN; i++) g->cond[i] = rng_next(&s) % 3 == 0;
    for (int j = 1; j < RN; j++) {
        int edges = (int)(rng_next(&s) % 3);
        for (int e = 0; e < edges; e++) {
            int i = (int)(rng_next(&s) % (uint64_t)j);
            if (g->weak_in[j]) break;
            if (g->cond[i] && (g->strong_in[j] || e > 0)) continue;
            bool dup = false;
            for (int k = 0; k < g->nsucc[i]; k++) dup |= g->succ[i][k] == j;
            if (dup) continue;
            g->succ[i][g->nsucc[i]++] = j;
            if (g->cond[i]) g->weak_in[j]++;
            else g->strong_in[j]++;
        }
    }
    for (int i = 0; i < RN; i++) g->choice[i] = g->cond[i] ? (int)(rng_next(&s) % (uint64_t)(g->nsucc[i] + 1)) : 0;
}

/* Taskflow semantics, one task at a time. */
static void rgraph_interpret(const struct rgraph *g, int *runs) {
    int join[RN], queue[RN * 4], qh = 0, qt = 0;
    for (int i = 0; i < RN; i++) {
        join[i] = g->strong_in[i];
        runs[i] = 0;
        if (!g->strong_in[i] && !g->weak_in[i]) queue[qt++] = i;
    }
    while (qh < qt) {
        int i = queue[qh++];
        runs[i]++;
        if (g->cond[i]) {
            if (g->choice[i] < g->nsucc[i]) queue[qt++] = g->succ[i][g->choice[i]];
            continue;
        }
        for (int k = 0; k < g->nsucc[i]; k++)
            if (--join[g->succ[i][k]] == 0) queue[qt++] = g->succ[i][k];
    }
}

struct rtask {
    struct rgraph *g;
    int i;
};
static int rstatic(weft_ctx *ctx, void *arg) {
    struct rtask *t = arg;
    atomic_fetch_add(&t->g->runs[t->i], 1);
    return 0;
}
static int rcond(weft_ctx *ctx, void *arg) {
    struct rtask *t = arg;
    atomic_fetch_add(&t->g->runs[t->i], 1);
    return t->g->choice[t->i];
}

TEST(random_condition_graphs_match_a_serial_interpreter) {
    weft_executor *ex = make_executor(2);
    static struct rgraph g;
    static struct rtask args[RN];
    int rounds = (int)test_scale(200) + 5;
    for (int round = 0; round < rounds; round++) {
        rgraph_make(&g, test_seed() * 7919 + (uint64_t)round);
        weft_taskflow *tf = make_taskflow("random-cond");
        weft_task t[RN];
        for (int i = 0; i < RN; i++) {
            args[i] = (struct rtask){&g, i};
            t[i] = g.cond[i] ? weft_emplace_condition(tf, rcond, &args[i]) : must_emplace(tf, rstatic, &args[i]);
        }
        for (int i = 0; i < RN; i++)
            for (int k = 0; k < g.nsucc[i]; k++) ASSERT_OK(weft_precede(t[i], t[g.succ[i][k]]));
        int want[RN];
        rgraph_interpret(&g, want);
        const uint64_t iters = 3;
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, iters, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        for (int i = 0; i < RN; i++)
            if (atomic_load(&g.runs[i]) != want[i] * (int)iters)
                TEST_FAIL_("round %d: task %d ran %d times, interpreter says %d x %d", round, i,
                           atomic_load(&g.runs[i]), want[i], (int)iters);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
}

TEST(dot_draws_condition_edges_dashed) {
    struct loop l = {.n = 1};
    weft_taskflow *tf = build_loop(&l);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ASSERT_OK(weft_taskflow_dump_dot(tf, out));
    fclose(out);
    ASSERT_TRUE(strstr(text, "style=dashed") != NULL);
    ASSERT_TRUE(strstr(text, "shape=diamond") != NULL);
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
}
