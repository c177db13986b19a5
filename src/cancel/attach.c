/* Tokens attached to futures (runs, async tasks), and what a task sees
 * through its context: weft_ctx_check and the reason.
 *
 * An attachment is a callback on the token that cancels the future, plus a
 * reference to the future.  Nothing is added to the task path: a run checks
 * its future's stop bits before each task anyway, and the token's callback
 * sets them.  An attachment is freed once its future has finished, lazily:
 * each attach first sweeps the token's list when it has doubled since the
 * last sweep (amortised O(1) per attach, and a long-lived token holds memory
 * for at most twice the work still running), and a token's last reference
 * frees them all.
 *
 * The reason reaches a task through a process-wide registry, keyed by the
 * address of the future's stop word (what a task's context points at), read
 * only by weft_ctx_cancel_reason and by weft_ctx_check once it has found the
 * run cancelled, so it costs nothing until then. */
#include "cancel/cancel.h"
#include "core/alloc.h"
#include "core/error_detail.h"
#include "core/executor.h"
#include "core/fj.h" /* weft__run_root_stop */
#include "core/future.h"

#include <stddef.h>
#include <string.h>

struct weft__attach {
    weft__cancel_reg reg; /* first: cast back from the registration */
    weft_future *f;       /* a reference; NULL for a fork-join root (below) */
    _Atomic int *stop;    /* the stop word the token sets: &f->stop, or the root's */
    weft_cancel_token *t;
    /* This link's fire is the one that set the stop word's CANCEL bit: its
     * token's reason is the one the work was cancelled with (below). */
    _Atomic bool stopped_it;
    struct weft__attach *next;   /* t's list, under t->attach_mu */
    struct weft__attach *bucket; /* the registry's chain, under its shard's lock */
};

/* ---- the registry ---- */

enum { SHARDS = 16 };
static struct shard {
    weft__mutex mu;
    struct weft__attach *head;
} shards[SHARDS];
static _Atomic int shards_once;

static int shards_setup(void) {
    for (int i = 0; i < SHARDS; i++)
        if (weft__mutex_init(&shards[i].mu) != 0) {
            while (i-- > 0) weft__mutex_destroy(&shards[i].mu);
            return WEFT_ESYS;
        }
    return 0;
}

static struct shard *shard_of(const void *stop) {
    uintptr_t k = (uintptr_t)stop >> 6; /* records are at least a cache line apart */
    return &shards[(k ^ (k >> 4) ^ (k >> 8)) % SHARDS];
}

static void registry_add(struct weft__attach *a) {
    struct shard *s = shard_of(a->stop);
    weft__mutex_lock(&s->mu);
    a->bucket = s->head;
    s->head = a;
    weft__mutex_unlock(&s->mu);
}

static void registry_remove(struct weft__attach *a) {
    struct shard *s = shard_of(a->stop);
    weft__mutex_lock(&s->mu);
    for (struct weft__attach **p = &s->head; *p; p = &(*p)->bucket)
        if (*p == a) {
            *p = a->bucket;
            break;
        }
    weft__mutex_unlock(&s->mu);
}

/* Copies into buf the reason of a cancelled token attached to the future
 * whose stop word is `stop`; "" if none.  With several attached and
 * cancelled, the one whose cancel stopped the work: the chain is newest
 * first, so the first cancelled one found was the token attached last,
 * and a run the user's token stopped read the reason of a deadline that
 * fired after (weft_ctx_cancel_reason: the reason the run was cancelled
 * with).  Another cancelled token's reason stands in when the one that
 * stopped it is gone or reset, or did not cancel it itself (a set's
 * members, cancelled through the set's link: the token is theirs too). */
static void registry_reason(const _Atomic int *stop, char *buf) {
    buf[0] = 0;
    if (atomic_load_explicit(&shards_once, memory_order_acquire) != 2) return;
    struct shard *s = shard_of(stop);
    weft__mutex_lock(&s->mu);
    struct weft__attach *pick = NULL;
    for (struct weft__attach *a = s->head; a; a = a->bucket) {
        if (a->stop != stop || !weft_cancel_token_is_cancelled(a->t)) continue;
        if (!pick) pick = a;
        if (atomic_load_explicit(&a->stopped_it, memory_order_relaxed)) {
            pick = a;
            break;
        }
    }
    if (pick) {
        weft__mutex_lock(&pick->t->mu); /* against a reset rewriting it */
        memcpy(buf, pick->t->reason, WEFT_CANCEL_REASON_MAX);
        weft__mutex_unlock(&pick->t->mu);
    }
    weft__mutex_unlock(&s->mu);
}

/* ---- attachments ---- */

