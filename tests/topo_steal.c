/* Stealing options of weft_executor_config (issue 20): steal attempts per
 * tier, batch steals, bounded local queues, and a bound worker's deque
 * allocated on its own thread (first touch on its NUMA node). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core/executor.h"
#include "harness.h"
#include "platform/files.h"
#include "topo/topo_layer.h"
#include "topo_fixture.h"
#include "topo_hold.h"
#include "weft.h"

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL); }

/* Failed steals of worker i (every try of an empty deque counts one) since
 * one_task_on_each_worker read them. */
static uint64_t fails_base[4];
static uint64_t fails_of(weft_executor *ex, unsigned i) {
    return weft__stat_read(&ex->workers[i].stats.steal_fails) - fails_base[i];
}

/* Four workers bound to CPUs 0, 1, 0, 1 of the odd-numbered machine (CPUs 0
 * and 1 on different packages): worker 0's tiers are {2} (its L3) and {1, 3}
 * (the other package); its node tier is empty.  A worker that never ran a
 * job makes one round and parks (worker.c), and finding its first job takes
 * as many tries as the timing gives: each worker runs one task first (four
 * that wait for each other), the counts are read while all four are inside
 * them, then each searches once (steal_rounds + yield_rounds rounds over its
 * tiers) and parks: the failed steals since count the attempts exactly. */
static atomic_int met, go;

static int meet_all_four(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    atomic_fetch_add(&met, 1);
    while (!atomic_load(&go)) sched_yield();
    return 0;
}

static void one_task_on_each_worker(weft_executor *ex) {
    atomic_store(&met, 0);
    atomic_store(&go, 0);
    weft_future *f[4];
    for (int i = 0; i < 4; i++) ASSERT_OK(weft_async(ex, meet_all_four, NULL, &f[i]));
    /* Not a future wait: this thread must not run one of the four. */
    while (atomic_load(&met) < 4) sched_yield();
    for (unsigned i = 0; i < 4; i++) fails_base[i] = weft__stat_read(&ex->workers[i].stats.steal_fails);
    atomic_store(&go, 1);
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(weft_future_wait(f[i]));
        weft_future_destroy(f[i]);
    }
}

static weft_executor *odd_executor(const unsigned attempts[3]) {
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    int mask[2];
    if (weft__affinity_cpus(mask, 2) < 2 || mask[0] != 0 || mask[1] != 1) SKIP("needs CPUs 0 and 1");
    weft_executor_config c = {.workers = 4, .affinity = WEFT_AFFINITY_CPUS, .steal_rounds = 3, .yield_rounds = 2};
    for (int i = 0; i < 3; i++) c.steal_attempts[i] = attempts[i];
    weft_status st;
    weft_executor *ex = weft_executor_create(&c, &st);
    ASSERT_OK(st);
    one_task_on_each_worker(ex);
    return ex;
}

/* Waits until every worker's failed steals reach want[i], then a little more
 * (a count above it would show). */
static void expect_fails(weft_executor *ex, const uint64_t *want) {
    uint64_t deadline = now_ms() + 5000;
    for (unsigned i = 0; i < 4; i++)
        while (fails_of(ex, i) < want[i] && now_ms() < deadline) sleep_ms(1);
    sleep_ms(50);
    for (unsigned i = 0; i < 4; i++) ASSERT_EQ(fails_of(ex, i), want[i]);
}

