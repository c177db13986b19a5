/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Scheduling: priority levels, the ready-queue policy an executor is created
 * with, handles to queued tasks (re-prioritise, remove, snapshot), escalation
 * against starvation and priority inheritance.  docs/guide-scheduling.md.
 *
 * Tasks of the default priority cost nothing extra: they travel through the
 * work-stealing deques as before.  A task given another priority (or a handle)
 * goes through the executor's priority queue, which every worker looks at
 * before its own deque (HIGH and CRITICAL), before stealing (NORMAL) and after
 * everything else (LOW): when its deque runs empty, and also once every 61
 * jobs it runs, so that a worker whose deque never empties still
 * takes HIGH and CRITICAL work, and jobs queued from other threads, within a
 * bounded number of jobs (each task of a graph's chain, of a condition loop
 * and of a wide fan of sources counts as one: such work yields to that look
 * too), and looks at the clock for escalation there.  At those looks,
 * queued NORMAL tasks and default-priority jobs queued from other threads
 * take turns, so neither kind waits for ever behind the other (a NORMAL
 * task that requeues itself with a handle on every worker does not hold
 * back a weft_async from main).  Jobs already running
 * are never preempted: a single task that runs long holds its worker, and so
 * does a pipeline's task for the tokens it runs inline (weft/pipeline.h:
 * WEFT_PIPELINE_INLINE, and AUTO on one worker).  Among equal
 * priorities, tasks run in the order they were queued (a sequence number,
 * kept through every re-prioritisation).
 * Async tasks take a priority in weft_async_options (weft/async.h); graph
 * tasks with weft_task_set_priority and whole graph runs with
 * weft_run_with_priority (weft/graph.h).
 */
#ifndef WEFT_SCHED_H
#define WEFT_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "weft/common.h"
#include "weft/core.h"

WEFT_EXTERN_C_BEGIN

/* Four levels.  Zero is NORMAL, so a zeroed options struct means "default". */
typedef enum weft_priority {
    WEFT_PRIORITY_LOW = -1,     /* runs when nothing else is ready; escalation raises it */
    WEFT_PRIORITY_NORMAL = 0,   /* the default: the plain work-stealing path, no queue */
    WEFT_PRIORITY_HIGH = 1,     /* taken before NORMAL and LOW work */
    WEFT_PRIORITY_CRITICAL = 2, /* taken first; escalation never raises a task to it */
} weft_priority;

/* A queued task: generation-checked, so a handle whose task has started, ran
 * or was removed gives WEFT_ENOENT and never reaches freed memory.  A value
 * type; copy it freely.  {0, 0} is never a valid handle.  It is used with the
 * executor it came from, which must still exist: unlike a weak reference, a
 * handle cannot tell that its executor was destroyed (passing a destroyed
 * executor is a use after free, not WEFT_ENOENT).  A handle passed to another
 * executor is refused with WEFT_EINVAL ("given out by another executor") by
 * every call below, and touches none of that executor's tasks (told apart
 * by a mark of its executor, one of 255 dealt in turn: sure among the last
 * 255 executors created, not beyond). */
typedef struct weft_sched_handle {
    uint32_t slot; /* which queue entry holds the task (opaque to the caller) */
    uint32_t gen;  /* that entry's generation when the task was queued (opaque) */
} weft_sched_handle;

/* ---- ready-queue policies ------------------------------------------------ */

/* Which ready queue an executor uses (weft_sched_config.kind). */
typedef enum weft_sched_kind {
    WEFT_SCHED_WORK_STEALING = 0, /* default: per-worker deques, priority queue on the side */
    WEFT_SCHED_FIFO = 1,          /* one shared queue, submission order */
    WEFT_SCHED_PRIORITY = 2,      /* one priority queue for everything, FIFO among equals */
    WEFT_SCHED_ROUND_ROBIN = 3,   /* jobs dealt to the workers' queues in turn; idle ones steal */
    WEFT_SCHED_CUSTOM = 4,        /* weft_sched_config.policy */
    /* Deterministic mode (with .workers = 1): every job that is queued waits
     * in one pool, and the worker takes a ready job chosen by a generator
     * seeded with weft_sched_config.seed, so one seed reproduces one schedule
     * and other seeds explore other orders of the ready tasks.  The same
     * program runs unchanged on a normal executor.  What the seed does not
     * choose: a finished graph task hands its first ready successor straight
     * to its worker (that one runs next; at the worker's look every 61 jobs, see
     * the top, it waits in the pool instead), fork-join children run at their
     * sync, a subflow's graph starts in its weft_subflow_join (the graph's
     * first task runs there at once, the others wait in the pool), and
     * submissions from other threads while the worker runs land when the
     * worker next looks (submit before it starts, or from tasks).
     * With more workers it is accepted too, as one pool that every worker
     * takes from in the generator's order: the schedule then also depends on
     * timing, and a seed no longer reproduces it. */
    WEFT_SCHED_RANDOM = 5,
} weft_sched_kind;

/* A unit of work as a policy sees it: opaque, only stored and handed back. */
typedef struct weft_sched_item weft_sched_item;

