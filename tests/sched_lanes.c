/* Lanes (src/sched/lanes.c): the per-worker FIFOs per level that prioritised
 * graph tasks wait in.  A snapshot shows them without a handle (none can
 * remove them), escalation keeps their order, and under stealing, escalation
 * ticks and snapshots from other threads every task runs exactly once. */
#include "sched_util.h"

#include <pthread.h>

#include "weft/flow.h"

enum { P_LOW = WEFT_PRIORITY_LOW, P_NORM = WEFT_PRIORITY_NORMAL, P_HIGH = WEFT_PRIORITY_HIGH, P_CRIT = WEFT_PRIORITY_CRITICAL };

/* A graph whose sources are a CRITICAL gate task, which holds the one worker,
 * and `n` logged tasks of priorities prio[0..n): they wait in the worker's
 * lanes until the gate opens. */
static weft_taskflow *gated_graph(gate *g, order_log *log, logged *a, const int *prio, int n) {
    weft_taskflow *tf = weft_taskflow_create("gated", NULL);
    weft_task hold = weft_emplace(tf, gate_task, g);
    ASSERT_OK(weft_task_set_priority(hold, WEFT_PRIORITY_CRITICAL));
    for (int i = 0; i < n; i++) {
        a[i] = (logged){log, i};
        weft_task t = weft_emplace(tf, log_task, &a[i]);
        ASSERT_OK(weft_task_set_priority(t, (weft_priority)prio[i]));
    }
    atomic_init(&g->entered, 0);
    atomic_init(&g->open, 0);
    return tf;
}

/* Before lanes every prioritised graph task took a slot in the heap, and a
 * snapshot handed out its handle: weft_sched_remove on it said WEFT_OK and the
 * task ran all the same (a graph task cannot report itself cancelled). */
TEST(a_queued_graph_task_has_no_handle_that_claims_to_remove_it) {
    static const int prio[] = {P_LOW, P_HIGH, P_LOW, P_CRIT};
    enum { N = 4 };
    static order_log log;
    static logged a[N];
    gate g;
    weft_taskflow *tf = gated_graph(&g, &log, a, prio, N);
    weft_executor *ex = make_executor(1);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 10));
    weft_sched_entry snap[8];
    size_t n = 0;
    ASSERT_OK(weft_sched_snapshot(ex, snap, 8, &n));
    ASSERT_EQ(n, N);
    ASSERT_EQ(snap[0].priority, WEFT_PRIORITY_CRITICAL); /* the order they will run in */
    ASSERT_EQ(snap[1].priority, WEFT_PRIORITY_HIGH);
    ASSERT_EQ(snap[3].priority, WEFT_PRIORITY_LOW);
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.queued, N);
    for (size_t i = 0; i < n; i++) ASSERT_STATUS(weft_sched_remove(ex, snap[i].handle), WEFT_ENOENT);
    gate_open(&g);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    assert_order(&log, (int[]){3, 1, 0, 2}, N); /* every one ran, in priority order */
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* Escalation moves lane items up a level without losing their order: after
 * one tick the LOW tasks are NORMAL (behind the HIGH one); after a second they
 * are HIGH too, and all four run in the order they were queued.  (A graph
 * task set to NORMAL takes the plain path: only escalation queues NORMAL.) */
static void escalate_case(int ticks, const int *want) {
    static const int prio[] = {P_LOW, P_HIGH, P_LOW, P_LOW};
    enum { N = 4 };
    static order_log log;
    static logged a[N];
    atomic_store(&log.n, 0);
    gate g;
    weft_taskflow *tf = gated_graph(&g, &log, a, prio, N);
    weft_sched_config sc = {.no_escalation = true, .escalate_low_ns = 1, .escalate_normal_ns = 1};
    weft_executor *ex = make_sched_executor(1, &sc);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 10));
    size_t moved = 0, total = 0;
    for (int t = 0; t < ticks; t++) {
        sleep_us(50);
        ASSERT_OK(weft_sched_escalate(ex, &moved));
        total += moved;
    }
    ASSERT_EQ(total, ticks == 1 ? 3u : 6u); /* the 3 LOW ones, then again */
    gate_open(&g);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    assert_order(&log, want, N);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(one_escalation_raises_queued_graph_tasks_one_level_each) { escalate_case(1, (int[]){1, 0, 2, 3}); }
