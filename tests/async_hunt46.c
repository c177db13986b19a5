/* Async tasks and futures on paths the other async tests do not take
 * (session 46): timed waits at the edges, futures released before their task
 * ends and from inside tasks and callbacks, dependencies of every status,
 * huge and duplicate dependency sets, async tasks submitted from pipeline
 * stages and algorithm bodies, and chains still submitting while their
 * executor is destroyed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>

#include "test_util.h"

static atomic_int gate46;
static int hold46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load_explicit(&gate46, memory_order_acquire)) sleep_us(100);
    return 0;
}
static int fail46(weft_ctx *cx, void *p) {
    (void)cx;
    return (int)(intptr_t)p;
}

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* core.h: "A timeout of 0 only polls; one too long for the clock (up to
 * UINT64_MAX) never elapses."  From a thread that is not a worker: 0 on an
 * unfinished run is ETIMEDOUT at once; a huge timeout (UINT64_MAX, and just
 * below it, and 2^63) sleeps (it uses next to no CPU while the task is held)
 * and returns the run's status when it ends; 0 on a finished run is its
 * status. */
struct waiter46 {
    weft_future *f;
    uint64_t timeout;
    weft_status st;
    double cpu;
};
static void *timed_waiter46(void *p) {
    struct waiter46 *w = p;
    double c0 = thread_cpu_s();
    w->st = weft_future_wait_for(w->f, w->timeout);
    w->cpu = thread_cpu_s() - c0;
    return NULL;
}
TEST(a_timed_wait_of_zero_polls_and_a_huge_one_sleeps_until_the_task_ends) {
    weft_executor *ex = make_executor(2);
    atomic_store(&gate46, 0);
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, hold46, NULL, &f));
    ASSERT_STATUS(weft_future_wait_for(f, 0), WEFT_ETIMEDOUT);
    ASSERT_STATUS(weft_future_wait_for(f, 1), WEFT_ETIMEDOUT);
    uint64_t huge[3] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63};
    struct waiter46 w[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (struct waiter46){f, huge[i], WEFT_EAGAIN, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, timed_waiter46, &w[i]), 0);
    }
    sleep_us(200000);
    atomic_store(&gate46, 1);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        ASSERT_OK(w[i].st);
        if (w[i].cpu >= 0.1) TEST_FAIL_("waiter %d (timeout %llu) used %.3f s of CPU in a 200 ms wait", i, (unsigned long long)huge[i], w[i].cpu);
    }
    ASSERT_OK(weft_future_wait_for(f, 0));
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}

/* The same edges from inside a task of the executor (its worker runs other
 * work meanwhile): wait_for 0 on a held task is ETIMEDOUT, a huge timeout
 * waits until the task ends and gives its status. */
struct inner46 {
    weft_future *held;
    weft_status st0, st_huge;
};
static int inner_waits46(weft_ctx *cx, void *p) {
    (void)cx;
    struct inner46 *in = p;
    in->st0 = weft_future_wait_for(in->held, 0);
    atomic_store(&gate46, 1);
    in->st_huge = weft_future_wait_for(in->held, UINT64_MAX - 1);
    return 0;
}
TEST(timed_waits_of_zero_and_huge_from_a_task_poll_and_wait) {
    weft_executor *ex = make_executor(2);
    atomic_store(&gate46, 0);
    struct inner46 in = {NULL, WEFT_EAGAIN, WEFT_EAGAIN};
    ASSERT_OK(weft_async(ex, hold46, NULL, &in.held));
    weft_future *g = NULL;
    ASSERT_OK(weft_async(ex, inner_waits46, &in, &g));
    ASSERT_OK(weft_future_wait(g));
    ASSERT_STATUS(in.st0, WEFT_ETIMEDOUT);
    ASSERT_OK(in.st_huge);
    weft_future_destroy(g);
    weft_future_destroy(in.held);
    weft_executor_destroy(ex);
}

/* core.h: destroying a future before the run ends detaches the run, which
 * still completes.  Futures destroyed at once, by the task itself (through a
 * slot the caller filled before fn could start), and by a then-callback when
 * the task ends: every task runs once, nothing leaks (ASan). */
