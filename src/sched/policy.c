/* Ready-queue policies (weft/sched.h): FIFO (one shared queue), ROUND_ROBIN
 * (a queue per worker, dealt in turn, idle workers take from the others),
 * PRIORITY (everything through the executor's priority queue, sched.c), and
 * the user's own, whose items are checked: each is entered in a set when
 * pushed and must be found there (and leaves it) when it comes out, so an item
 * handed out twice or never pushed is caught and not run.  The set is the
 * layer's memory: a job handed out twice may have been freed after it ran, so
 * nothing of the job itself is read. */
#include "sched/sched.h"
#include "core/alloc.h"
#include "core/error_detail.h"
#include "core/log.h"
#include "core/obs_hooks.h" /* steals counted for the metrics */

#include <string.h>

/* ---- a locked ring of job pointers ---- */

/* A job and the worker that queued it (-1: a thread that is no worker), so
 * that a ROUND_ROBIN take can tell a job that moved between workers (a
 * steal in the metrics) from the taker's own. */
typedef struct rslot {
    weft__job *j;
    int from;
    int prio; /* a checked policy's held set: the priority it was pushed with */
} rslot;

typedef struct ring {
    weft__mutex lock;
    rslot *a;
    size_t head, n, cap;
} ring;

static int ring_push(ring *r, weft__job *j, int from) {
    weft__mutex_lock(&r->lock);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        rslot *a = weft__alloc(sizeof *a * cap);
        if (!a) {
            weft__mutex_unlock(&r->lock);
            return WEFT_ENOMEM;
        }
        for (size_t i = 0; i < r->n; i++) a[i] = r->a[(r->head + i) % r->cap];
        weft__free(r->a, sizeof *a * r->cap);
        r->a = a, r->cap = cap, r->head = 0;
    }
    r->a[(r->head + r->n++) % r->cap] = (rslot){j, from, 0};
    weft__mutex_unlock(&r->lock);
    return WEFT_OK;
}

static weft__job *ring_pop(ring *r, int *from) {
    weft__mutex_lock(&r->lock);
    weft__job *j = NULL;
    if (r->n) {
        j = r->a[r->head].j;
        *from = r->a[r->head].from;
        r->head = (r->head + 1) % r->cap;
        r->n--;
    }
    weft__mutex_unlock(&r->lock);
    return j;
}

/* ---- built-in policies over rings ---- */

typedef struct rings {
    unsigned n;
    _Atomic unsigned deal; /* ROUND_ROBIN: the next worker to deal to */
    uint64_t rng;          /* RANDOM: under ring 0's lock */
    ring r[];
} rings;

static int fifo_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p;
    return ring_push(&((rings *)st)->r[0], (weft__job *)it, worker);
}
static weft_sched_item *fifo_pop(void *st, int worker) {
    (void)worker;
    int from;
    return (weft_sched_item *)ring_pop(&((rings *)st)->r[0], &from);
}
static int rr_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p;
    rings *rs = st;
    unsigned k = atomic_fetch_add_explicit(&rs->deal, 1, memory_order_relaxed) % rs->n;
    return ring_push(&rs->r[k], (weft__job *)it, worker);
}
/* ROUND_ROBIN's take: worker's own queue (own), or the first job of any
 * queue from worker's on; *from: the worker that queued it. */
