/* CPU count, clock and environment. */
#include "platform/affinity.h"
#include "platform/platform.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned affinity_count(void) {
    int n = weft__process_cpu_count(); /* not the calling thread's (affinity.c) */
    if (n > 0) return (unsigned)n;
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (unsigned)c : 1u;
}

/* The CPUs one cgroup v2 cpu.max file allows ("max 100000": no limit, 0;
 * "150000 100000": 1.5 CPUs, rounded up to 2, as Rust's available_parallelism
 * does), or 0 when unreadable or unlimited. */
static unsigned cpu_max_file(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    char quota[32];
    unsigned long long period = 0;
    int got = fscanf(f, "%31s %llu", quota, &period);
    fclose(f);
    if (got != 2 || period == 0 || strcmp(quota, "max") == 0) return 0;
    char *end;
    unsigned long long q = strtoull(quota, &end, 10);
    if (*end || q == 0) return 0;
    unsigned long long n = (q + period - 1) / period;
    return n > 4096 ? 4096u : (unsigned)n;
}

unsigned weft__cgroup_cpu_limit(const char *root, const char *self_cgroup) {
    /* One buffer: root, then the cgroup's path (read in place), then
     * "/cpu.max".  Three buffers (a line, the path, a path of 8 KiB) took
     * 16 KiB of stack: the first weft_async(NULL, ...) of a thread with a
     * 24 KiB stack (the default executor made there) crashed in here. */
    char path[1024 + 4096];
    size_t rl = strlen(root);
    if (rl >= 1024) return 0; /* topo/detect.c's fixture roots fit in 1024 too */
    FILE *f = fopen(self_cgroup, "re");
    if (!f) return 0;
    memcpy(path, root, rl);
    char *rel = path + rl;
    const int room = (int)(sizeof path - rl - sizeof "/cpu.max");
    bool found = false;
    while (fgets(rel, room, f)) {
        if (strncmp(rel, "0::", 3) != 0) continue; /* the v2 hierarchy's line */
        memmove(rel, rel + 3, strlen(rel + 3) + 1);
        rel[strcspn(rel, "\n")] = 0;
        found = true;
        break;
    }
    fclose(f);
    /* cgroup v1 only, or no cgroup file: no quota read.  Not absolute: no
     * level to climb to the root by (the loop below never ended there). */
    if (!found || rel[0] != '/') return 0;
    /* Every level from the process's cgroup up to the root may set a quota;
     * the tightest one holds. */
    unsigned limit = 0;
    for (;;) {
        bool at_root = strcmp(rel, "/") == 0;
        size_t len = at_root ? 0 : strlen(rel);
        memcpy(rel + len, "/cpu.max", sizeof "/cpu.max");
        unsigned n = cpu_max_file(path);
        rel[len] = 0;
        if (n && (!limit || n < limit)) limit = n;
        if (at_root) break;
        char *slash = strrchr(rel, '/');
        if (slash == rel) rel[1] = 0; /* then the root itself */
        else *slash = 0;
    }
    return limit;
}

unsigned weft__cpu_count_in(const char *cgroup_root, const char *self_cgroup) {
    unsigned n = affinity_count();
    unsigned q = cgroup_root ? weft__cgroup_cpu_limit(cgroup_root, self_cgroup) : 0;
    return q && q < n ? q : n;
}

unsigned weft__cpu_count(void) { return weft__cpu_count_in("/sys/fs/cgroup", "/proc/self/cgroup"); }

uint64_t weft__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *weft__getenv(const char *name) { return getenv(name); }
