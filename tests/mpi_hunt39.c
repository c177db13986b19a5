/* Distributed flows and pools under awkward use (adversarial round 39):
 * message sizes at the edges, many requests in flight, failures and
 * cancellation that must reach every rank, runs from several threads, and
 * executors of one worker. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"

#if defined(__SANITIZE_THREAD__) /* as tests/test_util.h */
#  define UNDER_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define UNDER_TSAN 1
#  endif
#endif

static weft_executor *h39_executor(size_t workers) {
    weft_status st = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers }, &st);
    if (!ex) TEST_FAIL_("executor: %s", weft_strerror(st));
    return ex;
}

/* ---- message sizes ------------------------------------------------------------ */

static int h39_fill(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    size_t n = (size_t)(uintptr_t)arg;
    unsigned char *p = bufs[0];
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 7 + 3);
    return 0;
}

static int h39_check(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    size_t n = (size_t)(uintptr_t)arg;
    const unsigned char *p = bufs[0];
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 7 + 3)) return 1;
    *(long *)bufs[1] = 1;
    return 0;
}

/* A 16 MiB handle travels from its owner to every other rank (a rendezvous
 * message each) and arrives intact; a one-byte handle too. */
TEST(a_large_and_a_one_byte_handle_reach_every_rank_intact) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "big", &st);
    ASSERT_OK(st);
    size_t sizes[2] = { (size_t)16 << 20, 1 };
    long ok[2][8] = { { 0 } };
    for (int s = 0; s < 2; s++) {
        void *buf = rank == 0 ? malloc(sizes[s]) : NULL;
        weft_mpi_data d = weft_mpi_data_register(f, buf, sizes[s], 0);
        ASSERT_TRUE(d.id_ != 0);
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_fill, .arg = (void *)(uintptr_t)sizes[s],
                                                           .access = MPI_ACC({ d, WEFT_MPI_W }), .naccess = 1 }));
        for (int r = 0; r < size; r++) {
            weft_mpi_data o = weft_mpi_data_register(f, rank == r ? &ok[s][r] : NULL, sizeof(long), r);
            ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_check, .arg = (void *)(uintptr_t)sizes[s],
                                                               .access = MPI_ACC({ d, WEFT_MPI_R }, { o, WEFT_MPI_W }),
                                                               .naccess = 2 }));
        }
    }
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_EQ(ok[0][rank], 1);
    ASSERT_EQ(ok[1][rank], 1);
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(mpi_test_sum(ms.bytes_received), (uint64_t)(size - 1) * (sizes[0] + 1));
    for (int s = 0; s < 2; s++) free(rank == 0 ? weft_mpi_data_ptr(f, (weft_mpi_data){ (uint32_t)(1 + s * (size + 1)) }) : NULL);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- many requests in flight -------------------------------------------------- */

enum { H39_MANY = 3000 };
static long h39_vals[H39_MANY];

static int h39_set(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    *(long *)bufs[0] = (long)(intptr_t)arg;
    return 0;
}

static int h39_sum_all(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    long s = 0;
    for (int i = 0; i < 63; i++) s += *(long *)bufs[i];
    *(long *)bufs[63] += s;
    return 0;
}

/* Rank 0 writes 3000 handles; the last rank reads them all at once, so 3000
 * receives are posted together there and 3000 sends on rank 0. */
TEST(thousands_of_messages_in_flight_complete_with_the_serial_sum) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "many", &st);
    ASSERT_OK(st);
    weft_mpi_data d[H39_MANY];
    for (int i = 0; i < H39_MANY; i++) {
        d[i] = weft_mpi_data_register(f, rank == 0 ? &h39_vals[i] : NULL, sizeof(long), 0);
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_set, .arg = (void *)(intptr_t)i,
                                                           .access = MPI_ACC({ d[i], WEFT_MPI_W }), .naccess = 1 }));
    }
    long total = 0;
    int last = size - 1;
    weft_mpi_data t = weft_mpi_data_register(f, rank == last ? &total : NULL, sizeof total, last);
    for (int i = 0; i + 63 <= H39_MANY; i += 63) {
        weft_mpi_access acc[64];
        for (int k = 0; k < 63; k++) acc[k] = (weft_mpi_access){ d[i + k], WEFT_MPI_R };
        acc[63] = (weft_mpi_access){ t, WEFT_MPI_RW };
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_sum_all, .access = acc, .naccess = 64 }));
    }
    int n = (H39_MANY / 63) * 63;
    for (int run = 1; run <= 2; run++) {
        ASSERT_OK(weft_mpi_run(ex, f));
        if (rank == last) ASSERT_EQ(total, (long)run * n * (n - 1) / 2);
    }
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- failures ------------------------------------------------------------------ */

