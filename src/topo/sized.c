/* The _sized entry points of weft/topology.h (docs/abi.md): each reads the
 * caller's config struct at the caller's size (core/abi.h) and makes the call
 * of its name.  The exported names without _sized are the implementations and
 * read this library's layout, which is the 1.0 layout while the asserts hold. */
#include "core/abi.h"
#include "weft/topology.h"

_Static_assert(WEFT__ENDS_AT(weft_topology_config, sysfs_root),
               "weft_topology_config grew past its 1.0 layout: its old entry points must now read "
               "WEFT__SIZE_TO(weft_topology_config, sysfs_root) bytes (docs/abi.md, \"Growing a "
               "config struct\")");
_Static_assert(WEFT__ENDS_AT(weft_placement_config, numa_node_count),
               "weft_placement_config grew past its 1.0 layout: its old entry points must now read "
               "WEFT__SIZE_TO(weft_placement_config, numa_node_count) bytes (docs/abi.md, "
               "\"Growing a config struct\")");

weft_status weft_topology_detect_sized(const weft_topology_config *config, size_t config_size,
                                       weft_topology **out) {
    WEFT__CONFIG_IN(weft_topology_config, config, config_size);
    return weft_topology_detect(config, out);
}

weft_status weft_topology_place_sized(const weft_topology *topo,
                                      const weft_placement_config *config, size_t config_size,
                                      unsigned workers, int *cpus) {
    WEFT__CONFIG_IN(weft_placement_config, config, config_size);
    return weft_topology_place(topo, config, workers, cpus);
}

weft_status weft_topology_worker_cpu_sized(const weft_topology *topo,
                                           const weft_placement_config *config, size_t config_size,
                                           unsigned worker, unsigned workers, int *cpu) {
    WEFT__CONFIG_IN(weft_placement_config, config, config_size);
    return weft_topology_worker_cpu(topo, config, worker, workers, cpu);
}
