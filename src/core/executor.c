/* Executor lifetime and the public executor / context API. */
#include "core/error_detail.h"
#include "core/executor.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "core/env.h"
#include "core/future.h"
#include "core/layer.h"
#include "core/log.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORKERS 4096

/* weft_spawn reaches the frame stack as *(weft__fj **)ctx (include/weft/forkjoin.h). */
_Static_assert(offsetof(struct weft_ctx, worker) == 0, "ctx->worker must come first");
_Static_assert(offsetof(struct weft__worker, fj) == 0, "worker->fj must come first");

/* Environment variables follow core/env.h: 0 or unset is the default, a bad
 * value is warned about once and replaced by the default. */
static unsigned workers_from_env(void) {
    uint64_t v;
    if (!weft__env_uint("WEFT_WORKERS", MAX_WORKERS, &v, "the CPU count")) return 0;
    return (unsigned)v; /* 0: the CPU count */
}

/* WEFT_STEAL_BATCH: the most jobs a steal takes (weft_executor_config.steal_batch). */
#define MAX_STEAL_BATCH 256u
static unsigned steal_batch_from_env(void) {
    uint64_t v;
    if (!weft__env_uint("WEFT_STEAL_BATCH", MAX_STEAL_BATCH, &v, "1")) return 1;
    return v ? (unsigned)v : 1;
}

/* WEFT_STEAL_ROUNDS / WEFT_YIELD_ROUNDS: an idle worker's search before it
 * parks (weft_executor_config.steal_rounds, .yield_rounds), for tuning a
 * program on a machine where waking a parked worker is dear (a VM whose idle
 * vCPUs halt) without rebuilding it. */
static unsigned rounds_from_env(const char *name, unsigned dflt, const char *dflt_text) {
    uint64_t v;
    if (!weft__env_uint(name, WEFT_SEARCH_ROUNDS_MAX, &v, dflt_text)) return dflt;
    return v ? (unsigned)v : dflt;
}

/* WEFT_FORK_JOIN_FRAMES: a worker's fork-join frames (weft_executor_config
 * .fork_join_frames), for a program whose flat loops of spawns outgrow the
 * default, run on the default executor or built without a config. */
static size_t fj_frames_of(size_t configured) {
    uint64_t v = configured;
    /* From 1, as documented: a 0 was taken silently as the default. */
    if (v == 0 && !weft__env_uint_range("WEFT_FORK_JOIN_FRAMES", 1, WEFT_FORK_JOIN_FRAMES_MAX, &v, "65536"))
        v = (uint64_t)1 << 16;
    return v < 16 ? 16 : (size_t)v; /* a stack shares half of its frames: keep some to share */
}

/* WEFT_AFFINITY: "cpus" binds here; "none" does not.  The names of placement
 * strategies are accepted too (no warning) and stay WEFT_AFFINITY_DEFAULT,
 * unbound to the core: the layer that places workers reads WEFT_AFFINITY only
 * then (topo/layer.c), so that a config's explicit NONE or CPUS is kept, and
 * binds them before they start. */
static weft_affinity affinity_from_env(void) {
    static const char *const words[] = {"none", "cpus", "compact", "physical_cores", "scatter", "sparse",
                                        "numa_dense", "numa_round_robin", "l3_domain", NULL};
    int k = weft__env_choice("WEFT_AFFINITY", words, "\"none\"");
    return k == 1 ? WEFT_AFFINITY_CPUS : k >= 2 ? WEFT_AFFINITY_DEFAULT : WEFT_AFFINITY_NONE;
}

/* In a child process after fork(): this thread is no worker of any executor
 * (the forking thread may have been one), and every executor created before
 * is unusable (weft__forked). */
static void after_fork_in_child(void) {
    weft__forget_worker();
    weft__tls_sub = (weft__sub_cache){0}; /* its slots are the parent's: the next call looks again */
}

static void set_err(weft_status *err, int st) {
    if (err) *err = (weft_status)st;
}

/* Stops the first `started` workers (they are idle: no runs exist) and frees.
 * Also the way out of a failed create, from any point after the sleep word is
 * set up (the injector and the workers array may still be zero). */
