/* Session 40's hunt in the executor's lifecycle: every submission path in a
 * child made by fork() (each must fail fast with WEFT_EFORKED, none may hang),
 * create/destroy churn with work in flight, and executors with every option
 * created under an allocator that fails each allocation in turn. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fork_util.h"
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int count_one(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static bool stop_at_once(void *arg) {
    (void)arg;
    return true;
}

/* ---- fork(): the submission paths the first fork test does not take --------- */

/* Each check's bit is set when the call did not fail fast with WEFT_EFORKED. */
static int forked_child_checks(weft_executor *ex, weft_executor *prio_ex, weft_taskflow *tf,
                               weft_future *dep) {
    int bad = 0;
    weft_log_set_level(WEFT_LOG_OFF);
    atomic_int n = 0;
    weft_future *f = NULL;
    weft_status st;
    st = weft_dependent_async(ex, count_one, &n, &dep, 1, &f);
    if (st != WEFT_EFORKED && !(st == WEFT_OK && weft_future_wait(f) == WEFT_EFORKED)) bad |= 1 << 0;
    f = NULL;
    st = weft_async_with(ex, count_one, &n, &(weft_async_options){ .priority = WEFT_PRIORITY_HIGH }, &f);
    if (st != WEFT_EFORKED && !(st == WEFT_OK && weft_future_wait(f) == WEFT_EFORKED)) bad |= 1 << 1;
    if (weft_run_and_wait(ex, tf) != WEFT_EFORKED) bad |= 1 << 2;
    f = NULL;
    st = weft_run_n(ex, tf, 3, &f);
    if (st != WEFT_EFORKED && !(st == WEFT_OK && weft_future_wait(f) == WEFT_EFORKED)) bad |= 1 << 3;
    f = NULL;
    st = weft_run_until(ex, tf, stop_at_once, NULL, &f);
    if (st != WEFT_EFORKED && !(st == WEFT_OK && weft_future_wait(f) == WEFT_EFORKED)) bad |= 1 << 4;
    weft_taskflow *one[1] = { tf };
    weft_status each[1] = { WEFT_OK };
    st = weft_run_many_and_wait(ex, one, 1, each);
    if (st != WEFT_EFORKED && each[0] != WEFT_EFORKED) bad |= 1 << 5;
    int r = 0;
    if (weft_run_root_status(ex, count_one, &n, &r) != WEFT_EFORKED) bad |= 1 << 6;
    weft_cancel_token *t = weft_cancel_token_create(NULL, NULL);
    if (!t || weft_run_root_with_token(ex, t, count_one, &n, &r) != WEFT_EFORKED) bad |= 1 << 7;
    weft_cancel_token_destroy(t);
    if (weft_future_wait_for(dep, 5 * SEC) != WEFT_EFORKED) bad |= 1 << 8;
    if (weft_future_wait_isolated(dep) != WEFT_EFORKED) bad |= 1 << 9;
    /* An executor with a ready-queue policy queues through its injector. */
    if (weft_silent_async(prio_ex, count_one, &n) != WEFT_EFORKED) bad |= 1 << 10;
    f = NULL;
    st = weft_run_with_priority(prio_ex, tf, WEFT_PRIORITY_HIGH, &f);
    if (st != WEFT_EFORKED && !(st == WEFT_OK && weft_future_wait(f) == WEFT_EFORKED)) bad |= 1 << 11;
    if (atomic_load(&n) != 0) bad |= 1 << 12; /* nothing of the parent's ran here */
    return bad;
}

