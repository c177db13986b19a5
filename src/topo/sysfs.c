/* The sysfs backend: Linux's /sys/devices/system/{cpu,node}.
 *
 * Per CPU it reads topology/{physical_package_id,core_id} and, per cache,
 * cache/indexK/{level,type,shared_cpu_list}; a cache already seen through
 * another CPU of its shared_cpu_list is skipped there, so the size, line and
 * ways files are read once per cache, not once per CPU.  Per node it reads
 * cpulist and meminfo.  A file that is missing or does not parse makes its
 * part unknown, with one warning per detection. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "platform/files.h"
#include "topo/topo.h"

enum { PATH_CAP = 1024, MAX_CACHE_INDEX = 32 };

/* Formats root + fmt into path (PATH_CAP bytes); false when too long. */
static bool make_path(char *path, const char *root, const char *fmt, va_list ap) {
    size_t len = strlen(root);
    if (len >= PATH_CAP) return false;
    memcpy(path, root, len);
    int n = vsnprintf(path + len, PATH_CAP - len, fmt, ap);
    return n >= 0 && (size_t)n < PATH_CAP - len;
}

/* Reads root + the formatted path; the length, or -1 (also when the path is
 * too long).  *path keeps the path, for warnings. */
__attribute__((format(printf, 5, 6))) static int read_attr(char *buf, size_t cap, char *path, const char *root,
                                                           const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    bool ok = make_path(path, root, fmt, ap);
    va_end(ap);
    return ok ? weft__file_read(path, buf, cap) : -1;
}

enum { LIST_CAP_MAX = 1 << 21 }; /* every CPU up to WEFT__TOPO_MAX_CPU, one by one, fits */

/* Reads and parses the CPU list file root + the formatted path (*path keeps
 * it) into *cpus, *n (weft__cpulist_parse).  The file is read whole: Linux
 * writes a node's cpulist at any length (a bin attribute since 5.14: 2048
 * CPUs numbered alternately across two nodes take over 4 KiB), and a list
 * cut at a buffer's end still parses, into a list that leaves CPUs out.  So
 * a read that fills the buffer is made again with a larger one.  0,
 * WEFT_EINVAL (missing, not a list, or longer than any list can be),
 * WEFT_ENOMEM. */
__attribute__((format(printf, 5, 6))) static int read_cpulist(int **cpus, unsigned *n, char *path,
                                                              const char *root, const char *fmt, ...) {
    *cpus = NULL;
    *n = 0;
    va_list ap;
    va_start(ap, fmt);
    bool ok = make_path(path, root, fmt, ap);
    va_end(ap);
    if (!ok) return WEFT_EINVAL;
    char small[4096], *buf = small;
    size_t cap = sizeof small;
    int st;
    for (;;) {
        int len = weft__file_read(path, buf, cap);
        if (len < 0) {
            st = WEFT_EINVAL;
            break;
        }
        if ((size_t)len + 1 < cap) { /* the whole file */
            st = weft__cpulist_parse(buf, cpus, n);
            break;
        }
        if (buf != small) weft__free(buf, cap);
        buf = small;
        if (cap >= LIST_CAP_MAX) {
            st = WEFT_EINVAL;
            break;
        }
        cap *= 8;
        char *bigger = weft__alloc(cap);
        if (!bigger) {
            st = WEFT_ENOMEM;
            break;
        }
        buf = bigger;
    }
    if (buf != small) weft__free(buf, cap);
    return st;
}

/* A whole decimal number, allowing a minus sign and trailing white space. */
static bool parse_long(const char *s, long *out) {
    char *end;
    if (!*s) return false;
    long v = strtol(s, &end, 10);
    if (end == s) return false;
    while (*end == ' ' || *end == '\n' || *end == '\t') end++;
    if (*end) return false;
    *out = v;
    return true;
}

/* ---- entries named prefixN ---- */

typedef struct numbered {
    const char *prefix;
    int *v;
    unsigned n, cap;
    bool oom;
} numbered;

static int collect_numbered(void *ctx, const char *name) {
    numbered *d = ctx;
    size_t plen = strlen(d->prefix);
    if (strncmp(name, d->prefix, plen) != 0) return 0;
    const char *p = name + plen;
    if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5) return 0;
    long v = strtol(p, NULL, 10);
    if (v > WEFT__TOPO_MAX_CPU) return 0;
    if (d->n == d->cap) {
        unsigned ncap = d->cap ? d->cap * 2 : 64;
        int *nv = weft__realloc(d->v, d->cap * sizeof *nv, ncap * sizeof *nv);
        if (!nv) {
            d->oom = true;
            return 1;
        }
        d->v = nv;
        d->cap = ncap;
    }
    d->v[d->n++] = (int)v;
    return 0;
}


