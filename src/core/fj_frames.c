/* Fork-join frames: the out-of-line half of spawn and sync.  The protocol (a
 * Lace-style split deque: private frames need no atomics, the owner shares on
 * request, a stolen child is awaited by leapfrogging) and the proof of its
 * orderings are in docs/design.md, "Fork-join frames". */
#include "core/fj.h"
#include "core/alloc.h"
#include "core/executor.h"
#include "core/obs_hooks.h" /* a stolen frame is a span */
#include "core/error_detail.h"

#include <stddef.h>
#include <string.h>

#define OVF_FIRST_CAP 64u

/* ---- the stop word a stolen child sees ----
 *
 * A child run by its owner runs in its parent's context, and so sees the
 * parent's stop word (cancellation, a failed sibling).  A thief runs a stolen
 * child in a context of its own, which gets the stop word of the task that
 * spawned the frame.  Spawn stays as it is (two stores and no look at any
 * context): the owner labels frames only when it publishes them, on the
 * slow path, and a thief reads the label with the frame's function.
 *
 * The label lives in the frame's `result` and `reserved_` fields, which hold
 * nothing until a thief stores the child's value (after reading the label).
 * Which task spawned frame k: the worker's contexts (w->ctx, innermost first)
 * each took the frame stack's top when it began (weft_ctx.fj_head0, for the
 * unsynced-spawn check), so a context's frames are those from its top up to
 * the top of the next context inside it.  The labels used to go by a depth
 * mark that only the contexts weft__fj_run_task opens (roots, async tasks,
 * stolen children) carried: a graph task run by such a task's wait (a
 * weft_future_wait or weft_run_and_wait in a root) shared a segment with it,
 * the two stop words disagreed, and its frames went out unlabelled: a thief's
 * child never saw the graph run cancelled or failed. */
typedef const _Atomic int *fj_stop;
_Static_assert(sizeof(fj_stop) <= sizeof(int) * 2 && offsetof(weft__fj_frame, reserved_) == offsetof(weft__fj_frame, result) + sizeof(int),
               "a frame's result and reserved_ hold a pointer");

static void label_set(weft__fj_frame *f, fj_stop stop) { memcpy(&f->result, &stop, sizeof stop); }
static fj_stop label_get(const weft__fj_frame *f) {
    fj_stop stop;
    memcpy(&stop, &f->result, sizeof stop);
    return stop;
}

static size_t depth_at(const weft__fj *fj, const weft__fj_frame *top);

/* Labels w's frames [lo, hi) (indices) with their spawners' stop words, before
 * they are published (the publishing release carries the labels).  Owner only. */
static void label(weft__worker *w, uint32_t lo, uint32_t hi) {
    weft__fj *fj = &w->fj;
    uint32_t k = hi;
    for (const weft_ctx *c = w->ctx; c && k > lo; c = c->outer) {
        uint32_t floor = (uint32_t)depth_at(fj, c->fj_head0);
        while (k > lo && k > floor) label_set(&fj->base[--k], c->stop);
    }
    while (k > lo) label_set(&fj->base[--k], NULL); /* no context (none spawns so) */
}

/* The `limit` a worker goes back to when it has shared what it should: 0 (a
 * standing request: the next spawn shares, the next sync with private frames
 * too) while some other worker is asleep and none of this worker's frames is
 * public, else `end`.  A thief that asked and then went to sleep leaves its
 * request standing this way: clearing it would keep later spawns private, and
 * a sleeping thief cannot ask again.  A searching thief is left out: it asks
 * again by itself, and counting it made a recursion publish nearly every frame
 * while the other worker looked for work between thefts (fib(30) on 2 workers
 * took 1.9x as long).  Public frames that wait end the request too: the share
 * that published them woke a sleeper (weft__sleep_notify_local), which takes
 * them once it runs and asks by itself when they are gone.  Keeping it standing
 * meant that while the woken worker waited for a CPU (an oversubscribed
 * machine: milliseconds), every spawn published its frame and every sync took
 * it back (fib(30) on 2 workers: 400,000 shares in 10 runs, 3.7x as long as on
 * one worker). */
