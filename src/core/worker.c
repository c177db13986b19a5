/* The worker loop: own deque, then the injector and random victims for a number of
 * steal rounds, then yielding, then parking (sleep.h).  Also the cooperative wait
 * that a task uses to wait without blocking its worker. */
#include "core/executor.h"
#include "core/layer.h"     /* pollers */
#include "core/log.h"
#include "core/obs_hooks.h" /* counters and profiler events: one line per call site */

#include <stdio.h>

static _Thread_local weft__worker *tls_worker;

weft__worker *weft__current_worker(const weft_executor *ex) {
    weft__worker *w = tls_worker;
    return (w && w->ex == ex) ? w : NULL;
}

bool weft__on_worker_thread(void) { return tls_worker != NULL; }

void weft__forget_worker(void) { tls_worker = NULL; }

weft_ctx *weft_current_ctx(void) {
    weft__worker *w = tls_worker;
    return w ? w->ctx : NULL;
}

/* ex's source of work besides the deques (core/layer.h), or NULL: one load.
 * Acquire: its state, written before it was published, is visible. */
static inline const weft__source *source_of(weft_executor *ex) {
    return atomic_load_explicit(&ex->source, memory_order_acquire);
}

/* A job from the source at `stage` (the caller checked that ex has one). */
static inline weft__job *take_source(weft__worker *w, int stage) {
    return source_of(w->ex)->take(w, w->ex->source_state, stage);
}

/* A job the deque refused: a source that takes every job (its deques are
 * sealed, core/layer.h) takes it; otherwise (out of memory) the private
 * overflow list.  Off the hot path: a push reaches it only when it fails. */
__attribute__((noinline, cold)) static void push_refused(weft__worker *w, weft__job *j) {
    const weft__source *src = source_of(w->ex);
    if (src && src->push && src->push(w, w->ex->source_state, j) == 0) {
        weft__sleep_notify_local(&w->ex->sleep);
        return;
    }
    /* A bounded deque (weft_executor_config.local_queue_capacity) at its limit:
     * the overflow goes where any worker takes it. */
    if (w->deque.max_mask != INT64_MAX && weft__injector_push(&w->ex->injector, j) == 0) {
        weft__sleep_notify(&w->ex->sleep);
        return;
    }
    weft__overflow_append(w, j); /* only w can run it; no point waking anyone */
}

void weft__push_local(weft__worker *w, weft__job *j) {
    int64_t before;
    if (weft__deque_push_sized(&w->deque, j, &before) != 0) {
        push_refused(w, j);
        return;
    }
    /* A deque that already held a job per worker had its sleepers woken by the
     * pushes that filled it (each checks; a worker that parked since looked at
     * every deque first).  Skipping the check spares a read of the sleep word,
     * which searching thieves keep writing: a cache miss per push when one
     * worker submits and others steal. */
    if (before < (int64_t)w->ex->nworkers) weft__sleep_notify_local(&w->ex->sleep);
}

/* A job hinted to w's NUMA node, else, if `injector`, one from the injector:
 * the shared queues a search round and the fairness look both start with. */
static inline weft__job *take_mail_or_injector(weft__worker *w, bool injector) {
    weft_executor *ex = w->ex;
    weft__job *j = NULL;
    if (__builtin_expect(w->node >= 0, 0) && (j = weft__injector_pop(&ex->mailboxes[w->node].q)) != NULL)
        return weft__hook_steal(w, true, -1), j; /* a job hinted to this worker's node */
    if (injector && (j = weft__injector_pop(&ex->injector)) != NULL) return weft__hook_steal(w, true, -1), j;
    return NULL;
}

/* Fairness: a worker whose deque never runs empty (a task that queues its own
 * successor, a long stream of local work) would never look at what other
 * threads queued: a CRITICAL task from main, or any job in the injector, could
 * wait for ever.  So before taking a job from its own deque, a worker that has
 * run WEFT__FAIR_INTERVAL jobs since it last looked at the shared queues looks
 * there first, as Go's scheduler and Tokio do (61: their interval; prime, so
 * it does not beat with a periodic workload).  A load and a compare per
 * popped job. */
