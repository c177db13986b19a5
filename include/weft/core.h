/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * The executor: a pool of worker threads that run tasks by work stealing, the
 * context a running task receives, and futures for work in flight.
 */
#ifndef WEFT_CORE_H
#define WEFT_CORE_H

#include "weft/common.h"

WEFT_EXTERN_C_BEGIN

/* A pool of worker threads that run tasks by work stealing (weft_executor_create,
 * weft_default_executor).  Opaque; freed by weft_executor_destroy. */
typedef struct weft_executor weft_executor;

/* One submitted run (of a taskflow, an async task, a fork-join root), in flight
 * or finished ("Futures" below).  Opaque; owned by the caller that received it
 * and released with weft_future_destroy. */
typedef struct weft_future weft_future;

/* What a running task receives as its first argument.  Valid only during the call
 * that received it; do not store it.  Later areas (fork-join, cancellation) hang
 * their per-task state here, which is why every task function takes one. */
typedef struct weft_ctx weft_ctx;

/* A sentence about the most recent failure on the calling thread.  Every public
 * call that fails sets it where the failure is decided: a detail where there is
 * one (which tasks form a cycle, which pipeline stage or parameter is wrong, why
 * a factory failed), e.g. "cycle: task 'c' leads back to task 'a'", else
 * "<function>: <what is wrong>", e.g. "weft_future_wait: f is NULL".  A call
 * passing on a status of a call it made keeps that call's message.  Outcomes
 * that are not failures (WEFT_ETASK and WEFT_ECANCELED as a run's result,
 * WEFT_EAGAIN from a query, WEFT_ETIMEDOUT from a timed wait, WEFT_ENOENT for a
 * task already gone) leave it alone.  Whether a call failed is told by its
 * return, never by this.  Like errno and dlerror, a successful call does not
 * clear it: read it right after the failing call, on the same thread.  "" if no
 * call has set one on this thread.  Never NULL; the text stays valid until the
 * next failure on this thread.  Any thread; wait-free.  The exact rule, and
 * which statuses are failures: docs/errors.md (R3). */
WEFT_API const char *weft_last_error_message(void);

/* ---------------------------------------------------------------------------------
 * Executor
 * ------------------------------------------------------------------------------ */

/* Where worker threads may run (weft_executor_config.affinity). */
typedef enum weft_affinity {
    /* The WEFT_AFFINITY environment variable ("none" or "cpus", or a
     * placement's name as WEFT_PLACEMENT takes it) if set, else
     * WEFT_AFFINITY_NONE.  Only this value reads the variable: an executor
     * created with NONE or CPUS keeps it whatever WEFT_AFFINITY says. */
    WEFT_AFFINITY_DEFAULT = 0,
    /* The OS places and moves the workers freely. */
    WEFT_AFFINITY_NONE,
    /* Worker i is bound to the i-th CPU of the process's CPUs (modulo their
     * count): the CPUs the workers field counts (the mask at load, the main
     * thread's and the creating thread's), not the creating thread's mask
     * alone, so a creator pinned to one CPU does not put every worker there,
     * and two workers never share a CPU while another sits idle.  (A
     * `placement`, below, lays out the creating thread's mask instead.)
     * Use it on a machine (or cgroup) the program has to itself: Linux may put
     * a freshly woken worker on the CPU of the worker that woke it and leave it
     * there for a scheduler tick (milliseconds), which halves a parallel loop's
     * speed until it moves.  Binding is best effort: a worker that cannot be
     * bound logs a warning (WEFT_LOG=warn) and runs unbound. */
    WEFT_AFFINITY_CPUS,
} weft_affinity;

/* The most steal or yield rounds an executor's idle search may make
 * (weft_executor_config.steal_rounds, .yield_rounds). */
#define WEFT_SEARCH_ROUNDS_MAX 65536u
/* weft_executor_config.yield_rounds = WEFT_YIELD_ROUNDS_NONE: no yield rounds
 * at all (0 there means the default), so an idle worker parks right after its
 * steal_rounds.  Not read from WEFT_YIELD_ROUNDS. */
