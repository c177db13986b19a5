/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Distributed task graphs over MPI (library weft::mpi, pkg-config weft-mpi; not
 * part of weft.h, as it needs <mpi.h>).  The model is StarPU-MPI's: every rank
 * builds the same graph by the same calls in the same order; data lives in
 * registered handles, each with an owner rank; a task declares which handles it
 * reads and writes and runs on one rank (by default the owner of the first
 * handle it writes); the messages the data flow needs are derived from the
 * declarations and posted by weft.
 *
 *     weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "demo", &st);
 *     weft_mpi_data a = weft_mpi_data_register(f, rank == 0 ? &x : NULL, sizeof x, 0);
 *     weft_mpi_data b = weft_mpi_data_register(f, rank == 1 ? &y : NULL, sizeof y, 1);
 *     weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = init, .access = (weft_mpi_access[]){
 *                         { a, WEFT_MPI_W } }, .naccess = 1 });            // on rank 0
 *     weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = use, .access = (weft_mpi_access[]){
 *                         { a, WEFT_MPI_R }, { b, WEFT_MPI_W } }, .naccess = 2 }); // on rank 1
 *     st = weft_mpi_run(ex, f);   // collective: rank 0 sends x to rank 1 once
 *
 * Threads and MPI: only the thread that calls weft_mpi_run makes MPI calls
 * (it is the run's progress engine, and it sleeps while there is nothing to
 * do); workers never call MPI and never block on it.  So MPI must be initialised with MPI_Init_thread at MPI_THREAD_FUNNELED or
 * above (weft's workers are threads, which MPI_THREAD_SINGLE forbids), and with
 * FUNNELED the caller must be the thread that initialised MPI.
 * docs/guide-mpi.md explains the model, the progress engine and termination.
 */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <mpi.h>

#include "weft/core.h"
#include "weft/graph.h"

WEFT_EXTERN_C_BEGIN

/* A distributed flow: tasks over the ranks of a communicator, ordered by the
 * data they read and write (weft_mpi_flow_create).  Opaque. */
typedef struct weft_mpi_flow weft_mpi_flow;

/* A data handle: a small value naming a registered buffer of its flow.  The
 * null handle (all zero, WEFT_MPI_DATA_NULL) is what a failed registration
 * returns; using it gives WEFT_EINVAL. */
typedef struct weft_mpi_data {
    uint32_t id_; /* index + 1 */
} weft_mpi_data;
#define WEFT_MPI_DATA_NULL ((weft_mpi_data){0})

/* How a task uses a handle.  A handle written on a rank other than its owner
 * is sent back to its owner at the end of each run (so after a run the
 * owner's buffer holds the final value). */
typedef enum weft_mpi_mode {
    WEFT_MPI_R = 1,  /* reads it: the task waits for the latest value, received if needed */
    WEFT_MPI_W = 2,  /* overwrites it entirely: its old value is not fetched */
    WEFT_MPI_RW = 3, /* both */
} weft_mpi_mode;

/* One handle a task uses and how (weft_mpi_task_desc.access). */
typedef struct weft_mpi_access {
    weft_mpi_data data; /* a handle registered with the same flow */
    weft_mpi_mode mode; /* WEFT_MPI_R, _W or _RW (another value: WEFT_EINVAL) */
} weft_mpi_access;

/* A distributed task's work.  bufs[i] is this rank's buffer of access[i]'s
 * handle, holding the value the data flow says the task sees.  Return 0 on
 * success; any other value fails the run on every rank (weft_mpi_run). */
typedef int (*weft_mpi_task_fn)(weft_ctx *ctx, void *const *bufs, void *arg);

/* A task to insert.  Zero in a field means the default. */
typedef struct weft_mpi_task_desc {
    weft_mpi_task_fn fn; /* required */
    void *arg;           /* passed to fn on the rank that runs it; not copied */
    const char *name;    /* copied; names the task in errors (NULL or "":
                          * "#N", its position among the flow's tasks) */
    const weft_mpi_access *access; /* naccess entries (copied), at most 64 */
    size_t naccess;      /* entries of access, 0 to 64; 0: access may be NULL */
    /* Which rank runs the task: `rank` when rank_set is true, else the owner
     * of the first handle written, else of the first handle read, else 0. */
    bool rank_set;
    int rank;            /* with rank_set: 0 .. size of the communicator - 1 */
} weft_mpi_task_desc;

/* Per-rank figures of the last run (weft_mpi_flow_stats). */
typedef struct weft_mpi_stats {
    uint64_t tasks_run;   /* tasks this rank ran */
    uint64_t messages_sent, /* weft's messages this rank sent */
        messages_received;  /* weft's messages this rank received */
    uint64_t bytes_sent,    /* payload bytes of the messages sent */
        bytes_received;     /* payload bytes of the messages received */
    uint64_t runs;        /* runs completed (any status) */
} weft_mpi_stats;

/* ---- flows ------------------------------------------------------------------ */

/* Creates an empty distributed flow over `comm`.  Collective over comm (it
 * duplicates comm, so weft's messages never match the program's).  `name` may
 * be NULL; it is copied.  Returns NULL with *err (err may be NULL) set to
 * WEFT_EINVAL when MPI is not initialised, already finalised, its thread level
 * is below MPI_THREAD_FUNNELED, or comm is MPI_COMM_NULL or an
 * intercommunicator (weft_mpi_flow_error_message(NULL) says which), WEFT_ENOMEM, or WEFT_ESYS when MPI reports an error.  Call from
 * the thread that will call weft_mpi_run. */
WEFT_API WEFT_NODISCARD weft_mpi_flow *weft_mpi_flow_create(MPI_Comm comm, const char *name,
                                                            weft_status *err);

/* Frees the flow, its cached copies and its communicator.  Collective over the
 * flow's communicator (MPI_Comm_free).  NULL gives WEFT_OK. */
WEFT_API weft_status weft_mpi_flow_destroy(weft_mpi_flow *f);

/* This process's rank in the flow's communicator, and the number of ranks
 * (-1 / 0 for NULL).  Any thread. */
WEFT_API int weft_mpi_flow_rank(const weft_mpi_flow *f);
WEFT_API int weft_mpi_flow_size(const weft_mpi_flow *f);

/* Registers a buffer of `size` bytes (1 to INT_MAX) owned by rank `owner`.
 * On the owner `buf` must be its buffer, holding the initial value; on other
 * ranks it may be a buffer of the same size to receive copies into, or NULL
 * for weft to allocate one when the rank first needs the data.  Not a
 * collective call, but every rank must register the same handles (sizes and
 * owners) in the same order.  Returns the null handle on failure: WEFT_EINVAL
 * (NULL f, bad size or owner, NULL buf on the owner), WEFT_ENOMEM, WEFT_EBUSY
 * (the flow has run: its graph is fixed); see weft_mpi_flow_last_error. */
WEFT_API weft_mpi_data weft_mpi_data_register(weft_mpi_flow *f, void *buf, size_t size, int owner);

/* This rank's buffer of d (NULL before weft allocated it, or for a bad
 * handle).  Its content is defined on the owner after a run, and on another
 * rank only as what the last task that used it there saw. */
WEFT_API void *weft_mpi_data_ptr(const weft_mpi_flow *f, weft_mpi_data d);
/* The owner rank of d, -1 for a bad handle. */
WEFT_API int weft_mpi_data_owner(const weft_mpi_flow *f, weft_mpi_data d);

/* Appends a task.  Every rank must make the same calls in the same order (the
 * graphs are compared when a run starts); only the rank that runs the task
 * keeps it, the others note where the data goes.  Returns WEFT_OK,
 * WEFT_EINVAL (NULL f, desc or fn; a bad handle, mode or rank; more than 64
 * accesses), WEFT_ENOMEM (nothing is added), WEFT_EBUSY (the flow has run).
 * Sets what weft_mpi_flow_last_error returns.  Not thread-safe per flow. */
WEFT_API weft_status weft_mpi_insert(weft_mpi_flow *f, const weft_mpi_task_desc *desc);

/* ---- ordinary taskflows -------------------------------------------------------- */

/* Where the tasks of an ordinary taskflow run, and what they hand on. */
typedef struct weft_mpi_taskflow_map {
    /* Required: the rank that runs t.  Every rank must give the same answer. */
    int (*rank)(weft_task t, void *arg);
    /* Optional: t's output, the bytes its successors read.  On every rank, a
     * buffer of the same size: on t's rank the one t writes, elsewhere the one
     * a copy lands in before a successor there runs (where that successor
     * reads it).  NULL (or *size 0): t hands on nothing, and an edge out of
     * it across ranks is a one-byte message that only orders. */
    void *(*output)(weft_task t, size_t *size, void *arg);
    void *arg; /* passed to rank and output */
} weft_mpi_taskflow_map;

/* Appends every task of the ordinary taskflow tf (weft/graph.h) to f, in an
 * order that respects tf's edges, each on the rank map->rank names: a task
 * runs its own function there (weft_task_set_work changes are seen at the next
 * run), after its predecessors, and an edge across ranks becomes one message
 * (the predecessor's output, map->output, or a one-byte token).  Every rank
 * must make the same call with the same taskflow (built by the same calls),
 * as for weft_mpi_insert.  A wrapped task's name names it in errors (an
 * unnamed one "#index", its weft_task_index).  Inside a wrapped task, weft_ctx_task(ctx) is the
 * null task and weft_ctx_iteration(ctx) is 0.  tf must outlive f, unchanged.
 * Only static tasks (weft_emplace, weft_placeholder, weft_emplace_work) can be
 * wrapped: conditions choose a branch at run time on one rank, subflows build
 * their graph at run time, semaphores limit concurrency inside one process;
 * for those, run a whole taskflow per distributed task instead
 * (weft_mpi_taskflow_task below; docs/guide-mpi.md).  map->output is asked
 * once per task, before anything is added.  Returns WEFT_OK,
 * WEFT_EINVAL (NULLs, map->rank NULL or out of range, a task of another kind,
 * more than 63 predecessors, an output over INT_MAX bytes; f is left as it
 * was, weft_mpi_flow_error_message(f) says which task),
 * WEFT_ECYCLE, WEFT_ENOMEM (f may then hold part of tf: destroy it),
 * WEFT_EBUSY (f has run).  Not thread-safe per flow. */
WEFT_API weft_status weft_mpi_insert_taskflow(weft_mpi_flow *f, weft_taskflow *tf, const weft_mpi_taskflow_map *map);

/* A weft_mpi_task_fn that runs the taskflow `tf` (its arg: a weft_taskflow *)
 * once and returns the run's status (WEFT_OK or the run's error, which fails
 * the distributed run with the task's name): any taskflow, conditions,
 * subflows and modules included, as one distributed task.  It runs on the
 * executor of the distributed run (weft_run_and_wait from a task: the worker
 * runs other tasks while it waits).  tf's tasks name their data themselves:
 * register buffers of your own on every rank that runs such a task (not NULL)
 * and let tf's tasks point at them; the distributed task's accesses say which
 * of them it reads and writes.  tf must not be run by anything else meanwhile
 * (a run of a taskflow waits behind its other runs). */
WEFT_API int weft_mpi_taskflow_task(weft_ctx *ctx, void *const *bufs, void *tf);

/* Status of the most recent registration or insertion on f (WEFT_EINVAL for
 * NULL). */
WEFT_API weft_status weft_mpi_flow_last_error(const weft_mpi_flow *f);

/* Number of tasks inserted (on every rank, not only this one's). */
WEFT_API size_t weft_mpi_flow_num_tasks(const weft_mpi_flow *f);

/* ---- running ---------------------------------------------------------------- */

/* Runs the flow once on `ex` (NULL: the default executor) and waits.
 * Collective over the flow's communicator: every rank calls it, and it returns
 * on every rank when all ranks' parts are done.  The calling thread drives the
 * messages (it polls MPI, yielding the CPU between polls, and sleeps while
 * it waits; workers never call MPI); it must not be a worker of
 * ex.  The first run fixes the graph (more tasks: WEFT_EBUSY); a flow may be
 * run again, and each run starts from the values in the owners' buffers.
 * Returns WEFT_OK on every rank, or the same error on every rank:
 *   WEFT_ETASK    a task returned non-zero (on any rank); the tasks not yet
 *                 started on its rank are skipped, the other ranks finish
 *                 theirs; weft_mpi_flow_error_message names the task, its rank
 *                 and its code;
 *   WEFT_EINVAL   the ranks' graphs differ (different calls or order), MPI is
 *                 not usable from this thread (thread level, finalised), or a
 *                 bad argument (then only on the ranks that passed it: the
 *                 others wait for them);
 *   WEFT_EDEADLK  called from a worker of ex;
 *   WEFT_ENOMEM   a rank lacked memory to prepare the run (nothing ran);
 *   WEFT_ESYS     MPI returned an error.
 * A run cannot be cancelled from outside: to end one early, have a task
 * return non-zero (WEFT_ETASK above: its rank skips the rest, the other ranks
 * still run theirs).
 * Not thread-safe per flow; runs of different flows may happen from different
 * threads only at MPI_THREAD_MULTIPLE. */
WEFT_API weft_status weft_mpi_run(weft_executor *ex, weft_mpi_flow *f);

/* Why the last run of f failed ("" after a success): the same text on every
 * rank for a failed task or mismatched graphs.  Valid until the next run or
 * destroy.  f NULL: why the calling thread's last weft_mpi_flow_create failed.
 * Never NULL. */
WEFT_API const char *weft_mpi_flow_error_message(const weft_mpi_flow *f);

/* Copies this rank's figures of the last run into *out.  WEFT_EINVAL for NULLs. */
WEFT_API weft_status weft_mpi_flow_stats(const weft_mpi_flow *f, weft_mpi_stats *out);

/* ---- distributed work pool --------------------------------------------------------
 * For independent tasks (no data flow between them): each rank submits tasks,
 * each a function, input bytes and an output buffer, to its own part of the
 * pool; weft_mpi_pool_run runs them all, and a rank that runs out of work
 * steals a batch of another rank's not-yet-started tasks, their inputs
 * travelling with them, and sends their outputs back in one message.  So the
 * work ends balanced however unevenly it was submitted (all of it on rank 0,
 * say).  Only the thread that calls weft_mpi_pool_run calls MPI (FUNNELED
 * suffices), as for flows.  docs/guide-mpi.md, "Work pools".
 *
 *     static int square(weft_ctx *cx, const void *in, size_t n, void *out, size_t m, void *arg) {
 *         *(double *)out = *(const double *)in * *(const double *)in; return 0; }
 *     static const weft_mpi_pool_fn fns[] = { square };
 *     weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD,
 *         &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st);
 *     if (rank == 0) for (int i = 0; i < n; i++)
 *         weft_mpi_pool_submit(p, square, &x[i], sizeof x[i], &y[i], sizeof y[i]);
 *     st = weft_mpi_pool_run(ex, p);   // collective: y[] filled on rank 0
 */
typedef struct weft_mpi_pool weft_mpi_pool;

/* A pool task: reads in_size bytes at `in` (a copy of what was submitted) and
 * writes out_size bytes at `out` (on another rank, a buffer that travels back
 * to the submitter's).  `arg` is the running rank's weft_mpi_pool_config.arg.
 * ctx is the worker's task context.  Return 0 on success; any other value
 * fails the pool's run on every rank (weft_mpi_pool_run).  `in` and `out` are
 * aligned to 16 bytes. */
typedef int (*weft_mpi_pool_fn)(weft_ctx *ctx, const void *in, size_t in_size, void *out, size_t out_size,
                                void *arg);

typedef struct weft_mpi_pool_config {
    /* Required: the functions tasks may run, the same list in the same order
     * on every rank (a task travels as its function's index: addresses differ
     * between processes). */
    const weft_mpi_pool_fn *fns;
    size_t nfns;     /* 1 or more */
    void *arg;       /* passed to every task this rank runs */
    size_t batch_max; /* most tasks one steal takes; 0 or over 1024: 1024.
                       * A steal takes ceil(unstarted / ranks) of the victim's,
                       * at most this, and at most 16 MiB of inputs and outputs
                       * (one task at least, whatever its size) */
    bool no_steal;    /* true: every task runs where it was submitted (to measure) */
} weft_mpi_pool_config;

/* Per-rank figures of the last run (weft_mpi_pool_stats). */
typedef struct weft_mpi_pool_figures {
    uint64_t tasks_submitted; /* submitted on this rank for the run */
    uint64_t tasks_run;       /* run on this rank: its own and stolen ones */
    uint64_t tasks_stolen;    /* run here though submitted on another rank */
    uint64_t tasks_given;     /* submitted here, stolen by another rank */
    uint64_t steal_requests;  /* sent by this rank */
    uint64_t steals_empty;    /* of those, answered "nothing left" */
    uint64_t messages_sent, messages_received; /* requests, batches, results */
    uint64_t bytes_sent, bytes_received;       /* their payload bytes */
    uint64_t runs;            /* runs completed (any status) */
} weft_mpi_pool_figures;

/* Creates an empty pool over `comm` (collective: it duplicates comm).  cfg is
 * copied (the fns array too).  Returns NULL with *err (err may be NULL) set to
 * WEFT_EINVAL (MPI unusable from this thread as for weft_mpi_flow_create,
 * comm MPI_COMM_NULL or an intercommunicator, cfg NULL, no fns or a NULL one;
 * weft_mpi_flow_error_message(NULL) says which), WEFT_ENOMEM or WEFT_ESYS.
 * Call from the thread that will call weft_mpi_pool_run. */
WEFT_API WEFT_NODISCARD weft_mpi_pool *weft_mpi_pool_create(MPI_Comm comm, const weft_mpi_pool_config *cfg,
                                                            weft_status *err);

/* Frees the pool and any tasks still submitted.  Collective over its
 * communicator (MPI_Comm_free).  NULL gives WEFT_OK. */
WEFT_API weft_status weft_mpi_pool_destroy(weft_mpi_pool *p);

/* Adds a task to this rank's part of the pool for its next run: fn (one of
 * the config's fns) will read a copy of the in_size bytes at `in` (copied
 * now) and its out_size bytes of output land in `out` after the run (out must
 * stay valid until then).  in may be NULL when in_size is 0, out when
 * out_size is 0; in_size + out_size at most 2^30.  Not collective: ranks
 * submit what they like, any number including none.  Returns WEFT_OK,
 * WEFT_EINVAL (NULL p, fn not in the config, NULL in or out with a size,
 * in_size + out_size over 2^30) or
 * WEFT_ENOMEM (nothing added).  Not thread-safe per pool; not during a run. */
WEFT_API weft_status weft_mpi_pool_submit(weft_mpi_pool *p, weft_mpi_pool_fn fn, const void *in, size_t in_size,
                                          void *out, size_t out_size);

/* Runs every rank's submitted tasks on `ex` (NULL: the default executor),
 * each exactly once somewhere, and waits.  Collective over the pool's
 * communicator: returns on every rank when all tasks of all ranks are done and
 * every output is in its submitter's buffer.  The submitted tasks are then
 * gone (submit more for another run).  The calling thread drives the
 * messages, as weft_mpi_run's does; it must not be a worker of ex.
 * Returns WEFT_OK on every rank, or the same error on every rank:
 *   WEFT_ETASK    a task returned non-zero; the tasks not started on the rank
 *                 that ran it (and on its submitter) are skipped, and their
 *                 outputs are left as they were; weft_mpi_pool_error_message
 *                 says which task, where, and its code;
 *   WEFT_EINVAL   the ranks' configs differ (number of functions), or MPI is
 *                 not usable from this thread;
 *   WEFT_EDEADLK  called from a worker of ex (on that rank only);
 *   WEFT_ESYS     MPI returned an error.
 * Short of memory, a rank answers a thief "nothing left" (it runs the tasks
 * itself) and leaves a message queued in MPI until it can take it: slower,
 * never wrong.  Not thread-safe per pool. */
WEFT_API weft_status weft_mpi_pool_run(weft_executor *ex, weft_mpi_pool *p);

/* Why the last run failed ("" after a success); the same text on every rank
 * for a failed task.  Never NULL (for NULL p: ""). */
WEFT_API const char *weft_mpi_pool_error_message(const weft_mpi_pool *p);

/* Copies this rank's figures of the last run into *out.  WEFT_EINVAL for NULLs. */
WEFT_API weft_status weft_mpi_pool_stats(const weft_mpi_pool *p, weft_mpi_pool_figures *out);

WEFT_EXTERN_C_END
#endif
