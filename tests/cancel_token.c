/* Cancellation tokens: flag, reason, count, reset, callbacks, hierarchy, and a
 * stress test of cancels racing registrations and removals. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>

#include "test_util.h"

static weft_cancel_token *new_token(weft_cancel_token *parent) {
    weft_status st;
    weft_cancel_token *t = weft_cancel_token_create(parent, &st);
    ASSERT_OK(st);
    ASSERT_NOT_NULL(t);
    return t;
}

TEST(cancel_token_sets_flag_reason_and_count_once) {
    weft_cancel_token *t = new_token(NULL);
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    ASSERT_STREQ(weft_cancel_token_reason(t), "");
    ASSERT_EQ(weft_cancel_token_cancel_count(t), 0);
    ASSERT_OK(weft_cancel_token_cancel_with(t, "client went away"));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    ASSERT_STREQ(weft_cancel_token_reason(t), "client went away");
    /* A second cancel changes nothing: the first reason stays. */
    ASSERT_STATUS(weft_cancel_token_cancel_with(t, "other"), WEFT_ECANCELED);
    ASSERT_STATUS(weft_cancel_token_cancel(t), WEFT_ECANCELED);
    ASSERT_STREQ(weft_cancel_token_reason(t), "client went away");
    ASSERT_EQ(weft_cancel_token_cancel_count(t), 1);
    weft_cancel_token_destroy(t);
}

