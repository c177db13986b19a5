/* Fork-join, adversarial round 38: flat loops past the frame stack, deep
 * chains, typed tasks nesting groups, roots from everywhere, failing and
 * cancelled children, exact counts at 1, 2 and 4 workers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <pthread.h>
#include <string.h>

static const unsigned WORKERS[] = {1, 2, 4};

static weft_executor *make_big_stack_executor(unsigned workers) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){.workers = workers, .stack_size = (size_t)256 << 20}, &err);
    if (!ex) TEST_FAIL_("weft_executor_create(%u workers) failed: %s", workers, weft_errname(err));
    return ex;
}

/* ---- a flat loop of 100k spawns, then 100k syncs ---- */

#define FLAT_N 100000u

struct flat {
    atomic_uchar *hits;
    unsigned n;
    int bad;
};
struct flat_child {
    struct flat *f;
    unsigned i;
};

/* Returns i + 1, so the sync answering it is known. */
static int flat_child(weft_ctx *ctx, void *arg) {
    struct flat_child *c = arg;
    atomic_fetch_add_explicit(&c->f->hits[c->i], 1, memory_order_relaxed);
    return (int)c->i + 1;
}

static int flat_root(weft_ctx *ctx, void *arg) {
    struct flat *f = arg;
    struct flat_child *c = malloc(f->n * sizeof *c);
    ASSERT_NOT_NULL(c);
    for (unsigned i = 0; i < f->n; i++) {
        c[i] = (struct flat_child){f, i};
        if (weft_spawn(ctx, flat_child, &c[i]) != WEFT_OK) f->bad++;
    }
    /* Innermost first: sync k answers child n - 1 - k, stolen or not, on the
     * stack or run at once because the stack was full. */
    for (unsigned k = 0; k < f->n; k++) {
        int r = weft_sync(ctx);
        if (r != (int)(f->n - k) && f->bad++ < 5)
            fprintf(stderr, "sync %u returned %d, want %u\n", k, r, f->n - k);
    }
    int extra = 0;
    if (weft_sync_status(ctx, &extra) != WEFT_EINVAL) f->bad++;
    free(c);
    return 0;
}

TEST(a_flat_loop_of_100k_spawns_then_100k_syncs_answers_each_child_once_in_lifo_order) {
    struct flat f = {.n = FLAT_N};
    f.hits = calloc(f.n, 1);
    ASSERT_NOT_NULL(f.hits);
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        for (int rep = 0; rep < 3; rep++) {
            memset(f.hits, 0, f.n);
            f.bad = 0;
            ASSERT_EQ(weft_run_root(ex, flat_root, &f), 0);
            ASSERT_EQ(f.bad, 0);
            for (unsigned i = 0; i < f.n; i++)
                if (f.hits[i] != 1) TEST_FAIL_("%u workers: child %u ran %d times", WORKERS[wi], i, f.hits[i]);
        }
        weft_executor_destroy(ex);
    }
    free(f.hits);
}

/* The same loop in a task group, with two failing children: one on the stack
 * and one past it; the wait returns the first in sync order (the later one). */
struct gflat {
    atomic_uchar *hits;
    unsigned n, fail_lo, fail_hi;
    int wait_result;
    weft_status wait_status;
};
struct gchild {
    struct gflat *g;
    unsigned i;
};
static int gchild(weft_ctx *ctx, void *arg) {
    struct gchild *c = arg;
    atomic_fetch_add_explicit(&c->g->hits[c->i], 1, memory_order_relaxed);
    if (c->i == c->g->fail_lo) return 1000;
    if (c->i == c->g->fail_hi) return 2000;
    return 0;
}
static int gflat_root(weft_ctx *ctx, void *arg) {
    struct gflat *g = arg;
    struct gchild *c = malloc(g->n * sizeof *c);
    ASSERT_NOT_NULL(c);
    weft_task_group tg;
    weft_task_group_init(&tg, ctx);
    for (unsigned i = 0; i < g->n; i++) {
        c[i] = (struct gchild){g, i};
        ASSERT_OK(weft_task_group_spawn(&tg, gchild, &c[i]));
    }
    g->wait_status = weft_task_group_wait_status(&tg, &g->wait_result);
    free(c);
    return 0;
}

