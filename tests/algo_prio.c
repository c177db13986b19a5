/* Priorities of parallel algorithm calls (weft_algo_set_priority): where the
 * call's jobs go in the order of queued work, what its chunks and the tasks
 * around it see, and that the rest of the contract (errors, empty inputs,
 * cancellation) holds at every level. */
#include "sched_util.h"

#include <pthread.h>

/* Two workers, each held by a gate of its own, so that a test can free one. */
typedef struct two_gates {
    gate a, b;
} two_gates;

static weft_executor *held_executor(two_gates *g) {
    weft_executor *ex =
        make_sched_executor(2, &(weft_sched_config){.no_escalation = true}); /* levels stay put */
    atomic_init(&g->a.entered, 0);
    atomic_init(&g->a.open, 0);
    atomic_init(&g->b.entered, 0);
    atomic_init(&g->b.open, 0);
    ASSERT_OK(weft_silent_async(ex, gate_task, &g->a));
    ASSERT_OK(weft_silent_async(ex, gate_task, &g->b));
    ASSERT_TRUE(wait_flag(&g->a.entered, 1, 10));
    ASSERT_TRUE(wait_flag(&g->b.entered, 1, 10));
    return ex;
}

/* A two-chunk loop called from this thread: chunk 0 runs here, frees worker
 * a and waits (up to 10 s) for chunk 1 to start on it; chunk 1 logs id 1. */
typedef struct probe {
    two_gates *g;
    order_log *log;
    atomic_int started;
} probe;

static void probe_body(size_t lo, size_t hi, void *arg) {
    probe *p = arg;
    if (lo == 0) {
        gate_open(&p->g->a);
        (void)wait_flag(&p->started, 1, 10);
        return;
    }
    logged l = {p->log, 1};
    (void)log_task(NULL, &l);
    atomic_store_explicit(&p->started, 1, memory_order_release);
}

/* Queues `count` async tasks at `prio` (logging ids 10, 11, ...), then runs the
 * probe loop with this thread's priority set to `loop_prio`. */
static void queue_then_loop(weft_priority prio, int count, weft_priority loop_prio, order_log *log) {
    two_gates g;
    weft_executor *ex = held_executor(&g);
    static logged args[8];
    for (int i = 0; i < count; i++) {
        args[i] = (logged){log, 10 + i};
        ASSERT_OK(weft_async_with(ex, log_task, &args[i], &(weft_async_options){.priority = prio}, NULL));
    }
    probe p = {&g, log, 0};
    weft_priority old;
    ASSERT_OK(weft_algo_set_priority(loop_prio, &old));
    ASSERT_EQ(old, WEFT_PRIORITY_NORMAL);
    weft_algo_config cfg = {.partitioner = WEFT_PARTITION_STATIC, .chunk = 1, .max_tasks = 2};
    ASSERT_OK(weft_parallel_for_range(ex, 0, 2, 1, probe_body, &p, &cfg));
    ASSERT_OK(weft_algo_set_priority(old, NULL));
    gate_open(&g.b);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
}

TEST(critical_loop_chunks_run_before_queued_high_tasks) {
    static order_log log;
    queue_then_loop(WEFT_PRIORITY_HIGH, 4, WEFT_PRIORITY_CRITICAL, &log);
    assert_order(&log, (int[]){1, 10, 11, 12, 13}, 5);
}

TEST(low_loop_chunks_wait_behind_low_tasks_queued_before_them) {
    static order_log log;
    queue_then_loop(WEFT_PRIORITY_LOW, 3, WEFT_PRIORITY_LOW, &log);
    assert_order(&log, (int[]){10, 11, 12, 1}, 4);
}

/* NORMAL is the plain path: the chunk goes through the injector, and the
 * queued HIGH tasks, which workers take before it, run first. */
TEST(default_priority_loop_keeps_the_plain_path) {
    static order_log log;
    queue_then_loop(WEFT_PRIORITY_HIGH, 4, WEFT_PRIORITY_NORMAL, &log);
    assert_order(&log, (int[]){10, 11, 12, 13, 1}, 5);
}

/* ---- what chunks, nested calls and neighbours see ---- */

typedef struct seen {
    atomic_int wrong; /* chunks that saw another level than `want` */
    atomic_int chunks;
    weft_priority want;
    weft_executor *ex;
    bool nest;
    bool slow; /* 200 us per chunk: every worker takes some */
} seen;

