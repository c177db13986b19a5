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