/* A user policy: a ready queue the workers push to and take from.  Every
 * function is called from any thread concurrently (workers and submitting
 * threads): the policy does its own locking.  `worker` is the calling worker's
 * index, or -1 for a thread that is not a worker.
 *   push: keep item (priority as given at submission); 0, or non-zero when it
 *         cannot.  A refusal fails no submission and loses no job: the job
 *         runs all the same, outside the policy's order (on the worker that
 *         pushed it; on any, if that worker's local queue is bounded).  Jobs
 *         submitted from a thread that is not a worker wait in the executor's
 *         shared queue until a worker moves them into the policy (a
 *         prioritised async task's is first pushed with worker -1, and goes
 *         to that queue if refused), so no error reaches that thread either.
 *   pop:  an item for `worker` (its own first, if the policy has such a thing),
 *         or NULL when it holds none.  Each pushed item must come out exactly once.
 *   steal: optional (NULL: pop is used): an item for an idle worker, any.
 *   size: optional: items held now (diagnostics).
 *   destroy: optional: called once at executor destroy (the queue holds none
 *         of that executor's items; a state shared with executors still alive
 *         may hold theirs, and they go on using it: free it at the last);
 *         never when weft_executor_create fails, whatever step failed: the
 *         state is then still the caller's to free.
 * One policy (its state) may be given to several executors: one queue that
 * all their workers push to and take from.  An item a worker takes that
 * another executor pushed is handed back to that executor and runs there
 * (it is no error): that executor pushes it into the policy again, with the
 * priority it was first pushed with, and one of its workers takes it; destroy
 * is then called once per executor, at each one's destroy.
 * Violations the executor detects (always: every item a user policy holds is
 * kept in a locked hash set beside it, a lock and a probe per push and per
 * take): an item returned twice, or one never pushed: it is not run, counted in
 * weft_sched_stats.policy_errors.  A policy that returns NULL while it holds
 * items is detected when a worker is about to sleep and no other push or pop
 * is under way at the time (counted once per such sleep); those items run
 * once the policy hands them out on a later call: while it holds items, idle
 * workers look again every 50 us to 1 ms (a policy that holds items a while
 * before handing them out works, at that latency).  An empty pop beside a push still inside
 * the policy, or beside another worker's pop, is no error.
 * Under every policy (FIFO, ROUND_ROBIN, RANDOM and a user's too), a task
 * queued with a handle (weft_async_options.handle, whatever its priority)
 * never reaches the policy: the handle names a slot of the executor's
 * priority queue, where it waits, in its priority's order, to be
 * re-prioritised or removed.  Workers take such tasks of NORMAL and above
 * before the policy's items, and LOW ones once the policy hands out none;
 * the seed of WEFT_SCHED_RANDOM does not choose among them. */
typedef struct weft_sched_policy {
    void *state; /* passed to every function below; the policy's own data */
    /* Keeps item; 0, or non-zero when it cannot (see above).  Required. */
    int (*push)(void *state, weft_sched_item *item, weft_priority priority, int worker);
    /* An item for `worker`, or NULL when the policy holds none.  Required. */
    weft_sched_item *(*pop)(void *state, int worker);
    /* An item for an idle worker.  NULL: pop is used. */
    weft_sched_item *(*steal)(void *state, int worker);
    /* Items held now, for diagnostics.  May be NULL. */
    size_t (*size)(void *state);
    /* Called once at executor destroy, the queue empty of its items (a
     * shared state may hold other executors'); never by a create that fails
     * (the state stays the caller's).  May be NULL. */
    void (*destroy)(void *state);
} weft_sched_policy;

/* Scheduling part of weft_executor_config (its `sched` member).  Zero = default. */
typedef struct weft_sched_config {
    weft_sched_kind kind; /* 0: WEFT_SCHED_WORK_STEALING; a value outside the enum: WEFT_EINVAL */
    const weft_sched_policy *policy; /* WEFT_SCHED_CUSTOM: copied at create */
    /* Escalation (weft_sched_escalate): a LOW task queued this long becomes
     * NORMAL, a NORMAL one this long (since its last change) becomes HIGH.
     * 0: 20 ms each.  `tick_ns`: how often workers look (0: 2 ms).
     * `no_escalation`: never escalate automatically.  Only tasks in the
     * priority queue escalate (queued with a priority other than NORMAL, or
     * with a handle; under WEFT_SCHED_PRIORITY, every task).  Under work
     * stealing a default-priority task (weft_async, weft_run, a graph task
     * without a priority) never does: while HIGH work keeps coming (a HIGH
     * task that requeues itself) it waits for ever, where a LOW task from
     * the same thread rises to HIGH and runs.  Queue it with a handle
     * (weft_async_options.handle) if it must escalate. */
    uint64_t escalate_low_ns, /* LOW -> NORMAL after this long queued, in ns; 0: 20 ms */
        escalate_normal_ns,   /* NORMAL -> HIGH after this long, in ns; 0: 20 ms */
        tick_ns;              /* how often workers look, in ns; 0: 2 ms */
    bool no_escalation;       /* true: no automatic escalation (weft_sched_escalate still works) */
    /* Priority inheritance: a task queued with a priority raises the queued
     * tasks it depends on to it (async dependencies).  true turns it off. */
    bool no_inheritance;
    /* WEFT_SCHED_RANDOM: the generator's seed (0 is a seed like any). */
    uint64_t seed;
} weft_sched_config;

