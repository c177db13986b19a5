/* Session 39: programs written from the seed documents (../shared/seeds/), as a
 * checker reading them would write them, against weft's public headers.
 *
 *  - wake-ups (seed 002: "park thread, wait for new work notification";
 *    seed 004: "progressive sleep, wake on futex when work arrives"): work
 *    that needs two (or four) workers at once, handed to parked workers by
 *    every path weft has (outside submissions, a task's own submissions,
 *    dependents released, graph successors, a loop's chunks, a removed
 *    task's dependents), under every ready-queue policy and
 *    priority (seed 001's PriorityScheduler / FifoScheduler /
 *    RoundRobinScheduler / pluggable Scheduler);
 *  - the global injector (seed 002) under many outside threads with every
 *    policy, each task run once, and counted once by the metrics (seed 001's
 *    "Metrics: task execution tracking, success/failure rates");
 *  - async tasks with dependencies at scale (long chains, wide fans);
 *  - a cancellation token reused across runs (seed 001: "reset() - token reuse
 *    across multiple task runs"), DeadlineGuard and with_deadline;
 *  - environment variables the earlier hunts left out, with bad values;
 *  - the topology layer's queries (seed 001's HwTopology) agreeing with each
 *    other on this machine, and placements with more workers than CPUs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- executors of every ready-queue policy -------------------------------- */

/* A user policy (seed 001's pluggable Scheduler): a locked FIFO ring. */
typedef struct ring_policy {
    pthread_mutex_t m;
    weft_sched_item *items[1 << 17];
    size_t head, tail;
} ring_policy;

static int ring_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    ring_policy *r = st;
    pthread_mutex_lock(&r->m);
    int full = r->tail - r->head == sizeof r->items / sizeof r->items[0];
    if (!full) r->items[r->tail++ % (sizeof r->items / sizeof r->items[0])] = it;
    pthread_mutex_unlock(&r->m);
    return full;
}

static weft_sched_item *ring_pop(void *st, int worker) {
    ring_policy *r = st;
    pthread_mutex_lock(&r->m);
    weft_sched_item *it = NULL;
    if (r->head != r->tail) it = r->items[r->head++ % (sizeof r->items / sizeof r->items[0])];
    pthread_mutex_unlock(&r->m);
    return it;
}

static ring_policy the_ring = { .m = PTHREAD_MUTEX_INITIALIZER };

enum { KINDS = 6 };
static const char *const kind_name[KINDS] = { "work_stealing", "fifo", "priority", "round_robin", "random",
                                              "custom" };

static weft_executor *make_kind(int kind, unsigned workers, bool metrics) {
    static const weft_sched_kind kinds[KINDS] = { WEFT_SCHED_WORK_STEALING, WEFT_SCHED_FIFO, WEFT_SCHED_PRIORITY,
                                                  WEFT_SCHED_ROUND_ROBIN, WEFT_SCHED_RANDOM, WEFT_SCHED_CUSTOM };
    weft_sched_policy pol = { .state = &the_ring, .push = ring_push, .pop = ring_pop };
    weft_sched_config sc = { .kind = kinds[kind], .policy = kind == 5 ? &pol : NULL, .seed = 7 };
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = workers, .sched = &sc, .metrics = metrics }, &err);
    if (!ex) TEST_FAIL_("executor %s with %u workers: %s", kind_name[kind], workers, weft_errname(err));
    return ex;
}

/* ---- rendezvous: work that can only finish with n workers at once ---------- */

typedef struct rendezvous {
    atomic_int arrived;
    atomic_int timed_out;
    int n;
} rendezvous;

/* Arrives and waits (yielding) until all n arrived; gives up after 3 s. */
static void meet(rendezvous *r) {
    atomic_fetch_add(&r->arrived, 1);
    uint64_t until = now_ns() + 3 * SEC;
    while (atomic_load(&r->arrived) < r->n) {
        if (now_ns() > until) {
            atomic_store(&r->timed_out, 1);
            return;
        }
        sched_yield();
    }
}

static int meet_task(weft_ctx *ctx, void *arg) {
    meet(arg);
    return 0;
}

static void meet_index(size_t i, void *arg) { meet(arg); }

/* How a scenario hands its n participants to the workers. */
typedef struct scenario {
    weft_executor *ex;
    rendezvous *r;
    weft_priority prio; /* for the prioritised paths */
    bool handle;        /* queue them with handles */
} scenario;

static void outside_async(scenario *s) {
    for (int i = 0; i < s->r->n; i++) ASSERT_OK(weft_silent_async(s->ex, meet_task, s->r));
}

static void outside_async_with(scenario *s) {
    for (int i = 0; i < s->r->n; i++) {
        weft_sched_handle h;
        weft_async_options o = { .priority = s->prio, .handle = s->handle ? &h : NULL };
        ASSERT_OK(weft_async_with(s->ex, meet_task, s->r, &o, NULL));
    }
}

/* A task queues the participants and returns. */
static int spawn_all(weft_ctx *ctx, void *arg) {
    scenario *s = arg;
    for (int i = 0; i < s->r->n; i++) {
        weft_async_options o = { .priority = s->prio };
        if (weft_async_with(weft_ctx_executor(ctx), meet_task, s->r, &o, NULL) != WEFT_OK) return 1;
    }
    return 0;
}

static void inside_async(scenario *s) { ASSERT_OK(weft_silent_async(s->ex, spawn_all, s)); }

