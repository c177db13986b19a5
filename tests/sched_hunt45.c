/* Hunt 45 (h45-2): scheduling policies and handles, pass 2. */
#include "sched_util.h"

#include <weft/gpu.h>
#include <weft/pipeline.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a user policy: a locked FIFO ring ---- */

typedef struct ring_policy {
    pthread_mutex_t m;
    weft_sched_item **items;
    size_t head, n, cap;
    atomic_int destroyed;
    size_t held_at_destroy; /* items it held when destroy was called */
} ring_policy;

static int ring_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p, (void)worker;
    ring_policy *r = st;
    pthread_mutex_lock(&r->m);
    int full = r->n == r->cap;
    if (!full) r->items[(r->head + r->n++) % r->cap] = it;
    pthread_mutex_unlock(&r->m);
    return full;
}

static weft_sched_item *ring_pop(void *st, int worker) {
    (void)worker;
    ring_policy *r = st;
    weft_sched_item *it = NULL;
    pthread_mutex_lock(&r->m);
    if (r->n) it = r->items[r->head], r->head = (r->head + 1) % r->cap, r->n--;
    pthread_mutex_unlock(&r->m);
    return it;
}

static size_t ring_size(void *st) {
    ring_policy *r = st;
    pthread_mutex_lock(&r->m);
    size_t n = r->n;
    pthread_mutex_unlock(&r->m);
    return n;
}

static void ring_destroy(void *st) {
    ring_policy *r = st;
    r->held_at_destroy += ring_size(r);
    atomic_fetch_add(&r->destroyed, 1);
}

static ring_policy *ring_new(size_t cap) {
    ring_policy *r = calloc(1, sizeof *r);
    ASSERT_NOT_NULL(r);
    r->items = calloc(cap, sizeof *r->items);
    ASSERT_NOT_NULL(r->items);
    r->cap = cap;
    pthread_mutex_init(&r->m, NULL);
    return r;
}

static void ring_free(ring_policy *r) {
    pthread_mutex_destroy(&r->m);
    free(r->items);
    free(r);
}

/* ---- (a) one policy state shared by two executors ---- */

static long fib_ref(long n) { return n < 2 ? n : fib_ref(n - 1) + fib_ref(n - 2); }

static int fib_value(weft_ctx *cx, void *arg) {
    long *n = arg;
    if (*n < 2) return 0;
    long a = *n - 1, b = *n - 2;
    ASSERT_OK(weft_spawn(cx, fib_value, &a));
    ASSERT_OK(fib_value(cx, &b));
    ASSERT_OK(weft_sync(cx));
    *n = a + b;
    return 0;
}

static void add_index(size_t i, void *arg) { atomic_fetch_add_explicit((atomic_long *)arg, (long)i, memory_order_relaxed); }

/* Graph runs, async tasks from this thread and from tasks, fork-join and a
 * parallel loop on ex, each counted exactly. */
static void *mixed_work(void *arg) {
    weft_executor *ex = arg;
    weft_taskflow *tf = make_taskflow("diamond");
    atomic_int count = 0;
    weft_task a = must_emplace(tf, bump, &count), b = must_emplace(tf, bump, &count),
              c = must_emplace(tf, bump, &count), d = must_emplace(tf, bump, &count);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_precede(b, d));
    ASSERT_OK(weft_precede(c, d));
    for (int i = 0; i < 20; i++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), 80);
    weft_taskflow_destroy(tf);
    atomic_int n = 0;
    for (int i = 0; i < 1000; i++)
        ASSERT_OK(weft_async_with(ex, bump, &n, &(weft_async_options){.priority = (weft_priority)(i % 4 - 1)}, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&n), 1000);
    long v = 16;
    ASSERT_OK(weft_run_root(ex, fib_value, &v));
    ASSERT_EQ(v, fib_ref(16));
    atomic_long sum = 0;
    ASSERT_OK(weft_parallel_for(ex, 0, 20000, 1, add_index, &sum, NULL));
    ASSERT_EQ(atomic_load(&sum), 20000L * 19999 / 2);
    return NULL;
}

/* weft/sched.h: a user may give one policy (its state) to several
 * executors: one queue that all their workers push to and take from.  A
 * worker of one executor then takes the other's items: not in its own
 * executor's set of held items, each was counted as a policy error and
 * dropped, and the other executor's wait hung (1 run in 5 of 2000 async
 * tasks on each).  Each item must run once, on the executor it came from,
 * with no policy error counted, and destroy is called once per executor. */