static weft__job *rr_take(rings *rs, int worker, bool own, int *from) {
    if (own) return worker < 0 ? NULL : ring_pop(&rs->r[(unsigned)worker % rs->n], from);
    unsigned start = worker < 0 ? 0 : (unsigned)worker;
    for (unsigned k = 0; k < rs->n; k++) {
        weft__job *j = ring_pop(&rs->r[(start + k) % rs->n], from);
        if (j) return j;
    }
    return NULL;
}
static weft_sched_item *rr_pop(void *st, int worker) {
    int from;
    return (weft_sched_item *)rr_take(st, worker, true, &from);
}
static weft_sched_item *rr_steal(void *st, int worker) {
    int from;
    return (weft_sched_item *)rr_take(st, worker, false, &from);
}
/* RANDOM: one pool (ring 0's array, unordered), a seeded xorshift picks. */
static weft_sched_item *random_pop(void *st, int worker) {
    (void)worker;
    rings *rs = st;
    ring *r = &rs->r[0];
    weft__mutex_lock(&r->lock);
    weft__job *j = NULL;
    if (r->n == 1) { /* no choice: the generator is not advanced, so a job that */
        j = r->a[--r->n].j; /* reached the worker another way changes nothing */
    } else if (r->n) {
        uint64_t x = rs->rng;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rs->rng = x;
        size_t k = (size_t)(x % r->n); /* head stays 0: the ring is a plain array here */
        j = r->a[k].j;
        r->a[k] = r->a[--r->n];
    }
    weft__mutex_unlock(&r->lock);
    return (weft_sched_item *)j;
}

static void rings_destroy(void *st) {
    rings *rs = st;
    for (unsigned k = 0; k < rs->n; k++) {
        weft__free(rs->r[k].a, sizeof(rslot) * rs->r[k].cap);
        weft__mutex_destroy(&rs->r[k].lock);
    }
    weft__free(rs, sizeof *rs + sizeof(ring) * rs->n);
}

static rings *rings_new(unsigned n) {
    rings *rs = weft__calloc(sizeof *rs + sizeof(ring) * n);
    if (!rs) return NULL;
    rs->n = n;
    atomic_init(&rs->deal, 0);
    for (unsigned k = 0; k < n; k++)
        if (weft__mutex_init(&rs->r[k].lock) != 0) {
            rs->n = k;
            rings_destroy(rs);
            return NULL;
        }
    return rs;
}

/* ---- the set of items a checked policy holds ---- */

#define TOMB ((weft__job *)(uintptr_t)1)

typedef struct weft__held weft__held;
struct weft__held {
    weft__mutex lock;
    rslot *a; /* open addressing, linear probing on .j; NULL free, TOMB deleted; .from: who queued it */
    size_t cap, used; /* used: live + tombstones */
};

static size_t slot_of(const weft__job *j, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)j * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

/* Rehashes into twice the live count's room (under the lock). */
static int held_grow(weft__held *h) {
    size_t cap = h->cap ? h->cap * 2 : 1024;
    rslot *a = weft__calloc(sizeof *a * cap);
    if (!a) return WEFT_ENOMEM;
    size_t used = 0;
    for (size_t i = 0; i < h->cap; i++) {
        weft__job *j = h->a[i].j;
        if (!j || j == TOMB) continue;
        size_t k = slot_of(j, cap);
        while (a[k].j) k = (k + 1) & (cap - 1);
        a[k] = h->a[i], used++;
    }
    weft__free(h->a, sizeof *a * h->cap);
    h->a = a, h->cap = cap, h->used = used;
    return WEFT_OK;
}

static int held_add(weft__held *h, weft__job *j, int from, int prio) {
    weft__mutex_lock(&h->lock);
    int st = (h->used + 1) * 2 > h->cap ? held_grow(h) : WEFT_OK;
    if (st == WEFT_OK) {
        size_t k = slot_of(j, h->cap);
        while (h->a[k].j && h->a[k].j != TOMB) k = (k + 1) & (h->cap - 1);
        if (!h->a[k].j) h->used++;
        h->a[k] = (rslot){j, from, prio};
    }
    weft__mutex_unlock(&h->lock);
    return st;
}

/* True if j was held (it is not any more); *from: who queued it, *prio (if
 * not NULL): the priority it was pushed with. */
static bool held_take(weft__held *h, weft__job *j, int *from, int *prio) {
    bool found = false;
    weft__mutex_lock(&h->lock);
    if (h->cap)
        for (size_t k = slot_of(j, h->cap); h->a[k].j; k = (k + 1) & (h->cap - 1))
            if (h->a[k].j == j) {
                *from = h->a[k].from;
                if (prio) *prio = h->a[k].prio;
                h->a[k].j = TOMB;
                found = true;
                break;
            }
    weft__mutex_unlock(&h->lock);
    return found;
}