/* A task queues n-1 participants and meets them itself. */
static int spawn_and_meet(weft_ctx *ctx, void *arg) {
    scenario *s = arg;
    for (int i = 1; i < s->r->n; i++) {
        weft_async_options o = { .priority = s->prio };
        if (weft_async_with(weft_ctx_executor(ctx), meet_task, s->r, &o, NULL) != WEFT_OK) return 1;
    }
    meet(s->r);
    return 0;
}

static void inside_async_meet(scenario *s) { ASSERT_OK(weft_silent_async(s->ex, spawn_and_meet, s)); }

/* The participants depend on one task, which waits for a gate: its worker
 * releases them all at once when it ends. */
static int wait_gate(weft_ctx *ctx, void *arg) {
    (void)wait_flag(arg, 1, 3.0);
    return 0;
}

static void dependents(scenario *s) {
    atomic_int gate = 0;
    weft_future *a;
    ASSERT_OK(weft_async(s->ex, wait_gate, &gate, &a));
    for (int i = 0; i < s->r->n; i++) {
        weft_async_options o = { .priority = s->prio, .deps = &a, .ndeps = 1 };
        ASSERT_OK(weft_async_with(s->ex, meet_task, s->r, &o, NULL));
    }
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(a));
    weft_future_destroy(a);
    ASSERT_OK(weft_executor_wait_all(s->ex));
}

/* A task queued with a handle, which the participants depend on, taken out
 * from this (outside) thread: the removal releases them here. */
static void removed_dependency(scenario *s) {
    atomic_int gate = 0;
    weft_future *blocker, *a;
    /* Both workers... are idle: the blocker keeps one busy so `a` stays
     * queued long enough to be removed (it is LOW: it runs after the rest). */
    ASSERT_OK(weft_async(s->ex, wait_gate, &gate, &blocker));
    weft_sched_handle h;
    weft_async_options lo = { .priority = WEFT_PRIORITY_LOW, .handle = &h };
    ASSERT_OK(weft_async_with(s->ex, noop, NULL, &lo, &a));
    for (int i = 0; i < s->r->n; i++) {
        weft_async_options o = { .priority = s->prio, .deps = &a, .ndeps = 1 };
        ASSERT_OK(weft_async_with(s->ex, meet_task, s->r, &o, NULL));
    }
    weft_status st = weft_sched_remove(s->ex, h);
    atomic_store(&gate, 1);
    if (st == WEFT_OK) ASSERT_STATUS(weft_future_wait(a), WEFT_ECANCELED);
    else ASSERT_STATUS(st, WEFT_ENOENT); /* a worker took it first: it ran */
    weft_future_destroy(a);
    ASSERT_OK(weft_future_wait(blocker));
    weft_future_destroy(blocker);
}

