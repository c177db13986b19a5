/* Out-of-memory and the allocator hook, round 46: what weft keeps for the
 * process across an allocator switch. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "counting_alloc.h"

#include <weft.h>

enum { MAX_TIMERS = 1000 };

/* Arms n deadlines far off (the timer thread's heap grows to hold them: 64
 * slots, then doubling), then destroys the tokens (each disarms). */
static void arm_many(int n) {
    static weft_cancel_token *t[MAX_TIMERS];
    for (int i = 0; i < n; i++) {
        weft_status st;
        t[i] = weft_cancel_token_create(NULL, &st);
        ASSERT_OK(st);
        ASSERT_OK(weft_cancel_after(t[i], 3600ull * 1000000000ull));
    }
    for (int i = 0; i < n; i++) {
        ASSERT_FALSE(weft_cancel_token_is_cancelled(t[i]));
        weft_cancel_token_destroy(t[i]);
    }
}

/* common.h: switch allocators with no executor alive (and no object made by
 * the other one alive); memory is freed by the allocator current when it is
 * released.  The deadline timer's heap is the process's, not an object of
 * the program's: made by the C library's allocator, it was grown later by
 * realloc of the installed one (a block it never gave out: glibc aborts,
 * "realloc(): invalid pointer"), and the other way round. */
TEST(deadlines_armed_under_one_allocator_then_under_another_never_mix_their_blocks) {
    arm_many(100); /* the C library's allocator: 128 slots */
    weft_set_allocator(&counting);
    fail_allocation(0);
    arm_many(200); /* more, under the counting allocator */
    weft_set_allocator(NULL);
    /* Nothing weft keeps is the counting allocator's once no timer is armed. */
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    arm_many(400); /* more again, under the C library's */
}
