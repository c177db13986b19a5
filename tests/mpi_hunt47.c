/* weft::mpi, round 47: out of memory, swept call by call with the allocator
 * hook (weft_set_allocator), which session 46 could not do; and the work
 * pool short of memory while it serves a thief. */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"

/* ---- an allocator that fails on this thread only ------------------------------ */

/* Allocations on the test's thread are counted; the nth since arm(n) fails
 * (0: none).  Other threads (the executor's workers) never fail. */
static _Thread_local long t_calls, t_fail_at, t_failed;
/* The pool test's trap: the first allocation of exactly trap_size bytes on
 * the thread that armed it fails, after trap_fn has run. */
static _Thread_local size_t trap_size;
static _Thread_local void (*trap_fn)(void);
static _Thread_local bool in_trap;
static atomic_llong outstanding;
static atomic_long injected; /* failures given, all threads */
static atomic_long mismatched;

#define HDR ((size_t)alignof(max_align_t))

static bool should_fail(size_t size) {
    if (trap_size && size == trap_size && !in_trap) {
        trap_size = 0;
        in_trap = true;
        trap_fn();
        in_trap = false;
        t_failed++;
        atomic_fetch_add(&injected, 1);
        return true;
    }
    if (!t_fail_at) return false;
    if (++t_calls != t_fail_at) return false;
    t_failed++;
    atomic_fetch_add(&injected, 1);
    return true;
}

static void *h_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (should_fail(size)) return NULL;
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&outstanding, (long long)size);
    return p + HDR;
}

static size_t block_size(void *ptr, size_t told) {
    size_t real;
    memcpy(&real, (unsigned char *)ptr - HDR, sizeof real);
    if (real != told) atomic_fetch_add(&mismatched, 1);
    return real;
}

static void h_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (!ptr) return;
    atomic_fetch_sub(&outstanding, (long long)block_size(ptr, size));
    free((unsigned char *)ptr - HDR);
}

static void *h_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    if (!ptr) return h_alloc(ctx, new_size);
    if (should_fail(new_size)) return NULL;
    size_t real = block_size(ptr, old_size);
    void *n = h_alloc(ctx, new_size);
    if (!n) return NULL;
    memcpy(n, ptr, real < new_size ? real : new_size);
    h_free(ctx, ptr, real);
    return n;
}

static const weft_allocator hook = { h_alloc, h_realloc, h_free, NULL };

static void arm(long n) {
    t_calls = 0;
    t_failed = 0;
    t_fail_at = n;
}

static void disarm(void) { t_fail_at = 0; }

/* ---- the sweep -------------------------------------------------------------- */

static int add_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[0] += 1;
    return 0;
}

static int copy_plus_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[1] = *(const long *)bufs[0] + 1;
    return 0;
}

/* Each call of a flow's building, failed at each of its allocations in turn:
 * it returns WEFT_ENOMEM (the flow's last error too) and leaves the flow as
 * it was, so that the same call made again with memory succeeds; the flow
 * then computes what a flow built without failures computes.  The calls are
 * local, so each rank sweeps its own allocations. */
#define SWEEP(call_status, what)                                                                               \
    for (long n_ = 1;; n_++) {                                                                                 \
        arm(n_);                                                                                               \
        weft_status s_ = (call_status);                                                                        \
        long failed_ = t_failed;                                                                               \
        disarm();                                                                                              \
        if (!failed_) {                                                                                        \
            ASSERT_OK(s_);                                                                                     \
            break;                                                                                             \
        }                                                                                                      \
        if (s_ == WEFT_OK) TEST_FAIL_("%s succeeded though allocation %ld failed", what, n_);                  \
        ASSERT_STATUS(s_, WEFT_ENOMEM);                                                                        \
        if (n_ > 200) TEST_FAIL_("%s: more than 200 allocations", what);                                     \
    }