static void teardown(weft_executor *ex, unsigned started) {
    atomic_store_explicit(&ex->shutdown, 1, memory_order_seq_cst);
    weft__sleep_wake_all(&ex->sleep);
    for (unsigned i = 0; i < started; i++) weft__thread_join(ex->workers[i].thread);
    /* Acquire: pairs with the release in weft__submit_from; the count went up
     * before the push of a job whose run our caller has seen end. */
    unsigned spins = 0;
    while (atomic_load_explicit(&ex->foreign_submits, memory_order_acquire) != 0) weft__spin_pause(&spins);
    if (ex->workers) {
        /* The layers first (observe/ saves WEFT_PROFILE from the workers' state). */
        weft__layers_fini(ex);
        for (unsigned i = 0; i < weft__nslots(ex); i++) {
            if (atomic_load_explicit(&ex->workers[i].deque.ring, memory_order_relaxed))
                weft__deque_destroy(&ex->workers[i].deque);
            weft__fj_destroy(&ex->workers[i].fj);
        }
        weft__free_aligned(ex->workers, weft__workers_bytes(ex), WEFT__CACHE_LINE);
    }
    weft__pollers_destroy(ex);
    weft__mutex_destroy(&ex->poll_lock);
    weft__injector_destroy(&ex->injector); /* a zero injector holds nothing */
    weft__free_aligned(ex, sizeof *ex, WEFT__CACHE_LINE);
}

/* The first field of c out of its range, its value in *value, or NULL: the
 * message names it (weft/core.h: a failure says which parameter is wrong). */
static const char *field_out_of_range(const weft_executor_config *c, size_t *value, size_t *max) {
    const size_t rounds = WEFT_SEARCH_ROUNDS_MAX, queue = (size_t)1 << 30;
    const struct { const char *name; size_t value, max; } f[] = {
        {"workers", c->workers, MAX_WORKERS},
        {"steal_rounds", c->steal_rounds, rounds},
        {"yield_rounds", c->yield_rounds == WEFT_YIELD_ROUNDS_NONE ? 0 : c->yield_rounds, rounds},
        {"steal_attempts[0]", c->steal_attempts[0], rounds},
        {"steal_attempts[1]", c->steal_attempts[1], rounds},
        {"steal_attempts[2]", c->steal_attempts[2], rounds},
        {"steal_batch", c->steal_batch, MAX_STEAL_BATCH},
        {"deque_capacity", c->deque_capacity, queue},
        {"local_queue_capacity", c->local_queue_capacity, queue},
        {"fork_join_frames", c->fork_join_frames, WEFT_FORK_JOIN_FRAMES_MAX},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value > f[i].max) return *value = f[i].value, *max = f[i].max, f[i].name;
    return NULL;
}

