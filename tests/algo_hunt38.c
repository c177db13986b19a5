/* Parallel algorithms under awkward use (adversarial round 38). */
#include "algo_test.h"

/* ---- an emplaced algorithm stops with its run ----------------------------------
 *
 * weft/cancel.h: "a pipeline or a parallel algorithm emplaced in a taskflow
 * stops with the taskflow's run".  An emplaced loop ran every one of its
 * chunks after its run was cancelled: the call looked only at its config's
 * token, never at the run.  Each body below holds its first calls at a gate
 * until the test has cancelled the run (or failed it), then counts the calls
 * that follow: a handful (the chunks already taken), not the whole array. */
typedef struct gate {
    _Atomic int started, open;
    _Atomic size_t calls;
    /* Instead of `open`: wait, inside the algorithm's task, until its run has
     * stopped (a chunk elsewhere, outside any task, does not wait). */
    bool until_stopped;
} gate;

static void gate_pass(gate *g) {
    atomic_fetch_add(&g->calls, 1);
    atomic_store(&g->started, 1);
    if (g->until_stopped) {
        weft_ctx *cx = weft_current_ctx();
        while (cx && !weft_ctx_cancelled(cx)) sleep_us(100);
        return;
    }
    while (!atomic_load(&g->open)) sleep_us(100);
}
static void gate_range(size_t lo, size_t hi, void *arg) {
    for (size_t i = lo; i < hi; i++) gate_pass(arg);
}
static void gate_unary(const void *in, void *out, void *arg) {
    memcpy(out, in, 8);
    gate_pass(arg);
}
static void gate_add(void *acc, const void *x, void *arg) {
    *(uint64_t *)acc += *(const uint64_t *)x;
    gate_pass(arg);
}
static int gate_cmp(const void *a, const void *b, void *arg) {
    gate_pass(arg);
    return cmp_u64(a, b, NULL);
}
static int fail_when_started(weft_ctx *cx, void *arg) {
    (void)cx;
    gate *g = arg;
    while (!atomic_load(&g->started)) sleep_us(100);
    return 7;
}

enum { GATE_N = 8192 };

/* Emplaces kind k of the five over v/out with gate g into tf. */
static weft_task emplace_gated(weft_taskflow *tf, int k, gate *g, uint64_t *v, uint64_t *out, uint64_t *result,
                               void *desc, unsigned max_tasks) {
    weft_algo_config one = { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 2, .max_tasks = max_tasks };
    static const uint64_t init = 0;
    switch (k) {
    case 0:
        *(weft_for_desc *)desc = (weft_for_desc){ 0, GATE_N, 1, gate_range, g, one };
        return weft_emplace_for(tf, desc);
    case 1:
        *(weft_transform_desc *)desc = (weft_transform_desc){ v, 8, out, 8, GATE_N, gate_unary, g, one };
        return weft_emplace_transform(tf, desc);
    case 2:
        *(weft_reduce_desc *)desc = (weft_reduce_desc){ v, GATE_N, 8, result, gate_add, g, one };
        return weft_emplace_reduce(tf, desc);
    case 3:
        *(weft_scan_desc *)desc = (weft_scan_desc){ v, out, GATE_N, 8, &init, gate_add, g, false, one };
        return weft_emplace_scan(tf, desc);
    default: /* a sort stops between its phases: after its blocks, before its merge */
        *(weft_sort_desc *)desc = (weft_sort_desc){ v, GATE_N, 8, gate_cmp, g, false, one };
        return weft_emplace_sort(tf, desc);
    }
}

static const char *const GATED[] = { "for", "transform", "reduce", "scan", "sort" };

TEST(an_emplaced_algorithm_stops_with_its_cancelled_run_which_reports_the_cancel) {
    weft_executor *ex = make_executor(2);
    for (int k = 0; k < 5; k++) {
        gate g = { 0, 0, 0, false };
        uint64_t *v = random_u64(GATE_N, 38 + (uint64_t)k), *out = xmalloc(GATE_N * 8), result = 11;
        union { weft_for_desc a; weft_transform_desc b; weft_reduce_desc c; weft_scan_desc d; weft_sort_desc e; } desc;
        weft_taskflow *tf = make_taskflow("gated");
        ASSERT_FALSE(weft_task_is_null(emplace_gated(tf, k, &g, v, out, &result, &desc, 0)));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_TRUE(wait_flag(&g.started, 1, 30.0));
        ASSERT_OK(weft_future_cancel(f));
        atomic_store(&g.open, 1);
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        size_t calls = atomic_load(&g.calls);
        /* A sort's blocks finish (about 2 * 4096 * 12 comparisons); its merge
         * (another 8192) does not run.  The others: a chunk or two per worker. */
        size_t most = k == 4 ? 2 * 4096 * 13 : 16;
        if (st != WEFT_ECANCELED || calls > most || info.failed_task[0] != '\0')
            TEST_FAIL_("emplaced %s: run %s (failed task \"%s\"), %zu calls after the cancel (at most %zu)",
                       GATED[k], weft_errname(st), info.failed_task, calls, most);
        if (k == 2) ASSERT_EQ(result, 11); /* a stopped reduction leaves its result alone */
        weft_future_destroy(f);
        weft_taskflow_destroy(tf);
        free(v), free(out);
    }
    weft_executor_destroy(ex);
}

