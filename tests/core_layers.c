/* The registry through which layers plug into the core (core/layer.h):
 * per-worker state laid out and initialised in order, init failures undone,
 * idle-time pollers (called, serialised, removable, seen while every worker
 * would otherwise sleep) and the victim order a layer gives each worker. */
#define _GNU_SOURCE
#include "harness.h"
#include "test_util.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "async/async.h"
#include "core/layer.h"
#include "observe/observe_layer.h"
#include "weft.h"

/* ---- a test layer: per-worker state, init order, failure injection ---- */

struct test_state {
    uint64_t magic;
    _Atomic uint64_t touched; /* written by the worker itself in a task */
    char pad[200];            /* more than a cache line: the next worker's area must not overlap */
};

static _Atomic int inits, finis, ex_inits, ex_finis, fail_worker_init_at = -1;
static _Atomic int order_seen; /* 1 once executor_init ran with the async layer already usable */

static int test_ex_init(weft_executor *ex, const weft_executor_config *c) {
    (void)c;
    atomic_fetch_add(&ex_inits, 1);
    /* Layers before this one are initialised: their state is there. */
    if (weft__async_worker_of(&ex->workers[0]) != NULL) atomic_store(&order_seen, 1);
    return 0;
}
static void test_ex_fini(weft_executor *ex) { (void)ex, atomic_fetch_add(&ex_finis, 1); }
static int test_worker_init(weft__worker *w, void *state) {
    struct test_state *s = state;
    if ((int)w->id == atomic_load(&fail_worker_init_at)) return WEFT_ENOMEM;
    if (s->magic != 0) return WEFT_EINVAL; /* the area must come zeroed */
    s->magic = 0xfeedu + w->id;
    atomic_fetch_add(&inits, 1);
    return 0;
}
static void test_worker_fini(weft__worker *w, void *state) {
    struct test_state *s = state;
    if (s->magic == 0xfeedu + w->id) atomic_fetch_add(&finis, 1);
}

static weft__layer test_layer = {
    .name = "test",
    .worker_bytes = sizeof(struct test_state),
    .executor_init = test_ex_init,
    .executor_fini = test_ex_fini,
    .worker_init = test_worker_init,
    .worker_fini = test_worker_fini,
};

static weft__layer *const layers[] = {&weft__async_layer, &weft__observe_layer, &test_layer};

static weft_executor *create(unsigned workers, weft_status *st) {
    weft_executor_config c = {.workers = workers};
    return weft__executor_create(&c, layers, 3, st);
}

static int touch(weft_ctx *cx, void *arg) {
    (void)arg;
    struct test_state *s = weft__layer_state(cx->worker, &test_layer);
    atomic_fetch_add(&s->touched, 1);
    return 0;
}

TEST(each_layer_gets_zeroed_per_worker_state_initialised_in_order_and_finished) {
    weft_status st;
    weft_executor *ex = create(4, &st);
    ASSERT_EQ(st, WEFT_OK);
    /* The workers' and the submitter slots' areas (core/submitter.c). */
    ASSERT_EQ(atomic_load(&inits), 4 + WEFT__SUBMITTERS);
    ASSERT_EQ(atomic_load(&ex_inits), 1);
    ASSERT_EQ(atomic_load(&order_seen), 1);
    /* Areas of different workers are disjoint and on their own lines. */
    for (unsigned i = 0; i + 1 < 4; i++) {
        char *a = weft__layer_state(&ex->workers[i], &test_layer);
        char *b = weft__layer_state(&ex->workers[i + 1], &test_layer);
        ASSERT_TRUE(b - a >= (ptrdiff_t)sizeof(struct test_state));
        ASSERT_EQ((uintptr_t)a % 64, 0u);
    }
    for (int i = 0; i < 1000; i++) ASSERT_EQ(weft_silent_async(ex, touch, NULL), WEFT_OK);
    ASSERT_EQ(weft_executor_wait_all(ex), WEFT_OK);
    uint64_t total = 0;
    for (unsigned i = 0; i < 4; i++)
        total += atomic_load(&((struct test_state *)weft__layer_state(&ex->workers[i], &test_layer))->touched);
    ASSERT_EQ(total, 1000u);
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&finis), 4 + WEFT__SUBMITTERS);
    ASSERT_EQ(atomic_load(&ex_finis), 1);
}

