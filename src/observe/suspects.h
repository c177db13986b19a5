/* The profiler's suspects: tasks that ran long inside a batch of short ones
 * (task_hooks.c batches; suspects.c keeps the executor-wide set).  Internal to
 * src/observe. */
#ifndef WEFT_OBSERVE_SUSPECTS_H
#define WEFT_OBSERVE_SUSPECTS_H

#include "observe/obs.h"
#include "graph/graph.h"

/* ---- suspects: tasks that ran long inside a batch --------------------------------
 *
 * A batch closes with one clock read, so a task that ran long inside it cannot
 * be told from the short ones beside it: the batch only shows that it took
 * more than its tasks were expected to (the last stretch's average each) by
 * over batch_long.  Its spans are then marked WEFT__EST_LONG (readers keep them
 * out of "slowest"), and its tasks become suspects: keyed by (taskflow, index)
 * in a small executor-wide set, never batched again, so the long one is
 * measured from its next run on.  (Reading the clock at each batched end
 * would find it at once, but costs 2 ns per task on the graph benchmarks,
 * where batching is meant to save that read: issue 15 measured it.  Stopping
 * all batching after such a batch was tried too: the OS stopping a worker for
 * a while inside a batch looks the same, and on a loaded machine that turned
 * batching off in most runs.)  The fast path tests one bit per index (a
 * bitmap, modulo its size; a stray hit only costs an exact timing), and only
 * while there are suspects found in another run or iteration than the
 * batch's (suspects_on, read at each batch_open: the current iteration's
 * tasks ran already, and a test per task cost the profiled graph benchmarks
 * 4%).  A suspect timed alone that runs short is let go (weft__obs_drop_suspect): on a
 * busy machine most suspects are the OS's doing, and the test stops once none
 * is left.  The set is filled with CAS, up to half its slots per recording.
 *
 * A batch closed when the worker ran out of work (not tight) also holds the
 * worker's time after its last task: ending the run, waking a waiter, looking
 * for work.  An overrun there marks the spans but makes only the last task a
 * suspect (a long task there is the last one; the rest of the overrun is the
 * worker's). */

/* Which run and iteration of it run r's tasks belong to (the outermost run's
 * id and iterations ended), as one word that is neither 0 nor UINT64_MAX:
 * what suspects_when holds (below). */
static inline uint64_t suspect_when(const weft__run *r) {
    uint64_t w = (r->top->id << 24) + atomic_load_explicit(&r->top->iterations, memory_order_relaxed) + 1;
    return w == UINT64_MAX ? 1 : w;
}

/* A taskflow's offset in the suspects' bitmap (suspect_bit_at below). */
static inline uint32_t suspect_tfh(const void *tf) {
    return (uint32_t)(((uint64_t)(uintptr_t)tf * 0x9e3779b97f4a7c15ull) >> 48);
}

/* The bitmap's bit for task `index` of a taskflow is index ^ tfh (mod 1 << 16),
 * tfh its suspect_tfh: the tasks of one taskflow take distinct bits (up
 * to 65536 of them), and 256 suspects give a stray hit to one task in 256 at
 * most.  A batch holds one taskflow, so the fast path's test is an xor, a load
 * and a shift (the full key's hash cost ~12 instructions per task, paid by
 * every batched task once a worker had seen a suspect). */
static inline bool suspect_bit_at(const struct weft__obs *o, uint32_t tfh, uint32_t index) {
    uint32_t b = (index ^ tfh) % WEFT__SUSPECT_BITS;
    return atomic_load_explicit((_Atomic uint64_t *)&o->suspect_bits[b / 64], memory_order_relaxed) >> (b % 64) & 1;
}

/* Whether task `index` of taskflow tf is a suspect (timed alone). */
bool weft__obs_is_suspect(const struct weft__obs *o, const void *tf, uint32_t index);
/* Makes task `index` of tf a suspect (a batch that held it ran long). */
void weft__obs_add_suspect(struct weft__obs *o, const void *tf, uint32_t index);
/* Lets a suspect that ran short go back to batching. */
void weft__obs_drop_suspect(struct weft__obs *o, const void *tf, uint32_t index);
/* Suspects were found in run-iteration `when` (suspect_when). */
void weft__obs_note_suspects_when(struct weft__obs *o, uint64_t when);

#endif
