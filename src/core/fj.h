/* Fork-join frames, the runtime side: stealing frames, running a task with an
 * implicit sync at its end, and freeing a worker's frame stack.  The inline fast
 * path is in include/weft/forkjoin.h; docs/design.md ("Fork-join frames") has the
 * protocol and its orderings.  Internal. */
#ifndef WEFT_FJ_FJ_H
#define WEFT_FJ_FJ_H

#include <stdbool.h>

#include "core/job.h"
#include "weft/forkjoin.h"

/* Frames per worker: the executor's fj_frames (weft_executor_config
 * .fork_join_frames, 65536 by default).  The stack is allocated at the
 * worker's first spawn (2 MiB of address space by default; pages the worker
 * never reaches are never touched). */

#define WEFT__FJ_TS(tail, split) (((uint64_t)(tail) << 32) | (uint64_t)(split))
#define WEFT__FJ_TAIL(ts) ((uint32_t)((ts) >> 32))
#define WEFT__FJ_SPLIT(ts) ((uint32_t)(ts))

/* A stolen frame handed to the thief's run loop as a job: one per worker, reused
 * (its contents are read as soon as it starts running). */
typedef struct weft__fj_job {
    weft__job job;
    weft__fj_frame *frame;
} weft__fj_job;

/* Thief w tries to take the oldest public frame of victim v.  Returns w's
 * fj_job, ready to execute, or NULL; when v has nothing public it asks v to share
 * (sets v's `limit` to 0).  Any worker but v; lock-free. */
weft__job *weft__fj_steal(weft__worker *w, weft__worker *v);
/* Bytes of w's fork-join frame stack (0 before its first spawn).  Any thread
 * (weft_executor_metrics): a snapshot. */
size_t weft__fj_bytes(const weft__worker *w);

/* Runs fn(ctx, arg) as a task on w (a context of its own, whose cancellation
 * word is `stop`, may be NULL), then syncs every child it left unsynced.
 * Returns fn's value (or the first failing child's). */
int weft__fj_run_task(weft__worker *w, const _Atomic int *stop, weft_task_fn fn, void *arg);

/* Syncs every frame the task of cx left unsynced on w (weft__fj_left_unsynced, core/executor.h),
 * in order, innermost first; cx is still w's innermost context.  Returns the
 * first non-zero value a child returned, else 0.  Without it, a graph task's
 * leftover child stayed on the stack, ran later inside an unrelated task's
 * sync, and read its argument from a stack frame long gone. */
int weft__fj_sync_left(weft__worker *w, weft_ctx *cx);

/* weft_run_root_status with a stop word for the root's context (NULL: none),
 * which a layer above may set (cancel/: a token's callback).  Set before the
 * root starts, fn is skipped (counted as skipped) and this returns
 * WEFT_ECANCELED; set later, fn and the children it spawns see it through
 * their context (a stolen child too).  *stop must outlive the call. */
weft_status weft__run_root_stop(weft_executor *ex, const _Atomic int *stop, weft_task_fn fn, void *arg,
                                int *result);

/* Frees w's frame stack.  The executor is stopped. */
void weft__fj_destroy(weft__fj *fj);

#endif
