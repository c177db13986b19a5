/* Executor internals shared by the core and the layers above it.  Internal. */
#ifndef WEFT_CORE_EXECUTOR_H
#define WEFT_CORE_EXECUTOR_H

#include <stdatomic.h>
#include <stdbool.h>

#include "core/deque.h"
#include "core/fj.h"
#include "core/injector.h"
#include "core/job.h"
#include "core/sleep.h"
#include "core/fj.h"
#include "platform/platform.h"
#include "weft/core.h"

/* Per-worker counters for observe/ (metrics, state dump).  Written only by the
 * owning worker with a relaxed load + store (no RMW: the line is never shared on
 * the hot path), read by anyone with relaxed loads and summed (observe/metrics.c).
 * On a cache line of its own. */
enum { WEFT__WSTATE_SEARCHING = 0, WEFT__WSTATE_RUNNING = 1, WEFT__WSTATE_PARKED = 2 };
typedef struct weft__worker_stats {
    _Alignas(WEFT__CACHE_LINE) _Atomic uint64_t steals;
    _Atomic uint64_t steal_fails;
    _Atomic uint64_t parks;
    _Atomic uint64_t wakeups;
    _Atomic int state; /* WEFT__WSTATE_* */
    bool woke; /* owner only: parked since it last found work */
    /* Owner only: jobs this worker has started, plus one for every stretch it
     * spent outside any job (searching, spinning in a wait).  The profiler starts
     * a task's span at the previous task's end, without reading the clock, when
     * this moved by exactly one since then: the worker went straight from that
     * task's job to this one's (observe/task_hooks.c). */
    uint64_t jobs;
} weft__worker_stats;

/* Adds v to a counter only its owner writes (others read it): a load and a
 * store, no read-modify-write.  `order` is that of the store. */
static inline void weft__owner_add(_Atomic uint64_t *c, uint64_t v, memory_order order) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v, order);
}

static inline void weft__stat_inc(_Atomic uint64_t *c) { weft__owner_add(c, 1, memory_order_relaxed); }
/* Reads such a counter from any thread (a value it had lately). */
static inline uint64_t weft__stat_read(const _Atomic uint64_t *c) {
    return atomic_load_explicit((_Atomic uint64_t *)c, memory_order_relaxed);
}

struct weft__obs; /* filled in by observe/ (core/obs_hooks.h); NULL when nothing observes */
struct weft__layer;
struct weft__poller_slot;

