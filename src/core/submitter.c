/* Submitter slots: how a thread that is not a worker hands jobs to an executor
 * cheaply (Taskflow's and oneTBB's async_task benchmark submits 10^6 tasks from
 * main; a server's accept loop or a GUI thread does the same).
 *
 * Through the injector each such job cost a CAS on its tail and an RMW on the
 * slot's state for the producer, the same again for the consumer, and, because
 * one worker ran jobs faster than main queued them, a park and a futex wake-up
 * every few jobs (1 worker: 141 ns a task, 0.45 CPUs busy).  A slot instead
 * gives the thread a deque of its own, which only it pushes to (a store and a
 * release store; a fence to look at the sleepers) and never pops from, so a
 * worker may claim many jobs in one CAS (weft__deque_steal_many): it runs one
 * and pushes the rest on its own deque, where its pops are cheap and other
 * workers steal them as usual.  Records of silent tasks come from the slot's
 * own cache (async/'s per-worker state: a slot is a weft__worker with no
 * thread), so no malloc and free per task either.
 *
 * A slot is claimed on the thread's first submission to the executor and kept
 * by that thread for the executor's life; a thread that exits keeps it too
 * (nothing tells us), so a new thread that happens to get the same thread-local
 * address takes it over (safe: the old one is gone).  With every slot taken,
 * submissions go through the injector as before.  Workers look at slots only
 * when their own deque is empty: one load of nsubmitters when none was ever
 * claimed.  An executor whose deques are sealed (a ready-queue policy takes
 * every job: core/layer.h) gives no slots: its jobs must reach the policy. */
#include "core/executor.h"
#include "core/layer.h"     /* weft__source: a sealed executor gives no slots */
#include "core/obs_hooks.h" /* steals count like any */

/* Unique per live thread: its address is the owner token of a slot. */
static _Thread_local char tls_token;

/* The slot this thread used last, for one executor (serial guards against an
 * executor freed and another created at the same address): executor.h reads
 * it inline (weft__submitter_cached). */
_Thread_local weft__sub_cache weft__tls_sub;

static _Atomic uint64_t next_serial = 1;

uint64_t weft__submitter_serial(void) { return atomic_fetch_add_explicit(&next_serial, 1, memory_order_relaxed); }

static inline weft__worker *slot_at(weft_executor *ex, unsigned k) { return &ex->workers[ex->nworkers + k]; }

/* The slot this thread owns on ex, claiming a free one; NULL if none. */
static weft__worker *claim(weft_executor *ex) {
    const void *me = &tls_token;
    unsigned used = atomic_load_explicit(&ex->nsubmitters, memory_order_acquire);
    for (unsigned k = 0; k < used; k++)
        if (atomic_load_explicit(&slot_at(ex, k)->sub_owner, memory_order_acquire) == me) return slot_at(ex, k);
    for (unsigned k = 0; k < WEFT__SUBMITTERS; k++) {
        const void *none = NULL;
        /* Acquire: a previous owner's pushes (a thread that exited) happen
         * before ours.  There is none today but the same-token case above. */
        if (!atomic_compare_exchange_strong_explicit(&slot_at(ex, k)->sub_owner, &none, me, memory_order_acq_rel,
                                                     memory_order_relaxed))
            continue;
        /* Make the workers look at slots [0, k] (seq_cst: see below). */
        unsigned n = atomic_load_explicit(&ex->nsubmitters, memory_order_relaxed);
        while (n < k + 1 && !atomic_compare_exchange_weak_explicit(&ex->nsubmitters, &n, k + 1, memory_order_seq_cst,
                                                                   memory_order_relaxed)) {
        }
        /* Our pushes look at the sleepers with the light fence only, which
         * relies on a parking worker taking the heavy one; it does when it
         * reads nsubmitters != 0 (seq_cst, after its idle announcement).  One
         * that read 0 announced idle before our count in the total order, so
         * after this fence our first look at the sleep word sees it idle. */
        atomic_thread_fence(memory_order_seq_cst);
        return slot_at(ex, k);
    }
    return NULL;
}

weft__worker *weft__submitter_get(weft_executor *ex) {
    if (weft__tls_sub.ex == ex && weft__tls_sub.serial == ex->serial) return weft__tls_sub.slot;
    /* Sealed deques (a policy takes every job): no slot, the injector. */
    const struct weft__source *src = atomic_load_explicit(&ex->source, memory_order_acquire);
    weft__worker *slot = src && src->push ? NULL : claim(ex);
    weft__tls_sub.ex = ex;
    weft__tls_sub.serial = ex->serial;
    weft__tls_sub.slot = slot;
    return slot;
}