weft_executor *weft__executor_create(const weft_executor_config *config, weft__layer *const *layers, unsigned n,
                                     weft_status *err) {
    weft_executor_config c = config ? *config : (weft_executor_config){0};
    size_t value, max;
    const char *bad = field_out_of_range(&c, &value, &max);
    if (bad)
        return weft__fail_null(err, "weft_executor_create", WEFT_EINVAL, "config->%s is %zu, more than %zu", bad,
                               value, max);
    if ((unsigned)c.affinity > WEFT_AFFINITY_CPUS)
        return weft__fail_null(err, "weft_executor_create", WEFT_EINVAL, "config->affinity is %d, not a weft_affinity",
                               (int)c.affinity);
    weft__process_init(after_fork_in_child);
    weft__log_init_from_env(); /* WEFT_LOG first, so the warnings below follow it */
    if (c.workers == 0) c.workers = workers_from_env();
    if (c.workers == 0) c.workers = weft__cpu_count();
    if (c.affinity == WEFT_AFFINITY_DEFAULT) c.affinity = affinity_from_env();
    weft_executor *ex = weft__calloc_aligned(sizeof *ex, WEFT__CACHE_LINE);
    if (!ex) return weft__fail_null(err, "weft_executor_create", WEFT_ENOMEM, NULL);
    ex->nworkers = c.workers;
    ex->steal_rounds = c.steal_rounds ? c.steal_rounds : rounds_from_env("WEFT_STEAL_ROUNDS", 16, "16");
    /* 0 is the default, so "no yield round" has a value of its own. */
    ex->yield_rounds = c.yield_rounds == WEFT_YIELD_ROUNDS_NONE ? 0
                       : c.yield_rounds                          ? c.yield_rounds
                                                                 : rounds_from_env("WEFT_YIELD_ROUNDS", 8, "8");
    ex->steal_batch = c.steal_batch ? c.steal_batch : steal_batch_from_env();
    ex->fj_frames = fj_frames_of(c.fork_join_frames);
    ex->bound = c.affinity == WEFT_AFFINITY_CPUS;
    ex->fork_generation = atomic_load_explicit(&weft__fork_generation, memory_order_relaxed);
    ex->serial = weft__submitter_serial();
    atomic_init(&ex->nsubmitters, 0);
    atomic_init(&ex->shutdown, 0);
    atomic_init(&ex->outside_begun, 0);
    atomic_init(&ex->outside_ended, 0);
    atomic_init(&ex->foreign_submits, 0);
    atomic_init(&ex->quiet_waiters, 0);
    atomic_init(&ex->quiet_epoch, 0);
    atomic_init(&ex->next_run_id, 0);
    atomic_init(&ex->obs, NULL);
    atomic_init(&ex->npollers, 0);
    atomic_init(&ex->poll_watch, 0);
    weft__sleep_init(&ex->sleep, ex->nworkers);
    if (weft__mutex_init(&ex->poll_lock) != 0) {
        weft__free_aligned(ex, sizeof *ex, WEFT__CACHE_LINE);
        return weft__fail_null(err, "weft_executor_create", WEFT_ENOMEM, NULL);
    }
    if (weft__injector_init(&ex->injector) != 0 ||
        !(ex->workers = weft__calloc_aligned(weft__workers_bytes(ex), WEFT__CACHE_LINE))) {
        teardown(ex, 0);
        return weft__fail_null(err, "weft_executor_create", WEFT_ENOMEM, NULL);
    }
    int64_t cap = c.deque_capacity ? (int64_t)c.deque_capacity : 1024;
    int64_t bound = (int64_t)c.local_queue_capacity; /* 0: unbounded */
    if (bound && cap > bound) cap = bound;
    for (unsigned i = 0; i < weft__nslots(ex); i++) {
        weft__worker *w = &ex->workers[i];
        bool slot = i >= ex->nworkers; /* a submitter slot (core/submitter.c): no thread */
        w->ex = ex;
        w->id = i;
        w->rng = 0x9e3779b97f4a7c15ull * (i + 1) | 1;
        w->last_victim = -1;
        w->node = -1;
        atomic_init(&w->runs_begun, 0);
        atomic_init(&w->runs_ended, 0);
        atomic_init(&w->sub_owner, NULL);
        w->cpu = c.affinity == WEFT_AFFINITY_CPUS && !slot ? weft__cpu_nth(i) : -1;
        /* A slot starts small: most executors never see a submitter. */
        if (weft__deque_init(&w->deque, slot && cap > 64 ? 64 : cap) != 0) {
            unsigned nworkers = ex->nworkers; /* (ex is freed next) */
            teardown(ex, 0);
            /* A submitter slot is no worker: "worker 5" of a 3-worker executor,
             * sized by deque_capacity, misled whoever read it. */
            if (slot)
                return weft__fail_null(err, "weft_executor_create", WEFT_ENOMEM,
                                       "out of memory for the deque of submitter slot %u (%lld initial slots)",
                                       i - nworkers, (long long)(cap > 64 ? 64 : cap));
            return weft__fail_null(err, "weft_executor_create", WEFT_ENOMEM,
                                   "out of memory for the deque of worker %u (%lld initial slots: "
                                   "config->deque_capacity)",
                                   i, (long long)cap);
        }
        weft__deque_set_limit(&w->deque, bound); /* a full one overflows to the injector (worker.c) */
    }
    /* The layers above (core/layer.h): their per-worker areas, then their init
     * in order (observe/ reads the config, WEFT_PROFILE and WEFT_LOG). */
    /* A layer that refuses its part of the config says why (config->sched's
     * kind, a NUMA node that does not exist): its message is kept. */
    weft__saved_message before;
    weft__error_message_save(&before);
    weft__set_error_message("%s", "");
    int lst = weft__layers_layout(ex, layers, n);
    if (lst == WEFT_OK) lst = weft__layers_init(ex, &c);
    if (lst != WEFT_OK) {
        teardown(ex, 0);
        if (*weft_last_error_message()) {
            set_err(err, lst);
            return NULL;
        }
        return weft__fail_null(err, "weft_executor_create", lst, "its sched, placement or observer part failed: %s",
                               weft_strerror(lst));
    }
    weft__error_message_restore(&before);
    for (unsigned i = 0; i < ex->nworkers; i++) {
        int st = weft__thread_start(&ex->workers[i].thread, weft__worker_main, &ex->workers[i], c.stack_size);
        if (st != 0) {
            teardown(ex, i);
            /* EINVAL from the thread start can only be the stack size (core.h). */
            if (st == WEFT_EINVAL && c.stack_size)
                return weft__fail_null(err, "weft_executor_create", st,
                                       "the system refused config->stack_size %zu for a worker thread", c.stack_size);
            return weft__fail_null(err, "weft_executor_create", st, "worker thread %u could not be started: %s", i,
                                   weft_strerror(st));
        }
    }
    ex->created = true; /* read only by teardown, on the destroying thread */
    weft__log(WEFT_LOG_INFO, "executor %p created: %u workers%s", (void *)ex, ex->nworkers,
              c.affinity == WEFT_AFFINITY_CPUS ? ", bound to CPUs" : "");
    set_err(err, WEFT_OK);
    return ex;
}

