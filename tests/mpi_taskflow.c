/* Distributed flows from ordinary taskflows: weft_mpi_insert_taskflow and
 * weft_mpi_taskflow_task. */
#include <string.h>

#include "mpi_util.h"

enum { N = 60 };

/* Task i's predecessors: a fixed random DAG (edges from lower to higher
 * indices), the same on every rank. */
static int npred[N], pred[N][6];
static unsigned long vals[N]; /* task i's output, on every rank */
static int idx[N];

static void make_dag(void) {
    unsigned s = 12345;
    for (int i = 0; i < N; i++) {
        npred[i] = 0;
        for (int k = 0; k < 6 && i > 0; k++) {
            s = s * 1103515245u + 12345u;
            if ((s >> 16) % 3 == 0) continue;
            int p = (int)((s >> 8) % (unsigned)i);
            bool dup = false;
            for (int j = 0; j < npred[i]; j++) dup |= pred[i][j] == p;
            if (!dup) pred[i][npred[i]++] = p;
        }
    }
}

static unsigned long value_of(int i) {
    unsigned long v = (unsigned long)i * 7u + 1u;
    for (int k = 0; k < npred[i]; k++) v = v * 31u + vals[pred[i][k]] * 3u;
    return v;
}

/* An ordinary task: knows nothing of MPI. */
static int compute(weft_ctx *cx, void *arg) {
    (void)cx;
    int i = *(const int *)arg;
    vals[i] = value_of(i);
    return 0;
}

static int rank_of(weft_task t, void *arg) {
    int size = *(const int *)arg;
    return (int)((weft_task_index(t) * 5 + 3) % (size_t)size);
}

static void *output_of(weft_task t, size_t *size, void *arg) {
    (void)arg;
    *size = sizeof vals[0];
    return &vals[weft_task_index(t)];
}

static weft_taskflow *build_taskflow(void) {
    weft_taskflow *tf = weft_taskflow_create("dag", NULL);
    weft_task t[N];
    for (int i = 0; i < N; i++) {
        idx[i] = i;
        t[i] = weft_emplace(tf, compute, &idx[i]);
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        weft_task_set_name(t[i], name);
    }
    /* Edges added from the successor's side, in a scrambled order: the
     * wrapper must find an order that respects them (not emplace order). */
    for (int i = N - 1; i >= 0; i--)
        for (int k = npred[i] - 1; k >= 0; k--) ASSERT_OK(weft_precede(t[pred[i][k]], t[i]));
    return tf;
}

/* Results equal a serial run's on every rank that ran the task, and every
 * edge across ranks is one message (per predecessor and consumer rank). */
TEST(an_ordinary_taskflow_runs_across_ranks_as_in_one_process) {
    int size = 0, rank = mpi_test_init(&size);
    make_dag();
    unsigned long ref[N];
    for (int i = 0; i < N; i++) vals[i] = ref[i] = value_of(i); /* serial, in index order */
    memset(vals, 0, sizeof vals);
    weft_executor *ex = mpi_test_executor();
    weft_taskflow *tf = build_taskflow();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "wrapped", &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_mpi_insert_taskflow(f, tf, &(weft_mpi_taskflow_map){ rank_of, output_of, &size }));
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), (size_t)N);
    uint64_t want = 0; /* distinct (predecessor, other consumer rank) pairs */
    for (int p = 0; p < N; p++) {
        bool to[64] = { false };
        int rp = (p * 5 + 3) % size;
        for (int i = p + 1; i < N; i++)
            for (int k = 0; k < npred[i]; k++)
                if (pred[i][k] == p && (i * 5 + 3) % size != rp) to[(i * 5 + 3) % size] = true;
        for (int r = 0; r < size; r++) want += to[r];
    }
    for (int run = 0; run < 2; run++) {
        memset(vals, 0, sizeof vals);
        ASSERT_OK(weft_mpi_run(ex, f));
        uint64_t mine = 0;
        for (int i = 0; i < N; i++)
            if ((i * 5 + 3) % size == rank) {
                ASSERT_EQ(vals[i], ref[i]);
                mine++;
            }
        ASSERT_EQ(mpi_test_sum(mine), (uint64_t)N);
        weft_mpi_stats ms;
        ASSERT_OK(weft_mpi_flow_stats(f, &ms));
        ASSERT_EQ(mpi_test_sum(ms.messages_sent), want);
    }
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