#define WEFT_YIELD_ROUNDS_NONE 0xFFFFFFFFu

/* Executor settings.  Zero in any field means "the default", so
 *     weft_executor_create(&(weft_executor_config){ .workers = 4 }, &err)
 * sets only the worker count.  Fields are only ever appended. */
typedef struct weft_executor_config {
    /* Worker threads, at most 4096.  0: the WEFT_WORKERS environment variable
     * if it is a number from 1 to 4096, else the number of CPUs this process may
     * use: its affinity mask, capped by a cgroup v2 CPU quota (cpu.max, rounded
     * up).  The process's mask, not the creating thread's: a thread pinned to
     * one CPU still gets a worker per CPU of the process (the union of the mask
     * at load, the main thread's and the caller's), and the workers run on all
     * of them rather than inherit the pin.  WEFT_WORKERS=0 means that default too; any other bad value (empty,
     * not a number, above 4096) is logged once at warn level and the default
     * is used (docs/errors.md, "Environment variables"). */
    unsigned workers;
    /* Rounds of stealing (each tries every other worker once, in random order)
     * an idle worker makes before it starts yielding.  0: the WEFT_STEAL_ROUNDS
     * environment variable if it is a number from 1 to WEFT_SEARCH_ROUNDS_MAX,
     * else 16 (a bad value is warned about once, docs/errors.md).  No call
     * ever waits for a search to end. */
    unsigned steal_rounds;
    /* Further steal rounds, each followed by a sched_yield() instead of a
     * short spin, made after the steal_rounds and before the worker parks (so
     * an idle worker makes steal_rounds + yield_rounds rounds in all).
     * 0: the WEFT_YIELD_ROUNDS environment variable (as WEFT_STEAL_ROUNDS),
     * else 8.  WEFT_YIELD_ROUNDS_NONE: none (the worker parks after its
     * steal_rounds; no sched_yield() at all).  A longer search
     * (steal_rounds + yield_rounds) keeps workers awake between runs, which
     * pays where runs are short and frequent and a wake-up is dear (a VM
     * whose idle vCPUs halt: ~1000-task fork-join runs
     * on 16 workers took 0.18 ms with the default and 0.02 ms with 1024 yield
     * rounds), and costs CPU time and some throughput elsewhere (a flat
     * parallel loop on one worker 1.38x, a pipeline on 16 workers 1.16x);
     * bench/README.md, "Session 40". */
    unsigned yield_rounds;
    /* Initial slots of each worker's deque (rounded up to a power of two); it
     * grows as needed.  Default 1024; at most 2^30 (more is WEFT_EINVAL).
     * 8 bytes a slot, allocated zeroed at create and not written then: with
     * the C library's allocator a big deque takes memory only as its slots
     * are used (an allocator of weft_set_allocator's gets it zeroed by weft,
     * so written in full).  Allocation failing: WEFT_ENOMEM, its message
     * naming deque_capacity. */
    size_t deque_capacity;
    /* Stack size of each worker thread in bytes.  Default: the system default
     * (ulimit -s, usually 8 MiB).  It bounds how deep fork-join recursion can go
     * (every nested spawn level is a nested C call): raise it for deep recursion
     * with big stack frames (docs/guide-forkjoin.md). */
    size_t stack_size;
    /* Observability (weft/observe.h).  `observer` (copied at create; may be NULL)
     * is called at every task's entry and exit.  `metrics` collects task metrics
     * from the start; `profile` records a profile from the start (WEFT_PROFILE in
     * the environment does too, and saves it at destroy).  `profile_max_spans`:
     * spans each worker's profile buffer holds at most; 0: 2^20. */
    const struct weft_observer *observer;
    /* true: task metrics (weft_executor_metrics) are collected from the start.
     * false (default): from weft_metrics_enable on, or when WEFT_METRICS=1 is in
     * the environment, a profiler or an observer is on. */
    bool metrics;
    /* true: the profiler records from the start, as after weft_profiler_start.
     * false (default): only once started, or with WEFT_PROFILE in the
     * environment (which also saves the profile at destroy). */
    bool profile;
    /* Spans each worker's profile buffer holds at most (one span: one run of a
     * task or other work, or one park or steal event of the worker, which
     * take their share of the limit too); later runs' spans are dropped and
     * counted (later parks and steals are left out).  0: 2^20. */
    size_t profile_max_spans;
    /* Binding of workers to CPUs (see weft_affinity).  Default: none, unless the
     * WEFT_AFFINITY environment variable says otherwise ("none" or "cpus", any
     * case, or a placement's name, which places the workers as that
     * `placement` would; another value is logged once at warn level and means
     * "none").  The variable is read only when this field is 0. */
    weft_affinity affinity;
    /* Profiler timing (weft/observe.h, "Timing").  false (default): short tasks
     * run back to back are timed in batches of up to 40 sharing one clock read,
     * and their spans carry estimated times; true: every task reads the clock
     * (exact spans, ~10 ns more per short task).  WEFT_PROFILE_EXACT=1 (or
     * true/yes/on) in the environment, or an observer, makes it true;
     * 0/false/no/off leave it false. */
    bool profile_exact;
    /* Scheduling (weft/sched.h): the ready-queue policy, escalation and
     * priority inheritance.  NULL: work stealing, default escalation. */
    const struct weft_sched_config *sched;
    /* Where to put the workers (weft/topology.h: compact, physical cores,
     * scatter, NUMA dense or round robin, L3 domains, optionally within some
     * NUMA nodes); copied at create.  NULL: the WEFT_PLACEMENT environment
     * variable (a strategy's name: "compact", "physical_cores", "scatter" or
     * "sparse", "numa_dense", "numa_round_robin", "l3_domain", "none"), else
     * `affinity`.  A placement binds each worker to its CPU (as
     * WEFT_AFFINITY_CPUS does) and bound workers steal from their own L3, then
     * their NUMA node, then the rest.  A placement that cannot be made fails
     * the create (WEFT_EINVAL for a NUMA node that does not exist, numa_nodes
     * choosing no node with a CPU to run on, or a strategy out of range; the
     * message names the field); a bad WEFT_PLACEMENT is warned about and
     * ignored.  A placement whose strategy is WEFT_PLACE_NONE places nothing
     * and is not "unbound": `affinity` decides, as with NULL, except that
     * WEFT_PLACEMENT is not read (so WEFT_AFFINITY_CPUS with {WEFT_PLACE_NONE}
     * binds worker i as WEFT_AFFINITY_CPUS alone does, and
     * WEFT_AFFINITY_NONE with it leaves them unbound whatever WEFT_PLACEMENT
     * says). */
    const struct weft_placement_config *placement;
    /* Steal attempts per tier of a bound worker's victims (docs/guide-topology.md,
     * "Stealing"): [0] its own L3 domain, [1] the rest of its NUMA node, [2] the
     * other nodes.  Each steal round tries that many victims of the tier,
     * starting at a random one and going round it (more than the tier holds:
     * round it again) before moving on.  0: each victim of the tier once.  At
     * most WEFT_SEARCH_ROUNDS_MAX.  Only workers with tiers (bound workers on a
     * machine with more than one L3 or node) use it; other workers try every
     * other worker once per round.  Not the design seed's steal_attempts
     * ("attempts before parking"): that one is steal_rounds above
     * (docs/seed-names.md). */
    unsigned steal_attempts[3];
    /* The most jobs one steal from a worker's deque takes: 0, the
     * WEFT_STEAL_BATCH environment variable (a number up to 256) if set, else 1;
     * 1: one job (the default); n > 1: up to half of the victim's jobs, at most
     * n, the rest queued on the thief's deque.  At most 256 (WEFT_EINVAL).  Pays when a
     * steal is costly (many workers, a victim on another L3 or node); on a few
     * cores it only adds work (docs/guide-topology.md, "Batch stealing"). */
    unsigned steal_batch;
    /* Bounded local queues: a worker whose deque holds this many jobs (rounded
     * up to a power of two, at least 16) queues further ones on the executor's
     * shared queue, where any worker takes them, instead of growing its deque.
     * 0: unbounded (the default).  At most 2^30.  Fork-join spawns
     * (weft/forkjoin.h) keep their own bounded frames and are not affected. */
    size_t local_queue_capacity;
    /* Fork-join frames per worker (weft/forkjoin.h): the most spawns a
     * worker holds unsynced at once, over all the tasks it is running.  Past
     * it a spawn runs its child at once, on the spawning thread (correct, but
     * a flat loop of more spawns than this runs the rest serially).  0: the
     * WEFT_FORK_JOIN_FRAMES environment variable if it is a number from 1 to
     * WEFT_FORK_JOIN_FRAMES_MAX, else 65536 (a bad value is warned about once,
     * docs/errors.md); below 16 it is raised to 16.  More than
     * WEFT_FORK_JOIN_FRAMES_MAX is WEFT_EINVAL.  32 bytes a frame, allocated
     * zeroed at the worker's first spawn: with the C library's allocator the
     * pages are touched only as frames are used (lace_start's dqsize is the
     * same knob; its default is 100000). */
    size_t fork_join_frames;
} weft_executor_config;

