/* The scheduling layer: its per-executor state, the worker loop's source
 * (core/layer.h) through which workers take prioritised jobs and a policy's
 * jobs, escalation, inheritance and the public handle API (weft/sched.h). */
#include "sched/sched.h"
#include "core/alloc.h"
#include "core/log.h"
#include "core/obs_hooks.h" /* steals counted for the metrics */

/* ---- the source the worker loop calls ---- */

/* Workers look at the clock for escalation once per this many takes. */
enum { TICK_EVERY = 64 };

static inline weft__sched_worker *sched_worker(weft__worker *w) {
    return weft__layer_state(w, &weft__sched_layer);
}

/* The levels with something queued anywhere (hints: the heap's counts and
 * every worker's mask). */
static uint32_t levels_queued(weft__sched *s) {
    uint32_t m = 0;
    for (unsigned l = 0; l < WEFT__LEVELS; l++)
        m |= (atomic_load_explicit(&s->q.count[l], memory_order_relaxed) != 0) << l;
    for (unsigned i = 0; i < s->ex->nworkers; i++)
        m |= atomic_load_explicit(&sched_worker(&s->ex->workers[i])->lanes.mask, memory_order_relaxed);
    return m;
}

/* ns as a count of the lanes' clock ticks, plus one, saturated: an escalation
 * time near UINT64_MAX ns (a config's "practically never") is more ticks than
 * a uint64_t holds, and converting that double is undefined (it gave 1 tick on
 * x86-64, so such a time escalated at once).  The lanes add two of these
 * (weft__lanes_escalate), so they stay below 2^63 each. */
static uint64_t ticks_of(uint64_t ns, double ns_per_tick) {
    double t = (double)ns / ns_per_tick;
    return t < 0x1p62 ? (uint64_t)t + 1 : (uint64_t)1 << 62;
}

/* One escalation pass over the heap and every worker's lanes; how many moved. */
static size_t escalate_all(weft__sched *s, uint64_t now) {
    weft__mutex_lock(&s->q.lock);
    size_t moved = weft__squeue_escalate_locked(&s->q, s->esc_ns, now);
    weft__mutex_unlock(&s->q.lock);
    /* The lanes' clock is weft__ticks (cheaper per job than the monotonic
     * clock), calibrated once per process on the first tick. */
    double npt = weft__ns_per_tick();
    uint64_t after[2] = {ticks_of(s->esc_ns[0], npt), ticks_of(s->esc_ns[1], npt)};
    uint64_t ticks = weft__ticks();
    for (unsigned i = 0; i < s->ex->nworkers; i++) {
        weft__lanes *l = &sched_worker(&s->ex->workers[i])->lanes;
        if (atomic_load_explicit(&l->mask, memory_order_relaxed) & 3u) moved += weft__lanes_escalate(l, after, ticks);
    }
    return moved;
}

size_t weft__sched_escalate_now(weft__sched *s) {
    size_t moved = escalate_all(s, weft__now_ns());
    atomic_fetch_add_explicit(&s->escalations, moved, memory_order_relaxed);
    return moved;
}

/* a + b, or UINT64_MAX where it would wrap: a tick_ns near UINT64_MAX (a
 * config's "never look") wrapped the next tick into the past, so every look
 * made a pass. */
