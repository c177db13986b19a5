/* Session 42's fork() follow-ups: WEFT_STATS paths in a parent and its forked
 * child, weft_run_n_parallel and weft_taskflow_destroy of a taskflow whose run
 * was in flight at the fork, and a semaphore such a run uses. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"
#include "fork_util.h"

#include <weft.h>

#include <dirent.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>


static int count_files(const char *dir, bool show) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        if (show) fprintf(stderr, "  file: %s\n", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

static void remove_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char p[400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* ---- (a) WEFT_STATS in a parent and its forked child ------------------------- */

static char stats_dir[64];

/* The process publishing (the owner of the plain names): an executor before
 * the fork, then one in the child and the parent's next one, both alive at
 * once.  Each needs files of its own: 3 executors, 2 files each. */
static int parent_and_child_stats(void) {
    char var[256];
    snprintf(var, sizeof var, "%s/live.stats,%s/run.prom", stats_dir, stats_dir);
    setenv("WEFT_STATS", var, 1);
    weft_executor *ex1 = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!ex1) return 100;
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) return 101;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return 102;
    if (pid == 0) {
        weft_executor *mine = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
        char c = mine ? 'y' : 'n';
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1) _exit(3);
        weft_executor_destroy(mine);
        _exit(0);
    }
    char c = 0;
    if (read(up[0], &c, 1) != 1 || c != 'y') return 103;
    weft_executor *ex2 = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!ex2) return 104;
    int n = count_files(stats_dir, false);
    if (n != 6) {
        fprintf(stderr, "3 executors alive (one in the child): %d files\n", n);
        (void)count_files(stats_dir, true);
    }
    if (write(down[1], "g", 1) != 1) return 105;
    int status = wait_child(pid, 10, "the grandchild hung");
    weft_executor_destroy(ex2);
    weft_executor_destroy(ex1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 106;
    if (n != 6) return 1;
    /* Each executor removed its own files, and only them. */
    n = count_files(stats_dir, false);
    if (n != 0) {
        fprintf(stderr, "after every executor was destroyed: %d files\n", n);
        (void)count_files(stats_dir, true);
        return 2;
    }
    return 0;
}

/* WEFT_STATS's count of executors publishing (live.stats, live.stats.1, ...)
 * was copied at fork(): the child's new executor and the parent's next one
 * both published live.stats.1 and run.1.prom, and the later replaced the
 * other's (then the first destroyed removed the survivor's).  As WEFT_PROFILE
 * does, a forked process names its files live.stats.<pid>, .1, ... */
TEST(weft_stats_in_a_parent_and_its_forked_child_publish_to_files_of_their_own) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
#ifdef UNDER_ASAN
    /* The WEFT_STATS publisher allocates at any moment: a fork() then left
     * ASan's allocator locked in the grandchild (half the runs hung). */
    SKIP("ASan's allocator is not fork-safe while another thread allocates (test_util.h)");
#endif
    snprintf(stats_dir, sizeof stats_dir, "/tmp/weft_h42f_statsXXXXXX");
    ASSERT_NOT_NULL(mkdtemp(stats_dir));
    int code = in_child(parent_and_child_stats);
    remove_dir(stats_dir);
    if (code != 0) TEST_FAIL_("child exit %d", code);
}

/* ---- (b) a taskflow busy at the fork, in the child ---------------------------- */

static weft_taskflow *busy_tf;

static int child_runs_busy_in_parallel(void) {
    weft_log_set_level(WEFT_LOG_OFF);
    weft_executor *mine = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    if (!mine) return 100;
    int bad = 0;
    weft_future *f = NULL;
    weft_status st = weft_run_n_parallel(mine, busy_tf, 2, &f);
    if (st == WEFT_OK) {
        fprintf(stderr, "weft_run_n_parallel: WEFT_OK, future %s\n", weft_strerror(weft_future_wait_for(f, 2000 * MS)));
        bad |= 1;
    } else if (st != WEFT_EFORKED) {
        fprintf(stderr, "weft_run_n_parallel: %s\n", weft_strerror(st));
        bad |= 1;
    } else if (!strstr(weft_last_error_message(), "fork")) {
        fprintf(stderr, "weft_run_n_parallel's message: %s\n", weft_last_error_message());
        bad |= 2;
    }
    if (f) bad |= 4; /* a refused run leaves *out NULL */
    /* graph.h: the taskflow stays busy for ever here (its run never ends),
     * so destroy refuses, saying why. */
    if (weft_taskflow_destroy(busy_tf) != WEFT_EBUSY) bad |= 8;
    else if (!strstr(weft_last_error_message(), "fork")) {
        fprintf(stderr, "weft_taskflow_destroy's message: %s\n", weft_last_error_message());
        bad |= 16;
    }
    weft_executor_destroy(mine);
    return bad;
}

/* core.h: a taskflow whose run was in flight at the fork cannot run in the
 * child, and every weft_run* says WEFT_EFORKED.  weft_run_n_parallel ran it
 * (its instances do not queue behind a serial run), on a graph whose state is
 * the parent's mid-run snapshot. */
TEST(weft_run_n_parallel_of_a_taskflow_busy_at_fork_fails_fast_in_the_child) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    busy_tf = weft_taskflow_create("busy", NULL);
    ASSERT_NOT_NULL(busy_tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(busy_tf, slow_until_released, NULL)));
    int code = child_while_run_in_flight(ex, busy_tf, child_runs_busy_in_parallel);
    weft_future *f = NULL;
    /* In the parent, once the run ended, nothing is left busy. */
    ASSERT_OK(weft_run_n_parallel(ex, busy_tf, 2, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(busy_tf));
    weft_executor_destroy(ex);
    if (code != 0) TEST_FAIL_("child checks failed: mask 0x%x", code);
}

/* ---- (c) a semaphore a run in flight at the fork uses ------------------------- */

static weft_semaphore *busy_sem;

static int child_destroys_the_semaphore(void) {
    weft_log_set_level(WEFT_LOG_OFF);
    /* async.h: refused for ever in the child, as the run that counts on it
     * never ends there; the message says how many users. */
    if (weft_semaphore_destroy(busy_sem) != WEFT_EBUSY) return 1;
    if (weft_semaphore_destroy(busy_sem) != WEFT_EBUSY) return 2;
    return 0;
}

/* A probe of what async.h now documents: in a fork() child, a semaphore that
 * a run in flight at the fork uses cannot be destroyed (WEFT_EBUSY, every
 * time); its memory goes with the child's exit or exec. */
TEST(a_semaphore_used_by_a_run_in_flight_at_fork_stays_busy_in_the_child) {
#ifdef UNDER_TSAN
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    busy_sem = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(busy_sem);
    weft_taskflow *tf = weft_taskflow_create("sem", NULL);
    ASSERT_NOT_NULL(tf);
    weft_task t = weft_emplace(tf, slow_until_released, NULL);
    ASSERT_FALSE(weft_task_is_null(t));
    ASSERT_OK(weft_task_acquire(t, busy_sem));
    ASSERT_OK(weft_task_release(t, busy_sem));
    int code = child_while_run_in_flight(ex, tf, child_destroys_the_semaphore);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_semaphore_destroy(busy_sem));
    weft_executor_destroy(ex);
    if (code != 0) TEST_FAIL_("child checks failed: %d", code);
}