/* The largest weft_executor_config.fork_join_frames: 2^24 frames (512 MiB of
 * address space per worker). */
#define WEFT_FORK_JOIN_FRAMES_MAX ((size_t)1 << 24)

/* Creates an executor and starts its workers.  `config` may be NULL (all
 * defaults).  Returns NULL on failure with the reason in *err (if err is not NULL):
 * WEFT_EINVAL (config->workers > 4096, config->affinity is not a weft_affinity,
 * steal_rounds or yield_rounds > WEFT_SEARCH_ROUNDS_MAX (yield_rounds
 * WEFT_YIELD_ROUNDS_NONE excepted), fork_join_frames >
 * WEFT_FORK_JOIN_FRAMES_MAX, another field above its documented maximum (the
 * message names the field), or the system refused
 * config->stack_size for a worker thread), WEFT_ENOMEM (also a stack_size
 * too large to map), WEFT_ESYS (a thread could not be started).  Environment variables never make it fail: a bad one
 * is logged once (warn) and its default used.  Any thread, one with the
 * smallest stack (PTHREAD_STACK_MIN, 16 KiB) included, which may also make
 * the default executor, submit, wait and destroy; with WEFT_STATS or
 * WEFT_PROFILE set or workers bound to CPUs (WEFT_AFFINITY,
 * config->affinity, a placement), creating and destroying need up to 32 KiB
 * of the calling thread's stack.
 *
 * fork(): an executor belongs to the process that created it.  In a child
 * process made by fork() it has no workers; every call that would run or wait
 * on it there returns WEFT_EFORKED at once (weft_run, weft_async, weft_run_root,
 * weft_future_wait on one of its unfinished runs, weft_executor_wait_all), the
 * parallel algorithms run on the calling thread alone, and
 * weft_executor_destroy leaves it alone with a warning.  A child may create and use executors of its
 * own; exec() is the usual way on.  A taskflow whose run was in flight at the
 * fork cannot run in the child (that run never ends there): weft_run of it
 * (weft_run_n, weft_run_until, weft_run_n_parallel, ...) returns WEFT_EFORKED
 * on any executor, a module task over it fails with task code WEFT_EFORKED
 * (weft/flow.h), and weft_taskflow_destroy of it is WEFT_EBUSY for ever
 * (weft/graph.h); so is weft_semaphore_destroy of a semaphore such a run
 * uses (weft/async.h). */