static weft_mpi_data g_last;
static weft_status reg(weft_mpi_flow *f, void *buf, size_t size, int owner) {
    g_last = weft_mpi_data_register(f, buf, size, owner);
    if (g_last.id_ == 0) {
        ASSERT_STATUS(weft_mpi_flow_last_error(f), WEFT_ENOMEM);
        return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* A ring: each rank's value goes to the next, which adds one; weft
 * allocates the copies of the ranks that pass NULL.  With `sweep`, each call
 * is failed at each of its allocations first. */
static weft_mpi_flow *build_ring(long *slot, int rank, int size, bool sweep) {
    weft_mpi_flow *f = NULL;
    /* Creation: every rank makes the same allocations before the collective
     * MPI_Comm_dup, so each fails alike and none waits in it. */
    for (long n = sweep ? 1 : 0;; n++) {
        weft_status st = WEFT_OK;
        arm(n);
        f = weft_mpi_flow_create(MPI_COMM_WORLD, "sweep", &st);
        long failed = t_failed;
        disarm();
        if (f) {
            ASSERT_EQ(failed, 0);
            break;
        }
        ASSERT_TRUE(failed > 0);
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_TRUE(n < 50);
    }
    weft_mpi_data d[64];
    for (int r = 0; r < size; r++) {
        if (sweep) {
            SWEEP(reg(f, r == rank ? slot : NULL, sizeof *slot, r), "weft_mpi_data_register");
        } else {
            ASSERT_OK(reg(f, r == rank ? slot : NULL, sizeof *slot, r));
        }
        d[r] = g_last;
    }
    for (int s = 0; s < 3 * size + 1; s++) {
        weft_mpi_task_desc t = { .fn = copy_plus_one, .name = "step",
                                 .access = MPI_ACC({ d[s % size], WEFT_MPI_R }, { d[(s + 1) % size], WEFT_MPI_W }),
                                 .naccess = 2 };
        weft_mpi_task_desc inc = { .fn = add_one, .access = MPI_ACC({ d[(s + 1) % size], WEFT_MPI_RW }),
                                   .naccess = 1, .rank_set = true, .rank = (s + 2) % size };
        if (sweep) {
            SWEEP(weft_mpi_insert(f, &t), "weft_mpi_insert");
            SWEEP(weft_mpi_insert(f, &inc), "weft_mpi_insert");
        } else {
            ASSERT_OK(weft_mpi_insert(f, &t));
            ASSERT_OK(weft_mpi_insert(f, &inc));
        }
    }
    return f;
}

/* What the ring computes for `rank`, from 100 + r on each rank r. */
static long ring_value(int rank, int size) {
    long want[64];
    for (int r = 0; r < size; r++) want[r] = 100 + r;
    for (int s = 0; s < 3 * size + 1; s++) want[(s + 1) % size] = want[s % size] + 2;
    return want[rank];
}

/* mpi.h: each building call returns WEFT_ENOMEM with nothing added, a run
 * short of memory on any rank returns WEFT_ENOMEM on every rank with nothing
 * run, and the objects go on working.  Swept: each allocation of each call in
 * turn fails (building on every rank at once, the run on one rank at a time),
 * then the call is made again with memory; the flow computes what it
 * computes without failures, and every byte comes back with its size. */
TEST(mpi_flow_calls_fail_cleanly_at_each_allocation) {
    int size = 0, rank = mpi_test_init(&size);
    if (size > 64) SKIP("more than 64 ranks");
    weft_set_allocator(&hook);
    long long start = atomic_load(&outstanding);
    weft_executor *ex = mpi_test_executor();

    long slot = 100 + rank;
    weft_mpi_flow *f = build_ring(&slot, rank, size, true);
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_EQ(slot, ring_value(rank, size));
    ASSERT_OK(weft_mpi_flow_destroy(f));

    for (int victim = 0; victim < size; victim++) {
        slot = 100 + rank;
        f = build_ring(&slot, rank, size, false);
        for (long n = 1;; n++) {
            if (rank == victim) arm(n);
            weft_status st = weft_mpi_run(ex, f);
            long failed = rank == victim ? t_failed : 0;
            disarm();
            unsigned long long any = mpi_test_sum((uint64_t)failed);
            unsigned long long enomem = mpi_test_sum((uint64_t)(st == WEFT_ENOMEM));
            if (st != WEFT_ENOMEM) ASSERT_OK(st);
            /* The same status on every rank; a failure past the sealing (a
             * worker's record for a task: tried again) may cost no status. */
            ASSERT_TRUE(enomem == 0 || enomem == (unsigned long long)size);
            if (st == WEFT_OK) {
                ASSERT_EQ(slot, ring_value(rank, size));
                slot = 100 + rank;
            }
            if (!any) break;
            ASSERT_TRUE(n < 100);
        }
        ASSERT_OK(weft_mpi_flow_destroy(f));
    }
    ASSERT_GT(atomic_load(&injected), 3 * size);

    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&mismatched), 0);
    ASSERT_EQ(atomic_load(&outstanding), start);
    weft_set_allocator(NULL);
    MPI_Finalize();
}

