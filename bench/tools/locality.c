/* weft-locality — steal tiers and data owned by an L3 domain.
 * SPDX-License-Identifier: MIT
 *
 *   weft-locality [--fake DOMAINS CORES] [--seeds N] [--children N]
 *
 * 1. Victim order.  On a machine of DOMAINS L3 domains of CORES cores
 *    (written as a fake sysfs tree, weft_topology_config.sysfs_root) or on
 *    this machine, one worker per CPU placed by WEFT_PLACE_L3_DOMAIN: each
 *    worker's steal tiers (weft_topology_steal_tiers), and the share of a
 *    thief's first tries that stay in its own L3 with tiers against random
 *    victims.  Runs anywhere: it is the order, not a speed.
 * 2. Domain-owned data (this machine only).  Seed tasks each take the L3
 *    domain of the worker that runs them, and spawn children that each sum
 *    a slice of that domain's block (allocated on the domain's NUMA node with
 *    weft_numa_alloc); a child run by a worker of another L3 reads its data
 *    across domains.  Run with no placement (random stealing) and with
 *    l3_domain placement (bound workers steal by tiers): the time, and how
 *    many children ran in their data's domain.  On a machine with one L3 both
 *    are 100%: it shows that tiers cost nothing there.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <weft.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* ---- a fake tree: DOMAINS L3s of CORES one-thread cores, one package, one
 * node; only the files the sysfs backend needs ---- */

static void put(const char *root, const char *rel, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = path + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(path, 0755);
            *s = '/';
        }
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

static char *fake_tree(int domains, int cores) {
    static char root[] = "/tmp/weft-locality-XXXXXX";
    if (!mkdtemp(root)) return NULL;
    int n = domains * cores;
    char rel[256], text[64];
    snprintf(text, sizeof text, "0-%d\n", n - 1);
    put(root, "sys/devices/system/cpu/online", text);
    put(root, "sys/devices/system/node/node0/cpulist", text);
    put(root, "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       16777216 kB\n");
    for (int c = 0; c < n; c++) {
        int d = c / cores;
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        put(root, rel, "0\n");
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/topology/core_id", c);
        snprintf(text, sizeof text, "%d\n", c);
        put(root, rel, text);
        snprintf(text, sizeof text, "%d-%d\n", d * cores, d * cores + cores - 1);
        static const char *const files[] = {"level", "type", "size", "coherency_line_size",
                                            "ways_of_associativity", "shared_cpu_list"};
        const char *values[] = {"3\n", "Unified\n", "32768K\n", "64\n", "16\n", text};
        for (int k = 0; k < 6; k++) {
            snprintf(rel, sizeof rel, "sys/devices/system/cpu/cpu%d/cache/index0/%s", c, files[k]);
            put(root, rel, values[k]);
        }
    }
    return root;
}

/* The L3 domains: the distinct caches CPUs use at level 3, numbered 0.. in
 * the order of their cache index. */
static int l3_ids[256];
static unsigned nl3;

static void find_l3s(const weft_topology *t) {
    nl3 = 0;
    for (unsigned i = 0; i < weft_topology_cpu_count(t); i++) {
        weft_cpu_info c;
        if (weft_topology_cpu(t, i, &c) != WEFT_OK || c.cache[2] < 0) continue;
        unsigned k = 0;
        while (k < nl3 && l3_ids[k] != c.cache[2]) k++;
        if (k == nl3 && nl3 < 256) l3_ids[nl3++] = c.cache[2];
    }
}

/* The L3 domain of the CPU the OS numbers os (-1: none known). */
static int l3_of(const weft_topology *t, int os) {
    int i = weft_topology_cpu_index(t, os);
    weft_cpu_info c;
    if (i < 0 || weft_topology_cpu(t, (unsigned)i, &c) != WEFT_OK) return -1;
    for (unsigned k = 0; k < nl3; k++)
        if (l3_ids[k] == c.cache[2]) return (int)k;
    return -1;
}