static uintptr_t rest_limit(weft__worker *w) {
    if (!weft__sleep_any_asleep(&w->ex->sleep)) return (uintptr_t)w->fj.end;
    uint64_t ts = __atomic_load_n(&w->fj.ts, __ATOMIC_RELAXED); /* tail: a thief's; a stale one only delays */
    return WEFT__FJ_TAIL(ts) < WEFT__FJ_SPLIT(ts) ? (uintptr_t)w->fj.end : (uintptr_t)0;
}

/* The owner's writes of `limit` and `split` keep sync_floor in step with them
 * (weft__fj.sync_floor).  A thief's request stores limit 0 and the floor all
 * ones; an owner store racing with it may leave either one stale for a while,
 * which costs a share (floor all ones: the slow sync finds split and shares
 * half) or delays one (floor at split with limit 0: the next spawn shares; a
 * thief that sees the pair disagree asks again, weft__fj_steal). */
static inline void floor_sync(weft__fj *fj) {
    uintptr_t f = __atomic_load_n(&fj->limit, __ATOMIC_RELAXED) ? (uintptr_t)fj->split : UINTPTR_MAX;
    __atomic_store_n(&fj->sync_floor, f, __ATOMIC_RELAXED);
}

static inline void set_limit(weft__fj *fj, uintptr_t limit) {
    __atomic_store_n(&fj->limit, limit, __ATOMIC_RELAXED);
    __atomic_store_n(&fj->sync_floor, limit ? (uintptr_t)fj->split : UINTPTR_MAX, __ATOMIC_RELAXED);
}

static bool alloc_stack(weft__worker *w) {
    weft__fj *fj = &w->fj;
    /* Zeroed: every frame's state starts at 0 (spawn does not write it).  A
     * fresh calloc maps zero pages without touching them. */
    size_t frames = w->ex->fj_frames;
    weft__fj_frame *b = weft__calloc(frames * sizeof *b);
    if (!b) return false;
    fj->base = fj->head = fj->split = b;
    fj->end = b + frames;
    /* A thief that asked before there was a stack (floor all ones) is still
     * waiting: keep its request, or the first spawns stay private while it
     * parks (2 blocking children of a group on 2 workers ran one after the
     * other, 1 run in 3). */
    set_limit(fj, __atomic_load_n(&fj->sync_floor, __ATOMIC_RELAXED) == UINTPTR_MAX ? 0 : rest_limit(w));
    /* Thieves read `frames` only after an acquire load of a `ts` that shows a
     * public frame, and every such ts is released after this store. */
    /* Relaxed atomic: weft__fj_bytes reads it from any thread (the metrics). */
    __atomic_store_n(&fj->frames, b, __ATOMIC_RELAXED);
    return true;
}

size_t weft__fj_bytes(const weft__worker *w) {
    /* The stack is made on the worker's first spawn and kept until the
     * executor goes: 2 MiB at the default 65536 frames, which the metrics'
     * bytes left out (tests/life_hunt44.c). */
    weft__fj_frame *f = __atomic_load_n(&w->fj.frames, __ATOMIC_RELAXED);
    return f ? w->ex->fj_frames * sizeof *f : 0;
}

void weft__fj_destroy(weft__fj *fj) {
    weft__free(fj->base, (size_t)(fj->end - fj->base) * sizeof *fj->base);
    weft__free(fj->ovf_status, fj->ovf_cap * sizeof *fj->ovf_status);
    fj->base = fj->head = fj->split = fj->end = fj->frames = NULL;
    set_limit(fj, 0);
    fj->ovf_status = NULL;
    fj->ovf_cap = 0;
}

/* Makes room for overflow status k; false without memory.  The kept statuses
 * are always a prefix, [0, ovf_cap): the array grows only for k == ovf_cap,
 * so once a growth failed, every later status up to a pop below it goes to
 * ovf_lost.  Growing for a larger k (a status or more lost in between) wrote
 * past the doubled array (k >= 2 * cap) and left the lost slots below the new
 * cap, where ovf_pop read them as kept (uninitialized). */
static bool ovf_reserve(weft__fj *fj, uint32_t k) {
    if (k < fj->ovf_cap) return true;
    if (k != fj->ovf_cap) return false;
    uint32_t cap = fj->ovf_cap ? fj->ovf_cap * 2 : OVF_FIRST_CAP;
    int *p = weft__realloc(fj->ovf_status, fj->ovf_cap * sizeof *p, cap * sizeof *p);
    if (!p) return false;
    fj->ovf_status = p;
    fj->ovf_cap = cap;
    return true;
}

