/* The settings of a thread's algorithm calls: the priority
 * (weft_algo_set_priority) and the NUMA node hint (weft_algo_set_numa_node),
 * one thread-local word that weft__par_tasks reads once per call (par.c); an
 * emplaced algorithm task takes its graph task's priority and no hint
 * (task.c).  Why a thread's setting rather than a config field:
 * docs/guide-scheduling.md, "Priorities of loops and pipelines". */
#include "algo/par.h"

#include "platform/numa.h"  /* WEFT__NUMA_MAX_NODES */
#include "topo/topo_layer.h" /* weft__topo_machine: the nodes a hint may name */
#include "core/error_detail.h"

_Thread_local uint32_t weft__algo_how __attribute__((tls_model("initial-exec")));

weft_status weft_algo_set_priority(weft_priority priority, weft_priority *previous) {
    if (priority < WEFT_PRIORITY_LOW || priority > WEFT_PRIORITY_CRITICAL)
        return weft__fail(__func__, WEFT_EINVAL, "%d is not a priority", (int)priority);
    if (previous) *previous = (weft_priority)weft__how_prio(weft__algo_how);
    weft__algo_how = weft__how_with_prio(weft__algo_how, (signed char)priority);
    return WEFT_OK;
}

weft_priority weft_algo_priority(void) { return (weft_priority)weft__how_prio(weft__algo_how); }

weft_status weft_algo_set_numa_node(unsigned node_hint, unsigned *previous) {
    if (node_hint > WEFT__NUMA_MAX_NODES)
        return weft__fail(__func__, WEFT_EINVAL, "node %u is out of range", node_hint);
    if (node_hint) { /* a node the machine has (unknown machine: any, ignored at call time if absent) */
        const weft_topology *t = weft__topo_machine();
        if (t && node_hint - 1 >= weft_topology_numa_node_count(t))
            return weft__fail(__func__, WEFT_EINVAL, "node %u is past the machine's NUMA nodes", node_hint);
    }
    if (previous) *previous = weft__how_node(weft__algo_how);
    weft__algo_how = weft__how_with_node(weft__algo_how, node_hint);
    return WEFT_OK;
}

unsigned weft_algo_numa_node(void) { return weft__how_node(weft__algo_how); }
