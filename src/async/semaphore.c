/* Counting semaphores for tasks: taking and giving back units, parking and
 * waking tasks, and async tasks that hold semaphores while they run.
 *
 * A release with a task parked hands its unit straight to the first waiter
 * (FIFO) instead of raising the count, so a woken task never finds its unit
 * taken by a newcomer and parks again, and no wake-up is spent on nothing.
 *
 * While nobody waits, taking and giving back a unit is one atomic operation on
 * `state` (the mutex was two thirds of a semaphore's cost per task).  An
 * acquirer that takes `state` to 0 or below must park: it locks and queues
 * itself.  A release that finds `state` below 0 owes a unit to such an
 * acquirer: it locks and hands the unit to the first one queued, or, if that
 * acquirer has not queued itself yet, leaves a token it takes instead of
 * parking.  Every acquirer that went below 0 meets exactly one such release,
 * so no unit and no waiter is lost, and a newcomer never overtakes a waiter
 * (it finds `state` at 0 or below and queues behind).
 * A task needing several semaphores takes them in address order and keeps those
 * it has while it waits for the next: waits cannot form a circle, so a set of
 * tasks sharing semaphores always progresses. */
#include "async/semaphore.h"
#include "async/async.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/error_detail.h"

#include <stdlib.h>

weft_semaphore *weft_semaphore_create(size_t max, weft_status *err) {
    weft_status st = WEFT_OK;
    weft_semaphore *s = NULL;
    if (max == 0 || max > INTPTR_MAX)
        st = weft__fail(__func__, WEFT_EINVAL, "max is %zu (1 to INTPTR_MAX)", max);
    else if (!(s = weft__calloc(sizeof *s)))
        st = weft__fail_st(__func__, WEFT_ENOMEM);
    else if (weft__mutex_init(&s->mu) != 0) {
        weft__free(s, sizeof *s);
        s = NULL;
        st = weft__fail(__func__, WEFT_ESYS, "the mutex could not be initialised");
    }
    if (s) {
        s->max = max;
        atomic_init(&s->state, (intptr_t)max);
        atomic_init(&s->users, 0);
    }
    if (err) *err = st;
    return s;
}

weft_status weft_semaphore_destroy(weft_semaphore *s) {
    if (!s) return WEFT_OK;
    weft__mutex_lock(&s->mu);
    bool held = s->head || s->tokens || atomic_load_explicit(&s->state, memory_order_acquire) != (intptr_t)s->max;
    /* Acquire: pairs with the release of the last user's count, taken after
     * its last touch of s. */
    size_t users = atomic_load_explicit(&s->users, memory_order_acquire);
    weft__mutex_unlock(&s->mu);
    if (held) return weft__fail(__func__, WEFT_EBUSY, "the semaphore is held or has waiters");
    if (users)
        return weft__fail(__func__, WEFT_EBUSY,
                          "%zu run(s) or async task(s) that may still acquire or release it are in flight", users);
    weft__mutex_destroy(&s->mu);
    weft__free(s, sizeof *s);
    return WEFT_OK;
}

size_t weft_semaphore_value(weft_semaphore *s) {
    if (!s) return 0;
    intptr_t v = atomic_load_explicit(&s->state, memory_order_relaxed);
    return v > 0 ? (size_t)v : 0;
}

size_t weft_semaphore_max(const weft_semaphore *s) { return s ? s->max : 0; }

weft_status weft_semaphore_reset(weft_semaphore *s) {
    if (!s) return weft__fail(__func__, WEFT_EINVAL, "s is NULL");
    weft__mutex_lock(&s->mu);
    bool parked = s->head || atomic_load_explicit(&s->state, memory_order_relaxed) < 0;
    if (!parked) {
        s->tokens = 0;
        atomic_store_explicit(&s->state, (intptr_t)s->max, memory_order_release);
    }
    weft__mutex_unlock(&s->mu);
    return parked ? weft__fail(__func__, WEFT_EBUSY, "tasks are waiting on the semaphore") : WEFT_OK;
}

