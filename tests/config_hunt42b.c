/* Follow-ups of session 42's configuration and lifecycle hunt (config_hunt42.c):
 * empty WEFT_PROFILE / WEFT_STATS, WEFT_PROFILE across fork(), pthread_exit
 * from main, a sysfs_root with no sysfs tree, every way of running a taskflow
 * busy at fork() in the child, creating many workers, and log messages logged
 * before the first executor. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"
#include "fork_util.h"
#include "warn_capture.h"

#include <weft.h>

#include "core/log.h" /* weft__log: a message before any executor */

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int nop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}


/* ---- (a) an empty WEFT_PROFILE or WEFT_STATS is warned about once ------------- */

static const char *empty_var;

static int executors_with_an_empty_variable(void) {
    setenv(empty_var, "", 1);
    capture_log();
    for (int i = 0; i < 3; i++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
        if (!ex) return 100;
        weft_future *f = NULL;
        if (weft_async(ex, nop, NULL, &f) != WEFT_OK || weft_future_wait(f) != WEFT_OK) return 101;
        weft_future_destroy(f);
        weft_executor_destroy(ex);
    }
    int n = atomic_load(&logged.warnings);
    if (n != 1 || !strstr(logged.last, empty_var)) {
        fprintf(stderr, "%s=\"\": %d warnings, last: %s\n", empty_var, n, logged.last);
        return 1;
    }
    return 0;
}

/* README: a value that is not valid, empty included, is warned about once,
 * naming the variable, and the default kept.  WEFT_PROFILE="" and
 * WEFT_STATS="" were silently off. */
TEST(an_empty_weft_profile_or_weft_stats_is_warned_about_once_naming_it) {
    static const char *const vars[] = {"WEFT_PROFILE", "WEFT_STATS"};
    for (int i = 0; i < 2; i++) {
        empty_var = vars[i];
        int code = in_child(executors_with_an_empty_variable);
        if (code != 0) TEST_FAIL_("%s=\"\": child exit %d", vars[i], code);
    }
}

/* ---- (b) WEFT_PROFILE in a parent and its fork() child ------------------------ */

static char profile_dir[64];

static int run_one_task(weft_executor *ex) {
    weft_future *f = NULL;
    if (weft_async(ex, nop, NULL, &f) != WEFT_OK || weft_future_wait(f) != WEFT_OK) return 1;
    weft_future_destroy(f);
    return 0;
}

static int count_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* The parent (itself a child of the test, so that WEFT_PROFILE stays here)
 * makes a profiling executor, forks, and both make and destroy executors. */
static int parent_and_child_profile(void) {
    char path[128];
    snprintf(path, sizeof path, "%s/out.json", profile_dir);
    setenv("WEFT_PROFILE", path, 1);
    weft_log_set_level(WEFT_LOG_OFF);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!ex || run_one_task(ex)) return 100;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 101;
    if (pid == 0) {
        /* The child's own executors: two profiles of its own. */
        for (int i = 0; i < 2; i++) {
            weft_executor *mine = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
            if (!mine || run_one_task(mine)) _exit(1);
            weft_executor_destroy(mine);
        }
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 102;
    weft_executor_destroy(ex); /* out.json */
    weft_executor *second = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!second || run_one_task(second)) return 103;
    weft_executor_destroy(second); /* out.1.json */
    char want[160];
    snprintf(want, sizeof want, "%s/out.json", profile_dir);
    struct stat st;
    /* This process made the first profiling executor: WEFT_PROFILE's names. */
    if (stat(want, &st) != 0) return 104;
    snprintf(want, sizeof want, "%s/out.1.json", profile_dir);
    if (stat(want, &st) != 0) return 105;
    snprintf(want, sizeof want, "%s/out.%u.json", profile_dir, (unsigned)pid);
    if (stat(want, &st) != 0) return 106;
    snprintf(want, sizeof want, "%s/out.%u.1.json", profile_dir, (unsigned)pid);
    if (stat(want, &st) != 0) return 107;
    return count_files(profile_dir) == 4 ? 0 : 108; /* four profiles, none lost */
}