static void victim_order(const weft_topology *t, const char *what) {
    unsigned w = weft_topology_cpu_count(t);
    int *cpus = calloc(w, sizeof *cpus);
    unsigned *victims = calloc(w, sizeof *victims);
    weft_placement_config pc = {.strategy = WEFT_PLACE_L3_DOMAIN};
    if (!cpus || !victims || w < 2 || weft_topology_place(t, &pc, w, cpus) != WEFT_OK) {
        printf("%s: %u CPUs, no victim order to show\n", what, w);
        free(cpus), free(victims);
        return;
    }
    double tiered = 0, random_share = 0;
    printf("%s: %u workers placed l3_domain (%s)\n", what, w, weft_topology_backend(t));
    for (unsigned self = 0; self < w; self++) {
        unsigned end[WEFT_TIERS];
        if (weft_topology_steal_tiers(t, cpus, w, self, victims, end) != WEFT_OK) continue;
        /* A thief's first try: in its first non-empty tier with tiers, any
         * other worker at random without. */
        unsigned same = 0;
        for (unsigned v = 0; v < w - 1; v++) same += l3_of(t, cpus[victims[v]]) == l3_of(t, cpus[self]);
        random_share += (double)same / (w - 1);
        tiered += end[WEFT_TIER_L3] > 0 ? 1.0 : 0.0;
        if (self < 3 || self == w - 1) {
            printf("  w%-3u cpu %-3d L3 %d: tiers", self, cpus[self], l3_of(t, cpus[self]));
            unsigned lo = 0;
            for (int k = 0; k < WEFT_TIERS; k++) {
                printf(" [");
                for (unsigned v = lo; v < end[k] && v < lo + 6; v++) printf(" w%u", victims[v]);
                if (end[k] - lo > 6) printf(" ... %u in all", end[k] - lo);
                printf(" ]");
                lo = end[k];
            }
            printf("\n");
        }
    }
    printf("  first steal try in the thief's own L3: tiers %.0f%%, random %.1f%%\n", 100 * tiered / w,
           100 * random_share / w);
    free(cpus), free(victims);
}

/* ---- domain-owned data on this machine ---- */

enum { SLICE = 64 * 1024 }; /* bytes a child sums */
static const weft_topology *machine;
static int *worker_l3;            /* L3 of each worker's CPU, or -1 unbound */
static unsigned nworkers, children;
static char **blocks;             /* one per L3 */
static _Atomic uint64_t local_runs, all_runs, sink;

typedef struct child { int l3; unsigned slice; } child;
static child *child_args;
static _Atomic unsigned next_child;

static int my_l3(weft_ctx *ctx) {
    int id = weft_ctx_worker_id(ctx);
    return id >= 0 && worker_l3[id] >= 0 ? worker_l3[id] : -1;
}

static int run_child(weft_ctx *ctx, void *arg) {
    child *c = arg;
    const uint64_t *p = (const uint64_t *)(blocks[c->l3] + (size_t)c->slice * SLICE);
    uint64_t s = 0;
    for (size_t i = 0; i < SLICE / sizeof *p; i++) s += p[i];
    atomic_fetch_add_explicit(&sink, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&local_runs, my_l3(ctx) == c->l3, memory_order_relaxed);
    atomic_fetch_add_explicit(&all_runs, 1, memory_order_relaxed);
    return 0;
}

static int run_seed(weft_ctx *ctx, void *arg) {
    (void)arg;
    int l3 = my_l3(ctx);
    if (l3 < 0) l3 = weft_ctx_worker_id(ctx) % (int)nl3; /* unbound: a domain by worker */
    for (unsigned k = 0; k < children; k++) {
        child *c = &child_args[atomic_fetch_add(&next_child, 1)];
        *c = (child){l3, k};
        if (weft_silent_async(weft_ctx_executor(ctx), run_child, c) != WEFT_OK) run_child(ctx, c);
    }
    return 0;
}