struct weft__worker {
    /* Fork-join frame stack (src/core/fj_*.c).  Must stay the first member: the inline
     * weft_spawn/weft_sync reach it from a weft_ctx in one load. */
    weft__fj fj;
    weft__fj_job fj_job; /* a frame this worker stole, as a job (src/core/fj_*.c) */
    /* Overflow spawns whose status could not be kept (fj_frames.c, ovf_lose):
     * fj.ovf_lost is the first non-zero one, the status of overflow spawn
     * fj_lost_at - 1 (0: none); those in [fj_lost_at, fj_lost_hi) may have
     * failed too (their syncs return WEFT_ENOMEM). */
    uint32_t fj_lost_at, fj_lost_hi;
    /* This worker's part of the layers' state (core/layer.h): one area per
     * worker, each layer at its offset.  Owner only unless a layer says so. */
    void *layers;
    /* The order to try victims in (weft__worker_set_victims), or NULL: every
     * other worker at random.  victims[0..nvictims) in tiers ending at
     * tier_end[0..ntiers).  Set before the worker starts; read by it only. */
    unsigned *victims, *tier_end;
    unsigned nvictims, ntiers;
    /* Victims tried per round in each tier (weft__worker_set_tier_tries), or
     * NULL: each victim of a tier once. */
    unsigned *tier_tries;
    /* The NUMA node whose mailbox it looks at first (weft__executor_set_nodes),
     * or -1.  Set before the worker starts. */
    int node;
    /* Idle-time pollers (core/poll.c): this worker is the one napping with a
     * timeout for them, and the nap's current length in ns.  Owner only. */
    bool poll_watching;
    /* With a source without push (sched/'s priority queue): whether the next
     * fairness look (worker.c, look_shared) takes the injector's and the
     * submitters' jobs before the source's NORMAL ones; it alternates.  In
     * the padding after poll_watching.  Owner only. */
    bool fair_others;
    /* Whether this worker's next look at the shared queues (a steal round,
     * a fairness look) tries the submitters' queues before the node mailbox
     * and the injector; it alternates (worker.c, steal_victims).  Owner only. */
    bool subs_first;
    uint32_t poll_nap;
    weft__deque deque; /* cache-line aligned inside */
    weft_executor *ex;
    unsigned id;
    int cpu; /* the CPU it binds itself to (WEFT_AFFINITY_CPUS), else -1 */
    uint64_t rng;
    int last_victim; /* whose deque the last steal emptied a slot of, or -1 */
    /* The low 32 bits of the stats.jobs count from which its next pop looks at
     * the shared queues first (worker.c, find_local: every WEFT__FAIR_INTERVAL
     * jobs; compared as a signed difference, so the wrap is harmless).  32
     * bits: it fills the padding after last_victim, so no field the task path
     * reads moves.  Owner only. */
    uint32_t fair_next;
    /* Runs begun and ended on this worker (weft_executor_wait_all).  Owner-written
     * with a load and a store, no read-modify-write: a shared counter bounced one
     * cache line between the submitting and the running worker per async task. */
    _Atomic uint64_t runs_begun, runs_ended;
    /* Private FIFO of jobs that did not fit in the deque (out of memory). Owner only. */
    weft__job *overflow_head, *overflow_tail;
    weft_ctx *ctx; /* innermost task running on this worker, or NULL */
    weft__thread thread;
    /* A count a layer above held back on this worker instead of updating a
     * shared counter per job (src/graph/run.c: the -1s of finished tasks of one
     * run, applied to its pending count in one go).  While defer_flush is set,
     * the core calls it (weft__defer_settle) before the worker runs a job whose
     * function is not defer_keep, looks for work elsewhere, or waits; it applies
     * the count, clears defer_flush and returns a job that must run, or NULL.
     * Owner only. */
    weft__job *(*defer_flush)(weft__worker *w);
    weft__job_fn defer_keep;
    void *defer_obj;
    int64_t defer_delta;
    weft__worker_stats stats; /* observe/: counters and state */
    /* A submitter slot (core/submitter.c): the thread that owns it (a token
     * unique among live threads), or NULL while free.  Workers: always NULL. */
    _Atomic(const void *) sub_owner;
};

/* Submitter slots per executor (core/submitter.c): a thread that is not a
 * worker and submits gets one, with a deque of its own that the workers
 * steal from; when all are taken, the injector. */
enum { WEFT__SUBMITTERS = 8 };