WEFT_API WEFT_NODISCARD weft_executor *weft_executor_create(const weft_executor_config *config,
                                                            weft_status *err);
/* weft_executor_create for a config of `size` bytes: the sizeof
 * weft_executor_config the caller was compiled with, which the macro
 * weft_executor_create passes (docs/abi.md).  A shorter struct (an older
 * header) reads as zero, the defaults, for the fields it lacks; a longer one
 * (a newer header) is WEFT_EINVAL, with a log line naming the offset, unless
 * every byte this library does not know is zero.  The structs config points
 * to (sched, placement, observer) keep their 1.0 layout.  Errors and
 * thread-safety as weft_executor_create. */
WEFT_API WEFT_NODISCARD weft_executor *weft_executor_create_sized(const weft_executor_config *config,
                                                                  size_t size, weft_status *err);
#ifndef WEFT_BUILDING
/* The name weft_executor_create in a program stands for this inline function,
 * which passes this header's struct size (docs/abi.md), so a program built
 * against this header runs on later libraries too.  The exported symbol of
 * that name, which binaries built before the sizes were passed call, reads
 * the 1.0 layout.  WEFT_NODISCARD here too: a program calls this function, not
 * the declaration above, and only the function called carries the warning for
 * an ignored result (tests/abi_nodiscard_check.py). */
