/* Scale and limits (session 43): what a user with big inputs hits.  Graphs,
 * nestings, chains and loops far past the sizes the other tests use, each
 * bounded to well under a second on 2 cores.  Whatever walks a structure whose
 * depth the user chooses (nested subflows, modules, dependent async chains,
 * cancellation callbacks) must not recurse on the C stack: the checks run on
 * a thread with a small stack (SMALL_STACK), so that recursion shows as a
 * crash here rather than only on inputs ten times bigger. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <pthread.h>

#include <weft/algo_typed.h>

/* A stack of 256 KiB: a few hundred bytes a level of recursion overflows it
 * past about a thousand levels. */
enum { SMALL_STACK = 256 * 1024 };

/* Runs fn(arg) on a new thread with a stack of `bytes` and waits for it. */
static void on_small_stack(void *(*fn)(void *), void *arg, size_t bytes) {
    pthread_attr_t at;
    pthread_t th;
    ASSERT_EQ(pthread_attr_init(&at), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&at, bytes), 0);
    ASSERT_EQ(pthread_create(&th, &at, fn, arg), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&at);
}

static weft_executor *small_executor(unsigned workers) {
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers, .stack_size = SMALL_STACK }, &err);
    ASSERT_NOT_NULL(ex);
    return ex;
}

/* ---- subflows nested 10^4 deep ---------------------------------------------- */

enum { SUB_DEPTH = 10000 };
static atomic_long sub_calls;

static int nest_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    long depth = (long)(intptr_t)arg;
    atomic_fetch_add(&sub_calls, 1);
    if (depth + 1 < SUB_DEPTH &&
        weft_task_is_null(weft_emplace_subflow(weft_subflow_graph(sf), nest_subflow, (void *)(intptr_t)(depth + 1))))
        return 1;
    return 0;
}

static void *destroy_tf(void *tf) {
    ASSERT_OK(weft_taskflow_destroy(tf));
    return NULL;
}

/* Each level's graph is kept by its subflow task for the next run; destroying
 * the taskflow freed them by recursion (destroy -> the pool's subflow record ->
 * destroy of its graph -> ...), three C frames a level, which overflowed a
 * small stack at 10^4 levels (and the default 8 MiB one at a few 10^5). */
TEST(a_taskflow_with_subflows_nested_ten_thousand_deep_is_destroyed_without_deep_recursion) {
    weft_executor *ex = small_executor(2);
    weft_taskflow *tf = weft_taskflow_create("nested", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, nest_subflow, (void *)(intptr_t)0)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&sub_calls), SUB_DEPTH);
    ASSERT_OK(weft_run_and_wait(ex, tf)); /* the kept graphs are cleared and rebuilt */
    ASSERT_EQ(atomic_load(&sub_calls), 2 * SUB_DEPTH);
    FILE *devnull = fopen("/dev/null", "w");
    ASSERT_NOT_NULL(devnull);
    ASSERT_OK(weft_taskflow_dump_dot(tf, devnull));
    fclose(devnull);
    on_small_stack(destroy_tf, tf, 64 * 1024);
    weft_executor_destroy(ex);
}

/* ---- arrays whose byte size overflows ----------------------------------------- */

/* A real array of 4 elements of 16 bytes, passed with a count whose byte size
 * cannot exist (a negative count cast to size_t, say): each callback checks
 * that it is handed an element of the array before touching it. */
enum { ESZ = 16 };
static unsigned char small_array[4 * ESZ], small_out[4 * ESZ];
static atomic_long stray_calls;

static bool inside(const void *p) {
    const unsigned char *c = p;
    bool in = (c >= small_array && c < small_array + sizeof small_array) || (c >= small_out && c < small_out + sizeof small_out);
    if (!in) { /* a call that walked past its array: fail now (it would go on for 2^61 elements) */
        atomic_fetch_add(&stray_calls, 1);
        TEST_FAIL_("a callback was handed %p, outside the array", p);
    }
    return in;
}
static void touch_elem(void *e, void *arg) { (void)arg; if (inside(e)) ((unsigned char *)e)[0]++; }
static void copy_elem(const void *in, void *out, void *arg) { (void)arg; if (inside(in) && inside(out)) memcpy(out, in, ESZ); }
static void copy2_elem(const void *a, const void *b, void *out, void *arg) { (void)arg; (void)b; if (inside(a) && inside(b) && inside(out)) memcpy(out, a, ESZ); }
static void combine_elem(void *acc, const void *x, void *arg) { (void)arg; (void)acc; (void)inside(x); }
static int cmp_elem(const void *a, const void *b, void *arg) { (void)arg; return inside(a) && inside(b) ? memcmp(a, b, ESZ) : 0; }
static bool pred_elem(const void *e, void *arg) { (void)arg; return !inside(e); }

/* The element-array algorithms walked base + i * size for i up to n whatever
 * n * size came to: n = SIZE_MAX / 8 with 16-byte elements ran the callbacks
 * on addresses past the array (a crash, or writes into whatever lay there),
 * while the sorts refused it.  Each must refuse an n whose byte size exceeds
 * what an object can have, before calling anything. */
