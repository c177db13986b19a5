/* Control flow, round 45: nested subflows re-run the way Taskflow's fibonacci
 * by subflows does (each subflow task emplaces two subflow tasks and joins),
 * the cost h45's profile went after.  A re-run of the same recursion must take
 * back, for each subflow task, its own record with its graph and nested-run
 * record, and so allocate nothing; the results stay exact. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <stdlib.h>

typedef struct {
    long n, r;
} fib45;

static int fib45_sf(weft_ctx *cx, weft_subflow *sf, void *p) {
    (void)cx;
    fib45 *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    fib45 x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace_subflow(g, fib45_sf, &x))) return -1;
    if (weft_task_is_null(weft_emplace_subflow(g, fib45_sf, &y))) return -1;
    weft_status st = weft_subflow_join(sf);
    a->r = x.r + y.r;
    return st == WEFT_OK ? 0 : -1;
}

static atomic_long allocs45;
static void *count45_alloc(void *ctx, size_t n) {
    (void)ctx;
    atomic_fetch_add(&allocs45, 1);
    return malloc(n);
}
static void *count45_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)ctx, (void)old;
    atomic_fetch_add(&allocs45, 1);
    return realloc(p, n);
}
static void count45_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    free(p);
}

static int nop45(weft_ctx *cx, void *arg) { return (void)cx, (void)arg, 0; }

/* Allocations of one weft_run_and_wait of tf on ex. */
static long allocs_of_run(weft_executor *ex, weft_taskflow *tf) {
    long before = atomic_load(&allocs45);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    return atomic_load(&allocs45) - before;
}

/* The clear at each execution pushed the subflow tasks' records onto the
 * graph's pool last task first, so the re-run gave fib(n-1) the record (and
 * the graph with its pool of records) fib(n-2) had: the larger subtree grew
 * its pool by allocation on every re-run.  fib(14) allocated 2101 times a
 * re-run on one worker; a plain one-task graph's run is the floor. */
TEST(rerunning_nested_subflows_allocates_no_more_than_a_plain_run_as_each_task_takes_back_its_own_record) {
    weft_set_allocator(&(weft_allocator){count45_alloc, count45_realloc, count45_free, NULL});
    static const unsigned workers[] = {1, 2};
    for (size_t wi = 0; wi < 2; wi++) {
        weft_executor *ex = make_executor(workers[wi]);
        weft_taskflow *plain = make_taskflow("plain");
        ASSERT_FALSE(weft_task_is_null(weft_emplace(plain, nop45, NULL)));
        (void)allocs_of_run(ex, plain);
        long floor = allocs_of_run(ex, plain);
        fib45 a = {14, 0};
        weft_taskflow *tf = make_taskflow("fib_subflow");
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, fib45_sf, &a)));
        (void)allocs_of_run(ex, tf);
        ASSERT_EQ(a.r, 377);
        for (int rep = 0; rep < 3; rep++) {
            a.r = -1;
            long n = allocs_of_run(ex, tf);
            ASSERT_EQ(a.r, 377);
            if (n > floor) printf("flow_hunt45: re-run %d on %u workers allocated %ld times (a plain run %ld)\n", rep,
                                  workers[wi], n, floor);
            ASSERT_LE(n, floor);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(plain));
        weft_executor_destroy(ex);
    }
    weft_set_allocator(NULL);
}

/* A clear leaves the first chunk as the fast path's room (taskflow.c): a
 * rebuild after it crosses the chunk boundaries, keeps its sources through a
 * chain and a fan, reuses an erased slot, and runs each task once, in order. */
static int chain45(weft_ctx *cx, void *arg) {
    (void)cx;
    long *v = arg; /* v[0]: the next index expected, v[1]: this task's */
    if (v[1] >= 0) {
        long *seq = (long *)v[2];
        if (*seq != v[1]) return 1;
        ++*seq;
    }
    return 0;
}

TEST(a_cleared_taskflow_rebuilt_past_its_first_chunk_with_edges_and_an_erase_runs_each_task_once_in_order) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("rebuilt");
    for (int round = 0; round < 3; round++) {
        long seq = 0, args[40][3], loose[3] = {0, -1, 0};
        weft_task prev = WEFT_TASK_NULL, t[40];
        size_t n = 9 + (size_t)round * 13; /* 9, 22, 35: past chunks 0, 1 and 2 */
        for (size_t i = 0; i < n; i++) {
            args[i][1] = (long)i, args[i][2] = (long)(intptr_t)&seq;
            t[i] = weft_emplace(tf, chain45, args[i]);
            ASSERT_FALSE(weft_task_is_null(t[i]));
            if (!weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t[i]));
            prev = t[i];
        }
        /* a task erased and its slot taken by one outside the chain */
        weft_task extra = weft_emplace(tf, chain45, loose);
        ASSERT_OK(weft_task_erase(extra));
        ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, chain45, loose)));
        ASSERT_EQ(weft_taskflow_num_tasks(tf), n + 1);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(seq, (long)n);
        ASSERT_OK(weft_taskflow_clear(tf));
        ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
