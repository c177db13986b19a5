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

/* Runs tf on a new one-worker executor until its gate task holds the worker,
 * then takes a snapshot of what waits (at most cap entries, *n of them).
 * Returns the executor; *f is the run's future. */
static weft_executor *run_to_gate(weft_taskflow *tf, gate *g, weft_future **f, weft_sched_entry *snap, size_t cap,
                                  size_t *n) {
    weft_executor *ex = make_executor(1);
    ASSERT_OK(weft_run(ex, tf, f));
    ASSERT_TRUE(wait_flag(&g->entered, 1, 10));
    ASSERT_OK(weft_sched_snapshot(ex, snap, cap, n));
    return ex;
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
    weft_future *f = NULL;
    weft_sched_entry snap[8];
    size_t n = 0;
    weft_executor *ex = run_to_gate(tf, &g, &f, snap, 8, &n);
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

/* A task with a priority goes to the lanes when it becomes ready, not when a
 * worker pops it off a deque.  Root r readies p (plain: handed straight on)
 * and six tasks with priorities; p holds the one worker.  Before, the six
 * waited on the deque as plain jobs meanwhile (a snapshot showed none), each
 * to be queued by its wrapper only once popped: two trips and two calls of
 * the wrapper per task. */
TEST(successors_with_priorities_are_queued_as_they_become_ready) {
    static const int prio[] = {P_LOW, P_CRIT, P_HIGH, P_LOW, P_CRIT, P_HIGH};
    enum { N = 6 };
    static order_log log;
    static logged a[N];
    atomic_store(&log.n, 0);
    gate g;
    atomic_init(&g.entered, 0);
    atomic_init(&g.open, 0);
    weft_taskflow *tf = weft_taskflow_create("ready", NULL);
    weft_task r = weft_placeholder(tf), p = weft_emplace(tf, gate_task, &g);
    ASSERT_OK(weft_precede(r, p));
    for (int i = 0; i < N; i++) {
        a[i] = (logged){&log, i};
        weft_task t = weft_emplace(tf, log_task, &a[i]);
        ASSERT_OK(weft_task_set_priority(t, (weft_priority)prio[i]));
        ASSERT_OK(weft_precede(r, t));
    }
    weft_future *f = NULL;
    weft_sched_entry snap[8];
    size_t n = 0;
    weft_executor *ex = run_to_gate(tf, &g, &f, snap, 8, &n);
    ASSERT_EQ(n, N); /* all queued while p runs */
    static const int want_levels[] = {P_CRIT, P_CRIT, P_HIGH, P_HIGH, P_LOW, P_LOW};
    for (size_t i = 0; i < n; i++) ASSERT_EQ((int)snap[i].priority, want_levels[i]);
    gate_open(&g);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    assert_order(&log, (int[]){1, 4, 2, 5, 0, 3}, N); /* by level, FIFO among equals */
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

/* ---- stress: a random DAG (joins, wide fans) of random priorities, NORMAL
 * and plain tasks among them, on 4 workers, with and without a run's
 * priority: every task runs once per iteration, after all its predecessors ---- */

enum { DAG = 600 };

typedef struct dag_task {
    atomic_uint ran;
    atomic_uint *pred_ran[4]; /* predecessors' counters (NULL: none) */
    unsigned npred;
} dag_task;

static int dag_run(weft_ctx *cx, void *arg) {
    (void)cx;
    dag_task *d = arg;
    unsigned mine = atomic_load_explicit(&d->ran, memory_order_relaxed);
    for (unsigned i = 0; i < d->npred; i++) /* every predecessor ran this iteration */
        if (atomic_load_explicit(d->pred_ran[i], memory_order_relaxed) != mine + 1) return 1;
    atomic_fetch_add_explicit(&d->ran, 1, memory_order_relaxed);
    return 0;
}

TEST(four_workers_run_a_random_prioritised_dag_every_task_once_per_iteration) {
    static dag_task d[DAG];
    static weft_task t[DAG];
    weft_taskflow *tf = weft_taskflow_create("dag", NULL);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
#define NEXT_RNG() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng)
    for (int i = 0; i < DAG; i++) {
        memset(&d[i], 0, sizeof d[i]);
        atomic_init(&d[i].ran, 0);
        t[i] = weft_emplace(tf, dag_run, &d[i]);
        ASSERT_FALSE(weft_task_is_null(t[i]));
        unsigned p = (unsigned)(NEXT_RNG() % 5); /* 4: no priority of its own */
        if (p < 4) ASSERT_OK(weft_task_set_priority(t[i], (weft_priority)((int)p - 1)));
        /* Up to 4 predecessors among the earlier tasks; task 0's fan is wide
         * (over 32 successors: batches). */
        unsigned k = i == 0 ? 0 : (unsigned)(NEXT_RNG() % 5);
        for (unsigned j = 0; j < k; j++) {
            int from = i < 80 ? 0 : (int)(NEXT_RNG() % (uint64_t)i);
            bool dup = false;
            for (unsigned q = 0; q < d[i].npred; q++) dup |= d[i].pred_ran[q] == &d[from].ran;
            if (dup) continue;
            ASSERT_OK(weft_precede(t[from], t[i]));
            d[i].pred_ran[d[i].npred++] = &d[from].ran;
        }
    }
#undef NEXT_RNG
    weft_executor *ex = make_executor(4);
    unsigned runs = (unsigned)test_scale(10);
    if (runs == 0) runs = 1;
    for (unsigned it = 0; it < runs; it++) {
        weft_future *f = NULL;
        if (it % 2) ASSERT_OK(weft_run(ex, tf, &f));
        else ASSERT_OK(weft_run_with_priority(ex, tf, (weft_priority)((int)(it / 2 % 4) - 1), &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    for (int i = 0; i < DAG; i++)
        if (atomic_load(&d[i].ran) != runs) TEST_FAIL_("task %d ran %u times in %u runs", i, atomic_load(&d[i].ran), runs);
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
