/* Objects used across executors and across runs (session 39): futures,
 * semaphores, tokens, GPU devices, profilers and taskflows that one executor
 * made or ran, used by another, or after their executor is gone. */
#include "sched_util.h"
#include "weft/gpu.h"

#include "weft/async.h"
#include "weft/cancel.h"
#include "weft/observe.h"

#include <stdatomic.h>
#include <pthread.h>
#include <string.h>

/* ---- futures of one executor waited on by another ----------------------------- */

typedef struct where {
    weft_executor *ex;
    atomic_int on_ex; /* 1: ran on a worker of ex; 2: ran elsewhere */
} where;

static int note_where(weft_ctx *cx, void *arg) {
    where *w = arg;
    atomic_store(&w->on_ex, weft_executor_worker_id(w->ex) >= 0 ? 1 : 2);
    return 0;
}

typedef struct iso_wait {
    weft_future *f;
    atomic_int started;
    weft_status got;
} iso_wait;

static int wait_isolated_task(weft_ctx *cx, void *arg) {
    iso_wait *w = arg;
    atomic_store(&w->started, 1);
    w->got = weft_future_wait_isolated(w->f);
    return 0;
}

TEST(an_isolated_wait_from_another_executors_task_leaves_the_task_to_its_own_executor) {
    weft_executor *a = make_executor(1), *b = make_executor(1);
    gate g;
    gate_close(a, &g, 1);
    where w = {.ex = a};
    weft_future *fa = NULL;
    ASSERT_OK(weft_async(a, note_where, &w, &fa));
    iso_wait iw = {.f = fa};
    weft_future *fb = NULL;
    ASSERT_OK(weft_async(b, wait_isolated_task, &iw, &fb));
    ASSERT_TRUE(wait_flag(&iw.started, 1, 5));
    sleep_us(20000);
    gate_open(&g);
    ASSERT_OK(weft_future_wait(fb));
    ASSERT_OK(iw.got);
    ASSERT_EQ(atomic_load(&w.on_ex), 1);
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    weft_executor_destroy(b);
    weft_executor_destroy(a);
}