TEST(array_algorithms_refuse_a_count_whose_byte_size_overflows_before_calling_anything) {
    weft_executor *ex = small_executor(2);
    const size_t n = SIZE_MAX / 8; /* n * ESZ wraps */
    unsigned char acc[ESZ] = {0};
    size_t index = 0;
    ASSERT_STATUS(weft_parallel_for_each(ex, small_array, n, ESZ, touch_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform(ex, small_array, ESZ, small_out, ESZ, n, copy_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform(ex, small_array, 1, small_out, ESZ, n, copy_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform2(ex, small_array, ESZ, small_array, ESZ, small_out, ESZ, n, copy2_elem, NULL, NULL),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, small_array, n, ESZ, acc, combine_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform_reduce(ex, small_array, n, ESZ, ESZ, acc, copy_elem, combine_elem, NULL, NULL),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_inclusive_scan(ex, small_array, small_out, n, ESZ, NULL, combine_elem, NULL, NULL),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_exclusive_scan(ex, small_array, small_out, n, ESZ, acc, combine_elem, NULL, NULL),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_min_element(ex, small_array, n, ESZ, cmp_elem, NULL, &index, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_max_element(ex, small_array, n, ESZ, cmp_elem, NULL, &index, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_find_if(ex, small_array, n, ESZ, pred_elem, NULL, &index, NULL), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "weft_parallel_find_if") != NULL);
    ASSERT_TRUE(weft_parallel_sort(ex, small_array, n, ESZ, cmp_elem, NULL, NULL) != WEFT_OK);
    ASSERT_EQ(atomic_load(&stray_calls), 0);
    /* And as graph tasks: the emplaced call fails its task with the status. */
    weft_taskflow *tf = weft_taskflow_create("huge", NULL);
    weft_transform_desc td = { small_array, ESZ, small_out, ESZ, n, copy_elem, NULL, {0} };
    ASSERT_FALSE(weft_task_is_null(weft_emplace_transform(tf, &td)));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, WEFT_EINVAL);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_EQ(atomic_load(&stray_calls), 0);
    /* The typed reductions and scans (algo_typed.h) hand the generic checks
     * such a count too, rather than walking past the array in their ranges. */
    static int64_t typed[8], typed_out[8];
    int64_t sum = 0;
    ASSERT_STATUS(weft_i64_sum_reduce(ex, typed, SIZE_MAX / 4, &sum, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_i64_sum_inclusive_scan(ex, typed, typed_out, SIZE_MAX / 4, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_i64_sum_exclusive_scan(ex, typed, typed_out, SIZE_MAX / 4, 0, NULL), WEFT_EINVAL);
    ASSERT_EQ(sum, 0);
    /* The limit is the byte size, not n: the most elements of 1 byte that
     * can be are still a valid count for a range of that length. */
    ASSERT_OK(weft_parallel_for_each(ex, small_array, 4, ESZ, touch_elem, NULL, NULL));
    weft_executor_destroy(ex);
}

/* ---- probes that found nothing: big inputs that must keep working ------------ */

static atomic_long ticks;
static int tick(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed);
    return 0;
}

enum { CHAIN = 1000000 };

struct big_graph { weft_executor *ex; int shape; };

/* Builds, validates, runs twice (and as run_n), draws, closes into a strong
 * cycle (the chain) and destroys a taskflow of 10^6 tasks, all on a thread of
 * 256 KiB: no walk over it may recurse per task. */
static void *big_graph_body(void *p) {
    struct big_graph *g = p;
    weft_taskflow *tf = weft_taskflow_create("big", NULL);
    ASSERT_NOT_NULL(tf);
    weft_task *t = malloc(sizeof *t * CHAIN);
    ASSERT_NOT_NULL(t);
    for (size_t i = 0; i < CHAIN; i++) ASSERT_FALSE(weft_task_is_null(t[i] = weft_emplace(tf, tick, NULL)));
    if (g->shape == 0) {
        ASSERT_OK(weft_linearize(t, CHAIN));
    } else { /* fan-out from t[0] to every middle task, fan-in to the last */
        ASSERT_OK(weft_precede_many(t[0], t + 1, CHAIN - 2));
        for (size_t i = 1; i + 1 < CHAIN; i++) ASSERT_OK(weft_precede(t[i], t[CHAIN - 1]));
        ASSERT_EQ(weft_task_num_dependents(t[CHAIN - 1]), CHAIN - 2);
    }
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    atomic_store(&ticks, 0);
    ASSERT_OK(weft_run_and_wait(g->ex, tf));
    ASSERT_OK(weft_run_and_wait(g->ex, tf));
    weft_future *f;
    ASSERT_OK(weft_run_n(g->ex, tf, 2, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ticks), 4 * (long)CHAIN);
    FILE *devnull = fopen("/dev/null", "w");
    ASSERT_NOT_NULL(devnull);
    ASSERT_OK(weft_taskflow_dump_dot(tf, devnull));
    fclose(devnull);
    if (g->shape == 0) { /* the last task back to the first: a cycle of 10^6 */
        ASSERT_OK(weft_precede(t[CHAIN - 1], t[0]));
        weft_task on = WEFT_TASK_NULL;
        ASSERT_STATUS(weft_taskflow_validate(tf, &on), WEFT_ECYCLE);
        ASSERT_FALSE(weft_task_is_null(on));
        ASSERT_STATUS(weft_run(g->ex, tf, NULL), WEFT_ECYCLE);
    }
    free(t);
    ASSERT_OK(weft_taskflow_destroy(tf));
    return NULL;
}

TEST(a_chain_of_a_million_tasks_builds_runs_draws_finds_its_cycle_and_frees_on_small_stacks) {
    struct big_graph g = { small_executor(2), 0 };
    on_small_stack(big_graph_body, &g, SMALL_STACK);
    weft_executor_destroy(g.ex);
}

TEST(a_million_wide_fan_out_and_fan_in_runs_exactly_once_per_run_on_small_stacks) {
    struct big_graph g = { small_executor(2), 1 };
    on_small_stack(big_graph_body, &g, SMALL_STACK);
    weft_executor_destroy(g.ex);
}

/* Modules nested 1000 deep: taskflow i has a task and a module of i - 1.  A
 * module of the top in the bottom closes a circle, which fails the run with
 * task code WEFT_EDEADLK (flow.h), not a hang. */
enum { MOD_DEPTH = 1000 };
static void *modules_body(void *p) {
    weft_executor *ex = p;
    weft_taskflow **tf = malloc(sizeof *tf * MOD_DEPTH);
    ASSERT_NOT_NULL(tf);
    for (size_t i = 0; i < MOD_DEPTH; i++) {
        ASSERT_NOT_NULL(tf[i] = weft_taskflow_create("level", NULL));
        ASSERT_FALSE(weft_task_is_null(weft_emplace(tf[i], tick, NULL)));
        if (i) ASSERT_FALSE(weft_task_is_null(weft_emplace_module(tf[i], tf[i - 1])));
    }
    atomic_store(&ticks, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf[MOD_DEPTH - 1]));
    ASSERT_OK(weft_run_and_wait(ex, tf[MOD_DEPTH - 1]));
    ASSERT_EQ(atomic_load(&ticks), 2 * MOD_DEPTH);
    weft_task back = weft_emplace_module(tf[0], tf[MOD_DEPTH - 1]);
    ASSERT_FALSE(weft_task_is_null(back));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf[MOD_DEPTH - 1], &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, WEFT_EDEADLK);
    weft_future_destroy(f);
    ASSERT_OK(weft_task_erase(back));
    for (size_t i = MOD_DEPTH; i-- > 0;) ASSERT_OK(weft_taskflow_destroy(tf[i]));
    free(tf);
    return NULL;
}

TEST(modules_nested_a_thousand_deep_run_and_a_module_circle_fails_with_edeadlk) {
    weft_executor *ex = small_executor(2);
    on_small_stack(modules_body, ex, SMALL_STACK);
    weft_executor_destroy(ex);
}

/* ---- fork-join past the frame stack ------------------------------------------- */

struct chain_arg { long n, r; };
/* Each level spawns its continuation and a leaf, then syncs both: 2 * 10^5
 * levels hold 2 * 10^5 unsynced frames at the bottom, three times the
 * 65,536-frame stack, so most run through its overflow path. */
static int fj_chain(weft_ctx *ctx, void *p) {
    struct chain_arg *a = p;
    if (a->n == 0) {
        a->r = 1;
        return 0;
    }
    struct chain_arg x = { a->n - 1, 0 }, y = { 0, 0 };
    ASSERT_OK(weft_spawn(ctx, fj_chain, &x));
    ASSERT_OK(weft_spawn(ctx, fj_chain, &y));
    int r2 = weft_sync(ctx), r1 = weft_sync(ctx);
    a->r = x.r + y.r;
    return r1 ? r1 : r2;
}

WEFT_FJ_TASK(long, fj_typed_chain, long, n) {
    if (n == 0) return 1;
    WEFT_FJ_SLOT(fj_typed_chain) x, y;
    WEFT_FJ_SPAWN(fj_typed_chain, &x, n - 1);
    WEFT_FJ_SPAWN(fj_typed_chain, &y, 0);
    long b = WEFT_FJ_SYNC(fj_typed_chain, &y);
    return WEFT_FJ_SYNC(fj_typed_chain, &x) + b;
}

WEFT_FJ_TASK(long, fj_square, long, x) { return x * x; }
/* A flat loop of typed spawns, far more than 16 frames, synced newest first. */
WEFT_FJ_TASK(long, fj_flat, long, n) {
    WEFT_FJ_SLOT(fj_square) *s = malloc(sizeof *s * (size_t)n);
    ASSERT_NOT_NULL(s);
    for (long i = 0; i < n; i++) WEFT_FJ_SPAWN(fj_square, &s[i], i);
    long sum = 0;
    for (long i = n; i-- > 0;) sum += WEFT_FJ_SYNC(fj_square, &s[i]);
    free(s);
    return sum;
}

enum { FJ_DEPTH = 200000, FJ_FLAT = 100000 };
static long fj_typed_result, fj_flat_result;
static int fj_typed_root(weft_ctx *ctx, void *p) {
    (void)p;
    fj_typed_result = WEFT_FJ_RUN(ctx, fj_typed_chain, FJ_DEPTH);
    fj_flat_result = WEFT_FJ_RUN(ctx, fj_flat, FJ_FLAT);
    return 0;
}

TEST(fork_join_recursion_three_times_deeper_than_the_frame_stack_is_exact_typed_and_untyped) {
#ifdef UNDER_TSAN
    SKIP("2 * 10^5 nested C frames are deeper than ThreadSanitizer's shadow stack");
#endif
    weft_status err;
    /* 2 * 10^5 nested calls need more than the default 8 MiB of stack. */
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .stack_size = (size_t)256 << 20 }, &err);
    ASSERT_NOT_NULL(ex);
    struct chain_arg a = { FJ_DEPTH, 0 };
    ASSERT_EQ(weft_run_root(ex, fj_chain, &a), 0);
    ASSERT_EQ(a.r, FJ_DEPTH + 1);
    ASSERT_EQ(weft_run_root(ex, fj_typed_root, NULL), 0);
    ASSERT_EQ(fj_typed_result, FJ_DEPTH + 1);
    long want = 0;
    for (long i = 0; i < FJ_FLAT; i++) want += i * i;
    ASSERT_EQ(fj_flat_result, want);
    weft_executor_destroy(ex);
    /* And with the smallest frame stack (16): nearly every spawn overflows. */
    ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .fork_join_frames = 16, .stack_size = (size_t)256 << 20 }, &err);
    ASSERT_NOT_NULL(ex);
    a = (struct chain_arg){ FJ_DEPTH / 4, 0 };
    ASSERT_EQ(weft_run_root(ex, fj_chain, &a), 0);
    ASSERT_EQ(a.r, FJ_DEPTH / 4 + 1);
    fj_flat_result = 0;
    ASSERT_EQ(weft_run_root(ex, fj_typed_root, NULL), 0);
    ASSERT_EQ(fj_flat_result, want);
    weft_executor_destroy(ex);
}

