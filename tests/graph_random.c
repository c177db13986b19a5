/* Seeded random DAGs: every edge u -> v is respected (u finished before v
 * started) and every task runs exactly once per iteration, on 1, 2 and 4 workers,
 * with three DAGs in flight at a time.
 *
 * WEFT_TEST_SEED picks the graphs; WEFT_TEST_SCALE their number and top size. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>

static atomic_uint_fast64_t seq;

struct rnode {
    atomic_uint_fast64_t start, finish;
    atomic_uint runs;
};

static int stamp(weft_ctx *ctx, void *arg) {
    struct rnode *n = arg;
    atomic_store_explicit(&n->start, atomic_fetch_add(&seq, 1), memory_order_relaxed);
    atomic_fetch_add_explicit(&n->runs, 1, memory_order_relaxed);
    atomic_store_explicit(&n->finish, atomic_fetch_add(&seq, 1), memory_order_relaxed);
    return 0;
}

struct dag {
    uint64_t id;
    size_t n, nedges, cap;
    struct rnode *node;
    weft_task *task;
    uint32_t *from, *to;  /* edges, by emplace index */
    uint32_t *indeg;
    weft_taskflow *tf;
    unsigned iterations;
};

static void add_edge_record(struct dag *d, uint32_t u, uint32_t v) {
    if (d->nedges == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 64;
        d->from = realloc(d->from, d->cap * sizeof *d->from);
        d->to = realloc(d->to, d->cap * sizeof *d->to);
        ASSERT_NOT_NULL(d->from);
        ASSERT_NOT_NULL(d->to);
    }
    d->from[d->nedges] = u;
    d->to[d->nedges] = v;
    d->nedges++;
    d->indeg[v]++;
}

/* Builds a DAG of n tasks.  Tasks are emplaced in index order, but the
 * topological order is a random permutation of the indices, so emplace order
 * tells the scheduler nothing.  Each task gets 0-3 predecessors (now and then a
 * wide fan-in), half of them close in rank so long chains appear; edges are
 * added with precede, succeed, or succeed_many, chosen at random. */
static void build_dag(struct dag *d, size_t n, uint64_t *rng) {
    d->n = n;
    d->node = calloc(n, sizeof *d->node);
    d->task = calloc(n, sizeof *d->task);
    d->indeg = calloc(n, sizeof *d->indeg);
    uint32_t *order = malloc(n * sizeof *order); /* rank -> index */
    ASSERT_TRUE(d->node && d->task && d->indeg && order);
    d->tf = weft_taskflow_create(NULL, NULL);
    ASSERT_NOT_NULL(d->tf);
    for (size_t i = 0; i < n; i++) {
        d->task[i] = weft_emplace(d->tf, stamp, &d->node[i]);
        ASSERT_FALSE(weft_task_is_null(d->task[i]));
        order[i] = (uint32_t)i;
    }
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
        size_t j = test_rand(rng) % i;
        uint32_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    weft_task preds[64];
    for (size_t r = 1; r < n; r++) {
        uint32_t v = order[r];
        uint64_t pick = test_rand(rng);
        size_t k = pick % 4;
        if (pick % 64 == 0) k = 20 + pick % 40; /* wide fan-in */
        size_t np = 0;
        for (size_t e = 0; e < k; e++) {
            size_t pr;
            if (test_rand(rng) & 1) {
                size_t near = r < 8 ? r : 8;
                pr = r - 1 - test_rand(rng) % near;
            } else {
                pr = test_rand(rng) % r;
            }
            uint32_t u = order[pr];
            add_edge_record(d, u, v);
            preds[np++] = d->task[u];
        }
        switch (test_rand(rng) % 3) {
        case 0:
            for (size_t e = 0; e < np; e++) ASSERT_OK(weft_precede(preds[e], d->task[v]));
            break;
        case 1:
            for (size_t e = 0; e < np; e++) ASSERT_OK(weft_succeed(d->task[v], preds[e]));
            break;
        default:
            ASSERT_OK(weft_succeed_many(d->task[v], preds, np));
            break;
        }
    }
    free(order);
}