TEST(one_policy_state_given_to_two_executors_runs_every_job_of_each_once_and_counts_no_error) {
    ring_policy *r = ring_new(1 << 16);
    weft_sched_policy pol = {.state = r, .push = ring_push, .pop = ring_pop, .size = ring_size, .destroy = ring_destroy};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *a = make_sched_executor(2, &sc), *b = make_sched_executor(2, &sc);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, mixed_work, a), 0);
    mixed_work(b);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    weft_sched_stats sa, sb;
    ASSERT_OK(weft_sched_get_stats(a, &sa));
    ASSERT_OK(weft_sched_get_stats(b, &sb));
    ASSERT_EQ(sa.policy_errors, 0);
    ASSERT_EQ(sb.policy_errors, 0);
    weft_executor_destroy(a);
    ASSERT_EQ(atomic_load(&r->destroyed), 1);
    weft_executor_destroy(b);
    ASSERT_EQ(atomic_load(&r->destroyed), 2);
    ASSERT_EQ(ring_size(r), 0);
    ring_free(r);
}

typedef struct spawner {
    weft_executor *ex;
    atomic_int n, spawned, release;
} spawner;

static int spawn_then_hold(weft_ctx *cx, void *arg) {
    (void)cx;
    spawner *sp = arg;
    /* From a worker: each job goes into the policy at once. */
    for (int i = 0; i < 50; i++) ASSERT_OK(weft_silent_async(sp->ex, bump, &sp->n));
    atomic_store(&sp->spawned, 1);
    (void)wait_flag(&sp->release, 1, 10);
    return 0;
}

/* The same, deterministically: executor a's only worker queues 50 jobs in
 * the shared FIFO and stays busy; b's worker, woken by one job of b's, finds
 * a's 50 first.  They must reach a and run there. */
TEST(jobs_another_executor_takes_from_a_shared_policy_state_run_on_their_own) {
    ring_policy *r = ring_new(1 << 12);
    weft_sched_policy pol = {.state = r, .push = ring_push, .pop = ring_pop, .size = ring_size, .destroy = ring_destroy};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *a = make_sched_executor(1, &sc), *b = make_sched_executor(1, &sc);
    spawner sp = {.ex = a};
    ASSERT_OK(weft_silent_async(a, spawn_then_hold, &sp));
    ASSERT_TRUE(wait_flag(&sp.spawned, 1, 10));
    atomic_int nb = 0;
    ASSERT_OK(weft_silent_async(b, bump, &nb));
    ASSERT_TRUE(wait_flag(&nb, 1, 10));
    atomic_store(&sp.release, 1);
    if (!wait_flag(&sp.n, 50, 5)) TEST_FAIL_("%d of a's 50 jobs ran", atomic_load(&sp.n));
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_OK(weft_executor_wait_all(b));
    weft_sched_stats sa, sb;
    ASSERT_OK(weft_sched_get_stats(a, &sa));
    ASSERT_OK(weft_sched_get_stats(b, &sb));
    ASSERT_EQ(sa.policy_errors + sb.policy_errors, 0);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    ASSERT_EQ(atomic_load(&r->destroyed), 2);
    ring_free(r);
}

/* ---- probe: a policy that hands items out only 2 ms after their push ---- */

typedef struct late_policy {
    pthread_mutex_t m;
    weft_sched_item *items[1024];
    double at[1024];
    size_t n;
} late_policy;

static int late_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p, (void)worker;
    late_policy *l = st;
    pthread_mutex_lock(&l->m);
    int full = l->n == 1024;
    if (!full) l->items[l->n] = it, l->at[l->n++] = now_s();
    pthread_mutex_unlock(&l->m);
    return full;
}

static weft_sched_item *late_pop(void *st, int worker) {
    (void)worker;
    late_policy *l = st;
    weft_sched_item *it = NULL;
    pthread_mutex_lock(&l->m);
    if (l->n && now_s() - l->at[0] > 0.002) {
        it = l->items[0];
        memmove(l->items, l->items + 1, --l->n * sizeof *l->items);
        memmove(l->at, l->at + 1, l->n * sizeof *l->at);
    }
    pthread_mutex_unlock(&l->m);
    return it;
}

/* weft/sched.h: a policy that returns NULL while it holds items breaks the
 * contract, is counted, and "those items run only once the policy hands
 * them out on a later call".  A policy that holds each item a while (2 ms:
 * batching, rate limiting) made no later call: the workers looked, found
 * nothing, slept, and nothing woke them; weft_executor_wait_all waited for
 * ever (10 async tasks: 1 ran).  They must look again (a nap), so every
 * job runs, and the lapse is counted, not once per look. */