TEST(steal_attempts_set_how_often_each_tier_is_tried_per_round) {
    unsigned deflt[3] = {0, 0, 0};
    weft_executor *ex = odd_executor(deflt);
    const weft__worker *w = &ex->workers[0];
    ASSERT_EQ(w->ntiers, 2);
    ASSERT_NULL(w->tier_tries); /* default: each victim once, the old loop */
    uint64_t rounds = ex->steal_rounds + ex->yield_rounds;
    uint64_t once[4] = {3 * rounds, 3 * rounds, 3 * rounds, 3 * rounds};
    expect_fails(ex, once);
    weft_executor_destroy(ex);

    /* 3 tries of the L3 tier (one victim: three times), 5 of the node tier
     * (empty here: unused), 7 of the rest (two victims: 4 and 3 times). */
    unsigned some[3] = {3, 5, 7};
    ex = odd_executor(some);
    w = &ex->workers[0];
    ASSERT_EQ(w->tier_tries[0], 3);
    ASSERT_EQ(w->tier_tries[1], 7);
    ASSERT_EQ(w->victims[0], 2);
    uint64_t many[4] = {10 * rounds, 10 * rounds, 10 * rounds, 10 * rounds};
    expect_fails(ex, many);
    weft_executor_destroy(ex);

    /* Fewer tries than victims: one of the two on the other package. */
    unsigned one[3] = {1, 1, 1};
    ex = odd_executor(one);
    uint64_t two[4] = {2 * rounds, 2 * rounds, 2 * rounds, 2 * rounds};
    expect_fails(ex, two);
    weft_executor_destroy(ex);
    weft__topo_layer_set_machine(NULL);

    weft_status st;
    ASSERT_NULL(weft_executor_create(
        &(weft_executor_config){.workers = 2, .steal_attempts = {0, WEFT_SEARCH_ROUNDS_MAX + 1, 0}}, &st));
    ASSERT_EQ(st, WEFT_EINVAL);
}

/* ---- a root task that queues many children on its worker's deque ---- */

enum { CHILDREN = 20000 };
static atomic_uchar ran_times[CHILDREN];
static atomic_int root_worker;

static int child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&ran_times[(size_t)arg], 1);
    for (volatile int i = 0; i < 200; i++) {}
    return 0;
}

static int root(weft_ctx *ctx, void *arg) {
    weft_executor *ex = arg;
    (void)ctx;
    atomic_store(&root_worker, weft_executor_worker_id(ex));
    for (size_t i = 0; i < CHILDREN; i++)
        if (weft_silent_async(ex, child, (void *)i) != WEFT_OK) abort();
    return 0;
}

/* Runs the root and its children; returns how far the deques of the workers
 * other than the root's moved meanwhile (their tops).  A thief's deque moves
 * only when jobs were pushed onto it: children stolen one at a time never are
 * (they push nothing), a batch's rest is. */
static int64_t run_children(weft_executor *ex) {
    int64_t before[8] = {0}, moves = 0;
    for (unsigned i = 0; i < ex->nworkers && i < 8; i++) before[i] = atomic_load(&ex->workers[i].deque.top);
    for (size_t i = 0; i < CHILDREN; i++) atomic_store(&ran_times[i], 0);
    ASSERT_OK(weft_silent_async(ex, root, ex));
    ASSERT_OK(weft_executor_wait_all(ex));
    for (size_t i = 0; i < CHILDREN; i++) ASSERT_EQ(atomic_load(&ran_times[i]), 1);
    for (unsigned i = 0; i < ex->nworkers && i < 8; i++)
        if ((int)i != atomic_load(&root_worker)) moves += atomic_load(&ex->workers[i].deque.top) - before[i];
    return moves;
}

TEST(batch_steals_queue_the_rest_on_the_thief_and_run_each_task_once) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2, .steal_batch = 16}, &st);
    ASSERT_OK(st);
    ASSERT_EQ(ex->steal_batch, 16);
    int64_t moves = 0; /* on a loaded machine the thief may start late: a few runs */
    for (int r = 0; r < 20 && moves == 0; r++) moves += run_children(ex);
    ASSERT_GT(moves, 0);
    weft_executor_destroy(ex);

    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st); /* default: single steals */
    ASSERT_OK(st);
    ASSERT_EQ(ex->steal_batch, 1);
    for (int r = 0; r < 3; r++) ASSERT_EQ(run_children(ex), 0);
    weft_executor_destroy(ex);

    setenv("WEFT_STEAL_BATCH", "8", 1);
    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    ASSERT_EQ(ex->steal_batch, 8);
    run_children(ex);
    weft_executor_destroy(ex);
    unsetenv("WEFT_STEAL_BATCH");
    ASSERT_NULL(weft_executor_create(&(weft_executor_config){.workers = 2, .steal_batch = 257}, &st));
    ASSERT_EQ(st, WEFT_EINVAL);
}