static atomic_int ran46;
static int destroy_own46(weft_ctx *cx, void *p) {
    (void)cx;
    weft_future **slot = p;
    weft_future_destroy(*slot);
    atomic_fetch_add(&ran46, 1);
    return 0;
}
static void destroy_in_then46(weft_future *f, weft_status st, void *arg) {
    (void)arg;
    if (st == WEFT_OK) atomic_fetch_add(&ran46, 100);
    weft_future_destroy(f);
}
TEST(futures_released_before_their_task_ends_by_anyone_leave_every_task_run_once) {
    weft_executor *ex = make_executor(2);
    atomic_store(&ran46, 0);
    enum { N = 200 };
    static weft_future *slots[N];
    for (int i = 0; i < N; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, bump, &ran46, &f));
        weft_future_destroy(f);
        ASSERT_OK(weft_async(ex, destroy_own46, &slots[i], &slots[i]));
        weft_future *g = NULL;
        ASSERT_OK(weft_async(ex, bump, &ran46, &g));
        ASSERT_OK(weft_future_then(g, destroy_in_then46, NULL));
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran46), N * 3 + N * 100);
    weft_executor_destroy(ex);
}

/* A taskflow run's future destroyed in its own then-callback (the callback
 * runs as the run ends): the run's memory is not read after (ASan), and the
 * taskflow can be run and destroyed again. */
TEST(a_taskflow_runs_future_destroyed_in_its_then_callback_is_not_used_after) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("then46");
    atomic_store(&ran46, 0);
    weft_task a = must_emplace(tf, bump, &ran46), b = must_emplace(tf, bump, &ran46);
    ASSERT_OK(weft_precede(a, b));
    for (int i = 0; i < 50; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_future_then(f, destroy_in_then46, NULL));
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran46), 50 * 2 + 50 * 100);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* async.h: a dependency may have any status.  Dependencies already finished
 * OK, failed, cancelled before they started, and still running, some given
 * twice: the dependent runs once after all, with its own status. */
TEST(a_dependent_of_finished_failed_cancelled_and_running_tasks_runs_once_after_all) {
    weft_executor *ex = make_executor(2);
    atomic_store(&gate46, 0);
    atomic_store(&ran46, 0);
    weft_future *ok = NULL, *bad = NULL, *can = NULL, *held = NULL, *hold_first = NULL;
    ASSERT_OK(weft_async(ex, noop, NULL, &ok));
    ASSERT_OK(weft_async(ex, fail46, (void *)7, &bad));
    ASSERT_OK(weft_future_wait(ok));
    ASSERT_STATUS(weft_future_wait(bad), WEFT_ETASK);
    /* one worker held, so `can` queued behind `hold_first` on a 1-worker view */
    ASSERT_OK(weft_async(ex, hold46, NULL, &held));
    ASSERT_OK(weft_async(ex, hold46, NULL, &hold_first));
    ASSERT_OK(weft_async(ex, bump, &ran46, &can));
    ASSERT_OK(weft_future_cancel(can));
    weft_future *deps[6] = {ok, bad, can, held, bad, held};
    weft_future *d = NULL;
    ASSERT_OK(weft_dependent_async(ex, bump, &ran46, deps, 6, &d));
    sleep_us(2000);
    ASSERT_FALSE(weft_future_ready(d));
    atomic_store(&gate46, 1);
    ASSERT_OK(weft_future_wait(d));
    ASSERT_OK(weft_future_wait(held));
    ASSERT_TRUE(weft_future_ready(can));
    weft_status cs = weft_future_status(can);
    ASSERT_TRUE(cs == WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&ran46), 1); /* d only; can never ran (or ran cancelled-aware? no: before start) */
    weft_future *all[] = {ok, bad, can, held, hold_first, d};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) weft_future_destroy(all[i]);
    weft_executor_destroy(ex);
}

/* 10^5 dependencies, distinct and all the same future, and none: the dependent starts
 * once, after every one; the caller may release the dependency futures at
 * once. */
