/* NUMA node hints on parallel algorithm calls (weft_algo_set_numa_node, issue
 * 20): on the fake odd-numbered two-socket tree with two workers bound to CPUs
 * 0 and 1 (nodes 0 and 1), where a hinted loop's jobs are queued and which
 * worker runs its chunks; what is refused; what ignores the hint. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "core/executor.h"
#include "harness.h"
#include "platform/files.h"
#include "topo/topo_layer.h"
#include "topo_fixture.h"
#include "topo_hold.h"
#include "weft.h"

enum { N = 4096 };

static weft_executor *ex;
/* Per index of the loop: 2 + the node of the worker that ran it (0: not run;
 * node -1: an unbound worker; 2: a thread that is not a worker). */
static atomic_int ran_on[N];
/* Chunks that saw a thread hint other than want_hint. */
static atomic_int wrong_hint;
static unsigned want_hint;

static int node_of_this_worker(void) {
    int id = weft_executor_worker_id(ex);
    return id < 0 ? 2 : ex->workers[id].node;
}

static void release_all(void) {
    atomic_store(&release_node[0], 1);
    atomic_store(&release_node[1], 1);
    ASSERT_OK(weft_executor_wait_all(ex));
}

/* Waits (5 s at most) until queue q holds `len` jobs. */
static bool wait_len(weft__injector *q, size_t len) {
    uint64_t deadline = hold_now_ms() + 5000;
    while (weft__injector_len(q) != len && hold_now_ms() < deadline) hold_sleep_ms(1);
    return weft__injector_len(q) == len;
}

static void record(size_t lo, size_t hi, void *arg) {
    (void)arg;
    int node = node_of_this_worker();
    if (weft_algo_numa_node() != want_hint) atomic_fetch_add(&wrong_hint, 1);
    for (size_t i = lo; i < hi; i++) atomic_store(&ran_on[i], node + 2);
}

/* Indices run on node `node` (0, 1; -1: an unbound worker; 2: a thread that
 * is not a worker). */
static int count_on(int node) {
    int c = 0;
    for (int i = 0; i < N; i++) c += atomic_load(&ran_on[i]) == node + 2;
    return c;
}

static void reset_counts(unsigned hint) {
    for (int i = 0; i < N; i++) atomic_store(&ran_on[i], 0);
    atomic_store(&wrong_hint, 0);
    want_hint = hint;
}

/* Static chunks, one run per task: job t's elements are fixed. */
static const weft_algo_config STATIC_CFG = {.partitioner = WEFT_PARTITION_STATIC};

/* A loop over [0, N) with this thread's hint set to `hint` (put back after). */
static void hinted_loop(unsigned hint) {
    unsigned old;
    ASSERT_OK(weft_algo_set_numa_node(hint, &old));
    ASSERT_OK(weft_parallel_for_range(ex, 0, N, 1, record, NULL, &STATIC_CFG));
    ASSERT_OK(weft_algo_set_numa_node(old, NULL));
}

/* The priority loop_thread sets before its loop. */
static weft_priority thread_prio = WEFT_PRIORITY_NORMAL;

static void *loop_thread(void *arg) {
    if (weft_algo_set_priority(thread_prio, NULL) != WEFT_OK) return NULL;
    hinted_loop((unsigned)(uintptr_t)arg);
    return NULL;
}

/* The fake two-node machine and two workers bound to CPUs 0 and 1. */
static void two_node_executor(void) {
    const char *root = fake_write(&FAKE_ODD_NUMBERS); /* CPU 0 on node 0, CPU 1 on node 1 */
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    int mask[2];
    if (weft__affinity_cpus(mask, 2) < 2 || mask[0] != 0 || mask[1] != 1) {
        weft__topo_layer_set_machine(NULL);
        SKIP("needs CPUs 0 and 1");
    }
    weft_status st;
    ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_CPUS}, &st);
    ASSERT_OK(st);
    ASSERT_EQ(ex->nnodes, 2);
    ASSERT_EQ(ex->workers[0].node, 0);
    ASSERT_EQ(ex->workers[1].node, 1);
}

static void done_with_executor(void) {
    weft_executor_destroy(ex);
    ex = NULL;
    weft__topo_layer_set_machine(NULL);
}

