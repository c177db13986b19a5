/* Deadlines: order, never early, bounded lateness (loose: CI machines are
 * shared), replace and disarm, scoped budgets, the heap left empty after 10^6
 * arm/disarm pairs, an idle timer thread using no CPU. */
#include "cancel_test.h"

#include "cancel/cancel.h"

/* Records when each token's callback ran, in the order they ran. */
struct fired {
    atomic_int n, done; /* slots claimed, slots written */
    int order[16];
    uint64_t at[16];
};
struct fire_slot {
    struct fired *f;
    int id;
};
static void note_fire(void *arg, const char *reason) {
    struct fire_slot *s = arg;
    int k = atomic_fetch_add(&s->f->n, 1);
    s->f->order[k] = s->id;
    s->f->at[k] = weft_cancel_now_ns();
    ASSERT_STREQ(reason, "deadline exceeded");
    atomic_fetch_add(&s->f->done, 1);
}

/* Lateness allowed: generous, as sanitizers and shared CI runners delay
 * wake-ups; the median figures are in the report (bench/cancel). */
#define LATE_BOUND (200 * MS)

TEST(cancel_deadlines_fire_in_order_never_early_and_within_bound) {
    enum { N = 6 };
    weft_cancel_token *t[N];
    struct fired f;
    struct fire_slot slots[N];
    uint64_t when[N];
    /* Armed out of order: 30, 10, 50, 20, 60, 40 ms, times `scale`.  The order
     * is only the deadlines' if all six were armed before the first came: a
     * deadline already past when armed fires at once on the arming thread,
     * ahead of earlier ones the timer thread has yet to fire (a loaded TSan
     * run took over 50 ms to arm them).  Then the same, four times slower. */
    static const int ms[N] = {30, 10, 50, 20, 60, 40};
    uint64_t scale = 1;
    for (;;) {
        f = (struct fired){0};
        uint64_t base = weft_cancel_now_ns();
        for (int i = 0; i < N; i++) {
            t[i] = new_token();
            slots[i] = (struct fire_slot){&f, i};
            ASSERT_OK(weft_cancel_token_on_cancel(t[i], note_fire, &slots[i], NULL));
            when[i] = base + (uint64_t)ms[i] * MS * scale;
            ASSERT_OK(weft_cancel_at(t[i], when[i]));
        }
        bool in_time = weft_cancel_now_ns() < base + 10 * MS * scale;
        while (atomic_load(&f.done) < N && weft_cancel_now_ns() < base + 5 * SEC * scale) sleep_us(1000);
        ASSERT_EQ(atomic_load(&f.done), N);
        if (in_time || scale >= 64) break;
        for (int i = 0; i < N; i++) weft_cancel_token_destroy(t[i]);
        scale *= 4;
    }
    static const int expect[N] = {1, 3, 0, 5, 2, 4};
    for (int k = 0; k < N; k++) {
        int id = f.order[k];
        ASSERT_EQ(id, expect[k]);
        ASSERT_GE(f.at[k], when[id]); /* never early */
        ASSERT_LT(f.at[k] - when[id], LATE_BOUND);
    }
    for (int i = 0; i < N; i++) weft_cancel_token_destroy(t[i]);
    ASSERT_EQ(weft__timer_armed(), 0);
}

TEST(cancel_after_replaces_and_disarm_removes_the_deadline) {
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_after(t, 10 * SEC));
    ASSERT_OK(weft_cancel_after(t, 20 * MS)); /* replaces the 10 s one */
    ASSERT_EQ(weft__timer_armed(), 1);
    uint64_t t0 = weft_cancel_now_ns();
    while (!weft_cancel_token_is_cancelled(t) && weft_cancel_now_ns() - t0 < 5 * SEC) sleep_us(500);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    ASSERT_GE(weft_cancel_now_ns() - t0, 20 * MS);
    ASSERT_STREQ(weft_cancel_token_reason(t), "deadline exceeded");
    ASSERT_OK(weft_cancel_token_reset(t));
    ASSERT_OK(weft_cancel_after(t, 30 * MS));
    ASSERT_TRUE(weft_cancel_disarm(t));
    ASSERT_FALSE(weft_cancel_disarm(t));
    sleep_us(60000);
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    ASSERT_OK(weft_cancel_after(t, 0)); /* 0: at once, on this thread */
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    ASSERT_OK(weft_cancel_token_reset(t));
    ASSERT_OK(weft_cancel_after(t, UINT64_MAX)); /* never */
    ASSERT_EQ(weft__timer_armed(), 0);
    weft_cancel_token_destroy(t);
}