/* The numbers N of the entries prefixN of root + dir, sorted; -1 when the
 * directory cannot be read, WEFT_ENOMEM. */
static int list_numbered(const char *root, const char *dir, const char *prefix, numbered *d) {
    char path[PATH_CAP];
    *d = (numbered){.prefix = prefix};
    if ((size_t)snprintf(path, sizeof path, "%s%s", root, dir) >= sizeof path) return -1;
    if (weft__dir_each(path, collect_numbered, d) != 0) return -1;
    if (d->oom) {
        weft__free(d->v, d->cap * sizeof *d->v);
        return WEFT_ENOMEM;
    }
    if (d->n > 1) qsort(d->v, d->n, sizeof *d->v, weft__topo_cmp_int);
    return 0;
}

static void numbered_free(numbered *d) { weft__free(d->v, d->cap * sizeof *d->v); }

/* ---- CPUs and caches ---- */

#define CPU_DIR "/sys/devices/system/cpu"

/* One topology number of a CPU; `dflt` (and a warning) when missing or bad.
 * -1 in the file (a package the firmware does not name) also means dflt. */
static int cpu_number(weft__topo_raw *raw, const char *root, int cpu, const char *file, int dflt) {
    char buf[64], path[PATH_CAP];
    long v;
    if (read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/topology/%s", cpu, file) < 0) {
        weft__raw_warn(raw, "missing file", path);
        return dflt;
    }
    if (!parse_long(buf, &v) || v < -1 || v > 1 << 30) {
        weft__raw_warn(raw, "unreadable number", path);
        return dflt;
    }
    return v < 0 ? dflt : (int)v;
}

static int cache_type(const char *s) {
    if (strncmp(s, "Data", 4) == 0) return WEFT_CACHE_DATA;
    if (strncmp(s, "Instruction", 11) == 0) return WEFT_CACHE_INSTRUCTION;
    if (strncmp(s, "Unified", 7) == 0) return WEFT_CACHE_UNIFIED;
    return -1;
}

/* Size, line and ways of a new cache; unknown (0) where a file is bad. */
static void cache_details(weft__topo_raw *raw, const char *root, int cpu, int k, weft__raw_set *c) {
    char buf[64], path[PATH_CAP];
    long v;
    if (read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/cache/index%d/size", cpu, k) < 0 ||
        !weft__parse_size(buf, &c->bytes))
        weft__raw_warn(raw, "missing or unreadable cache size", path);
    if (read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/cache/index%d/coherency_line_size", cpu, k) >= 0 &&
        parse_long(buf, &v) && v > 0 && v <= 1 << 20)
        c->line = (unsigned)v;
    else
        weft__raw_warn(raw, "missing or unreadable cache line size", path);
    /* A missing ways file is common (some ARM caches): unknown, no warning. */
    if (read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/cache/index%d/ways_of_associativity", cpu, k) >= 0 &&
        parse_long(buf, &v) && v >= 0 && v <= 1 << 20)
        c->ways = (int)v;
}

/* The CPUs sharing cache k of cpu; just cpu itself when the list is bad. */
static int cache_cpus(weft__topo_raw *raw, const char *root, int cpu, int k, weft__raw_set *c) {
    char path[PATH_CAP];
    int st = read_cpulist(&c->cpus, &c->ncpus, path, root, CPU_DIR "/cpu%d/cache/index%d/shared_cpu_list", cpu, k);
    if (st == WEFT_ENOMEM) return st;
    if (st == 0 && c->ncpus) return 0;
    weft__cpus_free(c->cpus, c->ncpus);
    weft__raw_warn(raw, "missing or unreadable shared_cpu_list", path);
    c->cpus = weft__alloc(sizeof *c->cpus);
    if (!c->cpus) return WEFT_ENOMEM;
    c->cpus[0] = cpu;
    c->ncpus = 1;
    return 0;
}