TEST(a_dependency_from_another_executor_is_refused_by_every_dependent_submission) {
    weft_executor *a = make_executor(1), *b = make_executor(1);
    weft_future *fa = NULL, *out = (weft_future *)1;
    ASSERT_OK(weft_async(a, noop, NULL, &fa));
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, &fa, 1, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, &fa, 1, NULL), WEFT_EINVAL);
    weft_async_options o = {.deps = &fa, .ndeps = 1, .priority = WEFT_PRIORITY_HIGH};
    out = (weft_future *)1;
    ASSERT_STATUS(weft_async_with(b, noop, NULL, &o, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    /* a graph run's future is not an async task's either, on any executor */
    weft_taskflow *tf = make_taskflow("t");
    must_emplace(tf, noop, NULL);
    weft_future *fr = NULL;
    ASSERT_OK(weft_run(a, tf, &fr));
    ASSERT_STATUS(weft_dependent_async(a, noop, NULL, &fr, 1, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_future_wait(fr));
    ASSERT_OK(weft_future_wait(fa));
    weft_executor_destroy(b);
    weft_executor_destroy(a);
    weft_future_destroy(fr);
    weft_future_destroy(fa);
    weft_taskflow_destroy(tf);
}

static atomic_int then_hits;
static void then_cb(weft_future *f, weft_status st, void *arg) { atomic_fetch_add(&then_hits, 1); }

TEST(futures_outlive_their_executor_for_every_query_and_for_tokens) {
    atomic_store(&then_hits, 0);
    weft_executor *a = make_executor(2);
    weft_taskflow *tf = make_taskflow("t");
    must_emplace(tf, noop, NULL);
    weft_future *fr = NULL, *fa = NULL;
    ASSERT_OK(weft_run(a, tf, &fr));
    ASSERT_OK(weft_async(a, noop, NULL, &fa));
    weft_executor_destroy(a);
    weft_future *fs[2] = {fr, fa};
    for (int i = 0; i < 2; i++) {
        weft_future *f = fs[i];
        ASSERT_TRUE(weft_future_ready(f));
        ASSERT_OK(weft_future_wait(f));
        ASSERT_OK(weft_future_wait_for(f, 0));
        ASSERT_OK(weft_future_status(f));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_OK(info.status);
        ASSERT_STATUS(weft_future_cancel(f), WEFT_ENOENT);
        ASSERT_OK(weft_future_then(f, then_cb, NULL));
        int fd = -1;
        ASSERT_OK(weft_future_fd(f, &fd));
        ASSERT_GE(fd, 0);
        weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(t);
        ASSERT_OK(weft_cancel_attach(t, f));
        ASSERT_OK(weft_cancel_token_cancel(t));
        ASSERT_OK(weft_future_status(f));
        weft_cancel_token_destroy(t);
    }
    ASSERT_OK(weft_future_wait_isolated(fa));
    ASSERT_EQ(atomic_load(&then_hits), 2);
    weft_future_destroy(fr);
    weft_future_destroy(fa);
    weft_taskflow_destroy(tf);
}

/* ---- semaphores and tokens across executors ------------------------------------ */

typedef struct excl {
    atomic_int in, max, runs;
} excl;

static int excl_task(weft_ctx *cx, void *arg) {
    excl *e = arg;
    int n = atomic_fetch_add(&e->in, 1) + 1;
    int m = atomic_load(&e->max);
    while (n > m && !atomic_compare_exchange_weak(&e->max, &m, n)) {}
    sleep_us(50);
    atomic_fetch_sub(&e->in, 1);
    atomic_fetch_add(&e->runs, 1);
    return 0;
}

TEST(an_async_semaphore_shared_with_graph_tasks_of_another_executor_admits_one_at_a_time) {
    weft_executor *a = make_executor(3), *b = make_executor(3);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(s);
    excl e = {0};
    weft_taskflow *tf = make_taskflow("g");
    for (int i = 0; i < 16; i++) {
        weft_task t = must_emplace(tf, excl_task, &e);
        ASSERT_OK(weft_task_acquire(t, s));
        ASSERT_OK(weft_task_release(t, s));
    }
    weft_future *fr = NULL;
    ASSERT_OK(weft_run_n(b, tf, 4, &fr));
    for (int i = 0; i < 64; i++) ASSERT_OK(weft_async_acquire(a, excl_task, &e, &s, 1, NULL));
    ASSERT_OK(weft_future_wait(fr));
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_EQ(atomic_load(&e.runs), 128);
    ASSERT_EQ(atomic_load(&e.max), 1);
    ASSERT_EQ(weft_semaphore_value(s), 1u);
    weft_future_destroy(fr);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(tf);
    ASSERT_OK(weft_semaphore_destroy(s));
}

typedef struct tok_root {
    atomic_int started;
    atomic_int saw;
} tok_root;

static int spin_until_cancelled(weft_ctx *cx, void *arg) {
    tok_root *r = arg;
    atomic_fetch_add(&r->started, 1);
    double t0 = now_s();
    while (weft_ctx_check(cx) == WEFT_OK && now_s() - t0 < 5) sleep_us(100);
    if (weft_ctx_check(cx) == WEFT_ECANCELED && strcmp(weft_ctx_cancel_reason(cx), "stop") == 0)
        atomic_fetch_add(&r->saw, 1);
    return 0;
}

typedef struct root_call {
    weft_executor *ex;
    weft_cancel_token *t;
    tok_root *r;
    weft_status st;
} root_call;

static void *root_thread(void *arg) {
    root_call *c = arg;
    c->st = weft_run_root_with_token(c->ex, c->t, spin_until_cancelled, c->r, NULL);
    return NULL;
}

TEST(one_token_stops_fork_join_roots_and_async_tasks_on_two_executors) {
    weft_executor *a = make_executor(2), *b = make_executor(2);
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    tok_root r = {0};
    root_call ca = {a, t, &r, WEFT_OK}, cb = {b, t, &r, WEFT_OK};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, root_thread, &ca);
    pthread_create(&tb, NULL, root_thread, &cb);
    weft_future *fa = NULL;
    ASSERT_OK(weft_async(a, spin_until_cancelled, &r, &fa));
    ASSERT_OK(weft_cancel_attach(t, fa));
    ASSERT_TRUE(wait_flag(&r.started, 3, 5));
    ASSERT_OK(weft_cancel_token_cancel_with(t, "stop"));
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ASSERT_STATUS(ca.st, WEFT_ECANCELED);
    ASSERT_STATUS(cb.st, WEFT_ECANCELED);
    weft_status fs = weft_future_wait(fa);
    ASSERT_TRUE(fs == WEFT_ECANCELED || fs == WEFT_OK);
    ASSERT_EQ(atomic_load(&r.saw), 3);
    weft_future_destroy(fa);
    weft_cancel_token_destroy(t);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}

/* ---- a GPU device shared by two executors --------------------------------------- */

typedef struct gpu_job {
    weft_gpu_buffer *buf;
    int src[64], dst[64];
} gpu_job;

static int gpu_roundtrip(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    gpu_job *j = arg;
    weft_status st = weft_gpu_copy_to_device_async(s, j->buf, 0, j->src, 64);
    if (st != WEFT_OK) return st;
    return weft_gpu_copy_to_host_async(s, j->buf, 0, j->dst, 64);
}

TEST(one_emulated_gpu_device_serves_graphs_on_two_executors_at_once) {
    weft_status st;
    weft_gpu_device *dev = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR}, &st);
    if (!dev) SKIP("no emulated GPU device");
    weft_executor *ex[2] = {make_executor(2), make_executor(2)};
    enum { N = 8 };
    static gpu_job jobs[2][N];
    weft_taskflow *tf[2];
    for (int e = 0; e < 2; e++) {
        tf[e] = make_taskflow("gpu");
        for (int i = 0; i < N; i++) {
            gpu_job *j = &jobs[e][i];
            j->buf = weft_gpu_buffer_create(dev, sizeof(int), 64, 0, NULL);
            ASSERT_NOT_NULL(j->buf);
            for (int k = 0; k < 64; k++) j->src[k] = e * 100000 + i * 1000 + k, j->dst[k] = -1;
            ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf[e], dev, gpu_roundtrip, j)));
        }
    }
    weft_future *f[2];
    for (int r = 0; r < 5; r++) {
        for (int e = 0; e < 2; e++) ASSERT_OK(weft_run(ex[e], tf[e], &f[e]));
        for (int e = 0; e < 2; e++) {
            ASSERT_OK(weft_future_wait(f[e]));
            weft_future_destroy(f[e]);
        }
        for (int e = 0; e < 2; e++)
            for (int i = 0; i < N; i++) ASSERT_EQ(memcmp(jobs[e][i].src, jobs[e][i].dst, sizeof jobs[e][i].src), 0);
    }
    /* the same device after one executor is gone, from the other and from a thread */
    weft_executor_destroy(ex[0]);
    ASSERT_OK(weft_run(ex[1], tf[0], &f[0]));
    ASSERT_OK(weft_future_wait(f[0]));
    weft_future_destroy(f[0]);
    ASSERT_OK(weft_gpu_call(dev, gpu_roundtrip, &jobs[0][0]));
    weft_executor_destroy(ex[1]);
    for (int e = 0; e < 2; e++) {
        weft_taskflow_destroy(tf[e]);
        for (int i = 0; i < N; i++) weft_gpu_buffer_destroy(jobs[e][i].buf);
    }
    weft_gpu_close(dev);
}

