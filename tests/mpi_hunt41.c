/* Distributed flows under awkward use (adversarial round 41): a run from a
 * task of another executor, a failed run followed by a clean one, the
 * program's own messages on the communicator weft duplicated (same tags,
 * never received during the run), and a deadline that cancels the work a
 * distributed task waits for while another rank waits for its data. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"
#include "weft/cancel.h"

static int h41_add(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    *(long *)bufs[0] += (long)(intptr_t)arg;
    return 0;
}

/* Reads bufs[0] into bufs[1] (times 10). */
static int h41_copy(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    *(long *)bufs[1] = *(long *)bufs[0] * 10;
    return 0;
}

/* ---- a run from a task of another executor ----------------------------------------- */

static weft_mpi_flow *h41_flow;
static weft_executor *h41_ex;
static _Atomic int h41_status = -1;

static int h41_run_from_task(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    atomic_store(&h41_status, (int)weft_mpi_run(h41_ex, h41_flow));
    return 0;
}

/* Every rank calls weft_mpi_run from a worker of another executor: at
 * MPI_THREAD_FUNNELED that worker is not MPI's main thread, so each rank
 * refuses with WEFT_EINVAL and a reason (no rank is left in a collective);
 * the same flow then runs from the main thread with the serial result. */
TEST(a_run_from_a_task_of_another_executor_is_refused_everywhere_then_runs_from_main) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor(), *other = mpi_test_executor();
    weft_status st = WEFT_OK;
    h41_flow = weft_mpi_flow_create(MPI_COMM_WORLD, "other", &st);
    ASSERT_OK(st);
    h41_ex = ex;
    long v = 1, out = 0;
    weft_mpi_data d = weft_mpi_data_register(h41_flow, rank == 0 ? &v : NULL, sizeof v, 0);
    weft_mpi_data o = weft_mpi_data_register(h41_flow, rank == size - 1 ? &out : NULL, sizeof out, size - 1);
    ASSERT_OK(weft_mpi_insert(h41_flow, &(weft_mpi_task_desc){ .fn = h41_add, .arg = (void *)(intptr_t)2,
                                                              .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1 }));
    ASSERT_OK(weft_mpi_insert(h41_flow, &(weft_mpi_task_desc){ .fn = h41_copy, .access = MPI_ACC({ d, WEFT_MPI_R }, { o, WEFT_MPI_W }),
                                                              .naccess = 2 }));
    weft_future *fu = NULL;
    ASSERT_OK(weft_async(other, h41_run_from_task, NULL, &fu));
    ASSERT_OK(weft_future_wait(fu));
    weft_future_destroy(fu);
    ASSERT_EQ(atomic_load(&h41_status), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(h41_flow), "FUNNELED") != NULL);
    ASSERT_EQ(v, 1);
    ASSERT_OK(weft_mpi_run(ex, h41_flow));
    if (rank == 0) ASSERT_EQ(v, 3);
    if (rank == size - 1) ASSERT_EQ(out, 30);
    ASSERT_STREQ(weft_mpi_flow_error_message(h41_flow), "");
    ASSERT_OK(weft_mpi_flow_destroy(h41_flow));
    weft_executor_destroy(other);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- a failed run, then a clean one ------------------------------------------------- */

static _Atomic int h41_fail_now = 1;
static int h41_maybe_fail(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    *(long *)bufs[0] += 1;
    return atomic_load(&h41_fail_now) ? 7 : 0;
}

/* A chain over every rank, each task adding 1 to a value owned by rank 0 and
 * written on every rank in turn; the middle one fails in the first run.  The
 * second run succeeds everywhere, its message is "", each rank's figures are
 * those of one whole run, and rank 0's value went up by exactly one chain. */