static int by_address(const void *a, const void *b) {
    uintptr_t x = (uintptr_t) * (weft_semaphore *const *)a, y = (uintptr_t) * (weft_semaphore *const *)b;
    return (x > y) - (x < y);
}

size_t weft__sem_set_normalize(weft_semaphore **s, size_t n) {
    if (n > 1) qsort(s, n, sizeof *s, by_address);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || s[k - 1] != s[i]) s[k++] = s[i];
    return k;
}

/* Takes one unit of m, or queues wt on it (false). */
static bool acquire_one(weft_semaphore *m, weft__sem_waiter *wt) {
    /* acq_rel: acquire what the unit's last holder did (its release); release
     * so that a release reading our decrement sees the queue we may join. */
    if (atomic_fetch_sub_explicit(&m->state, 1, memory_order_acq_rel) > 0) return true;
    weft__mutex_lock(&m->mu);
    bool got = m->tokens > 0; /* a release already owes us its unit */
    if (got) {
        m->tokens--;
    } else { /* park: the release that frees a unit hands it over */
        wt->next = NULL;
        if (m->tail) m->tail->next = wt;
        else m->head = wt;
        m->tail = wt;
    }
    weft__mutex_unlock(&m->mu);
    return got;
}

bool weft__sem_acquire(weft_semaphore *const *s, size_t n, weft__sem_waiter *wt) {
    for (; wt->held < n; wt->held++)
        if (!acquire_one(s[wt->held], wt)) return false;
    wt->held = 0;
    return true;
}

/* Queues a woken waiter's job on its executor. */
static void wake(weft__worker *w, weft__sem_waiter *wt) {
    weft__worker *own = w && w->ex == wt->ex ? w : NULL;
    /* From another executor's thread the job goes through wt->ex's injector.
     * It must not fail there for want of a block: the task, holding the unit
     * handed to it, would stay parked for ever (its run never ending, the
     * executor's destroy waiting for it).  So the injector's spare list. */
    (void)weft__submit_from_always(wt->ex, own, wt->job);
}

/* Gives one unit of m back; false if all its units were free already. */
static bool release_one(weft__worker *w, weft_semaphore *m) {
    intptr_t v = atomic_load_explicit(&m->state, memory_order_relaxed);
    do {
        if (v >= (intptr_t)m->max) return false; /* every unit free: nothing to give back */
        /* acq_rel: release our section to the next holder; acquire the queue
         * an acquirer that went below 0 may have joined. */
    } while (!atomic_compare_exchange_weak_explicit(&m->state, &v, v + 1, memory_order_acq_rel,
                                                    memory_order_relaxed));
    if (v >= 0) return true; /* nobody waits */
    weft__mutex_lock(&m->mu);
    weft__sem_waiter *wt = m->head;
    if (wt) {
        m->head = wt->next;
        if (!m->head) m->tail = NULL;
        wt->held++; /* the unit is now the waiter's; it goes on from the next one */
    } else {
        m->tokens++; /* its acquirer has not queued itself yet */
    }
    weft__mutex_unlock(&m->mu);
    /* After the unlock: the job may run (and park again) at once. */
    if (wt) wake(w, wt);
    return true;
}

weft_status weft__sem_release(weft__worker *w, weft_semaphore *const *s, size_t n) {
    weft_status st = WEFT_OK;
    for (size_t i = 0; i < n; i++)
        if (!release_one(w, s[i])) st = WEFT_EINVAL;
    return st;
}

void weft__sem_give_back(weft__worker *w, weft_semaphore *const *s, size_t held) {
    (void)weft__sem_release(w, s, held);
}

/* ---- async tasks holding semaphores ------------------------------------------ */

struct weft__async_sems {
    weft__sem_waiter wait;
    size_t n, cap; /* semaphores in s; slots allocated */
    /* Cancelled before it took its units: it holds none, so gives none back
     * (weft__async_sems_acquire).  Its job's thread only. */
    bool skipped;
    weft_semaphore *s[];
};

