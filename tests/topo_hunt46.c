/* Topology, adversarial round 46: the process's machine detected by many
 * threads at once on first use, topologies queried from many threads at
 * once, bound executors made and destroyed from several threads with work in
 * flight. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>
#include <weft/topology.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 6 };

static pthread_barrier_t gate;
static const weft_topology *shared_topo;

/* Everything one thread can ask a topology, folded into a number: the same
 * topology must give the same number on every thread. */
static unsigned long fold(const weft_topology *t) {
    unsigned long h = weft_topology_cpu_count(t) * 1000003ul + weft_topology_core_count(t) * 101ul +
                      weft_topology_cache_count(t) * 7ul + weft_topology_numa_node_count(t);
    for (unsigned i = 0; i < weft_topology_cpu_count(t); i++) {
        weft_cpu_info c;
        if (weft_topology_cpu(t, i, &c) != WEFT_OK) return 0;
        h = h * 31 + (unsigned long)c.os_index * 7 + c.core * 5 + c.numa_node + (unsigned long)(c.cache[2] + 1);
        if (weft_topology_cpu_index(t, c.os_index) != (int)i) return 0;
        if (weft_topology_numa_node_for_cpu(t, c.os_index) != (int)c.numa_node) return 0;
    }
    int cpus[8];
    weft_placement strategies[] = {WEFT_PLACE_COMPACT, WEFT_PLACE_SCATTER, WEFT_PLACE_NUMA_ROUND_ROBIN,
                                   WEFT_PLACE_L3_DOMAIN};
    for (unsigned s = 0; s < 4; s++) {
        if (weft_topology_place(t, &(weft_placement_config){.strategy = strategies[s]}, 8, cpus) != WEFT_OK) return 0;
        for (int i = 0; i < 8; i++) h = h * 17 + (unsigned long)cpus[i];
        unsigned victims[7], ends[WEFT_TIERS];
        if (weft_topology_steal_tiers(t, cpus, 8, s, victims, ends) != WEFT_OK) return 0;
        for (int i = 0; i < 7; i++) h = h * 13 + victims[i];
    }
    return h;
}

struct first_use {
    unsigned long folded;
    weft_status numa, where, hint;
    unsigned node;
};

static void *first_use_thread(void *arg) {
    struct first_use *r = arg;
    pthread_barrier_wait(&gate);
    /* The process's machine (topo NULL), detected on first use by whichever
     * thread comes first, and every other reading it. */
    void *p = NULL;
    weft_numa_outcome how;
    r->numa = weft_numa_alloc(NULL, 3 * 4096, 0, &p, &how);
    if (p) {
        memset(p, 1, 3 * 4096);
        r->where = weft_numa_node_of_address(NULL, p, &r->node);
        weft_numa_free(p, 3 * 4096);
    }
    r->hint = weft_algo_set_numa_node(WEFT_NUMA_NODE(0), NULL);
    /* One topology, many readers (topology.h: wait-free plain reads). */
    for (int i = 0; i < 20; i++) {
        unsigned long f = fold(shared_topo);
        if (i == 0) r->folded = f;
        else if (f != r->folded) r->folded = 0;
    }
    return NULL;
}

/* topology.h: "every query below may be called from any number of threads at
 * once"; weft_numa_alloc and weft_numa_node_of_address with topo NULL detect
 * the machine once per process: threads racing to be first all get it. */
TEST(the_process_machine_detected_by_many_threads_at_once_and_one_topology_read_by_all_agree) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t));
    shared_topo = t;
    unsigned long want = fold(t);
    ASSERT_NE(want, 0);
    pthread_barrier_init(&gate, NULL, THREADS);
    pthread_t th[THREADS];
    struct first_use r[THREADS];
    memset(r, 0, sizeof r);
    for (int i = 0; i < THREADS; i++) ASSERT_EQ(pthread_create(&th[i], NULL, first_use_thread, &r[i]), 0);
    for (int i = 0; i < THREADS; i++) ASSERT_EQ(pthread_join(th[i], NULL), 0);
    pthread_barrier_destroy(&gate);
    for (int i = 0; i < THREADS; i++) {
        ASSERT_OK(r[i].numa);
        /* Touched pages are on a node (ESYS: a kernel without NUMA calls). */
        ASSERT_TRUE(r[i].where == WEFT_OK || r[i].where == WEFT_ESYS);
        if (r[i].where == WEFT_OK) ASSERT_LT(r[i].node, weft_topology_numa_node_count(t));
        ASSERT_OK(r[i].hint);
        ASSERT_EQ(r[i].folded, want);
    }
    weft_topology_destroy(t);
}