/* ---- async chains ---------------------------------------------------------------- */

static long chain_last = -1;
static atomic_int chain_out_of_order;
static int chain_step(weft_ctx *ctx, void *arg) {
    (void)ctx;
    long i = (long)(intptr_t)arg;
    if (i != chain_last + 1) atomic_store(&chain_out_of_order, 1);
    chain_last = i;
    return 0;
}
static atomic_int gate_open;
static int gate(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    while (!atomic_load(&gate_open)) sleep_us(100);
    return 0;
}

enum { ACHAIN = 300000, AFAN = 100000 };
static void *async_chain_body(void *p) {
    weft_executor *ex = p;
    weft_future *prev;
    ASSERT_OK(weft_async(ex, gate, NULL, &prev)); /* the chain is built whole before it runs */
    for (long i = 0; i < ACHAIN; i++) {
        weft_future *f;
        ASSERT_OK(weft_dependent_async(ex, chain_step, (void *)(intptr_t)i, &prev, 1, &f));
        weft_future_destroy(prev);
        prev = f;
    }
    /* and 10^5 dependents of one future, and one task depending on all of them */
    weft_future *hub;
    ASSERT_OK(weft_dependent_async(ex, tick, NULL, &prev, 1, &hub));
    weft_future **fan = malloc(sizeof *fan * AFAN);
    ASSERT_NOT_NULL(fan);
    atomic_store(&ticks, 0);
    for (long i = 0; i < AFAN; i++) ASSERT_OK(weft_dependent_async(ex, tick, NULL, &hub, 1, &fan[i]));
    weft_future *all;
    ASSERT_OK(weft_dependent_async(ex, tick, NULL, fan, AFAN, &all));
    for (long i = 0; i < AFAN; i++) weft_future_destroy(fan[i]);
    free(fan);
    atomic_store(&gate_open, 1);
    ASSERT_OK(weft_future_wait(all));
    ASSERT_EQ(chain_last, ACHAIN - 1);
    ASSERT_EQ(atomic_load(&chain_out_of_order), 0);
    ASSERT_EQ(atomic_load(&ticks), AFAN + 2);
    weft_future_destroy(all);
    weft_future_destroy(hub);
    weft_future_destroy(prev);
    return NULL;
}

