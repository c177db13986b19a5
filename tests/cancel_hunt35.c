/* Cancellation at odd moments (session 35's adversarial round): what the
 * header promises about a scope's memory, tokens shared by many runs,
 * deadlines at the edges of the clock. */
#include "cancel_test.h"

#include "cancel/cancel.h"

/* ---- a scope's memory is the caller's once weft_deadline_end returns ---- */

struct slow_cb {
    atomic_int entered, release;
};
/* Holds the timer thread inside the scope's fire until the test says so. */
static void hold_timer(void *arg, const char *reason) {
    struct slow_cb *s = arg;
    (void)reason;
    atomic_store(&s->entered, 1);
    ASSERT_TRUE(wait_flag(&s->release, 1, 10.0));
}

TEST(a_deadline_scope_ended_while_its_fire_runs_callbacks_is_not_written_after_end) {
    weft_cancel_token *t = new_token();
    struct slow_cb s = {0};
    ASSERT_OK(weft_cancel_token_on_cancel(t, hold_timer, &s, NULL));
    weft_deadline d;
    ASSERT_OK(weft_deadline_begin(&d, t, 1 * MS));
    ASSERT_TRUE(wait_flag(&s.entered, 1, 10.0)); /* the timer thread is in the scope's fire */
    ASSERT_STATUS(weft_deadline_end(&d), WEFT_ETIMEDOUT);
    /* The scope is closed: its storage is the caller's again (a stack frame
     * that returns, a reused buffer).  Mark it, then let the fire finish. */
    memset(&d, 0xA5, sizeof d);
    atomic_store(&s.release, 1);
    /* The timer thread fires one deadline at a time: once a later one has
     * fired, the scope's fire has returned completely. */
    weft_cancel_token *later = new_token();
    ASSERT_OK(weft_cancel_after(later, 1 * MS));
    uint64_t t0 = now_ns();
    while (!weft_cancel_token_is_cancelled(later) && now_ns() - t0 < 10 * SEC) sleep_us(200);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(later));
    const unsigned char *b = (const unsigned char *)&d;
    for (size_t i = 0; i < sizeof d; i++) ASSERT_EQ(b[i], 0xA5);
    weft_cancel_token_destroy(later);
    weft_cancel_token_destroy(t);
}