static atomic_int before46;
static int count_before46(weft_ctx *cx, void *p) {
    (void)cx;
    atomic_fetch_add(&before46, 1);
    (void)p;
    return 0;
}
static int check_all_before46(weft_ctx *cx, void *p) {
    (void)cx;
    return atomic_load(&before46) == (int)(intptr_t)p ? 0 : 1;
}
TEST(a_hundred_thousand_dependencies_distinct_or_repeated_are_all_waited_for) {
    weft_executor *ex = make_executor(2);
    enum { N = 100000 };
    weft_future **deps = malloc(N * sizeof *deps);
    ASSERT_NOT_NULL(deps);
    atomic_store(&before46, 0);
    for (int i = 0; i < N; i++) ASSERT_OK(weft_async(ex, count_before46, NULL, &deps[i]));
    weft_future *d = NULL;
    ASSERT_OK(weft_dependent_async(ex, check_all_before46, (void *)(intptr_t)N, deps, N, &d));
    for (int i = 0; i < N; i++) weft_future_destroy(deps[i]);
    ASSERT_OK(weft_future_wait(d));
    weft_future_destroy(d);
    /* the same future N times */
    atomic_store(&gate46, 0);
    atomic_store(&before46, 0);
    weft_future *one = NULL;
    ASSERT_OK(weft_async(ex, hold46, NULL, &one));
    for (int i = 0; i < N; i++) deps[i] = one;
    atomic_store(&ran46, 0);
    ASSERT_OK(weft_dependent_async(ex, bump, &ran46, deps, N, &d));
    weft_future_destroy(one);
    sleep_us(1000);
    ASSERT_EQ(atomic_load(&ran46), 0);
    atomic_store(&gate46, 1);
    ASSERT_OK(weft_future_wait(d));
    ASSERT_EQ(atomic_load(&ran46), 1);
    weft_future_destroy(d);
    /* and none: deps may be NULL */
    ASSERT_OK(weft_dependent_async(ex, bump, &ran46, NULL, 0, &d));
    ASSERT_OK(weft_future_wait(d));
    ASSERT_EQ(atomic_load(&ran46), 2);
    weft_future_destroy(d);
    free(deps);
    weft_executor_destroy(ex);
}

/* async.h: "Each dependency must be the future of an async task of the same
 * executor (WEFT_EINVAL otherwise)": a future of another executor's task, a
 * taskflow run's, NULL; nothing queued, *out NULL, and the message names the
 * dependency.  From a task of the other executor too. */
struct cross46 {
    weft_executor *ex;
    weft_future *foreign;
    weft_status st;
    weft_future *out;
};
static int submit_cross46(weft_ctx *cx, void *p) {
    (void)cx;
    struct cross46 *c = p;
    c->out = (weft_future *)1;
    c->st = weft_dependent_async(c->ex, noop, NULL, &c->foreign, 1, &c->out);
    return 0;
}
TEST(a_dependency_of_another_executor_or_a_taskflow_run_is_refused_with_nothing_queued) {
    weft_executor *a = make_executor(1), *b = make_executor(1);
    weft_future *fa = NULL, *out = (weft_future *)1;
    ASSERT_OK(weft_async(a, noop, NULL, &fa));
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, &fa, 1, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    ASSERT_TRUE(strstr(weft_last_error_message(), "deps[0]") != NULL);
    weft_taskflow *tf = make_taskflow("dep46");
    must_emplace(tf, noop, NULL);
    weft_future *run = NULL;
    ASSERT_OK(weft_run(b, tf, &run));
    weft_future *mixed[3] = {NULL, NULL, NULL};
    ASSERT_OK(weft_async(b, noop, NULL, &mixed[0]));
    mixed[1] = run;
    out = (weft_future *)1;
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, mixed, 2, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    ASSERT_TRUE(strstr(weft_last_error_message(), "deps[1]") != NULL);
    mixed[1] = NULL;
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, mixed, 2, &out), WEFT_EINVAL);
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, NULL, 1, &out), WEFT_EINVAL);
    ASSERT_STATUS(weft_dependent_async(b, noop, NULL, mixed, (size_t)UINT32_MAX, &out), WEFT_EINVAL);
    struct cross46 c = {b, fa, WEFT_EAGAIN, NULL};
    weft_future *g = NULL;
    ASSERT_OK(weft_async(a, submit_cross46, &c, &g));
    ASSERT_OK(weft_future_wait(g));
    ASSERT_STATUS(c.st, WEFT_EINVAL);
    ASSERT_NULL(c.out);
    ASSERT_OK(weft_future_wait(run));
    ASSERT_OK(weft_executor_wait_all(b));
    ASSERT_OK(weft_executor_wait_all(a));
    weft_future_destroy(g);
    weft_future_destroy(run);
    weft_future_destroy(mixed[0]);
    weft_future_destroy(fa);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}

