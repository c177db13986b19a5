/* Seeded random graphs that mix every kind of task: plain tasks, conditions,
 * joined and detached subflows with fans of children, and modules nesting other
 * random graphs three deep, with random edges.  Each task bumps one counter, so
 * a run of n iterations must end with exactly n times the graph's task count,
 * on 1 to 4 workers.  This exercises the ways a run's pending count moves
 * (range jobs of many sources, counts held back on workers and applied when a
 * nested run ends) together rather than one at a time. */
#define _GNU_SOURCE
#include "test_util.h"

#include <inttypes.h>

enum { MAX_FLOWS = 256, MAX_SPAWNS = 1024 };

struct spawn {
    atomic_long *count;
    int children;
    bool detach;
};

struct world {
    atomic_long count;
    weft_taskflow *flows[MAX_FLOWS];
    int nflows;
    struct spawn spawns[MAX_SPAWNS];
    int nspawns;
};

static int tick(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit((atomic_long *)arg, 1, memory_order_relaxed);
    return 0;
}

static int pick_first(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit((atomic_long *)arg, 1, memory_order_relaxed);
    return 0;
}

static int spawner(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct spawn *s = arg;
    atomic_fetch_add_explicit(s->count, 1, memory_order_relaxed);
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < s->children; i++)
        if (weft_task_is_null(weft_emplace(g, tick, s->count))) return 1;
    if (s->detach && weft_subflow_detach(sf) != WEFT_OK) return 1;
    return 0;
}

/* Builds a random taskflow `depth` levels deep into w; returns it, and in
 * *tasks the number of counter bumps one run of it makes. */
static weft_taskflow *build(struct world *w, uint64_t *rng, int depth, long *tasks) {
    weft_taskflow *tf = make_taskflow("mixed");
    if (w->nflows == MAX_FLOWS) TEST_FAIL_("too many taskflows");
    w->flows[w->nflows++] = tf;
    /* Wide at the top (range jobs start 16+ sources), small below; at most
     * three modules per taskflow, so the nesting stays a few dozen graphs. */
    int n = 1 + (int)(test_rand(rng) % (depth == 3 ? 48 : 16)), modules = 0;
    weft_task t[48];
    bool cond[48] = { false };
    long total = 0;
    for (int i = 0; i < n; i++) {
        unsigned kind = (unsigned)(test_rand(rng) % 10);
        if (kind < 5) {
            t[i] = must_emplace(tf, tick, &w->count);
            total += 1;
        } else if (kind < 6) {
            /* A condition whose only successor is a plain task. */
            t[i] = weft_emplace_condition(tf, pick_first, &w->count);
            cond[i] = true;
            weft_task s = must_emplace(tf, tick, &w->count);
            ASSERT_OK(weft_precede(t[i], s));
            total += 2;
        } else if (kind < 8 || depth == 0 || modules == 3) {
            if (w->nspawns == MAX_SPAWNS) TEST_FAIL_("too many subflows");
            struct spawn *s = &w->spawns[w->nspawns++];
            *s = (struct spawn){ &w->count, (int)(test_rand(rng) % 41), test_rand(rng) % 3 == 0 };
            t[i] = weft_emplace_subflow(tf, spawner, s);
            total += 1 + s->children;
        } else {
            long inner = 0;
            modules++;
            weft_taskflow *body = build(w, rng, depth - 1, &inner);
            t[i] = weft_emplace_module(tf, body);
            total += inner;
        }
        if (weft_task_is_null(t[i])) TEST_FAIL_("emplace failed: %s", weft_errname(weft_taskflow_last_error(tf)));
    }
    /* Random forward edges, none out of a condition (its edges are weak: a task
     * behind one runs only if picked) and none into a condition's successor
     * (not in t[]). */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!cond[i] && test_rand(rng) % 8 == 0) ASSERT_OK(weft_precede(t[i], t[j]));
    *tasks = total;
    return tf;
}

TEST(random_graphs_of_every_task_kind_count_every_task_exactly) {
    uint64_t seed = test_seed() ^ 0x6d69786564ull;
    printf("seed 0x%" PRIx64 "\n", seed);
    uint64_t rng = seed;
    static struct world w;
    long checked = 0;
    for (int g = 0; g < 24; g++) {
        memset(&w, 0, sizeof w);
        long per_run = 0;
        weft_taskflow *top = build(&w, &rng, 3, &per_run);
        unsigned workers = 1 + (unsigned)(test_rand(&rng) % 4);
        weft_executor *ex = make_executor(workers);
        for (int round = 0; round < 4; round++) {
            uint64_t iters = 1 + test_rand(&rng) % 3;
            atomic_store(&w.count, 0);
            weft_future *f;
            ASSERT_OK(weft_run_n(ex, top, iters, &f));
            weft_status st = weft_future_wait_for(f, 20 * SEC);
            if (st != WEFT_OK)
                TEST_FAIL_("graph %d (%d taskflows, %ld tasks per run) on %u workers: %s", g, w.nflows, per_run,
                           workers, weft_errname(st));
            weft_future_destroy(f);
            long got = atomic_load(&w.count);
            if (got != per_run * (long)iters)
                TEST_FAIL_("graph %d on %u workers, %" PRIu64 " iterations: %ld tasks ran, want %ld", g, workers,
                           iters, got, per_run * (long)iters);
            checked += got;
        }
        weft_executor_destroy(ex);
        for (int i = 0; i < w.nflows; i++) ASSERT_OK(weft_taskflow_destroy(w.flows[i]));
    }
    printf("%ld task runs checked\n", checked);
}