WEFT_NODISCARD static inline weft_executor *weft__executor_create_inline(const weft_executor_config *config,
                                                                         weft_status *err) {
    return weft_executor_create_sized(config, sizeof(weft_executor_config), err);
}
/* weft_executor_create, with this header's sizeof weft_executor_config. */
#  define weft_executor_create weft__executor_create_inline
#endif

/* Waits until every run submitted to the executor has finished, then stops and
 * joins the workers and frees the executor.  Runs still queued when it is called
 * are run to completion, not dropped (cancel their futures first to make that
 * quick).  Futures obtained from this executor stay valid and must still be
 * destroyed; other threads may go on calling weft_future_* on them during the
 * call and after it (a thread blocked in weft_future_wait returns when its run
 * ends, as the destroy runs it to completion).  Must not be called from one of this executor's own workers (it
 * would wait for itself), nor from inside a run of ex that a thread which is
 * not a worker carries out itself: a callback of a parallel algorithm called
 * on ex that runs on the calling thread (that thread runs a share of the
 * call), or a weft_future_then callback that weft_sched_remove runs on its
 * caller's thread (weft/sched.h): that call logs a warning
 * (WEFT_LOG=warn, the default level) and returns without doing anything; destroy an executor from
 * the thread that created it, or from a thread that is not one of its workers
 * (a task may hand the executor to such a thread, e.g. by completing a
 * future that thread waits on).  The default executor (weft_default_executor)
 * is refused the same way: a warning, nothing done; exit destroys it.  NULL is
 * a no-op.  No other thread may use ex itself (pass it to any call) during
 * or after the call: there is no error status for a call on an executor
 * being or already destroyed (once destroy has stopped waiting, a submission
 * may be lost or reach freed memory), so stop every other thread's use of ex
 * before calling it.
 *
 * An executor's workers are threads of the process that sleep, not exit, when
 * idle: a process ends only through exit() (or a return from main) while one
 * lives.  A main thread that ends with pthread_exit() while any executor
 * exists (the default one included: it exists from its first use until exit)
 * leaves the process running for ever once its other threads end.  Destroy
 * your executors, and end the process with exit() (from main, or from the
 * last thread that has work) rather than pthread_exit() from main. */
WEFT_API void weft_executor_destroy(weft_executor *ex);

/* Number of worker threads.  0 for NULL.  Any thread. */
WEFT_API unsigned weft_executor_workers(const weft_executor *ex);

/* Number of ex's workers asleep now, or about to be (announced idle, no
 * wake-up yet on its way to them): Taskflow's Executor::num_waiters().  A
 * snapshot, for tests and diagnostics: it may be stale at once.  A worker
 * idle but still searching (its steal and yield rounds) is not counted.
 * 0 for NULL.  Any thread; wait-free. */
