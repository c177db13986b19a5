/* The executor's environment and process: environment variables under one rule
 * (a bad value warns once and falls back, never fails), the cgroup CPU quota,
 * fork(), bounded search rounds, destroy from a worker, and wait_all waking as
 * soon as the last run ends. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fork_util.h"
#include "harness.h"
#include "test_util.h"
#include "warn_capture.h"

#include <weft.h>

#include "core/alloc.h"
#include "platform/platform.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned default_workers(void) { return weft__cpu_count(); }

static unsigned workers_with_env(const char *name, const char *value) {
    if (value) ASSERT_EQ(setenv(name, value, 1), 0);
    else unsetenv(name);
    weft_status err = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create(NULL, &err);
    if (!ex) TEST_FAIL_("%s=\"%s\" made weft_executor_create fail: %s", name, value ? value : "(unset)",
                        weft_errname(err));
    ASSERT_STATUS(err, WEFT_OK);
    unsigned n = weft_executor_workers(ex);
    weft_executor_destroy(ex);
    unsetenv(name);
    return n;
}

/* ---- environment variables --------------------------------------------------- */

TEST(weft_workers_zero_means_the_default_without_a_warning) {
    capture_log();
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", "0"), default_workers());
    ASSERT_EQ(atomic_load(&logged.warnings), 0);
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", "3"), 3);
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", " 2 "), 2);
    ASSERT_EQ(atomic_load(&logged.warnings), 0);
    weft_log_set_callback(NULL, NULL);
}

TEST(a_bad_weft_workers_warns_once_naming_value_and_fallback_and_never_fails) {
    capture_log();
    const char *bad[] = { "abc", "", "-3", "4097", "3x", "   ", "99999999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ASSERT_EQ(workers_with_env("WEFT_WORKERS", bad[i]), default_workers());
        if (i == 0) {
            ASSERT_EQ(atomic_load(&logged.warnings), 1);
            ASSERT_TRUE(strstr(logged.last, "WEFT_WORKERS=\"abc\"") != NULL);
            ASSERT_TRUE(strstr(logged.last, "CPU count") != NULL); /* the fallback */
        }
    }
    ASSERT_EQ(atomic_load(&logged.warnings), 1); /* once per variable */
    weft_log_set_callback(NULL, NULL);
}

TEST(an_empty_weft_workers_is_warned_about_not_taken_as_unset) {
    capture_log();
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", ""), default_workers());
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "WEFT_WORKERS=\"\"") != NULL);
    weft_log_set_callback(NULL, NULL);
}

/* WEFT_LOG follows the rule of every WEFT_* variable: a word in any case, and
 * an empty value warned about (it used to want lower case, calling "DEBUG"
 * unknown, and to take "" silently as unset).  Read once per process, at the
 * first executor. */
TEST(weft_log_takes_any_case_and_warns_about_an_empty_value) {
    capture_log_at_default_level();
    ASSERT_EQ(setenv("WEFT_LOG", "Error", 1), 0);
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", "1"), 1);
    ASSERT_EQ(weft_log_get_level(), WEFT_LOG_ERROR);
    ASSERT_EQ(atomic_load(&logged.warnings), 0);
    unsetenv("WEFT_LOG");
}

TEST(an_empty_weft_log_is_warned_about_and_keeps_warn) {
    capture_log_at_default_level();
    ASSERT_EQ(setenv("WEFT_LOG", "", 1), 0);
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", "1"), 1);
    ASSERT_EQ(weft_log_get_level(), WEFT_LOG_WARN);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "WEFT_LOG") != NULL);
    unsetenv("WEFT_LOG");
}

/* WEFT_LOG is only the default: a level the program sets wins over it, also
 * one set before the first executor (which reads WEFT_LOG) is created, and
 * weft_log_get_level reports WEFT_LOG's level before any executor exists. */
TEST(a_log_level_set_by_the_program_wins_over_weft_log) {
    capture_log_at_default_level();
    ASSERT_EQ(setenv("WEFT_LOG", "debug", 1), 0);
    weft_log_set_level(WEFT_LOG_ERROR);
    ASSERT_EQ(workers_with_env("WEFT_WORKERS", "1"), 1);
    ASSERT_EQ(weft_log_get_level(), WEFT_LOG_ERROR);
    unsetenv("WEFT_LOG");
    weft_log_set_callback(NULL, NULL);
}

