/* Fork-join load balance: children that a task spawned before any thief asked
 * (a flat spawn loop, or a batch of spawns followed by long work) reach idle
 * workers.  Children sleep rather than spin, so the shares measured do not
 * depend on how busy the machine's CPUs are. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdio.h>
#include <stdlib.h>

enum { MAX_W = 8 };

struct tally {
    atomic_int by_worker[MAX_W];
    atomic_int started; /* children begun */
    unsigned child_us;
    unsigned children;
    unsigned parent_work_us;
    bool work_until_started; /* the parent's work: until every child has begun (5 s at most) */
    bool group; /* task group, else plain spawn/sync */
    int parent_worker;
};

static int child(weft_ctx *ctx, void *arg) {
    struct tally *t = arg;
    atomic_fetch_add(&t->started, 1);
    sleep_us(t->child_us);
    int id = weft_ctx_worker_id(ctx);
    if (id >= 0 && id < MAX_W) atomic_fetch_add(&t->by_worker[id], 1);
    return 0;
}

/* The parent's own work between its spawns and its sync. */
static void parent_work(struct tally *t) {
    if (t->work_until_started) (void)wait_flag(&t->started, (int)t->children, 5.0);
    else sleep_us(t->parent_work_us);
}

static int parent(weft_ctx *ctx, void *arg) {
    struct tally *t = arg;
    t->parent_worker = weft_ctx_worker_id(ctx);
    if (t->group) {
        weft_task_group g;
        weft_task_group_init(&g, ctx);
        for (unsigned i = 0; i < t->children; i++)
            if (weft_task_group_spawn(&g, child, t) != WEFT_OK) return -1;
        parent_work(t);
        return weft_task_group_wait(&g);
    }
    for (unsigned i = 0; i < t->children; i++)
        if (weft_spawn(ctx, child, t) != WEFT_OK) return -1;
    parent_work(t);
    for (unsigned i = 0; i < t->children; i++)
        if (weft_sync(ctx) != 0) return -1;
    return 0;
}

static void run_parent(weft_executor *ex, struct tally *t) {
    for (int i = 0; i < MAX_W; i++) atomic_store(&t->by_worker[i], 0);
    atomic_store(&t->started, 0);
    ASSERT_EQ(weft_run_root(ex, parent, t), 0);
    int total = 0;
    for (int i = 0; i < MAX_W; i++) total += atomic_load(&t->by_worker[i]);
    ASSERT_EQ(total, (int)t->children);
}

/* Each of 2 workers runs a real share (at least 10%) of 1,000 equal children. */
static void flat_loop_is_shared(bool group) {
    weft_executor *ex = make_executor(2);
    struct tally t = { .child_us = 1000, .children = 1000, .group = group };
    run_parent(ex, &t);
    for (int w = 0; w < 2; w++) {
        int n = atomic_load(&t.by_worker[w]);
        if (getenv("FJ_DEBUG")) printf("worker %d ran %d\n", w, n);
        /* Unshared, one worker runs all 1000 and the other none.  Shared, each
         * runs about half on a quiet machine; under a sanitizer with another
         * test on the second core one worker may lose its CPU for a while
         * (seen: 290), so the bar is 10%: still far from 0. */
        if (n < 100) TEST_FAIL_("worker %d ran %d of 1000 children (%s)", w, n, group ? "group" : "spawn");
    }
    weft_executor_destroy(ex);
}

TEST(a_flat_task_group_of_1000_children_is_shared_by_two_workers) { flat_loop_is_shared(true); }

TEST(a_flat_spawn_loop_of_1000_children_is_shared_by_two_workers) { flat_loop_is_shared(false); }

/* 8 children of 2 ms, then the parent's own work before the sync: the idle
 * worker, asleep at the spawns (forkjoin.h: it takes them at once), runs the
 * children meanwhile.  Repeated, the other worker asleep before each round.
 * The parent works until every child has begun (5 s at most) rather than for
 * a fixed 20 ms, and each round starts once both workers sleep rather than
 * 5 ms after the last: on a loaded machine the sleeper may not get a CPU
 * within 20 ms, nor have parked within 5 ms (TSan, two busy loops: 29 of 48
 * children, 1 run in 10).  Children left private (the defect: 1 of 8 per
 * round) are never begun by the other worker, so the parent's wait runs out
 * and they run at its sync. */
TEST(children_left_while_the_parent_works_are_run_by_the_idle_worker) {
    weft_executor *ex = make_executor(2);
    struct tally t = { .child_us = 2000, .children = 8, .work_until_started = true, .group = true };
    int stolen = 0, rounds = 6;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 10000 && weft_executor_waiters(ex) != 2; k++) sleep_us(500); /* both asleep */
        run_parent(ex, &t);
        int other = atomic_load(&t.by_worker[1 - t.parent_worker]);
        if (getenv("FJ_DEBUG")) printf("round %d: parent on %d, other ran %d\n", r, t.parent_worker, other);
        stolen += other;
    }
    /* Before the fix: 1 of 8 per round. */
    if (stolen != 8 * rounds) TEST_FAIL_("the idle worker ran %d of %d children", stolen, 8 * rounds);
    weft_executor_destroy(ex);
}

/* Shares on request must not lose or repeat a child: a flat loop of many tiny
 * children, mixed with nested groups, on 2-8 workers. */
