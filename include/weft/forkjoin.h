/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Fork-join inside a task: weft_spawn / weft_sync, task groups, and the blocking
 * root entry weft_run_root.  docs/guide-forkjoin.md shows how to use them and
 * docs/design.md ("Fork-join frames") how they work.
 *
 *     static int fib(weft_ctx *cx, void *p) {
 *         struct fib *a = p;
 *         if (a->n < 2) { a->r = a->n; return 0; }
 *         struct fib x = { a->n - 1, 0 }, y = { a->n - 2, 0 };
 *         weft_spawn(cx, fib, &x);   // x lives on this stack frame until the sync
 *         fib(cx, &y);
 *         int st = weft_sync(cx);    // runs x here unless a thief took it
 *         a->r = x.r + y.r;
 *         return st;
 *     }
 *
 * Why the fast path is in this header: a spawn plus a sync whose child was not
 * stolen costs about as much as a function call, and an out-of-line call each
 * would add a large fraction of that.  So weft_spawn and weft_sync are static
 * inline here and touch a small per-worker structure (weft__fj) whose layout is
 * exposed for that reason only: its fields are private, may change in any
 * release, and must never be used directly.  Spawn and a non-stolen sync make no
 * atomic read-modify-write and no fence; everything rare (a thief asked for
 * work, the child was stolen, the frame stack is full) goes out of line.
 */
#ifndef WEFT_FORKJOIN_H
#define WEFT_FORKJOIN_H

#include "weft/common.h"
#include "weft/core.h"
#include "weft/graph.h"

WEFT_EXTERN_C_BEGIN

#if defined(__GNUC__)
#  define WEFT__LIKELY(x) __builtin_expect(!!(x), 1)
#  define WEFT__UNLIKELY(x) __builtin_expect(!!(x), 0)
#  define WEFT__MAYBE_UNUSED __attribute__((unused))
#else
#  define WEFT__MAYBE_UNUSED
#  define WEFT__LIKELY(x) (x)
#  define WEFT__UNLIKELY(x) (x)
#endif

/* ---- private: exposed only so that spawn and sync can be inline ------------- */

/* One spawned child.  `state` is read and written with __atomic builtins:
 * 0 = waiting in the frame stack, worker id + 1 = stolen and running there,
 * WEFT__FJ_DONE = a thief finished it (`result` is then valid). */
typedef struct weft__fj_frame {
    weft_task_fn fn;
    void *arg;
    uintptr_t state;
    int result;
    int reserved_;
} weft__fj_frame;

#define WEFT__FJ_DONE (~(uintptr_t)0)

/* A worker's frame stack: frames [base, head) are live.  [split, head) is the
 * private part (owner only); thieves take frames from the public part, whose
 * bounds they read from `ts` (tail in the high 32 bits, split in the low 32).
 * The first 64 bytes are the owner's, the second 64 bytes are written by thieves. */
/* The layout version of weft__fj, weft__fj_frame and weft_task_group, which
 * the inline spawn and sync read: part of the ABI (docs/abi.md).  Bump it with
 * any change to them; tests/abi_fj_layout.c pins the offsets it stands for. */