TEST(weft_log_get_level_reports_weft_log_before_any_executor) {
    ASSERT_EQ(setenv("WEFT_LOG", "info", 1), 0);
    ASSERT_EQ(weft_log_get_level(), WEFT_LOG_INFO);
    unsetenv("WEFT_LOG");
}

TEST(a_bad_weft_affinity_warns_and_means_none) {
    capture_log();
    ASSERT_EQ(setenv("WEFT_AFFINITY", "all", 1), 0);
    weft_status err = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &err);
    unsetenv("WEFT_AFFINITY");
    ASSERT_NOT_NULL(ex);
    ASSERT_STATUS(err, WEFT_OK);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "WEFT_AFFINITY=\"all\"") != NULL);
    weft_executor_destroy(ex);
    /* Words are taken in any case. */
    ASSERT_EQ(setenv("WEFT_AFFINITY", "NONE", 1), 0);
    ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &err);
    unsetenv("WEFT_AFFINITY");
    ASSERT_NOT_NULL(ex);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    weft_executor_destroy(ex);
    weft_log_set_callback(NULL, NULL);
}

TEST(a_bad_block_cache_size_warns_and_keeps_the_default_256_mb) {
    capture_log();
    setenv("WEFT_BLOCK_CACHE_MB", "garbage", 1); /* read at the cache's first use */
    void *p = weft__alloc_aligned(1u << 20, 64);
    /* The default (256 MB) keeps a 1 MB block; "garbage" used to mean 0: none. */
    ASSERT_TRUE(weft__block_cache_give(p, 1u << 20, 64));
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "WEFT_BLOCK_CACHE_MB=\"garbage\"") != NULL);
    weft__block_cache_flush();
    unsetenv("WEFT_BLOCK_CACHE_MB");
    weft_log_set_callback(NULL, NULL);
}

/* ---- cgroup v2 CPU quota ----------------------------------------------------- */

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) TEST_FAIL_("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

TEST(the_default_worker_count_respects_a_cgroup_v2_cpu_quota) {
    char root[] = "/tmp/weft-cgroup-XXXXXX";
    ASSERT_NOT_NULL(mkdtemp(root));
    char path[512], self[512];
    snprintf(self, sizeof self, "%s/self-cgroup", root);
    write_file(self, "1:cpu:/\n0::/app/job\n");
    snprintf(path, sizeof path, "%s/app", root);
    ASSERT_EQ(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/app/job", root);
    ASSERT_EQ(mkdir(path, 0700), 0);

    unsigned cpus = weft__cpu_count_in(NULL, NULL); /* the affinity mask alone */
    ASSERT_GE(cpus, 1);
    /* No cpu.max anywhere: no quota. */
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 0);
    /* "max": unlimited. */
    snprintf(path, sizeof path, "%s/app/job/cpu.max", root);
    write_file(path, "max 100000\n");
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 0);
    ASSERT_EQ(weft__cpu_count_in(root, self), cpus);
    /* 0.5 CPU rounds up to 1, at the process's own level. */
    write_file(path, "50000 100000\n");
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 1);
    ASSERT_EQ(weft__cpu_count_in(root, self), 1);
    /* A parent's tighter quota holds over the child's looser one. */
    write_file(path, "800000 100000\n");
    char parent[512];
    snprintf(parent, sizeof parent, "%s/app/cpu.max", root);
    write_file(parent, "150000 100000\n");
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 2);
    ASSERT_EQ(weft__cpu_count_in(root, self), cpus < 2 ? cpus : 2);
    /* The root's own file counts too. */
    char top[512];
    snprintf(top, sizeof top, "%s/cpu.max", root);
    write_file(top, "100000 100000\n");
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 1);
    /* Garbage is no quota; a v1-only process has none we read. */
    write_file(top, "lots\n");
    write_file(parent, "x y\n");
    write_file(path, "\n");
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 0);
    write_file(self, "1:cpu:/\n");
    ASSERT_EQ(weft__cgroup_cpu_limit(root, self), 0);

    unlink(top);
    unlink(parent);
    unlink(path);
    unlink(self);
    snprintf(path, sizeof path, "%s/app/job", root);
    rmdir(path);
    snprintf(path, sizeof path, "%s/app", root);
    rmdir(path);
    rmdir(root);
}

