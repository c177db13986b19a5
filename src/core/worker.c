/* The worker loop: own deque, then the injector and random victims for a number of
 * steal rounds, then yielding, then parking (sleep.h).  Also the cooperative wait
 * that a task uses to wait without blocking its worker. */
#include "core/executor.h"
#include "observe/hooks.h" /* counters and profiler events: one line per call site */
#include "observe/log.h"

#include <stdio.h>

static _Thread_local weft__worker *tls_worker;

weft__worker *weft__current_worker(const weft_executor *ex) {
    weft__worker *w = tls_worker;
    return (w && w->ex == ex) ? w : NULL;
}

void weft__forget_worker(void) { tls_worker = NULL; }

weft_ctx *weft_current_ctx(void) {
    weft__worker *w = tls_worker;
    return w ? w->ctx : NULL;
}

static inline uint64_t next_rand(weft__worker *w) {
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return w->rng = x;
}

void weft__push_local(weft__worker *w, weft__job *j) {
    int64_t before;
    if (weft__deque_push_sized(&w->deque, j, &before) != 0) {
        j->next = NULL;
        if (w->overflow_tail) w->overflow_tail->next = j;
        else w->overflow_head = j;
        w->overflow_tail = j;
        return; /* only w can run it; no point waking anyone */
    }
    /* A deque that already held a job per worker had its sleepers woken by the
     * pushes that filled it (each checks; a worker that parked since looked at
     * every deque first).  Skipping the check spares a read of the sleep word,
     * which searching thieves keep writing: a cache miss per push when one
     * worker submits and others steal. */
    if (before < (int64_t)w->ex->nworkers) weft__sleep_notify_local(&w->ex->sleep);
}

static weft__job *find_local(weft__worker *w) {
    weft__job *j = weft__deque_pop(&w->deque);
    if (j) return j;
    j = w->overflow_head;
    if (j) {
        w->overflow_head = j->next;
        if (!w->overflow_head) w->overflow_tail = NULL;
    }
    return j;
}

/* One round: the injector, then every other worker once, starting at a random one. */
static weft__job *steal_round(weft__worker *w) {
    weft_executor *ex = w->ex;
    weft__job *j = weft__injector_pop(&ex->injector);
    if (j) return weft__hook_steal(w, true, -1), j;
    unsigned n = ex->nworkers;
    if (n < 2) return NULL;
    unsigned start = (unsigned)(next_rand(w) % n);
    for (unsigned k = 0; k < n; k++) {
        unsigned v = start + k;
        if (v >= n) v -= n;
        if (v == w->id) continue;
        weft__steal_result r = weft__deque_steal(&ex->workers[v].deque, &j);
        weft__hook_steal(w, r == WEFT__STEAL_OK, (int)v); /* observe/ */
        if (r == WEFT__STEAL_OK) return w->last_victim = (int)v, j;
        /* Fork-join frames (src/fj): also asks v to share if it has none public. */
        if ((j = weft__fj_steal(w, &ex->workers[v])) != NULL) return j;
    }
    return NULL;
}

/* After a stolen job, before searching again: one more steal from the same
 * victim, as a busy worker (no search announced).  A victim that had one job to
 * spare often has more (a loop submitting async tasks); announcing a search and
 * ending it again costs two read-modify-writes of the shared sleep word per
 * job, which the victim's pushes then read back.  Bounded so that the injector
 * and the other deques are still looked at. */
enum { RESTEAL_MAX = 64 };

static weft__job *steal_again(weft__worker *w, unsigned *streak) {
    int v = w->last_victim;
    if (v < 0) return NULL;
    weft__job *j;
    if (*streak >= RESTEAL_MAX || weft__deque_steal(&w->ex->workers[v].deque, &j) != WEFT__STEAL_OK) {
        /* Forgotten: the next busy stretch re-steals only if a steal from a
         * victim (steal_round) starts it, not after the injector or a frame. */
        w->last_victim = -1;
        return NULL;
    }
    weft__hook_steal(w, true, v); /* observe/ */
    ++*streak;
    return j;
}