struct weft_executor {
    unsigned nworkers;
    uint32_t fork_generation; /* weft__fork_generation when created (weft__forked) */
    unsigned steal_rounds;
    unsigned yield_rounds;
    size_t fj_frames;     /* frames of each worker's fork-join stack (weft_executor_config.fork_join_frames) */
    unsigned steal_batch; /* the most jobs one steal takes (weft_executor_config.steal_batch): 1 or more */
    /* Per NUMA node: jobs hinted to it (weft__submit_to_node), taken by its
     * workers in every steal round and by the others only in their last look
     * before sleeping; NULL (nnodes 0) unless a layer set them at create. */
    struct weft__mailbox *mailboxes;
    unsigned nnodes;
    bool bound; /* WEFT_AFFINITY_CPUS: each worker owns a CPU */
    /* Set once weft_executor_create has succeeded (every worker started):
     * a layer's executor_fini tells a destroy from the unwinding of a failed
     * create, where what the caller handed over (a user's ready-queue
     * policy) is still the caller's. */
    bool created;
    /* nworkers workers, then WEFT__SUBMITTERS submitter slots: weft__worker
     * structures with no thread (core/submitter.c), whose deques only their
     * owner pushes to and the workers steal from. */
    weft__worker *workers;
    /* How many submitter slots have ever been claimed: the workers steal from
     * workers[nworkers .. nworkers + nsubmitters).  0: one load, no loop. */
    _Atomic unsigned nsubmitters;
    uint64_t serial; /* unique per executor in the process: a submitter's cache checks it */
    /* A source of work besides the deques (core/layer.h, weft__source_set):
     * NULL until a layer needs it (sched/: the first prioritised task, or a
     * policy at create), then set for good.  Read only where a worker
     * runs out of work (and to seal the deques): nothing per job. */
    _Atomic(const struct weft__source *) source;
    void *source_state;
    /* observe/: `obs` is what the hooks test (one predictable branch): non-NULL
     * only while metrics, a profiler or an observer is on.  `obs_state` owns the
     * memory (kept when obs goes back to NULL); it may be made on first use
     * while another thread reads it, so it is read with an acquire load and
     * set with a CAS (observe/obs.h, weft__obs_state_get). */
    _Atomic(struct weft__obs *) obs;
    struct weft__obs *obs_state;
    weft__injector injector;
    weft__sleep sleep;
    /* The layers this executor is built from (core/layer.h) and their
     * per-worker areas (nworkers * layer_stride bytes). */
    struct weft__layer *const *layers;
    unsigned nlayers;
    size_t layer_stride;
    void *layer_areas;
    /* Idle-time pollers (core/poll.c): `npollers` is what a worker reads to
     * skip them all (one relaxed load); the slots and the watch are poll.c's. */
    _Alignas(WEFT__CACHE_LINE) _Atomic unsigned npollers;
    _Atomic int poll_watch; /* 1 while an idle worker naps with a timeout for them */
    struct weft__poller_slot *poll_slots;
    weft__mutex poll_lock; /* add/remove against each other */
    _Alignas(WEFT__CACHE_LINE) _Atomic int shutdown;
    /* Runs begun and ended by threads that are not workers; the workers count
     * theirs on the worker (runs_begun, runs_ended).  Threads in
     * weft_executor_wait_all register in quiet_waiters and sleep on quiet_epoch,
     * which is bumped when a check finds every begun run ended (run.c). */
    _Alignas(WEFT__CACHE_LINE) _Atomic uint64_t outside_begun;
    _Atomic uint64_t outside_ended;
    /* Workers of other executors inside weft__submit_from on this one (a
     * queued run, a semaphore unit or a dependency handed over): teardown
     * waits for 0, as the job they push can finish the last run before
     * their notify has left this executor. */
    _Atomic unsigned foreign_submits;
    _Atomic uint64_t next_run_id; /* observe/: numbers graph runs (weft_future_id); written per weft_run* */
    /* On a line of their own: every worker that runs out of work reads
     * quiet_waiters, while the counters above change with each outside run. */
    _Alignas(WEFT__CACHE_LINE) _Atomic uint32_t quiet_waiters;
    _Atomic uint32_t quiet_epoch;
    _Alignas(WEFT__CACHE_LINE) char pad_;
};

/* Bytes of ex->workers (one cache-aligned allocation). */
static inline unsigned weft__nslots(const weft_executor *ex) { return ex->nworkers + WEFT__SUBMITTERS; }
static inline size_t weft__workers_bytes(const weft_executor *ex) { return sizeof(weft__worker) * weft__nslots(ex); }