/* A graph: one task whose successors are the participants. */
static void graph_fan(scenario *s) {
    weft_taskflow *tf = make_taskflow("fan");
    weft_task head = must_emplace(tf, noop, NULL);
    for (int i = 0; i < s->r->n; i++) ASSERT_OK(weft_precede(head, must_emplace(tf, meet_task, s->r)));
    weft_future *f;
    if (s->prio != WEFT_PRIORITY_NORMAL) ASSERT_OK(weft_run_with_priority(s->ex, tf, s->prio, &f));
    else ASSERT_OK(weft_run(s->ex, tf, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* A loop of n iterations in chunks of one, from outside. */
static void loop(scenario *s) {
    weft_algo_config c = { .chunk = 1 };
    weft_priority old;
    ASSERT_OK(weft_algo_set_priority(s->prio, &old));
    weft_status st = weft_parallel_for(s->ex, 0, (size_t)s->r->n, 1, meet_index, s->r, &c);
    ASSERT_OK(weft_algo_set_priority(old, NULL));
    ASSERT_OK(st);
}

typedef void (*scenario_fn)(scenario *);

static void check_scenario(int kind, unsigned workers, const char *what, scenario_fn fn, weft_priority prio,
                           bool handle) {
    weft_executor *ex = make_kind(kind, workers, false);
    sleep_us(1000); /* every worker has parked (they search for microseconds) */
    rendezvous r = { .n = (int)workers };
    scenario s = { .ex = ex, .r = &r, .prio = prio, .handle = handle };
    fn(&s);
    ASSERT_OK(weft_executor_wait_all(ex));
    if (atomic_load(&r.timed_out) || atomic_load(&r.arrived) != (int)workers)
        TEST_FAIL_("%s (%s, %u workers, priority %s%s): %d of %u participants met, timed out %d", what,
                   kind_name[kind], workers, weft_priority_name(prio), handle ? ", handles" : "",
                   atomic_load(&r.arrived), workers, atomic_load(&r.timed_out));
    weft_executor_destroy(ex);
}

TEST(work_that_needs_every_worker_at_once_wakes_them_all_by_every_path_under_every_policy) {
    watchdog_start(120);
    static const weft_priority prios[] = { WEFT_PRIORITY_NORMAL, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_LOW,
                                           WEFT_PRIORITY_CRITICAL };
    for (int kind = 0; kind < KINDS; kind++) {
        for (unsigned workers = 2; workers <= 3; workers++) {
            check_scenario(kind, workers, "outside silent async", outside_async, WEFT_PRIORITY_NORMAL, false);
            check_scenario(kind, workers, "a task's own async tasks", inside_async, WEFT_PRIORITY_NORMAL, false);
            check_scenario(kind, workers, "async tasks their task meets", inside_async_meet, WEFT_PRIORITY_NORMAL,
                           false);
            check_scenario(kind, workers, "graph successors", graph_fan, WEFT_PRIORITY_NORMAL, false);
            check_scenario(kind, workers, "dependents", dependents, WEFT_PRIORITY_NORMAL, false);
            check_scenario(kind, workers, "loop chunks", loop, WEFT_PRIORITY_NORMAL, false);
            for (size_t p = 0; p < sizeof prios / sizeof prios[0]; p++) {
                check_scenario(kind, workers, "outside prioritised async", outside_async_with, prios[p], false);
                check_scenario(kind, workers, "outside async with handles", outside_async_with, prios[p], true);
                if (prios[p] == WEFT_PRIORITY_NORMAL) continue;
                check_scenario(kind, workers, "a task's prioritised async tasks", inside_async, prios[p], false);
                check_scenario(kind, workers, "prioritised async tasks their task meets", inside_async_meet,
                               prios[p], false);
                check_scenario(kind, workers, "prioritised dependents", dependents, prios[p], false);
                check_scenario(kind, workers, "a removed task's dependents", removed_dependency, prios[p], false);
                check_scenario(kind, workers, "a prioritised run's successors", graph_fan, prios[p], false);
                check_scenario(kind, workers, "prioritised loop chunks", loop, prios[p], false);
            }
        }
    }
    watchdog_stop();
}

/* ---- the global injector: many outside threads, every policy, metrics ---- */

enum { SUBMITTERS = 12, PER_THREAD = 1500 };

typedef struct flood {
    weft_executor *ex;
    atomic_uchar *ran;     /* SUBMITTERS * PER_THREAD counters */
    atomic_int go;
    atomic_int failures;   /* tasks that returned non-zero on purpose */
    atomic_int refused;    /* submissions that did not return WEFT_OK */
    int thread;
} flood;

typedef struct flood_arg {
    flood *f;
    int thread;
} flood_arg;

typedef struct item {
    flood *f;
    size_t id;
} item;

static item items[SUBMITTERS * PER_THREAD];

/* Marks its id; every seventh fails (seed 001: "success/failure rates"). */
static int mark(weft_ctx *ctx, void *arg) {
    item *it = arg;
    atomic_fetch_add_explicit(&it->f->ran[it->id], 1, memory_order_relaxed);
    return it->id % 7 == 0 ? 1 : 0;
}

static void *flood_thread(void *p) {
    flood_arg *a = p;
    flood *f = a->f;
    while (!atomic_load(&f->go)) sched_yield();
    for (size_t k = 0; k < PER_THREAD; k++) {
        size_t id = (size_t)a->thread * PER_THREAD + k;
        item *it = &items[id];
        weft_status st;
        switch (k % 4) {
        case 0: st = weft_silent_async(f->ex, mark, it); break;
        case 1: {
            weft_future *fu = NULL;
            st = weft_async(f->ex, mark, it, &fu);
            weft_future_destroy(fu);
            break;
        }
        case 2: {
            weft_async_options o = { .priority = (k / 4) % 2 ? WEFT_PRIORITY_HIGH : WEFT_PRIORITY_LOW };
            st = weft_async_with(f->ex, mark, it, &o, NULL);
            break;
        }
        default: st = weft_dependent_async(f->ex, mark, it, NULL, 0, NULL); break;
        }
        if (st != WEFT_OK) atomic_fetch_add(&f->refused, 1);
    }
    return NULL;
}

static void flood_once(int kind, unsigned workers) {
    static atomic_uchar ran[SUBMITTERS * PER_THREAD];
    for (size_t i = 0; i < SUBMITTERS * PER_THREAD; i++) atomic_store(&ran[i], 0);
    flood f = { .ran = ran };
    f.ex = make_kind(kind, workers, true);
    for (size_t i = 0; i < SUBMITTERS * PER_THREAD; i++) items[i] = (item){ &f, i };
    pthread_t th[SUBMITTERS];
    flood_arg args[SUBMITTERS];
    for (int t = 0; t < SUBMITTERS; t++) {
        args[t] = (flood_arg){ &f, t };
        ASSERT_EQ(pthread_create(&th[t], NULL, flood_thread, &args[t]), 0);
    }
    atomic_store(&f.go, 1);
    for (int t = 0; t < SUBMITTERS; t++) pthread_join(th[t], NULL);
    ASSERT_OK(weft_executor_wait_all(f.ex));
    ASSERT_EQ(atomic_load(&f.refused), 0);
    size_t failed = 0;
    for (size_t i = 0; i < SUBMITTERS * PER_THREAD; i++) {
        if (atomic_load(&ran[i]) != 1)
            TEST_FAIL_("%s, %u workers: task %zu ran %d times", kind_name[kind], workers, i, atomic_load(&ran[i]));
        failed += i % 7 == 0;
    }
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(f.ex, &m, NULL, 0));
    if (m.total.tasks != SUBMITTERS * PER_THREAD || m.total.failed != failed ||
        m.total.succeeded != SUBMITTERS * PER_THREAD - failed || m.total.skipped != 0)
        TEST_FAIL_("%s, %u workers: metrics say %llu tasks (%llu succeeded, %llu failed, %llu skipped), "
                   "want %d (%zu failed)",
                   kind_name[kind], workers, (unsigned long long)m.total.tasks,
                   (unsigned long long)m.total.succeeded, (unsigned long long)m.total.failed,
                   (unsigned long long)m.total.skipped, SUBMITTERS * PER_THREAD, failed);
    weft_executor_destroy(f.ex);
}

TEST(tasks_from_twelve_outside_threads_run_and_are_counted_once_under_every_policy) {
    watchdog_start(120);
    for (int kind = 0; kind < KINDS; kind++)
        for (unsigned workers = 1; workers <= 3; workers += 2) flood_once(kind, workers);
    watchdog_stop();
}

/* ---- async tasks with dependencies at scale --------------------------------- */

typedef struct chain_link {
    atomic_size_t *next;   /* the index the next link to run must have */
    atomic_int *bad;
    size_t index;
} chain_link;

static int chain_step(weft_ctx *ctx, void *arg) {
    chain_link *l = arg;
    size_t want = atomic_load(l->next);
    if (want != l->index) atomic_fetch_add(l->bad, 1);
    atomic_store(l->next, want + 1);
    return 0;
}

TEST(a_chain_of_100000_dependent_async_tasks_queued_behind_a_gate_runs_in_order) {
    watchdog_start(60);
    size_t n = (size_t)test_scale(100000);
    chain_link *links = calloc(n, sizeof *links);
    ASSERT_NOT_NULL(links);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        atomic_int gate = 0, bad = 0;
        atomic_size_t next = 0;
        weft_future *prev;
        ASSERT_OK(weft_async(ex, wait_gate, &gate, &prev));
        for (size_t i = 0; i < n; i++) {
            links[i] = (chain_link){ &next, &bad, i };
            weft_future *f;
            ASSERT_OK(weft_dependent_async(ex, chain_step, &links[i], &prev, 1, &f));
            weft_future_destroy(prev);
            prev = f;
        }
        atomic_store(&gate, 1);
        ASSERT_OK(weft_future_wait(prev));
        weft_future_destroy(prev);
        ASSERT_EQ(atomic_load(&next), n);
        ASSERT_EQ(atomic_load(&bad), 0);
        weft_executor_destroy(ex);
    }
    free(links);
    watchdog_stop();
}

static int count_task(weft_ctx *ctx, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

typedef struct fan_in {
    atomic_int *count;
    int want;
    atomic_int seen;
} fan_in;

static int check_fan_in(weft_ctx *ctx, void *arg) {
    fan_in *f = arg;
    atomic_store(&f->seen, atomic_load(f->count));
    return 0;
}

TEST(one_task_after_20000_dependencies_and_20000_after_one_all_run_once_on_one_worker) {
    watchdog_start(60);
    int n = (int)test_scale(20000);
    ASSERT_GT(n, 0);
    weft_executor *ex = make_executor(1);
    atomic_int gate = 0, fanned = 0, before = 0;
    weft_future *g;
    ASSERT_OK(weft_async(ex, wait_gate, &gate, &g));
    /* Fan out: n dependents of the gate, silent. */
    for (int i = 0; i < n; i++) ASSERT_OK(weft_dependent_async(ex, count_task, &fanned, &g, 1, NULL));
    /* Fan in: n tasks, each behind the gate too, and one task after all of them. */
    weft_future **deps = calloc((size_t)(unsigned)n, sizeof *deps);
    ASSERT_NOT_NULL(deps);
    for (int i = 0; i < n; i++) ASSERT_OK(weft_dependent_async(ex, count_task, &before, &g, 1, &deps[i]));
    fan_in fi = { .count = &before, .want = n, .seen = -1 };
    weft_future *last;
    ASSERT_OK(weft_dependent_async(ex, check_fan_in, &fi, deps, (size_t)n, &last));
    for (int i = 0; i < n; i++) weft_future_destroy(deps[i]);
    free(deps);
    ASSERT_FALSE(weft_future_ready(last));
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(last));
    ASSERT_EQ(atomic_load(&fi.seen), n);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&fanned), n);
    weft_future_destroy(last);
    weft_future_destroy(g);
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* Dependencies that fail, are cancelled or are removed still release their
 * dependents ("whatever its status", async.h). */
