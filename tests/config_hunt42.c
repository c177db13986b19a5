/* Session 42's hunt in configuration and lifecycle: every config struct's
 * extremes and one past them, bad environment variables (warn once, naming
 * the variable and the value, and fall back), combinations of settings, and
 * the executor's lifecycle (destroy with work in flight or parked, exit with
 * the default executor busy, fork(), threads that exit without cleaning up). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"
#include "fork_util.h"
#include "warn_capture.h"

#include <weft.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int nop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}

/* ---- weft_sched_config: escalation times at their extreme ------------------- */

static size_t moved_by_escalate = 99;

static int escalate_after_2ms(weft_ctx *ctx, void *arg) {
    (void)arg;
    sleep_us(2000);
    ASSERT_OK(weft_sched_escalate(weft_ctx_executor(ctx), &moved_by_escalate));
    return 0;
}

/* A root task releases eight LOW tasks (into the worker's lanes) and a NORMAL
 * one that runs first, waits 2 ms and asks for an escalation pass. */
static size_t low_tasks_moved_after_2ms(uint64_t escalate_ns) {
    weft_sched_config sc = {.escalate_low_ns = escalate_ns, .escalate_normal_ns = escalate_ns, .no_escalation = true};
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .sched = &sc}, &err);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("lanes", &err);
    ASSERT_NOT_NULL(tf);
    weft_task root = weft_emplace(tf, nop, NULL), check = weft_emplace(tf, escalate_after_2ms, NULL);
    ASSERT_OK(weft_precede(root, check));
    for (int i = 0; i < 8; i++) {
        weft_task low = weft_emplace(tf, nop, NULL);
        ASSERT_OK(weft_task_set_priority(low, WEFT_PRIORITY_LOW));
        ASSERT_OK(weft_precede(root, low));
    }
    moved_by_escalate = 99;
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    return moved_by_escalate;
}

/* escalate_low_ns / escalate_normal_ns are uint64_t nanoseconds: the largest
 * (about 584 years) or 2^63 must mean "not within this test", not "at once".
 * The lanes converted them to clock ticks through a double whose value did
 * not fit a uint64_t (undefined; 1 tick on x86-64), so every LOW task queued
 * by a worker escalated on the first pass. */
TEST(an_escalation_time_of_centuries_does_not_escalate_after_two_milliseconds) {
    ASSERT_EQ(low_tasks_moved_after_2ms(1000), (size_t)8); /* the pass does move due tasks */
    ASSERT_EQ(low_tasks_moved_after_2ms(UINT64_MAX), (size_t)0);
    ASSERT_EQ(low_tasks_moved_after_2ms((uint64_t)1 << 63), (size_t)0);
    ASSERT_EQ(low_tasks_moved_after_2ms((uint64_t)1 << 62), (size_t)0);
}

/* ---- environment variables: a bad one warns once, naming it and its value --- */

/* Creates and destroys `n` one-worker executors, each running one task. */
static void executors_run_one_task(int n) {
    for (int i = 0; i < n; i++) {
        weft_status err;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &err);
        ASSERT_NOT_NULL(ex);
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, nop, NULL, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        weft_executor_destroy(ex);
    }
}

/* WEFT_STATS is read by every executor; a value that cannot be published (no
 * path in it, a directory that does not exist) was warned about by each, a
 * line per executor, where the README's rule is once per process. */
TEST(a_weft_stats_that_cannot_be_published_warns_once_for_many_executors) {
    static const char *const bad[] = {",", "/nonexistent-dir-h42/live.stats"};
    for (int b = 0; b < 2; b++) {
        pid_t pid = fork(); /* a fresh process for each: the warning is once per process */
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
            setenv("WEFT_STATS", bad[b], 1);
            capture_log();
            executors_run_one_task(5);
            int ok = atomic_load(&logged.warnings) == 1 && strstr(logged.last, "WEFT_STATS") &&
                     strstr(logged.last, bad[b]);
            if (!ok) fprintf(stderr, "WEFT_STATS=\"%s\": %d warnings, last: %s\n", bad[b],
                             atomic_load(&logged.warnings), logged.last);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 0);
    }
}

/* ---- fork(): what the child may do --------------------------------------------- */