static int h39_fail_on(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    *(long *)bufs[0] += 1;
    return (int)(intptr_t)arg;
}

/* A chain that visits every rank twice; the task on the last rank fails
 * with code 42.  Every rank gets WEFT_ETASK and the same message, and the
 * tasks after it on the failing rank are skipped. */
TEST(a_failing_task_in_a_chain_over_ranks_fails_every_rank_alike_on_one_worker) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = h39_executor(1);
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "chain", &st);
    ASSERT_OK(st);
    long v = 0;
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &v : NULL, sizeof v, 0);
    for (int i = 0; i < 2 * size; i++) {
        int r = i % size;
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_fail_on, .name = i == size - 1 ? "bad" : "ok",
                                                           .arg = (void *)(intptr_t)(i == size - 1 ? 42 : 0),
                                                           .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1,
                                                           .rank_set = true, .rank = r }));
    }
    for (int run = 0; run < 3; run++) {
        ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
        const char *msg = weft_mpi_flow_error_message(f);
        ASSERT_TRUE(strstr(msg, "'bad'") != NULL);
        ASSERT_TRUE(strstr(msg, "code 42") != NULL);
        char want[64];
        snprintf(want, sizeof want, "rank %d", size - 1);
        ASSERT_TRUE(strstr(msg, want) != NULL);
    }
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(ms.runs, 3);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- cancellation of a whole taskflow inside a distributed task ------------------ */

static int h39_cancel_self(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 7;
}

/* A distributed task that runs a taskflow which cancels itself fails the
 * distributed run (its status is not WEFT_OK), on every rank alike. */
TEST(a_cancelled_inner_taskflow_fails_the_distributed_run_everywhere) {
    int size = 0, rank = mpi_test_init(&size);
    (void)rank;
    weft_executor *ex = h39_executor(1);
    weft_taskflow *tf = weft_taskflow_create("inner", NULL);
    weft_task a = weft_emplace(tf, h39_cancel_self, NULL);
    (void)a;
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "cancel", &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = weft_mpi_taskflow_task, .arg = tf, .name = "inner",
                                                       .rank_set = true, .rank = size - 1 }));
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "'inner'") != NULL);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- empty runs ------------------------------------------------------------------ */

static int h39_nop(weft_ctx *cx, const void *in, size_t n, void *out, size_t m, void *arg) {
    (void)cx, (void)in, (void)n, (void)out, (void)m;
    atomic_fetch_add((_Atomic long *)arg, 1);
    return 0;
}

/* A flow with no task and a pool with nothing submitted run at once, many
 * times, on an executor of one worker; zero-byte pool tasks (NULL in and out)
 * all run once, stolen or not. */
TEST(empty_runs_and_zero_byte_pool_tasks_complete_on_one_worker) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = h39_executor(1);
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, NULL, &st);
    ASSERT_OK(st);
    static _Atomic long count;
    static const weft_mpi_pool_fn fns[] = { h39_nop };
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1, .arg = (void *)&count, .batch_max = 1 }, &st);
    ASSERT_OK(st);
    for (int i = 0; i < 50; i++) {
        ASSERT_OK(weft_mpi_run(ex, f));
        ASSERT_OK(weft_mpi_pool_run(ex, p));
    }
    if (rank == 0)
        for (int i = 0; i < 500; i++) ASSERT_OK(weft_mpi_pool_submit(p, h39_nop, NULL, 0, NULL, 0));
    ASSERT_OK(weft_mpi_pool_run(ex, p));
    ASSERT_EQ(mpi_test_sum((uint64_t)count), 500);
    ASSERT_OK(weft_mpi_pool_destroy(p));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- NULLs and bad arguments ------------------------------------------------------ */

