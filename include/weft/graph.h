/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Task graphs ("taskflows"): build a DAG of C functions once, run it many times.
 *
 *     weft_taskflow *tf = weft_taskflow_create("demo", NULL);
 *     weft_task a = weft_emplace(tf, load, &data);
 *     weft_task b = weft_emplace(tf, parse, &data);
 *     weft_precede(a, b);                        // a runs before b
 *     weft_status st = weft_run_and_wait(ex, tf);
 *
 * Building is single-threaded: calls that change one taskflow must not race each
 * other.  A taskflow cannot be changed while a run of it is queued or going; such
 * calls fail with WEFT_EBUSY and change nothing.  The test is made as the change
 * starts, without a lock: a change must not race with the submission, on another
 * thread, of a run that uses the taskflow (weft_run and the other weft_run*
 * calls on it, or on a taskflow that has it as a module body) either; order
 * the two (a run submitted while a change is under way may see it half made).  Errors (docs/errors.md): a
 * call that returns a weft_status says so there; a builder that returns a task
 * returns the null task, and weft_taskflow_last_error(tf) gives the status of the
 * most recent builder call on tf; weft_last_error_message() (weft/core.h) says
 * why, on the calling thread.  The queries (names, data,
 * counts, successors, DOT) read without locking: any thread may call them while
 * no thread changes the taskflow, also during its runs (weft_task_data while a
 * task may set it is the caller's to order).
 */
#ifndef WEFT_GRAPH_H
#define WEFT_GRAPH_H

#include <stdio.h>
#include "weft/core.h"
#include "weft/sched.h" /* weft_priority */

WEFT_EXTERN_C_BEGIN

/* A graph of tasks and the edges between them, built once and run any number
 * of times (weft_taskflow_create, weft_run).  Opaque; one thread changes it
 * at a time, and never while a run of it is queued or going. */
typedef struct weft_taskflow weft_taskflow;
struct weft__node;

/* A task handle: a small value, valid until its taskflow is cleared or
 * destroyed.  The null task (all zero, WEFT_TASK_NULL) is what failed calls
 * return; passing it to a function below gives WEFT_EINVAL. */
typedef struct weft_task {
    struct weft__node *node_; /* private: the task's node; NULL for the null task */
} weft_task;

/* The null task, and the test for it (true for what a failed builder returned). */
#define WEFT_TASK_NULL ((weft_task){0})
static inline bool weft_task_is_null(weft_task t) { return !t.node_; }

/* The work of a task.  Return 0 on success; any other value fails the run: tasks
 * of that run that have not started are skipped, and the run's future reports
 * WEFT_ETASK with this value, the task's name and the number skipped. */
typedef int (*weft_task_fn)(weft_ctx *ctx, void *arg);

/* ---- taskflows ------------------------------------------------------------- */

/* Creates an empty taskflow.  `name` may be NULL; it is copied.  Returns NULL
 * with *err = WEFT_ENOMEM on failure (err may be NULL). */
WEFT_API WEFT_NODISCARD weft_taskflow *weft_taskflow_create(const char *name, weft_status *err);

/* Frees the taskflow and all its tasks.  Returns WEFT_EBUSY (and frees nothing)
 * while a run of it is queued or going; wait for its futures first; WEFT_EINVAL
 * (frees nothing) for a graph another object owns: a subflow's
 * (weft_subflow_graph) or a composition's (weft_composition_graph).  NULL
 * gives WEFT_OK.  In a child process made by fork(), a taskflow whose run
 * was in flight at the fork on an executor of the parent stays busy for ever
 * (that run never ends there): WEFT_EBUSY every time, with a message saying
 * so; leave it (its memory goes with the child's exit or exec). */
WEFT_API weft_status weft_taskflow_destroy(weft_taskflow *tf);

/* Renames the taskflow (the name is copied; NULL clears it).  WEFT_EINVAL,
 * WEFT_ENOMEM, WEFT_EBUSY. */
WEFT_API weft_status weft_taskflow_set_name(weft_taskflow *tf, const char *name);
/* The taskflow's name; "" if none.  Valid until renamed or destroyed. */
WEFT_API const char *weft_taskflow_name(const weft_taskflow *tf);

/* Removes every task and edge; the memory is kept for reuse.  Task handles of
 * the taskflow become invalid.  WEFT_EINVAL, WEFT_EBUSY. */
WEFT_API weft_status weft_taskflow_clear(weft_taskflow *tf);

/* Number of tasks (0 for NULL). */
WEFT_API size_t weft_taskflow_num_tasks(const weft_taskflow *tf);

/* How many runs of tf are submitted and not finished: queued or going, through
 * any weft_run* call, plus one for each run of another taskflow that has tf as
 * a module body (weft_emplace_module; such a run holds its bodies from its
 * submission to its end).  While it is not 0, tf refuses edits with
 * WEFT_EBUSY and whatever its tasks use (a pipeline, a semaphore, a module
 * body) may still be reached.  A snapshot: a run may be submitted or end right
 * after.  0 for NULL.  Any thread. */
WEFT_API size_t weft_taskflow_num_runs(const weft_taskflow *tf);

/* Calls visit(task, arg) for every task in index order (weft_task_index)
 * until it returns false: emplace order until a task is erased; after that a
 * task that took an erased task's slot (weft_task_erase) is visited at that
 * index, before tasks emplaced earlier, and free slots are not visited.
 * The taskflow must not be changed during the walk.  WEFT_EINVAL for NULLs. */
typedef bool (*weft_task_visit_fn)(weft_task task, void *arg);
WEFT_API weft_status weft_taskflow_for_each_task(const weft_taskflow *tf, weft_task_visit_fn visit,
                                                 void *arg);

/* Checks that the taskflow can run: returns WEFT_OK, or WEFT_ECYCLE with a task on
 * a cycle in *on_cycle (if not NULL) and a message naming it in
 * weft_last_error_message.  weft_run does the same check (and caches the
 * result until the taskflow next changes).  WEFT_EINVAL, WEFT_ENOMEM.  Counts as
 * a builder call for weft_taskflow_last_error.
 * In a graph with condition tasks that has a source, it also looks for tasks
 * no run can ever reach, whatever the conditions return (a loop whose edge
 * back into a task is strong: the task waits for a predecessor that runs only
 * after it; a loop with no strong way in), and logs one warning
 * (weft/observe.h, WEFT_LOG_WARN) naming such a task and counting them:
 * "weft_taskflow_validate: taskflow 'x': task 'cond' can never run: 1 of its 2
 * strong predecessors never run (...)".  That is a warning, not an error: the
 * call still returns WEFT_OK (and *on_cycle the null task), and weft_run does
 * not look (its runs of such a graph end WEFT_OK without those tasks).  This
 * check runs on every call while no run is active (one pass over the tasks
 * and edges, no allocation). */
WEFT_API weft_status weft_taskflow_validate(weft_taskflow *tf, weft_task *on_cycle);

/* Status of the most recent builder call on `tf`: every call that changes tf
 * or its tasks (weft_emplace and the other emplace calls, weft_placeholder,
 * the precede/succeed family, weft_task_set_name, weft_task_set_work and
 * weft_task_set_shared_work,
 * weft_taskflow_set_name, weft_taskflow_clear, weft_composition_instantiate
 * into tf, weft_pipeline_emplace), weft_taskflow_validate and the submission of
 * weft_run* sets it, and a success resets it to WEFT_OK: it is not sticky.  Read
 * it right after the call, on the thread that made it, for the status of a
 * builder that returned the null task.  With builders racing (which the rules
 * above forbid anyway) or runs submitted from several threads, it holds one of
 * their statuses; it never tears.  WEFT_EINVAL for NULL.  Any thread. */
WEFT_API weft_status weft_taskflow_last_error(const weft_taskflow *tf);
/* Deprecated: use weft_last_error_message() (weft/core.h).  While tf's most
 * recent builder call failed, the calling thread's message; "" after a success.
 * Never NULL.  Any thread (nothing is stored in tf, so reading cannot race). */
WEFT_API const char *weft_taskflow_error_message(const weft_taskflow *tf);

/* Writes the graph in Graphviz DOT to `out` (render with `dot -Tsvg`).  Unnamed
 * tasks are labelled "#index".  WEFT_EINVAL, WEFT_ESYS (write failed).  A subflow
 * task is drawn with the graph its last execution built: call it while no run is
 * going if the graph has subflows (a running subflow rebuilds its graph). */
WEFT_API weft_status weft_taskflow_dump_dot(const weft_taskflow *tf, FILE *out);

/* ---- tasks ----------------------------------------------------------------- */

/* Adds a task that calls fn(ctx, arg).  Returns the null task on failure
 * (WEFT_EINVAL for NULL tf or fn, WEFT_ENOMEM, WEFT_EBUSY); see
 * weft_taskflow_last_error.  Tasks come from a per-taskflow slab, not one malloc
 * each. */
WEFT_API weft_task weft_emplace(weft_taskflow *tf, weft_task_fn fn, void *arg);

/* Adds a task with no work yet: it runs as a no-op until weft_task_set_work gives
 * it some.  Useful to build a graph's shape first.  Errors as weft_emplace. */
WEFT_API weft_task weft_placeholder(weft_taskflow *tf);

/* Sets (or replaces) the work of a plain task or placeholder; fn may be NULL
 * (a no-op).  WEFT_EINVAL for the null task, an erased one, a task of another
 * kind (condition, multi-condition, subflow, module or GPU task: its function
 * has another signature or is weft's), or one holding shared work
 * (weft_emplace_work; weft_task_set_shared_work, weft/flow.h, replaces that);
 * WEFT_EBUSY while the taskflow runs; on an error nothing changes. */
WEFT_API weft_status weft_task_set_work(weft_task t, weft_task_fn fn, void *arg);

/* Adds the edge from -> to: `to` starts only after `from` has finished.  Both
 * tasks must belong to the same taskflow.  Adding the same edge twice makes `to`
 * wait for `from` twice, which is harmless.  WEFT_EINVAL, WEFT_ENOMEM (nothing
 * added), WEFT_EBUSY. */
WEFT_API weft_status weft_precede(weft_task from, weft_task to);
/* Adds the edge before -> t (the mirror of weft_precede). */
WEFT_API weft_status weft_succeed(weft_task t, weft_task before);
/* Adds from -> to[i] for each i, all or nothing: on WEFT_ENOMEM no edge is
 * added.  n == 0 is WEFT_OK; `to` may then be NULL. */
WEFT_API weft_status weft_precede_many(weft_task from, const weft_task *to, size_t n);
/* Adds before[i] -> t for each i, all or nothing. */
WEFT_API weft_status weft_succeed_many(weft_task t, const weft_task *before, size_t n);

/* Names a task (copied; NULL clears).  WEFT_EINVAL (null or erased task),
 * WEFT_ENOMEM, WEFT_EBUSY. */
WEFT_API weft_status weft_task_set_name(weft_task t, const char *name);
/* The task's name, "" if unnamed (or for the null task). */
WEFT_API const char *weft_task_name(weft_task t);
/* Attaches an opaque user pointer (the taskflow never touches it).  Allowed while
 * the taskflow runs, unlike the other changes.  WEFT_EINVAL for the null task
 * or an erased one. */
WEFT_API weft_status weft_task_set_data(weft_task t, void *data);
/* The task's user pointer; NULL if none was set (or for the null task). */
WEFT_API void *weft_task_data(weft_task t);
/* Index of the task (0-based): its position in emplace order, unless it took
 * the slot of an erased task, whose index it then has (weft_task_erase);
 * SIZE_MAX for the null task. */
WEFT_API size_t weft_task_index(weft_task t);
/* Number of edges out of / into the task (0 for the null task). */
WEFT_API size_t weft_task_num_successors(weft_task t);
WEFT_API size_t weft_task_num_dependents(weft_task t);
/* The i-th successor (in the order the edges were added); the null task when i
 * is out of range. */
WEFT_API weft_task weft_task_successor(weft_task t, size_t i);
/* The task currently running in `ctx` (the null task outside a graph task). */
WEFT_API weft_task weft_ctx_task(const weft_ctx *ctx);
/* The run the graph task of `ctx` belongs to: the future weft_run (or
 * weft_run_n, weft_run_until, ...) returned, also for a task of a module's or
 * subflow's graph nested in that run; NULL outside a graph task.  An identity
 * to compare, e.g. to keep what tasks record per run of a taskflow (weft.hpp
 * keeps each run's first exception so); valid to wait on only while the
 * caller owns that future.  No errors: NULL for a NULL ctx.  Only from inside
 * the task ctx belongs to. */
WEFT_API const weft_future *weft_ctx_run(const weft_ctx *ctx);

/* ---- editing ---------------------------------------------------------------- */

/* Editing follows the builder rules above: WEFT_EBUSY (nothing changed) while a
 * run of the taskflow is queued or going, the status in
 * weft_taskflow_last_error, single-threaded per taskflow.  Nothing here
 * allocates, so nothing fails for memory.  A handle to an erased task is
 * invalid, as after weft_taskflow_clear (passing it to the calls of this
 * section or the precede family gives WEFT_EINVAL while its slot is free). */

/* Removes task t and every edge into and out of it.  Its slot is reused by the
 * next task added (which takes t's index: indices stay below the largest ever
 * used, and are no longer dense in emplace order once a task was erased);
 * except in a composition's graph (weft_composition_graph) and among the
 * copies of compositions a taskflow holds (weft_composition_instantiate: the
 * slots from the first copy's to the last copy's end, until a clear), where
 * it stays free, so that an entry or exit naming t resolves to no task (the
 * null task), never to a task added later.
 * What t owned goes: its name, a subflow's graph (back to the taskflow's
 * pool), its reference on shared work, a module's record, its semaphores.
 * Removing an edge out of a condition task shifts the indices of the branches
 * after it down by one.  Costs a scan of the tasks' successors until every
 * edge into t is found: none when t has no dependents; from both ends of
 * the tasks added before t, then those after it, so predecessors next to t
 * or at the start (a chain erased from either end, a fan-out's leaves
 * erased from the last) are found at once; at worst every edge.
 * WEFT_EINVAL (null or erased task), WEFT_EBUSY. */
WEFT_API weft_status weft_task_erase(weft_task t);

/* Removes the edges from -> to (all of them, if the edge was added twice).
 * WEFT_EINVAL (null or erased task, or tasks of two taskflows), WEFT_ENOENT (no
 * such edge), WEFT_EBUSY. */
WEFT_API weft_status weft_edge_remove(weft_task from, weft_task to);
/* Removes every edge out of t (t keeps running; its successors no longer wait
 * for it).  WEFT_EINVAL, WEFT_EBUSY. */
WEFT_API weft_status weft_task_remove_successors(weft_task t);
/* Removes every edge into t: it becomes a source.  Costs a pass over the
 * tasks' successors until every edge into t is found, as weft_task_erase.
 * WEFT_EINVAL, WEFT_EBUSY. */
WEFT_API weft_status weft_task_remove_dependents(weft_task t);

/* Chains the tasks: tasks[i] precedes tasks[i + 1] for every i (Taskflow's
 * linearize).  All or nothing: on an error no edge is added.  n < 2 is WEFT_OK
 * (tasks may be NULL when n == 0).  WEFT_EINVAL, WEFT_ENOMEM, WEFT_EBUSY. */
WEFT_API weft_status weft_linearize(const weft_task *tasks, size_t n);

/* ---- semaphores -------------------------------------------------------------- */

/* The semaphore (created with weft_semaphore_create, weft/async.h). */
typedef struct weft_semaphore weft_semaphore;

/* Makes t acquire one unit of s before it starts: a task that finds none free
 * is parked, using no worker, until a release hands it one; its successors
 * wait as for any task.  A task acquiring several semaphores takes them in a
 * fixed order (repeats count once).  A cancel (or a failure) of its run does
 * not take a parked task off the semaphore: it is skipped when a release
 * hands it its unit, which it gives straight back, so the run ends only
 * after the holder's release (as in Taskflow).  A holder of the same run sees
 * the cancel (weft_ctx_cancelled) and may return early; a holder of another
 * run keeps the cancelled one waiting.  WEFT_EINVAL (NULL s, null or erased task),
 * WEFT_ENOMEM, WEFT_EBUSY.  Builder rules. */
WEFT_API weft_status weft_task_acquire(weft_task t, weft_semaphore *s);
/* Makes t release one unit of s when its function returns (for a subflow or a
 * module task: when the task's own call returns, before the graph it starts),
 * before its successors can see it finish.  The acquiring and the releasing
 * task may differ (a critical section over several tasks).  A release finding
 * every unit of s free already (a release without an acquire) fails the run:
 * WEFT_ETASK with task_code WEFT_EINVAL, naming the task.  Tasks skipped
 * because their run failed or was cancelled neither acquire nor release, as
 * in Taskflow, with one exception: a skipped task releasing a semaphore it
 * does not acquire itself gives the unit back if a task of the same taskflow
 * took one for such a section (it holds one in the taskflow's count), so a
 * stopped run ends and leaves the semaphore whole where Taskflow would wait
 * for ever on a task parked behind the lost unit.  A section whose acquire
 * and release lie in different taskflows (a module's graph and its parent)
 * is not given back so: see weft_semaphore_reset.  Errors as
 * weft_task_acquire. */
WEFT_API weft_status weft_task_release(weft_task t, weft_semaphore *s);
/* Number of distinct semaphores t acquires (weft_task_acquire twice with one
 * semaphore counts once), and number of releases it makes (each
 * weft_task_release counts, the same semaphore twice gives two units back).
 * 0 for the null task. */
WEFT_API size_t weft_task_num_acquires(weft_task t);
WEFT_API size_t weft_task_num_releases(weft_task t);

/* ---- priorities -------------------------------------------------------------- */

/* Gives t a priority (weft/sched.h; docs/guide-scheduling.md): when t becomes
 * ready it goes through its executor's priority queue, where workers take the
 * highest level first and, among equals, the task queued first.  Tasks readied
 * together (an iteration's sources, the successors one task readies) are
 * queued together, so under one worker they start in exactly that order; a
 * HIGH or CRITICAL task readied on a worker runs on it next, ahead of its
 * deque; an idle worker takes NORMAL and above before it steals, LOW when
 * nothing else is left, and escalation raises LOW tasks that waited (weft/
 * sched.h).  NORMAL is the default and costs nothing: such a task takes the
 * plain path (the work-stealing deques), unlike tasks of the other levels,
 * which pay a lock and a heap operation each time they become ready; set
 * explicitly it also keeps t NORMAL in a run with a priority
 * (weft_run_with_priority).  The priority is the task's: erasing t clears it
 * (the task that reuses its slot has none), a composition's copies keep it,
 * weft_taskflow_clear drops it.  weft_run_n_parallel ignores priorities.
 * Builder rules: WEFT_EINVAL (null or erased task, a value that is not a
 * weft_priority), WEFT_EBUSY while a run of t's taskflow is queued or going. */
WEFT_API weft_status weft_task_set_priority(weft_task t, weft_priority priority);
/* t's own priority: the last one set, WEFT_PRIORITY_NORMAL if none was (or
 * for the null task).  A run's priority is not reported here.  Any thread,
 * like the other queries. */
WEFT_API weft_priority weft_task_get_priority(weft_task t);

/* ---- running --------------------------------------------------------------- */

/* Submits one run of `tf` to `ex` and returns at once.  On WEFT_OK, *out (if out
 * is not NULL) receives a future the caller must destroy; with out == NULL the
 * run is detached (weft_executor_wait_all still waits for it).  *out is
 * written before any task of the run can start, so a task may read it where
 * the caller stored it (`weft_run(ex, tf, &shared->run)`, then a task calls
 * weft_future_cancel(shared->run)); the same holds for weft_run_n,
 * _run_until, _run_with_priority, _run_n_parallel, _run_many and the async
 * calls (weft/async.h).  Runs of the same
 * taskflow queue up and execute one after another in submission order; runs of
 * different taskflows execute at the same time.  A run executes on `ex`, also
 * when it waits behind a run of tf on another executor (should handing it over
 * to `ex` then find no memory, the run fails: WEFT_ETASK with task_code
 * WEFT_ENOMEM).  The taskflow must outlive the run.  Errors (nothing is submitted, and *out, if out is
 * not NULL, is set to NULL): WEFT_EINVAL, WEFT_ECYCLE (see
 * weft_last_error_message), WEFT_ENOMEM, WEFT_ESHUTDOWN (the executor is being
 * destroyed).  ex NULL: the default executor (weft_default_executor; its
 * creation's status, e.g. WEFT_ENOMEM, if it cannot be made), here and in
 * weft_run_n, weft_run_until and weft_run_and_wait.  Any thread, including a task of `ex`; but a task must not wait for
 * a run of its own taskflow: that run queues behind the one the task belongs to,
 * so the wait never ends.  (Not marked warn-unused-result, so that a detached
 * run can be written `(void)weft_run(ex, tf, NULL)`; check the status anyway.) */
WEFT_API weft_status weft_run(weft_executor *ex, weft_taskflow *tf, weft_future **out);

/* Runs the taskflow `n` times in a row.  n == 0 runs no task: the run still
 * takes its turn behind the runs of tf queued before it, and its future is
 * ready then (not necessarily when this returns). */
WEFT_API weft_status weft_run_n(weft_executor *ex, weft_taskflow *tf, uint64_t n,
                                               weft_future **out);

/* Runs the taskflow repeatedly until pred(arg) returns true.  pred is called
 * before every iteration, the first included (so it may run zero times), an
 * empty taskflow's too: its iterations complete at once, so pred is called
 * until it returns true, each false counting an iteration (Taskflow's
 * run_until returns at once on an empty taskflow without calling pred; weft's
 * rule is the same for every taskflow, as weft_run_n's).  On one
 * thread at a time, never concurrently with a task of this run.  It runs on a
 * worker of the run's executor, between iterations, and counts as part of the
 * run for the waits it makes: waiting there for this run, or for another run
 * of tf (weft_run_and_wait), is refused with WEFT_EDEADLK, as from a task (the
 * run waits for pred).  There weft_current_ctx() is the run's context, whose
 * weft_ctx_task is the null task. */
typedef bool (*weft_pred_fn)(void *arg);
WEFT_API weft_status weft_run_until(weft_executor *ex, weft_taskflow *tf,
                                                   weft_pred_fn pred, void *arg, weft_future **out);

/* Runs N instances of the taskflow at the same time (Taskflow's parallel
 * run_n), unlike weft_run_n, which runs them one after another.  The graph is
 * shared, not copied: each instance has its own join counters (32 bytes per
 * task) and its tasks see its index, 0 .. n-1, through weft_ctx_iteration.
 * Tasks of different instances run concurrently, so what they share (their
 * `arg`) must allow it.  One future for the whole run: ready when every
 * instance has finished; a failing task stops every instance (tasks not yet
 * started are skipped, the future reports WEFT_ETASK naming the task), as
 * weft_future_cancel does; weft_run_info.iterations counts the instances
 * whose every task ran, as weft_run_n counts its iterations (core.h): one
 * whose tasks had all started when the run was cancelled or another
 * instance failed counts; one with a skipped or failing task does not.  The run does not queue behind other runs of tf (it
 * shares no state with them) but, like them, forbids changing tf until it
 * ends.  n == 0 runs no task, as weft_run_n's.  Plain and condition tasks only: a
 * subflow, module or multi-condition task, a task made by
 * weft_pipeline_emplace (a pipeline runs one run at a time), or a task with a
 * semaphore, gives WEFT_EINVAL (weft_last_error_message names it).  Other errors as weft_run
 * (WEFT_ENOMEM when the instances' counters cannot be allocated; WEFT_EFORKED
 * in a fork() child for a taskflow whose run was in flight at the fork, as
 * weft_run, although the instances would not queue behind that run).  Any thread. */
WEFT_API weft_status weft_run_n_parallel(weft_executor *ex, weft_taskflow *tf, uint64_t n, weft_future **out);

/* The iteration a graph task belongs to: in weft_run_n_parallel, its
 * instance's index; in a serial run (weft_run_n, weft_run_until, and the tasks
 * of its subflows and modules), the number of iterations completed before the
 * current one.  0 outside graph tasks and for NULL.  Only from the task's own
 * call, like every weft_ctx_* function. */
WEFT_API uint64_t weft_ctx_iteration(const weft_ctx *ctx);

/* Submits every taskflow of tfs[0 .. n-1] (as weft_run each) and returns one
 * future for the set, ready when all have finished.  Errors are kept per
 * taskflow: one that cannot be submitted (NULL, a cycle, no memory) or whose
 * run fails does not stop the others; weft_run_many_status and
 * weft_run_many_info say what happened to each.  The set's own status is
 * WEFT_OK when every member succeeded, else that of the first member (in index
 * order) that did not: WEFT_ECANCELED, or WEFT_ETASK with that member's
 * task_code and failed task, or for a submission error WEFT_ETASK with the
 * error as task_code; its `skipped` sums the members', its `iterations`
 * counts the members that succeeded.  weft_future_cancel on it cancels
 * nothing submitted: use weft_run_many_cancel (a token attached to it with
 * weft_cancel_attach cancels the members too).  A task of a member must not
 * wait for the set (its own run would have to end first).  Returns WEFT_OK
 * (*out, if out is not NULL, the set's future, to destroy as any), WEFT_EINVAL
 * (tfs NULL with n > 0), WEFT_ENOMEM (nothing submitted).  A member that
 * could not be submitted leaves weft_last_error_message as it was (the set
 * reports it; weft_run_many_and_wait, which returns it, leaves the member's
 * message).  ex NULL: the default executor.  Any thread. */
WEFT_API weft_status weft_run_many(weft_executor *ex, weft_taskflow *const *tfs, size_t n, weft_future **out);
/* Member i of a set from weft_run_many: its submission error, else its run's
 * status (WEFT_EAGAIN while it runs, and before weft_run_many has submitted
 * it: a task of an earlier member may ask).  WEFT_EINVAL when `all` is not such a
 * set or i is out of range.  Any thread; never blocks. */
WEFT_API weft_status weft_run_many_status(const weft_future *all, size_t i);
/* weft_future_info for member i (a submission error in info->status, the other
 * fields 0).  WEFT_EINVAL as weft_run_many_status, or for NULL info. */
WEFT_API weft_status weft_run_many_info(const weft_future *all, size_t i, weft_run_info *info);
/* Cancels every member's run, and the set.  WEFT_OK, WEFT_ENOENT (the set
 * had finished), WEFT_EINVAL (not a set).  Any thread. */
WEFT_API weft_status weft_run_many_cancel(weft_future *all);
/* weft_run_many, then waits for the set: returns the first non-OK member
 * status in index order (WEFT_OK if none) or weft_run_many's own error, and
 * fills statuses[i] (if statuses is not NULL) with each member's status.
 * From a task it runs other work while it waits.  WEFT_EDEADLK, with nothing
 * submitted and statuses untouched, when one of tfs is refused as
 * weft_run_and_wait would refuse it. */
WEFT_API weft_status weft_run_many_and_wait(weft_executor *ex, weft_taskflow *const *tfs, size_t n,
                                            weft_status *statuses);

/* weft_run with a priority for the whole run: every task of tf without a
 * priority of its own (weft_task_set_priority) runs at `priority` in this run,
 * as if it had been given it; tasks with one keep theirs.  It costs an O(tasks)
 * pass at the run's start and end, and each task a trip through the priority
 * queue.  The tasks of the graphs of tf's subflow and module tasks keep their
 * own priorities (the subflow or module task itself takes the run's).
 * WEFT_PRIORITY_NORMAL is weft_run exactly.  WEFT_EINVAL for a value that is
 * not a weft_priority; otherwise as weft_run.  Any thread. */
WEFT_API weft_status weft_run_with_priority(weft_executor *ex, weft_taskflow *tf, weft_priority priority,
                                            weft_future **out);

/* Runs once and waits: returns the submission error, else the run's status
 * (WEFT_OK, WEFT_ETASK, WEFT_ECANCELED).  From a task of `ex` it does not block
 * the worker: it runs other tasks meanwhile.  WEFT_EDEADLK, with nothing
 * submitted, when called from a task of tf, or from a task of a graph nested
 * in a run of tf (a module's body, a subflow), or from a task of a module body
 * of tf (at any depth), on any executor: that run (or its module) would queue
 * behind the caller's, which waits for it (weft_future_wait's rule). */
WEFT_API weft_status weft_run_and_wait(weft_executor *ex, weft_taskflow *tf);

WEFT_EXTERN_C_END
#endif
