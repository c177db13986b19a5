/* Helpers of the scheduling tests: a gate that holds every worker busy while a
 * test queues work behind it, and a log of the order tasks started in. */
#ifndef WEFT_TEST_SCHED_UTIL_H
#define WEFT_TEST_SCHED_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, nanosleep (test_util.h) */
#endif

#include "test_util.h"

typedef struct gate {
    atomic_int entered; /* workers held */
    atomic_int open;
} gate;

static inline int gate_task(weft_ctx *cx, void *arg) {
    gate *g = arg;
    atomic_fetch_add_explicit(&g->entered, 1, memory_order_acq_rel);
    while (!atomic_load_explicit(&g->open, memory_order_acquire)) sleep_us(50);
    return 0;
}

/* Holds every one of ex's `workers` workers in a gate task (submitted from
 * this thread, which is not a worker). */
static inline void gate_close(weft_executor *ex, gate *g, unsigned workers) {
    atomic_init(&g->entered, 0);
    atomic_init(&g->open, 0);
    for (unsigned i = 0; i < workers; i++) ASSERT_OK(weft_silent_async(ex, gate_task, g));
    ASSERT_TRUE(wait_flag(&g->entered, (int)workers, 10));
}

static inline void gate_open(gate *g) { atomic_store_explicit(&g->open, 1, memory_order_release); }

/* The order tasks start in: each task's argument is a `logged` naming its log. */
typedef struct order_log {
    atomic_int n;
    int ids[4096];
} order_log;

typedef struct logged {
    order_log *log;
    int id;
} logged;

static inline int log_task(weft_ctx *cx, void *arg) {
    logged *l = arg;
    int k = atomic_fetch_add_explicit(&l->log->n, 1, memory_order_acq_rel);
    if (k < 4096) l->log->ids[k] = l->id;
    return 0;
}

/* The log holds exactly want[0..n), in that order. */
static inline void assert_order(order_log *log, const int *want, int n) {
    ASSERT_EQ(atomic_load(&log->n), n);
    for (int i = 0; i < n; i++)
        if (log->ids[i] != want[i]) TEST_FAIL_("position %d: task %d ran, task %d was due", i, log->ids[i], want[i]);
}

static inline weft_executor *make_sched_executor(unsigned workers, const weft_sched_config *sc) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers, .sched = sc}, &err);
    if (!ex) TEST_FAIL_("weft_executor_create(%u workers, sched) failed: %s", workers, weft_errname(err));
    return ex;
}

#endif