TEST(a_task_group_of_100k_children_reports_the_first_failure_in_sync_order_past_the_frame_stack) {
    struct gflat g = {.n = FLAT_N, .fail_lo = 10, .fail_hi = 90000};
    g.hits = calloc(g.n, 1);
    ASSERT_NOT_NULL(g.hits);
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        for (int rep = 0; rep < 3; rep++) {
            memset(g.hits, 0, g.n);
            ASSERT_EQ(weft_run_root(ex, gflat_root, &g), 0);
            ASSERT_STATUS(g.wait_status, WEFT_ETASK);
            ASSERT_EQ(g.wait_result, 2000);
            for (unsigned i = 0; i < g.n; i++)
                if (g.hits[i] != 1) TEST_FAIL_("%u workers: child %u ran %d times", WORKERS[wi], i, g.hits[i]);
        }
        weft_executor_destroy(ex);
    }
    free(g.hits);
}

/* ---- a chain deeper than the frame stack ---- */

struct chain {
    atomic_uint *hits;
    unsigned depth;
};
struct link {
    struct chain *c;
    unsigned level;
};
/* Each level spawns the next, does a little work and syncs it: the result is
 * the number of levels below, counted by the children. */
static int chain_link(weft_ctx *ctx, void *arg) {
    struct link *l = arg;
    atomic_fetch_add_explicit(&l->c->hits[l->level], 1, memory_order_relaxed);
    if (l->level + 1 == l->c->depth) return 1;
    struct link next = {l->c, l->level + 1};
    ASSERT_OK(weft_spawn(ctx, chain_link, &next));
    int below = 0;
    weft_status st = weft_sync_status(ctx, &below);
    if (st != WEFT_ETASK) TEST_FAIL_("level %u: sync_status %s", l->level, weft_errname(st));
    return below + 1;
}

TEST(a_spawn_chain_deeper_than_the_frame_stack_visits_every_level_once) {
#ifdef UNDER_TSAN
    SKIP("TSan's shadow call stack holds fewer frames than a 70000-level recursion makes");
#endif
    const unsigned depth = 70000; /* > 65536 frames: the last levels run at once */
    struct chain c = {.depth = depth};
    c.hits = calloc(depth, sizeof *c.hits);
    ASSERT_NOT_NULL(c.hits);
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_big_stack_executor(WORKERS[wi]);
        for (int rep = 0; rep < 2; rep++) {
            memset(c.hits, 0, depth * sizeof *c.hits);
            struct link first = {&c, 0};
            int r = 0;
            ASSERT_STATUS(weft_run_root_status(ex, chain_link, &first, &r), WEFT_ETASK);
            ASSERT_EQ(r, (int)depth);
            for (unsigned i = 0; i < depth; i++)
                if (c.hits[i] != 1) TEST_FAIL_("%u workers: level %u ran %u times", WORKERS[wi], i, c.hits[i]);
        }
        weft_executor_destroy(ex);
    }
    free(c.hits);
}

/* ---- typed tasks nesting groups and roots through WEFT_FJ_CTX ---- */

static atomic_long typed_leaves;

static int group_leaf(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit(&typed_leaves, 1, memory_order_relaxed);
    *(long *)arg = 1;
    return 0;
}

static int root_leaf(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit(&typed_leaves, 1, memory_order_relaxed);
    return 7;
}

/* tsum(n): a typed binary recursion whose leaves open a task group of 4 and,
 * every 16th, a nested root; returns the number of leaves reached. */