/* ---- profilers see their own executor's work only -------------------------------- */

TEST(a_profiler_of_one_executor_counts_only_its_runs_of_a_taskflow_shared_with_another) {
    weft_executor *a = make_executor(2), *b = make_executor(2);
    weft_taskflow *tf = make_taskflow("shared");
    for (int i = 0; i < 10; i++) must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_profiler_start(a));
    weft_future *fa, *fb;
    for (int r = 0; r < 3; r++) {
        ASSERT_OK(weft_run(a, tf, &fa));
        ASSERT_OK(weft_run(b, tf, &fb));
        ASSERT_OK(weft_future_wait(fa));
        ASSERT_OK(weft_future_wait(fb));
        weft_future_destroy(fa);
        weft_future_destroy(fb);
    }
    ASSERT_OK(weft_profiler_stop(a));
    uint64_t spans = 0, dropped = 0;
    ASSERT_OK(weft_profiler_count(a, &spans, &dropped));
    ASSERT_EQ(spans + dropped, 30u);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(a, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 30u);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(tf);
}

/* ---- observers, metrics and parallel runs of a shared taskflow ------------------- */

typedef struct obs_count {
    weft_executor *want;
    atomic_int begins, ends, wrong;
} obs_count;

static void obs_begin(void *user, const weft_task_event *ev) {
    obs_count *c = user;
    atomic_fetch_add(&c->begins, 1);
    if (ev->executor != c->want || weft_executor_worker_id(c->want) != (int)ev->worker) atomic_fetch_add(&c->wrong, 1);
}
static void obs_end(void *user, const weft_task_event *ev) {
    obs_count *c = user;
    atomic_fetch_add(&c->ends, 1);
}

TEST(observers_of_two_executors_running_one_taskflow_each_see_their_own_tasks) {
    obs_count ca = {0}, cb = {0};
    weft_executor *a, *b;
    {
        weft_observer oa = {obs_begin, obs_end, &ca}, ob = {obs_begin, obs_end, &cb};
        a = weft_executor_create(&(weft_executor_config){.workers = 2, .observer = &oa}, NULL);
        b = weft_executor_create(&(weft_executor_config){.workers = 2, .observer = &ob}, NULL);
        memset(&oa, 0, sizeof oa); /* copied at create */
        memset(&ob, 0, sizeof ob);
    }
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(b);
    ca.want = a;
    cb.want = b;
    weft_taskflow *tf = make_taskflow("shared");
    for (int i = 0; i < 20; i++) must_emplace(tf, noop, NULL);
    weft_future *fa, *fb;
    ASSERT_OK(weft_run_n(a, tf, 5, &fa));
    ASSERT_OK(weft_run_n(b, tf, 3, &fb));
    ASSERT_OK(weft_future_wait(fa));
    ASSERT_OK(weft_future_wait(fb));
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    ASSERT_EQ(atomic_load(&ca.begins), 100);
    ASSERT_EQ(atomic_load(&ca.ends), 100);
    ASSERT_EQ(atomic_load(&cb.begins), 60);
    ASSERT_EQ(atomic_load(&cb.ends), 60);
    ASSERT_EQ(atomic_load(&ca.wrong), 0);
    ASSERT_EQ(atomic_load(&cb.wrong), 0);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(tf);
}

typedef struct per_exec {
    weft_executor *ex[2];
    atomic_int n[2], wrong;
} per_exec;

static int count_on(weft_ctx *cx, void *arg) {
    per_exec *p = arg;
    weft_executor *e = weft_ctx_executor(cx);
    if (e == p->ex[0]) atomic_fetch_add(&p->n[0], 1);
    else if (e == p->ex[1]) atomic_fetch_add(&p->n[1], 1);
    else atomic_fetch_add(&p->wrong, 1);
    if (weft_executor_worker_id(e) < 0) atomic_fetch_add(&p->wrong, 1);
    return 0;
}

