/* Fork-join, adversarial round 35: the contracts of weft/forkjoin.h at their
 * awkward edges (failing calls, leftovers, nesting, odd callers). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <string.h>

/* ---- every failing fork-join call sets the thread's message (docs/errors.md R3) ---- */

/* Sets the message by a failure of an unrelated call (the sentinel). */
static void set_sentinel(void) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
}

/* The message after a failing call: not the sentinel, and naming `call`. */
static int names_itself(const char *call) {
    const char *msg = weft_last_error_message();
    if (strstr(msg, call) && !strstr(msg, "weft_semaphore_create")) return 0;
    fprintf(stderr, "%s failed with the message \"%s\"\n", call, msg);
    return 1;
}

static int inline_failures(weft_ctx *ctx, void *arg) {
    int *bad = arg;
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    set_sentinel();
    ASSERT_STATUS(weft_spawn(NULL, noop, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_spawn(ctx, NULL, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_sync(NULL), WEFT_EINVAL);
    *bad += names_itself("weft_sync");
    set_sentinel();
    ASSERT_STATUS(weft_sync_status(NULL, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_sync_status");
    set_sentinel();
    ASSERT_STATUS(weft_sync_status(ctx, NULL), WEFT_EINVAL); /* nothing spawned */
    *bad += names_itself("weft_sync_status");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_spawn(NULL, noop, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_task_group_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_spawn(&g, NULL, NULL), WEFT_EINVAL); /* passes weft_spawn's on */
    *bad += names_itself("weft_spawn");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_wait(NULL), WEFT_EINVAL);
    *bad += names_itself("weft_task_group_wait");
    set_sentinel();
    ASSERT_STATUS(weft_task_group_wait_status(NULL, NULL), WEFT_EINVAL);
    *bad += names_itself("weft_task_group_wait_status");
    ASSERT_EQ(weft_task_group_wait(&g), 0); /* the failed spawn left nothing */
    return 0;
}

/* Before, the inline halves returned WEFT_EINVAL without a word, so
 * weft_last_error_message still held an earlier, unrelated failure's. */
TEST(fork_join_calls_failing_inline_set_the_thread_message) {
    weft_executor *ex = make_executor(1);
    int bad = 0;
    ASSERT_EQ(weft_run_root(ex, inline_failures, &bad), 0);
    ASSERT_EQ(bad, 0);
    weft_executor_destroy(ex);
}

/* ---- WEFT_FJ_SPAWN evaluates its slot once ---- */

WEFT_FJ_TASK(long, square, long, x) { return x * x; }

/* Spawns square(1) .. square(n) into consecutive slots with &slots[k++] and
 * syncs them back with &slots[--k]: the sum of the first n squares. */
WEFT_FJ_TASK(long, sum_of_squares, int, n) {
    WEFT_FJ_SLOT(square) slots[16];
    int k = 0;
    for (int i = 1; i <= n; i++) WEFT_FJ_SPAWN(square, &slots[k++], (long)i);
    long sum = 0;
    while (k > 0) sum += WEFT_FJ_SYNC(square, &slots[--k]);
    return sum;
}

static int sum_of_squares_root(weft_ctx *ctx, void *arg) {
    long *r = arg;
    *r = WEFT_FJ_RUN(ctx, sum_of_squares, 8);
    return 0;
}

/* Before, the macro read `slot` twice: the argument went into slots[k] and the
 * frame pointed at slots[k + 1], so k advanced by two per spawn (past the
 * array for n > 8) and the syncs read slots never written (25 for n = 4). */
TEST(a_typed_spawn_evaluates_its_slot_argument_once) {
    for (unsigned w = 1; w <= 2; w++) {
        weft_executor *ex = make_executor(w);
        long r = 0;
        ASSERT_EQ(weft_run_root(ex, sum_of_squares_root, &r), 0);
        ASSERT_EQ(r, 204); /* 1 + 4 + ... + 64 */
        weft_executor_destroy(ex);
    }
}

/* ---- overflow statuses when memory runs out and comes back ---- */

/* An allocator that refuses the frame stack (2 MiB: every spawn then runs its
 * child at once and keeps the status in the overflow array) and, while
 * `refuse_growth` is set, any growth of that array. */
static atomic_int refuse_growth;
static void *no_stack_alloc(void *ctx, size_t n) {
    (void)ctx;
    return n == ((size_t)1 << 16) * 32 ? NULL : malloc(n); /* 65536 frames of 32 bytes (src/core/fj.h) */
}
static void *no_stack_realloc(void *ctx, void *p, size_t old, size_t n) {
    (void)ctx, (void)old;
    return atomic_load(&refuse_growth) ? NULL : realloc(p, n);
}
static void no_stack_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    free(p);
}

#define OVF_CHILDREN 300
/* Child i returns i + 1; children 63 to 198 make the next growth fail. */
static int refusing_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    int i = (int)(intptr_t)arg;
    atomic_store(&refuse_growth, i + 1 >= 64 && i + 1 < 200);
    return i + 1;
}

static int spawns_while_growth_fails(weft_ctx *ctx, void *arg) {
    int *got = arg;
    for (int i = 0; i < OVF_CHILDREN; i++) ASSERT_OK(weft_spawn(ctx, refusing_child, (void *)(intptr_t)i));
    for (int i = OVF_CHILDREN - 1; i >= 0; i--) got[i] = weft_sync(ctx);
    return 0;
}

/* Before, the array grew (64 to 128 entries) at the spawn after the refusals
 * ended, the 201st, whose status it then wrote past the end (ASan: a heap
 * buffer overflow); and the statuses lost meanwhile (65 to 128) lay below the
 * new size, so their syncs read unwritten entries (0) as kept values. */
TEST(overflow_statuses_stay_in_bounds_when_growth_fails_then_succeeds) {
    weft_set_allocator(&(weft_allocator){no_stack_alloc, no_stack_realloc, no_stack_free, NULL});
    weft_executor *ex = make_executor(1);
    int *got = calloc(OVF_CHILDREN, sizeof *got);
    ASSERT_NOT_NULL(got);
    atomic_store(&refuse_growth, 0);
    ASSERT_EQ(weft_run_root(ex, spawns_while_growth_fails, got), 0);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    /* The first 64 kept their own; the first lost one (65) too, kept apart;
     * every later lost one failed too, and its sync says WEFT_ENOMEM (its
     * status could not be kept: forkjoin.h), never a sibling's value (they
     * all said 65, the first lost one's: tests/sched_hunt42.c). */
    for (int i = 0; i < 64; i++) ASSERT_EQ(got[i], i + 1);
    ASSERT_EQ(got[64], 65);
    int strays = 0;
    for (int i = 65; i < OVF_CHILDREN; i++)
        if (got[i] != WEFT_ENOMEM && got[i] != i + 1) strays++;
    free(got);
    ASSERT_EQ(strays, 0);
}

/* ---- weft_run_root's documented values ---- */

static int returns_int(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return *(int *)arg;
}

static int leaves_children(weft_ctx *ctx, void *arg) {
    int *vals = arg; /* vals[0..3] for the children, vals[4] for the task */
    for (int i = 0; i < 4; i++) ASSERT_OK(weft_spawn(ctx, returns_int, &vals[i]));
    return vals[4];
}

/* A spawn left unsynced that fails gives the root's value when the root
 * returned 0 (the innermost first), and never hides the root's own. */
TEST(run_root_returns_a_failing_leftover_spawn_when_the_root_returned_zero) {
    for (unsigned w = 1; w <= 2; w++) {
        weft_executor *ex = make_executor(w);
        int quiet[5] = {0, 5, 0, 7, 0}, loud[5] = {0, 5, 0, 7, 3};
        int v = 0;
        ASSERT_STATUS(weft_run_root_status(ex, leaves_children, quiet, &v), WEFT_ETASK);
        ASSERT_EQ(v, 7);
        ASSERT_EQ(weft_run_root(ex, leaves_children, loud), 3);
        weft_executor_destroy(ex);
    }
}

static int zero_task(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

/* Registered before the default executor's first use: runs after it is gone. */
static void run_root_at_exit(void) {
    int v = 9;
    weft_status st = weft_run_root_status(NULL, zero_task, NULL, &v);
    _exit(st == WEFT_ESHUTDOWN && v == 0 && weft_run_root(NULL, zero_task, NULL) == WEFT_ESHUTDOWN ? 0 : 3);
}

TEST(run_root_on_the_default_executor_after_exit_says_eshutdown) {
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        atexit(run_root_at_exit);
        int zero = 0;
        if (weft_run_root(NULL, returns_int, &zero) != 0) _exit(2);
        exit(0); /* the default executor goes, then run_root_at_exit runs */
    }
    int status = wait_child(pid, 10.0, "the child did not exit");
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* ---- a task group the task leaves without waiting ---- */

static atomic_int group_leftovers_run;

static int counted_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&group_leftovers_run, 1);
    return *(int *)arg;
}