/* What a task function receives.  Lives on the stack of the code that runs it. */
struct weft_ctx {
    weft__worker *worker;
    void *task; /* the graph node (or other job) being run */
    const _Atomic int *stop; /* non-zero bits in WEFT__STOP_MASK: cancelled/failed */
    /* The run this task belongs to (a graph run, or NULL: its stop word says
     * which future it works for), which cannot finish while the task is on the
     * stack: it and the runs it is nested in (weft_future.up) are matched
     * against a waited-for future to refuse waits that would deadlock
     * (core/future.c); and the task this one interrupted on the same worker (a
     * wait that ran it). */
    const weft_future *run;
    weft_ctx *outer;
    /* The frame stack's top when the task began, to sync what it left
     * unsynced (graph tasks: graph/graph.h, weft__task_enter; and
     * weft__fj_run_task), and to tell which task spawned a frame when frames
     * are published (fj_frames.c, label).  Bit 0 of the top: the task made an overflow spawn
     * (weft__fj_mark_ovf), and fj_ovf0 is the overflow count it found then
     * (0 and unused until that mark: taken only on that slow path). */
    uint32_t fj_ovf0;
    weft__fj_frame *fj_head0;
};

/* The context of work run on w for a run with stop word `stop` and future
 * `run` (NULL: none), as task `task` (NULL: the null task): chained on w's
 * current one, with the frame stack's top taken for the unsynced-spawn check
 * (weft__fj_left_unsynced).  The one literal of a weft_ctx: graph tasks
 * (graph.h, weft__run_ctx), fork-join roots and stolen frames (fj_frames.c),
 * and the jobs other workers run for a task's pipeline or parallel call
 * (pipeline/run.c, algo/par.c). */
static inline weft_ctx weft__ctx_on(weft__worker *w, void *task, const _Atomic int *stop, const weft_future *run) {
    return (weft_ctx){w, task, stop, run, w->ctx, 0, w->fj.head};
}

/* Whether the task of cx (a graph task, or one weft__fj_run_task runs) left
 * spawns unsynced: the frame stack's top moved from the mark its context took
 * when it began (then weft__fj_sync_left, core/fj.h).  One compare when it did
 * not.  The overflow count, which moves only when the stack is full and a
 * spawn runs its child at once, is not compared: such a spawn sets bit 0 of
 * the context's top mark instead (weft__fj_mark_ovf), so the compare fails
 * for that task and the slow path syncs what is left.  Comparing the count
 * too cost ~4 instructions per graph task (linear_chain_rerun 0.96x without). */
static inline bool weft__fj_left_unsynced(const weft__worker *w, const weft_ctx *cx) {
    return __builtin_expect(w->fj.head != cx->fj_head0, 0);
}

/* The top mark of a context whose task made an overflow spawn (frames are
 * aligned, so bit 0 is free; a real top never has it), and the top it marks. */
static inline weft__fj_frame *weft__fj_mark_ovf(weft__fj_frame *top) {
    return (weft__fj_frame *)((uintptr_t)top | 1u);
}
static inline bool weft__fj_ovf_marked(const weft__fj_frame *top) { return ((uintptr_t)top & 1u) != 0; }
_Static_assert(_Alignof(weft__fj_frame) >= 2, "bit 0 of a frame's address is free for the overflow mark");
static inline const weft__fj_frame *weft__fj_unmark(const weft__fj_frame *top) {
    return (const weft__fj_frame *)((uintptr_t)top & ~(uintptr_t)1u);
}

/* The worker the calling thread is, if it belongs to ex; NULL otherwise. */
weft__worker *weft__current_worker(const weft_executor *ex);
/* True if the calling thread is a worker of some executor. */
bool weft__on_worker_thread(void);
/* The calling thread stops being a worker (a child process after fork()). */
void weft__forget_worker(void);

/* True in a child process when ex was created before the fork: it has no
 * workers there, so anything that would wait for them fails with WEFT_EFORKED
 * instead of hanging.  One relaxed load of a word written only at fork. */
static inline bool weft__forked(const weft_executor *ex) {
    return ex->fork_generation != atomic_load_explicit(&weft__fork_generation, memory_order_relaxed);
}

void weft__push_local(weft__worker *w, weft__job *j);

/* Applies every count held back on w (see defer_flush); returns a job that
 * must run next, or NULL (further ones go to the local deque).  Applying one
 * can hold back another: a count that ends a nested run (a module's body)
 * releases its task in the parent run, whose -1 may be held back in turn. */
