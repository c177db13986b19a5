/* The fork-join frame stack's size (weft_executor_config.fork_join_frames,
 * WEFT_FORK_JOIN_FRAMES): where a spawn starts running its child at once, the
 * knob's range and its environment variable's warn-once fallback, and exact
 * results with stacks so small that most spawns overflow while thieves steal.
 *
 * On one worker nobody else can run a child, so whether a spawn ran its child
 * before returning tells exactly whether the stack was full: the first
 * `frames` spawns of a flat loop leave their children on the stack, every
 * later one runs its child at once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "warn_capture.h"

#include <weft.h>
#include <weft/forkjoin.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a flat loop on one worker ------------------------------------------------ */

typedef struct flat {
    size_t n;
    unsigned char *ran;      /* ran[i]: child i's runs */
    size_t ran_at_spawn;     /* children that had run when their spawn returned */
    size_t first_at_spawn;   /* the lowest such i (n: none) */
    int sync_failures;
} flat;

static int flat_child(weft_ctx *cx, void *arg) {
    (void)cx;
    unsigned char *r = arg;
    (*r)++;
    return 0;
}

static int flat_loop(weft_ctx *cx, void *arg) {
    flat *f = arg;
    f->first_at_spawn = f->n;
    for (size_t i = 0; i < f->n; i++) {
        if (weft_spawn(cx, flat_child, &f->ran[i]) != WEFT_OK) return -1;
        if (f->ran[i]) {
            f->ran_at_spawn++;
            if (f->first_at_spawn == f->n) f->first_at_spawn = i;
        }
    }
    for (size_t i = 0; i < f->n; i++)
        if (weft_sync(cx) != 0) f->sync_failures++;
    return 0;
}

/* Runs a flat loop of n spawns on a one-worker executor with `frames`
 * configured; returns the index of the first spawn that ran its child at once
 * (n: none did), after checking that every child ran exactly once. */
static size_t first_inline_spawn(size_t frames, size_t n) {
    weft_status err = WEFT_EINVAL;
    weft_executor *ex =
        weft_executor_create(&(weft_executor_config){ .workers = 1, .fork_join_frames = frames }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create(fork_join_frames = %zu) failed: %s", frames, weft_errname(err));
    flat f = { .n = n, .ran = calloc(n, 1) };
    ASSERT_NOT_NULL(f.ran);
    ASSERT_OK(weft_run_root(ex, flat_loop, &f));
    weft_executor_destroy(ex);
    for (size_t i = 0; i < n; i++)
        if (f.ran[i] != 1) TEST_FAIL_("frames %zu: child %zu of %zu ran %u times", frames, i, n, f.ran[i]);
    ASSERT_EQ(f.sync_failures, 0);
    ASSERT_EQ(f.ran_at_spawn, f.first_at_spawn == n ? 0 : n - f.first_at_spawn);
    free(f.ran);
    return f.first_at_spawn;
}

TEST(fj_the_default_frame_stack_holds_65536_spawns_and_the_next_runs_its_child_at_once) {
    ASSERT_EQ(first_inline_spawn(0, 65536 + 100), (size_t)65536);
}

TEST(fj_fork_join_frames_sets_where_a_flat_loop_of_spawns_starts_running_children_at_once) {
    ASSERT_EQ(first_inline_spawn(32, 100), (size_t)32);
    ASSERT_EQ(first_inline_spawn(1000, 1000), (size_t)1000); /* exactly full: none at once */
    ASSERT_EQ(first_inline_spawn(1000, 1001), (size_t)1000);
    /* A flat loop of 10^5 spawns fits a stack of 2^17, so none runs at once:
     * with other workers, thieves could take any of them. */
    ASSERT_EQ(first_inline_spawn((size_t)1 << 17, 100000), (size_t)100000);
}

TEST(fj_fork_join_frames_below_16_is_raised_to_16) {
    ASSERT_EQ(first_inline_spawn(1, 40), (size_t)16);
    ASSERT_EQ(first_inline_spawn(15, 40), (size_t)16);
    ASSERT_EQ(first_inline_spawn(16, 40), (size_t)16);
    ASSERT_EQ(first_inline_spawn(17, 40), (size_t)17);
}

TEST(fj_fork_join_frames_above_the_max_is_einval_naming_the_field) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = 1, .fork_join_frames = WEFT_FORK_JOIN_FRAMES_MAX + 1 }, &err);
    ASSERT_NULL(ex);
    ASSERT_STATUS(err, WEFT_EINVAL);
    const char *msg = weft_last_error_message();
    ASSERT_NOT_NULL(msg);
    if (!strstr(msg, "fork_join_frames")) TEST_FAIL_("the error does not name fork_join_frames: %s", msg);
    /* The max itself is accepted (the stack is allocated only at a first spawn). */
    ex = weft_executor_create(
        &(weft_executor_config){ .workers = 1, .fork_join_frames = WEFT_FORK_JOIN_FRAMES_MAX }, &err);
    ASSERT_NOT_NULL(ex);
    weft_executor_destroy(ex);
}

/* ---- the environment variable -------------------------------------------------- */

TEST(fj_weft_fork_join_frames_sets_the_stack_of_executors_created_without_the_field) {
    ASSERT_EQ(setenv("WEFT_FORK_JOIN_FRAMES", "100", 1), 0);
    size_t at = first_inline_spawn(0, 300);
    size_t configured = first_inline_spawn(50, 300); /* the field wins over the variable */
    unsetenv("WEFT_FORK_JOIN_FRAMES");
    ASSERT_EQ(at, (size_t)100);
    ASSERT_EQ(configured, (size_t)50);
}

