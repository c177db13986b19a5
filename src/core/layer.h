/* How a layer above the core plugs into an executor.  Internal.
 *
 * The core never names a layer above it.  A layer that needs something of the
 * executor or of the worker loop declares it here, and the composition root
 * (src/compose/) hands the core the list of layers an executor is built from:
 *
 *   - per-worker state: `worker_bytes` of memory per worker, laid out by the
 *     core (each worker's area starts on its own cache line, each layer's part
 *     on a cache line of its own, the first layer's part at the area's start:
 *     a hot path may rely on that), zeroed, then `worker_init`ed; `worker_fini` runs
 *     at destroy after every worker is joined.  The submitter slots
 *     (core/submitter.c: weft__worker structures with no thread, after the
 *     workers, owned by threads that submit from outside) get an area too,
 *     initialised and finished alike: a layer whose submission path a slot
 *     takes (async/: silent records) finds its state there.  The layer finds its part with
 *     weft__layer_state(w, &its_layer): two loads and an add.
 *   - a worker thread's start: `thread_start`, on the thread itself.
 *   - executor lifetime: `executor_init` runs at create after the workers'
 *     structures exist and before their threads start (in list order);
 *     `executor_fini` at destroy after the threads are joined and before any
 *     worker memory is freed (in reverse order).
 *   - idle-time pollers (GPU events, MPI requests, timers): registered at run
 *     time with weft__poller_add (below), called by workers that run out of
 *     work, one caller at a time per poller.
 *   - victims in the machine's order: weft__worker_set_victims (a layer such as
 *     topo/ gives each worker the order to try other workers in).
 *   - observation: a hook table (core/obs_hooks.h) that observe/ fills.
 *   - a count held back on a worker (weft__worker.defer_*): core/executor.h.
 *
 * docs/design.md ("How to add a layer") is the recipe. */
#ifndef WEFT_CORE_LAYER_H
#define WEFT_CORE_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "core/executor.h"

typedef struct weft__layer {
    const char *name; /* in log lines and errors */
    size_t worker_bytes; /* per-worker state; 0: none */
    /* Each may be NULL.  init returns 0 or a negative weft_status (the create
     * fails with it and the layers already initialised are finished). */
    int (*executor_init)(weft_executor *ex, const weft_executor_config *config);
    void (*executor_fini)(weft_executor *ex);
    int (*worker_init)(weft__worker *w, void *state);
    void (*worker_fini)(weft__worker *w, void *state);
    /* Runs on each worker's own thread as it starts, before its first job (in
     * list order): for what only the thread itself can set, such as its
     * signal mask (cancel/: the preemption signal). */
    void (*thread_start)(weft__worker *w, void *state);
    /* Why a wait for f from worker w (a worker of f's executor; f not
     * finished) could never end because of work of this layer running lower
     * on w's stack, which f can finish only after (async/: f is a dependent
     * of an async task that a context on w's chain works for), or NULL.  The wait is refused with
     * WEFT_EDEADLK and this sentence (core/future.c).  Only on the slow path
     * of a wait; it must not block. */
    const char *(*waits_behind)(weft__worker *w, void *state, const weft_future *f);
    /* Written by the core, once per process, before the first executor is
     * created: where this layer's part lies in a worker's layer area. */
    size_t offset;
} weft__layer;

/* The layer's per-worker state on w (its `worker_bytes`, zeroed at create). */
static inline void *weft__layer_state(const weft__worker *w, const weft__layer *layer) {
    return (char *)w->layers + layer->offset;
}

/* Creates an executor built from `layers` (n of them, in order: each may use
 * the ones before it).  The composition root calls this with the same list for
 * every executor of the process.  As weft_executor_create otherwise. */
weft_executor *weft__executor_create(const weft_executor_config *config, weft__layer *const *layers, unsigned n,
                                     weft_status *err);

/* ---- idle-time pollers ----
 * A poller is a function that advances something outside the executor (a GPU
 * stream, MPI requests, a timer list) and may submit jobs when that something
 * completes.  Workers call it when they run out of work: in every search round
 * and once more before parking.  At most one worker calls a given poller at a
 * time (a poller need not be thread-safe against itself), and its cost is
 * bounded by what it does per call: keep it to a non-blocking test.
 *
 * Its result says whether the executor may sleep without it: */
enum {
    WEFT__POLL_IDLE = 0,     /* nothing outstanding: workers may park indefinitely */
    WEFT__POLL_PENDING = 1,  /* something outstanding, no progress this call */
    WEFT__POLL_PROGRESS = 2, /* something completed (jobs may have been submitted) */
};
typedef int (*weft__poll_fn)(weft_executor *ex, void *arg);
typedef struct weft__poller weft__poller;