WEFT_API unsigned weft_executor_waiters(const weft_executor *ex);

/* The calling thread's worker index in `ex` (0 .. workers-1), or -1 if the
 * caller is not one of ex's workers.  Any thread; wait-free. */
WEFT_API int weft_executor_worker_id(const weft_executor *ex);

/* Blocks until every run submitted so far has finished.  It returns at a
 * moment when no run at all is in flight on ex (runs are counted, not
 * listed): runs that other threads submit while it waits are waited for too,
 * and while another thread keeps one in flight all the time (a producer that
 * never pauses) it does not return, though every run submitted before the
 * call has long finished.  To wait for your own runs alone, wait on their
 * futures.  Returns WEFT_OK, WEFT_EINVAL for NULL, or WEFT_EDEADLK when
 * called from one of ex's own workers, or from inside a run of ex that a
 * thread which is not a worker carries out (a parallel algorithm's callback
 * on the thread that called it, a weft_future_then callback run by
 * weft_sched_remove: see weft_executor_destroy) (the caller's own run could
 * never finish).  Any other thread; from a task of another executor it blocks that
 * worker, and it never returns (not detected) when one of ex's runs waits
 * behind the caller's own run: a run on ex of the caller's taskflow, or of
 * one that has it as a module body, submitted while the caller runs (runs of
 * one taskflow go one at a time, on any executor).  weft_executor_destroy
 * waits the same way. */
WEFT_API weft_status weft_executor_wait_all(weft_executor *ex);

/* ---------------------------------------------------------------------------------
 * Task context
 * ------------------------------------------------------------------------------ */

/* The context is valid only during the call of the task it was given to, and
 * only on that task's thread. */

/* Index of the worker running the task (0 .. workers-1); -1 for NULL. */
WEFT_API int weft_ctx_worker_id(const weft_ctx *ctx);
/* The executor running the task; NULL for NULL. */
WEFT_API weft_executor *weft_ctx_executor(const weft_ctx *ctx);
/* True when the task's run has been cancelled or has failed, so the task may stop
 * early (false for NULL).  A cheap load: safe to call in a tight loop. */
WEFT_API bool weft_ctx_cancelled(const weft_ctx *ctx);
/* The context of the task running on the calling thread: the innermost task of
 * the worker this thread is (a task that waits runs other tasks meanwhile, and
 * each is innermost while it runs), or NULL on a thread that is not a worker or
 * between tasks.  For code that is not handed a context (weft.hpp finds the
 * running task this way for task_group and spawn).  Inside a pipeline stage or
 * an algorithm's callback, which are not tasks, it is the task that made the
 * call (or runs the pipeline) on that task's own worker, and on any other
 * worker a context of that task's run whose task is the null task
 * (weft/pipeline.h, weft/algo.h); for an algorithm called from a thread that
 * is not a worker, the task the worker is running around it, if any.  Inside
 * a weft_run_until predicate, a context of that run whose task is the null
 * task.  Valid as the context of weft_ctx_* and
 * fork-join calls while that task runs.  Any thread; wait-free. */
WEFT_API weft_ctx *weft_current_ctx(void);

/* ---------------------------------------------------------------------------------
 * Futures
 *
 * A future stands for one submitted run.  It is owned by the caller that received
 * it and must be released with weft_future_destroy; destroying it before the run
 * ends detaches the run, which still completes.  All functions below may be called
 * from any thread, concurrently, except weft_future_destroy, which must be the
 * last call on the handle.  Waiting from inside a task of the same executor does
 * not block the worker: it runs other tasks until the future is ready.  Waiting
 * from a task for a run of another executor blocks that worker's thread.
 * ------------------------------------------------------------------------------ */