/* Status r != 0 of overflow spawn k, with no room to keep it (ovf_reserve
 * failed).  The first is kept with its index, exactly; a later one only
 * widens the range of spawns whose syncs say WEFT_ENOMEM (they may have
 * failed, and which did is not known).  A lost 0 needs nothing: outside that
 * range a lost status is 0.  One ovf_lost for all, returned by every lost
 * sync, gave a failing child's value to its siblings' syncs (and none told
 * the second failure apart; tests/sched_hunt42.c).  The live lost spawns
 * lie at or above ovf_cap and pop last to first, so k + 1 > fj_lost_at. */
static void ovf_lose(weft__worker *w, uint32_t k, int r) {
    if (w->fj_lost_at == 0) {
        w->fj.ovf_lost = r;
        w->fj_lost_at = k + 1;
    } else if (k + 1 > w->fj_lost_hi) {
        w->fj_lost_hi = k + 1;
    }
}

/* The stack is full (or could not be allocated): run the child now and keep its
 * status for the matching sync.  While such spawns are pending, split == head so
 * that the inline sync takes the slow path, which pops them first (LIFO). */
static weft_status spawn_full(weft_ctx *ctx, weft_task_fn fn, void *arg) {
    weft__fj *fj = weft__fj_of(ctx);
    if (!fj->base && fj->ovf == 0 && alloc_stack(ctx->worker)) return weft_spawn(ctx, fn, arg);
    /* The spawning task's context learns that the count moved by its top mark
     * (weft__fj_left_unsynced compares the top alone), and, at its first
     * overflow spawn, what the count was: until then this task had none of
     * its own (own_ovf), so the count was what it found when it began. */
    if (!weft__fj_ovf_marked(ctx->fj_head0)) {
        ctx->fj_ovf0 = fj->ovf;
        ctx->fj_head0 = weft__fj_mark_ovf(ctx->fj_head0);
    }
    uint32_t k = fj->ovf++;
    if (k == 0) {
        fj->ovf_split = fj->split;
        fj->split = fj->head;
        floor_sync(fj);
    }
    bool kept = ovf_reserve(fj, k);
    int r = fn(ctx, arg);
    if (kept) fj->ovf_status[k] = r;
    else if (r != 0) ovf_lose(ctx->worker, k, r);
    return WEFT_OK;
}

static void share(weft_ctx *ctx);

/* The spawn fast path's one test failed (head >= limit): the stack is full or
 * not allocated yet, or limit is 0 because a thief wants work (or every older
 * frame was stolen).  Then the frame goes on the stack and half are shared. */
weft_status weft__fj_spawn_slow(weft_ctx *ctx, weft_task_fn fn, void *arg) {
    if (!ctx || !fn) return weft__fail("weft_spawn", WEFT_EINVAL, "ctx or fn is NULL");
    weft__fj *fj = weft__fj_of(ctx);
    weft__fj_frame *f = fj->head;
    if (f == fj->end) return spawn_full(ctx, fn, arg); /* NULL == NULL without a stack */
    f->fn = fn;
    f->arg = arg;
    fj->head = f + 1;
    share(ctx);
    return WEFT_OK;
}

/* ---- typed tasks (include/weft/forkjoin.h) ---- */

weft__fj_frame *weft__fj_top(weft_ctx *ctx) {
    weft__fj *fj = weft__fj_of(ctx);
    /* Allocate now: a typed task keeps the top in a register, so the stack must
     * not appear under it later.  Without memory head stays NULL == end, and
     * every typed spawn takes the slow path (run at once). */
    if (!fj->base && fj->ovf == 0) (void)alloc_stack(ctx->worker);
    return fj->head;
}

weft__fj_frame *weft__fj_spawn_typed(weft_ctx *ctx, weft__fj_frame *top, weft_task_fn fn, void *arg) {
    weft__fj *fj = weft__fj_of(ctx);
    fj->head = top;
    (void)weft__fj_spawn_slow(ctx, fn, arg); /* fn is never NULL here */
    return fj->head;
}