/* A task of one executor waits (plain, timed, isolated) on an async future of
 * another executor: its worker blocks, the wait returns the status. */
struct other46 {
    weft_future *f;
    weft_status st[3];
};
static int wait_other46(weft_ctx *cx, void *p) {
    (void)cx;
    struct other46 *o = p;
    o->st[0] = weft_future_wait_for(o->f, 0);
    atomic_store(&gate46, 1);
    o->st[1] = weft_future_wait(o->f);
    o->st[2] = weft_future_wait_isolated(o->f);
    return 0;
}
TEST(a_task_waits_on_another_executors_async_future_plainly_timed_and_isolated) {
    weft_executor *a = make_executor(1), *b = make_executor(1);
    atomic_store(&gate46, 0);
    struct other46 o = {NULL, {WEFT_EAGAIN, WEFT_EAGAIN, WEFT_EAGAIN}};
    ASSERT_OK(weft_async(b, hold46, NULL, &o.f));
    weft_future *g = NULL;
    ASSERT_OK(weft_async(a, wait_other46, &o, &g));
    ASSERT_OK(weft_future_wait(g));
    ASSERT_STATUS(o.st[0], WEFT_ETIMEDOUT);
    ASSERT_OK(o.st[1]);
    ASSERT_OK(o.st[2]);
    weft_future_destroy(g);
    weft_future_destroy(o.f);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}

/* A chain of async tasks, each submitting the next (weft_async and
 * weft_silent_async alternately, through the task's own executor), still
 * growing when weft_executor_destroy is called: destroy runs every link,
 * exactly once, before it returns. */
struct chain46 {
    weft_executor *ex;
    atomic_int done;
    int len;
};
static int link46(weft_ctx *cx, void *p) {
    struct chain46 *c = p;
    int k = atomic_fetch_add(&c->done, 1) + 1;
    if (k < c->len) {
        weft_executor *ex = weft_ctx_executor(cx);
        if (k & 1) {
            if (weft_silent_async(ex, link46, c) != WEFT_OK) return 1;
        } else {
            weft_future *f = NULL;
            if (weft_async(ex, link46, c, &f) != WEFT_OK) return 1;
            weft_future_destroy(f);
        }
    }
    return 0;
}
TEST(a_chain_of_async_tasks_still_growing_at_destroy_runs_every_link_once) {
    for (int rep = 0; rep < 20; rep++) {
        weft_executor *ex = make_executor(rep % 2 + 1);
        struct chain46 c = {ex, 0, 2000};
        ASSERT_OK(weft_silent_async(ex, link46, &c));
        weft_executor_destroy(ex);
        ASSERT_EQ(atomic_load(&c.done), 2000);
    }
}

/* Async tasks submitted from inside a pipeline stage and from inside a
 * parallel algorithm's body (which may run on the calling thread, not a
 * worker): each runs once, and waiting on them there works. */
static atomic_int stage_async46;
static int stage46(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) >= 64) return weft_pipeflow_stop(pf), 0;
    weft_future *f = NULL;
    if (weft_async(arg, bump, &stage_async46, &f) != WEFT_OK)
        return 1;
    weft_status st = weft_future_wait(f);
    weft_future_destroy(f);
    return st == WEFT_OK ? 0 : 2;
}
static int stage2_46(weft_pipeflow *pf, void *arg) {
    (void)pf;
    return weft_silent_async(arg, bump, &stage_async46) == WEFT_OK ? 0 : 3;
}
struct body46 {
    weft_executor *ex;
    atomic_int n;
};
static void body46(size_t i, void *arg) {
    struct body46 *b = arg;
    weft_future *f = NULL;
    if (weft_async(b->ex, bump, &b->n, &f) != WEFT_OK) return;
    if (i % 2) (void)weft_future_wait(f);
    weft_future_destroy(f);
}
TEST(async_tasks_submitted_from_pipeline_stages_and_algorithm_bodies_run_once_each) {
    weft_executor *ex = make_executor(2);
    atomic_store(&stage_async46, 0);
    weft_stage st[2] = {{WEFT_STAGE_SERIAL, stage46, ex, "s0"}, {WEFT_STAGE_PARALLEL, stage2_46, ex, "s1"}};
    weft_pipeline *p = weft_pipeline_create(4, st, 2, NULL);
    ASSERT_NOT_NULL(p);
    weft_taskflow *tf = make_taskflow("pipe46");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&stage_async46), 128);
    struct body46 b = {ex, 0};
    ASSERT_OK(weft_parallel_for(ex, 0, 1000, 1, body46, &b, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&b.n), 1000);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
}