/* The same when another task of the run fails meanwhile: the run reports that
 * task's failure, not the algorithm's. */
TEST(an_emplaced_algorithm_stops_when_another_task_fails_its_run) {
    weft_executor *ex = make_executor(3);
    for (int k = 0; k < 5; k++) {
        gate g = { 0, 0, 0, true };
        uint64_t *v = random_u64(GATE_N, 83 + (uint64_t)k), *out = xmalloc(GATE_N * 8), result = 11;
        union { weft_for_desc a; weft_transform_desc b; weft_reduce_desc c; weft_scan_desc d; weft_sort_desc e; } desc;
        weft_taskflow *tf = make_taskflow("gated");
        /* One task (its chunks all in the graph task), a sort two: the third
         * worker is free for the failing task. */
        ASSERT_FALSE(weft_task_is_null(emplace_gated(tf, k, &g, v, out, &result, &desc, k == 4 ? 2 : 1)));
        weft_task bad = must_emplace(tf, fail_when_started, &g);
        ASSERT_OK(weft_task_set_name(bad, "bad"));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        size_t calls = atomic_load(&g.calls), most = k == 4 ? 2 * 4096 * 13 : 16;
        if (st != WEFT_ETASK || strcmp(info.failed_task, "bad") != 0 || info.task_code != 7 || calls > most)
            TEST_FAIL_("emplaced %s: run %s, failed task \"%s\" code %d, %zu calls (at most %zu)", GATED[k],
                       weft_errname(st), info.failed_task, info.task_code, calls, most);
        weft_future_destroy(f);
        weft_taskflow_destroy(tf);
        free(v), free(out);
    }
    weft_executor_destroy(ex);
}

/* ---- after fork() ----------------------------------------------------------------
 *
 * weft/core.h: in a child made by fork() an executor has no workers and "the
 * parallel algorithms run on the calling thread alone".  A call made at a
 * priority (weft_algo_set_priority) queued its jobs 1..n-1 in the scheduling
 * layer, which takes them after a fork too, and then waited for workers the
 * child does not have: the child hung.  Every kind of call, at every level,
 * on an unbound and on a bound executor, must finish with the right result. */
static void add_one(size_t i, void *arg) {
    (void)i;
    atomic_fetch_add((_Atomic size_t *)arg, 1);
}

/* In the child: 0 when every call gave the right answer. */
static int forked_calls(weft_executor *ex) {
    enum { N = 100003 };
    uint64_t *v = random_u64(N, 5), *o = xmalloc(N * 8), want = 0, r = 0;
    for (size_t i = 0; i < N; i++) want += v[i];
    for (int prio = WEFT_PRIORITY_LOW; prio <= WEFT_PRIORITY_CRITICAL; prio++) {
        if (weft_algo_set_priority((weft_priority)prio, NULL) != WEFT_OK) return 1;
        _Atomic size_t k = 0;
        if (weft_parallel_for(ex, 0, N, 1, add_one, &k, NULL) != WEFT_OK || atomic_load(&k) != N) return 2;
        r = 0;
        if (weft_parallel_reduce(ex, v, N, 8, &r, add_u64, NULL, NULL) != WEFT_OK || r != want) return 3;
        if (weft_u64_sum_inclusive_scan(ex, v, o, N, NULL, NULL) != WEFT_OK || o[N - 1] != want) return 4;
        memcpy(o, v, N * 8);
        if (weft_parallel_sort(ex, o, N, 8, cmp_u64, NULL, NULL) != WEFT_OK) return 5;
        for (size_t i = 1; i < N; i++)
            if (o[i - 1] > o[i]) return 6;
    }
    free(v), free(o);
    return 0;
}

TEST(a_prioritised_algorithm_call_in_a_forked_child_runs_on_the_calling_thread) {
    const weft_affinity how[] = { WEFT_AFFINITY_NONE, WEFT_AFFINITY_CPUS };
    for (int b = 0; b < 2; b++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 3, .affinity = how[b] }, NULL);
        ASSERT_NOT_NULL(ex);
        _Atomic size_t c = 0;
        ASSERT_OK(weft_parallel_for(ex, 0, 1000, 1, add_one, &c, NULL)); /* the workers and their queues exist */
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) _exit(forked_calls(ex));
        int status = wait_child(pid, 30.0, b ? "bound executor: a call in the forked child hung"
                                              : "a call in the forked child hung");
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
        weft_executor_destroy(ex);
    }
}