/* A parent and its fork() child wrote the same WEFT_PROFILE file (the count
 * of profiles saved was copied at the fork), so one profile was lost
 * silently: a forked process names its files out.<pid>.json, .1, ... */
TEST(weft_profile_in_a_parent_and_its_forked_child_loses_no_profile) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    snprintf(profile_dir, sizeof profile_dir, "/tmp/weft_h42b_profXXXXXX");
    ASSERT_NOT_NULL(mkdtemp(profile_dir));
    int code = in_child(parent_and_child_profile);
    DIR *d = opendir(profile_dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.') continue;
            char p[400];
            snprintf(p, sizeof p, "%s/%s", profile_dir, e->d_name);
            if (code) fprintf(stderr, "  file: %s\n", e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(profile_dir);
    if (code != 0) TEST_FAIL_("child exit %d", code);
}

/* ---- (c) pthread_exit from main with an executor alive ------------------------ */

static void *last_thread_with_work(void *arg) {
    (void)arg;
    weft_executor *ex = weft_default_executor();
    if (!ex || weft_run_root(NULL, nop, NULL) != WEFT_OK) _exit(3);
    exit(0); /* what core.h asks for: the last thread with work calls exit() */
}

static int main_thread_pthread_exits(void) {
    if (!weft_default_executor() || weft_run_root(NULL, nop, NULL) != WEFT_OK) return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, last_thread_with_work, NULL) != 0) return 4;
    pthread_exit(NULL); /* alone, this would leave the process alive for ever */
}

static int main_thread_pthread_exits_alone(void) {
    if (!weft_default_executor() || weft_run_root(NULL, nop, NULL) != WEFT_OK) return 2;
    pthread_exit(NULL);
}

/* core.h: workers sleep and never exit on their own, so a main thread that
 * ends with pthread_exit while an executor lives (the default one from its
 * first use) leaves the process alive; a thread that calls exit() ends it. */
TEST(pthread_exit_from_main_keeps_the_process_alive_and_exit_from_another_thread_ends_it) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    ASSERT_EQ(in_child(main_thread_pthread_exits), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) _exit(main_thread_pthread_exits_alone());
    int status = 0;
    double deadline = now_s() + 0.3;
    pid_t r;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_s() < deadline) sleep_us(2000);
    ASSERT_EQ(r, 0); /* still alive after 300 ms: the documented hang */
    kill(pid, SIGKILL);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
}

/* ---- (d) a sysfs_root that holds no sysfs tree -------------------------------- */

/* topology.h: sysfs_root is a directory holding DIR/sys/devices/system/cpu.
 * One without it (sysfs_root = "/tmp") gave a one-CPU synthetic machine, as
 * if it described one: now WEFT_ENOENT naming the path.  A tree whose cpu/
 * is empty still describes a machine (synthetic). */
TEST(a_sysfs_root_with_no_sysfs_tree_is_enoent_naming_it) {
    char root[] = "/tmp/weft_h42b_rootXXXXXX";
    ASSERT_NOT_NULL(mkdtemp(root));
    weft_topology *t = (weft_topology *)1;
    weft_topology_config cfg = {.source = WEFT_TOPOLOGY_SYSFS, .sysfs_root = root};
    ASSERT_STATUS(weft_topology_detect(&cfg, &t), WEFT_ENOENT);
    ASSERT_NULL(t);
    ASSERT_TRUE(strstr(weft_last_error_message(), root) != NULL);
    cfg.sysfs_root = "/tmp";
    ASSERT_STATUS(weft_topology_detect(&cfg, &t), WEFT_ENOENT);
    ASSERT_TRUE(strstr(weft_last_error_message(), "'/tmp'") != NULL);
    char p[256];
    static const char *const parts[] = {"/sys", "/sys/devices", "/sys/devices/system"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", root, parts[i]);
        ASSERT_EQ(mkdir(p, 0755), 0);
    }
    cfg.sysfs_root = root;
    ASSERT_STATUS(weft_topology_detect(&cfg, &t), WEFT_ENOENT); /* no cpu/ yet */
    snprintf(p, sizeof p, "%s/sys/devices/system/cpu", root);
    ASSERT_EQ(mkdir(p, 0755), 0);
    ASSERT_OK(weft_topology_detect(&cfg, &t));
    ASSERT_STREQ(weft_topology_backend(t), "synthetic");
    weft_topology_destroy(t);
    for (int i = 3; i >= 0; i--) {
        snprintf(p, sizeof p, "%s%s", root, i == 3 ? "/sys/devices/system/cpu" : parts[i]);
        ASSERT_EQ(rmdir(p), 0);
    }
    ASSERT_EQ(rmdir(root), 0);
}