static inline weft__job *weft__defer_settle(weft__worker *w) {
    weft__job *first = NULL;
    while (__builtin_expect(w->defer_flush != NULL, 0)) {
        weft__job *k = w->defer_flush(w);
        if (!k) continue;
        if (first) weft__push_local(w, k);
        else first = k;
    }
    return first;
}

/* weft__defer_settle for a worker in the middle of something: the job that
 * comes of it goes to the local deque, which the worker looks at next. */
static inline void weft__defer_settle_local(weft__worker *w) {
    weft__job *k = weft__defer_settle(w);
    if (k) weft__push_local(w, k);
}

/* Runs a job and the chain of jobs it hands on.  A job of another kind than the
 * one that held a count back first has the count applied: a long job of
 * another kind must not delay the end of the run that count belongs to. */
/* What the worker does before it runs job j, the next of a chain: counts it
 * (observe/: see weft__worker_stats), and applies a count held back by a job
 * of another kind.  A layer that runs the jobs its own job hands on in a loop
 * (graph/node_run.h, pipeline/run.c) calls it as weft__execute would. */
static inline void weft__job_next(weft__worker *w, const weft__job *j) {
    w->stats.jobs++;
    if (__builtin_expect(w->defer_flush != NULL, 0) && j->run != w->defer_keep) weft__defer_settle_local(w);
}

/* The next number of w's xorshift generator (w->rng, never 0 from non-0):
 * victim and slot choices.  Owner only. */
static inline uint64_t weft__worker_rand(weft__worker *w) {
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return w->rng = x;
}

/* Fairness (worker.c, find_local): true once w has run WEFT__FAIR_INTERVAL
 * jobs since it last looked at the shared queues (the priority queue, the
 * injector, the submitters'), so that its next pop must look there first.  A
 * layer that runs job after job without going back to the worker's loop (a
 * graph's chain of tasks, a range of sources) asks it every so often and,
 * once it is true, makes that look itself (weft__fair_look): otherwise a
 * CRITICAL task from another thread waits for the whole chain (sched.h
 * promises it within a bounded number of jobs).  Owner only. */
static inline bool weft__fair_due(const weft__worker *w) {
    return (int32_t)((uint32_t)w->stats.jobs - w->fair_next) >= 0;
}

/* The fairness look of such a layer, once weft__fair_due: starts the next
 * interval and returns a job of the shared queues for w to run before what it
 * was about to run (which it then queues on its deque), or NULL: nothing is
 * waiting there, go on.  So a chain with no one waiting pays a look per 61
 * jobs and nothing more.  Owner only. */
weft__job *weft__fair_look(weft__worker *w);

static inline void weft__execute(weft__worker *w, weft__job *j) {
    while (j) {
        weft__job_next(w, j);
        j = j->run(w, j);
    }
}

/* The worker is about to spend time outside any job (search, spin-wait): a task
 * it runs next must read the clock for its span's start. */
static inline void weft__worker_gap(weft__worker *w) { w->stats.jobs++; }

/* One step of a worker's spin-wait inside a job for something another worker
 * will do: a gap (above), a count held back applied (what it waits for may be
 * the end of that count's run), then weft__spin_pause.  (A worker that goes
 * searching holds no count: weft__worker_main applies them before.) */
static inline void weft__worker_pause(weft__worker *w, unsigned *idle) {
    weft__worker_gap(w);
    weft__defer_settle_local(w);
    weft__spin_pause(idle);
}

/* Owner only: appends j to w's private FIFO of jobs only w runs (found by
 * find_local after the deque, cooperative waits included). */
static inline void weft__overflow_append(weft__worker *w, weft__job *j) {
    j->next = NULL;
    if (w->overflow_tail) w->overflow_tail->next = j;
    else w->overflow_head = j;
    w->overflow_tail = j;
}

/* weft__push_local (declared above): owner only: pushes to w's deque and
 * wakes a sleeper if nobody is searching.  Never fails: without memory to grow
 * the deque, the job goes to w's private overflow list (it still runs, on w). */

