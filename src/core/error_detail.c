/* One message per thread about its most recent failure (docs/errors.md, R3).
 * Thread-local, so setting and reading it never race: failures on two threads
 * each keep their own.  A success leaves it alone, as with errno: clearing it
 * would cost every successful call a store, and a caller reads it only after a
 * failure anyway. */
#include "core/error_detail.h"
#include "core/utf8.h"
#include "weft/core.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char message[256];
_Static_assert(sizeof message == sizeof(((weft__saved_message *)0)->text), "weft__saved_message holds a message");

const char *weft_last_error_message(void) { return message; }

/* A message that filled the buffer was cut by vsnprintf at a byte count, which
 * could fall inside a multi-byte character of a name in it (a task named in
 * UTF-8): drops that partial character, so the message stays valid UTF-8 for
 * the program that prints or logs it (as cancellation reasons and
 * weft_run_info.failed_task are cut). */
static void cut_partial_char(void) {
    size_t len = strnlen(message, sizeof message);
    if (len < sizeof message - 1) return; /* not full: not cut */
    message[weft__utf8_whole(message, len)] = 0;
}

void weft__vset_error_message(const char *fmt, va_list ap) {
    vsnprintf(message, sizeof message, fmt, ap);
    cut_partial_char();
}

void weft__set_error_message(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    weft__vset_error_message(fmt, ap);
    va_end(ap);
}

/* Writes "fn: " and returns where the detail goes (sizeof message if full). */
static size_t prefix(const char *fn) {
    int n = snprintf(message, sizeof message, "%s: ", fn);
    return n < 0 || (size_t)n >= sizeof message ? sizeof message : (size_t)n;
}

static void vfail(const char *fn, weft_status st, const char *fmt, va_list ap) {
    size_t n = prefix(fn);
    if (n == sizeof message) return;
    if (fmt)
        vsnprintf(message + n, sizeof message - n, fmt, ap);
    else
        snprintf(message + n, sizeof message - n, "%s", weft_strerror(st));
    cut_partial_char();
}

weft_status weft__fail(const char *fn, weft_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(fn, st, fmt, ap);
    va_end(ap);
    return st;
}

weft_status weft__fail_st(const char *fn, weft_status st) {
    size_t n = prefix(fn);
    if (n < sizeof message) snprintf(message + n, sizeof message - n, "%s", weft_strerror(st));
    return st;
}

void *weft__fail_null(weft_status *err, const char *fn, weft_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfail(fn, st, fmt, ap);
    va_end(ap);
    if (err) *err = st;
    return NULL;
}

void weft__error_message_save(weft__saved_message *s) { memcpy(s->text, message, sizeof message); }

void weft__error_message_restore(const weft__saved_message *s) { memcpy(message, s->text, sizeof message); }