static int leaves_its_group(weft_ctx *ctx, void *arg) {
    int *vals = arg;
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    for (int i = 0; i < 8; i++) ASSERT_OK(weft_task_group_spawn(&g, counted_child, &vals[i]));
    ASSERT_EQ(weft_task_group_wait(&g), 6);   /* the first non-zero in sync order: the last spawned */
    ASSERT_EQ(weft_task_group_wait(&g), 0);   /* empty now */
    for (int i = 0; i < 8; i++) ASSERT_OK(weft_task_group_spawn(&g, counted_child, &vals[i])); /* reused */
    return 0; /* the group goes out of scope with 8 children pending */
}

/* Every child of a group the task never waited for runs before weft_run_root
 * returns, and a failing one is the root's value. */
TEST(a_group_left_with_children_pending_is_synced_when_its_task_returns) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        int vals[8] = {0, 4, 0, 0, 0, 0, 6, 0};
        atomic_store(&group_leftovers_run, 0);
        ASSERT_EQ(weft_run_root(ex, leaves_its_group, vals), 6);
        ASSERT_EQ(atomic_load(&group_leftovers_run), 16);
        weft_executor_destroy(ex);
    }
}

/* ---- fork-join inside a parallel algorithm's chunks and pipeline stages ---- */

WEFT_FJ_TASK(long, tfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tfib) x;
    WEFT_FJ_SPAWN(tfib, &x, n - 1);
    long b = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &x) + b;
}

