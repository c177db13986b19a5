/* Cancellation tokens, timers and attachments: what the files of src/cancel
 * share.  Internal. */
#ifndef WEFT_CANCEL_CANCEL_H
#define WEFT_CANCEL_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "platform/platform.h"
#include "weft/cancel.h"

/* A callback on a token's list.  Embedded in whatever registers it (a child
 * token, an attachment, a public handle), so registering allocates nothing.
 * `state` is written only under the token's lock. */
enum { WEFT__REG_IDLE, WEFT__REG_PENDING, WEFT__REG_RUNNING, WEFT__REG_DONE };
typedef struct weft__cancel_reg {
    void (*fn)(struct weft__cancel_reg *reg, const char *reason);
    /* Called after fn has run and the registration is DONE, outside the lock,
     * for a registration that nobody else frees (or NULL). */
    void (*dispose)(struct weft__cancel_reg *reg);
    struct weft__cancel_reg *prev, *next;
    int state;
} weft__cancel_reg;

/* A deadline in the timer heap (timer.c).  `idx` is its heap slot, or
 * WEFT__TIMER_IDLE; both fields are guarded by the timer lock. */
#define WEFT__TIMER_IDLE SIZE_MAX
typedef struct weft__timer {
    uint64_t when;
    size_t idx;
    weft_cancel_token *token;
    /* Taken off the heap by the timer thread, which is cancelling the token
     * now (set under the timer's lock; cleared once the cancel returned). */
    _Atomic bool firing;
} weft__timer;

struct weft__attach; /* attach.c */

struct weft_cancel_token {
    /* WEFT__CANCEL_SET once cancelled: the one word is_cancelled loads. */
    _Atomic int flag;
    _Atomic uint32_t refs;
    _Atomic uint64_t cancels; /* times cancelled (cancel_count) */
    /* Guards everything below but `seq` and the attachments. */
    weft__mutex mu;
    weft__cancel_reg *head;     /* pending callbacks, most recent first */
    bool firing;                /* a cancel is running callbacks */
    uint32_t running;           /* callbacks running now (late ones included) */
    uint32_t seq_waiters;       /* threads sleeping on seq */
    _Atomic uint32_t seq;       /* futex word: bumped when a callback returns */
    weft_cancel_token *parent;  /* holds a reference */
    /* The next token on the list of children a thread's cancel has marked and
     * not yet run the callbacks of (token.c, tls_deferred); that thread's. */
    weft_cancel_token *deferred;
    weft__cancel_reg parent_reg; /* on the parent's list: cancels this token */
    weft__timer deadline;       /* the token's own deadline (cancel_after/at) */
    /* Attachments to futures (attach.c), under attach_mu, which is taken
     * before mu when both are. */
    weft__mutex attach_mu;
    struct weft__attach *attached;
    size_t nattached, prune_at;
    char reason[WEFT_CANCEL_REASON_MAX];
};

#define WEFT__CANCEL_SET 1
#define WEFT__DEADLINE_REASON "deadline exceeded"

/* One-time setup of a process-wide object: runs init once (concurrent callers
 * wait for it).  init returns 0 or a status; a failure lets a later call try
 * again.  state: 0 not done, 1 running, 2 done. */
static inline int weft__cancel_once(_Atomic int *state, int (*init)(void)) {
    int s = atomic_load_explicit(state, memory_order_acquire);
    unsigned spins = 0;
    while (s != 2) {
        if (s == 0 && atomic_compare_exchange_weak_explicit(state, &s, 1, memory_order_acquire,
                                                            memory_order_acquire)) {
            int st = init();
            /* Release: pairs with the acquire loads above; the object is set up. */
            atomic_store_explicit(state, st == 0 ? 2 : 0, memory_order_release);
            return st;
        }
        if (s == 1) weft__spin_pause(&spins);
        s = atomic_load_explicit(state, memory_order_acquire);
    }
    return 0;
}

/* Registers reg on t.  If t is cancelled already, runs reg->fn at once on the
 * calling thread (and reg ends DONE).  Any thread. */
void weft__cancel_register(weft_cancel_token *t, weft__cancel_reg *reg);
/* Takes reg off t.  Returns 1 if it had not run (it never will), 0 if it has
 * run (or was never registered).  If it is running on another thread, waits
 * until it has returned.  If it is running on this thread (reg's own callback
 * removes it), returns -1 at once and sets reg->dispose to self_dispose, which
 * the cancel calls once fn has returned. */
int weft__cancel_deregister(weft_cancel_token *t, weft__cancel_reg *reg,
                            void (*self_dispose)(weft__cancel_reg *reg));
/* Adds a reference unless the count is already 0 (the token is being freed). */
bool weft__cancel_try_retain(weft_cancel_token *t);

/* ---- timer.c ---- */
/* Arms (or moves) timer e of e->token at `when`.  0, WEFT_ENOMEM or WEFT_ESYS. */
int weft__timer_arm(weft__timer *e, uint64_t when);
/* Disarms e; true if it was armed (had not fired).  After it returns, a fire
 * still under way shows as e->firing (read with acquire). */
bool weft__timer_disarm(weft__timer *e);
/* Armed timers of the process (tests). */
size_t weft__timer_armed(void);

/* ---- attach.c ---- */
/* Frees every attachment of t (t is being freed). */
void weft__cancel_detach_all(weft_cancel_token *t);

/* ---- preempt.c ---- */
/* The calling thread's preemption flag, which the signal handler sets.
 * Initial-exec TLS: a static slot, so the handler's access allocates nothing
 * even in a shared library (where the general model may call the dynamic
 * loader on a thread's first access). */
extern _Thread_local _Atomic int weft__preempt_flag __attribute__((tls_model("initial-exec")));
static inline bool weft__preempt_pending(void) {
    return atomic_load_explicit(&weft__preempt_flag, memory_order_relaxed) != 0;
}

/* The layer that keeps the preemption signal deliverable on workers
 * (preempt.c; listed by the composition root). */
struct weft__layer;
extern struct weft__layer weft__cancel_layer;

#endif
