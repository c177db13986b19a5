/* Sleep and wake-up; see sleep.h and docs/design.md. */
#include "core/sleep.h"

#include <limits.h>

void weft__sleep_init(weft__sleep *s, unsigned workers) {
    atomic_init(&s->state, (uint64_t)workers * WEFT__SLEEP_SEARCH_ONE);
    atomic_init(&s->epoch, 0);
}

/* Wakes up to k idle workers that hold no token yet; none at all if `unless_searching`
 * and a worker is searching (Tokio's rule, for a single new job). */
static void wake(weft__sleep *s, unsigned k, bool unless_searching) {
    /* Order the caller's publication of the job before reading state: pairs with
     * the seq_cst RMW in weft__sleep_prepare (store-buffer / Dekker pattern). */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t v = atomic_load_explicit(&s->state, memory_order_seq_cst);
    unsigned n;
    for (;;) {
        if (unless_searching && WEFT__SLEEP_SEARCHING(v) > 0) return;
        unsigned idle = WEFT__SLEEP_IDLE(v), tokens = WEFT__SLEEP_TOKENS(v);
        if (idle <= tokens || k == 0) return;
        n = k < idle - tokens ? k : idle - tokens;
        /* Count the workers we wake as searchers now, and leave each a token. */
        if (atomic_compare_exchange_weak_explicit(&s->state, &v,
                                                  v + n * (WEFT__SLEEP_SEARCH_ONE + WEFT__SLEEP_TOKEN_ONE),
                                                  memory_order_seq_cst, memory_order_seq_cst))
            break;
    }
    atomic_fetch_add_explicit(&s->epoch, 1, memory_order_seq_cst);
    weft__futex_wake(&s->epoch, (int)n);
}

void weft__sleep_notify(weft__sleep *s) { wake(s, 1, true); }

/* Searchers or not: the caller knows k jobs are ready now, so the wake-ups
 * overlap instead of running as a chain of one searcher waking the next. */
void weft__sleep_notify_many(weft__sleep *s, unsigned k) { wake(s, k, false); }

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

void weft__sleep_wait_for(weft__sleep *s, uint32_t key, uint64_t ns) {
    if (atomic_load_explicit(&s->epoch, memory_order_seq_cst) == key) weft__futex_wait(&s->epoch, key, ns);
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