TEST(a_parallel_run_n_on_one_executor_beside_plain_runs_on_another_runs_every_task_exactly) {
    per_exec p = {0};
    p.ex[0] = make_executor(3);
    p.ex[1] = make_executor(2);
    weft_taskflow *tf = make_taskflow("par");
    weft_task prev = must_emplace(tf, count_on, &p);
    for (int i = 0; i < 30; i++) {
        weft_task t = must_emplace(tf, count_on, &p);
        if (i % 3 == 0) ASSERT_OK(weft_precede(prev, t));
        prev = t;
    }
    for (int r = 0; r < 20; r++) {
        weft_future *fa, *fb;
        ASSERT_OK(weft_run_n_parallel(p.ex[0], tf, 4, &fa));
        ASSERT_OK(weft_run_n(p.ex[1], tf, 2, &fb));
        ASSERT_OK(weft_future_wait(fa));
        ASSERT_OK(weft_future_wait(fb));
        weft_future_destroy(fa);
        weft_future_destroy(fb);
    }
    ASSERT_EQ(atomic_load(&p.n[0]), 20 * 4 * 31);
    ASSERT_EQ(atomic_load(&p.n[1]), 20 * 2 * 31);
    ASSERT_EQ(atomic_load(&p.wrong), 0);
    weft_executor_destroy(p.ex[0]);
    weft_executor_destroy(p.ex[1]);
    weft_taskflow_destroy(tf);
}

static int sub_spawn(weft_ctx *cx, weft_subflow *sf, void *arg) {
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 8; i++)
        if (weft_task_is_null(weft_emplace(g, count_on, arg))) return 1;
    return 0;
}

TEST(subflow_runs_queued_alternately_on_two_executors_run_their_children_on_the_runs_executor) {
    per_exec p = {0};
    p.ex[0] = make_executor(2);
    p.ex[1] = make_executor(2);
    weft_taskflow *tf = make_taskflow("sub");
    weft_task a = must_emplace(tf, count_on, &p);
    weft_task s = weft_emplace_subflow(tf, sub_spawn, &p);
    ASSERT_FALSE(weft_task_is_null(s));
    ASSERT_OK(weft_precede(a, s));
    enum { RUNS = 40 };
    weft_future *f[RUNS];
    for (int r = 0; r < RUNS; r++) ASSERT_OK(weft_run(p.ex[r & 1], tf, &f[r]));
    for (int r = 0; r < RUNS; r++) {
        ASSERT_OK(weft_future_wait(f[r]));
        weft_future_destroy(f[r]);
    }
    ASSERT_EQ(atomic_load(&p.n[0]), RUNS / 2 * 9);
    ASSERT_EQ(atomic_load(&p.n[1]), RUNS / 2 * 9);
    ASSERT_EQ(atomic_load(&p.wrong), 0);
    weft_executor_destroy(p.ex[0]);
    weft_executor_destroy(p.ex[1]);
    weft_taskflow_destroy(tf);
}

/* ---- fork-join across executors ---------------------------------------------------- */

typedef struct nest {
    weft_executor *a, *b;
    atomic_int bad, kids;
} nest;

static int kid(weft_ctx *cx, void *arg) {
    nest *n = arg;
    atomic_fetch_add(&n->kids, 1);
    return 0;
}

static int inner_on_b(weft_ctx *cx, void *arg) {
    nest *n = arg;
    if (weft_ctx_executor(cx) != n->b || weft_current_ctx() != cx) atomic_fetch_add(&n->bad, 1);
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < 4; i++) weft_task_group_spawn(&g, kid, n);
    return weft_task_group_wait(&g);
}

static int outer_on_a(weft_ctx *cx, void *arg) {
    nest *n = arg;
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < 4; i++) weft_task_group_spawn(&g, kid, n);
    int r = 0;
    if (weft_run_root_status(n->b, inner_on_b, n, &r) != WEFT_OK || r != 0) atomic_fetch_add(&n->bad, 1);
    if (weft_current_ctx() != cx || weft_ctx_executor(weft_current_ctx()) != n->a) atomic_fetch_add(&n->bad, 1);
    for (int i = 0; i < 4; i++) weft_task_group_spawn(&g, kid, n);
    int st = weft_task_group_wait(&g);
    weft_spawn(cx, kid, n);
    if (weft_sync(cx) != 0) atomic_fetch_add(&n->bad, 1);
    return st;
}

TEST(a_root_on_another_executor_from_inside_a_task_group_leaves_the_group_and_context_intact) {
    nest n = {0};
    n.a = make_executor(2);
    n.b = make_executor(2);
    for (int r = 0; r < 50; r++) ASSERT_EQ(weft_run_root(n.a, outer_on_a, &n), 0);
    ASSERT_EQ(atomic_load(&n.bad), 0);
    ASSERT_EQ(atomic_load(&n.kids), 50 * 13);
    weft_executor_destroy(n.a);
    weft_executor_destroy(n.b);
}

/* ---- a token whose futures' executor is gone ---------------------------------------- */

static int sleepy(weft_ctx *cx, void *arg) {
    sleep_us(2000);
    return 0;
}