WEFT_FJ_TASK(long, tsum, int, n) {
    if (n <= 1) {
        long got[4] = {0, 0, 0, 0};
        weft_task_group g;
        weft_task_group_init(&g, WEFT_FJ_CTX);
        for (int i = 0; i < 4; i++) ASSERT_OK(weft_task_group_spawn(&g, group_leaf, &got[i]));
        ASSERT_EQ(weft_task_group_wait(&g), 0);
        long s = got[0] + got[1] + got[2] + got[3];
        if (n == 1) {
            int r = 0;
            ASSERT_STATUS(weft_run_root_status(weft_ctx_executor(WEFT_FJ_CTX), root_leaf, NULL, &r), WEFT_ETASK);
            ASSERT_EQ(r, 7);
            s += 1;
        }
        return s;
    }
    WEFT_FJ_SLOT(tsum) x;
    WEFT_FJ_SPAWN(tsum, &x, n - 1);
    long b = WEFT_FJ_CALL(tsum, n - 2);
    return WEFT_FJ_SYNC(tsum, &x) + b;
}

struct tsum_arg {
    int n;
    long r;
};
static int tsum_root(weft_ctx *ctx, void *arg) {
    struct tsum_arg *a = arg;
    a->r = WEFT_FJ_RUN(ctx, tsum, a->n);
    return 0;
}

/* Leaves of the recursion: f(n) calls with n <= 1, split 0 and 1. */
static void count_leaves(int n, long *zeros, long *ones) {
    long z0 = 1, o0 = 0; /* n = 0 */
    long z1 = 0, o1 = 1; /* n = 1 */
    if (n == 0) { *zeros = z0; *ones = o0; return; }
    for (int k = 2; k <= n; k++) {
        long z = z1 + z0, o = o1 + o0;
        z0 = z1; o0 = o1; z1 = z; o1 = o;
    }
    *zeros = z1;
    *ones = o1;
}