/* ---- (e) every way of running a taskflow busy at fork(), in the child --------- */

static bool is_true(void *arg) {
    (void)arg;
    return true;
}

/* A status that must be WEFT_EFORKED: an immediate refusal, or a future that
 * ends so within 2 s (a run that cannot start must not hang). */
static int forked_or_bit(weft_status st, weft_future *f, int bit) {
    if (st != WEFT_OK) return st == WEFT_EFORKED ? 0 : bit;
    weft_status w = weft_future_wait_for(f, 2000 * MS);
    if (w == WEFT_ETIMEDOUT) return bit; /* the hang: leaked, the child exits */
    weft_future_destroy(f);
    return w == WEFT_EFORKED ? 0 : bit;
}

static weft_taskflow *busy_tf;

static int child_runs_busy_every_way(void) {
    weft_log_set_level(WEFT_LOG_OFF);
    weft_executor *mine = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!mine) return 1;
    int bad = 0;
    weft_future *f = NULL;
    bad |= forked_or_bit(weft_run_n(mine, busy_tf, 3, &f), f, 2);
    f = NULL;
    bad |= forked_or_bit(weft_run_until(mine, busy_tf, is_true, NULL, &f), f, 4);
    f = NULL;
    bad |= forked_or_bit(weft_run_with_priority(mine, busy_tf, WEFT_PRIORITY_HIGH, &f), f, 8);
    f = NULL;
    weft_taskflow *one[1] = {busy_tf};
    /* The set fails fast as graph.h says a member's submission error does:
     * WEFT_ETASK, the member's status WEFT_EFORKED. */
    if (weft_run_many(mine, one, 1, &f) != WEFT_OK || weft_future_wait_for(f, 2000 * MS) != WEFT_ETASK ||
        weft_run_many_status(f, 0) != WEFT_EFORKED)
        bad |= 16;
    else
        weft_future_destroy(f);
    if (weft_run_many_and_wait(mine, one, 1, NULL) != WEFT_EFORKED) bad |= 1;
    /* A module whose body is busy: the outer taskflow is the child's own. */
    weft_taskflow *outer = weft_taskflow_create("outer", NULL);
    if (!outer || weft_task_is_null(weft_emplace_module(outer, busy_tf))) return bad | 64;
    /* The module task fails as a task whose body cannot run does: the run's
     * status WEFT_ETASK, its task_code WEFT_EFORKED. */
    f = NULL;
    if (weft_run(mine, outer, &f) != WEFT_OK) return bad | 128;
    weft_status w = weft_future_wait_for(f, 2000 * MS);
    if (w == WEFT_ETIMEDOUT) return bad | 128; /* the hang */
    weft_run_info info;
    if (w != WEFT_ETASK || weft_future_info(f, &info) != WEFT_OK || info.task_code != WEFT_EFORKED) {
        fprintf(stderr, "module: %s, task_code %d\n", weft_strerror(w), info.task_code);
        bad |= 128;
    }
    weft_future_destroy(f);
    if (weft_run_and_wait(mine, outer) != WEFT_ETASK) bad |= 64; /* and again: no hold left behind */
    if (weft_taskflow_destroy(outer) != WEFT_OK) bad |= 32;
    weft_executor_destroy(mine);
    return bad;
}

/* config_hunt42's fix made weft_run of a taskflow whose run was in flight at
 * the fork return WEFT_EFORKED in the child.  The same taskflow run as a
 * module of a taskflow of the child's own queued behind that run and the
 * outer run hung; weft_run_n, run_until, run_with_priority and run_many go
 * through weft_run's check (probes: they passed). */