#define WEFT__FJ_LAYOUT 2
typedef struct weft__fj {
    weft__fj_frame *head;
    weft__fj_frame *split;
    weft__fj_frame *end;
    weft__fj_frame *base;
    uint16_t allstolen;    /* every frame below head has been stolen */
    uint16_t generous;     /* publishing every new frame until the next sync (frames.c) */
    uint32_t ovf;          /* spawns run at once because the stack was full */
    int *ovf_status;       /* their statuses, ovf_cap entries */
    uint32_t ovf_cap;
    int ovf_lost;          /* the first non-zero status that could not be recorded (no memory) */
    weft__fj_frame *ovf_split;
    /* ---- shared with thieves ---- */
    uint64_t ts;
    /* The spawn fast path's one test: a spawn whose frame address is at or
     * above `limit` takes the slow path.  `limit` is `end` normally, and 0 when
     * a thief found nothing public or the owner set allstolen (the next spawn
     * then shares); so "stack full" and "share wanted" cost one compare. */
    uintptr_t limit;
    /* The sync fast path's one test: a sync pops a private frame at once when
     * head is above `sync_floor`.  It is `split` while `limit` is non-zero and
     * all ones while `limit` is 0 (a thief's request, a sleeper, a generous
     * stretch): one load and one compare instead of split and limit both. */
    uintptr_t sync_floor;
    weft__fj_frame *frames; /* == base, on the thieves' line */
    /* The context of the innermost typed task running on this worker (owner
     * only; WEFT_FJ_TASK's entry sets it and puts the outer one back on
     * exit).  A typed body's hidden argument is this frame stack, not the
     * context: the spawn and sync tests then read limit and split with one
     * load instead of two (context, then its worker), 5% fewer instructions
     * on fib; the context is read from here only by WEFT_FJ_CTX and the slow
     * paths.  In what was padding: layout 1 programs still work. */
    weft_ctx *typed_ctx;
    unsigned char pad_b_[24];
} weft__fj;

/* Out of line halves of spawn and sync (src/core/fj_frames.c). */
WEFT_API weft_status weft__fj_spawn_slow(weft_ctx *ctx, weft_task_fn fn, void *arg);
WEFT_API int weft__fj_sync_slow(weft_ctx *ctx);
/* Whether the running task of ctx has a spawn of its own left to sync. */
WEFT_API bool weft__fj_has_own_spawn(weft_ctx *ctx);
/* A fork-join call that failed on its inline path: sets the thread's message
 * (weft_last_error_message: "call: what", as every failing call does) and
 * returns WEFT_EINVAL.  Out of line and only on failure, so the fast paths
 * keep their size. */
WEFT_API weft_status weft__fj_einval(const char *call, const char *what);

/* The frame stack of the worker running ctx: the context's first member is its
 * worker, whose first member is the frame stack (checked at build time). */
static inline weft__fj *weft__fj_of(weft_ctx *ctx) { return *(weft__fj **)(void *)ctx; }

/* ---- public API ------------------------------------------------------------ */

/* Spawns fn(ctx, arg) as a child of the running task: it may run on another
 * worker, at any time until the matching weft_sync returns.  `arg` is not
 * copied: it may point into the caller's stack frame, and must stay valid until
 * that sync.  No allocation: the child is a frame on this worker's frame stack
 * (65536 frames by default, weft_executor_config.fork_join_frames or
 * WEFT_FORK_JOIN_FRAMES to change it; a spawn beyond that runs the child at
 * once, before returning: so a flat loop of more spawns than that runs the
 * rest on this worker alone, one after another, whatever the idle workers;
 * for 10^6 children raise fork_join_frames above 10^6, split the loop in
 * halves recursively, or use weft_parallel_for).  The statuses of children run
 * at once wait for their syncs in an array that grows; should memory for it
 * run out, the sync of the first such child that failed still returns its
 * value, the sync of a later one that failed (or may have: which one did is
 * then not known) returns WEFT_ENOMEM, and never a sibling's value.
 * Every spawn must be matched by one weft_sync in the same task, innermost first.
 * Spawns a task leaves unsynced when it returns (a root, async or taskflow task)
 * are synced by weft right then, so their `arg` must outlive the task.
 * The child's ctx is its parent's when the sync runs it here, and one of its
 * own when a thief runs it: that one sees the parent's cancellation and
 * failure (weft_ctx_cancelled, weft_ctx_check), but belongs to no graph task
 * (weft_ctx_task is the null task, weft_ctx_run NULL, weft_ctx_iteration 0,
 * and a wait for the parent's own run is not refused with WEFT_EDEADLK):
 * read those in the parent and pass them in arg.
 * When another worker gets the child: a spawn is private to its worker until
 * an idle worker asks for work, and the parent answers a request only at its
 * next spawn or sync (that keeps both free of atomic operations).  A worker
 * asleep at the spawn (parked: it has searched and found nothing), or one
 * that has already asked this worker, takes the child at once.  One that is
 * still searching at the spawn and has not yet asked this worker (searches
 * are short, but the workers of a just-created executor all start out
 * searching, and so does a worker that has just finished a task) asks only
 * after it, and so does one that runs out of work after the spawn: each gets
 * the child at the parent's next spawn, or never (the parent's sync runs
 * it).  So in
 *     weft_spawn(ctx, a, &x); long_work_that_spawns_nothing(); weft_sync(ctx);
 * `a` overlaps the long work only if a worker was asleep at the spawn (or
 * had asked): right after weft_executor_create it often does not.  For two
 * long pieces that must overlap whatever the timing, queue one with weft_async
 * (weft/async.h) and wait for its future: any worker that frees up takes it
 * (docs/guide-forkjoin.md, "When a child is shared").
 * Returns WEFT_OK, or WEFT_EINVAL for a NULL ctx or fn.  Only from inside a task
 * (ctx is the context it received); wait-free. */
