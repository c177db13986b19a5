/* Async task records: a future, the job that runs the task, and the list of
 * dependent tasks to release when it finishes.  Internal. */
#ifndef WEFT_ASYNC_ASYNC_H
#define WEFT_ASYNC_ASYNC_H

#include "core/executor.h"
#include "core/future.h"
#include "core/layer.h"
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
    weft__async *next_free; /* on a worker's free list */
    struct weft__async_sems *sems; /* semaphores held while it runs (semaphore.c), or NULL */
    /* Its place in the scheduling layer's priority queue (weft_async_with with
     * a priority or a handle).  gen 0 and slot 0: none, the job goes to a
     * deque; gen 0 and slot p + 2: priority p without a handle, for an
     * executor whose policy takes priorities itself (sched/); gen 0 and
     * WEFT__ASYNC_ON_NODE | n: hinted to NUMA node n (below). */
    weft_sched_handle sched;
};

/* sched.slot with gen 0 and this bit: a NUMA node hint (the node in the
 * other bits) instead of a priority (weft_async_options.numa_node). */
#define WEFT__ASYNC_ON_NODE 0x80000000u

/* weft_async_with on this library's weft_async_options (sized.c reads the
 * caller's into one). */
weft_status weft__async_with(weft_executor *ex, weft_task_fn fn, void *arg, const weft_async_options *opt,
                             weft_future **out);

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

/* An async task whose future is being made ready on a worker (its
 * then-callback runs there, before the task releases its dependents): on the
 * stack of weft__async_execute, chained innermost first. */
typedef struct weft__async_completing {
    weft__async *a;
    struct weft__async_completing *outer;
} weft__async_completing;

/* The async layer's per-worker state (core/layer.h): free records, owner
 * only, except silent_remote. */
typedef struct weft__async_worker {
    /* Free async-task records: a record released on a worker goes to that
     * worker's list, whoever allocated it. */
    weft__async *free;
    /* The async tasks completing on this worker, innermost first: a wait
     * from a then-callback (or from a task its wait runs) for one of their
     * dependents could never end (weft__async_waits_behind).  Owner only. */
    weft__async_completing *completing;
    /* How many: owner only but for weft__async_held_bytes (the metrics),
     * which reads it from any thread, hence relaxed atomic loads and stores
     * (plain moves on x86). */
    _Atomic size_t nfree;
    void *silent_free;   /* free records of silent async tasks (silent.c) */
    void *silent_blocks; /* the blocks those records are carved from */
    _Atomic size_t silent_bytes; /* bytes of those blocks (metrics read it) */
    /* Silent records of another home that this worker ran, on their way back
     * there: given back RETURN_BATCH at a time (silent.c), one CAS for them all. */
    void *ret_head, *ret_tail;
    const weft__worker *ret_home;
    unsigned ret_n;
    /* Silent records of this worker freed by other workers (any worker pushes,
     * this one takes all at once); on its own line, as other workers write it. */
    _Alignas(WEFT__CACHE_LINE) _Atomic(void *) silent_remote;
} weft__async_worker;

extern weft__layer weft__async_layer; /* record.c */

/* The async layer comes first in the composition root's list
 * (src/compose/executor.c) and the core lays the first layer's part at the
 * start of each worker's area (core/layer.h), so its state is w->layers itself:
 * one load on the path of every async task, not three (record.c checks the
 * offset at create). */
static inline weft__async_worker *weft__async_worker_of(const weft__worker *w) {
    return (weft__async_worker *)w->layers;
}

/* Bytes of silent-task blocks w holds (the executor's metrics).  Any thread. */
static inline size_t weft__async_held_bytes(const weft__worker *w) {
    const weft__async_worker *aw = weft__async_worker_of(w);
    /* The async records w keeps for reuse count too: up to
     * WEFT__ASYNC_FREE_MAX (~1.5 MB) on each worker that weft_async from
     * other threads fills, which the metrics' bytes left out. */
    return atomic_load_explicit(&aw->silent_bytes, memory_order_relaxed) +
           atomic_load_explicit(&aw->nfree, memory_order_relaxed) * sizeof(weft__async);
}

/* The async layer's weft__layer.waits_behind (async.c): why a wait for f on
 * worker w could never end, f being a dependent, directly or through other
 * dependents, of an async task that cannot return before this wait does: one
 * whose stop word a context on w's chain has (the task itself, lower on w's
 * stack; a fork-join child a thief took from it; a chunk of a parallel call
 * it made), or that is completing on w (a then-callback of it runs there);
 * or NULL. */
const char *weft__async_waits_behind(weft__worker *w, void *state, const weft_future *f);

/* Frees w's cached silent-task records (silent.c). */
void weft__silent_free_cache(weft__async_worker *aw);

/* Queues a fresh task with no dependencies (w: the caller's worker of its
 * executor, or NULL) and hands out its future if `out`; on failure undoes it
 * and returns why (WEFT_ENOMEM, WEFT_EFORKED), with a message naming `call`,
 * the public function. */
weft_status weft__async_start(const char *call, weft__async *a, weft__worker *w, weft_future **out);

/* The executor's queue refused a task (st: WEFT_ENOMEM, or WEFT_EFORKED in a
 * forked child): returns st with the thread's message set, naming `call`
 * (weft/core.h, weft_last_error_message; returning the bare status left an
 * earlier failure's message).  async.c. */
weft_status weft__async_queue_refused(const char *call, int st);

/* Semaphores of an async task (semaphore.c): take them all before it runs
 * (false: parked, its job is queued again later; true without taking any
 * for a task cancelled before it started, w: the caller's worker or NULL),
 * give them back when it has run (a release without an acquire fails the
 * task with task_code WEFT_EINVAL), free an unused set. */
bool weft__async_sems_acquire(weft__worker *w, weft__async *a);
void weft__async_sems_release(weft__worker *w, weft__async *a);
void weft__async_sems_free(struct weft__async_sems *set);

/* Runs the task now on w (the caller has claimed it). */
void weft__async_execute(weft__worker *w, weft__async *a);

#endif
