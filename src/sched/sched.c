/* The scheduling layer: its per-executor state, the worker loop's source
 * (core/layer.h) through which workers take prioritised jobs and a policy's
 * jobs, escalation, inheritance and the public handle API (weft/sched.h). */
#include "sched/sched.h"
#include "core/alloc.h"
#include "core/log.h"

/* ---- the source the worker loop calls ---- */

/* Workers look at the clock for escalation once per this many takes. */
enum { TICK_EVERY = 64 };

static inline weft__sched_worker *sched_worker(weft__worker *w) {
    return weft__layer_state(w, &weft__sched_layer);
}

/* Escalates if a tick is due (a worker's countdown ran out, or it is idle). */
static void maybe_tick(weft__sched *s) {
    if (!s->auto_escalate || weft__squeue_count_from(&s->q, 0) == 0) return;
    uint64_t now = weft__now_ns(), due = atomic_load_explicit(&s->next_tick, memory_order_relaxed);
    if (now < due ||
        !atomic_compare_exchange_strong_explicit(&s->next_tick, &due, now + s->tick_ns, memory_order_relaxed,
                                                 memory_order_relaxed))
        return; /* not yet, or another worker does it */
    weft__mutex_lock(&s->q.lock);
    size_t moved = weft__squeue_escalate_locked(&s->q, s->esc_ns, now);
    weft__mutex_unlock(&s->q.lock);
    if (moved) atomic_fetch_add_explicit(&s->escalations, moved, memory_order_relaxed);
}

static int queue_now(weft__sched *s, weft__worker *w, weft__job *job, int prio);
static inline void activate(weft__sched *s);
static int push(weft__worker *w, void *state, weft__job *job);

/* A policy orders every job, those submitted from other threads too: they
 * wait in the injector (the core's path for them costs nothing extra) and
 * move into the policy, in their order, when a worker looks.  Returns a job
 * the policy could not take (to run now), or NULL. */
static weft__job *drain_injector(weft__sched *s, weft__worker *w) {
    weft__job *j;
    while ((j = weft__injector_pop(&s->ex->injector)) != NULL)
        if (push(w, s, j) != 0) return j;
    return NULL;
}

/* The worker loop's source (core/layer.h), called when w's deque is empty:
 * NORMAL and above before stealing, anything after, and before sleeping. */
static weft__job *take(weft__worker *w, void *state, int stage) {
    weft__sched *s = state;
    maybe_tick(s);
    weft__policy *p = s->policy;
    weft__job *j = p ? drain_injector(s, w) : NULL;
    if (j) return j;
    unsigned min = stage == WEFT__TAKE_STEAL && !(p && p->heap) ? 1 : 0;
    /* FINAL takes the lock whatever the counts say (core/layer.h: no lost wake-up). */
    if (stage == WEFT__TAKE_FINAL || weft__squeue_count_from(&s->q, min) != 0) j = weft__squeue_pop(&s->q, min);
    if (j || !p || p->heap) return j;
    if ((j = weft__policy_take(s, (int)w->id, true)) != NULL) return j; /* its own first */
    if (p->ops.steal && (j = weft__policy_take(s, (int)w->id, false)) != NULL) return j;
    if (stage == WEFT__TAKE_FINAL && weft__policy_owed(s) > 0) {
        atomic_fetch_add_explicit(&s->policy_errors, 1, memory_order_relaxed);
        weft__log(WEFT_LOG_ERROR, "sched: the custom policy holds items but returned none");
    }
    return NULL;
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
    if (--sw->countdown == 0) { /* a flood of tickets keeps w from idling: tick here too */
        sw->countdown = TICK_EVERY;
        maybe_tick(sw->s);
    }
    if (weft__squeue_count_from(&sw->s->q, 2) == 0) return NULL;
    return weft__squeue_pop(&sw->s->q, 2);
}

static weft__job ticket = {ticket_run, NULL};

/* After queueing at `level` from worker w (or another thread: NULL). */
static void queued(weft__sched *s, weft__worker *w, unsigned level) {
    activate(s);
    /* A sealed deque (a policy) or no memory refuses it: idle workers still
     * find the job. */
    if (w && level >= 2) (void)weft__deque_push(&w->deque, &ticket);
    weft__source_notify(s->ex, w);
}

/* A policy takes every job the core queues (core/layer.h's push). */
static int push(weft__worker *w, void *state, weft__job *job) {
    weft__sched *s = state;
    if (s->policy->heap) return queue_now(s, w, job, WEFT_PRIORITY_NORMAL);
    return weft__policy_push(s, job, WEFT_PRIORITY_NORMAL, w ? (int)w->id : -1);
}

static const weft__source source_prio = {take, NULL};
static const weft__source source_policy = {take, push};

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
    weft__sched *s = weft__sched_of(ex);
    if (!s || !prio_ok(prio)) return WEFT_EINVAL;
    if (s->policy && !s->policy->heap) {
        if (!w) { /* the default-priority jobs submitted before this one go first */
            weft__job *refused = drain_injector(s, NULL);
            if (refused) weft__sched_resubmit(ex, NULL, refused); /* back where it was */
        }
        int st = weft__policy_push(s, job, prio, w ? (int)w->id : -1);
        if (st == 0) weft__source_notify(ex, w);
        return st == 0 ? WEFT_OK : WEFT_ENOMEM;
    }
    return queue_now(s, w, job, prio);
}

int weft__sched_reserve(weft_executor *ex, int prio, weft__sched_removed_fn on_remove, weft__job *job,
                        weft_sched_handle *out) {
    weft__sched *s = weft__sched_of(ex);
    if (!s || !prio_ok(prio) || !out || !job) return WEFT_EINVAL;
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
         * (its callback); it runs now only to report itself cancelled. */
        weft__sched_resubmit(ex, w, job);
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
    unsigned idle = 0;
    /* From a thread that is not a worker the injector may lack memory for a
     * moment; the job must still run (it reports the task cancelled). */
    while (weft__submit_from(ex, w, job) == WEFT_ENOMEM) weft__spin_pause(&idle);
}

/* ---- the layer ---- */

weft__sched *weft__sched_of(weft_executor *ex) {
    for (unsigned i = 0; i < ex->nlayers; i++)
        if (ex->layers[i] == &weft__sched_layer) return sched_worker(&ex->workers[0])->s;
    return NULL;
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
    atomic_init(&s->next_tick, weft__now_ns() + s->tick_ns);
    if ((st = weft__policy_create(s, c, ex->nworkers)) != WEFT_OK) {
        weft__squeue_fini(&s->q);
        weft__free(s, sizeof *s);
        return st;
    }
    for (unsigned i = 0; i < ex->nworkers; i++) {
        weft__sched_worker *sw = sched_worker(&ex->workers[i]);
        sw->s = s;
        sw->countdown = TICK_EVERY;
    }
    if (s->policy) (void)weft__source_set(ex, &source_policy, s); /* before the workers start */
    return WEFT_OK;
}

static void executor_fini(weft_executor *ex) {
    weft__sched *s = sched_worker(&ex->workers[0])->s;
    if (!s) return;
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
