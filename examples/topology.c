/* What weft sees of this machine, and where it would put 8 workers.
 *
 *     ./topology            the machine, as detected by default
 *     ./topology sysfs      the same through sysfs only (hwloc: through hwloc)
 *     ./topology --time     how long detection takes with each backend
 *
 * It then runs an executor placed round robin over the NUMA nodes, with steal
 * attempts per tier and bounded local queues, and 100 async tasks hinted to
 * the last node, and says where they ran.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft.h>

static void print_cpus(const int *cpus, unsigned n) {
    for (unsigned i = 0; i < n; i++) printf("%s%d", i ? "," : "", cpus[i]);
}

static void print_machine(const weft_topology *t) {
    printf("backend %s: %u CPUs (%u usable), %u packages, %u cores, %u NUMA nodes\n", weft_topology_backend(t),
           weft_topology_cpu_count(t), weft_topology_usable_cpus(t), weft_topology_package_count(t),
           weft_topology_core_count(t), weft_topology_numa_node_count(t));
    for (unsigned i = 0; i < weft_topology_numa_node_count(t); i++) {
        weft_numa_node_info n;
        if (weft_topology_numa_node(t, i, &n) != WEFT_OK) continue;
        printf("  node %d: %llu MiB, CPUs ", n.os_index, (unsigned long long)(n.memory >> 20));
        print_cpus(n.cpus, n.ncpus);
        printf("\n");
    }
    static const char *const types[] = {"", "d", "i"};
    for (unsigned i = 0; i < weft_topology_cache_count(t); i++) {
        weft_cache_info c;
        if (weft_topology_cache(t, i, &c) != WEFT_OK || c.level < 2) continue; /* L1s: one per core */
        printf("  L%u%s %llu KiB, %u-byte lines, %d-way, CPUs ", c.level, types[c.type],
               (unsigned long long)(c.size >> 10), c.line_size, c.ways);
        print_cpus(c.cpus, c.ncpus);
        printf("\n");
    }
}

static void print_placements(const weft_topology *t) {
    static const struct { weft_placement s; const char *name; } strategies[] = {
        {WEFT_PLACE_COMPACT, "compact"},         {WEFT_PLACE_PHYSICAL_CORES, "physical_cores"},
        {WEFT_PLACE_SCATTER, "scatter"},         {WEFT_PLACE_NUMA_DENSE, "numa_dense"},
        {WEFT_PLACE_NUMA_ROUND_ROBIN, "numa_rr"}, {WEFT_PLACE_L3_DOMAIN, "l3_domain"}};
    int cpus[8];
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        weft_placement_config c = {.strategy = strategies[i].s};
        if (weft_topology_place(t, &c, 8, cpus) != WEFT_OK) continue;
        printf("  %-15s workers on CPUs ", strategies[i].name);
        print_cpus(cpus, 8);
        printf("\n");
    }
    unsigned victims[7], end[WEFT_TIERS];
    weft_placement_config scatter = {.strategy = WEFT_PLACE_SCATTER};
    if (weft_topology_place(t, &scatter, 8, cpus) == WEFT_OK &&
        weft_topology_steal_tiers(t, cpus, 8, 0, victims, end) == WEFT_OK)
        printf("  worker 0 (scatter) steals from: %u in its L3, then %u more in its node, then %u others\n",
               end[WEFT_TIER_L3], end[WEFT_TIER_NUMA] - end[WEFT_TIER_L3], end[WEFT_TIER_REST] - end[WEFT_TIER_NUMA]);
}

/* ---- an executor that uses the machine's shape ---- */

enum { HINTED = 100 };
static weft_executor *ex;
static int worker_node[64]; /* each worker's NUMA node, from the placement */
static int ran_on[HINTED];

static int where_am_i(weft_ctx *ctx, void *arg) {
    (void)ctx;
    int id = weft_executor_worker_id(ex);
    ran_on[(size_t)arg] = id >= 0 ? worker_node[id] : -1;
    return 0;
}

static void run_hinted(const weft_topology *t) {
    unsigned workers = weft_topology_usable_cpus(t), nodes = weft_topology_numa_node_count(t);
    if (workers > 64) workers = 64;
    weft_placement_config rr = {.strategy = WEFT_PLACE_NUMA_ROUND_ROBIN};
    int cpus[64];
    if (weft_topology_place(t, &rr, workers, cpus) != WEFT_OK) return;
    for (unsigned i = 0; i < workers; i++) worker_node[i] = weft_topology_numa_node_for_cpu(t, cpus[i]);
    weft_status st;
    ex = weft_executor_create(&(weft_executor_config){.workers = workers, .placement = &rr,
                                                      .steal_attempts = {4, 2, 1}, /* L3, node, rest */
                                                      .local_queue_capacity = 256},
                              &st);
    if (!ex) {
        printf("no executor: %s\n", weft_strerror(st));
        return;
    }
    unsigned last = nodes - 1; /* 0 on a one-node machine: the hint changes nothing */
    weft_async_options o = {.numa_node = WEFT_NUMA_NODE(last)};
    for (size_t i = 0; i < HINTED; i++)
        if (weft_async_with(ex, where_am_i, (void *)i, &o, NULL) != WEFT_OK) ran_on[i] = -2;
    (void)weft_executor_wait_all(ex);
    int there = 0;
    for (int i = 0; i < HINTED; i++) there += ran_on[i] == (int)last;
    printf("%u workers placed numa_round_robin: %d of %d tasks hinted to node %u ran there\n", workers, there,
           HINTED, last);
    weft_executor_destroy(ex);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and minimum of `reps` detections with one source. */
static void time_source(weft_topology_source source, const char *name, int reps) {
    double t[200];
    for (int i = 0; i < reps; i++) {
        weft_topology *topo;
        double t0 = now_us();
        weft_status st = weft_topology_detect(&(weft_topology_config){.source = source}, &topo);
        t[i] = now_us() - t0;
        if (st != WEFT_OK) {
            printf("%-6s not available: %s\n", name, weft_strerror(st));
            return;
        }
        weft_topology_destroy(topo);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("%-6s detection: median %.0f us, min %.0f us (%d runs)\n", name, t[reps / 2], t[0], reps);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--time") == 0) {
        time_source(WEFT_TOPOLOGY_SYSFS, "sysfs", 200);
        time_source(WEFT_TOPOLOGY_HWLOC, "hwloc", 20);
        return 0;
    }
    weft_topology_config config = {0};
    if (argc > 1) config.source = strcmp(argv[1], "hwloc") == 0 ? WEFT_TOPOLOGY_HWLOC : WEFT_TOPOLOGY_SYSFS;
    weft_topology *t;
    weft_status st = weft_topology_detect(&config, &t);
    if (st != WEFT_OK) {
        fprintf(stderr, "topology: %s\n", weft_strerror(st));
        return 1;
    }
    print_machine(t);
    printf("8 workers:\n");
    print_placements(t);
    run_hinted(t);
    weft_topology_destroy(t);
    return 0;
}