TEST(a_policy_that_hands_items_out_late_still_gets_every_job_run) {
    late_policy *l = calloc(1, sizeof *l);
    ASSERT_NOT_NULL(l);
    pthread_mutex_init(&l->m, NULL);
    weft_sched_policy pol = {.state = l, .push = late_push, .pop = late_pop};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *ex = make_sched_executor(2, &sc);
    atomic_int n = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 10; i++) ASSERT_OK(weft_silent_async(ex, bump, &n));
        if (!wait_flag(&n, 10 * (round + 1), 5)) TEST_FAIL_("round %d: %d of 10 jobs ran in 5 s", round, atomic_load(&n) - 10 * round);
        sleep_us(3000); /* every worker asleep again */
    }
    weft_taskflow *tf = make_taskflow("chain");
    atomic_int c = 0;
    weft_task prev = must_emplace(tf, bump, &c);
    for (int i = 0; i < 4; i++) {
        weft_task t = must_emplace(tf, bump, &c);
        ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&c), 5);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    /* Each sleep beside held items is one lapse at most per worker, not one
     * per nap (a nap is 50 us to 1 ms). */
    ASSERT_LE(st.policy_errors, 200);
    weft_executor_destroy(ex);
    pthread_mutex_destroy(&l->m);
    free(l);
}

/* ---- every kind of work at priorities and with hints, every scheduler ---- */

/* Refuses every third push (a bounded queue that is full now and then). */
static atomic_uint refuse_counter;
static int refusing_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    if (atomic_fetch_add(&refuse_counter, 1) % 3 == 0) return 1;
    return ring_push(st, it, p, worker);
}

static int cmp_int(const void *a, const void *b, void *arg) {
    (void)arg;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_plain(const void *a, const void *b) { return cmp_int(a, b, NULL); }
static void add_long(void *acc, const void *x, void *arg) { (void)arg; *(long *)acc += *(const long *)x; }

static int sf_body(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)cx;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 10; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace(g, bump, arg)));
    return 0;
}

typedef struct sem_arg {
    atomic_int inside, max_inside, n;
} sem_arg;

static int sem_task(weft_ctx *cx, void *arg) {
    (void)cx;
    sem_arg *a = arg;
    int in = atomic_fetch_add(&a->inside, 1) + 1;
    int m = atomic_load(&a->max_inside);
    while (in > m && !atomic_compare_exchange_weak(&a->max_inside, &m, in)) {}
    sleep_us(100);
    atomic_fetch_sub(&a->inside, 1);
    atomic_fetch_add(&a->n, 1);
    return 0;
}

/* A token pipeline: serial, parallel, serial; the last stage checks order. */
typedef struct pipe_state {
    atomic_int made, mid;
    uint64_t next_out;
    int out_of_order;
} pipe_state;

static int pipe_first(weft_pipeflow *pf, void *arg) {
    pipe_state *ps = arg;
    if (atomic_load(&ps->made) == 300) return weft_pipeflow_stop(pf), 0;
    atomic_fetch_add(&ps->made, 1);
    return 0;
}
static int pipe_mid(weft_pipeflow *pf, void *arg) {
    (void)pf;
    atomic_fetch_add(&((pipe_state *)arg)->mid, 1);
    return 0;
}
static int pipe_last(weft_pipeflow *pf, void *arg) {
    pipe_state *ps = arg;
    if (weft_pipeflow_token(pf) != ps->next_out) ps->out_of_order++;
    ps->next_out = weft_pipeflow_token(pf) + 1;
    return 0;
}

static weft_gpu_device *gpu; /* the emulator, opened once */
static atomic_int gpu_ran;
static int gpu_task(weft_ctx *cx, weft_gpu_stream *st, void *arg) {
    (void)cx, (void)st, (void)arg;
    atomic_fetch_add(&gpu_ran, 1);
    return 0;
}