TEST(cancel_destroying_a_token_disarms_its_deadline) {
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_after(t, 5 * MS));
    weft_cancel_token_destroy(t);
    ASSERT_EQ(weft__timer_armed(), 0);
    sleep_us(20000); /* nothing fires on freed memory (ASan would say) */
}

TEST(cancel_arm_disarm_a_million_times_leaves_the_heap_empty) {
    weft_cancel_token *t = new_token();
    uint64_t n = test_scale(1000000);
    weft_deadline d;
    for (uint64_t i = 0; i < n; i++) {
        ASSERT_OK(weft_cancel_after(t, 10 * SEC + i));
        ASSERT_TRUE(weft_cancel_disarm(t));
        ASSERT_OK(weft_deadline_begin(&d, t, 10 * SEC));
        ASSERT_OK(weft_deadline_end(&d));
    }
    ASSERT_EQ(weft__timer_armed(), 0);
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    weft_cancel_token_destroy(t);
}

TEST(cancel_deadline_scope_cancels_when_the_budget_runs_out) {
    weft_cancel_token *t = new_token();
    weft_deadline d;
    ASSERT_OK(weft_deadline_begin(&d, t, 20 * MS));
    uint64_t t0 = weft_cancel_now_ns();
    while (!weft_cancel_token_is_cancelled(t) && weft_cancel_now_ns() - t0 < 5 * SEC) sleep_us(500);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t)); /* the timer fired inside the scope */
    ASSERT_STATUS(weft_deadline_end(&d), WEFT_ETIMEDOUT);
    /* Within budget: nothing happens. */
    ASSERT_OK(weft_cancel_token_reset(t));
    ASSERT_OK(weft_deadline_begin(&d, t, 5 * SEC));
    ASSERT_OK(weft_deadline_end(&d));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    /* Nested scopes are independent; the inner one's end cancels if over. */
    weft_deadline outer, inner;
    ASSERT_OK(weft_deadline_begin(&outer, t, 5 * SEC));
    ASSERT_OK(weft_deadline_begin(&inner, t, 1));
    sleep_us(1000);
    ASSERT_STATUS(weft_deadline_end(&inner), WEFT_ETIMEDOUT);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    ASSERT_STATUS(weft_deadline_end(&outer), WEFT_OK);
    weft_cancel_token_destroy(t);
    ASSERT_EQ(weft__timer_armed(), 0);
}

/* Ends once the deadline cancelled t (7), whether that was before its first
 * poll or not: a loaded machine may take the whole budget to get here. */
static int spin_until_cancelled(weft_cancel_token *t, void *arg) {
    while (!weft_cancel_token_is_cancelled(t)) sleep_us(200);
    return strcmp(weft_cancel_token_reason(t), "deadline exceeded") == 0 ? 7 : 8;
}
static int quick(weft_cancel_token *t, void *arg) { return 3; }

TEST(cancel_with_deadline_runs_fn_under_a_budget) {
    int r = 0;
    ASSERT_STATUS(weft_with_deadline(10 * MS, spin_until_cancelled, NULL, &r), WEFT_ETIMEDOUT);
    ASSERT_EQ(r, 7);
    ASSERT_OK(weft_with_deadline(5 * SEC, quick, NULL, &r));
    ASSERT_EQ(r, 3);
    ASSERT_EQ(weft__timer_armed(), 0);
}

/* A deadline's callback may arm and disarm deadlines (the timer thread calls
 * out without its lock). */
struct rearm {
    weft_cancel_token *next;
    atomic_int done;
};
static void rearm_next(void *arg, const char *reason) {
    struct rearm *r = arg;
    ASSERT_OK(weft_cancel_after(r->next, 1 * MS));
    atomic_store(&r->done, 1);
}

TEST(cancel_deadline_callback_may_arm_another_deadline) {
    weft_cancel_token *a = new_token(), *b = new_token();
    struct rearm r = {.next = b};
    ASSERT_OK(weft_cancel_token_on_cancel(a, rearm_next, &r, NULL));
    ASSERT_OK(weft_cancel_after(a, 1 * MS));
    uint64_t t0 = weft_cancel_now_ns();
    while (!weft_cancel_token_is_cancelled(b) && weft_cancel_now_ns() - t0 < 5 * SEC) sleep_us(500);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(b));
    weft_cancel_token_destroy(a);
    weft_cancel_token_destroy(b);
}

