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

#endif
