/* Distributed flows: data flow across ranks, caching, failures, errors. */
#include <string.h>

#include "mpi_util.h"

static int add_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[0] += 1;
    return 0;
}

static int copy_first(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[1] = *(const long *)bufs[0];
    return 0;
}

static int set_seven(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[0] = 7;
    return 0;
}

static int fail_42(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)bufs; (void)arg;
    return 42;
}

static weft_mpi_flow *new_flow(const char *name) {
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, name, &st);
    if (!f) TEST_FAIL_("flow: %s: %s", weft_strerror(st), weft_mpi_flow_error_message(NULL));
    return f;
}

static weft_status insert_on(weft_mpi_flow *f, int rank, weft_mpi_task_fn fn, const char *name,
                             const weft_mpi_access *acc, size_t n) {
    return weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = fn, .name = name, .access = acc, .naccess = n,
                                                     .rank_set = true, .rank = rank });
}

/* x (owned by rank 0) is incremented by a task on every rank in turn, via a
 * per-rank accumulator: each step reads x and writes the next rank's slot. */
static int copy_plus_one(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx; (void)arg;
    *(long *)bufs[1] = *(const long *)bufs[0] + 1;
    return 0;
}

TEST(chain_across_ranks_gives_the_serial_result) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "chain", &st);
    ASSERT_OK(st);
    long slot = 0;
    weft_mpi_data *d = calloc((size_t)size, sizeof *d);
    for (int r = 0; r < size; r++) d[r] = weft_mpi_data_register(f, r == rank ? &slot : NULL, sizeof slot, r);
    int steps = 3 * size + 1;
    for (int s = 0; s < steps; s++) {
        weft_mpi_data from = d[s % size], to = d[(s + 1) % size];
        ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = copy_plus_one, .name = "step",
            .access = MPI_ACC({ from, WEFT_MPI_R }, { to, WEFT_MPI_W }), .naccess = 2 }));
    }
    ASSERT_OK(weft_mpi_run(ex, f));
    /* Step s leaves s + 1 in slot (s + 1) % size: each slot holds its last write. */
    long want = 0;
    for (int s = 0; s < steps; s++)
        if ((s + 1) % size == rank) want = s + 1;
    ASSERT_EQ(slot, want);
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    /* Each step reads the value the previous step wrote on another rank. */
    ASSERT_EQ(mpi_test_sum(ms.messages_sent), size > 1 ? (uint64_t)steps : 0);
    ASSERT_EQ(mpi_test_sum(ms.messages_received), size > 1 ? (uint64_t)steps : 0);
    ASSERT_EQ(mpi_test_sum(ms.tasks_run), (uint64_t)steps);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    free(d);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- random graphs against a serial replay ------------------------------------- */

enum { RG_HANDLES = 12, RG_TASKS = 160 };

typedef struct rg_task {
    int rank;
    int nacc;
    weft_mpi_access acc[3];
    uint32_t hi[3];
    long id;
} rg_task;

/* Every written handle gets a value mixed from the task and all it read. */
static void rg_apply(const rg_task *t, long *const *vals) {
    unsigned long in = (unsigned long)t->id * 1000003u; /* unsigned: wraps, no overflow */
    for (int i = 0; i < t->nacc; i++)
        if (t->acc[i].mode & WEFT_MPI_R) in = in * 31u + (unsigned long)*vals[i];
    for (int i = 0; i < t->nacc; i++)
        if (t->acc[i].mode & WEFT_MPI_W) *vals[i] = (long)((in + (unsigned long)i) >> 1);
}

static int rg_run(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)cx;
    rg_apply(arg, (long *const *)bufs);
    return 0;
}

/* The transfers the data flow needs, counted independently of weft: a read
 * on a rank without the latest version fetches it; a write leaves the only
 * valid copy on the writer; a value left away from its owner goes home. */
static uint64_t rg_expected_messages(const rg_task *tasks, const int *owner, int size) {
    uint64_t msgs = 0;
    unsigned valid[RG_HANDLES]; /* bit r: rank r holds the latest version */
    int holder[RG_HANDLES];
    for (int h = 0; h < RG_HANDLES; h++) valid[h] = 1u << owner[h], holder[h] = owner[h];
    for (int t = 0; t < RG_TASKS; t++) {
        const rg_task *k = &tasks[t];
        for (int i = 0; i < k->nacc; i++)
            if ((k->acc[i].mode & WEFT_MPI_R) && !(valid[k->hi[i]] & (1u << k->rank))) {
                msgs++;
                valid[k->hi[i]] |= 1u << k->rank;
            }
        for (int i = 0; i < k->nacc; i++)
            if (k->acc[i].mode & WEFT_MPI_W) valid[k->hi[i]] = 1u << k->rank, holder[k->hi[i]] = k->rank;
    }
    for (int h = 0; h < RG_HANDLES; h++) msgs += holder[h] != owner[h];
    return msgs;
}

