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
    /* The limit is the byte size, not n: the most elements of 1 byte that
     * can be are still a valid count for a range of that length. */
    ASSERT_OK(weft_parallel_for_each(ex, small_array, 4, ESZ, touch_elem, NULL, NULL));
    weft_executor_destroy(ex);
}