/* ---- submitter slots (core/submitter.c) ---- */
/* The calling thread's last slot lookup (submitter.c writes it). */
typedef struct weft__sub_cache {
    const weft_executor *ex;
    uint64_t serial;
    weft__worker *slot;
} weft__sub_cache;
extern _Thread_local weft__sub_cache weft__tls_sub;
/* The calling thread's slot on ex if its last lookup was for ex, else NULL:
 * a thread load and two compares, before anything else on the submission path
 * of an outside thread (a hit also says the thread is not one of ex's
 * workers, which never take slots on their own executor). */
static inline weft__worker *weft__submitter_cached(const weft_executor *ex) {
    return weft__tls_sub.ex == ex && weft__tls_sub.serial == ex->serial ? weft__tls_sub.slot : NULL;
}
/* A run begun or ended on w (a worker, or a slot by its owner): the owner's
 * counter, a load and a store (core/runs.c); weft__runs_begin/_end with w. */
static inline void weft__runs_bump(_Atomic uint64_t *c) { weft__owner_add(c, 1, memory_order_release); }
/* A fresh executor serial (weft_executor.serial). */
uint64_t weft__submitter_serial(void);
/* The calling thread's submitter slot on ex, claimed on first use, or NULL
 * (every slot taken, or ex's deques are sealed).  A thread that is not one of
 * ex's workers.  The slot is a weft__worker with no thread: its deque takes
 * weft__submitter_push, its layer state is the thread's (async/: records). */
weft__worker *weft__submitter_get(weft_executor *ex);
/* The slot's owner: queues job on the slot and wakes a worker if none is
 * searching.  0, or WEFT_ENOMEM (the deque could not grow: use the injector). */
int weft__submitter_push(weft_executor *ex, weft__worker *slot, weft__job *job);
/* weft__submitter_push's common case, inline, in two steps (deque.h's
 * nopop_room and nopop_put): submitter_room gives where the job goes, or -1
 * when the slot's deque may be full (call weft__submitter_push instead);
 * submitter_put pushes it there and looks at the sleepers as
 * weft__submitter_push does (which says why): true when one must be woken,
 * which the caller does (weft__sleep_notify(&ex->sleep)), so that its common
 * path makes no call at all. */
static inline int64_t weft__submitter_room(weft__worker *slot) { return weft__deque_nopop_room(&slot->deque); }
static inline bool weft__submitter_put(weft_executor *ex, weft__worker *slot, int64_t at, weft__job *job) {
    weft__deque_nopop_put(&slot->deque, at, job);
    return weft__sleep_notify_light_wanted(&ex->sleep);
}
/* Worker w: a job taken from a submitter slot (more of the same batch pushed
 * on w's deque), or NULL.  every: retry lost races (the last look before
 * parking must see every queued job). */
weft__job *weft__submitters_steal(weft__worker *w, bool every);
/* One job from the submitter slots (no batch), or NULL: the fairness look of
 * a busy worker (worker.c). */
weft__job *weft__submitters_steal_one(weft__worker *w);
/* The same from the slot at workers[v] only (v >= nworkers): a busy worker
 * that took a batch there comes back for the next (weft__worker_main). */
weft__job *weft__submitter_steal_again(weft__worker *w, unsigned v);

/* Any thread: makes `job` runnable on ex.  From one of ex's workers it goes to the
 * local deque; from other threads through the injector.  0 or WEFT_ENOMEM. */
int weft__submit(weft_executor *ex, weft__job *job);
/* The same for a caller that knows its worker: w is the calling thread's worker
 * of ex, or NULL when it is not one (saves the thread-local lookup). */
int weft__submit_from(weft_executor *ex, weft__worker *w, weft__job *job);
/* weft__submit_from that does not fail for want of memory (the injector's
 * spare list, weft__injector_push_spare): for a hand-over with nobody to
 * report to.  0, or WEFT_EFORKED (an executor of the parent after fork()). */