/* ---- handles --------------------------------------------------------------
 * Handles come from submissions that ask for one (weft_async_options.handle).
 * Every function below: any thread, lock-protected (O(log n) in the number of
 * queued prioritised tasks unless said otherwise). */

/* Changes a queued task's priority; its place among equals (its sequence
 * number) is kept.  WEFT_OK, WEFT_EINVAL (NULL ex, priority out of range),
 * WEFT_ENOENT (the task has started, ran, or was removed). */
WEFT_API WEFT_NODISCARD weft_status weft_sched_reprioritize(weft_executor *ex, weft_sched_handle h,
                                                            weft_priority priority);

/* Takes a queued task out: it never runs, and is reported cancelled (an async
 * task's future becomes WEFT_ECANCELED).  A task that was queued is reported
 * here, on the calling thread, before this returns: its future is ready (its
 * weft_future_then callback runs here) and its dependents are released, each
 * queued at its own priority.  A dependent task still waiting for its
 * dependencies is reported once they have finished, its report queued at
 * CRITICAL.  WEFT_OK, WEFT_EINVAL, WEFT_ENOENT (also for a job queued without a
 * handle: it cannot report itself cancelled). */
WEFT_API WEFT_NODISCARD weft_status weft_sched_remove(weft_executor *ex, weft_sched_handle h);

/* The priority a queued task has now (escalation may have raised it), in
 * *out.  WEFT_OK, WEFT_EINVAL (NULL ex or out), WEFT_ENOENT (the task has
 * started, ran or was removed). */
WEFT_API WEFT_NODISCARD weft_status weft_sched_priority(weft_executor *ex, weft_sched_handle h,
                                                        weft_priority *out);

/* One queued task in a snapshot. */
typedef struct weft_sched_entry {
    weft_sched_handle handle; /* the task's handle, for weft_sched_reprioritize / _remove;
                               * {0, 0} for a task queued without one (graph tasks,
                               * default-priority jobs under WEFT_SCHED_PRIORITY) */
    weft_priority priority;   /* its priority now (escalation included) */
    /* Submission order, for a task with a slot (a handle, or an async task
     * with a priority).  A graph task waiting in a worker's lanes (handle
     * {0, 0}) shows the number the next slot would have taken when it was
     * queued: the tasks queued together share it (0 before any slot was
     * taken), and a lane task runs before a slot task of its level whose
     * seq is at least its own (a snapshot lists entries of equal priority
     * and seq in no set order among themselves). */
    uint64_t seq;
    uint64_t waited_ns; /* since it was queued */
} weft_sched_entry;

/* Copies up to cap queued prioritised tasks into out, in the order they would
 * run (highest priority first, then submission order); *n receives how many are
 * queued in all (may exceed cap).  Changes nothing.  O(n log n).  WEFT_OK,
 * WEFT_EINVAL (NULL ex or n, out NULL with cap > 0), WEFT_ENOMEM.
 * One entry may stand for a task that has already run: under
 * WEFT_SCHED_PRIORITY, a default-priority async task queued without a handle
 * that weft_future_wait_isolated ran in place (weft/async.h) keeps its queue
 * entry until a worker reaches it and drops it, so until then it is listed
 * here (handle {0, 0}) and counted in weft_sched_stats.queued, also after
 * weft_executor_wait_all has returned. */
WEFT_API WEFT_NODISCARD weft_status weft_sched_snapshot(weft_executor *ex, weft_sched_entry *out, size_t cap,
                                                        size_t *n);

/* Escalates now, as a tick would: every queued task past its level's age
 * threshold moves up one level (LOW -> NORMAL -> HIGH; never to CRITICAL).
 * Works with no_escalation too.  *moved (may be NULL) receives how many moved.
 * O(n).  WEFT_OK, WEFT_EINVAL. */
WEFT_API WEFT_NODISCARD weft_status weft_sched_escalate(weft_executor *ex, size_t *moved);

/* Counters of an executor's scheduling layer. */
typedef struct weft_sched_stats {
    uint64_t queued;        /* prioritised tasks queued now */
    uint64_t escalations;   /* level changes made by escalation */
    uint64_t inherited;     /* raises made by priority inheritance */
    uint64_t removed;       /* tasks taken out by weft_sched_remove */
    uint64_t policy_errors; /* custom-policy contract violations detected */
} weft_sched_stats;

/* Fills *out.  WEFT_OK, WEFT_EINVAL (NULL argument).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_sched_get_stats(weft_executor *ex, weft_sched_stats *out);

/* The name of a priority ("low", "normal", "high", "critical"; "?" otherwise). */
WEFT_API const char *weft_priority_name(weft_priority p);

WEFT_EXTERN_C_END
#endif
