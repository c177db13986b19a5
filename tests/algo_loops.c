/* Loops: every iteration exactly once, for every partitioner, size and worker
 * count; transforms equal the serial loop; nested calls from tasks finish. */
#include "algo_test.h"

#include <pthread.h>

static void mark_index(size_t i, void *arg) {
    atomic_fetch_add_explicit(&((atomic_uchar *)arg)[i], 1, memory_order_relaxed);
}

static void check_marks(atomic_uchar *marks, size_t n, size_t first, size_t last, size_t step) {
    for (size_t i = 0; i < n; i++) {
        unsigned want = (i >= first && i < last && (i - first) % step == 0) ? 1 : 0;
        unsigned got = atomic_load_explicit(&marks[i], memory_order_relaxed);
        if (got != want) TEST_FAIL_("index %zu of (%zu, %zu, step %zu) ran %u times, want %u", i, first, last, step, got, want);
    }
}

TEST(for_visits_every_index_once_for_every_partitioner_size_and_worker_count) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++) {
            size_t n = SMALL_SIZES[s];
            atomic_uchar *marks = xmalloc(n + 1);
            for (size_t c = 0; c < NCONFIGS; c++) {
                memset(marks, 0, n + 1);
                ASSERT_OK(weft_parallel_for(ex, 0, n, 1, mark_index, marks, &CONFIGS[c]));
                check_marks(marks, n, 0, n, 1);
            }
            free(marks);
        }
        weft_executor_destroy(ex);
    }
}

TEST(for_with_a_step_visits_exactly_the_strided_indices) {
    weft_executor *ex = make_executor(3);
    const size_t cases[][3] = { { 0, 100, 3 }, { 5, 101, 7 }, { 10, 10, 1 }, { 11, 10, 2 }, { 3, 4, 100 }, { 1, 8192, 2 } };
    atomic_uchar marks[8200];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (size_t c = 0; c < NCONFIGS; c++) {
            memset(marks, 0, sizeof marks);
            ASSERT_OK(weft_parallel_for(ex, cases[k][0], cases[k][1], cases[k][2], mark_index, marks, &CONFIGS[c]));
            check_marks(marks, sizeof marks, cases[k][0], cases[k][1], cases[k][2]);
        }
    }
    weft_executor_destroy(ex);
}

/* Iterations near SIZE_MAX: the last one plus step wraps past SIZE_MAX, so
 * a loop `i < hi; i += step` would go on from a small index.  weft_parallel_for
 * calls exactly the iterations, and a range body written as the header says
 * (stop once hi - i <= step) does too. */
typedef struct top_range {
    size_t first, step;
    _Atomic size_t calls, bad;
} top_range;

static void top_index(size_t i, void *arg) {
    top_range *t = arg;
    atomic_fetch_add_explicit(&t->calls, 1, memory_order_relaxed);
    if (i < t->first || (i - t->first) % t->step) atomic_fetch_add_explicit(&t->bad, 1, memory_order_relaxed);
}

static void top_body(size_t lo, size_t hi, void *arg) {
    top_range *t = arg;
    for (size_t i = lo;; i += t->step) {
        top_index(i, arg);
        if (hi - i <= t->step) break;
    }
}

TEST(loops_ending_at_size_max_with_a_step_call_each_iteration_once) {
    weft_executor *ex = make_executor(3);
    const size_t cases[][3] = { { SIZE_MAX - 10, SIZE_MAX, 7 }, { 0, SIZE_MAX, SIZE_MAX / 2 + 1 },
                                { SIZE_MAX - 1000, SIZE_MAX, 3 }, { SIZE_MAX - 5, SIZE_MAX, SIZE_MAX } };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t first = cases[k][0], last = cases[k][1], step = cases[k][2];
        size_t want = (last - first - 1) / step + 1;
        for (size_t c = 0; c < NCONFIGS; c++) {
            top_range t = { .first = first, .step = step };
            ASSERT_OK(weft_parallel_for(ex, first, last, step, top_index, &t, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&t.calls), want);
            ASSERT_EQ(atomic_load(&t.bad), 0);
            top_range r = { .first = first, .step = step };
            ASSERT_OK(weft_parallel_for_range(ex, first, last, step, top_body, &r, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&r.calls), want);
            ASSERT_EQ(atomic_load(&r.bad), 0);
        }
    }
    weft_executor_destroy(ex);
}

