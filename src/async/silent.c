/* weft_silent_async: a task nobody waits on needs no future, so its record is a
 * job and four pointers (48 bytes instead of a future's ~300).  Fewer bytes per
 * task is what makes 10^6 of them cheap: the records of tasks not yet run are
 * all live at once.
 *
 * Records of tasks submitted from a worker are carved from 64 KiB blocks that
 * the worker keeps until the executor is destroyed, so a burst of 10^6 tasks
 * costs 700 mallocs, once, instead of a malloc and a free per task (which took a
 * third of the time here); the cost is that the executor holds the peak memory
 * of such a burst (48 bytes per task in flight).  A thread that is not a
 * worker does the same in its submitter slot (core/submitter.c: a weft__worker
 * with no thread, so this layer's state is there too), and queues on the
 * slot's deque; only when every slot is taken does it get a malloc'd record,
 * freed after the run, queued through the injector.
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
#include "core/error_detail.h"

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
    w->ret_head = w->ret_tail = NULL; /* records of other homes: in their blocks */
    w->ret_home = NULL;
    w->ret_n = 0;
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

/* Records of another home go back this many at a time: one CAS on the home's
 * line per batch instead of per record (a thread submitting 10^6 tasks that one
 * worker runs bounced that line twice per task).  A batch waits on the worker
 * until it is full or a record of another home comes: at most this many
 * records per worker are out of their home's reach, which then carves more
 * (the blocks are freed with the executor, wherever their records are). */
enum { RETURN_BATCH = 32 };

/* Gives w's pending batch back to its home. */
static void return_batch(weft__async_worker *aw) {
    weft__async_worker *hw = weft__async_worker_of(aw->ret_home);
    silent *first = aw->ret_head, *last = aw->ret_tail;
    weft__job *head = atomic_load_explicit(&hw->silent_remote, memory_order_relaxed);
    do last->job.next = head;
    /* Release: the home's acquire exchange sees the links (and we are done with them). */
    while (!atomic_compare_exchange_weak_explicit(&hw->silent_remote, (void **)&head, first, memory_order_release,
                                                  memory_order_relaxed));
    aw->ret_head = aw->ret_tail = NULL;
    aw->ret_n = 0;
}

/* w ran s: back to its home. */
static void release(weft__worker *w, silent *s) {
    weft__worker *home = s->home;
    if (!home) { /* malloc'd by an outside thread */
        weft__free(s, sizeof *s);
        return;
    }
    weft__async_worker *aw = weft__async_worker_of(w);
    if (home == w) {
        keep_local(aw, s);
        return;
    }
    if (aw->ret_home != home) {
        if (aw->ret_n) return_batch(aw);
        aw->ret_home = home;
    }
    s->job.next = aw->ret_head;
    aw->ret_head = s;
    if (!aw->ret_tail) aw->ret_tail = s;
    if (++aw->ret_n == RETURN_BATCH) return_batch(aw);
}

static weft__job *silent_run(weft__worker *w, weft__job *job) {
    silent *s = (silent *)job;
    (void)weft__run_observed(w, WEFT__WORK_SILENT, NULL, s->fn, s->arg); /* nobody to report to */
    release(w, s);
    weft__runs_bump(&w->runs_ended); /* weft__runs_end(ex, w), inline: w is a worker */
    return NULL;
}