static weft__held *held_new(void) {
    weft__held *h = weft__calloc(sizeof *h);
    if (h && weft__mutex_init(&h->lock) != 0) {
        weft__free(h, sizeof *h);
        h = NULL;
    }
    return h;
}

static void held_free(weft__held *h) {
    if (!h) return;
    weft__free(h->a, sizeof *h->a * h->cap);
    weft__mutex_destroy(&h->lock);
    weft__free(h, sizeof *h);
}

/* ---- policies that share a state ----
 *
 * A user may pass one policy, state and all, to several executors (one queue
 * that their workers all push to and take from).  Each executor's workers
 * then take items that another executor pushed: not in their own held set,
 * such an item was counted as a policy error and dropped, its run never
 * ended and that executor's wait hung.  So the checked policies of one state
 * are kept together (a share), an item not held by the taker's policy is
 * looked for in the others' sets, and one found there goes back to the
 * executor it came from (its shared queue), to run there.  The calls into
 * the state are counted per share, as a pop of one executor beside a push
 * or a pop of another is no error either (weft__policy_final's window). */
typedef struct weft__policy_share {
    void *state;
    unsigned refs;
    struct weft__policy_share *next;
    weft__policy *members; /* linked by share_next */
    /* Calls into the state's push and pop begun and ended (with their
     * bookkeeping), so that the check before sleeping judges only a window
     * no other call overlapped (weft__policy_final). */
    _Atomic uint64_t calls_begun, calls_ended;
} weft__policy_share;

/* Every share, under a spin lock: taken at a checked policy's create and
 * destroy, and for an item its taker's policy does not hold. */
static atomic_flag shares_lock = ATOMIC_FLAG_INIT;
static weft__policy_share *shares;

static void shares_take(void) {
    while (atomic_flag_test_and_set_explicit(&shares_lock, memory_order_acquire)) weft__cpu_relax();
}
static void shares_drop(void) { atomic_flag_clear_explicit(&shares_lock, memory_order_release); }

/* Enters p (checked, p->ops.state set) in its state's share. */
static int share_join(weft__policy *p) {
    weft__policy_share *sh = weft__calloc(sizeof *sh); /* before the lock; freed if one exists */
    if (!sh) return WEFT_ENOMEM;
    shares_take();
    weft__policy_share *old = shares;
    while (old && old->state != p->ops.state) old = old->next;
    if (old) {
        weft__free(sh, sizeof *sh);
        sh = old;
    } else {
        sh->state = p->ops.state;
        atomic_init(&sh->calls_begun, 0);
        atomic_init(&sh->calls_ended, 0);
        sh->next = shares;
        shares = sh;
    }
    sh->refs++;
    p->share_next = sh->members;
    sh->members = p;
    p->share = sh;
    shares_drop();
    return WEFT_OK;
}

static void share_leave(weft__policy *p) {
    weft__policy_share *sh = p->share;
    if (!sh) return;
    shares_take();
    weft__policy **m = &sh->members;
    while (*m != p) m = &(*m)->share_next;
    *m = p->share_next;
    bool last = --sh->refs == 0;
    if (last) {
        weft__policy_share **e = &shares;
        while (*e != sh) e = &(*e)->next;
        *e = sh->next;
    }
    shares_drop();
    if (last) weft__free(sh, sizeof *sh);
    p->share = NULL;
}

/* j, which p's set does not hold, taken out of the set of another policy of
 * p's share: the executor it belongs to, or NULL.  That executor exists: j
 * is its job, not yet run. */