static void rg_make(uint64_t *seed, int size, int *owner, rg_task *tasks) {
    for (int h = 0; h < RG_HANDLES; h++) owner[h] = (int)(test_rand(seed) % (uint64_t)size);
    for (int t = 0; t < RG_TASKS; t++) {
        rg_task *k = &tasks[t];
        k->id = t;
        k->nacc = 1 + (int)(test_rand(seed) % 3);
        bool writes = false;
        for (int i = 0; i < k->nacc; i++) {
            k->hi[i] = (uint32_t)(test_rand(seed) % RG_HANDLES);
            k->acc[i].mode = (weft_mpi_mode)(1 + test_rand(seed) % 3);
            writes |= (k->acc[i].mode & WEFT_MPI_W) != 0;
        }
        /* A quarter of the tasks run away from their data's owner. */
        bool explicit_rank = test_rand(seed) % 4 == 0;
        k->rank = explicit_rank ? (int)(test_rand(seed) % (uint64_t)size) : -1;
        if (k->rank < 0) {
            k->rank = owner[k->hi[0]];
            for (int i = k->nacc - 1; i >= 0; i--)
                if (k->acc[i].mode & WEFT_MPI_W) k->rank = owner[k->hi[i]];
        }
        (void)writes;
    }
}

TEST(random_graphs_match_the_serial_run) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    uint64_t seed = test_seed();
    int rounds = (int)test_scale(6);
    for (int round = 0; round < rounds; round++) {
        int owner[RG_HANDLES];
        static rg_task tasks[RG_TASKS];
        rg_make(&seed, size, owner, tasks);
        long mine[RG_HANDLES], serial[RG_HANDLES];
        weft_mpi_flow *f = new_flow("random");
        weft_mpi_data d[RG_HANDLES];
        for (int h = 0; h < RG_HANDLES; h++) {
            mine[h] = serial[h] = h * 7 + 1;
            d[h] = weft_mpi_data_register(f, owner[h] == rank ? &mine[h] : NULL, sizeof(long), owner[h]);
            ASSERT_NE(d[h].id_, 0);
        }
        for (int t = 0; t < RG_TASKS; t++) {
            rg_task *k = &tasks[t];
            for (int i = 0; i < k->nacc; i++) k->acc[i].data = d[k->hi[i]];
            ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = rg_run, .arg = k, .access = k->acc,
                .naccess = (size_t)k->nacc, .rank_set = true, .rank = k->rank }));
            long *vals[3];
            for (int i = 0; i < k->nacc; i++) vals[i] = &serial[k->hi[i]];
            rg_apply(k, vals);
        }
        ASSERT_OK(weft_mpi_run(ex, f));
        for (int h = 0; h < RG_HANDLES; h++)
            if (owner[h] == rank && mine[h] != serial[h]) TEST_FAIL_("round %d handle %d: %ld, want %ld", round, h, mine[h], serial[h]);
        weft_mpi_stats ms;
        ASSERT_OK(weft_mpi_flow_stats(f, &ms));
        uint64_t want = size > 1 ? rg_expected_messages(tasks, owner, size) : 0;
        ASSERT_EQ(mpi_test_sum(ms.messages_sent), want);
        ASSERT_EQ(mpi_test_sum(ms.messages_received), want);
        ASSERT_EQ(mpi_test_sum(ms.tasks_run), RG_TASKS);
        ASSERT_OK(weft_mpi_flow_destroy(f));
    }
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- caching ---------------------------------------------------------------------- */