static int pick_first(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 0;
}
static int noop(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 0;
}

/* A condition's branch is chosen at run time on one rank: refused, naming
 * the task, with nothing run; so is a cycle. */
TEST(a_taskflow_with_a_condition_or_a_cycle_is_refused_by_name) {
    int size = 0;
    (void)mpi_test_init(&size);
    weft_taskflow *tf = weft_taskflow_create("cond", NULL);
    weft_task c = weft_emplace_condition(tf, pick_first, NULL);
    weft_task_set_name(c, "choose");
    weft_precede(c, weft_emplace(tf, noop, NULL));
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "refused", &st);
    ASSERT_OK(st);
    weft_mpi_taskflow_map map = { rank_of, NULL, &size };
    ASSERT_EQ(weft_mpi_insert_taskflow(f, tf, &map), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "condition") != NULL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "'choose'") != NULL);
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), (size_t)0);
    weft_taskflow_destroy(tf);

    tf = weft_taskflow_create("cycle", NULL);
    weft_task a = weft_emplace(tf, noop, NULL), b = weft_emplace(tf, noop, NULL);
    weft_precede(a, b);
    weft_precede(b, a);
    ASSERT_EQ(weft_mpi_insert_taskflow(f, tf, &map), WEFT_ECYCLE);
    ASSERT_EQ(weft_mpi_insert_taskflow(f, NULL, &map), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_insert_taskflow(f, tf, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_insert_taskflow(NULL, tf, &map), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), (size_t)0);
    weft_taskflow_destroy(tf);

    /* 64 predecessors of one task: refused before anything is added (the
     * check used to come after the first 64 tasks were in the flow, which
     * then ran them). */
    tf = weft_taskflow_create("fan-in", NULL);
    weft_task sink = weft_emplace(tf, noop, NULL);
    weft_task_set_name(sink, "sink");
    for (int i = 0; i < 64; i++) weft_precede(weft_emplace(tf, noop, NULL), sink);
    ASSERT_EQ(weft_mpi_insert_taskflow(f, tf, &map), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "63 predecessors") != NULL);
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), (size_t)0);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    MPI_Finalize();
}

/* What cannot be wrapped runs whole inside one distributed task: a taskflow
 * with a condition loop (count to 5) on the last rank writes a registered
 * buffer, which a task on rank 0 then reads. */
static long counter, result;
static int loop_body(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    counter++;
    return 0;
}
static int loop_again(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return counter < 5 ? 0 : 1;
}
static int read_counter(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    result = *(const long *)bufs[0] * 10;
    return 0;
}

TEST(a_whole_taskflow_runs_as_one_distributed_task) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_taskflow *tf = weft_taskflow_create("loop", NULL);
    weft_task init = weft_emplace(tf, noop, NULL), body = weft_emplace(tf, loop_body, NULL);
    weft_task again = weft_emplace_condition(tf, loop_again, NULL);
    weft_precede(init, body);
    weft_precede(body, again);
    weft_precede(again, body); /* weak edge: index 0 loops */
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "per-task", &st);
    ASSERT_OK(st);
    int last = size - 1;
    weft_mpi_data dc = weft_mpi_data_register(f, &counter, sizeof counter, last);
    weft_mpi_data dr = weft_mpi_data_register(f, &result, sizeof result, 0);
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = weft_mpi_taskflow_task, .arg = tf, .name = "loop",
                                                        .access = MPI_ACC({ dc, WEFT_MPI_RW }), .naccess = 1 }));
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = read_counter,
                                                        .access = MPI_ACC({ dc, WEFT_MPI_R }, { dr, WEFT_MPI_W }),
                                                        .naccess = 2 }));
    counter = 0;
    ASSERT_OK(weft_mpi_run(ex, f));
    if (rank == last) ASSERT_EQ(counter, 5);
    if (rank == 0) ASSERT_EQ(result, 50);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}