static void all_kinds_prioritised(weft_executor *ex) {
    /* Algorithms at HIGH with a NUMA hint, then at LOW. */
    for (int round = 0; round < 2; round++) {
        weft_priority oldp;
        unsigned oldn;
        ASSERT_OK(weft_algo_set_priority(round ? WEFT_PRIORITY_LOW : WEFT_PRIORITY_HIGH, &oldp));
        ASSERT_OK(weft_algo_set_numa_node(WEFT_NUMA_NODE(0), &oldn));
        atomic_long sum = 0;
        ASSERT_OK(weft_parallel_for(ex, 0, 20000, 1, add_index, &sum, NULL));
        ASSERT_EQ(atomic_load(&sum), 20000L * 19999 / 2);
        enum { N = 5000 };
        static int v[N], w[N];
        uint64_t x = 88172645463325252ull + (uint64_t)round;
        for (int i = 0; i < N; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17, v[i] = w[i] = (int)(x % 1000);
        ASSERT_OK(weft_parallel_sort(ex, v, N, sizeof v[0], cmp_int, NULL, &(weft_algo_config){.chunk = 64}));
        qsort(w, N, sizeof w[0], cmp_plain);
        ASSERT_TRUE(memcmp(v, w, sizeof v) == 0);
        static long in[N];
        for (int i = 0; i < N; i++) in[i] = i;
        long total = 0;
        ASSERT_OK(weft_parallel_reduce(ex, in, N, sizeof in[0], &total, add_long, NULL, &(weft_algo_config){.chunk = 64}));
        ASSERT_EQ(total, (long)N * (N - 1) / 2);
        ASSERT_OK(weft_algo_set_priority(oldp, NULL));
        ASSERT_OK(weft_algo_set_numa_node(oldn, NULL));
    }
    /* Async tasks: hinted, prioritised with handles (every tenth removed). */
    atomic_int n = 0;
    enum { K = 200 };
    weft_sched_handle h[K];
    weft_future *f[K];
    for (int i = 0; i < K; i++) {
        weft_async_options o = {.numa_node = i % 2 ? WEFT_NUMA_NODE(0) : 0,
                                .priority = (weft_priority)(i % 4 - 1), .handle = i % 3 ? &h[i] : NULL};
        ASSERT_OK(weft_async_with(ex, bump, &n, &o, &f[i]));
    }
    int removed = 0;
    for (int i = 0; i < K; i += 10)
        if (i % 3) {
            weft_status st = weft_sched_remove(ex, h[i]);
            if (st == WEFT_OK) removed++;
            else ASSERT_STATUS(st, WEFT_ENOENT);
        }
    int cancelled = 0;
    for (int i = 0; i < K; i++) {
        weft_status st = weft_future_wait(f[i]);
        if (st == WEFT_ECANCELED) cancelled++;
        else ASSERT_OK(st);
        weft_future_destroy(f[i]);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(cancelled, removed);
    ASSERT_EQ(atomic_load(&n), K - removed);
    /* A graph with a subflow, a module and a semaphore, run at HIGH. */
    weft_taskflow *body = make_taskflow("body"), *tf = make_taskflow("outer");
    atomic_int c = 0;
    for (int i = 0; i < 3; i++) (void)must_emplace(body, bump, &c);
    weft_task sft = weft_emplace_subflow(tf, sf_body, &c);
    weft_task mod = weft_emplace_module(tf, body);
    ASSERT_FALSE(weft_task_is_null(sft));
    ASSERT_FALSE(weft_task_is_null(mod));
    ASSERT_OK(weft_precede(sft, mod));
    weft_status err;
    weft_semaphore *sem = weft_semaphore_create(1, &err);
    ASSERT_NOT_NULL(sem);
    sem_arg sa = {0};
    for (int i = 0; i < 4; i++) {
        weft_task t = must_emplace(tf, sem_task, &sa);
        ASSERT_OK(weft_task_acquire(t, sem));
        ASSERT_OK(weft_task_release(t, sem));
        if (i % 2) ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_CRITICAL));
    }
    pipe_state ps = {0};
    weft_stage stages[3] = {{WEFT_STAGE_SERIAL, pipe_first, &ps, "first"}, {WEFT_STAGE_PARALLEL, pipe_mid, &ps, "mid"},
                            {WEFT_STAGE_SERIAL, pipe_last, &ps, "last"}};
    weft_pipeline *pl = weft_pipeline_create(4, stages, 3, &err);
    ASSERT_NOT_NULL(pl);
    ASSERT_OK(weft_pipeline_set_scheduling(pl, WEFT_PIPELINE_SPREAD));
    ASSERT_OK(weft_pipeline_set_priority(pl, WEFT_PRIORITY_HIGH));
    weft_task pt = weft_pipeline_emplace(tf, pl);
    ASSERT_FALSE(weft_task_is_null(pt));
    ASSERT_OK(weft_precede(sft, pt));
    if (!gpu) {
        gpu = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 2}, &err);
        ASSERT_NOT_NULL(gpu);
    }
    atomic_store(&gpu_ran, 0);
    weft_task gt = weft_emplace_gpu(tf, gpu, gpu_task, NULL);
    ASSERT_FALSE(weft_task_is_null(gt));
    ASSERT_OK(weft_task_set_priority(gt, WEFT_PRIORITY_LOW));
    ASSERT_OK(weft_precede(mod, gt));
    for (int r = 0; r < 5; r++) {
        ASSERT_OK(weft_pipeline_reset(pl));
        atomic_store(&ps.made, 0);
        ps.next_out = 0;
        weft_future *rf = NULL;
        ASSERT_OK(weft_run_with_priority(ex, tf, r % 2 ? WEFT_PRIORITY_HIGH : WEFT_PRIORITY_LOW, &rf));
        ASSERT_OK(weft_future_wait(rf));
        weft_future_destroy(rf);
    }
    ASSERT_EQ(atomic_load(&c), 5 * 13);
    ASSERT_EQ(atomic_load(&ps.mid), 5 * 300);
    ASSERT_EQ(ps.out_of_order, 0);
    ASSERT_EQ(atomic_load(&gpu_ran), 5);
    ASSERT_OK(weft_pipeline_destroy(pl));
    ASSERT_EQ(atomic_load(&sa.n), 20);
    ASSERT_EQ(atomic_load(&sa.max_inside), 1);
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(body);
    ASSERT_OK(weft_semaphore_destroy(sem));
    /* Fork-join. */
    long v = 18;
    ASSERT_OK(weft_run_root(ex, fib_value, &v));
    ASSERT_EQ(v, fib_ref(18));
    /* Idle: nothing queued, no handle claims a task. */
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.queued, 0);
    ASSERT_EQ(st.policy_errors, 0);
    ASSERT_GE(st.removed, (uint64_t)removed);
    size_t q = 1;
    ASSERT_OK(weft_sched_snapshot(ex, NULL, 0, &q));
    ASSERT_EQ(q, 0);
}