/* Details of a finished run. */
typedef struct weft_run_info {
    /* WEFT_OK, WEFT_ETASK (a task returned non-zero), WEFT_ECANCELED, or
     * WEFT_EAGAIN while the run is still going. */
    weft_status status;
    /* The non-zero value returned by the failing task (0 if none failed). */
    int task_code;
    /* Name of the failing task, or "" if none failed; unnamed tasks are reported
     * as "#<index>", the task's index (weft_task_index: emplace order unless
     * tasks were erased).  An async task, which has neither, is "#0"; a
     * weft_run_many set's member that could not be submitted is "#<i>", its
     * index in the set (weft/graph.h).  Stored in the future
     * (truncated to 127 bytes, at a UTF-8 character boundary, so a valid
     * UTF-8 name gives a valid UTF-8 prefix), so it stays valid until
     * weft_future_destroy. */
    const char *failed_task;
    /* Tasks that were not run because the run failed or was cancelled.  A
     * module or subflow task counts as one when it is skipped before it
     * starts; once it has started, the tasks of its graph that were not run
     * count instead. */
    uint64_t skipped;
    /* Iterations of the taskflow that completed (run_n / run_until): those
     * whose every task ran.  The iteration under way when the run is cancelled
     * counts if the cancel came after all its tasks had started (none of them
     * skipped); one with a failing task does not. */
    uint64_t iterations;
} weft_run_info;

/* Blocks until the run is finished and returns its status (see
 * weft_run_info.status).  WEFT_EINVAL for NULL.  Called from a task, it runs
 * other work meanwhile instead of blocking its worker; it returns WEFT_EDEADLK
 * at once when the run could only finish after a task running on this worker
 * returns (that task, or one whose wait is running it), which is when
 *   - the run belongs to the taskflow of such a task, or to a taskflow whose
 *     run that task's graph is nested in (a module's body, a subflow, at any
 *     depth); on any executor, as runs of one taskflow go one at a time;
 *   - the run is of a taskflow that has such a taskflow as a module body, at
 *     any depth of modules (weft_emplace_module): its module would wait for
 *     the body's run that the task belongs to.  Refused also where this run
 *     would in fact not wait for that body (a condition task skips the
 *     module, or the module has already run and the run does not come back
 *     to it): the rule looks at the graph, not at how far the run has got;
 *   - f is the future of such a task itself: an async task waiting on its own
 *     future, or on one whose wait ran this one on top of it (B waits for C,
 *     its wait runs A, A waits for B), or a graph task on its own run's;
 *   - f is the future of a dependent async task (weft_dependent_async,
 *     weft/async.h) that waits, directly or through a chain of dependents,
 *     for such an async task, or for the async task that spawned the
 *     fork-join child making the wait (a thief's included) or called the
 *     parallel algorithm whose chunk makes it, on any worker, or for the
 *     async task whose weft_future_then callback makes it (weft/async.h;
 *     the task releases its dependents after the callback): it can only
 *     start once that task has returned (searched through the first 4096
 *     edges among their dependents; one found only further on is waited
 *     for, for ever).
 * Waits that deadlock across workers (A waits on B on one worker while B
 * waits on A on another) are not detected, nor are waits for a run that needs
 * a semaphore unit (weft_task_acquire, weft_async_acquire) which only such a
 * task would give back (a task holding the one unit of a semaphore waits on a
 * task that acquires it too): that run stays parked and the wait never ends.  The test costs nothing on a wait
 * that finds the run finished. */
WEFT_API weft_status weft_future_wait(weft_future *f);

/* Like weft_future_wait (WEFT_EDEADLK included), but gives up after
 * `timeout_ns` nanoseconds and returns WEFT_ETIMEDOUT.  A timeout of 0 only polls;
 * one too long for the clock (up to UINT64_MAX) never elapses. */
WEFT_API weft_status weft_future_wait_for(weft_future *f, uint64_t timeout_ns);

/* True once the run has finished.  Never blocks.  False for NULL. */
WEFT_API bool weft_future_ready(const weft_future *f);

/* The run's status if it has finished, else WEFT_EAGAIN; WEFT_EINVAL for NULL.
 * Never blocks. */
WEFT_API weft_status weft_future_status(const weft_future *f);