TEST(every_other_submission_path_on_a_parents_executor_fails_fast_in_a_forked_child) {
    weft_executor *ex = make_executor(2);
    weft_status err;
    weft_executor *prio_ex = weft_executor_create(
        &(weft_executor_config){ .workers = 2, .sched = &(weft_sched_config){ .kind = WEFT_SCHED_PRIORITY } }, &err);
    ASSERT_NOT_NULL(prio_ex);
    weft_taskflow *tf = make_taskflow("forked");
    atomic_int n = 0;
    must_emplace(tf, count_one, &n);
    weft_future *dep = NULL;
    fork_slow_pid = getpid();
    atomic_store(&fork_slow_started, 0);
    atomic_store(&fork_slow_release, 0);
    ASSERT_OK(weft_async(ex, slow_until_released, NULL, &dep)); /* in flight at the fork (fork_util.h) */
    /* No worker of either executor inside ASan's allocator at the fork (its
     * lock is not held across fork: fork_util.h): dep's worker asleep in it,
     * every other one parked. */
    while (!atomic_load(&fork_slow_started)) sleep_us(100);
    every_other_worker_asleep(ex, 1);
    every_other_worker_asleep(prio_ex, 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) _exit(forked_child_checks(ex, prio_ex, tf, dep));
    int status = wait_child(pid, 20, "the child hung using the parent's executor");
    atomic_store(&fork_slow_release, 1);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) TEST_FAIL_("child checks failed: mask 0x%x", WEXITSTATUS(status));
    ASSERT_OK(weft_future_wait(dep));
    weft_future_destroy(dep);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&n), 1);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(prio_ex);
    weft_executor_destroy(ex);
}

#include "counting_alloc.h"

/* ---- a user policy that counts its destroy calls ---------------------------- */

typedef struct {
    pthread_mutex_t m;
    weft_sched_item *items[1024];
    size_t n;
    int destroyed;
} lifo_policy;

static int lifo_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)p;
    (void)worker;
    lifo_policy *s = st;
    pthread_mutex_lock(&s->m);
    int full = s->n == sizeof s->items / sizeof s->items[0];
    if (!full) s->items[s->n++] = it;
    pthread_mutex_unlock(&s->m);
    return full;
}
static weft_sched_item *lifo_pop(void *st, int worker) {
    (void)worker;
    lifo_policy *s = st;
    pthread_mutex_lock(&s->m);
    weft_sched_item *it = s->n ? s->items[--s->n] : NULL;
    pthread_mutex_unlock(&s->m);
    return it;
}
static void lifo_destroy(void *st) { ((lifo_policy *)st)->destroyed++; }

static void observe_nothing(void *user, const weft_task_event *ev) {
    (void)user;
    (void)ev;
}

/* Runs a little of every kind of work on ex: all of it must run exactly. */
static void some_work(weft_executor *ex, long fail_at) {
    atomic_int n = 0;
    weft_future *f = NULL;
    weft_status st = weft_async(ex, count_one, &n, &f);
    if (st == WEFT_ENOMEM) st = weft_async(ex, count_one, &n, &f); /* the failure was spent */
    if (st != WEFT_OK) TEST_FAIL_("fail_at %ld: weft_async: %s", fail_at, weft_errname(st));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    int r = 0;
    st = weft_run_root_status(ex, count_one, &n, &r);
    if (st == WEFT_ENOMEM) st = weft_run_root_status(ex, count_one, &n, &r);
    if (st != WEFT_OK) TEST_FAIL_("fail_at %ld: weft_run_root_status: %s", fail_at, weft_errname(st));
    ASSERT_EQ(atomic_load(&n), 2);
}

/* Creates an executor with config c while allocation N fails, for every N
 * until one create meets no failure.  Each create must succeed or fail with
 * WEFT_ENOMEM, leave nothing allocated when it fails, and the user policy's
 * destroy must be called exactly when an executor was made and destroyed. */
static void create_under_every_failure(const char *what, weft_executor_config c, lifo_policy *pol) {
    for (long n = 1;; n++) {
        if (pol) pol->destroyed = 0;
        fail_allocation(n);
        long long before = atomic_load(&A.outstanding);
        weft_status err = WEFT_OK;
        weft_executor *ex = weft_executor_create(&c, &err);
        bool failed_here = atomic_load(&A.failures) > 0;
        if (!ex) {
            if (err != WEFT_ENOMEM)
                TEST_FAIL_("%s, allocation %ld failing: create gave %s, not WEFT_ENOMEM (%s)", what, n,
                           weft_errname(err), weft_last_error_message());
            if (atomic_load(&A.outstanding) != before)
                TEST_FAIL_("%s, allocation %ld failing: a failed create left %lld bytes", what, n,
                           atomic_load(&A.outstanding) - before);
            if (pol && pol->destroyed != 0)
                TEST_FAIL_("%s, allocation %ld failing: a failed create called the user policy's destroy "
                           "(%d times): its owner cannot tell whether to free the state",
                           what, n, pol->destroyed);
            continue;
        }
        fail_allocation(0);
        some_work(ex, n);
        weft_executor_destroy(ex);
        if (pol && pol->destroyed != 1)
            TEST_FAIL_("%s, allocation %ld failing: destroy called the policy's destroy %d times", what, n,
                       pol->destroyed);
        if (!failed_here) break;
        if (n > 100000) TEST_FAIL_("%s: the allocation count keeps growing", what);
    }
}

