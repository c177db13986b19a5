/* Out of memory: an allocator installed with weft_set_allocator fails the Nth
 * allocation, for N = 1, 2, 3, ... until a whole build-and-run scenario gets
 * through without meeting a failure.  Each call must succeed or report
 * WEFT_ENOMEM (never crash, never another code), change nothing when it fails,
 * and leave every structure usable: the scenario retries the failed step and
 * must then finish with the right results.  The allocator also counts bytes, so
 * anything weft forgets to free shows up as outstanding memory at the end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#define SEC 1000000000ull

/* ---- the counting allocator -------------------------------------------------- */

struct counting {
    atomic_long calls;       /* alloc and realloc attempts */
    atomic_long fail_at;     /* fail exactly this attempt (0: none) */
    atomic_long fail_one_in; /* or fail attempts at random, one in this many (0: none) */
    atomic_long failures;    /* attempts we failed */
    atomic_llong outstanding; /* bytes handed out and not yet freed */
    atomic_long live;        /* blocks handed out and not yet freed */
    atomic_long size_mismatch; /* free/realloc told a size other than the block's */
};
static struct counting A;

/* Each block carries its size in a header, so free() can check what it is told. */
#define HDR ((size_t)alignof(max_align_t))

/* splitmix64: a deterministic "random" verdict per attempt number. */
static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static bool should_fail(void) {
    long n = atomic_fetch_add(&A.calls, 1) + 1;
    long at = atomic_load(&A.fail_at), one_in = atomic_load(&A.fail_one_in);
    if ((at && n == at) || (one_in && mix((uint64_t)n ^ test_seed()) % (uint64_t)one_in == 0)) {
        atomic_fetch_add(&A.failures, 1);
        return true;
    }
    return false;
}

static void *c_alloc(void *ctx, size_t size) {
    if (should_fail()) return NULL;
    unsigned char *p = malloc(size + HDR);
    if (!p) return NULL;
    memcpy(p, &size, sizeof size);
    atomic_fetch_add(&A.outstanding, (long long)size);
    atomic_fetch_add(&A.live, 1);
    return p + HDR;
}

static void c_free(void *ctx, void *ptr, size_t size) {
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    if (real != size) atomic_fetch_add(&A.size_mismatch, 1);
    atomic_fetch_sub(&A.outstanding, (long long)real);
    atomic_fetch_sub(&A.live, 1);
    free(p);
}

static void *c_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    if (!ptr) return c_alloc(ctx, new_size);
    if (should_fail()) return NULL;
    unsigned char *p = (unsigned char *)ptr - HDR;
    size_t real;
    memcpy(&real, p, sizeof real);
    if (real != old_size) atomic_fetch_add(&A.size_mismatch, 1);
    unsigned char *q = realloc(p, new_size + HDR);
    if (!q) return NULL;
    memcpy(q, &new_size, sizeof new_size);
    atomic_fetch_add(&A.outstanding, (long long)new_size - (long long)real);
    return q + HDR;
}

static const weft_allocator counting_allocator = {
    .alloc = c_alloc, .realloc = c_realloc, .free = c_free, .ctx = &A,
};

static void reset_allocator(long fail_at, long fail_one_in) {
    atomic_store(&A.calls, 0);
    atomic_store(&A.failures, 0);
    atomic_store(&A.fail_one_in, fail_one_in);
    atomic_store(&A.fail_at, fail_at);
}

static void assert_no_leak(const char *when) {
    long long bytes = atomic_load(&A.outstanding);
    long blocks = atomic_load(&A.live);
    if (bytes != 0 || blocks != 0)
        TEST_FAIL_("%s: %lld bytes in %ld blocks still allocated", when, bytes, blocks);
    if (atomic_load(&A.size_mismatch))
        TEST_FAIL_("%s: %ld frees passed a size other than the allocated one", when,
                   atomic_load(&A.size_mismatch));
}

/* ---- the scenario -------------------------------------------------------------- */

static long cur_fail_at; /* for messages */
static long enomem_reported; /* injected failures that a call reported */

/* A call just reported WEFT_ENOMEM: it must be one we caused.  From now on the
 * allocator succeeds, so the retry must too. */
static void saw_enomem(const char *what) {
    if (atomic_load(&A.failures) == 0)
        TEST_FAIL_("%s: WEFT_ENOMEM but no allocation had failed (fail_at %ld)", what, cur_fail_at);
    enomem_reported++;
    atomic_store(&A.fail_at, 0);
}