TEST(cached_copy_is_invalidated_by_a_later_write) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_flow *f = new_flow("cache");
    long x = 1, y[3] = { 0, 0, 0 };
    int far = size - 1;
    weft_mpi_data dx = weft_mpi_data_register(f, rank == 0 ? &x : NULL, sizeof x, 0);
    weft_mpi_data dy[3];
    for (int i = 0; i < 3; i++) dy[i] = weft_mpi_data_register(f, rank == far ? &y[i] : NULL, sizeof(long), far);
    /* Two reads of x on the far rank: one transfer; then x is rewritten on
     * rank 0, and the next read there must fetch the new value. */
    ASSERT_OK(insert_on(f, far, copy_first, "read1", MPI_ACC({ dx, WEFT_MPI_R }, { dy[0], WEFT_MPI_W }), 2));
    ASSERT_OK(insert_on(f, far, add_one, "touch", MPI_ACC({ dy[1], WEFT_MPI_RW }), 1));
    ASSERT_OK(insert_on(f, far, copy_first, "read2", MPI_ACC({ dx, WEFT_MPI_R }, { dy[1], WEFT_MPI_W }), 2));
    ASSERT_OK(insert_on(f, 0, set_seven, "write", MPI_ACC({ dx, WEFT_MPI_W }), 1));
    ASSERT_OK(insert_on(f, far, copy_first, "read3", MPI_ACC({ dx, WEFT_MPI_R }, { dy[2], WEFT_MPI_W }), 2));
    ASSERT_OK(weft_mpi_run(ex, f));
    if (rank == far) {
        ASSERT_EQ(y[0], size > 1 ? 1 : 1);
        ASSERT_EQ(y[1], 1);
        ASSERT_EQ(y[2], 7);
    }
    if (rank == 0) ASSERT_EQ(x, 7);
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(mpi_test_sum(ms.messages_sent), size > 1 ? 2 : 0);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

TEST(data_written_away_from_its_owner_goes_home) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_flow *f = new_flow("home");
    long x = 5;
    weft_mpi_data dx = weft_mpi_data_register(f, rank == 0 ? &x : NULL, sizeof x, 0);
    for (int r = 0; r < size; r++) ASSERT_OK(insert_on(f, (r + 1) % size, add_one, "inc", MPI_ACC({ dx, WEFT_MPI_RW }), 1));
    /* Three runs: each starts from the owner's value. */
    for (int run = 0; run < 3; run++) ASSERT_OK(weft_mpi_run(ex, f));
    if (rank == 0) ASSERT_EQ(x, 5 + 3 * size);
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(ms.runs, 3);
    /* Per run: a hop to each next rank, the last of which is home. */
    ASSERT_EQ(mpi_test_sum(ms.messages_sent), size > 1 ? (uint64_t)size : 0);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

/* ---- failures and errors ---------------------------------------------------------- */

TEST(a_failing_task_fails_the_run_on_every_rank_with_its_name) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_mpi_flow *f = new_flow("fail");
    long v = 0;
    weft_mpi_data *d = calloc((size_t)size, sizeof *d);
    for (int r = 0; r < size; r++) d[r] = weft_mpi_data_register(f, r == rank ? &v : NULL, sizeof v, r);
    int bad = size - 1;
    for (int r = 0; r < size; r++)
        ASSERT_OK(insert_on(f, r, r == bad ? fail_42 : add_one, r == bad ? "the-bad-one" : "ok",
                            MPI_ACC({ d[r], WEFT_MPI_RW }), 1));
    /* A later task that needs the failed one's data: still no hang. */
    ASSERT_OK(insert_on(f, 0, copy_first, "after", MPI_ACC({ d[bad], WEFT_MPI_R }, { d[0], WEFT_MPI_W }), 2));
    ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_ETASK);
    char want[128];
    snprintf(want, sizeof want, "task 'the-bad-one' failed on rank %d with code 42", bad);
    ASSERT_STREQ(weft_mpi_flow_error_message(f), want);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    free(d);
    weft_executor_destroy(ex);
    MPI_Finalize();
}

TEST(mismatched_graphs_are_an_error_on_every_rank_not_a_hang) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    long v = 0;
    for (int variant = 0; variant < 2; variant++) {
        weft_mpi_flow *f = new_flow("mismatch");
        weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &v : NULL, sizeof v, 0);
        ASSERT_OK(insert_on(f, 0, add_one, "a", MPI_ACC({ d, WEFT_MPI_RW }), 1));
        /* Variant 0: the last rank inserts one task more; variant 1: it
         * declares a read where the others declare a write. */
        if (rank == size - 1 && variant == 0) ASSERT_OK(insert_on(f, 0, add_one, "extra", MPI_ACC({ d, WEFT_MPI_RW }), 1));
        weft_mpi_mode m = rank == size - 1 && variant == 1 ? WEFT_MPI_R : WEFT_MPI_RW;
        ASSERT_OK(insert_on(f, 0, add_one, "b", MPI_ACC({ d, m }), 1));
        if (size == 1) {
            ASSERT_OK(weft_mpi_run(ex, f));
        } else {
            ASSERT_STATUS(weft_mpi_run(ex, f), WEFT_EINVAL);
            ASSERT_TRUE(strstr(weft_mpi_flow_error_message(f), "different graphs") != NULL);
            /* "the same text on every rank" (mpi.h): rank 0's, compared on each. */
            char text[512] = {0}, mine[512] = {0};
            snprintf(text, sizeof text, "%s", weft_mpi_flow_error_message(f));
            snprintf(mine, sizeof mine, "%s", text);
            MPI_Bcast(text, (int)sizeof text, MPI_CHAR, 0, MPI_COMM_WORLD);
            ASSERT_STREQ(mine, text);
        }
        ASSERT_OK(weft_mpi_flow_destroy(f));
    }
    weft_executor_destroy(ex);
    MPI_Finalize();
}