static inline weft_status weft_spawn(weft_ctx *ctx, weft_task_fn fn, void *arg) {
    if (WEFT__UNLIKELY(!ctx || !fn)) return weft__fj_spawn_slow(ctx, fn, arg); /* EINVAL, with the message */
    weft__fj *fj = weft__fj_of(ctx);
    weft__fj_frame *f = fj->head;
    /* Relaxed: a thief's request may be seen a spawn late; it only delays sharing. */
    if (WEFT__UNLIKELY((uintptr_t)f >= __atomic_load_n(&fj->limit, __ATOMIC_RELAXED)))
        return weft__fj_spawn_slow(ctx, fn, arg);
    f->fn = fn;
    f->arg = arg; /* f->state is already 0: zeroed at allocation, reset after a theft */
    fj->head = f + 1;
    return WEFT_OK;
}

/* Waits for the most recent unsynced child of the running task and returns what
 * its function returned (0 for success).  If no thief took the child, it runs
 * here and now, as a plain call.  If one did, this worker does not block: it
 * runs work that descends from that child (it steals back from the thief,
 * "leapfrogging") until the child is done, so the wait is isolated: no unrelated
 * task runs on this worker meanwhile.  One exception: the child's descendants
 * may themselves wait without isolation (a parallel algorithm called directly,
 * weft_future_wait, weft_run_and_wait from a task run other work meanwhile),
 * and a task the thief picks up there, unrelated to this one, spawns on the
 * thief's frame stack above the child's frames, where this wait may steal
 * one of its children back: a program that holds a lock across a sync must
 * not have such waits below the synced child (or must not need the lock in
 * the other tasks).  Returns WEFT_EINVAL for a NULL ctx or when
 * there is nothing to sync.  A sync in a task with no spawn of its own left is a
 * bug in the program: the inline fast path does not look for it (it would pop a
 * frame of the task around, e.g. the one that called weft_run_root from inside
 * a task), while weft_sync_status always returns WEFT_EINVAL for it.  Only from
 * inside a task. */
static inline int weft_sync(weft_ctx *ctx) {
    if (WEFT__UNLIKELY(!ctx)) return weft__fj_sync_slow(ctx); /* EINVAL, with the message */
    weft__fj *fj = weft__fj_of(ctx);
    /* sync_floor is all ones while limit is 0: a thief asked for work, and the
     * frames spawned before it asked (a flat spawn loop, or spawns followed by
     * long work) are shared before this one is popped (fj_frames.c). */
    if (WEFT__LIKELY((uintptr_t)fj->head > __atomic_load_n(&fj->sync_floor, __ATOMIC_RELAXED))) {
        weft__fj_frame *f = --fj->head;
        return f->fn(ctx, f->arg);
    }
    return weft__fj_sync_slow(ctx);
}