void weft__async_sems_free(struct weft__async_sems *set) {
    if (!set) return;
    /* The set's count on each semaphore (weft_async_acquire took it), after
     * its last use of them: a semaphore may be destroyed from here on. */
    for (size_t i = 0; i < set->n; i++) atomic_fetch_sub_explicit(&set->s[i]->users, 1, memory_order_release);
    weft__free(set, sizeof *set + set->cap * sizeof set->s[0]);
}

bool weft__async_sems_acquire(weft__worker *w, weft__async *a) {
    struct weft__async_sems *set = a->sems;
    /* Cancelled before it started: fn will not run, so it neither takes
     * units nor waits for them, as a skipped graph task (graph/semaphore.c);
     * units handed to it while it was parked go back.  It took them all the
     * same and parked while they were held: its future stayed pending until a
     * unit came, and a holder of the unit waiting on that future (to learn it
     * was cancelled) waited for ever.  The bit is never cleared, so the run
     * skips fn (async.c, weft__async_execute); a cancel that comes after the
     * units were taken finds them held and given back after the skip. */
    if (atomic_load_explicit(&a->fut.stop, memory_order_acquire) & WEFT__STOP_CANCEL) {
        weft__sem_give_back(w, set->s, set->wait.held);
        set->wait.held = 0;
        set->skipped = true;
        return true;
    }
    set->wait.job = &a->job;
    set->wait.ex = a->fut.ex;
    return weft__sem_acquire(set->s, set->n, &set->wait);
}

void weft__async_sems_release(weft__worker *w, weft__async *a) {
    /* a->sems stays set (dangling once freed): weft_future_wait_isolated may
     * read it meanwhile, and a record reused is given NULL afresh. */
    struct weft__async_sems *set = a->sems;
    /* A unit released that nobody took fails the task (it is still given back). */
    if (!set->skipped && weft__sem_release(w, set->s, set->n) != WEFT_OK)
        weft__future_fail(&a->fut, WEFT_EINVAL, "", 0);
    weft__async_sems_free(set);
}

weft_status weft_async_acquire(weft_executor *ex, weft_task_fn fn, void *arg, weft_semaphore *const *sems,
                               size_t nsems, weft_future **out) {
    if (out) *out = NULL;
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    if (!fn || (nsems && !sems)) return weft__fail(__func__, WEFT_EINVAL, "fn is NULL, or sems is NULL with nsems > 0");
    /* A count no array holds: the loop below read far past the caller's
     * array, and the set's size (sizeof *set + nsems * 8) wrapped to a small
     * block that the copy then overran. */
    if (nsems > PTRDIFF_MAX / sizeof *sems - 64)
        return weft__fail(__func__, WEFT_EINVAL, "nsems = %zu: more than an array holds", nsems);
    for (size_t i = 0; i < nsems; i++)
        if (!sems[i]) return weft__fail(__func__, WEFT_EINVAL, "sems[%zu] is NULL", i);
    if (nsems == 0) return weft_async(ex, fn, arg, out);
    weft__worker *w = weft__current_worker(ex);
    if (!w && weft__forked(ex)) return weft__fail(__func__, WEFT_EFORKED, WEFT__FORKED_WHY);
    struct weft__async_sems *set = weft__calloc(sizeof *set + nsems * sizeof set->s[0]);
    if (!set) return weft__fail_st(__func__, WEFT_ENOMEM);
    for (size_t i = 0; i < nsems; i++) set->s[i] = sems[i];
    set->cap = nsems;
    set->n = weft__sem_set_normalize(set->s, nsems);
    /* Counted on each semaphore until the set is freed (after its release):
     * weft_semaphore_destroy refuses meanwhile. */
    for (size_t i = 0; i < set->n; i++) atomic_fetch_add_explicit(&set->s[i]->users, 1, memory_order_relaxed);
    weft__async *a = weft__async_new(ex, w, fn, arg, out != NULL);
    if (!a) {
        weft__async_sems_free(set);
        return weft__fail_st(__func__, WEFT_ENOMEM);
    }
    a->sems = set;
    return weft__async_start(__func__, a, w, out);
}
