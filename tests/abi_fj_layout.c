/* The fork-join inline fast path's layout (docs/abi.md, "Fork-join's inline
 * fast path").  weft_spawn, weft_sync, weft_sync_status, the task-group calls
 * and the WEFT_FJ_* typed-task macros are compiled into the user's binary and
 * read private fields of weft__fj and weft__fj_frame at fixed offsets, so a
 * library with another layout would corrupt a program built against this one.
 * The layout is part of the ABI: it may change only in a release that breaks
 * the ABI (a minor release before 1.0, a major one after), listed in the
 * changelog.  This test pins the offsets the inline code uses (LP64 values):
 * changing one fails the build here, as a reminder to record the break.
 * Changing the layout on purpose: update the numbers below, add a changelog
 * line "ABI: fork-join inline layout changed", and bump WEFT__FJ_LAYOUT
 * where forkjoin.h defines it. */
#include "harness.h"

#include <weft.h>

#include <stddef.h>
#include <stdint.h>

#if UINTPTR_MAX == 0xffffffffffffffffu && SIZE_MAX == UINTPTR_MAX
#  define PIN(expr, value) _Static_assert((expr) == (value), #expr " changed: the fork-join inline fast path's layout is ABI (docs/abi.md)")
/* What weft_spawn / weft_sync / weft_sync_status read and write. */
PIN(offsetof(weft__fj, head), 0);
PIN(offsetof(weft__fj, base), 24);
PIN(offsetof(weft__fj, ovf), 36);
PIN(offsetof(weft__fj, limit), 72);
PIN(offsetof(weft__fj, sync_floor), 80);
/* What the WEFT_FJ_* typed macros read besides (layout 2). */
PIN(offsetof(weft__fj, split), 8);
PIN(offsetof(weft__fj, typed_ctx), 96);
/* Frames are stepped through by pointer arithmetic (f + 1). */
PIN(sizeof(weft__fj_frame), 32);
PIN(offsetof(weft__fj_frame, fn), 0);
PIN(offsetof(weft__fj_frame, arg), 8);
PIN(offsetof(weft__fj_frame, state), 16);
PIN(offsetof(weft__fj_frame, result), 24);
/* Task groups live in the user's memory. */
PIN(sizeof(weft_task_group), 16);
#endif
#ifdef WEFT__FJ_LAYOUT
_Static_assert(WEFT__FJ_LAYOUT == 2, "the fork-join inline layout version changed: update the pins above");
#endif

static int child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return *(int *)arg;
}

static int parent(weft_ctx *ctx, void *arg) {
    int one = 1, two = 2;
    if (weft_spawn(ctx, child, &one) || weft_spawn(ctx, child, &two)) return -100;
    int b = weft_sync(ctx), a = weft_sync(ctx);
    *(int *)arg = a * 10 + b;
    return 0;
}

/* The inline path, compiled here against this header, with the library's
 * out-of-line halves: the two agree on the frame stack. */
TEST(fj_inline_fast_path_agrees_with_the_library_on_the_frame_layout) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, NULL);
    ASSERT_TRUE(ex != NULL);
    int out = 0;
    ASSERT_EQ(weft_run_root(ex, parent, &out), 0);
    ASSERT_EQ(out, 12);
    weft_executor_destroy(ex);
}