enum { WEFT__FAIR_INTERVAL = 61 };

/* The shared queues, in the order a search looks at them: the source's
 * queued work (sched/: NORMAL and up), the node mailbox, the injector, the
 * submitters' queues (one job, not a batch: this worker has work of its own).
 * Not other workers' deques: those workers run them.
 * With a source without push, every other look takes only the source's
 * HIGH and CRITICAL work before the mailbox, the injector and the
 * submitters, and its NORMAL work after them: otherwise NORMAL jobs the
 * source keeps being given (a task that requeues itself with a handle, on
 * every worker) were taken at every look, and a default-priority job from
 * another thread, NORMAL too, never ran (tests/seeds_hunt41.c). */
static __attribute__((noinline)) weft__job *look_shared(weft__worker *w) {
    weft_executor *ex = w->ex;
    const weft__source *src = source_of(ex);
    bool others = src && !src->push && (w->fair_others = !w->fair_others);
    weft__job *j = src ? src->take(w, ex->source_state, others ? WEFT__TAKE_URGENT : WEFT__TAKE_FAIR) : NULL;
    if (j) return j;
    bool subs = (w->subs_first = !w->subs_first); /* see steal_victims */
    if (subs && (j = weft__submitters_steal_one(w)) != NULL) return j;
    /* A source that takes every job (push) holds the injector's too. */
    if ((j = take_mail_or_injector(w, !(src && src->push))) != NULL) return j;
    if (!subs && (j = weft__submitters_steal_one(w)) != NULL) return j;
    return others ? src->take(w, ex->source_state, WEFT__TAKE_FAIR) : NULL;
}

/* Whether ex has a source that does not take every job (sched/'s priority
 * queue beside the deques): its NORMAL work comes before the injector in a
 * search.  Relaxed: a worker that misses a source just set only starts its
 * fairness interval again once more. */
static inline bool has_plain_source(weft__worker *w) {
    const weft__source *src = atomic_load_explicit(&w->ex->source, memory_order_relaxed);
    return src && !src->push;
}

static inline weft__job *pop_local(weft__worker *w) {
    weft__job *j = weft__deque_pop(&w->deque);
    if (j) return j;
    j = w->overflow_head;
    if (j) {
        w->overflow_head = j->next;
        if (!w->overflow_head) w->overflow_tail = NULL;
    }
    return j;
}

/* executor.h: the look for a layer that runs job after job itself. */
__attribute__((noinline, cold)) weft__job *weft__fair_look(weft__worker *w) {
    w->fair_next = (uint32_t)w->stats.jobs + WEFT__FAIR_INTERVAL;
    return look_shared(w);
}

/* The fairness look, then the pop (out of line: the pop's path keeps no
 * register across a call). */
static __attribute__((noinline)) weft__job *find_local_fair(weft__worker *w) {
    w->fair_next = (uint32_t)w->stats.jobs + WEFT__FAIR_INTERVAL;
    weft__job *g = look_shared(w);
    return g ? g : pop_local(w);
}

static inline __attribute__((always_inline)) weft__job *find_local(weft__worker *w) {
    /* Against the job count the worker keeps anyway (w->stats.jobs, one per
     * job run): a load and a compare, nothing stored per job. */
    if (__builtin_expect(weft__fair_due(w), 0)) return find_local_fair(w);
    weft__job *j = pop_local(w);
    /* Run empty: the search that follows looks at the shared queues, so the
     * interval starts again.  A worker that drains a batch from a submitter
     * and goes back for the next (async_task) never takes the fairness look,
     * which cost it 1.3-1.9x there (the look's steal from the slot main is
     * pushing to, and the records' lines moving between the two).  Not with
     * a source without push: its search takes the source's NORMAL work
     * before the injector, so the interval goes on and the search makes the
     * look when it is due (steal_round). */
    if (!j && !has_plain_source(w)) w->fair_next = (uint32_t)w->stats.jobs + WEFT__FAIR_INTERVAL;
    return j;
}

