/* Scheduling contracts probed where the other scheduling tests do not go
 * (session 38's adversarial round). */
#include "sched_util.h"

/* A graph whose tasks count how many ran; task `at` hands its turn to the
 * thread that submits from outside and waits until it has. */
typedef struct fair_graph {
    atomic_int ran;        /* graph tasks run so far */
    int at;                /* the task (in run order) that lets main submit */
    atomic_int go, queued; /* main may submit / main has submitted */
    atomic_int when;       /* tasks run when the outside task started, -1 before */
} fair_graph;

static int fair_task(weft_ctx *cx, void *arg) {
    (void)cx;
    fair_graph *g = arg;
    int k = atomic_fetch_add(&g->ran, 1);
    if (k == g->at) {
        atomic_store(&g->go, 1);
        while (!atomic_load(&g->queued)) sleep_us(50);
    }
    return 0;
}

/* The loop's condition: back to the task until N have run, then out. */
static int fair_again(weft_ctx *cx, void *arg) {
    (void)cx;
    return atomic_load(&((fair_graph *)arg)->ran) < 3000 ? 0 : 1;
}

static int fair_mark(weft_ctx *cx, void *arg) {
    (void)cx;
    fair_graph *g = arg;
    atomic_store(&g->when, atomic_load(&g->ran));
    return 0;
}

/* sched.h: every 61 jobs a worker runs it looks at the priority queue and at
 * what other threads queued, "so that a worker whose deque never empties still
 * takes HIGH and CRITICAL work, and jobs queued from other threads, within a
 * bounded number of jobs".  A graph's chain runs each link as the next job of
 * the one before (no deque in between), so does a condition loop, and a wide
 * fan of sources runs as one range job: at one worker, a CRITICAL task from
 * main waited for the whole chain or loop (3000 tasks), and for half the fan
 * (1500). */
TEST(work_from_main_starts_within_a_bounded_number_of_jobs_of_a_long_chain_a_loop_or_a_wide_fan) {
    enum { N = 3000, AT = 100, BOUND = 300 };
    static const char *const shapes[] = { "chain", "fan", "loop" };
    for (int shape = 0; shape < 3; shape++) {
        for (int kind = 0; kind < 5; kind++) {
            weft_executor *ex = make_executor(1);
            fair_graph g = { .at = AT };
            atomic_init(&g.when, -1);
            weft_taskflow *tf = make_taskflow(shapes[shape]);
            weft_task prev = { 0 };
            for (int i = 0; i < (shape == 2 ? 0 : N); i++) {
                weft_task t = weft_emplace(tf, fair_task, &g);
                ASSERT_FALSE(weft_task_is_null(t));
                if (shape == 0 && i) ASSERT_OK(weft_precede(prev, t));
                prev = t;
            }
            if (shape == 2) { /* enter -> body <-> again -> out */
                weft_task enter = weft_placeholder(tf), body = weft_emplace(tf, fair_task, &g);
                weft_task again = weft_emplace_condition(tf, fair_again, &g), out = weft_placeholder(tf);
                ASSERT_OK(weft_precede(enter, body));
                ASSERT_OK(weft_precede(body, again));
                ASSERT_OK(weft_precede(again, body));
                ASSERT_OK(weft_precede(again, out));
            }
            weft_future *run = NULL, *f = NULL;
            ASSERT_OK(weft_run(ex, tf, &run));
            ASSERT_TRUE(wait_flag(&g.go, 1, 10));
            static const weft_priority prio[] = { WEFT_PRIORITY_CRITICAL, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_NORMAL };
            if (kind < 3)
                ASSERT_OK(weft_async_with(ex, fair_mark, &g, &(weft_async_options){ .priority = prio[kind] }, &f));
            else if (kind == 3)
                ASSERT_OK(weft_async(ex, fair_mark, &g, &f));
            else
                ASSERT_OK(weft_silent_async(ex, fair_mark, &g));
            atomic_store(&g.queued, 1);
            ASSERT_OK(weft_future_wait(run));
            if (f) ASSERT_OK(weft_future_wait(f));
            ASSERT_OK(weft_executor_wait_all(ex));
            int when = atomic_load(&g.when);
            if (when < 0 || when > AT + BOUND)
                TEST_FAIL_("%s, kind %d: the task from main started after %d of %d graph tasks, queued after %d",
                           shapes[shape], kind, when, N, AT + 1);
            weft_future_destroy(run);
            weft_future_destroy(f);
            weft_taskflow_destroy(tf);
            weft_executor_destroy(ex);
        }
    }
}

/* A task that spins ~200 us, then queues itself again on its own worker's
 * deque, until told to stop: a worker whose deque never runs empty. */
typedef struct feeder {
    weft_executor *ex;
    atomic_int stop;
    atomic_long links;
} feeder;

static int feed_link(weft_ctx *cx, void *arg) {
    (void)cx;
    feeder *c = arg;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 200000) {
    }
    atomic_fetch_add_explicit(&c->links, 1, memory_order_relaxed);
    if (!atomic_load_explicit(&c->stop, memory_order_relaxed)) ASSERT_OK(weft_silent_async(c->ex, feed_link, c));
    return 0;
}

static int set_flag(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_store((atomic_int *)arg, 1);
    return 0;
}

/* sched.h: a LOW task queued escalate_low_ns becomes NORMAL, then HIGH after
 * escalate_normal_ns, workers looking every tick_ns; the guide's guarantee is
 * HIGH by low + normal + 2 (tick + the time until some worker looks).  A
 * worker whose deque never empties looked at the clock only once per 64 of
 * its fairness looks (one per 61 jobs): every 3904 jobs, so with 200 us jobs
 * a LOW task from main (2 + 2 ms thresholds, 1 ms ticks) started after about
 * 800 ms, and after 4 s with 0.5 ms jobs: the time scaled with the jobs. */
TEST(a_low_task_escalates_by_the_clock_while_its_worker_keeps_its_deque_full) {
    weft_sched_config sc = { .escalate_low_ns = 2 * MS, .escalate_normal_ns = 2 * MS, .tick_ns = MS };
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .sched = &sc }, &err);
    ASSERT_NOT_NULL(ex);
    feeder c = { ex, 0, 0 };
    ASSERT_OK(weft_silent_async(ex, feed_link, &c));
    while (atomic_load(&c.links) < 20) sleep_us(100); /* the worker feeds itself */
    atomic_int started = 0;
    weft_future *f = NULL;
    ASSERT_OK(weft_async_with(ex, set_flag, &started, &(weft_async_options){ .priority = WEFT_PRIORITY_LOW }, &f));
    uint64_t t0 = now_ns();
    while (!atomic_load(&started) && now_ns() - t0 < 3 * SEC) sleep_us(200);
    uint64_t waited = now_ns() - t0;
    atomic_store(&c.stop, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
    /* ~4 ms of thresholds, ~2 ticks and a fairness look (~12 ms): 300 ms is
     * slack for a loaded machine, and under the ~800 ms it took before. */
    if (waited > 300 * MS) TEST_FAIL_("the LOW task started after %.0f ms", (double)waited / 1e6);
}
