/* weft-bench — issue 21's GPU benchmarks (gpu_weft.c).  The device is the one
 * WEFT_GPU picks (cuda, opencl, emulator; unset: the first found), opened once.
 * SPDX-License-Identifier: MIT */
#ifndef WEFT_BENCH_GPU_WORK_H
#define WEFT_BENCH_GPU_WORK_H

#include "bench_work.h"

/* size = GPU tasks, each one tiny kernel (x[0] += 1) in a chain: weft's GPU
 * tasks against the same launches by hand on one stream (the serial column),
 * synchronized once at the end. */
extern const bench_work bench_work_gpu_tasks;
extern const bench_ops bench_weft_gpu_tasks, bench_serial_gpu_tasks;
/* size = GPU tasks in a chain as above, each kernel running ~0.5 ms: the
 * difference per task from the serial column is how late a task's completion
 * is seen (the watcher's nap, or a wake-up where the backend calls back). */
extern const bench_work bench_work_gpu_busy;
/* size = chunks of 256 K floats: copy up, scale, copy down, per chunk as a
 * GPU task with no edges between chunks, on a device pool of 1 or 4 streams. */
extern const bench_work bench_work_gpu_overlap;
extern const bench_ops bench_weft_gpu_overlap_1, bench_weft_gpu_overlap_4;

#endif
