/* weft_run_root: run a function as a root task and wait for it.  The root's
 * context may carry a stop word (weft__run_root_stop): the cancel layer drives
 * it from a token (weft_run_root_with_token) without the core knowing tokens. */
#include "core/executor.h"
#include "core/default_executor.h"
#include "core/fj.h"
#include "core/future.h"    /* WEFT__STOP_MASK */
#include "core/obs_hooks.h" /* metrics and profiler: a root is a span */
#include "core/error_detail.h"

/* Lives on the stack of the thread waiting in weft_run_root. */
struct root {
    weft__job job;
    weft_task_fn fn;
    void *arg;
    weft_executor *ex;
    const _Atomic int *stop;
    int result;
    bool skipped;
    _Atomic uint32_t done;
};

/* Runs fn as the root on w, or skips it (counted) when its stop word is set
 * already.  Acquire: what the canceller wrote before stopping is visible. */
static int run_or_skip(weft__worker *w, const _Atomic int *stop, weft_task_fn fn, void *arg, bool *skipped) {
    if (stop && (atomic_load_explicit(stop, memory_order_acquire) & WEFT__STOP_MASK)) {
        weft__hook_skipped(w); /* observe/: cancelled before it ran */
        *skipped = true;
        return 0;
    }
    return weft__run_observed(w, WEFT__WORK_ROOT, stop, fn, arg);
}

static weft__job *run_root(weft__worker *w, weft__job *self) {
    struct root *r = (struct root *)self;
    weft_executor *ex = r->ex;
    r->result = run_or_skip(w, r->stop, r->fn, r->arg, &r->skipped);
    /* seq_cst store: the waiter's seq_cst load sees it or its futex_wait finds
     * the word changed.  The waiter may return (and its stack with `r` go) as
     * soon as it sees done; the futex wake then only names a stale address,
     * which the kernel treats as a plain key. */
    atomic_store_explicit(&r->done, 1, memory_order_seq_cst);
    weft__futex_wake(&r->done, 1);
    weft__runs_end(ex, w);
    return NULL;
}

weft_status weft__run_root_stop(weft_executor *ex, const _Atomic int *stop, weft_task_fn fn, void *arg,
                                int *result) {
    if (result) *result = 0;
    if (!fn) return weft__fail("weft_run_root", WEFT_EINVAL, "fn is NULL");
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    weft__worker *w = weft__current_worker(ex);
    int value;
    bool skipped = false;
    if (w) {
        value = run_or_skip(w, stop, fn, arg, &skipped); /* nested: a plain call */
    } else {
        struct root r = {.job = {run_root, NULL}, .fn = fn, .arg = arg, .ex = ex, .stop = stop, .result = 0};
        atomic_init(&r.done, 0);
        weft__runs_begin(ex, NULL); /* not a worker: see above */
        int st = weft__submit(ex, &r.job);
        if (st != 0) {
            weft__runs_end(ex, NULL);
            return weft__fail_st("weft_run_root", (weft_status)st);
        }
        while (atomic_load_explicit(&r.done, memory_order_seq_cst) == 0)
            weft__futex_wait(&r.done, 0, UINT64_MAX);
        value = r.result;
        skipped = r.skipped;
    }
    if (skipped) return WEFT_ECANCELED;
    if (result) *result = value;
    return value == 0 ? WEFT_OK : WEFT_ETASK;
}

weft_status weft_run_root_status(weft_executor *ex, weft_task_fn fn, void *arg, int *result) {
    return weft__run_root_stop(ex, NULL, fn, arg, result);
}

int weft_run_root(weft_executor *ex, weft_task_fn fn, void *arg) {
    int value;
    weft_status st = weft_run_root_status(ex, fn, arg, &value);
    return st == WEFT_ETASK ? value : (int)st;
}
