/* The scheduling layer's internals (docs/design.md, "Scheduling").  Internal.
 *
 * Two kinds of queue.  Each worker's lanes (lanes.c): a FIFO per level, under
 * a lock only its owner takes on the hot path, for the prioritised jobs a
 * worker queues without a handle (graph tasks): O(1), no slot.  And one
 * priority queue per executor (queue.c): a binary heap of slots under one
 * lock, ordered by level (high first) then sequence number (FIFO among
 * equals), for jobs with a slot (a handle, async tasks, jobs queued from other
 * threads).  A slot is what a handle names (index + generation).  Counts per
 * level, kept beside the heap in atomics, and each worker's mask of non-empty
 * lanes let a worker skip a lock when nothing of interest is queued.  Jobs of
 * the default priority never come here unless a policy takes every job
 * (policy.c). */
#ifndef WEFT_SCHED_SCHED_H
#define WEFT_SCHED_SCHED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/executor.h"
#include "core/layer.h"
#include "weft/sched.h"

enum { WEFT__LEVELS = 4 }; /* level = weft_priority + 1: LOW 0 .. CRITICAL 3 */

/* Called, under the queue's lock, for a job taken out by weft_sched_remove,
 * queued or only reserved: it marks the job so that, when it runs, it reports
 * itself cancelled instead of doing its work.  A queued one the remover then
 * runs at once on its own thread (api.c: its worker of the executor, or NULL
 * for any other thread), so the job's run must accept w NULL once marked and
 * hand on no job; a reserved one runs when it would have been queued, at
 * CRITICAL (weft__sched_queue_job).  Either way its report (and so its
 * dependents) never waits behind unrelated queued work.  A slot without this
 * callback (a job queued without a handle) cannot be removed. */
typedef void (*weft__sched_removed_fn)(weft__job *job);

typedef struct weft__sched_slot {
    weft__job *job; /* NULL while reserved and not yet queued */
    weft__sched_removed_fn on_remove;
    uint64_t seq;
    uint64_t since;     /* ns: queued, or its level last changed */
    uint64_t queued_at; /* ns */
    uint32_t gen;       /* the generation a handle must carry; never 0 */
    int32_t pos;        /* index in the heap, or -1 */
    uint32_t next_free;
    uint8_t level;
    uint8_t state; /* SLOT_FREE, SLOT_RESERVED, SLOT_QUEUED (queue.c) */
} weft__sched_slot;

typedef struct weft__sched_queue {
    weft__mutex lock;
    weft__sched_slot *slots;
    uint32_t *heap;   /* slot indices; capacity = cap */
    uint32_t nslots;  /* slots ever used (<= cap) */
    uint32_t cap;
    uint32_t n;       /* in the heap */
    uint32_t free_head;
    /* This queue's mark, in the top byte of every generation it gives out
     * (WEFT__GEN_MARK): handles of different executors differ there, so a
     * handle passed to another executor is told apart (api.c) instead of
     * naming that executor's slot of the same index and generation. */
    uint32_t mark;
    /* Written under the lock; read without it by lanes (their items' stamps). */
    _Atomic uint64_t next_seq;
    /* Queued per level: written under the lock, read without it (hints). */
    _Atomic uint32_t count[WEFT__LEVELS];
} weft__sched_queue;

/* What a queued job reads first when it runs, besides its own line: a lane
 * prefetches it a few takes ahead of the job (lanes.c), as the job's turn
 * comes long after it was queued.  For a graph task: its cold part, its
 * argument, and its successors (`many`: an array of pointers, fetched ahead,
 * then the lines they point to, as the job comes next). */
typedef struct weft__hints {
    const void *line[2]; /* or NULL */
    const void *const *many; /* or NULL */
    uint32_t nmany;
} weft__hints;

/* An item of a lane: a job, its place (stamp against the heap, lseq among
 * its worker's items) and when it was queued, in weft__ticks. */
typedef struct weft__lane_item {
    weft__job *job;
    uint64_t stamp;  /* the heap's next_seq when it was queued */
    uint64_t lseq;   /* its worker's count of queued items */
    uint64_t queued; /* ticks */
    weft__hints hints;
} weft__lane_item;

typedef struct weft__lane {
    weft__lane_item *a; /* ring, cap a power of two (or 0) */
    uint32_t head, n, cap;
} weft__lane;

/* A lane per (level now, level queued at): LOW items escalated to NORMAL wait
 * in a lane of their own beside the NORMAL ones, so that escalation moves a
 * lane's oldest items (a prefix) to the end of the next lane up, in order. */
