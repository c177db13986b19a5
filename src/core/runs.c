/* Runs in flight and weft_executor_wait_all.
 *
 * Each worker counts the runs (graph runs, async tasks, roots, parallel loops
 * called from outside) that begin and end on it, in two counters only it
 * writes; other threads count theirs in two shared ones.  One shared counter
 * cost a cache-line transfer per async task on 2 workers (the submitter's
 * increment against the runner's decrement): 29% of the time of 10^6 silent
 * async tasks.
 *
 * Quiescence: read every "ended" counter, then every "begun" counter; equal
 * sums mean every run whose begin was read has ended.  Why no run is missed:
 * a run's begin happens before its end (the job carrying it is released by its
 * push and acquired by whoever runs it), so reading its end (acquire) makes its
 * begin visible to the later reads; so begun >= ended, and equality leaves no
 * begun run unended.  A run that a task starts (an async task submitted from a
 * task) begins before that task's own run ends, so it is seen too.
 *
 * Waking: nobody sees the sum reach zero, so a run's end is followed by a
 * check.  A thread that is not a worker checks right after its end.  A worker
 * checks when its busy stretch ends (weft__runs_busy_end): after the job that
 * ended the run it either finds another job, which belongs to a run still in
 * flight (every job does), or ends the stretch and checks, before any search.
 * So wait_all never waits for a search.  Per run end this costs nothing;
 * per busy stretch a compiler barrier and a load, and while someone waits,
 * a look at the injector (queued jobs mean runs in flight: no full check).
 * The worker's side: its ends stored, a light fence (a compiler barrier),
 * then quiet_waiters read; the waiter's: registered, the heavy fence
 * (membarrier: every running thread of the process executes a full barrier),
 * then the counters read.  A thread that is not a worker uses a full fence.
 * Store, fence, load on both sides: one of them sees the other, so no wake-up
 * is lost. */
#include "core/executor.h"
#include "platform/platform.h"
#include "core/error_detail.h"

/* weft__runs_bump (executor.h) is release: a reader that acquires an "ended"
 * value sees everything before it, the begins of those runs included. */

void weft__runs_begin(weft_executor *ex, weft__worker *w) {
    if (w) weft__runs_bump(&w->runs_begun);
    else atomic_fetch_add_explicit(&ex->outside_begun, 1, memory_order_release);
}

void weft__runs_end(weft_executor *ex, weft__worker *w) {
    if (w) { /* its worker checks as its busy stretch ends: weft__runs_busy_end */
        weft__runs_bump(&w->runs_ended);
        return;
    }
    atomic_fetch_add_explicit(&ex->outside_ended, 1, memory_order_release);
    weft__runs_quiet_check(ex);
}

/* Runs begun and not yet ended: every "ended" counter first, then every "begun"
 * one (see the top of the file), so the result is never negative and is 0 only
 * when every run seen begun has ended. */
uint64_t weft__runs_in_flight(const weft_executor *ex) {
    weft_executor *e = (weft_executor *)ex; /* atomic loads take non-const */
    uint64_t ended = atomic_load_explicit(&e->outside_ended, memory_order_acquire);
    for (unsigned i = 0; i < ex->nworkers; i++)
        ended += atomic_load_explicit(&ex->workers[i].runs_ended, memory_order_acquire);
    uint64_t begun = atomic_load_explicit(&e->outside_begun, memory_order_acquire);
    /* Submitter slots (core/submitter.c) count begins too; their ends are counted
     * by the workers that run them. */
    for (unsigned i = 0; i < weft__nslots(ex); i++)
        begun += atomic_load_explicit(&ex->workers[i].runs_begun, memory_order_acquire);
    return begun - ended;
}

void weft__runs_busy_end(weft_executor *ex) {
    /* Pairs with weft__fence_heavy in weft_executor_wait_all: either the
     * waiter's counter read sees the ends of this stretch, or this load sees
     * the waiter. */
    weft__fence_light();
    if (__builtin_expect(atomic_load_explicit(&ex->quiet_waiters, memory_order_relaxed) == 0, 1)) return;
    /* A queued job belongs to a run in flight, whose end will check: the
     * full check (a fence and every counter) waits for that.  Our ends must be
     * visible to that check first: the fence pairs with its fence (without it
     * a lost wake-up: tests/models/waitall.pml, SHORTCUT_WITHOUT_FENCE). */
    atomic_thread_fence(memory_order_seq_cst);
    if (!weft__injector_empty(&ex->injector)) return;
    weft__runs_quiet_check(ex);
}

void weft__runs_quiet_check(weft_executor *ex) {
    atomic_thread_fence(memory_order_seq_cst); /* our end, then the waiters */
    if (atomic_load_explicit(&ex->quiet_waiters, memory_order_relaxed) == 0) return;
    if (weft__runs_in_flight(ex) != 0) return;
    atomic_fetch_add_explicit(&ex->quiet_epoch, 1, memory_order_release);
    weft__futex_wake(&ex->quiet_epoch, INT32_MAX);
}

/* The runs this thread is carrying out though it is not a worker of their
 * executor (weft__own_run_enter), innermost first. */
static _Thread_local weft__own_run *tls_own_runs;

void weft__own_run_enter(weft__own_run *r, const weft_executor *ex) {
    r->ex = ex;
    r->outer = tls_own_runs;
    tls_own_runs = r;
}

void weft__own_run_leave(weft__own_run *r) { tls_own_runs = r->outer; }

bool weft__runs_here(const weft_executor *ex) {
    for (const weft__own_run *r = tls_own_runs; r; r = r->outer)
        if (r->ex == ex) return true;
    return false;
}

weft_status weft_executor_wait_all(weft_executor *ex) {
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    if (weft__current_worker(ex))
        return weft__fail(__func__, WEFT_EDEADLK, "called from one of the executor's own workers");
    /* A run of ex this thread carries out itself (a parallel algorithm's
     * callback on the thread that called it, a weft_future_then callback run
     * by weft_sched_remove's report), which would never end: it hung. */
    if (weft__runs_here(ex))
        return weft__fail(__func__, WEFT_EDEADLK,
                          "called from inside a run of the executor that this thread carries out (a parallel "
                          "algorithm's callback on the thread that called it, or a weft_future_then callback run "
                          "by weft_sched_remove): that run could never finish");
    if (weft__forked(ex)) return weft__fail(__func__, WEFT_EFORKED, WEFT__FORKED_WHY);
    atomic_fetch_add_explicit(&ex->quiet_waiters, 1, memory_order_seq_cst);
    /* Registered, then the counters: pairs with the light fence of
     * weft__runs_busy_end and with the full fence of weft__runs_quiet_check. */
    weft__fence_heavy();
    for (;;) {
        /* The epoch before the check: a bump after it fails the futex wait. */
        uint32_t e = atomic_load_explicit(&ex->quiet_epoch, memory_order_acquire);
        if (weft__runs_in_flight(ex) == 0) break;
        weft__futex_wait(&ex->quiet_epoch, e, UINT64_MAX);
    }
    atomic_fetch_sub_explicit(&ex->quiet_waiters, 1, memory_order_relaxed);
    return WEFT_OK;
}
