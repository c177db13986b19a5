/* For the NUMA hint tests (topo_steal.c, topo_algo.c): an executor's two
 * workers, bound to nodes 0 and 1, each held by a blocking task until the test
 * releases its node, so that a test decides which worker is free when. */
#ifndef WEFT_TEST_TOPO_HOLD_H
#define WEFT_TEST_TOPO_HOLD_H

#include <stdatomic.h>
#include <stdint.h>

#include "weft.h"

/* Set release_node[k] to free the worker of node k (5 s at most otherwise). */
extern atomic_int release_node[2];

/* Milliseconds of CLOCK_MONOTONIC; a sleep of ms milliseconds. */
uint64_t hold_now_ms(void);
void hold_sleep_ms(long ms);

/* Both workers of ex held (one blocker each: a worker runs one at a time);
 * clears release_node first.  Fails the test unless both start in 5 s. */
void hold_both(weft_executor *ex);

#endif
