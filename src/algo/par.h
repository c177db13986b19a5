/* The parallel engine of the algorithms.  Internal.
 *
 * Two layers.  weft__par_tasks runs fn(ctx, t, n) for t = 0..n-1 as n executor
 * jobs and returns when all have finished: fork-join built on the core's job API,
 * kept in par.c alone so it can later sit on the fork-join frames instead.  A
 * weft__plan cuts [0, n) into chunks for a partitioner (plan.c), and
 * weft__par_chunks runs a chunk function over every chunk of a plan. */
#ifndef WEFT_ALGO_PAR_H
#define WEFT_ALGO_PAR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/algo.h"
#include "core/future.h"       /* WEFT__STOP_MASK */
#include "platform/platform.h" /* WEFT__CACHE_LINE */

/* Runs fn(ctx, t, n) once for every t < n, spread over ex's workers, and
 * returns when every call has returned.  The caller's thread runs t = 0 when it
 * is one of ex's workers (and then helps with other jobs while it waits); any
 * other caller sleeps.  n is capped at what could be allocated (never 0), so fn
 * must take its share from t and the n it is given. */
typedef void (*weft__task_fn)(void *ctx, unsigned t, unsigned n);
void weft__par_tasks(weft_executor *ex, unsigned n, weft__task_fn fn, void *ctx);

/* This thread's settings for its algorithm calls, in one word so that a call
 * reads them with one load: bits 0..7 the priority (a weft_priority as a
 * signed char: weft_algo_set_priority), bits 8..31 the NUMA node hint
 * (WEFT_NUMA_NODE(n), 0 for none: weft_algo_set_numa_node); priority.c.  0,
 * NORMAL and no hint, is the plain path; any other value sends the jobs
 * through the scheduling layer's queue (a priority) or a node's mailbox (a
 * hint), and costs one thread-local load per call otherwise.  Initial-exec: a
 * load off the thread pointer, no __tls_get_addr call. */
extern _Thread_local uint32_t weft__algo_how __attribute__((tls_model("initial-exec")));
#define WEFT__HOW_NODE_SHIFT 8
static inline signed char weft__how_prio(uint32_t how) { return (signed char)(uint8_t)how; }
static inline unsigned weft__how_node(uint32_t how) { return how >> WEFT__HOW_NODE_SHIFT; }
/* The settings with the priority replaced (the hint kept). */
static inline uint32_t weft__how_with_prio(uint32_t how, signed char prio) {
    return (how & ~(uint32_t)0xff) | (uint8_t)prio;
}
/* The settings with the hint replaced (the priority kept). */
static inline uint32_t weft__how_with_node(uint32_t how, unsigned node_hint) {
    return (how & 0xffu) | ((uint32_t)node_hint << WEFT__HOW_NODE_SHIFT);
}

/* Chunks of [0, n).  Static and dynamic chunks are `chunk` elements each (the
 * last one shorter); guided chunks are listed in bounds[0..nchunks]. */
typedef struct weft__plan {
    weft_partitioner kind;
    size_t n, nchunks, chunk;
    size_t *bounds; /* guided only: nchunks + 1 entries */
    unsigned ntasks;
    bool batch; /* AUTO's shrinking plan: a claim may take a run of chunks (plan.c) */
    const weft_cancel_token *cancel; /* weft_algo_config.cancel */
    const _Atomic int *run_stop;     /* an emplaced call's run (weft__algo_take_run_stop), or NULL */
} weft__plan;

/* Default chunk policy of an algorithm: `fixed` (non-zero) makes every
 * partitioner use that default chunk size (scans); max_chunks caps the count. */
typedef struct weft__plan_rules {
    size_t fixed_chunk;
    size_t max_chunks;
    const char *call; /* the public call, for the error messages */
} weft__plan_rules;

/* Fills p for n elements.  WEFT_EINVAL for a bad partitioner, WEFT_ENOMEM. */
int weft__plan_init(weft__plan *p, weft_executor *ex, size_t n, const weft_algo_config *cfg,
                    weft__plan_rules rules);
void weft__plan_free(weft__plan *p);

static inline void weft__plan_chunk(const weft__plan *p, size_t k, size_t *lo, size_t *hi) {
    if (p->bounds) {
        *lo = p->bounds[k];
        *hi = p->bounds[k + 1];
        return;
    }
    *lo = k * p->chunk;
    /* Not lo + chunk < n: with a chunk near SIZE_MAX that sum wraps, and the
     * body got hi < lo (the rest of a range past 2^63 never ran). */
    *hi = p->n - *lo > p->chunk ? *lo + p->chunk : p->n;
}

