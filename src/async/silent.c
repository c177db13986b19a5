/* weft_silent_async: a task nobody waits on needs no future, so its record is a
 * job and three pointers (40 bytes instead of a future's ~300), kept on per-worker
 * free lists like the others.  Fewer bytes per task is what makes 10^6 of them
 * cheap: the records of tasks not yet run are all live at once. */
#include "async/async.h"
#include "core/alloc.h"

typedef struct silent {
    weft__job job; /* first: the job is the record */
    weft_task_fn fn;
    void *arg;
    weft_executor *ex;
} silent;

static void release(weft__worker *w, silent *s) {
    if (w->silent_nfree >= WEFT__ASYNC_FREE_MAX) {
        weft__free(s, sizeof *s);
        return;
    }
    s->job.next = w->silent_free;
    w->silent_free = s;
    w->silent_nfree++;
}

void weft__silent_free_cache(weft__worker *w) {
    weft__job *j = w->silent_free;
    while (j) {
        weft__job *next = j->next;
        weft__free(j, sizeof(silent));
        j = next;
    }
    w->silent_free = NULL;
    w->silent_nfree = 0;
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
    if (w && w->silent_free) {
        silent *s = w->silent_free;
        w->silent_free = s->job.next;
        w->silent_nfree--;
        return s;
    }
    return weft__alloc(sizeof(silent));
}

weft_status weft_silent_async(weft_executor *ex, weft_task_fn fn, void *arg) {
    if (!ex || !fn) return WEFT_EINVAL;
    weft__worker *w = weft__current_worker(ex);
    silent *s = take(w);
    if (!s) return WEFT_ENOMEM;
    *s = (silent){{silent_run, NULL}, fn, arg, ex};
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
