/* Distributed flows on a stencil: a 1-D heat equation over blocks spread
 * across the ranks, against the same computation in one process. */
#include <string.h>

#include "mpi_util.h"

enum { ST_BLOCKS = 8, ST_LEN = 64, ST_STEPS = 12 };

typedef struct block { double v[ST_LEN]; } block;

/* next = one Jacobi step of cur, with its neighbours' edge values (bufs:
 * left, cur, right, next; left/right NULL at the ends). */
static void step(const block *l, const block *c, const block *r, block *out) {
    for (int i = 0; i < ST_LEN; i++) {
        double left = i > 0 ? c->v[i - 1] : l ? l->v[ST_LEN - 1] : c->v[i];
        double right = i < ST_LEN - 1 ? c->v[i + 1] : r ? r->v[0] : c->v[i];
        out->v[i] = 0.25 * left + 0.5 * c->v[i] + 0.25 * right;
    }
}

static int st_task(weft_ctx *cx, void *const *bufs, void *arg) {
    const int *b = arg; /* the block index */
    int n = 0;
    const block *l = *b > 0 ? bufs[n++] : NULL;
    const block *c = bufs[n++];
    const block *r = *b < ST_BLOCKS - 1 ? bufs[n++] : NULL;
    step(l, c, r, bufs[n]);
    return 0;
}

static void st_init(block *b, int bi) {
    for (int i = 0; i < ST_LEN; i++) b->v[i] = (bi * ST_LEN + i) % 17 == 0 ? 100.0 : (double)(i % 5);
}

TEST(stencil_across_ranks_matches_one_process) {
    int size = 0, rank = mpi_test_init(&size);
    weft_executor *ex = mpi_test_executor();
    weft_status st = WEFT_OK;
    weft_mpi_flow *f = weft_mpi_flow_create(MPI_COMM_WORLD, "stencil", &st);
    ASSERT_OK(st);
    /* Two generations of each block (read one, write the other), both owned
     * by the block's rank: contiguous runs of blocks per rank. */
    static block mine[2][ST_BLOCKS], ref[2][ST_BLOCKS];
    static int index[ST_BLOCKS];
    weft_mpi_data d[2][ST_BLOCKS];
    for (int g = 0; g < 2; g++)
        for (int b = 0; b < ST_BLOCKS; b++) {
            int owner = b * size / ST_BLOCKS;
            st_init(&mine[g][b], b);
            st_init(&ref[g][b], b);
            index[b] = b;
            d[g][b] = weft_mpi_data_register(f, owner == rank ? &mine[g][b] : NULL, sizeof(block), owner);
            ASSERT_NE(d[g][b].id_, 0);
        }
    for (int t = 0; t < ST_STEPS; t++) {
        int g = t % 2, h = 1 - g;
        for (int b = 0; b < ST_BLOCKS; b++) {
            weft_mpi_access acc[4];
            int n = 0;
            if (b > 0) acc[n++] = (weft_mpi_access){ d[g][b - 1], WEFT_MPI_R };
            acc[n++] = (weft_mpi_access){ d[g][b], WEFT_MPI_R };
            if (b < ST_BLOCKS - 1) acc[n++] = (weft_mpi_access){ d[g][b + 1], WEFT_MPI_R };
            acc[n++] = (weft_mpi_access){ d[h][b], WEFT_MPI_W };
            ASSERT_OK(weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = st_task, .arg = &index[b], .name = "step",
                                                                .access = acc, .naccess = (size_t)n }));
            step(b > 0 ? &ref[g][b - 1] : NULL, &ref[g][b], b < ST_BLOCKS - 1 ? &ref[g][b + 1] : NULL, &ref[h][b]);
        }
    }
    ASSERT_OK(weft_mpi_run(ex, f));
    int last = ST_STEPS % 2;
    for (int b = 0; b < ST_BLOCKS; b++)
        if (b * size / ST_BLOCKS == rank) ASSERT_TRUE(memcmp(&mine[last][b], &ref[last][b], sizeof(block)) == 0);
    /* Messages: each step, each boundary between two ranks' blocks is
     * crossed both ways (a block read by its neighbour's rank). */
    int boundaries = 0;
    for (int b = 1; b < ST_BLOCKS; b++) boundaries += (b - 1) * size / ST_BLOCKS != b * size / ST_BLOCKS;
    weft_mpi_stats ms;
    ASSERT_OK(weft_mpi_flow_stats(f, &ms));
    ASSERT_EQ(mpi_test_sum(ms.messages_sent), (uint64_t)(2 * boundaries * ST_STEPS));
    ASSERT_EQ(mpi_test_sum(ms.bytes_sent), (uint64_t)(2 * boundaries * ST_STEPS) * sizeof(block));
    ASSERT_OK(weft_mpi_flow_destroy(f));
    weft_executor_destroy(ex);
    MPI_Finalize();
}
