/* One taskflow (or one module body) run on several executors: runs of a
 * taskflow are serialised, and a run queued behind another executor's run must
 * still execute on the executor it was submitted to, leave both executors'
 * run counts balanced (wait_all and destroy return), and report its own status. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>

enum { MAX_EX = 4 };

/* Counts, per executor, the tasks that ran on it; a task whose argument names
 * the executor it must run on (want != NULL) counts a mismatch otherwise. */
struct where {
    weft_executor *ex[MAX_EX];
    unsigned nex;
    atomic_int ran[MAX_EX];
    atomic_int unknown;
};

struct probe {
    struct where *w;
    weft_executor *want; /* NULL: any of w->ex */
    unsigned sleep_us;
    atomic_int wrong;
};

static int record(weft_ctx *ctx, void *arg) {
    struct probe *p = arg;
    if (p->sleep_us) sleep_us(p->sleep_us);
    weft_executor *ex = weft_ctx_executor(ctx);
    if (p->want && ex != p->want) atomic_fetch_add(&p->wrong, 1);
    for (unsigned i = 0; i < p->w->nex; i++)
        if (p->w->ex[i] == ex) {
            atomic_fetch_add(&p->w->ran[i], 1);
            return 0;
        }
    atomic_fetch_add(&p->w->unknown, 1);
    return 0;
}

static void must_precede(weft_task a, weft_task b) { ASSERT_OK(weft_precede(a, b)); }

/* A chain head (sleeping) -> 3 parallel tasks -> tail, every task a probe. */
static weft_taskflow *make_shared(struct probe *p, unsigned sleep_head_us, struct where *w) {
    weft_taskflow *tf = make_taskflow("shared");
    p[0] = (struct probe){.w = w, .sleep_us = sleep_head_us};
    for (int i = 1; i < 5; i++) p[i] = (struct probe){.w = w};
    weft_task head = must_emplace(tf, record, &p[0]), tail = must_emplace(tf, record, &p[4]);
    for (int i = 1; i < 4; i++) {
        weft_task mid = must_emplace(tf, record, &p[i]);
        must_precede(head, mid);
        must_precede(mid, tail);
    }
    return tf;
}

static void expect_ok(weft_future *f, const char *what) {
    weft_status st = weft_future_wait_for(f, 10 * SEC);
    if (st != WEFT_OK) TEST_FAIL_("%s: %s", what, weft_errname(st));
    weft_future_destroy(f);
}

static unsigned rounds(unsigned full) { return (unsigned)test_scale(full); }

TEST(a_taskflow_run_on_two_executors_runs_each_run_on_its_own_executor) {
    struct where w = {.nex = 2};
    w.ex[0] = make_executor(2);
    w.ex[1] = make_executor(2);
    struct probe p[5];
    weft_taskflow *tf = make_shared(p, 10000, &w); /* the head sleeps 10 ms */
    unsigned n = rounds(20);
    for (unsigned r = 0; r < n; r++) {
        weft_future *fa, *fb;
        ASSERT_OK(weft_run(w.ex[0], tf, &fa));
        ASSERT_OK(weft_run(w.ex[1], tf, &fb)); /* queued behind A's run */
        expect_ok(fa, "run on A");
        expect_ok(fb, "run on B");
        /* Each run's 5 tasks on its own executor, none on the other. */
        int on_a = atomic_load(&w.ran[0]), on_b = atomic_load(&w.ran[1]);
        ASSERT_EQ(on_a, 5 * (r + 1));
        ASSERT_EQ(on_b, 5 * (r + 1));
    }
    ASSERT_EQ(atomic_load(&w.unknown), 0);
    ASSERT_OK(weft_executor_wait_all(w.ex[0]));
    ASSERT_OK(weft_executor_wait_all(w.ex[1]));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(w.ex[0]);
    weft_executor_destroy(w.ex[1]);
}

/* Parent graph pre -> module(body) -> post, whose own tasks must run on `want`. */
struct parent {
    weft_taskflow *tf;
    struct probe pre, post;
};

static void make_parent(struct parent *pa, weft_taskflow *body, struct where *w, weft_executor *want) {
    pa->tf = make_taskflow("parent");
    pa->pre = (struct probe){.w = w, .want = want};
    pa->post = (struct probe){.w = w, .want = want};
    weft_task pre = must_emplace(pa->tf, record, &pa->pre), post = must_emplace(pa->tf, record, &pa->post);
    weft_task mod = weft_emplace_module(pa->tf, body);
    ASSERT_FALSE(weft_task_is_null(mod));
    must_precede(pre, mod);
    must_precede(mod, post);
}

