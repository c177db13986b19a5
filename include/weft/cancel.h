/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Cancellation in three layers (docs/guide-cancellation.md says when to use
 * which):
 *
 *   1. Cooperative: a cancellation token, shared between threads, that a task
 *      polls (weft_cancel_token_is_cancelled, weft_ctx_check) and that stops
 *      every run or async task it is attached to (weft_cancel_attach): tasks not
 *      yet started are skipped and counted (weft_run_info.skipped).
 *   2. Deadlines: a token that cancels itself at a time (weft_cancel_after,
 *      weft_cancel_at), and scoped budgets (weft_deadline_begin/end,
 *      weft_with_deadline).  One timer thread per process serves them all.
 *   3. Signal preemption (Linux, opt-in): weft_preempt_install, for a task stuck
 *      in a loop that never checks.
 *
 * All times are nanoseconds of the monotonic clock (weft_cancel_now_ns).
 */
#ifndef WEFT_CANCEL_H
#define WEFT_CANCEL_H

#include "weft/common.h"
#include "weft/core.h"
#include "weft/graph.h" /* weft_task_fn */

WEFT_EXTERN_C_BEGIN

/* ---------------------------------------------------------------------------------
 * Tokens
 * ------------------------------------------------------------------------------ */

/* A cancellation token: a flag that goes from "not cancelled" to "cancelled"
 * once (until reset), with a reason, callbacks, an optional parent and an
 * optional deadline.  Reference counted: weft_cancel_token_retain adds a
 * reference, weft_cancel_token_destroy drops one; the last drop frees it.
 * Every function below may be called from any thread, concurrently, on the
 * same token, unless its comment says otherwise. */
typedef struct weft_cancel_token weft_cancel_token;

/* Reasons are copied into the token, truncated to this many bytes less one
 * (a cut backs off to a UTF-8 character boundary, so the copy of a valid UTF-8
 * reason is valid UTF-8). */
#define WEFT_CANCEL_REASON_MAX 256

/* Creates a token (not cancelled, one reference).  `parent` may be NULL; if
 * not, cancelling the parent (or any ancestor) cancels this token with the
 * parent's reason, while cancelling this token leaves the parent alone.  A
 * child of an already cancelled parent is created cancelled.  The child keeps
 * a reference to its parent until it is freed.  Returns NULL with *err (if err
 * is not NULL) WEFT_ENOMEM.  Any thread. */
WEFT_API WEFT_NODISCARD weft_cancel_token *weft_cancel_token_create(weft_cancel_token *parent, weft_status *err);

/* Adds a reference and returns t (NULL for NULL).  Any thread; lock-free. */
WEFT_API weft_cancel_token *weft_cancel_token_retain(weft_cancel_token *t);

/* Drops the caller's reference.  The last one disarms the token's deadline,
 * detaches it from the runs and async tasks it is attached to (they go on, no
 * longer cancellable by it), unlinks it from its parent, frees callbacks that
 * never ran, and frees it.  Callbacks registered with a handle keep a
 * reference, so the token lives until those handles are removed.  NULL is a
 * no-op.  Any thread, but not from inside one of this token's callbacks when
 * that drop is the last one. */
WEFT_API void weft_cancel_token_destroy(weft_cancel_token *t);

/* Cancels t: the flag is set (release), then every registered callback runs,
 * one after another, on the calling thread, and so do those of t's children,
 * recursively.  Returns WEFT_OK when this call cancelled it, WEFT_ECANCELED if
 * it was cancelled already (nothing is done; the first reason stays),
 * WEFT_EINVAL for NULL.  Any thread, callbacks included; blocking only for as
 * long as the callbacks run. */
WEFT_API weft_status weft_cancel_token_cancel(weft_cancel_token *t);

/* weft_cancel_token_cancel with a reason, copied (truncated to
 * WEFT_CANCEL_REASON_MAX - 1 bytes at most, at a UTF-8 character boundary; no
 * more than that is read, so the text need not be NUL-terminated within the
 * limit).  NULL reason: "". */
WEFT_API weft_status weft_cancel_token_cancel_with(weft_cancel_token *t, const char *reason);

/* True once t is cancelled (false for NULL).  One acquire load: what the
 * canceller wrote before cancelling is visible to a caller that sees true.
 * Any thread; wait-free. */
WEFT_API bool weft_cancel_token_is_cancelled(const weft_cancel_token *t);