TEST(null_and_bad_arguments_are_refused_without_touching_mpi) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_mpi_flow_create(MPI_COMM_NULL, "x", &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(NULL), "MPI_COMM_NULL") != NULL);
    static const weft_mpi_pool_fn fns[] = { h39_nop };
    ASSERT_NULL(weft_mpi_pool_create(MPI_COMM_NULL, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_NULL(weft_mpi_pool_create(MPI_COMM_WORLD, NULL, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_run(ex, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_pool_run(ex, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_pool_submit(NULL, h39_nop, NULL, 0, NULL, 0), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_flow_stats(NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_pool_stats(NULL, NULL), WEFT_EINVAL);
    ASSERT_STREQ(weft_mpi_pool_error_message(NULL), "");
    ASSERT_OK(weft_mpi_flow_destroy(NULL));
    ASSERT_OK(weft_mpi_pool_destroy(NULL));
    ASSERT_EQ(weft_mpi_flow_rank(NULL), -1);
    ASSERT_EQ(weft_mpi_flow_size(NULL), 0);
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "args", &st);
    ASSERT_OK(st);
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st);
    ASSERT_OK(st);
    long x = 0;
    /* Sizes that overflow when added. */
    ASSERT_STATUS(weft_mpi_pool_submit(p, h39_nop, &x, SIZE_MAX, &x, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_pool_submit(p, h39_nop, &x, 2, &x, SIZE_MAX), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_pool_submit(p, h39_nop, NULL, 8, &x, 8), WEFT_EINVAL);
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &x : NULL, sizeof x, 0);
    (void)d;
    ASSERT_TRUE(weft_mpi_data_register(f, &x, 0, 0).id_ == 0);
    ASSERT_TRUE(weft_mpi_data_register(f, &x, (size_t)INT32_MAX + 1, 0).id_ == 0);
    ASSERT_TRUE(weft_mpi_data_register(f, &x, 8, -1).id_ == 0);
    ASSERT_TRUE(weft_mpi_data_register(f, &x, 8, size).id_ == 0);
    ASSERT_STATUS(weft_mpi_flow_last_error(f), WEFT_EINVAL);
    /* A handle of another flow (id beyond this one's). */
    ASSERT_STATUS(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_set, .access = MPI_ACC({ (weft_mpi_data){ 7 }, WEFT_MPI_R }), .naccess = 1 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_set, .naccess = 1 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_set, .rank_set = true, .rank = -1 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_set, .access = MPI_ACC({ (weft_mpi_data){ 1 }, (weft_mpi_mode)0 }), .naccess = 1 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_set, .access = MPI_ACC({ (weft_mpi_data){ 1 }, (weft_mpi_mode)4 }), .naccess = 1 }), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), 0);
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_OK(weft_mpi_pool_run(ex, p));
    ASSERT_OK(weft_mpi_pool_destroy(p));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- several threads ---------------------------------------------------------------- */

enum { H39_THREADS = 3 };
typedef struct h39_thr {
    MPI_Comm comm;
    weft_executor *ex;
    int rank, size, st, pst;
    long v, out;
} h39_thr;

static int h39_inc(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx, (void)arg;
    *(long *)bufs[0] += 1;
    return 0;
}

static int h39_twice(weft_ctx *cx, const void *in, size_t n, void *out, size_t m, void *arg) {
    (void)cx, (void)n, (void)m, (void)arg;
    *(long *)out = 2 * *(const long *)in;
    return 0;
}

/* One thread's flow and pool over its own communicator, run 20 times. */
static void *h39_thread(void *arg) {
    h39_thr *t = arg;
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(t->comm, "thr", &st);
    static const weft_mpi_pool_fn fns[] = { h39_twice };
    weft_mpi_pool *p = weft_mpi_pool_create(t->comm, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st);
    if (!f || !p) {
        t->st = -100;
        return NULL;
    }
    weft_mpi_data d = weft_mpi_data_register(f, t->rank == 0 ? &t->v : NULL, sizeof t->v, 0);
    for (int r = 0; r < t->size; r++)
        (void)weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ d, WEFT_MPI_RW }),
                                                       .naccess = 1, .rank_set = true, .rank = r });
    for (int i = 0; i < 20 && t->st == 0 && t->pst == 0; i++) {
        t->st = weft_mpi_run(t->ex, f);
        long in = i;
        (void)weft_mpi_pool_submit(p, h39_twice, &in, sizeof in, &t->out, sizeof t->out);
        t->pst = weft_mpi_pool_run(t->ex, p);
        if (t->out != 2 * i) t->pst = -200;
    }
    (void)weft_mpi_pool_destroy(p);
    (void)weft_mpi_flow_destroy(f);
    return NULL;
}