TEST(two_escalations_leave_queued_graph_tasks_in_their_queue_order) { escalate_case(2, (int[]){0, 1, 2, 3}); }

/* ---- stress: a binary tree of random priorities on 4 workers, re-run, while
 * escalation ticks every microsecond and another thread takes snapshots ---- */

enum { DEPTH = 12, NODES = (1 << DEPTH) - 1 };

typedef struct watcher {
    weft_executor *ex;
    atomic_int stop;
    size_t seen; /* the largest snapshot */
} watcher;

static void *watch_main(void *arg) {
    watcher *wt = arg;
    weft_sched_entry snap[64];
    while (!atomic_load_explicit(&wt->stop, memory_order_acquire)) {
        size_t n = 0, moved = 0;
        ASSERT_OK(weft_sched_snapshot(wt->ex, snap, 64, &n));
        for (size_t i = 1; i < n && i < 64; i++) /* in run order: levels never rise along it */
            ASSERT_TRUE(snap[i].priority <= snap[i - 1].priority);
        if (n > wt->seen) wt->seen = n;
        ASSERT_OK(weft_sched_escalate(wt->ex, &moved));
    }
    return NULL;
}

static int count_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add_explicit((atomic_uint *)arg, 1, memory_order_relaxed);
    return 0;
}

TEST(lanes_lose_no_task_and_run_none_twice_under_stealing_and_escalation) {
    static atomic_uint ran[NODES];
    for (int i = 0; i < NODES; i++) atomic_init(&ran[i], 0);
    weft_taskflow *tf = weft_taskflow_create("tree", NULL);
    static weft_task t[NODES];
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < NODES; i++) {
        t[i] = weft_emplace(tf, count_task, &ran[i]);
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        ASSERT_OK(weft_task_set_priority(t[i], (weft_priority)((int)(rng % 4) - 1)));
        if (i) ASSERT_OK(weft_precede(t[(i - 1) / 2], t[i]));
    }
    weft_sched_config sc = {.escalate_low_ns = 1000, .escalate_normal_ns = 1000, .tick_ns = 1000};
    weft_executor *ex = make_sched_executor(4, &sc);
    watcher wt = {.ex = ex};
    atomic_init(&wt.stop, 0);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, watch_main, &wt), 0);
    unsigned runs = (unsigned)test_scale(20);
    if (runs == 0) runs = 1;
    weft_future *f = NULL;
    ASSERT_OK(weft_run_n(ex, tf, runs, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    atomic_store_explicit(&wt.stop, 1, memory_order_release);
    pthread_join(th, NULL);
    for (int i = 0; i < NODES; i++)
        if (atomic_load(&ran[i]) != runs) TEST_FAIL_("task %d ran %u times in %u runs", i, atomic_load(&ran[i]), runs);
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.queued, 0);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- escalation passes never crowd out the work ---- */

static int tick_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

/* A pass over the heap is O(queued).  Before, a tick was due every tick_ns
 * whatever a pass cost, and a worker looks at the clock once per job it takes
 * from the queue: with a backlog whose pass outlasted a tick, every job cost a
 * whole pass (a quadratic drain; weft-bench's async_prio hung on a loaded
 * machine with the default 2 ms tick).  A 1 us tick makes that certain. */
TEST(a_large_backlog_drains_while_escalation_ticks_every_microsecond) {
    weft_sched_config sc = {.escalate_low_ns = 1, .escalate_normal_ns = 1, .tick_ns = 1000};
    weft_executor *ex = make_sched_executor(1, &sc);
    gate g;
    gate_close(ex, &g, 1);
    int n = (int)test_scale(200000);
    atomic_int ran;
    atomic_init(&ran, 0);
    for (int i = 0; i < n; i++)
        ASSERT_OK(weft_async_with(ex, tick_task, &ran, &(weft_async_options){.priority = WEFT_PRIORITY_LOW}, NULL));
    gate_open(&g);
    ASSERT_TRUE(wait_flag(&ran, n, 3)); /* ~0.1 s here; the quadratic drain took ~20 s */
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
}
