/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Async tasks: one function run on an executor, with a future (weft_async), without
 * one (weft_silent_async), or after earlier async tasks (weft_dependent_async);
 * and what lets a future wake an event loop: a completion callback and an eventfd.
 * docs/guide-forkjoin.md says when to use these rather than weft_spawn.
 * An async task is a C function run to completion on a worker: there are no
 * suspendable (async fn, coroutine) tasks as a Tokio-based AsyncExecutor's
 * emplace_async / run_n_async have; to compose with an event loop, have it
 * wait on weft_future_fd or weft_future_then below, and keep blocking I/O out
 * of tasks (it holds the worker).
 */
#ifndef WEFT_ASYNC_H
#define WEFT_ASYNC_H

#include "weft/common.h"
#include "weft/core.h"
#include "weft/graph.h"
#include "weft/sched.h"

WEFT_EXTERN_C_BEGIN

/* Queues fn(ctx, arg) to run once on ex.  If `out` is not NULL, *out receives a
 * future (written before fn can start, so fn may read it where the caller
 * stored it; as weft_run's, weft/graph.h; also for the dependent and
 * semaphore forms below) (release it with weft_future_destroy) whose status is WEFT_OK, WEFT_ETASK
 * (fn returned non-zero: weft_run_info.task_code holds the value) or
 * WEFT_ECANCELED (weft_future_cancel before it started: fn is not called; or
 * while fn ran: fn is not interrupted, it runs to its end and sees
 * weft_ctx_cancelled true, and unless it returned non-zero the status is
 * WEFT_ECANCELED, as weft_future_cancel's rule in core.h says: so ECANCELED
 * alone does not tell whether fn ran; fn records that itself if it matters).
 * `arg` is not copied and must stay valid until fn has run.  Inside fn, the task
 * may spawn and sync (forkjoin.h) and wait on futures.  The task record comes from
 * the calling worker's free list, or from the allocator when called from a
 * thread that is not one of ex's workers.  A record whose last reference a
 * worker drops goes on that worker's free list (up to 4096 records, about
 * 1.5 MB, a worker; weft_metrics.bytes counts them) whoever allocated it, so
 * weft_async from other threads alone fills those lists, kept until the
 * executor is destroyed.  ex NULL: the default executor
 * (weft_default_executor), in every call of this header.  Returns WEFT_OK,
 * WEFT_EINVAL (NULL fn), WEFT_ENOMEM (nothing was queued; *out is NULL).  Any
 * thread; the task counts as a run for weft_executor_wait_all. */
WEFT_API WEFT_NODISCARD weft_status weft_async(weft_executor *ex, weft_task_fn fn, void *arg,
                                               weft_future **out);

/* weft_async without a future: nothing to wait on or release (wait with
 * weft_executor_wait_all, or have fn signal its own completion).  From a
 * thread that is not one of ex's workers (main, an event loop, a worker of
 * another executor), the first call claims one of ex's 8 submitter slots for
 * that thread, for the executor's life: a queue only it pushes to, which the
 * workers take from in batches, and a cache of task records, so a loop of
 * submissions from that thread costs neither an allocation nor a shared
 * read-modify-write per task.  With every slot taken (more than 8 such
 * threads), the thread's tasks go through the shared injector, as they would
 * on an executor with a ready-queue policy (weft/sched.h), slower but alike.
 * A thread that ends keeps its slot (nothing tells the executor), unless a
 * later thread happens to reuse its thread-local storage and so takes the
 * slot over: threads made and ended over an executor's life, not only those
 * alive at once, can take all 8.  Its tasks still queued there run all the
 * same, and the slot's cache of records (the most its tasks ever had queued
 * at once, 48 bytes each) is kept until the executor is destroyed
 * (weft_metrics.bytes counts it). */
WEFT_API WEFT_NODISCARD weft_status weft_silent_async(weft_executor *ex, weft_task_fn fn, void *arg);