static void check_dag(const struct dag *d) {
    for (size_t i = 0; i < d->n; i++) {
        unsigned runs = atomic_load(&d->node[i].runs);
        if (runs != d->iterations)
            TEST_FAIL_("dag %" PRIu64 " (%zu tasks): task %zu ran %u times, want %u", d->id, d->n, i,
                       runs, d->iterations);
        if (weft_task_num_dependents(d->task[i]) != d->indeg[i])
            TEST_FAIL_("dag %" PRIu64 ": task %zu has %zu dependents, want %u", d->id, i,
                       weft_task_num_dependents(d->task[i]), d->indeg[i]);
    }
    for (size_t e = 0; e < d->nedges; e++) {
        uint64_t fu = atomic_load(&d->node[d->from[e]].finish);
        uint64_t sv = atomic_load(&d->node[d->to[e]].start);
        if (!(fu < sv))
            TEST_FAIL_("dag %" PRIu64 " (%zu tasks): edge %u -> %u broken: %u finished at %" PRIu64
                       ", %u started at %" PRIu64,
                       d->id, d->n, d->from[e], d->to[e], d->from[e], fu, d->to[e], sv);
    }
}

static void free_dag(struct dag *d) {
    ASSERT_OK(weft_taskflow_destroy(d->tf));
    free(d->node);
    free(d->task);
    free(d->indeg);
    free(d->from);
    free(d->to);
    memset(d, 0, sizeof *d);
}

TEST(random_dags_respect_every_edge) {
    const uint64_t dags = test_scale(1200);
    const uint64_t top = test_scale(10000) < 100 ? 100 : test_scale(10000);
    uint64_t rng = test_seed();
    printf("seed 0x%" PRIx64 ", %" PRIu64 " DAGs up to %" PRIu64 " tasks\n", rng, dags, top);
    enum { LANES = 3 };
    const unsigned workers[LANES] = { 1, 2, 4 };
    weft_executor *ex[LANES];
    for (int l = 0; l < LANES; l++) ex[l] = make_executor(workers[l]);

    uint64_t total_tasks = 0, total_edges = 0;
    for (uint64_t base = 0; base < dags; base += LANES) {
        struct dag d[LANES] = { 0 };
        weft_future *f[LANES] = { 0 };
        int lanes = (int)(dags - base < LANES ? dags - base : LANES);
        for (int l = 0; l < lanes; l++) {
            uint64_t id = base + (uint64_t)l;
            /* Sizes spread over decades: 1..10, ..100, ..1000, ..top. */
            uint64_t decade = 1;
            for (uint64_t k = test_rand(&rng) % 5; k > 0 && decade < top; k--) decade *= 10;
            if (decade > top) decade = top;
            size_t n = 1 + (size_t)(test_rand(&rng) % decade);
            d[l].id = id;
            build_dag(&d[l], n, &rng);
            d[l].iterations = (id % 7 == 3) ? 2 : 1;
            total_tasks += n;
            total_edges += d[l].nedges;
            if (d[l].iterations == 1) ASSERT_OK(weft_run(ex[l], d[l].tf, &f[l]));
            else ASSERT_OK(weft_run_n(ex[l], d[l].tf, d[l].iterations, &f[l]));
        }
        for (int l = 0; l < lanes; l++) {
            weft_status st = weft_future_wait_for(f[l], 60 * SEC);
            if (st != WEFT_OK)
                TEST_FAIL_("dag %" PRIu64 " (%zu tasks, %u workers): run ended with %s", d[l].id,
                           d[l].n, workers[l], weft_errname(st));
            weft_future_destroy(f[l]);
            check_dag(&d[l]);
            free_dag(&d[l]);
        }
    }
    printf("%" PRIu64 " tasks, %" PRIu64 " edges checked\n", total_tasks, total_edges);
    for (int l = 0; l < LANES; l++) weft_executor_destroy(ex[l]);
}

/* One big DAG run many times: the join counters must reset between runs. */
TEST(big_random_dag_rerun_respects_every_edge) {
    uint64_t rng = test_seed() ^ 0xb16da9ULL;
    weft_executor *ex = make_executor(4);
    struct dag d = { .id = 0 };
    build_dag(&d, (size_t)test_scale(20000), &rng);
    for (unsigned r = 1; r <= 10; r++) {
        ASSERT_OK(weft_run_and_wait(ex, d.tf));
        d.iterations = r;
        check_dag(&d);
    }
    free_dag(&d);
    weft_executor_destroy(ex);
}