TEST(a_token_attached_to_runs_of_a_destroyed_executor_cancels_and_frees_cleanly) {
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    weft_executor *a = make_executor(2), *b = make_executor(2);
    weft_taskflow *tf = make_taskflow("t");
    must_emplace(tf, sleepy, NULL);
    for (int i = 0; i < 4; i++) {
        weft_future *f;
        ASSERT_OK(weft_run(i & 1 ? a : b, tf, &f));
        ASSERT_OK(weft_cancel_attach(t, f));
        weft_future_destroy(f);
        ASSERT_OK(weft_async(a, sleepy, NULL, &f));
        ASSERT_OK(weft_cancel_attach(t, f));
        weft_future_destroy(f);
    }
    weft_executor_destroy(a);
    ASSERT_OK(weft_cancel_token_cancel(t));
    ASSERT_OK(weft_executor_wait_all(b));
    weft_executor_destroy(b);
    ASSERT_OK(weft_cancel_token_reset(t));
    ASSERT_OK(weft_cancel_after(t, 1000));
    /* The timer thread fires it 1 us from now, whenever a loaded machine lets
     * it run: up to 10 s (a fixed 5 ms sleep failed CI once under load). */
    for (int i = 0; i < 10000 && !weft_cancel_token_is_cancelled(t); i++) sleep_us(1000);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    weft_cancel_token_destroy(t);
    weft_taskflow_destroy(tf);
}

/* ---- priority runs, parallel runs and sets of one taskflow on two executors ------- */

static weft_taskflow *chainy(per_exec *p, int n) {
    weft_taskflow *tf = make_taskflow("chainy");
    weft_task prev = must_emplace(tf, count_on, p);
    for (int i = 1; i < n; i++) {
        weft_task t = must_emplace(tf, count_on, p);
        if (i % 2) ASSERT_OK(weft_precede(prev, t));
        if (i % 5 == 0) ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_LOW));
        prev = t;
    }
    return tf;
}

TEST(priority_runs_on_one_executor_beside_parallel_runs_on_another_run_every_task_exactly) {
    per_exec p = {0};
    p.ex[0] = make_executor(2);
    p.ex[1] = make_executor(2);
    weft_taskflow *tf = chainy(&p, 25);
    for (int r = 0; r < 20; r++) {
        weft_future *fa, *fb, *fc;
        ASSERT_OK(weft_run_n_parallel(p.ex[0], tf, 3, &fa));
        ASSERT_OK(weft_run_with_priority(p.ex[1], tf, r & 1 ? WEFT_PRIORITY_HIGH : WEFT_PRIORITY_LOW, &fb));
        ASSERT_OK(weft_run(p.ex[0], tf, &fc));
        ASSERT_OK(weft_future_wait(fa));
        ASSERT_OK(weft_future_wait(fb));
        ASSERT_OK(weft_future_wait(fc));
        weft_future_destroy(fa);
        weft_future_destroy(fb);
        weft_future_destroy(fc);
    }
    ASSERT_EQ(atomic_load(&p.n[0]), 20 * 4 * 25);
    ASSERT_EQ(atomic_load(&p.n[1]), 20 * 25);
    ASSERT_EQ(atomic_load(&p.wrong), 0);
    weft_executor_destroy(p.ex[0]);
    weft_executor_destroy(p.ex[1]);
    weft_taskflow_destroy(tf);
}

TEST(a_set_on_one_executor_naming_a_taskflow_twice_that_runs_on_another_runs_it_thrice_in_turn) {
    per_exec p = {0};
    p.ex[0] = make_executor(2);
    p.ex[1] = make_executor(2);
    weft_taskflow *tf = chainy(&p, 10), *other = chainy(&p, 4);
    for (int r = 0; r < 10; r++) {
        weft_future *fa, *set;
        ASSERT_OK(weft_run(p.ex[0], tf, &fa));
        weft_taskflow *tfs[3] = {tf, other, tf};
        ASSERT_OK(weft_run_many(p.ex[1], tfs, 3, &set));
        ASSERT_OK(weft_future_wait(set));
        ASSERT_OK(weft_future_wait(fa));
        for (size_t i = 0; i < 3; i++) ASSERT_OK(weft_run_many_status(set, i));
        weft_future_destroy(fa);
        weft_future_destroy(set);
    }
    ASSERT_EQ(atomic_load(&p.n[0]), 10 * 10);
    ASSERT_EQ(atomic_load(&p.n[1]), 10 * 24);
    ASSERT_EQ(atomic_load(&p.wrong), 0);
    weft_executor_destroy(p.ex[0]);
    weft_executor_destroy(p.ex[1]);
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(other);
}

/* ---- algorithms of one executor called from a task of another --------------------- */

#include "weft/algo.h"

typedef struct algo_x {
    weft_executor *a, *b;
    atomic_int on_a, on_b, other;
    atomic_int hits[4096];
    weft_priority prio;
    unsigned node;
    weft_status st[4];
} algo_x;

static void where_idx(size_t i, void *arg) {
    algo_x *x = arg;
    if (weft_executor_worker_id(x->b) >= 0) atomic_fetch_add(&x->on_b, 1);
    else if (weft_executor_worker_id(x->a) >= 0) atomic_fetch_add(&x->on_a, 1);
    else atomic_fetch_add(&x->other, 1);
    atomic_fetch_add(&x->hits[i], 1);
}

