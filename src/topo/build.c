/* From a backend's raw description to a weft_topology (topo.h): keep the
 * listed CPUs, number packages, cores, caches and nodes by their OS numbers,
 * and lay every group's CPU list out in one array. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"
#include "topo/topo.h"


static bool contains(const int *sorted, unsigned n, int v) {
    return bsearch(&v, sorted, n, sizeof *sorted, weft__topo_cmp_int) != NULL;
}

static int cmp_raw_cpu(const void *a, const void *b) {
    const weft__raw_cpu *x = a, *y = b;
    return (x->os > y->os) - (x->os < y->os);
}

void weft_topology_destroy(weft_topology *t) {
    if (!t) return;
    weft__free(t->cpu, (size_t)t->ncpus * sizeof *t->cpu);
    weft__free(t->os_to_cpu, (size_t)t->max_os * sizeof *t->os_to_cpu);
    for (int g = 0; g < 4; g++) weft__free(t->group[g], (size_t)t->ngroup[g] * sizeof *t->group[g]);
    weft__free(t->ids, (size_t)t->nids * sizeof *t->ids);
    weft__free(t, sizeof *t);
}

/* Listed CPUs: raw's CPUs in allowed, sorted by OS number, each once. */
static int list_cpus(weft_topology *t, const weft__topo_raw *raw, const int *allowed, unsigned nallowed,
                     weft__raw_cpu **out) {
    weft__raw_cpu *c = weft__alloc((raw->ncpus ? raw->ncpus : 1) * sizeof *c);
    if (!c) return WEFT_ENOMEM;
    unsigned n = 0;
    for (unsigned i = 0; i < raw->ncpus; i++)
        if (!allowed || contains(allowed, nallowed, raw->cpus[i].os)) c[n++] = raw->cpus[i];
    if (n > 1) qsort(c, n, sizeof *c, cmp_raw_cpu);
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (k == 0 || c[i].os != c[k - 1].os) c[k++] = c[i];
    *out = c;
    t->ncpus = k;
    return k ? 0 : WEFT_ENOENT;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts keys[0..n) and drops repeats; returns how many are left. */
static unsigned distinct(int64_t *keys, unsigned n) {
    if (n > 1) qsort(keys, n, sizeof *keys, cmp_i64);
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (k == 0 || keys[i] != keys[k - 1]) keys[k++] = keys[i];
    return k;
}

static unsigned key_index(const int64_t *keys, unsigned n, int64_t key) {
    const int64_t *p = bsearch(&key, keys, n, sizeof *keys, cmp_i64);
    return (unsigned)(p - keys);
}

static int64_t core_key(const weft__raw_cpu *c) { return ((int64_t)c->pkg << 32) | (uint32_t)c->core; }

/* Packages and cores: numbered in increasing (package, core) order; a CPU's
 * SMT rank counts the CPUs of its core with lower OS numbers. */
static int number_cores(weft_topology *t, const weft__raw_cpu *c) {
    unsigned n = t->ncpus;
    int64_t *pk = weft__alloc(n * sizeof *pk), *ck = weft__alloc(n * sizeof *ck);
    unsigned *smt = weft__calloc(n * sizeof *smt);
    int st = pk && ck && smt ? 0 : WEFT_ENOMEM;
    if (st == 0) {
        for (unsigned i = 0; i < n; i++) pk[i] = c[i].pkg, ck[i] = core_key(&c[i]);
        unsigned np = distinct(pk, n), nc = distinct(ck, n);
        t->group[WEFT__G_PKG] = weft__calloc(np * sizeof(weft__tgroup));
        t->group[WEFT__G_CORE] = weft__calloc(nc * sizeof(weft__tgroup));
        if (t->group[WEFT__G_PKG]) t->ngroup[WEFT__G_PKG] = np;
        if (t->group[WEFT__G_CORE]) t->ngroup[WEFT__G_CORE] = nc;
        st = t->group[WEFT__G_PKG] && t->group[WEFT__G_CORE] ? 0 : WEFT_ENOMEM;
        for (unsigned i = 0; st == 0 && i < np; i++) t->group[WEFT__G_PKG][i].os = (int)pk[i];
        for (unsigned i = 0; st == 0 && i < nc; i++) {
            weft__tgroup *g = &t->group[WEFT__G_CORE][i];
            g->os = (int)(int32_t)(uint32_t)ck[i];
            if (g->os < 0) g->os = -1; /* a CPU whose core_id is unknown: a core of its own (topo.h) */
            g->parent = key_index(pk, np, ck[i] >> 32);
            t->group[WEFT__G_PKG][g->parent].parent++; /* the package's core count */
        }
        for (unsigned i = 0; st == 0 && i < n; i++) {
            t->cpu[i].pkg = key_index(pk, np, c[i].pkg);
            t->cpu[i].core = key_index(ck, nc, core_key(&c[i]));
            t->cpu[i].smt = smt[t->cpu[i].core]++;
        }
    }
    weft__free(pk, n * sizeof *pk);
    weft__free(ck, n * sizeof *ck);
    weft__free(smt, n * sizeof *smt);
    return st;
}

static int cpu_of(const weft_topology *t, int os) {
    return os >= 0 && os < t->max_os ? t->os_to_cpu[os] : -1;
}

/* How many of set's CPUs are listed. */
static unsigned listed_in(const weft_topology *t, const weft__raw_set *set) {
    unsigned n = 0;
    for (unsigned i = 0; i < set->ncpus; i++) n += cpu_of(t, set->cpus[i]) >= 0;
    return n;
}

static int cmp_node(const void *a, const void *b) {
    const weft__raw_set *x = *(const weft__raw_set *const *)a, *y = *(const weft__raw_set *const *)b;
    return (x->os > y->os) - (x->os < y->os);
}

/* NUMA nodes in OS order; every listed CPU must be in one, else the nodes
 * are not believed and one node holds every CPU. */
static int number_nodes(weft_topology *t, const weft__topo_raw *raw) {
    unsigned n = raw->nnodes;
    const weft__raw_set **order = weft__alloc((n ? n : 1) * sizeof *order);
    if (!order) return WEFT_ENOMEM;
    for (unsigned i = 0; i < n; i++) order[i] = &raw->nodes[i];
    if (n > 1) qsort(order, n, sizeof *order, cmp_node);
    for (unsigned i = 0; i < t->ncpus; i++) t->cpu[i].node = UINT32_MAX;
    unsigned kept = 0, missing = 0;
    uint64_t memory = 0;
    for (unsigned i = 0; i < n; i++) {
        if (kept && order[i]->os == order[kept - 1]->os) continue; /* the same node twice */
        order[kept] = order[i];
        memory += order[i]->bytes;
        for (unsigned j = 0; j < order[i]->ncpus; j++) {
            int c = cpu_of(t, order[i]->cpus[j]);
            if (c >= 0 && t->cpu[c].node == UINT32_MAX) t->cpu[c].node = kept;
        }
        kept++;
    }
    for (unsigned i = 0; i < t->ncpus; i++) missing += t->cpu[i].node == UINT32_MAX;
    if (missing && kept) weft__log(WEFT_LOG_WARN, "topology: %u CPUs in no NUMA node; one node is assumed", missing);
    if (missing) kept = 0;
    unsigned count = kept ? kept : 1;
    weft__tgroup *g = weft__calloc(count * sizeof *g);
    if (!g) {
        weft__free(order, (n ? n : 1) * sizeof *order);
        return WEFT_ENOMEM;
    }
    t->group[WEFT__G_NODE] = g;
    t->ngroup[WEFT__G_NODE] = count;
    for (unsigned i = 0; i < kept; i++) g[i].os = order[i]->os, g[i].bytes = order[i]->bytes;
    if (!kept) {
        g[0].bytes = memory;
        for (unsigned i = 0; i < t->ncpus; i++) t->cpu[i].node = 0;
    }
    weft__free(order, (n ? n : 1) * sizeof *order);
    return 0;
}

static int cmp_cache(const void *a, const void *b) {
    const weft__tgroup *x = a, *y = b;
    if (x->level != y->level) return x->level < y->level ? -1 : 1;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first); /* first: its first listed CPU's index, for now */
}