/* Adds up the sub-ranges' lengths; counts a range whose end is before its start. */
typedef struct span_sum {
    _Atomic size_t covered, backwards;
} span_sum;

static void sum_span(size_t lo, size_t hi, void *arg) {
    span_sum *s = arg;
    if (hi < lo) atomic_fetch_add_explicit(&s->backwards, 1, memory_order_relaxed);
    else atomic_fetch_add_explicit(&s->covered, hi - lo, memory_order_relaxed);
}

static void reduce_span(size_t lo, size_t hi, void *acc, void *arg) {
    (void)arg;
    *(size_t *)acc = hi - lo; /* wraps if hi < lo: the total is then wrong */
}

static void add_size(void *acc, const void *x, void *arg) {
    (void)arg;
    *(size_t *)acc += *(const size_t *)x;
}

/* A range of 2^64 - 1 iterations (range bodies that do not visit them) with
 * chunks past half of it: the second chunk's end, start + chunk, wrapped, so
 * its body got hi < lo and the rest of the range was never covered. */
TEST(a_huge_range_with_a_huge_chunk_is_covered_once) {
    weft_executor *ex = make_executor(2);
    const size_t chunks[] = { SIZE_MAX / 2 + 1, SIZE_MAX - 5, SIZE_MAX };
    const weft_partitioner kinds[] = { WEFT_PARTITION_AUTO, WEFT_PARTITION_STATIC, WEFT_PARTITION_DYNAMIC,
                                       WEFT_PARTITION_GUIDED };
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            weft_algo_config cfg = { .partitioner = kinds[k], .chunk = chunks[c] };
            span_sum s = { 0 };
            ASSERT_OK(weft_parallel_for_range(ex, 0, SIZE_MAX, 1, sum_span, &s, &cfg));
            size_t backwards = atomic_load(&s.backwards), covered = atomic_load(&s.covered);
            ASSERT_EQ(backwards, 0);
            ASSERT_TRUE(covered == SIZE_MAX);
            size_t total = 0;
            ASSERT_OK(weft_parallel_reduce_range(ex, SIZE_MAX, sizeof total, &total, reduce_span, add_size,
                                                 NULL, &cfg));
            ASSERT_TRUE(total == SIZE_MAX);
        }
    }
    weft_executor_destroy(ex);
}

static void bump_u64(void *elem, void *arg) {
    (void)arg;
    *(uint64_t *)elem = *(uint64_t *)elem * 3 + 1;
}

TEST(for_each_updates_every_element_once_including_ten_million) {
    weft_executor *ex = make_executor(2);
    size_t big = big_size();
    uint64_t *v = random_u64(big, 1), *ref = random_u64(big, 1);
    for (size_t i = 0; i < big; i++) ref[i] = ref[i] * 3 + 1;
    ASSERT_OK(weft_parallel_for_each(ex, v, big, sizeof *v, bump_u64, NULL, NULL));
    ASSERT_TRUE(memcmp(v, ref, big * sizeof *v) == 0);
    for (size_t c = 0; c < NCONFIGS; c++) {
        if (CONFIGS[c].chunk == 1) continue; /* one element per chunk: slow, covered above */
        ASSERT_OK(weft_parallel_for_each(ex, v, big, sizeof *v, bump_u64, NULL, &CONFIGS[c]));
        for (size_t i = 0; i < big; i++) ref[i] = ref[i] * 3 + 1;
        ASSERT_TRUE(memcmp(v, ref, big * sizeof *v) == 0);
    }
    free(v), free(ref);
    weft_executor_destroy(ex);
}

static void square(const void *in, void *out, void *arg) {
    (void)arg;
    uint64_t x = *(const uint64_t *)in;
    *(uint64_t *)out = x * x;
}

static void mix(const void *a, const void *b, void *out, void *arg) {
    (void)arg;
    *(uint32_t *)out = (uint32_t)(*(const uint64_t *)a ^ (*(const uint64_t *)b >> 7));
}

