/* The awkward paths of weft/cancel.h's contracts: a token attached to two runs
 * on two executors; reset while a callback runs; a deadline on a token
 * destroyed before it fires; cancel_with a NULL, a 1 MB or a multi-byte
 * reason; children of a destroyed parent; the preemption handler installed
 * twice, at once. */
#include "cancel_test.h"

#include "cancel/cancel.h" /* weft__timer_armed */

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* An async task that polls its context until cancelled, and reports. */
struct poller {
    atomic_int started;
    weft_status seen;
    char reason[64];
};
static int poll_until_cancelled(weft_ctx *cx, void *p) {
    struct poller *s = p;
    atomic_store(&s->started, 1);
    weft_status st;
    uint64_t t0 = now_ns();
    while ((st = weft_ctx_check(cx)) == WEFT_OK && now_ns() - t0 < 10 * SEC) sleep_us(50);
    s->seen = st;
    snprintf(s->reason, sizeof s->reason, "%s", weft_ctx_cancel_reason(cx));
    return 0;
}

TEST(cancel_one_token_stops_runs_on_two_executors_with_its_reason) {
    weft_executor *ex[2] = {make_executor(1), make_executor(2)};
    struct poller s[2] = {0};
    weft_future *f[2];
    weft_cancel_token *tok = new_token();
    for (int i = 0; i < 2; i++) {
        ASSERT_OK(weft_async(ex[i], poll_until_cancelled, &s[i], &f[i]));
        ASSERT_OK(weft_cancel_attach(tok, f[i]));
    }
    for (int i = 0; i < 2; i++) ASSERT_TRUE(wait_flag(&s[i].started, 1, 5));
    ASSERT_OK(weft_cancel_token_cancel_with(tok, "shutdown"));
    for (int i = 0; i < 2; i++) {
        ASSERT_STATUS(weft_future_wait(f[i]), WEFT_ECANCELED);
        ASSERT_STATUS(s[i].seen, WEFT_ECANCELED);
        ASSERT_STREQ(s[i].reason, "shutdown");
        weft_future_destroy(f[i]);
    }
    /* The token outlives one executor and is reused on the other. */
    weft_executor_destroy(ex[0]);
    ASSERT_OK(weft_cancel_token_reset(tok));
    struct poller again = {0};
    weft_future *g;
    ASSERT_OK(weft_async(ex[1], poll_until_cancelled, &again, &g));
    ASSERT_OK(weft_cancel_attach(tok, g));
    ASSERT_TRUE(wait_flag(&again.started, 1, 5));
    ASSERT_OK(weft_cancel_token_cancel_with(tok, "again"));
    ASSERT_STATUS(weft_future_wait(g), WEFT_ECANCELED);
    ASSERT_STREQ(again.reason, "again");
    weft_future_destroy(g);
    weft_cancel_token_destroy(tok);
    weft_executor_destroy(ex[1]);
}

/* A callback that holds its thread until told, then copies the reason it was
 * given (the token's own text). */
struct slow_cb {
    atomic_int entered, go;
    char reason[64];
};
static void slow_callback(void *arg, const char *reason) {
    struct slow_cb *s = arg;
    atomic_store(&s->entered, 1);
    while (!atomic_load(&s->go)) sleep_us(100);
    snprintf(s->reason, sizeof s->reason, "%s", reason);
}
struct late_reg {
    weft_cancel_token *tok;
    struct slow_cb *cb;
};
static void *register_late(void *p) {
    struct late_reg *r = p;
    /* The token is cancelled already: the callback runs here, at once. */
    if (weft_cancel_token_on_cancel(r->tok, slow_callback, r->cb, NULL) != WEFT_OK) abort();
    return NULL;
}
static void *cancel_it(void *p) {
    (void)weft_cancel_token_cancel_with(p, "first");
    return NULL;
}

