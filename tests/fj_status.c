/* A task's own return value and weft's statuses kept apart: weft_sync_status,
 * weft_task_group_wait_status and weft_run_root_status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

/* Returns the int it points at: a child may return anything, weft's codes too. */
static int returns(weft_ctx *ctx, void *arg) { return *(int *)arg; }

static int sync_checks(weft_ctx *ctx, void *arg) {
    int *bad = arg, v = 99;
    /* Nothing spawned: weft's own EINVAL, and the value says nothing. */
    if (weft_sync_status(ctx, &v) != WEFT_EINVAL || v != 0) *bad |= 1;
    if (weft_sync_status(NULL, &v) != WEFT_EINVAL) *bad |= 2;
    /* A child returning WEFT_EINVAL's own value (-1) is a task failure. */
    int minus_one = -1, zero = 0, cycle = WEFT_ECYCLE;
    if (weft_spawn(ctx, returns, &minus_one) != WEFT_OK) *bad |= 4;
    if (weft_sync_status(ctx, &v) != WEFT_ETASK || v != -1) *bad |= 8;
    if (weft_spawn(ctx, returns, &zero) != WEFT_OK) *bad |= 4;
    if (weft_sync_status(ctx, NULL) != WEFT_OK) *bad |= 16;
    /* Groups: the first non-zero value, apart from the group's own status. */
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    (void)weft_task_group_spawn(&g, returns, &zero);
    (void)weft_task_group_spawn(&g, returns, &cycle);
    if (weft_task_group_wait_status(&g, &v) != WEFT_ETASK || v != WEFT_ECYCLE) *bad |= 32;
    if (weft_task_group_wait_status(&g, &v) != WEFT_OK || v != 0) *bad |= 64; /* empty now */
    if (weft_task_group_wait_status(NULL, &v) != WEFT_EINVAL) *bad |= 128;
    return 0;
}

TEST(sync_status_tells_a_child_returning_minus_one_from_weft_einval) {
    weft_executor *ex = make_executor(2);
    int bad = 0, v = 5;
    ASSERT_OK(weft_run_root_status(ex, sync_checks, &bad, &v));
    ASSERT_EQ(v, 0);
    if (bad) TEST_FAIL_("checks failed: mask 0x%x", bad);
    weft_executor_destroy(ex);
}

TEST(run_root_status_tells_the_task_value_from_weft_errors) {
    weft_executor *ex = make_executor(1);
    int v = 7, minus_four = -4;
    /* A task returning -4 (WEFT_ECYCLE's value) is WEFT_ETASK with -4. */
    ASSERT_STATUS(weft_run_root_status(ex, returns, &minus_four, &v), WEFT_ETASK);
    ASSERT_EQ(v, -4);
    /* weft's own errors leave the value 0. */
    v = 7;
    ASSERT_STATUS(weft_run_root_status(ex, NULL, NULL, &v), WEFT_EINVAL);
    ASSERT_EQ(v, 0);
    ASSERT_STATUS(weft_run_root_status(NULL, NULL, NULL, &v), WEFT_EINVAL); /* NULL ex: the default */
    /* The plain form still returns the task's value. */
    ASSERT_EQ(weft_run_root(ex, returns, &minus_four), -4);
    weft_executor_destroy(ex);
}

/* ---- spawns a graph task leaves unsynced are synced when it returns ---- */

static atomic_int left_runs;

static int left_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&left_runs, 1);
    return *(int *)arg; /* the value the test gave */
}

/* Spawns a child and returns.  Its argument outlives the task (the implicit
 * sync runs after the task's stack frame is gone, as weft_run_root's does). */
static int leaves_a_spawn(weft_ctx *ctx, void *arg) {
    ASSERT_OK(weft_spawn(ctx, left_child, arg));
    return 0;
}

static int leaves_a_spawn_cond(weft_ctx *ctx, void *arg) {
    (void)leaves_a_spawn(ctx, arg);
    return 0; /* the first successor */
}

static int nothing_spawned_here(weft_ctx *ctx, void *arg) {
    int v = 99;
    *(weft_status *)arg = weft_sync_status(ctx, &v);
    return v;
}

/* Like weft_run_root and weft_async tasks: before, the child never ran in the
 * run, stayed on the worker's frame stack, and a later unrelated task's sync
 * ran it and took its value as its own (with an argument on the spawning
 * task's stack, ASan saw the stack-use-after-return). */
TEST(spawns_a_graph_task_leaves_unsynced_run_in_its_run_and_nowhere_else) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = weft_taskflow_create("leftover", NULL);
        int zero = 0, fail = 42;
        weft_task t = weft_emplace(tf, leaves_a_spawn, &zero);
        weft_task c = weft_emplace_condition(tf, leaves_a_spawn_cond, &zero);
        weft_task after = weft_emplace(tf, leaves_a_spawn, &zero);
        ASSERT_OK(weft_precede(t, c));
        ASSERT_OK(weft_precede(c, after));
        atomic_store(&left_runs, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&left_runs), 3);
        /* Nothing is left on the stack for a later task to find. */
        weft_status st = WEFT_OK;
        ASSERT_EQ(weft_run_root(ex, nothing_spawned_here, &st), 0);
        ASSERT_STATUS(st, WEFT_EINVAL);
        ASSERT_EQ(atomic_load(&left_runs), 3);
        /* A failing leftover child fails the run with its value. */
        weft_taskflow *bad = weft_taskflow_create("leftover-fails", NULL);
        weft_emplace(bad, leaves_a_spawn, &fail);
        weft_future *f;
        ASSERT_OK(weft_run(ex, bad, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, 42);
        weft_future_destroy(f);
        weft_taskflow_destroy(bad);
        weft_taskflow_destroy(tf);
        weft_executor_destroy(ex);
    }
}

