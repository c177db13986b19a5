/* Placement strategies and steal tiers (weft/topology.h): pure functions of a
 * topology, so that the executor, tests and users get the same answers.
 *
 * Every strategy is a sort: each CPU gets a key (a few small numbers drawn from
 * its package, node, L3, core and SMT rank) and worker w takes the w-th CPU in
 * key order.  "Cores first" orders come from the SMT rank being the most
 * significant part of the key; round-robin over groups (nodes, L3 domains)
 * comes from a CPU's rank inside its group being more significant than the
 * group itself. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "platform/files.h"
#include "topo/topo.h"
#include "core/error_detail.h"

enum { KEYS = 6 };
typedef struct keyed {
    int k[KEYS];
    int os;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    for (int i = 0; i < KEYS; i++)
        if (x->k[i] != y->k[i]) return x->k[i] < y->k[i] ? -1 : 1;
    return (x->os > y->os) - (x->os < y->os);
}

/* Where a CPU is, with the ranks that round-robin and scatter orders need. */
typedef struct where {
    int pkg, node, l3, core, smt;
    int rank_in_node, rank_in_l3; /* position in its group's cores-first order */
    int core_in_l3, l3_in_pkg;    /* its core's rank in its L3; its L3's rank in its package */
} where;

static void set_key(keyed *e, int a, int b, int c, int d, int f, int g) {
    int k[KEYS] = {a, b, c, d, f, g};
    memcpy(e->k, k, sizeof k);
}

static void key_for(keyed *e, const where *w, weft_placement s) {
    switch (s) {
    case WEFT_PLACE_PHYSICAL_CORES: set_key(e, w->smt, w->pkg, w->node, w->l3, w->core, 0); break;
    case WEFT_PLACE_SCATTER: set_key(e, w->smt, w->core_in_l3, w->l3_in_pkg, w->pkg, w->node, w->core); break;
    case WEFT_PLACE_NUMA_DENSE: set_key(e, w->node, w->smt, w->pkg, w->l3, w->core, 0); break;
    case WEFT_PLACE_NUMA_ROUND_ROBIN: set_key(e, w->rank_in_node, w->node, 0, 0, 0, 0); break;
    case WEFT_PLACE_L3_DOMAIN: set_key(e, w->rank_in_l3, w->l3, 0, 0, 0, 0); break;
    default: set_key(e, w->pkg, w->node, w->l3, w->core, w->smt, 0); break; /* COMPACT */
    }
}

/* Counters indexed by a group number that may be -1 (no L3): slot g + 1. */
typedef struct counters {
    int *v;
    size_t n;
} counters;

static bool counters_init(counters *c, size_t n) {
    c->n = n + 1;
    c->v = weft__calloc(c->n * sizeof *c->v);
    return c->v != NULL;
}
static int counters_next(counters *c, int g) { return c->v[g + 1]++; }
static void counters_free(counters *c) { weft__free(c->v, c->n * sizeof *c->v); }

/* Fills the ranks of w[0..n), whose CPUs are listed in e[] in COMPACT order on
 * entry (e[i].os indexes w via cpu index); leaves e[] sorted cores-first. */
static int rank_cpus(const weft_topology *t, keyed *e, unsigned n, where *w) {
    counters node, l3, core_l3, l3_pkg;
    int *l3_rank = weft__alloc(((size_t)t->ngroup[WEFT__G_CACHE] + 1) * sizeof *l3_rank);
    bool ok = counters_init(&node, t->ngroup[WEFT__G_NODE]) & counters_init(&l3, t->ngroup[WEFT__G_CACHE]) &
              counters_init(&core_l3, t->ngroup[WEFT__G_CACHE]) & counters_init(&l3_pkg, t->ngroup[WEFT__G_PKG]);
    if (ok && l3_rank) {
        for (unsigned i = 0; i <= t->ngroup[WEFT__G_CACHE]; i++) l3_rank[i] = -1;
        for (unsigned i = 0; i < n; i++) { /* COMPACT order: cores and L3s in order of appearance */
            where *x = &w[t->os_to_cpu[e[i].os]];
            if (x->smt == 0) x->core_in_l3 = counters_next(&core_l3, x->l3);
            if (l3_rank[x->l3 + 1] < 0) l3_rank[x->l3 + 1] = counters_next(&l3_pkg, x->pkg);
            x->l3_in_pkg = l3_rank[x->l3 + 1];
        }
        for (unsigned i = 0; i < n; i++) {
            where *x = &w[t->os_to_cpu[e[i].os]];
            if (x->smt) x->core_in_l3 = w[t->os_to_cpu[t->ids[t->group[WEFT__G_CORE][x->core].first]]].core_in_l3;
            key_for(&e[i], x, WEFT_PLACE_PHYSICAL_CORES);
        }
        if (n > 1) qsort(e, n, sizeof *e, cmp_keyed);
        for (unsigned i = 0; i < n; i++) {
            where *x = &w[t->os_to_cpu[e[i].os]];
            x->rank_in_node = counters_next(&node, x->node);
            x->rank_in_l3 = counters_next(&l3, x->l3);
        }
    }
    weft__free(l3_rank, ((size_t)t->ngroup[WEFT__G_CACHE] + 1) * sizeof *l3_rank);
    counters_free(&node), counters_free(&l3), counters_free(&core_l3), counters_free(&l3_pkg);
    return ok && l3_rank ? 0 : WEFT_ENOMEM;
}