enum { WEFT__LANES = 7 }; /* (0,0) (1,0) (1,1) (2,0) (2,1) (2,2) (3,3) */

/* A worker's lanes.  The mask, which every other worker reads in each of its
 * looks, has a line of its own and is written only when it changes, so that
 * those reads hit in their caches while the lanes keep some items each. */
typedef struct weft__lanes {
    /* A spin lock (lanes.c): held for O(1) but for escalation's O(moved)
     * copy, and nearly always by the owner alone. */
    _Atomic uint32_t lock;
    _Atomic uint32_t count; /* items in all lanes (written under the lock) */
    uint32_t per_level[WEFT__LEVELS]; /* items at each level now */
    uint64_t lseq;
    weft__lane lane[WEFT__LANES];
    _Alignas(64) _Atomic uint32_t mask; /* bit l: per_level[l] != 0 (likewise) */
} weft__lanes;

/* A ready-queue policy as the layer drives it (policy.c). */
typedef struct weft__policy {
    weft_sched_policy ops;  /* built in or the user's */
    bool checked;           /* the user's: items entered in `held` and counted */
    struct weft__held *held; /* policy.c */
    bool heap;              /* WEFT_SCHED_PRIORITY: every job goes to the queue */
    bool shared;            /* FIFO, RANDOM: one queue for all, each pop a steal in the metrics */
    bool rr;                /* ROUND_ROBIN: its queues record who queued each job */
    _Atomic int64_t outstanding; /* checked policies: pushed minus taken */
    /* Checked policies: the executors whose policies have this one's state
     * (policy.c: a user may give one state to several executors), with the
     * calls into it they began and ended, and the next of them. */
    struct weft__policy_share *share;
    struct weft__policy *share_next;
    weft_executor *ex; /* the executor this policy queues jobs of */
    /* Checked policies: jobs of ours another executor's worker took from a
     * shared state and sent back, with the priority and queuer they were
     * pushed with (policy.c, share_owner); made at the first, under the
     * shares' lock.  nreturned: how many it holds (release after the add). */
    struct weft__held *returned;
    _Atomic int nreturned;
} weft__policy;

typedef struct weft__sched {
    weft_executor *ex;
    weft__sched_queue q;
    weft__policy *policy; /* NULL: work stealing */
    uint64_t esc_ns[2];   /* LOW -> NORMAL, NORMAL -> HIGH */
    uint64_t tick_ns;
    bool auto_escalate, inherit;
    _Atomic uint64_t next_tick; /* ns */
    _Atomic uint64_t escalations, inherited, removed, policy_errors;
} weft__sched;

/* Per-worker state of the layer. */
typedef struct weft__sched_worker {
    weft__sched *s;
    unsigned countdown; /* takes until the next look at the clock */
    unsigned streak;    /* jobs weft__sched_next handed on in a row */
    unsigned fair;      /* takes before the policy's items next go first (sched.c, take) */
    uint64_t nap;       /* ns: this worker's last nap beside a user policy holding items (sched.c) */
    weft__lanes lanes;  /* workers only (not submitter slots) */
} weft__sched_worker;

extern weft__layer weft__sched_layer; /* sched.c */

/* ex's scheduling state, or NULL when ex was built without this layer. */
weft__sched *weft__sched_of(weft_executor *ex);

/* ---- for the layers above (async/, graph/) ---- */

/* Reserves a handle for a task of priority `prio` (a weft_priority) that will
 * be queued with weft__sched_queue, now or when its dependencies finish.
 * WEFT_OK, WEFT_EINVAL (no sched layer, priority out of range), WEFT_ENOMEM.
 * Any thread. */
int weft__sched_reserve(weft_executor *ex, int prio, weft__sched_removed_fn on_remove, weft__job *job,
                        weft_sched_handle *out);
/* Submits job the normal way (a removed task's report, where the queue had
 * no room for it at CRITICAL), retrying while the injector lacks memory. */
void weft__sched_resubmit(weft_executor *ex, weft__worker *w, weft__job *job);
/* Queues job under its reserved handle h (w: the caller's worker of ex, or
 * NULL).  If h was removed meanwhile (on_remove has marked the job), queues
 * it at CRITICAL instead, to report itself cancelled.  Never fails (the
 * reservation holds the room; the report falls back to the injector).  Any
 * thread. */