TEST(executors_with_every_option_are_created_or_refused_whole_when_any_allocation_fails) {
    weft_log_level level = weft_log_get_level();
    weft_log_set_level(WEFT_LOG_OFF); /* each refused layer logs an error */
    weft_set_allocator(&counting);
    static lifo_policy pol;
    pthread_mutex_init(&pol.m, NULL);
    const weft_sched_policy user = { .state = &pol, .push = lifo_push, .pop = lifo_pop, .destroy = lifo_destroy };
    const weft_observer obs = { .task_begin = observe_nothing, .task_end = observe_nothing };
    const weft_sched_kind kinds[] = { WEFT_SCHED_FIFO, WEFT_SCHED_PRIORITY, WEFT_SCHED_ROUND_ROBIN,
                                      WEFT_SCHED_RANDOM };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char what[64];
        snprintf(what, sizeof what, "sched kind %d", (int)kinds[k]);
        create_under_every_failure(what,
                                   (weft_executor_config){ .workers = 2, .sched = &(weft_sched_config){ .kind = kinds[k] } },
                                   NULL);
    }
    create_under_every_failure("a user policy",
                               (weft_executor_config){ .workers = 2,
                                                       .sched = &(weft_sched_config){ .kind = WEFT_SCHED_CUSTOM, .policy = &user } },
                               &pol);
    /* The layers after the scheduling one can fail too: the policy's state
     * stays the caller's whichever layer refuses. */
    create_under_every_failure("a user policy with metrics and a placement",
                               (weft_executor_config){ .workers = 2, .metrics = true, .profile = true,
                                                       .sched = &(weft_sched_config){ .kind = WEFT_SCHED_CUSTOM, .policy = &user },
                                                       .placement = &(weft_placement_config){ .strategy = WEFT_PLACE_COMPACT } },
                               &pol);
    create_under_every_failure("metrics, profile and an observer",
                               (weft_executor_config){ .workers = 2, .metrics = true, .profile = true,
                                                       .profile_max_spans = 64, .observer = &obs },
                               NULL);
    create_under_every_failure("bounded local queues and batch steals",
                               (weft_executor_config){ .workers = 3, .local_queue_capacity = 16, .steal_batch = 4 },
                               NULL);
    create_under_every_failure("a compact placement",
                               (weft_executor_config){ .workers = 2,
                                                       .placement = &(weft_placement_config){ .strategy = WEFT_PLACE_COMPACT } },
                               NULL);
    weft_set_allocator(NULL);
    weft_log_set_level(level);
}

/* ---- create/destroy churn with work in flight ------------------------------- */

struct chain {
    atomic_int ran;
    int left; /* links still to queue */
};

/* A task that queues the next link of its chain, from its worker. */
static int chain_link(weft_ctx *ctx, void *arg) {
    struct chain *c = arg;
    atomic_fetch_add(&c->ran, 1);
    if (c->left-- > 0 && weft_silent_async(weft_ctx_executor(ctx), chain_link, c) != WEFT_OK) return 1;
    return 0;
}

static int spawn_two(weft_ctx *ctx, void *arg) {
    atomic_int *n = arg;
    weft_spawn(ctx, count_one, n);
    weft_spawn(ctx, count_one, n);
    return weft_sync(ctx);
}

/* destroy waits for every run in flight, queued ones and those that tasks
 * queue meanwhile (a chain of async tasks), whatever the executor's size and
 * however soon after create it comes: nothing lost, nothing run twice. */