TEST(a_dependent_async_chain_of_300000_and_a_future_with_100000_dependents_run_in_order_on_small_stacks) {
    weft_executor *ex = small_executor(2);
    on_small_stack(async_chain_body, ex, SMALL_STACK);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
}

/* ---- run_n at the ends of its range -------------------------------------------- */

static int cancel_own_run_at(weft_ctx *ctx, void *arg) {
    if (atomic_fetch_add(&ticks, 1) + 1 == (long)(intptr_t)arg) (void)weft_future_cancel((weft_future *)weft_ctx_run(ctx));
    return 0;
}

TEST(run_n_of_uint64_max_runs_until_cancelled_and_zero_runs_nothing) {
    weft_executor *ex = small_executor(2);
    weft_taskflow *tf = weft_taskflow_create("n", NULL);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, cancel_own_run_at, (void *)(intptr_t)20000)));
    atomic_store(&ticks, 0);
    weft_future *f;
    ASSERT_OK(weft_run_n(ex, tf, UINT64_MAX, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(atomic_load(&ticks), 20000);
    ASSERT_EQ(info.iterations, 20000);
    weft_future_destroy(f);
    ASSERT_OK(weft_run_n(ex, tf, 0, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(atomic_load(&ticks), 20000);
    weft_future_destroy(f);
    /* Parallel instances: UINT64_MAX of them cannot be allocated: refused. */
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, UINT64_MAX, &f), WEFT_ENOMEM);
    ASSERT_NULL(f);
    ASSERT_OK(weft_taskflow_destroy(tf)); /* the refusal left it not busy */
    weft_executor_destroy(ex);
}

/* ---- algorithms: edges of n, chunk and element size ---------------------------- */

static atomic_long idx_calls;
static atomic_ulong idx_sum;
static void count_index(size_t i, void *arg) {
    (void)arg;
    atomic_fetch_add(&idx_calls, 1);
    atomic_fetch_add(&idx_sum, i);
}
static void bump3(void *e, void *arg) {
    (void)arg;
    ((unsigned char *)e)[1]++;
}
/* 3-byte little-endian counters: an element size that is no multiple of 8. */
static unsigned get3(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8 | (unsigned)p[2] << 16; }
static void put3(unsigned char *p, unsigned v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); p[2] = (unsigned char)(v >> 16); }
static void add3(void *acc, const void *x, void *arg) { (void)arg; put3(acc, get3(acc) + get3(x)); }