int weft__submitter_push(weft_executor *ex, weft__worker *slot, weft__job *job) {
    if (weft__deque_push_nopop(&slot->deque, job) != 0) return WEFT_ENOMEM;
    /* Always: the workers may all have emptied this deque and parked without
     * our stale view of top showing it (a worker's own push may skip this, as
     * it runs its jobs itself; nobody runs ours).  The light fence pairs with
     * the heavy one a parking worker takes while slots exist (worker.c); a
     * searching worker will find the job. */
    weft__sleep_notify_light(&ex->sleep);
    return WEFT_OK;
}

enum { STEAL_MANY = 32 };

/* Worker w takes a batch from slot k: runs the first job (returned), keeps the
 * rest.  NULL if the slot looked empty (or, unless `every`, a race was lost). */
static weft__job *steal_slot(weft__worker *w, unsigned k, bool every) {
    weft_executor *ex = w->ex;
    weft__job *got[STEAL_MANY];
    unsigned n;
    weft__steal_result r;
    while ((r = weft__deque_steal_many(&slot_at(ex, k)->deque, got, STEAL_MANY, &n)) == WEFT__STEAL_RETRY && every)
        weft__cpu_relax();
    if (r != WEFT__STEAL_OK) return NULL;
    weft__hook_steal(w, true, -1); /* observe/: a steal from outside the workers, like the injector's */
    w->last_victim = (int)(ex->nworkers + k); /* steal_again comes back here while it has jobs */
    if (ex->nworkers == 1) {
        /* Nobody to share them with: the private list, in order (find_local
         * takes it after the deque, cooperative waits included), which spares
         * the deque's fence per pop, a fifth of the time per task here. */
        for (unsigned j = 1; j < n; j++) weft__overflow_append(w, got[j]);
    } else {
        /* Newest first onto our deque, so our pops run them oldest first (in
         * the order they were submitted) and thieves take the newest. */
        for (unsigned j = n; j-- > 1;) weft__push_local(w, got[j]);
    }
    return got[0];
}

/* Where worker w starts its look at `used` slots: a fresh random one each
 * time (weft__worker_rand).  A start taken from w->rng without stepping it
 * stayed the same while the slots had work (the worker steps it only when it
 * tries other workers), and the fairness look began at slot 0: while one
 * thread kept its slot full, a
 * task in another thread's slot waited for all of it, the tasks queued after
 * it included (for ever, for a thread that never stops).  One slot (a lone
 * submitting thread, the usual case): no step. */
static inline unsigned slot_start(weft__worker *w, unsigned used) {
    return used == 1 ? 0 : (unsigned)(weft__worker_rand(w) % used);
}

/* Worker w: a job from the submitter slots, or NULL.  `every` (the last look
 * before parking): retry lost races until each slot is seen empty. */
weft__job *weft__submitters_steal(weft__worker *w, bool every) {
    weft_executor *ex = w->ex;
    unsigned used = atomic_load_explicit(&ex->nsubmitters, memory_order_acquire);
    if (used == 0) return NULL;
    unsigned start = slot_start(w, used);
    for (unsigned i = 0; i < used; i++) {
        unsigned k = start + i;
        if (k >= used) k -= used;
        weft__job *j = steal_slot(w, k, every);
        if (j) return j;
    }
    return NULL;
}

weft__job *weft__submitters_steal_one(weft__worker *w) {
    weft_executor *ex = w->ex;
    unsigned used = atomic_load_explicit(&ex->nsubmitters, memory_order_acquire);
    if (used == 0) return NULL;
    unsigned start = slot_start(w, used); /* not slot 0 first: see slot_start */
    for (unsigned i = 0; i < used; i++) {
        unsigned k = start + i;
        if (k >= used) k -= used;
        weft__job *j;
        if (weft__deque_steal(&slot_at(ex, k)->deque, &j) == WEFT__STEAL_OK) {
            weft__hook_steal(w, true, -1); /* observe/: as steal_slot's */
            return j;
        }
    }
    return NULL;
}

weft__job *weft__submitter_steal_again(weft__worker *w, unsigned v) {
    return steal_slot(w, v - w->ex->nworkers, false);
}