#define RETRY(what, expr)                                                                 \
    do {                                                                                  \
        weft_status s_ = (expr);                                                          \
        if (s_ == WEFT_ENOMEM) {                                                          \
            saw_enomem(what);                                                             \
            s_ = (expr);                                                                  \
        }                                                                                 \
        if (s_ != WEFT_OK)                                                                \
            TEST_FAIL_("%s: %s (fail_at %ld)", what, weft_errname(s_), cur_fail_at);     \
    } while (0)

enum { N = 50, N2 = 10, N3 = 64 };

struct counters {
    atomic_int c[N];
    atomic_int c2[N2];
    atomic_int c3[N3];
};

static int bump(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

static void expect_all(atomic_int *c, int n, int want, const char *when) {
    for (int i = 0; i < n; i++)
        if (atomic_load(&c[i]) != want)
            TEST_FAIL_("%s (fail_at %ld): task %d ran %d times, want %d", when, cur_fail_at, i,
                       atomic_load(&c[i]), want);
}

static weft_task emplace_named(weft_taskflow *tf, atomic_int *ctr, int i) {
    size_t before = weft_taskflow_num_tasks(tf);
    weft_task t = weft_emplace(tf, bump, ctr);
    if (weft_task_is_null(t)) {
        ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
        ASSERT_EQ(weft_taskflow_num_tasks(tf), before);
        saw_enomem("weft_emplace");
        t = weft_emplace(tf, bump, ctr);
        ASSERT_FALSE(weft_task_is_null(t));
    }
    ASSERT_EQ(weft_task_index(t), before);
    char name[32];
    snprintf(name, sizeof name, "task-%d", i);
    weft_status st = weft_task_set_name(t, name);
    if (st == WEFT_ENOMEM) {
        ASSERT_STREQ(weft_task_name(t), "");
        saw_enomem("weft_task_set_name");
        st = weft_task_set_name(t, name);
    }
    ASSERT_OK(st);
    ASSERT_STREQ(weft_task_name(t), name);
    return t;
}

static void precede_checked(weft_task a, weft_task b) {
    size_t sa = weft_task_num_successors(a), db = weft_task_num_dependents(b);
    weft_status st = weft_precede(a, b);
    if (st == WEFT_ENOMEM) {
        ASSERT_EQ(weft_task_num_successors(a), sa);
        ASSERT_EQ(weft_task_num_dependents(b), db);
        saw_enomem("weft_precede");
        st = weft_precede(a, b);
    }
    ASSERT_OK(st);
    ASSERT_EQ(weft_task_num_successors(a), sa + 1);
    ASSERT_EQ(weft_task_num_dependents(b), db + 1);
}

/* precede_many (many_to == true: from -> to[i]) or succeed_many (to[i] -> from);
 * all or nothing. */
static void many_checked(weft_task hub, weft_task *other, size_t n, bool precede) {
    size_t hub_edges = precede ? weft_task_num_successors(hub) : weft_task_num_dependents(hub);
    size_t other_edges[N];
    for (size_t i = 0; i < n; i++)
        other_edges[i] = precede ? weft_task_num_dependents(other[i])
                                 : weft_task_num_successors(other[i]);
    weft_status st = precede ? weft_precede_many(hub, other, n) : weft_succeed_many(hub, other, n);
    size_t added = 0;
    if (st == WEFT_ENOMEM) {
        saw_enomem(precede ? "weft_precede_many" : "weft_succeed_many");
    } else {
        ASSERT_OK(st);
        added = 1;
    }
    ASSERT_EQ(precede ? weft_task_num_successors(hub) : weft_task_num_dependents(hub),
              hub_edges + added * n);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(precede ? weft_task_num_dependents(other[i]) : weft_task_num_successors(other[i]),
                  other_edges[i] + added);
    if (!added) many_checked(hub, other, n, precede);
}

struct until {
    int calls, limit;
};
static bool until_pred(void *arg) {
    struct until *u = arg;
    return u->calls++ >= u->limit;
}

static void scenario(long fail_at) {
    static struct counters k;
    cur_fail_at = fail_at;
    memset(&k, 0, sizeof k);

    /* executor */
    weft_status err = WEFT_OK;
    const weft_executor_config cfg = { .workers = 2 };
    weft_executor *ex = weft_executor_create(&cfg, &err);
    if (!ex) {
        ASSERT_STATUS(err, WEFT_ENOMEM);
        saw_enomem("weft_executor_create");
        ex = weft_executor_create(&cfg, &err);
        ASSERT_NOT_NULL(ex);
    }
    ASSERT_EQ(weft_executor_workers(ex), 2);

    /* taskflow */
    weft_taskflow *tf = weft_taskflow_create("oom-flow", &err);
    if (!tf) {
        ASSERT_STATUS(err, WEFT_ENOMEM);
        saw_enomem("weft_taskflow_create");
        tf = weft_taskflow_create("oom-flow", &err);
        ASSERT_NOT_NULL(tf);
    }
    ASSERT_STREQ(weft_taskflow_name(tf), "oom-flow");

    /* tasks and edges: a binary tree, plus t0 -> t40..49 and t30..39 -> t49 */
    weft_task t[N];
    for (int i = 0; i < N; i++) t[i] = emplace_named(tf, &k.c[i], i);
    for (int i = 1; i < N; i++) precede_checked(t[(i - 1) / 2], t[i]);
    many_checked(t[0], t + 40, 10, true);
    many_checked(t[49], t + 30, 10, false);
    ASSERT_EQ(weft_taskflow_num_tasks(tf), N);

    weft_status st = weft_taskflow_set_name(tf, "renamed-flow");
    if (st == WEFT_ENOMEM) {
        ASSERT_STREQ(weft_taskflow_name(tf), "oom-flow");
        saw_enomem("weft_taskflow_set_name");
        st = weft_taskflow_set_name(tf, "renamed-flow");
    }
    ASSERT_OK(st);
    ASSERT_STREQ(weft_taskflow_name(tf), "renamed-flow");
    RETRY("weft_taskflow_validate", weft_taskflow_validate(tf, NULL));

    /* runs, every kind */
    weft_future *f = NULL;
    st = weft_run(ex, tf, &f);
    if (st == WEFT_ENOMEM) {
        ASSERT_NULL(f);
        saw_enomem("weft_run");
        st = weft_run(ex, tf, &f);
    }
    ASSERT_OK(st);
    RETRY("wait(run)", weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);
    expect_all(k.c, N, 1, "after weft_run");

    f = NULL;
    st = weft_run_n(ex, tf, 2, &f);
    if (st == WEFT_ENOMEM) {
        ASSERT_NULL(f);
        expect_all(k.c, N, 1, "after a failed weft_run_n");
        saw_enomem("weft_run_n");
        st = weft_run_n(ex, tf, 2, &f);
    }
    ASSERT_OK(st);
    RETRY("wait(run_n)", weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);
    expect_all(k.c, N, 3, "after weft_run_n(2)");

    st = weft_run_and_wait(ex, tf);
    if (st == WEFT_ENOMEM) {
        expect_all(k.c, N, 3, "after a failed weft_run_and_wait");
        saw_enomem("weft_run_and_wait");
        st = weft_run_and_wait(ex, tf);
    }
    ASSERT_OK(st);
    expect_all(k.c, N, 4, "after weft_run_and_wait");

    RETRY("weft_run(detached)", weft_run(ex, tf, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    expect_all(k.c, N, 5, "after a detached run");

    struct until u = { .limit = 2 };
    f = NULL;
    st = weft_run_until(ex, tf, until_pred, &u, &f);
    if (st == WEFT_ENOMEM) {
        saw_enomem("weft_run_until");
        u.calls = 0;
        st = weft_run_until(ex, tf, until_pred, &u, &f);
    }
    ASSERT_OK(st);
    RETRY("wait(run_until)", weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);
    expect_all(k.c, N, 7, "after weft_run_until");

    /* DOT dump (the stream itself uses the C library's malloc) */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ASSERT_NOT_NULL(out);
    st = weft_taskflow_dump_dot(tf, out);
    if (st == WEFT_ENOMEM) {
        saw_enomem("weft_taskflow_dump_dot");
        rewind(out);
        st = weft_taskflow_dump_dot(tf, out);
    }
    ASSERT_OK(st);
    fclose(out);
    ASSERT_TRUE(strstr(text, "task-49") != NULL);
    free(text);

    /* clear keeps memory; rebuild and run */
    ASSERT_OK(weft_taskflow_clear(tf));
    weft_task t2[N2];
    for (int i = 0; i < N2; i++) {
        t2[i] = emplace_named(tf, &k.c2[i], 100 + i);
        if (i) precede_checked(t2[i - 1], t2[i]);
    }
    st = weft_run_and_wait(ex, tf);
    if (st == WEFT_ENOMEM) {
        saw_enomem("weft_run_and_wait (rebuilt)");
        st = weft_run_and_wait(ex, tf);
    }
    ASSERT_OK(st);
    expect_all(k.c2, N2, 1, "rebuilt taskflow");
    expect_all(k.c, N, 7, "old tasks after clear");

    /* A wide fan: its sources run as range jobs whose splits allocate while the
     * run is on; a split that fails is absorbed (the range runs whole). */
    ASSERT_OK(weft_taskflow_clear(tf));
    for (int i = 0; i < N3; i++) (void)emplace_named(tf, &k.c3[i], 200 + i);
    f = NULL;
    st = weft_run_n(ex, tf, 3, &f);
    if (st == WEFT_ENOMEM) {
        saw_enomem("weft_run_n (wide fan)");
        st = weft_run_n(ex, tf, 3, &f);
    }
    ASSERT_OK(st);
    RETRY("wait(wide fan)", weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);
    expect_all(k.c3, N3, 3, "wide fan");

    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(oom_at_every_allocation_site_of_build_and_run) {
    memset(&A, 0, sizeof A);
    weft_set_allocator(&counting_allocator);

    reset_allocator(0, 0);
    scenario(0);
    long total = atomic_load(&A.calls);
    ASSERT_EQ(atomic_load(&A.failures), 0);
    assert_no_leak("scenario without failures");
    ASSERT_GT(total, 0); /* weft really allocates through the hook */
    printf("scenario makes %ld allocations\n", total);

    long n = 1;
    for (;; n++) {
        reset_allocator(n, 0);
        scenario(n);
        char when[64];
        snprintf(when, sizeof when, "scenario with allocation %ld failing", n);
        assert_no_leak(when);
        if (atomic_load(&A.failures) == 0 && n > total) break;
        if (n > 4 * total + 1000) TEST_FAIL_("allocation count keeps growing (n = %ld)", n);
    }
    printf("failed each of %ld allocations once; %ld reported WEFT_ENOMEM\n", n - 1,
           enomem_reported);
    /* A failure weft absorbs (falling back) is allowed, as the results are checked;
     * the count shows how many were reported. */
    weft_set_allocator(NULL);
}

/* ---- repeated failures --------------------------------------------------------- */

/* Retries `expr` (a status) until it stops giving WEFT_ENOMEM; at most 1000 tries. */
#define UNTIL_OK(expr)                                                                    \
    do {                                                                                  \
        weft_status s_;                                                                   \
        int tries_ = 0;                                                                   \
        while ((s_ = (expr)) == WEFT_ENOMEM && ++tries_ < 1000) {                         \
        }                                                                                 \
        if (s_ != WEFT_OK) TEST_FAIL_("%s: %s", #expr, weft_errname(s_));               \
    } while (0)

/* Failures at random (one allocation in 4, 10, 30) while building a large graph
 * and running it: every failed call is retried until it succeeds, and the graph
 * must then run correctly and be freed completely. */
TEST(oom_repeated_failures_leave_structures_usable) {
    enum { M = 3000 };
    static atomic_int count[M];
    static weft_task t[M];
    memset(&A, 0, sizeof A);
    weft_set_allocator(&counting_allocator);

    const long one_in[] = { 4, 10, 30 };
    for (size_t p = 0; p < sizeof one_in / sizeof one_in[0]; p++) {
        /* The executor and taskflow are made without failures (the test above
         * covers their failures one by one). */
        reset_allocator(0, 0);
        memset(count, 0, sizeof count);
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, NULL);
        ASSERT_NOT_NULL(ex);
        weft_taskflow *tf = weft_taskflow_create("repeat", NULL);
        ASSERT_NOT_NULL(tf);

        reset_allocator(0, one_in[p]);
        for (int i = 0; i < M; i++) {
            t[i] = WEFT_TASK_NULL;
            for (int k = 0; k < 1000 && weft_task_is_null(t[i]); k++) {
                t[i] = weft_emplace(tf, bump, &count[i]);
                if (weft_task_is_null(t[i]))
                    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
            }
            ASSERT_FALSE(weft_task_is_null(t[i]));
            ASSERT_EQ(weft_task_index(t[i]), i);
            if (i % 5 == 0) UNTIL_OK(weft_task_set_name(t[i], "a-task-with-a-name"));
            if (i) UNTIL_OK(weft_precede(t[(i - 1) / 3], t[i]));
            if (i > 10 && i % 10 == 0) UNTIL_OK(weft_succeed_many(t[i], t + i - 10, 5));
        }
        for (int r = 1; r <= 3; r++) {
            weft_future *f = NULL;
            UNTIL_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_future_wait_for(f, 30 * SEC));
            weft_future_destroy(f);
            for (int i = 0; i < M; i++) ASSERT_EQ(atomic_load(&count[i]), r);
        }
        ASSERT_GT(atomic_load(&A.failures), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
        assert_no_leak("repeated failures");
    }
    weft_set_allocator(NULL);
}

/* ---- a queued run handed to an executor whose injector has no memory ---------- */

struct handoff {
    atomic_int started;  /* A's run reached the task below */
    atomic_int b_queued; /* the main thread queued B's run behind A's */
    atomic_int armed;    /* the next task makes every allocation fail */
};

/* Sleeps `ms` milliseconds, or until *flag is set if flag is not NULL (10 s at most). */
static void sleep_ms_or_until(atomic_int *flag, int ms) {
    for (int i = 0; i < (flag ? 10000 : ms) && !(flag && atomic_load(flag)); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static int sleep_then_fail_allocations(weft_ctx *ctx, void *arg) {
    struct handoff *h = arg;
    atomic_store(&h->started, 1);
    if (atomic_exchange(&h->armed, 0)) {
        /* Once B's run is queued behind this one, make the hand-off's
         * allocation fail (50 ms more: a module queues a little after its
         * predecessor sets the flag). */
        sleep_ms_or_until(&h->b_queued, 0);
        sleep_ms_or_until(NULL, 50);
        atomic_store(&A.fail_one_in, 1);
    }
    return 0;
}

static int root_noop(weft_ctx *ctx, void *arg) { return 0; }

/* Leaves ex's injector `left` pushes short of needing a new block.  Pushes
 * from this thread (not a worker) go through the injector; weft_run_root
 * allocates nothing but the injector's next block, so with every allocation
 * failing it fails exactly when the next push needs one (the queue unchanged). */
static void fill_injector_but(weft_executor *ex, int left) {
    reset_allocator(0, 1);
    int st = WEFT_OK;
    for (int i = 0; i < 200 && st == WEFT_OK; i++) st = weft_run_root(ex, root_noop, NULL);
    ASSERT_STATUS(st, WEFT_ENOMEM);
    reset_allocator(0, 0);
    /* The failed push was for the last of a block's 63 slots: taking it makes
     * the next block, of which 63 - 1 - left slots are then filled. */
    for (int i = 0; left > 0 && i < 63 - left; i++) ASSERT_OK(weft_run_root(ex, root_noop, NULL));
}

/* Runs ta on A and, once A's run has reached h's task, tb on B (then sets
 * h->b_queued if set_queued); A's run must succeed and B's fail with task code
 * WEFT_ENOMEM (at task `failed_at`, if given) as an allocation failed. */
static void run_both_b_fails(weft_executor *ea, weft_taskflow *ta, weft_executor *eb, weft_taskflow *tb,
                             struct handoff *h, bool set_queued, const char *failed_at) {
    weft_future *fa, *fb;
    ASSERT_OK(weft_run(ea, ta, &fa));
    /* B's run only once A's holds the shared graph, so B's queues behind it. */
    sleep_ms_or_until(&h->started, 0);
    ASSERT_OK(weft_run(eb, tb, &fb));
    if (set_queued) atomic_store(&h->b_queued, 1);
    ASSERT_OK(weft_future_wait_for(fa, 10 * SEC));
    weft_status sb = weft_future_wait_for(fb, 10 * SEC);
    atomic_store(&A.fail_one_in, 0);
    long failures = atomic_load(&A.failures);
    ASSERT_GT(failures, 0);
    weft_run_info info;
    ASSERT_OK(weft_future_info(fb, &info));
    if (!(sb == WEFT_ENOMEM || (sb == WEFT_ETASK && info.task_code == WEFT_ENOMEM)))
        TEST_FAIL_("B's run: %s, task_code %d; want WEFT_ENOMEM", weft_errname(sb), info.task_code);
    if (failed_at) ASSERT_STREQ(info.failed_task, failed_at);
    weft_future_destroy(fa);
    weft_future_destroy(fb);
}

/* Two executors of one worker, the counting allocator on and no failure yet,
 * B's injector `left` pushes short of needing a block, h armed. */
static void setup_handoff(weft_executor **ea, weft_executor **eb, struct handoff *h, int left) {
    memset(&A, 0, sizeof A);
    weft_set_allocator(&counting_allocator);
    reset_allocator(0, 0);
    *ea = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    *eb = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(*ea);
    ASSERT_NOT_NULL(*eb);
    fill_injector_but(*eb, left);
    atomic_init(&h->started, 0);
    atomic_init(&h->b_queued, 0);
    atomic_init(&h->armed, 1);
}

/* A's run ends while B's run of the same taskflow waits behind it; B's run must
 * go to B through B's injector, which needs a new block that cannot be had.
 * The run then fails with task code WEFT_ENOMEM and ends: both futures ready,
 * both executors quiet, nothing leaked, and both usable afterwards. */
TEST(a_queued_run_that_cannot_reach_its_executor_fails_with_enomem_and_ends) {
    weft_executor *ea, *eb;
    struct handoff h;
    setup_handoff(&ea, &eb, &h, 0);
    weft_taskflow *tf = weft_taskflow_create("handoff", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, sleep_then_fail_allocations, &h)));
    run_both_b_fails(ea, tf, eb, tf, &h, true, NULL);

    /* Both executors go on working and come to rest. */
    ASSERT_OK(weft_run_and_wait(eb, tf));
    ASSERT_OK(weft_run_and_wait(ea, tf));
    ASSERT_OK(weft_executor_wait_all(ea));
    ASSERT_OK(weft_executor_wait_all(eb));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ea);
    weft_executor_destroy(eb);
    assert_no_leak("failed hand-off");
    weft_set_allocator(NULL);
}

static int set_flag(weft_ctx *ctx, void *arg) {
    atomic_store((atomic_int *)arg, 1);
    return 0;
}

/* The same for a nested run: one module body used by a graph on A and one on
 * B.  B's module waits behind A's run of the body; handing it to B fails, so
 * B's run fails at that module (task code WEFT_ENOMEM) and its task after the
 * module is skipped, not run on A. */
TEST(a_queued_module_run_that_cannot_reach_its_executor_fails_its_parent_run) {
    weft_executor *ea, *eb;
    struct handoff h; /* weft_run(eb) takes one injector slot, the hand-off needs a block */
    setup_handoff(&ea, &eb, &h, 1);
    atomic_int after_ran;
    atomic_init(&after_ran, 0);
    weft_taskflow *body = weft_taskflow_create("body", NULL);
    weft_taskflow *pa = weft_taskflow_create("pa", NULL), *pb = weft_taskflow_create("pb", NULL);
    ASSERT_TRUE(body && pa && pb);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(body, sleep_then_fail_allocations, &h)));
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(pa, body)));
    /* pb: say "queued" -> module(body) -> after.  B has one worker, which goes
     * from the first task straight to the module, which queues behind A's run
     * of the body (that task waits 50 ms more after the flag). */
    weft_task pre = weft_emplace(pb, set_flag, &h.b_queued), mod = weft_emplace_module(pb, body);
    weft_task after = weft_emplace(pb, bump, &after_ran);
    ASSERT_OK(weft_task_set_name(mod, "module-b"));
    ASSERT_OK(weft_precede(pre, mod));
    ASSERT_OK(weft_precede(mod, after));
    run_both_b_fails(ea, pa, eb, pb, &h, false, "module-b");
    ASSERT_EQ(atomic_load(&after_ran), 0);

    ASSERT_OK(weft_run_and_wait(eb, pb));
    ASSERT_EQ(atomic_load(&after_ran), 1);
    ASSERT_OK(weft_run_and_wait(ea, pa));
    ASSERT_OK(weft_executor_wait_all(ea));
    ASSERT_OK(weft_executor_wait_all(eb));
    ASSERT_OK(weft_taskflow_destroy(pa));
    ASSERT_OK(weft_taskflow_destroy(pb));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ea);
    weft_executor_destroy(eb);
    assert_no_leak("failed nested hand-off");
    weft_set_allocator(NULL);
}