void weft__sched_queue_job(weft_executor *ex, weft__worker *w, weft_sched_handle h, weft__job *job);
/* Gives back a reservation never queued (its submission failed). */
void weft__sched_unreserve(weft_executor *ex, weft_sched_handle h);
/* Takes the job of handle h out of the queue for a caller that runs it itself
 * (an isolated waiter), so that h reads as gone (weft_sched_priority and
 * _remove: WEFT_ENOENT), as for a job a worker took.  True: the job was queued
 * and is out now (the caller holds what the queue held for it); false: it was
 * only reserved (queued later, it runs as a removed one would, at CRITICAL,
 * and finds itself taken), or a worker or a removal took it first.  Any
 * thread. */
bool weft__sched_withdraw(weft_executor *ex, weft_sched_handle h);
/* Queues job at priority prio without a handle: into the policy, if the
 * executor has one, else into w's lanes (w one of ex's workers) or the heap
 * (another thread, a submitter slot, or the lanes short of memory).  WEFT_OK
 * or WEFT_ENOMEM (nothing queued).  Any thread. */
int weft__sched_submit(weft_executor *ex, weft__worker *w, weft__job *job, int prio);
/* weft__sched_submit with `hint` (or NULL): what the job reads first when it
 * runs, which a lane prefetches ahead of it (weft__hints). */
int weft__sched_submit_hint(weft_executor *ex, weft__worker *w, weft__job *job, int prio,
                            const weft__hints *hint);
/* weft__sched_submit_hint for a caller on worker w that returns to w's loop
 * (or weft__sched_next) before it pushes anything else: no ticket when w's
 * deque is empty, as the layer is the first place w looks then (graph tasks). */
int weft__sched_submit_graph(weft_executor *ex, weft__worker *w, weft__job *job, int prio,
                             const weft__hints *hint);
/* weft__sched_submit_graph for k jobs, job[i] at level[i] (LOW 0 ..
 * CRITICAL 3) with hint[i] (hint may be NULL), in order: one clock read and
 * one lock of w's lanes for all.  Returns how many were queued, the first
 * ones (fewer than k: out of memory).  Worker w of ex only. */
size_t weft__sched_submit_graph_many(weft_executor *ex, weft__worker *w, size_t k, weft__job *const *job,
                                     const uint8_t *level, const weft__hints *hint);
/* True when ex's policy orders prioritised tasks itself (FIFO, ROUND_ROBIN,
 * a user's): such a task without a handle goes to it (weft__sched_submit). */
bool weft__sched_policy_orders(weft_executor *ex);
/* Priority inheritance: raises h's task to prio if it is queued (or
 * reserved) below it and ex inherits.  Any thread. */
void weft__sched_inherit(weft_executor *ex, weft_sched_handle h, int prio);

/* ---- queue.c ---- */
int weft__squeue_init(weft__sched_queue *q);
void weft__squeue_fini(weft__sched_queue *q);
/* The best job of level >= min_level, or NULL; frees its slot. */
weft__job *weft__squeue_pop(weft__sched_queue *q, unsigned min_level);
/* Under q->lock: takes the heap's top job (there is one) and frees its slot. */
weft__job *weft__squeue_take_top_locked(weft__sched_queue *q);
/* Jobs queued at level >= min_level (a hint without the lock). */
static inline uint32_t weft__squeue_count_from(weft__sched_queue *q, unsigned min_level) {
    uint32_t n = 0;
    for (unsigned l = min_level; l < WEFT__LEVELS; l++) n += atomic_load_explicit(&q->count[l], memory_order_relaxed);
    return n;
}
/* Locked helpers (the caller holds q->lock). */
int weft__squeue_reserve_locked(weft__sched_queue *q, unsigned level, weft__sched_removed_fn on_remove,
                                weft_sched_handle *out);
weft__sched_slot *weft__squeue_slot_locked(weft__sched_queue *q, weft_sched_handle h);
/* The top byte of a generation: the mark of the queue that gave it out. */
#define WEFT__GEN_MARK 0xff000000u
/* True if h was given out by another executor's queue (its mark differs;
 * {0, 0}, never valid, is nobody's).  Needs no lock. */
static inline bool weft__squeue_foreign(const weft__sched_queue *q, weft_sched_handle h) {
    return (h.gen & WEFT__GEN_MARK) != 0 && (h.gen & WEFT__GEN_MARK) != q->mark;
}
void weft__squeue_insert_locked(weft__sched_queue *q, uint32_t idx, weft__job *job, uint64_t now);
void weft__squeue_set_level_locked(weft__sched_queue *q, uint32_t idx, unsigned level, uint64_t now);
void weft__squeue_erase_locked(weft__sched_queue *q, uint32_t idx);
void weft__squeue_free_locked(weft__sched_queue *q, uint32_t idx);
/* Moves every queued task past its threshold up one level (not to CRITICAL). */
size_t weft__squeue_escalate_locked(weft__sched_queue *q, const uint64_t thresholds[2], uint64_t now);