static void attach_fire(weft__cancel_reg *reg, const char *reason) {
    (void)reason;
    struct weft__attach *a = (struct weft__attach *)reg;
    if (a->f) {
        /* A set's future (weft_run_many) stands for its members' runs, and its
         * own cancel stops none of them (weft/graph.h): cancel the members, as
         * weft_run_many_cancel does, or the token's cancel was lost and every
         * member ran to the end.  A member not submitted is NULL. */
        /* The set's PARTS bit first, then its table, read atomically:
         * weft_run_many may still be filling it, and a member it adds after
         * the bit is set starts cancelled (graph/run.c, weft__run_member). */
        if (a->f->nparts) {
            atomic_fetch_or_explicit(&a->f->stop, WEFT__STOP_PARTS, memory_order_seq_cst);
            (void)weft_future_cancel(a->f);
            for (size_t i = 0; i < a->f->nparts; i++) {
                weft_future *g = __atomic_load_n(&a->f->parts[i], __ATOMIC_SEQ_CST);
                if (g) (void)weft_future_cancel(g);
            }
            return;
        }
        /* weft_future_cancel's own step (core/future.c), telling whether
         * this cancel is the one that stopped the work. */
        struct shard *s = shard_of(a->stop);
        weft__mutex_lock(&s->mu); /* the bit and the mark at once: see below */
        int was = atomic_fetch_or_explicit(a->stop, WEFT__STOP_CANCEL, memory_order_seq_cst);
        if (!(was & (WEFT__STOP_CANCEL | WEFT__STOP_FINISHED)))
            atomic_store_explicit(&a->stopped_it, true, memory_order_relaxed);
        weft__mutex_unlock(&s->mu);
        return;
    }
    /* A root: release, so that a task that sees the bit (acquire) sees what
     * the canceller wrote before cancelling.  Under the shard's lock, which
     * registry_reason takes: a task that saw the bit and asks for the reason
     * between the bit and the mark read another cancelled token's reason (a
     * second token cancelling at the same moment), and the first afterwards. */
    struct shard *s = shard_of(a->stop);
    weft__mutex_lock(&s->mu);
    int was = atomic_fetch_or_explicit(a->stop, WEFT__STOP_CANCEL, memory_order_release);
    if (!(was & WEFT__STOP_CANCEL)) atomic_store_explicit(&a->stopped_it, true, memory_order_relaxed);
    weft__mutex_unlock(&s->mu);
}

/* Unlinks a from everything and frees it.  Under t->attach_mu. */
static void attach_free(struct weft__attach *a) {
    (void)weft__cancel_deregister(a->t, &a->reg, NULL);
    registry_remove(a);
    weft__future_release(a->f);
    weft__free(a, sizeof *a);
}

/* Frees the attachments of finished futures.  Under t->attach_mu. */
static void sweep(weft_cancel_token *t) {
    for (struct weft__attach **p = &t->attached; *p;) {
        struct weft__attach *a = *p;
        if (!weft_future_ready(a->f)) {
            p = &a->next;
            continue;
        }
        *p = a->next;
        t->nattached--;
        attach_free(a);
    }
    t->prune_at = t->nattached * 2 > 16 ? t->nattached * 2 : 16;
}

/* One attachment of t to f, registered in the registry (not yet on t). */
static struct weft__attach *attach_make(weft_cancel_token *t, weft_future *f) {
    struct weft__attach *a = weft__calloc(sizeof *a);
    if (!a) return NULL;
    a->reg.fn = attach_fire;
    a->f = f;
    a->stop = &f->stop;
    a->t = t;
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed); /* the caller holds one */
    registry_add(a); /* before it can fire: a task that sees the cancel finds the reason */
    return a;
}

weft_status weft_cancel_attach(weft_cancel_token *t, weft_future *f) {
    if (!t || !f) return weft__fail(__func__, WEFT_EINVAL, "t or f is NULL");
    int st = weft__cancel_once(&shards_once, shards_setup);
    if (st != 0) return weft__fail_st(__func__, (weft_status)st);
    /* A set's future (weft_run_many): each member's run is attached too, so
     * that its tasks find t's reason under their own run's stop word (the
     * set's record alone cancelled them, and they saw no reason).  All the
     * records are made first: on ENOMEM none is attached. */
    struct weft__attach *list = NULL;
    size_t made = 0;
    for (size_t k = f->nparts + 1; k-- > 0;) { /* pushed: the list is in index order, the set last */
        /* Atomic: weft_run_many may still be filling the table (run_many.c). */
        weft_future *g = k < f->nparts ? __atomic_load_n(&f->parts[k], __ATOMIC_SEQ_CST) : f;
        if (!g) continue; /* a member not submitted */
        struct weft__attach *a = attach_make(t, g);
        if (!a) {
            while (list) {
                struct weft__attach *next = list->next;
                registry_remove(list);
                weft__future_release(list->f);
                weft__free(list, sizeof *list);
                list = next;
            }
            return weft__fail_st(__func__, WEFT_ENOMEM);
        }
        a->next = list;
        list = a;
        made++;
    }
    weft__mutex_lock(&t->attach_mu);
    if (t->nattached + made > t->prune_at) sweep(t);
    while (list) {
        struct weft__attach *a = list;
        list = a->next;
        a->next = t->attached;
        t->attached = a;
        t->nattached++;
        /* Under attach_mu, so a sweep cannot free it half registered.  The
         * set's own record comes last: by the time it can cancel the
         * members, theirs are registered (each registration may fire at
         * once, t being cancelled already). */
        weft__cancel_register(t, &a->reg);
    }
    weft__mutex_unlock(&t->attach_mu);
    return WEFT_OK;
}

