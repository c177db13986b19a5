/* Session 41's hunt in topology and placement (weft/topology.h, the
 * executor's affinity and placement): binding to CPUs the machine lacks,
 * bound workers outnumbering the CPUs, and where workers run in a child
 * made by fork() from a bound worker. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fork_util.h"
#include "harness.h"

#include <weft.h>
#include <weft/topology.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

static cpu_set_t my_mask(void) {
    cpu_set_t s;
    CPU_ZERO(&s);
    ASSERT_EQ(sched_getaffinity(0, sizeof s, &s), 0);
    return s;
}

/* The first OS number above every CPU of the machine. */
static int absent_cpu(void) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.all_cpus = true, .source = WEFT_TOPOLOGY_SYSFS}, &t));
    weft_cpu_info last;
    ASSERT_OK(weft_topology_cpu(t, weft_topology_cpu_count(t) - 1, &last));
    weft_topology_destroy(t);
    return last.os_index + 1;
}

TEST(binding_to_cpus_the_machine_lacks_fails_and_leaves_the_mask_alone) {
    cpu_set_t before = my_mask();
    int absent = absent_cpu();
    int bad[][1] = {{absent}, {8191}};
    for (int i = 0; i < 2; i++) {
        if (bad[i][0] < absent) continue;
        ASSERT_STATUS(weft_thread_bind(bad[i], 1), WEFT_ESYS);
        cpu_set_t now = my_mask();
        ASSERT_TRUE(CPU_EQUAL(&now, &before));
    }
    int out_of_range[][1] = {{8192}, {-1}, {INT32_MIN}, {INT32_MAX}};
    for (int i = 0; i < 4; i++) {
        ASSERT_STATUS(weft_thread_bind(out_of_range[i], 1), WEFT_EINVAL);
        cpu_set_t now = my_mask();
        ASSERT_TRUE(CPU_EQUAL(&now, &before));
    }
    int first = 0;
    while (!CPU_ISSET(first, &before)) first++;
    /* An absent CPU next to a present one: the thread runs on the present one. */
    int mixed[] = {absent, first, first};
    ASSERT_OK(weft_thread_bind(mixed, 3));
    cpu_set_t now = my_mask();
    ASSERT_EQ(CPU_COUNT(&now), 1);
    ASSERT_TRUE(CPU_ISSET(first, &now));
    ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}

/* ---- bound workers, more than CPUs ------------------------------------------ */

static atomic_int off_cpu, ran;
struct where_ran {
    weft_executor *ex;
    int cpu_of[64]; /* per worker: the one CPU of its mask, or -2 for a wider mask */
};

static int note_worker_mask(weft_ctx *cx, void *arg) {
    struct where_ran *w = arg;
    int id = weft_ctx_worker_id(cx);
    cpu_set_t s = my_mask();
    int cpu = -2;
    if (CPU_COUNT(&s) == 1)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &s)) cpu = c;
    if (id >= 0 && id < 64) w->cpu_of[id] = cpu;
    if (cpu >= 0 && sched_getcpu() != cpu) atomic_fetch_add(&off_cpu, 1);
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* Runs enough tasks that every worker is likely to run one; returns how many
 * distinct workers did. */
static void sample_workers(weft_executor *ex, struct where_ran *w, int tasks) {
    for (int i = 0; i < 64; i++) w->cpu_of[i] = -1;
    atomic_store(&ran, 0);
    for (int i = 0; i < tasks; i++) ASSERT_OK(weft_silent_async(ex, note_worker_mask, w));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), tasks);
}