/* Caches with at least one listed CPU, sorted; their CPU lists are filled in
 * layout(), which needs the raw sets again: raw_index remembers them. */
static int number_caches(weft_topology *t, const weft__topo_raw *raw) {
    unsigned n = 0;
    for (unsigned i = 0; i < raw->ncaches; i++) n += listed_in(t, &raw->caches[i]) > 0;
    if (n == 0) return 0;
    weft__tgroup *g = weft__calloc(n * sizeof *g);
    if (!g) return WEFT_ENOMEM;
    t->group[WEFT__G_CACHE] = g;
    t->ngroup[WEFT__G_CACHE] = n;
    unsigned k = 0;
    for (unsigned i = 0; i < raw->ncaches; i++) {
        const weft__raw_set *c = &raw->caches[i];
        unsigned listed = listed_in(t, c);
        if (!listed) continue;
        unsigned first = 0;
        while (cpu_of(t, c->cpus[first]) < 0) first++;
        g[k++] = (weft__tgroup){.os = (int)i, /* the raw index until layout() */
                                .level = c->level, .type = c->type, .bytes = c->bytes, .line = c->line,
                                .ways = c->ways, .first = (unsigned)cpu_of(t, c->cpus[first]), .n = listed};
    }
    if (n > 1) qsort(g, n, sizeof *g, cmp_cache);
    return 0;
}