TEST(a_failed_run_is_followed_by_a_clean_run_of_the_same_flow_on_every_rank) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "again", &st);
    ASSERT_OK(st);
    long v = 0;
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &v : NULL, sizeof v, 0);
    int bad = size / 2;
    for (int r = 0; r < size; r++)
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = r == bad ? h41_maybe_fail : h41_add, .arg = (void *)(intptr_t)1,
                                                           .name = r == bad ? "flaky" : "add", .access = MPI_ACC({ d, WEFT_MPI_RW }),
                                                           .naccess = 1, .rank_set = true, .rank = r }));
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
    char want[128];
    snprintf(want, sizeof want, "task 'flaky' failed on rank %d with code 7", bad);
    ASSERT_STREQ(weft_mpi_flow_error_message(f), want);
    long after_fail = v;
    MPI_Bcast(&after_fail, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    atomic_store(&h41_fail_now, 0);
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_STREQ(weft_mpi_flow_error_message(f), "");
    if (rank == 0) ASSERT_EQ(v, after_fail + size);
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(ms.runs, 2);
    ASSERT_EQ(ms.tasks_run, 1);
    ASSERT_EQ(mpi_test_sum(ms.messages_sent), (uint64_t)(size - 1) + (size > 1));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- the program's own messages ----------------------------------------------------- */

/* Each rank sends its right neighbour, on MPI_COMM_WORLD, messages with tags
 * 0..15 (the tags weft's first transfers use on its own communicator) and
 * receives them only after a run with many transfers: the run neither takes
 * them nor is disturbed by them, and they arrive intact afterwards. */
TEST(the_programs_pending_messages_with_weft_tags_are_left_alone_by_a_run) {
    int size = 0, rank = mpi_test_init(&size);
    if (size < 2) {
        MPI_Finalize();
        SKIP("needs 2 ranks");
    }
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "tags", &st);
    ASSERT_OK(st);
    enum { N = 16 };
    long mine[N], theirs[N];
    MPI_Request sends[N];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int t = 0; t < N; t++) {
        mine[t] = 1000L * rank + t;
        MPI_Isend(&mine[t], 1, MPI_LONG, right, t, MPI_COMM_WORLD, &sends[t]);
    }
    long vals[N] = { 0 };
    weft_mpi_data d[N];
    for (int t = 0; t < N; t++) d[t] = weft_mpi_data_register(f, rank == t % size ? &vals[t] : NULL, sizeof(long), t % size);
    /* Each handle goes round every rank: a transfer per step. */
    for (int step = 0; step < size; step++)
        for (int t = 0; t < N; t++)
            ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_add, .arg = (void *)(intptr_t)1,
                                                               .access = MPI_ACC({ d[t], WEFT_MPI_RW }), .naccess = 1,
                                                               .rank_set = true, .rank = (t + step) % size }));
    ASSERT_OK(weft_mpi_run(ex, f));
    for (int t = 0; t < N; t++)
        if (rank == t % size) ASSERT_EQ(vals[t], size);
    for (int t = N - 1; t >= 0; t--) MPI_Recv(&theirs[t], 1, MPI_LONG, left, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(N, sends, MPI_STATUSES_IGNORE);
    for (int t = 0; t < N; t++) ASSERT_EQ(theirs[t], 1000L * left + t);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- a deadline inside a distributed task -------------------------------------------- */

static int h41_poll_forever(weft_ctx *cx, void *arg) {
    (void)arg;
    while (weft_ctx_check_and_yield(cx) == WEFT_OK) {}
    return 0;
}

static int h41_bounded(weft_cancel_token *t, void *arg) {
    weft_future *fu = NULL;
    weft_executor *ex = ((void **)arg)[0];
    weft_taskflow *tf = ((void **)arg)[1];
    if (weft_run(ex, tf, &fu) != WEFT_OK) return -1;
    if (weft_cancel_attach(t, fu) != WEFT_OK) return -2;
    int st = (int)weft_future_wait(fu);
    weft_future_destroy(fu);
    return st;
}

/* The task on the last rank starts a taskflow that never ends by itself,
 * under a 20 ms deadline, and returns what the cancelled run gave; rank 0
 * waits for that task's output.  Every rank gets WEFT_ETASK naming it, in
 * well under the test's time, none hangs in the receive. */
static int h41_deadline_task(weft_ctx *cx, void *const *bufs, void *arg) {
    void *args[2] = { weft_ctx_executor(cx), arg };
    int result = 0;
    weft_status st = weft_with_deadline(20 * 1000 * 1000, h41_bounded, args, &result);
    *(long *)bufs[0] = result;
    return st == WEFT_ETIMEDOUT ? 99 : result;
}

TEST(a_deadline_that_cancels_a_tasks_inner_run_fails_every_rank_without_a_hang) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_taskflow *tf = weft_taskflow_create("forever", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, h41_poll_forever, NULL)));
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "deadline", &st);
    ASSERT_OK(st);
    long r = 0, got = -5;
    int last = size - 1;
    weft_mpi_data d = weft_mpi_data_register(f, rank == last ? &r : NULL, sizeof r, last);
    weft_mpi_data o = weft_mpi_data_register(f, rank == 0 ? &got : NULL, sizeof got, 0);
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_deadline_task, .arg = tf, .name = "bounded",
                                                       .access = MPI_ACC({ d, WEFT_MPI_W }), .naccess = 1 }));
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_copy, .access = MPI_ACC({ d, WEFT_MPI_R }, { o, WEFT_MPI_W }),
                                                       .naccess = 2 }));
    double t0 = MPI_Wtime();
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
    ASSERT_TRUE(MPI_Wtime() - t0 < 10.0);
    char want[128];
    snprintf(want, sizeof want, "task 'bounded' failed on rank %d with code 99", last);
    ASSERT_STREQ(weft_mpi_flow_error_message(f), want);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- unnamed tasks in failure messages ---------------------------------------------- */