static uint64_t process_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

TEST(cancel_idle_timer_thread_uses_no_cpu) {
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_after(t, 3600 * SEC)); /* the thread exists and waits an hour */
    sleep_us(20000);
    uint64_t c0 = process_cpu_ns();
    sleep_us(300000);
    uint64_t used = process_cpu_ns() - c0;
    ASSERT_LT(used, 30 * MS); /* 10% of the wait: a polling thread would use it all */
    weft_cancel_token_destroy(t);
}

/* Armed from several threads at once, with random short delays: all fire,
 * none early. */
struct many {
    weft_cancel_token *t[64];
    uint64_t when[64];
    _Atomic uint64_t at[64];
};
static void stamp(void *arg, const char *reason) { atomic_store((_Atomic uint64_t *)arg, weft_cancel_now_ns()); }
static void *arm_many(void *p) {
    struct many *m = p;
    for (int i = 0; i < 64; i++) {
        m->when[i] = weft_cancel_now_ns() + (uint64_t)((i * 7919) % 20) * MS;
        ASSERT_OK(weft_cancel_at(m->t[i], m->when[i]));
    }
    return NULL;
}

TEST(cancel_deadlines_armed_from_many_threads_all_fire_never_early) {
    struct many m[4];
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 64; i++) {
            m[k].t[i] = new_token();
            atomic_init(&m[k].at[i], 0);
            ASSERT_OK(weft_cancel_token_on_cancel(m[k].t[i], stamp, &m[k].at[i], NULL));
        }
    pthread_t th[4];
    for (int k = 0; k < 4; k++) pthread_create(&th[k], NULL, arm_many, &m[k]);
    for (int k = 0; k < 4; k++) pthread_join(th[k], NULL);
    uint64_t t0 = weft_cancel_now_ns();
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 64; i++) {
            while (atomic_load(&m[k].at[i]) == 0 && weft_cancel_now_ns() - t0 < 5 * SEC) sleep_us(500);
            ASSERT_TRUE(weft_cancel_token_is_cancelled(m[k].t[i]));
            ASSERT_GE(atomic_load(&m[k].at[i]), m[k].when[i]);
            weft_cancel_token_destroy(m[k].t[i]);
        }
    ASSERT_EQ(weft__timer_armed(), 0);
}

/* A reset racing its token's deadline: once it returns WEFT_OK the token is
 * re-armed for good, never cancelled a moment later by that deadline.  Before,
 * reset cleared the flag and only then disarmed, so a deadline firing between
 * the two (or already taken off the heap and about to cancel) cancelled the
 * token again after reset had said it was not.  Now it disarms first and
 * answers WEFT_EBUSY for a fire under way. */
TEST(a_reset_racing_the_deadline_leaves_the_token_not_cancelled_when_it_succeeds) {
    weft_cancel_token *t = new_token();
    int ok = 0, busy = 0, wrong = 0;
    for (int i = 0; i < 3000; i++) {
        /* Reset 0-150 us after the deadline: the timer thread wakes a little
         * late, so some resets meet the fire under way. */
        uint64_t d = 20000, late = (uint64_t)(i % 151) * 1000;
        uint64_t t0 = weft_cancel_now_ns();
        ASSERT_OK(weft_cancel_after(t, d));
        while (weft_cancel_now_ns() - t0 < d + late) {
        }
        weft_status st = weft_cancel_token_reset(t);
        if (st == WEFT_EBUSY) {
            busy++;
            while (weft_cancel_token_reset(t) == WEFT_EBUSY) sleep_us(10);
            continue;
        }
        ASSERT_OK(st);
        ok++;
        sleep_us(200); /* a late cancel would land by now */
        if (weft_cancel_token_is_cancelled(t)) {
            wrong++;
            ASSERT_OK(weft_cancel_token_reset(t));
        }
    }
    ASSERT_EQ(wrong, 0);
    ASSERT_GT(ok, 0);
    ASSERT_EQ(weft__timer_armed(), 0);
    (void)busy;
    weft_cancel_token_destroy(t);
}
