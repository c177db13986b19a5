/* Priorities of pipelines (weft_pipeline_set_priority), under one worker where
 * the order is exact: a spread pipeline's stage jobs against async tasks its
 * first stage queues at another level. */
#include "sched_util.h"

enum { TOKENS = 4, STAGES = 3 };

/* Stage calls log 100 + token * STAGES + stage; token 0's first stage queues
 * three async tasks at `tasks_prio` (logging 1, 2, 3) from the worker.
 * Tokens 0..TOKENS-1; the first stage stops at TOKENS. */
typedef struct pipe_probe {
    order_log log;
    weft_priority tasks_prio;
    logged task_args[3];
    logged stage_args[TOKENS * STAGES];
} pipe_probe;

/* Runs the probe pipeline (SPREAD, at `pipe_prio`) as a graph on a one-worker
 * executor; the async tasks go to the same executor (through a task of it). */
static weft_executor *the_ex; /* the executor the stage's async tasks go to */

static int probe_stage_ex(weft_pipeflow *pf, void *arg) {
    pipe_probe *pp = arg;
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 0) {
        for (int i = 0; i < 3; i++) {
            pp->task_args[i] = (logged){&pp->log, 1 + i};
            if (weft_async_with(the_ex, log_task, &pp->task_args[i],
                                &(weft_async_options){.priority = pp->tasks_prio}, NULL) != WEFT_OK)
                return 1;
        }
    }
    uint64_t t = weft_pipeflow_token(pf);
    size_t s = weft_pipeflow_stage(pf);
    if (s == 0 && t == TOKENS) {
        (void)weft_pipeflow_stop(pf);
        return 0;
    }
    logged *l = &pp->stage_args[t * STAGES + s];
    *l = (logged){&pp->log, 100 + (int)(t * STAGES + s)};
    (void)log_task(NULL, l);
    return 0;
}

static void run_probe(pipe_probe *pp, weft_priority pipe_prio) {
    weft_executor *ex = make_sched_executor(1, &(weft_sched_config){.no_escalation = true});
    the_ex = ex;
    weft_stage st[STAGES];
    for (int s = 0; s < STAGES; s++)
        st[s] = (weft_stage){s == 1 ? WEFT_STAGE_PARALLEL : WEFT_STAGE_SERIAL, probe_stage_ex, pp, NULL};
    weft_status err;
    weft_pipeline *p = weft_pipeline_create(2, st, STAGES, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
    ASSERT_OK(weft_pipeline_set_priority(p, pipe_prio));
    ASSERT_EQ(weft_pipeline_priority(p), pipe_prio);
    weft_taskflow *tf = make_taskflow("prio_pipe");
    ASSERT_NOT_NULL(weft_pipeline_emplace(tf, p).node_);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&pp->log.n), 3 + TOKENS * STAGES);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
}

/* Position of the first and last stage call, and of each task, in the log. */
static int pos_of(const order_log *log, int id) {
    for (int i = 0; i < atomic_load(&log->n); i++)
        if (log->ids[i] == id) return i;
    return -1;
}
static int last_stage_pos(const order_log *log) {
    int last = -1;
    for (int i = 0; i < atomic_load(&log->n); i++)
        if (log->ids[i] >= 100) last = i;
    return last;
}

/* A property rather than a change: on one worker the plain path runs the
 * stages first as well (its slots continue on the worker's deque). */
TEST(critical_pipeline_stages_run_before_queued_high_tasks) {
    static pipe_probe pp = {.tasks_prio = WEFT_PRIORITY_HIGH};
    run_probe(&pp, WEFT_PRIORITY_CRITICAL);
    int last = last_stage_pos(&pp.log);
    for (int i = 1; i <= 3; i++)
        if (pos_of(&pp.log, i) < last)
            TEST_FAIL_("HIGH task %d ran at %d, before the CRITICAL pipeline's last stage (%d)", i, pos_of(&pp.log, i), last);
}