TEST(cancel_reason_is_copied_and_truncated) {
    weft_cancel_token *t = new_token(NULL);
    char buf[600];
    memset(buf, 'x', sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    ASSERT_OK(weft_cancel_token_cancel_with(t, buf));
    memset(buf, 'y', 10); /* the token kept its own copy */
    const char *r = weft_cancel_token_reason(t);
    ASSERT_EQ(strlen(r), WEFT_CANCEL_REASON_MAX - 1);
    ASSERT_EQ(r[0], 'x');
    weft_cancel_token_destroy(t);
}

TEST(cancel_null_arguments_give_status) {
    ASSERT_STATUS(weft_cancel_token_cancel(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_cancel_token_cancel_with(NULL, "x"), WEFT_EINVAL);
    ASSERT_FALSE(weft_cancel_token_is_cancelled(NULL));
    ASSERT_STREQ(weft_cancel_token_reason(NULL), "");
    ASSERT_STATUS(weft_cancel_token_reset(NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_cancel_token_cancel_count(NULL), 0);
    ASSERT_NULL(weft_cancel_token_retain(NULL));
    weft_cancel_token_destroy(NULL);
    weft_cancel_callback *cb = (weft_cancel_callback *)1;
    ASSERT_STATUS(weft_cancel_token_on_cancel(NULL, NULL, NULL, &cb), WEFT_EINVAL);
    ASSERT_NULL(cb);
    ASSERT_FALSE(weft_cancel_callback_remove(NULL));
    ASSERT_STATUS(weft_cancel_after(NULL, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_cancel_at(NULL, 1), WEFT_EINVAL);
    ASSERT_FALSE(weft_cancel_disarm(NULL));
    ASSERT_STATUS(weft_deadline_begin(NULL, NULL, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_deadline_end(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_with_deadline(1, NULL, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_cancel_attach(NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_ctx_check(NULL), WEFT_EINVAL);
    ASSERT_STREQ(weft_ctx_cancel_reason(NULL), "");
}

struct seen {
    atomic_int calls;
    char reason[64];
};
static void record(void *arg, const char *reason) {
    struct seen *s = arg;
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    atomic_fetch_add(&s->calls, 1);
}

TEST(cancel_callback_runs_once_with_the_reason) {
    weft_cancel_token *t = new_token(NULL);
    struct seen a = {0}, b = {0};
    weft_cancel_callback *ha;
    ASSERT_OK(weft_cancel_token_on_cancel(t, record, &a, &ha));
    ASSERT_OK(weft_cancel_token_on_cancel(t, record, &b, NULL)); /* no handle: the token frees it */
    ASSERT_EQ(atomic_load(&a.calls), 0);
    ASSERT_OK(weft_cancel_token_cancel_with(t, "stop"));
    (void)weft_cancel_token_cancel(t);
    ASSERT_EQ(atomic_load(&a.calls), 1);
    ASSERT_EQ(atomic_load(&b.calls), 1);
    ASSERT_STREQ(a.reason, "stop");
    ASSERT_FALSE(weft_cancel_callback_remove(ha)); /* it ran */
    weft_cancel_token_destroy(t);
}

TEST(cancel_callback_registered_after_cancel_runs_at_once) {
    weft_cancel_token *t = new_token(NULL);
    ASSERT_OK(weft_cancel_token_cancel_with(t, "late"));
    struct seen a = {0};
    weft_cancel_callback *h;
    ASSERT_OK(weft_cancel_token_on_cancel(t, record, &a, &h));
    ASSERT_EQ(atomic_load(&a.calls), 1);
    ASSERT_STREQ(a.reason, "late");
    ASSERT_OK(weft_cancel_token_on_cancel(t, record, &a, NULL));
    ASSERT_EQ(atomic_load(&a.calls), 2);
    ASSERT_FALSE(weft_cancel_callback_remove(h));
    weft_cancel_token_destroy(t);
}

TEST(cancel_removed_callback_never_runs) {
    weft_cancel_token *t = new_token(NULL);
    struct seen a = {0};
    weft_cancel_callback *h;
    ASSERT_OK(weft_cancel_token_on_cancel(t, record, &a, &h));
    ASSERT_TRUE(weft_cancel_callback_remove(h));
    ASSERT_OK(weft_cancel_token_cancel(t));
    ASSERT_EQ(atomic_load(&a.calls), 0);
    weft_cancel_token_destroy(t);
}

/* A callback that removes its own handle and cancels its own token again
 * (both from inside the cancel), and one that cancels another token. */
struct self_remove {
    weft_cancel_callback *h;
    weft_cancel_token *t, *other;
    atomic_int calls;
    int removed, again;
};
static void remove_self(void *arg, const char *reason) {
    struct self_remove *s = arg;
    s->removed = weft_cancel_callback_remove(s->h);
    s->again = weft_cancel_token_cancel(s->t);
    (void)weft_cancel_token_cancel_with(s->other, "chained");
    atomic_fetch_add(&s->calls, 1);
}

TEST(cancel_callback_may_remove_itself_and_cancel_from_inside) {
    weft_cancel_token *t = new_token(NULL), *other = new_token(NULL);
    struct self_remove s = {.t = t, .other = other};
    ASSERT_OK(weft_cancel_token_on_cancel(t, remove_self, &s, &s.h));
    ASSERT_OK(weft_cancel_token_cancel(t));
    ASSERT_EQ(atomic_load(&s.calls), 1);
    ASSERT_EQ(s.removed, 0); /* it was running: not "removed before it ran" */
    ASSERT_STATUS(s.again, WEFT_ECANCELED);
    ASSERT_STREQ(weft_cancel_token_reason(other), "chained");
    weft_cancel_token_destroy(t);
    weft_cancel_token_destroy(other);
}

TEST(cancel_reset_rearms_for_reuse_and_keeps_the_count) {
    weft_cancel_token *t = new_token(NULL);
    struct seen a = {0};
    for (int round = 1; round <= 3; round++) {
        ASSERT_OK(weft_cancel_token_on_cancel(t, record, &a, NULL));
        ASSERT_OK(weft_cancel_token_cancel_with(t, "again"));
        ASSERT_EQ(atomic_load(&a.calls), round); /* callbacks run once per registration */
        ASSERT_OK(weft_cancel_token_reset(t));
        ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
        ASSERT_STREQ(weft_cancel_token_reason(t), "");
    }
    ASSERT_EQ(weft_cancel_token_cancel_count(t), 3);
    weft_cancel_token_destroy(t);
}

TEST(cancel_parent_cancels_children_not_the_reverse) {
    weft_cancel_token *root = new_token(NULL);
    weft_cancel_token *mid = new_token(root), *leaf = new_token(mid), *sib = new_token(root);
    ASSERT_OK(weft_cancel_token_cancel_with(leaf, "leaf only"));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(mid));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(root));
    ASSERT_OK(weft_cancel_token_cancel_with(root, "shutdown"));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(mid));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(sib));
    ASSERT_STREQ(weft_cancel_token_reason(mid), "shutdown");
    ASSERT_STREQ(weft_cancel_token_reason(leaf), "leaf only"); /* cancelled first, keeps its reason */
    /* A child made under a cancelled parent starts cancelled; a reset child
     * of a cancelled parent is cancelled again at once. */
    weft_cancel_token *late = new_token(root);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(late));
    ASSERT_OK(weft_cancel_token_reset(mid));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(mid));
    /* Children keep their parent alive: drop the root first. */
    weft_cancel_token_destroy(root);
    ASSERT_OK(weft_cancel_token_reset(late));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(late));
    weft_cancel_token_destroy(late);
    weft_cancel_token_destroy(sib);
    weft_cancel_token_destroy(leaf);
    weft_cancel_token_destroy(mid);
}

TEST(cancel_reset_child_relinks_to_a_live_parent) {
    weft_cancel_token *p = new_token(NULL), *c = new_token(p);
    ASSERT_OK(weft_cancel_token_cancel(p));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(c));
    ASSERT_OK(weft_cancel_token_reset(p));
    ASSERT_OK(weft_cancel_token_reset(c));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(c));
    ASSERT_OK(weft_cancel_token_cancel_with(p, "second"));
    ASSERT_TRUE(weft_cancel_token_is_cancelled(c));
    ASSERT_STREQ(weft_cancel_token_reason(c), "second");
    weft_cancel_token_destroy(c);
    weft_cancel_token_destroy(p);
}