TEST(fj_a_bad_weft_fork_join_frames_warns_once_and_keeps_65536) {
    capture_log();
    ASSERT_EQ(setenv("WEFT_FORK_JOIN_FRAMES", "16777217", 1), 0); /* 2^24 + 1 */
    size_t a = first_inline_spawn(0, 65536 + 10);
    size_t b = first_inline_spawn(0, 65536 + 10);
    unsetenv("WEFT_FORK_JOIN_FRAMES");
    weft_log_set_callback(NULL, NULL);
    ASSERT_EQ(a, (size_t)65536);
    ASSERT_EQ(b, (size_t)65536);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    if (!strstr(logged.last, "WEFT_FORK_JOIN_FRAMES=\"16777217\"") || !strstr(logged.last, "65536"))
        TEST_FAIL_("the warning does not name the variable, its value and the default: %s", logged.last);
}

TEST(fj_weft_fork_join_frames_that_is_not_a_number_falls_back_without_failing) {
    weft_log_set_level(WEFT_LOG_OFF);
    const char *bad[] = { "", "abc", "-5", "12x", "0x10", " ", "99999999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ASSERT_EQ(setenv("WEFT_FORK_JOIN_FRAMES", bad[i], 1), 0);
        size_t at = first_inline_spawn(0, 65536 + 1);
        if (at != 65536) TEST_FAIL_("WEFT_FORK_JOIN_FRAMES=\"%s\": overflow at %zu, not 65536", bad[i], at);
    }
    ASSERT_EQ(setenv("WEFT_FORK_JOIN_FRAMES", "0", 1), 0); /* 0: the default, silently */
    ASSERT_EQ(first_inline_spawn(0, 65536 + 1), (size_t)65536);
    unsetenv("WEFT_FORK_JOIN_FRAMES");
    weft_log_set_level(WEFT_LOG_WARN);
}

/* ---- tiny stacks under stealing: exact results ------------------------------------ */

typedef struct fib_arg {
    int n;
    long r;
} fib_arg;

static int fib(weft_ctx *cx, void *p) {
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    fib_arg x = { a->n - 1, 0 }, y = { a->n - 2, 0 };
    if (weft_spawn(cx, fib, &x) != WEFT_OK) return -1;
    int sy = fib(cx, &y);
    int sx = weft_sync(cx);
    a->r = x.r + y.r;
    return sx ? sx : sy;
}

WEFT_FJ_TASK(long, tfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tfib) s;
    WEFT_FJ_SPAWN(tfib, &s, n - 1);
    long y = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &s) + y;
}

static int tfib_root(weft_ctx *cx, void *p) {
    fib_arg *a = p;
    a->r = WEFT_FJ_RUN(cx, tfib, a->n);
    return 0;
}

/* A flat loop of spawns of recursive children: every level overflows. */
typedef struct wide {
    size_t n;
    long *out;
} wide;

static int wide_child(weft_ctx *cx, void *p) {
    fib_arg *a = p;
    return fib(cx, a);
}

static int wide_loop(weft_ctx *cx, void *p) {
    wide *w = p;
    fib_arg *args = malloc(w->n * sizeof *args);
    if (!args) return -1;
    for (size_t i = 0; i < w->n; i++) {
        args[i] = (fib_arg){ (int)(i % 12), 0 };
        if (weft_spawn(cx, wide_child, &args[i]) != WEFT_OK) return -1;
    }
    int st = 0;
    for (size_t i = 0; i < w->n; i++)
        if (weft_sync(cx) != 0) st = -2;
    for (size_t i = 0; i < w->n; i++) w->out[i] = args[i].r;
    free(args);
    return st;
}

static long serial_fib(int n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

TEST(fj_tiny_frame_stacks_overflowing_while_thieves_steal_give_exact_results) {
    const size_t frames[] = { 1, 16, 17, 64, 1000 };
    const unsigned workers[] = { 1, 2, 4 };
    for (size_t fi = 0; fi < sizeof frames / sizeof frames[0]; fi++)
        for (size_t wi = 0; wi < sizeof workers / sizeof workers[0]; wi++) {
            weft_status err = WEFT_EINVAL;
            weft_executor *ex = weft_executor_create(
                &(weft_executor_config){ .workers = workers[wi], .fork_join_frames = frames[fi] }, &err);
            if (!ex) TEST_FAIL_("create failed: %s", weft_errname(err));
            for (int rep = 0; rep < 3; rep++) {
                fib_arg a = { 22, 0 };
                ASSERT_OK(weft_run_root(ex, fib, &a));
                if (a.r != 17711)
                    TEST_FAIL_("fib(22) = %ld with %zu frames on %u workers", a.r, frames[fi], workers[wi]);
                fib_arg ta = { 22, 0 };
                ASSERT_OK(weft_run_root(ex, tfib_root, &ta));
                long t = ta.r;
                if (t != 17711)
                    TEST_FAIL_("typed fib(22) = %ld with %zu frames on %u workers", t, frames[fi], workers[wi]);
                wide w = { 3000, calloc(3000, sizeof(long)) };
                ASSERT_NOT_NULL(w.out);
                ASSERT_OK(weft_run_root(ex, wide_loop, &w));
                for (size_t i = 0; i < w.n; i++)
                    if (w.out[i] != serial_fib((int)(i % 12)))
                        TEST_FAIL_("wide child %zu = %ld with %zu frames on %u workers", i, w.out[i], frames[fi],
                                   workers[wi]);
                free(w.out);
            }
            weft_executor_destroy(ex);
        }
}