/* weft_sync with the child's value apart from weft's own status, for a child
 * whose values may look like weft statuses (a child returning -1 and a sync
 * with nothing to sync both make weft_sync return -1).  Returns WEFT_OK (the
 * child returned 0), WEFT_ETASK (it returned non-zero: the value is in
 * *result), or WEFT_EINVAL (NULL ctx, or nothing this task spawned is left to
 * sync; *result is 0).  result may be NULL.  Only from inside a task.
 * Frames of the task around are told apart from the running task's own when
 * the running task has a context of its own: a root, async, graph or stolen
 * task, or a task nested by weft_run_root.  A child that its parent's
 * weft_sync runs inline shares the parent's context, so there a sync with no
 * spawn of its own takes the parent's next child: a bug weft cannot see. */
static inline weft_status weft_sync_status(weft_ctx *ctx, int *result) {
    if (result) *result = 0;
    if (WEFT__UNLIKELY(!ctx)) return weft__fj_einval("weft_sync_status", "ctx is NULL");
    /* Nothing this task spawned (frames of the tasks around it are theirs). */
    if (WEFT__UNLIKELY(!weft__fj_has_own_spawn(ctx)))
        return weft__fj_einval("weft_sync_status", "this task has spawned nothing to sync");
    int r = weft_sync(ctx);
    if (result) *result = r;
    return r == 0 ? WEFT_OK : WEFT_ETASK;
}

/* ---- typed fork-join: Lace-style tasks ---------------------------------------
 *
 * weft_spawn/weft_sync keep the frame stack's top in memory and call a child
 * through a function pointer: each spawn and sync loads and stores that top, and
 * in a recursion those loads and stores form one long chain through memory.
 * Typed tasks, like Lace's TASK_n macros, pass the top down the recursion as a
 * hidden argument (a register), sync a child that was not stolen with a direct
 * call to the named function (which the compiler may inline), and carry a value
 * argument and result:
 *
 *     WEFT_FJ_TASK(long, fib, int, n) {      // a task: long fib(int n)
 *         if (n < 2) return n;
 *         WEFT_FJ_SLOT(fib) x;                // the child's argument and result
 *         WEFT_FJ_SPAWN(fib, &x, n - 1);
 *         long b = WEFT_FJ_CALL(fib, n - 2);  // a plain call, on this worker
 *         return WEFT_FJ_SYNC(fib, &x) + b;
 *     }
 *     ...  long r = WEFT_FJ_RUN(ctx, fib, 30);  // from any task (ctx: its context)
 *
 * One argument of any type (a struct for several) and a result of any non-void
 * type.  The slot must stay alive until the matching sync (on the caller's
 * stack, as above).  Inside a typed task:
 *   - spawn, call and sync other typed tasks with WEFT_FJ_SPAWN, WEFT_FJ_CALL and
 *     WEFT_FJ_SYNC; every spawn is matched by one sync, innermost first;
 *   - for any other weft call that takes a context (task groups, weft_run_root,
 *     weft_ctx_cancelled, ...) pass WEFT_FJ_CTX, never a context saved
 *     elsewhere: it first writes the hidden top back to memory so that the
 *     call sees the true frame stack.  Do not leave such a call with spawns of
 *     its own unsynced;
 *   - a call that takes no context but may run other tasks on this worker
 *     until it returns needs that write-back too: evaluate `(void)WEFT_FJ_CTX;`
 *     right before a parallel algorithm called directly (weft/algo.h: from a
 *     task it runs its chunks and other work meanwhile), weft_future_wait and
 *     the other waits, weft_run_and_wait, weft_subflow_join.  Without it, while
 *     a typed spawn of this task is unsynced, the tasks the call runs here
 *     push their spawns from the stale top, over that child's frame: the
 *     program hangs, or the child is lost;
 *   - do not call weft_spawn / weft_sync in a typed task's body: the frame a
 *     weft_spawn pushes is not in the hidden top, so the next WEFT_FJ_CTX or
 *     typed spawn writes over it (the child is lost, or another runs twice).
 *     A task group whose init, spawns and wait come with no typed spawn or
 *     sync between them is fine: it leaves the stack as it found it.
 * A typed task cannot report a status: it returns a value.  What happens on a
 * theft is the same as for weft_spawn / weft_sync (the thief runs the child; the
 * sync leapfrogs and then reads the result from the slot). */