static void prioritised_under(int which, unsigned workers, weft_affinity aff) {
    ring_policy *r = ring_new(1 << 16);
    weft_sched_policy pol = {.state = r, .push = which == 6 ? refusing_push : ring_push, .pop = ring_pop,
                             .size = ring_size, .destroy = ring_destroy};
    static const weft_sched_kind kinds[7] = {WEFT_SCHED_WORK_STEALING, WEFT_SCHED_FIFO, WEFT_SCHED_PRIORITY,
                                             WEFT_SCHED_ROUND_ROBIN, WEFT_SCHED_RANDOM, WEFT_SCHED_CUSTOM,
                                             WEFT_SCHED_CUSTOM};
    weft_sched_config sc = {.kind = kinds[which], .policy = which >= 5 ? &pol : NULL, .seed = 7};
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers, .affinity = aff, .sched = &sc}, &err);
    if (!ex) TEST_FAIL_("create (kind %d): %s", which, weft_errname(err));
    all_kinds_prioritised(ex);
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&r->destroyed), which >= 5 ? 1 : 0);
    ring_free(r);
}

TEST(every_kind_of_work_at_priorities_and_hints_runs_exactly_under_every_scheduler) {
    for (int k = 0; k < 7; k++) {
        prioritised_under(k, 3, WEFT_AFFINITY_NONE);
        prioritised_under(k, 2, WEFT_AFFINITY_CPUS);
        prioritised_under(k, 1, WEFT_AFFINITY_NONE);
    }
    weft_gpu_close(gpu);
    gpu = NULL;
}

/* ---- destroy with work in flight ---- */

static void *destroy_soon(void *arg) {
    weft_executor_destroy(arg);
    return NULL;
}

/* weft/sched.h: destroy is "called once at executor destroy (the queue is
 * empty)".  Work still queued in the policy when weft_executor_destroy is
 * called (async tasks from main and from tasks, graph runs not waited for)
 * all runs, exactly once, before destroy, which is called once with the
 * policy empty; also beside a policy that refuses every third push. */
