/* Session 41: programs written from the seed documents (../shared/seeds/), as a
 * checker reading them would write them, against weft's public headers, where
 * seeds_hunt39.c did not go:
 *  - fairness between the executor's priority queue and the shared queues
 *    (seed 001's PriorityHandle / "FIFO ordering preserved within
 *    equal-priority tasks"; seed 003: Go's global queue "checked every few
 *    scheduling cycles"): default-priority work from other threads is not
 *    kept waiting for ever by NORMAL tasks that requeue themselves with a
 *    handle;
 *  - the deque's orders (seeds 000, 002, 004: owner LIFO, thieves FIFO; the
 *    injector FIFO) as a program on one worker sees them;
 *  - seed 002's Config with awkward values together (tiny deques, batch
 *    steals, bounded local queues): every task runs exactly once;
 *  - seed 004's progressive sleep at its shortest (one steal round, one
 *    yield round): no lost wake-up by any path, and a fork-join child taken
 *    at once by a worker that sleeps (forkjoin.h: "a worker already idle or
 *    asleep at the spawn has asked, and takes the child at once").
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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- NORMAL tasks queued with a handle do not starve other NORMAL work ----- */

/* A task that queues itself again with a handle (so through the priority
 * queue: async.h, weft_async_options) until told to stop, as a program that
 * keeps handles to cancel its periodic work does; `busy` also keeps its
 * worker's deque from running empty. */
static atomic_int spin_stop, spin_busy, outside_ran, nops_queued;
static weft_priority spin_prio;

static int nop_task(weft_ctx *ctx, void *arg) {
    atomic_fetch_sub(&nops_queued, 1);
    return 0;
}

static int requeue_task(weft_ctx *ctx, void *arg) {
    if (atomic_load(&spin_stop)) return 0;
    weft_executor *ex = weft_ctx_executor(ctx);
    weft_sched_handle h;
    weft_async_options o = { .priority = spin_prio, .handle = &h };
    if (weft_async_with(ex, requeue_task, NULL, &o, NULL) != WEFT_OK) abort();
    /* Other work, topped up to 64 jobs (more than a worker runs between two
     * of its looks at the shared queues, so its deque never runs empty; a
     * bounded amount, so a policy's queue does not grow without end). */
    if (atomic_load(&spin_busy))
        while (atomic_fetch_add(&nops_queued, 1) < 64)
            if (weft_silent_async(ex, nop_task, NULL) != WEFT_OK) abort();
    if (atomic_load(&spin_busy)) atomic_fetch_sub(&nops_queued, 1);
    return 0;
}

static int outside_task(weft_ctx *ctx, void *arg) {
    atomic_store(&outside_ran, 1);
    return 0;
}

/* Every ready-queue policy (sched.h); a user's is a locked ring. */
typedef struct ring {
    pthread_mutex_t m;
    weft_sched_item *items[1 << 16];
    size_t head, tail;
} ring;
static ring the_ring = { .m = PTHREAD_MUTEX_INITIALIZER };
enum { RING_CAP = sizeof the_ring.items / sizeof the_ring.items[0] };

static int ring_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    ring *r = st;
    pthread_mutex_lock(&r->m);
    int full = r->tail - r->head == RING_CAP;
    if (!full) r->items[r->tail++ % RING_CAP] = it;
    pthread_mutex_unlock(&r->m);
    return full;
}

static weft_sched_item *ring_pop(void *st, int worker) {
    ring *r = st;
    pthread_mutex_lock(&r->m);
    weft_sched_item *it = r->head != r->tail ? r->items[r->head++ % RING_CAP] : NULL;
    pthread_mutex_unlock(&r->m);
    return it;
}

enum { KINDS = 6 };
static const weft_sched_kind kinds[KINDS] = { WEFT_SCHED_WORK_STEALING, WEFT_SCHED_FIFO, WEFT_SCHED_PRIORITY,
                                              WEFT_SCHED_ROUND_ROBIN, WEFT_SCHED_RANDOM, WEFT_SCHED_CUSTOM };