static int tiny(weft_ctx *ctx, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static int nested(weft_ctx *ctx, void *arg) {
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    for (int i = 0; i < 64; i++) (void)weft_task_group_spawn(&g, tiny, arg);
    return weft_task_group_wait(&g);
}

static int wide(weft_ctx *ctx, void *arg) {
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    for (int i = 0; i < 20000; i++) (void)weft_task_group_spawn(&g, i % 100 == 0 ? nested : tiny, arg);
    return weft_task_group_wait(&g);
}

TEST(flat_loops_shared_on_request_run_every_child_exactly_once) {
    unsigned workers[] = { 2, 4, 8 };
    for (int k = 0; k < 3; k++) {
        weft_executor *ex = make_executor(workers[k]);
        for (int rep = 0; rep < 10; rep++) {
            atomic_int count = 0;
            ASSERT_EQ(weft_run_root(ex, wide, &count), 0);
            ASSERT_EQ(atomic_load(&count), 20000 - 200 + 200 * 64);
        }
        weft_executor_destroy(ex);
    }
}

/* A sleeper that was woken but has no CPU yet (an oversubscribed machine:
 * milliseconds) must not make its owner publish every frame: once frames are
 * public and waiting for it, spawns and syncs go back to the private fast path.
 * White-box: on one worker, the sleep word counts one extra idle worker, which
 * never runs; the recursion then looks at its own frame stack at each leaf.
 * Before the fix, every spawn published its frame; now only the first descent
 * does. */
#include "core/executor.h"

struct leaf_look {
    int n;
    unsigned *leaves, *private_above;
};

static int look_rec(weft_ctx *ctx, void *arg) {
    struct leaf_look *a = arg;
    if (a->n < 2) {
        weft__fj *fj = weft__fj_of(ctx);
        (*a->leaves)++;
        if (fj->head > fj->split) (*a->private_above)++;
        return 0;
    }
    struct leaf_look x = { a->n - 1, a->leaves, a->private_above }, y = { a->n - 2, a->leaves, a->private_above };
    if (weft_spawn(ctx, look_rec, &x) != WEFT_OK) return -1;
    int r = look_rec(ctx, &y);
    int s = weft_sync(ctx);
    return r ? r : s;
}

static int with_a_sleeper_that_never_runs(weft_ctx *ctx, void *arg) {
    weft_executor *ex = weft_ctx_executor(ctx);
    /* Only this worker touches the word while the root runs (one worker; the
     * caller waits on the root's own futex). */
    uint64_t v0 = atomic_load(&ex->sleep.state);
    atomic_fetch_add(&ex->sleep.state, WEFT__SLEEP_IDLE_ONE);
    int r = look_rec(ctx, arg);
    atomic_store(&ex->sleep.state, v0);
    return r;
}

TEST(frames_stay_private_while_shared_ones_wait_for_a_woken_sleeper) {
    weft_executor *ex = make_executor(1);
    unsigned leaves = 0, private_above = 0;
    struct leaf_look a = { 16, &leaves, &private_above };
    ASSERT_EQ(weft_run_root(ex, with_a_sleeper_that_never_runs, &a), 0);
    ASSERT_EQ(leaves, 1597u);
    if (getenv("FJ_DEBUG")) printf("%u of %u leaves saw a private frame above\n", private_above, leaves);
    /* Before: 768 of 1597 (every spawn shared; only a shrink made frames private
     * again).  Now all but the first descent's 5. */
    if (private_above < leaves * 9 / 10) TEST_FAIL_("only %u of %u leaves saw a private frame", private_above, leaves);
    weft_executor_destroy(ex);
}

/* ---- children left public stay public while the owner runs one ---- */

struct meet {
    atomic_int arrived;
    unsigned want;
    atomic_int missed; /* children that gave up waiting for the others */
};

/* Blocks (sleeping) until `want` children run at once, for at most 10 s. */
static int meet_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct meet *m = arg;
    atomic_fetch_add(&m->arrived, 1);
    if (!wait_flag(&m->arrived, (int)m->want, 10.0)) atomic_fetch_add(&m->missed, 1);
    return 0;
}

static int meet_root(weft_ctx *ctx, void *arg) {
    struct meet *m = arg;
    weft_task_group g;
    weft_task_group_init(&g, ctx);
    for (unsigned i = 0; i < m->want; i++) ASSERT_OK(weft_task_group_spawn(&g, meet_child, m));
    return weft_task_group_wait(&g);
}

/* A flat group of as many blocking children as workers: all run at once, the
 * owner's one and every other taken by a thief.  The owner's sync of its
 * child took half of the public frames back (private): with 4 workers, the
 * third child waited for the owner to finish the fourth (2 thieves only). */
TEST(a_flat_group_of_blocking_children_runs_them_all_at_once) {
    for (unsigned workers = 2; workers <= 4; workers++) {
        weft_executor *ex = make_executor(workers);
        for (int round = 0; round < 5; round++) {
            /* The other workers park: the sharing then starts from sleepers
             * (forkjoin.h: a worker still searching at the spawns may never get
             * a child).  Waited for, not slept: 20 ms was too short on a loaded
             * machine (normal build, load 22: 1 of 3 children never saw all 3
             * run at once, the third left private behind the blocked owner). */
            for (int k = 0; k < 20000 && weft_executor_waiters(ex) != workers; k++) sleep_us(500);
            struct meet m = {.want = workers};
            ASSERT_EQ(weft_run_root(ex, meet_root, &m), 0);
            if (atomic_load(&m.missed) != 0)
                TEST_FAIL_("%u workers, round %d: %d of %u children never saw all %u run at once", workers, round,
                           atomic_load(&m.missed), workers, workers);
        }
        weft_executor_destroy(ex);
    }
}