/* The reason t was cancelled with ("" if none was given, or if t is not
 * cancelled; "" for NULL).  Deadlines give "deadline exceeded"; a child gets
 * its parent's reason.  The text belongs to the token: valid until it is reset
 * or freed.  Any thread. */
WEFT_API const char *weft_cancel_token_reason(const weft_cancel_token *t);

/* Re-arms t for reuse: not cancelled, no reason, no deadline.  Callbacks that
 * ran are gone; those registered and not yet run stay registered.  A child is
 * linked to its parent again (and so is cancelled again at once if the parent
 * still is).  The cancel count is kept.  Returns WEFT_OK, WEFT_EINVAL (NULL),
 * WEFT_EBUSY (a callback of t is running right now, whether run by a cancel
 * or registered after one and running at once on its registering thread: it
 * reads t's reason; or t's deadline is cancelling it right now; try again once
 * it has returned).  The deadline is disarmed first: once reset returns
 * WEFT_OK, that deadline never cancels t.
 * Call it when no run or task still uses t's previous cancellation (a reader
 * of weft_cancel_token_reason would see the text change).  Any thread. */
WEFT_API weft_status weft_cancel_token_reset(weft_cancel_token *t);

/* How many times t went from not cancelled to cancelled, resets included (0
 * for NULL).  Any thread; wait-free. */
WEFT_API uint64_t weft_cancel_token_cancel_count(const weft_cancel_token *t);

/* ---- callbacks ---- */

/* Called once when the token is cancelled, with its reason (valid during the
 * call).  Keep it short and non-blocking: it runs on the cancelling thread
 * (a task, the timer thread, a user thread).  It may cancel tokens (this one
 * included: that call returns WEFT_ECANCELED), register callbacks (on this
 * token they run at once) and remove its own handle.  From C++ it must not
 * throw: weft's frames do not unwind, so the exception ends the program, or
 * reaches the caller of the cancel with the token left half cancelled
 * (docs/guide-cpp.md, "C callbacks must not throw"). */
typedef void (*weft_cancel_fn)(void *arg, const char *reason);

/* A registered callback (weft_cancel_token_on_cancel). */
typedef struct weft_cancel_callback weft_cancel_callback;

/* Registers fn(arg, reason) to run once when t is cancelled, or right here,
 * before returning, if t is cancelled already.  If `out` is not NULL it
 * receives a handle for weft_cancel_callback_remove (which must then be
 * called, whether the callback ran or not: it frees the handle; the handle
 * holds a reference to t).  With `out` NULL the registration lives until t is
 * cancelled (or freed).  Returns WEFT_OK, WEFT_EINVAL (NULL t or fn),
 * WEFT_ENOMEM (nothing registered, fn not called).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_cancel_token_on_cancel(weft_cancel_token *t, weft_cancel_fn fn, void *arg,
                                                               weft_cancel_callback **out);

/* Deregisters and frees cb.  Returns true if the callback had not run (and now
 * never will), false if it ran.  If it is running on another thread right
 * now, this waits until it has returned, so that after the call nothing uses
 * `arg` any more; from inside the callback itself (or one nested in it on
 * the same thread) it does not wait.  The handle's reference to the token
 * is dropped here; a callback may drop its owner's reference and then
 * remove its handle (the token's last reference): the cancel running it
 * holds one of its own until its callbacks are done.  NULL: false.  Any
 * thread; call it once per handle. */
WEFT_API bool weft_cancel_callback_remove(weft_cancel_callback *cb);

/* ---------------------------------------------------------------------------------
 * Deadlines
 *
 * All deadlines of the process share one timer thread, started by the first
 * deadline armed (none if no deadline is ever used).  It sleeps until the
 * earliest deadline and uses no CPU while none is due.  A deadline fires at
 * its time or later, never earlier; the lateness is the OS's wake-up latency
 * (tens of microseconds on an idle machine) plus the callbacks of deadlines
 * due before it.  A token's callbacks run on the timer thread when its
 * deadline fires: keep them short.
 * ------------------------------------------------------------------------------ */

/* The monotonic clock the deadlines use, in nanoseconds.  Any thread. */
WEFT_API uint64_t weft_cancel_now_ns(void);

/* Cancels t with the reason "deadline exceeded" `timeout_ns` from now.  A
 * token has one deadline: this replaces an earlier one.  0 cancels at once, on
 * the calling thread; a timeout beyond the clock's range (UINT64_MAX) never
 * fires, and is no deadline: it removes an earlier one, and
 * weft_cancel_disarm then returns false.  Returns
 * WEFT_OK, WEFT_EINVAL (NULL), WEFT_ENOMEM or WEFT_ESYS (the timer thread could
 * not be started; nothing armed).  Armed on a cancelled token it does nothing
 * and returns WEFT_OK.  Any thread; O(log n) in the armed deadlines. */
