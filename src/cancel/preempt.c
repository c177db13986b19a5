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
#include "core/layer.h"
#include "platform/signal.h"
#include "core/error_detail.h"

_Thread_local _Atomic int weft__preempt_flag __attribute__((tls_model("initial-exec")));

/* The installed signal; 0 before, -1 while a call is installing it (the
 * others wait: two at once would both find "no handler", or the second would
 * take weft's own handler for the application's and chain to itself). */
static _Atomic int installed;

/* The platform calls the replaced handler after it, when chaining. */
static void on_signal(int signo) {
    (void)signo;
    atomic_store_explicit(&weft__preempt_flag, 1, memory_order_relaxed);
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

/* ---- workers' signal masks ----
 * A worker thread takes the signal mask of the thread that created its
 * executor, and docs/interop.md tells programs to block the signals they
 * handle in main before that.  A preemption signal blocked on a worker would
 * stay pending: the task never sees it, and weft_preempt_thread would say
 * WEFT_OK.  So each worker, as it starts, unblocks the installed preemption
 * signal (the program asked for it to be delivered to weft's threads), and
 * keeps the set its thread still blocks for weft_preempt_thread to look at:
 * a worker started before weft_preempt_install cannot be changed by another
 * thread, and is refused with a reason instead. */
typedef struct preempt_worker {
    unsigned long long blocked; /* weft__signal_blocked_set after the start */
} preempt_worker;

static void preempt_thread_start(weft__worker *w, void *state) {
    (void)w;
    int signo = atomic_load_explicit(&installed, memory_order_acquire);
    if (signo > 0) (void)weft__signal_unblock(signo, NULL);
    ((preempt_worker *)state)->blocked = weft__signal_blocked_set();
}

weft__layer weft__cancel_layer = {
    .name = "cancel",
    .worker_bytes = sizeof(preempt_worker),
    .thread_start = preempt_thread_start,
};

weft_status weft_preempt_thread(const weft_ctx *ctx) {
    if (!ctx) return weft__fail(__func__, WEFT_EINVAL, "ctx is NULL");
    int signo = installed_signal();
    if (!signo) return weft__fail(__func__, WEFT_ENOENT, "weft_preempt_install was not called");
    const weft__worker *w = ctx->worker;
    const preempt_worker *pw = weft__layer_state(w, &weft__cancel_layer);
    if (signo <= 64 && (pw->blocked >> (signo - 1) & 1))
        return weft__fail(__func__, WEFT_ESYS,
                          "signal %d is blocked on worker %u's thread (a worker takes the signal mask of the "
                          "thread that created its executor; call weft_preempt_install before creating it, "
                          "or open a weft_preempt_watch in the task)", signo, w->id);
    int st = weft__signal_thread(w->thread.handle, signo);
    return st == 0 ? WEFT_OK : weft__fail_st(__func__, (weft_status)st);
}

static void watch_fire(void *arg, const char *reason) {
    (void)reason;
    weft_preempt_watch *w = arg;
    (void)weft__signal_thread(w->thread, installed_signal());
}

weft_status weft_preempt_watch_begin(weft_preempt_watch *slot, weft_cancel_token *t) {
    /* The slot is marked not open before any refusal, t NULL included: it is
     * caller storage holding whatever was there, and weft_preempt_watch_end
     * must find a watch that failed to open a no-op (it removed a garbage
     * callback pointer after a NULL t). */
    if (slot) {
        slot->cb = NULL;
        slot->reblock = false;
    }
    if (!slot || !t) return weft__fail(__func__, WEFT_EINVAL, "slot or t is NULL");
    int signo = installed_signal();
    if (!signo) return weft__fail(__func__, WEFT_ENOENT, "weft_preempt_install was not called");
    /* The signal comes to this thread: unblocked while the watch is open
     * (blocked again at its end if it was before). */
    bool was = false;
    if (weft__signal_unblock(signo, &was) != 0) return weft__fail(__func__, WEFT_ESYS, "pthread_sigmask failed");
    slot->thread = weft__thread_self();
    weft_status st = weft_cancel_token_on_cancel(t, watch_fire, slot, &slot->cb);
    if (st != WEFT_OK) {
        if (was) weft__signal_block(signo);
        return st;
    }
    slot->reblock = was;
    return WEFT_OK;
}

void weft_preempt_watch_end(weft_preempt_watch *slot) {
    if (!slot || !slot->cb) return;
    (void)weft_cancel_callback_remove(slot->cb); /* waits for a signal being sent */
    slot->cb = NULL;
    /* A signal sent before the remove has been taken by now: it was unblocked. */
    if (slot->reblock) weft__signal_block(installed_signal());
    slot->reblock = false;
    weft_preempt_clear();
}

bool weft_preempt_requested(void) { return weft__preempt_pending(); }

void weft_preempt_clear(void) { atomic_store_explicit(&weft__preempt_flag, 0, memory_order_relaxed); }
