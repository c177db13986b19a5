/* CPU count, clock and environment. */
#include "platform/platform.h"

#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

unsigned weft__cpu_count(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return (unsigned)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

int weft__cpu_nth(unsigned k) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int n = CPU_COUNT(&set);
    if (n <= 0) return -1;
    k %= (unsigned)n;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set) && k-- == 0) return cpu;
    return -1;
}

uint64_t weft__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *weft__getenv(const char *name) { return getenv(name); }