static void domain_run(weft_placement strategy, const char *name, unsigned seeds) {
    weft_placement_config pc = {.strategy = strategy};
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.placement = &pc}, NULL);
    if (!ex) {
        printf("  %-10s: executor create failed (%s)\n", name, weft_last_error_message());
        return;
    }
    nworkers = weft_executor_workers(ex);
    int *cpus = calloc(nworkers, sizeof *cpus);
    worker_l3 = calloc(nworkers, sizeof *worker_l3);
    if (strategy != WEFT_PLACE_NONE && weft_topology_place(machine, &pc, nworkers, cpus) == WEFT_OK)
        for (unsigned i = 0; i < nworkers; i++) worker_l3[i] = l3_of(machine, cpus[i]);
    else
        for (unsigned i = 0; i < nworkers; i++) worker_l3[i] = -1;
    child_args = calloc((size_t)seeds * children, sizeof *child_args);
    atomic_store(&next_child, 0);
    atomic_store(&local_runs, 0);
    atomic_store(&all_runs, 0);
    double best = 1e30;
    for (int rep = -1; rep < 5; rep++) { /* -1: warm-up, not counted */
        atomic_store(&next_child, 0);
        double t0 = now_ms();
        for (unsigned s = 0; s < seeds; s++)
            if (weft_silent_async(ex, run_seed, NULL) != WEFT_OK) break;
        (void)weft_executor_wait_all(ex);
        double dt = now_ms() - t0;
        if (rep >= 0 && dt < best) best = dt;
        if (rep < 0) atomic_store(&local_runs, 0), atomic_store(&all_runs, 0);
    }
    uint64_t all = atomic_load(&all_runs), local = atomic_load(&local_runs);
    printf("  %-10s: best of 5 %.2f ms, children in their data's L3: %.1f%%%s\n", name, best,
           all ? 100.0 * (double)local / (double)all : 0.0, strategy == WEFT_PLACE_NONE ? " (unbound: unknown, counted as not)" : "");
    free(child_args), free(cpus), free(worker_l3);
    weft_executor_destroy(ex);
}

int main(int argc, char **argv) {
    unsigned seeds = 64, domains = 4, cores = 8;
    bool fake = false;
    children = 32;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fake") && i + 2 < argc) {
            fake = true;
            domains = (unsigned)atoi(argv[++i]);
            cores = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            seeds = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--children") && i + 1 < argc) {
            children = (unsigned)atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--fake DOMAINS CORES] [--seeds N] [--children N]\n", argv[0]);
            return 2;
        }
    }
    if (fake) {
        char *root = fake_tree((int)domains, (int)cores);
        weft_topology *t = NULL;
        if (!root || weft_topology_detect(&(weft_topology_config){.sysfs_root = root}, &t) != WEFT_OK) {
            fprintf(stderr, "cannot write or read the fake tree\n");
            return 1;
        }
        char what[64];
        snprintf(what, sizeof what, "fake machine %u L3 x %u cores", domains, cores);
        find_l3s(t);
        victim_order(t, what);
        weft_topology_destroy(t);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
        return 0;
    }
    weft_topology *t = NULL;
    if (weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t) != WEFT_OK) return 1;
    machine = t;
    find_l3s(t);
    victim_order(t, "this machine");
    if (nl3 == 0) l3_ids[nl3++] = -1; /* no L3 known: one domain */
    blocks = calloc(nl3, sizeof *blocks);
    for (unsigned d = 0; d < nl3; d++) {
        /* The L3's node: that of its first CPU. */
        unsigned node = 0;
        for (unsigned i = 0; i < weft_topology_cpu_count(t); i++) {
            weft_cpu_info c;
            if (weft_topology_cpu(t, i, &c) == WEFT_OK && c.cache[2] == l3_ids[d]) {
                node = c.numa_node;
                break;
            }
        }
        weft_numa_outcome how;
        if (weft_numa_alloc(t, (size_t)children * SLICE, node, (void **)&blocks[d], &how) != WEFT_OK) return 1;
        memset(blocks[d], 1, (size_t)children * SLICE);
    }
    printf("domain-owned data: %u seeds x %u children of %u KiB, %u L3 domain(s)\n", seeds, children, SLICE / 1024, nl3);
    domain_run(WEFT_PLACE_NONE, "none", seeds);
    domain_run(WEFT_PLACE_L3_DOMAIN, "l3_domain", seeds);
    for (unsigned d = 0; d < nl3; d++) weft_numa_free(blocks[d], (size_t)children * SLICE);
    free(blocks);
    weft_topology_destroy(t);
    return 0;
}