WEFT_API WEFT_NODISCARD weft_status weft_cancel_after(weft_cancel_token *t, uint64_t timeout_ns);

/* The same at a time of weft_cancel_now_ns's clock (a past time cancels at
 * once).  UINT64_MAX, the end of the clock, never comes: like a timeout of
 * weft_cancel_after past the clock's range, it leaves t no deadline (it
 * removes an earlier one; weft_cancel_disarm then returns false). */
WEFT_API WEFT_NODISCARD weft_status weft_cancel_at(weft_cancel_token *t, uint64_t when_ns);

/* Removes t's deadline, if it has one that has not fired.  Returns true if one
 * was removed.  Any thread. */
WEFT_API bool weft_cancel_disarm(weft_cancel_token *t);

/* A scoped time budget, the C form of an RAII deadline guard:
 *
 *     weft_deadline d;
 *     if (weft_deadline_begin(&d, tok, 50 * 1000000ull) == WEFT_OK) {
 *         ... work that polls tok ...
 *         if (weft_deadline_end(&d) == WEFT_ETIMEDOUT) ... over budget ...
 *     }
 *
 * While the scope is open, tok is cancelled ("deadline exceeded") when the
 * budget runs out; at the end, a budget that was exceeded cancels it too (if
 * the timer had not yet).  Scopes are independent of the token's own deadline
 * and of each other (they may nest).  The struct lives with the caller (its
 * stack) and is filled by begin; its fields are private.  It may be copied
 * or moved between begin and end (a helper may return it by value): end
 * closes the scope given any copy, once for all of them. */
typedef struct weft_deadline {
    weft_cancel_token *token; /* private: the token the scope cancels (referenced until end) */
    uint64_t start_ns;        /* private: monotonic clock at begin, in ns */
    uint64_t budget_ns;       /* private: the scope's budget from begin, in ns */
    uint64_t private_[4];     /* private: [0] the scope's timer, a block of its own (or 0) */
} weft_deadline;

/* Opens a scope on t (which it keeps a reference to until end); a budget that
 * can run out takes one small allocation for its timer.  Returns WEFT_OK,
 * WEFT_EINVAL (NULL d or t), WEFT_ENOMEM or WEFT_ESYS (no timer: the scope
 * is not open; do not call end).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_deadline_begin(weft_deadline *d, weft_cancel_token *t, uint64_t budget_ns);

/* Closes the scope (and frees its timer).  Returns WEFT_OK if it ended within
 * its budget, else WEFT_ETIMEDOUT (and the token is cancelled); WEFT_EINVAL
 * for NULL.  Call it once, on any thread, for every successful begin, with
 * the struct begin filled or a copy of it. */
WEFT_API weft_status weft_deadline_end(weft_deadline *d);

/* The function weft_with_deadline runs. */
typedef int (*weft_deadline_fn)(weft_cancel_token *t, void *arg);

/* Runs fn(t, arg) on the calling thread with a fresh token t that is
 * cancelled once `budget_ns` have passed (fn should poll it, or attach it to
 * the work it starts).  *result (if not NULL) receives fn's return value.
 * Returns WEFT_OK (fn ended within budget), WEFT_ETIMEDOUT (it did not),
 * WEFT_EINVAL (NULL fn), WEFT_ENOMEM, WEFT_ESYS (fn not called).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_with_deadline(uint64_t budget_ns, weft_deadline_fn fn, void *arg,
                                                       int *result);

/* ---------------------------------------------------------------------------------
 * Attaching tokens to work, and what a task sees
 * ------------------------------------------------------------------------------ */

