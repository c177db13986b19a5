/* The topology layer as an executor layer (core/layer.h): steal tiers for
 * bound workers.  The composition root (src/compose/) lists it.  Internal. */
#ifndef WEFT_TOPO_TOPO_LAYER_H
#define WEFT_TOPO_TOPO_LAYER_H

#include "core/layer.h"
#include "weft/topology.h"

extern weft__layer weft__topo_layer; /* layer.c */

/* Makes t the process's machine for every executor created from now on (tests
 * install a fake tree's topology this way).  Takes ownership; the one it
 * replaces is freed, so call it while no executor is being created. */
void weft__topo_layer_set_machine(weft_topology *t);

/* Binds ex's workers as `strategy` says, over the creating thread's affinity
 * mask: sets every worker's cpu and ex->bound.  Only from a layer's
 * executor_init that runs before the topology layer's (the threads have not
 * started; the tiers are then computed from these CPUs).  WEFT_PLACE_NONE
 * changes nothing.  0, or a status from detection or placement (the workers
 * are then left as they were). */
int weft__topo_place_workers(weft_executor *ex, weft_placement strategy);
/* The same with a whole placement config (NUMA nodes to keep to). */
int weft__topo_place_workers_as(weft_executor *ex, const weft_placement_config *pc);

/* The process's machine (every online CPU, sysfs unless WEFT_TOPOLOGY=hwloc),
 * detected on first use and kept until exit; NULL when detection fails.  What
 * executors' steal tiers and the NUMA calls with a NULL topology use.  Any
 * thread. */
const weft_topology *weft__topo_machine(void);

#endif