/* At MPI_THREAD_MULTIPLE three threads of each rank run their own flows and
 * pools at once, on one shared executor of one worker: each gets its own
 * results. */
TEST(flows_and_pools_run_from_several_threads_at_once_at_thread_multiple) {
    int provided = 0, rank = 0, size = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MPI_Finalize();
        SKIP("MPI_THREAD_MULTIPLE not provided");
    }
#ifdef UNDER_TSAN
    /* At MPI_THREAD_MULTIPLE any thread's MPI call progresses every thread's
     * requests: Open MPI (not instrumented) reads one thread's collective
     * input on weft's stack from another thread and signals completion with
     * atomics TSan cannot see, so once in ~20 runs TSan reports the stack
     * slot's reuse as a race (the reading frame lost, no suppression
     * applies). */
    MPI_Finalize();
    SKIP("TSan cannot see Open MPI's cross-thread progress at MPI_THREAD_MULTIPLE");
#endif
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    weft_executor *ex = h39_executor(1);
    h39_thr t[H39_THREADS];
    pthread_t th[H39_THREADS];
    for (int i = 0; i < H39_THREADS; i++) {
        t[i] = (h39_thr){ .ex = ex, .rank = rank, .size = size };
        MPI_Comm_dup(MPI_COMM_WORLD, &t[i].comm);
    }
    for (int i = 0; i < H39_THREADS; i++) ASSERT_EQ(pthread_create(&th[i], NULL, h39_thread, &t[i]), 0);
    for (int i = 0; i < H39_THREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < H39_THREADS; i++) {
        ASSERT_OK(t[i].st);
        ASSERT_OK(t[i].pst);
        if (rank == 0) ASSERT_EQ(t[i].v, 20L * size);
        MPI_Comm_free(&t[i].comm);
    }
    weft_executor_destroy(ex);
    MPI_Finalize();
}


/* ---- communicators ---------------------------------------------------------------- */

/* Flows over halves of the world (MPI_Comm_split) and over MPI_COMM_SELF run
 * independently; ranks are the sub-communicator's. */
TEST(flows_over_split_and_self_communicators_use_their_own_ranks) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hsize = 0;
    MPI_Comm_size(half, &hsize);
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(half, "half", &st);
    ASSERT_OK(st);
    ASSERT_EQ(weft_mpi_flow_rank(f), rank / 2);
    ASSERT_EQ(weft_mpi_flow_size(f), hsize);
    weft_mpi_flow *s = weft_mpi_flow_create(MPI_COMM_SELF, "self", &st);
    ASSERT_OK(st);
    long v = 0, w = 0;
    weft_mpi_data d = weft_mpi_data_register(f, rank / 2 == 0 ? &v : NULL, sizeof v, 0);
    weft_mpi_data e = weft_mpi_data_register(s, &w, sizeof w, 0);
    ASSERT_STATUS(weft_mpi_data_register(s, &w, sizeof w, 1).id_ == 0 ? WEFT_EINVAL : WEFT_OK, WEFT_EINVAL);
    for (int r = 0; r < hsize; r++)
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ d, WEFT_MPI_RW }),
                                                           .naccess = 1, .rank_set = true, .rank = r }));
    for (int i = 0; i <= rank; i++)
        ASSERT_OK(weft_mpi_insert(s, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ e, WEFT_MPI_RW }), .naccess = 1 }));
    /* A handle of f used in s: beyond s's handles, refused. */
    ASSERT_STATUS(weft_mpi_insert(s, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ (weft_mpi_data){ 2 }, WEFT_MPI_RW }), .naccess = 1 }), WEFT_EINVAL);
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_OK(weft_mpi_run(ex, s));
    if (rank / 2 == 0) ASSERT_EQ(v, hsize);
    ASSERT_EQ(w, rank + 1);
    ASSERT_OK(weft_mpi_flow_destroy(s));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    MPI_Comm_free(&half);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- after MPI_Finalize ------------------------------------------------------------ */

