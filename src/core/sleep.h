/* Sleep and wake-up of idle workers: a futex event count plus Tokio's rule that a
 * new job wakes a sleeper only when no worker is already searching.  The protocol
 * and the proof that no wake-up is lost are in docs/design.md ("Sleep and wake").
 *
 * `state` packs three counters so that each transition is one atomic RMW:
 *   searching  workers looking for work (stealing), including ones being woken;
 *   idle       workers that have announced they are going to sleep;
 *   tokens     wake-ups sent to idle workers and not yet claimed by one.  Each
 *              token was counted in `searching` by the waker, so that later jobs
 *              see a searcher and wake nobody else (no thundering herd).
 * `epoch` is the futex word: every wake-up increments it, and a worker sleeps only
 * if it has not changed since before it announced itself idle.
 */
#ifndef WEFT_CORE_SLEEP_H
#define WEFT_CORE_SLEEP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"

#define WEFT__SLEEP_SEARCH_ONE ((uint64_t)1)
#define WEFT__SLEEP_IDLE_ONE ((uint64_t)1 << 16)
#define WEFT__SLEEP_TOKEN_ONE ((uint64_t)1 << 32)
#define WEFT__SLEEP_SEARCHING(s) ((unsigned)((s) & 0xffff))
#define WEFT__SLEEP_IDLE(s) ((unsigned)(((s) >> 16) & 0xffff))
#define WEFT__SLEEP_TOKENS(s) ((unsigned)(((s) >> 32) & 0xffff))

typedef struct weft__sleep {
    _Alignas(WEFT__CACHE_LINE) _Atomic uint64_t state;
    _Alignas(WEFT__CACHE_LINE) _Atomic uint32_t epoch;
    _Alignas(WEFT__CACHE_LINE) char pad_;
} weft__sleep;

/* `searching` starts at the worker count: every worker starts out searching. */
void weft__sleep_init(weft__sleep *s, unsigned workers);

/* True when some worker has gone to sleep (or is about to): it would take work
 * if it were offered but cannot ask for it (fork-join frames keep a request
 * standing for it, src/core/fj_frames.c; a searching worker asks by itself).  A relaxed
 * read: a hint, never part of the wake-up protocol.  Any thread. */
static inline bool weft__sleep_any_asleep(weft__sleep *s) {
    uint64_t v = atomic_load_explicit(&s->state, memory_order_relaxed);
    return WEFT__SLEEP_IDLE(v) > 0;
}

/* A worker with nothing in its own deque starts searching. */
static inline void weft__sleep_start_search(weft__sleep *s) {
    atomic_fetch_add_explicit(&s->state, WEFT__SLEEP_SEARCH_ONE, memory_order_seq_cst);
}

/* Wakes one sleeper if nobody is searching and some idle worker has no token yet.
 * Call after publishing a job that an idle worker might need to run.  Any thread. */
void weft__sleep_notify(weft__sleep *s);

/* Wakes up to k sleepers at once (each gets a token), even when a worker is
 * already searching: for a caller that has just published k jobs that should
 * start together (a parallel loop's fan-out).  Any thread. */
void weft__sleep_notify_many(weft__sleep *s, unsigned k);
/* The cheap variant for a worker pushing to its own deque, where the worker will
 * run the job itself if nobody steals it: a stale read only delays parallelism,
 * never loses the job, so the fence is paid only when someone seems idle. */
static inline bool weft__sleep_wake_wanted(uint64_t v) {
    return WEFT__SLEEP_SEARCHING(v) == 0 && WEFT__SLEEP_IDLE(v) > WEFT__SLEEP_TOKENS(v);
}
static inline void weft__sleep_notify_local(weft__sleep *s) {
    if (weft__sleep_wake_wanted(atomic_load_explicit(&s->state, memory_order_relaxed))) weft__sleep_notify(s);
}

/* weft__sleep_notify_light's fence and look alone: true when it would call
 * weft__sleep_notify, which the caller then does, for a caller whose common
 * path should make no call (silent.c). */
static inline bool weft__sleep_notify_light_wanted(weft__sleep *s) {
    weft__fence_light();
    /* the look of weft__sleep_notify_local, now ordered after the job */
    return weft__sleep_wake_wanted(atomic_load_explicit(&s->state, memory_order_relaxed));
}
/* After a submitter published a job (core/submitter.c): wakes a sleeper if
 * nobody is searching, with the light half of the asymmetric fence; a worker
 * about to park while submitter slots exist takes the heavy half between its
 * idle announcement and its last look (weft__worker_main), so either it sees
 * the job or this load sees it idle.  Saves a full fence per submitted job. */
static inline void weft__sleep_notify_light(weft__sleep *s) {
    if (weft__sleep_notify_light_wanted(s)) weft__sleep_notify(s);
}

/* A searcher found a job: it stops searching; the last searcher to stop wakes
 * another worker, so that further work is picked up (Tokio's rule). */
static inline void weft__sleep_end_search(weft__sleep *s) {
    uint64_t old = atomic_fetch_sub_explicit(&s->state, WEFT__SLEEP_SEARCH_ONE, memory_order_seq_cst);
    if (WEFT__SLEEP_SEARCHING(old) == 1) weft__sleep_notify(s);
}

/* Step 1 of going to sleep: read the epoch (before anything else), then move from
 * searching to idle.  Returns the epoch key for weft__sleep_wait.  After it the
 * caller must look for work once more (all deques and the injector). */
uint32_t weft__sleep_prepare(weft__sleep *s);
/* Step 2: sleep until the epoch moves past key.  Returns without sleeping if it
 * already has. */
void weft__sleep_wait(weft__sleep *s, uint32_t key);
/* weft__sleep_wait for at most ns nanoseconds (a nap: the caller polls
 * something when it returns, woken or not). */
void weft__sleep_wait_for(weft__sleep *s, uint32_t key, uint64_t ns);
/* Leaves idle (after waking, or when the last look found work): the worker is a
 * searcher again, claiming a wake-up token if one is pending. */
void weft__sleep_leave_idle(weft__sleep *s);

/* Wakes every sleeper (shutdown). */
void weft__sleep_wake_all(weft__sleep *s);

#endif
