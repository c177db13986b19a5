/* Deadlines: one timer thread per process and a binary heap of armed timers.
 *
 * Why one per process and not one per executor: a token belongs to no
 * executor (one token may stop runs on two executors, or plain threads that
 * poll it), so its deadline cannot name one; and a thread that sleeps in a
 * futex until the earliest deadline costs nothing but its stack.  It is
 * started by the first deadline ever armed, so a program that uses none has no
 * such thread, and it lives until the process ends (nothing to join at exit,
 * where a deadline may still be armed).
 *
 * The heap lives under one lock.  The thread never calls out while holding it
 * (the self-deadlock of the seed's watchdog): it pops the due timer, takes a
 * reference to its token, unlocks, and only then cancels, which runs
 * callbacks that may arm or disarm deadlines themselves.  A timer's memory
 * (in the token, or a deadline scope's own block) is not touched after the
 * pop, so its owner may free it as soon as disarm returns. */
#include "cancel/cancel.h"
#include "core/alloc.h"
#include "core/error_detail.h"

static struct {
    weft__mutex mu;
    weft__timer **heap;
    size_t n, cap;
    bool started;
    uint32_t generation; /* weft__fork_generation the thread was started in */
    weft__thread thread;
    /* Futex word of the sleeping thread: bumped (under mu) when the earliest
     * deadline moves earlier. */
    _Atomic uint32_t wake;
} T;
static _Atomic int T_once;

/* fork() while another thread held T.mu left the child's first arm waiting
 * for ever; and a child of a program that made no executor before the fork
 * never started its own thread (no fork was counted).  The lock is held
 * across the fork, and the guard counts forks. */
static void fork_prepare(void) { weft__mutex_lock(&T.mu); }
static void fork_after(void) { weft__mutex_unlock(&T.mu); }

/* weft_set_allocator's hook (core/alloc.h): the heap is the process's and
 * is kept while empty, so a switch gives it back to the allocator that made
 * it, and the next grow takes a block of the new one (the new allocator's
 * realloc of the old one's block aborted the process).  With timers armed it
 * stays: they belong to tokens and scopes alive across the switch, which
 * common.h leaves to the program. */
static void heap_flush(void) {
    weft__mutex_lock(&T.mu);
    if (T.n == 0 && T.heap) {
        weft__free(T.heap, T.cap * sizeof *T.heap);
        T.heap = NULL;
        T.cap = 0;
    }
    weft__mutex_unlock(&T.mu);
}

static int timer_setup(void) {
    if (weft__mutex_init(&T.mu) != 0) return WEFT_ESYS;
    weft__fork_guard(fork_prepare, fork_after, fork_after);
    weft__alloc_on_switch(heap_flush);
    return 0;
}

/* ---- the heap (under T.mu) ---- */

static void put(size_t i, weft__timer *e) {
    T.heap[i] = e;
    e->idx = i;
}

static void sift_up(size_t i) {
    weft__timer *e = T.heap[i];
    while (i > 0 && T.heap[(i - 1) / 2]->when > e->when) {
        put(i, T.heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    put(i, e);
}

static void sift_down(size_t i) {
    weft__timer *e = T.heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= T.n) break;
        if (c + 1 < T.n && T.heap[c + 1]->when < T.heap[c]->when) c++;
        if (T.heap[c]->when >= e->when) break;
        put(i, T.heap[c]);
        i = c;
    }
    put(i, e);
}

static void remove_at(size_t i) {
    weft__timer *e = T.heap[i];
    e->idx = WEFT__TIMER_IDLE;
    weft__timer *last = T.heap[--T.n];
    if (i == T.n) return;
    put(i, last);
    sift_down(i);
    sift_up(last->idx);
}

static bool grow(void) {
    if (T.n < T.cap) return true;
    size_t cap = T.cap ? 2 * T.cap : 64;
    weft__timer **h = weft__realloc(T.heap, T.cap * sizeof *h, cap * sizeof *h);
    if (!h) return false;
    T.heap = h;
    T.cap = cap;
    return true;
}

/* ---- the thread ---- */