static const char *const kind_name[KINDS] = { "work stealing", "FIFO", "PRIORITY", "ROUND_ROBIN", "RANDOM",
                                              "CUSTOM" };

static weft_executor *make_kind(int kind, unsigned workers) {
    weft_sched_policy pol = { .state = &the_ring, .push = ring_push, .pop = ring_pop };
    weft_sched_config sc = { .kind = kinds[kind], .policy = kinds[kind] == WEFT_SCHED_CUSTOM ? &pol : NULL };
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers, .sched = &sc }, &st);
    if (!ex) TEST_FAIL_("%s executor with %u workers: %s", kind_name[kind], workers, weft_errname(st));
    return ex;
}

/* How the task from main is queued: the injector (weft_async), this thread's
 * submitter slot (weft_silent_async), a taskflow run (weft_run); and a
 * CRITICAL task, which must not lose its place to these turns. */
enum { VIA_ASYNC, VIA_SILENT, VIA_RUN, VIA_CRITICAL, VIAS };
static const char *const via_name[VIAS] = { "weft_async", "weft_silent_async", "weft_run",
                                            "weft_async_with CRITICAL" };

/* Requeueing tasks on every worker, then one task from main through `via`:
 * it must run (within 2 s; it takes milliseconds). */
static void outside_task_runs(int kind, unsigned workers, int busy, int via) {
    weft_status st;
    weft_executor *ex = make_kind(kind, workers);
    weft_taskflow *tf = weft_taskflow_create("outside", &st);
    ASSERT_OK(st);
    weft_emplace(tf, outside_task, NULL);
    atomic_store(&spin_stop, 0);
    atomic_store(&spin_busy, busy);
    atomic_store(&outside_ran, 0);
    atomic_store(&nops_queued, 0);
    for (unsigned i = 0; i < workers; i++) ASSERT_OK(weft_silent_async(ex, requeue_task, NULL));
    sleep_us(2000); /* the requeueing under way */
    weft_future *f = NULL;
    if (via == VIA_ASYNC) ASSERT_OK(weft_async(ex, outside_task, NULL, &f));
    if (via == VIA_SILENT) ASSERT_OK(weft_silent_async(ex, outside_task, NULL));
    if (via == VIA_RUN) ASSERT_OK(weft_run(ex, tf, &f));
    if (via == VIA_CRITICAL) {
        weft_async_options o = { .priority = WEFT_PRIORITY_CRITICAL };
        ASSERT_OK(weft_async_with(ex, outside_task, NULL, &o, &f));
    }
    bool ran = wait_flag(&outside_ran, 1, 2.0);
    atomic_store(&spin_stop, 1);
    ASSERT_OK(weft_executor_wait_all(ex));
    if (!ran)
        TEST_FAIL_("%s, %u worker(s), %s: a task from main through %s waited 2 s behind NORMAL tasks queued "
                   "with handles",
                   kind_name[kind], workers, busy ? "with other work" : "alone", via_name[via]);
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(normal_tasks_from_main_run_while_normal_tasks_requeue_themselves_with_handles) {
    spin_prio = WEFT_PRIORITY_NORMAL;
    for (int kind = 0; kind < KINDS; kind++)
        for (unsigned workers = 1; workers <= 2; workers++)
            for (int busy = 0; busy <= 1; busy++)
                for (int via = 0; via < VIA_CRITICAL; via++) outside_task_runs(kind, workers, busy, via);
}

/* The turns taken above must not cost the priorities their order: a
 * CRITICAL task from main still starts at once. */
TEST(a_critical_task_from_main_still_starts_while_normal_tasks_requeue_with_handles) {
    spin_prio = WEFT_PRIORITY_NORMAL;
    for (int kind = 0; kind < KINDS; kind++)
        for (int busy = 0; busy <= 1; busy++) outside_task_runs(kind, 1, busy, VIA_CRITICAL);
}

/* Seed 001's EscalationPolicy ("anti-starvation for Low / Normal tasks"):
 * while a HIGH task requeues itself for ever, a LOW task and a NORMAL one
 * with a handle from main rise to HIGH (20 ms each step) and run, in their
 * turn among the HIGH ones (sched.h: escalation of queued tasks). */
static atomic_int queued_flag;
static int queued_task(weft_ctx *ctx, void *arg) {
    atomic_store(&queued_flag, 1);
    return 0;
}

TEST(low_and_handled_normal_tasks_escalate_past_a_high_task_that_requeues_itself) {
    spin_prio = WEFT_PRIORITY_HIGH;
    for (int which = 0; which < 2; which++)
        for (unsigned workers = 1; workers <= 2; workers++) {
            weft_status st;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers }, &st);
            ASSERT_OK(st);
            atomic_store(&spin_stop, 0);
            atomic_store(&spin_busy, 0);
            atomic_store(&queued_flag, 0);
            for (unsigned i = 0; i < workers; i++) ASSERT_OK(weft_silent_async(ex, requeue_task, NULL));
            sleep_us(2000);
            weft_sched_handle h;
            weft_async_options o = { .priority = which ? WEFT_PRIORITY_NORMAL : WEFT_PRIORITY_LOW,
                                     .handle = which ? &h : NULL };
            ASSERT_OK(weft_async_with(ex, queued_task, NULL, &o, NULL));
            bool queued_ran = wait_flag(&queued_flag, 1, 2.0);
            atomic_store(&spin_stop, 1);
            ASSERT_OK(weft_executor_wait_all(ex));
            if (!queued_ran)
                TEST_FAIL_("%u worker(s): a %s task from main did not escalate past the HIGH tasks in 2 s", workers,
                           which ? "NORMAL (with a handle)" : "LOW");
            weft_executor_destroy(ex);
        }
}