/* ---- search rounds ----------------------------------------------------------- */

TEST(search_rounds_past_the_limit_are_refused) {
    weft_status err = WEFT_OK;
    ASSERT_NULL(weft_executor_create(&(weft_executor_config){ .workers = 1, .steal_rounds = UINT_MAX }, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    err = WEFT_OK;
    ASSERT_NULL(weft_executor_create(
        &(weft_executor_config){ .workers = 1, .yield_rounds = WEFT_SEARCH_ROUNDS_MAX + 1 }, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = 1, .steal_rounds = WEFT_SEARCH_ROUNDS_MAX,
                                 .yield_rounds = WEFT_SEARCH_ROUNDS_MAX },
        &err);
    ASSERT_NOT_NULL(ex);
    weft_executor_destroy(ex);
}

/* ---- wait_all wakes at the last run's end ------------------------------------ */

static int count_one(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

/* Run a small graph, wait for its future, then wait_all: the run's end is
 * counted after its future is ready, so wait_all often starts while it is
 * still in flight.  With the longest searches allowed, a wait_all that waited
 * for an idle worker's search to end would take ~100 ms per round here. */
static void run_then_wait_all(unsigned workers, unsigned rounds_cfg, int reps) {
    weft_status err;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = workers, .steal_rounds = rounds_cfg, .yield_rounds = rounds_cfg },
        &err);
    ASSERT_NOT_NULL(ex);
    atomic_int count = 0;
    weft_taskflow *tf = make_taskflow("w");
    weft_task a = must_emplace(tf, count_one, &count), b = must_emplace(tf, count_one, &count);
    ASSERT_OK(weft_precede(a, b));
    for (int i = 0; i < reps; i++) {
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_OK(weft_executor_wait_all(ex));
    }
    ASSERT_EQ(atomic_load(&count), 2 * reps);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(wait_all_wakes_when_the_last_run_ends_not_after_a_search) {
    int reps = getenv("WEFT_TEST_QUICK") ? 400 : 4000;
    run_then_wait_all(1, WEFT_SEARCH_ROUNDS_MAX, reps);
    run_then_wait_all(2, WEFT_SEARCH_ROUNDS_MAX, reps);
}

TEST(wait_all_after_a_run_ten_thousand_times) {
    run_then_wait_all(1, 0, 10000);
    run_then_wait_all(2, 0, 10000);
}

/* Async tasks from outside, wait_all, repeated: every task counted once. */
TEST(wait_all_after_async_tasks_sees_every_one_finished) {
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = 2, .steal_rounds = WEFT_SEARCH_ROUNDS_MAX,
                                 .yield_rounds = WEFT_SEARCH_ROUNDS_MAX },
        NULL);
    ASSERT_NOT_NULL(ex);
    atomic_int count = 0;
    for (int i = 0; i < 2000; i++) {
        for (int k = 0; k < 3; k++) ASSERT_OK(weft_silent_async(ex, count_one, &count));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&count), 3 * (i + 1));
    }
    weft_executor_destroy(ex);
}

/* ---- destroy from one of its own workers ------------------------------------- */

static int destroy_own(weft_ctx *ctx, void *arg) {
    weft_executor_destroy(weft_ctx_executor(ctx)); /* must warn and do nothing */
    atomic_store((atomic_int *)arg, 1);
    return 0;
}

TEST(destroy_from_an_own_worker_warns_and_does_nothing) {
    capture_log();
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    weft_future *f;
    ASSERT_OK(weft_async(ex, destroy_own, &ran, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ran), 1);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "own workers") != NULL);
    /* Still usable, then destroyed for real. */
    ASSERT_OK(weft_async(ex, count_one, &ran, NULL));
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&ran), 2);
    weft_log_set_callback(NULL, NULL);
}