TEST(a_thousand_executors_destroyed_with_work_in_flight_run_all_of_it_exactly_once) {
    int rounds = (int)test_scale(1000);
    weft_taskflow *tf = make_taskflow("churn");
    atomic_int in_graph = 0;
    for (int k = 0; k < 8; k++) must_emplace(tf, count_one, &in_graph);
    weft_cancel_token *tok = weft_cancel_token_create(NULL, NULL);
    ASSERT_NOT_NULL(tok);
    for (int i = 0; i < rounds; i++) {
        weft_executor_config c = { .workers = 1 + (unsigned)i % 4 };
        const weft_sched_config fifo = { .kind = WEFT_SCHED_FIFO };
        if (i % 5 == 1) c.sched = &fifo;
        if (i % 7 == 2) c.local_queue_capacity = 16;
        weft_executor *ex = weft_executor_create(&c, NULL);
        ASSERT_NOT_NULL(ex);
        struct chain ch = { .left = 20 };
        atomic_int n = 0;
        int before = atomic_load(&in_graph);
        weft_future *run = NULL, *fa = NULL;
        ASSERT_OK(weft_silent_async(ex, chain_link, &ch));
        ASSERT_OK(weft_run_n(ex, tf, 2, &run));
        ASSERT_OK(weft_async(ex, spawn_two, &n, &fa));
        ASSERT_OK(weft_cancel_attach(tok, fa)); /* a token outliving the executor */
        for (int k = 0; k < 10; k++) ASSERT_OK(weft_silent_async(ex, count_one, &n));
        if (i % 2) weft_future_destroy(run), run = NULL; /* detached: destroy still waits for it */
        weft_executor_destroy(ex);
        ASSERT_EQ(atomic_load(&ch.ran), 21);
        ASSERT_EQ(atomic_load(&n), 12);
        ASSERT_EQ(atomic_load(&in_graph) - before, 16);
        if (run) {
            ASSERT_OK(weft_future_status(run));
            weft_future_destroy(run);
        }
        ASSERT_OK(weft_future_status(fa));
        weft_future_destroy(fa);
    }
    weft_cancel_token_destroy(tok);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* ---- a placement that cannot be made --------------------------------------- */

static void refused_with(const weft_placement_config *pc, const char *says) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .placement = pc }, &err);
    if (ex) {
        weft_executor_destroy(ex);
        TEST_FAIL_("a placement that cannot be made was accepted (%s)", says);
    }
    /* weft/core.h: EINVAL, ENOMEM or ESYS; a placement that cannot be made is
     * the program's config error. */
    if (err != WEFT_EINVAL) TEST_FAIL_("create gave %s, not WEFT_EINVAL (%s)", weft_errname(err), says);
    if (!strstr(weft_last_error_message(), says))
        TEST_FAIL_("the message \"%s\" does not say \"%s\"", weft_last_error_message(), says);
}

TEST(a_placement_naming_no_usable_numa_node_is_refused_with_einval_saying_which_field) {
    weft_log_level level = weft_log_get_level();
    weft_log_set_level(WEFT_LOG_OFF);
    unsigned node0[1] = { 0 }, far[2] = { 0, 4000 };
    /* A list with no entry chooses no node, so no CPU: create may not return
     * weft_topology_place's WEFT_ENOENT, which core.h does not list. */
    refused_with(&(weft_placement_config){ .strategy = WEFT_PLACE_COMPACT, .numa_nodes = node0, .numa_node_count = 0 },
                 "numa_node_count is 0");
    refused_with(&(weft_placement_config){ .strategy = WEFT_PLACE_SCATTER, .numa_nodes = far, .numa_node_count = 2 },
                 "numa_nodes[1] is 4000");
    refused_with(&(weft_placement_config){ .strategy = WEFT_PLACE_COMPACT, .numa_node_count = 1 },
                 "numa_nodes is NULL with numa_node_count 1");
    weft_log_set_level(level);
}

/* ---- waiting for the executor from an algorithm's share on the caller ------- */

/* A parallel algorithm called from a thread that is not a worker runs a share
 * of the loop on that thread, counted as a run of ex (algo/par.c).  A
 * callback of that share that waits for every run of ex waits for its own:
 * weft_executor_wait_all must say WEFT_EDEADLK, as it does from a worker, and
 * weft_executor_destroy must warn and do nothing; both hung for ever. */
struct caller_share {
    weft_executor *ex;
    atomic_int tried;
    weft_status wait_all;
    atomic_int warned;
};

static void wait_from_the_callers_share(size_t i, void *arg) {
    (void)i;
    struct caller_share *c = arg;
    if (weft_executor_worker_id(c->ex) >= 0 || atomic_exchange(&c->tried, 1)) return;
    c->wait_all = weft_executor_wait_all(c->ex);
    weft_executor_destroy(c->ex); /* must refuse: the loop is still running */
}

