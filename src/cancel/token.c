/* Cancellation tokens: the flag, the reason, callbacks and the parent/child
 * link.
 *
 * A cancel sets the flag under the token's lock, then takes the pending
 * callbacks off the list one at a time and runs each with the lock released
 * (a callback may cancel, register or deregister on the same token).  A
 * registration is PENDING on the list, RUNNING while its function runs, DONE
 * after; every change of state happens under the lock, so a deregistration
 * either takes a PENDING one off (it never runs) or sees it RUNNING and sleeps
 * on `seq`, which each finished callback bumps, until it is DONE.  That is what
 * makes it safe for the owner of a registration to free it once deregister
 * returns.  A child's callbacks run after its parent's, from the loop of the
 * cancel that began it (tls_deferred), not nested in the parent's: the stack
 * stays flat however long the chain.  docs/design.md, "Cancellation", has the
 * rest. */
#include "cancel/cancel.h"
#include "core/alloc.h"
#include "core/error_detail.h"
#include "core/utf8.h"

#include <stddef.h>
#include <string.h>

/* The registrations this thread is running, innermost first (one frame on
 * the stack of each run_unlocked), so that removing one of them from this
 * thread does not wait for it: not the callback itself, nor one nested in it
 * (a callback of token 1 cancels token 2, whose callback removes the first
 * one's handle).  Only the innermost was kept once, and that nested remove
 * waited for a callback that could only return after it. */
struct running_frame {
    weft__cancel_reg *reg;
    struct running_frame *outer;
};
static _Thread_local struct running_frame *tls_running;

/* Whether reg is running on this thread, at any depth. */
static bool running_here(const weft__cancel_reg *reg) {
    for (const struct running_frame *f = tls_running; f; f = f->outer)
        if (f->reg == reg) return true;
    return false;
}

static void unlink_reg(weft_cancel_token *t, weft__cancel_reg *reg) {
    if (reg->prev) reg->prev->next = reg->next;
    else t->head = reg->next;
    if (reg->next) reg->next->prev = reg->prev;
    reg->prev = reg->next = NULL;
}

/* Runs reg (RUNNING, taken off the list) with the lock released, then marks it
 * DONE and wakes deregistrations waiting for it.  Called and returns with the
 * lock held. */
static void run_unlocked(weft_cancel_token *t, weft__cancel_reg *reg) {
    t->running++; /* reset waits for it: fn reads t->reason */
    weft__mutex_unlock(&t->mu);
    struct running_frame frame = {reg, tls_running};
    tls_running = &frame;
    reg->fn(reg, t->reason);
    tls_running = frame.outer;
    weft__mutex_lock(&t->mu);
    reg->state = WEFT__REG_DONE;
    t->running--;
    void (*dispose)(weft__cancel_reg *) = reg->dispose;
    /* Relaxed: waiters read seq under the lock before they sleep, and the
     * futex compares it atomically with going to sleep. */
    atomic_fetch_add_explicit(&t->seq, 1, memory_order_relaxed);
    if (t->seq_waiters) weft__futex_wake(&t->seq, INT32_MAX);
    if (dispose) {
        weft__mutex_unlock(&t->mu);
        dispose(reg); /* nobody else refers to it any more */
        weft__mutex_lock(&t->mu);
    }
}

void weft__cancel_register(weft_cancel_token *t, weft__cancel_reg *reg) {
    weft__mutex_lock(&t->mu);
    /* Relaxed: the flag is only set under this lock. */
    if (atomic_load_explicit(&t->flag, memory_order_relaxed) == 0) {
        reg->state = WEFT__REG_PENDING;
        reg->prev = NULL;
        reg->next = t->head;
        if (t->head) t->head->prev = reg;
        t->head = reg;
    } else {
        reg->state = WEFT__REG_RUNNING; /* registered late: runs at once, here */
        run_unlocked(t, reg);
    }
    weft__mutex_unlock(&t->mu);
}