TEST(bounded_local_queues_keep_each_deque_small_and_run_every_task_once) {
    weft_status st;
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex =
            weft_executor_create(&(weft_executor_config){.workers = workers, .local_queue_capacity = 50}, &st);
        ASSERT_OK(st);
        run_children(ex);
        /* From outside: this thread's submitter slot (a deque too) is bounded alike. */
        for (size_t i = 0; i < CHILDREN; i++) atomic_store(&ran_times[i], 0);
        for (size_t i = 0; i < CHILDREN; i++) ASSERT_OK(weft_silent_async(ex, child, (void *)i));
        ASSERT_OK(weft_executor_wait_all(ex));
        for (size_t i = 0; i < CHILDREN; i++) ASSERT_EQ(atomic_load(&ran_times[i]), 1);
        for (unsigned i = 0; i < weft__nslots(ex); i++) /* 50 rounds up to 64 */
            ASSERT_LE(atomic_load(&ex->workers[i].deque.ring)->mask, 63);
        weft_executor_destroy(ex);
    }
    /* Unbounded (the default): the root's deque grew to hold its children. */
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_OK(st);
    run_children(ex);
    ASSERT_GT(atomic_load(&ex->workers[0].deque.ring)->mask, 1023);
    weft_executor_destroy(ex);
    ASSERT_NULL(weft_executor_create(
        &(weft_executor_config){.workers = 1, .local_queue_capacity = ((size_t)1 << 30) + 1}, &st));
    ASSERT_EQ(st, WEFT_EINVAL);
}

/* ---- first touch ---- */

static pthread_t main_thread;
static atomic_int rings_from_workers;
static size_t ring_size;

static void *counting_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (size == ring_size && !pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&rings_from_workers, 1);
    return malloc(size);
}

TEST(bound_workers_allocate_their_deques_on_their_own_thread) {
    main_thread = pthread_self();
    ring_size = sizeof(weft__ring) + 1024 * sizeof(weft__job *);
    atomic_store(&rings_from_workers, 0);
    weft_set_allocator(&(weft_allocator){.alloc = counting_alloc});
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_CPUS}, &st);
    ASSERT_OK(st);
    run_children(ex);
    uint64_t deadline = now_ms() + 5000; /* a worker may not have started yet */
    while (atomic_load(&rings_from_workers) < 2 && now_ms() < deadline) sleep_ms(1);
    ASSERT_EQ(atomic_load(&rings_from_workers), 2);
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS, .all_cpus = true}, &t));
    for (unsigned i = 0; i < 2; i++) {
        unsigned node = 0;
        weft_status ns = weft_numa_node_of_address(t, atomic_load(&ex->workers[i].deque.ring), &node);
        if (ns == WEFT_ESYS) continue; /* no NUMA support here: nothing to compare */
        ASSERT_OK(ns);
        ASSERT_EQ((int)node, weft_topology_numa_node_for_cpu(t, ex->workers[i].cpu));
    }
    weft_topology_destroy(t);
    weft_executor_destroy(ex);
    /* Unbound workers may move between nodes: their deques stay where made. */
    atomic_store(&rings_from_workers, 0);
    ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_NONE}, &st);
    ASSERT_OK(st);
    run_children(ex);
    sleep_ms(20);
    ASSERT_EQ(atomic_load(&rings_from_workers), 0);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}

/* ---- NUMA node hints ---- */

static weft_executor *hint_ex;
static atomic_int hinted_on_node[2], hinted_ran;

static int node_of_this_worker(void) { return hint_ex->workers[weft_executor_worker_id(hint_ex)].node; }

static int hinted(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    int node = node_of_this_worker();
    if (node >= 0) atomic_fetch_add(&hinted_on_node[node], 1);
    atomic_fetch_add(&hinted_ran, 1);
    return 0;
}

static void submit_hinted(unsigned n, unsigned node) {
    weft_async_options o = {.numa_node = WEFT_NUMA_NODE(node)};
    for (unsigned i = 0; i < n; i++) ASSERT_OK(weft_async_with(hint_ex, hinted, NULL, &o, NULL));
}