TEST(loops_near_size_max_and_every_chunk_size_with_three_byte_elements_are_exact) {
    weft_executor *ex = small_executor(2);
    /* strides that end next to SIZE_MAX, where i + step wraps */
    struct { size_t first, last, step; long calls; } cases[] = {
        { SIZE_MAX - 10, SIZE_MAX, 3, 4 }, { 0, SIZE_MAX, SIZE_MAX, 1 },
        { 5, SIZE_MAX, SIZE_MAX / 2, 2 },  { SIZE_MAX - 1, SIZE_MAX, 1, 1 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        atomic_store(&idx_calls, 0);
        ASSERT_OK(weft_parallel_for(ex, cases[k].first, cases[k].last, cases[k].step, count_index, NULL, NULL));
        ASSERT_EQ(atomic_load(&idx_calls), cases[k].calls);
    }
    enum { N = 1000 };
    static unsigned char in[N * 3], out[N * 3];
    const size_t chunks[] = { 0, 1, 7, N - 1, N, N + 1, SIZE_MAX };
    const size_t ns[] = { 0, 1, 2, 3, N };
    for (int part = WEFT_PARTITION_AUTO; part <= WEFT_PARTITION_GUIDED; part++)
        for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
            for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
                size_t n = ns[k];
                weft_algo_config cfg = { .partitioner = (weft_partitioner)part, .chunk = chunks[c] };
                atomic_store(&idx_calls, 0);
                atomic_store(&idx_sum, 0);
                ASSERT_OK(weft_parallel_for(ex, 0, n, 1, count_index, NULL, &cfg));
                ASSERT_EQ(atomic_load(&idx_calls), (long)n);
                ASSERT_EQ(atomic_load(&idx_sum), n * (n ? n - 1 : 0) / 2);
                memset(in, 0, sizeof in);
                ASSERT_OK(weft_parallel_for_each(ex, in, n, 3, bump3, NULL, &cfg));
                for (size_t i = 0; i < N; i++) ASSERT_EQ(get3(in + 3 * i), i < n ? 256u : 0u);
                for (size_t i = 0; i < n; i++) put3(in + 3 * i, 1);
                unsigned char acc[3] = { 0, 0, 0 }, init[3] = { 0, 0, 0 };
                ASSERT_OK(weft_parallel_reduce(ex, in, n, 3, acc, add3, NULL, &cfg));
                ASSERT_EQ(get3(acc), n);
                memset(out, 0xee, sizeof out);
                ASSERT_OK(weft_parallel_inclusive_scan(ex, in, out, n, 3, init, add3, NULL, &cfg));
                for (size_t i = 0; i < n; i++) ASSERT_EQ(get3(out + 3 * i), i + 1);
                if (n < N) ASSERT_EQ(out[3 * n], 0xee); /* nothing written past n */
                ASSERT_OK(weft_parallel_exclusive_scan(ex, in, out, n, 3, init, add3, NULL, &cfg));
                for (size_t i = 0; i < n; i++) ASSERT_EQ(get3(out + 3 * i), i);
            }
    weft_executor_destroy(ex);
}

static atomic_long cmp_calls;
static int cmp_counted(const void *a, const void *b, void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&cmp_calls, 1, memory_order_relaxed);
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* All keys equal, sorted, reversed and sawtooth: each sort stays within
 * n log2 n comparisons (a quadratic pattern would take ~n^2 / 2). */
TEST(sorts_of_equal_sorted_and_reversed_keys_take_n_log_n_comparisons) {
    weft_executor *ex = small_executor(2);
    enum { N = 200000 };
    int *v = malloc(sizeof *v * N);
    ASSERT_NOT_NULL(v);
    const double nlogn = N * 17.7; /* log2(200000) = 17.6 */
    for (int shape = 0; shape < 4; shape++)
        for (int stable = 0; stable < 2; stable++) {
            for (int i = 0; i < N; i++) v[i] = shape == 0 ? 7 : shape == 1 ? i : shape == 2 ? N - i : i % 3;
            atomic_store(&cmp_calls, 0);
            ASSERT_OK(stable ? weft_parallel_stable_sort(ex, v, N, sizeof *v, cmp_counted, NULL, NULL)
                             : weft_parallel_sort(ex, v, N, sizeof *v, cmp_counted, NULL, NULL));
            for (int i = 1; i < N; i++) ASSERT_LE(v[i - 1], v[i]);
            ASSERT_LT((double)atomic_load(&cmp_calls), nlogn);
        }
    free(v);
    weft_executor_destroy(ex);
}

/* ---- pipelines: 1 and 4096 lines, 1 and 256 stages --------------------------------- */

struct pipe_run { long tokens; size_t lines; atomic_long calls; atomic_int bad; _Atomic uint64_t next[256]; };
static int pipe_stage(weft_pipeflow *pf, void *arg) {
    struct pipe_run *r = arg;
    size_t s = weft_pipeflow_stage(pf);
    uint64_t t = weft_pipeflow_token(pf);
    if (s == 0 && t == (uint64_t)r->tokens) return weft_pipeflow_stop(pf), 0;
    if (weft_pipeflow_line(pf) != t % r->lines) atomic_store(&r->bad, 1);
    if (s % 2 == 0 && atomic_exchange(&r->next[s], t + 1) != t) atomic_store(&r->bad, 2); /* serial: in order */
    atomic_fetch_add(&r->calls, 1);
    return 0;
}