static int fail_task(weft_ctx *ctx, void *arg) { return 42; }

TEST(dependents_of_failed_cancelled_and_removed_tasks_still_run) {
    weft_executor *ex = make_executor(1);
    atomic_int gate = 0, ran = 0;
    weft_future *blocker, *failed, *cancelled, *removed, *after;
    ASSERT_OK(weft_async(ex, wait_gate, &gate, &blocker));
    ASSERT_OK(weft_async(ex, fail_task, NULL, &failed));
    ASSERT_OK(weft_async(ex, count_task, &ran, &cancelled));
    weft_sched_handle h;
    weft_async_options o = { .priority = WEFT_PRIORITY_LOW, .handle = &h };
    ASSERT_OK(weft_async_with(ex, count_task, &ran, &o, &removed));
    weft_future *deps[3] = { failed, cancelled, removed };
    ASSERT_OK(weft_dependent_async(ex, count_task, &ran, deps, 3, &after));
    ASSERT_OK(weft_future_cancel(cancelled));
    ASSERT_OK(weft_sched_remove(ex, h));
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(after));
    ASSERT_STATUS(weft_future_status(failed), WEFT_ETASK);
    ASSERT_STATUS(weft_future_status(cancelled), WEFT_ECANCELED);
    ASSERT_STATUS(weft_future_status(removed), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&ran), 1); /* only `after` */
    weft_future *all[] = { blocker, failed, cancelled, removed, after };
    for (size_t i = 0; i < 5; i++) weft_future_destroy(all[i]);
    weft_executor_destroy(ex);
}