static atomic_int child_count;

static int count_in_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&child_count, 1);
    return 0;
}

/* In the child: a bit per check that went wrong. */
static weft_taskflow *busy; /* the taskflow busy at the fork */

static int child_runs_a_taskflow_busy_at_fork(void) {
    int bad = 0;
    weft_log_set_level(WEFT_LOG_OFF);
    weft_executor *mine = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!mine) return 1;
    /* busy's run is in flight on the parent's executor, which has no workers
     * here: a run queued behind it never starts, so the call must fail now. */
    weft_future *f = NULL;
    weft_status st = weft_run(mine, busy, &f);
    if (st == WEFT_OK) {
        bad |= 2;
        if (weft_future_wait_for(f, 200 * MS) == WEFT_ETIMEDOUT) bad |= 4; /* the hang */
    } else if (st != WEFT_EFORKED || !strstr(weft_last_error_message(), "fork")) {
        bad |= 8;
    }
    if (weft_run_and_wait(NULL, busy) != WEFT_EFORKED) bad |= 16; /* the child's default executor too */
    /* A taskflow of the child's own runs, on its executor and the default one. */
    weft_taskflow *own = weft_taskflow_create("own", NULL);
    if (!own || weft_task_is_null(weft_emplace(own, count_in_child, NULL))) return bad | 32;
    if (weft_run_and_wait(mine, own) != WEFT_OK || weft_run_and_wait(NULL, own) != WEFT_OK) bad |= 64;
    if (atomic_load(&child_count) != 2) bad |= 128;
    weft_executor_destroy(mine);
    return bad;
}

TEST(a_taskflow_whose_run_was_in_flight_at_fork_fails_fast_in_the_child_instead_of_hanging) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    busy = weft_taskflow_create("busy", NULL);
    ASSERT_NOT_NULL(busy);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(busy, slow_until_released, NULL)));
    int code = child_while_run_in_flight(ex, busy, child_runs_a_taskflow_busy_at_fork);
    ASSERT_OK(weft_taskflow_destroy(busy));
    weft_executor_destroy(ex);
    if (code != 0) TEST_FAIL_("child checks failed: mask 0x%x", code);
}

/* ---- lifecycle: destroy with runs parked, threads that exit without cleanup --- */

static atomic_int holder_may_go, parked_ran;

static int hold_until_told(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    while (!atomic_load(&holder_may_go)) sleep_us(200);
    return 0;
}

static int count_parked(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&parked_ran, 1);
    return 0;
}

static void *let_the_holder_go(void *arg) {
    sleep_us((unsigned)(uintptr_t)arg);
    atomic_store(&holder_may_go, 1);
    return NULL;
}

/* Executor A's async tasks are parked on a semaphore that a task of executor
 * B holds.  Destroying A waits for them (they are runs in flight): the
 * holder's release, on B's worker, hands each its unit and queues it on A,
 * and A's destroy returns only after all ran, whatever the timing. */
TEST(destroy_waits_for_runs_parked_on_a_semaphore_held_by_another_executors_task) {
    for (int round = 0; round < 60; round++) {
        atomic_store(&holder_may_go, 0);
        atomic_store(&parked_ran, 0);
        weft_semaphore *sem = weft_semaphore_create(1, NULL);
        ASSERT_NOT_NULL(sem);
        weft_executor *a = weft_executor_create(&(weft_executor_config){.workers = 1 + round % 3}, NULL);
        weft_executor *b = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
        ASSERT_NOT_NULL(a);
        ASSERT_NOT_NULL(b);
        weft_future *held = NULL;
        ASSERT_OK(weft_async_acquire(b, hold_until_told, NULL, &sem, 1, &held));
        while (weft_semaphore_value(sem) != 0) sleep_us(50);
        for (int i = 0; i < 10; i++) ASSERT_OK(weft_async_acquire(a, count_parked, NULL, &sem, 1, NULL));
        pthread_t t;
        ASSERT_EQ(pthread_create(&t, NULL, let_the_holder_go, (void *)(uintptr_t)(round == 0 ? 20000 : round % 4 * 50)), 0);
        weft_executor_destroy(a);
        ASSERT_EQ(atomic_load(&parked_ran), 10);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_OK(weft_future_wait(held));
        weft_future_destroy(held);
        weft_executor_destroy(b);
        ASSERT_OK(weft_semaphore_destroy(sem));
    }
}