TEST(transform_unary_binary_and_in_place_equal_the_serial_loop) {
    for (size_t w = 0; w < NWORKERS; w++) {
        weft_executor *ex = make_executor(WORKERS[w]);
        for (size_t s = 0; s < NSMALL; s++) {
            size_t n = SMALL_SIZES[s];
            uint64_t *a = random_u64(n, 7 + n), *b = random_u64(n, 9 + n), *out = xmalloc(n * 8 + 8);
            uint32_t *out2 = xmalloc(n * 4 + 4);
            for (size_t c = 0; c < NCONFIGS; c++) {
                ASSERT_OK(weft_parallel_transform(ex, a, 8, out, 8, n, square, NULL, &CONFIGS[c]));
                ASSERT_OK(weft_parallel_transform2(ex, a, 8, b, 8, out2, 4, n, mix, NULL, &CONFIGS[c]));
                for (size_t i = 0; i < n; i++) {
                    ASSERT_EQ(out[i], a[i] * a[i]);
                    ASSERT_EQ(out2[i], (uint32_t)(a[i] ^ (b[i] >> 7)));
                }
            }
            ASSERT_OK(weft_parallel_transform(ex, b, 8, b, 8, n, square, NULL, NULL)); /* in place */
            uint64_t *b0 = random_u64(n, 9 + n);
            for (size_t i = 0; i < n; i++) ASSERT_EQ(b[i], b0[i] * b0[i]);
            free(a), free(b), free(b0), free(out), free(out2);
        }
        weft_executor_destroy(ex);
    }
}

/* A parallel call from inside a parallel call's body: the inner call waits
 * cooperatively on a worker, so it must finish even with one worker. */
typedef struct nested {
    weft_executor *ex;
    uint64_t sums[64];
    uint64_t *data;
} nested;

static void inner_sum(size_t i, void *arg) {
    nested *n = arg;
    uint64_t s = 0;
    weft_status st = weft_parallel_reduce(n->ex, n->data, 5000, 8, &s, add_u64, NULL, NULL);
    if (st != WEFT_OK) TEST_FAIL_("inner reduce: %s", weft_errname(st));
    n->sums[i] = s;
}

TEST(parallel_calls_nested_inside_parallel_bodies_finish_with_any_worker_count) {
    for (size_t w = 0; w < NWORKERS; w++) {
        nested n = { .ex = make_executor(WORKERS[w]), .data = random_u64(5000, 3) };
        uint64_t want = 0;
        for (size_t i = 0; i < 5000; i++) want += n.data[i];
        weft_algo_config one_each = { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1, .max_tasks = 0 };
        ASSERT_OK(weft_parallel_for(n.ex, 0, 64, 1, inner_sum, &n, &one_each));
        for (size_t i = 0; i < 64; i++) ASSERT_EQ(n.sums[i], want);
        free(n.data);
        weft_executor_destroy(n.ex);
    }
}

/* Many threads that are not workers calling at once on one executor. */
typedef struct caller {
    weft_executor *ex;
    uint64_t *data;
    size_t n;
    uint64_t want;
    atomic_int bad;
} caller;

static void *call_many(void *arg) {
    caller *c = arg;
    for (int r = 0; r < 50; r++) {
        uint64_t s = 0;
        if (weft_parallel_reduce(c->ex, c->data, c->n, 8, &s, add_u64, NULL, NULL) != WEFT_OK || s != c->want)
            atomic_fetch_add(&c->bad, 1);
    }
    return NULL;
}


TEST(concurrent_callers_from_outside_threads_all_get_correct_results) {
    caller c = { .ex = make_executor(2), .n = 100003 };
    c.data = random_u64(c.n, 5);
    for (size_t i = 0; i < c.n; i++) c.want += c.data[i];
    atomic_init(&c.bad, 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_create(&t[i], NULL, call_many, &c), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    ASSERT_EQ(atomic_load(&c.bad), 0);
    free(c.data);
    weft_executor_destroy(c.ex);
}

/* Called from outside, a loop runs its first task's share on the calling thread
 * (one wake-up fewer, n threads working), unless the workers are bound to CPUs.
 * The static partitioner gives task 0 the chunk at index 0. */
typedef struct first_share {
    weft_executor *ex;
    atomic_int runner; /* worker id of the thread that ran index 0 */
} first_share;

static void note_first(size_t lo, size_t hi, void *arg) {
    first_share *f = arg;
    if (lo == 0) atomic_store(&f->runner, weft_executor_worker_id(f->ex));
}

static int first_runner(weft_affinity affinity) {
    first_share f = { .ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .affinity = affinity }, NULL) };
    if (!f.ex) return -2;
    atomic_init(&f.runner, -3);
    const weft_algo_config cfg = { .partitioner = WEFT_PARTITION_STATIC };
    weft_status st = weft_parallel_for_range(f.ex, 0, 1000, 1, note_first, &f, &cfg);
    weft_executor_destroy(f.ex);
    return st == WEFT_OK ? atomic_load(&f.runner) : -4;
}