/* weft_future_wait_isolated on a dependent whose dependency was cancelled
 * before it ran, and on a task removed through its handle: returns the
 * status, no hang; isolated wait on a taskflow run's future from a worker is
 * WEFT_EINVAL, from a non-worker it is a plain wait. */
struct iso46 {
    weft_future *dep, *run;
    weft_status st_dep, st_run;
};
static int iso_waits46(weft_ctx *cx, void *p) {
    (void)cx;
    struct iso46 *s = p;
    s->st_run = weft_future_wait_isolated(s->run);
    s->st_dep = weft_future_wait_isolated(s->dep);
    return 0;
}
TEST(isolated_waits_on_a_dependent_of_a_cancelled_task_and_on_a_run_give_their_statuses) {
    weft_executor *ex = make_executor(1);
    atomic_store(&gate46, 0);
    weft_future *h = NULL, *c = NULL, *d = NULL;
    ASSERT_OK(weft_async(ex, hold46, NULL, &h));
    ASSERT_OK(weft_async(ex, noop, NULL, &c));
    ASSERT_OK(weft_future_cancel(c));
    ASSERT_OK(weft_dependent_async(ex, noop, NULL, &c, 1, &d));
    atomic_store(&gate46, 1);
    ASSERT_OK(weft_future_wait(h));
    weft_taskflow *tf = make_taskflow("iso46");
    must_emplace(tf, noop, NULL);
    struct iso46 s = {d, NULL, WEFT_EAGAIN, WEFT_EAGAIN};
    ASSERT_OK(weft_run(ex, tf, &s.run));
    ASSERT_OK(weft_future_wait_isolated(s.run));
    weft_future *g = NULL;
    ASSERT_OK(weft_async(ex, iso_waits46, &s, &g));
    ASSERT_OK(weft_future_wait(g));
    ASSERT_STATUS(s.st_run, WEFT_EINVAL);
    ASSERT_OK(s.st_dep);
    ASSERT_STATUS(weft_future_wait(c), WEFT_ECANCELED);
    weft_future *all[] = {h, c, d, s.run, g};
    for (size_t i = 0; i < 5; i++) weft_future_destroy(all[i]);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* core.h: "Futures obtained from this executor stay valid and must still be
 * destroyed; other threads may go on calling weft_future_* on them during the
 * call and after it."  Every kind of future (async, dependent, semaphore,
 * taskflow run, run_n_parallel, run_many set), after its executor is
 * destroyed: every call answers from the future alone (ASan: nothing reads
 * the freed executor), then-callbacks run at once, the fd is readable. */