static weft_executor *shared_ex;
static atomic_long submitted_ran;
static atomic_int threads_alive;

static int count_submitted(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&submitted_ran, 1);
    return 0;
}

static void add_one(size_t i, void *arg) {
    (void)i;
    atomic_fetch_add((atomic_long *)arg, 1);
}

/* A detached thread that submits (taking a submitter slot), leaves a future
 * it never waits for, runs a parallel loop, and exits with no cleanup call. */
static void *submit_and_exit(void *arg) {
    (void)arg;
    for (int i = 0; i < 50; i++)
        if (weft_silent_async(shared_ex, count_submitted, NULL) != WEFT_OK) abort();
    weft_future *f = NULL;
    if (weft_async(shared_ex, count_submitted, NULL, &f) != WEFT_OK) abort();
    weft_future_destroy(f); /* detached: still runs */
    if (weft_parallel_for(shared_ex, 0, 20, 1, add_one, &submitted_ran, NULL) != WEFT_OK) abort();
    atomic_fetch_sub(&threads_alive, 1);
    return NULL;
}

/* More short-lived submitting threads than the executor has submitter slots
 * (8), a few alive at a time, none of which says goodbye: every task runs
 * exactly once, and wait_all and destroy see them all. */
TEST(many_threads_that_submit_and_exit_without_cleanup_lose_no_task) {
    const int threads = 64;
    shared_ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(shared_ex);
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED), 0);
    for (int i = 0; i < threads; i++) {
        while (atomic_load(&threads_alive) >= 4) sleep_us(100);
        atomic_fetch_add(&threads_alive, 1);
        pthread_t t;
        ASSERT_EQ(pthread_create(&t, &attr, submit_and_exit, NULL), 0);
    }
    pthread_attr_destroy(&attr);
    while (atomic_load(&threads_alive) != 0) sleep_us(100);
    ASSERT_OK(weft_executor_wait_all(shared_ex));
    ASSERT_EQ(atomic_load(&submitted_ran), (long)threads * (50 + 1 + 20));
    weft_executor_destroy(shared_ex);
}

/* ---- the README's table of environment variables and the code ----------------- */

#include <dirent.h>

enum { MAX_VARS = 64 };
typedef struct { char name[MAX_VARS][48]; int n; } var_set;

static void var_add(var_set *s, const char *p, size_t len) {
    if (len == 0 || len >= sizeof s->name[0]) return;
    for (int i = 0; i < s->n; i++)
        if (strlen(s->name[i]) == len && memcmp(s->name[i], p, len) == 0) return;
    if (s->n < MAX_VARS) memcpy(s->name[s->n], p, len), s->name[s->n][len] = 0, s->n++;
}

static bool var_has(const var_set *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0) return true;
    return false;
}

static size_t var_len(const char *p) {
    size_t n = 0;
    while ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_') n++;
    return n;
}

/* Every "WEFT_..." string literal on a line that reads the environment
 * (weft__getenv, weft__env_*, rounds_from_env, ...) of the .c files in dir
 * and its subdirectories. */
static void vars_read_in(const char *dir, var_set *s) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = strlen(e->d_name);
        if (len > 2 && strcmp(e->d_name + len - 2, ".c") == 0) {
            FILE *f = fopen(path, "r");
            if (!f) continue;
            char line[1024];
            while (fgets(line, sizeof line, f))
                if (strstr(line, "env"))
                    for (char *p = line; (p = strstr(p, "\"WEFT_")) != NULL; p++) var_add(s, p + 1, var_len(p + 1));
            fclose(f);
        } else {
            vars_read_in(path, s); /* a directory (opendir fails on a file) */
        }
    }
    closedir(d);
}

/* The README promises a table of every variable weft reads: each row's first
 * cell names one or two (`WEFT_STEAL_ROUNDS`, `WEFT_YIELD_ROUNDS`). */