static int load_caches(weft__topo_raw *raw, const char *root, int cpu) {
    for (int k = 0; k < MAX_CACHE_INDEX; k++) {
        char buf[64], path[PATH_CAP];
        long level;
        if (read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/cache/index%d/level", cpu, k) < 0)
            return 0; /* past the last index (or no cache directory at all) */
        if (!parse_long(buf, &level) || level < 1 || level > 8) {
            weft__raw_warn(raw, "unreadable cache level", path);
            continue;
        }
        weft__raw_set c = {.level = (unsigned)level};
        if (read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/cache/index%d/type", cpu, k) < 0 ||
            (c.type = cache_type(buf)) < 0) {
            weft__raw_warn(raw, "missing or unreadable cache type", path);
            c.type = WEFT_CACHE_UNIFIED;
        }
        int st = cache_cpus(raw, root, cpu, k, &c);
        if (st) return st;
        if (weft__raw_has_cache(raw, c.level, c.type, c.cpus[0])) {
            weft__cpus_free(c.cpus, c.ncpus);
            continue;
        }
        cache_details(raw, root, cpu, k, &c);
        weft__raw_add_cache(raw, &c);
        if (raw->oom) return WEFT_ENOMEM;
    }
    return 0;
}

static bool cpu_offline(const char *root, int cpu) {
    char buf[16], path[PATH_CAP];
    return read_attr(buf, sizeof buf, path, root, CPU_DIR "/cpu%d/online", cpu) >= 0 && buf[0] == '0';
}

static int load_cpus(weft__topo_raw *raw, const char *root) {
    numbered d;
    int st = list_numbered(root, CPU_DIR, "cpu", &d);
    if (st) return st == WEFT_ENOMEM ? st : WEFT_ENOENT;
    for (unsigned i = 0; i < d.n && st == 0; i++) {
        int cpu = d.v[i];
        if (cpu_offline(root, cpu)) continue;
        int pkg = cpu_number(raw, root, cpu, "physical_package_id", 0);
        /* Unknown: a core of its own.  Not its OS number, which may be the
         * core_id of another core of the package (siblings numbered next to
         * each other: cpu 1 would join core 1, cpus 2 and 3); no core_id is
         * negative (cpu_number). */
        int core = cpu_number(raw, root, cpu, "core_id", -1 - cpu);
        weft__raw_add_cpu(raw, cpu, pkg, core);
        st = raw->oom ? WEFT_ENOMEM : load_caches(raw, root, cpu);
    }
    numbered_free(&d);
    return st;
}

/* ---- NUMA nodes ---- */

#define NODE_DIR "/sys/devices/system/node"

/* MemTotal of a node's meminfo ("Node 0 MemTotal:   9005268 kB"), or 0. */
static uint64_t node_memory(weft__topo_raw *raw, const char *root, int node) {
    char buf[512], path[PATH_CAP];
    if (read_attr(buf, sizeof buf, path, root, NODE_DIR "/node%d/meminfo", node) < 0) {
        weft__raw_warn(raw, "missing file", path);
        return 0;
    }
    const char *p = strstr(buf, "MemTotal:");
    unsigned long long kb;
    if (!p || sscanf(p + 9, "%llu", &kb) != 1 || kb > UINT64_MAX / 1024) {
        weft__raw_warn(raw, "no MemTotal", path);
        return 0;
    }
    return (uint64_t)kb * 1024;
}

static int load_nodes(weft__topo_raw *raw, const char *root) {
    numbered d;
    int st = list_numbered(root, NODE_DIR, "node", &d);
    if (st) return st == WEFT_ENOMEM ? st : 0; /* no node directory: a machine without NUMA */
    for (unsigned i = 0; i < d.n && st == 0; i++) {
        char path[PATH_CAP];
        weft__raw_set node = {.os = d.v[i]};
        st = read_cpulist(&node.cpus, &node.ncpus, path, root, NODE_DIR "/node%d/cpulist", node.os);
        if (st == WEFT_EINVAL) {
            weft__raw_warn(raw, "missing or unreadable cpulist", path);
            st = 0;
        }
        if (st) break;
        node.bytes = node_memory(raw, root, node.os);
        weft__raw_add_node(raw, &node);
        if (raw->oom) st = WEFT_ENOMEM;
    }
    numbered_free(&d);
    return st;
}

static int sysfs_load(weft__topo_raw *raw, const char *root) {
    int st = load_cpus(raw, root);
    if (st == 0) st = load_nodes(raw, root);
    if (st == 0 && raw->ncpus == 0) st = WEFT_ENOENT;
    return st;
}

const weft__topo_backend weft__topo_sysfs = {.name = "sysfs", .load = sysfs_load};