#include <poll.h>
static atomic_int thens46;
static void count_then46(weft_future *f, weft_status st, void *arg) {
    (void)f, (void)arg;
    if (st == WEFT_OK) atomic_fetch_add(&thens46, 1);
}
TEST(every_kind_of_future_answers_every_call_after_its_executor_is_destroyed) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("after46"), *tf2 = make_taskflow("after46b");
    must_emplace(tf, noop, NULL);
    must_emplace(tf2, noop, NULL);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(s);
    weft_future *f[6] = {NULL};
    ASSERT_OK(weft_async(ex, noop, NULL, &f[0]));
    ASSERT_OK(weft_dependent_async(ex, noop, NULL, &f[0], 1, &f[1]));
    ASSERT_OK(weft_async_acquire(ex, noop, NULL, &s, 1, &f[2]));
    ASSERT_OK(weft_run(ex, tf, &f[3]));
    ASSERT_OK(weft_run_n_parallel(ex, tf2, 3, &f[4]));
    weft_taskflow *both[2] = {tf, tf2};
    ASSERT_OK(weft_run_many(ex, both, 2, &f[5]));
    weft_executor_destroy(ex);
    atomic_store(&thens46, 0);
    for (int i = 0; i < 6; i++) {
        ASSERT_TRUE(weft_future_ready(f[i]));
        ASSERT_OK(weft_future_status(f[i]));
        ASSERT_OK(weft_future_wait(f[i]));
        ASSERT_OK(weft_future_wait_for(f[i], 0));
        ASSERT_OK(weft_future_wait_for(f[i], UINT64_MAX));
        weft_status iso = weft_future_wait_isolated(f[i]);
        ASSERT_OK(iso);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f[i], &info));
        ASSERT_OK(info.status);
        ASSERT_STATUS(weft_future_cancel(f[i]), WEFT_ENOENT);
        ASSERT_OK(weft_future_then(f[i], count_then46, NULL));
        int fd = -1;
        ASSERT_OK(weft_future_fd(f[i], &fd));
        struct pollfd pfd = {fd, POLLIN, 0};
        ASSERT_EQ(poll(&pfd, 1, 1000), 1);
    }
    ASSERT_OK(weft_run_many_status(f[5], 0));
    ASSERT_OK(weft_run_many_status(f[5], 1));
    ASSERT_STATUS(weft_run_many_cancel(f[5]), WEFT_ENOENT);
    ASSERT_EQ(atomic_load(&thens46), 6);
    for (int i = 0; i < 6; i++) weft_future_destroy(f[i]);
    ASSERT_OK(weft_semaphore_destroy(s));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(tf2));
}

/* Async tasks submitted from GPU work on the emulated device: from a GPU
 * task's recording function (on a worker), from an emulator kernel (on the
 * stream's thread, which is no worker), and weft_gpu_call from inside an
 * async task: each runs once, weft_executor_wait_all sees them all. */
#include "weft/gpu.h"
static weft_executor *gpu_ex46;
static atomic_int gpu_async46;
static int kernel_submits46(const weft_gpu_range *r, void *const *args) {
    (void)args;
    for (size_t i = 0; i < r->global[0]; i++)
        if (weft_silent_async(gpu_ex46, bump, &gpu_async46) != WEFT_OK) return 1;
    weft_future *f = NULL;
    if (weft_async(gpu_ex46, bump, &gpu_async46, &f) != WEFT_OK) return 2;
    weft_status st = weft_future_wait(f); /* from the stream's thread: a plain wait */
    weft_future_destroy(f);
    return st == WEFT_OK ? 0 : 3;
}
static weft_gpu_kernel *gpu_k46;
static int record46(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)arg;
    weft_future *f = NULL;
    if (cx && weft_async(weft_ctx_executor(cx), bump, &gpu_async46, &f) != WEFT_OK) return 1;
    weft_future_destroy(f);
    weft_gpu_range r = {.global = {8, 1, 1}};
    return weft_gpu_launch(s, gpu_k46, &r, NULL, 0) == WEFT_OK ? 0 : 2;
}
static int async_gpu_call46(weft_ctx *cx, void *dev) {
    (void)cx;
    return weft_gpu_call(dev, record46, NULL);
}
TEST(async_tasks_submitted_from_gpu_tasks_and_emulator_kernels_run_once_each) {
    weft_status err;
    weft_gpu_device *dev = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR}, &err);
    if (!dev) SKIP("no emulated GPU device");
    gpu_ex46 = make_executor(2);
    atomic_store(&gpu_async46, 0);
    weft_gpu_kernel_source src = {.name = "submits", .host = kernel_submits46};
    gpu_k46 = weft_gpu_kernel_create(dev, &src, &err);
    ASSERT_NOT_NULL(gpu_k46);
    weft_taskflow *tf = make_taskflow("gpu46");
    for (int i = 0; i < 4; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf, dev, record46, NULL)));
    ASSERT_OK(weft_run_and_wait(gpu_ex46, tf));
    ASSERT_OK(weft_executor_wait_all(gpu_ex46));
    ASSERT_EQ(atomic_load(&gpu_async46), 4 * (1 + 8 + 1));
    weft_future *f = NULL;
    ASSERT_OK(weft_async(gpu_ex46, async_gpu_call46, dev, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_executor_wait_all(gpu_ex46));
    ASSERT_EQ(atomic_load(&gpu_async46), 5 * (1 + 8 + 1));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_gpu_kernel_destroy(gpu_k46);
    weft_executor_destroy(gpu_ex46);
    weft_gpu_close(dev);
}

