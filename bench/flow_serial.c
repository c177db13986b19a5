/* weft-bench — serial baselines of the control-flow benchmarks.
 * SPDX-License-Identifier: MIT
 */
#include "bench_work.h"

static int serial_cond_loop(void *env, void *data) {
    (void)env;
    cond_loop_data *d = data;
    do {
        cond_loop_a(d);
        cond_loop_b(d);
    } while (cond_loop_c(d) == 0);
    return 0;
}
const bench_ops bench_serial_cond_loop = { serial_cond_loop, NULL, NULL, NULL };

static int serial_subflow_spawn(void *env, void *data) {
    (void)env;
    const spawn_data *d = data;
    for (size_t i = 0; i < d->n; i++) spawn_kernel(&d->hit[i]);
    return 0;
}
const bench_ops bench_serial_subflow_spawn = { serial_subflow_spawn, NULL, NULL, NULL };