static void see_level(size_t lo, size_t hi, void *arg) {
    seen *s = arg;
    if (weft_algo_priority() != s->want) atomic_fetch_add(&s->wrong, 1);
    atomic_fetch_add(&s->chunks, 1);
    if (s->slow) sleep_us(200);
    if (s->nest) { /* a nested call inherits the level: its chunks check too */
        seen inner = {.want = s->want, .ex = s->ex};
        if (weft_parallel_for_range(s->ex, 0, 64, 1, see_level, &inner,
                                    &(weft_algo_config){.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1}) != WEFT_OK ||
            atomic_load(&inner.wrong) != 0)
            atomic_fetch_add(&s->wrong, 1);
    }
}

TEST(chunks_of_a_prioritised_call_and_nested_calls_see_its_level) {
    weft_executor *ex = make_executor(2);
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_HIGH, NULL));
    seen s = {.want = WEFT_PRIORITY_HIGH, .ex = ex, .nest = true, .slow = true};
    ASSERT_OK(weft_parallel_for_range(ex, 0, 256, 1, see_level, &s,
                                      &(weft_algo_config){.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 4}));
    ASSERT_EQ(atomic_load(&s.chunks), 64);
    ASSERT_EQ(atomic_load(&s.wrong), 0);
    ASSERT_EQ(weft_algo_priority(), WEFT_PRIORITY_HIGH); /* the caller's setting stays */
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
    weft_executor_destroy(ex);
}

/* A worker waiting for its prioritised call runs an unrelated task U of its
 * deque meanwhile: U must see the default level, not the call's.  Chunk 1
 * runs on the other worker and holds the call open until U ran; chunk 0, on
 * the caller's worker, queues U there once chunk 1 has started (so the other
 * worker, busy, cannot take U). */
typedef struct neighbour {
    weft_executor *ex;
    atomic_int u_ran, u_level, chunk1_started;
} neighbour;

static int unrelated(weft_ctx *cx, void *arg) {
    neighbour *n = arg;
    atomic_store(&n->u_level, (int)weft_algo_priority());
    atomic_store_explicit(&n->u_ran, 1, memory_order_release);
    return 0;
}

static void neighbour_body(size_t lo, size_t hi, void *arg) {
    neighbour *n = arg;
    if (lo == 0) {
        (void)wait_flag(&n->chunk1_started, 1, 10);
        if (weft_silent_async(n->ex, unrelated, n) != WEFT_OK) atomic_store(&n->u_level, -99);
        return;
    }
    atomic_store_explicit(&n->chunk1_started, 1, memory_order_release);
    (void)wait_flag(&n->u_ran, 1, 10); /* keeps the call going until U ran */
}

static int prioritised_caller(weft_ctx *cx, void *arg) {
    neighbour *n = arg;
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_CRITICAL, NULL));
    ASSERT_OK(weft_parallel_for_range(n->ex, 0, 2, 1, neighbour_body, n,
                                      &(weft_algo_config){.partitioner = WEFT_PARTITION_STATIC, .chunk = 1}));
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
    return 0;
}

TEST(tasks_run_while_waiting_for_a_prioritised_call_see_the_default) {
    weft_executor *ex = make_executor(2);
    neighbour n = {.ex = ex};
    atomic_init(&n.u_level, 99);
    ASSERT_OK(weft_silent_async(ex, prioritised_caller, &n));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&n.u_ran), 1);
    ASSERT_EQ(atomic_load(&n.u_level), WEFT_PRIORITY_NORMAL);
    weft_executor_destroy(ex);
}

/* An emplaced algorithm task queues its chunks at its graph task's priority. */
TEST(emplaced_algorithm_task_takes_its_graph_tasks_priority) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("prio_for");
    seen s = {.want = WEFT_PRIORITY_CRITICAL, .ex = ex, .slow = true};
    weft_for_desc d = {.first = 0, .last = 128, .step = 1, .body = see_level, .arg = &s,
                       .config = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 8}};
    weft_task t = weft_emplace_for(tf, &d);
    ASSERT_NOT_NULL(t.node_);
    ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_CRITICAL));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&s.chunks), 16);
    ASSERT_EQ(atomic_load(&s.wrong), 0);
    ASSERT_EQ(weft_algo_priority(), WEFT_PRIORITY_NORMAL);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* With no priority of its own, under weft_run_with_priority: the run's, as
 * graph.h says ("as if it had been given it").  Its chunks were queued at
 * NORMAL before. */
TEST(emplaced_algorithm_task_without_a_priority_takes_its_runs) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("prio_for_run");
    seen s = {.want = WEFT_PRIORITY_HIGH, .ex = ex, .slow = true};
    weft_for_desc d = {.first = 0, .last = 128, .step = 1, .body = see_level, .arg = &s,
                       .config = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 8}};
    ASSERT_NOT_NULL(weft_emplace_for(tf, &d).node_);
    weft_future *f = NULL;
    ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&s.chunks), 16);
    ASSERT_EQ(atomic_load(&s.wrong), 0);
    /* A plain run of the same graph: NORMAL again. */
    atomic_store(&s.chunks, 0);
    s.want = WEFT_PRIORITY_NORMAL;
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&s.chunks), 16);
    ASSERT_EQ(atomic_load(&s.wrong), 0);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* ---- errors, empty inputs, cancellation ---- */