TEST(destroying_an_executor_whose_user_policy_holds_work_runs_it_all_once_then_calls_destroy_once) {
    for (int variant = 0; variant < 2; variant++)
        for (unsigned workers = 1; workers <= 3; workers += 2) {
            ring_policy *r = ring_new(1 << 16);
            weft_sched_policy pol = {.state = r, .push = variant ? refusing_push : ring_push, .pop = ring_pop,
                                     .size = ring_size, .destroy = ring_destroy};
            weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
            weft_executor *ex = make_sched_executor(workers, &sc);
            static atomic_int n, c;
            atomic_store(&n, 0);
            atomic_store(&c, 0);
            gate g;
            gate_close(ex, &g, workers);
            for (int i = 0; i < 500; i++)
                ASSERT_OK(weft_async_with(ex, bump, &n, &(weft_async_options){.priority = (weft_priority)(i % 4 - 1)}, NULL));
            weft_taskflow *tf = make_taskflow("fan");
            for (int i = 0; i < 8; i++) (void)must_emplace(tf, bump, &c);
            for (int i = 0; i < 5; i++) ASSERT_OK(weft_run(ex, tf, NULL));
            pthread_t t;
            ASSERT_EQ(pthread_create(&t, NULL, destroy_soon, ex), 0);
            sleep_us(1000);
            gate_open(&g);
            ASSERT_EQ(pthread_join(t, NULL), 0);
            ASSERT_EQ(atomic_load(&n), 500);
            ASSERT_EQ(atomic_load(&c), 40);
            ASSERT_EQ(atomic_load(&r->destroyed), 1);
            ASSERT_EQ(r->held_at_destroy, 0);
            weft_taskflow_destroy(tf);
            ring_free(r);
        }
}

/* ---- escalation never raises a task queued after the pass read the clock ---- */

typedef struct esc_race {
    weft_executor *ex;
    atomic_int stop;
    atomic_size_t moved, passes;
} esc_race;

static void *escalate_loop(void *arg) {
    esc_race *e = arg;
    while (!atomic_load(&e->stop)) {
        size_t m = 0;
        ASSERT_OK(weft_sched_escalate(e->ex, &m));
        atomic_fetch_add(&e->moved, m);
        atomic_fetch_add(&e->passes, 1);
    }
    return NULL;
}

/* From a worker: LOW async tasks go to its lanes (no handle, no slot). */
static int queue_low_from_worker(weft_ctx *cx, void *arg) {
    esc_race *e = arg;
    for (int i = 0; i < 4000 && !atomic_load(&e->stop); i++)
        ASSERT_OK(weft_async_with(weft_ctx_executor(cx), noop, NULL, &(weft_async_options){.priority = WEFT_PRIORITY_LOW}, NULL));
    return 0;
}

/* weft/sched.h: a LOW task "queued this long" (escalate_low_ns) becomes
 * NORMAL.  With 60 s, none of these tasks is old enough, so no pass may move
 * one.  A pass read the clock, then took the queue's lock (and each
 * worker's lanes' lock): a task queued in between (its time read under the
 * lock, later than the pass's) had waited "now - since", a negative time in
 * unsigned arithmetic, some 584 years: it was raised at once. */
#if defined(UNDER_TSAN) || defined(UNDER_ASAN)
enum { ESC_HEAP_TASKS = 3000, ESC_LANE_ROUNDS = 3 }; /* a sanitizer's slower steps: under 1 s */
#else
enum { ESC_HEAP_TASKS = 20000, ESC_LANE_ROUNDS = 20 };
#endif

TEST(escalation_never_raises_a_task_queued_after_the_pass_read_the_clock) {
    weft_sched_config sc = {.no_escalation = true, .escalate_low_ns = 60000000000ull,
                            .escalate_normal_ns = 60000000000ull};
    weft_executor *ex = make_sched_executor(2, &sc);
    esc_race e = {.ex = ex};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, escalate_loop, &e), 0);
    /* The heap: LOW tasks with handles from this thread, behind two gated workers. */
    gate g;
    gate_close(ex, &g, 2);
    for (int i = 0; i < ESC_HEAP_TASKS && atomic_load(&e.moved) == 0; i++) {
        weft_sched_handle h;
        ASSERT_OK(weft_async_with(ex, noop, NULL, &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &h}, NULL));
        if (i % 64 == 63) {
            weft_sched_entry ent[64];
            size_t n;
            ASSERT_OK(weft_sched_snapshot(ex, ent, 64, &n));
            for (size_t k = 0; k < n && k < 64; k++)
                if (ent[k].waited_ns > 60000000000ull) TEST_FAIL_("a queued task waited %llu ns", (unsigned long long)ent[k].waited_ns);
        }
    }
    size_t heap_moved = atomic_load(&e.moved);
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    /* The lanes: a worker queues LOW tasks while the other runs them. */
    for (int r = 0; r < ESC_LANE_ROUNDS && atomic_load(&e.moved) == heap_moved; r++) {
        ASSERT_OK(weft_silent_async(ex, queue_low_from_worker, &e));
        for (int k = 0; k < 50; k++) {
            weft_sched_entry ent[256];
            size_t n;
            ASSERT_OK(weft_sched_snapshot(ex, ent, 256, &n));
            for (size_t i = 0; i < n && i < 256; i++)
                if (ent[i].waited_ns > 60000000000ull) TEST_FAIL_("a lane's task waited %llu ns", (unsigned long long)ent[i].waited_ns);
        }
        ASSERT_OK(weft_executor_wait_all(ex));
    }
    atomic_store(&e.stop, 1);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    if (atomic_load(&e.moved) || st.escalations)
        TEST_FAIL_("%zu tasks raised (%zu from the heap) in %zu passes, none of them 60 s old", atomic_load(&e.moved),
                   heap_moved, atomic_load(&e.passes));
    weft_executor_destroy(ex);
}

