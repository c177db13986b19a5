/* The process-wide default executor: one pool that every library of a program
 * shares by passing NULL where an executor is taken, as oneTBB's implicit arena
 * and OpenMP's thread pool are shared.
 *
 * One word holds the state: the fork generation it belongs to (bits 2 and up)
 * and its phase (bits 0-1).  The first caller moves NONE -> CREATING by CAS and
 * creates the executor; others wait for READY (creation takes about as long as
 * starting the workers).  A failed creation goes back to NONE, so a later call
 * tries again.  In a child process after fork() the word names an older
 * generation: the parent's executor has no workers there (core/executor.h,
 * weft__forked), so the child's first caller creates a fresh one and the old
 * one is left as it is, as weft_executor_destroy would leave it.  At exit the
 * handler moves READY -> GONE and destroys the executor; from then on callers
 * get WEFT_ESHUTDOWN instead of a freed pointer. */
#include "core/default_executor.h"
#include "core/error_detail.h"
#include "platform/platform.h"

#include <stdint.h>
#include <stdlib.h>

enum { NONE = 0, CREATING = 1, READY = 2, GONE = 3 };

static _Atomic uint64_t state;   /* generation << 2 | phase */
static weft_executor *dflt;      /* set before READY is published (release) */
static weft_executor *parents;   /* a fork child's inherited one, kept reachable (leak checkers) */
static bool exit_handler_set;    /* written by creators only, one at a time (the CAS orders them) */
/* The default executor while exit drains it (destroy_at_exit), else NULL: its
 * own tasks still get it for NULL (weft__default_executor_get). */
static _Atomic(weft_executor *) draining;

static uint64_t state_word(uint32_t gen, unsigned phase) { return (uint64_t)gen << 2 | phase; }

static uint32_t generation(void) { return atomic_load_explicit(&weft__fork_generation, memory_order_relaxed); }

/* Runs at exit (registered after the executor was made, so it runs before
 * handlers registered earlier, such as observe/'s profile-at-exit one). */
static void destroy_at_exit(void) {
    uint64_t s = state_word(generation(), READY);
    /* Its tasks may see GONE as soon as the CAS below makes it: draining is
     * set first, so they still get it for NULL (weft__default_executor_get).
     * Acquire: pairs with the creator's release of READY (dflt is visible). */
    if (atomic_load_explicit(&state, memory_order_acquire) != s) return; /* never made, being made, or gone */
    atomic_store_explicit(&draining, dflt, memory_order_seq_cst);
    /* acq_rel: release orders GONE before the teardown below. */
    if (!atomic_compare_exchange_strong_explicit(&state, &s, state_word(generation(), GONE),
                                                 memory_order_acq_rel, memory_order_relaxed)) {
        atomic_store_explicit(&draining, NULL, memory_order_relaxed);
        return; /* gone already (another thread's exit) */
    }
    /* exit() from one of its own tasks: it cannot wait for itself; its workers
     * end with the process (and draining stays set for its tasks). */
    if (weft_executor_worker_id(dflt) >= 0) return;
    weft_executor_destroy(dflt); /* finishes every run in flight, as destroy always does */
    atomic_store_explicit(&draining, NULL, memory_order_relaxed); /* its workers are joined */
}

static weft_status create(uint32_t gen, weft_executor **out) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(NULL, &err);
    if (!ex) {
        /* Release: the next creator's CAS sees exit_handler_set as left here. */
        atomic_store_explicit(&state, state_word(gen, NONE), memory_order_release);
        weft__set_error_message("the default executor could not be created: %s", weft_strerror(err));
        return err;
    }
    dflt = ex;
    /* Once per process: a child of fork() inherits the registration. */
    if (!exit_handler_set) exit_handler_set = atexit(destroy_at_exit) == 0;
    atomic_store_explicit(&state, state_word(gen, READY), memory_order_release); /* publishes dflt */
    *out = ex;
    return WEFT_OK;
}

weft_status weft__default_executor_get(weft_executor **out) {
    unsigned spins = 0;
    for (;;) {
        uint32_t gen = generation();
        /* Acquire: pairs with the release of READY in create (dflt is set). */
        uint64_t s = atomic_load_explicit(&state, memory_order_acquire);
        unsigned phase = (uint32_t)(s >> 2) == gen ? (unsigned)(s & 3) : NONE; /* older: the parent's */
        if (phase == READY) {
            *out = dflt;
            return WEFT_OK;
        }
        if (phase == GONE) {
            /* A task of it, run while exit drains it: the runs it starts
             * belong to the runs exit waits for (weft/core.h), so passing
             * NULL still means this executor, alive until its workers end.
             * A worker thread identifies it: no other thread sees it again. */
            weft_executor *d = atomic_load_explicit(&draining, memory_order_acquire);
            if (d && weft_executor_worker_id(d) >= 0) {
                *out = d;
                return WEFT_OK;
            }
            weft__set_error_message("the default executor was destroyed at exit");
            return WEFT_ESHUTDOWN;
        }
        if (phase == CREATING) {
            weft__spin_pause(&spins); /* another thread is starting the workers */
            continue;
        }
        /* Acquire on success: orders this creator after the previous one's
         * release (exit_handler_set). */
        if (atomic_compare_exchange_strong_explicit(&state, &s, state_word(gen, CREATING),
                                                    memory_order_acquire, memory_order_relaxed)) {
            if ((s & 3) == READY) parents = dflt; /* the parent's, left as it is */
            return create(gen, out);
        }
    }
}

weft_executor *weft_default_executor(void) {
    weft_executor *ex = NULL;
    return weft__default_executor_get(&ex) == WEFT_OK ? ex : NULL;
}

bool weft__is_default_executor(const weft_executor *ex) {
    uint64_t s = atomic_load_explicit(&state, memory_order_acquire);
    return (s & 3) == READY && dflt == ex;
}
