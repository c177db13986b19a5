/* Blocking tasks that hold an executor's workers node by node (topo_hold.h). */
#define _GNU_SOURCE
#include "topo_hold.h"

#include <sched.h>
#include <time.h>

#include "core/executor.h"
#include "harness.h"

atomic_int release_node[2];
static atomic_int blockers_started;

uint64_t hold_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void hold_sleep_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL); }

/* Holds its worker until release_node[its node] is set (5 s at most). */
static int blocker(weft_ctx *ctx, void *arg) {
    weft_executor *ex = arg;
    int node = ex->workers[weft_ctx_worker_id(ctx)].node;
    atomic_fetch_add(&blockers_started, 1);
    uint64_t deadline = hold_now_ms() + 5000;
    while (!atomic_load(&release_node[node]) && hold_now_ms() < deadline) sched_yield();
    return 0;
}

void hold_both(weft_executor *ex) {
    atomic_store(&blockers_started, 0);
    atomic_store(&release_node[0], 0);
    atomic_store(&release_node[1], 0);
    ASSERT_OK(weft_silent_async(ex, blocker, ex));
    ASSERT_OK(weft_silent_async(ex, blocker, ex));
    uint64_t deadline = hold_now_ms() + 5000;
    while (atomic_load(&blockers_started) < 2 && hold_now_ms() < deadline) hold_sleep_ms(1);
    ASSERT_EQ(atomic_load(&blockers_started), 2);
}
