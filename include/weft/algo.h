/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Parallel algorithms: for loops, for_each, transform, reduce, scans, sort, and
 * min / max / find_if, spread over an executor's workers.
 *
 *     double sum = 0;
 *     weft_status st = weft_parallel_reduce(ex, v, n, sizeof(double), &sum, add, NULL, NULL);
 *
 * Every algorithm can be called two ways:
 *   - directly, from any thread: weft_parallel_X(ex, ...) returns when the work is
 *     done.  A thread that is not one of ex's workers runs a share of the work
 *     itself and then sleeps until the workers finish theirs (with workers
 *     bound to CPUs, WEFT_AFFINITY_CPUS or a placement, it only sleeps); a call
 *     whose work fits one task (n below two chunks, a one-worker executor,
 *     max_tasks 1) is not spread at all: the calling thread runs it, bound
 *     workers or not (no worker is woken for it).  From
 *     inside a task of ex it runs other tasks meanwhile (it never blocks a worker,
 *     so nested parallel calls cannot deadlock).
 *   - as a task of a taskflow: weft_emplace_X(tf, &desc) adds a task that runs the
 *     call described by *desc on the executor running the taskflow.  The task
 *     reads *desc when it runs, not when it is emplaced, so a graph can be built
 *     before its data exists; *desc must stay valid while the taskflow may run.
 *     A failing call fails the task with its (negative) status as task_code.
 *     The task stops with its run: once the run is cancelled (weft_future_cancel,
 *     an attached token) or has failed, chunks not yet started are skipped as
 *     for the config's token (a sort stops between its phases), and the task
 *     returns 0, so the run reports its own cancel or failure.
 *
 * The generic API takes element sizes and function pointers, called once per
 * element.  For speed on common types, include <weft/algo_typed.h>: its macros
 * generate typed sort, scan and reduce functions with the operation inlined (the
 * way klib's ksort.h does), built on the range-based calls declared here
 * (weft_parallel_for_range, weft_parallel_reduce_range, weft_parallel_scan_range,
 * weft_parallel_sort_ops).
 *
 * Executor: every call takes NULL for the default executor (weft_default_executor).
 *
 * Errors: every call returns WEFT_OK, WEFT_EINVAL (a NULL function or result
 * pointer; a NULL array with n > 0; an element size of 0; step 0; a bad
 * partitioner; n elements of that size making more than PTRDIFF_MAX bytes,
 * which no array holds: a negative count cast to size_t, say; the sorts say
 * WEFT_ENOMEM for that, their buffer of n * size bytes), WEFT_ENOMEM (a per-call array could not be allocated; nothing
 * was changed) or WEFT_ECANCELED (the config's token fired: weft_algo_config.cancel).  Empty input: a NULL array with n == 0 (what an empty C++
 * vector's data() gives) is valid everywhere: the call does nothing and returns
 * WEFT_OK (a reduction leaves *result at its initial value, a search gives index
 * 0); the other arguments are still checked.  Thread-safety:
 * calls on the same executor may run at once from any threads; the arrays they
 * write must not overlap anything another thread touches meanwhile.  Functions
 * passed in are called concurrently from several workers.
 */
#ifndef WEFT_ALGO_H
#define WEFT_ALGO_H

#include "weft/async.h" /* WEFT_NUMA_NODE */
#include "weft/cancel.h"
#include "weft/graph.h"

WEFT_EXTERN_C_BEGIN

/* ---- partitioners ---------------------------------------------------------
 *
 * An algorithm cuts [0, n) into chunks and spreads them over at most one task per
 * worker.  Chunk boundaries never depend on timing, and reductions and scans
 * combine chunk results in chunk order, so a floating-point result is the same
 * bits on every run:
 *   AUTO     (the default, 0) chunks taken from a shared counter like
 *            DYNAMIC, but shrinking as the work runs out: each is 1/32 of what
 *            is left, down to n / 1024 (about 140 chunks in all).  A worker
 *            takes a run of consecutive chunks at a time, about 1/(2 * tasks)
 *            of the elements left (at least one chunk), so that each worker
 *            streams through contiguous memory; each chunk is still a call of
 *            its own.  The chunks of a worker that starts late or is preempted
 *            are taken by the others, and the small last ones let the workers
 *            finish together.  Boundaries depend on n only, so results do not
 *            depend on the worker count.  With `chunk` set, AUTO is DYNAMIC
 *            with that chunk.
 *   STATIC   chunks of `chunk` elements (default: n / 256, rounded up), each task
 *            taking a fixed contiguous run of chunks.  Lowest overhead; chunk
 *            boundaries (and so results) do not depend on the worker count.
 *   DYNAMIC  chunks of `chunk` elements (default: n / 1024, rounded up) taken one
 *            at a time from a shared counter: balances uneven work.  Results do
 *            not depend on the worker count either.
 *   GUIDED   chunks that shrink as the work runs out: remaining / (2 * tasks),
 *            but at least `chunk` (default 1).  Results are the same for a given
 *            worker count.
 * Reductions and scans keep state per chunk (an accumulator; a scan's prefix
 * and flags), so a chunk size that would make more than 65536 chunks, or
 * chunk state above 16 MiB in all (an accumulator of acc_size bytes, rounded
 * up to whole cache lines, per chunk of a reduction; four per chunk of a scan),
 * is raised to make that many, but never fewer than 64 chunks (this depends on
 * n and acc_size only, not on the workers).  Scans default to chunks
 * of 8192 elements, whatever the partitioner, so that each chunk stays in cache
 * between its two passes.  Sorts use one block per task and ignore the
 * partitioner and chunk size (max_tasks applies). */

/* How an algorithm cuts [0, n) into chunks (weft_algo_config.partitioner): the
 * four kinds described above. */
typedef enum weft_partitioner {
    WEFT_PARTITION_AUTO = 0,    /* the default: shrinking shared chunks; DYNAMIC with `chunk` */
    WEFT_PARTITION_STATIC = 1,  /* fixed runs of chunks per task; chunk default n / 256 */
    WEFT_PARTITION_DYNAMIC = 2, /* chunks from a shared counter; chunk default n / 1024 */
    WEFT_PARTITION_GUIDED = 3   /* shrinking chunks, at least `chunk` (default 1) */
} weft_partitioner;

/* Options of one call; zero in any field means the default; NULL means all
 * defaults.  Fields are only ever appended. */
typedef struct weft_algo_config {
    /* How the elements are cut into chunks (weft_partitioner above).  0:
     * WEFT_PARTITION_AUTO; any other value is WEFT_EINVAL. */
    weft_partitioner partitioner;
    /* Chunk size in elements (guided: the smallest chunk).  0: the default. */
    size_t chunk;
    /* At most this many tasks (so at most this many workers).  0: one per worker. */
    unsigned max_tasks;
    /* A cancellation token (weft/cancel.h), or NULL.  Once it is cancelled,
     * chunks not yet started are skipped (one acquire load per chunk) and the
     * call returns WEFT_ECANCELED, having written only the chunks that ran: a
     * loop or transform did part of its elements, a reduction, scan or search
     * leaves *result / *index as they were (a scan's output is partly
     * written), and a sort leaves the array a permutation of its elements,
     * partly sorted (it stops between its phases, never inside a merge).  A
     * cancel that comes after every chunk has started changes nothing: the
     * call returns WEFT_OK; except that the calls made once per element
     * (weft_parallel_for, _for_each, _transform, _transform2, _reduce and
     * _transform_reduce) also look at
     * the token every 64 elements of a running chunk and stop that chunk
     * there, so that they end within 64 elements of each running chunk
     * (WEFT_ECANCELED then, some elements not run; WEFT_OK only when every
     * element ran).  The call does not keep a reference: t must live until
     * it returns.  Elements already running are not interrupted, nor is a
     * range body (weft_parallel_for_range, _reduce_range) or a typed
     * (algo_typed.h) call's chunk (a body that should stop sooner polls
     * weft_cancel_token_is_cancelled itself). */
    weft_cancel_token *cancel;
} weft_algo_config;

/* ---- priority ----------------------------------------------------------------
 *
 * The jobs of a parallel call can be queued at a priority level (weft/sched.h):
 * a CRITICAL loop's chunks are taken by idle workers before queued HIGH, NORMAL
 * and LOW work; a LOW loop's only when nothing else is ready.  The level is
 * the calling thread's setting, not a config field (weft_algo_config cannot
 * grow: the descriptors embed it, docs/abi.md), read once when a call starts:
 *
 *     weft_priority old;
 *     (void)weft_algo_set_priority(WEFT_PRIORITY_CRITICAL, &old);
 *     st = weft_parallel_for(ex, 0, n, 1, body, arg, NULL);  // chunks at CRITICAL
 *     (void)weft_algo_set_priority(old, NULL);
 *
 * What it covers: every weft_parallel_* call and the weft/algo_typed.h macros
 * made by this thread; jobs 1..n-1 of the call go to the executor's priority
 * queue at that level (the calling thread runs job 0 itself, as always).  The
 * call's jobs run with the level set on whichever worker runs them, so a
 * parallel call nested in a chunk inherits it; other tasks a worker runs while
 * it waits for a call see the default.  An emplaced algorithm task
 * (weft_emplace_for & co.) queues its chunks at its graph task's priority: its
 * own (weft_task_set_priority), else its run's (weft_run_with_priority).
 * Pipelines take theirs with weft_pipeline_set_priority.
 * What it does not: a call whose work fits one task (n below two chunks, a
 * one-worker executor, max_tasks 1) queues nothing, so the level changes
 * nothing; jobs already running are never preempted.  At NORMAL (the default)
 * a call costs what it did: one thread-local load.  A task body that sets the
 * level must put it back before it returns: the setting belongs to the worker
 * thread, and the next task on that worker would inherit it.  Only a parallel
 * call's own wait hides it: while the body waits otherwise (weft_future_wait,
 * weft_run_and_wait, weft_subflow_join, a weft_sync whose child was stolen),
 * the tasks its worker runs meanwhile see the level, and their parallel calls
 * queue at it; put it back before such a wait. */

/* Sets the calling thread's priority for its parallel algorithm calls (see
 * above); *previous (may be NULL) receives the one it replaces.  WEFT_OK, or
 * WEFT_EINVAL for a value outside LOW..CRITICAL (nothing changes).  Affects
 * only the calling thread; wait-free. */
WEFT_API weft_status weft_algo_set_priority(weft_priority priority, weft_priority *previous);

/* The calling thread's priority for its algorithm calls (NORMAL unless set;
 * inside a prioritised call's chunk, that call's).  Wait-free. */
WEFT_API weft_priority weft_algo_priority(void);

/* ---- NUMA node hint ----------------------------------------------------------
 *
 * A thread that first-touched an array on NUMA node k (or allocated it there,
 * weft_numa_alloc) can ask for the chunks of its parallel calls over it to run
 * on node k's workers.  Like the priority, the hint is the calling thread's
 * setting, read once when a call starts; it is written WEFT_NUMA_NODE(k)
 * (weft/async.h; 0: no hint, the default):
 *
 *     unsigned old;
 *     (void)weft_algo_set_numa_node(WEFT_NUMA_NODE(1), &old);
 *     st = weft_parallel_for(ex, 0, n, 1, body, arg, NULL);  // chunks on node 1
 *     (void)weft_algo_set_numa_node(old, NULL);
 *
 * Where the call's jobs go, as a hinted async task's (weft_async_options.numa_node):
 * from a thread that is not a worker of ex, all of them (the workers being
 * bound) to node k's mailbox; from a worker of another node, jobs 1..n-1 (the
 * worker runs job 0 itself, as always, and so takes a share of the chunks);
 * from a worker of node k, its own deque (the node's, as without a hint).  The
 * node's workers take from its mailbox first in every steal round; the other
 * workers only in their last look before sleeping, so the chunks still run
 * when node k's workers are all busy or blocked (liveness over placement).
 * The call's jobs run with the thread's hint set to the call's, so a nested
 * parallel call in a chunk inherits it.
 *
 * When it does nothing (and costs nothing beyond the one thread-local load
 * every call makes): an executor without mailboxes, that is one whose workers
 * are not bound (a placement or WEFT_AFFINITY_CPUS) or are all on one node
 * (any one-node machine); a node with no worker of this executor; a call whose
 * work fits one task (n below two chunks, one worker, max_tasks 1); a call
 * made with a priority too (weft_algo_set_priority other than NORMAL): the
 * executor's priority queue decides, as for async tasks with both.  An
 * emplaced algorithm task (weft_emplace_for & co.) carries no hint: the
 * emplacing thread's setting is not captured, and the task runs its call
 * unhinted whatever its worker's setting.  A task body that sets the hint must
 * put it back before it returns (the setting belongs to the worker thread),
 * and before a wait that is not a parallel call's (weft_future_wait,
 * weft_run_and_wait, ...): as with the priority, the tasks its worker runs
 * during such a wait see the hint. */

/* Sets the calling thread's NUMA node hint for its parallel algorithm calls
 * (see above): WEFT_NUMA_NODE(k) for node k (an index of the machine's
 * topology, weft/topology.h), 0 for none; *previous (may be NULL) receives the
 * hint it replaces.  WEFT_OK, or WEFT_EINVAL (nothing changes) for a node the
 * machine does not have (k >= weft_topology_numa_node_count of the process's
 * machine, detected on first use; where detection fails, for k >= 1024 only,
 * and a node an executor lacks is then ignored by its calls).  Affects only
 * the calling thread; wait-free after the first call in the process (which
 * may detect the machine's topology: under a millisecond with sysfs). */
WEFT_API weft_status weft_algo_set_numa_node(unsigned node_hint, unsigned *previous);

/* The calling thread's NUMA node hint for its algorithm calls: 0 unless set
 * (inside a hinted call's chunk, that call's).  Wait-free. */
WEFT_API unsigned weft_algo_numa_node(void);

/* ---- function types (all are called concurrently from several threads: the
 *      workers, and the calling thread when it is not a worker) ----
 *
 * They return nothing, so an element that fails cannot fail the call by
 * itself.  A body that must stop the call cancels the config's token
 * (weft_algo_config.cancel) and records its own error where the caller will
 * look: the chunks not yet started are skipped, none runs twice, and the call
 * returns WEFT_ECANCELED, unless every chunk had already started (WEFT_OK,
 * each element having run once).  A reduction or search stopped that way
 * leaves *result / *index as they were.  An emplaced call's task then fails
 * with WEFT_ECANCELED as its task_code (its own token fired).
 *
 * Called from a task (a graph task, an emplaced call, a fork-join child, a
 * pipeline stage, or another call's callback), a callback runs in a context
 * of that task's run on every worker (weft_current_ctx()): on the calling
 * worker the task's own, on any other one chained on that worker's, with the
 * task's stop word and run, whose weft_ctx_task is the null task and
 * weft_ctx_run NULL.  Either way weft_ctx_cancelled sees the run's
 * cancellation (a direct call runs every chunk of a cancelled run; a body may
 * poll it to stop early), a callback may spawn and sync through it
 * (weft/forkjoin.h; it must sync what it spawns before it returns), and a
 * wait from it is refused with WEFT_EDEADLK wherever it would be from the
 * calling task (for its run, a run of its taskflow or of a graph it is nested
 * in).  Called from a thread that is not one of ex's workers, a callback has
 * no context of the call: on a worker it sees whatever task that worker is
 * running around it, if any. */

/* Alignment: every pointer a call passes to a callback that points at a
 * value the call keeps itself (a reduce or scan body's acc; the operation's
 * acc and x, except where that is the caller's *result, its init or an
 * element of its arrays) is aligned to 64 bytes, on every path (one task or
 * several), for an acc_size that is a multiple of the value type's alignment
 * (as its sizeof is).  So a type aligned to at most 64 bytes (a SIMD vector
 * such as __m256d, a struct with _Alignas(64)) may be the accumulator, also
 * of the typed macros of algo_typed.h. */

/* Loop bodies.  A range body gets [lo, hi) and loops itself: the fast form. */
typedef void (*weft_index_fn)(size_t i, void *arg);
typedef void (*weft_range_fn)(size_t lo, size_t hi, void *arg);
typedef void (*weft_elem_fn)(void *elem, void *arg);
/* *out = f(*in) and *out = f(*a, *b).  out may equal in (in-place transform). */
typedef void (*weft_unary_fn)(const void *in, void *out, void *arg);
typedef void (*weft_binary_fn)(const void *a, const void *b, void *out, void *arg);
/* *acc = *acc op *x.  op must be associative; it need not be commutative. */
typedef void (*weft_combine_fn)(void *acc, const void *x, void *arg);
/* Negative, zero, positive like qsort's, with a user argument. */
typedef int (*weft_cmp_fn)(const void *a, const void *b, void *arg);
typedef bool (*weft_elem_pred_fn)(const void *elem, void *arg);
/* Range reduction: writes the reduction of elements [lo, hi) (never empty) to acc. */
typedef void (*weft_reduce_range_fn)(size_t lo, size_t hi, void *acc, void *arg);
/* Range scan of [lo, hi): on entry *acc holds the combination of everything
 * before lo (if has_acc; else lo == 0 and there is nothing before it).  The body
 * writes the outputs of lo..hi-1 and may use *acc as its running value. */
typedef void (*weft_scan_range_fn)(size_t lo, size_t hi, void *acc, bool has_acc, void *arg);

/* ---- loops ------------------------------------------------------------------ */

/* Calls fn(i, arg) for i = first, first + step, ... while i < last (nothing if
 * first >= last).  step 0: WEFT_EINVAL.  The iterations are first + k * step
 * below last, computed without wrapping past SIZE_MAX: there are no negative
 * steps (a loop counting down, Taskflow's for_each_index(10, 0, -1)), and a
 * negative step cast to size_t gives `first` alone when first < last, nothing
 * otherwise; count down by looping up and using last - 1 - i (weft.hpp's
 * for_each_index takes negative steps and does that). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_for(weft_executor *ex, size_t first, size_t last,
                                                      size_t step, weft_index_fn fn, void *arg,
                                                      const weft_algo_config *cfg);

/* Calls body(lo, hi, arg) on sub-ranges that together cover the iterations of
 * (first, last, step) once each.  lo is always an iteration (first + k * step)
 * and hi is the exclusive end: the body loops `for (i = lo; i < hi; i += step)`.
 * When the last iteration plus step can pass SIZE_MAX (a range ending near
 * SIZE_MAX with step > 1), `i += step` wraps to a small index that is still
 * below hi, and that loop goes on; write it as
 * `for (i = lo;; i += step) { ...; if (hi - i <= step) break; }` (what
 * weft_parallel_for does). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_for_range(weft_executor *ex, size_t first,
                                                            size_t last, size_t step,
                                                            weft_range_fn body, void *arg,
                                                            const weft_algo_config *cfg);

/* Calls fn(elem, arg) on each of the n elements of `size` bytes at base. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_for_each(weft_executor *ex, void *base, size_t n,
                                                           size_t size, weft_elem_fn fn, void *arg,
                                                           const weft_algo_config *cfg);

/* out[i] = f(in[i]) for i < n; element sizes in_size and out_size.  out may
 * equal in (then the sizes must match); other overlaps are undefined. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_transform(weft_executor *ex, const void *in,
                                                            size_t in_size, void *out,
                                                            size_t out_size, size_t n,
                                                            weft_unary_fn f, void *arg,
                                                            const weft_algo_config *cfg);

/* out[i] = f(a[i], b[i]) for i < n.  out may equal a or b (in place over that
 * input: then out_size must equal its size, else WEFT_EINVAL and nothing is
 * written); other overlaps are undefined. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_transform2(weft_executor *ex, const void *a,
                                                             size_t a_size, const void *b,
                                                             size_t b_size, void *out,
                                                             size_t out_size, size_t n,
                                                             weft_binary_fn f, void *arg,
                                                             const weft_algo_config *cfg);

/* ---- reductions ------------------------------------------------------------- */

/* *result = *result op in[0] op in[1] op ... op in[n-1], in that order of
 * operands (op must be associative, need not be commutative, needs no identity:
 * *result is the initial value).  n == 0 leaves *result unchanged. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_reduce(weft_executor *ex, const void *in,
                                                         size_t n, size_t size, void *result,
                                                         weft_combine_fn op, void *arg,
                                                         const weft_algo_config *cfg);

/* *result = *result op map(in[0]) op ... op map(in[n-1]); map writes an
 * acc_size-byte value. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_transform_reduce(
    weft_executor *ex, const void *in, size_t n, size_t in_size, size_t acc_size, void *result,
    weft_unary_fn map, weft_combine_fn op, void *arg, const weft_algo_config *cfg);

/* The range form: *result = *result op r(chunk 0) op r(chunk 1) ..., where
 * body(lo, hi, acc, arg) writes r(chunk) for [lo, hi) of [0, n). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_reduce_range(
    weft_executor *ex, size_t n, size_t acc_size, void *result, weft_reduce_range_fn body,
    weft_combine_fn op, void *arg, const weft_algo_config *cfg);

/* Index of the first smallest (min) / first largest (max) element under cmp, or
 * of the first element for which pred is true (find_if); n if there is none
 * (n == 0, or no element matches).  With a cmp that is not a strict weak order
 * the index is some index below n (which one is unspecified). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_min_element(weft_executor *ex, const void *in,
                                                              size_t n, size_t size,
                                                              weft_cmp_fn cmp, void *arg,
                                                              size_t *index,
                                                              const weft_algo_config *cfg);
WEFT_API WEFT_NODISCARD weft_status weft_parallel_max_element(weft_executor *ex, const void *in,
                                                              size_t n, size_t size,
                                                              weft_cmp_fn cmp, void *arg,
                                                              size_t *index,
                                                              const weft_algo_config *cfg);
WEFT_API WEFT_NODISCARD weft_status weft_parallel_find_if(weft_executor *ex, const void *in,
                                                          size_t n, size_t size,
                                                          weft_elem_pred_fn pred, void *arg,
                                                          size_t *index,
                                                          const weft_algo_config *cfg);

/* ---- scans -------------------------------------------------------------------- */

/* Inclusive: out[i] = init op in[0] op ... op in[i]; init may be NULL (no initial
 * value).  Exclusive: out[i] = init op in[0] op ... op in[i-1] (out[0] = init);
 * init is required.  out may equal in.  init may point into in or out (say the
 * last element, as a C++ caller passing v.back() by value would): its value
 * is copied before any output is written, as weft_parallel_scan_range says.
 * A blocked scan with fixed chunks: the
 * prefix before chunk k is init op r(0) op ... op r(k-1), combined left to
 * right, with r(j) chunk j's own reduction, and chunk k is scanned from it, so
 * results are the same bits on every run and, except with GUIDED (whose chunks
 * depend on the task count: the same bits for a given worker count and
 * max_tasks, as for reductions), on every worker count.  One pass over memory:
 * with one task the chunks run in order, each scanned and reduced at once;
 * with several, chunks publish their reduction, then their prefix (decoupled
 * look-back, Merrill and Garland 2016).  The operation (and the range bodies
 * below) must not wait for other work of the same executor (no nested
 * parallel call, no future wait): a chunk waits for its predecessors by
 * spinning, and a nested wait could stack a later chunk on top of it. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_inclusive_scan(
    weft_executor *ex, const void *in, void *out, size_t n, size_t size, const void *init,
    weft_combine_fn op, void *arg, const weft_algo_config *cfg);
WEFT_API WEFT_NODISCARD weft_status weft_parallel_exclusive_scan(
    weft_executor *ex, const void *in, void *out, size_t n, size_t size, const void *init,
    weft_combine_fn op, void *arg, const weft_algo_config *cfg);

/* The range form behind both (and behind the typed scans): reduce(lo, hi, acc)
 * writes the reduction of [lo, hi) to acc; scan(lo, hi, acc, has_acc) writes
 * the outputs of [lo, hi) from the prefix in acc.  init (acc_size bytes) may be
 * NULL, and may point into memory the bodies write (the output: a scan that
 * continues from an element of its own array): it is copied before any body
 * runs. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_scan_range(
    weft_executor *ex, size_t n, size_t acc_size, const void *init, weft_reduce_range_fn reduce,
    weft_scan_range_fn scan, weft_combine_fn op, void *arg, const weft_algo_config *cfg);

/* A one-pass range body: does what the scan body does for [lo, hi) and, in the
 * same pass, writes to *total what the reduce body would write for [lo, hi)
 * (the same operations in the same order, so the same bits). */
typedef void (*weft_scan_reduce_range_fn)(size_t lo, size_t hi, void *acc, bool has_acc,
                                          void *total, void *arg);

/* weft_parallel_scan_range_fused with a config of cfg_size bytes (see "config
 * sizes"): what the inline function of that name calls. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_scan_range_fused_sized(
    weft_executor *ex, size_t n, size_t acc_size, const void *init, weft_reduce_range_fn reduce,
    weft_scan_range_fn scan, weft_scan_reduce_range_fn scan_reduce, weft_combine_fn op, void *arg,
    const weft_algo_config *cfg, size_t cfg_size);

/* weft_parallel_scan_range with a one-pass body besides (the typed scans use
 * it): a chunk whose prefix is known when it starts (every chunk when the call
 * runs as one task) is scanned and reduced in one pass over its elements, the
 * others are reduced, then scanned.  The results are those of
 * weft_parallel_scan_range with the same bodies, bit for bit; scan_reduce NULL
 * is weft_parallel_scan_range.  Errors and thread-safety as there.  The name
 * is an inline function passing this header's sizeof weft_algo_config to the
 * exported _sized form above (see "config sizes"). */
WEFT_NODISCARD static inline weft_status weft_parallel_scan_range_fused(
    weft_executor *ex, size_t n, size_t acc_size, const void *init, weft_reduce_range_fn reduce,
    weft_scan_range_fn scan, weft_scan_reduce_range_fn scan_reduce, weft_combine_fn op, void *arg,
    const weft_algo_config *cfg) {
    return weft_parallel_scan_range_fused_sized(ex, n, acc_size, init, reduce, scan, scan_reduce, op,
                                                arg, cfg, sizeof(weft_algo_config));
}

/* The size of an output, in bytes, from which the typed scans of algo_typed.h
 * write it with streaming (non-temporal) stores, on x86-64: the size of the
 * largest cache of CPU 0 as /sys gives it (32 MiB when /sys does not say),
 * read once per process.  An output that large
 * cannot stay in cache for its reader anyway, and stores that go round the
 * cache save reading each line before writing it (a scan of 10^7 64-bit
 * values out of cache: ~0.8x the time); a smaller output is written normally,
 * for the reader to find in cache.  An in-place scan (in == out) never
 * streams.  Never fails, allocates nothing; any thread. */
WEFT_API size_t weft_algo_stream_bytes(void);

/* ---- sorting -------------------------------------------------------------------- */

/* Sorts n elements of `size` bytes at base in ascending order of cmp.  The
 * stable form keeps equal elements in their original order.  A parallel merge
 * sort: blocks sorted in parallel, then merged in parallel rounds (each merge
 * split by binary search); it allocates a buffer of n * size bytes.  (The
 * generic weft_parallel_sort happens to be stable as well; the typed name_sort of
 * algo_typed.h is not.)
 * cmp should be a strict weak order.  If it is not (doubles holding NaN compared
 * with < and >, the overflowing `a - b`, a random or changing answer), the
 * array ends in an unspecified order, but always as a permutation of its input,
 * and the sort reads and writes nothing outside base[0..n) and its buffer.  One
 * merge round may then run on the calling thread alone. */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_sort(weft_executor *ex, void *base, size_t n,
                                                       size_t size, weft_cmp_fn cmp, void *arg,
                                                       const weft_algo_config *cfg);
WEFT_API WEFT_NODISCARD weft_status weft_parallel_stable_sort(weft_executor *ex, void *base,
                                                              size_t n, size_t size,
                                                              weft_cmp_fn cmp, void *arg,
                                                              const weft_algo_config *cfg);

/* The kernels a typed sort supplies (algo_typed.h fills this in).  All work on
 * arrays of the sort's element type; `arg` is passed through.  Each must stay
 * within the arrays it is given and leave a permutation of its input whatever
 * its comparisons say; the driver checks what split returns (a value outside
 * the runs, or cuts that cross, make it merge the pair whole), so a split that
 * is wrong never costs memory safety.  What it cannot check without comparing
 * elements is a cut inside the runs that is not where the merge would cut (a
 * split off by one): the pieces are then merged as cut, and the array ends a
 * permutation of its input in an unspecified order, as with a comparison that
 * is not a strict weak order. */
typedef struct weft_sort_ops {
    /* Sorts a[0..n) in place; buf has room for n elements (scratch). */
    void (*sort)(void *a, size_t n, void *buf, void *arg);
    /* Merges sorted a[0..na) and b[0..nb) into out; on ties a's elements first. */
    void (*merge)(const void *a, size_t na, const void *b, size_t nb, void *out, void *arg);
    /* The number i of elements taken from a among the first k outputs of that
     * merge (0 <= k <= na + nb). */
    size_t (*split)(const void *a, size_t na, const void *b, size_t nb, size_t k, void *arg);
} weft_sort_ops;

/* Parallel merge sort driven by typed kernels (stable if ops->sort is). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_sort_ops(weft_executor *ex, void *base,
                                                           size_t n, size_t size,
                                                           const weft_sort_ops *ops, void *arg,
                                                           const weft_algo_config *cfg);

/* ---- as graph tasks -----------------------------------------------------------
 *
 * Each descriptor holds the arguments of the direct call of the same name.  The
 * emplace functions add a task that runs that call when the task runs, reading
 * the descriptor then.  Errors as weft_emplace (the null task, with
 * weft_taskflow_last_error); a NULL descriptor is WEFT_EINVAL.  Thread-safety as
 * weft_emplace: one thread changes a taskflow at a time.  The descriptor is not
 * copied; it must outlive the taskflow's runs. */

/* The arguments of weft_parallel_for_range, for weft_emplace_for. */
typedef struct weft_for_desc {
    size_t first, /* the first iteration */
        last,     /* the end (exclusive): nothing runs if first >= last */
        step;     /* distance between iterations, >= 1 (0: the task fails, WEFT_EINVAL) */
    weft_range_fn body; /* called on sub-ranges [lo, hi); required */
    void *arg;          /* passed to body */
    weft_algo_config config; /* options; all zero: the defaults */
} weft_for_desc;

/* The arguments of weft_parallel_transform (out[i] = f(in[i])), for
 * weft_emplace_transform. */
typedef struct weft_transform_desc {
    const void *in;   /* n elements of in_size bytes (may be NULL when n is 0) */
    size_t in_size;   /* bytes per input element, >= 1 */
    void *out;        /* n elements of out_size bytes; may equal in if the sizes match */
    size_t out_size,  /* bytes per output element, >= 1 */
        n;            /* elements to transform (0: nothing to do) */
    weft_unary_fn f;  /* writes *out from *in; required */
    void *arg;        /* passed to f */
    weft_algo_config config; /* options; all zero: the defaults */
} weft_transform_desc;

/* The arguments of weft_parallel_reduce, for weft_emplace_reduce. */
typedef struct weft_reduce_desc {
    const void *in; /* n elements of size bytes (may be NULL when n is 0) */
    size_t n,       /* elements to reduce (0: *result stays as it is) */
        size;       /* bytes per element, >= 1 */
    void *result; /* initial value in, result out */
    weft_combine_fn op; /* associative (not necessarily commutative); required */
    void *arg;          /* passed to op */
    weft_algo_config config; /* options; all zero: the defaults */
} weft_reduce_desc;

/* The arguments of weft_parallel_inclusive_scan / _exclusive_scan, for
 * weft_emplace_scan. */
typedef struct weft_scan_desc {
    const void *in; /* n elements of size bytes (may be NULL when n is 0) */
    void *out;      /* n elements of size bytes; may equal in */
    size_t n,       /* elements to scan */
        size;       /* bytes per element, >= 1 */
    const void *init; /* initial value (size bytes); NULL: none, inclusive scans only */
    weft_combine_fn op; /* associative (not necessarily commutative); required */
    void *arg;          /* passed to op */
    bool exclusive;     /* true: exclusive scan (init required); false: inclusive */
    weft_algo_config config; /* options; all zero: the defaults */
} weft_scan_desc;

/* The arguments of weft_parallel_sort / _stable_sort, for weft_emplace_sort. */
typedef struct weft_sort_desc {
    void *base;     /* n elements of size bytes, sorted in place */
    size_t n,       /* elements to sort */
        size;       /* bytes per element, >= 1 */
    weft_cmp_fn cmp; /* a strict weak order (qsort's convention); required */
    void *arg;       /* passed to cmp */
    bool stable; /* weft_parallel_stable_sort rather than weft_parallel_sort */
    weft_algo_config config; /* options; all zero: the defaults (sorts ignore the partitioner) */
} weft_sort_desc;

/* Add a task that makes the call its descriptor names (see "as graph tasks"). */
WEFT_API weft_task weft_emplace_for(weft_taskflow *tf, const weft_for_desc *d);
WEFT_API weft_task weft_emplace_transform(weft_taskflow *tf, const weft_transform_desc *d);
WEFT_API weft_task weft_emplace_reduce(weft_taskflow *tf, const weft_reduce_desc *d);
WEFT_API weft_task weft_emplace_scan(weft_taskflow *tf, const weft_scan_desc *d);
WEFT_API weft_task weft_emplace_sort(weft_taskflow *tf, const weft_sort_desc *d);

/* ---- config sizes (docs/abi.md) -------------------------------------------------
 *
 * Each call above that takes a weft_algo_config has a _sized form, told the
 * sizeof weft_algo_config the caller was compiled with (cfg_size).  A program
 * never names them: the header defines each call's name as an inline function
 * that passes this header's size.  A shorter config (an older header) reads
 * as zero, the defaults, for the fields it lacks; a longer one (a newer
 * header) is WEFT_EINVAL, logged with the offset, unless every byte this
 * library does not know is zero.  Otherwise each behaves, fails and may be
 * called exactly as the call of its name without _sized.  The exported
 * symbols without _sized, which binaries built before the sizes were passed
 * call, read the 1.0 layout. */

/* weft_parallel_for with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_for_sized(weft_executor *ex, size_t first,
                                                            size_t last, size_t step,
                                                            weft_index_fn fn, void *arg,
                                                            const weft_algo_config *cfg,
                                                            size_t cfg_size);
/* weft_parallel_for_range with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_for_range_sized(weft_executor *ex, size_t first,
                                                                  size_t last, size_t step,
                                                                  weft_range_fn body, void *arg,
                                                                  const weft_algo_config *cfg,
                                                                  size_t cfg_size);
/* weft_parallel_for_each with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_for_each_sized(weft_executor *ex, void *base,
                                                                 size_t n, size_t size,
                                                                 weft_elem_fn fn, void *arg,
                                                                 const weft_algo_config *cfg,
                                                                 size_t cfg_size);
/* weft_parallel_transform with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_transform_sized(
    weft_executor *ex, const void *in, size_t in_size, void *out, size_t out_size, size_t n,
    weft_unary_fn f, void *arg, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_transform2 with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_transform2_sized(
    weft_executor *ex, const void *a, size_t a_size, const void *b, size_t b_size, void *out,
    size_t out_size, size_t n, weft_binary_fn f, void *arg, const weft_algo_config *cfg,
    size_t cfg_size);
/* weft_parallel_reduce with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_reduce_sized(weft_executor *ex, const void *in,
                                                               size_t n, size_t size, void *result,
                                                               weft_combine_fn op, void *arg,
                                                               const weft_algo_config *cfg,
                                                               size_t cfg_size);
/* weft_parallel_transform_reduce with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_transform_reduce_sized(
    weft_executor *ex, const void *in, size_t n, size_t in_size, size_t acc_size, void *result,
    weft_unary_fn map, weft_combine_fn op, void *arg, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_reduce_range with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_reduce_range_sized(
    weft_executor *ex, size_t n, size_t acc_size, void *result, weft_reduce_range_fn body,
    weft_combine_fn op, void *arg, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_min_element with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_min_element_sized(
    weft_executor *ex, const void *in, size_t n, size_t size, weft_cmp_fn cmp, void *arg,
    size_t *index, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_max_element with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_max_element_sized(
    weft_executor *ex, const void *in, size_t n, size_t size, weft_cmp_fn cmp, void *arg,
    size_t *index, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_find_if with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_find_if_sized(
    weft_executor *ex, const void *in, size_t n, size_t size, weft_elem_pred_fn pred, void *arg,
    size_t *index, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_inclusive_scan with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_inclusive_scan_sized(
    weft_executor *ex, const void *in, void *out, size_t n, size_t size, const void *init,
    weft_combine_fn op, void *arg, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_exclusive_scan with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_exclusive_scan_sized(
    weft_executor *ex, const void *in, void *out, size_t n, size_t size, const void *init,
    weft_combine_fn op, void *arg, const weft_algo_config *cfg, size_t cfg_size);
/* weft_parallel_scan_range with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_scan_range_sized(
    weft_executor *ex, size_t n, size_t acc_size, const void *init, weft_reduce_range_fn reduce,
    weft_scan_range_fn scan, weft_combine_fn op, void *arg, const weft_algo_config *cfg,
    size_t cfg_size);
/* weft_parallel_sort with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_sort_sized(weft_executor *ex, void *base,
                                                             size_t n, size_t size, weft_cmp_fn cmp,
                                                             void *arg, const weft_algo_config *cfg,
                                                             size_t cfg_size);
/* weft_parallel_stable_sort with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_stable_sort_sized(weft_executor *ex, void *base,
                                                                    size_t n, size_t size,
                                                                    weft_cmp_fn cmp, void *arg,
                                                                    const weft_algo_config *cfg,
                                                                    size_t cfg_size);
/* weft_parallel_sort_ops with a config of cfg_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_parallel_sort_ops_sized(
    weft_executor *ex, void *base, size_t n, size_t size, const weft_sort_ops *ops, void *arg,
    const weft_algo_config *cfg, size_t cfg_size);

#ifndef WEFT_BUILDING
WEFT_NODISCARD static inline weft_status weft__parallel_for_inline(weft_executor *ex, size_t first,
                                                                   size_t last, size_t step,
                                                                   weft_index_fn fn, void *arg,
                                                                   const weft_algo_config *cfg) {
    return weft_parallel_for_sized(ex, first, last, step, fn, arg, cfg, sizeof(weft_algo_config));
}
#define weft_parallel_for weft__parallel_for_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_for_range_inline(weft_executor *ex, size_t first, size_t last, size_t step,
                                weft_range_fn body, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_for_range_sized(ex, first, last, step, body, arg, cfg,
                                         sizeof(weft_algo_config));
}
#define weft_parallel_for_range weft__parallel_for_range_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_for_each_inline(weft_executor *ex, void *base, size_t n, size_t size,
                               weft_elem_fn fn, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_for_each_sized(ex, base, n, size, fn, arg, cfg, sizeof(weft_algo_config));
}
#define weft_parallel_for_each weft__parallel_for_each_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_transform_inline(weft_executor *ex, const void *in, size_t in_size, void *out,
                                size_t out_size, size_t n, weft_unary_fn f, void *arg,
                                const weft_algo_config *cfg) {
    return weft_parallel_transform_sized(ex, in, in_size, out, out_size, n, f, arg, cfg,
                                         sizeof(weft_algo_config));
}
#define weft_parallel_transform weft__parallel_transform_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_transform2_inline(weft_executor *ex, const void *a, size_t a_size, const void *b,
                                 size_t b_size, void *out, size_t out_size, size_t n,
                                 weft_binary_fn f, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_transform2_sized(ex, a, a_size, b, b_size, out, out_size, n, f, arg, cfg,
                                          sizeof(weft_algo_config));
}
#define weft_parallel_transform2 weft__parallel_transform2_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_reduce_inline(weft_executor *ex, const void *in, size_t n, size_t size, void *result,
                             weft_combine_fn op, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_reduce_sized(ex, in, n, size, result, op, arg, cfg,
                                      sizeof(weft_algo_config));
}
#define weft_parallel_reduce weft__parallel_reduce_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_transform_reduce_inline(weft_executor *ex, const void *in, size_t n, size_t in_size,
                                       size_t acc_size, void *result, weft_unary_fn map,
                                       weft_combine_fn op, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_transform_reduce_sized(ex, in, n, in_size, acc_size, result, map, op, arg,
                                                cfg, sizeof(weft_algo_config));
}
#define weft_parallel_transform_reduce weft__parallel_transform_reduce_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_reduce_range_inline(weft_executor *ex, size_t n, size_t acc_size, void *result,
                                   weft_reduce_range_fn body, weft_combine_fn op, void *arg,
                                   const weft_algo_config *cfg) {
    return weft_parallel_reduce_range_sized(ex, n, acc_size, result, body, op, arg, cfg,
                                            sizeof(weft_algo_config));
}
#define weft_parallel_reduce_range weft__parallel_reduce_range_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_min_element_inline(weft_executor *ex, const void *in, size_t n, size_t size,
                                  weft_cmp_fn cmp, void *arg, size_t *index,
                                  const weft_algo_config *cfg) {
    return weft_parallel_min_element_sized(ex, in, n, size, cmp, arg, index, cfg,
                                           sizeof(weft_algo_config));
}
#define weft_parallel_min_element weft__parallel_min_element_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_max_element_inline(weft_executor *ex, const void *in, size_t n, size_t size,
                                  weft_cmp_fn cmp, void *arg, size_t *index,
                                  const weft_algo_config *cfg) {
    return weft_parallel_max_element_sized(ex, in, n, size, cmp, arg, index, cfg,
                                           sizeof(weft_algo_config));
}
#define weft_parallel_max_element weft__parallel_max_element_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_find_if_inline(weft_executor *ex, const void *in, size_t n, size_t size,
                              weft_elem_pred_fn pred, void *arg, size_t *index,
                              const weft_algo_config *cfg) {
    return weft_parallel_find_if_sized(ex, in, n, size, pred, arg, index, cfg,
                                       sizeof(weft_algo_config));
}
#define weft_parallel_find_if weft__parallel_find_if_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_inclusive_scan_inline(weft_executor *ex, const void *in, void *out, size_t n,
                                     size_t size, const void *init, weft_combine_fn op, void *arg,
                                     const weft_algo_config *cfg) {
    return weft_parallel_inclusive_scan_sized(ex, in, out, n, size, init, op, arg, cfg,
                                              sizeof(weft_algo_config));
}
#define weft_parallel_inclusive_scan weft__parallel_inclusive_scan_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_exclusive_scan_inline(weft_executor *ex, const void *in, void *out, size_t n,
                                     size_t size, const void *init, weft_combine_fn op, void *arg,
                                     const weft_algo_config *cfg) {
    return weft_parallel_exclusive_scan_sized(ex, in, out, n, size, init, op, arg, cfg,
                                              sizeof(weft_algo_config));
}
#define weft_parallel_exclusive_scan weft__parallel_exclusive_scan_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_scan_range_inline(weft_executor *ex, size_t n, size_t acc_size, const void *init,
                                 weft_reduce_range_fn reduce, weft_scan_range_fn scan,
                                 weft_combine_fn op, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_scan_range_sized(ex, n, acc_size, init, reduce, scan, op, arg, cfg,
                                          sizeof(weft_algo_config));
}
#define weft_parallel_scan_range weft__parallel_scan_range_inline
WEFT_NODISCARD static inline weft_status weft__parallel_sort_inline(weft_executor *ex, void *base,
                                                                    size_t n, size_t size,
                                                                    weft_cmp_fn cmp, void *arg,
                                                                    const weft_algo_config *cfg) {
    return weft_parallel_sort_sized(ex, base, n, size, cmp, arg, cfg, sizeof(weft_algo_config));
}
#define weft_parallel_sort weft__parallel_sort_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_stable_sort_inline(weft_executor *ex, void *base, size_t n, size_t size,
                                  weft_cmp_fn cmp, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_stable_sort_sized(ex, base, n, size, cmp, arg, cfg,
                                           sizeof(weft_algo_config));
}
#define weft_parallel_stable_sort weft__parallel_stable_sort_inline
WEFT_NODISCARD static inline weft_status
weft__parallel_sort_ops_inline(weft_executor *ex, void *base, size_t n, size_t size,
                               const weft_sort_ops *ops, void *arg, const weft_algo_config *cfg) {
    return weft_parallel_sort_ops_sized(ex, base, n, size, ops, arg, cfg, sizeof(weft_algo_config));
}
#define weft_parallel_sort_ops weft__parallel_sort_ops_inline
#endif

WEFT_EXTERN_C_END
#endif