static weft_executor *share_owner(weft__policy *p, weft__job *j) {
    weft_executor *owner = NULL;
    int from, prio;
    shares_take();
    for (weft__policy *q = p->share->members; q && !owner; q = q->share_next)
        if (q != p && held_take(q->held, j, &from, &prio)) {
            atomic_fetch_sub_explicit(&q->outstanding, 1, memory_order_relaxed);
            owner = q->ex;
            /* It goes back through the owner's shared queue, whose jobs move
             * into the policy as NORMAL jobs queued by no worker: a HIGH or
             * LOW job taken by the wrong executor came back NORMAL (weft/
             * sched.h: push gets the priority given at submission).  Its
             * priority and queuer are kept here for that push
             * (weft__policy_push).  Without memory for them it goes back as
             * before. */
            if (!q->returned) q->returned = held_new(); /* written once, under the lock */
            if (q->returned && held_add(q->returned, j, from, prio) == WEFT_OK)
                atomic_fetch_add_explicit(&q->nreturned, 1, memory_order_release);
        }
    shares_drop();
    return owner;
}

/* ---- the layer's side ---- */

int weft__policy_create(weft__sched *s, const weft_sched_config *c, unsigned nworkers) {
    weft_sched_kind kind = c ? c->kind : WEFT_SCHED_WORK_STEALING;
    if (kind == WEFT_SCHED_WORK_STEALING) return WEFT_OK;
    if ((unsigned)kind > WEFT_SCHED_RANDOM)
        return weft__fail("weft_executor_create", WEFT_EINVAL, "config->sched->kind %d is not a weft_sched_kind",
                          (int)kind);
    if (kind == WEFT_SCHED_CUSTOM && (!c->policy || !c->policy->push || !c->policy->pop))
        return weft__fail("weft_executor_create", WEFT_EINVAL,
                          "config->sched->kind is WEFT_SCHED_CUSTOM but its policy %s", !c->policy ? "is NULL"
                          : "lacks push or pop");
    weft__policy *p = weft__calloc(sizeof *p);
    if (!p) return WEFT_ENOMEM;
    atomic_init(&p->outstanding, 0);
    p->ex = s->ex;
    if (kind == WEFT_SCHED_PRIORITY) {
        p->heap = true;
    } else if (kind == WEFT_SCHED_CUSTOM) {
        p->ops = *c->policy;
        if (!(p->held = held_new())) return weft__free(p, sizeof *p), WEFT_ENOMEM;
        atomic_init(&p->nreturned, 0);
        if (share_join(p) != WEFT_OK) return held_free(p->held), weft__free(p, sizeof *p), WEFT_ENOMEM;
        p->checked = true;
    } else {
        bool one = kind != WEFT_SCHED_ROUND_ROBIN;
        rings *rs = rings_new(one ? 1 : nworkers);
        if (!rs) return weft__free(p, sizeof *p), WEFT_ENOMEM;
        uint64_t z = (c ? c->seed : 0) + 0x9e3779b97f4a7c15ull; /* splitmix64: every seed its own state */
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        rs->rng = z ? z : 1; /* xorshift needs a non-zero state */
        p->ops = (weft_sched_policy){.state = rs, .destroy = rings_destroy};
        p->ops.push = one ? fifo_push : rr_push;
        p->ops.pop = kind == WEFT_SCHED_FIFO ? fifo_pop : kind == WEFT_SCHED_RANDOM ? random_pop : rr_pop;
        p->ops.steal = one ? NULL : rr_steal;
        p->shared = one; /* a job from it is taken as from the injector: a steal */
        p->rr = !one;
    }
    s->policy = p;
    return WEFT_OK;
}

void weft__policy_destroy(weft__sched *s) {
    weft__policy *p = s->policy;
    if (!p) return;
    /* A user's policy (checked) is destroyed only with an executor that was
     * made: a create that fails (out of memory in a later layer, a worker
     * that cannot start) unwinds through here too, and its caller still owns
     * the state it passed (weft/sched.h).  Calling destroy on some of those
     * failures and not on others left the caller no way to know whether to
     * free it: a leak or a double free.  The built-in rings are ours. */
    share_leave(p); /* before its set goes: other executors' takes look there */
    if (p->ops.destroy && (!p->checked || s->ex->created)) p->ops.destroy(p->ops.state);
    held_free(p->held);
    held_free(p->returned);
    weft__free(p, sizeof *p);
    s->policy = NULL;
}

