/* weft — platform: the wall clock, for log entries.  Internal. */
#ifndef WEFT_PLATFORM_WALLCLOCK_H
#define WEFT_PLATFORM_WALLCLOCK_H

#include <stddef.h>
#include <stdint.h>

/* CLOCK_REALTIME in ns since 1970 (0 if it cannot be read).  Any thread. */
uint64_t weft__wall_ns(void);
/* Writes t (ns since 1970) as RFC 3339 UTC with microseconds,
 * "2025-01-31T12:00:00.123456Z", into buf (cap >= 28).  Any thread. */
void weft__wall_format(uint64_t t, char *buf, size_t cap);

#endif