TEST(pipelines_of_one_and_4096_lines_and_one_and_256_stages_run_every_token_through_every_stage) {
    weft_executor *ex = small_executor(2);
    const size_t lines[] = { 1, 4096 }, stages[] = { 1, 256 };
    static weft_stage st[256];
    for (size_t l = 0; l < 2; l++)
        for (size_t s = 0; s < 2; s++) {
            static struct pipe_run r;
            memset(&r, 0, sizeof r);
            r.tokens = stages[s] == 1 ? 20000 : 2000;
            r.lines = lines[l];
            for (size_t i = 0; i < stages[s]; i++)
                st[i] = (weft_stage){ i % 2 ? WEFT_STAGE_PARALLEL : WEFT_STAGE_SERIAL, pipe_stage, &r, NULL };
            weft_status err;
            weft_pipeline *p = weft_pipeline_create(lines[l], st, stages[s], &err);
            ASSERT_NOT_NULL(p);
            weft_taskflow *tf = weft_taskflow_create("pipe", NULL);
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(atomic_load(&r.bad), 0);
            ASSERT_EQ(atomic_load(&r.calls), r.tokens * (long)stages[s]);
            ASSERT_EQ(weft_pipeline_num_tokens(p), (uint64_t)r.tokens);
            ASSERT_OK(weft_taskflow_destroy(tf));
            weft_pipeline_destroy(p);
        }
    weft_status err;
    ASSERT_NULL(weft_pipeline_create(65537, st, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    weft_executor_destroy(ex);
}

/* ---- cancellation: many callbacks, deep token trees, far deadlines ---------------- */

static atomic_long cancel_calls;
static void on_cancel(void *arg, const char *reason) {
    (void)arg;
    (void)reason;
    atomic_fetch_add(&cancel_calls, 1);
}

enum { NCB = 100000 };
static void *cancel_body(void *p) {
    (void)p;
    weft_status err;
    /* 10^5 callbacks on one token, half with handles, a quarter removed */
    weft_cancel_token *t = weft_cancel_token_create(NULL, &err);
    ASSERT_NOT_NULL(t);
    weft_cancel_callback **h = calloc(NCB, sizeof *h);
    ASSERT_NOT_NULL(h);
    for (long i = 0; i < NCB; i++) ASSERT_OK(weft_cancel_token_on_cancel(t, on_cancel, NULL, i % 2 ? &h[i] : NULL));
    for (long i = 1; i < NCB; i += 4) ASSERT_TRUE(weft_cancel_callback_remove(h[i]));
    atomic_store(&cancel_calls, 0);
    ASSERT_OK(weft_cancel_token_cancel(t));
    ASSERT_EQ(atomic_load(&cancel_calls), NCB - NCB / 4);
    for (long i = 3; i < NCB; i += 4) ASSERT_FALSE(weft_cancel_callback_remove(h[i]));
    free(h);
    weft_cancel_token_destroy(t);
    /* a chain of 10^5 child tokens: cancelling the root reaches the leaf; the
     * chain is then held by the leaf alone and freed from it */
    weft_cancel_token **c = malloc(sizeof *c * NCB);
    ASSERT_NOT_NULL(c);
    ASSERT_NOT_NULL(c[0] = weft_cancel_token_create(NULL, &err));
    for (long i = 1; i < NCB; i++) {
        ASSERT_NOT_NULL(c[i] = weft_cancel_token_create(c[i - 1], &err));
        ASSERT_OK(weft_cancel_token_on_cancel(c[i], on_cancel, NULL, NULL));
    }
    atomic_store(&cancel_calls, 0);
    ASSERT_OK(weft_cancel_token_cancel_with(c[0], "root"));
    ASSERT_EQ(atomic_load(&cancel_calls), NCB - 1);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(c[NCB - 1]));
    ASSERT_STREQ(weft_cancel_token_reason(c[NCB - 1]), "root");
    for (long i = 0; i < NCB - 1; i++) weft_cancel_token_destroy(c[i]);
    weft_cancel_token_destroy(c[NCB - 1]);
    free(c);
    return NULL;
}

TEST(a_token_with_100000_callbacks_and_a_chain_of_100000_child_tokens_cancel_and_free_on_a_small_stack) {
    on_small_stack(cancel_body, NULL, SMALL_STACK);
}

TEST(deadlines_at_the_ends_of_the_clock_fire_at_once_or_never) {
    weft_status err;
    /* timeouts whose sum with now would wrap: never (or not for centuries) */
    const uint64_t far[] = { UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 2, (uint64_t)INT64_MAX + 5 };
    for (size_t i = 0; i < sizeof far / sizeof *far; i++) {
        weft_cancel_token *t = weft_cancel_token_create(NULL, &err);
        ASSERT_OK(weft_cancel_after(t, far[i]));
        ASSERT_OK(weft_cancel_at(t, weft_cancel_now_ns() + 1000000000ull * 3600)); /* replaced by an hour */
        ASSERT_OK(weft_cancel_after(t, far[i]));
        sleep_us(2000);
        ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
        weft_cancel_token_destroy(t);
    }
    const uint64_t past[] = { 0, 1, weft_cancel_now_ns() - 1 };
    for (size_t i = 0; i < sizeof past / sizeof *past; i++) {
        weft_cancel_token *t = weft_cancel_token_create(NULL, &err);
        ASSERT_OK(weft_cancel_at(t, past[i]));
        for (int k = 0; k < 2000 && !weft_cancel_token_is_cancelled(t); k++) sleep_us(500);
        ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
        ASSERT_STREQ(weft_cancel_token_reason(t), "deadline exceeded");
        weft_cancel_token_destroy(t);
    }
    weft_cancel_token *t = weft_cancel_token_create(NULL, &err);
    ASSERT_OK(weft_cancel_at(t, UINT64_MAX));
    ASSERT_FALSE(weft_cancel_disarm(t)); /* the end of the clock is no deadline */
    weft_deadline d;
    ASSERT_OK(weft_deadline_begin(&d, t, UINT64_MAX - 1));
    ASSERT_OK(weft_deadline_end(&d));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    weft_cancel_token_destroy(t);
}

/* ---- many workers on few cores ------------------------------------------------------ */

static int fib_task(weft_ctx *ctx, void *p) {
    long *n = p;
    if (*n < 2) return 0;
    long a = *n - 1, b = *n - 2;
    ASSERT_OK(weft_spawn(ctx, fib_task, &a));
    fib_task(ctx, &b);
    int r = weft_sync(ctx);
    *n = a + b;
    return r;
}
static int fib_leaf_fix(long n) { return n < 2 ? (int)n : fib_leaf_fix(n - 1) + fib_leaf_fix(n - 2); }

TEST(executors_of_64_and_256_workers_create_run_every_kind_of_work_and_destroy) {
    const unsigned counts[] = { 64, 256 };
    for (size_t k = 0; k < 2; k++) {
        weft_status err;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = counts[k], .stack_size = SMALL_STACK }, &err);
        ASSERT_NOT_NULL(ex);
        ASSERT_EQ(weft_executor_workers(ex), counts[k]);
        weft_taskflow *tf = weft_taskflow_create("wide", NULL);
        weft_task a = weft_emplace(tf, tick, NULL), z = weft_emplace(tf, tick, NULL);
        for (int i = 0; i < 2000; i++) {
            weft_task m = weft_emplace(tf, tick, NULL);
            ASSERT_OK(weft_precede(a, m));
            ASSERT_OK(weft_precede(m, z));
        }
        atomic_store(&ticks, 0);
        for (int r = 0; r < 5; r++) ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&ticks), 5 * 2002);
        atomic_store(&idx_calls, 0);
        ASSERT_OK(weft_parallel_for(ex, 0, 100000, 1, count_index, NULL, NULL));
        ASSERT_EQ(atomic_load(&idx_calls), 100000);
        long n = 20;
        ASSERT_EQ(weft_run_root(ex, fib_task, &n), 0);
        ASSERT_EQ(n, fib_leaf_fix(20));
        atomic_store(&ticks, 0);
        for (int i = 0; i < 5000; i++) ASSERT_OK(weft_silent_async(ex, tick, NULL));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&ticks), 5000);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- long names ------------------------------------------------------------------- */