/* Brackets a call into a checked policy (weft__policy_final's window). */
static inline void call_begins(weft__policy *p) {
    if (p->checked) atomic_fetch_add_explicit(&p->share->calls_begun, 1, memory_order_seq_cst);
}
static inline void call_ends(weft__policy *p) {
    if (p->checked) atomic_fetch_add_explicit(&p->share->calls_ended, 1, memory_order_seq_cst);
}

int weft__policy_push(weft__sched *s, weft__job *job, int prio, int worker, int from) {
    weft__policy *p = s->policy;
    call_begins(p);
    if (p->checked) {
        /* A job of ours another executor took from a shared state and sent
         * back (share_owner): pushed again as it was first pushed. */
        int was_from, was_prio;
        if (atomic_load_explicit(&p->nreturned, memory_order_acquire) > 0 &&
            held_take(p->returned, job, &was_from, &was_prio)) {
            atomic_fetch_sub_explicit(&p->nreturned, 1, memory_order_relaxed);
            prio = was_prio, from = was_from;
        }
        if (held_add(p->held, job, from, prio) != WEFT_OK) return call_ends(p), WEFT_ENOMEM;
        atomic_fetch_add_explicit(&p->outstanding, 1, memory_order_relaxed);
    }
    /* A user's push sees the calling worker; the built-in ones use `worker`
     * only to record who queued the job (rr_push): for them, from. */
    int st = p->ops.push(p->ops.state, (weft_sched_item *)job, (weft_priority)prio, p->checked ? worker : from);
    if (st != 0 && p->checked) {
        /* Refused: the caller runs the job outside the policy, unless a pop
         * already handed it out.  The job is held from before the user's push,
         * and a policy that returns an item twice (its stale copy of this
         * address, from an earlier job there) can hand it out in that window:
         * check_out accepts it, as the job is held, and a worker runs it.
         * Then it is no longer ours to refuse: the push counts as taken, or
         * the caller ran it a second time, finished its call twice, and the
         * call returned while another of its jobs still ran (ASan: a sort's
         * scratch read after free, cross43's duplicating policy). */
        int was;
        if (held_take(p->held, job, &was, NULL)) atomic_fetch_sub_explicit(&p->outstanding, 1, memory_order_relaxed);
        else st = 0;
    }
    call_ends(p);
    return st;
}

/* A checked policy handed out j: 1 if it was pushed and not handed out
 * before (*from: who queued it); -1 for another executor's job (a shared
 * state): sent back to that executor, it runs there; 0 for an error. */
static int check_out(weft__sched *s, weft__job *j, int *from) {
    if (held_take(s->policy->held, j, from, NULL)) {
        atomic_fetch_sub_explicit(&s->policy->outstanding, 1, memory_order_relaxed);
        return 1;
    }
    weft_executor *owner = share_owner(s->policy, j);
    if (owner) {
        /* Its shared queue, as a job from a thread that is no worker of it:
         * one of its workers moves it into the policy again (and may take
         * it then).  Cannot fail (the spare list). */
        (void)weft__submit_from_always(owner, NULL, j);
        /* A call more in the window: this take returns NULL having had an
         * item, which says nothing of what the policy holds for us
         * (weft__policy_final judges no window with others' calls). */
        call_begins(s->policy);
        call_ends(s->policy);
        return -1;
    }
    atomic_fetch_add_explicit(&s->policy_errors, 1, memory_order_relaxed);
    weft__log(WEFT_LOG_ERROR, "sched: the custom policy returned an item it did not hold (twice, or never "
                              "pushed); it was not run");
    return 0;
}

/* A job for worker (own first when `own`), or NULL.  *from: the worker that
 * queued it (-1: a thread that is no worker, or a policy with one queue for
 * all, which is taken as the injector's). */
