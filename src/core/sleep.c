/* Sleep and wake-up; see sleep.h and docs/design.md. */
#include "core/sleep.h"

#include <limits.h>

void weft__sleep_init(weft__sleep *s, unsigned workers) {
    atomic_init(&s->state, (uint64_t)workers * WEFT__SLEEP_SEARCH_ONE);
    atomic_init(&s->epoch, 0);
}

void weft__sleep_notify(weft__sleep *s) {
    /* Order the caller's publication of the job before reading state: pairs with
     * the seq_cst RMW in weft__sleep_prepare (store-buffer / Dekker pattern). */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t v = atomic_load_explicit(&s->state, memory_order_seq_cst);
    for (;;) {
        if (WEFT__SLEEP_SEARCHING(v) > 0 || WEFT__SLEEP_IDLE(v) <= WEFT__SLEEP_TOKENS(v)) return;
        /* Count the worker we wake as a searcher now, and leave it a token. */
        if (atomic_compare_exchange_weak_explicit(&s->state, &v,
                                                  v + WEFT__SLEEP_SEARCH_ONE + WEFT__SLEEP_TOKEN_ONE,
                                                  memory_order_seq_cst, memory_order_seq_cst))
            break;
    }
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst);
    weft__futex_wake(&s->epoch, 1);
}

void weft__sleep_notify_many(weft__sleep *s, unsigned k) {
    atomic_thread_fence(memory_order_seq_cst); /* as in weft__sleep_notify */
    uint64_t v = atomic_load_explicit(&s->state, memory_order_seq_cst);
    unsigned n;
    for (;;) {
        /* Every idle worker without a token is a candidate, searchers or not:
         * the caller knows k jobs are ready now, so the wake-ups overlap instead
         * of running as a chain of one searcher waking the next. */
        unsigned free = WEFT__SLEEP_IDLE(v) - WEFT__SLEEP_TOKENS(v);
        n = k < free ? k : free;
        if (WEFT__SLEEP_IDLE(v) <= WEFT__SLEEP_TOKENS(v) || n == 0) return;
        if (atomic_compare_exchange_weak_explicit(&s->state, &v,
                                                  v + n * (WEFT__SLEEP_SEARCH_ONE + WEFT__SLEEP_TOKEN_ONE),
                                                  memory_order_seq_cst, memory_order_seq_cst))
            break;
    }
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst);
    weft__futex_wake(&s->epoch, (int)n);
}

uint32_t weft__sleep_prepare(weft__sleep *s) {
    /* The key must be read before we count ourselves idle: a waker that sees us
     * idle bumps the epoch after that, so our futex wait cannot sleep through it. */
    uint32_t key = atomic_load_explicit(&s->epoch, memory_order_seq_cst);
    atomic_fetch_add_explicit(&s->state, WEFT__SLEEP_IDLE_ONE - WEFT__SLEEP_SEARCH_ONE, memory_order_seq_cst);
    return key;
}

void weft__sleep_wait(weft__sleep *s, uint32_t key) {
    while (atomic_load_explicit(&s->epoch, memory_order_seq_cst) == key)
        weft__futex_wait(&s->epoch, key, UINT64_MAX);
}

void weft__sleep_leave_idle(weft__sleep *s) {
    uint64_t v = atomic_load_explicit(&s->state, memory_order_relaxed);
    for (;;) {
        uint64_t n = v - WEFT__SLEEP_IDLE_ONE;
        /* A token means a waker already counted a searcher for us. */
        n += WEFT__SLEEP_TOKENS(v) ? -WEFT__SLEEP_TOKEN_ONE : WEFT__SLEEP_SEARCH_ONE;
        if (atomic_compare_exchange_weak_explicit(&s->state, &v, n, memory_order_seq_cst, memory_order_relaxed))
            return;
    }
}

void weft__sleep_wake_all(weft__sleep *s) {
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst);
    weft__futex_wake(&s->epoch, INT_MAX);
}
