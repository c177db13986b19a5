/* Empty inputs: a NULL array with length 0 (what an empty C++ vector's data()
 * gives) is a valid empty input to every algorithm: WEFT_OK, nothing called,
 * nothing written, a reduction's result left at its initial value, a search's
 * index 0.  NULL with a length above 0 stays WEFT_EINVAL. */
#include "algo_test.h"

static atomic_int calls;

static void count_index(size_t i, void *arg) { (void)i, (void)arg, atomic_fetch_add(&calls, 1); }
static void count_range(size_t lo, size_t hi, void *arg) { (void)lo, (void)hi, (void)arg, atomic_fetch_add(&calls, 1); }
static void count_elem(void *e, void *arg) { (void)e, (void)arg, atomic_fetch_add(&calls, 1); }
static void count_unary(const void *in, void *out, void *arg) { (void)in, (void)out, (void)arg, atomic_fetch_add(&calls, 1); }
static void count_binary(const void *a, const void *b, void *o, void *arg) {
    (void)a, (void)b, (void)o, (void)arg, atomic_fetch_add(&calls, 1);
}
static void count_rr(size_t lo, size_t hi, void *acc, void *arg) { (void)lo, (void)hi, (void)acc, (void)arg, atomic_fetch_add(&calls, 1); }
static void count_sr(size_t lo, size_t hi, void *acc, bool h, void *arg) {
    (void)lo, (void)hi, (void)acc, (void)h, (void)arg, atomic_fetch_add(&calls, 1);
}
static bool count_pred(const void *e, void *arg) { (void)e, (void)arg, atomic_fetch_add(&calls, 1); return true; }
static void count_combine(void *acc, const void *x, void *arg) { (void)acc, (void)x, (void)arg, atomic_fetch_add(&calls, 1); }
static int count_cmp(const void *a, const void *b, void *arg) { (void)a, (void)b, (void)arg, atomic_fetch_add(&calls, 1); return 0; }

static void generic_calls_accept_null_with_zero(weft_executor *ex) {
    uint64_t r = 42, init = 7;
    size_t idx = 99;
    ASSERT_OK(weft_parallel_for(ex, 5, 5, 1, count_index, NULL, NULL));
    ASSERT_OK(weft_parallel_for_range(ex, 5, 5, 1, count_range, NULL, NULL));
    ASSERT_OK(weft_parallel_for_each(ex, NULL, 0, 8, count_elem, NULL, NULL));
    ASSERT_OK(weft_parallel_transform(ex, NULL, 8, NULL, 8, 0, count_unary, NULL, NULL));
    /* Two empty arrays of different element types (two empty vectors: both data() NULL). */
    ASSERT_OK(weft_parallel_transform(ex, NULL, 4, NULL, 8, 0, count_unary, NULL, NULL));
    ASSERT_OK(weft_parallel_transform2(ex, NULL, 8, NULL, 8, NULL, 8, 0, count_binary, NULL, NULL));
    ASSERT_OK(weft_parallel_reduce(ex, NULL, 0, 8, &r, count_combine, NULL, NULL));
    ASSERT_OK(weft_parallel_transform_reduce(ex, NULL, 0, 8, 8, &r, count_unary, count_combine, NULL, NULL));
    ASSERT_OK(weft_parallel_reduce_range(ex, 0, 8, &r, count_rr, count_combine, NULL, NULL));
    ASSERT_EQ(r, 42); /* the initial value */
    ASSERT_OK(weft_parallel_min_element(ex, NULL, 0, 8, count_cmp, NULL, &idx, NULL));
    ASSERT_EQ(idx, 0);
    idx = 99;
    ASSERT_OK(weft_parallel_max_element(ex, NULL, 0, 8, count_cmp, NULL, &idx, NULL));
    ASSERT_EQ(idx, 0);
    idx = 99;
    ASSERT_OK(weft_parallel_find_if(ex, NULL, 0, 8, count_pred, NULL, &idx, NULL));
    ASSERT_EQ(idx, 0);
    ASSERT_OK(weft_parallel_inclusive_scan(ex, NULL, NULL, 0, 8, NULL, count_combine, NULL, NULL));
    ASSERT_OK(weft_parallel_inclusive_scan(ex, NULL, NULL, 0, 8, &init, count_combine, NULL, NULL));
    ASSERT_OK(weft_parallel_exclusive_scan(ex, NULL, NULL, 0, 8, &init, count_combine, NULL, NULL));
    ASSERT_OK(weft_parallel_scan_range(ex, 0, 8, NULL, count_rr, count_sr, count_combine, NULL, NULL));
    ASSERT_OK(weft_parallel_sort(ex, NULL, 0, 8, count_cmp, NULL, NULL));
    ASSERT_OK(weft_parallel_stable_sort(ex, NULL, 0, 8, count_cmp, NULL, NULL));
    static const weft_sort_ops ops = { weft_u64__sort_block, weft_u64__merge, weft_u64__split };
    ASSERT_OK(weft_parallel_sort_ops(ex, NULL, 0, 8, &ops, NULL, NULL));
    ASSERT_EQ(atomic_load(&calls), 0);
}