/* Pops the due timer at the top and cancels its token, with T.mu released. */
static void fire_top(void) {
    weft__timer *e = T.heap[0];
    weft_cancel_token *t = e->token;
    remove_at(0);
    /* A token whose last reference is being dropped is left alone: its
     * destroy disarms under T.mu, which it is waiting for now or did before. */
    bool live = weft__cancel_try_retain(t);
    /* A reset that disarms after this unlock finds the fire under way
     * (weft_cancel_token_reset: WEFT_EBUSY) instead of a token cancelled just
     * after it said the token was re-armed.  Only the token's own deadline
     * says so: its memory lives as long as the reference just taken, while a
     * scope's timer (a weft_deadline's block) may be gone as soon as
     * weft_deadline_end has disarmed it, which does not wait for this
     * cancel, and reset never asks about a scope. */
    bool own = live && e == &t->deadline;
    if (own) atomic_store_explicit(&e->firing, true, memory_order_relaxed);
    weft__mutex_unlock(&T.mu);
    if (live) {
        (void)weft_cancel_token_cancel_with(t, WEFT__DEADLINE_REASON);
        if (own) atomic_store_explicit(&e->firing, false, memory_order_release); /* before t may be freed */
        weft_cancel_token_destroy(t);
    }
    weft__mutex_lock(&T.mu);
}

static void *timer_main(void *arg) {
    (void)arg;
    weft__thread_set_name("weft-timer");
    weft__mutex_lock(&T.mu);
    for (;;) {
        uint64_t wait = UINT64_MAX; /* nothing armed: sleep until woken */
        if (T.n) {
            uint64_t now = weft__now_ns();
            if (T.heap[0]->when <= now) {
                fire_top();
                continue;
            }
            wait = T.heap[0]->when - now;
        }
        uint32_t seen = atomic_load_explicit(&T.wake, memory_order_relaxed);
        weft__mutex_unlock(&T.mu);
        /* An arm after the unlock bumps `wake`: the futex sees the change. */
        (void)weft__futex_wait(&T.wake, seen, wait);
        weft__mutex_lock(&T.mu);
    }
    return NULL;
}

/* Starts the thread if this process has none (first use, or a child after
 * fork(), which has the heap but not the thread).  Under T.mu. */
static int ensure_thread(void) {
    uint32_t gen = atomic_load_explicit(&weft__fork_generation, memory_order_relaxed);
    if (T.started && T.generation == gen) return 0;
    int st = weft__thread_start(&T.thread, timer_main, NULL, 0);
    if (st != 0) return st;
    T.started = true;
    T.generation = gen;
    return 0;
}

int weft__timer_arm(weft__timer *e, uint64_t when) {
    int st = weft__cancel_once(&T_once, timer_setup);
    if (st != 0) return st;
    weft__mutex_lock(&T.mu);
    st = ensure_thread();
    if (st == 0 && e->idx == WEFT__TIMER_IDLE && !grow()) st = WEFT_ENOMEM;
    if (st == 0) {
        e->when = when;
        if (e->idx == WEFT__TIMER_IDLE) {
            T.n++;
            put(T.n - 1, e);
        }
        sift_down(e->idx);
        sift_up(e->idx);
        if (e->idx == 0) { /* the earliest moved: the thread sleeps too long */
            atomic_fetch_add_explicit(&T.wake, 1, memory_order_relaxed);
            weft__futex_wake(&T.wake, 1);
        }
    }
    weft__mutex_unlock(&T.mu);
    return st;
}

bool weft__timer_disarm(weft__timer *e) {
    /* Never armed in this process: nothing to take the lock for. */
    if (atomic_load_explicit(&T_once, memory_order_acquire) != 2) return false;
    weft__mutex_lock(&T.mu);
    bool armed = e->idx != WEFT__TIMER_IDLE;
    if (armed) remove_at(e->idx);
    weft__mutex_unlock(&T.mu);
    return armed;
}

size_t weft__timer_armed(void) {
    if (atomic_load_explicit(&T_once, memory_order_acquire) != 2) return 0;
    weft__mutex_lock(&T.mu);
    size_t n = T.n;
    weft__mutex_unlock(&T.mu);
    return n;
}

/* ---- public API ---- */

uint64_t weft_cancel_now_ns(void) { return weft__now_ns(); }

weft_status weft_cancel_at(weft_cancel_token *t, uint64_t when_ns) {
    if (!t) return weft__fail(__func__, WEFT_EINVAL, "t is NULL");
    if (weft_cancel_token_is_cancelled(t)) return WEFT_OK;
    /* The end of the clock never comes: no deadline, as weft_cancel_after
     * makes of a timeout past the clock's range (it armed one here, which
     * weft_cancel_disarm then reported removed, and after which it did not:
     * cancel.h). */
    if (when_ns == UINT64_MAX) {
        (void)weft__timer_disarm(&t->deadline);
        return WEFT_OK;
    }
    if (when_ns <= weft__now_ns()) {
        (void)weft__timer_disarm(&t->deadline);
        (void)weft_cancel_token_cancel_with(t, WEFT__DEADLINE_REASON);
        return WEFT_OK;
    }
    int st = weft__timer_arm(&t->deadline, when_ns);
    return st == 0 ? WEFT_OK : weft__fail(__func__, (weft_status)st, "the timer could not be armed");
}

