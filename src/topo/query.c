/* Queries on a detected topology (weft/topology.h): plain reads of a
 * structure that never changes after detection. */
#include "topo/topo.h"
#include "core/error_detail.h"

const char *weft_topology_backend(const weft_topology *t) { return t ? t->backend : ""; }

unsigned weft_topology_cpu_count(const weft_topology *t) { return t ? t->ncpus : 0; }

unsigned weft_topology_usable_cpus(const weft_topology *t) { return t ? t->usable : 0; }

weft_status weft_topology_cpu(const weft_topology *t, unsigned i, weft_cpu_info *out) {
    if (!t || !out || i >= t->ncpus)
        return weft__fail(__func__, WEFT_EINVAL, "t or out is NULL, or CPU %u is out of range", i);
    const weft__tcpu *c = &t->cpu[i];
    *out = (weft_cpu_info){.os_index = c->os, .package = c->pkg, .core = c->core, .smt = c->smt,
                           .numa_node = c->node, .cache = {c->cache[0], c->cache[1], c->cache[2]}};
    return WEFT_OK;
}

int weft_topology_cpu_index(const weft_topology *t, int os) {
    return t && os >= 0 && os < t->max_os ? t->os_to_cpu[os] : -1;
}

int weft_topology_numa_node_for_cpu(const weft_topology *t, int cpu) {
    int i = weft_topology_cpu_index(t, cpu);
    return i < 0 ? -1 : (int)t->cpu[i].node;
}

static unsigned group_count(const weft_topology *t, int kind) { return t ? t->ngroup[kind] : 0; }

static const weft__tgroup *group(const weft_topology *t, int kind, unsigned i, const void *out) {
    return t && out && i < t->ngroup[kind] ? &t->group[kind][i] : NULL;
}

unsigned weft_topology_package_count(const weft_topology *t) { return group_count(t, WEFT__G_PKG); }
unsigned weft_topology_core_count(const weft_topology *t) { return group_count(t, WEFT__G_CORE); }
unsigned weft_topology_cache_count(const weft_topology *t) { return group_count(t, WEFT__G_CACHE); }
unsigned weft_topology_numa_node_count(const weft_topology *t) { return group_count(t, WEFT__G_NODE); }

weft_status weft_topology_package(const weft_topology *t, unsigned i, weft_package_info *out) {
    const weft__tgroup *g = group(t, WEFT__G_PKG, i, out);
    if (!g) return weft__fail(__func__, WEFT_EINVAL, "t or out is NULL, or index %u is out of range", i);
    *out = (weft_package_info){.os_index = g->os, .ncores = g->parent, .cpus = t->ids + g->first, .ncpus = g->n};
    return WEFT_OK;
}

weft_status weft_topology_core(const weft_topology *t, unsigned i, weft_core_info *out) {
    const weft__tgroup *g = group(t, WEFT__G_CORE, i, out);
    if (!g) return weft__fail(__func__, WEFT_EINVAL, "t or out is NULL, or index %u is out of range", i);
    *out = (weft_core_info){.os_index = g->os, .package = g->parent, .cpus = t->ids + g->first, .ncpus = g->n};
    return WEFT_OK;
}

weft_status weft_topology_cache(const weft_topology *t, unsigned i, weft_cache_info *out) {
    const weft__tgroup *g = group(t, WEFT__G_CACHE, i, out);
    if (!g) return weft__fail(__func__, WEFT_EINVAL, "t or out is NULL, or index %u is out of range", i);
    *out = (weft_cache_info){.level = g->level, .type = (weft_cache_type)g->type, .size = g->bytes,
                             .line_size = g->line, .ways = g->ways, .cpus = t->ids + g->first, .ncpus = g->n};
    return WEFT_OK;
}

weft_status weft_topology_numa_node(const weft_topology *t, unsigned i, weft_numa_node_info *out) {
    const weft__tgroup *g = group(t, WEFT__G_NODE, i, out);
    if (!g) return weft__fail(__func__, WEFT_EINVAL, "t or out is NULL, or index %u is out of range", i);
    *out = (weft_numa_node_info){.os_index = g->os, .memory = g->bytes, .cpus = t->ids + g->first, .ncpus = g->n};
    return WEFT_OK;
}