/* Batch stealing (weft_executor_config.steal_batch): after a steal of one job
 * from v, more, so that this steal takes half of what v held (rounded up, the
 * one job included: core.h), queued here oldest first, so this worker's pops
 * take the newest and its thieves the oldest (core/deque.h). */
__attribute__((noinline)) static void steal_more(weft__worker *w, unsigned v) {
    weft__job *got[256];
    unsigned n;
    if (weft__deque_steal_batch_after(&w->ex->workers[v].deque, got, w->ex->steal_batch - 1, 1, &n) != WEFT__STEAL_OK)
        return;
    for (unsigned i = 0; i < n; i++) {
        weft__hook_steal(w, true, (int)v); /* observe/: one per job, as single steals count */
        weft__push_local(w, got[i]);
    }
}

/* A steal from victim v's deque, then (src/core/fj_frames.c) from its frames,
 * which also asks v to share if it has none public. */
static inline weft__job *try_victim(weft__worker *w, unsigned v) {
    weft__job *j;
    weft__steal_result r = weft__deque_steal(&w->ex->workers[v].deque, &j);
    weft__hook_steal(w, r == WEFT__STEAL_OK, (int)v); /* observe/ */
    if (r == WEFT__STEAL_OK) {
        if (__builtin_expect(w->ex->steal_batch > 1, 0)) steal_more(w, v);
        return w->last_victim = (int)v, j;
    }
    return weft__fj_steal(w, &w->ex->workers[v]);
}

/* Victims in the order a layer gave (weft__worker_set_victims): tier by tier,
 * from a random place within each, going round the tier as many times as its
 * tries say (weft__worker_set_tier_tries; default: each victim once). */
static weft__job *steal_tiers(weft__worker *w) {
    unsigned lo = 0;
    for (unsigned t = 0; t < w->ntiers; t++) {
        unsigned hi = w->tier_end[t], len = hi - lo;
        unsigned tries = w->tier_tries ? w->tier_tries[t] : len;
        unsigned i = (unsigned)(weft__worker_rand(w) % len);
        for (unsigned k = 0; k < tries; k++) {
            weft__job *j = try_victim(w, w->victims[lo + i]);
            if (j) return j;
            if (++i == len) i = 0;
        }
        lo = hi;
    }
    return NULL;
}

/* One round: the injector, then every other worker once, starting at a random
 * one (or in the order a layer gave). */
static weft__job *steal_victims(weft__worker *w, bool injector) {
    weft_executor *ex = w->ex;
    weft__job *j;
    /* The submitters' queues and the injector (with the node mailbox) take
     * turns at going first: always the injector first, threads that kept it
     * from running empty (weft_async from other threads faster than the
     * workers ran them) kept a weft_silent_async of a thread with a slot
     * waiting for as long as they went on (tests/seeds_hunt41.c). */
    bool subs = (w->subs_first = !w->subs_first);
    if (subs && (j = weft__submitters_steal(w, false)) != NULL) return j;
    if ((j = take_mail_or_injector(w, injector)) != NULL) return j;
    if (!subs && (j = weft__submitters_steal(w, false)) != NULL) return j;
    if (w->victims) return steal_tiers(w);
    unsigned n = ex->nworkers;
    if (n < 2) return NULL;
    unsigned start = (unsigned)(weft__worker_rand(w) % n);
    for (unsigned k = 0; k < n; k++) {
        unsigned v = start + k;
        if (v >= n) v -= n;
        if (v == w->id) continue;
        if ((j = try_victim(w, v)) != NULL) return j;
    }
    return NULL;
}

/* The round with a source's stages around it (core/layer.h).  A source that
 * takes every job (push) also takes the injector's, in order, in its stages:
 * the round leaves the injector to it. */