TEST(cpus_affinity_with_more_workers_than_cpus_binds_them_in_turn_and_runs_every_task) {
    cpu_set_t mask = my_mask();
    int n = CPU_COUNT(&mask), nth[64], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < 64; c++)
        if (CPU_ISSET(c, &mask)) nth[k++] = c;
    weft_status st;
    unsigned workers = (unsigned)(2 * n + 1);
    if (workers > 64) SKIP("more than 31 CPUs");
    weft_executor *ex =
        weft_executor_create(&(weft_executor_config){.workers = workers, .affinity = WEFT_AFFINITY_CPUS}, &st);
    ASSERT_OK(st);
    struct where_ran w;
    atomic_store(&off_cpu, 0);
    sample_workers(ex, &w, 3000);
    for (unsigned i = 0; i < workers; i++)
        if (w.cpu_of[i] != -1 && w.cpu_of[i] != nth[i % (unsigned)n])
            TEST_FAIL_("worker %u runs on %d, not CPU %d", i, w.cpu_of[i], nth[i % (unsigned)n]);
    ASSERT_EQ(atomic_load(&off_cpu), 0);
    weft_executor_destroy(ex);
}

/* ---- fork() from a bound worker ----------------------------------------------- */

struct fork_job {
    weft_executor *parent;
    int status; /* the child's exit status, or -1 */
    int bound_to;
};

/* In the child (its only thread was a worker bound to one CPU): the parent's
 * executor refuses work; an executor of its own runs tasks, its workers on
 * every CPU of the process (not the forking worker's one), and a
 * WEFT_AFFINITY_CPUS one binds its workers to distinct CPUs. */
static int child_main(weft_executor *parent, int bound_to, int process_cpus) {
    cpu_set_t m = my_mask();
    if (CPU_COUNT(&m) != 1 || !CPU_ISSET(bound_to, &m)) return 10;
    if (weft_silent_async(parent, note_worker_mask, NULL) != WEFT_EFORKED) return 11;
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    if (!ex) return 12;
    struct where_ran w;
    for (int i = 0; i < 64; i++) w.cpu_of[i] = -1;
    atomic_store(&ran, 0);
    for (int i = 0; i < 200; i++)
        if (weft_silent_async(ex, note_worker_mask, &w) != WEFT_OK) return 13;
    if (weft_executor_wait_all(ex) != WEFT_OK || atomic_load(&ran) != 200) return 14;
    for (int i = 0; i < 2; i++)
        if (w.cpu_of[i] >= 0 && process_cpus > 1) return 15; /* inherited the forking worker's pin */
    weft_executor_destroy(ex);
    ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_CPUS}, &st);
    if (!ex) return 16;
    for (int i = 0; i < 64; i++) w.cpu_of[i] = -1;
    atomic_store(&ran, 0);
    atomic_store(&off_cpu, 0);
    for (int i = 0; i < 400; i++)
        if (weft_silent_async(ex, note_worker_mask, &w) != WEFT_OK) return 17;
    if (weft_executor_wait_all(ex) != WEFT_OK || atomic_load(&ran) != 400) return 18;
    if (atomic_load(&off_cpu) != 0) return 19;
    if (process_cpus > 1 && w.cpu_of[0] >= 0 && w.cpu_of[0] == w.cpu_of[1]) return 20; /* two workers, one CPU */
    weft_executor_destroy(ex);
    return 0;
}

static int fork_here(weft_ctx *cx, void *arg) {
    struct fork_job *j = arg;
    cpu_set_t m = my_mask();
    j->bound_to = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &m)) j->bound_to = c;
    int process_cpus = CPU_COUNT(&m);
    (void)process_cpus;
    pid_t pid = fork();
    if (pid == 0) _exit(child_main(j->parent, j->bound_to, (int)weft_executor_workers(j->parent)));
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) j->status = -1;
    else j->status = WEXITSTATUS(status);
    return 0;
}

