/* The topology layer's hook into executors (core/layer.h): a bound worker
 * tries its victims in tiers, same L3 first, then same NUMA node, then the
 * rest, each tier as many times as weft_executor_config.steal_attempts says.
 *
 * Only executors whose workers are bound (WEFT_AFFINITY_CPUS: each worker owns
 * a CPU, w->cpu) get tiers; an unbound worker moves between CPUs, so where its
 * victims are says nothing.  A machine where every worker lands in one tier
 * (one L3, as on the 2-core dev VM) keeps the core's plain random loop: no
 * call, no cost.  The topology is detected once per process, through sysfs
 * unless WEFT_TOPOLOGY=hwloc (hwloc costs milliseconds per executor otherwise),
 * listing every online CPU, and kept until exit. */
#include <stdatomic.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/env.h"
#include "core/error_detail.h"
#include "core/layer.h"
#include "core/log.h"
#include "platform/platform.h" /* weft__getenv */
#include "topo/topo.h"
#include "topo/topo_layer.h"

static _Atomic(weft_topology *) machine;

/* The process's topology, detected on first use; NULL when detection fails
 * (then no tiers: the executor works as without this layer). */
static weft_topology *process_topology(void) {
    weft_topology *t = atomic_load_explicit(&machine, memory_order_acquire);
    if (t) return t;
    static const char *const words[] = {"auto", "sysfs", "hwloc", NULL};
    weft_topology_config c = {.source = WEFT_TOPOLOGY_SYSFS, .all_cpus = true};
    if (weft__env_choice("WEFT_TOPOLOGY", words, "auto") == 2) c.source = WEFT_TOPOLOGY_AUTO; /* hwloc, else sysfs */
    if (weft_topology_detect(&c, &t) != WEFT_OK) return NULL;
    weft_topology *expected = NULL;
    /* Two executors created at once may both detect: one copy wins, the
     * other is freed.  The release publishes the finished structure. */
    if (!atomic_compare_exchange_strong_explicit(&machine, &expected, t, memory_order_acq_rel, memory_order_acquire)) {
        weft_topology_destroy(t);
        t = expected;
    }
    return t;
}

const weft_topology *weft__topo_machine(void) { return process_topology(); }

void weft__topo_layer_set_machine(weft_topology *t) {
    weft_topology_destroy(atomic_exchange_explicit(&machine, t, memory_order_acq_rel));
}

/* The tiers for worker w, empty ones dropped (the core wants each tier to
 * hold a victim); 0 when the worker has a single tier or on a failure. */
static unsigned tiers_of(const weft_topology *t, const int *cpus, unsigned n, unsigned self, unsigned *victims,
                         unsigned *ends, const unsigned *attempts, unsigned *tries) {
    unsigned end[WEFT_TIERS], k = 0;
    if (weft_topology_steal_tiers(t, cpus, n, self, victims, end) != WEFT_OK) return 0;
    for (int i = 0; i < WEFT_TIERS; i++)
        if (end[i] > (k ? ends[k - 1] : 0)) {
            unsigned len = end[i] - (k ? ends[k - 1] : 0);
            tries[k] = attempts[i] ? attempts[i] : len; /* 0: each victim once */
            ends[k++] = end[i];
        }
    return k > 1 ? k : 0;
}

/* Whether some tier's tries differ from its size (else the core's default). */
static bool tries_differ(const unsigned *ends, const unsigned *tries, unsigned k) {
    for (unsigned i = 0; i < k; i++)
        if (tries[i] != ends[i] - (i ? ends[i - 1] : 0)) return true;
    return false;
}

static int set_tiers(weft_executor *ex, const weft_topology *t, const unsigned *attempts) {
    unsigned n = ex->nworkers;
    int *cpus = weft__alloc(n * sizeof *cpus);
    unsigned *victims = weft__alloc(n * sizeof *victims);
    int st = cpus && victims ? 0 : WEFT_ENOMEM;
    for (unsigned i = 0; st == 0 && i < n; i++) cpus[i] = ex->workers[i].cpu;
    for (unsigned i = 0; st == 0 && i < n; i++) {
        unsigned ends[WEFT_TIERS], tries[WEFT_TIERS];
        unsigned k = tiers_of(t, cpus, n, i, victims, ends, attempts, tries);
        if (k) st = weft__worker_set_victims(&ex->workers[i], victims, n - 1, ends, k);
        if (k && st == 0 && tries_differ(ends, tries, k)) st = weft__worker_set_tier_tries(&ex->workers[i], tries);
    }
    weft__free(cpus, n * sizeof *cpus);
    weft__free(victims, n * sizeof *victims);
    return st;
}

/* Mailboxes for NUMA hints (core/layer.h) when the bound workers span more
 * than one node; one node: hints have nothing to choose, nothing is set. */
static int set_nodes(weft_executor *ex, const weft_topology *t) {
    unsigned nnodes = weft_topology_numa_node_count(t), n = ex->nworkers;
    int *node = weft__alloc(n * sizeof *node);
    if (!node) return WEFT_ENOMEM;
    int first = -2;
    bool several = false;
    for (unsigned i = 0; i < n; i++) {
        node[i] = weft_topology_numa_node_for_cpu(t, ex->workers[i].cpu);
        if (node[i] >= 0 && first != -2 && node[i] != first) several = true;
        if (node[i] >= 0 && first == -2) first = node[i];
    }
    int st = several ? weft__executor_set_nodes(ex, node, nnodes) : 0;
    weft__free(node, n * sizeof *node);
    return st;
}