/* ---- weft_sync_status sees only the running task's own spawns ---- */

typedef struct nested_check {
    weft_status inner; /* what the nested task's weft_sync_status said */
    int inner_value;
} nested_check;

static int inner_syncs_nothing_of_its_own(weft_ctx *ctx, void *arg) {
    nested_check *c = arg;
    c->inner_value = 99;
    c->inner = weft_sync_status(ctx, &c->inner_value);
    return 0;
}

static int outer_spawns_then_nests(weft_ctx *ctx, void *arg) {
    nested_check *c = arg;
    static int seven = 7;
    ASSERT_OK(weft_spawn(ctx, returns, &seven));
    /* From inside a task, weft_run_root runs the nested task right here. */
    ASSERT_EQ(weft_run_root(weft_ctx_executor(ctx), inner_syncs_nothing_of_its_own, c), 0);
    int v = 0;
    ASSERT_STATUS(weft_sync_status(ctx, &v), WEFT_ETASK); /* its own child, still there */
    ASSERT_EQ(v, 7);
    return 0;
}

/* Before, the nested task's weft_sync_status took the outer task's child (it
 * got WEFT_ETASK and 7), and the outer task's own sync then found nothing. */
TEST(sync_status_in_a_nested_task_never_takes_an_outer_tasks_child) {
    weft_executor *ex = make_executor(1);
    nested_check c = {WEFT_OK, 0};
    ASSERT_EQ(weft_run_root(ex, outer_spawns_then_nests, &c), 0);
    ASSERT_STATUS(c.inner, WEFT_EINVAL);
    ASSERT_EQ(c.inner_value, 0);
    weft_executor_destroy(ex);
}

/* ---- a spawn left unsynced on a full frame stack ---- */

#define FULL_STACK ((int)1 << 16) /* the frame stack's size (src/core/fj.h) */

static atomic_int ovf_runs;

static int ovf_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&ovf_runs, 1);
    return *(int *)arg;
}

/* Spawns one child and returns without its sync.  Run with every frame taken,
 * the spawn overflows: the child runs at once and only its status is kept for
 * the sync, so the frame stack's top does not move. */
static int leaves_an_overflow_spawn(weft_ctx *ctx, void *arg) {
    ASSERT_OK(weft_spawn(ctx, ovf_child, arg));
    return 0;
}

typedef struct full_stack {
    int *vals;          /* FULL_STACK values, child i returns vals[i] = i + 1 */
    weft_taskflow *tf;  /* NULL: nest with weft_run_root; else run and wait for tf */
    int wrong;          /* syncs that returned another child's value */
    int nested;         /* what the nested run returned */
} full_stack;

static int idx_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return *(int *)arg;
}

/* Fills the frame stack (one worker: nothing is stolen), runs a task that
 * leaves an overflow spawn, then syncs its own children: each must give back
 * its own value, innermost first. */
static int fills_the_stack_then_nests(weft_ctx *ctx, void *arg) {
    full_stack *s = arg;
    for (int i = 0; i < FULL_STACK; i++) ASSERT_OK(weft_spawn(ctx, idx_child, &s->vals[i]));
    /* One overflow spawn of its own: the nested task begins with the count at 1. */
    static int ninety_nine = 99, seventy_seven = 77;
    ASSERT_OK(weft_spawn(ctx, idx_child, &ninety_nine));
    if (s->tf) s->nested = weft_run_and_wait(weft_ctx_executor(ctx), s->tf);
    else s->nested = weft_run_root(weft_ctx_executor(ctx), leaves_an_overflow_spawn, &seventy_seven);
    if (weft_sync(ctx) != 99) s->wrong++;
    for (int i = FULL_STACK - 1; i >= 0; i--)
        if (weft_sync(ctx) != s->vals[i]) s->wrong++;
    return 0;
}

/* Before the overflow mark, a task that began on a full stack and left an
 * overflow spawn kept the overflow count raised: the next sync below it took
 * that child's kept status as its own child's value (77 for 65536), and the
 * last sync found nothing.  Both for a nested root task and for a graph task
 * run by a wait inside a task. */
TEST(an_overflow_spawn_left_unsynced_never_answers_an_outer_tasks_sync) {
    weft_executor *ex = make_executor(1);
    int *vals = malloc(sizeof *vals * FULL_STACK);
    ASSERT_TRUE(vals != NULL);
    for (int i = 0; i < FULL_STACK; i++) vals[i] = i + 1;
    for (int graph = 0; graph <= 1; graph++) {
        full_stack s = {vals, NULL, 0, -5};
        static int seventy_seven = 77;
        if (graph) {
            s.tf = weft_taskflow_create("overflow-leftover", NULL);
            ASSERT_FALSE(weft_task_is_null(weft_emplace(s.tf, leaves_an_overflow_spawn, &seventy_seven)));
        }
        atomic_store(&ovf_runs, 0);
        ASSERT_EQ(weft_run_root(ex, fills_the_stack_then_nests, &s), 0);
        ASSERT_EQ(atomic_load(&ovf_runs), 1);
        /* The leftover child's value (77) is the nested task's failure. */
        if (graph) ASSERT_STATUS(s.nested, WEFT_ETASK);
        else ASSERT_EQ(s.nested, 77);
        if (s.wrong) TEST_FAIL_("%s: %d of the outer task's syncs returned another child's value",
                                graph ? "graph task" : "root task", s.wrong);
        if (s.tf) weft_taskflow_destroy(s.tf);
    }
    free(vals);
    weft_executor_destroy(ex);
}
