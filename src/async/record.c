/* Async task records: allocation from per-worker free lists, and their release. */
#include "async/async.h"
#include "core/alloc.h"

/* aw->nfree: the owner's count, read by the metrics from any thread (async.h). */
static inline size_t nfree_get(weft__async_worker *aw) {
    return atomic_load_explicit(&aw->nfree, memory_order_relaxed);
}
static inline void nfree_set(weft__async_worker *aw, size_t n) {
    atomic_store_explicit(&aw->nfree, n, memory_order_relaxed);
}

/* From the free list of w (the calling thread's worker, or NULL), else from the
 * allocator.  NULL without memory. */
static weft__async *take_record(weft__worker *w) {
    weft__async_worker *aw = w ? weft__async_worker_of(w) : NULL;
    if (aw && aw->free) {
        weft__async *a = aw->free;
        aw->free = a->next_free;
        nfree_set(aw, nfree_get(aw) - 1);
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
    weft__async_worker *aw = w ? weft__async_worker_of(w) : NULL;
    if (!aw || nfree_get(aw) >= WEFT__ASYNC_FREE_MAX) {
        free_record(a);
        return;
    }
    weft__free(a->edges, a->nedges * sizeof *a->edges);
    a->edges = NULL;
    a->nedges = 0;
    a->next_free = aw->free;
    aw->free = a;
    nfree_set(aw, nfree_get(aw) + 1);
}

/* The executor is stopped: frees the records cached on a worker. */
static void async_worker_fini(weft__worker *w, void *state) {
    (void)w;
    weft__async_worker *aw = state;
    weft__async *a = aw->free;
    while (a) {
        weft__async *next = a->next_free;
        free_record(a);
        a = next;
    }
    aw->free = NULL;
    nfree_set(aw, 0);
    weft__silent_free_cache(aw);
}

/* weft__async_worker_of relies on the layer's part being first (async.h). */
static int async_executor_init(weft_executor *ex, const weft_executor_config *c) {
    (void)ex, (void)c;
    return weft__async_layer.offset == 0 ? 0 : WEFT_EINVAL;
}

/* The async layer: per-worker free lists of records (core/layer.h). */
weft__layer weft__async_layer = {
    .name = "async",
    .worker_bytes = sizeof(weft__async_worker),
    .executor_init = async_executor_init,
    .worker_fini = async_worker_fini,
    .waits_behind = weft__async_waits_behind,
};

weft__async *weft__async_new(weft_executor *ex, weft__worker *w, weft_task_fn fn, void *arg, bool keep_handle) {
    weft__async *a = take_record(w);
    if (!a) return NULL;
    weft__future_init(&a->fut, ex, keep_handle ? 2u : 1u, weft__async_release_record);
    atomic_init(&a->fut.stop, WEFT__STOP_ASYNC); /* published with the task (core/future.h) */
    a->fn = fn;
    a->arg = arg;
    atomic_init(&a->claimed, 0);
    atomic_init(&a->join, 1);
    atomic_init(&a->succ, NULL);
    a->edges = NULL;
    a->nedges = 0;
    a->next_free = NULL;
    a->sems = NULL;
    a->sched = (weft_sched_handle){0, 0};
    return a;
}