TEST(dependencies_that_are_null_foreign_or_graph_runs_are_refused_and_queue_nothing) {
    weft_executor *ex = make_executor(1), *other = make_executor(1);
    atomic_int ran = 0;
    weft_future *mine, *theirs, *run;
    ASSERT_OK(weft_async(ex, noop, NULL, &mine));
    ASSERT_OK(weft_async(other, noop, NULL, &theirs));
    weft_taskflow *tf = make_taskflow("g");
    must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_run(ex, tf, &run));
    weft_future *out = (weft_future *)&ran;
    weft_future *with_null[2] = { mine, NULL };
    ASSERT_STATUS(weft_dependent_async(ex, count_task, &ran, with_null, 2, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    ASSERT_TRUE(strstr(weft_last_error_message(), "weft_dependent_async") != NULL);
    out = (weft_future *)&ran;
    ASSERT_STATUS(weft_dependent_async(ex, count_task, &ran, &theirs, 1, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    out = (weft_future *)&ran;
    ASSERT_STATUS(weft_dependent_async(ex, count_task, &ran, &run, 1, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    ASSERT_STATUS(weft_dependent_async(ex, count_task, &ran, NULL, 1, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), 0);
    weft_future_destroy(mine);
    weft_future_destroy(theirs);
    weft_future_destroy(run);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(other);
    weft_executor_destroy(ex);
}

/* ---- a cancellation token reused across runs (seed 001: reset) ------------- */

typedef struct reuse {
    atomic_int gate;
    weft_cancel_token *t;
    int cancel_at;          /* the task index that cancels, or -1 */
    char reason[32];
    atomic_int ran;
    char seen_reason[64];   /* what a task after the cancel saw */
    atomic_int saw_cancel;
} reuse;

typedef struct reuse_task {
    reuse *r;
    int index;
} reuse_task;

static int reuse_step(weft_ctx *ctx, void *arg) {
    reuse_task *rt = arg;
    reuse *r = rt->r;
    if (rt->index == 0) (void)wait_flag(&r->gate, 1, 3.0);
    atomic_fetch_add(&r->ran, 1);
    if (rt->index == r->cancel_at) {
        (void)weft_cancel_token_cancel_with(r->t, r->reason);
        if (weft_ctx_check(ctx) == WEFT_ECANCELED) {
            atomic_store(&r->saw_cancel, 1);
            snprintf(r->seen_reason, sizeof r->seen_reason, "%s", weft_ctx_cancel_reason(ctx));
        }
    }
    return 0;
}

TEST(a_token_reset_between_runs_cancels_only_the_runs_it_is_attached_to_after_each_reset) {
    enum { N = 40 };
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        weft_taskflow *tf = make_taskflow("chain");
        reuse r = { 0 };
        r.t = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(r.t);
        reuse_task tasks[N];
        weft_task prev = { 0 };
        for (int i = 0; i < N; i++) {
            tasks[i] = (reuse_task){ &r, i };
            weft_task t = must_emplace(tf, reuse_step, &tasks[i]);
            if (i) ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
        for (int round = 0; round < 6; round++) {
            bool cancel = round % 2 == 0;
            r.cancel_at = cancel ? 10 + round : -1;
            snprintf(r.reason, sizeof r.reason, "round %d", round);
            atomic_store(&r.gate, 0);
            atomic_store(&r.ran, 0);
            atomic_store(&r.saw_cancel, 0);
            r.seen_reason[0] = 0;
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_cancel_attach(r.t, f));
            atomic_store(&r.gate, 1);
            weft_run_info info;
            weft_status st = weft_future_wait(f);
            ASSERT_OK(weft_future_info(f, &info));
            if (cancel) {
                ASSERT_STATUS(st, WEFT_ECANCELED);
                ASSERT_EQ(atomic_load(&r.ran), r.cancel_at + 1);
                ASSERT_EQ(info.skipped, N - r.cancel_at - 1);
                ASSERT_EQ(atomic_load(&r.saw_cancel), 1);
                ASSERT_STREQ(r.seen_reason, r.reason);
                ASSERT_STREQ(weft_cancel_token_reason(r.t), r.reason);
                ASSERT_OK(weft_cancel_token_reset(r.t));
                ASSERT_FALSE(weft_cancel_token_is_cancelled(r.t));
            } else {
                ASSERT_OK(st);
                ASSERT_EQ(atomic_load(&r.ran), N);
                ASSERT_EQ(info.skipped, 0);
            }
            ASSERT_EQ(weft_cancel_token_cancel_count(r.t), (uint64_t)(round / 2 + 1));
            weft_future_destroy(f);
        }
        weft_cancel_token_destroy(r.t);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* A deadline armed, then the token reset and reused for another run: the old
 * deadline never fires into the new use; a DeadlineGuard scope that ends in
 * time leaves the token alone, one that overruns cancels it. */
static int poll_until_cancelled(weft_ctx *ctx, void *arg) {
    uint64_t until = now_ns() + 3 * SEC;
    while (weft_ctx_check_and_yield(ctx) == WEFT_OK)
        if (now_ns() > until) return 1;
    return 0;
}

TEST(a_reset_token_forgets_its_deadline_and_a_guard_cancels_only_when_overrun) {
    weft_executor *ex = make_executor(1);
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    ASSERT_NOT_NULL(t);
    ASSERT_OK(weft_cancel_after(t, 20 * MS));
    ASSERT_OK(weft_cancel_token_reset(t));
    weft_deadline d;
    ASSERT_OK(weft_deadline_begin(&d, t, 2 * SEC));
    sleep_us(40000); /* past the old deadline */
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    ASSERT_OK(weft_deadline_end(&d));
    ASSERT_FALSE(weft_cancel_token_is_cancelled(t));
    ASSERT_EQ(weft_cancel_token_cancel_count(t), 0);
    /* A task that polls with check_and_yield stops at the guard's budget. */
    weft_future *f;
    ASSERT_OK(weft_async(ex, poll_until_cancelled, NULL, &f));
    ASSERT_OK(weft_cancel_attach(t, f));
    uint64_t t0 = now_ns();
    ASSERT_OK(weft_deadline_begin(&d, t, 10 * MS));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_GE(now_ns() - t0, 10 * MS);
    ASSERT_STATUS(weft_deadline_end(&d), WEFT_ETIMEDOUT);
    ASSERT_STREQ(weft_cancel_token_reason(t), "deadline exceeded");
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 0); /* it stopped by its check, not by its 3 s limit */
    weft_future_destroy(f);
    weft_cancel_token_destroy(t);
    weft_executor_destroy(ex);
}

/* ---- environment variables the earlier hunts left out ---------------------- */

static struct {
    atomic_int warnings;
    char text[4096];
    pthread_mutex_t m;
} env_log = { .m = PTHREAD_MUTEX_INITIALIZER };

static void env_capture(void *user, weft_log_level level, const char *msg) {
    if (level != WEFT_LOG_WARN) return;
    pthread_mutex_lock(&env_log.m);
    size_t len = strlen(env_log.text);
    snprintf(env_log.text + len, sizeof env_log.text - len, "%s\n", msg);
    pthread_mutex_unlock(&env_log.m);
    atomic_fetch_add(&env_log.warnings, 1);
}

static int count_in(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++) n++;
    return n;
}

TEST(bad_steal_batch_metrics_profile_exact_and_placement_values_warn_once_each_and_fall_back) {
    weft_log_set_callback(env_capture, NULL);
    weft_log_set_level(WEFT_LOG_WARN);
    const char *vars[][3] = {
        { "WEFT_STEAL_BATCH", "257", "abc" },
        { "WEFT_METRICS", "maybe", "2" },
        { "WEFT_PROFILE_EXACT", "sometimes", "" },
        { "WEFT_PLACEMENT", "everywhere", "numa" },
    };
    size_t nvars = sizeof vars / sizeof vars[0];
    for (int pass = 1; pass <= 2; pass++) {
        for (size_t v = 0; v < nvars; v++) ASSERT_EQ(setenv(vars[v][0], vars[v][pass], 1), 0);
        for (int k = 0; k < 2; k++) {
            weft_status err = WEFT_EINVAL;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, &err);
            if (!ex) TEST_FAIL_("bad environment (pass %d) made create fail: %s", pass, weft_errname(err));
            ASSERT_OK(err);
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
            ASSERT_FALSE(m.enabled); /* WEFT_METRICS's default: off */
            atomic_int ran = 0;
            for (int i = 0; i < 100; i++) ASSERT_OK(weft_silent_async(ex, count_task, &ran));
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_EQ(atomic_load(&ran), 100);
            weft_executor_destroy(ex);
        }
    }
    for (size_t v = 0; v < nvars; v++) {
        char name[64];
        snprintf(name, sizeof name, "%s=\"%s\"", vars[v][0], vars[v][1]);
        if (count_in(env_log.text, name) != 1)
            TEST_FAIL_("want one warning naming %s, got:\n%s", name, env_log.text);
        if (count_in(env_log.text, vars[v][0]) != 1)
            TEST_FAIL_("%s warned about more than once:\n%s", vars[v][0], env_log.text);
        unsetenv(vars[v][0]);
    }
    weft_log_set_callback(NULL, NULL);
}

/* ---- the topology layer's queries agree with each other (seed 001) --------- */

static bool has_cpu(const int *cpus, unsigned n, int cpu) {
    for (unsigned i = 0; i < n; i++)
        if (cpus[i] == cpu) return true;
    return false;
}

TEST(every_listed_cpu_is_found_by_each_query_and_in_its_core_package_node_and_caches) {
    weft_topology *topo;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){ .source = WEFT_TOPOLOGY_SYSFS }, &topo));
    unsigned n = weft_topology_cpu_count(topo);
    ASSERT_GE(n, 1);
    ASSERT_LE(weft_topology_usable_cpus(topo), n);
    ASSERT_GE(weft_topology_usable_cpus(topo), 1);
    unsigned in_packages = 0, in_cores = 0, in_nodes = 0;
    for (unsigned p = 0; p < weft_topology_package_count(topo); p++) {
        weft_package_info pi;
        ASSERT_OK(weft_topology_package(topo, p, &pi));
        in_packages += pi.ncpus;
    }
    for (unsigned c = 0; c < weft_topology_core_count(topo); c++) {
        weft_core_info ci;
        ASSERT_OK(weft_topology_core(topo, c, &ci));
        ASSERT_GE(ci.ncpus, 1);
        in_cores += ci.ncpus;
    }
    for (unsigned d = 0; d < weft_topology_numa_node_count(topo); d++) {
        weft_numa_node_info ni;
        ASSERT_OK(weft_topology_numa_node(topo, d, &ni));
        in_nodes += ni.ncpus;
    }
    ASSERT_EQ(in_packages, n);
    ASSERT_EQ(in_cores, n);
    ASSERT_EQ(in_nodes, n);
    int prev = -1;
    for (unsigned i = 0; i < n; i++) {
        weft_cpu_info cpu;
        ASSERT_OK(weft_topology_cpu(topo, i, &cpu));
        ASSERT_GT(cpu.os_index, prev); /* increasing OS number */
        prev = cpu.os_index;
        ASSERT_EQ(weft_topology_cpu_index(topo, cpu.os_index), (int)i);
        ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, cpu.os_index), (int)cpu.numa_node);
        weft_core_info core;
        ASSERT_OK(weft_topology_core(topo, cpu.core, &core));
        ASSERT_EQ(core.package, cpu.package);
        ASSERT_TRUE(has_cpu(core.cpus, core.ncpus, cpu.os_index));
        ASSERT_EQ(core.cpus[cpu.smt], cpu.os_index); /* its rank among its core's threads */
        weft_package_info pkg;
        ASSERT_OK(weft_topology_package(topo, cpu.package, &pkg));
        ASSERT_TRUE(has_cpu(pkg.cpus, pkg.ncpus, cpu.os_index));
        weft_numa_node_info node;
        ASSERT_OK(weft_topology_numa_node(topo, cpu.numa_node, &node));
        ASSERT_TRUE(has_cpu(node.cpus, node.ncpus, cpu.os_index));
        for (int level = 0; level < 3; level++) {
            if (cpu.cache[level] < 0) continue;
            weft_cache_info c;
            ASSERT_OK(weft_topology_cache(topo, (unsigned)cpu.cache[level], &c));
            ASSERT_EQ(c.level, (unsigned)level + 1);
            ASSERT_TRUE(c.type != WEFT_CACHE_INSTRUCTION);
            ASSERT_TRUE(has_cpu(c.cpus, c.ncpus, cpu.os_index));
        }
    }
    /* What is not listed is refused, never a crash. */
    weft_cpu_info none;
    ASSERT_STATUS(weft_topology_cpu(topo, n, &none), WEFT_EINVAL);
    ASSERT_EQ(weft_topology_cpu_index(topo, 1 << 20), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, -1), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(topo, 1 << 20), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(NULL, 0), -1);
    ASSERT_EQ(weft_topology_cpu_count(NULL), 0);
    ASSERT_STREQ(weft_topology_backend(NULL), "");
    weft_topology_destroy(topo);
}