/* Attaches t to the run or async task of future f: when t is cancelled (or
 * right here, if it is already), f is cancelled as weft_future_cancel does:
 * its tasks not yet started are skipped and counted in weft_run_info.skipped,
 * and running ones see it through weft_ctx_check, which also gives them t's
 * reason.  A pipeline or a parallel algorithm emplaced in a taskflow stops
 * with the taskflow's run.  For the future of a weft_run_many set, every
 * member's run is cancelled, as weft_run_many_cancel does, and its tasks
 * see t's reason (t is attached to each member's run as well; a member
 * that was not submitted has none).  A future may have several tokens, and a token any
 * number of futures; the link holds a reference to f (the caller may destroy
 * its own at once) until f is finished and t is next attached or freed, so a
 * long-lived token costs memory for the work it is attached to that is still
 * running, not for what it was ever attached to.  Returns WEFT_OK, WEFT_EINVAL
 * (NULL argument), WEFT_ENOMEM (not attached).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_cancel_attach(weft_cancel_token *t, weft_future *f);

/* weft_run_root_status (weft/forkjoin.h) with t attached to the root: when t
 * is cancelled (or if it is already), the root and every child it spawns,
 * stolen ones and task-group members included, see it through their context
 * (weft_ctx_check gives WEFT_ECANCELED and t's reason, weft_ctx_cancelled is
 * true).  A child is never skipped: its parent needs its result, so fork-join
 * code stops by checking.  Returns:
 *   WEFT_OK         fn ran and returned 0, and t was not cancelled meanwhile;
 *   WEFT_ETASK      fn returned non-zero (in *result), t not cancelled;
 *   WEFT_ECANCELED  t was cancelled before fn started (fn not called, counted
 *                   as skipped in the executor's metrics, *result 0) or
 *                   while it ran (fn's value in *result);
 *   WEFT_EINVAL     NULL t or fn; as weft_run_root_status otherwise
 *                   (WEFT_ENOMEM, WEFT_EFORKED; *result 0).
 * result may be NULL.  ex NULL: the default executor.  The call keeps its own
 * reference to t while it runs.  Any thread; from one of ex's workers it runs
 * fn right there, as weft_run_root does.  Costs one callback registration and
 * removal per call; nothing per spawn or sync. */
WEFT_API WEFT_NODISCARD weft_status weft_run_root_with_token(weft_executor *ex, weft_cancel_token *t,
                                                             weft_task_fn fn, void *arg, int *result);

/* What a running task asks, in a loop, to stop early:
 *   WEFT_OK         go on;
 *   WEFT_ECANCELED  its run (or async task) was cancelled: by a token (the
 *                   reason is weft_ctx_cancel_reason's, and also the calling
 *                   thread's weft_last_error_message), by weft_future_cancel,
 *                   or by signal preemption (weft_preempt_thread);
 *   WEFT_ETASK      another task of the same run failed (not a cancellation);
 *   WEFT_EINVAL     NULL ctx.
 * Costs two loads while nothing happened: safe in a tight loop.  Only on the
 * task's own thread, while it runs. */
WEFT_API weft_status weft_ctx_check(const weft_ctx *ctx);

/* weft_ctx_check, and if it returns WEFT_OK, lets the OS run another thread
 * (sched_yield) before returning: for a polling loop that waits on something.
 * It is not a task-level yield (Tokio's yield_now, a Go scheduler point): the
 * task keeps its worker and no other weft task runs on it meanwhile; weft
 * tasks run to completion (weft/async.h). */
WEFT_API weft_status weft_ctx_check_and_yield(const weft_ctx *ctx);

/* The reason the task's run was cancelled by a token attached to it, copied
 * into a buffer of the calling thread (valid until its next call); "" when no
 * token cancelled it (or for NULL).  With several tokens attached, it is the
 * reason of the one whose cancel stopped the run, not of one cancelled after
 * (while that token is alive and not reset; else another cancelled one's).  The reason lives in the token: once the
 * token's last reference is dropped (weft_cancel_token_destroy), it is ""
 * though the run stays cancelled (weft_ctx_check: WEFT_ECANCELED); keep a
 * reference while tasks may ask.  Only on the task's own thread. */
WEFT_API const char *weft_ctx_cancel_reason(const weft_ctx *ctx);

/* ---------------------------------------------------------------------------------
 * Signal preemption (Linux; opt-in)
 * ------------------------------------------------------------------------------ */

/* weft_preempt_install options; zero means default. */
typedef struct weft_preempt_config {
    /* The signal to use; 0: SIGUSR2. */
    int signo;
    /* Refused (WEFT_EBUSY) if the application has a handler for the signal
     * already, unless this is true: then weft's handler calls the old one after
     * setting its flag. */
    bool chain;
} weft_preempt_config;