/* Why destroy must leave ex alone, or NULL when it may go ahead.  destroy
 * returns nothing, so the reason is logged (weft/core.h says what to do). */
static const char *destroy_refused(const weft_executor *ex) {
    if (weft__current_worker(ex))
        return "called from one of its own workers: it would wait for itself, so nothing was done; "
               "destroy it from the thread that created it";
    if (weft__runs_here(ex)) /* a run this thread carries out off the workers: it hung */
        return "called from inside a run of the executor that this thread carries out (a parallel algorithm's "
               "callback on the thread that called it, or a weft_future_then callback run by "
               "weft_sched_remove): it would wait for that run, so nothing was done";
    if (weft__is_default_executor(ex)) /* shared by the whole process: exit destroys it */
        return "the default executor is shared by the process; it is destroyed at exit, not by a caller";
    if (weft__forked(ex)) /* no workers to join here; freeing would save the parent's profile again */
        return "the executor was created before fork(); in the child it is left as it is "
               "(its memory goes with the process)";
    return NULL;
}

void weft_executor_destroy(weft_executor *ex) {
    if (!ex) return;
    const char *why = destroy_refused(ex);
    if (why) {
        weft__log(WEFT_LOG_WARN, "weft_executor_destroy(%p): %s", (void *)ex, why);
        return;
    }
    (void)weft_executor_wait_all(ex);
    teardown(ex, ex->nworkers);
}

unsigned weft_executor_workers(const weft_executor *ex) { return ex ? ex->nworkers : 0; }

unsigned weft_executor_waiters(const weft_executor *ex) {
    if (!ex) return 0;
    /* Workers that announced they go to sleep, less those a wake-up token
     * is already on its way to (core/sleep.h).  A relaxed read: a snapshot. */
    uint64_t v = atomic_load_explicit(&((weft_executor *)ex)->sleep.state, memory_order_relaxed);
    unsigned idle = WEFT__SLEEP_IDLE(v), tokens = WEFT__SLEEP_TOKENS(v);
    return idle > tokens ? idle - tokens : 0;
}