static int cmp_int(const void *p, const void *q, void *arg) {
    int a = *(const int *)p, b = *(const int *)q;
    return (a > b) - (a < b);
}

static int call_algos_on_b(weft_ctx *cx, void *arg) {
    algo_x *x = arg;
    weft_priority prev;
    unsigned prevn;
    weft_algo_set_priority(x->prio, &prev);
    weft_algo_set_numa_node(x->node, &prevn);
    x->st[0] = weft_parallel_for(x->b, 0, 4096, 1, where_idx, x, &(weft_algo_config){.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 16});
    int v[2000];
    for (int i = 0; i < 2000; i++) v[i] = (i * 7919) % 2000;
    x->st[1] = weft_parallel_sort(x->b, v, 2000, sizeof(int), cmp_int, NULL, NULL);
    for (int i = 0; i < 2000; i++)
        if (v[i] != i) x->st[1] = WEFT_EINVAL;
    weft_algo_set_priority(prev, NULL);
    weft_algo_set_numa_node(prevn, NULL);
    return 0;
}

static void algos_from_a_task(weft_priority prio, unsigned node) {
    static algo_x x;
    memset(&x, 0, sizeof x);
    x.a = make_executor(2);
    x.b = make_executor(2);
    x.prio = prio;
    x.node = node;
    for (int r = 0; r < 5; r++) {
        weft_future *f;
        ASSERT_OK(weft_async(x.a, call_algos_on_b, &x, &f));
        ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
        weft_future_destroy(f);
        ASSERT_OK(x.st[0]);
        ASSERT_OK(x.st[1]);
    }
    for (int i = 0; i < 4096; i++) ASSERT_EQ(atomic_load(&x.hits[i]), 5);
    ASSERT_EQ(atomic_load(&x.on_a) + atomic_load(&x.on_b) + atomic_load(&x.other), 5 * 4096);
    ASSERT_EQ(atomic_load(&x.other), 0);

    weft_executor_destroy(x.a);
    weft_executor_destroy(x.b);
}

TEST(algorithms_on_another_executor_from_a_task_run_every_index_once) { algos_from_a_task(WEFT_PRIORITY_NORMAL, 0); }
TEST(prioritised_algorithms_on_another_executor_from_a_task_run_every_index_once) {
    algos_from_a_task(WEFT_PRIORITY_HIGH, 0);
    algos_from_a_task(WEFT_PRIORITY_LOW, 0);
}
TEST(hinted_algorithms_on_another_executor_from_a_task_run_every_index_once) { algos_from_a_task(WEFT_PRIORITY_NORMAL, WEFT_NUMA_NODE(0)); }

/* ---- a cancelled section hands its unit to a task of another executor ------------- */

typedef struct sect {
    atomic_int in_t1, go, other_ran;
} sect;

static int t1_hold(weft_ctx *cx, void *arg) {
    sect *s = arg;
    atomic_store(&s->in_t1, 1);
    while (!atomic_load(&s->go)) sleep_us(100);
    return 0;
}
static int other_task(weft_ctx *cx, void *arg) {
    sect *s = arg;
    atomic_fetch_add(&s->other_ran, 1);
    return 0;
}

TEST(a_section_cut_by_a_cancel_on_one_executor_gives_its_unit_to_a_task_parked_on_another) {
    weft_executor *a = make_executor(2), *b = make_executor(2);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    sect st = {0};
    weft_taskflow *tf = make_taskflow("section");
    weft_task t1 = must_emplace(tf, t1_hold, &st), t2 = must_emplace(tf, noop, NULL), t3 = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_precede(t1, t2));
    ASSERT_OK(weft_precede(t2, t3));
    ASSERT_OK(weft_task_acquire(t1, s));
    ASSERT_OK(weft_task_release(t3, s));
    weft_taskflow *other = make_taskflow("other");
    weft_task o = must_emplace(other, other_task, &st);
    ASSERT_OK(weft_task_acquire(o, s));
    ASSERT_OK(weft_task_release(o, s));
    for (int r = 0; r < 10; r++) {
        atomic_store(&st.in_t1, 0);
        atomic_store(&st.go, 0);
        weft_future *fa, *fo;
        ASSERT_OK(weft_run(r & 1 ? b : a, tf, &fa));
        ASSERT_TRUE(wait_flag(&st.in_t1, 1, 5));
        ASSERT_OK(weft_run(r & 1 ? a : b, other, &fo)); /* parks: t1 holds the unit */
        sleep_us(2000);
        ASSERT_FALSE(weft_future_ready(fo));
        ASSERT_OK(weft_future_cancel(fa));
        atomic_store(&st.go, 1);
        ASSERT_STATUS(weft_future_wait(fa), WEFT_ECANCELED);
        ASSERT_OK(weft_future_wait_for(fo, 5 * SEC));
        ASSERT_EQ(atomic_load(&st.other_ran), r + 1);
        weft_future_destroy(fa);
        weft_future_destroy(fo);
        ASSERT_EQ(weft_semaphore_value(s), 1u);
    }
    /* and a whole run afterwards, on either */
    ASSERT_OK(weft_run_and_wait(a, other));
    atomic_store(&st.go, 1);
    ASSERT_OK(weft_run_and_wait(b, tf));
    ASSERT_EQ(weft_semaphore_value(s), 1u);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(other);
    ASSERT_OK(weft_semaphore_destroy(s));
}

