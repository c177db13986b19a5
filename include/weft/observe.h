/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Observability: seeing what a program does.
 *
 *  - an observer: your functions, called at every taskflow task's entry and exit;
 *  - metrics: per worker and in total (tasks, steals, parks, busy time, a
 *    histogram of task durations, ...), snapshot into a struct you provide;
 *  - a profiler: one span per task run, per worker, exported as Chrome Trace
 *    Event JSON (Perfetto UI, chrome://tracing) or as a self-contained HTML
 *    report, and as a DOT graph annotated with the time of each task;
 *
 * Metrics and the profiler see every kind of work, not only taskflow tasks:
 * async tasks (weft_async, weft_dependent_async, weft_silent_async), fork-join
 * roots (weft_run_root) and frames run by a thief, the jobs of the parallel
 * algorithms run by workers, and each pipeline stage call (one per token and
 * stage, plus the first stage's call that stops the pipeline, made for no
 * token; a simple pipeline's calls are one per item and stage given, its own
 * token-making first stage not counted), besides the pipeline's task itself.
 * Each is a "task" in the counts and a span of its kind in the trace.
 * A graph GPU task (weft_emplace_gpu) is a task at its outcome (a span of that
 * moment, when it parked); its recording, the fn call on a worker, is busy
 * time and a "gpu recording" span, never a run: not in the task counts, nor in
 * weft_profiler_count, nor in weft_task_stats.count.
 *  - logging with levels, to stderr or your callback;
 *  - a state dump of an executor that takes no lock (for hangs).
 *
 * With none of them switched on, each hook on the task path costs one
 * predictable branch.  Environment variables turn them on with no code change:
 *   WEFT_PROFILE=out.json | out.html   profile every executor, written at destroy
 *                                      (or at exit for one never destroyed);
 *                                      later executors write out.1.json, ...;
 *                                      a child made by fork() from a process
 *                                      that profiles (WEFT_PROFILE set at load,
 *                                      or such an executor made before the
 *                                      fork) writes out.PID.json (PID: its own; .1,
 *                                      ...), never its parent's files
 *   WEFT_LOG=error|warn|info|debug     log level (default warn)
 *   WEFT_STATS=live.stats[,run.prom]   publish live statistics (weft-top, Prometheus);
 *                                      later executors .1, ...; a fork() child
 *                                      .PID, .PID.1, ... (PID: its own; below)
 *   WEFT_METRICS=1                     task metrics on for every executor
 * See docs/guide-observability.md.
 */
#ifndef WEFT_OBSERVE_H
#define WEFT_OBSERVE_H

#include <stdio.h>

#include "weft/core.h"
#include "weft/graph.h"

WEFT_EXTERN_C_BEGIN

/* ---------------------------------------------------------------------------------
 * Observer
 * ------------------------------------------------------------------------------ */

/* How a task ended (weft_task_event.outcome at exit).  A condition task
 * (weft/flow.h) fails only by returning a negative value: the branch index it
 * returns otherwise is no failure, and is not reported (SUCCEEDED, code 0). */
typedef enum weft_task_outcome {
    WEFT_TASK_RUNNING = 0,   /* at entry */
    WEFT_TASK_SUCCEEDED = 1, /* returned 0 (a condition task: any branch index) */
    WEFT_TASK_FAILED = 2     /* returned non-zero (weft_task_event.code); a condition task: negative */
} weft_task_outcome;

/* What an observer callback receives.  Valid only during the call. */
typedef struct weft_task_event {
    weft_executor *executor;   /* the executor running the task */
    unsigned worker;           /* index of the worker running the task */
    weft_task task;            /* the task (valid while its taskflow lives) */
    const char *name;          /* the task's name, "" if unnamed; never NULL */
    size_t index;              /* the task's index in emplace order */
    uint64_t run_id;           /* the run it belongs to (weft_future_id) */
    weft_task_outcome outcome; /* RUNNING at entry; SUCCEEDED or FAILED at exit */
    int code;                  /* at exit: the task's return value; for a condition
                                * task 0 when it picked a branch (its index is not
                                * given), its negative value when it failed */
} weft_task_event;

/* Callbacks called on the worker that runs a taskflow task, right before and
 * right after the task function (other work, such as async tasks, is counted in
 * the metrics and traced but not reported here).  Either may be NULL.  They must be thread-safe (all
 * workers call them at once) and quick: they run on the task path.  They must not
 * destroy the executor.  Tasks skipped because their run failed or was cancelled
 * are not reported here (they are counted in the metrics).  A task with no
 * function (weft_placeholder, or its work set to NULL) runs as a no-op: it is
 * reported, with code 0, as a task whose function returned at once.  A
 * module task (weft_emplace_module) is not reported itself: the tasks of its
 * body are, as the metrics count them; a subflow task is reported for its
 * own call, and so are the tasks of its graph.  From
 * C++ they must not throw (weft's frames do not unwind: an exception leaving
 * one calls std::terminate; docs/guide-cpp.md). */
typedef struct weft_observer {
    /* Called right before the task function (ev->outcome: WEFT_TASK_RUNNING);
     * NULL: not called. */
    void (*task_begin)(void *user, const weft_task_event *ev);
    /* Called right after it returns (ev->outcome and ev->code say how it
     * ended), and after the spawns it left unsynced (weft/forkjoin.h), which
     * weft syncs then, as part of the task: when the function returned 0 (a
     * condition task: any branch) and one of them returned non-zero, the
     * task ended FAILED with that value, the run's task_code (so counted in
     * the metrics' failed, and timed with them); NULL: not called. */
    void (*task_end)(void *user, const weft_task_event *ev);
    void *user; /* passed to both callbacks as is; may be NULL */
} weft_observer;

/* The id of a taskflow run (> 0, unique per executor, in submission order): the
 * run_id of its tasks' events and of its spans in a trace.  0 for NULL, for
 * the future of an async task (whose span in a trace names its function, not a
 * run) and for the future of a weft_run_many set, which is no run itself: each
 * member's run takes an id of its own, in index order, which its tasks'
 * events carry.  Any thread. */
WEFT_API uint64_t weft_future_id(const weft_future *f);

/* ---------------------------------------------------------------------------------
 * Metrics
 *
 * Steals, failed steal attempts, parks and wake-ups are always counted (they are
 * off the task path).  Task counts, busy time and the duration histogram are
 * collected while metrics are enabled: by weft_executor_config.metrics, by
 * weft_metrics_enable, or implicitly while a profiler or an observer is on.
 * ------------------------------------------------------------------------------ */

/* Buckets of the duration histogram: bucket 0 counts tasks under 2 ns, bucket k
 * (k >= 1) those of [2^k, 2^(k+1)) ns; the last bucket also holds anything longer. */
#define WEFT_METRICS_BUCKETS 40

/* The metrics of one worker (or their sums, weft_metrics.total), filled by
 * weft_executor_metrics.  Counts are since metrics were last enabled. */
typedef struct weft_worker_metrics {
    uint64_t tasks;        /* work run (succeeded + failed): taskflow tasks, async
                            * tasks, fork-join roots and stolen frames, algorithm
                            * jobs run by workers, pipeline stage calls.  A module
                            * or subflow task is counted as the tasks of its graph
                            * (and a subflow task's own call), not once more as
                            * itself.  A task with no function (a placeholder)
                            * counts as run and succeeded when it runs, as it
                            * counts as skipped when it does not.  A graph GPU
                            * task counts once, at its outcome (its recording is
                            * no run: see busy_ns) */
    uint64_t succeeded, /* of those, work that returned 0 (or has no result; a
                         * condition task that picked a branch) */
        failed;         /* of those, work that returned non-zero (a condition
                         * task: negative) */
    uint64_t skipped;      /* tasks of failed or cancelled runs and cancelled
                            * async tasks, not run (a task weft_sched_remove
                            * took out on a thread that is no worker is
                            * counted in worker 0's) */
    uint64_t steals;       /* jobs taken from another worker or the injector
                            * (stolen fork-join frames included, and prioritised
                            * jobs taken from another worker's queue, the shared
                            * priority queue, the one queue of a FIFO, RANDOM or
                            * PRIORITY policy; under a ROUND_ROBIN or custom
                            * policy, each job it hands (by pop or steal) to a
                            * worker other than the one that queued it, one a
                            * thread that is no worker queued included: a
                            * ROUND_ROBIN job dealt to the next worker's queue
                            * is a steal when that worker runs it, a job the
                            * policy's steal gives back to its own queuer is
                            * not) */
    uint64_t steal_fails;  /* steal attempts that found nothing or lost a race */
    uint64_t parks;        /* times the worker went to sleep */
    uint64_t wakeups;      /* times it woke from sleep and then found work (a
                            * sleep begun before the last reset is not counted:
                            * parks >= wakeups + the workers asleep now) */
    uint64_t busy_ns;      /* time inside task functions (for tasks run back to back,
                            * with the scheduler's hand-off between them); a task
                            * waiting in weft_future_wait is busy while it waits,
                            * and work its worker runs meanwhile counts once; a
                            * graph GPU task's recording (its fn) is busy time of
                            * the worker that ran it, though the task is timed at
                            * its outcome (docs/guide-gpu.md) */
    uint64_t idle_ns;      /* wall time since metrics were enabled, minus busy_ns */
    double utilisation;    /* busy_ns / (busy_ns + idle_ns), 0..1 */
    uint64_t histogram[WEFT_METRICS_BUCKETS]; /* durations: tasks per bucket (WEFT_METRICS_BUCKETS);
                                               * work nested more than 16 deep on a worker
                                               * is counted in `tasks` but not timed, so
                                               * not here (nor as a span: see "Profiler") */
} weft_worker_metrics;

/* An executor's metrics (weft_executor_metrics): totals over its workers. */
typedef struct weft_metrics {
    unsigned workers;      /* the executor's worker count */
    bool enabled;          /* task metrics being collected now: enabled, or a
                              profiler or an observer on (also after
                              weft_metrics_enable(false) while one is) */
    uint64_t wall_ns;      /* time since task metrics were enabled, or from then
                              to when the collection stopped (0 if never) */
    double tasks_per_second; /* total.tasks / wall time */
    /* Bytes weft holds for this executor: its own structures, deques (with
     * the smaller rings a deque outgrew, kept until the executor goes),
     * each worker's fork-join frame stack (from its first spawn:
     * fork_join_frames * 32 bytes), the records of silent and async tasks
     * its workers and submitter slots keep for reuse, profiler buffers.
     * Taskflows and the records of runs in flight are owned by the caller
     * and not counted here (see the guide). */
    size_t bytes;
    weft_worker_metrics total; /* sums over the workers; utilisation averaged */
} weft_metrics;

/* Snapshots the metrics into *out, and worker i's into per_worker[i] for
 * i < min(n, workers) (per_worker may be NULL with n == 0).  Counters are read
 * without stopping the workers, so a snapshot taken while tasks run is
 * approximate (each counter is exact, they are not taken at one instant),
 * as is one after a reset while work ran; succeeded + failed == tasks holds in
 * every snapshot.  WEFT_EINVAL for NULL ex or out.  Any thread. */
WEFT_API weft_status weft_executor_metrics(const weft_executor *ex, weft_metrics *out,
                                           weft_worker_metrics *per_worker, size_t n);

/* Starts (true) or stops (false) collecting task metrics; starting resets every
 * counter (including steals and parks) and the wall clock.  WEFT_EINVAL,
 * WEFT_ENOMEM, WEFT_EBUSY (called from one of ex's workers: nothing changed).
 * Any thread not a worker of ex, while no run is in flight for an exact
 * reset. */
WEFT_API WEFT_NODISCARD weft_status weft_metrics_enable(weft_executor *ex, bool on);

/* ---------------------------------------------------------------------------------
 * Profiler
 *
 * Each worker records one span per task it runs (and, optionally, park and steal
 * events) into its own buffer: chunks of 4096 spans allocated as needed, up to
 * weft_executor_config.profile_max_spans per worker (default 2^20; the worker's
 * park and steal events use it up too); spans of runs and of GPU tasks'
 * recordings past it, or for which no chunk could be allocated (out of
 * memory: the run goes on), are dropped and counted (the report says how
 * many), parks and steals past it left out.  Work nested more than 16 deep on
 * one worker (waits that run other work, which waits in turn) is counted in
 * the metrics but not timed: it has no span, and counts as dropped, so spans
 * + dropped is every run's span (weft_profiler_count).  Stopping keeps the spans;
 * starting again clears them but keeps the memory.
 *
 * Timing.  Recording a span costs more than a short task, so short taskflow
 * tasks (while a worker's last ones averaged under 250 ns) that run back to back
 * on a worker, of one run and taskflow, are recorded in batches of up to 40: each
 * still has its own span, but its begin and end are the batch's interval shared
 * out evenly, and the JSON, the HTML report and the profiled DOT mark it as
 * estimated.  A batch that took over 50 us more than its tasks were expected
 * to held a task that ran long, which one clock read cannot tell from the
 * short ones beside it: its spans are marked ("batch_held_long_task": true in
 * the JSON), left out of the report's slowest tasks and of the DOT's times,
 * and its tasks are timed one by one from their next run on (until the
 * profiler is started again, or until one runs short: the OS stopping a worker
 * inside a batch looks the same), so a long task is measured from its second
 * run.
 * Every other estimated span stands for a task shorter than 50 us.  Counts
 * (spans, task metrics) and busy time are exact either way.  A batch's time
 * (its busy_ns and its spans' end) is added when its worker's busy stretch
 * ends, which can be a moment after the run's end has released a
 * weft_future_wait or weft_executor_wait_all: a read straight after the wait
 * may lack the last batch; the figures agree once every worker is idle
 * (weft_executor_waiters equals the worker count).  Other work is always measured.  weft_executor_config.profile_exact (or
 * WEFT_PROFILE_EXACT=1 in the environment) turns batching off.
 * docs/guide-observability.md has the figures.
 * ------------------------------------------------------------------------------ */

/* Starts recording (clearing earlier spans).  Also enables metrics if they
 * were off; weft_profiler_stop then turns them off again (their counts stay
 * readable), so a profiled section costs nothing after it.  WEFT_EINVAL,
 * WEFT_ENOMEM, WEFT_EBUSY (called from one of ex's workers: nothing changed).
 * Call it from a thread that is not a worker of ex, while no run is
 * in flight (tasks of a run write spans into the buffers this clears), and not
 * at the same time as another start, stop or weft_metrics_enable on ex. */
WEFT_API WEFT_NODISCARD weft_status weft_profiler_start(weft_executor *ex);
/* Stops recording; spans are kept for export.  Metrics the start switched on
 * are switched off (enabled with weft_metrics_enable, they stay on).
 * WEFT_EINVAL.  Any thread. */
WEFT_API weft_status weft_profiler_stop(weft_executor *ex);
/* Number of spans recorded (runs of tasks and other work; parks, steals and
 * GPU tasks' recordings are not counted) and dropped (runs, and GPU tasks'
 * recordings, whose busy time a dropped span leaves out of the profile's
 * figures; parks and steals are not counted), summed over workers,
 * into *spans and *dropped (either may be NULL).  WEFT_OK, WEFT_EINVAL (NULL ex).
 * Any thread; exact while no run is in flight. */
WEFT_API weft_status weft_profiler_count(const weft_executor *ex, uint64_t *spans, uint64_t *dropped);

/* Writes the recorded spans as Chrome Trace Event JSON: "pid" is the process
 * id and each worker has a track ("tid") of its own, executor number * 10000 +
 * worker index (executors numbered from 1 in the process, named "executor N
 * worker W" in the metadata), so traces of several executors or processes merge
 * without collisions.  One complete event ("ph":"X", "cat":"task") per task run,
 * named after the task (names that are not valid UTF-8 have U+FFFD for the bad
 * bytes), with args {run, index} (plus "failed": true for a failed task,
 * "estimated": true for a batched one, see Timing); other work as complete
 * events named after its kind ("async", "silent async", "fork-join root",
 * "stolen frame", "algorithm job", "stage N") in categories "async",
 * "forkjoin", "algo" and "pipeline", with args naming the function or
 * pipeline (and the job, or the stage and token), "nested": true when it ran
 * inside another span of its worker; a GPU task's recording as an event named
 * after its task, "cat":"gpu recording", args {run, index} (busy time, not a
 * run); park spans ("cat":"park") and steal instants ("cat":"steal").  Open it in https://ui.perfetto.dev or chrome://tracing.
 * Call it while no run is in flight (after weft_executor_wait_all or the runs'
 * futures), else spans still being written may be missed.  WEFT_EINVAL,
 * WEFT_ESYS (write failed). */
WEFT_API weft_status weft_profiler_write_json(const weft_executor *ex, FILE *out);
/* Writes a self-contained HTML report (no network): an SVG timeline of the
 * workers, each worker's utilisation, the slowest tasks (each marked measured
 * or estimated), the duration histogram and the flame graph (empty if the
 * profiler never ran).  Same rules as
 * weft_profiler_write_json, plus WEFT_ENOMEM (its working memory: nothing
 * written; or only the flame graph's: the report is written whole without
 * it, a note in its place, and the call still returns WEFT_ENOMEM). */
WEFT_API weft_status weft_profiler_write_html(const weft_executor *ex, FILE *out);
/* Writes to `path` by its ending: ".html" or ".htm" the HTML report,
 * ".folded" folded stacks and ".svg" a flame graph (weft_profiler_write_folded
 * and _flame_svg with default options), in any case (".HTML" too), anything
 * else the JSON trace.  So
 * WEFT_PROFILE=run.folded or =run.svg gives a flame graph at exit.
 * WEFT_EINVAL, WEFT_ESYS (cannot open or write), WEFT_ENOMEM. */
WEFT_API weft_status weft_profiler_save(const weft_executor *ex, const char *path);

/* The taskflow in DOT like weft_taskflow_dump_dot, each task labelled with its
 * profiled time (runs, total and mean; "~" and a count when some runs were
 * estimated) and coloured from pale (fast) to red (slowest), from the spans `ex`
 * recorded for this taskflow's tasks; a pipeline's task also shows its stage
 * calls, and a note sums the executor's other work.  Tasks with no span are
 * drawn grey.  WEFT_EINVAL, WEFT_ENOMEM, WEFT_ESYS. */
WEFT_API weft_status weft_taskflow_dump_dot_profiled(const weft_taskflow *tf, const weft_executor *ex,
                                                     FILE *out);

/* ---------------------------------------------------------------------------------
 * Profile data as structs: per-task statistics and per-worker totals of the
 * recorded spans, for a program to read after a run without parsing a file.
 * ------------------------------------------------------------------------------ */

/* What a weft_task_stats entry counts: taskflow tasks, or other work. */
typedef enum weft_profile_kind {
    WEFT_PROFILE_TASK = 0,         /* a taskflow task: taskflow and index say which */
    WEFT_PROFILE_ASYNC = 1,        /* weft_async / weft_dependent_async: id is the function */
    WEFT_PROFILE_SILENT_ASYNC = 2, /* weft_silent_async: id is the function */
    WEFT_PROFILE_FORK_JOIN_ROOT = 3, /* weft_run_root: id is the root function */
    WEFT_PROFILE_STOLEN_FRAME = 4, /* a fork-join frame run by a thief */
    WEFT_PROFILE_ALGORITHM_JOB = 5,  /* a weft_parallel_* job run by a worker */
    WEFT_PROFILE_PIPELINE_STAGE = 6 /* id is the pipeline, index the stage */
} weft_profile_kind;

/* The runs of one task (or one kind of work of one function, or one pipeline
 * stage).  A task is told by its taskflow, index and name: a task erased
 * between profiled runs and the one that took its slot are two entries
 * (unless they have the same name).  Durations run from a span's begin to its end: a task that waited
 * and ran others meanwhile includes their time.  A graph GPU task's entry has
 * its runs only, each timed at its outcome (the moment it is known: near 0
 * ns); the host time of its recordings (its fn, on a worker, before the
 * device work) is in none of these figures, as it is no run: it is in the
 * workers' busy_ns (weft_worker_profile, weft_worker_metrics) and in the
 * trace, flame graph, timeline and profiled DOT as the task's "gpu recording"
 * spans.  Adding it here would make one run's duration two intervals apart
 * (the recording and the outcome) and this struct, read in an array, cannot
 * grow (docs/abi.md). */
typedef struct weft_task_stats {
    const char *name;       /* the task's name, "#index" if unnamed, or the kind
                             * ("async", "stage 2", ...); owned by the profile.
                             * "(name lost: out of memory)" (here and in every
                             * export) for runs of a named task whose name the
                             * profiler had no memory to keep */
    weft_profile_kind kind; /* what ran: a taskflow task or another kind of work */
    const void *id;         /* a task's taskflow (compare with a weft_taskflow *);
                             * for other work, the function or the pipeline */
    uint32_t index;         /* a task's index (weft_task_index); a stage's number */
    uint64_t count;         /* runs recorded */
    uint64_t failed;        /* of those, runs that returned non-zero */
    uint64_t estimated;     /* of those, runs timed in a batch (see Timing above):
                             * their share of the batch is their duration */
    uint64_t total_ns, /* sum of the durations, in ns */
        min_ns,        /* the shortest run, in ns */
        max_ns;        /* the longest run, in ns */
    double mean_ns;    /* total_ns / count */
    uint64_t p50_ns,   /* median duration, in ns */
        p90_ns,        /* 90th percentile, in ns */
        p99_ns; /* nearest-rank percentiles of the durations */
} weft_task_stats;

/* One worker's totals in a profile (weft_profile.per_worker), or their sums. */
typedef struct weft_worker_profile {
    uint64_t tasks;        /* runs recorded (tasks and other work) */
    uint64_t busy_ns;      /* time inside them (nested runs counted once), and
                            * in GPU tasks' recordings (not runs: not in tasks) */
    uint64_t parks,        /* times the worker went to sleep */
        park_ns; /* sleeps, and their time */
    uint64_t steals;       /* jobs taken from others or the injector */
    double utilisation;    /* busy_ns / the profile's wall_ns */
} weft_worker_profile;

/* Statistics of the spans an executor recorded (weft_profile_get), freed with
 * weft_profile_free. */
typedef struct weft_profile {
    unsigned workers;      /* entries of per_worker: the executor's worker count */
    uint64_t wall_ns;      /* from the first span's begin to the last one's end */
    uint64_t spans;        /* run spans seen (tasks and other work) */
    uint64_t dropped;      /* spans lost to the buffer limit, for want of
                            * memory, or of work nested too deep to time (not
                            * in the figures): runs, and GPU tasks'
                            * recordings (weft_profiler_count) */
    size_t ntasks;         /* entries of tasks */
    weft_task_stats *tasks; /* ntasks entries, largest total_ns first */
    weft_worker_profile *per_worker; /* `workers` entries */
    weft_worker_profile total;       /* sums (utilisation: the average) */
} weft_profile;

/* Computes the statistics of the spans ex recorded (since the profiler last
 * started) into a new weft_profile, *out, which the caller frees with
 * weft_profile_free.  With no profile, an empty one (no tasks, zero totals).
 * Same rules as weft_profiler_write_json (call it while no run is in flight).
 * WEFT_EINVAL (NULL ex or out), WEFT_ENOMEM, WEFT_EBUSY (called from one of
 * ex's workers: its own run is in flight); *out is NULL after any error.  Any
 * thread not a worker of ex (a task of another executor may call it). */
WEFT_API WEFT_NODISCARD weft_status weft_profile_get(const weft_executor *ex, weft_profile **out);
/* Frees a profile from weft_profile_get (NULL is allowed). */
WEFT_API void weft_profile_free(weft_profile *profile);

/* Writes the timeline of the recorded spans (the one in the HTML report) as a
 * standalone SVG file: a row per worker, a rectangle per run and per GPU
 * task's recording (hover: name, kind, duration), parks as grey lines; past 20000 spans each pixel column
 * shows how busy the worker was.  Same rules and errors as
 * weft_profiler_write_html. */
WEFT_API weft_status weft_profiler_write_timeline_svg(const weft_executor *ex, FILE *out);

/* ---------------------------------------------------------------------------------
 * Flame graphs (docs/guide-tooling.md)
 * ------------------------------------------------------------------------------ */

/* Options of weft_profiler_write_folded; zero (or NULL) means the defaults. */
typedef struct weft_folded_options {
    /* Live taskflows whose names (weft_taskflow_name) label their frames
     * ("taskflow <name>"); any other taskflow is "taskflow N", numbered in
     * order of appearance in the profile.  May be NULL. */
    const weft_taskflow *const *taskflows;
    size_t ntaskflows; /* entries of taskflows (0 when it is NULL: else WEFT_EINVAL) */
    /* A frame per worker ("worker W") under the executor's. */
    bool per_worker;
} weft_folded_options;

/* Writes the recorded spans as folded stacks (Brendan Gregg's format: one line
 * per distinct stack, "frame;frame;...;frame <weight>"), which flamegraph.pl,
 * speedscope and inferno draw as a flame graph.  A stack is "executor N", then
 * for a taskflow task its run's taskflow, the subflow or module graph it
 * belongs to when that is another one ("subflow/module N"), and the task's
 * name (or "#index"), and "GPU recording" above that for a GPU task's
 * recording (its fn, on a worker, before its outcome); for other work its kind
 * ("async", "fork-join root", "algorithm job", "pipeline N;stage K", ...).  Work that ran inside another
 * span of its worker (a task that waited and ran others meanwhile) is stacked
 * on that span.  The weight is the span's self time in nanoseconds (its time
 * less what ran nested in it), so the weights add up to the executor's busy
 * time (weft_metrics.total.busy_ns); a stack whose time rounds to 0 ns has
 * weight 1, so every task that ran has its line.  Parks and steals are left out.  Lines are
 * sorted; ';' and control characters in names are written '?', bytes that are
 * not UTF-8 as U+FFFD.  Same rules as weft_profiler_write_json (call it while
 * no run is in flight); nothing is written when the profiler never ran.
 * WEFT_EINVAL (NULL ex or out, or opt->ntaskflows without opt->taskflows),
 * WEFT_ENOMEM (its working memory: about 80 bytes per span), WEFT_ESYS (write
 * failed).  Any thread not a worker of ex. */
WEFT_API weft_status weft_profiler_write_folded(const weft_executor *ex, const weft_folded_options *opt,
                                                FILE *out);
/* The same stacks drawn as a self-contained SVG flame graph (no script, no
 * network): one rectangle per frame, as wide as its share of the busy time,
 * the executor at the bottom; hovering a frame shows its name, time and share.
 * Fit to embed in an HTML page.  Same arguments, rules and errors as
 * weft_profiler_write_folded; with no profile, an empty graph. */
WEFT_API weft_status weft_profiler_write_flame_svg(const weft_executor *ex, const weft_folded_options *opt,
                                                   FILE *out);

/* ---------------------------------------------------------------------------------
 * Logging
 * ------------------------------------------------------------------------------ */

/* How much is logged (weft_log_set_level): each level includes the ones above
 * it.  WEFT_LOG=off|error|warn|info|debug sets it; the default is warn. */
typedef enum weft_log_level {
    WEFT_LOG_OFF = 0,   /* nothing */
    WEFT_LOG_ERROR = 1, /* failures: a profile not written, a broken custom policy */
    WEFT_LOG_WARN = 2,  /* the default: bad settings ignored, refused calls */
    WEFT_LOG_INFO = 3,  /* lifetime events: executors created, profiles written */
    WEFT_LOG_DEBUG = 4  /* everything: the most detail */
} weft_log_level;

/* Receives each message at or under the current level (one line, no newline:
 * a control character other than tab in what it quotes, such as an
 * environment value, is written as '?').
 * Called from whichever thread logs, possibly several at once. */
typedef void (*weft_log_fn)(void *user, weft_log_level level, const char *message);

/* Messages above `level` are dropped.  The default is WEFT_LOG env (error, warn,
 * info, debug or off), else warn; a level set here wins over WEFT_LOG, also
 * when it is set before the first executor is created.  A value out of the
 * enum's range is clamped (below WEFT_LOG_OFF: off; above WEFT_LOG_DEBUG:
 * debug).  Any thread. */
WEFT_API void weft_log_set_level(weft_log_level level);
WEFT_API weft_log_level weft_log_get_level(void);
/* Sends messages to fn (NULL: back to stderr, "weft: <level>: <message>").  Set
 * it before starting work: a message being logged during the switch may go to
 * either place.  Replaces an entry callback or JSON sink (below). */
WEFT_API void weft_log_set_callback(weft_log_fn fn, void *user);

/* A log message with its context: the structured form of a log line. */
typedef struct weft_log_entry {
    uint64_t time_ns;          /* wall clock (CLOCK_REALTIME), ns since 1970 */
    weft_log_level level;      /* the message's level */
    const char *message;       /* the text as formatted: what it quotes (an
                                * environment value, a path) may hold control
                                * characters, which weft_log_set_json escapes */
    /* Where it was logged: set when the logging thread is a worker running a
     * task, else NULL / -1 / 0. */
    const weft_executor *executor;
    unsigned executor_number;  /* as in traces ("executor N"), 0 if unknown */
    int worker;                /* the worker's index, -1 */
    /* The taskflow task that worker runs and its run (weft_future_id): known
     * while metrics, a profiler or an observer are on, else NULL and 0. */
    const char *task;          /* its name (its first 63 bytes at most, cut at a
                                * UTF-8 character boundary), "#index" if unnamed */
    uint64_t run;              /* the run's id */
} weft_log_entry;

/* Receives each entry at or under the current level; the entry and its
 * strings are valid during the call only.  Called from whichever thread logs,
 * possibly several at once. */
typedef void (*weft_log_entry_fn)(void *user, const weft_log_entry *entry);

/* Sends entries to fn (NULL: back to stderr).  Replaces a message callback or
 * JSON sink.  Same rules as weft_log_set_callback. */
WEFT_API void weft_log_set_entry_callback(weft_log_entry_fn fn, void *user);

/* Writes entries to out as JSON lines, one object per entry, flushed:
 *   {"time":"2025-01-31T12:00:00.123456Z","level":"warn","executor":1,
 *    "worker":0,"task":"load","run":3,"message":"..."}
 * (executor, worker, task and run only when known; strings escaped, invalid
 * UTF-8 as U+FFFD).  NULL: back to stderr.  out must stay open until the sink
 * is replaced; stdio's lock keeps lines from threads whole.  Replaces a
 * callback.  WEFT_OK.  Same rules as weft_log_set_callback. */
WEFT_API weft_status weft_log_set_json(FILE *out);

/* ---------------------------------------------------------------------------------
 * Live statistics (docs/guide-observability.md, "Live view")
 *
 * While published, an executor's figures are copied every interval (250 ms by
 * default) by a thread of its own into
 *  - a live block: a small file mapped into memory, read by `weft-top <pid>`
 *    or by any program that maps it (its layout is below, versioned);
 *  - and/or a Prometheus textfile (text exposition format 0.0.4, as
 *    node_exporter's textfile collector reads it; replaced whole each time
 *    through a temporary file and a rename).
 * Nothing is added to the task path: the thread reads counters the workers
 * keep anyway.  Task counts and exact busy time come from the task metrics,
 * so they are there only while those are on (weft_executor_config.metrics,
 * weft_metrics_enable, a profiler, an observer, or WEFT_METRICS=1); without
 * them, busy time is sampled: the thread looks at each worker's state every
 * 10 ms and counts the time it saw it running.  Both files are removed when
 * publishing stops (weft_stats_stop, or the executor's destroy); a file left
 * behind belongs to a process that died (weft-top says so).
 *
 * WEFT_STATS=<path>[,<path>] publishes every executor of the process with the
 * defaults: a path ending in ".prom" is the textfile, any other the live
 * block.  The second executor created uses <path>.1 (before the ending:
 * run.1.prom), the third .2, and so on.  A child made by fork() from a
 * process that publishes (WEFT_STATS set at load, or such an executor made
 * before the fork) numbers its own: its executors use <path>.PID
 * (run.PID.prom; PID: the child's own), then .PID.1, ..., never its parent's
 * files.
 * ------------------------------------------------------------------------------ */

/* The live block: 64-bit words, native byte order, each written with a relaxed
 * atomic store (read them with relaxed 64-bit loads; figures of one refresh are
 * not one consistent snapshot).  WEFT_STATS_HEADER_WORDS words of header, then
 * WEFT_STATS_WORKER_WORDS words (one 64-byte line) per worker.  A reader checks
 * the magic and the version; fields are only ever appended to a line (its
 * length is in the header), so a reader of version 1 reads later versions. */
#define WEFT_STATS_MAGIC UINT64_C(0x5441545354464557) /* "WEFTSTAT" in a little-endian word */
#define WEFT_STATS_VERSION 1
#define WEFT_STATS_HEADER_WORDS 16
#define WEFT_STATS_WORKER_WORDS 8

/* The words of the live block's header, by index. */
enum weft_stats_header_word {
    WEFT_STATS_H_MAGIC = 0,        /* WEFT_STATS_MAGIC */
    WEFT_STATS_H_VERSION = 1,      /* WEFT_STATS_VERSION of the writer */
    WEFT_STATS_H_HEADER_WORDS = 2, /* where worker 0's line starts */
    WEFT_STATS_H_WORKER_WORDS = 3, /* words per worker line */
    WEFT_STATS_H_WORKERS = 4,      /* worker lines that follow the header */
    WEFT_STATS_H_PID = 5,          /* the publishing process */
    WEFT_STATS_H_EXECUTOR = 6,     /* the executor's number in that process, from 1 */
    WEFT_STATS_H_INTERVAL_NS = 7,  /* time between refreshes (weft_stats_config.interval_ms) */
    WEFT_STATS_H_FLAGS = 8,        /* WEFT_STATS_F_* */
    WEFT_STATS_H_UPDATES = 9,      /* refreshes so far (0: none yet) */
    WEFT_STATS_H_NOW_NS = 10,      /* CLOCK_MONOTONIC at the last refresh: rates divide by its differences */
    WEFT_STATS_H_RUNS_IN_FLIGHT = 11, /* runs submitted and not finished */
    WEFT_STATS_H_INJECTOR = 12,    /* jobs queued in the injector (submissions from outside) */
    WEFT_STATS_H_TIMERS = 13,      /* deadlines armed in the process (weft_cancel_after/at) */
    WEFT_STATS_H_START_NS = 14     /* CLOCK_MONOTONIC when publishing began */
};
/* The words of a worker's line, by index from the line's start. */
enum weft_stats_worker_word {
    WEFT_STATS_W_STATE = 0,       /* WEFT_STATS_SEARCHING, _RUNNING or _PARKED */
    WEFT_STATS_W_BUSY_NS = 1,     /* time running work: exact with WEFT_STATS_F_TASKS, else sampled */
    WEFT_STATS_W_TASKS = 2,       /* work run (weft_worker_metrics.tasks); 0 without WEFT_STATS_F_TASKS */
    WEFT_STATS_W_STEALS = 3,      /* jobs taken from others (weft_worker_metrics.steals) */
    WEFT_STATS_W_STEAL_FAILS = 4, /* steal attempts that found nothing */
    WEFT_STATS_W_PARKS = 5,       /* times it went to sleep */
    WEFT_STATS_W_DEQUE = 6,       /* jobs in its deque now */
    WEFT_STATS_W_WAKEUPS = 7      /* times it woke and then found work */
};
/* A worker's state (its WEFT_STATS_W_STATE word). */
enum {
    WEFT_STATS_SEARCHING = 0, /* looking for work (stealing, yielding) */
    WEFT_STATS_RUNNING = 1,   /* running work */
    WEFT_STATS_PARKED = 2     /* asleep, waiting to be woken */
};
#define WEFT_STATS_F_TASKS 1u  /* task metrics on: TASKS counted, BUSY_NS exact */
#define WEFT_STATS_F_CLOSED 2u /* publishing stopped: the figures are final */

/* What weft_stats_start publishes, where and how often. */
typedef struct weft_stats_config {
    const char *path;      /* the live block, or NULL */
    const char *prom_path; /* the Prometheus textfile, or NULL */
    unsigned interval_ms;  /* between refreshes; 0: 250 */
} weft_stats_config;

/* Starts publishing ex's live statistics (see above).  At least one of the
 * paths must be set; both files are created and written once before this
 * returns.  Each is made as a new file renamed over the path (so the
 * directory must be writable): a file already there, even one another
 * executor or process still publishes to, is replaced, never truncated under
 * its writer; that writer's stop then leaves the new block alone.  A path
 * naming anything but a regular file (a device such as /dev/null, a FIFO, a
 * directory, a symbolic link) is refused and left as it is: replacing it, and
 * removing the file at stop, would delete it.  WEFT_EINVAL (NULL ex or config, no path), WEFT_EBUSY
 * (already publishing: stop first), WEFT_ESYS (a file cannot be created or
 * written, or a path is not a regular file; nothing is left running), WEFT_ENOMEM,
 * WEFT_EFORKED (in a child of fork(), ex created before it: its files are the
 * parent's; nothing done).  Any thread not a worker of
 * ex, and not at the same time as another start or stop on ex. */
WEFT_API WEFT_NODISCARD weft_status weft_stats_start(weft_executor *ex, const weft_stats_config *config);
/* Stops publishing: a last refresh marked WEFT_STATS_F_CLOSED, then both files
 * are removed (the live block only while the path still names it).  WEFT_OK (also when not publishing), WEFT_EINVAL (NULL ex),
 * WEFT_EFORKED (in a child of fork(), ex created before it: the parent's
 * publisher and files are left alone).  Same threads as weft_stats_start. */
WEFT_API weft_status weft_stats_stop(weft_executor *ex);

/* ---------------------------------------------------------------------------------
 * State dump
 * ------------------------------------------------------------------------------ */

/* Writes the executor's state: runs in flight, the sleep state (searching, idle,
 * wake tokens), the injector, for each worker its state (running, searching,
 * parked), deque size, counters and, while metrics are on, the task it runs and
 * that run's pending count (the task's name on that one line: control
 * characters as '?', cut with "..." past 90 bytes, at a UTF-8 character
 * boundary), and for each submitter slot claimed (weft/async.h,
 * weft_silent_async: the queue of a thread that is no worker) its queue's
 * length.  It takes no lock and allocates nothing: every value
 * is an atomic read (relaxed) and the text is formatted on the stack and written
 * with write(2), so it is safe to call on a hung program, from another thread or
 * from a debugger (`call weft_executor_dump_fd(ex, 2)`).  The values are not one
 * consistent snapshot: a run whose wait (weft_run_and_wait, weft_future_wait) has
 * just returned may still show in "runs in flight" and its worker as running for
 * a moment, as the worker counts the run's end just after completing its future
 * (weft_executor_wait_all does wait for that count).  One caveat on a busy executor: the task line follows a
 * worker's task (a node of its taskflow, with its name) and its run record
 * without a lock, and may read them after they are freed: when the task's
 * run ends between those loads (the line is then wrong; ASan and TSan report
 * the read), or, rarer, when its taskflow is destroyed too, whose memory may
 * have gone back to the system (the read then faults).  What it is for, a
 * stuck executor, holds those records still; on a busy one with metrics on,
 * that is the risk (with metrics off there are no task lines, and nothing is
 * read that does not live as long as the executor).  WEFT_EINVAL, WEFT_ESYS. */
WEFT_API weft_status weft_executor_dump_fd(const weft_executor *ex, int fd);
/* The same to a stdio stream (flushed first, then written through its fd). */
WEFT_API weft_status weft_executor_dump(const weft_executor *ex, FILE *out);

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
/* weft_profiler_write_folded with a weft_folded_options of opt_size bytes (see "config sizes"). */
WEFT_API weft_status weft_profiler_write_folded_sized(const weft_executor *ex,
                                                      const weft_folded_options *opt,
                                                      size_t opt_size, FILE *out);
/* weft_profiler_write_flame_svg with a weft_folded_options of opt_size bytes (see "config sizes"). */
WEFT_API weft_status weft_profiler_write_flame_svg_sized(const weft_executor *ex,
                                                         const weft_folded_options *opt,
                                                         size_t opt_size, FILE *out);
/* weft_stats_start with a weft_stats_config of config_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_stats_start_sized(weft_executor *ex,
                                                           const weft_stats_config *config,
                                                           size_t config_size);
#ifndef WEFT_BUILDING
static inline weft_status weft__profiler_write_folded_inline(const weft_executor *ex,
                                                             const weft_folded_options *opt,
                                                             FILE *out) {
    return weft_profiler_write_folded_sized(ex, opt, sizeof(weft_folded_options), out);
}
#define weft_profiler_write_folded weft__profiler_write_folded_inline
static inline weft_status weft__profiler_write_flame_svg_inline(const weft_executor *ex,
                                                                const weft_folded_options *opt,
                                                                FILE *out) {
    return weft_profiler_write_flame_svg_sized(ex, opt, sizeof(weft_folded_options), out);
}
#define weft_profiler_write_flame_svg weft__profiler_write_flame_svg_inline
WEFT_NODISCARD static inline weft_status weft__stats_start_inline(weft_executor *ex,
                                                                  const weft_stats_config *config) {
    return weft_stats_start_sized(ex, config, sizeof(weft_stats_config));
}
#define weft_stats_start weft__stats_start_inline
#endif

WEFT_EXTERN_C_END
#endif
