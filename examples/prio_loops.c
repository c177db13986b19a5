/* Priorities of parallel loops and pipelines (docs/guide-scheduling.md,
 * "Loops, algorithms and pipelines"): a server keeps its workers busy with
 * HIGH "replication" tasks and serves a "query" loop at CRITICAL: the loop's
 * jobs are queued at CRITICAL, so idle workers take them before the queued
 * replication tasks (at the default level they would wait behind them, and
 * the calling thread would do the whole query alone).  The chunks run with
 * the level set (weft_algo_priority), which a nested call would inherit.
 * Then a pipeline whose stage jobs are queued at HIGH.
 * Build: part of the examples (make examples); run: ./prio_loops */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <weft.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void busy_us(double us) {
    double end = now_ms() + us / 1e3;
    while (now_ms() < end) {
    }
}

static int replicate(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    busy_us(200);
    return 0;
}

/* Queues 2 ms of HIGH work per worker. */
static int keep_busy(weft_executor *ex) {
    for (int i = 0; i < 20; i++)
        if (weft_async_with(ex, replicate, NULL, &(weft_async_options){.priority = WEFT_PRIORITY_HIGH}, NULL) != WEFT_OK)
            return -1;
    return 0;
}

typedef struct query {
    atomic_size_t rows;
    atomic_int off_level; /* chunks that saw another level than the call's */
    weft_priority level;
} query;

static void query_chunk(size_t lo, size_t hi, void *arg) {
    query *q = arg;
    busy_us(20.0 * (double)(hi - lo));
    if (weft_algo_priority() != q->level) atomic_fetch_add(&q->off_level, 1);
    atomic_fetch_add(&q->rows, hi - lo);
}

static int stage(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 100) (void)weft_pipeflow_stop(pf);
    else if (weft_pipeflow_stage(pf) == 1) atomic_fetch_add((atomic_size_t *)arg, 1);
    return 0;
}

int main(void) {
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &err);
    if (!ex) return fprintf(stderr, "executor: %s\n", weft_strerror(err)), 1;
    if (keep_busy(ex) != 0) return 1;
    weft_priority old;
    if (weft_algo_set_priority(WEFT_PRIORITY_CRITICAL, &old) != WEFT_OK) return 1;
    query q = {.level = WEFT_PRIORITY_CRITICAL};
    double t0 = now_ms();
    weft_status st = weft_parallel_for_range(ex, 0, 256, 1, query_chunk, &q,
                                             &(weft_algo_config){.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 4});
    double ms = now_ms() - t0;
    (void)weft_algo_set_priority(old, NULL); /* this thread's later calls: the default again */
    printf("query at critical: %s, %zu rows in %.2f ms, %d chunks off its level\n", weft_strerror(st),
           (size_t)atomic_load(&q.rows), ms, atomic_load(&q.off_level));
    if (weft_executor_wait_all(ex) != WEFT_OK) return 1;

    /* A pipeline whose stage jobs are queued at HIGH (spread, so they are queued). */
    atomic_size_t tokens = 0;
    weft_stage stages[] = {{WEFT_STAGE_SERIAL, stage, &tokens, "make"}, {WEFT_STAGE_PARALLEL, stage, &tokens, "work"}};
    weft_pipeline *p = weft_pipeline_create(4, stages, 2, &err);
    weft_taskflow *tf = weft_taskflow_create("prio_pipeline", &err);
    if (!p || !tf || weft_pipeline_set_priority(p, WEFT_PRIORITY_HIGH) != WEFT_OK ||
        weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD) != WEFT_OK || !weft_pipeline_emplace(tf, p).node_)
        return 1;
    st = weft_run_and_wait(ex, tf);
    printf("pipeline (HIGH): %s, %zu tokens\n", weft_strerror(st), (size_t)atomic_load(&tokens));

    (void)weft_taskflow_destroy(tf);
    (void)weft_pipeline_destroy(p);
    weft_executor_destroy(ex);
    return 0;
}