/* Installs the preemption signal handler, once per process (a second call
 * with the same signal returns WEFT_OK, also when both run at once: one
 * installs, the other waits for it; never does weft chain to its own
 * handler).  The handler does one thing: it sets
 * a flag of the thread it interrupts, which weft_ctx_check and
 * weft_preempt_requested read.  It never unwinds, longjmps or frees: a task's
 * locks, allocations and invariants stay whole, and the task stops at its next
 * check.  Returns WEFT_OK, WEFT_EINVAL (a bad signal number), WEFT_EBUSY (a
 * handler is installed and config->chain is false; or weft's handler is
 * installed already for another signal: that one stays, and is the one
 * weft_preempt_thread and the watches send), WEFT_ESYS (not on this OS).
 * Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_preempt_install(const weft_preempt_config *config);

/* Interrupts the worker running the task of `ctx`, from another thread: sends
 * it the preemption signal, so that the task's next weft_ctx_check returns
 * WEFT_ECANCELED (message "preempted") even if its run is not cancelled, and
 * weft_preempt_requested is true on its thread.  A task that never checks is
 * not stopped: no code runs in it but the handler.  The flag stays set until
 * cleared (weft_preempt_clear, or weft_preempt_watch_end): the stopped task
 * clears it before it returns, or the worker's next task sees it too.
 * Workers take the signal mask of the thread that creates their executor; a
 * worker that starts after weft_preempt_install unblocks the signal, but one
 * started before cannot be changed from outside: if it blocks the signal this
 * returns WEFT_ESYS and says so (install before creating the executor, or use
 * a watch, which unblocks it on its own thread).
 * Returns WEFT_OK, WEFT_EINVAL (NULL), WEFT_ENOENT (not installed),
 * WEFT_ESYS.  ctx must belong to a task that is still running (the watch
 * below is the safe form). */
WEFT_API weft_status weft_preempt_thread(const weft_ctx *ctx);

/* A watch: while it is open, cancelling the token sends the preemption signal
 * to the thread that opened it.  Caller storage (the task's stack); fields
 * are private. */
typedef struct weft_preempt_watch {
    weft_cancel_callback *cb; /* private: the token's callback that sends the signal */
    unsigned long thread;     /* private: the thread that opened the watch */
    bool reblock;             /* private: the signal was blocked on the thread before */
} weft_preempt_watch;

/* Opens a watch on t for the calling thread (inside a task: its worker).  If t
 * is cancelled already, the signal comes at once.  The signal is unblocked on
 * the thread while the watch is open (blocked again at its end if it was).  Returns WEFT_OK,
 * WEFT_EINVAL (NULL), WEFT_ENOENT (weft_preempt_install not called),
 * WEFT_ENOMEM.  Call weft_preempt_watch_end on the same thread before the task
 * returns. */
WEFT_API WEFT_NODISCARD weft_status weft_preempt_watch_begin(weft_preempt_watch *slot, weft_cancel_token *t);

/* Closes the watch (waiting for a signal being sent, if any) and clears the
 * thread's flag.  NULL, or a watch that failed to open: a no-op. */
WEFT_API void weft_preempt_watch_end(weft_preempt_watch *slot);

/* True when the calling thread has received the preemption signal since its
 * flag was last cleared.  One thread-local relaxed load: poll it in a loop
 * that has no context at hand.  Any thread; async-signal-safe. */
WEFT_API bool weft_preempt_requested(void);

/* Clears the calling thread's preemption flag.  Any thread. */
WEFT_API void weft_preempt_clear(void);

/* ---- config sizes (docs/abi.md) ----------------------------------------------
 *
 * Each call of this header that takes a config struct by pointer has a _sized
 * form, told the sizeof the caller was compiled with (right after the
 * pointer).  A program never names them: the header defines each call's name
 * as an inline function that passes this header's size.  A shorter struct (an
 * older header) reads as zero, the defaults, for the fields it lacks; a
 * longer one (a newer header) is WEFT_EINVAL, logged with the offset, unless
 * every byte this library does not know is zero.  Otherwise each behaves,
 * fails and may be called exactly as the call of its name.  The exported
 * symbols without _sized, which binaries built before the sizes were passed
 * call, read the 1.0 layout. */
/* weft_preempt_install with a weft_preempt_config of config_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_preempt_install_sized(const weft_preempt_config *config,
                                                               size_t config_size);
#ifndef WEFT_BUILDING
WEFT_NODISCARD static inline weft_status
weft__preempt_install_inline(const weft_preempt_config *config) {
    return weft_preempt_install_sized(config, sizeof(weft_preempt_config));
}
#define weft_preempt_install weft__preempt_install_inline
#endif

WEFT_EXTERN_C_END
#endif