TEST(numa_hinted_tasks_run_on_a_worker_of_their_node) {
    const char *root = fake_write(&FAKE_ODD_NUMBERS); /* CPU 0 on node 0, CPU 1 on node 1 */
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    int mask[2];
    if (weft__affinity_cpus(mask, 2) < 2 || mask[0] != 0 || mask[1] != 1) SKIP("needs CPUs 0 and 1");
    /* Long searches: the node-0 worker looks at node 1's mailbox only before
     * it sleeps, which the node-1 worker's every round comes well before. */
    weft_status st;
    hint_ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_CPUS,
                                                           .steal_rounds = WEFT_SEARCH_ROUNDS_MAX,
                                                           .yield_rounds = 1000},
                                   &st);
    ASSERT_OK(st);
    ASSERT_EQ(hint_ex->nnodes, 2);
    ASSERT_EQ(hint_ex->workers[0].node, 0);
    ASSERT_EQ(hint_ex->workers[1].node, 1);

    /* From outside: the node's mailbox, not the shared queue. */
    hold_both(hint_ex);
    submit_hinted(100, 1);
    ASSERT_EQ(weft__injector_len(&hint_ex->mailboxes[1].q), 100);
    ASSERT_EQ(weft__injector_len(&hint_ex->injector), 0);
    atomic_store(&release_node[1], 1);
    atomic_store(&release_node[0], 1);
    ASSERT_OK(weft_executor_wait_all(hint_ex));
    ASSERT_EQ(atomic_load(&hinted_on_node[1]), 100);
    ASSERT_EQ(atomic_load(&hinted_on_node[0]), 0);

    /* The node's only worker is busy: the other takes it before sleeping.  On
     * an executor with short searches: the long ones above (65536 steal and
     * 1000 yield rounds) take seconds on a loaded machine, each sched_yield
     * there waiting out other threads' slices (ASan, two busy loops: 5 of 6
     * runs went past the 5 s wait; a whole-suite run too), and the property
     * does not depend on the length of the search. */
    weft_executor_destroy(hint_ex);
    hint_ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_CPUS,
                                                           .steal_rounds = 1, .yield_rounds = WEFT_YIELD_ROUNDS_NONE},
                                   &st);
    ASSERT_OK(st);
    ASSERT_EQ(hint_ex->workers[0].node, 0);
    ASSERT_EQ(hint_ex->workers[1].node, 1);
    hold_both(hint_ex);
    atomic_store(&release_node[0], 1);
    atomic_store(&hinted_ran, 0);
    submit_hinted(1, 1);
    uint64_t deadline = now_ms() + 5000;
    while (atomic_load(&hinted_ran) == 0 && now_ms() < deadline) sleep_ms(1);
    ASSERT_EQ(atomic_load(&hinted_on_node[0]), 1);
    atomic_store(&release_node[1], 1);
    ASSERT_OK(weft_executor_wait_all(hint_ex));

    /* A node index with the top bit set is no node: ignored, it went to node
     * index & 0x7fffffff (here node 1's mailbox) as the flag took that bit. */
    hold_both(hint_ex);
    weft_async_options huge = {.numa_node = WEFT_NUMA_NODE(0x80000001u)};
    ASSERT_OK(weft_async_with(hint_ex, hinted, NULL, &huge, NULL));
    ASSERT_EQ(weft__injector_len(&hint_ex->mailboxes[1].q), 0);
    ASSERT_EQ(weft__injector_len(&hint_ex->mailboxes[0].q), 0);
    atomic_store(&release_node[0], 1);
    atomic_store(&release_node[1], 1);
    ASSERT_OK(weft_executor_wait_all(hint_ex));

    /* No hint, a node without workers, a node out of range: as weft_async. */
    weft_async_options none = {0}, far = {.numa_node = WEFT_NUMA_NODE(7)};
    ASSERT_OK(weft_async_with(hint_ex, hinted, NULL, &none, NULL));
    ASSERT_OK(weft_async_with(hint_ex, hinted, NULL, &far, NULL));
    ASSERT_OK(weft_executor_wait_all(hint_ex));
    weft_executor_destroy(hint_ex);
    weft__topo_layer_set_machine(NULL);

    /* One node (this machine as it is) or unbound workers: no mailboxes. */
    hint_ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    ASSERT_NULL(hint_ex->mailboxes);
    atomic_store(&hinted_ran, 0);
    submit_hinted(10, 0);
    ASSERT_OK(weft_executor_wait_all(hint_ex));
    ASSERT_EQ(atomic_load(&hinted_ran), 10);
    weft_executor_destroy(hint_ex);
}
