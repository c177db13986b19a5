/* Signal preemption, the third layer (weft/cancel.h).
 *
 * The handler sets the interrupted thread's flag and (if asked) calls the
 * handler it replaced; nothing else.  It is async-signal-safe because it only
 * stores to a lock-free atomic in initial-exec TLS (no allocation on first
 * access, no lock).  weft never unwinds a task from the handler: a longjmp out
 * of arbitrary C code would skip its unlocks and frees, leave the worker's
 * fork-join frames and the deque half updated, and could land inside malloc.
 * The task stops at its next check, whole. */
#include "cancel/cancel.h"
#include "core/executor.h"
#include "platform/signal.h"
#include "core/error_detail.h"

_Thread_local _Atomic int weft__preempt_flag __attribute__((tls_model("initial-exec")));

/* The installed signal; 0 before, -1 while a call is installing it (the
 * others wait: two at once would both find "no handler", or the second would
 * take weft's own handler for the application's and chain to itself). */
static _Atomic int installed;

static void on_signal(int signo) {
    atomic_store_explicit(&weft__preempt_flag, 1, memory_order_relaxed);
    weft__signal_chain(signo);
}

weft_status weft_preempt_install(const weft_preempt_config *config) {
    int signo = config && config->signo ? config->signo : weft__signal_default();
    int cur = atomic_load_explicit(&installed, memory_order_acquire);
    for (unsigned spins = 0;; cur = atomic_load_explicit(&installed, memory_order_acquire)) {
        if (cur > 0)
            return cur == signo ? WEFT_OK : weft__fail(__func__, WEFT_EBUSY, "signal %d is installed already", cur);
        if (cur == 0 && atomic_compare_exchange_weak_explicit(&installed, &cur, -1, memory_order_acquire,
                                                              memory_order_acquire))
            break;
        weft__spin_pause(&spins);
    }
    int st = weft__signal_install(signo, config && config->chain, on_signal);
    /* Release: a sender that reads the signal number sees the handler in place. */
    atomic_store_explicit(&installed, st == 0 ? signo : 0, memory_order_release);
    return st == 0 ? WEFT_OK : weft__fail(__func__, (weft_status)st, "signal %d could not be installed", signo);
}

/* The installed signal, or 0 (none yet, or being installed). */
static int installed_signal(void) {
    int signo = atomic_load_explicit(&installed, memory_order_acquire);
    return signo > 0 ? signo : 0;
}

weft_status weft_preempt_thread(const weft_ctx *ctx) {
    if (!ctx) return weft__fail(__func__, WEFT_EINVAL, "ctx is NULL");
    int signo = installed_signal();
    if (!signo) return weft__fail(__func__, WEFT_ENOENT, "weft_preempt_install was not called");
    int st = weft__signal_thread(ctx->worker->thread.handle, signo);
    return st == 0 ? WEFT_OK : weft__fail_st(__func__, (weft_status)st);
}

static void watch_fire(void *arg, const char *reason) {
    (void)reason;
    weft_preempt_watch *w = arg;
    (void)weft__signal_thread(w->thread, installed_signal());
}

weft_status weft_preempt_watch_begin(weft_preempt_watch *slot, weft_cancel_token *t) {
    if (!slot || !t) return weft__fail(__func__, WEFT_EINVAL, "slot or t is NULL");
    slot->cb = NULL;
    if (!installed_signal()) return weft__fail(__func__, WEFT_ENOENT, "weft_preempt_install was not called");
    slot->thread = weft__thread_self();
    return weft_cancel_token_on_cancel(t, watch_fire, slot, &slot->cb);
}

void weft_preempt_watch_end(weft_preempt_watch *slot) {
    if (!slot || !slot->cb) return;
    (void)weft_cancel_callback_remove(slot->cb); /* waits for a signal being sent */
    slot->cb = NULL;
    weft_preempt_clear();
}

bool weft_preempt_requested(void) { return weft__preempt_pending(); }

void weft_preempt_clear(void) { atomic_store_explicit(&weft__preempt_flag, 0, memory_order_relaxed); }