TEST(outside_caller_runs_the_first_share_itself_unless_workers_are_bound) {
    ASSERT_EQ(first_runner(WEFT_AFFINITY_NONE), -1);
    int bound = first_runner(WEFT_AFFINITY_CPUS);
    if (bound == -2) SKIP("an executor with workers bound to CPUs cannot be made here");
    ASSERT_TRUE(bound == 0 || bound == 1);
}

/* Many graph tasks running parallel calls at once: each call's jobs are stolen
 * by workers that are themselves waiting inside other calls. */
typedef struct many_arg {
    const uint64_t *data;
    size_t n;
    uint64_t got;
} many_arg;

static int reduce_task(weft_ctx *ctx, void *arg) {
    many_arg *m = arg;
    m->got = 0;
    return weft_u64_sum_reduce(weft_ctx_executor(ctx), m->data, m->n, &m->got, NULL);
}

TEST(stress_many_graph_tasks_each_running_a_parallel_reduce) {
    weft_executor *ex = make_executor(4);
    weft_taskflow *tf = make_taskflow("many");
    enum { TASKS = 48 };
    many_arg args[TASKS];
    uint64_t *data = random_u64(20011, 8), want = 0;
    for (size_t i = 0; i < 20011; i++) want += data[i];
    for (int t = 0; t < TASKS; t++) {
        args[t] = (many_arg){ data, 20011 - (size_t)t * 400, 0 };
        must_emplace(tf, reduce_task, &args[t]);
    }
    uint64_t reps = test_scale(300);
    for (uint64_t r = 0; r < reps; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        for (int t = 0; t < TASKS; t++) {
            uint64_t w = want;
            for (size_t i = args[t].n; i < 20011; i++) w -= data[i];
            ASSERT_EQ(args[t].got, w);
        }
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    free(data);
    weft_executor_destroy(ex);
}

/* Holds a worker until *gate opens (at most 10 s, so that a broken build fails
 * instead of hanging). */
struct hold {
    atomic_int *gate, *held;
};
static int hold_worker(weft_ctx *cx, void *p) {
    (void)cx;
    struct hold *h = p;
    atomic_fetch_add(h->held, 1);
    uint64_t deadline = now_ns() + 10000000000ull;
    while (!atomic_load(h->gate) && now_ns() < deadline) sleep_us(200);
    return 0;
}

/* A loop called from main while every worker is busy: main runs the jobs no
 * worker has started (src/algo/par.c) instead of waiting for a worker to be
 * free; it used to wait here until the workers' tasks ended (10 s). */
TEST(a_loop_called_from_outside_finishes_while_every_worker_is_busy) {
    weft_executor *ex = make_executor(2);
    atomic_int gate = 0, held = 0;
    struct hold h = {&gate, &held};
    for (int i = 0; i < 2; i++) ASSERT_OK(weft_silent_async(ex, hold_worker, &h));
    while (atomic_load(&held) < 2) sleep_us(100);
    size_t n = 100000;
    atomic_uchar *marks = xmalloc(n);
    memset(marks, 0, n);
    uint64_t t0 = now_ns();
    ASSERT_OK(weft_parallel_for(ex, 0, n, 1, mark_index, marks, NULL));
    uint64_t took = now_ns() - t0;
    atomic_store(&gate, 1);
    check_marks(marks, n, 0, n, 1);
    if (took > 5000000000ull) TEST_FAIL_("the loop waited %.1f s for the busy workers", (double)took / 1e9);
    ASSERT_OK(weft_executor_wait_all(ex));
    free(marks);
    weft_executor_destroy(ex);
}