TEST(low_pipeline_stages_wait_behind_low_tasks_queued_before_them) {
    static pipe_probe pp = {.tasks_prio = WEFT_PRIORITY_LOW};
    run_probe(&pp, WEFT_PRIORITY_LOW);
    /* Token 0's first stage queued the tasks before it readied any stage: at
     * the same level, FIFO, they come right after it. */
    ASSERT_EQ(pp.log.ids[0], 100);
    for (int i = 1; i <= 3; i++) ASSERT_EQ(pos_of(&pp.log, i), i);
}

TEST(default_priority_pipeline_keeps_its_stages_on_the_worker) {
    static pipe_probe pp = {.tasks_prio = WEFT_PRIORITY_LOW};
    run_probe(&pp, WEFT_PRIORITY_NORMAL);
    /* The plain path: LOW tasks run when nothing else is ready, after the run. */
    int last = last_stage_pos(&pp.log);
    for (int i = 1; i <= 3; i++) ASSERT_GT(pos_of(&pp.log, i), last);
}

static int noop_stage(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) == 1000) (void)weft_pipeflow_stop(pf);
    return 0;
}

TEST(pipeline_priority_outside_the_levels_or_null_is_einval) {
    ASSERT_STATUS(weft_pipeline_set_priority(NULL, WEFT_PRIORITY_HIGH), WEFT_EINVAL);
    ASSERT_EQ(weft_pipeline_priority(NULL), WEFT_PRIORITY_NORMAL);
    weft_stage st[] = {{WEFT_STAGE_SERIAL, noop_stage, NULL, "gen"}};
    weft_status err;
    weft_pipeline *p = weft_pipeline_create(2, st, 1, &err);
    ASSERT_NOT_NULL(p);
    ASSERT_STATUS(weft_pipeline_set_priority(p, (weft_priority)3), WEFT_EINVAL);
    ASSERT_STATUS(weft_pipeline_set_priority(p, (weft_priority)-2), WEFT_EINVAL);
    ASSERT_EQ(weft_pipeline_priority(p), WEFT_PRIORITY_NORMAL);
    ASSERT_OK(weft_pipeline_set_priority(p, WEFT_PRIORITY_LOW));
    ASSERT_EQ(weft_pipeline_priority(p), WEFT_PRIORITY_LOW);
    ASSERT_OK(weft_pipeline_destroy(p));
}

/* A prioritised pipeline on several workers still keeps its guarantees: serial
 * stages in token order, every token through every stage. */
typedef struct order_check {
    atomic_ullong next[3];
    atomic_int bad, calls;
} order_check;

static int checked_stage(weft_pipeflow *pf, void *arg) {
    order_check *c = arg;
    uint64_t t = weft_pipeflow_token(pf);
    size_t s = weft_pipeflow_stage(pf);
    if (s == 0 && t == 20000) {
        (void)weft_pipeflow_stop(pf);
        return 0;
    }
    if (s != 1 && atomic_fetch_add(&c->next[s], 1) != t) atomic_fetch_add(&c->bad, 1);
    atomic_fetch_add(&c->calls, 1);
    return 0;
}

TEST(prioritised_pipeline_keeps_serial_order_on_two_workers) {
    weft_executor *ex = make_executor(2);
    static const weft_priority levels[] = {WEFT_PRIORITY_LOW, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_CRITICAL};
    for (int k = 0; k < 3; k++) {
        order_check c = {0};
        weft_stage st[3] = {{WEFT_STAGE_SERIAL, checked_stage, &c, NULL},
                            {WEFT_STAGE_PARALLEL, checked_stage, &c, NULL},
                            {WEFT_STAGE_SERIAL, checked_stage, &c, NULL}};
        weft_status err;
        weft_pipeline *p = weft_pipeline_create(4, st, 3, &err);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
        ASSERT_OK(weft_pipeline_set_priority(p, levels[k]));
        weft_taskflow *tf = make_taskflow("prio_pipe2");
        ASSERT_NOT_NULL(weft_pipeline_emplace(tf, p).node_);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&c.bad), 0);
        ASSERT_EQ(atomic_load(&c.calls), 3 * 20000);
        weft_taskflow_destroy(tf);
        ASSERT_OK(weft_pipeline_destroy(p));
    }
    weft_executor_destroy(ex);
}