static int tfib_root(weft_ctx *ctx, void *arg) {
    long *r = arg;
    *r = WEFT_FJ_RUN(ctx, tfib, (int)*r);
    return 0;
}

static weft_executor *chunk_ex;
static atomic_int chunk_wrong;

/* No task runs around a chunk or a stage on an idle worker or the calling
 * thread (weft_current_ctx() is NULL there): weft_run_root makes one. */
static void fib_in_chunk(size_t i, void *arg) {
    (void)arg;
    long r = 12 + (long)(i % 3);
    static const long want[3] = {144, 233, 377};
    if (weft_run_root(chunk_ex, tfib_root, &r) != 0 || r != want[i % 3]) atomic_fetch_add(&chunk_wrong, 1);
}

static int fib_in_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) >= 24) {
        if (weft_pipeflow_stage(pf) == 0) ASSERT_OK(weft_pipeflow_stop(pf));
        return 0;
    }
    fib_in_chunk((size_t)weft_pipeflow_token(pf), NULL);
    return 0;
}

static int loop_in_task(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return weft_parallel_for(chunk_ex, 0, 48, 1, fib_in_chunk, NULL, NULL);
}

TEST(typed_fork_join_runs_in_chunks_and_stages_through_run_root) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        chunk_ex = make_executor(w);
        atomic_store(&chunk_wrong, 0);
        ASSERT_OK(weft_parallel_for(chunk_ex, 0, 48, 1, fib_in_chunk, NULL, NULL)); /* from outside */
        ASSERT_EQ(weft_run_root(chunk_ex, loop_in_task, NULL), 0);                   /* from a task */
        weft_stage stages[2] = {{.fn = fib_in_stage}, {.kind = WEFT_STAGE_PARALLEL, .fn = fib_in_stage}};
        weft_status st = WEFT_OK;
        weft_pipeline *p = weft_pipeline_create(4, stages, 2, &st);
        ASSERT_NOT_NULL(p);
        weft_taskflow *tf = make_taskflow("stages");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        ASSERT_OK(weft_run_and_wait(chunk_ex, tf));
        ASSERT_EQ(atomic_load(&chunk_wrong), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(chunk_ex);
    }
}
