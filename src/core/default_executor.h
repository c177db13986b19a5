/* The process-wide default executor (weft_default_executor, weft/core.h).
 * Internal. */
#ifndef WEFT_CORE_DEFAULT_EXECUTOR_H
#define WEFT_CORE_DEFAULT_EXECUTOR_H

#include <stdbool.h>

#include "weft/core.h"

/* Sets *ex to the default executor, creating it on first use.  WEFT_OK, or the
 * reason there is none: the creation's status (WEFT_ENOMEM, WEFT_ESYS; a later
 * call tries again), or WEFT_ESHUTDOWN once exit has destroyed it.  Any thread. */
weft_status weft__default_executor_get(weft_executor **ex);

/* What every public call that takes an executor does first, so that NULL
 * means the default executor:
 *     weft_status dst = weft__executor_or_default(&ex);
 *     if (dst != WEFT_OK) return dst;
 * A given executor costs one test. */
static inline weft_status weft__executor_or_default(weft_executor **ex) {
    return *ex ? WEFT_OK : weft__default_executor_get(ex);
}

/* True when ex is the default executor of this process, alive (not being
 * destroyed at exit): weft_executor_destroy refuses it. */
bool weft__is_default_executor(const weft_executor *ex);

#endif