/* WEFT_OK, or WEFT_EINVAL with a message (naming `call`) that says which
 * field is wrong: "does not fit this topology" left the user to guess, and an
 * executor's create passes the message on (topo/layer.c). */
static weft_status check_config(const char *call, const weft_topology *t, const weft_placement_config *c) {
    if ((unsigned)c->strategy > WEFT_PLACE_L3_DOMAIN)
        return weft__fail(call, WEFT_EINVAL, "placement strategy %d is not a weft_placement", (int)c->strategy);
    if (c->numa_node_count && !c->numa_nodes)
        return weft__fail(call, WEFT_EINVAL, "placement numa_nodes is NULL with numa_node_count %u",
                          c->numa_node_count);
    for (unsigned i = 0; i < c->numa_node_count; i++)
        if (c->numa_nodes[i] >= t->ngroup[WEFT__G_NODE])
            return weft__fail(call, WEFT_EINVAL, "placement numa_nodes[%u] is %u; the topology has %u NUMA node%s", i,
                              c->numa_nodes[i], t->ngroup[WEFT__G_NODE], t->ngroup[WEFT__G_NODE] == 1 ? "" : "s");
    return WEFT_OK;
}

/* order_cpus's failure, named: WEFT_ENOENT is a config whose nodes have no
 * CPU (none listed, or memory-only nodes, or nodes outside the mask). */
static weft_status order_failed(const char *call, const weft_placement_config *c, int st) {
    if (st != WEFT_ENOENT) return weft__fail_st(call, (weft_status)st);
    if (c->numa_node_count == 0)
        return weft__fail(call, WEFT_ENOENT, "placement numa_nodes is not NULL but numa_node_count is 0: no NUMA node "
                                             "is chosen, so no CPU");
    return weft__fail(call, WEFT_ENOENT, "none of the %u NUMA node%s in placement numa_nodes has a CPU in the topology "
                                         "(a memory-only node, or its CPUs outside the affinity mask)",
                      c->numa_node_count, c->numa_node_count == 1 ? "" : "s");
}

static bool node_chosen(const weft_placement_config *c, unsigned node) {
    if (!c->numa_nodes) return true;
    for (unsigned i = 0; i < c->numa_node_count; i++)
        if (c->numa_nodes[i] == node) return true;
    return false;
}

/* The chosen CPUs in the strategy's order: (*out)[0..*n), OS numbers. */
static int order_cpus(const weft_topology *t, const weft_placement_config *c, keyed **out, unsigned *n) {
    keyed *e = weft__alloc((size_t)t->ncpus * sizeof *e);
    where *w = weft__calloc((size_t)t->ncpus * sizeof *w);
    int st = e && w ? 0 : WEFT_ENOMEM;
    unsigned k = 0;
    for (unsigned i = 0; st == 0 && i < t->ncpus; i++) {
        const weft__tcpu *cpu = &t->cpu[i];
        w[i] = (where){.pkg = (int)cpu->pkg, .node = (int)cpu->node, .l3 = cpu->cache[2], .core = (int)cpu->core,
                       .smt = (int)cpu->smt};
        if (!node_chosen(c, cpu->node)) continue;
        e[k].os = cpu->os;
        key_for(&e[k++], &w[i], WEFT_PLACE_COMPACT);
    }
    if (st == 0 && k == 0) st = WEFT_ENOENT;
    if (st == 0) {
        if (k > 1) qsort(e, k, sizeof *e, cmp_keyed);
        st = rank_cpus(t, e, k, w);
    }
    for (unsigned i = 0; st == 0 && i < k; i++) key_for(&e[i], &w[t->os_to_cpu[e[i].os]], c->strategy);
    if (st == 0 && k > 1) qsort(e, k, sizeof *e, cmp_keyed);
    weft__free(w, (size_t)t->ncpus * sizeof *w);
    if (st) {
        weft__free(e, (size_t)t->ncpus * sizeof *e);
        return st;
    }
    *out = e;
    *n = k;
    return 0;
}