weft__fj_frame *weft__fj_sync_typed(weft_ctx *ctx, weft__fj_frame *top) {
    weft__fj *fj = weft__fj_of(ctx);
    fj->head = top;
    (void)weft__fj_sync_slow(ctx); /* a typed child's status is always 0 */
    return fj->head;
}

static int ovf_pop(weft__worker *w) {
    weft__fj *fj = &w->fj;
    uint32_t k = --fj->ovf;
    int r = 0; /* a lost status outside the range of ovf_lose: the child returned 0 */
    if (k < fj->ovf_cap) {
        r = fj->ovf_status[k];
    } else if (k + 1 == w->fj_lost_at) { /* the first lost failure: its own value */
        r = fj->ovf_lost;
        fj->ovf_lost = 0;
        w->fj_lost_at = w->fj_lost_hi = 0; /* (those above it are popped) */
    } else if (w->fj_lost_at && k + 1 > w->fj_lost_at && k + 1 <= w->fj_lost_hi) {
        r = WEFT_ENOMEM; /* maybe failed: its status could not be kept (forkjoin.h) */
        w->fj_lost_hi = k;
    }
    if (k == 0) {
        fj->split = fj->ovf_split;
        floor_sync(fj);
        fj->ovf_lost = 0;
        w->fj_lost_at = w->fj_lost_hi = 0;
    }
    return r;
}

/* Publishes the n oldest private frames: the RMW releases their contents to
 * thieves that acquire-load ts; tail (high half) is left to the thieves' CAS. */
static void publish(weft__worker *w, uint32_t n) {
    weft__fj *fj = &w->fj;
    uint32_t s = (uint32_t)(fj->split - fj->base);
    label(w, s, s + n);
    fj->split += n;
    floor_sync(fj);
    __atomic_fetch_add(&fj->ts, (uint64_t)n, __ATOMIC_SEQ_CST);
    weft__sleep_notify_local(&w->ex->sleep);
}

/* At a spawn: a thief asked for work, or every older frame was stolen: make
 * frames public.  Then the worker turns generous: `limit` stays 0, so every
 * further spawn comes here and publishes its frame at once, until the next
 * sync (weft__fj_sync_slow ends it).  A thief that asked once is likely to ask
 * again, and a task that spawns a batch of children and then works a while
 * before syncing would otherwise keep the later children private all that
 * time.  The cost (one RMW per spawn) lasts until the task's first sync, so
 * a recursion pays it for one descent per request at most. */
static void share(weft_ctx *ctx) {
    weft__worker *w = ctx->worker;
    weft__fj *fj = &w->fj;
    uint32_t h = (uint32_t)(fj->head - fj->base);
    fj->generous = 1;
    if (fj->allstolen) {
        /* Start afresh with the new frame public: tail may move down here, which
         * is safe because every frame at or above h - 1 was synced already.  A
         * thief's CAS against an older ts value fails.  Release (seq_cst store):
         * a thief that reads this ts with acquire sees frame h - 1. */
        fj->allstolen = 0;
        fj->split = fj->head;
        label(w, h - 1, h);
        floor_sync(fj);
        __atomic_store_n(&fj->ts, WEFT__FJ_TS(h - 1, h), __ATOMIC_SEQ_CST);
        weft__sleep_notify_local(&w->ex->sleep);
    } else {
        /* Half of the private frames (at least one). */
        uint32_t s = (uint32_t)(fj->split - fj->base);
        publish(w, (h - s + 1) / 2);
    }
}

/* A thief asked (limit 0) while private frames wait to be synced, seen by a
 * weft_sync (a task group's first sync, or any plain one).  Publishes the older
 * half of the private frames; the newest, the one synced next, stays private.
 * Then clears the request unless a worker is asleep (rest_limit). */
static void share_at_sync(weft_ctx *ctx) {
    weft__fj *fj = weft__fj_of(ctx);
    uint32_t n = (uint32_t)(fj->head - fj->split) / 2;
    if (n) publish(ctx->worker, n);
    set_limit(fj, rest_limit(ctx->worker));
}

/* The frame to sync is public (split == head).  Pull the split down to keep it
 * private and return true, or return false if every public frame, this one
 * included, was stolen (then all frames below head are stolen). */
