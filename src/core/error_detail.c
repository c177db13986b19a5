/* One message per thread about its most recent failure (docs/errors.md, R3).
 * Thread-local, so setting and reading it never race: failures on two threads
 * each keep their own.  A success leaves it alone, as with errno: clearing it
 * would cost every successful call a store, and a caller reads it only after a
 * failure anyway. */
#include "core/error_detail.h"
#include "weft/core.h"

#include <stdio.h>

static _Thread_local char message[256];

const char *weft_last_error_message(void) { return message; }

void weft__vset_error_message(const char *fmt, va_list ap) { vsnprintf(message, sizeof message, fmt, ap); }

void weft__set_error_message(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    weft__vset_error_message(fmt, ap);
    va_end(ap);
}
