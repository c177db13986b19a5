/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 * The one header users include. */
#ifndef WEFT_H
#define WEFT_H
#include "weft/common.h"
#include "weft/version.h"
#include "weft/core.h"
#include "weft/graph.h"
#include "weft/forkjoin.h"
#include "weft/async.h"
#include "weft/observe.h"
#include "weft/flow.h"
#include "weft/pipeline.h"
#include "weft/algo.h"
#include "weft/gpu.h"
#include "weft/cancel.h"
#include "weft/sched.h"
#include "weft/topology.h"
#endif