/* ---- the injector beside the submitters' queues (seed 002's Injector;
 *      seed 003: Go checks its global queue "every few scheduling cycles") -- */

/* Threads that keep the executor's shared queue (the injector: weft_async
 * from a thread that is not a worker) from running empty, each with at most
 * FLOOD_CAP tasks of its own waiting, so the backlog stays bounded. */
enum { FLOODERS = 3, FLOOD_CAP = 4096 };
static atomic_int flood_stop, flood_waiting;

static int flood_task(weft_ctx *ctx, void *arg) {
    for (volatile int i = 0; i < 2000; i++) {
    }
    atomic_fetch_sub(&flood_waiting, 1);
    return 0;
}

static void *flooder(void *arg) {
    weft_executor *ex = arg;
    while (!atomic_load(&flood_stop)) {
        if (atomic_load(&flood_waiting) >= FLOODERS * FLOOD_CAP) {
            sched_yield();
            continue;
        }
        atomic_fetch_add(&flood_waiting, 1);
        weft_future *f;
        if (weft_async(ex, flood_task, NULL, &f) != WEFT_OK) abort();
        weft_future_destroy(f);
    }
    return NULL;
}

/* A task that keeps its worker's deque from running empty until told to stop. */
static int self_requeue(weft_ctx *ctx, void *arg) {
    if (!atomic_load(&spin_stop) && weft_silent_async(weft_ctx_executor(ctx), self_requeue, NULL) != WEFT_OK)
        abort();
    return 0;
}