/* Like weft_async, but fn starts only after every task whose future is in
 * deps[0 .. ndeps-1] has finished (whatever its status).  Each dependency must be
 * the future of an async task of the same executor (WEFT_EINVAL otherwise); the
 * caller keeps ownership of those futures and may destroy them as soon as this
 * returns.  ndeps may be 0 (then deps may be NULL), and at most
 * UINT32_MAX - 1 (WEFT_EINVAL: the task's join counter is 32 bits).  `out` may be NULL (a silent
 * dependent task).  Returns WEFT_OK, WEFT_EINVAL, WEFT_ENOMEM (nothing was
 * queued).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_dependent_async(weft_executor *ex, weft_task_fn fn, void *arg,
                                                         weft_future *const *deps, size_t ndeps,
                                                         weft_future **out);

/* Options of weft_async_with.  Zero (or a NULL pointer) = weft_async's defaults. */
typedef struct weft_async_options {
    /* The task's priority (weft/sched.h).  NORMAL without a handle: the task
     * goes to the work-stealing deques exactly as weft_async's do; anything
     * else goes through the executor's priority queue. */
    weft_priority priority;
    /* If not NULL, receives a handle to the queued task (re-prioritise,
     * remove: weft_sched_*), valid until the task starts.  Written before
     * weft_async_with returns WEFT_OK. */
    weft_sched_handle *handle;
    /* Dependencies, as weft_dependent_async's.  With a priority, each one
     * still queued below it is raised to it (priority inheritance, unless the
     * executor was created with weft_sched_config.no_inheritance): each
     * direct dependency that has a queue slot (a priority or a handle), also
     * one still waiting for its own dependencies (it is queued at the raised
     * level), but not those it waits for: in a chain C -> B -> A, a CRITICAL
     * C raises B, and a LOW A stays LOW (give A the priority, or raise it
     * through its handle).  Plain NORMAL dependencies sit in the deques, out
     * of the queue's reach. */
    weft_future *const *deps;
    size_t ndeps; /* entries of deps; 0: no dependencies (deps may be NULL) */
    /* A NUMA node hint, written WEFT_NUMA_NODE(n) for node n (an index of the
     * machine's topology, weft/topology.h); 0: none.  The task goes to a
     * worker of that node: from one, its own deque; from elsewhere, the
     * node's mailbox, which the node's workers look at first in every steal
     * round and the others only before they sleep (so it always runs).  Used
     * by executors whose workers are bound (a placement, WEFT_AFFINITY_CPUS)
     * and span several nodes; elsewhere, or for a node without workers, and
     * with a priority or a handle, the hint is ignored. */
    unsigned numa_node;
} weft_async_options;

/* weft_async_options.numa_node for node n (zero is "no hint"). */
#define WEFT_NUMA_NODE(n) ((unsigned)(n) + 1u)

/* weft_async / weft_dependent_async with options (a priority, a handle).
 * Returns what weft_dependent_async returns, plus WEFT_EINVAL for a priority
 * that is not a weft_priority.  A task removed through its handle never runs
 * and its future becomes WEFT_ECANCELED.  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_async_with(weft_executor *ex, weft_task_fn fn, void *arg,
                                                    const weft_async_options *opt, weft_future **out);

/* An isolated wait for an async task's future (oneTBB's isolate).  From inside a
 * task of the same executor, the worker runs nothing unrelated meanwhile: if the
 * task has not started it runs it here (and whatever the task spawns and syncs),
 * otherwise it spins and yields until the task's worker finishes it.  So a task
 * that holds a lock while it waits cannot pick up another task that needs that
 * lock.  From any other thread it is weft_future_wait.  Returns the future's
 * status, WEFT_EINVAL (NULL, or a future that is not an async task's when called
 * from a worker), WEFT_EAGAIN (a dependent task whose dependencies have not all
 * finished: wait for those first; nothing was waited for), WEFT_EDEADLK (the
 * task is running lower on this worker's stack, or is the caller itself: it
 * could only finish after the caller returns; weft_future_wait's rule, core.h). */
WEFT_API weft_status weft_future_wait_isolated(weft_future *f);

/* ---- composing with event loops ------------------------------------------- */

/* Called once when the future becomes ready, with its final status.  From
 * C++ it must not throw (weft's frames do not unwind; docs/guide-cpp.md). */
typedef void (*weft_future_callback)(weft_future *f, weft_status status, void *arg);

/* Registers cb(f, status, arg) to run once when f is ready: on the thread that
 * completes f (usually a worker: keep cb short and non-blocking; it may submit
 * more work), or right here before returning if f is ready already.  One callback
 * per future, also once it is ready.  The future is ready (weft_future_wait
 * returns, weft_future_ready is true) before its callback starts, so a callback
 * may still be running when a wait on f has returned: do not free what `arg`
 * points to on the strength of the wait; let the callback say it is done.
 * Works for every future (async tasks and taskflow runs).  Returns
 * WEFT_OK, WEFT_EINVAL (NULL f or cb), WEFT_EBUSY (a callback is already
 * registered).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_future_then(weft_future *f, weft_future_callback cb, void *arg);

/* Stores in *fd a file descriptor that becomes readable (level-triggered, and
 * stays readable) once f is ready, for epoll, poll, io_uring or a libuv uv_poll.
 * The descriptor belongs to the future: do not read from or close it; it is
 * closed by weft_future_destroy (remove it from your event loop first).  Every
 * call returns the same descriptor.  Returns WEFT_OK, WEFT_EINVAL (NULL argument),
 * WEFT_ESYS (no eventfd could be created).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_future_fd(weft_future *f, int *fd);

/* ---- semaphores ------------------------------------------------------------ */

/* A counting semaphore for tasks (Taskflow's tf::Semaphore): at most `max`
 * tasks holding it run at once, for "at most k of these touch the disk" or, with
 * max 1, a critical section.  A task acquires before it starts and releases
 * when it ends; a task that finds no unit free does not block its worker: it is
 * parked on the semaphore and queued again when a release hands it a unit
 * (first parked, first served).  Graph tasks use it through weft_task_acquire /
 * weft_task_release (weft/graph.h), async tasks through weft_async_acquire.
 * One semaphore may serve tasks of several executors and taskflows at once. */