static int h41_ok(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 0;
}
static int h41_fail5(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 5;
}
static int h41_nothing(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)bufs, (void)arg;
    return 0;
}
static int h41_rank_by_index(weft_task t, void *arg) {
    return (int)(weft_task_index(t) % (size_t)*(int *)arg);
}

/* An unnamed task of an ordinary taskflow that fails is named as the
 * taskflow's own tools name it ("#index"), and a distributed task given the
 * name "" by its position: the message was "task '' failed ...", which says
 * nothing of which task. */
TEST(an_unnamed_failing_task_is_named_by_its_index_in_the_message) {
    int size = 0, rank = mpi_test_init(&size);
    (void)rank;
    weft_executor *ex = mpi_test_executor();
    weft_taskflow *tf = weft_taskflow_create("unnamed", NULL);
    weft_task a = weft_emplace(tf, h41_ok, NULL), b = weft_emplace(tf, h41_fail5, NULL);
    ASSERT_OK(weft_precede(a, b));
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "unnamed", &st);
    ASSERT_OK(st);
    /* A task before the taskflow's: its tasks' positions in f are 1 and 2. */
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_nothing, .name = "before" }));
    ASSERT_OK(weft_mpi_insert_taskflow(f, tf, &(weft_mpi_taskflow_map){ .rank = h41_rank_by_index, .arg = &size }));
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
    char want[128];
    snprintf(want, sizeof want, "task '#1' failed on rank %d with code 5", 1 % size);
    ASSERT_STREQ(weft_mpi_flow_error_message(f), want);
    ASSERT_OK(weft_mpi_flow_destroy(f));

    f = weft_mpi_flow_create(MPI_COMM_WORLD, "empty name", &st);
    ASSERT_OK(st);
    long v = 0;
    weft_mpi_data d = weft_mpi_data_register(f, rank == size - 1 ? &v : NULL, sizeof v, size - 1);
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_add, .name = "first", .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1 }));
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_maybe_fail, .name = "", .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1 }));
    atomic_store(&h41_fail_now, 1);
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
    snprintf(want, sizeof want, "task '#1' failed on rank %d with code 7", size - 1);
    ASSERT_STREQ(weft_mpi_flow_error_message(f), want);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- one flow, several executors ------------------------------------------------------ */

/* The same flow run on one executor, then on another of one worker, then on
 * the default one: each run gives the serial result and its own figures. */
TEST(one_flow_runs_on_different_executors_in_turn_with_the_serial_result) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *a = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_executor *b = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_NOT_NULL(b);
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "turns", &st);
    ASSERT_OK(st);
    long v = 0, out = 0;
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &v : NULL, sizeof v, 0);
    weft_mpi_data o = weft_mpi_data_register(f, rank == size - 1 ? &out : NULL, sizeof out, size - 1);
    for (int r = 0; r < size; r++)
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_add, .arg = (void *)(intptr_t)(r + 1),
                                                           .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1,
                                                           .rank_set = true, .rank = r }));
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h41_copy, .access = MPI_ACC({ d, WEFT_MPI_R }, { o, WEFT_MPI_W }),
                                                       .naccess = 2 }));
    weft_executor *exs[3] = { a, b, NULL };
    long chain = (long)size * (size + 1) / 2;
    for (int i = 0; i < 3; i++) {
        ASSERT_OK(weft_mpi_run(exs[i], f));
        if (rank == 0) ASSERT_EQ(v, (i + 1) * chain);
        if (rank == size - 1) ASSERT_EQ(out, (i + 1) * chain * 10);
        weft_mpi_stats ms;
        ASSERT_OK(weft_mpi_flow_stats(f, &ms));
        ASSERT_EQ(ms.runs, (uint64_t)i + 1);
        ASSERT_EQ(mpi_test_sum(ms.tasks_run), (uint64_t)size + 1);
    }
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(b);
    weft_executor_destroy(a);
    MPI_Finalize();
}
