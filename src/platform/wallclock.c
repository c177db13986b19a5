/* The wall clock (wallclock.h). */
#include "platform/wallclock.h"

#include <stdio.h>
#include <time.h>

uint64_t weft__wall_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void weft__wall_format(uint64_t t, char *buf, size_t cap) {
    time_t s = (time_t)(t / 1000000000u);
    struct tm tm;
    if (!gmtime_r(&s, &tm)) {
        snprintf(buf, cap, "1970-01-01T00:00:00.000000Z");
        return;
    }
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (unsigned)(t % 1000000000u / 1000u));
}