/* A flow and a pool that outlive MPI: their runs say MPI is finalised
 * (WEFT_EINVAL, no hang, no MPI call), a pool with tasks still submitted is
 * destroyed cleanly, and so is the flow. */
TEST(runs_after_mpi_finalize_are_refused_and_destroy_still_frees) {
    int size = 0, rank = mpi_test_init(&size);
    (void)rank;
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "late", &st);
    ASSERT_OK(st);
    static const weft_mpi_pool_fn fns[] = { h39_twice };
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st);
    ASSERT_OK(st);
    long v = 0, in = 4, out = 0;
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &v : NULL, sizeof v, 0);
    ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1 }));
    ASSERT_OK(weft_mpi_pool_submit(p, h39_twice, &in, sizeof in, &out, sizeof out));
    MPI_Finalize();
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "finalised") != NULL);
    ASSERT_STATUS(weft_mpi_pool_run(ex, p), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_pool_error_message(p), "finalised") != NULL);
    ASSERT_EQ(v, 0);
    ASSERT_EQ(out, 0);
    ASSERT_NULL(weft_mpi_flow_create(MPI_COMM_WORLD, "x", &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_OK(weft_mpi_pool_destroy(p));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
}

/* At MPI_THREAD_FUNNELED, a run from a thread that is not MPI's main one is
 * refused on that rank with a message that says so; at SERIALIZED (below,
 * in its own test) it is allowed. */
static weft_mpi_flow *h39_flow;
static int h39_off_st;
static void *h39_run_from_thread(void *arg) {
    h39_off_st = weft_mpi_run((weft_executor *)arg, h39_flow);
    return NULL;
}

TEST(a_run_from_another_thread_is_refused_at_funneled_and_allowed_at_serialized) {
    int provided = 0, rank = 0, size = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) {
        MPI_Finalize();
        SKIP("MPI_THREAD_SERIALIZED not provided");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    weft_executor *ex = h39_executor(1);
    weft_status st = WEFT_OK;
    h39_flow = weft_mpi_flow_create(MPI_COMM_WORLD, "ser", &st);
    ASSERT_OK(st);
    long v = 0;
    weft_mpi_data d = weft_mpi_data_register(h39_flow, rank == 0 ? &v : NULL, sizeof v, 0);
    for (int r = 0; r < size; r++)
        ASSERT_OK(weft_mpi_insert(h39_flow, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ d, WEFT_MPI_RW }),
                                                                  .naccess = 1, .rank_set = true, .rank = r }));
    pthread_t th;
    for (int i = 0; i < 3; i++) {
        h39_off_st = 99;
        ASSERT_EQ(pthread_create(&th, NULL, h39_run_from_thread, ex), 0);
        pthread_join(th, NULL);
        ASSERT_OK(h39_off_st);
        ASSERT_OK(weft_mpi_run(ex, h39_flow));
    }
    if (rank == 0) ASSERT_EQ(v, 6L * size);
    ASSERT_OK(weft_mpi_flow_destroy(h39_flow));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- pools: large inputs and outputs, failures in stolen batches ---------------- */

enum { H39_BIG_IN = 3 << 20, H39_BIG_OUT = 1 << 20, H39_BIG_N = 12 };

/* Sums its input's bytes into the first 8 bytes of its output and fills the
 * rest with the input's first byte; fails with code 9 when that byte is 99. */
static int h39_big(weft_ctx *cx, const void *in, size_t n, void *out, size_t m, void *arg) {
    (void)cx, (void)arg;
    const unsigned char *p = in;
    if (n && p[0] == 99) return 9;
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) s += p[i];
    memset(out, n ? p[0] : 0, m);
    memcpy(out, &s, sizeof s);
    return 0;
}

/* Rank 0 submits twelve tasks of 3 MiB input and 1 MiB output (a batch
 * holds four at most under its 16 MiB cap): every output comes back whole,
 * wherever it ran, over two runs. */
