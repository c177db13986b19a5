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