/* Pool creation and submission swept the same way. */
static int twice(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)in_size; (void)out_size; (void)arg;
    *(uint64_t *)out = *(const uint64_t *)in * 2;
    return 0;
}

static const weft_mpi_pool_fn twice_fns[] = { twice };

TEST(mpi_pool_calls_fail_cleanly_at_each_allocation) {
    int size = 0, rank = mpi_test_init(&size);
    weft_set_allocator(&hook);
    long long start = atomic_load(&outstanding);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_pool *p = NULL;
    for (long n = 1;; n++) {
        weft_status st = WEFT_OK;
        arm(n);
        p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = twice_fns, .nfns = 1 }, &st);
        long failed = t_failed;
        disarm();
        if (p) {
            ASSERT_EQ(failed, 0);
            break;
        }
        ASSERT_TRUE(failed > 0);
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_TRUE(n < 50);
    }
    enum { N = 40 };
    uint64_t in[N], out[N];
    for (int run = 0; run < 2; run++) {
        int mine = rank == 0 ? N : rank % 2 ? 3 : 0;
        for (int i = 0; i < mine; i++) {
            in[i] = (uint64_t)(1000 * rank + i + run);
            out[i] = 0;
            SWEEP(weft_mpi_pool_submit(p, twice, &in[i], sizeof in[i], &out[i], sizeof out[i]),
                  "weft_mpi_pool_submit");
        }
        ASSERT_OK(weft_mpi_pool_run(ex, p));
        for (int i = 0; i < mine; i++) ASSERT_EQ(out[i], in[i] * 2);
    }
    ASSERT_GT(atomic_load(&injected), 2); /* creation: 3 allocations */
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&mismatched), 0);
    ASSERT_EQ(atomic_load(&outstanding), start);
    weft_set_allocator(NULL);
    MPI_Finalize();
}

/* ---- the pool short of memory while a thief asks ------------------------------- */

/* A pool task: in 200 bytes, out 8 (a batch of one such task is a message of
 * 16 + 32 + 208 + 16 = 272 bytes: the header, a record, the input and the
 * output padded to 16; src/mpi/pool.c). */
enum { IN_SIZE = 200, OUT_SIZE = 8, BATCH_OF_ONE = 16 + 32 + 208 + 16 };

static int sum_input(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)out_size; (void)arg;
    uint64_t s = 0;
    for (size_t i = 0; i < in_size; i++) s += ((const unsigned char *)in)[i];
    *(uint64_t *)out = s;
    return 0;
}

static const weft_mpi_pool_fn pool_fns[] = { sum_input };

static weft_executor *g_ex;
static atomic_int blocker_started, blocker_go;

static int blocker(weft_ctx *cx, void *arg) {
    (void)cx; (void)arg;
    atomic_store(&blocker_started, 1);
    while (!atomic_load(&blocker_go)) sched_yield();
    return 0;
}

/* Runs inside the allocation of the batch for a thief, on the progress
 * thread, after it claimed the task from the tail: the rank's one worker is
 * let go, finds every task of its own claimed, and leaves; wait_all waits
 * until it has. */
static void let_the_worker_drain(void) {
    atomic_store(&blocker_go, 1);
    ASSERT_OK(weft_executor_wait_all(g_ex));
}

/* mpi.h: "Short of memory, a rank answers a thief 'nothing left' (it runs the
 * tasks itself) ... slower, never wrong."  The batch was claimed for the
 * thief, the memory for its message failed and the tasks went back; if this
 * rank's runners had meanwhile found nothing to claim and left, nobody ran
 * them: the run never ended (every rank waited for ever). */