/* Runs fn(ctx, k, lo, hi) for every chunk k of p.  Static plans give each task a
 * contiguous run of chunks; dynamic and guided plans (and any plan when
 * `in_order`) hand chunks out from a counter, so that chunk k is taken only after
 * every chunk before it has been taken (scans rely on that).  Returns WEFT_OK,
 * or WEFT_ECANCELED when p->cancel fired before every chunk was taken: chunks
 * are looked at before they are taken, so those that ran are the ones taken
 * (with a counter, a prefix of the chunks). */
typedef void (*weft__chunk_fn)(void *ctx, size_t k, size_t lo, size_t hi);
weft_status weft__par_chunks(weft_executor *ex, const weft__plan *p, bool in_order, weft__chunk_fn fn,
                             void *ctx);

/* For a chunk function that calls the user once per element (loops.c): looks
 * at the token of the call whose chunk this thread is running, and true when
 * it fired, after which the chunk should return at once.  The call then
 * returns WEFT_ECANCELED though every chunk was taken.  Called every
 * WEFT__CUT_EVERY elements and only with elements left, so that a cancelled
 * call with elements of 1 ms stops within 64 ms instead of at its chunks' ends
 * (1/32 of the loop under AUTO: 6152 elements ran after a cancel). */
#define WEFT__CUT_EVERY 64
bool weft__chunk_cut(void);

/* True once a call's token (weft_algo_config.cancel; NULL: never) is cancelled. */
static inline bool weft__algo_cancelled(const weft_cancel_token *t) {
    return t && weft_cancel_token_is_cancelled(t);
}

/* The stop word of the graph run whose emplaced algorithm task (task.c) is
 * making its call on this thread, or NULL: set by the task around the call
 * and taken (cleared) by the call's first plan or sort, so that a parallel
 * call nested in one of its chunks, made on this thread, does not see it.
 * Without it an emplaced call ran every chunk of a cancelled (or failed)
 * run, against "an algorithm emplaced in a taskflow stops with the
 * taskflow's run" (weft/cancel.h). */
extern _Thread_local const _Atomic int *weft__algo_run_stop __attribute__((tls_model("initial-exec")));
static inline const _Atomic int *weft__algo_take_run_stop(void) {
    const _Atomic int *s = weft__algo_run_stop;
    if (__builtin_expect(s != NULL, 0)) weft__algo_run_stop = NULL;
    return s;
}

/* True once the call must stop: its token cancelled, or its run (run_stop,
 * NULL for a direct call) cancelled or failed.  relaxed: a flag looked at
 * between chunks, guarding no data (as a pipeline's look at its run). */
static inline bool weft__algo_stopped(const weft_cancel_token *t, const _Atomic int *run_stop) {
    return weft__algo_cancelled(t) ||
           (run_stop && (atomic_load_explicit(run_stop, memory_order_relaxed) & WEFT__STOP_MASK));
}

/* Tasks a call may use: the executor's workers, capped by cfg->max_tasks when
 * set; at least 1 (plan.c). */
unsigned weft__task_limit(weft_executor *ex, const weft_algo_config *cfg);

/* A value slot of `bytes` bytes, aligned for any type: rounded up to 16. */
static inline size_t weft__acc_slot(size_t bytes) { return (bytes + 15) & ~(size_t)15; }
/* Rounded up to a whole number of cache lines: each chunk's slots on lines of
 * their own, since a chunk body may write its accumulator once per element and
 * neighbouring chunks run on different workers. */
static inline size_t weft__line_round(size_t bytes) {
    return (bytes + WEFT__CACHE_LINE - 1) & ~(size_t)(WEFT__CACHE_LINE - 1);
}

/* The chunk cap of a call keeping `per_chunk` bytes of state for each chunk
 * (a reduction's accumulator, a scan's slots): max_chunks, lowered so that
 * the state stays within 16 MiB, but never below 64 chunks.  Capping the
 * count alone let a 16 KiB accumulator with chunk 1 ask for 1 GB (65536
 * chunks).  It depends on sizes only, never on the workers, so the chunk
 * boundaries (and a floating-point result's bits) do not either. */
static inline size_t weft__state_max_chunks(size_t max_chunks, size_t per_chunk) {
    size_t cap = per_chunk ? ((size_t)16 << 20) / per_chunk : max_chunks;
    if (cap < 64) cap = 64;
    return cap < max_chunks ? cap : max_chunks;
}

#endif
