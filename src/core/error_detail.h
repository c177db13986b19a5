/* The thread-local detail of the most recent failure (weft_last_error_message,
 * weft/core.h; the rule for all error channels: docs/errors.md).  Internal. */
#ifndef WEFT_CORE_ERROR_DETAIL_H
#define WEFT_CORE_ERROR_DETAIL_H

#include <stdarg.h>

/* Sets the calling thread's message (printf-style, truncated to 255 bytes).
 * Call it where a failure is decided, before returning the status. */
void weft__set_error_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void weft__vset_error_message(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