static inline uint64_t saturating_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* Escalates if a tick is due (a worker's countdown ran out, or it is idle). */
static void maybe_tick(weft__sched *s) {
    if (!s->auto_escalate || levels_queued(s) == 0) return;
    uint64_t now = weft__now_ns(), due = atomic_load_explicit(&s->next_tick, memory_order_relaxed);
    if (now < due ||
        !atomic_compare_exchange_strong_explicit(&s->next_tick, &due, saturating_add(now, s->tick_ns),
                                                 memory_order_relaxed, memory_order_relaxed))
        return; /* not yet, or another worker does it */
    size_t moved = escalate_all(s, now);
    if (moved) atomic_fetch_add_explicit(&s->escalations, moved, memory_order_relaxed);
    /* A pass over the heap is O(n): with a backlog of a million slots it takes
     * longer than a tick, and a worker that looks once per job would then do
     * nothing but escalate.  The next tick waits four times the pass instead,
     * so passes take at most a fifth of one worker's time. */
    uint64_t end = weft__now_ns(), spent = end - now;
    if (spent * 4 > s->tick_ns) atomic_store_explicit(&s->next_tick, end + 4 * spent, memory_order_relaxed);
}

static int queue_now(weft__sched *s, weft__worker *w, weft__job *job, int prio);
static inline void activate(weft__sched *s);
static int push(weft__worker *w, void *state, weft__job *job);

/* A policy orders every job, those submitted from other threads too: they
 * wait in the injector (the core's path for them costs nothing extra) and
 * move into the policy, in their order, when a worker looks.  Returns a job
 * the policy could not take (to run now), or NULL. */
static int push_from(weft__worker *w, weft__sched *s, weft__job *job, int from);
static weft__job *drain_injector(weft__sched *s, weft__worker *w) {
    weft__job *j;
    /* Queued by a thread that is no worker (from -1), whichever worker moves
     * it: recorded as the mover's, a ROUND_ROBIN or custom policy's job from
     * main run by that worker counted no steal (observe.h counts it). */
    while ((j = weft__injector_pop(&s->ex->injector)) != NULL)
        if (push_from(w, s, j, -1) != 0) return j;
    return NULL;
}

/* Before a job from a thread that is not a worker takes its place in the
 * policy's order: the default-priority jobs that thread submitted before it
 * (waiting in the injector) go first, and one the policy refuses goes back
 * where it was. */
static void drain_before_outside_submit(weft__sched *s) {
    weft__job *refused = drain_injector(s, NULL);
    if (refused) weft__sched_resubmit(s->ex, NULL, refused);
}

/* w's lanes, or NULL when w is a submitter slot or not one of s's workers. */
static inline weft__lanes *lanes_of(weft__sched *s, weft__worker *w) {
    return w && w->ex == s->ex && w->id < s->ex->nworkers ? &sched_worker(w)->lanes : NULL;
}

/* j (non-NULL) came to worker w from a queue that is not w's own: another
 * worker's lane (victim its index), the shared heap or the injector (-1).  A
 * steal for the metrics, as the core counts one from a deque or the injector
 * (weft_worker_metrics.steals); they were not counted here, so a worker that
 * ran prioritised jobs another worker released showed no steals.  Counted on
 * s's workers only (a submitter slot has no figures). */
static inline weft__job *stolen(weft__sched *s, weft__worker *w, weft__job *j, int victim) {
    if (j && lanes_of(s, w)) weft__hook_steal(w, true, victim);
    return j;
}

/* A job of exactly `level` from other workers' lanes (after w's own), or NULL. */
static weft__job *take_others(weft__sched *s, weft__worker *w, unsigned level, bool final) {
    unsigned n = s->ex->nworkers, me = w && w->id < n ? w->id : n;
    for (unsigned k = 1; k <= n; k++) {
        unsigned v = me + k >= n ? me + k - n : me + k; /* from the next worker round */
        if (v == me) continue;
        weft__lanes *l = &sched_worker(&s->ex->workers[v])->lanes;
        if (!final && !(atomic_load_explicit(&l->mask, memory_order_relaxed) >> level & 1)) continue;
        weft__job *j = weft__lanes_pop(l, level);
        if (j) return stolen(s, w, j, (int)v);
    }
    return NULL;
}

/* A job of exactly `level`: w's own lanes (against the heap), the heap, the
 * other workers' lanes; NULL if none.  `final`: whatever the hints say. */
static weft__job *take_level(weft__sched *s, weft__worker *w, weft__lanes *own, unsigned level, bool final) {
    bool heap = final || atomic_load_explicit(&s->q.count[level], memory_order_relaxed) != 0;
    weft__job *j = NULL;
    bool from_heap = false;
    if (own && (final || atomic_load_explicit(&own->mask, memory_order_relaxed) >> level & 1))
        j = heap ? weft__lanes_pop_or_heap(own, level, &s->q, &from_heap) : weft__lanes_pop(own, level);
    if (j) return from_heap ? stolen(s, w, j, -1) : j;
    if (heap && (j = weft__squeue_pop(&s->q, level)) != NULL) return stolen(s, w, j, -1);
    return take_others(s, w, level, final);
}

weft__job *weft__sched_take(weft__sched *s, weft__worker *w, unsigned min_level, bool final) {
    weft__lanes *own = lanes_of(s, w);
    uint32_t m = final ? 0xfu : levels_queued(s);
    for (m &= ~((1u << min_level) - 1); m; m &= ~(1u << (31 - __builtin_clz(m)))) {
        weft__job *j = take_level(s, w, own, 31u - (unsigned)__builtin_clz(m), final);
        if (j) return j;
    }
    return NULL;
}

/* Every TICK_EVERY calls on w: a look at the clock for escalation. */
static inline void count_down(weft__sched_worker *sw) {
    if (--sw->countdown == 0) {
        sw->countdown = TICK_EVERY;
        maybe_tick(sw->s);
    }
}

/* Takes of a worker beside a policy after which the policy's items go before
 * the NORMAL tasks with handles (take); prime, as the core's 61. */
enum { POLICY_FAIR_INTERVAL = 61 };

/* Jobs weft__sched_next hands on in a row at most. */
enum { STREAK_MAX = 64 };

weft__job *weft__sched_next(weft__worker *w) {
    if (weft__deque_size(&w->deque) != 0 || w->overflow_head) return NULL;
    weft__sched_worker *sw = sched_worker(w);
    if (!sw->s || sw->s->policy) return NULL; /* a policy orders its jobs: the loop's way */
    if (++sw->streak > STREAK_MAX) return sw->streak = 0, NULL;
    count_down(sw);
    weft__job *j = weft__sched_take(sw->s, w, 1, false); /* what the loop's first stage would take */
    if (!j) sw->streak = 0;
    return j;
}

/* The worker loop's source (core/layer.h), called when w's deque is empty:
 * NORMAL and above before stealing, anything after, and before sleeping. */
static weft__job *take(weft__worker *w, void *state, int stage) {
    weft__sched *s = state;
    /* A worker about to sleep looks at the clock; one that searches between
     * jobs (the LOW ones: the loop takes them after stealing) every
     * TICK_EVERY, as when it takes from weft__sched_next.  So does a busy
     * worker's fairness look (once per 61 jobs): counted down, a worker that
     * keeps its deque full looked once per 64 of them, every 3904 jobs
     * whatever they took (a LOW task from main escalated after 4 s of 0.5 ms
     * jobs, not after its 40 ms). */
    if (stage == WEFT__TAKE_FINAL || stage == WEFT__TAKE_FAIR || stage == WEFT__TAKE_URGENT || !lanes_of(s, w))
        maybe_tick(s);
    else count_down(sched_worker(w));
    weft__policy *p = s->policy;
    /* Every other fairness look (worker.c, look_shared): HIGH and CRITICAL
     * only, so that the injector's and the submitters' default-priority jobs
     * come before queued NORMAL ones there (FAIR follows).  Only asked
     * without a policy (a policy's source has push: it orders every job). */
    if (stage == WEFT__TAKE_URGENT && !p) return weft__sched_take(s, w, 2, false);
    weft__job *j = p ? drain_injector(s, w) : NULL;
    if (j) return stolen(s, w, j, -1); /* from the injector, which the policy refused */
    unsigned min = (stage == WEFT__TAKE_STEAL || stage == WEFT__TAKE_FAIR) && !(p && p->heap) ? 1 : 0;
    /* Beside a policy that is not the priority heap, tasks with handles wait
     * in the priority queue and NORMAL ones go before the policy's items.
     * Every POLICY_FAIR_INTERVAL such takes the policy's items go first (after
     * HIGH and CRITICAL): otherwise a NORMAL task that requeues itself with a
     * handle kept every other job (the policy holds them all) waiting for
     * ever (tests/seeds_hunt41.c). */
    bool policy_first = false;
    if (min == 1 && p) {
        weft__sched_worker *sw = sched_worker(w);
        if (++sw->fair >= POLICY_FAIR_INTERVAL) sw->fair = 0, policy_first = true;
    }
    /* FINAL looks under every lock whatever the hints say (core/layer.h: no
     * lost wake-up; lanes are filled only by their owner, who finds its own). */
    j = weft__sched_take(s, w, policy_first ? 2 : min, stage == WEFT__TAKE_FINAL);
    if (j || !p || p->heap) return j;
    if (stage == WEFT__TAKE_FINAL) return weft__policy_final(s, (int)w->id, sched_worker(w)->nap == 0);
    if ((j = weft__policy_take_any(s, (int)w->id, NULL)) != NULL) {
        sched_worker(w)->nap = 0; /* it hands items out again: its next lapse is counted */
        return j;
    }
    return policy_first ? weft__sched_take(s, w, 1, false) : NULL; /* the NORMAL tasks with handles after all */
}

/* A ticket: pushed onto the submitting worker's own deque for each HIGH or
 * CRITICAL job it queues, so that the worker, popping its deque's newest
 * first, takes the best such job next, ahead of the default-priority jobs
 * below it, with no check per job in the core.  Idle workers look at the queue
 * before they steal (take), so a ticket only matters to its busy owner; one
 * that finds nothing (its job ran elsewhere or was removed) does nothing.
 * One object for all: a ticket is stateless, and never enters an overflow
 * list (it is pushed only when the deque takes it). */
static weft__job *ticket_run(weft__worker *w, weft__job *self) {
    (void)self;
    weft__sched_worker *sw = sched_worker(w);
    count_down(sw); /* a flood of tickets keeps w from idling: tick here too */
    return weft__sched_take(sw->s, w, 2, false);
}

weft__job weft__sched_ticket = {ticket_run, NULL};

/* After queueing at `level` from worker w (or another thread: NULL); `ticket`:
 * the job must get ahead of w's deque. */
static void queued_ticket(weft__sched *s, weft__worker *w, unsigned level, bool ticket) {
    activate(s);
    /* A sealed deque (a policy) or no memory refuses it: idle workers still
     * find the job. */
    if (w && level >= 2 && ticket) (void)weft__deque_push(&w->deque, &weft__sched_ticket);
    weft__source_notify(s->ex, w);
}

static void queued(weft__sched *s, weft__worker *w, unsigned level) { queued_ticket(s, w, level, true); }

/* A policy takes every job the core queues (core/layer.h's push). */
/* push, for a job that `from` queued (a worker's index, or -1: a thread
 * that is no worker), w being the worker that moves it into the policy. */
static int push_from(weft__worker *w, weft__sched *s, weft__job *job, int from) {
    if (s->policy->heap) return queue_now(s, w, job, WEFT_PRIORITY_NORMAL);
    return weft__policy_push(s, job, WEFT_PRIORITY_NORMAL, w ? (int)w->id : -1, from);
}

static int push(weft__worker *w, void *state, weft__job *job) {
    return push_from(w, state, job, w ? (int)w->id : -1);
}

/* A worker about to sleep beside a user policy that still holds items it
 * did not hand out (it returned NULL: weft__policy_final counts that when
 * it can tell): nothing would wake a worker for them, so a policy that hands
 * items out late (one that holds each a while, or whose pop said NULL beside
 * a push) left them queued and weft_executor_wait_all waiting for ever.  The
 * worker naps instead, 50 us doubling up to 1 ms, and looks again. */
static uint64_t policy_nap(weft__worker *w, void *state) {
    weft__sched *s = state;
    weft__sched_worker *sw = sched_worker(w);
    if (!s->policy->checked || atomic_load_explicit(&s->policy->outstanding, memory_order_seq_cst) <= 0)
        return sw->nap = 0;
    sw->nap = sw->nap ? (sw->nap * 2 < 1000000u ? sw->nap * 2 : 1000000u) : 50000u;
    return sw->nap;
}

static const weft__source source_prio = {take, NULL, NULL};
static const weft__source source_policy = {take, push, policy_nap};

/* The queue is in use from now on: the worker loop starts looking at it. */
static inline void activate(weft__sched *s) {
    if (__builtin_expect(atomic_load_explicit(&s->ex->source, memory_order_relaxed) == NULL, 0))
        (void)weft__source_set(s->ex, &source_prio, s);
}

/* ---- queueing ---- */

static inline bool prio_ok(int p) { return p >= WEFT_PRIORITY_LOW && p <= WEFT_PRIORITY_CRITICAL; }

static int queue_now(weft__sched *s, weft__worker *w, weft__job *job, int prio) {
    weft_sched_handle h;
    weft__mutex_lock(&s->q.lock);
    int st = weft__squeue_reserve_locked(&s->q, (unsigned)(prio + 1), NULL, &h);
    if (st == WEFT_OK) weft__squeue_insert_locked(&s->q, h.slot, job, weft__now_ns());
    weft__mutex_unlock(&s->q.lock);
    if (st != WEFT_OK) return st;
    queued(s, w, (unsigned)(prio + 1));
    return WEFT_OK;
}

int weft__sched_submit(weft_executor *ex, weft__worker *w, weft__job *job, int prio) {
    return weft__sched_submit_hint(ex, w, job, prio, NULL);
}

static int submit(weft_executor *ex, weft__worker *w, weft__job *job, int prio, const weft__hints *hint,
                  bool graph);

int weft__sched_submit_hint(weft_executor *ex, weft__worker *w, weft__job *job, int prio,
                            const weft__hints *hint) {
    return submit(ex, w, job, prio, hint, false);
}

int weft__sched_submit_graph(weft_executor *ex, weft__worker *w, weft__job *job, int prio,
                             const weft__hints *hint) {
    return submit(ex, w, job, prio, hint, true);
}

static int submit(weft_executor *ex, weft__worker *w, weft__job *job, int prio, const weft__hints *hint,
                  bool graph) {
    /* A worker of ex finds the layer in its own state (no search of the list). */
    weft__sched *s = w && w->ex == ex && w->id < ex->nworkers ? sched_worker(w)->s : weft__sched_of(ex);
    if (!s || !prio_ok(prio)) return WEFT_EINVAL;
    if (s->policy && !s->policy->heap) {
        if (!w) drain_before_outside_submit(s);
        int st = weft__policy_push(s, job, prio, w ? (int)w->id : -1, w ? (int)w->id : -1);
        if (st == 0) weft__source_notify(ex, w);
        return st == 0 ? WEFT_OK : WEFT_ENOMEM;
    }
    if (s->policy) return queue_now(s, w, job, prio); /* PRIORITY: one global order */
    weft__lanes *l = lanes_of(s, w);
    /* The stamp: relaxed, as it orders only against this thread's own
     * reservations (which it sees) and is a hint against others'. */
    if (!l || weft__lanes_push(l, (unsigned)(prio + 1), job, hint,
                               atomic_load_explicit(&s->q.next_seq, memory_order_relaxed)) != WEFT_OK)
        return queue_now(s, w, job, prio); /* another thread, or the lanes short of memory */
    queued_ticket(s, w, (unsigned)(prio + 1), !graph || weft__deque_size(&w->deque) != 0);
    return WEFT_OK;
}

size_t weft__sched_submit_graph_many(weft_executor *ex, weft__worker *w, size_t k, weft__job *const *job,
                                     const uint8_t *level, const weft__hints *hint) {
    weft__sched *s = w && w->ex == ex && w->id < ex->nworkers ? sched_worker(w)->s : weft__sched_of(ex);
    weft__lanes *l = s && !s->policy ? lanes_of(s, w) : NULL;
    size_t n = 0;
    if (l) {
        bool ticket = weft__deque_size(&w->deque) != 0; /* (see weft__sched_submit_graph) */
        n = weft__lanes_push_many(l, k, level, job, hint, atomic_load_explicit(&s->q.next_seq, memory_order_relaxed));
        if (n) {
            activate(s);
            if (ticket)
                for (size_t i = 0; i < n; i++)
                    if (level[i] >= 2) (void)weft__deque_push(&w->deque, &weft__sched_ticket);
            weft__source_notify(ex, w);
        }
    }
    /* A policy, or the lanes short of memory: one at a time. */
    while (n < k && submit(ex, w, job[n], (int)level[n] - 1, hint ? &hint[n] : NULL, true) == WEFT_OK) n++;
    return n;
}

int weft__sched_reserve(weft_executor *ex, int prio, weft__sched_removed_fn on_remove, weft__job *job,
                        weft_sched_handle *out) {
    weft__sched *s = weft__sched_of(ex);
    if (!s || !prio_ok(prio) || !out || !job) return WEFT_EINVAL;
    /* WEFT_SCHED_PRIORITY: this thread's earlier default-priority jobs wait in
     * the injector and take their place among equals only when moved into the
     * queue; moved first, they stay ahead of this one (FIFO among equals).
     * A worker's own jobs were queued when it pushed them. */
    if (s->policy && s->policy->heap && !weft__current_worker(ex)) drain_before_outside_submit(s);
    weft__mutex_lock(&s->q.lock);
    int st = weft__squeue_reserve_locked(&s->q, (unsigned)(prio + 1), on_remove, out);
    if (st == WEFT_OK) s->q.slots[out->slot].job = job;
    weft__mutex_unlock(&s->q.lock);
    return st;
}

void weft__sched_queue_job(weft_executor *ex, weft__worker *w, weft_sched_handle h, weft__job *job) {
    weft__sched *s = weft__sched_of(ex);
    weft__mutex_lock(&s->q.lock);
    weft__sched_slot *sl = weft__squeue_slot_locked(&s->q, h);
    unsigned level = sl ? sl->level : 0;
    if (sl) weft__squeue_insert_locked(&s->q, h.slot, job, weft__now_ns());
    weft__mutex_unlock(&s->q.lock);
    if (!sl) {
        /* Removed before it was queued: weft_sched_remove marked the task then
         * (its callback); it runs now only to report itself cancelled.  At
         * CRITICAL: it does no work of its own, and its dependents, of any
         * priority, wait for it (not run here: a chain of removed tasks would
         * nest a call per link). */
        if (submit(ex, w, job, WEFT_PRIORITY_CRITICAL, NULL, false) != WEFT_OK) weft__sched_resubmit(ex, w, job);
        return;
    }
    queued(s, w, level);
}

void weft__sched_unreserve(weft_executor *ex, weft_sched_handle h) {
    weft__sched *s = weft__sched_of(ex);
    if (!s) return;
    weft__mutex_lock(&s->q.lock);
    if (weft__squeue_slot_locked(&s->q, h)) weft__squeue_free_locked(&s->q, h.slot);
    weft__mutex_unlock(&s->q.lock);
}

bool weft__sched_withdraw(weft_executor *ex, weft_sched_handle h) {
    weft__sched *s = weft__sched_of(ex);
    if (!s) return false;
    weft__mutex_lock(&s->q.lock);
    weft__sched_slot *sl = weft__squeue_slot_locked(&s->q, h);
    bool queued = sl && sl->pos >= 0;
    if (queued) weft__squeue_erase_locked(&s->q, h.slot);
    if (sl) weft__squeue_free_locked(&s->q, h.slot);
    weft__mutex_unlock(&s->q.lock);
    return queued;
}

bool weft__sched_policy_orders(weft_executor *ex) {
    weft__sched *s = weft__sched_of(ex);
    return s && s->policy && !s->policy->heap;
}

void weft__sched_inherit(weft_executor *ex, weft_sched_handle h, int prio) {
    weft__sched *s = weft__sched_of(ex);
    if (!s || !s->inherit || !prio_ok(prio)) return;
    bool raised = false;
    weft__mutex_lock(&s->q.lock);
    weft__sched_slot *sl = weft__squeue_slot_locked(&s->q, h);
    if (sl && sl->level < (unsigned)(prio + 1)) {
        weft__squeue_set_level_locked(&s->q, h.slot, (unsigned)(prio + 1), weft__now_ns());
        raised = true;
    }
    weft__mutex_unlock(&s->q.lock);
    if (raised) atomic_fetch_add_explicit(&s->inherited, 1, memory_order_relaxed);
}

void weft__sched_resubmit(weft_executor *ex, weft__worker *w, weft__job *job) {
    /* From a thread that is not a worker the injector may lack memory; the job
     * must still run (it reports the task cancelled).  Spinning until memory
     * came back hung the caller while it stayed short: the spare list. */
    (void)weft__submit_from_always(ex, w, job);
}

/* ---- the layer ---- */

weft__sched *weft__sched_of(weft_executor *ex) {
    for (unsigned i = 0; i < ex->nlayers; i++)
        if (ex->layers[i] == &weft__sched_layer) return sched_worker(&ex->workers[0])->s;
    return NULL;
}

/* Finishes the lanes of ex's first n workers. */
static void lanes_fini(weft_executor *ex, unsigned n) {
    for (unsigned i = 0; i < n; i++) weft__lanes_fini(&sched_worker(&ex->workers[i])->lanes);
}

static int executor_init(weft_executor *ex, const weft_executor_config *config) {
    const weft_sched_config *c = config ? config->sched : NULL;
    weft__sched *s = weft__calloc(sizeof *s);
    if (!s) return WEFT_ENOMEM;
    s->ex = ex;
    int st = weft__squeue_init(&s->q);
    if (st != WEFT_OK) return weft__free(s, sizeof *s), st;
    s->esc_ns[0] = c && c->escalate_low_ns ? c->escalate_low_ns : 20000000u;
    s->esc_ns[1] = c && c->escalate_normal_ns ? c->escalate_normal_ns : 20000000u;
    s->tick_ns = c && c->tick_ns ? c->tick_ns : 2000000u;
    s->auto_escalate = !(c && c->no_escalation);
    s->inherit = !(c && c->no_inheritance);
    atomic_init(&s->next_tick, saturating_add(weft__now_ns(), s->tick_ns));
    if ((st = weft__policy_create(s, c, ex->nworkers)) != WEFT_OK) {
        weft__squeue_fini(&s->q);
        weft__free(s, sizeof *s);
        return st;
    }
    unsigned i = 0;
    for (; i < ex->nworkers; i++) {
        weft__sched_worker *sw = sched_worker(&ex->workers[i]);
        if ((st = weft__lanes_init(&sw->lanes)) != WEFT_OK) break;
        sw->s = s;
        sw->countdown = TICK_EVERY;
    }
    /* Before the workers start.  Setting a source with push seals every
     * worker's deque, which takes a block each: without it the create must
     * fail, not go on with no source (jobs then reached no queue any worker
     * looks at: runs never ended and the executor leaked at destroy). */
    if (st == WEFT_OK && s->policy) st = weft__source_set(ex, &source_policy, s);
    if (st != WEFT_OK) {
        lanes_fini(ex, i);
        /* weft__layers_init calls executor_fini after a failed init: it must
         * find no state to free a second time. */
        for (unsigned j = 0; j < i; j++) sched_worker(&ex->workers[j])->s = NULL;
        weft__policy_destroy(s);
        weft__squeue_fini(&s->q);
        weft__free(s, sizeof *s);
        return st;
    }
    return WEFT_OK;
}

static void executor_fini(weft_executor *ex) {
    weft__sched *s = sched_worker(&ex->workers[0])->s;
    if (!s) return;
    lanes_fini(ex, ex->nworkers);
    weft__policy_destroy(s);
    weft__squeue_fini(&s->q);
    weft__free(s, sizeof *s);
}

weft__layer weft__sched_layer = {
    .name = "sched",
    .worker_bytes = sizeof(weft__sched_worker),
    .executor_init = executor_init,
    .executor_fini = executor_fini,
};
