/* Futures: waiting (futex from outside, cooperative from inside a worker),
 * cancellation and the run's final report. */
#include "core/future.h"
#include "core/executor.h"
#include "core/layer.h" /* weft__layers_waits_behind */
#include "core/error_detail.h"
#include "core/utf8.h"

#include <stdio.h>
#include <string.h>

void weft__future_init(weft_future *f, weft_executor *ex, unsigned refs, void (*free_fn)(weft_future *)) {
    atomic_init(&f->done, 0);
    atomic_init(&f->waiters, 0);
    atomic_init(&f->refs, refs);
    atomic_init(&f->stop, 0);
    atomic_init(&f->fail_claimed, 0);
    f->ex = ex;
    f->fork_generation = ex->fork_generation;
    f->id = 0; /* numbered by the producer if it is traced (graph runs) */
    f->free_fn = free_fn;
    f->owner = NULL;
    f->bodies = NULL;
    f->nbodies = 0;
    f->up = NULL;
    f->parts = NULL;
    f->nparts = 0;
    f->status = WEFT_EAGAIN;
    f->task_code = 0;
    atomic_init(&f->skipped, 0);
    atomic_init(&f->iterations, 0);
    f->failed_task[0] = 0;
    atomic_init(&f->then_state, WEFT__THEN_NONE);
    f->then_fn = NULL;
    f->then_arg = NULL;
    atomic_init(&f->efd, -1);
}

/* Copies name into the future's report, truncated to its buffer at a UTF-8
 * character boundary: a cut inside a multi-byte character (snprintf's) left
 * invalid UTF-8 in weft_run_info.failed_task for a long non-ASCII name.  As
 * cancellation reasons are cut (cancel/token.c). */
static void copy_failed_name(char *dst, size_t cap, const char *name) { weft__utf8_copy(dst, cap, name); }

bool weft__future_fail(weft_future *f, int task_code, const char *name, size_t index) {
    int expected = 0;
    if (!atomic_compare_exchange_strong_explicit(&f->fail_claimed, &expected, 1, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return false;
    f->task_code = task_code;
    if (name && *name)
        copy_failed_name(f->failed_task, sizeof f->failed_task, name);
    else
        snprintf(f->failed_task, sizeof f->failed_task, "#%zu", index);
    /* Release: whoever later sees FAIL in stop (the finisher) sees the report. */
    atomic_fetch_or_explicit(&f->stop, WEFT__STOP_FAIL, memory_order_release);
    return true;
}

static void make_ready(weft_future *f) {
    /* seq_cst store then load pairs with the waiter's increment of `waiters`
     * followed by its load of `done`: either we see the waiter or it sees done. */
    atomic_store_explicit(&f->done, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&f->waiters, memory_order_seq_cst) > 0) weft__futex_wake(&f->done, INT32_MAX);
    /* Event-loop hooks.  acq_rel: a registrant that later sees FIRED sees status;
     * one that set SET before us has its callback fields visible here.  With
     * nothing registered the state becomes FIRED (a later registrant runs its
     * callback itself); with a callback set or being set, USED (one callback
     * per future: a later registrant gets WEFT_EBUSY). */
    int then = atomic_load_explicit(&f->then_state, memory_order_acquire);
    while (!atomic_compare_exchange_weak_explicit(&f->then_state, &then,
                                                  then == WEFT__THEN_NONE ? WEFT__THEN_FIRED : WEFT__THEN_USED,
                                                  memory_order_acq_rel, memory_order_acquire)) {
    }
    if (then == WEFT__THEN_SET) f->then_fn(f, f->status, f->then_arg);
    /* seq_cst load after the seq_cst store of done: pairs with weft_future_fd's
     * CAS of efd then load of done, so one of the two signals the fd. */
    int fd = atomic_load_explicit(&f->efd, memory_order_seq_cst);
    if (fd >= 0) weft__eventfd_signal(fd);
}

void weft__future_complete(weft_future *f) {
    int bits = atomic_fetch_or_explicit(&f->stop, WEFT__STOP_FINISHED, memory_order_acq_rel);
    f->status = (bits & WEFT__STOP_FAIL) ? WEFT_ETASK : (bits & WEFT__STOP_CANCEL) ? WEFT_ECANCELED : WEFT_OK;
    make_ready(f);
}

void weft__future_complete_as(weft_future *f, weft_status status) {
    (void)atomic_fetch_or_explicit(&f->stop, WEFT__STOP_FINISHED, memory_order_acq_rel);
    f->status = status;
    make_ready(f);
}

void weft__future_release(weft_future *f) {
    if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1) {
        int fd = atomic_load_explicit(&f->efd, memory_order_relaxed);
        if (fd >= 0) weft__fd_close(fd);
        f->free_fn(f);
    }
}

/* ---- public API ---- */

static bool is_done(void *arg) {
    return atomic_load_explicit(&((weft_future *)arg)->done, memory_order_acquire) != 0;
}

/* A worker's wait with a deadline: it keeps running other jobs meanwhile. */
struct timed_wait {
    weft_future *f;
    uint64_t deadline;
};
static bool done_or_late(void *arg) {
    struct timed_wait *t = arg;
    return is_done(t->f) || weft__now_ns() >= t->deadline;
}

/* True if some task on the stack from c down belongs to a run of `owner` or
 * to a run nested in one. */
static bool chain_runs_under(const weft_ctx *c, const void *owner) {
    for (; c; c = c->outer)
        for (const weft_future *r = c->run; r; r = r->up)
            if (r->owner == owner) return true;
    return false;
}

bool weft__runs_under(const void *owner) { return owner && chain_runs_under(weft_current_ctx(), owner); }