/* Inlined into both callers: out of line it cost 17 instructions a task (callgrind). */
static inline __attribute__((always_inline)) silent *take(weft__worker *ww) {
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

/* From the owner of a submitter slot: a record from the slot's cache (home: the
 * slot, to which the worker that runs it gives it back), queued on the slot. */
static weft_status submit_from_slot(weft_executor *ex, weft__worker *slot, weft_task_fn fn, void *arg) {
    silent *s = take(slot);
    if (!s) return weft__fail_st("weft_silent_async", WEFT_ENOMEM);
    *s = (silent){{silent_run, NULL}, fn, arg, ex, slot};
    weft__runs_bump(&slot->runs_begun); /* weft__runs_begin(ex, slot), inline */
    if (weft__submitter_push(ex, slot, &s->job) == WEFT_OK) return WEFT_OK;
    /* No memory to grow the slot's deque: the injector, as without a slot. */
    int st = weft__submit_from(ex, NULL, &s->job);
    if (st != 0) {
        weft__runs_end(ex, NULL);
        keep_local(weft__async_worker_of(slot), s);
        return weft__async_queue_refused("weft_silent_async", st);
    }
    return WEFT_OK;
}

/* The queue refused s (no memory for the injector; never a worker's queue). */
static __attribute__((noinline)) weft_status refused(weft_executor *ex, silent *s, int st) {
    weft__runs_end(ex, NULL);
    weft__free(s, sizeof *s);
    return weft__async_queue_refused("weft_silent_async", st);
}

/* From w, one of ex's workers (a record from its cache, onto its deque), or, w
 * NULL, from a thread that got no slot (a malloc'd record, through the
 * injector).  Inline in weft_silent_async: out of line, a worker's submission
 * (async_task_in_task) cost 5.6% more instructions. */
static inline __attribute__((always_inline)) weft_status submit_from_worker(weft_executor *ex, weft__worker *w,
                                                                            weft_task_fn fn, void *arg) {
    silent *s = take(w);
    if (!s) return weft__fail_st("weft_silent_async", WEFT_ENOMEM);
    *s = (silent){{silent_run, NULL}, fn, arg, ex, w};
    weft__runs_begin(ex, w);
    int st = weft__submit_from(ex, w, &s->job); /* cannot fail on a worker */
    if (__builtin_expect(st != 0, 0)) return refused(ex, s, st);
    return WEFT_OK;
}

/* Every case but an outside thread's common one (below): a worker, a first
 * submission, a full slot or record cache, NULLs, a forked child. */
static __attribute__((noinline)) weft_status silent_async_slow(weft_executor *ex, weft_task_fn fn, void *arg) {
    if (!fn) return weft__fail("weft_silent_async", WEFT_EINVAL, "fn is NULL");
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    weft__worker *slot = weft__submitter_cached(ex); /* an outside thread's next submission */
    if (slot) return submit_from_slot(ex, slot, fn, arg);
    weft__worker *w = weft__current_worker(ex);
    if (!w) {
        if (weft__forked(ex)) return weft__fail("weft_silent_async", WEFT_EFORKED, WEFT__FORKED_WHY);
        if ((slot = weft__submitter_get(ex)) != NULL) return submit_from_slot(ex, slot, fn, arg);
    }
    /* w NULL: every slot taken; take() mallocs the record and the injector queues it. */
    return submit_from_worker(ex, w, fn, arg);
}

/* Wakes a sleeping worker for a job just queued (the fast path's one call,
 * kept out of it). */
static __attribute__((noinline)) weft_status queued_wake(weft_executor *ex) {
    weft__sleep_notify(&ex->sleep);
    return WEFT_OK;
}

/* The common case of an outside thread submitting many (Taskflow's and oneTBB's
 * async_task from main, a server's accept loop): its slot cached for ex, a
 * record in the slot's cache and room in its deque: inline here, with no call
 * (every other case of it is a tail call).  Inside submit_from_slot, called
 * from here, prologues, epilogues and calls took 45 of the 130 instructions a
 * submission cost (callgrind, session 43: 78 now), and a submission from main
 * is what bounds async_task at one worker. */
weft_status weft_silent_async(weft_executor *ex, weft_task_fn fn, void *arg) {
    if (__builtin_expect(fn == NULL || ex == NULL, 0)) return silent_async_slow(ex, fn, arg);
    weft__worker *slot = weft__submitter_cached(ex);
    if (!slot) { /* a worker's submission, or a first one (slow) */
        weft__worker *w = weft__current_worker(ex);
        if (__builtin_expect(w == NULL, 0)) return silent_async_slow(ex, fn, arg);
        return submit_from_worker(ex, w, fn, arg);
    }
    weft__async_worker *aw = weft__async_worker_of(slot);
    silent *s = aw->silent_free;
    int64_t at;
    if (__builtin_expect(s == NULL, 0) || __builtin_expect((at = weft__submitter_room(slot)) < 0, 0))
        return submit_from_slot(ex, slot, fn, arg);
    aw->silent_free = s->job.next;
    *s = (silent){{silent_run, NULL}, fn, arg, ex, slot};
    weft__runs_bump(&slot->runs_begun); /* weft__runs_begin(ex, slot), inline */
    if (__builtin_expect(weft__submitter_put(ex, slot, at, &s->job), 0)) return queued_wake(ex);
    return WEFT_OK;
}