TEST(a_child_forked_by_a_bound_worker_runs_its_own_executors_on_every_process_cpu) {
#ifdef __SANITIZE_THREAD__ /* gcc's and clang's -fsanitize=thread */
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    cpu_set_t mask = my_mask();
    if (CPU_COUNT(&mask) < 2) SKIP("one CPU");
    weft_status st;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){.workers = (unsigned)CPU_COUNT(&mask), .affinity = WEFT_AFFINITY_CPUS}, &st);
    ASSERT_OK(st);
    every_worker_started(ex); /* see fork_util.h: no worker is starting at the fork */
    struct fork_job j = {.parent = ex};
    weft_future *f;
    ASSERT_OK(weft_async(ex, fork_here, &j, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    if (j.status != 0) TEST_FAIL_("the child (forked on CPU %d) exited with %d", j.bound_to, j.status);
    weft_executor_destroy(ex);
}

/* core.h: WEFT_AFFINITY_CPUS binds worker i to the i-th CPU of the process's
 * CPUs (the mask at load, the main thread's and the creator's), as the worker
 * count is sized from them: a creator pinned to one CPU does not put every
 * worker on that CPU.  (The header said "the creating thread's mask" from
 * before executors were sized from the process's CPUs, 18f5499.) */
static void *make_cpus_executor_pinned(void *arg) {
    struct where_ran *w = arg;
    cpu_set_t m = my_mask();
    int last = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &m)) last = c;
    ASSERT_OK(weft_thread_bind(&last, 1));
    weft_status st;
    w->ex = weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_CPUS}, &st);
    ASSERT_OK(st);
    return NULL;
}

TEST(cpus_affinity_from_a_pinned_thread_binds_workers_to_the_processs_cpus) {
    cpu_set_t mask = my_mask();
    if (CPU_COUNT(&mask) < 2) SKIP("one CPU");
    int nth[2], k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &mask)) nth[k++] = c;
    struct where_ran w;
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, make_cpus_executor_pinned, &w), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    atomic_store(&off_cpu, 0);
    sample_workers(w.ex, &w, 2000);
    for (int i = 0; i < 2; i++)
        if (w.cpu_of[i] != -1 && w.cpu_of[i] != nth[i])
            TEST_FAIL_("worker %d runs on %d, not CPU %d", i, w.cpu_of[i], nth[i]);
    ASSERT_EQ(atomic_load(&off_cpu), 0);
    weft_executor_destroy(w.ex);
}

/* ---- out of memory ------------------------------------------------------------ */

#include "counting_alloc.h"

/* Detection through each backend, placement and steal tiers, and an executor
 * with a placement, with the nth allocation failing: each call fails with
 * WEFT_ENOMEM (the executor: NULL) or works, and every byte comes back. */
/* What a detection found, in a few numbers: an allocation that fails must not
 * make a detection that succeeds find less (a cache or node left out). */
static uint64_t signature(const weft_topology *t) {
    uint64_t h = weft_topology_cpu_count(t);
    h = h * 131 + weft_topology_package_count(t);
    h = h * 131 + weft_topology_core_count(t);
    h = h * 131 + weft_topology_cache_count(t);
    h = h * 131 + weft_topology_numa_node_count(t);
    for (unsigned i = 0; i < weft_topology_cache_count(t); i++) {
        weft_cache_info c;
        ASSERT_OK(weft_topology_cache(t, i, &c));
        h = h * 131 + c.size + c.level * 7 + c.ncpus;
    }
    for (unsigned i = 0; i < weft_topology_cpu_count(t); i++) {
        weft_cpu_info c;
        ASSERT_OK(weft_topology_cpu(t, i, &c));
        h = h * 131 + (uint64_t)(c.os_index + c.cache[0] * 3 + c.cache[1] * 5 + c.cache[2] * 7 + c.numa_node);
    }
    return h;
}
static uint64_t expected_signature[3];

