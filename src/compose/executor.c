/* The composition root: the one place that knows every layer an executor is
 * built from, in the order they initialise (each may use those before it).
 * A new layer that needs per-worker state or executor init/fini adds its
 * weft__layer here (docs/design.md, "How to add a layer"); the core never
 * names it. */
#include "async/async.h"
#include "cancel/cancel.h"
#include "core/abi.h"
#include "core/layer.h"
#include "observe/observe_layer.h"
#include "topo/topo_layer.h"
#include "sched/sched.h"
#include "weft/observe.h"
#include "weft/sched.h"
#include "weft/topology.h"

static weft__layer *const layers[] = {
    &weft__async_layer, /* first: its part is at offset 0 (async/async.h) */
    &weft__sched_layer,
    &weft__topo_layer, /* placement (WEFT_PLACEMENT, config.placement) and steal tiers */
    &weft__observe_layer,
    &weft__cancel_layer, /* workers' preemption signal unblocked (weft_preempt_install) */
};

weft_executor *weft_executor_create_sized(const weft_executor_config *config, size_t size,
                                          weft_status *err) {
    weft_executor_config c;
    if (config) {
        weft_status st = weft__config_read(&c, sizeof c, config, size, "weft_executor_config");
        if (st) {
            if (err) *err = st;
            return NULL; /* weft__config_read said why */
        }
        config = &c;
    }
    return weft__executor_create(config, layers, sizeof layers / sizeof layers[0], err);
}

/* The structs a config points to are read at this library's layout whatever
 * the caller's size: they keep their 1.0 layout for good (docs/abi.md; a later
 * version adds a new pointer field to weft_executor_config instead). */
_Static_assert(WEFT__ENDS_AT(weft_sched_config, seed) &&
                   WEFT__ENDS_AT(weft_sched_policy, destroy) &&
                   WEFT__ENDS_AT(weft_placement_config, numa_node_count) &&
                   WEFT__ENDS_AT(weft_observer, user),
               "a struct weft_executor_config points to grew: it is read at the caller's 1.0 "
               "layout, so add a new pointer field instead (docs/abi.md)");

/* The exported name of 1.0's binaries: the 1.0 layout, whatever is appended later. */
weft_executor *weft_executor_create(const weft_executor_config *config, weft_status *err) {
    return weft_executor_create_sized(config, WEFT__SIZE_TO(weft_executor_config, placement), err);
}