TEST(typed_tasks_nesting_groups_and_roots_through_the_ctx_count_every_leaf_once) {
    const int n = 18;
    long zeros, ones;
    count_leaves(n, &zeros, &ones);
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        for (int rep = 0; rep < 3; rep++) {
            atomic_store(&typed_leaves, 0);
            struct tsum_arg a = {n, 0};
            ASSERT_EQ(weft_run_root(ex, tsum_root, &a), 0);
            ASSERT_EQ(a.r, 4 * (zeros + ones) + ones);
            ASSERT_EQ(atomic_load(&typed_leaves), 4 * (zeros + ones) + ones);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- roots from several outside threads at once, nesting roots ---- */

struct rootsum {
    unsigned lo, hi;
    atomic_uchar *hits;
};
static int rootsum(weft_ctx *ctx, void *arg) {
    struct rootsum *a = arg;
    if (a->hi - a->lo == 1) {
        atomic_fetch_add_explicit(&a->hits[a->lo], 1, memory_order_relaxed);
        return 0;
    }
    unsigned mid = a->lo + (a->hi - a->lo) / 2;
    struct rootsum l = {a->lo, mid, a->hits}, r = {mid, a->hi, a->hits};
    ASSERT_OK(weft_spawn(ctx, rootsum, &l));
    /* Every 64-wide range enters through a nested root. */
    int rr = (a->hi - a->lo) == 64 ? weft_run_root(weft_ctx_executor(ctx), rootsum, &r) : rootsum(ctx, &r);
    return weft_sync(ctx) + rr;
}

struct outside {
    weft_executor *ex;
    struct rootsum a;
    int rc;
};
static void *outside_thread(void *p) {
    struct outside *o = p;
    for (int i = 0; i < 20 && o->rc == 0; i++) o->rc = weft_run_root(o->ex, rootsum, &o->a);
    return NULL;
}

TEST(roots_from_four_outside_threads_at_once_with_nested_roots_reach_every_leaf_once_per_call) {
    const unsigned leaves = 4096;
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(WORKERS[wi]);
        struct outside o[4];
        pthread_t th[4];
        for (int t = 0; t < 4; t++) {
            o[t] = (struct outside){ex, {0, leaves, calloc(leaves, 1)}, 0};
            ASSERT_NOT_NULL(o[t].a.hits);
            ASSERT_EQ(pthread_create(&th[t], NULL, outside_thread, &o[t]), 0);
        }
        for (int t = 0; t < 4; t++) {
            pthread_join(th[t], NULL);
            ASSERT_EQ(o[t].rc, 0);
            for (unsigned i = 0; i < leaves; i++)
                if (o[t].a.hits[i] != 20) TEST_FAIL_("thread %d leaf %u: %d", t, i, o[t].a.hits[i]);
            free(o[t].a.hits);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- the stop word of a stolen child whose parent a root's wait runs ---- */

/* A root waits for a run of a taskflow (weft_future_wait from a task runs
 * other work meanwhile, here the run's own task G, on the root's worker).  G
 * forks children, a thief takes some, and the run is cancelled: every child
 * must see it through its context, as a child of a graph task run anywhere
 * else does.  The labels went by a depth mark only the root's context carried,
 * G's context shared the root's segment, the stop words disagreed, and the
 * frames went out with none: a stolen child never saw the cancel. */
struct nstop {
    weft_taskflow *tf;
    weft_future *run;
    int root_worker;
    atomic_int nested, stolen, started_stolen, seen, timeouts;
};
struct nstop_child {
    struct nstop *s;
    int parent_worker;
};
static int nstop_child(weft_ctx *ctx, void *arg) {
    struct nstop_child *c = arg;
    if (weft_ctx_worker_id(ctx) == c->parent_worker) return 0; /* in G's context: sees it */
    atomic_fetch_add(&c->s->started_stolen, 1);
    double t0 = now_s();
    while (!weft_ctx_cancelled(ctx)) {
        if (now_s() - t0 > 2.0) {
            atomic_fetch_add(&c->s->timeouts, 1);
            return 0;
        }
        sleep_us(50);
    }
    atomic_fetch_add(&c->s->seen, 1);
    return 0;
}
static int nstop_g(weft_ctx *ctx, void *arg) {
    struct nstop *s = arg;
    struct nstop_child c = {s, weft_ctx_worker_id(ctx)};
    bool nested = c.parent_worker == s->root_worker;
    for (int i = 0; i < 8; i++) ASSERT_OK(weft_spawn(ctx, nstop_child, &c));
    double t0 = now_s(); /* the idle worker takes some */
    while (atomic_load(&s->started_stolen) == 0 && now_s() - t0 < 0.1) sleep_us(20);
    if (nested) atomic_fetch_add(&s->nested, 1);
    if (nested && atomic_load(&s->started_stolen) > 0) atomic_fetch_add(&s->stolen, 1);
    ASSERT_OK(weft_future_cancel(s->run));
    for (int i = 0; i < 8; i++) ASSERT_EQ(weft_sync(ctx), 0);
    return 0;
}
static int nstop_root(weft_ctx *ctx, void *arg) {
    struct nstop *s = arg;
    s->root_worker = weft_ctx_worker_id(ctx);
    atomic_store(&s->started_stolen, 0);
    ASSERT_OK(weft_run(weft_ctx_executor(ctx), s->tf, &s->run));
    weft_status st = weft_future_wait(s->run);
    weft_future_destroy(s->run);
    return st == WEFT_ECANCELED ? 0 : 1;
}

TEST(stolen_children_of_a_graph_task_that_a_roots_wait_runs_see_its_run_cancelled) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    struct nstop s = {.tf = make_taskflow("nstop")};
    must_emplace(s.tf, nstop_g, &s);
    for (int i = 0; i < 40 && atomic_load(&s.stolen) < 5; i++) ASSERT_EQ(weft_run_root(ex, nstop_root, &s), 0);
    ASSERT_GT(atomic_load(&s.stolen), 0); /* G ran nested and a thief took a child */
    ASSERT_EQ(atomic_load(&s.timeouts), 0);
    ASSERT_OK(weft_taskflow_destroy(s.tf));
    weft_executor_destroy(ex);
    watchdog_stop();
}