TEST(a_layer_whose_worker_init_fails_undoes_what_was_initialised_and_create_reports_it) {
    atomic_store(&fail_worker_init_at, 2);
    weft_status st = WEFT_OK;
    weft_executor *ex = create(4, &st);
    ASSERT_TRUE(ex == NULL);
    ASSERT_EQ(st, WEFT_ENOMEM);
    ASSERT_EQ(atomic_load(&inits), 2);
    ASSERT_EQ(atomic_load(&finis), 2);   /* the two workers done were finished */
    ASSERT_EQ(atomic_load(&ex_finis), 1); /* and the layer's executor part */
    atomic_store(&fail_worker_init_at, -1);
    ex = create(2, &st); /* and the next create works */
    ASSERT_EQ(st, WEFT_OK);
    weft_executor_destroy(ex);
}

TEST(executors_of_one_process_built_from_another_list_of_layers_are_refused) {
    weft_status st;
    weft_executor *ex = create(2, &st);
    ASSERT_EQ(st, WEFT_OK);
    static weft__layer *const other[] = {&weft__async_layer};
    weft_executor_config c = {.workers = 2};
    ASSERT_TRUE(weft__executor_create(&c, other, 1, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    weft_executor_destroy(ex);
}

/* ---- pollers ---- */

struct completion {
    weft_executor *ex;
    uint64_t due_ns;          /* "the device finishes" at this time */
    _Atomic int submitted;    /* the poller submitted the job */
    _Atomic int ran;          /* the job ran */
    _Atomic int in_poll;      /* callers inside the poller right now */
    _Atomic int overlap;      /* two callers at once were seen */
    _Atomic uint64_t calls;
    uint64_t ran_at;
};

static int completion_job(weft_ctx *cx, void *arg) {
    (void)cx;
    struct completion *c = arg;
    c->ran_at = now_ns();
    atomic_store(&c->ran, 1);
    return 0;
}

static int completion_poll(weft_executor *ex, void *arg) {
    struct completion *c = arg;
    if (atomic_fetch_add(&c->in_poll, 1) != 0) atomic_store(&c->overlap, 1);
    atomic_fetch_add(&c->calls, 1);
    int r = WEFT__POLL_IDLE;
    if (!atomic_load(&c->submitted)) {
        r = WEFT__POLL_PENDING;
        if (now_ns() >= c->due_ns) {
            atomic_store(&c->submitted, 1);
            if (weft_silent_async(ex, completion_job, c) == WEFT_OK) r = WEFT__POLL_PROGRESS;
        }
    }
    atomic_fetch_sub(&c->in_poll, 1);
    return r;
}

TEST(a_pending_poller_is_seen_while_every_worker_would_sleep_and_its_job_runs) {
    weft_executor *ex = make_executor(3);
    /* Let every worker park first: nothing else will wake them. */
    struct timespec pause = {0, 30 * 1000 * 1000};
    nanosleep(&pause, NULL);
    struct completion c = {.ex = ex, .due_ns = now_ns() + 20 * 1000 * 1000};
    weft__poller *p;
    ASSERT_EQ(weft__poller_add(ex, completion_poll, &c, &p), WEFT_OK);
    uint64_t deadline = now_ns() + 2000ull * 1000 * 1000;
    while (!atomic_load(&c.ran) && now_ns() < deadline) nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    ASSERT_EQ(atomic_load(&c.ran), 1);
    /* Seen within the nap bound of its due time (plus slack for a loaded machine). */
    ASSERT_TRUE(c.ran_at - c.due_ns < 500ull * 1000 * 1000);
    ASSERT_EQ(atomic_load(&c.overlap), 0);
    ASSERT_EQ(weft__poller_remove(ex, p), WEFT_OK);
    uint64_t calls = atomic_load(&c.calls);
    nanosleep(&pause, NULL);
    ASSERT_EQ(atomic_load(&c.calls), calls); /* never called once removed */
    ASSERT_EQ(weft__poller_remove(ex, p), WEFT_EINVAL); /* twice */
    weft_executor_destroy(ex);
}

static int always_pending(weft_executor *ex, void *arg) {
    (void)ex;
    struct completion *c = arg;
    if (atomic_fetch_add(&c->in_poll, 1) != 0) atomic_store(&c->overlap, 1);
    atomic_fetch_add(&c->calls, 1);
    atomic_fetch_sub(&c->in_poll, 1);
    return WEFT__POLL_PENDING;
}

static int spin_task(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    volatile unsigned x = 0;
    for (unsigned i = 0; i < 2000; i++) x += i;
    return 0;
}

TEST(pollers_are_never_called_by_two_workers_at_once_and_removal_waits_for_a_caller) {
    weft_executor *ex = make_executor(4);
    struct completion c[3] = {{0}};
    for (int round = 0; round < 20; round++) {
        weft__poller *p[3];
        for (int k = 0; k < 3; k++) ASSERT_EQ(weft__poller_add(ex, always_pending, &c[k], &p[k]), WEFT_OK);
        for (int i = 0; i < 200; i++) ASSERT_EQ(weft_silent_async(ex, spin_task, NULL), WEFT_OK);
        /* Odd rounds: removed while the tasks run; even: once the workers went
         * idle and poll (the watcher naps and polls again). */
        if (round % 2 == 0) {
            ASSERT_EQ(weft_executor_wait_all(ex), WEFT_OK);
            nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
        }
        for (int k = 0; k < 3; k++) {
            ASSERT_EQ(weft__poller_remove(ex, p[k]), WEFT_OK);
            ASSERT_EQ(atomic_load(&c[k].in_poll), 0); /* nobody inside once remove returned */
        }
        ASSERT_EQ(weft_executor_wait_all(ex), WEFT_OK);
    }
    for (int k = 0; k < 3; k++) {
        ASSERT_EQ(atomic_load(&c[k].overlap), 0);
        ASSERT_TRUE(atomic_load(&c[k].calls) > 0);
    }
    weft_executor_destroy(ex);
}

/* The handle reaches the poller through an atomic: weft__poller_add writes
 * *out after the poller may already be running (layer.h). */
static weft__poller *_Atomic self_handle;
static _Atomic int self_result = 1;
static int remove_self(weft_executor *ex, void *arg) {
    (void)arg;
    weft__poller *h = atomic_load(&self_handle);
    if (h && atomic_load(&self_result) == 1) atomic_store(&self_result, weft__poller_remove(ex, h));
    return WEFT__POLL_IDLE;
}

static int idle_poll(weft_executor *ex, void *arg) { return (void)ex, (void)arg, WEFT__POLL_IDLE; }

static int nothing(weft_ctx *ctx, void *arg) { return (void)ctx, (void)arg, 0; }

TEST(poller_misuse_gets_a_status_not_a_hang) {
    weft_executor *ex = make_executor(2);
    weft__poller *p[WEFT__POLLERS_MAX + 1];
    ASSERT_EQ(weft__poller_add(NULL, idle_poll, NULL, &p[0]), WEFT_EINVAL);
    ASSERT_EQ(weft__poller_add(ex, NULL, NULL, &p[0]), WEFT_EINVAL);
    ASSERT_EQ(weft__poller_add(ex, idle_poll, NULL, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft__poller_remove(ex, NULL), WEFT_EINVAL);
    for (int i = 0; i < WEFT__POLLERS_MAX; i++) ASSERT_EQ(weft__poller_add(ex, idle_poll, NULL, &p[i]), WEFT_OK);
    ASSERT_EQ(weft__poller_add(ex, idle_poll, NULL, &p[WEFT__POLLERS_MAX]), WEFT_EBUSY);
    for (int i = 0; i < WEFT__POLLERS_MAX; i++) ASSERT_EQ(weft__poller_remove(ex, p[i]), WEFT_OK);
    /* Removing itself from inside its own call would wait for itself. */
    weft__poller *h;
    ASSERT_EQ(weft__poller_add(ex, remove_self, NULL, &h), WEFT_OK);
    atomic_store(&self_handle, h);
    /* A poller is called by a worker going idle.  The one woken by the add may
     * have called it before the handle was published (it then said idle and
     * parked for good: 1 run under TSan on a loaded machine), so each try
     * gives a worker a job to go idle after. */
    uint64_t deadline = now_ns() + 10000ull * 1000 * 1000;
    while (atomic_load(&self_result) == 1 && now_ns() < deadline) {
        ASSERT_EQ(weft_silent_async(ex, nothing, NULL), WEFT_OK);
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    ASSERT_EQ(atomic_load(&self_result), WEFT_EBUSY);
    ASSERT_EQ(weft__poller_remove(ex, h), WEFT_OK);
    weft_executor_destroy(ex);
}

/* ---- victim order ---- */

TEST(a_victim_order_is_checked_and_copied) {
    weft_executor *ex = make_executor(4);
    weft__worker *w = &ex->workers[0];
    unsigned good[] = {1, 2, 3}, ends[] = {1, 3};
    unsigned self[] = {0, 1}, far[] = {1, 9}, ends2[] = {2};
    unsigned bad_ends[] = {2, 1}, short_ends[] = {2};
    ASSERT_EQ(weft__worker_set_victims(NULL, good, 3, ends, 2), WEFT_EINVAL);
    ASSERT_EQ(weft__worker_set_victims(w, self, 2, ends2, 1), WEFT_EINVAL);
    ASSERT_EQ(weft__worker_set_victims(w, far, 2, ends2, 1), WEFT_EINVAL);
    ASSERT_EQ(weft__worker_set_victims(w, good, 3, bad_ends, 2), WEFT_EINVAL);
    ASSERT_EQ(weft__worker_set_victims(w, good, 3, short_ends, 1), WEFT_EINVAL);
    ASSERT_EQ(weft__worker_set_victims(w, good, 3, NULL, 2), WEFT_EINVAL);
    /* (Set only on a worker that is not running: this test creates a fresh
     * executor below for the real use; here it checks the copy only.) */
    weft_executor_destroy(ex);
}

/* A layer that gives each of 4 workers tiers {its pair} then {the other pair}. */
static int tiers_init(weft_executor *ex, const weft_executor_config *c) {
    (void)c;
    for (unsigned i = 0; i < ex->nworkers; i++) {
        unsigned pair = i ^ 1u, order[3], n = 0;
        order[n++] = pair;
        for (unsigned v = 0; v < ex->nworkers; v++)
            if (v != i && v != pair) order[n++] = v;
        unsigned ends[2] = {1, n};
        int st = weft__worker_set_victims(&ex->workers[i], order, n, ends, 2);
        if (st != WEFT_OK) return st;
    }
    return 0;
}
static weft__layer tiers_layer = {.name = "tiers", .executor_init = tiers_init};

static long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }
struct fib { int n; long r; };
static int fib_task(weft_ctx *cx, void *p) {
    struct fib *a = p;
    if (a->n < 12) {
        a->r = fib_serial(a->n);
        return 0;
    }
    struct fib x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_spawn(cx, fib_task, &x);
    fib_task(cx, &y);
    weft_sync(cx);
    a->r = x.r + y.r;
    return 0;
}

TEST(workers_given_tiers_of_victims_steal_through_them_and_lose_nothing) {
    static weft__layer *const with_tiers[] = {&weft__async_layer, &weft__observe_layer, &tiers_layer};
    weft_executor_config c = {.workers = 4};
    weft_status st;
    weft_executor *ex = weft__executor_create(&c, with_tiers, 3, &st);
    ASSERT_EQ(st, WEFT_OK);
    ASSERT_EQ(ex->workers[2].ntiers, 2u);
    ASSERT_EQ(ex->workers[2].victims[0], 3u);
    for (int round = 0; round < 5; round++) {
        struct fib f = {25, 0};
        ASSERT_EQ(weft_run_root(ex, fib_task, &f), 0);
        ASSERT_EQ(f.r, fib_serial(25));
    }
    for (int i = 0; i < 2000; i++) ASSERT_EQ(weft_silent_async(ex, spin_task, NULL), WEFT_OK);
    ASSERT_EQ(weft_executor_wait_all(ex), WEFT_OK);
    weft_executor_destroy(ex);
}