TEST(algo_priority_outside_the_levels_is_einval_and_changes_nothing) {
    weft_priority old = WEFT_PRIORITY_HIGH;
    ASSERT_STATUS(weft_algo_set_priority((weft_priority)3, &old), WEFT_EINVAL);
    ASSERT_STATUS(weft_algo_set_priority((weft_priority)-2, NULL), WEFT_EINVAL);
    ASSERT_EQ(old, WEFT_PRIORITY_HIGH); /* not written either */
    ASSERT_EQ(weft_algo_priority(), WEFT_PRIORITY_NORMAL);
    for (int p = WEFT_PRIORITY_LOW; p <= WEFT_PRIORITY_CRITICAL; p++) {
        ASSERT_OK(weft_algo_set_priority((weft_priority)p, NULL));
        ASSERT_EQ(weft_algo_priority(), p);
    }
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
}

static void add_one(void *elem, void *arg) { ++*(int *)elem; }
static void add_int(void *acc, const void *x, void *arg) { *(int *)acc += *(const int *)x; }
static int cmp_int(const void *a, const void *b, void *arg) {
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

TEST(null_and_empty_inputs_give_the_same_answers_at_every_level) {
    weft_executor *ex = make_executor(2);
    for (int p = WEFT_PRIORITY_LOW; p <= WEFT_PRIORITY_CRITICAL; p++) {
        ASSERT_OK(weft_algo_set_priority((weft_priority)p, NULL));
        int sum = 7;
        size_t idx = 99;
        ASSERT_STATUS(weft_parallel_for_each(ex, NULL, 3, sizeof(int), add_one, NULL, NULL), WEFT_EINVAL);
        ASSERT_STATUS(weft_parallel_for_each(ex, NULL, 0, sizeof(int), NULL, NULL, NULL), WEFT_EINVAL);
        ASSERT_OK(weft_parallel_for_each(ex, NULL, 0, sizeof(int), add_one, NULL, NULL));
        ASSERT_OK(weft_parallel_reduce(ex, NULL, 0, sizeof(int), &sum, add_int, NULL, NULL));
        ASSERT_EQ(sum, 7);
        ASSERT_OK(weft_parallel_min_element(ex, NULL, 0, sizeof(int), cmp_int, NULL, &idx, NULL));
        ASSERT_EQ(idx, 0);
        ASSERT_OK(weft_parallel_sort(ex, NULL, 0, sizeof(int), cmp_int, NULL, NULL));
        static int v[10000];
        for (int i = 0; i < 10000; i++) v[i] = 10000 - i;
        ASSERT_OK(weft_parallel_sort(ex, v, 10000, sizeof(int), cmp_int, NULL, NULL));
        for (int i = 0; i < 10000; i++) ASSERT_EQ(v[i], i + 1);
        sum = 0;
        ASSERT_OK(weft_parallel_reduce(ex, v, 10000, sizeof(int), &sum, add_int, NULL, NULL));
        ASSERT_EQ(sum, 10000 * 10001 / 2);
    }
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
    weft_executor_destroy(ex);
}

typedef struct cancel_ctx {
    weft_cancel_token *t;
    atomic_int done;
} cancel_ctx;

static void cancel_at_100(size_t i, void *arg) {
    cancel_ctx *c = arg;
    if (atomic_fetch_add(&c->done, 1) == 100) (void)weft_cancel_token_cancel(c->t);
}

TEST(cancellation_stops_a_prioritised_loop) {
    weft_executor *ex = make_executor(2);
    for (int p = WEFT_PRIORITY_LOW; p <= WEFT_PRIORITY_CRITICAL; p += 3) { /* LOW and CRITICAL */
        ASSERT_OK(weft_algo_set_priority((weft_priority)p, NULL));
        cancel_ctx c = {weft_cancel_token_create(NULL, NULL), 0};
        ASSERT_NOT_NULL(c.t);
        weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 16, .cancel = c.t};
        ASSERT_STATUS(weft_parallel_for(ex, 0, 1000000, 1, cancel_at_100, &c, &cfg), WEFT_ECANCELED);
        ASSERT_LT(atomic_load(&c.done), 1000000);
        weft_cancel_token_destroy(c.t);
    }
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
    ASSERT_STATUS(weft_executor_wait_all(ex), WEFT_OK);
    weft_executor_destroy(ex);
}