static weft__job *steal_round(weft__worker *w) {
    const weft__source *src = source_of(w->ex);
    if (__builtin_expect(src == NULL, 1)) return steal_victims(w, true);
    weft__job *j = NULL;
    /* A worker that lives on the source's NORMAL work (its deque empty, the
     * source never so) makes the fairness look here, or the injector and the
     * submitters' queues would wait for ever behind that work. */
    if (!src->push && weft__fair_due(w)) j = weft__fair_look(w);
    if (!j) j = take_source(w, WEFT__TAKE_STEAL);
    if (!j) j = steal_victims(w, src->push == NULL);
    if (!j) j = take_source(w, WEFT__TAKE_LAST);
    return j;
}

/* The pollers (core/poll.c), if any: a job one of them made runnable here, or
 * NULL.  *pending says whether something is still outstanding. */
static inline weft__job *poll_idle(weft__worker *w, bool *pending) {
    *pending = false;
    if (__builtin_expect(atomic_load_explicit(&w->ex->npollers, memory_order_acquire) == 0, 1)) return NULL;
    int r = weft__pollers_run(w);
    *pending = r != WEFT__POLL_IDLE;
    return r == WEFT__POLL_PROGRESS ? find_local(w) : NULL;
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
    /* With a source (priorities, a policy) the search's stages come first: a
     * CRITICAL job queued meanwhile must not wait behind a re-steal. */
    if (__builtin_expect(source_of(w->ex) != NULL, 0)) return w->last_victim = -1, NULL;
    weft__job *j;
    if ((unsigned)v >= w->ex->nworkers) { /* a submitter slot: a batch at a time */
        if (*streak >= RESTEAL_MAX || (j = weft__submitter_steal_again(w, (unsigned)v)) == NULL) {
            w->last_victim = -1;
            return NULL;
        }
        ++*streak;
        return j;
    }
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
    /* seq_cst: pairs with weft__source_set's store, after our idle announcement. */
    const weft__source *src = atomic_load_explicit(&ex->source, memory_order_seq_cst);
    if (src) {
        weft__job *j = src->take(w, ex->source_state, WEFT__TAKE_FINAL);
        if (j) return j;
    }
    /* A source that takes every job (push) drained the injector just now, after
     * our idle announcement; a job queued there since is the source's too, and
     * its submitter wakes us for it.  Popped here, it would skip the policy
     * (async_outside_tasks_reach_a_custom_policy, 1 run in ~900). */
    if (!(src && src->push) && !weft__injector_empty(&ex->injector)) {
        weft__job *j = weft__injector_pop(&ex->injector);
        if (j) return weft__hook_steal(w, true, -1), j; /* observe/: a steal like any */
    }
    for (unsigned k = 0; k < ex->nnodes; k++) /* hinted jobs: any node's, rather than none run */
        if (!weft__injector_empty(&ex->mailboxes[k].q)) {
            weft__job *j = weft__injector_pop(&ex->mailboxes[k].q);
            if (j) return weft__hook_steal(w, true, -1), j;
        }
    weft__job *sj = weft__submitters_steal(w, true);
    if (sj) return sj;
    for (unsigned v = 0; v < ex->nworkers; v++) {
        if (v == w->id) continue;
        for (;;) {
            weft__job *j;
            weft__steal_result r = weft__deque_steal(&ex->workers[v].deque, &j);
            if (r == WEFT__STEAL_OK) return weft__hook_steal(w, true, (int)v), j;
            if (r == WEFT__STEAL_EMPTY) break;
            weft__cpu_relax();
        }
        /* A frame owner shares on request and then wakes a sleeper (src/core/fj_*.c). */
        weft__job *j = weft__fj_steal(w, &ex->workers[v]);
        if (j) return j;
    }
    return NULL;
}

/* Steal rounds with short spins, then rounds with yields.  NULL if nothing found.
 * A worker that has never run a job (`fresh`) makes one round and parks: at
 * creation every worker starts searching, and each one's 24 rounds over all
 * the others made creating N workers cost 24 N^2 steal attempts while the
 * later ones started (4096 workers: 8 s on 2 CPUs).  A worker that has seen
 * work searches as before, where a short gap between runs is likely.  One
 * round, not none: the park step's last look (final_look) takes the source's
 * work, LOW included, before the injector's, so a fresh worker woken for a
 * NORMAL task from outside ran a LOW one queued just after it first
 * (tests/sched_hunt42.c); a round takes them in the usual order.  Parking
 * after it is the protocol's ordinary give-up (prepare, final look, sleep:
 * docs/design.md, "Sleep and wake"), so no wake-up can be lost. */