/* ---- lanes.c (each takes l->lock itself) ---- */
int weft__lanes_init(weft__lanes *l);
void weft__lanes_fini(weft__lanes *l);
/* Appends job (and its prefetch hints, or NULL) to l's lane `level` with the heap stamp `stamp`.  WEFT_OK or
 * WEFT_ENOMEM (nothing queued).  l's owner only (the order is its own). */
int weft__lanes_push(weft__lanes *l, unsigned level, weft__job *job, const weft__hints *hint, uint64_t stamp);
/* weft__lanes_push for k jobs (level[i], job[i], hint[i]; hint may be NULL),
 * under one lock: returns how many were queued, the first ones (fewer than k:
 * out of memory).  l's owner only. */
size_t weft__lanes_push_many(weft__lanes *l, size_t k, const uint8_t *level, weft__job *const *job,
                             const weft__hints *hint, uint64_t stamp);
/* The head of lane `level`, or NULL.  Any thread. */
weft__job *weft__lanes_pop(weft__lanes *l, unsigned level);
/* The head of lane `level` or q's top, whichever was queued first, when q's
 * top is of that level too; NULL if the lane is empty.  *from_heap says which
 * (the metrics count a job from the heap as a steal).  Any thread. */
weft__job *weft__lanes_pop_or_heap(weft__lanes *l, unsigned level, weft__sched_queue *q, bool *from_heap);
/* Moves items that waited after_ticks[level] at LOW or NORMAL up one level.
 * Returns how many.  Any thread. */
size_t weft__lanes_escalate(weft__lanes *l, const uint64_t after_ticks[2], uint64_t now);
/* Copies up to cap of l's items into out (null handles); returns how many. */
size_t weft__lanes_copy(weft__lanes *l, weft_sched_entry *out, size_t cap, uint64_t now, double ns_per_tick);

/* ---- sched.c: taking ---- */
/* The ticket (sched.c): one stateless job, pushed onto a worker's deque for
 * each HIGH or CRITICAL job it queues, that runs the best such job. */
extern weft__job weft__sched_ticket;
/* One escalation pass (heap and lanes) now, counted; how many moved.  Any thread. */
size_t weft__sched_escalate_now(weft__sched *s);
/* The best job of level >= min_level that worker w can find: its own lanes,
 * the heap, the other workers' lanes, highest level first; NULL if none.
 * `final`: looks under every lock whatever the hints say.  Worker w only. */
weft__job *weft__sched_take(weft__sched *s, weft__worker *w, unsigned min_level, bool final);
/* For a graph task that just ran or was queued on w: the job w would take
 * next from the layer if its deque and private list are empty (a job of NORMAL
 * or above), else NULL; it saves the worker's trip through its search.  NULL
 * too after STREAK_MAX in a row, so that a worker helping inside a wait
 * (weft__worker_wait_until) looks at what it waits for between such runs.  w
 * only. */
weft__job *weft__sched_next(weft__worker *w);
/* ---- policy.c ---- */
/* Builds the policy the config asks for (NULL for work stealing).  WEFT_OK,
 * WEFT_EINVAL (a bad kind, or CUSTOM without push and pop), WEFT_ENOMEM. */
int weft__policy_create(weft__sched *s, const weft_sched_config *c, unsigned nworkers);
void weft__policy_destroy(weft__sched *s);
/* A job the policy pushed (0) or refused (non-zero).  worker: the calling
 * worker (-1: none), as a user's push sees it; from: who queued the job, for
 * the metrics (a steal when another worker takes it): -1 for a job a thread that is no worker
 * queued, which a worker moves in from the injector. */
int weft__policy_push(weft__sched *s, weft__job *job, int prio, int worker, int from);
/* A job for worker: the policy's pop, then its steal if it has one; a job
 * taken from another worker's queue (or one for all) is counted as a steal.
 * *calls (if not NULL): how many takes it made. */
weft__job *weft__policy_take_any(weft__sched *s, int worker, unsigned *calls);
/* A worker's last look before it sleeps: weft__policy_take_any.
 * When it finds nothing although a checked policy holds jobs it did not hand
 * out, and no other push or pop overlapped the look, the policy broke its
 * contract: counted in policy_errors and logged, if `judge` (false: the
 * worker looks again after a nap for those jobs, already counted). */
weft__job *weft__policy_final(weft__sched *s, int worker, bool judge);

#endif