TEST(cancel_reset_is_refused_while_any_callback_of_the_token_runs) {
    /* A callback run by the cancel itself. */
    weft_cancel_token *tok = new_token();
    struct slow_cb a = {0};
    ASSERT_OK(weft_cancel_token_on_cancel(tok, slow_callback, &a, NULL));
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, cancel_it, tok), 0);
    ASSERT_TRUE(wait_flag(&a.entered, 1, 5));
    ASSERT_STATUS(weft_cancel_token_reset(tok), WEFT_EBUSY);
    atomic_store(&a.go, 1);
    pthread_join(th, NULL);
    ASSERT_STREQ(a.reason, "first");
    /* A callback registered after the cancel, which runs at once on the
     * registering thread: reset must wait for it as well, or the text the
     * callback was handed is rewritten under it. */
    struct slow_cb b = {0};
    struct late_reg r = {tok, &b};
    ASSERT_EQ(pthread_create(&th, NULL, register_late, &r), 0);
    ASSERT_TRUE(wait_flag(&b.entered, 1, 5));
    ASSERT_STATUS(weft_cancel_token_reset(tok), WEFT_EBUSY);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(tok));
    atomic_store(&b.go, 1);
    pthread_join(th, NULL);
    ASSERT_STREQ(b.reason, "first");
    ASSERT_OK(weft_cancel_token_reset(tok)); /* and once it has returned, reset works */
    ASSERT_FALSE(weft_cancel_token_is_cancelled(tok));
    weft_cancel_token_destroy(tok);
}

static void count_cb(void *arg, const char *reason) {
    (void)reason;
    atomic_fetch_add((atomic_int *)arg, 1);
}

TEST(cancel_deadline_of_a_token_destroyed_before_it_fires_never_fires) {
    atomic_int fired = 0;
    size_t before = weft__timer_armed();
    for (int i = 0; i < 64; i++) {
        weft_cancel_token *tok = new_token();
        ASSERT_OK(weft_cancel_token_on_cancel(tok, count_cb, &fired, NULL));
        /* 100..130 ms: far enough that a loaded machine destroys it first. */
        ASSERT_OK(weft_cancel_after(tok, (uint64_t)(i % 4) * 10 * MS + 100 * MS));
        weft_cancel_token *child = weft_cancel_token_create(tok, NULL);
        ASSERT_NOT_NULL(child);
        ASSERT_OK(weft_cancel_after(child, 100 * MS));
        weft_cancel_token_destroy(child);
        weft_cancel_token_destroy(tok);
    }
    ASSERT_EQ(weft__timer_armed(), before);
    sleep_us(150000); /* past every deadline */
    ASSERT_EQ(atomic_load(&fired), 0);
    /* Destroyed while its deadline is firing: a scoped budget's reference and
     * the timer's keep it whole (ASan checks). */
    for (int i = 0; i < 200; i++) {
        weft_cancel_token *tok = new_token();
        ASSERT_OK(weft_cancel_after(tok, 1000u));
        if (i & 1) sleep_us(1);
        weft_cancel_token_destroy(tok);
    }
    sleep_us(2000);
    ASSERT_EQ(weft__timer_armed(), before);
}

TEST(cancel_with_null_or_huge_reason_keeps_a_bounded_copy) {
    weft_cancel_token *tok = new_token();
    ASSERT_OK(weft_cancel_token_cancel_with(tok, NULL));
    ASSERT_STREQ(weft_cancel_token_reason(tok), "");
    ASSERT_OK(weft_cancel_token_reset(tok));
    size_t mb = (size_t)1 << 20;
    char *big = malloc(mb + 1);
    ASSERT_NOT_NULL(big);
    memset(big, 'x', mb);
    big[mb] = 0;
    ASSERT_OK(weft_cancel_token_cancel_with(tok, big));
    ASSERT_EQ(strlen(weft_cancel_token_reason(tok)), WEFT_CANCEL_REASON_MAX - 1);
    ASSERT_STATUS(weft_cancel_token_cancel_with(tok, "later"), WEFT_ECANCELED); /* the first stays */
    ASSERT_EQ(weft_cancel_token_reason(tok)[0], 'x');
    /* Not NUL-terminated within the limit is fine too: only the limit is read. */
    big[mb - 1] = 'x';
    weft_cancel_token *tok2 = new_token();
    ASSERT_OK(weft_cancel_token_cancel_with(tok2, big + mb - (WEFT_CANCEL_REASON_MAX - 1)));
    ASSERT_EQ(strlen(weft_cancel_token_reason(tok2)), WEFT_CANCEL_REASON_MAX - 1);
    free(big);
    weft_cancel_token_destroy(tok2);
    weft_cancel_token_destroy(tok);
}

