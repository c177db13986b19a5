/* weft::mpi and the allocator hook (weft_set_allocator): the MPI layer's
 * memory comes from the installed allocator and goes back to it with the size
 * it was allocated with, and an allocator that fails makes the MPI calls
 * report WEFT_ENOMEM.  The MPI library's own memory is its business. */
#define _POSIX_C_SOURCE 200809L
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_util.h"

/* ---- the counting allocator -------------------------------------------------- */

static struct {
    atomic_long calls;         /* successful allocs and reallocs */
    atomic_long frees;         /* blocks freed */
    atomic_llong outstanding;  /* bytes handed out and not yet freed */
    atomic_long size_mismatch; /* free or realloc told a size other than the block's */
    atomic_long failures;      /* calls failed on purpose */
} A;

/* Fail every alloc and realloc made by this thread.  Per thread: the calls
 * under test run on the test's thread, while the executor's workers may
 * allocate for themselves at any time and must not fail the test. */
static _Thread_local bool failing;

/* Each block carries its size in a header, so that free can check what it is
 * told (and a block from elsewhere would show as garbage). */
#define HDR ((size_t)alignof(max_align_t))

static void *c_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (failing) {
        atomic_fetch_add(&A.failures, 1);
        return NULL;
    }
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&A.outstanding, (long long)size);
    atomic_fetch_add(&A.calls, 1);
    return p + HDR;
}

static size_t block_size(void *ptr, size_t told) {
    size_t real;
    memcpy(&real, (unsigned char *)ptr - HDR, sizeof real);
    if (real != told) atomic_fetch_add(&A.size_mismatch, 1);
    return real;
}

static void c_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (!ptr) return;
    atomic_fetch_sub(&A.outstanding, (long long)block_size(ptr, size));
    atomic_fetch_add(&A.frees, 1);
    free((unsigned char *)ptr - HDR);
}

static void *c_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    if (!ptr) return c_alloc(ctx, new_size);
    void *n = c_alloc(ctx, new_size);
    if (!n) return NULL;
    size_t real = block_size(ptr, old_size);
    memcpy(n, ptr, real < new_size ? real : new_size);
    c_free(ctx, ptr, real);
    return n;
}

static const weft_allocator counting = { c_alloc, c_realloc, c_free, NULL };

/* Hook calls so far: a difference across one MPI-layer call is its own. */
static long hook_calls(void) { return atomic_load(&A.calls) + atomic_load(&A.failures); }

/* Everything weft handed out came back, each block with its size. */
static void assert_all_returned(long long start) {
    long mismatched = atomic_load(&A.size_mismatch);
    long long outstanding = atomic_load(&A.outstanding);
    ASSERT_EQ(mismatched, 0);
    ASSERT_EQ(outstanding, start);
}

/* ---- what the tests run ------------------------------------------------------- */

static int copy_plus_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[1] = *(const long *)bufs[0] + 1;
    return 0;
}

static int add_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[0] += 1;
    return 0;
}

/* Naps 500 us (off the CPU: many ranks share two cores), so that a pool's
 * tasks last long enough to be stolen. */
static int times_three_plus_one(weft_ctx *cx, const void *in, size_t in_size, void *out, size_t out_size,
                                void *arg) {
    (void)cx; (void)in_size; (void)out_size; (void)arg;
    nanosleep(&(struct timespec){ .tv_nsec = 500000 }, NULL);
    *(uint64_t *)out = *(const uint64_t *)in * 3 + 1;
    return 0;
}

static const weft_mpi_pool_fn pool_fns[] = { times_three_plus_one };

static weft_mpi_pool *new_pool(weft_status *st) {
    return weft_mpi_pool_create(MPI_COMM_WORLD, &(weft_mpi_pool_config){ .fns = pool_fns, .nfns = 1 }, st);
}

/* A value passed around every rank in turn (each rank registers a slot and
 * NULL for the others': weft allocates those copies), with named tasks. */
static void run_ring(weft_executor *ex, int rank, int size) {
    weft_status st = WEFT_OK;
    long before = hook_calls();
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "ring", &st);
    ASSERT_OK(st);
    ASSERT_GT(hook_calls(), before);
    long slot = 0;
    weft_mpi_data d[64];
    for (int r = 0; r < size; r++) {
        before = hook_calls();
        d[r] = weft_mpi_data_register(f, r == rank ? &slot : NULL, sizeof slot, r);
        ASSERT_NE(d[r].id_, 0);
        ASSERT_GT(hook_calls(), before);
    }
    int steps = 2 * size + 1;
    for (int s = 0; s < steps; s++)
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = copy_plus_one, .name = "step",
            .access = MPI_ACC({ d[s % size], WEFT_MPI_R }, { d[(s + 1) % size], WEFT_MPI_W }), .naccess = 2 }));
    for (int run = 0; run < 2; run++) {
        if (rank == 0) slot = 0;
        ASSERT_OK(weft_mpi_run(ex, f));
        long want = 0;
        for (int s = 0; s < steps; s++)
            if ((s + 1) % size == rank) want = s + 1;
        ASSERT_EQ(slot, want);
    }
    ASSERT_OK(weft_mpi_flow_destroy(f));
}

static int noop(weft_ctx *cx, void *arg) {
    (void)cx; (void)arg;
    return 0;
}

static int rank_by_index(weft_task t, void *arg) { return (int)(weft_task_index(t) % (size_t)*(const int *)arg); }

