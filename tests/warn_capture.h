/* Capturing weft's warnings in a test: the count and the last message, for
 * checks that a bad environment variable or a refused call warns once and
 * names what it should (docs/errors.md).  Header-only, one copy per test
 * program that includes it. */
#ifndef WEFT_TESTS_WARN_CAPTURE_H
#define WEFT_TESTS_WARN_CAPTURE_H

#include <weft.h>

#include <stdatomic.h>
#include <stdio.h>

static struct {
    atomic_int warnings;
    char last[512];
} logged;

static void capture(void *user, weft_log_level level, const char *msg) {
    (void)user;
    if (level != WEFT_LOG_WARN) return;
    snprintf(logged.last, sizeof logged.last, "%s", msg);
    atomic_fetch_add(&logged.warnings, 1);
}

/* Zeroes the count and routes weft's log to capture(), at whatever level is set. */
static inline void capture_log_at_default_level(void) {
    atomic_store(&logged.warnings, 0);
    logged.last[0] = 0;
    weft_log_set_callback(capture, NULL);
}

/* The same, with warnings on (a test before may have turned the log off). */
static inline void capture_log(void) {
    capture_log_at_default_level();
    weft_log_set_level(WEFT_LOG_WARN);
}

#endif