int weft__submit_from_always(weft_executor *ex, weft__worker *w, weft__job *job);
/* The same for a job hinted to NUMA node `node`: from a worker of that node
 * its deque, else the node's mailbox (a worker of the node takes it first);
 * as weft__submit_from when ex has no mailboxes or that node no workers. */
int weft__submit_to_node(weft_executor *ex, weft__worker *w, weft__job *job, unsigned node);

/* A NUMA node's mailbox (weft_executor.mailboxes). */
typedef struct weft__mailbox {
    weft__injector q;
    unsigned nworkers; /* workers on the node; 0: hints to it are ignored */
} weft__mailbox;

/* From a thread that is not one of ex's workers: pushes n jobs laid out `stride`
 * bytes apart through the injector and wakes up to n sleepers at once.  Returns
 * how many were pushed (fewer than n only when memory ran out); the caller owns
 * the rest. */
unsigned weft__submit_spread(weft_executor *ex, weft__job *first, size_t stride, unsigned n);
/* The same into NUMA node `node`'s mailbox (node < ex->nnodes), from any
 * thread: the node's workers take them first, the others in their last look
 * before sleeping (algo/: a hinted parallel call's jobs). */
unsigned weft__submit_spread_to_node(weft_executor *ex, unsigned node, weft__job *first, size_t stride,
                                     unsigned n);

/* Thread entry of a worker (arg: its weft__worker). */
void *weft__worker_main(void *arg);

/* Worker-side waiting: runs other jobs until done(arg) is true.  Never parks. */
void weft__worker_wait_until(weft__worker *w, bool (*done)(void *), void *arg);
/* The same for work this worker queued itself after `mark` (its deque's bottom,
 * weft__worker_mark, taken before queuing it): jobs above the mark first, then
 * other workers', then its own older ones.  Keeps nested waits (a subflow's
 * join) as deep as the recursion, not as the work. */
void weft__worker_wait_until_own(weft__worker *w, int64_t mark, bool (*done)(void *), void *arg);
static inline int64_t weft__worker_mark(const weft__worker *w) {
    return atomic_load_explicit(&((weft__worker *)w)->deque.bottom, memory_order_relaxed);
}

/* Runs in flight, for weft_executor_wait_all and destroy (src/core/runs.c).  w
 * must be the calling thread's worker of ex (it alone writes that worker's
 * counters), or NULL on any other thread (a worker of another executor
 * included).  The last run's end wakes wait_all's waiters before its worker
 * searches or sleeps (runs.c says how). */
void weft__runs_begin(weft_executor *ex, weft__worker *w);
void weft__runs_end(weft_executor *ex, weft__worker *w);
/* A worker's busy stretch ended (it found no more work): wakes wait_all's
 * waiters if every run has ended.  Owner only; a load when nobody waits. */
void weft__runs_busy_end(weft_executor *ex);
/* Wakes wait_all's waiters if every run has ended.  Any thread. */
void weft__runs_quiet_check(weft_executor *ex);
/* Runs begun and not yet ended (0: every run seen begun has ended).  Any thread. */
uint64_t weft__runs_in_flight(const weft_executor *ex);

/* A run of ex that a thread which is not one of ex's workers is carrying out
 * itself (a parallel algorithm's share run on the calling thread: algo/par.c;
 * a removed task's report on the remover's thread: sched/api.c),
 * pushed on that thread's list for the time it runs user code.  From there a
 * wait for every run of ex (weft_executor_wait_all, destroy) would wait for
 * itself, as from a worker.  Caller storage (the stack); calls nest. */
typedef struct weft__own_run {
    const weft_executor *ex;
    struct weft__own_run *outer;
} weft__own_run;
void weft__own_run_enter(weft__own_run *r, const weft_executor *ex);
void weft__own_run_leave(weft__own_run *r);
/* True if the calling thread is inside weft__own_run_enter for ex.  Its
 * callers test weft__current_worker(ex) first (with a message of its own), so
 * a worker of ex is not looked for again here.  Any thread. */
bool weft__runs_here(const weft_executor *ex);

#endif