static weft_status topo_life(weft_topology_source src, bool executor) {
    weft_topology *t = (weft_topology *)1;
    weft_status st = weft_topology_detect(&(weft_topology_config){.source = src, .all_cpus = true}, &t);
    if (st != WEFT_OK) {
        ASSERT_NULL(t);
        return st;
    }
    uint64_t sig = signature(t);
    if (!expected_signature[src]) expected_signature[src] = sig;
    if (sig != expected_signature[src]) TEST_FAIL_("a detection that succeeded found another machine");
    int cpus[5];
    unsigned victims[4], ends[WEFT_TIERS];
    weft_status first = WEFT_OK;
    for (int s = WEFT_PLACE_COMPACT; s <= WEFT_PLACE_L3_DOMAIN; s++) {
        st = weft_topology_place(t, &(weft_placement_config){.strategy = (weft_placement)s}, 5, cpus);
        if (st == WEFT_OK) st = weft_topology_steal_tiers(t, cpus, 5, 1, victims, ends);
        if (st != WEFT_OK && !first) first = st;
    }
    weft_topology_destroy(t);
    if (!executor) return first;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){.workers = 3, .placement = &(weft_placement_config){.strategy = WEFT_PLACE_SCATTER}},
        &st);
    if (!ex && !first) first = st;
    weft_executor_destroy(ex);
    return first;
}

TEST(every_allocation_failing_in_turn_in_detection_and_placement_fails_cleanly_and_leaks_nothing) {
    weft_topology *probe;
    bool hwloc = weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_HWLOC}, &probe) == WEFT_OK;
    if (hwloc) weft_topology_destroy(probe);
    /* The process's machine, detected once and kept until exit, before the
     * counting starts. */
    ASSERT_OK(topo_life(WEFT_TOPOLOGY_SYSFS, true));
    weft_set_allocator(&counting);
    fail_allocation(0);
    ASSERT_OK(topo_life(WEFT_TOPOLOGY_SYSFS, false));
    long before_executor = atomic_load(&A.calls); /* detection, placements and tiers */
    fail_allocation(0);
    ASSERT_OK(topo_life(WEFT_TOPOLOGY_SYSFS, true));
    long total = atomic_load(&A.calls);
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    for (long n = 1; n <= total + 3; n++) {
        fail_allocation(n);
        /* The executor (16 ms a time) only once the failure falls in it. */
        weft_status st = topo_life(WEFT_TOPOLOGY_SYSFS, n > before_executor);
        fail_allocation(0);
        if (st != WEFT_OK && st != WEFT_ENOMEM)
            TEST_FAIL_("allocation %ld of %ld failing: %s", n, total, weft_errname(st));
        if (atomic_load(&A.outstanding) != 0)
            TEST_FAIL_("allocation %ld of %ld failing (%s): %lld bytes not given back", n, total, weft_errname(st),
                       (long long)atomic_load(&A.outstanding));
    }
    /* hwloc's detection alone (60 ms a time): the first allocations, which
     * are its own loader's (hwloc.c, raw.c); the build after them is the one
     * the sysfs sweep above went through. */
    weft_topology_config hc = {.source = WEFT_TOPOLOGY_HWLOC, .all_cpus = true};
    weft_topology *t;
    fail_allocation(0);
    if (hwloc) ASSERT_OK(weft_topology_detect(&hc, &t));
    if (hwloc) weft_topology_destroy(t);
    total = hwloc ? atomic_load(&A.calls) : 0;
    if (getenv("HUNT_VERBOSE")) fprintf(stderr, "hwloc detection: %ld allocations\n", total);
    for (long n = 1; n <= total && n <= 10; n++) {
        fail_allocation(n);
        t = (weft_topology *)1;
        weft_status st = weft_topology_detect(&hc, &t);
        fail_allocation(0);
        ASSERT_STATUS(st, WEFT_ENOMEM);
        ASSERT_NULL(t);
        ASSERT_EQ(atomic_load(&A.outstanding), 0);
    }
    weft_set_allocator(NULL);
}

/* topology.h: without all_cpus, the calling thread's affinity mask decides
 * which CPUs are listed, also when memory runs short: the copy of the mask
 * failing to allocate gave every online CPU (WEFT_OK), so a thread bound to
 * one CPU got a machine of all of them, and an executor's placement could put
 * workers outside the creator's mask. */