TEST(every_environment_variable_the_code_reads_is_in_the_readme_table_and_no_other) {
    char root[1024];
    snprintf(root, sizeof root, "%s", __FILE__);
    char *slash = strrchr(root, '/');
    if (!slash) SKIP("__FILE__ has no directory");
    *slash = 0;
    slash = strrchr(root, '/');
    if (slash) *slash = 0;
    else snprintf(root, sizeof root, ".");
    char path[1100];
    snprintf(path, sizeof path, "%s/README.md", root);
    FILE *f = fopen(path, "r");
    if (!f) SKIP("the source tree's README.md is not reachable from here");
    var_set documented = {0}, read = {0};
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "| `WEFT_", 8) != 0) continue;
        char *end = strchr(line + 1, '|'); /* the first cell only */
        if (end) *end = 0;
        for (char *p = line; (p = strstr(p, "`WEFT_")) != NULL; p++) var_add(&documented, p + 1, var_len(p + 1));
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/src", root);
    vars_read_in(path, &read);
    ASSERT_GE(documented.n, 10);
    ASSERT_GE(read.n, 10);
    for (int i = 0; i < read.n; i++)
        if (!var_has(&documented, read.name[i])) TEST_FAIL_("%s is read by src/ but not in README.md's table", read.name[i]);
    for (int i = 0; i < documented.n; i++)
        if (!var_has(&read, documented.name[i]))
            TEST_FAIL_("%s is in README.md's table but src/ never reads it", documented.name[i]);
}

static int sleep_1ms(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    sleep_us(1000);
    return 0;
}

/* tick_ns is how often workers look for tasks to escalate: UINT64_MAX must
 * mean "never", but the next tick (now + tick_ns) wrapped into the past, so
 * every look escalated (here LOW tasks due after 1 ns). */
TEST(a_tick_of_uint64_max_never_escalates_on_its_own) {
    weft_sched_config sc = {.escalate_low_ns = 1, .escalate_normal_ns = 1, .tick_ns = UINT64_MAX};
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2, .sched = &sc}, NULL);
    ASSERT_NOT_NULL(ex);
    for (int i = 0; i < 20; i++) {
        ASSERT_OK(weft_silent_async(ex, sleep_1ms, NULL)); /* keeps a worker busy meanwhile */
        for (int k = 0; k < 4; k++)
            ASSERT_OK(weft_async_with(ex, nop, NULL, &(weft_async_options){.priority = WEFT_PRIORITY_LOW}, NULL));
        sleep_us(200);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.escalations, 0);
    weft_executor_destroy(ex);
}

/* ---- WEFT_STATS / weft_stats_start on a path that is not a regular file ------- */

#include <sys/stat.h>

static bool is_fifo(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* The live block and the Prometheus file are made beside their path and
 * renamed over it, and stop removes them: a FIFO (or /dev/null: WEFT_STATS=
 * /dev/null run as root) was replaced, then deleted at stop.  Anything but a
 * regular file is now refused and left as it is; a regular file is still
 * replaced. */
TEST(weft_stats_on_a_device_fifo_or_symlink_refuses_it_and_leaves_it_alone) {
    char dir[] = "/tmp/weft_h42_statsXXXXXX";
    ASSERT_NOT_NULL(mkdtemp(dir));
    char fifo[128], prom[128], link[128], target[128], plain[128];
    snprintf(fifo, sizeof fifo, "%s/live.stats", dir);
    snprintf(prom, sizeof prom, "%s/live.prom", dir);
    snprintf(link, sizeof link, "%s/link.stats", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(plain, sizeof plain, "%s/plain.stats", dir);
    ASSERT_EQ(mkfifo(fifo, 0644), 0);
    ASSERT_EQ(mkfifo(prom, 0644), 0);
    FILE *f = fopen(target, "w");
    ASSERT_NOT_NULL(f);
    fputs("keep", f);
    fclose(f);
    ASSERT_EQ(symlink(target, link), 0);
    f = fopen(plain, "w");
    ASSERT_NOT_NULL(f);
    fclose(f);

    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){.path = fifo}), WEFT_ESYS);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){.prom_path = prom}), WEFT_ESYS);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){.path = link}), WEFT_ESYS);
    ASSERT_OK(weft_stats_stop(ex));
    ASSERT_TRUE(is_fifo(fifo));
    ASSERT_TRUE(is_fifo(prom));
    struct stat st;
    ASSERT_EQ(lstat(link, &st), 0);
    ASSERT_TRUE(S_ISLNK(st.st_mode));
    ASSERT_EQ(stat(target, &st), 0);
    ASSERT_EQ(st.st_size, 4);
    /* A regular file there is replaced, and removed at stop, as before. */
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){.path = plain}));
    ASSERT_OK(weft_stats_stop(ex));
    ASSERT_NE(lstat(plain, &st), 0);
    weft_executor_destroy(ex);

    /* Through the variable: a warning, and the FIFO is still there. */
    setenv("WEFT_STATS", fifo, 1);
    capture_log();
    ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_executor_destroy(ex);
    unsetenv("WEFT_STATS");
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, fifo) != NULL);
    ASSERT_TRUE(is_fifo(fifo));

    unlink(fifo), unlink(prom), unlink(link), unlink(target);
    rmdir(dir);
}