/* ---- the deterministic mode: one seed, one schedule, also for work made by tasks ---- */

static order_log det_log;
static logged det_args[1024];

static int det_leaf(weft_ctx *cx, void *arg) { return log_task(cx, arg); }

static int det_fj_child(weft_ctx *cx, void *arg) { return log_task(cx, arg); }

/* A graph task: logs itself, queues two async tasks and forks a child. */
static int det_node(weft_ctx *cx, void *arg) {
    logged *l = arg;
    (void)log_task(cx, arg);
    ASSERT_OK(weft_silent_async(weft_ctx_executor(cx), det_leaf, &det_args[300 + l->id * 2]));
    ASSERT_OK(weft_silent_async(weft_ctx_executor(cx), det_leaf, &det_args[301 + l->id * 2]));
    ASSERT_OK(weft_spawn(cx, det_fj_child, &det_args[700 + l->id]));
    ASSERT_OK(weft_sync(cx));
    return 0;
}

static uint64_t det_schedule(uint64_t seed, weft_taskflow *tf, int n) {
    weft_sched_config sc = {.kind = WEFT_SCHED_RANDOM, .seed = seed};
    weft_executor *ex = make_sched_executor(1, &sc);
    atomic_store(&det_log.n, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&det_log.n), n * 4);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n * 4; i++) h = (h ^ (uint64_t)det_log.ids[i]) * 1099511628211ull;
    weft_executor_destroy(ex);
    return h;
}

/* weft/sched.h, WEFT_SCHED_RANDOM: "one seed reproduces one schedule" on one
 * worker, for work submitted before it starts or from tasks.  A random DAG
 * of 100 tasks (some with priorities), each queueing two async tasks and
 * forking a child: the same seed gives the same order of all 400 starts. */
TEST(the_deterministic_mode_repeats_a_schedule_of_graph_async_and_fork_join_work_by_seed) {
    enum { N = 100 };
    for (int i = 0; i < 1024; i++) det_args[i] = (logged){&det_log, i};
    weft_taskflow *tf = make_taskflow("dag");
    weft_task t[N];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N; i++) {
        t[i] = must_emplace(tf, det_node, &det_args[i]);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (x % 5 == 0) ASSERT_OK(weft_task_set_priority(t[i], (weft_priority)((int)((x >> 8) % 4) - 1)));
        for (int k = 0; k < 2 && i > 0; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            ASSERT_OK(weft_precede(t[x % (uint64_t)i], t[i]));
        }
    }
    int distinct = 0;
    uint64_t prev = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        uint64_t a = det_schedule(seed, tf, N), b = det_schedule(seed, tf, N), c = det_schedule(seed, tf, N);
        if (a != b || b != c) TEST_FAIL_("seed %llu gave different schedules", (unsigned long long)seed);
        distinct += a != prev;
        prev = a;
    }
    ASSERT_GE(distinct, 2);
    weft_taskflow_destroy(tf);
}

/* ---- stats and snapshots under load, exact once idle ---- */

typedef struct load {
    weft_executor *ex;
    atomic_int stop, ran;
    atomic_size_t removed_ok, submitted;
} load;

static int load_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add(&((load *)arg)->ran, 1);
    return 0;
}

static void *load_submitter(void *arg) {
    load *l = arg;
    weft_sched_handle hs[16];
    for (int i = 0; i < 3000; i++) {
        weft_sched_handle *h = &hs[i % 16];
        ASSERT_OK(weft_async_with(l->ex, load_task, l,
                                  &(weft_async_options){.priority = (weft_priority)(i % 4 - 1), .handle = h}, NULL));
        atomic_fetch_add(&l->submitted, 1);
        if (i % 16 == 15)
            for (int k = 0; k < 16; k += 3) {
                weft_status st = weft_sched_remove(l->ex, hs[k]);
                if (st == WEFT_OK) atomic_fetch_add(&l->removed_ok, 1);
                else ASSERT_STATUS(st, WEFT_ENOENT);
                st = weft_sched_remove(l->ex, hs[k]); /* twice: never again */
                ASSERT_STATUS(st, WEFT_ENOENT);
            }
    }
    return NULL;
}