TEST(a_hinted_loop_from_outside_queues_its_jobs_on_the_node_and_runs_there) {
    two_node_executor();
    /* Both workers busy: the call's two jobs wait in node 1's mailbox, not the
     * shared queue; freed first, node 1's worker runs every chunk while node
     * 0's is still held. */
    hold_both(ex);
    reset_counts(WEFT_NUMA_NODE(1));
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, loop_thread, (void *)(uintptr_t)WEFT_NUMA_NODE(1)), 0);
    ASSERT_TRUE(wait_len(&ex->mailboxes[1].q, 2));
    ASSERT_EQ(weft__injector_len(&ex->injector), 0);
    ASSERT_EQ(weft__injector_len(&ex->mailboxes[0].q), 0);
    atomic_store(&release_node[1], 1);
    pthread_join(th, NULL);
    ASSERT_EQ(count_on(1), N);
    ASSERT_EQ(atomic_load(&wrong_hint), 0); /* the chunks ran with the call's hint */
    release_all();

    /* The same loop unhinted: the shared queue, and node 0's worker, freed
     * first, runs it all. */
    hold_both(ex);
    reset_counts(0);
    ASSERT_EQ(pthread_create(&th, NULL, loop_thread, (void *)(uintptr_t)0), 0);
    ASSERT_TRUE(wait_len(&ex->injector, 2));
    ASSERT_EQ(weft__injector_len(&ex->mailboxes[1].q), 0);
    atomic_store(&release_node[0], 1);
    pthread_join(th, NULL);
    ASSERT_EQ(count_on(0), N);
    ASSERT_EQ(atomic_load(&wrong_hint), 0);
    release_all();
    done_with_executor();
}

/* An async task (on the worker of node `from`) that makes the hinted loop. */
static int loop_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    hinted_loop((unsigned)(uintptr_t)arg);
    return 0;
}

TEST(a_hinted_loop_from_a_worker_of_another_node_sends_the_rest_to_that_node) {
    two_node_executor();
    /* Node 0's worker makes a loop hinted to node 1 while node 1's worker is
     * held: it runs job 0 itself, job 1 waits in node 1's mailbox (not on
     * the caller's deque, where the caller would take it back) until node
     * 1's worker is free. */
    hold_both(ex);
    reset_counts(WEFT_NUMA_NODE(1));
    weft_async_options on0 = {.numa_node = WEFT_NUMA_NODE(0)};
    ASSERT_OK(weft_async_with(ex, loop_task, (void *)(uintptr_t)WEFT_NUMA_NODE(1), &on0, NULL));
    ASSERT_TRUE(wait_len(&ex->mailboxes[0].q, 1));
    atomic_store(&release_node[0], 1); /* node 0's worker takes the task from its mailbox */
    ASSERT_TRUE(wait_len(&ex->mailboxes[1].q, 1));
    ASSERT_EQ(count_on(1), 0);
    atomic_store(&release_node[1], 1);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(count_on(0), N / 2);
    ASSERT_EQ(count_on(1), N / 2);
    ASSERT_EQ(atomic_load(&wrong_hint), 0);

    /* Hinted to its own node: its deque, as without a hint (node 0's worker
     * held, so node 1's runs both jobs). */
    hold_both(ex);
    reset_counts(WEFT_NUMA_NODE(1));
    weft_async_options on1 = {.numa_node = WEFT_NUMA_NODE(1)};
    ASSERT_OK(weft_async_with(ex, loop_task, (void *)(uintptr_t)WEFT_NUMA_NODE(1), &on1, NULL));
    atomic_store(&release_node[1], 1);
    uint64_t deadline = hold_now_ms() + 5000;
    while (count_on(1) < N && hold_now_ms() < deadline) hold_sleep_ms(1);
    ASSERT_EQ(count_on(1), N);
    ASSERT_EQ(weft__injector_len(&ex->mailboxes[1].q), 0);
    release_all();
    done_with_executor();
}