/* ---- fork -------------------------------------------------------------------- */

static int root_fn(weft_ctx *ctx, void *arg) { return 7; }

static void count_index(size_t i, void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

/* In the child: every call that would need the parent's workers fails at
 * once.  Returns a bit per check that went wrong (0: all good). */
static int child_checks(weft_executor *ex, weft_taskflow *tf, weft_future *pending) {
    int bad = 0;
    weft_log_set_level(WEFT_LOG_OFF);
    weft_future *f = NULL;
    if (weft_future_wait(pending) != WEFT_EFORKED) bad |= 1;
    if (weft_run(ex, tf, &f) != WEFT_EFORKED && !(f && weft_future_wait(f) == WEFT_EFORKED)) bad |= 2;
    atomic_int n = 0;
    if (weft_async(ex, count_one, &n, NULL) != WEFT_EFORKED) bad |= 4;
    if (weft_silent_async(ex, count_one, &n) != WEFT_EFORKED) bad |= 8;
    if (weft_executor_wait_all(ex) != WEFT_EFORKED) bad |= 16;
    if (weft_run_root(ex, root_fn, NULL) != WEFT_EFORKED) bad |= 32;
    /* The parallel algorithms run on the calling thread alone. */
    atomic_store(&n, 0);
    if (weft_parallel_for(ex, 0, 1000, 1, count_index, &n, NULL) != WEFT_OK || atomic_load(&n) != 1000) bad |= 64;
    weft_executor_destroy(ex); /* warns, returns */
#ifndef UNDER_TSAN /* TSan cannot start threads after a multi-threaded fork */
    /* The child may make an executor of its own. */
    weft_executor *mine = weft_executor_create(&(weft_executor_config){ .workers = 2 }, NULL);
    if (!mine || weft_run_root(mine, root_fn, NULL) != 7) bad |= 128;
    weft_executor_destroy(mine);
#endif
    return bad;
}

TEST(an_executor_used_in_a_forked_child_fails_fast_with_weft_eforked) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("slow");
    must_emplace(tf, slow_until_released, NULL); /* fork_util.h */
    fork_slow_pid = getpid();
    atomic_store(&fork_slow_started, 0);
    atomic_store(&fork_slow_release, 0);
    weft_future *pending;
    ASSERT_OK(weft_run(ex, tf, &pending)); /* in flight at the fork */
    /* This thread has a submitter slot on ex now, and remembers it: the child
     * must not queue on it (nothing would run the task). */
    atomic_int before = 0;
    ASSERT_OK(weft_silent_async(ex, count_one, &before));
    /* gcc 12's ASan allocator is not locked across fork: a worker inside
     * malloc or free at the fork leaves its lock held in the child (see
     * fork_util.h).  So the fork waits until the held task runs (its worker
     * asleep in it until released) and count_one's worker has parked. */
    while (!atomic_load(&fork_slow_started)) sleep_us(100);
    every_other_worker_asleep(ex, 1);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) _exit(child_checks(ex, tf, pending));
    int status = wait_child(pid, 20, "the child process hung using the parent's executor");
    atomic_store(&fork_slow_release, 1);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) TEST_FAIL_("child checks failed: mask 0x%x", WEXITSTATUS(status));
    /* The parent's executor is untouched. */
    ASSERT_OK(weft_future_wait(pending));
    weft_future_destroy(pending);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- executors created on several threads at once ------------------------------ */

static void *create_and_destroy(void *arg) {
    atomic_int *bad = arg;
    for (int i = 0; i < 20; i++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
        if (!ex) {
            atomic_fetch_add(bad, 1);
            continue;
        }
        if (weft_run_root(ex, root_fn, NULL) != 7) atomic_fetch_add(bad, 1);
        weft_executor_destroy(ex);
    }
    return NULL;
}

/* Process-wide set-up (the fork handler, the fence) runs at every creation:
 * concurrent creations must not race on it (TSan checks). */