int weft__cancel_deregister(weft_cancel_token *t, weft__cancel_reg *reg,
                            void (*self_dispose)(weft__cancel_reg *reg)) {
    weft__mutex_lock(&t->mu);
    int result = 0;
    for (;;) {
        if (reg->state == WEFT__REG_PENDING) {
            unlink_reg(t, reg);
            reg->state = WEFT__REG_IDLE;
            result = 1;
            break;
        }
        if (reg->state != WEFT__REG_RUNNING) break;
        if (running_here(reg)) { /* from inside its own callback, or one nested in it */
            reg->dispose = self_dispose;
            result = -1;
            break;
        }
        uint32_t seen = atomic_load_explicit(&t->seq, memory_order_relaxed);
        t->seq_waiters++;
        weft__mutex_unlock(&t->mu);
        weft__futex_wait(&t->seq, seen, UINT64_MAX);
        weft__mutex_lock(&t->mu);
        t->seq_waiters--;
    }
    weft__mutex_unlock(&t->mu);
    return result;
}

bool weft__cancel_try_retain(weft_cancel_token *t) {
    uint32_t n = atomic_load_explicit(&t->refs, memory_order_relaxed);
    do {
        if (n == 0) return false;
    } while (!atomic_compare_exchange_weak_explicit(&t->refs, &n, n + 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    return true;
}

/* ---- tokens ---- */

/* Children marked cancelled by this thread whose callbacks have not run yet,
 * most recent first (linked through `deferred`, each holding a reference).
 * A parent's callback cancelling its child by a plain call recursed once per
 * generation: cancelling the root of a chain of 100,000 tokens overflowed an
 * 8 MiB stack (and a worker's or the timer thread's far sooner).  The child's
 * flag and reason are set at once; its callbacks, its own children's included,
 * run from the loop of the cancel that started it all (cancel_with). */
static _Thread_local weft_cancel_token *tls_deferred;
/* Cancels of this thread draining tls_deferred now (nested in callbacks). */
static _Thread_local unsigned tls_draining;

static void copy_reason(char *dst, const char *src);

/* Sets t's flag and reason and marks it firing (reset says WEFT_EBUSY until
 * fire_callbacks is done).  False if t was cancelled already. */
static bool mark_cancelled(weft_cancel_token *t, const char *reason) {
    weft__mutex_lock(&t->mu);
    if (atomic_load_explicit(&t->flag, memory_order_relaxed) != 0) {
        weft__mutex_unlock(&t->mu);
        return false;
    }
    copy_reason(t->reason, reason);
    atomic_fetch_add_explicit(&t->cancels, 1, memory_order_relaxed);
    /* Release: pairs with weft_cancel_token_is_cancelled's acquire load, so a
     * reader that sees the flag sees the reason and what the canceller wrote. */
    atomic_store_explicit(&t->flag, WEFT__CANCEL_SET, memory_order_release);
    t->firing = true;
    weft__mutex_unlock(&t->mu);
    return true;
}

/* Runs the callbacks of t, which mark_cancelled marked. */
static void fire_callbacks(weft_cancel_token *t) {
    weft__mutex_lock(&t->mu);
    while (t->head) {
        weft__cancel_reg *reg = t->head;
        unlink_reg(t, reg);
        reg->state = WEFT__REG_RUNNING;
        run_unlocked(t, reg);
    }
    t->firing = false;
    weft__mutex_unlock(&t->mu);
}

/* Runs the callbacks of t, which mark_cancelled marked, and then those of the
 * descendants they mark (deferred above `floor`; a callback's own cancel,
 * nested in this one, drains its part before it returns). */
static void fire_and_drain(weft_cancel_token *t) {
    weft_cancel_token *floor = tls_deferred;
    tls_draining++;
    fire_callbacks(t);
    while (tls_deferred != floor) {
        weft_cancel_token *c = tls_deferred;
        tls_deferred = c->deferred;
        fire_callbacks(c); /* may defer c's children */
        weft_cancel_token_destroy(c);
    }
    tls_draining--;
}

static void on_parent_cancel(weft__cancel_reg *reg, const char *reason) {
    weft_cancel_token *child = (weft_cancel_token *)((char *)reg - offsetof(weft_cancel_token, parent_reg));
    if (!mark_cancelled(child, reason)) return;
    /* Deferred to the drain under way; with none (a child created under, or
     * reset under, a cancelled parent) its callbacks run here.  The child
     * lives while this runs (its destroy waits for it), but one whose last
     * reference is being dropped must not be retained again: it has no
     * children (they would hold references), so its callbacks run here too. */
    if (tls_draining && weft__cancel_try_retain(child)) {
        child->deferred = tls_deferred;
        tls_deferred = child;
    } else {
        fire_and_drain(child);
    }
}

weft_cancel_token *weft_cancel_token_create(weft_cancel_token *parent, weft_status *err) {
    weft_cancel_token *t = weft__calloc(sizeof *t);
    weft_status st = t ? WEFT_OK : weft__fail_st(__func__, WEFT_ENOMEM);
    if (t && weft__mutex_init(&t->mu) != 0) st = weft__fail(__func__, WEFT_ESYS, "a mutex could not be initialised");
    if (st == WEFT_OK && weft__mutex_init(&t->attach_mu) != 0) {
        weft__mutex_destroy(&t->mu);
        st = weft__fail(__func__, WEFT_ESYS, "a mutex could not be initialised");
    }
    if (err) *err = st;
    if (st != WEFT_OK) {
        if (t) weft__free(t, sizeof *t);
        return NULL;
    }
    atomic_init(&t->flag, 0);
    atomic_init(&t->refs, 1);
    atomic_init(&t->cancels, 0);
    atomic_init(&t->seq, 0);
    t->deadline = (weft__timer){0, WEFT__TIMER_IDLE, t, false};
    t->parent_reg.fn = on_parent_cancel;
    t->prune_at = 16;
    if (parent) {
        t->parent = weft_cancel_token_retain(parent);
        weft__cancel_register(parent, &t->parent_reg); /* cancels t now if parent is */
    }
    return t;
}

weft_cancel_token *weft_cancel_token_retain(weft_cancel_token *t) {
    if (t) atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    return t;
}

void weft_cancel_token_destroy(weft_cancel_token *t) {
    /* A loop up the chain of parents, not a recursion: the last reference of
     * a chain's leaf frees the whole chain (100,000 tokens overflowed the
     * stack).  acq_rel: the last dropper sees every other holder's writes. */
    while (t && atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1) {
        weft_cancel_token *parent = t->parent;
        /* Off the parent first: its cancel may be cancelling t right now. */
        if (parent) (void)weft__cancel_deregister(parent, &t->parent_reg, NULL);
        (void)weft__timer_disarm(&t->deadline);
        weft__cancel_detach_all(t);
        /* What is left on the list was registered without a handle. */
        for (weft__cancel_reg *reg = t->head, *next; reg; reg = next) {
            next = reg->next;
            if (reg->dispose) reg->dispose(reg);
        }
        weft__mutex_destroy(&t->attach_mu);
        weft__mutex_destroy(&t->mu);
        weft__free(t, sizeof *t);
        t = parent; /* the reference t held */
    }
}

/* Copies src (NULL: "") truncated to the buffer, cut at a UTF-8 character
 * boundary (core/utf8.h), so that a reason in a log or a JSON string stays
 * whole; no byte past the limit is read (cancel.h: the text need not be
 * NUL-terminated within it). */
static void copy_reason(char *dst, const char *src) { weft__utf8_copy(dst, WEFT_CANCEL_REASON_MAX, src); }

weft_status weft_cancel_token_cancel_with(weft_cancel_token *t, const char *reason) {
    if (!t) return weft__fail(__func__, WEFT_EINVAL, "t is NULL");
    if (!mark_cancelled(t, reason)) return WEFT_ECANCELED;
    /* A reference of the cancel's own while the callbacks run (the caller's
     * holds: a plain retain).  A callback may drop a reference that is not
     * the last (its handle holds one) and then remove its own handle, or one
     * further up this thread: that remove dropped the token's last reference
     * with its callbacks still running here (use after free); now the last
     * one goes after them, below. */
    (void)weft_cancel_token_retain(t);
    fire_and_drain(t);
    weft_cancel_token_destroy(t);
    return WEFT_OK;
}

weft_status weft_cancel_token_cancel(weft_cancel_token *t) { return weft_cancel_token_cancel_with(t, NULL); }

bool weft_cancel_token_is_cancelled(const weft_cancel_token *t) {
    return t && atomic_load_explicit(&t->flag, memory_order_acquire) != 0;
}

const char *weft_cancel_token_reason(const weft_cancel_token *t) {
    return weft_cancel_token_is_cancelled(t) ? t->reason : "";
}

uint64_t weft_cancel_token_cancel_count(const weft_cancel_token *t) {
    return t ? atomic_load_explicit(&t->cancels, memory_order_relaxed) : 0;
}

weft_status weft_cancel_token_reset(weft_cancel_token *t) {
    if (!t) return weft__fail(__func__, WEFT_EINVAL, "t is NULL");
    /* The deadline first: disarmed after the flag was cleared, a deadline
     * firing in between cancelled the token again just after this call said
     * it was re-armed.  A fire already under way is a cancel running. */
    (void)weft__timer_disarm(&t->deadline);
    if (atomic_load_explicit(&t->deadline.firing, memory_order_acquire))
        return weft__fail(__func__, WEFT_EBUSY, "the token's deadline is cancelling it right now");
    weft__mutex_lock(&t->mu);
    bool busy = t->firing || t->running;
    if (!busy) {
        t->reason[0] = 0;
        atomic_store_explicit(&t->flag, 0, memory_order_release);
    }
    weft__mutex_unlock(&t->mu);
    if (busy) return weft__fail(__func__, WEFT_EBUSY, "a callback of the token is running");
    if (t->parent) { /* linked again: a cancelled parent cancels t again */
        (void)weft__cancel_deregister(t->parent, &t->parent_reg, NULL);
        weft__cancel_register(t->parent, &t->parent_reg);
    }
    return WEFT_OK;
}

/* ---- public callbacks ---- */

struct weft_cancel_callback {
    weft__cancel_reg reg; /* first: the dispose functions cast back */
    weft_cancel_token *token; /* a reference, with a handle; else NULL */
    weft_cancel_fn fn;
    void *arg;
};

static void callback_run(weft__cancel_reg *reg, const char *reason) {
    weft_cancel_callback *cb = (weft_cancel_callback *)reg;
    cb->fn(cb->arg, reason);
}

static void callback_free(weft__cancel_reg *reg) { weft__free(reg, sizeof(weft_cancel_callback)); }

weft_status weft_cancel_token_on_cancel(weft_cancel_token *t, weft_cancel_fn fn, void *arg,
                                        weft_cancel_callback **out) {
    if (out) *out = NULL;
    if (!t || !fn) return weft__fail(__func__, WEFT_EINVAL, "t or fn is NULL");
    weft_cancel_callback *cb = weft__calloc(sizeof *cb);
    if (!cb) return weft__fail_st(__func__, WEFT_ENOMEM);
    cb->reg.fn = callback_run;
    cb->reg.dispose = out ? NULL : callback_free; /* without a handle the token frees it */
    cb->token = out ? weft_cancel_token_retain(t) : NULL;
    cb->fn = fn;
    cb->arg = arg;
    if (out) *out = cb; /* before it can run: fn may remove its own handle */
    weft__cancel_register(t, &cb->reg);
    return WEFT_OK;
}

bool weft_cancel_callback_remove(weft_cancel_callback *cb) {
    if (!cb) return false;
    weft_cancel_token *t = cb->token;
    int r = weft__cancel_deregister(t, &cb->reg, callback_free);
    if (r >= 0) callback_free(&cb->reg); /* -1: its cancel frees it after it returns */
    weft_cancel_token_destroy(t);
    return r == 1;
}
