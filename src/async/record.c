/* Async task records: allocation from per-worker free lists, and their release. */
#include "async/async.h"
#include "core/alloc.h"

/* From the free list of w (the calling thread's worker, or NULL), else from the
 * allocator.  NULL without memory. */
static weft__async *take_record(weft__worker *w) {
    if (w && w->async_free) {
        weft__async *a = w->async_free;
        w->async_free = a->next_free;
        w->async_nfree--;
        return a;
    }
    return weft__alloc(sizeof(weft__async));
}

static void free_record(weft__async *a) {
    weft__free(a->edges, a->nedges * sizeof *a->edges);
    weft__free(a, sizeof *a);
}

/* Last reference gone.  A worker of the record's executor keeps it for reuse;
 * any other thread (the executor may even be gone) frees it. */
void weft__async_release_record(weft_future *f) {
    weft__async *a = (weft__async *)f;
    weft__worker *w = weft__current_worker(f->ex);
    if (!w || w->async_nfree >= WEFT__ASYNC_FREE_MAX) {
        free_record(a);
        return;
    }
    weft__free(a->edges, a->nedges * sizeof *a->edges);
    a->edges = NULL;
    a->nedges = 0;
    a->next_free = w->async_free;
    w->async_free = a;
    w->async_nfree++;
}

void weft__async_free_cache(weft__worker *w) {
    weft__async *a = w->async_free;
    while (a) {
        weft__async *next = a->next_free;
        free_record(a);
        a = next;
    }
    w->async_free = NULL;
    w->async_nfree = 0;
    weft__silent_free_cache(w);
}

weft__async *weft__async_new(weft_executor *ex, weft__worker *w, weft_task_fn fn, void *arg, bool keep_handle) {
    weft__async *a = take_record(w);
    if (!a) return NULL;
    weft__future_init(&a->fut, ex, keep_handle ? 2u : 1u, weft__async_release_record);
    a->fn = fn;
    a->arg = arg;
    atomic_init(&a->claimed, 0);
    atomic_init(&a->join, 1);
    atomic_init(&a->succ, NULL);
    a->edges = NULL;
    a->nedges = 0;
    a->next_free = NULL;
    a->sems = NULL;
    return a;
}