TEST(placements_with_three_times_more_workers_than_cpus_wrap_round_and_match_worker_cpu) {
    weft_topology *topo;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){ .source = WEFT_TOPOLOGY_SYSFS }, &topo));
    unsigned n = weft_topology_cpu_count(topo), workers = 3 * n + 1;
    int *cpus = calloc(workers, sizeof *cpus);
    ASSERT_NOT_NULL(cpus);
    for (int s = WEFT_PLACE_NONE; s <= WEFT_PLACE_L3_DOMAIN; s++) {
        weft_placement_config pc = { .strategy = (weft_placement)s };
        ASSERT_OK(weft_topology_place(topo, &pc, workers, cpus));
        for (unsigned w = 0; w < workers; w++) {
            int one;
            ASSERT_OK(weft_topology_worker_cpu(topo, &pc, w, workers, &one));
            ASSERT_EQ(one, cpus[w]);
            if (s == WEFT_PLACE_NONE) {
                ASSERT_EQ(cpus[w], -1);
            } else {
                ASSERT_GE(weft_topology_cpu_index(topo, cpus[w]), 0);
                if (w >= n) ASSERT_EQ(cpus[w], cpus[w - n]); /* position w modulo the count */
            }
        }
        int one;
        ASSERT_STATUS(weft_topology_worker_cpu(topo, &pc, workers, workers, &one), WEFT_EINVAL);
    }
    free(cpus);
    weft_topology_destroy(topo);
}