/* Gives each package, core and node its slice of ids[] (from *next on) and
 * fills it with its CPUs in OS order. */
static void layout_by_cpu(weft_topology *t, int kind, unsigned *next) {
    weft__tgroup *g = t->group[kind];
    unsigned n = t->ngroup[kind];
    for (unsigned i = 0; i < n; i++) g[i].n = 0;
    for (unsigned i = 0; i < t->ncpus; i++) {
        const weft__tcpu *c = &t->cpu[i];
        g[kind == WEFT__G_PKG ? c->pkg : kind == WEFT__G_CORE ? c->core : c->node].n++;
    }
    for (unsigned i = 0; i < n; i++) {
        g[i].first = *next;
        *next += g[i].n;
        g[i].n = 0;
    }
    for (unsigned i = 0; i < t->ncpus; i++) {
        const weft__tcpu *c = &t->cpu[i];
        weft__tgroup *x = &g[kind == WEFT__G_PKG ? c->pkg : kind == WEFT__G_CORE ? c->core : c->node];
        t->ids[x->first + x->n++] = c->os;
    }
}

/* Each cache's listed CPUs, and each CPU's L1d/L2/L3. */
static void layout_caches(weft_topology *t, const weft__topo_raw *raw, unsigned *next) {
    for (unsigned i = 0; i < t->ncpus; i++) t->cpu[i].cache[0] = t->cpu[i].cache[1] = t->cpu[i].cache[2] = -1;
    for (unsigned k = 0; k < t->ngroup[WEFT__G_CACHE]; k++) {
        weft__tgroup *g = &t->group[WEFT__G_CACHE][k];
        const weft__raw_set *set = &raw->caches[g->os];
        g->os = -1;
        g->first = *next;
        g->n = 0;
        for (unsigned j = 0; j < set->ncpus; j++) {
            int c = cpu_of(t, set->cpus[j]);
            if (c < 0) continue;
            t->ids[g->first + g->n++] = set->cpus[j];
            if (g->level <= 3 && g->type != WEFT_CACHE_INSTRUCTION) t->cpu[c].cache[g->level - 1] = (int)k;
        }
        *next += g->n;
    }
}

static int layout(weft_topology *t, const weft__topo_raw *raw) {
    size_t total = 3 * (size_t)t->ncpus; /* packages, cores and nodes each hold every CPU once */
    for (unsigned k = 0; k < t->ngroup[WEFT__G_CACHE]; k++) total += t->group[WEFT__G_CACHE][k].n;
    t->ids = weft__alloc(total * sizeof *t->ids);
    if (!t->ids) return WEFT_ENOMEM;
    t->nids = (unsigned)total;
    unsigned next = 0;
    layout_by_cpu(t, WEFT__G_PKG, &next);
    layout_by_cpu(t, WEFT__G_CORE, &next);
    layout_by_cpu(t, WEFT__G_NODE, &next);
    layout_caches(t, raw, &next);
    return 0;
}

static int map_os(weft_topology *t, const weft__raw_cpu *c) {
    t->max_os = c[t->ncpus - 1].os + 1;
    t->os_to_cpu = weft__alloc((size_t)t->max_os * sizeof *t->os_to_cpu);
    t->cpu = weft__calloc((size_t)t->ncpus * sizeof *t->cpu);
    if (!t->os_to_cpu || !t->cpu) return WEFT_ENOMEM;
    for (int os = 0; os < t->max_os; os++) t->os_to_cpu[os] = -1;
    for (unsigned i = 0; i < t->ncpus; i++) {
        t->cpu[i].os = c[i].os;
        t->os_to_cpu[c[i].os] = (int)i;
    }
    return 0;
}

int weft__topo_build(const weft__topo_raw *raw, const int *allowed, unsigned nallowed, unsigned quota,
                     const char *backend, weft_topology **out) {
    *out = NULL;
    weft_topology *t = weft__calloc(sizeof *t);
    if (!t) return WEFT_ENOMEM;
    t->backend = backend;
    weft__raw_cpu *c = NULL;
    size_t csize = (raw->ncpus ? raw->ncpus : 1) * sizeof *c;
    int st = list_cpus(t, raw, allowed, nallowed, &c);
    if (st == 0) st = map_os(t, c);
    if (st == 0) st = number_cores(t, c);
    if (st == 0) st = number_nodes(t, raw);
    if (st == 0) st = number_caches(t, raw);
    if (st == 0) st = layout(t, raw);
    weft__free(c, csize);
    if (st) {
        if (!t->cpu) t->ncpus = 0; /* list_cpus counted them, map_os failed to make room */
        weft_topology_destroy(t);
        return st;
    }
    t->usable = quota && quota < t->ncpus ? quota : t->ncpus;
    *out = t;
    return 0;
}
