/* weft_silent_async: a task nobody waits on needs no future, so its record is a
 * job and four pointers (48 bytes instead of a future's ~300), kept on per-worker
 * free lists.  Fewer bytes per task is what makes 10^6 of them cheap: the records
 * of tasks not yet run are all live at once.
 *
 * A record returns to the worker that allocated it (its home), so that a worker
 * submitting many tasks that others run keeps reusing its own records instead of
 * allocating while the thieves free: run by the home worker, it goes straight to
 * the private list; run elsewhere, it is pushed on the home's `silent_remote`
 * list (a lock-free stack: any worker pushes, the home takes the whole list with
 * one exchange, so there is no ABA). */
#include "async/async.h"
#include "core/alloc.h"

typedef struct silent {
    weft__job job; /* first: the job is the record; job.next links free lists */
    weft_task_fn fn;
    void *arg;
    weft_executor *ex;
    weft__worker *home; /* NULL: allocated outside the workers */
} silent;

static void free_list(weft__job *j) {
    while (j) {
        weft__job *next = j->next;
        weft__free(j, sizeof(silent));
        j = next;
    }
}

void weft__silent_free_cache(weft__worker *w) {
    free_list(w->silent_free);
    /* The executor is stopped: no worker pushes any more. */
    free_list(atomic_exchange_explicit(&w->silent_remote, NULL, memory_order_acquire));
    w->silent_free = NULL;
    w->silent_nfree = 0;
}

static void keep_local(weft__worker *w, silent *s) {
    if (w->silent_nfree >= WEFT__ASYNC_FREE_MAX) {
        weft__free(s, sizeof *s);
        return;
    }
    s->job.next = w->silent_free;
    w->silent_free = s;
    w->silent_nfree++;
}

/* w ran s: back to its home. */
static void release(weft__worker *w, silent *s) {
    weft__worker *home = s->home;
    if (!home || home == w) {
        keep_local(w, s);
        return;
    }
    weft__job *head = atomic_load_explicit(&home->silent_remote, memory_order_relaxed);
    do s->job.next = head;
    /* Release: the home's acquire exchange sees the link (and we are done with s). */
    while (!atomic_compare_exchange_weak_explicit(&home->silent_remote, (void **)&head, s, memory_order_release,
                                                  memory_order_relaxed));
}

static weft__job *silent_run(weft__worker *w, weft__job *job) {
    silent *s = (silent *)job;
    weft_executor *ex = s->ex;
    (void)weft__fj_run_task(w, NULL, s->fn, s->arg); /* nobody to report to */
    release(w, s);
    weft__executor_run_end(ex);
    return NULL;
}

static silent *take(weft__worker *w) {
    if (!w) return weft__alloc(sizeof(silent));
    if (!w->silent_free) {
        /* Acquire: pairs with the release CAS of the workers that pushed them.
         * The remote records are not counted in silent_nfree's bound. */
        w->silent_free = atomic_exchange_explicit(&w->silent_remote, NULL, memory_order_acquire);
        if (!w->silent_free) return weft__alloc(sizeof(silent));
    }
    silent *s = w->silent_free;
    w->silent_free = s->job.next;
    if (w->silent_nfree) w->silent_nfree--;
    return s;
}

weft_status weft_silent_async(weft_executor *ex, weft_task_fn fn, void *arg) {
    if (!ex || !fn) return WEFT_EINVAL;
    weft__worker *w = weft__current_worker(ex);
    silent *s = take(w);
    if (!s) return WEFT_ENOMEM;
    *s = (silent){{silent_run, NULL}, fn, arg, ex, w};
    weft__executor_run_begin(ex);
    if (w) {
        weft__push_local(w, &s->job); /* cannot fail */
        return WEFT_OK;
    }
    int st = weft__submit(ex, &s->job);
    if (st != 0) {
        weft__executor_run_end(ex);
        weft__free(s, sizeof *s);
    }
    return st;
}