static weft__job *policy_take(weft__sched *s, int worker, bool own, int *from) {
    weft__policy *p = s->policy;
    *from = -1; /* one queue for all (FIFO, RANDOM): as the injector's */
    if (p->rr) return rr_take(p->ops.state, worker, own, from);
    weft_sched_item *(*fn)(void *, int) = own || !p->ops.steal ? p->ops.pop : p->ops.steal;
    weft__job *j = NULL;
    call_begins(p);
    /* A broken policy may repeat itself: bounded.  Another executor's jobs
     * (a shared state) are no such thing: each was held, and has left that
     * executor's set, so the policy cannot repeat one for ever; stopping at
     * them let this worker sleep while its own jobs waited behind them in
     * the policy, with nothing to wake it. */
    for (int tries = 0; tries < 4;) {
        j = (weft__job *)fn(p->ops.state, worker);
        if (!j || !p->checked) break;
        int r = check_out(s, j, from);
        if (r > 0) break;
        j = NULL;
        if (r == 0) tries++;
    }
    call_ends(p);
    return j;
}

/* Worker took a job `from` queued: counts a steal unless from == worker. */
static void policy_moved(weft__sched *s, int worker, int from) {
    /* A job taken from the queue of one worker by another, or that a thread
     * that is no worker queued, moved: a steal (weft_worker_metrics.steals).
     * Only a policy's steal used to count, so ROUND_ROBIN's dealing (a job
     * queued on one worker and run by the next) and a custom policy's pop
     * handing a worker another's job moved work unseen.  Counted on the
     * executor's workers only, as sched.c's stolen(): a submitter slot has
     * no figures. */
    if (from != worker && worker >= 0 && (unsigned)worker < s->ex->nworkers)
        weft__hook_steal(&s->ex->workers[worker], true, from >= 0 && (unsigned)from < s->ex->nworkers ? from : -1);
}

weft__job *weft__policy_take_any(weft__sched *s, int worker, unsigned *calls) {
    int from;
    unsigned n = 1;
    weft__job *j = policy_take(s, worker, true, &from);
    if (!j && s->policy->ops.steal) n++, j = policy_take(s, worker, false, &from);
    if (calls) *calls = n;
    if (j) policy_moved(s, worker, from);
    return j;
}

/* `outstanding` alone cannot judge an empty pop: it counts a job from before
 * the user's push until after the pop that hands it out, so a pop running
 * beside another worker's push or pop sees a count above zero with nothing
 * to take (found under TSan: every_kind_of_work_runs_under_a_user_policy, 1
 * run in 3 with other tests on both cores).  So the verdict needs a window
 * in which no call but this worker's own began or ended. */
/* `judge`: false after a nap for items the policy held (sched.c,
 * policy_nap): counted and logged once, not at every nap's end. */
weft__job *weft__policy_final(weft__sched *s, int worker, bool judge) {
    weft__policy *p = s->policy;
    weft__policy_share *sh = p->share; /* NULL unless checked */
    uint64_t begun = sh ? atomic_load_explicit(&sh->calls_begun, memory_order_seq_cst) : 0;
    bool quiet = p->checked && atomic_load_explicit(&sh->calls_ended, memory_order_seq_cst) == begun;
    unsigned mine; /* the calls of this look: a window with only them is quiet */
    weft__job *j = weft__policy_take_any(s, worker, &mine);
    if (j) return j;
    if (!judge || !quiet || atomic_load_explicit(&p->outstanding, memory_order_seq_cst) <= 0) return NULL;
    uint64_t now = atomic_load_explicit(&sh->calls_begun, memory_order_seq_cst);
    if (now != begun + mine || atomic_load_explicit(&sh->calls_ended, memory_order_seq_cst) != now) return NULL;
    atomic_fetch_add_explicit(&s->policy_errors, 1, memory_order_relaxed);
    weft__log(WEFT_LOG_ERROR, "sched: the custom policy holds items but returned none");
    return NULL;
}
