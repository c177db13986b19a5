/* Async task records: a future, the job that runs the task, and the list of
 * dependent tasks to release when it finishes.  Internal. */
#ifndef WEFT_ASYNC_ASYNC_H
#define WEFT_ASYNC_ASYNC_H

#include "core/executor.h"
#include "core/future.h"
#include "weft/async.h"

typedef struct weft__async weft__async;

/* One dependency of a dependent task: a node in its predecessor's `succ` list.
 * Lives in the dependent task's record (edges array). */
typedef struct weft__async_edge {
    struct weft__async_edge *next;
    weft__async *succ;
} weft__async_edge;

struct weft__async {
    weft_future fut; /* first: the future handle is the record */
    weft__job job;
    weft_task_fn fn;
    void *arg;
    /* 0 until a worker or an isolated waiter takes the task to run it. */
    _Atomic int claimed;
    /* Unfinished dependencies, + 1 while the creator is still linking edges.
     * The job is queued by whoever brings it to 0. */
    _Atomic uint32_t join;
    /* Dependents to release; WEFT__ASYNC_CLOSED once the task has finished. */
    _Atomic(weft__async_edge *) succ;
    weft__async_edge *edges; /* ndeps entries, or NULL */
    size_t nedges;
    weft__async *next_free;
};

/* Records kept per worker; beyond this they go back to the allocator. */
#define WEFT__ASYNC_FREE_MAX 4096

/* The free function of async futures; also how one is recognised. */
void weft__async_release_record(weft_future *f);

static inline weft__async *weft__async_of(weft_future *f) {
    return f && f->free_fn == weft__async_release_record ? (weft__async *)f : NULL;
}

/* A fresh record with one producer reference (+ the caller's, if it keeps a
 * handle), join = 1.  From the free list of w (the calling thread's worker of
 * ex, or NULL when it is not one), else from the allocator.  NULL without
 * memory. */
weft__async *weft__async_new(weft_executor *ex, weft__worker *w, weft_task_fn fn, void *arg, bool keep_handle);

/* Frees w's cached silent-task records (silent.c). */
void weft__silent_free_cache(weft__worker *w);

/* Runs the task now on w (the caller has claimed it). */
void weft__async_execute(weft__worker *w, weft__async *a);

#endif