static weft__job *search(weft__worker *w, bool fresh) {
    weft_executor *ex = w->ex;
    weft__worker_gap(w); /* the next task's span starts after the search */
    unsigned rounds = fresh ? 1 : ex->steal_rounds + ex->yield_rounds;
    for (unsigned r = 0; r < rounds; r++) {
        weft__job *j = steal_round(w);
        if (j) return j;
        bool pending;
        if ((j = poll_idle(w, &pending)) != NULL) return j;
        if (atomic_load_explicit(&ex->shutdown, memory_order_relaxed)) return NULL;
        if (r < ex->steal_rounds)
            for (int i = 0; i < 16; i++) weft__cpu_relax();
        else
            weft__thread_yield();
    }
    return NULL;
}

/* Before parking: while a poller has something outstanding, one idle worker
 * (the watcher) naps with a timeout instead of sleeping until woken, so the
 * completion is seen without other work to wake anyone (core/layer.h).
 * Returns a job a poller made runnable, or NULL with *nap the timeout in ns (0:
 * sleep until woken). */
static weft__job *poll_before_park(weft__worker *w, uint64_t *nap) {
    bool pending;
    weft__job *j = poll_idle(w, &pending);
    if (j) return w->poll_nap = 0, j;
    if (!pending) {
        if (w->poll_watching) {
            w->poll_watching = false;
            atomic_store_explicit(&w->ex->poll_watch, 0, memory_order_relaxed);
        }
        return NULL;
    }
    if (!w->poll_watching) {
        int zero = 0;
        if (!atomic_compare_exchange_strong_explicit(&w->ex->poll_watch, &zero, 1, memory_order_relaxed,
                                                     memory_order_relaxed))
            return NULL; /* another worker watches */
        w->poll_watching = true;
        w->poll_nap = 0;
    }
    w->poll_nap = weft__poll_nap_next(w->poll_nap);
    *nap = w->poll_nap;
    return NULL;
}

/* The watcher found work: another idle worker takes the watch (a sleeper is
 * woken if nobody is searching; a searcher polls in its rounds anyway). */
static void hand_over_watch(weft__worker *w) {
    w->poll_watching = false;
    w->poll_nap = 0;
    atomic_store_explicit(&w->ex->poll_watch, 0, memory_order_relaxed);
    weft__sleep_notify(&w->ex->sleep);
}

/* The counts w holds back (executor.h, defer_flush), applied before w goes
 * searching: a job to run, or NULL.  Applying one may queue jobs on w's own
 * deque and return none (a run with priorities starts its next iteration so:
 * graph/priority.c publishes every source and keeps none), and the search
 * looks at other queues only: w's deque is looked at again here, or w slept
 * with work on it (Taskflow's SimplePriority.Sequential, run_n of a taskflow
 * with a prioritised successor, hung at its second iteration on one worker). */
static inline weft__job *settle_held(weft__worker *w) {
    if (__builtin_expect(w->defer_flush == NULL, 1)) return NULL;
    weft__job *j = weft__defer_settle(w);
    if (j) return j;
    /* The second look only when something is there: a pop's fence at every
     * end of a chain's stretch (each 61 links, worker.c's fairness) cost
     * linear_chain_rerun 2% of its instructions.  Relaxed loads suffice: top
     * only grows, so a stale one can only make the deque look fuller. */
    return weft__deque_size(&w->deque) > 0 || w->overflow_head ? find_local(w) : NULL;
}

/* How long w may sleep before it looks at the source again (0: until woken;
 * core/layer.h, nap). */
