/* Small files, directories, dlopen and CPU masks (files.h). */
#include "platform/files.h"
#include "weft/common.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int weft__file_read(const char *path, char *buf, size_t cap) {
    buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t r = read(fd, buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) { got = 0; close(fd); buf[0] = 0; return -1; }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    return (int)got;
}

bool weft__parse_size(const char *s, uint64_t *out) {
    char *end;
    if (*s < '0' || *s > '9') return false;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mult = 1;
    if (*end == 'K') mult = 1024, end++;
    else if (*end == 'M') mult = 1024 * 1024, end++;
    else if (*end == 'G') mult = 1024 * 1024 * 1024, end++;
    while (*end == ' ' || *end == '\n') end++;
    if (*end || v > UINT64_MAX / mult) return false;
    *out = (uint64_t)v * mult;
    return true;
}

size_t weft__last_level_cache_bytes(void) {
    uint64_t best = 0;
    for (int i = 0; i < 8; i++) {
        char path[64], text[32];
        uint64_t v;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (weft__file_read(path, text, sizeof text) > 0 && weft__parse_size(text, &v) && v > best) best = v;
    }
    return best > SIZE_MAX ? SIZE_MAX : (size_t)best;
}

int weft__dir_each(const char *path, int (*fn)(void *ctx, const char *name), void *ctx) {
    DIR *d = opendir(path);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (fn(ctx, e->d_name)) break;
    }
    closedir(d);
    return 0;
}

void *weft__dl_open(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }

void *weft__dl_sym(void *lib, const char *symbol) { return lib ? dlsym(lib, symbol) : NULL; }

void weft__dl_close(void *lib) {
    if (lib) dlclose(lib);
}

/* A mask big enough for any CPU the kernel can number (CONFIG_NR_CPUS is at
 * most 8192 today); CPU_SETSIZE (1024) would miss CPUs of the largest machines.
* It lives on the stack (1 KiB), so no allocation bypasses weft's hook. */
enum { MASK_CPUS = 8192 };
typedef struct mask { unsigned long bits[MASK_CPUS / (8 * sizeof(unsigned long))]; } mask;

int weft__affinity_cpus(int *out, int cap) {
    mask m;
    size_t bytes = sizeof m;
    cpu_set_t *set = (cpu_set_t *)m.bits;
    int n = -1;
    if (sched_getaffinity(0, bytes, set) == 0) {
        n = 0;
        for (int cpu = 0; cpu < MASK_CPUS; cpu++) {
            if (!CPU_ISSET_S(cpu, bytes, set)) continue;
            if (n < cap) out[n] = cpu;
            n++;
        }
    }
    return n;
}

int weft__thread_bind_cpus(const int *cpus, size_t n) {
    if (!cpus || n == 0) return WEFT_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (cpus[i] < 0 || cpus[i] >= MASK_CPUS) return WEFT_EINVAL;
    mask m;
    size_t bytes = sizeof m;
    cpu_set_t *set = (cpu_set_t *)m.bits;
    CPU_ZERO_S(bytes, set);
    for (size_t i = 0; i < n; i++) CPU_SET_S(cpus[i], bytes, set);
    return pthread_setaffinity_np(pthread_self(), bytes, set) == 0 ? 0 : WEFT_ESYS;
}