/* Defines typed task NAME, `RET NAME(ATYPE ARG)`; the body follows the macro.
 * At file scope; the functions it makes are static. */
#define WEFT_FJ_TASK(RET, NAME, ATYPE, ARG)                                            \
    static inline RET NAME##_weft_body(weft__fj *weft_fjh_, weft__fj_frame *weft_head_, ATYPE ARG); \
    typedef struct NAME##_weft_slot {                                                  \
        ATYPE arg;                                                                     \
        RET result;                                                                    \
    } NAME##_weft_slot;                                                                \
    WEFT__MAYBE_UNUSED static RET NAME##_weft_enter(weft_ctx *ctx, ATYPE a) {          \
        weft__fj *fj = weft__fj_of(ctx);                                               \
        weft_ctx *saved = fj->typed_ctx;                                               \
        fj->typed_ctx = ctx;                                                           \
        weft__fj_frame *top = weft__fj_top(ctx);                                       \
        RET r = NAME##_weft_body(fj, top, a);                                          \
        weft__fj_leave_typed(ctx, top);                                                \
        fj->typed_ctx = saved;                                                         \
        return r;                                                                      \
    }                                                                                  \
    WEFT__MAYBE_UNUSED static int NAME##_weft_run(weft_ctx *ctx, void *slot) {        \
        ((NAME##_weft_slot *)slot)->result = NAME##_weft_enter(ctx, ((NAME##_weft_slot *)slot)->arg); \
        return 0;                                                                      \
    }                                                                                  \
    static inline RET NAME##_weft_body(weft__fj *weft_fjh_, weft__fj_frame *weft_head_, ATYPE ARG)

/* The slot type of typed task NAME: a spawned child's argument and result. */
#define WEFT_FJ_SLOT(NAME) NAME##_weft_slot

/* Runs typed task NAME on argument a from a task whose context is ctx (or from
 * a typed task, with WEFT_FJ_CTX) and evaluates to its result.  ctx must not
 * be NULL: a typed task reaches its frame stack through it and has no status
 * to refuse with (NULL crashes).  weft_current_ctx() is NULL where no task
 * runs (a pipeline stage or an algorithm's chunk on an idle worker or the
 * calling thread); enter there through weft_run_root, which makes a task. */
#define WEFT_FJ_RUN(ctx, NAME, a) NAME##_weft_enter((ctx), (a))

/* Inside a typed task: the running task's context for other weft calls. */
#define WEFT_FJ_CTX (weft_fjh_->head = weft_head_, weft_fjh_->typed_ctx)

/* Inside a typed task: spawns NAME(a) as a child; *slot keeps a and receives the
 * result.  A statement; slot and a are evaluated once each, slot first (a loop
 * may pass &slots[k++]). */
#define WEFT_FJ_SPAWN(NAME, slot, a)                                                    \
    do {                                                                               \
        NAME##_weft_slot *weft_slot_ = (slot);                                         \
        weft_slot_->arg = (a);                                                         \
        if (WEFT__UNLIKELY((uintptr_t)weft_head_ >=                                    \
                           __atomic_load_n(&weft_fjh_->limit, __ATOMIC_RELAXED))) {     \
            weft_head_ = weft__fj_spawn_typed(weft_fjh_->typed_ctx, weft_head_, NAME##_weft_run, weft_slot_); \
        } else {                                                                       \
            weft_head_->fn = NAME##_weft_run;                                          \
            weft_head_->arg = weft_slot_;                                              \
            weft_head_++;                                                              \
        }                                                                              \
    } while (0)

/* Inside a typed task: calls NAME(a) on this worker and evaluates to its result. */
#define WEFT_FJ_CALL(NAME, a) NAME##_weft_body(weft_fjh_, weft_head_, (a))

/* Inside a typed task: waits for the most recent unsynced child and evaluates to
 * its result: not stolen, a direct call NAME(slot->arg) now; stolen, the value
 * the thief stored in *slot (this worker leapfrogs meanwhile). */
#define WEFT_FJ_SYNC(NAME, slot)                                                        \
    (WEFT__LIKELY(weft_head_ > weft_fjh_->split)                                       \
         ? (--weft_head_, NAME##_weft_body(weft_fjh_, weft_head_, (slot)->arg))        \
         : (weft_head_ = weft__fj_sync_typed(weft_fjh_->typed_ctx, weft_head_), (slot)->result))

/* Private: ends a typed task entered with the frame stack's top at `top`.  The
 * body left `head` wherever its last slow path did; it is `top` again.  A NULL
 * top means there was no stack (out of memory), but a spawn in the body may have
 * allocated one since: it is empty now. */
static inline void weft__fj_leave_typed(weft_ctx *ctx, weft__fj_frame *top) {
    weft__fj *fj = weft__fj_of(ctx);
    fj->head = top ? top : fj->base;
}

/* Private halves of the typed macros (src/core/fj_frames.c): each writes top back to
 * the frame stack, does what the untyped call does, and returns the new top (by
 * value, so that the caller's copy can stay in a register). */
WEFT_API weft__fj_frame *weft__fj_top(weft_ctx *ctx);
WEFT_API weft__fj_frame *weft__fj_spawn_typed(weft_ctx *ctx, weft__fj_frame *top, weft_task_fn fn, void *arg);
WEFT_API weft__fj_frame *weft__fj_sync_typed(weft_ctx *ctx, weft__fj_frame *top);

/* A task group: spawn any number of children, then wait for all of them.  A
 * small value type that lives on the task's stack:
 *
 *     weft_task_group g;
 *     weft_task_group_init(&g, ctx);
 *     for (i = 0; i < n; i++) weft_task_group_spawn(&g, work, &items[i]);
 *     int st = weft_task_group_wait(&g);
 *
 * Fields are private.  Spawns of a group and plain spawns may nest but not
 * interleave: wait for the group before syncing a plain spawn made before it.
 * A group belongs to the task that initialized it: spawn into it and wait for
 * it only there (its spawns go onto that task's worker's frame stack, which
 * only that worker may touch), never from a child, another task or another
 * thread (unlike oneTBB's task_group::run; a child spawns its own work and
 * syncs it, or uses a group of its own).  Leaving the task with children
 * still in the group is allowed: they are synced then, as weft_spawn says. */
typedef struct weft_task_group {
    weft_ctx *ctx_;   /* private: the task that owns the group */
    size_t pending_;  /* private: children spawned and not yet waited for */
} weft_task_group;

/* Starts an empty group for the running task.  Only from inside a task. */
static inline void weft_task_group_init(weft_task_group *g, weft_ctx *ctx) {
    g->ctx_ = ctx;
    g->pending_ = 0;
}

/* Spawns fn(ctx, arg) in the group (see weft_spawn for arg's lifetime: until
 * weft_task_group_wait returns).  WEFT_OK, or WEFT_EINVAL for NULL arguments. */
static inline weft_status weft_task_group_spawn(weft_task_group *g, weft_task_fn fn, void *arg) {
    if (!g) return weft__fj_einval("weft_task_group_spawn", "g is NULL");
    weft_status st = weft_spawn(g->ctx_, fn, arg);
    if (st == WEFT_OK) g->pending_++;
    return st;
}

/* Waits for every child of the group (isolated, like weft_sync) and returns the
 * first non-zero value a child returned (in sync order), else 0.  The group is
 * empty afterwards and may be reused.  WEFT_EINVAL for NULL (indistinguishable
 * from a child returning -1: weft_task_group_wait_status tells them apart). */
static inline int weft_task_group_wait(weft_task_group *g) {
    if (!g) return weft__fj_einval("weft_task_group_wait", "g is NULL");
    int first = 0;
    /* Every sync looks at a thief's request (weft_sync: the older half of the
     * children left is shared then).  Looking at the first only missed a
     * request made later (a thief descheduled a while: all 1000 children of a
     * flat group ran on the owner); with sync_floor the look is the same one
     * load and compare as an unchecked sync. */
    if (g->pending_ == 0) return 0; /* nothing spawned (also: a NULL context, whose spawns all failed) */
    weft_ctx *cx = g->ctx_;
    weft__fj *fj = weft__fj_of(cx); /* the task's worker: the same for every sync */
    for (; g->pending_ > 0; g->pending_--) {
        int r; /* weft_sync, without its NULL check */
        if (WEFT__LIKELY((uintptr_t)fj->head > __atomic_load_n(&fj->sync_floor, __ATOMIC_RELAXED))) {
            weft__fj_frame *f = --fj->head;
            r = f->fn(cx, f->arg);
        } else {
            r = weft__fj_sync_slow(cx);
        }
        if (r != 0 && first == 0) first = r;
    }
    return first;
}

/* weft_task_group_wait with the children's value apart from weft's status:
 * WEFT_OK (every child returned 0), WEFT_ETASK (the first non-zero value, in
 * sync order, is in *result), WEFT_EINVAL (NULL g).  result may be NULL. */
static inline weft_status weft_task_group_wait_status(weft_task_group *g, int *result) {
    if (result) *result = 0;
    if (!g) return weft__fj_einval("weft_task_group_wait_status", "g is NULL");
    int r = weft_task_group_wait(g);
    if (result) *result = r;
    return r == 0 ? WEFT_OK : WEFT_ETASK;
}

/* Runs fn(ctx, arg) as a root task on one of ex's workers, waits for it and
 * returns what fn returned.  Spawns left unsynced when fn returns are synced
 * before this returns; when fn returned 0, the first non-zero value one of
 * them returned (innermost first) is returned instead.  Called from one of
 * ex's own workers (inside a task), it runs fn right there as a nested task
 * and returns its value; that cannot deadlock.  Such a nested root is a task of
 * its own: a cancellation of the run around it (a token, weft_future_cancel)
 * does not reach its weft_ctx_check; to stop it with that run, pass the
 * run's token to weft_run_root_with_token, or check the outer task's ctx
 * (what an algorithm chunk or a pipeline stage that enters fork-join this way
 * should do too).  From any other thread the
 * caller sleeps on a futex meanwhile (a worker of another executor blocks
 * too).  `arg` is not copied.  Returns WEFT_EINVAL for a NULL fn, WEFT_ENOMEM
 * if the task could not be queued, WEFT_EFORKED for an executor of the parent
 * process after fork().  Those statuses share the int with fn's own values:
 * weft_run_root_status keeps them apart.  ex NULL: the default executor
 * (weft_default_executor), here and in weft_run_root_status: if it cannot be
 * made, its creation's status (e.g. WEFT_ENOMEM, WEFT_ESYS), and
 * WEFT_ESHUTDOWN once exit has destroyed it (an atexit handler registered
 * before its first use).  Any thread. */
WEFT_API int weft_run_root(weft_executor *ex, weft_task_fn fn, void *arg);

/* weft_run_root with fn's value apart from weft's status.  Returns WEFT_OK (fn
 * ran and returned 0), WEFT_ETASK (fn, or a spawn it left unsynced, returned
 * non-zero: the value weft_run_root gives is in *result), or the reason fn
 * did not run (WEFT_EINVAL, WEFT_ENOMEM, WEFT_EFORKED, and for ex NULL the
 * default executor's, as above; *result is 0).  result may be NULL.  Any
 * thread, as weft_run_root. */
WEFT_API WEFT_NODISCARD weft_status weft_run_root_status(weft_executor *ex, weft_task_fn fn, void *arg,
                                                         int *result);

WEFT_EXTERN_C_END
#endif
