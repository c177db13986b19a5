/* Idle-time pollers (core/layer.h): registered by layers that wait on
 * something outside the executor (GPU streams, MPI requests, timers), called by
 * workers that ran out of work.
 *
 * Calls: a worker claims a slot's `busy` flag (so a poller is never called by
 * two workers at once), then loads its function.  Removal clears the function
 * and waits until `busy` is clear.  Both sides are seq_cst, so either the
 * worker's claim comes first (removal waits for it) or its load of the
 * function comes after the clear (it sees NULL): a removed poller is never
 * entered once weft__poller_remove has returned. */
#include "core/alloc.h"
#include "core/layer.h"

struct weft__poller_slot {
    _Atomic(weft__poll_fn) fn;
    _Atomic(void *) arg;
    _Atomic int busy;
    weft__worker *_Atomic caller; /* the worker inside fn, for the remove-from-inside check */
};

struct weft__poller { int unused_; }; /* a handle is a slot's address */

static struct weft__poller_slot *slot_of(weft__poller *p) { return (struct weft__poller_slot *)(void *)p; }

int weft__poller_add(weft_executor *ex, weft__poll_fn fn, void *arg, weft__poller **out) {
    if (!ex || !fn || !out) return WEFT_EINVAL;
    weft__mutex_lock(&ex->poll_lock);
    if (!ex->poll_slots) {
        ex->poll_slots = weft__calloc_aligned(sizeof(struct weft__poller_slot) * WEFT__POLLERS_MAX, WEFT__CACHE_LINE);
        if (!ex->poll_slots) {
            weft__mutex_unlock(&ex->poll_lock);
            return WEFT_ENOMEM;
        }
    }
    int st = WEFT_EBUSY;
    for (unsigned i = 0; i < WEFT__POLLERS_MAX; i++) {
        struct weft__poller_slot *s = &ex->poll_slots[i];
        if (atomic_load_explicit(&s->fn, memory_order_relaxed)) continue;
        atomic_store_explicit(&s->arg, arg, memory_order_relaxed);
        atomic_store_explicit(&s->fn, fn, memory_order_seq_cst); /* after arg: a caller that sees fn sees arg */
        atomic_fetch_add_explicit(&ex->npollers, 1, memory_order_seq_cst);
        *out = (weft__poller *)(void *)s;
        st = WEFT_OK;
        break;
    }
    weft__mutex_unlock(&ex->poll_lock);
    if (st == WEFT_OK) weft__pollers_kick(ex);
    return st;
}

int weft__poller_remove(weft_executor *ex, weft__poller *p) {
    if (!ex || !p || !ex->poll_slots) return WEFT_EINVAL;
    struct weft__poller_slot *s = slot_of(p);
    if (s < ex->poll_slots || s >= ex->poll_slots + WEFT__POLLERS_MAX) return WEFT_EINVAL;
    weft__worker *me = weft__current_worker(ex);
    if (me && atomic_load_explicit(&s->caller, memory_order_relaxed) == me) return WEFT_EBUSY;
    weft__mutex_lock(&ex->poll_lock);
    if (!atomic_load_explicit(&s->fn, memory_order_relaxed)) {
        weft__mutex_unlock(&ex->poll_lock);
        return WEFT_EINVAL; /* removed already */
    }
    atomic_store_explicit(&s->fn, NULL, memory_order_seq_cst);
    atomic_fetch_sub_explicit(&ex->npollers, 1, memory_order_seq_cst);
    unsigned idle = 0;
    while (atomic_load_explicit(&s->busy, memory_order_seq_cst)) weft__spin_pause(&idle);
    weft__mutex_unlock(&ex->poll_lock);
    return WEFT_OK;
}

int weft__pollers_run(weft__worker *w) {
    weft_executor *ex = w->ex;
    int most = WEFT__POLL_IDLE;
    for (unsigned i = 0; i < WEFT__POLLERS_MAX; i++) {
        struct weft__poller_slot *s = &ex->poll_slots[i];
        if (!atomic_load_explicit(&s->fn, memory_order_relaxed)) continue;
        int zero = 0;
        if (!atomic_compare_exchange_strong_explicit(&s->busy, &zero, 1, memory_order_seq_cst, memory_order_relaxed)) {
            most = most > WEFT__POLL_PENDING ? most : WEFT__POLL_PENDING; /* another worker has it */
            continue;
        }
        weft__poll_fn fn = atomic_load_explicit(&s->fn, memory_order_seq_cst);
        if (fn) {
            atomic_store_explicit(&s->caller, w, memory_order_relaxed);
            int r = fn(ex, atomic_load_explicit(&s->arg, memory_order_relaxed));
            atomic_store_explicit(&s->caller, NULL, memory_order_relaxed);
            if (r > most) most = r;
        }
        atomic_store_explicit(&s->busy, 0, memory_order_release);
    }
    return most;
}

void weft__pollers_kick(weft_executor *ex) {
    if (ex) weft__sleep_notify(&ex->sleep);
}

void weft__pollers_destroy(weft_executor *ex) {
    if (ex->poll_slots)
        weft__free_aligned(ex->poll_slots, sizeof(struct weft__poller_slot) * WEFT__POLLERS_MAX, WEFT__CACHE_LINE);
    ex->poll_slots = NULL;
}