/* A chain of ordinary tasks, one per rank in turn. */
static void run_taskflow(weft_executor *ex, int size) {
    weft_taskflow *tf = weft_taskflow_create("chain", NULL);
    ASSERT_NOT_NULL(tf);
    weft_task prev = weft_emplace(tf, noop, NULL);
    for (int i = 1; i < 6; i++) {
        weft_task t = weft_emplace(tf, noop, NULL);
        ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, NULL, &st);
    ASSERT_OK(st);
    long before = hook_calls();
    ASSERT_OK(weft_mpi_insert_taskflow(f, tf, &(weft_mpi_taskflow_map){ .rank = rank_by_index, .arg = &size }));
    ASSERT_GT(hook_calls(), before);
    ASSERT_OK(weft_mpi_run(ex, f));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_taskflow_destroy(tf);
}

/* All the tasks on rank 0, so that the other ranks steal batches (messages
 * weft allocates, sends and frees). */
static void run_pool(weft_executor *ex, int rank, int size) {
    enum { N = 200 };
    static uint64_t in[N], out[N];
    weft_status st = WEFT_OK;
    uint64_t stolen = 0;
    long before = hook_calls();
    weft_mpi_pool *p = new_pool(&st);
    ASSERT_OK(st);
    ASSERT_GT(hook_calls(), before);
    for (int run = 0; run < 2; run++) {
        if (rank == 0)
            for (int i = 0; i < N; i++) {
                in[i] = (uint64_t)(i + run);
                ASSERT_OK(weft_mpi_pool_submit(p, times_three_plus_one, &in[i], sizeof in[i], &out[i], sizeof out[i]));
            }
        ASSERT_OK(weft_mpi_pool_run(ex, p));
        if (rank == 0)
            for (int i = 0; i < N; i++) ASSERT_EQ(out[i], in[i] * 3 + 1);
        weft_mpi_pool_figures pf;
        ASSERT_OK(weft_mpi_pool_stats(p, &pf));
        stolen += pf.tasks_stolen;
    }
    if (size > 1) ASSERT_GT(mpi_test_sum(stolen), 0);
    ASSERT_OK(weft_mpi_pool_destroy(p));
}

/* ---- the tests ---------------------------------------------------------------- */

/* Flows, taskflows inserted into flows and pools, built, run twice and
 * destroyed: each creation call went to the hook, and at the end every byte
 * the hook handed out is back, each block freed with its own size. */
TEST(mpi_memory_comes_from_the_allocator_hook_and_returns_with_its_size) {
    int size = 0, rank = mpi_test_init(&size);
    if (size > 64) SKIP("more than 64 ranks");
    weft_set_allocator(&counting); /* before weft's first allocation */
    long long start = atomic_load(&A.outstanding);
    weft_executor *ex = mpi_test_executor();
    run_ring(ex, rank, size);
    run_taskflow(ex, size);
    run_pool(ex, rank, size);
    weft_executor_destroy(ex);
    assert_all_returned(start);
    long frees = atomic_load(&A.frees);
    ASSERT_GT(frees, 0);
    weft_set_allocator(NULL);
    MPI_Finalize();
}

/* With an allocator that fails every call, creating a flow or a pool,
 * registering, inserting, preparing a run and submitting to a pool each
 * return WEFT_ENOMEM (never succeed around the hook); with the allocator
 * back, the same objects work and nothing leaked. */
TEST(mpi_calls_report_out_of_memory_when_the_allocator_fails) {
    int size = 0, rank = mpi_test_init(&size);
    weft_set_allocator(&counting);
    long long start = atomic_load(&A.outstanding);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;

    failing = true;
    ASSERT_NULL(weft_mpi_flow_create(MPI_COMM_WORLD, "no memory", &st));
    ASSERT_STATUS(st, WEFT_ENOMEM);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(NULL), "out of memory") != NULL);
    st = WEFT_OK;
    ASSERT_NULL(new_pool(&st));
    ASSERT_STATUS(st, WEFT_ENOMEM);
    failing = false;

    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "flow", &st);
    ASSERT_OK(st);
    long x = 41;
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &x : NULL, sizeof x, 0);
    ASSERT_NE(d.id_, 0);
    weft_mpi_task_desc inc = { .fn = add_one, .name = "inc", .access = MPI_ACC({ d, WEFT_MPI_RW }), .naccess = 1 };
    failing = true;
    ASSERT_EQ(weft_mpi_data_register(f, rank == 0 ? &x : NULL, sizeof x, 0).id_, 0);
    ASSERT_STATUS(weft_mpi_flow_last_error(f), WEFT_ENOMEM);
    ASSERT_STATUS(weft_mpi_insert(f, &inc), WEFT_ENOMEM);
    failing = false;
    ASSERT_OK(weft_mpi_insert(f, &inc));
    failing = true;
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ENOMEM); /* every rank fails to seal, and all agree */
    failing = false;
    ASSERT_OK(weft_mpi_run(ex, f));
    if (rank == 0) ASSERT_EQ(x, 42);
    ASSERT_OK(weft_mpi_flow_destroy(f));

    weft_mpi_pool *p = new_pool(&st);
    ASSERT_OK(st);
    uint64_t in = 5, out = 0;
    failing = true;
    ASSERT_STATUS(weft_mpi_pool_submit(p, times_three_plus_one, &in, sizeof in, &out, sizeof out), WEFT_ENOMEM);
    failing = false;
    ASSERT_OK(weft_mpi_pool_submit(p, times_three_plus_one, &in, sizeof in, &out, sizeof out));
    ASSERT_OK(weft_mpi_pool_run(ex, p));
    ASSERT_EQ(out, 16);
    ASSERT_OK(weft_mpi_pool_destroy(p));

    weft_executor_destroy(ex);
    long failures = atomic_load(&A.failures);
    ASSERT_GT(failures, 0);
    assert_all_returned(start);
    weft_set_allocator(NULL);
    MPI_Finalize();
}