/* typedef struct weft_semaphore weft_semaphore; is in weft/graph.h (included
 * above): C99 does not allow a typedef twice. */

/* A semaphore with `max` units, all free.  NULL with *err (if err is not NULL)
 * = WEFT_EINVAL (max 0, or above INTPTR_MAX), WEFT_ENOMEM or WEFT_ESYS.  Any
 * thread.  Taking and giving back a unit is one atomic operation while no
 * task waits on it; a task that parks or is woken takes its lock. */
WEFT_API WEFT_NODISCARD weft_semaphore *weft_semaphore_create(size_t max, weft_status *err);

/* Frees it.  WEFT_EBUSY (nothing freed, weft_last_error_message says why)
 * while a task is parked on it or holds a unit, and while a task that may
 * still acquire or release it is on its way: a run (queued or going, or a
 * parent's run that holds the taskflow as a module body) of a taskflow with a
 * task that names it in weft_task_acquire or weft_task_release, or a
 * weft_async_acquire task not yet finished.  Wait for those (weft_future_wait,
 * weft_executor_wait_all), then destroy.  NULL gives WEFT_OK.  A taskflow that
 * still names it must not run afterwards (erase those tasks, clear or destroy
 * it).  In a child process made by fork(), a run or weft_async_acquire task
 * that was in flight at the fork on an executor of the parent never ends:
 * a semaphore it may acquire or release (or one a task held or was parked
 * on at the fork) stays WEFT_EBUSY for ever there.  Leave it: its memory
 * goes with the child's exit or exec (freeing it could not be made safe: its
 * lock may have been held by a parent's thread at the fork). */
WEFT_API weft_status weft_semaphore_destroy(weft_semaphore *s);

/* Units free now (0 for NULL): a snapshot, for tests and diagnostics.  Any thread. */
WEFT_API size_t weft_semaphore_value(weft_semaphore *s);
/* The `max` it was created with (0 for NULL).  Any thread. */
WEFT_API size_t weft_semaphore_max(const weft_semaphore *s);

/* Makes every unit free again, e.g. after a run was cancelled between a task
 * that acquired and the task that was to release (skipped tasks neither
 * acquire nor release).  WEFT_EINVAL for NULL, WEFT_EBUSY (nothing changed)
 * while a task is parked on it.  Only while no task holding it runs or is
 * about to (one a release has just handed a unit to, not yet running, or one
 * that is acquiring it): reset then frees a unit that is spoken for, and a
 * second task may enter beside it. */
WEFT_API weft_status weft_semaphore_reset(weft_semaphore *s);

/* weft_async with semaphores: fn(ctx, arg) starts once it holds one unit of
 * each sems[i] (repeats count once; taken in a fixed order, so tasks sharing
 * semaphores never wait in a circle) and gives them back when it returns,
 * before its future is ready.  Until then it is parked, using no worker.  A
 * task cancelled (weft_future_cancel) before a worker took it up takes no
 * unit and waits for none: its future becomes WEFT_ECANCELED while the
 * semaphores are held elsewhere; one already parked when cancelled ends once
 * a unit reaches it, which it gives back at once.  The
 * array is copied.  nsems 0 is weft_async.  Future and errors as weft_async,
 * plus WEFT_EINVAL for a NULL semaphore; a release finding every unit of a
 * semaphore free already (its count was reset meanwhile) fails the task with
 * task_code WEFT_EINVAL.  weft_future_wait_isolated on its future waits like
 * weft_future_wait (running other work).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_async_acquire(weft_executor *ex, weft_task_fn fn, void *arg,
                                                       weft_semaphore *const *sems, size_t nsems,
                                                       weft_future **out);

/* ---- config sizes (docs/abi.md) ----------------------------------------------
 *
 * Each call of this header that takes a config struct by pointer has a _sized
 * form, told the sizeof the caller was compiled with (right after the
 * pointer).  A program never names them: the header defines each call's name
 * as an inline function that passes this header's size.  A shorter struct (an
 * older header) reads as zero, the defaults, for the fields it lacks; a
 * longer one (a newer header) is WEFT_EINVAL, logged with the offset, unless
 * every byte this library does not know is zero.  Otherwise each behaves,
 * fails and may be called exactly as the call of its name.  The exported
 * symbols without _sized, which binaries built before the sizes were passed
 * call, read the 1.0 layout. */
/* weft_async_with with a weft_async_options of opt_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_async_with_sized(weft_executor *ex, weft_task_fn fn,
                                                          void *arg, const weft_async_options *opt,
                                                          size_t opt_size, weft_future **out);
#ifndef WEFT_BUILDING
WEFT_NODISCARD static inline weft_status weft__async_with_inline(weft_executor *ex, weft_task_fn fn,
                                                                 void *arg,
                                                                 const weft_async_options *opt,
                                                                 weft_future **out) {
    return weft_async_with_sized(ex, fn, arg, opt, sizeof(weft_async_options), out);
}
#define weft_async_with weft__async_with_inline
#endif

WEFT_EXTERN_C_END
#endif