static void count_warnings(void *user, weft_log_level level, const char *msg) {
    (void)msg;
    if (level == WEFT_LOG_WARN) atomic_fetch_add(&((struct caller_share *)user)->warned, 1);
}

TEST(wait_all_or_destroy_from_an_algorithm_callback_on_the_calling_thread_is_refused_not_a_hang) {
    watchdog_start(20);
    struct caller_share c = { .ex = make_executor(2), .wait_all = WEFT_OK };
    weft_log_set_callback(count_warnings, &c);
    for (int attempt = 0; attempt < 100 && !atomic_load(&c.tried); attempt++)
        ASSERT_OK(weft_parallel_for(c.ex, 0, 4096, 1, wait_from_the_callers_share, &c, NULL));
    weft_log_set_callback(NULL, NULL);
    if (!atomic_load(&c.tried)) SKIP("no index ran on the calling thread");
    ASSERT_STATUS(c.wait_all, WEFT_EDEADLK);
    ASSERT_TRUE(strstr(weft_last_error_message(), "weft_executor_wait_all") != NULL);
    ASSERT_EQ(atomic_load(&c.warned), 1);
    /* The executor is whole: the refused destroy did nothing. */
    atomic_int n = 0;
    ASSERT_OK(weft_run_root_status(c.ex, count_one, &n, NULL));
    ASSERT_EQ(atomic_load(&n), 1);
    ASSERT_OK(weft_executor_wait_all(c.ex)); /* from here, outside any call: fine */
    weft_executor_destroy(c.ex);
    watchdog_stop();
}

/* weft_sched_remove reports a queued task cancelled on the remover's thread,
 * which then carries out that task's run: its weft_future_then callback
 * runs there.  A callback that waits for every run of the executor would
 * wait for that one: refused (WEFT_EDEADLK, destroy warns), as from a
 * worker; both hung for ever. */
struct removed_report {
    weft_executor *ex;
    atomic_int called, warned;
    weft_status wait_all;
};

static void wait_all_in_then(weft_future *f, weft_status st, void *arg) {
    (void)f;
    (void)st;
    struct removed_report *r = arg;
    r->wait_all = weft_executor_wait_all(r->ex);
    weft_executor_destroy(r->ex);
    atomic_store(&r->called, 1);
}

static void count_warn(void *user, weft_log_level level, const char *msg) {
    (void)msg;
    if (level == WEFT_LOG_WARN) atomic_fetch_add(&((struct removed_report *)user)->warned, 1);
}

static int hold_until(weft_ctx *ctx, void *arg) {
    (void)ctx;
    while (!atomic_load((atomic_int *)arg)) sleep_us(200);
    return 0;
}

TEST(wait_all_or_destroy_from_a_then_callback_run_by_sched_remove_is_refused_not_a_hang) {
    watchdog_start(20);
    struct removed_report r = { .ex = make_executor(1), .wait_all = WEFT_OK };
    atomic_int gate = 0, n = 0;
    ASSERT_OK(weft_silent_async(r.ex, hold_until, &gate)); /* the one worker is busy */
    weft_sched_handle h;
    weft_future *f = NULL;
    ASSERT_OK(weft_async_with(r.ex, count_one, &n, &(weft_async_options){ .priority = WEFT_PRIORITY_LOW, .handle = &h },
                              &f));
    ASSERT_OK(weft_future_then(f, wait_all_in_then, &r));
    weft_log_set_callback(count_warn, &r);
    ASSERT_OK(weft_sched_remove(r.ex, h));
    weft_log_set_callback(NULL, NULL);
    ASSERT_EQ(atomic_load(&r.called), 1); /* ran here, on this thread */
    ASSERT_STATUS(r.wait_all, WEFT_EDEADLK);
    ASSERT_EQ(atomic_load(&r.warned), 1);
    ASSERT_STATUS(weft_future_status(f), WEFT_ECANCELED);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_executor_wait_all(r.ex));
    ASSERT_EQ(atomic_load(&n), 0);
    weft_future_destroy(f);
    weft_executor_destroy(r.ex);
    watchdog_stop();
}