void weft__cancel_detach_all(weft_cancel_token *t) {
    weft__mutex_lock(&t->attach_mu);
    while (t->attached) {
        struct weft__attach *a = t->attached;
        t->attached = a->next;
        attach_free(a);
    }
    t->nattached = 0;
    weft__mutex_unlock(&t->attach_mu);
}

/* ---- the task's view ---- */

static _Thread_local char reason_buf[WEFT_CANCEL_REASON_MAX];

const char *weft_ctx_cancel_reason(const weft_ctx *ctx) {
    reason_buf[0] = 0;
    if (ctx && ctx->stop && (atomic_load_explicit(ctx->stop, memory_order_acquire) & WEFT__STOP_CANCEL))
        registry_reason(ctx->stop, reason_buf);
    return reason_buf;
}

/* weft_ctx_check once something was seen. */
static __attribute__((noinline)) weft_status check_slow(const weft_ctx *ctx, int bits) {
    if (bits & WEFT__STOP_CANCEL) {
        const char *why = weft_ctx_cancel_reason(ctx);
        weft__set_error_message("%s", *why ? why : "cancelled");
        return WEFT_ECANCELED;
    }
    if (weft__preempt_pending()) {
        weft__set_error_message("preempted");
        return WEFT_ECANCELED;
    }
    return WEFT_ETASK; /* WEFT__STOP_FAIL: another task of the run failed */
}

weft_status weft_ctx_check(const weft_ctx *ctx) {
    if (!ctx) return weft__fail(__func__, WEFT_EINVAL, "ctx is NULL");
    /* Acquire: what the canceller wrote before cancelling is visible after. */
    int bits = ctx->stop ? atomic_load_explicit(ctx->stop, memory_order_acquire) & WEFT__STOP_MASK : 0;
    if (__builtin_expect(bits == 0 && !weft__preempt_pending(), 1)) return WEFT_OK;
    return check_slow(ctx, bits);
}

weft_status weft_ctx_check_and_yield(const weft_ctx *ctx) {
    weft_status st = weft_ctx_check(ctx);
    if (st == WEFT_OK) weft__thread_yield();
    return st;
}

/* ---- fork-join roots ---- */

weft_status weft_run_root_with_token(weft_executor *ex, weft_cancel_token *t, weft_task_fn fn, void *arg,
                                     int *result) {
    if (result) *result = 0;
    if (!t) return weft__fail(__func__, WEFT_EINVAL, "t is NULL");
    if (!fn) return weft__fail(__func__, WEFT_EINVAL, "fn is NULL");
    int st = weft__cancel_once(&shards_once, shards_setup);
    if (st != 0) return weft__fail_st(__func__, (weft_status)st);
    /* The root's stop word and the token's link to it live on this stack: the
     * call returns only after the root and every child it spawned did, and
     * after the link is off the token (deregistering waits for a callback
     * running on another thread). */
    _Atomic int stop;
    atomic_init(&stop, 0);
    struct weft__attach a = {.reg = {.fn = attach_fire}, .stop = &stop, .t = t};
    (void)weft_cancel_token_retain(t); /* the caller's may go meanwhile */
    registry_add(&a);
    weft__cancel_register(t, &a.reg); /* fires here if t is cancelled already */
    int value = 0;
    weft_status rst = weft__run_root_stop(ex, &stop, fn, arg, &value);
    (void)weft__cancel_deregister(t, &a.reg, NULL);
    registry_remove(&a);
    weft_cancel_token_destroy(t);
    if (result) *result = value;
    /* A cancel that came while fn ran (fn may have stopped early and returned
     * 0): the caller learns its work was cut short.  Acquire: pairs with the
     * fetch_or above. */
    if (rst == WEFT_OK || rst == WEFT_ETASK)
        if (atomic_load_explicit(&stop, memory_order_acquire) & WEFT__STOP_CANCEL) return WEFT_ECANCELED;
    return rst;
}