/* ---- observer and metrics see every graph task of every run variant under
 *      every policy (seed 001: Metrics, Profiler; executor notes) ----------- */

static atomic_long calls, begins, ends, bad_events;

static void obs_begin(void *user, const weft_task_event *ev) {
    atomic_fetch_add(&begins, 1);
    if (!ev->name || ev->run_id == 0 || ev->outcome != WEFT_TASK_RUNNING) atomic_fetch_add(&bad_events, 1);
}

static void obs_end(void *user, const weft_task_event *ev) {
    atomic_fetch_add(&ends, 1);
    if (!ev->name || ev->run_id == 0 || ev->outcome == WEFT_TASK_RUNNING) atomic_fetch_add(&bad_events, 1);
}

static int counted(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&calls, 1);
    return 0;
}

static int counted_cond(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&calls, 1);
    return 1; /* the second successor */
}

static int counted_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    atomic_fetch_add(&calls, 1);
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, counted, NULL), b = weft_emplace(g, counted, NULL),
              c = weft_emplace(g, counted, NULL);
    if (weft_task_is_null(a) || weft_task_is_null(b) || weft_task_is_null(c)) return 1;
    return weft_precede(a, b) || weft_precede(a, c);
}

static atomic_int until_left;
static bool until_pred(void *arg) { return atomic_fetch_sub(&until_left, 1) <= 0; }