bool weft__future_waits_on_itself(const weft_future *f) {
    /* The calling thread's worker, whichever executor it belongs to: a run of
     * a taskflow waits behind the taskflow's active run on any executor. */
    const weft_ctx *top = weft_current_ctx();
    /* A task working for f (its stop word is f's: an async task, a graph task
     * of run f at any depth, a fork-join child they spawned) keeps f from
     * finishing.  A pointer compare per task: no load. */
    for (const weft_ctx *c = top; c; c = c->outer)
        if (c->stop == &f->stop) return true;
    if (f->owner && chain_runs_under(top, f->owner)) return true;
    /* A run whose module body is the taskflow of a task here (or of a run
     * that one is nested in) runs that body behind the caller's run. */
    for (size_t i = 0; i < f->nbodies; i++)
        if (chain_runs_under(top, f->bodies[i])) return true;
    for (size_t i = 0; i < f->nparts; i++) {
        /* Atomic: weft_run_many may still be filling the table (graph/run_many.c). */
        weft_future *g = __atomic_load_n(&f->parts[i], __ATOMIC_SEQ_CST);
        if (g && !is_done(g) && weft__future_waits_on_itself(g)) return true;
    }
    return false;
}

/* Waits until f is done or the clock (weft__now_ns) reaches `deadline`;
 * UINT64_MAX: no deadline. */
static weft_status wait_impl(weft_future *f, uint64_t deadline) {
    if (is_done(f)) return f->status;
    if (weft__future_waits_on_itself(f))
        return weft__fail("weft_future_wait", WEFT_EDEADLK,
                          "called from a task the run waits for: it would wait for itself");
    /* From here on f->ex is compared, never read: weft_executor_destroy
     * (another thread's, while this one is not a worker of f->ex) returns as
     * soon as the run has ended, and frees the executor (core.h allows waiting
     * on a future of an executor being destroyed: its runs still end). */
    weft__worker *w = weft__current_worker(f->ex);
    if (w) {
        /* f may wait behind a task lower on this worker's stack in a way only
         * a layer knows (async/: f is a dependent of an async task running
         * here): that wait never ended (core.h promises WEFT_EDEADLK). */
        const char *why = weft__layers_waits_behind(w, f);
        if (why) return weft__fail("weft_future_wait", WEFT_EDEADLK, "%s", why);
        /* Inside a task: keep the worker busy with other work; the awaited run
         * may need this very worker to progress.  A deadline is checked between
         * jobs. */
        if (deadline == UINT64_MAX) {
            weft__worker_wait_until(w, is_done, f);
        } else {
            struct timed_wait t = {f, deadline};
            weft__worker_wait_until(w, done_or_late, &t);
        }
        return is_done(f) ? f->status : WEFT_ETIMEDOUT;
    }
    /* An executor created before fork() has no workers in this child process. */
    if (f->fork_generation != atomic_load_explicit(&weft__fork_generation, memory_order_relaxed))
        return weft__fail("weft_future_wait", WEFT_EFORKED, WEFT__FORKED_WHY);
    atomic_fetch_add_explicit(&f->waiters, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&f->done, memory_order_seq_cst) == 0) {
        uint64_t left = UINT64_MAX;
        if (deadline != UINT64_MAX) {
            uint64_t now = weft__now_ns();
            if (now >= deadline) break;
            left = deadline - now;
        }
        weft__futex_wait(&f->done, 0, left);
    }
    atomic_fetch_sub_explicit(&f->waiters, 1, memory_order_relaxed);
    return is_done(f) ? f->status : WEFT_ETIMEDOUT;
}

weft_status weft_future_wait(weft_future *f) {
    return f ? wait_impl(f, UINT64_MAX) : weft__fail(__func__, WEFT_EINVAL, "f is NULL");
}

weft_status weft_future_wait_for(weft_future *f, uint64_t timeout_ns) {
    if (!f) return weft__fail(__func__, WEFT_EINVAL, "f is NULL");
    /* Saturating: a timeout past the clock's range never elapses, and the
     * deadline stays below UINT64_MAX (no deadline), which it is in effect. */
    uint64_t now = weft__now_ns();
    return wait_impl(f, timeout_ns < UINT64_MAX - 1 - now ? now + timeout_ns : UINT64_MAX - 1);
}

bool weft_future_ready(const weft_future *f) { return f && is_done((void *)f); }

weft_status weft_future_status(const weft_future *f) {
    if (!f) return weft__fail(__func__, WEFT_EINVAL, "f is NULL");
    return is_done((void *)f) ? f->status : WEFT_EAGAIN;
}

weft_status weft_future_info(const weft_future *f, weft_run_info *info) {
    if (!f || !info) return weft__fail(__func__, WEFT_EINVAL, "f or info is NULL");
    bool done = is_done((void *)f);
    info->status = done ? f->status : WEFT_EAGAIN;
    info->task_code = done ? f->task_code : 0;
    info->failed_task = done ? f->failed_task : "";
    info->skipped = atomic_load_explicit(&f->skipped, memory_order_relaxed);
    info->iterations = atomic_load_explicit(&f->iterations, memory_order_relaxed);
    return WEFT_OK;
}

weft_status weft_future_cancel(weft_future *f) {
    if (!f) return weft__fail(__func__, WEFT_EINVAL, "f is NULL");
    int bits = atomic_fetch_or_explicit(&f->stop, WEFT__STOP_CANCEL, memory_order_seq_cst);
    return (bits & WEFT__STOP_FINISHED) ? WEFT_ENOENT : WEFT_OK;
}

void weft_future_destroy(weft_future *f) {
    if (f) weft__future_release(f);
}