TEST(a_pool_rank_short_of_memory_for_a_thiefs_batch_runs_the_tasks_itself) {
    int size = 0, rank = mpi_test_init(&size);
    weft_set_allocator(&hook);
    long long start = atomic_load(&outstanding);
    weft_status st = WEFT_OK;
    g_ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_OK(st);
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = pool_fns, .nfns = 1 },
                                            &st);
    ASSERT_OK(st);
    unsigned char in[IN_SIZE];
    uint64_t out = 0, want = 0;
    for (int i = 0; i < IN_SIZE; i++) want += in[i] = (unsigned char)(i * 7 + 3);
    if (rank == 0) {
        ASSERT_OK(weft_mpi_pool_submit(p, sum_input, in, sizeof in, &out, OUT_SIZE));
    }
    if (rank == 0 && size > 1) {
        /* The one worker busy, so the pool's runner waits in the queue. */
        ASSERT_OK(weft_silent_async(g_ex, blocker, NULL));
        while (!atomic_load(&blocker_started)) sched_yield();
        trap_size = BATCH_OF_ONE;
        trap_fn = let_the_worker_drain;
    }
    ASSERT_OK(weft_mpi_pool_run(g_ex, p));
    long trapped = t_failed;
    trap_size = 0;
    atomic_store(&blocker_go, 1);
    if (rank == 0) {
        ASSERT_EQ(out, want);
    }
    /* The trap went off on rank 0 unless rank 0's runner took the task first
     * (it cannot: the worker was busy until the trap let it go). */
    ASSERT_EQ(mpi_test_sum((uint64_t)trapped), size > 1 ? 1ull : 0ull);
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(g_ex);
    ASSERT_EQ(atomic_load(&mismatched), 0);
    ASSERT_EQ(atomic_load(&outstanding), start);
    weft_set_allocator(NULL);
    MPI_Finalize();
}

/* ---- awkward but legal pools --------------------------------------------------- */

static atomic_int bare_runs;
static int count_bare(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size, void *arg) {
    (void)cx; (void)in; (void)out; (void)arg;
    if (in_size != 0 || out_size != 0) return 1;
    atomic_fetch_add(&bare_runs, 1);
    return 0;
}

static const weft_mpi_pool_fn bare_fns[] = { count_bare };

/* Tasks with no input and no output (NULL in and out, sizes 0), all on the
 * last rank, stolen in batches of one by every other rank; runs with no
 * task anywhere before, between and after; each task runs exactly once over
 * all ranks. */
TEST(pool_tasks_without_input_or_output_and_empty_runs_each_run_once) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_pool *p = weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = bare_fns, .nfns = 1,
                                                                                     .batch_max = 1 }, &st);
    ASSERT_OK(st);
    ASSERT_OK(weft_mpi_pool_run(ex, p)); /* nothing anywhere */
    enum { N = 300 };
    for (int run = 0; run < 2; run++) {
        atomic_store(&bare_runs, 0);
        if (rank == size - 1)
            for (int i = 0; i < N; i++) ASSERT_OK(weft_mpi_pool_submit(p, count_bare, NULL, 0, NULL, 0));
        ASSERT_OK(weft_mpi_pool_run(ex, p));
        ASSERT_EQ(mpi_test_sum((uint64_t)atomic_load(&bare_runs)), (uint64_t)N);
        weft_mpi_pool_figures pf;
        ASSERT_OK(weft_mpi_pool_stats(p, &pf));
        ASSERT_EQ(mpi_test_sum(pf.tasks_run), (uint64_t)N);
        ASSERT_EQ(mpi_test_sum(pf.tasks_stolen), mpi_test_sum(pf.tasks_given));
        ASSERT_OK(weft_mpi_pool_run(ex, p)); /* nothing again: the last run's tasks are gone */
        ASSERT_OK(weft_mpi_pool_stats(p, &pf));
        ASSERT_EQ(pf.tasks_run, 0);
    }
    ASSERT_OK(weft_mpi_pool_destroy(p));
    weft_executor_destroy(ex);
    MPI_Finalize();
}
