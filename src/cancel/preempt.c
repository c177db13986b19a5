/* Signal preemption (the third layer): see weft/cancel.h. */
#include "cancel/cancel.h"

_Thread_local _Atomic int weft__preempt_flag __attribute__((tls_model("initial-exec")));

bool weft_preempt_requested(void) { return weft__preempt_pending(); }

void weft_preempt_clear(void) { atomic_store_explicit(&weft__preempt_flag, 0, memory_order_relaxed); }