/* Fills *info (see weft_run_info).  Never blocks; while the run is going,
 * info->status is WEFT_EAGAIN and the other fields are a snapshot.  Returns
 * WEFT_EINVAL for NULL arguments, else WEFT_OK. */
WEFT_API weft_status weft_future_info(const weft_future *f, weft_run_info *info);

/* Asks the run to stop: no task of it starts after this call returns (tasks
 * already running finish).  The run then ends with WEFT_ECANCELED unless it had
 * already failed.  Returns WEFT_OK if the request was made while the run was still
 * going, WEFT_ENOENT if it had already finished, WEFT_EINVAL for NULL. */
WEFT_API weft_status weft_future_cancel(weft_future *f);

/* Releases the caller's reference.  If the run is still going it continues,
 * detached.  NULL is a no-op. */
WEFT_API void weft_future_destroy(weft_future *f);

/* ---------------------------------------------------------------------------------
 * The default executor
 *
 * One executor per process that every library of a program can share, so that
 * two of them do not each start a pool of CPU-count workers (oneTBB's implicit
 * arena and OpenMP's thread pool are shared the same way).  Every call that
 * submits or runs work on an executor takes NULL to mean this one: weft_run,
 * weft_run_n, weft_run_until, weft_run_and_wait, weft_async,
 * weft_silent_async, weft_dependent_async, weft_run_root,
 * weft_run_root_status and every weft_parallel_* algorithm (and the typed
 * ones of weft/algo_typed.h).  Calls that ask about or manage one executor
 * keep NULL as "no executor" (weft_executor_workers, weft_executor_worker_id,
 * weft_executor_wait_all, weft_executor_destroy and the weft/observe.h calls):
 * pass weft_default_executor() to them.  docs/interop.md has more.
 * ------------------------------------------------------------------------------ */

/* The process's default executor, created on the first call (from any thread;
 * concurrent first calls create one executor and all get it) with the default
 * settings: weft_executor_create(NULL, ...), so WEFT_WORKERS, WEFT_AFFINITY,
 * WEFT_PROFILE and the other environment variables apply, and the worker count
 * is otherwise the process's CPUs (weft_executor_config.workers: the mask at
 * load, the main thread's and the caller's), on all of which its workers run,
 * whichever thread makes it: a thread pinned to one CPU does not make a
 * one-worker pool or pass its pin on.  Returns NULL if it
 * could not be created (out of memory, threads refused: weft_last_error_message
 * says which; a later call tries again) or once exit has destroyed it.
 *
 * Lifetime.  It is destroyed by an atexit handler, registered when it is
 * created: exit() waits there for every run still in flight on it, queued ones
 * included, as weft_executor_destroy does (cancel futures first, or wait for
 * them, to exit quickly; a detached task that never ends makes exit hang).
 * Its own tasks that run during that wait still get it for NULL, so the runs
 * they start (a chain of async tasks) are waited for too.
 * When exit() is called from one of its own tasks, it cannot wait for itself:
 * the executor is left running and its workers end with the process.  After
 * the handler has run, weft_default_executor returns NULL and calls given NULL
 * return WEFT_ESHUTDOWN, so an atexit handler registered before the first use
 * (it runs later) is safe: it gets that status, never a freed executor.  No
 * other thread may still be using it while exit runs.  quick_exit() and _exit()
 * do not run the handler.  Only exit() ends it: a main thread that calls
 * pthread_exit() after using it leaves its workers asleep and the process
 * alive for ever (weft_executor_destroy says more); have the last thread with
 * work call exit() instead.
 *
 * weft_executor_destroy refuses it (a logged warning, nothing done), so that no
 * library can destroy the pool the others share.  In a child process made by
 * fork(), the first call creates a new default executor for the child (the
 * parent's has no workers there).  Any thread, tasks of the default executor
 * included; after the first call, one acquire load. */
WEFT_API weft_executor *weft_default_executor(void);

WEFT_EXTERN_C_END
#endif