static void typed_calls_accept_null_with_zero(weft_executor *ex) {
    double d = 1.5;
    float f = 2.5f;
    int32_t i32 = 3;
    int64_t i64 = 4;
    uint64_t u64 = 5;
    ASSERT_OK(weft_double_sort(ex, NULL, 0, NULL));
    ASSERT_OK(weft_double_stable_sort(ex, NULL, 0, NULL));
    ASSERT_OK(weft_float_sort(ex, NULL, 0, NULL));
    ASSERT_OK(weft_i32_stable_sort(ex, NULL, 0, NULL));
    ASSERT_OK(weft_u64_sort(ex, NULL, 0, NULL));
    ASSERT_OK(weft_double_sum_reduce(ex, NULL, 0, &d, NULL));
    ASSERT_OK(weft_float_sum_reduce(ex, NULL, 0, &f, NULL));
    ASSERT_OK(weft_i32_sum_reduce(ex, NULL, 0, &i32, NULL));
    ASSERT_OK(weft_i64_sum_reduce(ex, NULL, 0, &i64, NULL));
    ASSERT_OK(weft_u64_sum_reduce(ex, NULL, 0, &u64, NULL));
    ASSERT_TRUE(d == 1.5 && f == 2.5f && i32 == 3 && i64 == 4 && u64 == 5);
    ASSERT_OK(weft_u64_sum_inclusive_scan(ex, NULL, NULL, 0, NULL, NULL));
    ASSERT_OK(weft_u64_sum_inclusive_scan(ex, NULL, NULL, 0, &u64, NULL));
    ASSERT_OK(weft_double_sum_exclusive_scan(ex, NULL, NULL, 0, 0.5, NULL));
}

/* NULL with n > 0 is still an error, for each call that takes an array. */
static void null_with_elements_is_einval(weft_executor *ex) {
    uint64_t v[2] = { 2, 1 }, r = 0;
    size_t idx;
    ASSERT_STATUS(weft_parallel_for_each(ex, NULL, 1, 8, count_elem, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform(ex, NULL, 8, v, 8, 1, count_unary, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform2(ex, v, 8, NULL, 8, v, 8, 1, count_binary, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, NULL, 1, 8, &r, count_combine, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_transform_reduce(ex, NULL, 1, 8, 8, &r, count_unary, count_combine, NULL, NULL),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_min_element(ex, NULL, 1, 8, count_cmp, NULL, &idx, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_find_if(ex, NULL, 1, 8, count_pred, NULL, &idx, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_exclusive_scan(ex, v, NULL, 1, 8, &r, count_combine, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_stable_sort(ex, NULL, 1, 8, count_cmp, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_double_sort(ex, NULL, 1, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_u64_sum_exclusive_scan(ex, NULL, v, 1, 0, NULL), WEFT_EINVAL);
    /* The other arguments are still checked on empty input. */
    ASSERT_STATUS(weft_parallel_for_each(ex, NULL, 0, 8, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_reduce(ex, NULL, 0, 8, NULL, count_combine, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_min_element(ex, NULL, 0, 8, count_cmp, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_parallel_sort(ex, NULL, 0, 0, count_cmp, NULL, NULL), WEFT_EINVAL);
    ASSERT_EQ(atomic_load(&calls), 0);
}

TEST(every_algorithm_accepts_null_with_zero_length) {
    weft_executor *ex = make_executor(2);
    generic_calls_accept_null_with_zero(ex);
    typed_calls_accept_null_with_zero(ex);
    null_with_elements_is_einval(ex);
    weft_executor_destroy(ex);
}

/* The graph-task forms: empty descriptors' tasks succeed. */
TEST(algorithm_tasks_accept_null_with_zero_length) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("empty");
    uint64_t r = 42, init = 1;
    weft_for_desc f = { .first = 3, .last = 3, .step = 1, .body = count_range };
    weft_transform_desc t = { .in_size = 4, .out_size = 8, .f = count_unary }; /* sizes differ, both NULL */
    weft_reduce_desc rd = { .size = 8, .result = &r, .op = count_combine };
    weft_scan_desc inc = { .size = 8, .op = count_combine }, exc = { .size = 8, .init = &init, .op = count_combine, .exclusive = true };
    weft_sort_desc so = { .size = 8, .cmp = count_cmp }, st = { .size = 8, .cmp = count_cmp, .stable = true };
    ASSERT_FALSE(weft_task_is_null(weft_emplace_for(tf, &f)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_transform(tf, &t)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_reduce(tf, &rd)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_scan(tf, &inc)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_scan(tf, &exc)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_sort(tf, &so)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_sort(tf, &st)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(r, 42);
    ASSERT_EQ(atomic_load(&calls), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* Simple pipelines already take an empty batch (items NULL, count 0), at
 * creation and through set_items; a run of it makes no token. */
static int count_item(void *item, size_t index, void *arg) {
    (void)item, (void)index, (void)arg, atomic_fetch_add(&calls, 1);
    return 0;
}

TEST(simple_pipelines_accept_null_items_with_zero_count) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("empty pipeline");
    weft_item_stage stage = { WEFT_STAGE_PARALLEL, count_item, NULL, "count" };
    weft_status err = WEFT_OK;
    weft_pipeline *p = weft_simple_pipeline_create(2, NULL, 0, 8, &stage, 1, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&calls), 0);
    ASSERT_OK(weft_simple_pipeline_set_items(p, NULL, 0));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&calls), 0);
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, NULL, 1), WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
}