static void *detect_pinned_under_failures(void *arg) {
    weft_topology_source src = *(weft_topology_source *)arg;
    cpu_set_t m = my_mask();
    int last = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &m)) last = c;
    ASSERT_OK(weft_thread_bind(&last, 1));
    weft_topology *t;
    fail_allocation(0);
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = src}, &t));
    ASSERT_EQ(weft_topology_cpu_count(t), 1);
    weft_topology_destroy(t);
    long total = atomic_load(&A.calls);
    for (long n = 1; n <= total; n++) {
        fail_allocation(n);
        t = NULL;
        weft_status st = weft_topology_detect(&(weft_topology_config){.source = src}, &t);
        fail_allocation(0);
        if (st == WEFT_OK && weft_topology_cpu_count(t) != 1)
            TEST_FAIL_("%s with allocation %ld of %ld failing: WEFT_OK listing %u CPUs outside the mask {%d}",
                       src == WEFT_TOPOLOGY_HWLOC ? "hwloc" : "sysfs", n, total, weft_topology_cpu_count(t), last);
        if (st == WEFT_OK) weft_topology_destroy(t);
        else ASSERT_STATUS(st, WEFT_ENOMEM);
    }
    return NULL;
}

TEST(a_detection_short_of_memory_lists_only_the_callers_cpus_or_fails) {
    cpu_set_t mask = my_mask();
    if (CPU_COUNT(&mask) < 2) SKIP("one CPU");
    weft_topology *probe;
    bool hwloc = weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_HWLOC}, &probe) == WEFT_OK;
    if (hwloc) weft_topology_destroy(probe);
    weft_set_allocator(&counting);
    weft_topology_source srcs[] = {WEFT_TOPOLOGY_SYSFS, WEFT_TOPOLOGY_HWLOC};
    for (int i = 0; i < 1 + hwloc; i++) {
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, detect_pinned_under_failures, &srcs[i]), 0);
        ASSERT_EQ(pthread_join(th, NULL), 0);
    }
    weft_set_allocator(NULL);
}

/* topology.h, WEFT_PLACE_NUMA_ROUND_ROBIN on nodes of unequal size (a mask
 * leaving 3 CPUs of node 0 and 1 of node 1): the nodes take turns while each
 * has a CPU left for the round; then the one with CPUs left goes on, so every
 * CPU takes a worker before any takes two (the rule every strategy keeps). */
#include "topo/topo.h"
#include "topo_fixture.h"

TEST(numa_round_robin_on_unequal_nodes_alternates_then_fills_before_doubling_up) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    const fake_machine *m = &FAKE_TWO_SOCKET;
    int allowed[] = {fake_os(m, 0, 0, 0), fake_os(m, 0, 1, 0), fake_os(m, 0, 2, 0), fake_os(m, 1, 0, 0)};
    weft_topology *t;
    ASSERT_OK(weft__topology_detect_at(root, allowed, 4, &t));
    ASSERT_EQ(weft_topology_numa_node_count(t), 2);
    int cpus[8];
    ASSERT_OK(weft_topology_place(t, &(weft_placement_config){.strategy = WEFT_PLACE_NUMA_ROUND_ROBIN}, 8, cpus));
    int want[8] = {allowed[0], allowed[3], allowed[1], allowed[2], allowed[0], allowed[3], allowed[1], allowed[2]};
    for (int w = 0; w < 8; w++)
        if (cpus[w] != want[w]) TEST_FAIL_("worker %d on CPU %d, not %d", w, cpus[w], want[w]);
    for (unsigned w = 0; w < 8; w++) {
        int one;
        ASSERT_OK(weft_topology_worker_cpu(t, &(weft_placement_config){.strategy = WEFT_PLACE_NUMA_ROUND_ROBIN}, w,
                                           8, &one));
        ASSERT_EQ(one, cpus[w]);
    }
    weft_topology_destroy(t);
    fake_remove(root);
}