static bool shrink(weft__fj *fj) {
    uint64_t ts = __atomic_load_n(&fj->ts, __ATOMIC_RELAXED);
    for (;;) {
        uint32_t t = WEFT__FJ_TAIL(ts), s = WEFT__FJ_SPLIT(ts);
        if (t >= s) {
            fj->allstolen = 1;
            set_limit(fj, 0); /* see weft__fj.limit */
            return false;
        }
        /* Only frame s - 1, the one synced, becomes private.  Taking half of
         * the public frames back as well kept them from thieves while the
         * owner ran the synced child: 4 children of a flat group that block
         * for 50 ms on 4 workers took 100 ms, 2 thieves and the owner (its
         * second sync found the third child private).  fib, fib_spawn2,
         * skynet, nqueens: 0.98-1.02 in 9 paired rounds at 1 and 2 workers. */
        uint32_t ns = s - 1;
        /* seq_cst CAS: a thief's CAS on the same word either comes first (we
         * retry with the new tail) or fails; no frame is taken twice. */
        if (__atomic_compare_exchange_n(&fj->ts, &ts, WEFT__FJ_TS(t, ns), false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
            fj->split = fj->base + ns;
            floor_sync(fj);
            return true;
        }
    }
}

/* Frame f was stolen.  Until its thief is done, run only work that descends from
 * it: frames stolen back from the thief (leapfrogging).  head stays above f, so
 * the frame is not reused while the thief still writes into it. */
static int leapfrog(weft__worker *w, weft__fj_frame *f) {
    unsigned idle = 0;
    uintptr_t st;
    /* Acquire: pairs with the thief's release store of DONE (result is valid). */
    while ((st = __atomic_load_n(&f->state, __ATOMIC_ACQUIRE)) != WEFT__FJ_DONE) {
        weft__job *j = st ? weft__fj_steal(w, &w->ex->workers[st - 1]) : NULL;
        if (j) {
            weft__execute(w, j);
            idle = 0;
        } else {
            weft__worker_pause(w, &idle);
        }
    }
    weft__fj *fj = &w->fj;
    int r = f->result;
    /* The thief is done with f: back to 0 for the slot's next spawn, which does
     * not write state.  Ordered before any later publication of the slot by that
     * publication's release. */
    __atomic_store_n(&f->state, (uintptr_t)0, __ATOMIC_RELAXED);
    fj->head = fj->split = f;
    fj->allstolen = 1; /* every frame below f was stolen before f was */
    set_limit(fj, 0); /* see weft__fj.limit */
    return r;
}

static size_t depth(const weft__fj *fj) { return fj->base ? (size_t)(fj->head - fj->base) : 0; }

/* The depth at a top a context marked (NULL: before the worker's first spawn
 * allocated the stack; bit 0 set: an overflow spawn since). */
static size_t depth_at(const weft__fj *fj, const weft__fj_frame *top) {
    top = weft__fj_unmark(top);
    return top && fj->base ? (size_t)(top - fj->base) : 0;
}

/* Whether the task of ctx has an overflow spawn of its own left: its context
 * is marked (it made one) and the count is above what it was then. */
static bool own_ovf(const weft_ctx *ctx, const weft__fj *fj) {
    return weft__fj_ovf_marked(ctx->fj_head0) && fj->ovf > ctx->fj_ovf0;
}

/* Whether the task of ctx has a spawn of its own to sync: an overflow spawn or
 * a frame made since the context began (its marks).  Frames below belong to
 * the tasks around it, which a sync here must not take. */
static bool own_spawns(const weft_ctx *ctx, const weft__fj *fj) {
    return own_ovf(ctx, fj) || depth(fj) > depth_at(fj, ctx->fj_head0);
}

bool weft__fj_has_own_spawn(weft_ctx *ctx) { return ctx && own_spawns(ctx, weft__fj_of(ctx)); }

weft_status weft__fj_einval(const char *call, const char *what) {
    return weft__fail(call, WEFT_EINVAL, "%s", what);
}

int weft__fj_sync_slow(weft_ctx *ctx) {
    if (!ctx) return weft__fail("weft_sync", WEFT_EINVAL, "ctx is NULL");
    weft__fj *fj = weft__fj_of(ctx);
    if (!own_spawns(ctx, fj)) return weft__fail("weft_sync", WEFT_EINVAL, "this task has spawned nothing to sync");
    if (own_ovf(ctx, fj)) return ovf_pop(ctx->worker);
    weft__fj_frame *f = fj->head - 1;
    if (fj->generous) { /* the spawns are over: back to sharing on request */
        fj->generous = 0;
        if (!fj->allstolen) set_limit(fj, rest_limit(ctx->worker));
    }
    if (fj->head > fj->split) { /* weft_sync saw limit 0 (floor all ones): a request, a sleeper, or generous */
        share_at_sync(ctx);
        fj->head = f;
        return f->fn(ctx, f->arg);
    }
    if (!fj->allstolen && shrink(fj)) {
        fj->head = f;
        return f->fn(ctx, f->arg);
    }
    return leapfrog(ctx->worker, f);
}

static weft__job *run_stolen(weft__worker *w, weft__job *self) {
    weft__fj_frame *f = ((weft__fj_job *)self)->frame;
    /* The spawner's stop word (label above): cancellation reaches the child. */
    f->result = weft__run_observed(w, WEFT__WORK_STOLEN, label_get(f), f->fn, f->arg); /* observe/: a span */
    /* Release: the owner's acquire load of DONE sees result. */
    __atomic_store_n(&f->state, WEFT__FJ_DONE, __ATOMIC_RELEASE);
    return NULL;
}

weft__job *weft__fj_steal(weft__worker *w, weft__worker *v) {
    weft__fj *q = &v->fj;
    /* Acquire: pairs with the owner's publishing RMW/store of ts (frame contents). */
    uint64_t ts = __atomic_load_n(&q->ts, __ATOMIC_ACQUIRE);
    if (WEFT__FJ_TAIL(ts) >= WEFT__FJ_SPLIT(ts)) {
        /* Nothing public: ask the owner to share at its next spawn.  Read first
         * so idle thieves do not keep writing the owner's cache line. */
        if (__atomic_load_n(&q->limit, __ATOMIC_RELAXED) ||
            __atomic_load_n(&q->sync_floor, __ATOMIC_RELAXED) != UINTPTR_MAX) {
            __atomic_store_n(&q->limit, (uintptr_t)0, __ATOMIC_RELAXED);
            __atomic_store_n(&q->sync_floor, UINTPTR_MAX, __ATOMIC_RELAXED);
        }
        return NULL;
    }
    /* seq_cst: ordered with the owner's shrink CAS on the same word. */
    if (!__atomic_compare_exchange_n(&q->ts, &ts, ts + ((uint64_t)1 << 32), false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_RELAXED))
        return NULL;
    weft__fj_frame *f = q->frames + WEFT__FJ_TAIL(ts);
    __atomic_store_n(&f->state, (uintptr_t)w->id + 1, __ATOMIC_RELAXED);
    weft__hook_steal(w, true, (int)v->id); /* observe/: a job taken from another worker, as a deque's is */
    w->fj_job.job.run = run_stolen;
    w->fj_job.frame = f;
    return &w->fj_job.job;
}

/* Live frames (the stack may not be allocated yet). */

int weft__fj_sync_left(weft__worker *w, weft_ctx *cx) {
    weft__fj *fj = &w->fj;
    size_t depth0 = depth_at(fj, cx->fj_head0);
    int r = 0;
    while (own_ovf(cx, fj) || depth(fj) > depth0) {
        int s = weft_sync(cx);
        if (r == 0) r = s;
    }
    return r;
}

int weft__fj_run_task(weft__worker *w, const _Atomic int *stop, weft_task_fn fn, void *arg) {
    /* Chained on w->ctx like a graph task, so waits inside see what is on the
     * stack below (core/future.c refuses waits that would deadlock).  fj_head0:
     * frames from this top up are this task's (label, the leftover sync). */
    weft_ctx cx = weft__ctx_on(w, NULL, stop, NULL);
    w->ctx = &cx;
    int r = fn(&cx, arg);
    /* Implicit sync of whatever fn left unsynced. */
    if (weft__fj_left_unsynced(w, &cx)) {
        int s = weft__fj_sync_left(w, &cx);
        if (r == 0) r = s;
    }
    w->ctx = cx.outer;
    return r;
}