/* ---- a deadline scope over runs of two executors ----------------------------------- */

static int spin_ctx(weft_ctx *cx, void *arg) {
    double t0 = now_s();
    while (weft_ctx_check(cx) == WEFT_OK && now_s() - t0 < 5) sleep_us(200);
    return 0;
}

static int end_scope(weft_ctx *cx, void *arg) { return weft_deadline_end(arg); }

TEST(a_deadline_scope_stops_runs_on_two_executors_and_ends_on_another_thread) {
    weft_executor *a = make_executor(2), *b = make_executor(2);
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    weft_taskflow *tf = make_taskflow("spin");
    weft_task x = must_emplace(tf, spin_ctx, NULL), y = must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_precede(x, y));
    static weft_deadline d;
    ASSERT_OK(weft_deadline_begin(&d, t, 20 * MS));
    weft_future *fa, *fb;
    ASSERT_OK(weft_run(a, tf, &fa));
    ASSERT_OK(weft_run(b, tf, &fb)); /* queued behind a's run, on b */
    ASSERT_OK(weft_cancel_attach(t, fa));
    ASSERT_OK(weft_cancel_attach(t, fb));
    double t0 = now_s();
    ASSERT_STATUS(weft_future_wait(fa), WEFT_ECANCELED);
    ASSERT_STATUS(weft_future_wait(fb), WEFT_ECANCELED);
    ASSERT_LT(now_s() - t0, 2.0);
    weft_future *fe;
    ASSERT_OK(weft_async(b, end_scope, &d, &fe));
    ASSERT_STATUS(weft_future_wait(fe), WEFT_ETASK);
    weft_run_info info;
    ASSERT_OK(weft_future_info(fe, &info));
    ASSERT_EQ(info.task_code, WEFT_ETIMEDOUT);
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    weft_future_destroy(fe);
    weft_cancel_token_destroy(t);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(tf);
}

/* ---- isolated waits on another executor's futures --------------------------------- */

typedef struct iso2 {
    weft_future *dep_f, *graph_f;
    weft_status dep_st, graph_st;
    atomic_int started;
} iso2;

static int iso_waits(weft_ctx *cx, void *arg) {
    iso2 *w = arg;
    atomic_store(&w->started, 1);
    w->dep_st = weft_future_wait_isolated(w->dep_f);
    w->graph_st = weft_future_wait_isolated(w->graph_f);
    return 0;
}

TEST(an_isolated_wait_from_another_executors_task_waits_for_a_dependent_task_and_a_graph_run) {
    weft_executor *a = make_executor(1), *b = make_executor(1);
    gate g;
    gate_close(a, &g, 1);
    where w = {.ex = a};
    weft_future *first = NULL, *dep = NULL, *run = NULL;
    ASSERT_OK(weft_async(a, noop, NULL, &first));
    ASSERT_OK(weft_dependent_async(a, note_where, &w, &first, 1, &dep));
    weft_taskflow *tf = make_taskflow("t");
    must_emplace(tf, noop, NULL);
    ASSERT_OK(weft_run(a, tf, &run));
    iso2 iw = {.dep_f = dep, .graph_f = run};
    weft_future *fb;
    ASSERT_OK(weft_async(b, iso_waits, &iw, &fb));
    ASSERT_TRUE(wait_flag(&iw.started, 1, 5));
    sleep_us(20000);
    gate_open(&g);
    ASSERT_OK(weft_future_wait(fb));
    /* from a thread that is not one of a's workers it is weft_future_wait (async.h) */
    ASSERT_OK(iw.dep_st);
    ASSERT_OK(iw.graph_st);
    ASSERT_EQ(atomic_load(&w.on_ex), 1);
    weft_future_destroy(first);
    weft_future_destroy(dep);
    weft_future_destroy(run);
    weft_future_destroy(fb);
    weft_executor_destroy(b);
    weft_executor_destroy(a);
    weft_taskflow_destroy(tf);
}

/* ---- a run queued behind another executor's run, cancelled there ------------------- */

static int hold_gate(weft_ctx *cx, void *arg) {
    sect *s = arg;
    atomic_store(&s->in_t1, 1);
    while (!atomic_load(&s->go)) sleep_us(100);
    return 0;
}