/* Snapshots and stats taken while three threads queue prioritised tasks with
 * handles and remove some: each snapshot is in run order (priority, then
 * seq), a listed handle's priority reads as listed or the task is gone; once
 * idle, nothing is queued, `removed` equals the removals that returned OK,
 * and every other task ran exactly once. */
TEST(snapshots_under_load_are_in_run_order_and_the_counts_are_exact_once_idle) {
    weft_sched_config sc = {.no_escalation = true};
    weft_executor *ex = make_sched_executor(2, &sc);
    load l = {.ex = ex};
    pthread_t t[3];
    for (int k = 0; k < 3; k++) ASSERT_EQ(pthread_create(&t[k], NULL, load_submitter, &l), 0);
    static weft_sched_entry ent[512];
    int snaps = 0;
    while (atomic_load(&l.submitted) < 9000 && snaps < 100000) {
        size_t n;
        ASSERT_OK(weft_sched_snapshot(ex, ent, 512, &n));
        snaps++;
        size_t m = n < 512 ? n : 512;
        for (size_t i = 1; i < m; i++) {
            if (ent[i].priority > ent[i - 1].priority ||
                (ent[i].priority == ent[i - 1].priority && ent[i].seq < ent[i - 1].seq))
                TEST_FAIL_("snapshot %d out of order at %zu", snaps, i);
        }
        for (size_t i = 0; i < m; i++) {
            weft_priority p;
            weft_status st = weft_sched_priority(ex, ent[i].handle, &p);
            if (st == WEFT_OK) ASSERT_GE(p, ent[i].priority); /* no escalation: only removal or start changes it */
            else ASSERT_STATUS(st, WEFT_ENOENT);
        }
        weft_sched_stats ss;
        ASSERT_OK(weft_sched_get_stats(ex, &ss));
    }
    for (int k = 0; k < 3; k++) ASSERT_EQ(pthread_join(t[k], NULL), 0);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_sched_stats ss;
    ASSERT_OK(weft_sched_get_stats(ex, &ss));
    ASSERT_EQ(ss.queued, 0);
    ASSERT_EQ(ss.removed, atomic_load(&l.removed_ok));
    ASSERT_EQ((size_t)atomic_load(&l.ran) + atomic_load(&l.removed_ok), 9000);
    size_t n = 1;
    ASSERT_OK(weft_sched_snapshot(ex, NULL, 0, &n));
    ASSERT_EQ(n, 0);
    weft_executor_destroy(ex);
}

/* ---- a removed dependent task under a user policy ---- */

/* weft/sched.h: a dependent task removed while it waits for its
 * dependencies "is reported once they have finished, its report queued at
 * CRITICAL"; its own dependents are released.  Under a user policy that
 * refuses every third push too: each removed task reports WEFT_ECANCELED
 * once, never runs, and its dependent runs. */
TEST(removed_dependent_tasks_under_a_refusing_user_policy_report_cancelled_and_release_their_dependents) {
    ring_policy *r = ring_new(1 << 12);
    weft_sched_policy pol = {.state = r, .push = refusing_push, .pop = ring_pop, .destroy = ring_destroy};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_executor *ex = make_sched_executor(2, &sc);
    for (int round = 0; round < 50; round++) {
        gate g;
        gate_close(ex, &g, 2);
        atomic_int ran = 0;
        weft_future *root, *mid, *leaf;
        ASSERT_OK(weft_async(ex, bump, &ran, &root));
        weft_sched_handle h;
        ASSERT_OK(weft_async_with(ex, bump, &ran,
                                  &(weft_async_options){.priority = (weft_priority)(round % 4 - 1), .handle = &h,
                                                        .deps = &root, .ndeps = 1}, &mid));
        ASSERT_OK(weft_dependent_async(ex, bump, &ran, &mid, 1, &leaf));
        ASSERT_OK(weft_sched_remove(ex, h));
        ASSERT_STATUS(weft_sched_remove(ex, h), WEFT_ENOENT);
        gate_open(&g);
        ASSERT_STATUS(weft_future_wait(mid), WEFT_ECANCELED);
        ASSERT_OK(weft_future_wait(leaf)); /* dependents of a removed task still run (seeds_hunt39) */
        ASSERT_OK(weft_future_wait(root));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&ran), 2);
        weft_future_destroy(root), weft_future_destroy(mid), weft_future_destroy(leaf);
    }
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.removed, 50);
    ASSERT_EQ(st.policy_errors, 0);
    weft_executor_destroy(ex);
    ring_free(r);
}
