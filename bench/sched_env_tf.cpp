// weft-bench — the environment's worker count, for sched_tf.cpp, whose own
// Taskflow (built with TF_ENABLE_TASK_PRIORITY, renamed) cannot name the
// environment's tf::Executor.  SPDX-License-Identifier: MIT
#include "tf_common.hpp"

#include "bench.h"

extern "C" unsigned bench_tf_workers(void *env) { return (unsigned)tf_executor(env).num_workers(); }