TEST(a_run_cancelled_while_queued_behind_another_executors_run_is_counted_skipped_on_its_own_executor) {
    weft_executor *a = weft_executor_create(&(weft_executor_config){.workers = 2, .metrics = true}, NULL);
    weft_executor *b = weft_executor_create(&(weft_executor_config){.workers = 2, .metrics = true}, NULL);
    sect s = {0};
    weft_taskflow *tf = make_taskflow("q");
    weft_task h = must_emplace(tf, hold_gate, &s);
    for (int i = 0; i < 4; i++) ASSERT_OK(weft_precede(h, must_emplace(tf, noop, NULL)));
    weft_future *fb, *fa;
    ASSERT_OK(weft_run(b, tf, &fb));
    ASSERT_TRUE(wait_flag(&s.in_t1, 1, 5));
    ASSERT_OK(weft_run(a, tf, &fa));
    ASSERT_OK(weft_future_cancel(fa));
    atomic_store(&s.go, 1);
    ASSERT_OK(weft_future_wait(fb));
    ASSERT_STATUS(weft_future_wait(fa), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(fa, &info));
    ASSERT_EQ(info.skipped, 5u);
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_OK(weft_executor_wait_all(b));
    weft_metrics ma, mb;
    ASSERT_OK(weft_executor_metrics(a, &ma, NULL, 0));
    ASSERT_OK(weft_executor_metrics(b, &mb, NULL, 0));
    ASSERT_EQ(mb.total.tasks, 5u);
    ASSERT_EQ(mb.total.skipped, 0u);
    ASSERT_EQ(ma.total.tasks, 0u);
    ASSERT_EQ(ma.total.skipped, 5u);
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(tf);
}

/* ---- a wait for a run whose module body is the waiter's own taskflow ---------------- */

typedef struct modwait {
    weft_executor *a;
    weft_taskflow *parent, *grand;
    weft_status wait_st, grand_st, and_wait_st, many_st;
    bool submitted;
} modwait;

static int wait_for_parent(weft_ctx *cx, void *arg) {
    modwait *m = arg;
    weft_future *f;
    if (weft_run(m->a, m->parent, &f) != WEFT_OK) return 1;
    m->wait_st = weft_future_wait_for(f, 300 * MS);
    (void)weft_future_cancel(f);
    weft_future_destroy(f);
    if (weft_run(m->a, m->grand, &f) != WEFT_OK) return 1;
    m->grand_st = weft_future_wait_for(f, 300 * MS);
    (void)weft_future_cancel(f);
    weft_future_destroy(f);
    if (m->wait_st != WEFT_EDEADLK || m->grand_st != WEFT_EDEADLK) return 0; /* the calls below would hang */
    m->and_wait_st = weft_run_and_wait(m->a, m->parent);
    weft_taskflow *tfs[1] = {m->grand};
    m->many_st = weft_run_many_and_wait(m->a, tfs, 1, NULL);
    return 0;
}

TEST(a_task_waiting_for_a_run_that_has_its_taskflow_as_a_module_body_gets_edeadlk) {
    weft_executor *a = make_executor(2), *b = make_executor(2);
    modwait m = {.a = a};
    weft_taskflow *tf = make_taskflow("inner");
    must_emplace(tf, wait_for_parent, &m);
    m.parent = make_taskflow("parent");
    must_emplace(m.parent, noop, NULL);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(m.parent, tf)));
    weft_taskflow *mid = make_taskflow("mid");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(mid, tf)));
    m.grand = make_taskflow("grand"); /* tf two modules down */
    ASSERT_FALSE(weft_task_is_null(weft_emplace_module(m.grand, mid)));
    ASSERT_OK(weft_run_and_wait(b, tf));
    ASSERT_STATUS(m.wait_st, WEFT_EDEADLK);
    ASSERT_STATUS(m.grand_st, WEFT_EDEADLK);
    ASSERT_STATUS(m.and_wait_st, WEFT_EDEADLK);
    ASSERT_STATUS(m.many_st, WEFT_EDEADLK);
    ASSERT_OK(weft_executor_wait_all(a));
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_taskflow_destroy(m.grand);
    weft_taskflow_destroy(mid);
    weft_taskflow_destroy(m.parent);
    weft_taskflow_destroy(tf);
}

/* ---- a run submitted from the completion callback of the taskflow's previous run --- */

typedef struct chain_cb {
    weft_executor *b;
    weft_taskflow *tf;
    weft_future *next;
    atomic_int runs, cbs;
} chain_cb;

static int count_run(weft_ctx *cx, void *arg) {
    atomic_fetch_add(&((chain_cb *)arg)->runs, 1);
    return 0;
}

static void run_again_on_b(weft_future *f, weft_status st, void *arg) {
    chain_cb *c = arg;
    if (weft_run(c->b, c->tf, &c->next) != WEFT_OK) c->next = NULL;
    atomic_fetch_add(&c->cbs, 1);
}

TEST(a_run_submitted_on_another_executor_from_the_callback_of_the_taskflows_previous_run_runs) {
    chain_cb c = {0};
    weft_executor *a = make_executor(2);
    c.b = make_executor(2);
    c.tf = make_taskflow("again");
    must_emplace(c.tf, count_run, &c);
    for (int r = 0; r < 100; r++) {
        weft_future *f;
        ASSERT_OK(weft_run(a, c.tf, &f));
        ASSERT_OK(weft_future_then(f, run_again_on_b, &c));
        ASSERT_OK(weft_future_wait(f));
        while (atomic_load(&c.cbs) != r + 1) sleep_us(10);
        ASSERT_NOT_NULL(c.next);
        ASSERT_OK(weft_future_wait_for(c.next, 5 * SEC));
        weft_future_destroy(c.next);
        weft_future_destroy(f);
    }
    ASSERT_EQ(atomic_load(&c.runs), 200);
    weft_executor_destroy(a);
    weft_executor_destroy(c.b);
    weft_taskflow_destroy(c.tf);
}