TEST(observer_and_metrics_see_every_task_of_every_run_variant_under_every_policy) {
    watchdog_start(120);
    weft_taskflow *body = make_taskflow("body");
    for (int i = 0; i < 4; i++) must_emplace(body, counted, NULL);
    weft_taskflow *tf = make_taskflow("all kinds"), *tf2 = make_taskflow("wide");
    weft_task head = must_emplace(tf, counted, NULL);
    weft_task cond = weft_emplace_condition(tf, counted_cond, NULL);
    weft_task skipped = must_emplace(tf, counted, NULL), taken = must_emplace(tf, counted, NULL);
    weft_task sub = weft_emplace_subflow(tf, counted_subflow, NULL);
    weft_task mod = weft_emplace_module(tf, body);
    ASSERT_FALSE(weft_task_is_null(cond) || weft_task_is_null(sub) || weft_task_is_null(mod));
    ASSERT_OK(weft_precede(head, cond));
    ASSERT_OK(weft_precede(cond, skipped));
    ASSERT_OK(weft_precede(cond, taken));
    ASSERT_OK(weft_precede(taken, sub));
    ASSERT_OK(weft_precede(taken, mod));
    for (int i = 0; i < 50; i++) must_emplace(tf2, counted, NULL);
    /* head, cond, taken, sub's call and its 3 children, the module's 4 */
    const long per_tf = 1 + 1 + 1 + 4 + 4, per_tf2 = 50;
    weft_observer obs = { .task_begin = obs_begin, .task_end = obs_end };
    for (int kind = 0; kind < KINDS; kind++) {
        for (unsigned workers = 1; workers <= 3; workers += 2) {
            atomic_store(&calls, 0);
            atomic_store(&begins, 0);
            atomic_store(&ends, 0);
            static const weft_sched_kind kinds[KINDS] = { WEFT_SCHED_WORK_STEALING, WEFT_SCHED_FIFO,
                                                          WEFT_SCHED_PRIORITY, WEFT_SCHED_ROUND_ROBIN,
                                                          WEFT_SCHED_RANDOM, WEFT_SCHED_CUSTOM };
            weft_sched_policy pol = { .state = &the_ring, .push = ring_push, .pop = ring_pop };
            weft_sched_config sc = { .kind = kinds[kind], .policy = kind == 5 ? &pol : NULL };
            weft_status err;
            weft_executor *ex = weft_executor_create(
                &(weft_executor_config){ .workers = workers, .sched = &sc, .observer = &obs }, &err);
            ASSERT_NOT_NULL(ex);
            long want = 0;
            weft_future *f;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            want += per_tf;
            ASSERT_OK(weft_run_n(ex, tf, 3, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            want += 3 * per_tf;
            atomic_store(&until_left, 2);
            ASSERT_OK(weft_run_until(ex, tf, until_pred, NULL, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            want += (long)info.iterations * per_tf;
            weft_taskflow *set[2] = { tf, tf2 };
            ASSERT_OK(weft_run_many(ex, set, 2, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            want += per_tf + per_tf2;
            ASSERT_OK(weft_run_n_parallel(ex, tf2, 3, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            want += 3 * per_tf2;
            ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            want += per_tf;
            ASSERT_OK(weft_run_and_wait(ex, tf2));
            want += per_tf2;
            ASSERT_OK(weft_executor_wait_all(ex));
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
            if (atomic_load(&calls) != want || atomic_load(&begins) != want || atomic_load(&ends) != want ||
                (long)m.total.tasks != want || atomic_load(&bad_events))
                TEST_FAIL_("%s, %u workers: %ld task calls, observer %ld begins %ld ends (%ld bad), metrics %llu "
                           "tasks; want %ld",
                           kind_name[kind], workers, atomic_load(&calls), atomic_load(&begins), atomic_load(&ends),
                           atomic_load(&bad_events), (unsigned long long)m.total.tasks, want);
            weft_executor_destroy(ex);
        }
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(tf2));
    ASSERT_OK(weft_taskflow_destroy(body));
    watchdog_stop();
}

/* ---- idle workers take work from busy ones (seed 000: "idle workers steal
 *      from busy ones"), also a worker that becomes idle after the work was
 *      queued ------------------------------------------------------------- */

typedef struct late_thief {
    atomic_int queued, child_ran;
} late_thief;

/* Keeps one worker busy until the other has queued its child. */
static int busy_until_queued(weft_ctx *ctx, void *arg) {
    late_thief *l = arg;
    (void)wait_flag(&l->queued, 1, 3.0);
    sleep_us(1000);
    return 0;
}

static int late_child(weft_ctx *ctx, void *arg) {
    atomic_store(&((late_thief *)arg)->child_ran, 1);
    return 0;
}

/* Queues a child, then works (without spawning or waiting) until the child
 * has run elsewhere, at most 2 s; then waits for it. */
static int parent_works(weft_ctx *ctx, void *arg) {
    late_thief *l = arg;
    weft_future *f;
    if (weft_async(weft_ctx_executor(ctx), late_child, l, &f) != WEFT_OK) return 2;
    atomic_store(&l->queued, 1);
    uint64_t until = now_ns() + 2 * SEC;
    while (!atomic_load(&l->child_ran) && now_ns() < until) {
    }
    int ran_meanwhile = atomic_load(&l->child_ran);
    (void)weft_future_wait(f);
    weft_future_destroy(f);
    return ran_meanwhile ? 0 : 1;
}

TEST(an_async_child_queued_before_a_worker_frees_up_is_taken_by_it_while_its_parent_works) {
    watchdog_start(60);
    for (int kind = 0; kind < KINDS; kind++) {
        weft_executor *ex = make_kind(kind, 2, false);
        for (int round = 0; round < 3; round++) {
            late_thief l = { 0 };
            ASSERT_OK(weft_silent_async(ex, busy_until_queued, &l));
            sleep_us(2000); /* it runs: the parent goes to the other worker */
            weft_future *f;
            ASSERT_OK(weft_async(ex, parent_works, &l, &f));
            weft_status st = weft_future_wait(f);
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            if (st != WEFT_OK)
                TEST_FAIL_("%s, round %d: the child waited for its parent (%s, code %d)", kind_name[kind], round,
                           weft_errname(st), info.task_code);
            weft_future_destroy(f);
            ASSERT_OK(weft_executor_wait_all(ex));
        }
        weft_executor_destroy(ex);
    }
    watchdog_stop();
}
