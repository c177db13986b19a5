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

/* ---- deadlines in a child process after fork() ---- */

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: a 1 ms deadline fires within 2 s.  Exit 0, or 3 (never fired),
 * 4 (refused). */
static int child_deadline_fires(void) {
    weft_cancel_token *c = weft_cancel_token_create(NULL, NULL);
    if (!c || weft_cancel_after(c, 1000000) != WEFT_OK) return 4;
    for (int k = 0; k < 2000 && !weft_cancel_token_is_cancelled(c); k++) usleep(1000);
    return weft_cancel_token_is_cancelled(c) ? 0 : 3;
}

static int child_exit(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A program that used a deadline but made no executor before fork(): the
 * child's deadline fires (the child starts its own timer thread; no fork was
 * counted before, so it thought the parent's thread was its own). */
TEST(a_deadline_fires_in_a_child_of_a_program_that_made_no_executor) {
#ifdef __SANITIZE_THREAD__ /* gcc's and clang's -fsanitize=thread */
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    ASSERT_NOT_NULL(t);
    ASSERT_OK(weft_cancel_after(t, 1000000));
    for (int k = 0; k < 5000 && !weft_cancel_token_is_cancelled(t); k++) usleep(1000);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    fflush(stdout);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(child_deadline_fires());
    ASSERT_EQ(child_exit(pid), 0);
    weft_cancel_token_destroy(t);
}

static atomic_int churn_stop;
static void *churn(void *arg) {
    weft_cancel_token *t = arg;
    while (!atomic_load(&churn_stop)) {
        if (weft_cancel_after(t, 1000000000ull) != WEFT_OK) break; /* arm and re-arm under the timer's lock */
        (void)weft_cancel_disarm(t);
    }
    return NULL;
}

/* fork() while another thread arms deadlines: the child never starts with the
 * timer's lock held by a thread it does not have (before: 14 of 20 children
 * hung on their first arm). */
TEST(a_child_forked_while_another_thread_arms_deadlines_can_arm_its_own) {
#ifdef __SANITIZE_THREAD__
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    ASSERT_NOT_NULL(t);
    ASSERT_OK(weft_cancel_after(t, 1000000000ull)); /* the timer is set up */
    atomic_store(&churn_stop, 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, churn, t), 0);
    usleep(10000);
    int trials = (int)test_scale(20), bad = 0;
    for (int i = 0; i < trials; i++) {
        fflush(stdout);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            alarm(10); /* a hung child dies of SIGALRM */
            _exit(child_deadline_fires());
        }
        if (child_exit(pid) != 0) bad++;
    }
    atomic_store(&churn_stop, 1);
    pthread_join(th, NULL);
    ASSERT_EQ(bad, 0);
    weft_cancel_token_destroy(t);
}