enum { WEFT__POLLERS_MAX = 8 };

/* While any poller is pending, one idle worker (the watcher) parks with a
 * timeout that starts at WEFT__POLL_NAP_MIN_NS and doubles up to
 * WEFT__POLL_NAP_MAX_NS while nothing progresses, so an outstanding completion is
 * seen within about that bound even when the executor has no other work; the
 * other idle workers park as usual.  When the watcher finds work it hands the
 * watch to a sleeper. */
#define WEFT__POLL_NAP_MIN_NS 20000u
#define WEFT__POLL_NAP_MAX_NS 1000000u

/* The nap after one of `nap` ns (0: the first): doubled, within the bounds
 * above.  The watcher's naps and a GPU wait's (gpu/stream.c) follow it. */
static inline uint32_t weft__poll_nap_next(uint32_t nap) {
    if (nap == 0) return WEFT__POLL_NAP_MIN_NS;
    return nap >= WEFT__POLL_NAP_MAX_NS / 2 ? WEFT__POLL_NAP_MAX_NS : nap * 2;
}

/* Registers fn(ex, arg).  Any thread, at any time (workers may be running).
 * *out receives the handle for weft__poller_remove (written after the poller
 * may already have been called: a poller that needs its own handle gets it
 * through its argument, published by the caller).  WEFT_OK, WEFT_EINVAL (NULL
 * ex/fn/out), WEFT_EBUSY (WEFT__POLLERS_MAX pollers registered already). */
int weft__poller_add(weft_executor *ex, weft__poll_fn fn, void *arg, weft__poller **out);
/* Unregisters p; when it returns, no worker is in or will enter p's function.
 * Any thread but a call from inside p's own function (it would wait for
 * itself: returns WEFT_EBUSY there, detected).  WEFT_OK or WEFT_EINVAL. */
int weft__poller_remove(weft_executor *ex, weft__poller *p);
/* Makes sure some worker looks at the pollers soon: a poller that was idle and
 * now has something outstanding calls this (a worker may be parked with no
 * timeout).  Any thread. */
void weft__pollers_kick(weft_executor *ex);

/* ---- the order a worker tries victims in ----
 * order[0..n) lists other workers' ids (not w's own), grouped in tiers that
 * end at tier_end[0..ntiers) (increasing, the last is n): the worker tries one
 * tier at a time, starting at a random place within it, before the next.
 * The core copies both arrays.  Without a call, one tier of every other
 * worker, in random order.  Called from a layer's executor_init (before the
 * workers start).  WEFT_OK, WEFT_EINVAL (bad ids, tiers not increasing),
 * WEFT_ENOMEM. */
int weft__worker_set_victims(weft__worker *w, const unsigned *order, unsigned n, const unsigned *tier_end,
                             unsigned ntiers);
/* After weft__worker_set_victims: tries[0..ntiers) victims tried per round in
 * each tier (from a random place, going round the tier, again if tries
 * exceeds its size; weft_executor_config.steal_attempts).  Without a call (or
 * after a new weft__worker_set_victims), each victim of a tier once.  From a
 * layer's executor_init.  WEFT_OK, WEFT_EINVAL (NULL, no tiers, a zero),
 * WEFT_ENOMEM. */
int weft__worker_set_tier_tries(weft__worker *w, const unsigned *tries);

/* ---- NUMA node mailboxes ----
 * node[i] (0..nnodes, or -1: none) is worker i's NUMA node: ex gets a mailbox
 * per node for jobs hinted to it (weft__submit_to_node); a worker looks at its
 * node's mailbox in every steal round, before the injector, and at every
 * mailbox in its last look before sleeping, so a hinted job always runs.
 * From a layer's executor_init.  WEFT_OK, WEFT_EINVAL (NULL, a node out of
 * range, called twice), WEFT_ENOMEM. */
int weft__executor_set_nodes(weft_executor *ex, const int *node, unsigned nnodes);