/* core.h: weft_future_wait "returns WEFT_EDEADLK at once when the run could
 * only finish after a task running on this worker returns".  A dependent
 * async task of the waiting task itself (weft_dependent_async with the
 * waiter among its dependencies, directly or through a chain of
 * dependents) can only start after the waiter returns: the wait, plain or
 * timed, must be refused, not hang (it hung: wait_for ran out its timeout,
 * a plain wait never returned).  Checked on 1 and 2 workers, for a
 * dependent made before the task started (by main) and for a chain made by
 * the task itself, and from a task that a wait of the waiter ran on top of
 * it; a dependent of an unrelated task is still waited for (no false
 * refusal). */
struct selfdep46 {
    weft_executor *ex;
    weft_future *_Atomic dep; /* a dependent of the task, set by main */
    weft_future *unrelated;   /* a dependent of a held task only */
    weft_status st_main, st_timed, st_chain, st_nested, st_unrelated;
    bool nested; /* only where no idle worker could steal the nested task */
};
static struct selfdep46 sd46;
static int nested_waiter46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    sd46.st_nested = weft_future_wait(atomic_load(&sd46.dep));
    return 0;
}
static int self_waiter46(weft_ctx *cx, void *p) {
    (void)p;
    while (!atomic_load(&gate46)) sleep_us(100);
    weft_future *b = atomic_load(&sd46.dep);
    sd46.st_main = weft_future_wait(b);
    sd46.st_timed = weft_future_wait_for(b, 2 * SEC);
    /* a chain made here: self <- c1 <- c2 <- c3, waited at its end */
    weft_future *c[3] = {NULL, NULL, NULL}, *first = NULL;
    if (weft_dependent_async(weft_ctx_executor(cx), noop, NULL, &b, 1, &c[0]) != WEFT_OK) return 1;
    if (weft_dependent_async(weft_ctx_executor(cx), noop, NULL, &c[0], 1, &c[1]) != WEFT_OK) return 2;
    weft_future *two[2] = {c[1], b};
    if (weft_dependent_async(weft_ctx_executor(cx), noop, NULL, two, 2, &c[2]) != WEFT_OK) return 3;
    sd46.st_chain = weft_future_wait_for(c[2], 2 * SEC);
    for (int i = 0; i < 3; i++) weft_future_destroy(c[i]);
    /* a task run on top of this one by a wait: it waits on our dependent */
    if (sd46.nested && weft_async(weft_ctx_executor(cx), nested_waiter46, NULL, &first) != WEFT_OK) return 4;
    if (first) (void)weft_future_wait(first);
    weft_future_destroy(first);
    /* a dependent of a held task only: waited for (the main thread lets it go) */
    atomic_store(&gate46, 2);
    sd46.st_unrelated = weft_future_wait_for(sd46.unrelated, 10 * SEC);
    return 0;
}
static int held_until3_46(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (atomic_load(&gate46) != 3) sleep_us(100);
    return 0;
}
TEST(a_task_waiting_on_its_own_dependent_async_task_is_edeadlk_not_a_hang) {
    watchdog_start(60);
    for (unsigned w = 1; w <= 2; w++) {
        weft_executor *ex = make_executor(w + 1); /* one worker holds `held` */
        memset(&sd46, 0, sizeof sd46);
        sd46.st_main = sd46.st_timed = sd46.st_chain = sd46.st_nested = sd46.st_unrelated = WEFT_EAGAIN;
        sd46.nested = w == 1; /* two workers: one holds `held`, the other runs the waiter */
        atomic_store(&gate46, 0);
        weft_future *held = NULL, *a = NULL, *b = NULL;
        ASSERT_OK(weft_async(ex, held_until3_46, NULL, &held));
        ASSERT_OK(weft_dependent_async(ex, noop, NULL, &held, 1, &sd46.unrelated));
        ASSERT_OK(weft_async(ex, self_waiter46, NULL, &a));
        ASSERT_OK(weft_dependent_async(ex, noop, NULL, &a, 1, &b));
        atomic_store(&sd46.dep, b);
        atomic_store(&gate46, 1);
        ASSERT_TRUE(wait_flag(&gate46, 2, 10)); /* without the refusal the task hangs in its first wait */
        sleep_us(1000);
        atomic_store(&gate46, 3);
        ASSERT_OK(weft_future_wait(a));
        ASSERT_STATUS(sd46.st_main, WEFT_EDEADLK);
        ASSERT_STATUS(sd46.st_timed, WEFT_EDEADLK);
        ASSERT_STATUS(sd46.st_chain, WEFT_EDEADLK);
        if (sd46.nested) ASSERT_STATUS(sd46.st_nested, WEFT_EDEADLK);
        ASSERT_OK(sd46.st_unrelated);
        ASSERT_OK(weft_future_wait(b)); /* it runs once its dependency has returned */
        weft_future_destroy(a);
        weft_future_destroy(b);
        weft_future_destroy(held);
        weft_future_destroy(sd46.unrelated);
        weft_executor_destroy(ex);
    }
    watchdog_stop();
}