int weft_executor_worker_id(const weft_executor *ex) {
    weft__worker *w = ex ? weft__current_worker(ex) : NULL;
    return w ? (int)w->id : -1;
}

int weft__submit(weft_executor *ex, weft__job *job) { return weft__submit_from(ex, weft__current_worker(ex), job); }

/* Pushes job onto q, one of ex's shared queues (the injector, a node's
 * mailbox), and wakes a sleeper.  0, or non-zero when q is full.  A worker of
 * another executor hands over work its own user did not submit (run.c's
 * start_queued, a semaphore's wake-up): the job may run, end the last run and
 * let ex be destroyed before the notify has returned, so teardown waits for it
 * (foreign_submits).  A user's thread orders its own calls before
 * weft_executor_destroy. */
static int push_shared(weft_executor *ex, weft__injector *q, weft__job *job) {
    bool foreign = weft__on_worker_thread();
    if (foreign) atomic_fetch_add_explicit(&ex->foreign_submits, 1, memory_order_relaxed); /* before the push */
    int st = weft__injector_push(q, job);
    if (st == 0) weft__sleep_notify(&ex->sleep);
    if (foreign) atomic_fetch_sub_explicit(&ex->foreign_submits, 1, memory_order_release); /* last touch of ex */
    return st;
}

int weft__submit_from_always(weft_executor *ex, weft__worker *w, weft__job *job) {
    if (w) {
        weft__push_local(w, job);
        return WEFT_OK;
    }
    if (weft__forked(ex)) return WEFT_EFORKED;
    bool foreign = weft__on_worker_thread();
    if (foreign) atomic_fetch_add_explicit(&ex->foreign_submits, 1, memory_order_relaxed); /* as push_shared */
    weft__injector_push_spare(&ex->injector, job);
    weft__sleep_notify(&ex->sleep);
    if (foreign) atomic_fetch_sub_explicit(&ex->foreign_submits, 1, memory_order_release);
    return WEFT_OK;
}

int weft__submit_to_node(weft_executor *ex, weft__worker *w, weft__job *job, unsigned node) {
    if (node >= ex->nnodes || ex->mailboxes[node].nworkers == 0 || (w && w->node == (int)node))
        return weft__submit_from(ex, w, job);
    if (weft__forked(ex)) return WEFT_EFORKED;
    if (push_shared(ex, &ex->mailboxes[node].q, job) != 0) return weft__submit_from(ex, w, job);
    return WEFT_OK;
}

int weft__submit_from(weft_executor *ex, weft__worker *w, weft__job *job) {
    if (w) {
        weft__push_local(w, job);
        return WEFT_OK;
    }
    if (weft__forked(ex)) return WEFT_EFORKED;
    return push_shared(ex, &ex->injector, job);
}

static unsigned spread_to(weft_executor *ex, weft__injector *q, weft__job *first, size_t stride, unsigned n) {
    unsigned pushed = 0;
    if (weft__forked(ex)) return 0;
    for (; pushed < n; pushed++) {
        weft__job *job = (weft__job *)((char *)first + (size_t)pushed * stride);
        if (weft__injector_push(q, job) != 0) break;
    }
    if (pushed) weft__sleep_notify_many(&ex->sleep, pushed);
    return pushed;
}

unsigned weft__submit_spread(weft_executor *ex, weft__job *first, size_t stride, unsigned n) {
    return spread_to(ex, &ex->injector, first, stride, n);
}

unsigned weft__submit_spread_to_node(weft_executor *ex, unsigned node, weft__job *first, size_t stride,
                                     unsigned n) {
    return spread_to(ex, &ex->mailboxes[node].q, first, stride, n);
}

int weft_ctx_worker_id(const weft_ctx *ctx) { return ctx ? (int)ctx->worker->id : -1; }
weft_executor *weft_ctx_executor(const weft_ctx *ctx) { return ctx ? ctx->worker->ex : NULL; }
bool weft_ctx_cancelled(const weft_ctx *ctx) {
    return ctx && ctx->stop && (atomic_load_explicit(ctx->stop, memory_order_relaxed) & WEFT__STOP_MASK) != 0;
}
