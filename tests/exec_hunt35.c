/* Executor lifecycle found wanting in the session-35 hunt: the default
 * executor's own tasks, run while exit() drains it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int exit_pipe[2];
static atomic_long chain_ran, chain_refused;

/* One link: a short sleep (so exit() comes while the chain is in flight), then
 * the next link through NULL, the default executor. */
static int chain_link(weft_ctx *ctx, void *arg) {
    (void)ctx;
    long left = (long)arg;
    sleep_us(200);
    atomic_fetch_add(&chain_ran, 1);
    if (left > 0 && weft_silent_async(NULL, chain_link, (void *)(left - 1)) != WEFT_OK)
        atomic_fetch_add(&chain_refused, 1);
    return 0;
}

static void report_chain(void) {
    /* Registered before the first use: runs after the default executor's handler. */
    char out[32];
    int n = snprintf(out, sizeof out, "%ld/%ld", atomic_load(&chain_ran), atomic_load(&chain_refused));
    (void)!write(exit_pipe[1], out, (size_t)n);
}

TEST(a_default_executor_task_run_while_exit_drains_it_may_still_submit_through_null) {
    /* weft/core.h: exit() waits for every run in flight on the default
     * executor, and NULL means that executor "in every call, tasks of the
     * default executor included".  A task it runs during that wait, submitting
     * its follow-up through NULL, got WEFT_ESHUTDOWN and the chain stopped. */
    ASSERT_EQ(pipe(exit_pipe), 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        close(exit_pipe[0]);
        if (atexit(report_chain) != 0) _exit(4);
        setenv("WEFT_WORKERS", "2", 1);
        if (weft_silent_async(NULL, chain_link, (void *)20) != WEFT_OK) _exit(3);
        exit(0);
    }
    close(exit_pipe[1]);
    int status = wait_child(pid, 30, "the child hung at exit");
    char got[32];
    ssize_t len = read(exit_pipe[0], got, sizeof got - 1);
    got[len > 0 ? len : 0] = 0;
    close(exit_pipe[0]);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    ASSERT_STREQ(got, "21/0");
}