/* ---- a source of work besides the deques ----
 * A layer that keeps ready jobs in queues of its own (sched/: priorities, a
 * ready-queue policy) gives the worker loop a source.  Until one is set the
 * loop pays one load and one predictable branch where it would call it.
 *
 * take(w, state, stage): a job for worker w from the source, or NULL.  The loop
 * calls it at each stage of its search, in this order:
 *   WEFT__TAKE_STEAL   w's deque is empty: before the injector and victims;
 *   WEFT__TAKE_LAST    after the injector and every victim came up empty;
 *   WEFT__TAKE_FINAL   the last look before parking: must find any job the
 *                      source holds (no lost wake-up: the source publishes a
 *                      job before it calls weft__source_notify, and a look at
 *                      this stage must order after the worker's seq_cst idle
 *                      announcement, e.g. by taking a lock the pusher took).
 *   WEFT__TAKE_FAIR    the fairness look of a busy worker (worker.c: once
 *                      every WEFT__FAIR_INTERVAL jobs, its deque not empty,
 *                      or, with a source without push, whatever its deque
 *                      holds): as STEAL, and the only call a worker whose
 *                      deque never empties makes, so a source with a clock
 *                      to look at (sched/'s escalation) looks at it here.
 *   WEFT__TAKE_URGENT  every other fairness look of a source without push,
 *                      before the injector and the submitters' queues: as
 *                      FAIR, but only work that must go ahead of the
 *                      default-priority jobs (sched/: HIGH and CRITICAL);
 *                      FAIR follows if those queues are empty.  Without it,
 *                      NORMAL jobs the source keeps being given (a task
 *                      that requeues itself with a handle) kept every
 *                      default-priority job from another thread waiting
 *                      for ever (tests/seeds_hunt41.c).
 * push(w, state, j): optional.  When set, the workers' deques are sealed
 * (weft__deque_seal) and every job a worker queues (weft__push_local) goes
 * here, found on the push's failure path, so an executor without such a
 * source pays nothing for it.  0, or non-zero: the job goes to the worker's
 * private overflow list.  Jobs from other threads still go to the injector:
 * take() moves them into the source (the steal rounds leave the injector to
 * it; the last look before parking still reads it).  A
 * source with push must be set from a layer's executor_init (the deques are
 * empty, the workers not started).
 *
 * nap(w, state): optional.  Called when w found nothing in its last look and
 * is about to sleep: 0 to sleep until woken, or at most how many ns to sleep
 * before looking again, for work the source holds but would not hand out in
 * that look and that no submission will wake a worker for (sched/: a user
 * policy that returned NULL while it held items, which it may hand out later).
 *
 * Nothing calls take() per job: a source that wants a job to run before the
 * rest of a worker's deque pushes a job onto that deque (sched/'s tickets). */
enum { WEFT__TAKE_STEAL = 1, WEFT__TAKE_LAST = 2, WEFT__TAKE_FINAL = 3, WEFT__TAKE_FAIR = 4, WEFT__TAKE_URGENT = 5 };
typedef struct weft__source {
    weft__job *(*take)(weft__worker *w, void *state, int stage);
    int (*push)(weft__worker *w, void *state, weft__job *j);
    uint64_t (*nap)(weft__worker *w, void *state);
} weft__source;

/* Sets ex's source (once; a second call with another source is refused:
 * WEFT_EBUSY).  Without push: any thread, at any time (a worker sees it from
 * its next look; the seq_cst store orders it before the caller's later
 * notify).  With push: from executor_init only.  WEFT_OK, WEFT_EINVAL (NULL
 * argument or take), WEFT_ENOMEM. */
int weft__source_set(weft_executor *ex, const weft__source *src, void *state);
/* After publishing a job in the source: wakes a sleeper if needed (w: the
 * calling worker of ex, or NULL). */
void weft__source_notify(weft_executor *ex, weft__worker *w);

/* ---- used by the core itself (executor.c, worker.c) ---- */

/* Lays out the per-worker areas of `layers` on ex's workers.  0, WEFT_ENOMEM,
 * or WEFT_EINVAL when the list is not the one every executor uses. */
int weft__layers_layout(weft_executor *ex, weft__layer *const *layers, unsigned n);
/* executor_init then worker_init of every layer, in order; on a failure, the
 * ones done are finished and its status returned. */
int weft__layers_init(weft_executor *ex, const weft_executor_config *config);
/* Finishes every layer in reverse order and frees the areas (workers joined). */
void weft__layers_fini(weft_executor *ex);
/* The layers' thread_start hooks, on worker w's own thread (core/worker.c). */
void weft__layers_thread_start(weft__worker *w);
/* The first layer's reason why a wait for f on w could never end
 * (weft__layer.waits_behind), or NULL (core/future.c). */
const char *weft__layers_waits_behind(weft__worker *w, const weft_future *f);

/* A worker's look at the pollers (poll.c): calls each registered one that no
 * other worker is calling.  Returns the highest WEFT__POLL_* seen. */
int weft__pollers_run(weft__worker *w);
/* Frees the poller slots (teardown). */
void weft__pollers_destroy(weft_executor *ex);

#endif