weft_status weft_topology_place(const weft_topology *t, const weft_placement_config *config, unsigned workers,
                                int *cpus) {
    if (!t || !cpus || workers == 0) return weft__fail(__func__, WEFT_EINVAL, "t or cpus is NULL or workers is 0");
    weft_placement_config c = config ? *config : (weft_placement_config){0};
    int st = check_config(__func__, t, &c);
    if (st) return (weft_status)st;
    if (c.strategy == WEFT_PLACE_NONE) {
        for (unsigned i = 0; i < workers; i++) cpus[i] = -1;
        return WEFT_OK;
    }
    keyed *e;
    unsigned n;
    st = order_cpus(t, &c, &e, &n);
    if (st) return order_failed(__func__, &c, st);
    for (unsigned i = 0; i < workers; i++) cpus[i] = e[i % n].os;
    weft__free(e, (size_t)t->ncpus * sizeof *e);
    return WEFT_OK;
}

weft_status weft_topology_worker_cpu(const weft_topology *t, const weft_placement_config *config, unsigned worker,
                                     unsigned workers, int *cpu) {
    if (!t || !cpu || worker >= workers)
        return weft__fail(__func__, WEFT_EINVAL, "t or cpu is NULL, or worker %u is not below workers %u", worker,
                          workers);
    weft_placement_config c = config ? *config : (weft_placement_config){0};
    int st = check_config(__func__, t, &c);
    if (st) return (weft_status)st;
    if (c.strategy == WEFT_PLACE_NONE) {
        *cpu = -1;
        return WEFT_OK;
    }
    keyed *e;
    unsigned n;
    st = order_cpus(t, &c, &e, &n);
    if (st) return order_failed(__func__, &c, st);
    *cpu = e[worker % n].os;
    weft__free(e, (size_t)t->ncpus * sizeof *e);
    return WEFT_OK;
}

weft_status weft_thread_bind(const int *cpus, size_t n) {
    int st = weft__thread_bind_cpus(cpus, n);
    return st == 0 ? WEFT_OK : weft__fail_st(__func__, (weft_status)st);
}

/* ---- steal tiers ---- */

static int tier_of(const weft_topology *t, int self, int other) {
    int a = weft_topology_cpu_index(t, self), b = weft_topology_cpu_index(t, other);
    if (a < 0 || b < 0) return WEFT_TIER_REST;
    const weft__tcpu *x = &t->cpu[a], *y = &t->cpu[b];
    if (x->cache[2] >= 0 && x->cache[2] == y->cache[2]) return WEFT_TIER_L3;
    return x->node == y->node ? WEFT_TIER_NUMA : WEFT_TIER_REST;
}

weft_status weft_topology_steal_tiers(const weft_topology *t, const int *cpus, unsigned workers, unsigned self,
                                      unsigned *victims, unsigned tier_end[WEFT_TIERS]) {
    if (!t || !cpus || !victims || !tier_end || workers == 0 || self >= workers)
        return weft__fail(__func__, WEFT_EINVAL, "a pointer is NULL, workers is 0, or self %u is not below workers %u",
                          self, workers);
    unsigned count[WEFT_TIERS] = {0}, pos[WEFT_TIERS];
    for (unsigned w = 0; w < workers; w++)
        if (w != self) count[tier_of(t, cpus[self], cpus[w])]++;
    pos[0] = 0;
    for (int k = 1; k < WEFT_TIERS; k++) pos[k] = pos[k - 1] + count[k - 1];
    for (int k = 0; k < WEFT_TIERS; k++) tier_end[k] = pos[k] + count[k];
    for (unsigned w = 0; w < workers; w++)
        if (w != self) victims[pos[tier_of(t, cpus[self], cpus[w])]++] = w;
    return WEFT_OK;
}