/* now + d, or UINT64_MAX when that is past the clock's range. */
static uint64_t deadline_from_now(uint64_t d) {
    uint64_t now = weft__now_ns();
    return d < UINT64_MAX - now ? now + d : UINT64_MAX;
}

weft_status weft_cancel_after(weft_cancel_token *t, uint64_t timeout_ns) {
    if (!t) return weft__fail(__func__, WEFT_EINVAL, "t is NULL");
    /* UINT64_MAX, past the clock's range, never fires: weft_cancel_at makes
     * it no deadline. */
    return weft_cancel_at(t, deadline_from_now(timeout_ns));
}

bool weft_cancel_disarm(weft_cancel_token *t) { return t && weft__timer_disarm(&t->deadline); }

/* ---- scoped budgets ---- */

/* A scope's timer lives in a block of its own, which the struct points to
 * (private_[0]; NULL when no timer was needed).  It was embedded in the
 * struct, and the heap linked it by that address: a struct copied between
 * begin and end (a helper returning the scope by value) left the heap
 * pointing into a dead stack frame, which the timer thread read (a budget
 * that never fired, or a crash) and end wrote.  Now any copy ends it. */
static weft__timer *scope_timer(const weft_deadline *d) { return (weft__timer *)(uintptr_t)d->private_[0]; }

weft_status weft_deadline_begin(weft_deadline *d, weft_cancel_token *t, uint64_t budget_ns) {
    if (!d || !t) return weft__fail(__func__, WEFT_EINVAL, "d or t is NULL");
    d->token = weft_cancel_token_retain(t);
    d->start_ns = weft__now_ns();
    d->budget_ns = budget_ns;
    d->private_[0] = 0;
    uint64_t when = d->start_ns + budget_ns < d->start_ns ? UINT64_MAX : d->start_ns + budget_ns;
    if (when == UINT64_MAX || weft_cancel_token_is_cancelled(t)) return WEFT_OK;
    if (budget_ns == 0) {
        (void)weft_cancel_token_cancel_with(t, WEFT__DEADLINE_REASON);
        return WEFT_OK;
    }
    weft__timer *e = weft__alloc(sizeof *e);
    int st = e ? 0 : WEFT_ENOMEM;
    if (e) {
        *e = (weft__timer){0, WEFT__TIMER_IDLE, t, false};
        st = weft__timer_arm(e, when);
    }
    if (st == 0) {
        d->private_[0] = (uint64_t)(uintptr_t)e;
        return WEFT_OK;
    }
    weft__free(e, sizeof *e);
    d->token = NULL;
    weft_cancel_token_destroy(t);
    return weft__fail(__func__, (weft_status)st, "the timer could not be armed");
}

weft_status weft_deadline_end(weft_deadline *d) {
    if (!d || !d->token) return weft__fail(__func__, WEFT_EINVAL, "d or d->token is NULL");
    weft_cancel_token *t = d->token;
    weft__timer *e = scope_timer(d);
    /* Once disarm returns, the timer thread no longer touches e (timer.c, top). */
    if (e) (void)weft__timer_disarm(e);
    weft__free(e, sizeof *e);
    d->private_[0] = 0;
    bool over = weft__now_ns() - d->start_ns >= d->budget_ns;
    if (over) (void)weft_cancel_token_cancel_with(t, WEFT__DEADLINE_REASON);
    d->token = NULL;
    weft_cancel_token_destroy(t);
    return over ? WEFT_ETIMEDOUT : WEFT_OK;
}

weft_status weft_with_deadline(uint64_t budget_ns, weft_deadline_fn fn, void *arg, int *result) {
    if (result) *result = 0;
    if (!fn) return weft__fail(__func__, WEFT_EINVAL, "fn is NULL");
    weft_status st;
    weft_cancel_token *t = weft_cancel_token_create(NULL, &st);
    if (!t) return st;
    weft_deadline d;
    st = weft_deadline_begin(&d, t, budget_ns);
    if (st == WEFT_OK) {
        int r = fn(t, arg);
        if (result) *result = r;
        st = weft_deadline_end(&d);
    }
    weft_cancel_token_destroy(t);
    return st;
}