TEST(a_module_body_shared_by_graphs_on_two_executors_runs_on_each_parents_executor) {
    struct where w = {.nex = 2};
    w.ex[0] = make_executor(2);
    w.ex[1] = make_executor(2);
    struct probe bp[5];
    weft_taskflow *body = make_shared(bp, 10000, &w);
    struct parent pa, pb;
    make_parent(&pa, body, &w, w.ex[0]);
    make_parent(&pb, body, &w, w.ex[1]);
    unsigned n = rounds(20);
    for (unsigned r = 0; r < n; r++) {
        weft_future *fa, *fb;
        ASSERT_OK(weft_run(w.ex[0], pa.tf, &fa));
        ASSERT_OK(weft_run(w.ex[1], pb.tf, &fb));
        expect_ok(fa, "parent on A");
        expect_ok(fb, "parent on B");
        /* Per executor and round: its parent's 2 tasks and one body run (5). */
        int on_a = atomic_load(&w.ran[0]), on_b = atomic_load(&w.ran[1]);
        ASSERT_EQ(on_a, 7 * (r + 1));
        ASSERT_EQ(on_b, 7 * (r + 1));
    }
    ASSERT_EQ(atomic_load(&pa.pre.wrong) + atomic_load(&pa.post.wrong), 0);
    ASSERT_EQ(atomic_load(&pb.pre.wrong) + atomic_load(&pb.post.wrong), 0);
    ASSERT_OK(weft_executor_wait_all(w.ex[0]));
    ASSERT_OK(weft_executor_wait_all(w.ex[1]));
    ASSERT_OK(weft_taskflow_destroy(pa.tf));
    ASSERT_OK(weft_taskflow_destroy(pb.tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(w.ex[0]);
    weft_executor_destroy(w.ex[1]);
}

/* Four executors, one shared taskflow and one shared module body, many runs
 * queued at once in random order of executors; every task on its run's
 * executor, every count exact, and every executor quiet at the end. */
TEST(many_runs_of_shared_graphs_on_four_executors_stay_on_their_executors) {
    struct where w = {.nex = MAX_EX};
    for (unsigned i = 0; i < MAX_EX; i++) w.ex[i] = make_executor(1 + i % 2);
    struct probe sp[5], bp[5];
    weft_taskflow *shared = make_shared(sp, 200, &w);
    weft_taskflow *body = make_shared(bp, 200, &w);
    struct parent par[MAX_EX];
    for (unsigned i = 0; i < MAX_EX; i++) make_parent(&par[i], body, &w, w.ex[i]);
    uint64_t rng = test_seed() | 1;
    unsigned n = rounds(200);
    int want[MAX_EX] = {0};
    for (unsigned r = 0; r < n; r++) {
        weft_future *f[2 * MAX_EX];
        unsigned nf = 0;
        for (unsigned k = 0; k < MAX_EX; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            unsigned e = (unsigned)(rng % MAX_EX);
            ASSERT_OK(weft_run(w.ex[e], shared, &f[nf++]));
            want[e] += 5;
            ASSERT_OK(weft_run(w.ex[k], par[k].tf, &f[nf++]));
            want[k] += 7;
        }
        for (unsigned i = 0; i < nf; i++) expect_ok(f[i], "stress run");
    }
    for (unsigned i = 0; i < MAX_EX; i++) {
        ASSERT_OK(weft_executor_wait_all(w.ex[i]));
        int ran = atomic_load(&w.ran[i]);
        ASSERT_EQ(ran, want[i]);
        ASSERT_EQ(atomic_load(&par[i].pre.wrong) + atomic_load(&par[i].post.wrong), 0);
    }
    ASSERT_EQ(atomic_load(&w.unknown), 0);
    for (unsigned i = 0; i < MAX_EX; i++) ASSERT_OK(weft_taskflow_destroy(par[i].tf));
    ASSERT_OK(weft_taskflow_destroy(shared));
    ASSERT_OK(weft_taskflow_destroy(body));
    for (unsigned i = 0; i < MAX_EX; i++) weft_executor_destroy(w.ex[i]);
}

/* A worker of one executor hands work to another: the run queued behind its
 * own (start_queued), or a semaphore unit to a task parked on it.  That job
 * can run and end the last run of the receiving executor, which its user then
 * destroys, while the handing worker is still in the receiver's wake-up: a
 * use after free that TSan reports (the freed executor against the wake's
 * read), on the first iterations before the fix. */
static int hold_a_while(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    sleep_us(50);
    return 0;
}

TEST(an_executor_destroyed_as_soon_as_a_handed_over_run_ends_is_not_touched_after) {
    weft_executor *giver = make_executor(1);
    weft_taskflow *tf = make_taskflow("handed");
    must_emplace(tf, noop, NULL);
    weft_status err;
    weft_semaphore *s = weft_semaphore_create(1, &err);
    ASSERT_NOT_NULL(s);
    weft_taskflow *holder = make_taskflow("holder"), *waiter = make_taskflow("waiter");
    weft_task h = must_emplace(holder, hold_a_while, NULL), wt = must_emplace(waiter, noop, NULL);
    ASSERT_OK(weft_task_acquire(h, s));
    ASSERT_OK(weft_task_release(h, s));
    ASSERT_OK(weft_task_acquire(wt, s));
    ASSERT_OK(weft_task_release(wt, s));
    for (int i = 0; i < 200; i++) {
        weft_executor *taker = make_executor(1);
        weft_future *f0, *f1;
        /* A run of tf queued on taker behind the giver's. */
        ASSERT_OK(weft_run(giver, tf, &f0));
        ASSERT_OK(weft_run(taker, tf, &f1));
        ASSERT_OK(weft_future_wait(f1));
        ASSERT_OK(weft_future_wait(f0));
        weft_future_destroy(f0);
        weft_future_destroy(f1);
        weft_executor_destroy(taker);
        /* A task of taker parked on a unit the giver's task hands over. */
        taker = make_executor(1);
        ASSERT_OK(weft_run(giver, holder, &f0));
        ASSERT_OK(weft_run(taker, waiter, &f1));
        ASSERT_OK(weft_future_wait(f1));
        weft_executor_destroy(taker); /* the giver's run may still be in its release */
        ASSERT_OK(weft_future_wait(f0));
        weft_future_destroy(f0);
        weft_future_destroy(f1);
    }
    ASSERT_OK(weft_executor_wait_all(giver));
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(holder);
    weft_taskflow_destroy(waiter);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(giver);
}