/* ---- bound executors made and destroyed by several threads --------------------- */

static int bump(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

struct churn {
    int index;
    int bad;
};

static void *churn_thread(void *arg) {
    struct churn *c = arg;
    weft_placement strategies[] = {WEFT_PLACE_COMPACT, WEFT_PLACE_SCATTER, WEFT_PLACE_PHYSICAL_CORES,
                                   WEFT_PLACE_NUMA_ROUND_ROBIN};
    for (int round = 0; round < 6; round++) {
        weft_status st;
        weft_placement_config pc = {.strategy = strategies[(c->index + round) % 4]};
        weft_executor_config cfg = {.workers = 3};
        if (round % 2) cfg.affinity = WEFT_AFFINITY_CPUS;
        else cfg.placement = &pc;
        weft_executor *ex = weft_executor_create(&cfg, &st);
        if (!ex) {
            c->bad = 1;
            return NULL;
        }
        atomic_int ran = 0;
        for (int i = 0; i < 300; i++)
            if (weft_silent_async(ex, bump, &ran) != WEFT_OK) c->bad = 2;
        /* Destroyed with most of them still queued or running: destroy waits
         * for them (core.h), so every one has run once it returns. */
        weft_executor_destroy(ex);
        if (atomic_load(&ran) != 300) c->bad = 3;
    }
    return NULL;
}

/* core.h and topology.h: executors whose workers are bound (a placement, or
 * WEFT_AFFINITY_CPUS), made and destroyed from several threads at once with
 * their tasks in flight, run every task exactly once and stop cleanly. */
TEST(bound_executors_made_and_destroyed_from_several_threads_with_tasks_in_flight_run_each_task_once) {
    pthread_t th[4];
    struct churn c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (struct churn){.index = i};
        ASSERT_EQ(pthread_create(&th[i], NULL, churn_thread, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) ASSERT_EQ(pthread_join(th[i], NULL), 0);
    for (int i = 0; i < 4; i++) ASSERT_EQ(c[i].bad, 0);
}

/* ---- hwloc's detection short of memory ---------------------- */

#include "counting_alloc.h"

/* topology.h: detection fails with WEFT_ENOMEM and *out NULL when memory runs
 * out, and keeps nothing.  topo_hunt41 failed hwloc's first ten allocations
 * only; this fails each of them (sampled past 30), the build from hwloc's
 * objects (caches, nodes, their CPU lists) included.  Under ASan, LeakSanitizer
 * checks that hwloc's own topology is destroyed on each failure too. */
TEST(hwloc_detection_with_each_allocation_failing_in_turn_is_enomem_and_keeps_nothing) {
    weft_topology *t;
    weft_topology_config hc = {.source = WEFT_TOPOLOGY_HWLOC, .all_cpus = true};
    if (weft_topology_detect(&hc, &t) != WEFT_OK) SKIP("no hwloc");
    weft_topology_destroy(t);
    weft_set_allocator(&counting);
    fail_allocation(0);
    ASSERT_OK(weft_topology_detect(&hc, &t));
    long total = atomic_load(&A.calls);
    unsigned long want = fold(t);
    weft_topology_destroy(t);
    if (getenv("HUNT_VERBOSE")) fprintf(stderr, "hwloc detection: %ld allocations\n", total);
    long step = total > 30 ? total / 30 : 1;
    for (long n = 1; n <= total + 1; n += step) {
        fail_allocation(n);
        t = (weft_topology *)1;
        weft_status st = weft_topology_detect(&hc, &t);
        long failed = atomic_load(&A.failures);
        fail_allocation(0);
        if (failed) {
            ASSERT_STATUS(st, WEFT_ENOMEM);
            ASSERT_NULL(t);
        } else {
            ASSERT_OK(st);
            ASSERT_EQ(fold(t), want);
            weft_topology_destroy(t);
        }
        ASSERT_EQ(atomic_load(&A.outstanding), 0);
    }
    weft_set_allocator(NULL);
}