TEST(every_way_of_running_a_taskflow_busy_at_fork_fails_fast_in_the_child) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    busy_tf = weft_taskflow_create("busy", NULL);
    ASSERT_NOT_NULL(busy_tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(busy_tf, slow_until_released, NULL)));
    int code = child_while_run_in_flight(ex, busy_tf, child_runs_busy_every_way);
    ASSERT_OK(weft_taskflow_destroy(busy_tf));
    weft_executor_destroy(ex);
    if (code != 0) TEST_FAIL_("child checks failed: mask 0x%x", code);
}

/* ---- (f) many workers: creation is not quadratic ------------------------------ */

/* Each new worker searched all the others 24 rounds before parking, while the
 * later ones started: 4096 workers took 8 s on 2 CPUs.  A worker that never
 * ran a job parks after one look (worker.c, search: one round, each round
 * trying every other worker once).  That is checked by what the workers did,
 * not by the clock: once all have parked, their failed steals are about one
 * round each, n(n-1), where the old search made 24 (the bound allows 4).  The
 * time is printed only: a bound of 2 s on it failed under TSan on a loaded
 * 2-core machine (512 workers took 6.19 s to create; 0.6 s of CPU), and at 512
 * workers the old search's cost (~0.13 s) was under it anyway.  The work that
 * each must still do is checked too. */
TEST(an_executor_of_512_workers_is_created_quickly_and_runs_work_on_all_of_them) {
    enum { N = 512 };
    double t0 = now_s();
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = N}, NULL);
    ASSERT_NOT_NULL(ex);
    double created = now_s() - t0;
    for (int k = 0; k < 60000 && weft_executor_waiters(ex) != N; k++) sleep_us(500);
    ASSERT_EQ(weft_executor_waiters(ex), N);
    printf("%d workers: created in %.3f s, all parked after %.3f s\n", N, created, now_s() - t0);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    const uint64_t one_round_each = (uint64_t)N * (N - 1);
    if (m.total.steal_fails > 4 * one_round_each)
        TEST_FAIL_("%d fresh workers made %llu failed steals before parking: %.1f rounds each, not one", N,
                   (unsigned long long)m.total.steal_fails, (double)m.total.steal_fails / (double)one_round_each);
    atomic_int n = 0;
    weft_future *fs[64];
    for (int i = 0; i < 64; i++) ASSERT_OK(weft_async(ex, bump, &n, &fs[i]));
    for (int i = 0; i < 64; i++) {
        ASSERT_OK(weft_future_wait(fs[i]));
        weft_future_destroy(fs[i]);
    }
    ASSERT_EQ(atomic_load(&n), 64);
    weft_executor_destroy(ex);
}

/* ---- log messages before the first executor ----------------------------------- */

static atomic_int infos;

static void count_info(void *user, weft_log_level level, const char *msg) {
    (void)user;
    if (level == WEFT_LOG_INFO && strstr(msg, "before any executor")) atomic_fetch_add(&infos, 1);
}

static const char *log_value;

static int info_before_any_executor(void) {
    setenv("WEFT_LOG", log_value, 1);
    weft_log_set_callback(count_info, NULL);
    weft__log(WEFT_LOG_INFO, "an info message before any executor");
    weft__log(WEFT_LOG_DEBUG, "a debug message before any executor, not counted");
    return atomic_load(&infos);
}

/* The level starts at warn and WEFT_LOG was read only when a message passed
 * it: an info or debug message logged before the first executor was dropped
 * under WEFT_LOG=debug. */
TEST(weft_log_debug_keeps_info_messages_logged_before_any_executor) {
    static const char *const levels[] = {"debug", "info", "warn", "off"};
    static const int want[] = {1, 1, 0, 0};
    for (int i = 0; i < 4; i++) {
        log_value = levels[i];
        int got = in_child(info_before_any_executor);
        if (got != want[i]) TEST_FAIL_("WEFT_LOG=%s: %d info messages, want %d", levels[i], got, want[i]);
    }
}