TEST(pool_tasks_with_megabytes_of_input_and_output_are_stolen_and_come_back_whole) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = h39_executor(1);
    weft_status st = WEFT_OK;
    static const weft_mpi_pool_fn fns[] = { h39_big };
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st);
    ASSERT_OK(st);
    unsigned char *in = malloc(H39_BIG_IN), *out = malloc((size_t)H39_BIG_N * H39_BIG_OUT);
    ASSERT_TRUE(in && out);
    for (int run = 0; run < 2; run++) {
        memset(out, 0xee, (size_t)H39_BIG_N * H39_BIG_OUT);
        if (rank == 0)
            for (int i = 0; i < H39_BIG_N; i++) {
                memset(in, i + 1, H39_BIG_IN);
                ASSERT_OK(weft_mpi_pool_submit(p, h39_big, in, H39_BIG_IN, out + (size_t)i * H39_BIG_OUT, H39_BIG_OUT));
            }
        ASSERT_OK(weft_mpi_pool_run(ex, p));
        if (rank == 0)
            for (int i = 0; i < H39_BIG_N; i++) {
                unsigned char *o = out + (size_t)i * H39_BIG_OUT;
                uint64_t s;
                memcpy(&s, o, sizeof s);
                ASSERT_EQ(s, (uint64_t)(i + 1) * H39_BIG_IN);
                ASSERT_EQ(o[8], i + 1);
                ASSERT_EQ(o[H39_BIG_OUT - 1], i + 1);
            }
        weft_mpi_pool_figures fg;
        ASSERT_OK(weft_mpi_pool_stats(p, &fg));
        ASSERT_EQ(mpi_test_sum(fg.tasks_run), H39_BIG_N);
        ASSERT_EQ(mpi_test_sum(fg.tasks_stolen), mpi_test_sum(fg.tasks_given));
    }
    free(in);
    free(out);
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* Every rank submits tasks, one of rank 0's fails (the last, which a thief
 * takes first): every rank gets WEFT_ETASK with one text, and the next run,
 * without it, succeeds. */
TEST(pool_failure_of_a_stolen_task_reaches_every_rank_and_the_next_run_is_clean) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = h39_executor(1);
    weft_status st = WEFT_OK;
    static const weft_mpi_pool_fn fns[] = { h39_big };
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1, .batch_max = 2 }, &st);
    ASSERT_OK(st);
    unsigned char in[64];
    uint64_t out[40][2];
    for (int i = 0; i < 40; i++) {
        memset(in, i == 39 && rank == 0 ? 99 : 1, sizeof in);
        ASSERT_OK(weft_mpi_pool_submit(p, h39_big, in, sizeof in, out[i], sizeof out[i]));
    }
    ASSERT_STATUS(weft_mpi_pool_run(ex, p), WEFT_ETASK);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", weft_mpi_pool_error_message(p));
    ASSERT_TRUE(strstr(msg, "#39 submitted on rank 0") != NULL);
    ASSERT_TRUE(strstr(msg, "code 9") != NULL);
    char all[256];
    MPI_Allreduce(msg, all, (int)sizeof msg, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
    ASSERT_STREQ(all, msg);
    memset(in, 2, sizeof in);
    for (int i = 0; i < 10; i++) ASSERT_OK(weft_mpi_pool_submit(p, h39_big, in, sizeof in, out[i], sizeof out[i]));
    ASSERT_OK(weft_mpi_pool_run(ex, p));
    for (int i = 0; i < 10; i++) ASSERT_EQ(out[i][0], 128);
    ASSERT_STREQ(weft_mpi_pool_error_message(p), "");
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

static void *h39_funneled_thread(void *arg) {
    h39_off_st = weft_mpi_run((weft_executor *)arg, h39_flow);
    return NULL;
}

/* At MPI_THREAD_FUNNELED every rank runs from a thread that did not
 * initialise MPI: refused on every rank (no hang), with a message saying why;
 * then from the main thread the run succeeds. */
TEST(a_run_from_another_thread_at_funneled_is_refused_with_a_reason) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = h39_executor(1);
    weft_status st = WEFT_OK;
    h39_flow = weft_mpi_flow_create(MPI_COMM_WORLD, "fun", &st);
    ASSERT_OK(st);
    long v = 0;
    weft_mpi_data d = weft_mpi_data_register(h39_flow, rank == 0 ? &v : NULL, sizeof v, 0);
    for (int r = 0; r < size; r++)
        ASSERT_OK(weft_mpi_insert(h39_flow, &(weft_mpi_task_desc){ .fn = h39_inc, .access = MPI_ACC({ d, WEFT_MPI_RW }),
                                                                  .naccess = 1, .rank_set = true, .rank = r }));
    pthread_t th;
    h39_off_st = 99;
    ASSERT_EQ(pthread_create(&th, NULL, h39_funneled_thread, ex), 0);
    pthread_join(th, NULL);
    ASSERT_STATUS(h39_off_st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(h39_flow), "FUNNELED") != NULL);
    ASSERT_EQ(v, 0);
    ASSERT_OK(weft_mpi_run(ex, h39_flow));
    if (rank == 0) ASSERT_EQ(v, size);
    ASSERT_OK(weft_mpi_flow_destroy(h39_flow));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- an intercommunicator ------------------------------------------------------------ */