/* The last look before sleeping: every queue, retrying lost races, so that a job
 * published before our idle announcement is found (docs/design.md). */
static weft__job *final_look(weft__worker *w) {
    weft_executor *ex = w->ex;
    if (!weft__injector_empty(&ex->injector)) {
        weft__job *j = weft__injector_pop(&ex->injector);
        if (j) return weft__hook_steal(w, true, -1), j; /* observe/: a steal like any */
    }
    for (unsigned v = 0; v < ex->nworkers; v++) {
        if (v == w->id) continue;
        for (;;) {
            weft__job *j;
            weft__steal_result r = weft__deque_steal(&ex->workers[v].deque, &j);
            if (r == WEFT__STEAL_OK) return weft__hook_steal(w, true, (int)v), j;
            if (r == WEFT__STEAL_EMPTY) break;
            weft__cpu_relax();
        }
        /* A frame owner shares on request and then wakes a sleeper (src/fj). */
        weft__job *j = weft__fj_steal(w, &ex->workers[v]);
        if (j) return j;
    }
    return NULL;
}

/* Steal rounds with short spins, then rounds with yields.  NULL if nothing found. */
static weft__job *search(weft__worker *w) {
    weft_executor *ex = w->ex;
    weft__worker_gap(w); /* the next task's span starts after the search */
    unsigned rounds = ex->steal_rounds + ex->yield_rounds;
    for (unsigned r = 0; r < rounds; r++) {
        weft__job *j = steal_round(w);
        if (j) return j;
        if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) return NULL;
        if (r < ex->steal_rounds)
            for (int i = 0; i < 16; i++) weft__cpu_relax();
        else
            weft__thread_yield();
    }
    return NULL;
}

void *weft__worker_main(void *arg) {
    weft__worker *w = arg;
    weft_executor *ex = w->ex;
    tls_worker = w;
    char name[16];
    snprintf(name, sizeof name, "weft-w%u", w->id);
    weft__thread_set_name(name);
    if (w->cpu >= 0 && weft__thread_bind_self(w->cpu) != 0) /* best effort */
        weft__log(WEFT_LOG_WARN, "worker %u could not be bound to CPU %d; it runs unbound", w->id, w->cpu);

    /* Every worker starts counted as searching (weft__sleep_init). */
    for (;;) {
        weft__job *j = search(w);
        if (!j) {
            uint32_t key = weft__sleep_prepare(&ex->sleep);
            j = final_look(w);
            if (!j) {
                if (atomic_load_explicit(&ex->shutdown, memory_order_seq_cst)) break;
                weft__hook_park(w, true); /* observe/ */
                weft__sleep_wait(&ex->sleep, key);
                weft__hook_park(w, false); /* observe/ */
            }
            weft__sleep_leave_idle(&ex->sleep);
            if (!j) continue;
        }
        weft__sleep_end_search(&ex->sleep);
        weft__hook_busy(w, true); /* observe/ */
        unsigned streak = 0;
        do weft__execute(w, j);
        while ((j = find_local(w)) != NULL || (j = weft__defer_settle(w)) != NULL ||
               (j = steal_again(w, &streak)) != NULL);
        weft__hook_busy(w, false); /* observe/ */
        weft__runs_busy_end(ex); /* the last run may have ended in this stretch */
        weft__sleep_start_search(&ex->sleep);
    }
    tls_worker = NULL;
    return NULL;
}

void weft__worker_wait_until(weft__worker *w, bool (*done)(void *), void *arg) {
    unsigned idle = 0;
    while (!done(arg)) {
        weft__job *j = find_local(w);
        if (!j) j = steal_round(w);
        if (j) {
            weft__execute(w, j);
            idle = 0;
        } else {
            weft__worker_pause(w, &idle);
        }
    }
}