/* True if s is whole UTF-8 (no sequence cut short at its end). */
static bool utf8_whole(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
        if (n == 0) return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80) return false;
        p += n;
    }
    return true;
}

TEST(cancel_reason_truncated_at_a_character_boundary) {
    /* "é" is two bytes: a long reason of them, at every offset, is cut whole. */
    char text[2 * WEFT_CANCEL_REASON_MAX + 8];
    for (int shift = 0; shift < 4; shift++) {
        size_t n = 0;
        for (int i = 0; i < shift; i++) text[n++] = 'a';
        while (n + 4 < sizeof text) {
            text[n++] = (char)0xE2; /* "€", three bytes, and "é", two */
            text[n++] = (char)0x82;
            text[n++] = (char)0xAC;
            if (n + 3 < sizeof text) {
                text[n++] = (char)0xC3;
                text[n++] = (char)0xA9;
            }
        }
        text[n] = 0;
        weft_cancel_token *tok = new_token();
        ASSERT_OK(weft_cancel_token_cancel_with(tok, text));
        const char *r = weft_cancel_token_reason(tok);
        ASSERT_TRUE(utf8_whole(r));
        ASSERT_GE(strlen(r), WEFT_CANCEL_REASON_MAX - 4);
        ASSERT_EQ(memcmp(r, text, strlen(r)), 0);
        weft_cancel_token_destroy(tok);
    }
}

TEST(cancel_children_of_a_destroyed_parent_still_follow_the_grandparent) {
    atomic_int fired = 0;
    weft_cancel_token *root = new_token();
    weft_cancel_token *mid = weft_cancel_token_create(root, NULL);
    ASSERT_NOT_NULL(mid);
    weft_cancel_token *leaf = weft_cancel_token_create(mid, NULL);
    ASSERT_NOT_NULL(leaf);
    ASSERT_OK(weft_cancel_token_on_cancel(leaf, count_cb, &fired, NULL));
    weft_cancel_token_destroy(mid); /* the user's reference; leaf keeps it */
    /* A child made now of the still-live parent, through the leaf's link. */
    ASSERT_OK(weft_cancel_token_cancel_with(root, "root"));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(leaf));
    ASSERT_STREQ(weft_cancel_token_reason(leaf), "root");
    ASSERT_EQ(atomic_load(&fired), 1);
    /* Reset and re-link: the chain is still there. */
    ASSERT_OK(weft_cancel_token_reset(root));
    ASSERT_OK(weft_cancel_token_reset(leaf)); /* mid is still cancelled: leaf is again */
    ASSERT_TRUE(weft_cancel_token_is_cancelled(leaf));
    weft_cancel_token_destroy(root); /* leaf -> mid -> root still held */
    ASSERT_STREQ(weft_cancel_token_reason(leaf), "root");
    weft_cancel_token_destroy(leaf); /* frees all three (ASan: no leak) */
}

/* ---- preemption installed twice, at once ---- */

static pthread_barrier_t install_barrier;
static atomic_int install_failed;
static void *install_once(void *p) {
    (void)p;
    pthread_barrier_wait(&install_barrier);
    if (weft_preempt_install(NULL) != WEFT_OK) atomic_store(&install_failed, 1);
    return NULL;
}

/* One trial, in a child process (a handler is installed once per process):
 * 4 threads install at once; every call must succeed, and the handler must
 * not chain to itself (raise would recurse until the stack overflows). */
static int install_race_child(void) {
    pthread_t th[4];
    pthread_barrier_init(&install_barrier, NULL, 4);
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, install_once, NULL);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    if (atomic_load(&install_failed)) return 1;
    raise(SIGUSR2);
    return weft_preempt_requested() ? 0 : 2;
}

TEST(preempt_install_twice_at_once_neither_refuses_nor_chains_to_itself) {
    int trials = (int)test_scale(200);
    for (int i = 0; i < trials; i++) {
        fflush(stdout);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) _exit(install_race_child());
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL_("trial %d: %s %d", i, WIFEXITED(status) ? "exit" : "signal",
                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    }
}