TEST(executors_created_on_four_threads_at_once_all_work) {
    atomic_int bad = 0;
    pthread_t t[4];
    for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_create(&t[i], NULL, create_and_destroy, &bad), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    ASSERT_EQ(atomic_load(&bad), 0);
}

/* ---- WEFT_STEAL_ROUNDS / WEFT_YIELD_ROUNDS ------------------------------------- */

static int one_task(weft_ctx *cx, void *p) {
    (void)cx;
    atomic_fetch_add((atomic_int *)p, 1);
    return 0;
}

/* Parks of a one-worker executor made with the environment as it is, after one
 * task and `idle_us` of idleness (0: waits up to 5 s for the first park). */
/* *slept_us: how long the idle wait really took (a loaded machine may
 * oversleep it many times over). */
static uint64_t parks_after_idle(unsigned idle_us, double *slept_us) {
    weft_status err = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_OK(err);
    ASSERT_OK(weft_metrics_enable(ex, true));
    atomic_int ran = 0;
    ASSERT_OK(weft_silent_async(ex, one_task, &ran));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_metrics m;
    double t0 = now_s();
    if (idle_us) {
        sleep_us(idle_us);
        ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    } else {
        do {
            sleep_us(1000);
            ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
        } while (m.total.parks == 0 && now_s() - t0 < 5);
    }
    if (slept_us) *slept_us = (now_s() - t0) * 1e6;
    weft_executor_destroy(ex); /* prompt: the search looks at shutdown every round */
    return m.total.parks;
}

/* 65536 + 65536 rounds take far longer than 5 ms (each yield round is a
 * system call: 30 ms and more), so a worker that read them is still
 * searching 5 ms after its last task; one that kept the defaults (16 + 8
 * rounds: microseconds) has parked.  A loaded machine may oversleep the
 * 5 ms until the rounds are done (once under TSan, with 20 ms): such a try
 * proves nothing and is made again. */
TEST(weft_steal_rounds_and_yield_rounds_keep_an_idle_worker_searching_instead_of_parking) {
    unsetenv("WEFT_STEAL_ROUNDS");
    unsetenv("WEFT_YIELD_ROUNDS");
    ASSERT_TRUE(parks_after_idle(0, NULL) >= 1);
    ASSERT_EQ(setenv("WEFT_STEAL_ROUNDS", "65536", 1), 0);
    ASSERT_EQ(setenv("WEFT_YIELD_ROUNDS", "65536", 1), 0);
    uint64_t parks = 0;
    double slept = 0;
    int tries = 0;
    do {
        parks = parks_after_idle(5000, &slept);
    } while (slept > 10000 && ++tries < 50);
    unsetenv("WEFT_STEAL_ROUNDS");
    unsetenv("WEFT_YIELD_ROUNDS");
    if (slept > 10000) SKIP("the machine overslept every 5 ms wait by 2x: nothing to conclude");
    ASSERT_EQ(parks, 0);
}

TEST(a_bad_weft_steal_rounds_or_yield_rounds_warns_once_and_keeps_the_default) {
    capture_log();
    ASSERT_EQ(setenv("WEFT_STEAL_ROUNDS", "65537", 1), 0);
    for (int i = 0; i < 2; i++) {
        weft_status err = WEFT_EINVAL;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &err);
        ASSERT_NOT_NULL(ex);
        ASSERT_OK(err);
        ASSERT_EQ(weft_run_root(ex, root_fn, NULL), 7);
        weft_executor_destroy(ex);
    }
    unsetenv("WEFT_STEAL_ROUNDS");
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "WEFT_STEAL_ROUNDS=\"65537\"") != NULL);
    ASSERT_TRUE(strstr(logged.last, "using 16") != NULL);
    ASSERT_EQ(setenv("WEFT_YIELD_ROUNDS", "-3", 1), 0);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    unsetenv("WEFT_YIELD_ROUNDS");
    ASSERT_NOT_NULL(ex);
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&logged.warnings), 2);
    ASSERT_TRUE(strstr(logged.last, "WEFT_YIELD_ROUNDS=\"-3\"") != NULL);
    ASSERT_TRUE(strstr(logged.last, "using 8") != NULL);
    weft_log_set_callback(NULL, NULL);
}