int weft__topo_place_workers(weft_executor *ex, weft_placement strategy) {
    return weft__topo_place_workers_as(ex, &(weft_placement_config){.strategy = strategy});
}

int weft__topo_place_workers_as(weft_executor *ex, const weft_placement_config *pc) {
    if (pc->strategy == WEFT_PLACE_NONE) return 0;
    /* The creating thread's mask (and cgroup cpuset) decide which CPUs may be
     * used, so this detection lists the mask, unlike the process's machine. */
    weft_topology *t;
    int st = weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t);
    int *cpus = st == 0 ? weft__alloc(ex->nworkers * sizeof *cpus) : NULL;
    if (st == 0 && !cpus) st = WEFT_ENOMEM;
    if (st == 0) st = weft_topology_place(t, pc, ex->nworkers, cpus);
    for (unsigned i = 0; st == 0 && i < ex->nworkers; i++) ex->workers[i].cpu = cpus[i];
    if (st == 0) ex->bound = true;
    weft__free(cpus, ex->nworkers * sizeof *cpus);
    weft_topology_destroy(t);
    return st;
}

/* WEFT_PLACEMENT: a strategy by name (env rule: a bad value is warned about
 * once and means none).  WEFT_AFFINITY's strategy names count only where the
 * config left `affinity` to the environment: the core leaves it
 * WEFT_AFFINITY_DEFAULT for them alone (core/executor.c), and an explicit
 * WEFT_AFFINITY_NONE or _CPUS is the program's choice (weft/core.h). */
static weft_placement placement_from_env(weft_affinity affinity) {
    static const char *const words[] = {"none", "compact", "physical_cores", "scatter", "numa_dense",
                                        "numa_round_robin", "l3_domain", "sparse", NULL};
    int k = weft__env_choice("WEFT_PLACEMENT", words, "\"none\"");
    if (k <= 0) {
        /* WEFT_AFFINITY takes the same names (the seed's); "cpus" and "none"
         * are the core's, and a bad word was warned about there. */
        const char *a = affinity == WEFT_AFFINITY_DEFAULT ? weft__getenv("WEFT_AFFINITY") : NULL;
        for (int i = 1; a && words[i]; i++)
            if (strcasecmp(a, words[i]) == 0) k = i;
    }
    return k == 7 ? WEFT_PLACE_SCATTER : k > 0 ? (weft_placement)k : WEFT_PLACE_NONE;
}

static int topo_executor_init(weft_executor *ex, const weft_executor_config *config) {
    /* Placement first: the tiers are computed from the CPUs it gives.  Asked
     * for in the config, a placement that cannot be made fails the create
     * (a NUMA node that does not exist, a strategy out of range); asked for in
     * the environment, it is warned about and the workers run as they would. */
    if (config->placement) {
        if ((unsigned)config->placement->strategy > WEFT_PLACE_L3_DOMAIN)
            return weft__fail("weft_executor_create", WEFT_EINVAL,
                              "config->placement->strategy %d is not a weft_placement",
                              (int)config->placement->strategy);
        int st = weft__topo_place_workers_as(ex, config->placement);
        /* Nodes with no CPU to run on are a config the program got wrong, as
         * a node that does not exist is: WEFT_EINVAL, the status weft/core.h
         * gives a placement that cannot be made (WEFT_ENOENT is
         * weft_topology_place's own, not one create may return). */
        if (st == WEFT_ENOENT) st = WEFT_EINVAL;
        if (st) /* weft_topology_place said why, if it was the one */
            return *weft_last_error_message() ? st : weft__fail("weft_executor_create", (weft_status)st,
                                                               "config->placement cannot be made: %s",
                                                               weft_strerror((weft_status)st));
    } else {
        weft_placement p = placement_from_env(config->affinity);
        int st = p == WEFT_PLACE_NONE ? 0 : weft__topo_place_workers(ex, p);
        if (st)
            weft__log(WEFT_LOG_WARN, "WEFT_PLACEMENT: the workers cannot be placed (%s); they run unbound",
                      weft_strerror(st));
    }
    if (!ex->bound) return 0;
    const weft_topology *t = process_topology();
    if (!t) return 0;
    if (set_nodes(ex, t) != 0) weft__log(WEFT_LOG_WARN, "topology: out of memory; NUMA hints are ignored");
    if (ex->nworkers < 3) return 0; /* two workers: one victim, one tier */
    _Static_assert(sizeof config->steal_attempts / sizeof config->steal_attempts[0] == WEFT_TIERS,
                   "one steal_attempts entry per tier");
    int st = set_tiers(ex, t, config->steal_attempts);
    if (st) weft__log(WEFT_LOG_WARN, "topology: no steal tiers (%s); workers steal at random", weft_strerror(st));
    return 0; /* tiers are an optimisation: never a reason to fail a create */
}

weft__layer weft__topo_layer = {.name = "topo", .executor_init = topo_executor_init};
