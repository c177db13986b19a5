/* weft_silent_async: a task nobody waits on needs no future, so its record is a
 * job and four pointers (48 bytes instead of a future's ~300).  Fewer bytes per
 * task is what makes 10^6 of them cheap: the records of tasks not yet run are
 * all live at once.
 *
 * Records of tasks submitted from a worker are carved from 64 KiB blocks that
 * the worker keeps until the executor is destroyed, so a burst of 10^6 tasks
 * costs 700 mallocs, once, instead of a malloc and a free per task (which took a
 * third of the time here); the cost is that the executor holds the peak memory
 * of such a burst (48 bytes per task in flight).  Tasks submitted from outside
 * the workers get a malloc'd record each, freed after the run.
 *
 * A record returns to the worker that allocated it (its home), so that a worker
 * submitting many tasks that others run keeps reusing its own records instead of
 * allocating while the thieves free: run by the home worker, it goes straight to
 * the private list; run elsewhere, it is pushed on the home's `silent_remote`
 * list (a lock-free stack: any worker pushes, the home takes the whole list with
 * one exchange, so there is no ABA). */
#include "async/async.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/obs_hooks.h" /* metrics and profiler: one branch when off */

typedef struct silent {
    weft__job job; /* first: the job is the record; job.next links free lists */
    weft_task_fn fn;
    void *arg;
    weft_executor *ex;
    weft__worker *home; /* NULL: allocated outside the workers */
} silent;

enum { BLOCK_BYTES = 64 << 10 };

/* A block: this header, then records.  Blocks of a worker form a list. */
typedef struct block {
    struct block *next;
    _Alignas(16) unsigned char records[];
} block;

enum { PER_BLOCK = (BLOCK_BYTES - sizeof(block)) / sizeof(silent) };

void weft__silent_free_cache(weft__async_worker *w) {
    /* The executor is stopped: every record is back on a free list, and every
     * worker-made record lives in one of the blocks. */
    for (block *b = w->silent_blocks, *next; b; b = next) {
        next = b->next;
        weft__free(b, BLOCK_BYTES);
    }
    atomic_store_explicit(&w->silent_remote, NULL, memory_order_relaxed);
    w->silent_free = w->silent_blocks = NULL;
    atomic_store_explicit(&w->silent_bytes, 0, memory_order_relaxed);
}

/* One more block carved onto w's free list; false without memory. */
static bool grow(weft__async_worker *w) {
    block *b = weft__alloc(BLOCK_BYTES);
    if (!b) return false;
    b->next = w->silent_blocks;
    w->silent_blocks = b;
    atomic_store_explicit(&w->silent_bytes,
                          atomic_load_explicit(&w->silent_bytes, memory_order_relaxed) + BLOCK_BYTES,
                          memory_order_relaxed);
    silent *r = (silent *)(void *)b->records;
    for (size_t i = 0; i < PER_BLOCK; i++) {
        r[i].job.next = w->silent_free;
        w->silent_free = &r[i];
    }
    return true;
}

static void keep_local(weft__async_worker *w, silent *s) {
    s->job.next = w->silent_free;
    w->silent_free = s;
}

/* w ran s: back to its home. */
static void release(weft__worker *w, silent *s) {
    weft__worker *home = s->home;
    if (!home) { /* malloc'd by an outside thread */
        weft__free(s, sizeof *s);
        return;
    }
    if (home == w) {
        keep_local(weft__async_worker_of(w), s);
        return;
    }
    weft__async_worker *hw = weft__async_worker_of(home);
    weft__job *head = atomic_load_explicit(&hw->silent_remote, memory_order_relaxed);
    do s->job.next = head;
    /* Release: the home's acquire exchange sees the link (and we are done with s). */
    while (!atomic_compare_exchange_weak_explicit(&hw->silent_remote, (void **)&head, s, memory_order_release,
                                                  memory_order_relaxed));
}

static weft__job *silent_run(weft__worker *w, weft__job *job) {
    silent *s = (silent *)job;
    weft_executor *ex = s->ex;
    (void)weft__run_observed(w, WEFT__WORK_SILENT, NULL, s->fn, s->arg); /* nobody to report to */
    release(w, s);
    weft__runs_end(ex, w);
    return NULL;
}

static silent *take(weft__worker *ww) {
    if (!ww) return weft__alloc(sizeof(silent));
    weft__async_worker *w = weft__async_worker_of(ww);
    if (!w->silent_free) {
        /* Acquire: pairs with the release CAS of the workers that pushed them. */
        w->silent_free = atomic_exchange_explicit(&w->silent_remote, NULL, memory_order_acquire);
        if (!w->silent_free && !grow(w)) return NULL;
    }
    silent *s = w->silent_free;
    w->silent_free = s->job.next;
    return s;
}

weft_status weft_silent_async(weft_executor *ex, weft_task_fn fn, void *arg) {
    if (!fn) return WEFT_EINVAL;
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    weft__worker *w = weft__current_worker(ex);
    silent *s = take(w);
    if (!s) return WEFT_ENOMEM;
    *s = (silent){{silent_run, NULL}, fn, arg, ex, w};
    weft__runs_begin(ex, w);
    int st = weft__submit_from(ex, w, &s->job); /* cannot fail on a worker */
    if (st != 0) {
        weft__runs_end(ex, NULL);
        weft__free(s, sizeof *s);
    }
    return st;
}