TEST(bad_arguments_give_a_status) {
    int size = 0, rank = mpi_test_init(&size);
    long v = 0;
    weft_mpi_flow *f = new_flow("args");
    ASSERT_EQ(weft_mpi_data_register(NULL, &v, sizeof v, 0).id_, 0);
    ASSERT_EQ(weft_mpi_data_register(f, &v, 0, 0).id_, 0);
    ASSERT_STATUS(weft_mpi_flow_last_error(f), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_data_register(f, &v, sizeof v, size).id_, 0);
    ASSERT_EQ(weft_mpi_data_register(f, &v, sizeof v, -1).id_, 0);
    ASSERT_EQ(weft_mpi_data_register(f, NULL, sizeof v, rank).id_, 0); /* the owner needs a buffer */
    weft_mpi_data d = weft_mpi_data_register(f, rank == 0 ? &v : NULL, sizeof v, 0);
    ASSERT_NE(d.id_, 0);
    ASSERT_OK(weft_mpi_flow_last_error(f));
    ASSERT_EQ(weft_mpi_data_owner(f, d), 0);
    ASSERT_EQ(weft_mpi_data_owner(f, WEFT_MPI_DATA_NULL), -1);
    ASSERT_NULL(weft_mpi_data_ptr(f, (weft_mpi_data){ 99 }));
    ASSERT_STATUS(weft_mpi_insert(NULL, &(weft_mpi_task_desc){ .fn = add_one }), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_insert(f, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = NULL }), WEFT_EINVAL);
    ASSERT_STATUS(insert_on(f, size, add_one, "x", MPI_ACC({ d, WEFT_MPI_RW }), 1), WEFT_EINVAL);
    ASSERT_STATUS(insert_on(f, 0, add_one, "x", MPI_ACC({ (weft_mpi_data){ 5 }, WEFT_MPI_RW }), 1), WEFT_EINVAL);
    ASSERT_STATUS(insert_on(f, 0, add_one, "x", MPI_ACC({ d, (weft_mpi_mode)4 }), 1), WEFT_EINVAL);
    ASSERT_STATUS(insert_on(f, 0, add_one, "x", NULL, 1), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_flow_num_tasks(f), 0);
    ASSERT_OK(insert_on(f, 0, add_one, "x", MPI_ACC({ d, WEFT_MPI_RW }), 1));
    ASSERT_STATUS(weft_mpi_run(NULL, NULL), WEFT_EINVAL);
    weft_executor *ex = mpi_test_executor();
    ASSERT_OK(weft_mpi_run(ex, f));
    /* The graph is fixed by its first run. */
    ASSERT_STATUS(insert_on(f, 0, add_one, "x", MPI_ACC({ d, WEFT_MPI_RW }), 1), WEFT_EBUSY);
    ASSERT_EQ(weft_mpi_data_register(f, &v, sizeof v, rank).id_, 0);
    ASSERT_STATUS(weft_mpi_flow_last_error(f), WEFT_EBUSY);
    ASSERT_STATUS(weft_mpi_flow_stats(f, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_mpi_flow_rank(NULL), -1);
    ASSERT_EQ(weft_mpi_flow_size(f), size);
    ASSERT_OK(weft_mpi_flow_destroy(f));
    ASSERT_OK(weft_mpi_flow_destroy(NULL));
    weft_executor_destroy(ex);
    MPI_Finalize();
}

TEST(mpi_not_initialised_is_refused_clearly) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_mpi_flow_create(MPI_COMM_WORLD, "early", &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(NULL), "not initialised") != NULL);
    mpi_test_init(NULL);
    MPI_Finalize();
}

TEST(thread_level_single_is_refused_clearly) {
    int provided = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_mpi_flow_create(MPI_COMM_WORLD, "single", &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_mpi_flow_error_message(NULL), "MPI_THREAD_FUNNELED") != NULL);
    MPI_Finalize();
}