TEST(a_loop_with_a_priority_and_a_hint_goes_by_the_priority) {
    two_node_executor();
    hold_both(ex);
    reset_counts(WEFT_NUMA_NODE(1));
    thread_prio = WEFT_PRIORITY_HIGH;
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, loop_thread, (void *)(uintptr_t)WEFT_NUMA_NODE(1)), 0);
    hold_sleep_ms(50);
    ASSERT_EQ(weft__injector_len(&ex->mailboxes[1].q), 0);
    ASSERT_EQ(weft__injector_len(&ex->injector), 0);
    atomic_store(&release_node[0], 1);
    atomic_store(&release_node[1], 1);
    pthread_join(th, NULL);
    thread_prio = WEFT_PRIORITY_NORMAL;
    ASSERT_EQ(count_on(0) + count_on(1), N); /* on the workers, from the priority queue */
    release_all();
    done_with_executor();
}

TEST(numa_hints_for_algorithm_calls_refuse_nodes_the_machine_lacks) {
    /* The process's machine as it is: nodes 0..count-1. */
    unsigned count = weft_topology_numa_node_count(weft__topo_machine());
    ASSERT_GE(count, 1);
    ASSERT_EQ(weft_algo_numa_node(), 0);
    unsigned prev = 99;
    ASSERT_OK(weft_algo_set_numa_node(WEFT_NUMA_NODE(count - 1), &prev));
    ASSERT_EQ(prev, 0);
    ASSERT_EQ(weft_algo_numa_node(), WEFT_NUMA_NODE(count - 1));
    ASSERT_STATUS(weft_algo_set_numa_node(WEFT_NUMA_NODE(count), &prev), WEFT_EINVAL);
    ASSERT_STATUS(weft_algo_set_numa_node(WEFT_NUMA_NODE(5000), NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_algo_set_numa_node(~0u, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_algo_numa_node(), WEFT_NUMA_NODE(count - 1)); /* unchanged */
    /* The hint and the priority are separate settings. */
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_LOW, NULL));
    ASSERT_EQ(weft_algo_numa_node(), WEFT_NUMA_NODE(count - 1));
    ASSERT_OK(weft_algo_set_numa_node(0, &prev));
    ASSERT_EQ(prev, WEFT_NUMA_NODE(count - 1));
    ASSERT_EQ(weft_algo_priority(), WEFT_PRIORITY_LOW);
    ASSERT_OK(weft_algo_set_priority(WEFT_PRIORITY_NORMAL, NULL));
    ASSERT_EQ(weft_algo_numa_node(), 0);

    /* The fake two-node machine: node 1 exists, node 2 does not. */
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    ASSERT_OK(weft_algo_set_numa_node(WEFT_NUMA_NODE(1), NULL));
    ASSERT_STATUS(weft_algo_set_numa_node(WEFT_NUMA_NODE(2), NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_algo_numa_node(), WEFT_NUMA_NODE(1));
    ASSERT_OK(weft_algo_set_numa_node(0, NULL));
    weft__topo_layer_set_machine(NULL);
}

static void note_hint(size_t lo, size_t hi, void *arg) {
    (void)lo, (void)hi, (void)arg;
    if (weft_algo_numa_node() != 0) atomic_fetch_add(&wrong_hint, 1);
}

TEST(a_numa_hint_changes_nothing_without_mailboxes_nor_for_emplaced_loops) {
    /* Unbound workers (this machine, or the fake one: no mailboxes): the hint
     * is ignored, the loop's chunks still see it (nested calls inherit it). */
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    weft_status st;
    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    ASSERT_NULL(ex->mailboxes);
    reset_counts(WEFT_NUMA_NODE(1));
    hinted_loop(WEFT_NUMA_NODE(1));
    ASSERT_EQ(count_on(-1) + count_on(2), N); /* unbound workers: node -1; this thread: 2 */
    ASSERT_EQ(atomic_load(&wrong_hint), 0);

    /* An emplaced loop takes no hint: neither the emplacing thread's nor
     * (it runs on a worker) any other. */
    ASSERT_OK(weft_algo_set_numa_node(WEFT_NUMA_NODE(1), NULL));
    weft_taskflow *tf = weft_taskflow_create("hinted", NULL);
    ASSERT_NOT_NULL(tf);
    weft_for_desc d = {.first = 0, .last = N, .step = 1, .body = note_hint};
    atomic_store(&wrong_hint, 0);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_for(tf, &d)));
    ASSERT_OK(weft_algo_set_numa_node(0, NULL));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&wrong_hint), 0);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    ex = NULL;
    weft__topo_layer_set_machine(NULL);
}