/* ---- WEFT_LOG before the first executor ---------------------------------------- */

static int warnings_before_any_executor(const char *log_value) {
    setenv("WEFT_LOG", log_value, 1);
    setenv("WEFT_TOPOLOGY", "bogus", 1);
    setenv("WEFT_BLOCK_CACHE_MB", "lots", 1);
    capture_log_at_default_level(); /* a callback only: the level stays WEFT_LOG's */
    weft_topology *topo = NULL;
    if (weft_topology_detect(NULL, &topo) != WEFT_OK) return 100;
    weft_topology_destroy(topo);
    weft_taskflow *tf = weft_taskflow_create("cache", NULL); /* its destroy reads WEFT_BLOCK_CACHE_MB */
    if (!tf || weft_task_is_null(weft_emplace(tf, nop, NULL))) return 101;
    if (weft_taskflow_destroy(tf) != WEFT_OK) return 102;
    return atomic_load(&logged.warnings);
}

/* WEFT_LOG=off (or error) silences the warnings about other variables also
 * when they are read before any executor exists: WEFT_LOG was read only at
 * the first executor's creation, so those warnings went out at the default
 * level. */
TEST(weft_log_off_silences_warnings_about_variables_read_before_any_executor) {
    static const char *const levels[] = {"off", "error", "warn"};
    static const int want[] = {0, 0, 2};
    for (int i = 0; i < 3; i++) {
        fflush(NULL);
        pid_t pid = fork(); /* WEFT_LOG and the warnings are once per process */
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) _exit(warnings_before_any_executor(levels[i]));
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        if (WEXITSTATUS(status) != want[i])
            TEST_FAIL_("WEFT_LOG=%s: %d warnings, want %d", levels[i], WEXITSTATUS(status), want[i]);
    }
}

/* In a child of fork(), weft_stats_stop on an executor of the parent removed
 * the parent's live block while the parent went on publishing to it (and a
 * start there would have replaced it): both now return WEFT_EFORKED and leave
 * the parent's files alone. */
TEST(weft_stats_start_or_stop_in_a_forked_child_leaves_the_parents_files_alone) {
    char dir[] = "/tmp/weft_h42_forkstatsXXXXXX";
    ASSERT_NOT_NULL(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/parent.stats", dir);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){.path = path}));
    struct stat before;
    ASSERT_EQ(stat(path, &before), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        weft_log_set_level(WEFT_LOG_OFF);
        int bad = 0;
        if (weft_stats_stop(ex) != WEFT_EFORKED) bad |= 1;
        if (weft_stats_start(ex, &(weft_stats_config){.path = path}) != WEFT_EFORKED) bad |= 2;
        _exit(bad);
    }
    int status = wait_child(pid, 20, "the child hung in weft_stats_stop");
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) TEST_FAIL_("child checks failed: mask 0x%x", WEXITSTATUS(status));
    struct stat after;
    ASSERT_EQ(stat(path, &after), 0); /* still there, and still the parent's block */
    ASSERT_EQ(after.st_ino, before.st_ino);
    ASSERT_OK(weft_stats_stop(ex));
    ASSERT_NE(stat(path, &after), 0);
    weft_executor_destroy(ex);
    rmdir(dir);
}