TEST(a_silent_task_from_main_runs_while_other_threads_keep_the_shared_queue_full) {
    for (int busy = 0; busy <= 1; busy++) {
        weft_status st;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
        ASSERT_OK(st);
        atomic_store(&flood_stop, 0);
        atomic_store(&flood_waiting, 0);
        atomic_store(&spin_stop, 0);
        atomic_store(&outside_ran, 0);
        if (busy) ASSERT_OK(weft_silent_async(ex, self_requeue, NULL));
        pthread_t th[FLOODERS];
        for (int i = 0; i < FLOODERS; i++) ASSERT_EQ(pthread_create(&th[i], NULL, flooder, ex), 0);
        sleep_us(20000); /* the shared queue filled */
        /* main's submitter slot: a queue of its own that the workers take from */
        ASSERT_OK(weft_silent_async(ex, outside_task, NULL));
        bool ran = wait_flag(&outside_ran, 1, 2.0);
        atomic_store(&flood_stop, 1);
        atomic_store(&spin_stop, 1);
        for (int i = 0; i < FLOODERS; i++) pthread_join(th[i], NULL);
        ASSERT_OK(weft_executor_wait_all(ex));
        if (!ran)
            TEST_FAIL_("%s: a weft_silent_async from main waited 2 s while other threads kept the shared queue full",
                       busy ? "its worker's deque never empty" : "its worker living off the shared queue");
        weft_executor_destroy(ex);
    }
}

/* ---- fork-join children and sleeping workers (seed 003's fib; seed 004's
 *      progressive sleep at its shortest) ------------------------------------ */

/* forkjoin.h: "a worker asleep at the spawn ... takes the child at once".
 * Every worker is made to park first (weft_worker_metrics.parks, counted
 * always), then a root spawns one child per other worker and meets them all
 * without a spawn or sync in between: only thieves that took the children at
 * once can meet it. */
static atomic_int fj_arrived, fj_timed_out;
static int fj_n;

static int fj_meet(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&fj_arrived, 1);
    uint64_t until = now_ns() + 3 * SEC;
    while (atomic_load(&fj_arrived) < fj_n) {
        if (now_ns() > until) {
            atomic_store(&fj_timed_out, 1);
            break;
        }
        sched_yield();
    }
    return 0;
}

static int fj_root(weft_ctx *ctx, void *arg) {
    for (int i = 1; i < fj_n; i++)
        if (weft_spawn(ctx, fj_meet, NULL) != WEFT_OK) return 1;
    fj_meet(ctx, NULL);
    int r = 0;
    for (int i = 1; i < fj_n; i++) r |= weft_sync(ctx);
    return r;
}

/* Waits until each of ex's workers has parked `times` times in all. */
static bool all_parked(weft_executor *ex, unsigned workers, uint64_t times) {
    weft_worker_metrics wm[8];
    uint64_t until = now_ns() + 5 * SEC;
    for (;;) {
        weft_metrics m;
        ASSERT_OK(weft_executor_metrics(ex, &m, wm, workers));
        unsigned parked = 0;
        for (unsigned i = 0; i < workers; i++) parked += wm[i].parks >= times;
        if (parked == workers) return true;
        if (now_ns() > until) return false;
        sleep_us(200);
    }
}

TEST(fork_join_children_are_taken_at_once_by_workers_asleep_at_the_spawn) {
    for (unsigned workers = 2; workers <= 4; workers++) {
        weft_status st;
        /* The shortest search before parking: one steal round, one yield round. */
        weft_executor *ex = weft_executor_create(
            &(weft_executor_config){ .workers = workers, .steal_rounds = 1, .yield_rounds = 1 }, &st);
        ASSERT_OK(st);
        fj_n = (int)workers;
        for (uint64_t rep = 1; rep <= 3; rep++) {
            if (!all_parked(ex, workers, rep)) SKIP("the workers did not all park within 5 s");
            atomic_store(&fj_arrived, 0);
            atomic_store(&fj_timed_out, 0);
            int result = -1;
            ASSERT_OK(weft_run_root_status(ex, fj_root, NULL, &result));
            if (atomic_load(&fj_timed_out))
                TEST_FAIL_("%u workers, run %" PRIu64 ": a child spawned while the others slept was not taken "
                           "at once",
                           workers, rep);
            ASSERT_EQ(atomic_load(&fj_arrived), (int)workers);
            ASSERT_OK(weft_executor_wait_all(ex));
        }
        weft_executor_destroy(ex);
    }
}
