/* NUMA memory (weft/topology.h): blocks whose pages come from a node, or
 * from several in turn, by the kernel's memory policy (platform/numa.c: raw
 * mbind, no libnuma).  The block itself comes from weft's allocator hook,
 * page-aligned and in whole pages, so a policy covers exactly the block; on
 * a one-node machine or where the kernel refuses, the block is plain memory
 * and the outcome says so: NUMA placement is an optimisation, never a reason
 * for an allocation to fail. */
#include "core/alloc.h"
#include "platform/numa.h"
#include "topo/topo.h"
#include "topo/topo_layer.h"
#include "core/error_detail.h"

static size_t whole_pages(size_t size) {
    size_t page = weft__page_size();
    return (size + page - 1) & ~(page - 1);
}

static const weft_topology *machine_or(const weft_topology *topo) {
    return topo ? topo : weft__topo_machine();
}

/* Allocates the block and sets its policy over the OS nodes os[0..n). */
static weft_status place(const char *fn, const weft_topology *t, size_t size, const int *os, unsigned n,
                         bool interleave, void **out, weft_numa_outcome *outcome) {
    size_t len = whole_pages(size);
    void *p = len < size ? NULL : weft__alloc_aligned(len, weft__page_size()); /* len < size: near SIZE_MAX */
    if (!p) return weft__fail(fn, WEFT_ENOMEM, "%zu bytes could not be allocated", size);
    weft_numa_outcome how = WEFT_NUMA_ONE_NODE;
    if (t->ngroup[WEFT__G_NODE] > 1)
        how = weft__numa_set_policy(p, len, os, n, interleave) == 0 ? WEFT_NUMA_PLACED : WEFT_NUMA_UNPLACED;
    *out = p;
    if (outcome) *outcome = how;
    return WEFT_OK;
}

weft_status weft_numa_alloc(const weft_topology *topo, size_t size, unsigned node, void **out,
                            weft_numa_outcome *outcome) {
    if (!out) return weft__fail(__func__, WEFT_EINVAL, "out is NULL");
    *out = NULL;
    if (size == 0) return weft__fail(__func__, WEFT_EINVAL, "size is 0");
    const weft_topology *t = machine_or(topo);
    if (!t) return weft__fail(__func__, WEFT_ENOENT, "the machine's topology could not be detected");
    if (node >= t->ngroup[WEFT__G_NODE]) return weft__fail(__func__, WEFT_EINVAL, "node %u is out of range", node);
    int os = t->group[WEFT__G_NODE][node].os;
    return place(__func__, t, size, &os, 1, false, out, outcome);
}

weft_status weft_numa_alloc_interleaved(const weft_topology *topo, size_t size, const unsigned *nodes,
                                        unsigned n, void **out, weft_numa_outcome *outcome) {
    if (!out) return weft__fail(__func__, WEFT_EINVAL, "out is NULL");
    *out = NULL;
    if (size == 0 || (!nodes && n)) return weft__fail(__func__, WEFT_EINVAL, "size is 0, or nodes is NULL with n > 0");
    const weft_topology *t = machine_or(topo);
    if (!t) return weft__fail(__func__, WEFT_ENOENT, "the machine's topology could not be detected");
    unsigned count = t->ngroup[WEFT__G_NODE];
    const weft__tgroup *g = t->group[WEFT__G_NODE];
    for (unsigned i = 0; i < n; i++)
        if (nodes[i] >= count) return weft__fail(__func__, WEFT_EINVAL, "node %u is out of range", nodes[i]);
    int os[WEFT__NUMA_MAX_NODES];
    unsigned k = 0;
    if (nodes) {
        for (unsigned i = 0; i < n && k < WEFT__NUMA_MAX_NODES; i++) os[k++] = g[nodes[i]].os;
    } else {
        /* Every node with memory; every node when no size is known. */
        for (unsigned i = 0; i < count && k < WEFT__NUMA_MAX_NODES; i++)
            if (g[i].bytes) os[k++] = g[i].os;
        if (k == 0)
            for (unsigned i = 0; i < count && k < WEFT__NUMA_MAX_NODES; i++) os[k++] = g[i].os;
    }
    if (k == 0) return weft__fail(__func__, WEFT_EINVAL, "nodes given with n == 0");
    return place(__func__, t, size, os, k, true, out, outcome);
}

void weft_numa_free(void *p, size_t size) {
    if (!p) return;
    size_t len = whole_pages(size);
    (void)weft__numa_set_policy(p, len, NULL, 0, false); /* back to first touch; harmless if never set */
    weft__free_aligned(p, len, weft__page_size());
}

weft_status weft_numa_node_of_address(const weft_topology *topo, const void *p, unsigned *node) {
    if (!p || !node) return weft__fail(__func__, WEFT_EINVAL, "p or node is NULL");
    int os;
    int st = weft__numa_node_of(p, &os);
    if (st)
        return st == WEFT_ENOENT ? WEFT_ENOENT : weft__fail_st(__func__, (weft_status)st); /* ENOENT: not placed yet */
    const weft_topology *t = machine_or(topo);
    if (!t) return weft__fail(__func__, WEFT_ENOENT, "the machine's topology could not be detected");
    for (unsigned i = 0; i < t->ngroup[WEFT__G_NODE]; i++)
        if (t->group[WEFT__G_NODE][i].os == os) {
            *node = i;
            return WEFT_OK;
        }
    return WEFT_ENOENT;
}