static uint64_t source_nap(weft__worker *w) {
    const weft__source *src = atomic_load_explicit(&w->ex->source, memory_order_acquire);
    return src && src->nap ? src->nap(w, w->ex->source_state) : 0;
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
    /* A bound worker's deque on its own NUMA node: its ring allocated and
     * written here, after binding (first touch).  Best effort. */
    if (w->cpu >= 0) (void)weft__deque_rehome(&w->deque);
    weft__layers_thread_start(w);

    /* Its first look at the shared queues is due WEFT__FAIR_INTERVAL jobs
     * from now, as after any search (which looks there itself).  From 0 it
     * was due at once, so the first chain on a fresh executor took a job of
     * a policy before the successor handed to it: a fan-out's first run
     * under WEFT_SCHED_FIFO went 1, 2, ..., 0, its later runs 0, 1, 2, ...
     * (tests/seeds_hunt42.c). */
    w->fair_next = (uint32_t)w->stats.jobs + WEFT__FAIR_INTERVAL;
    /* Every worker starts counted as searching (weft__sleep_init). */
    bool fresh = true; /* no job run yet: park after one round (search) */
    for (;;) {
        weft__job *j = search(w, fresh);
        if (!j) {
            uint32_t key = weft__sleep_prepare(&ex->sleep);
            /* Submitters publish a job and look at the sleepers with only the
             * light half of the fence (weft__sleep_notify_light): this is the
             * heavy half, between our idle announcement and the last look. */
            if (atomic_load_explicit(&ex->nsubmitters, memory_order_seq_cst)) weft__fence_heavy(); /* submitter.c */
            j = final_look(w);
            uint64_t nap = 0;
            if (!j) j = poll_before_park(w, &nap);
            if (!j && !nap) nap = source_nap(w);
            if (!j) {
                if (atomic_load_explicit(&ex->shutdown, memory_order_seq_cst)) break;
                weft__hook_park(w, true); /* observe/ */
                if (nap) weft__sleep_wait_for(&ex->sleep, key, nap);
                else weft__sleep_wait(&ex->sleep, key);
                weft__hook_park(w, false); /* observe/ */
            }
            weft__sleep_leave_idle(&ex->sleep);
            if (!j) continue;
        }
        weft__sleep_end_search(&ex->sleep);
        fresh = false;
        if (__builtin_expect(w->poll_watching, 0)) hand_over_watch(w);
        weft__hook_busy(w, true); /* observe/ */
        unsigned streak = 0;
        do weft__execute(w, j);
        while ((j = find_local(w)) != NULL || (j = settle_held(w)) != NULL ||
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

void weft__worker_wait_until_own(weft__worker *w, int64_t mark, bool (*done)(void *), void *arg) {
    unsigned idle = 0;
    while (!done(arg)) {
        weft__job *j = NULL;
        /* Jobs queued since the mark first: the waited-for work and what it
         * queued.  Below the mark lie jobs of the tasks around the waiter; run
         * here they would nest under this wait, and the nesting would grow with
         * the work instead of the recursion (Taskflow's FibSubflow at one
         * worker: 8361 frames deep for fib(20), a stack overflow). */
        if (atomic_load_explicit(&w->deque.bottom, memory_order_relaxed) > mark) j = weft__deque_pop(&w->deque);
        /* Nothing of the waited-for work left here, but a count held back:
         * it is often the waited-for run's last (a nested subflow's graph
         * ends with it), so it is applied and `done` asked again before a
         * round of stealing that finds nothing -- the pause below applied it
         * only after that round, ~50 instructions of every join of a
         * subflow in Taskflow's fibonacci by subflows.  The job it releases,
         * if any, goes on the deque above the mark, and is popped next. */
        if (!j && w->defer_flush) {
            weft__defer_settle_local(w);
            continue;
        }
        /* Then what others hold, and only then, once a pause has applied the
         * count this worker holds back (the waited-for run may be done but for
         * it), anything of ours: a task below the mark may be what the
         * waited-for work waits on (a semaphore section a later task
         * releases). */
        if (!j) j = steal_round(w);
        if (!j && idle > 0) j = find_local(w);
        if (j) {
            weft__execute(w, j);
            idle = 0;
        } else {
            weft__worker_pause(w, &idle);
        }
    }
}
