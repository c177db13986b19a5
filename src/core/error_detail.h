/* The thread-local detail of the most recent failure (weft_last_error_message,
 * weft/core.h; the rule for all error channels: docs/errors.md).  Internal. */
#ifndef WEFT_CORE_ERROR_DETAIL_H
#define WEFT_CORE_ERROR_DETAIL_H

#include "weft/common.h"

#include <stdarg.h>

/* Sets the calling thread's message (printf-style, truncated to 255 bytes).
 * Call it where a failure is decided, before returning the status. */
void weft__set_error_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void weft__vset_error_message(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* The one-line form for a public call's own failures (docs/errors.md, R3):
 * sets "fn: <detail>" and returns st, so a check reads
 *     if (!f) return weft__fail(__func__, WEFT_EINVAL, "f is NULL");
 * weft__fail_st says "fn: " + weft_strerror(st) where there is nothing more to
 * say.  Call them where the status is first produced, never in a caller that
 * passes a status through (that would overwrite a deeper call's message), and
 * only on failure paths: they are cold. */
weft_status weft__fail(const char *fn, weft_status st, const char *fmt, ...)
    __attribute__((cold, format(printf, 3, 4)));
weft_status weft__fail_st(const char *fn, weft_status st) __attribute__((cold));

/* For the constructors of form R1 b (NULL + *err): sets the message as
 * weft__fail does, stores st in *err if err is not NULL, returns NULL. */
void *weft__fail_null(weft_status *err, const char *fn, weft_status st, const char *fmt, ...)
    __attribute__((cold, format(printf, 4, 5)));

/* For weft's own calls of public functions whose failure it handles itself
 * (WEFT_STATS, the WEFT_PROFILE file: a warning, never a failed call): the
 * thread's message is saved before and restored after, so that a handled
 * failure does not replace it (docs/errors.md, R3).  Not for hot paths. */
typedef struct weft__saved_message {
    char text[256];
} weft__saved_message;
void weft__error_message_save(weft__saved_message *s);
void weft__error_message_restore(const weft__saved_message *s);

/* Why a call on an executor made before fork() fails in the child (WEFT_EFORKED). */
#define WEFT__FORKED_WHY "the executor was created before fork(); its workers do not exist in this process"

#endif