/* The refusal above has no false positives: waiters (each also the
 * dependency of a small chain of its own) wait, nested in one another's
 * waits on 1 to 3 workers, on dependents of leaf tasks they do not lead to
 * (waited for: WEFT_OK) and on the end of their own chain (WEFT_EDEADLK). */
enum { W46 = 24 };
struct mix46 {
    weft_executor *ex;
    weft_future *leaf_dep[W46]; /* dependents of leaves only */
    weft_future *_Atomic own_end[W46]; /* the end of waiter i's own chain */
    atomic_int ok, deadlk, other;
};
static struct mix46 mx46;
static int mix_waiter46(weft_ctx *cx, void *p) {
    (void)cx;
    int i = (int)(intptr_t)p;
    weft_future *end = NULL;
    while (!(end = atomic_load(&mx46.own_end[i]))) sleep_us(50);
    weft_status a = weft_future_wait(mx46.leaf_dep[(i * 7) % W46]);
    weft_status b = weft_future_wait_for(end, 10 * SEC);
    atomic_fetch_add(a == WEFT_OK ? &mx46.ok : &mx46.other, 1);
    atomic_fetch_add(b == WEFT_EDEADLK ? &mx46.deadlk : &mx46.other, 1);
    return 0;
}
TEST(waits_on_dependents_that_do_not_wait_for_the_waiter_are_never_refused) {
    watchdog_start(60);
    for (unsigned w = 1; w <= 3; w++) {
        memset(&mx46, 0, sizeof mx46);
        mx46.ex = make_executor(w);
        weft_future *leaf[W46], *waiter[W46], *chain[W46][2];
        for (int i = 0; i < W46; i++) ASSERT_OK(weft_async(mx46.ex, noop, NULL, &leaf[i]));
        for (int i = 0; i < W46; i++) {
            weft_future *two[2] = {leaf[i], leaf[(i + 5) % W46]};
            ASSERT_OK(weft_dependent_async(mx46.ex, noop, NULL, two, 2, &mx46.leaf_dep[i]));
        }
        for (int i = 0; i < W46; i++) ASSERT_OK(weft_async(mx46.ex, mix_waiter46, (void *)(intptr_t)i, &waiter[i]));
        for (int i = 0; i < W46; i++) {
            ASSERT_OK(weft_dependent_async(mx46.ex, noop, NULL, &waiter[i], 1, &chain[i][0]));
            weft_future *two[2] = {chain[i][0], leaf[i]};
            ASSERT_OK(weft_dependent_async(mx46.ex, noop, NULL, two, 2, &chain[i][1]));
            atomic_store(&mx46.own_end[i], chain[i][1]);
        }
        for (int i = 0; i < W46; i++) ASSERT_OK(weft_future_wait(waiter[i]));
        ASSERT_OK(weft_executor_wait_all(mx46.ex));
        ASSERT_EQ(atomic_load(&mx46.ok), W46);
        ASSERT_EQ(atomic_load(&mx46.deadlk), W46);
        ASSERT_EQ(atomic_load(&mx46.other), 0);
        for (int i = 0; i < W46; i++) {
            ASSERT_OK(weft_future_status(chain[i][1]));
            weft_future_destroy(leaf[i]);
            weft_future_destroy(mx46.leaf_dep[i]);
            weft_future_destroy(waiter[i]);
            weft_future_destroy(chain[i][0]);
            weft_future_destroy(chain[i][1]);
        }
        weft_executor_destroy(mx46.ex);
    }
    watchdog_stop();
}
