/* The priority of a thread's algorithm calls (weft_algo_set_priority): a
 * thread-local level that weft__par_tasks reads once per call (par.c) and that
 * an emplaced algorithm task takes from its graph task (task.c).  Why a
 * thread's setting rather than a config field: docs/guide-scheduling.md,
 * "Priorities of loops and pipelines". */
#include "algo/par.h"

_Thread_local signed char weft__algo_prio __attribute__((tls_model("initial-exec")));

weft_status weft_algo_set_priority(weft_priority priority, weft_priority *previous) {
    if (priority < WEFT_PRIORITY_LOW || priority > WEFT_PRIORITY_CRITICAL) return WEFT_EINVAL;
    if (previous) *previous = (weft_priority)weft__algo_prio;
    weft__algo_prio = (signed char)priority;
    return WEFT_OK;
}

weft_priority weft_algo_priority(void) { return (weft_priority)weft__algo_prio; }
