/* weft-bench — OpenMP peers of the control-flow benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * cond_loop: OpenMP has no condition task, so each iteration creates A and B as
 * dependent tasks, and the condition C runs after a taskwait (its result decides
 * whether to go round again): the closest OpenMP spelling of a graph loop.
 * subflow_spawn: one task creates n child tasks and waits for them (taskwait),
 * the OpenMP form of a joined subflow.
 */
#include "bench_work.h"

#include <omp.h>

static int omp_cond_loop(void *env, void *data) {
    (void)env;
    cond_loop_data *d = data;
    #pragma omp parallel
    #pragma omp single
    {
        int again;
        do {
            #pragma omp task depend(inout: d[0])
            cond_loop_a(d);
            #pragma omp task depend(inout: d[0])
            cond_loop_b(d);
            #pragma omp taskwait
            again = cond_loop_c(d) == 0;
        } while (again);
    }
    return 0;
}
const bench_ops bench_omp_cond_loop = { omp_cond_loop, NULL, NULL, NULL };

static int omp_subflow_spawn(void *env, void *data) {
    (void)env;
    const spawn_data *d = data;
    #pragma omp parallel
    #pragma omp single
    {
        #pragma omp task
        {
            for (size_t i = 0; i < d->n; i++) {
                uint8_t *h = &d->hit[i];
                #pragma omp task firstprivate(h)
                spawn_kernel(h);
            }
            #pragma omp taskwait
        }
    }
    return 0;
}
const bench_ops bench_omp_subflow_spawn = { omp_subflow_spawn, NULL, NULL, NULL };