static int fail_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 42;
}

/* Whether s is valid UTF-8 (no partial sequence at its end). */
static bool valid_utf8(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int more = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (more < 0) return false;
        p++;
        for (int i = 0; i < more; i++, p++)
            if ((*p & 0xC0) != 0x80) return false;
    }
    return true;
}

/* weft_run_info.failed_task keeps 127 bytes of a long name: the cut fell
 * inside a multi-byte character, so a program printing the name (into JSON,
 * a log, a terminal) got invalid UTF-8.  It backs off to a character
 * boundary, as cancellation reasons do (cancel.h). */
TEST(a_failed_task_name_longer_than_the_report_is_cut_at_a_utf8_character_boundary) {
    weft_executor *ex = small_executor(1);
    for (size_t pad = 120; pad < 130; pad++) {
        char name[256];
        memset(name, 'a', pad);
        strcpy(name + pad, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 tail"); /* e-acute, euro, an emoji */
        weft_taskflow *tf = weft_taskflow_create("names", NULL);
        weft_task t = weft_emplace(tf, fail_task, NULL);
        ASSERT_OK(weft_task_set_name(t, name));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, 42);
        ASSERT_TRUE(valid_utf8(info.failed_task));
        ASSERT_GE(strlen(info.failed_task), 124); /* cut at most a character short */
        ASSERT_LE(strlen(info.failed_task), 127);
        ASSERT_EQ(strncmp(info.failed_task, name, strlen(info.failed_task)), 0);
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
}

/* ---- a state dump of a big backlog ---------------------------------------------- */

static atomic_int held_go, held_in;
static int held(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&held_in, 1);
    while (!atomic_load(&held_go)) sleep_us(100);
    return 0;
}

/* 10^5 silent async tasks queued from main wait in main's submitter slot (a
 * queue of its own, weft/async.h) while both workers are held: the dump,
 * meant for a stuck program, showed every deque at 0 and the injector empty,
 * as if nothing were queued.  It shows the submitter slots' queues too. */
TEST(a_state_dump_shows_tasks_queued_in_submitter_slots) {
    weft_executor *ex = small_executor(2);
    atomic_store(&held_in, 0);
    ASSERT_OK(weft_silent_async(ex, held, NULL));
    ASSERT_OK(weft_silent_async(ex, held, NULL));
    /* Both workers inside `held` before the backlog is queued.  A 20 ms sleep
     * stood for this wait: under TSan on a loaded machine a worker was not
     * in yet and ran part of the backlog (4 of 20 runs: 29154 queued). */
    ASSERT_TRUE(wait_flag(&held_in, 2, 10));
    enum { BACKLOG = 100000 };
    atomic_store(&ticks, 0);
    for (long i = 0; i < BACKLOG; i++) ASSERT_OK(weft_silent_async(ex, tick, NULL));
    char path[] = "/tmp/weft_scale_dump_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_OK(weft_executor_dump_fd(ex, fd));
    atomic_store(&held_go, 1);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ticks), BACKLOG);
    static char text[8192];
    ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
    ssize_t len = read(fd, text, sizeof text - 1);
    ASSERT_GT(len, 0);
    text[len] = 0;
    close(fd);
    unlink(path);
    const char *line = strstr(text, "submitter slot");
    if (!line) TEST_FAIL_("no submitter slot in the dump:\n%s", text);
    long queued = 0;
    for (const char *p = line; (p = strstr(p, "submitter slot")) != NULL; p++) {
        const char *q = strstr(p, "queue ");
        if (q) queued += atol(q + 6);
    }
    ASSERT_GE(queued, BACKLOG - 2); /* a worker may have taken one batch's first */
    weft_executor_destroy(ex);
}

/* weft_last_error_message keeps 255 bytes: a message naming a long non-ASCII
 * task (a cycle through it) was cut inside a character, leaving invalid UTF-8
 * at its end for the program to print or log.  The cut backs off to a
 * character boundary. */