/* ---- stress: cancels racing registrations and removals ---- */

enum { STRESS_THREADS = 4, SLOTS = 64 };

struct stress {
    weft_cancel_token *t;
    pthread_barrier_t go;
    atomic_int ran[STRESS_THREADS][SLOTS];
    atomic_int cancels_won;
    atomic_int lost; /* a cancel returned but is_cancelled was false */
};
struct stress_arg {
    struct stress *s;
    int id;
};

static void bump_slot(void *arg, const char *reason) { atomic_fetch_add((atomic_int *)arg, 1); }

static void *stress_thread(void *p) {
    struct stress_arg *a = p;
    struct stress *s = a->s;
    pthread_barrier_wait(&s->go);
    if (a->id == 0 || a->id == 1) { /* cancellers */
        if (a->id == 1) sleep_us(1);
        if (weft_cancel_token_cancel_with(s->t, "race") == WEFT_OK) atomic_fetch_add(&s->cancels_won, 1);
        if (!weft_cancel_token_is_cancelled(s->t)) atomic_fetch_add(&s->lost, 1);
        return NULL;
    }
    for (int k = 0; k < SLOTS; k++) { /* registrars: register, maybe remove at once */
        atomic_int *slot = &s->ran[a->id][k];
        weft_cancel_callback *h;
        ASSERT_OK(weft_cancel_token_on_cancel(s->t, bump_slot, slot, &h));
        bool before = weft_cancel_callback_remove(h);
        /* Once remove returns, the count is final: 0 if removed first, else 1. */
        int n = atomic_load(slot);
        if (n != (before ? 0 : 1)) TEST_FAIL_("slot ran %d times, remove said %d", n, before);
    }
    return NULL;
}

TEST(cancel_stress_callbacks_run_exactly_once_or_never) {
    int rounds = (int)test_scale(2000);
    if (rounds < 50) rounds = 50;
    for (int r = 0; r < rounds; r++) {
        struct stress s = {.t = new_token(NULL)};
        pthread_barrier_init(&s.go, NULL, STRESS_THREADS);
        pthread_t th[STRESS_THREADS];
        struct stress_arg args[STRESS_THREADS];
        for (int i = 0; i < STRESS_THREADS; i++) {
            args[i] = (struct stress_arg){&s, i};
            pthread_create(&th[i], NULL, stress_thread, &args[i]);
        }
        for (int i = 0; i < STRESS_THREADS; i++) pthread_join(th[i], NULL);
        ASSERT_EQ(atomic_load(&s.cancels_won), 1);
        ASSERT_EQ(atomic_load(&s.lost), 0);
        ASSERT_EQ(weft_cancel_token_cancel_count(s.t), 1);
        pthread_barrier_destroy(&s.go);
        weft_cancel_token_destroy(s.t);
    }
}

/* Callbacks without handles, registered from many threads while others
 * cancel: each runs exactly once (all are registered before the end). */
struct fire_all {
    weft_cancel_token *t;
    atomic_int ran;
    int per_thread;
};
static void *register_many(void *p) {
    struct fire_all *f = p;
    for (int i = 0; i < f->per_thread; i++) ASSERT_OK(weft_cancel_token_on_cancel(f->t, bump_slot, &f->ran, NULL));
    return NULL;
}

TEST(cancel_stress_no_registration_is_lost_across_a_cancel) {
    int rounds = (int)test_scale(200);
    if (rounds < 20) rounds = 20;
    for (int r = 0; r < rounds; r++) {
        struct fire_all f = {.t = new_token(NULL), .per_thread = 200};
        pthread_t th[3];
        for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, register_many, &f);
        ASSERT_OK(weft_cancel_token_cancel(f.t));
        for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
        ASSERT_EQ(atomic_load(&f.ran), 3 * f.per_thread);
        weft_cancel_token_destroy(f.t);
    }
}
