/* Fairness: work queued from outside the workers starts while every worker
 * keeps its own deque full. */
#include "sched_util.h"

/* A chain: spins ~20 us, then queues itself again on its own worker's deque
 * (weft_silent_async from inside a task), until told to stop. */
typedef struct chains {
    weft_executor *ex;
    atomic_int stop;
    atomic_long links;
} chains;

static int chain_link(weft_ctx *cx, void *arg) {
    (void)cx;
    chains *c = arg;
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 20000) {
    }
    atomic_fetch_add_explicit(&c->links, 1, memory_order_relaxed);
    if (!atomic_load_explicit(&c->stop, memory_order_relaxed)) ASSERT_OK(weft_silent_async(c->ex, chain_link, c));
    return 0;
}

static int mark_started(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_store((atomic_int *)arg, 1);
    return 0;
}

/* Before, a worker looked at the shared queues only when its own deque ran
 * empty: with every worker feeding itself, a CRITICAL, HIGH, LOW or plain task
 * from main, and a graph run, never started (2 s and ~10^5 chain links, on 1
 * and 2 workers).  Now every 61 jobs a worker takes from its own deque it
 * looks at them first. */
TEST(tasks_from_main_start_while_every_worker_keeps_its_own_deque_full) {
    for (unsigned workers = 1; workers <= 2; workers++) {
        for (int kind = 0; kind < 5; kind++) {
            weft_executor *ex = make_executor(workers);
            chains c = {ex, 0, 0};
            for (unsigned i = 0; i < 2 * workers; i++) ASSERT_OK(weft_silent_async(ex, chain_link, &c));
            while (atomic_load(&c.links) < 200) { /* the chains are running on every worker */
            }
            atomic_int started = 0;
            weft_future *f = NULL;
            weft_taskflow *tf = NULL;
            static const weft_priority prio[] = {WEFT_PRIORITY_CRITICAL, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_LOW,
                                                 WEFT_PRIORITY_NORMAL};
            if (kind < 4) {
                ASSERT_OK(weft_async_with(ex, mark_started, &started, &(weft_async_options){.priority = prio[kind]},
                                          &f));
            } else {
                tf = make_taskflow("from-main");
                weft_emplace(tf, mark_started, &started);
                ASSERT_OK(weft_run(ex, tf, &f));
            }
            uint64_t t0 = now_ns();
            while (!atomic_load(&started) && now_ns() - t0 < 5 * SEC) {
            }
            uint64_t waited = now_ns() - t0;
            int ok = atomic_load(&started);
            atomic_store(&c.stop, 1);
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            ASSERT_OK(weft_executor_wait_all(ex));
            weft_executor_destroy(ex);
            if (tf) weft_taskflow_destroy(tf);
            if (!ok) TEST_FAIL_("%u workers, kind %d: the task from main had not started after 5 s", workers, kind);
            ASSERT_LT(waited, 1 * SEC);
        }
    }
}