TEST(an_error_message_naming_a_long_task_is_cut_at_a_utf8_character_boundary) {
    for (size_t pad = 0; pad < 4; pad++) {
        char name[1024];
        memset(name, 'a', pad);
        size_t n = pad;
        while (n + 4 < 600) { /* e-acute, euro, an emoji, over and over */
            memcpy(name + n, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9);
            n += 9;
        }
        name[n] = 0;
        weft_taskflow *tf = weft_taskflow_create("cycle", NULL);
        weft_task a = weft_emplace(tf, tick, NULL), b = weft_emplace(tf, tick, NULL);
        ASSERT_OK(weft_task_set_name(a, name));
        ASSERT_OK(weft_task_set_name(b, name));
        ASSERT_OK(weft_precede(a, b));
        ASSERT_OK(weft_precede(b, a));
        ASSERT_STATUS(weft_taskflow_validate(tf, NULL), WEFT_ECYCLE);
        const char *msg = weft_last_error_message();
        ASSERT_GE(strlen(msg), 200); /* the name is in it, cut */
        ASSERT_TRUE(valid_utf8(msg));
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
}

static atomic_int dump_in_task, dump_done;
static int wait_for_dump(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_store(&dump_in_task, 1);
    while (!atomic_load(&dump_done)) sleep_us(100);
    return 0;
}

/* The dump's task line cuts a long name with "..." after 92 bytes: inside a
 * multi-byte character of a UTF-8 name, which left invalid UTF-8 in the
 * dump.  The cut lands on a character boundary. */
TEST(a_state_dump_cuts_a_long_utf8_task_name_at_a_character_boundary) {
    for (size_t pad = 0; pad < 4; pad++) {
        weft_status err;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, &err);
        ASSERT_NOT_NULL(ex);
        char name[512];
        memset(name, 'a', pad);
        size_t n = pad;
        while (n + 4 < 300) {
            memcpy(name + n, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9);
            n += 9;
        }
        name[n] = 0;
        weft_taskflow *tf = weft_taskflow_create("dump", NULL);
        ASSERT_OK(weft_task_set_name(weft_emplace(tf, wait_for_dump, NULL), name));
        atomic_store(&dump_in_task, 0);
        atomic_store(&dump_done, 0);
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_TRUE(wait_flag(&dump_in_task, 1, 10.0));
        char path[] = "/tmp/weft_scale_dump_XXXXXX";
        int fd = mkstemp(path);
        ASSERT_GE(fd, 0);
        ASSERT_OK(weft_executor_dump_fd(ex, fd));
        atomic_store(&dump_done, 1);
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        static char text[8192];
        ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
        ssize_t len = read(fd, text, sizeof text - 1);
        ASSERT_GT(len, 0);
        text[len] = 0;
        close(fd);
        unlink(path);
        ASSERT_TRUE(strstr(text, "...'") != NULL); /* the name was cut */
        ASSERT_TRUE(valid_utf8(text));
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- counts no array holds, passed to the builders ---------------------------- */

#include <sys/mman.h>

/* A page of `elem`-sized copies of *fill, followed by a page that faults: a
 * call that reads past the page crashes instead of finding garbage. */
static void *guarded_page(const void *fill, size_t elem, size_t *count) {
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *p = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(p != MAP_FAILED);
    ASSERT_EQ(mprotect(p + pg, (size_t)pg, PROT_NONE), 0);
    *count = (size_t)pg / elem;
    for (size_t i = 0; i < *count; i++) memcpy(p + i * elem, fill, elem);
    return p;
}

/* weft_precede_many, weft_succeed_many, weft_linearize, weft_dependent_async
 * and weft_async_acquire checked each element of their array before adding
 * anything (all or nothing), so a count no array holds (SIZE_MAX / 8 + 1, a
 * negative count cast to size_t) had them read past the caller's array until
 * they met an invalid entry or faulted; weft_async_acquire's set, of
 * sizeof + n * 8 bytes, wrapped to a small block first, and a dependent async
 * task's 32-bit join counter wrapped at 2^32 - 1 dependencies.  Each refuses
 * such a count with WEFT_EINVAL, reading nothing. */
TEST(builders_refuse_a_count_no_array_holds_before_reading_the_array) {
    weft_executor *ex = small_executor(2);
    weft_taskflow *tf = weft_taskflow_create("counts", NULL);
    weft_task a = weft_emplace(tf, tick, NULL), b = weft_emplace(tf, tick, NULL);
    size_t cnt;
    weft_task *tasks = guarded_page(&b, sizeof b, &cnt);
    const size_t huge = SIZE_MAX / 8 + 1;
    ASSERT_STATUS(weft_precede_many(a, tasks, huge), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed_many(a, tasks, huge), WEFT_EINVAL);
    ASSERT_STATUS(weft_linearize(tasks, huge), WEFT_EINVAL);
    ASSERT_EQ(weft_task_num_successors(a), 0);
    ASSERT_EQ(weft_task_num_dependents(a), 0);
    ASSERT_OK(weft_precede_many(a, tasks, cnt)); /* the page itself is fine */
    ASSERT_EQ(weft_task_num_successors(a), cnt);
    munmap(tasks, 2 * (size_t)sysconf(_SC_PAGESIZE));
    weft_future *dep;
    ASSERT_OK(weft_async(ex, tick, NULL, &dep));
    weft_future **deps = guarded_page(&dep, sizeof dep, &cnt);
    weft_future *f = NULL;
    ASSERT_STATUS(weft_dependent_async(ex, tick, NULL, deps, huge, &f), WEFT_EINVAL);
    ASSERT_NULL(f);
    ASSERT_STATUS(weft_dependent_async(ex, tick, NULL, deps, (size_t)UINT32_MAX, &f), WEFT_EINVAL);
    ASSERT_OK(weft_dependent_async(ex, tick, NULL, deps, cnt, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    munmap(deps, 2 * (size_t)sysconf(_SC_PAGESIZE));
    weft_status err;
    weft_semaphore *s = weft_semaphore_create(1, &err);
    ASSERT_NOT_NULL(s);
    weft_semaphore **sems = guarded_page(&s, sizeof s, &cnt);
    ASSERT_STATUS(weft_async_acquire(ex, tick, NULL, sems, huge, &f), WEFT_EINVAL);
    ASSERT_STATUS(weft_async_acquire(ex, tick, NULL, sems, SIZE_MAX, &f), WEFT_EINVAL);
    ASSERT_OK(weft_async_acquire(ex, tick, NULL, sems, cnt, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    munmap(sems, 2 * (size_t)sysconf(_SC_PAGESIZE));
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_future_destroy(dep);
    ASSERT_OK(weft_semaphore_destroy(s));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
