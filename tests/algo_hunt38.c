/* Parallel algorithms under awkward use (adversarial round 38). */
#include "algo_test.h"

#include <math.h>

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

/* ---- probes that found nothing, on paths no other test takes -------------------
 *
 * Strided loops ending next to SIZE_MAX; non-commutative reductions and scans
 * (in and out of place) and stable sorts of unaligned 1-, 3-, 24- and 200-byte
 * elements; calls nested in fork-join, prioritised graph tasks and pipeline
 * stages, on the default executor too; reductions and scans of SIZE_MAX
 * elements; a prioritised call while the other worker is held; NaN payloads
 * and signed zeros through the stable NaNs-last sort; calls after exit has
 * destroyed the default executor; WEFT_ALGO_REDUCE / _SCAN / _SORT over user
 * structs. */

/* ---- strided loops near SIZE_MAX ---- */
typedef struct hits { _Atomic size_t n; _Atomic size_t sum; } hits;
static void count_i(size_t i, void *arg) {
    hits *h = arg;
    atomic_fetch_add(&h->n, 1);
    atomic_fetch_add(&h->sum, i);
}

TEST(strided_loops_next_to_size_max_call_each_iteration_once_under_every_partitioner) {
    weft_executor *ex = make_executor(3);
    struct { size_t first, last, step; } cases[] = {
        { 0, SIZE_MAX, SIZE_MAX / 2 + 1 },
        { 0, SIZE_MAX, SIZE_MAX },
        { SIZE_MAX - 1, SIZE_MAX, 1 },
        { SIZE_MAX - 10, SIZE_MAX, 3 },
        { SIZE_MAX - 10, SIZE_MAX, 7 },
        { 5, 6, SIZE_MAX },
        { 1, SIZE_MAX, SIZE_MAX - 1 },
        { SIZE_MAX - 100000, SIZE_MAX, 1 },
        { SIZE_MAX - 100000, SIZE_MAX, 9 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t cnt = 0, sum = 0;
        for (size_t i = cases[c].first; i < cases[c].last; i += cases[c].step) {
            cnt++;
            sum += i;
            if (cases[c].last - i <= cases[c].step) break;
        }
        for (size_t k = 0; k < NCONFIGS; k++) {
            hits h = { 0, 0 };
            ASSERT_OK(weft_parallel_for(ex, cases[c].first, cases[c].last, cases[c].step, count_i, &h, &CONFIGS[k]));
            if (atomic_load(&h.n) != cnt || atomic_load(&h.sum) != sum)
                TEST_FAIL_("case %zu cfg %zu: %zu calls (want %zu)", c, k, (size_t)atomic_load(&h.n), cnt);
        }
    }
    weft_executor_destroy(ex);
}

/* ---- odd element sizes, unaligned ---- */
/* Bytes in pairs are affine maps mod 256 composed left to right; an odd last
 * byte is a nibble affine map: associative, not commutative. */
static void affine_op(void *acc_, const void *x_, void *arg) {
    size_t S = *(const size_t *)arg;
    unsigned char *a = acc_;
    const unsigned char *x = x_;
    size_t k = 0;
    for (; k + 1 < S; k += 2) {
        unsigned a1 = a[k], b1 = a[k + 1], a2 = x[k], b2 = x[k + 1];
        a[k] = (unsigned char)(a1 * a2);
        a[k + 1] = (unsigned char)(a1 * b2 + b1);
    }
    if (k < S) {
        unsigned a1 = a[k] >> 4, b1 = a[k] & 15, a2 = x[k] >> 4, b2 = x[k] & 15;
        a[k] = (unsigned char)((((a1 * a2) & 15) << 4) | ((a1 * b2 + b1) & 15));
    }
}
static void copy_map(const void *in, void *out, void *arg) { memcpy(out, in, *(const size_t *)arg); }

static const size_t ODD_SIZES[] = { 1, 3, 24, 200 };
static const size_t ODD_NS[] = { 0, 1, 2, 3, 8191, 8193, 16385 };
/* Configs: AUTO, STATIC, DYNAMIC chunk 1, GUIDED chunk 5, STATIC 3 on 2 tasks. */
static const size_t ODD_CFG[] = { 0, 1, 5, 8, 9 };

static unsigned char *odd_data(size_t n, size_t S, uint64_t seed, unsigned char **block) {
    *block = xmalloc(n * S + 2);
    unsigned char *v = *block + 1; /* unaligned */
    uint64_t s = seed;
    for (size_t i = 0; i < n * S; i++) v[i] = (unsigned char)(test_rand(&s) | 1);
    return v;
}

TEST(reductions_and_scans_of_unaligned_1_3_24_and_200_byte_elements_equal_the_serial_fold) {
    unsigned workers[] = { 1, 3 };
    bool small = test_scale(10) < 10; /* a sanitizer build */
    for (size_t w = 0; w < 2; w++) {
        weft_executor *ex = make_executor(workers[w]);
        for (size_t si = 0; si < 4; si++) {
            size_t S = ODD_SIZES[si];
            for (size_t ni = 0; ni < sizeof ODD_NS / sizeof ODD_NS[0]; ni++) {
                size_t n = ODD_NS[ni];
                if (small && n > 8193) continue;
                unsigned char *blk, *in = odd_data(n, S, n * 7 + S, &blk);
                unsigned char *oblk = xmalloc(n * S + 2), *out = oblk + 1;
                unsigned char *ref = xmalloc(n * S + 1), *refx = xmalloc(n * S + 1);
                unsigned char init[256], acc[256], r1[256], r2[256];
                for (size_t k = 0; k < S; k++) init[k] = (unsigned char)(k * 5 + 3);
                /* serial */
                memcpy(acc, init, S);
                for (size_t i = 0; i < n; i++) {
                    memcpy(refx + i * S, acc, S);
                    affine_op(acc, in + i * S, &S);
                    memcpy(ref + i * S, acc, S);
                }
                for (size_t ci = 0; ci < sizeof ODD_CFG / sizeof ODD_CFG[0]; ci++) {
                    size_t c = ODD_CFG[ci];
                    if (small && (c == 1 || c == 8)) continue; /* sanitizers: AUTO, DYNAMIC 1, STATIC 3 */
                    memcpy(r1, init, S);
                    ASSERT_OK(weft_parallel_reduce(ex, in, n, S, r1, affine_op, &S, &CONFIGS[c]));
                    ASSERT_TRUE(memcmp(r1, acc, S) == 0);
                    memcpy(r2, init, S);
                    ASSERT_OK(weft_parallel_transform_reduce(ex, in, n, S, S, r2, copy_map, affine_op, &S, &CONFIGS[c]));
                    ASSERT_TRUE(memcmp(r2, acc, S) == 0);
                    memset(out, 0xee, n * S);
                    ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, S, init, affine_op, &S, &CONFIGS[c]));
                    if (n) ASSERT_TRUE(memcmp(out, ref, n * S) == 0);
                    memset(out, 0xee, n * S);
                    ASSERT_OK(weft_parallel_exclusive_scan(ex, in, out, n, S, init, affine_op, &S, &CONFIGS[c]));
                    if (n) ASSERT_TRUE(memcmp(out, refx, n * S) == 0);
                    /* in place */
                    memcpy(out, in, n * S);
                    ASSERT_OK(weft_parallel_inclusive_scan(ex, out, out, n, S, init, affine_op, &S, &CONFIGS[c]));
                    if (n) ASSERT_TRUE(memcmp(out, ref, n * S) == 0);
                    memcpy(out, in, n * S);
                    ASSERT_OK(weft_parallel_exclusive_scan(ex, out, out, n, S, init, affine_op, &S, &CONFIGS[c]));
                    if (n) ASSERT_TRUE(memcmp(out, refx, n * S) == 0);
                }
                free(blk), free(oblk), free(ref), free(refx);
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- sorts of odd sizes, unaligned, stable ---- */
static int cmp_byte0(const void *a, const void *b, void *arg) {
    (void)arg;
    return (int)*(const unsigned char *)a % 7 - (int)*(const unsigned char *)b % 7;
}

TEST(sorts_of_unaligned_1_3_24_and_200_byte_elements_keep_equal_keys_in_input_order) {
    unsigned workers[] = { 1, 3 };
    const size_t ns[] = { 0, 1, 2, 3, 17, 4095, 4096, 4097, 12011 };
    for (size_t w = 0; w < 2; w++) {
        weft_executor *ex = make_executor(workers[w]);
        for (size_t si = 0; si < 4; si++) {
            size_t S = ODD_SIZES[si];
            for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                size_t n = ns[ni];
                unsigned char *blk, *v = odd_data(n, S, n + S, &blk);
                if (S >= 3) for (size_t i = 0; i < n; i++) { v[i * S + 1] = (unsigned char)(i >> 8); v[i * S + 2] = (unsigned char)i; }
                unsigned char *ref = xmalloc(n * S + 1);
                memcpy(ref, v, n * S);
                for (int stable = 0; stable < 2; stable++) {
                    unsigned char *x = xmalloc(n * S + 2), *xv = x + 1;
                    memcpy(xv, v, n * S);
                    weft_status st = stable ? weft_parallel_stable_sort(ex, xv, n, S, cmp_byte0, NULL, NULL)
                                            : weft_parallel_sort(ex, xv, n, S, cmp_byte0, NULL, NULL);
                    ASSERT_OK(st);
                    /* counting: stable order by key */
                    size_t at = 0;
                    for (int key = 0; key < 7; key++)
                        for (size_t i = 0; i < n; i++)
                            if (v[i * S] % 7 == key) {
                                if (memcmp(xv + at * S, v + i * S, S) != 0 && (stable || S >= 3))
                                    TEST_FAIL_("S %zu n %zu stable %d: element %zu differs", S, n, stable, at);
                                at++;
                            }
                    free(x);
                }
                free(blk), free(ref);
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- nested in fork-join, graph tasks, pipelines, async, at priorities ---- */
typedef struct nest_arg {
    int depth;
    size_t n;
    _Atomic int *bad;
} nest_arg;

static void nested_calls(weft_executor *ex, size_t n, _Atomic int *bad) {
    uint64_t *v = xmalloc((n + 1) * 8), *o = xmalloc((n + 1) * 8), r = 0, want = 0;
    for (size_t i = 0; i < n; i++) v[i] = i * 2654435761u, want += v[i];
    if (weft_parallel_reduce(ex, v, n, 8, &r, add_u64, NULL, NULL) != WEFT_OK || r != want) atomic_fetch_add(bad, 1);
    if (weft_u64_sum_inclusive_scan(ex, v, o, n, NULL, NULL) != WEFT_OK || (n && o[n - 1] != want)) atomic_fetch_add(bad, 1);
    uint64_t init = 5;
    if (weft_parallel_exclusive_scan(ex, v, o, n, 8, &init, add_u64, NULL, NULL) != WEFT_OK ||
        (n && o[n - 1] != want - v[n - 1] + 5))
        atomic_fetch_add(bad, 1);
    if (weft_u64_sort(ex, v, n, NULL) != WEFT_OK) atomic_fetch_add(bad, 1);
    for (size_t i = 1; i < n; i++)
        if (v[i - 1] > v[i]) { atomic_fetch_add(bad, 1); break; }
    if (weft_parallel_stable_sort(ex, o, n, 8, cmp_u64, NULL, NULL) != WEFT_OK) atomic_fetch_add(bad, 1);
    size_t idx = 99;
    if (weft_parallel_max_element(ex, v, n, 8, cmp_u64, NULL, &idx, NULL) != WEFT_OK || idx != (n ? n - 1 : 0))
        atomic_fetch_add(bad, 1);
    free(v), free(o);
}

static int fj_node(weft_ctx *cx, void *p) {
    nest_arg *a = p;
    if (a->depth == 0) {
        nested_calls(weft_ctx_executor(cx), a->n, a->bad);
        /* and a NULL (default) executor from a task of another */
        nested_calls(NULL, a->n / 4, a->bad);
        return 0;
    }
    nest_arg x = { a->depth - 1, a->n, a->bad }, y = { a->depth - 1, a->n + 1, a->bad };
    weft_spawn(cx, fj_node, &x);
    fj_node(cx, &y);
    return weft_sync(cx);
}

TEST(algorithms_nested_in_fork_join_and_prioritised_graph_tasks_give_exact_results) {
    for (unsigned w = 1; w <= 4; w += 3) {
        weft_executor *ex = make_executor(w);
        _Atomic int bad = 0;
        nest_arg root = { 3, 20000, &bad };
        ASSERT_EQ(weft_run_root(ex, fj_node, &root), 0);
        ASSERT_EQ(atomic_load(&bad), 0);
        /* graph tasks at each priority, with algo priority set too */
        weft_taskflow *tf = make_taskflow("n");
        nest_arg leaves[4];
        for (int k = 0; k < 4; k++) {
            leaves[k] = (nest_arg){ 1, 9000 + (size_t)k, &bad };
            weft_task t = must_emplace(tf, fj_node, &leaves[k]);
            ASSERT_OK(weft_task_set_priority(t, (weft_priority)(k - 1)));
        }
        weft_priority old;
        ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_HIGH, &old));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        nested_calls(ex, 30000, &bad);
        ASSERT_OK(weft_algo_set_priority(old, NULL));
        ASSERT_OK(weft_algo_set_numa_node(WEFT_NUMA_NODE(0), NULL));
        nested_calls(ex, 30000, &bad);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_algo_set_numa_node(0, NULL));
        ASSERT_EQ(atomic_load(&bad), 0);
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
}

/* in pipeline stages */
typedef struct pipe_nest { _Atomic int *bad; weft_executor *ex; } pipe_nest;
static int pn_first(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) == 12) weft_pipeflow_stop(pf);
    return 0;
}
static int pn_work(weft_pipeflow *pf, void *arg) {
    pipe_nest *a = arg;
    nested_calls(a->ex, 4100 + (size_t)weft_pipeflow_token(pf) * 37, a->bad);
    return 0;
}

TEST(algorithms_nested_in_pipeline_stages_give_exact_results_with_each_schedule) {
    const weft_pipeline_scheduling how[] = { WEFT_PIPELINE_AUTO, WEFT_PIPELINE_SPREAD, WEFT_PIPELINE_INLINE };
    for (unsigned w = 1; w <= 4; w += 3) {
        weft_executor *ex = make_executor(w);
        _Atomic int bad = 0;
        pipe_nest a = { &bad, ex };
        for (int h = 0; h < 3; h++)
            for (int prio = -1; prio <= 2; prio += 3) {
                weft_stage st[] = { { WEFT_STAGE_SERIAL, pn_first, NULL, "f" },
                                    { WEFT_STAGE_PARALLEL, pn_work, &a, "w" },
                                    { WEFT_STAGE_SERIAL, pn_work, &a, "s" } };
                weft_status err;
                weft_pipeline *p = weft_pipeline_create(4, st, 3, &err);
                ASSERT_OK(weft_pipeline_set_scheduling(p, how[h]));
                ASSERT_OK(weft_pipeline_set_priority(p, (weft_priority)prio));
                weft_taskflow *tf = make_taskflow("p");
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                ASSERT_OK(weft_run_and_wait(ex, tf));
                ASSERT_EQ(weft_pipeline_num_tokens(p), 12);
                weft_taskflow_destroy(tf);
                ASSERT_OK(weft_pipeline_destroy(p));
            }
        ASSERT_EQ(atomic_load(&bad), 0);
        weft_executor_destroy(ex);
    }
}

/* ---- reductions and scans of SIZE_MAX elements ---- */
static void rr_len(size_t lo, size_t hi, void *acc, void *arg) { (void)arg; ((size_t *)acc)[0] = hi - lo; ((size_t *)acc)[1] = lo; }
static void rr_add(void *acc, const void *x, void *arg) {
    (void)arg;
    size_t *a = acc; const size_t *b = x;
    if (b[1] != a[1] + a[0]) a[2]++; /* not contiguous */
    a[0] += b[0];
}
static void sr_len(size_t lo, size_t hi, void *acc, bool has, void *arg) {
    _Atomic size_t *bad = arg;
    size_t *a = acc;
    if (has != (lo != 0)) atomic_fetch_add(bad, 1);
    if (has && a[0] != lo) atomic_fetch_add(bad, 1);
    (void)hi;
}
static void sr_add(void *acc, const void *x, void *arg) { (void)arg; ((size_t *)acc)[0] += ((const size_t *)x)[0]; }
static void sr_red(size_t lo, size_t hi, void *acc, void *arg) { (void)arg; ((size_t *)acc)[0] = hi - lo; }

TEST(reductions_and_scans_over_size_max_elements_cover_the_range_once_in_order) {
    weft_executor *ex = make_executor(3);
    size_t ns[] = { SIZE_MAX, SIZE_MAX - 1, (size_t)1 << 63, ((size_t)1 << 63) + 1 };
    for (size_t ni = 0; ni < 4; ni++)
        for (size_t c = 0; c < NCONFIGS; c++) {
            size_t r[3] = { 0, 0, 0 };
            /* initial: length 0 starting at 0 */
            ASSERT_OK(weft_parallel_reduce_range(ex, ns[ni], sizeof r, r, rr_len, rr_add, NULL, &CONFIGS[c]));
            if (r[0] != ns[ni] || r[2] != 0) TEST_FAIL_("reduce n %zu cfg %zu: %zu (gaps %zu)", ns[ni], c, r[0], r[2]);
            _Atomic size_t bad = 0;
            ASSERT_OK(weft_parallel_scan_range(ex, ns[ni], sizeof(size_t), NULL, sr_red, sr_len, sr_add, &bad, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&bad), 0);
        }
    weft_executor_destroy(ex);
}

/* A prioritised call made by a task while the executor's other worker is
 * held by a task that waits for that call to finish: the call's queued jobs
 * must not need the held worker (no hang, at every level). */
typedef struct busy { _Atomic int go, done; int prio; } busy;
static int busy_holder(weft_ctx *cx, void *arg) {
    (void)cx;
    busy *b = arg;
    atomic_store(&b->go, 1);
    while (!atomic_load(&b->done)) sleep_us(100);
    return 0;
}
static int prio_caller(weft_ctx *cx, void *arg) {
    busy *b = arg;
    while (!atomic_load(&b->go)) sleep_us(100);
    weft_priority old;
    (void)weft_algo_set_priority((weft_priority)b->prio, &old);
    _Atomic size_t k = 0;
    uint64_t v[5000], r = 0;
    for (size_t i = 0; i < 5000; i++) v[i] = i;
    weft_status st = weft_parallel_for(weft_ctx_executor(cx), 0, 5000, 1, add_one, &k, NULL);
    weft_status st2 = weft_parallel_reduce(weft_ctx_executor(cx), v, 5000, 8, &r, add_u64, NULL, NULL);
    (void)weft_algo_set_priority(old, NULL);
    atomic_store(&b->done, 1);
    return st == WEFT_OK && st2 == WEFT_OK && atomic_load(&k) == 5000 && r == 4999 * 5000 / 2 ? 0 : 1;
}

TEST(a_prioritised_call_from_a_worker_finishes_while_the_other_worker_is_busy) {
    watchdog_start(60);
    for (int prio = WEFT_PRIORITY_LOW; prio <= WEFT_PRIORITY_CRITICAL; prio++) {
        weft_executor *ex = make_executor(2);
        busy b = { 0, 0, prio };
        weft_taskflow *tf = make_taskflow("b");
        must_emplace(tf, busy_holder, &b);
        must_emplace(tf, prio_caller, &b);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
    watchdog_stop();
}

TEST(nans_last_stable_sorts_keep_nan_payloads_and_signed_zeros_in_input_order) {
    const size_t ns[] = { 1, 2, 24, 25, 100, 4095, 4096, 4097, 30001 };
    for (unsigned w = 1; w <= 3; w += 2) {
        weft_executor *ex = make_executor(w);
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            size_t n = ns[ni];
            double *v = xmalloc(n * 8), *x = xmalloc(n * 8);
            uint64_t s = n * 31 + w;
            for (size_t i = 0; i < n; i++) {
                uint64_t r = test_rand(&s) % 8;
                uint64_t bits;
                if (r == 0) { bits = 0x7ff8000000000000ull | (i + 1); memcpy(&v[i], &bits, 8); }
                else if (r == 1) { bits = 0xfff8000000000000ull | (i + 1); memcpy(&v[i], &bits, 8); } /* negative NaN */
                else if (r == 2) v[i] = (i & 1) ? -0.0 : 0.0;
                else if (r == 3) v[i] = (i & 1) ? INFINITY : -INFINITY;
                else v[i] = (double)(test_rand(&s) % 5) - 2;
            }
            for (int stable = 0; stable < 2; stable++) {
                memcpy(x, v, n * 8);
                ASSERT_OK(stable ? weft_double_nans_last_stable_sort(ex, x, n, NULL) : weft_double_nans_last_sort(ex, x, n, NULL));
                size_t m = 0;
                while (m < n && !isnan(x[m])) m++;
                for (size_t i = m; i < n; i++) ASSERT_TRUE(isnan(x[i]));
                for (size_t i = 1; i < m; i++) ASSERT_TRUE(x[i - 1] <= x[i]);
                if (stable) { /* NaNs in input order; zeros in input order (sign pattern) */
                    size_t j = m;
                    for (size_t i = 0; i < n; i++)
                        if (isnan(v[i])) { ASSERT_TRUE(memcmp(&v[i], &x[j], 8) == 0); j++; }
                    size_t zi = 0;
                    for (size_t i = 0; i < m; i++)
                        if (x[i] == 0) {
                            while (v[zi] != 0 || isnan(v[zi])) zi++;
                            ASSERT_EQ(signbit(x[i]) != 0, signbit(v[zi]) != 0);
                            zi++;
                        }
                }
            }
            free(v), free(x);
        }
        weft_executor_destroy(ex);
    }
}

static void at_exit_calls(void) {
    uint64_t v[3] = { 3, 1, 2 }, o[3], r = 0;
    size_t idx = 0;
    _Atomic size_t k = 0;
    int bad = 0;
    bad |= weft_parallel_for(NULL, 0, 3, 1, add_one, &k, NULL) != WEFT_ESHUTDOWN;
    bad |= (weft_parallel_reduce(NULL, v, 3, 8, &r, add_u64, NULL, NULL) != WEFT_ESHUTDOWN) << 1;
    bad |= (weft_u64_sum_reduce(NULL, v, 3, &r, NULL) != WEFT_ESHUTDOWN) << 2;
    bad |= (weft_u64_sum_inclusive_scan(NULL, v, o, 3, NULL, NULL) != WEFT_ESHUTDOWN) << 3;
    bad |= (weft_u64_sort(NULL, v, 3, NULL) != WEFT_ESHUTDOWN) << 4;
    bad |= (weft_parallel_sort(NULL, v, 3, 8, cmp_u64, NULL, NULL) != WEFT_ESHUTDOWN) << 5;
    bad |= (weft_parallel_min_element(NULL, v, 3, 8, cmp_u64, NULL, &idx, NULL) != WEFT_ESHUTDOWN) << 6;
    bad |= (weft_parallel_for(NULL, 0, 0, 1, add_one, &k, NULL) != WEFT_ESHUTDOWN) << 7;
    /* the exit status keeps 8 bits: which call failed, or 255 for work done */
    _exit(bad ? bad : atomic_load(&k) || r ? 255 : 0);
}

TEST(algorithms_on_the_default_executor_after_exit_say_eshutdown) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        atexit(at_exit_calls);
        _Atomic size_t k = 0;
        if (weft_parallel_for(NULL, 0, 1000, 1, add_one, &k, NULL) != WEFT_OK) _exit(100);
        exit(0);
    }
    int status = wait_child(pid, 30.0, "exit hung");
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* ---- typed macros over user types ---- */
#define MAT_MUL(a, b) mat2_mul((a), (b))
WEFT_ALGO_REDUCE(h38_mat, mat2, MAT_MUL)
WEFT_ALGO_SCAN(h38_mat, mat2, MAT_MUL)
typedef struct rgb { unsigned char r, g, b; } rgb;
static inline rgb rgb_op(rgb x, rgb y) { /* affine over nibble pairs: associative, not commutative */
    rgb o;
    o.r = (unsigned char)(x.r * y.r);
    o.g = (unsigned char)(x.r * y.g + x.g);
    o.b = (unsigned char)(x.b ^ y.b);
    return o;
}
WEFT_ALGO_REDUCE(h38_rgb, rgb, rgb_op)
WEFT_ALGO_SCAN(h38_rgb, rgb, rgb_op)
static int rgb_lt_(rgb a, rgb b) { return a.r < b.r; }
#define RGB_LT(a, b) rgb_lt_((a), (b))
WEFT_ALGO_SORT(h38_rgb, rgb, RGB_LT)

TEST(typed_macros_over_user_types_reduce_scan_and_sort_like_the_serial_loop) {
    const size_t ns[] = { 0, 1, 2, 8191, 8193, 16385, 30011 };
    for (unsigned w = 1; w <= 3; w += 2) {
        weft_executor *ex = make_executor(w);
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            size_t n = ns[ni];
            mat2 *m = random_mats(n + 1, n + w), *o = xmalloc((n + 1) * sizeof *o), *ref = xmalloc((n + 1) * sizeof *ref);
            mat2 init = { 3, 5, 7, 9 }, acc = init, r = init;
            for (size_t i = 0; i < n; i++) acc = mat2_mul(acc, m[i]), ref[i] = acc;
            for (size_t c = 0; c < NCONFIGS; c++) {
                r = init;
                ASSERT_OK(h38_mat_reduce(ex, m, n, &r, &CONFIGS[c]));
                ASSERT_TRUE(mat2_eq(r, acc));
                ASSERT_OK(h38_mat_inclusive_scan(ex, m, o, n, &init, &CONFIGS[c]));
                for (size_t i = 0; i < n; i++) ASSERT_TRUE(mat2_eq(o[i], ref[i]));
                ASSERT_OK(h38_mat_exclusive_scan(ex, m, o, n, init, &CONFIGS[c]));
                for (size_t i = 0; i < n; i++) ASSERT_TRUE(mat2_eq(o[i], i ? ref[i - 1] : init));
                memcpy(o, m, n * sizeof *o);
                ASSERT_OK(h38_mat_inclusive_scan(ex, o, o, n, &init, &CONFIGS[c]));
                for (size_t i = 0; i < n; i++) ASSERT_TRUE(mat2_eq(o[i], ref[i]));
            }
            rgb *v = xmalloc((n + 1) * 3), *vo = xmalloc((n + 1) * 3), *vr = xmalloc((n + 1) * 3);
            uint64_t s = n;
            for (size_t i = 0; i < n; i++) v[i] = (rgb){ (unsigned char)(test_rand(&s) | 1), (unsigned char)test_rand(&s), (unsigned char)i };
            rgb ra = { 1, 0, 0 };
            for (size_t i = 0; i < n; i++) vr[i] = ra = i ? rgb_op(ra, v[i]) : v[i];
            ASSERT_OK(h38_rgb_inclusive_scan(ex, v, vo, n, NULL, NULL));
            ASSERT_TRUE(n == 0 || memcmp(vo, vr, n * 3) == 0);
            rgb rr = { 1, 0, 0 }, want = { 1, 0, 0 };
            for (size_t i = 0; i < n; i++) want = rgb_op(want, v[i]);
            ASSERT_OK(h38_rgb_reduce(ex, v, n, &rr, NULL));
            ASSERT_TRUE(memcmp(&rr, &want, 3) == 0);
            memcpy(vo, v, n * 3);
            ASSERT_OK(h38_rgb_stable_sort(ex, vo, n, NULL));
            for (size_t i = 1; i < n; i++) {
                ASSERT_TRUE(vo[i - 1].r <= vo[i].r);
                if (vo[i - 1].r == vo[i].r) ASSERT_TRUE(vo[i - 1].b != vo[i].b || n > 256);
            }
            ASSERT_OK(h38_rgb_sort(ex, vo, n, NULL));
            for (size_t i = 1; i < n; i++) ASSERT_TRUE(vo[i - 1].r <= vo[i].r);
            free(m), free(o), free(ref), free(v), free(vo), free(vr);
        }
        weft_executor_destroy(ex);
    }
}