/* An intercommunicator joins two groups: its ranks are the local group's,
 * but a message to rank r goes to rank r of the *other* group, and its
 * collectives combine the other group's values.  A flow or pool over one
 * would send its data to the wrong processes and agree on nonsense, so both
 * are refused at creation (WEFT_EINVAL, with a message), on every rank alike
 * (no hang).  Before, weft_mpi_flow_create accepted it. */
TEST(a_flow_or_pool_over_an_intercommunicator_is_refused_clearly) {
    int size = 0, rank = mpi_test_init(&size);
    if (size < 2) {
        MPI_Finalize();
        SKIP("needs two ranks");
    }
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    /* The other group's leader, by its rank in MPI_COMM_WORLD: 1 or 0. */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 39, &inter);
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(inter, "inter", &st);
    ASSERT_NULL(f);
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(NULL), "intercommunicator") != NULL);
    static const weft_mpi_pool_fn fns[] = { h39_twice };
    st = WEFT_OK;
    ASSERT_NULL(weft_mpi_pool_create(inter, &(weft_mpi_pool_config){ .fns = fns, .nfns = 1 }, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(NULL), "intercommunicator") != NULL);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
}

/* ---- a taskflow whose output is too large for a message ------------------------------- */

static long h39_tf_out;

static int h39_tf_nop(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 0;
}

static int h39_tf_rank(weft_task t, void *arg) {
    (void)arg;
    return (int)(weft_task_index(t) % 2);
}

/* The first task hands on a long; the second claims an output of 2 GiB, more
 * than a handle (a message) may be. */
static void *h39_tf_output(weft_task t, size_t *size, void *arg) {
    (void)arg;
    *size = weft_task_index(t) == 0 ? sizeof h39_tf_out : (size_t)INT32_MAX + 1;
    return &h39_tf_out;
}

/* An output too large for a message is a bad argument like a rank out of
 * range: WEFT_EINVAL, the message names the task, and f is left as it was
 * (no handle registered for the tasks before it).  It used to register the
 * first task's handle, then fail with an empty message. */
TEST(a_taskflow_output_over_int_max_bytes_is_refused_by_name_leaving_the_flow_as_it_was) {
    int size = 0, rank = mpi_test_init(&size);
    (void)rank;
    weft_executor *ex = mpi_test_executor();
    weft_taskflow *tf = weft_taskflow_create("big-out", NULL);
    weft_task a = weft_emplace(tf, h39_tf_nop, NULL), b = weft_emplace(tf, h39_tf_nop, NULL);
    weft_task_set_name(b, "huge");
    ASSERT_OK(weft_precede(a, b));
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "big-out", &st);
    ASSERT_OK(st);
    ASSERT_STATUS(weft_mpi_insert_taskflow(f, tf, &(weft_mpi_taskflow_map){ h39_tf_rank, h39_tf_output, NULL }),
                  WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "'huge'") != NULL);
    ASSERT_STATUS(weft_mpi_flow_last_error(f), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_data_owner(f, (weft_mpi_data){ 1 }), -1);
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), 0);
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    MPI_Finalize();
}
