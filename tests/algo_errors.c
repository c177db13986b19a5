/* Bad arguments give WEFT_EINVAL and touch nothing; a failed allocation gives
 * WEFT_ENOMEM and changes nothing; the algorithms run as taskflow tasks whose
 * data is filled in after the graph is built. */
#include "algo_test.h"

static void nop_index(size_t i, void *arg) { (void)i, (void)arg; }
static void nop_range(size_t lo, size_t hi, void *arg) { (void)lo, (void)hi, (void)arg; }
static void nop_elem(void *e, void *arg) { (void)e, (void)arg; }
static void nop_unary(const void *in, void *out, void *arg) { (void)in, (void)out, (void)arg; }
static void nop_binary(const void *a, const void *b, void *o, void *arg) { (void)a, (void)b, (void)o, (void)arg; }
static void nop_rr(size_t lo, size_t hi, void *acc, void *arg) { (void)lo, (void)hi, (void)acc, (void)arg; }
static void nop_sr(size_t lo, size_t hi, void *acc, bool h, void *arg) { (void)lo, (void)hi, (void)acc, (void)h, (void)arg; }
static bool nop_pred(const void *e, void *arg) { (void)e, (void)arg; return false; }

TEST(bad_arguments_give_einval) {
    weft_executor *ex = make_executor(2);
    uint64_t v[4] = { 4, 3, 2, 1 }, r = 0;
    size_t idx;
    weft_algo_config bad = { .partitioner = (weft_partitioner)7, .chunk = 0, .max_tasks = 0 };
    /* A NULL executor is the default one (default_executor_tests). */
    ASSERT_STATUS(weft_parallel_for(ex, 0, 4, 0, nop_index, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_for(ex, 0, 4, 1, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_for(ex, 0, 4, 1, nop_index, NULL, &bad), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_for_range(ex, 0, 4, 1, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_parallel_for_range(ex, 0, 4, 1, nop_range, NULL, NULL));
    ASSERT_STATUS(weft_parallel_for_each(ex, NULL, 4, 8, nop_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_for_each(ex, v, 4, 0, nop_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform(ex, v, 8, NULL, 8, 4, nop_unary, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform(ex, v, 8, v, 4, 4, nop_unary, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform2(ex, v, 8, v, 0, v, 8, 4, nop_binary, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 4, 8, NULL, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 4, 0, &r, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 4, 8, &r, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, v, 4, 8, &r, add_u64, NULL, &bad), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform_reduce(ex, v, 4, 8, 8, &r, NULL, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce_range(ex, 4, 0, &r, nop_rr, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_min_element(ex, v, 4, 8, NULL, NULL, &idx, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_max_element(ex, v, 4, 8, cmp_u64, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_find_if(ex, v, 4, 0, nop_pred, NULL, &idx, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_inclusive_scan(ex, v, NULL, 4, 8, NULL, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_exclusive_scan(ex, v, v, 4, 8, NULL, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_scan_range(ex, 4, 8, NULL, nop_rr, NULL, add_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_parallel_scan_range(ex, 4, 8, NULL, nop_rr, nop_sr, add_u64, NULL, NULL));
    ASSERT_STATUS(weft_parallel_sort(ex, v, 4, 8, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_sort(ex, NULL, 4, 8, cmp_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_stable_sort(ex, v, 4, 0, cmp_u64, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_sort_ops(ex, v, 4, 8, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_sort(ex, v, 4, 8, cmp_u64, NULL, &bad), WEFT_EINVAL);
    ASSERT_STATUS(weft_u64_sort(ex, NULL, 4, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_u64_sum_reduce(ex, NULL, 4, &r, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_u64_sum_inclusive_scan(ex, v, NULL, 4, NULL, NULL), WEFT_EINVAL);
    ASSERT_EQ(v[0], 4); /* nothing was touched */
    ASSERT_EQ(r, 0);
    weft_executor_destroy(ex);
}

/* ---- out of memory: an allocator that fails while `failing` is set ---------- */

static atomic_int failing;
static void *fail_alloc(void *ctx, size_t size) {
    (void)ctx;
    return atomic_load(&failing) ? NULL : malloc(size);
}
static void *fail_realloc(void *ctx, void *p, size_t old, size_t size) {
    (void)ctx, (void)old;
    return atomic_load(&failing) ? NULL : realloc(p, size);
}
static void fail_free(void *ctx, void *p, size_t size) { (void)ctx, (void)size, free(p); }

TEST(out_of_memory_gives_enomem_and_changes_nothing) {
    weft_set_allocator(&(weft_allocator){ fail_alloc, fail_realloc, fail_free, NULL });
    weft_executor *ex = make_executor(2);
    size_t n = 100003;
    uint64_t *v = random_u64(n, 1), *copy = xmalloc(n * 8), *out = xmalloc(n * 8), r = 0;
    memcpy(copy, v, n * 8);
    atomic_store(&failing, 1);
    ASSERT_STATUS(weft_parallel_sort(ex, v, n, 8, cmp_u64, NULL, NULL), WEFT_ENOMEM);
    ASSERT_STATUS(weft_u64_stable_sort(ex, v, n, NULL), WEFT_ENOMEM);
    ASSERT_STATUS(weft_parallel_inclusive_scan(ex, v, out, n, 8, NULL, add_u64, NULL, NULL), WEFT_ENOMEM);
    weft_algo_config many = { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1, .max_tasks = 0 };
    ASSERT_STATUS(weft_parallel_reduce(ex, v, n, 8, &r, add_u64, NULL, &many), WEFT_ENOMEM);
    weft_algo_config guided = { .partitioner = WEFT_PARTITION_GUIDED, .chunk = 0, .max_tasks = 0 };
    ASSERT_STATUS(weft_parallel_reduce(ex, v, n, 8, &r, add_u64, NULL, &guided), WEFT_ENOMEM);
    ASSERT_EQ(r, 0);
    ASSERT_TRUE(memcmp(v, copy, n * 8) == 0);
    atomic_store(&failing, 0);
    ASSERT_OK(weft_parallel_sort(ex, v, n, 8, cmp_u64, NULL, NULL));
    for (size_t i = 1; i < n; i++) ASSERT_TRUE(v[i - 1] <= v[i]);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    free(v), free(copy), free(out);
}

/* Fails the small allocations only (while `failing_small` is set): the sort's
 * buffer is granted, the job list of its block phase is not, so weft__par_tasks
 * runs 16 jobs for the 20 blocks of 20 workers.  Each job must then sort
 * several blocks: a block no job sorted was merged as if sorted, and the call
 * returned WEFT_OK with an unsorted array. */
static atomic_int failing_small;
static void *fail_small_alloc(void *ctx, size_t size) {
    (void)ctx;
    return atomic_load(&failing_small) && size < 100000 ? NULL : malloc(size);
}

TEST(a_sort_given_fewer_jobs_than_blocks_still_sorts_every_block) {
    weft_set_allocator(&(weft_allocator){ fail_small_alloc, NULL, fail_free, NULL });
    weft_executor *ex = make_executor(20); /* > 16 (par.c's STACK_JOBS), any CPU count */
    size_t n = 50021;                      /* n * 8 bytes: past the small ones */
    uint64_t *v = random_u64(n, 36), *w = xmalloc(n * 8);
    memcpy(w, v, n * 8);
    atomic_store(&failing_small, 1);
    weft_status st = weft_parallel_sort(ex, v, n, 8, cmp_u64, NULL, NULL);
    weft_status typed = weft_u64_sort(ex, w, n, NULL);
    atomic_store(&failing_small, 0);
    ASSERT_OK(st);
    ASSERT_OK(typed);
    for (size_t i = 1; i < n; i++) {
        ASSERT_TRUE(v[i - 1] <= v[i]);
        ASSERT_TRUE(w[i - 1] <= w[i]);
    }
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    free(v), free(w);
}

/* The typed calls (static inline in algo_typed.h) refuse a NULL array with a
 * message too: they returned WEFT_EINVAL and left weft_last_error_message as
 * it was, against docs/errors.md R3 ("every public weft call that fails"). */
TEST(typed_calls_refusing_a_null_array_say_why) {
    uint64_t v[4] = { 4, 3, 2, 1 }, r = 0;
    ASSERT_STATUS(weft_parallel_for(NULL, 0, 4, 0, nop_index, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_u64_sum_reduce(NULL, NULL, 4, &r, NULL), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "in is NULL") != NULL);
    ASSERT_STATUS(weft_parallel_for(NULL, 0, 4, 0, nop_index, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_u64_sum_inclusive_scan(NULL, v, NULL, 4, NULL, NULL), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "out is NULL") != NULL);
    ASSERT_STATUS(weft_parallel_for(NULL, 0, 4, 0, nop_index, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_double_sum_exclusive_scan(NULL, NULL, NULL, 4, 0.0, NULL), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "out is NULL") != NULL);
    ASSERT_EQ(v[0], 4);
    ASSERT_EQ(r, 0);
}

/* ---- graph tasks --------------------------------------------------------------- */

typedef struct pipeline_data {
    uint64_t *v, *prefix, sum;
    size_t n;
    weft_for_desc fill;
    weft_sort_desc sort;
    weft_scan_desc scan;
    weft_reduce_desc reduce;
} pipeline_data;

static void fill_range(size_t lo, size_t hi, void *arg) {
    pipeline_data *d = arg;
    for (size_t i = lo; i < hi; i++) d->v[i] = (i * 7919) % d->n;
}

TEST(algorithm_tasks_read_their_descriptors_when_the_graph_runs) {
    weft_executor *ex = make_executor(3);
    weft_taskflow *tf = make_taskflow("algo");
    pipeline_data d = { 0 };
    /* Built before the data exists: the descriptors are filled in below. */
    weft_task fill = weft_emplace_for(tf, &d.fill), sort = weft_emplace_sort(tf, &d.sort);
    weft_task scan = weft_emplace_scan(tf, &d.scan), reduce = weft_emplace_reduce(tf, &d.reduce);
    ASSERT_FALSE(weft_task_is_null(fill) || weft_task_is_null(sort) || weft_task_is_null(scan) ||
                 weft_task_is_null(reduce));
    ASSERT_OK(weft_precede(fill, sort));
    ASSERT_OK(weft_precede(sort, scan));
    ASSERT_OK(weft_precede(sort, reduce));
    for (size_t round = 0; round < 3; round++) {
        d.n = 10007 + round * 50000; /* a new size every run */
        d.v = xmalloc(d.n * 8), d.prefix = xmalloc(d.n * 8), d.sum = 0;
        d.fill = (weft_for_desc){ 0, d.n, 1, fill_range, &d, { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 0, .max_tasks = 0 } };
        d.sort = (weft_sort_desc){ d.v, d.n, 8, cmp_u64, NULL, round == 1, { 0 } };
        d.scan = (weft_scan_desc){ d.v, d.prefix, d.n, 8, NULL, add_u64, NULL, false, { 0 } };
        d.reduce = (weft_reduce_desc){ d.v, d.n, 8, &d.sum, add_u64, NULL, { 0 } };
        ASSERT_OK(weft_run_and_wait(ex, tf));
        uint64_t want = 0;
        for (size_t i = 0; i < d.n; i++) {
            ASSERT_EQ(d.v[i], i); /* (i * 7919) % n is a permutation for prime-ish n; sorted */
            want += i;
            ASSERT_EQ(d.prefix[i], want);
        }
        ASSERT_EQ(d.sum, want);
        free(d.v), free(d.prefix);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(an_algorithm_task_with_bad_arguments_fails_its_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("bad");
    weft_sort_desc bad = { NULL, 10, 8, cmp_u64, NULL, false, { 0 } };
    ASSERT_TRUE(weft_task_is_null(weft_emplace_sort(tf, NULL)));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_sort(tf, &bad)));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, WEFT_EINVAL);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
