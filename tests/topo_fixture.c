/* Fake sysfs trees (topo_fixture.h). */
#define _XOPEN_SOURCE 700
#include "topo_fixture.h"

#include <errno.h>
#include <stdatomic.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "weft.h"

const fake_machine FAKE_TWO_SOCKET = {.packages = 2, .cores = 16, .threads = 2, .l3s = 1, .nodes = 1};
const fake_machine FAKE_CHIPLETS = {.packages = 1, .cores = 32, .threads = 2, .l3s = 4, .nodes = 1};
const fake_machine FAKE_MEMORY_NODE = {.packages = 1, .cores = 8, .threads = 1, .l3s = 1, .nodes = 1,
                                       .memory_only_nodes = 1};
const fake_machine FAKE_ODD_NUMBERS = {.packages = 2, .cores = 4, .threads = 2, .l3s = 1, .nodes = 1,
                                       .offline = 1, .numbering = NUMBER_PACKAGES_INTERLEAVED,
                                       .core_id_step = 2};

int fake_os(const fake_machine *m, int p, int c, int t) {
    int total = m->packages * m->cores;
    switch (m->numbering) {
    case NUMBER_SIBLINGS_NEAR: return (p * m->cores + c) * m->threads + t;
    case NUMBER_PACKAGES_INTERLEAVED: return t * total + c * m->packages + p;
    default: return t * total + p * m->cores + c;
    }
}

/* mkdir -p of dir, from the deepest missing level up (few calls per file:
 * the trees have thousands of files). */
static void make_dir(char *dir) {
    if (mkdir(dir, 0755) == 0 || errno == EEXIST) return;
    char *slash = strrchr(dir, '/');
    if (errno != ENOENT || !slash || slash == dir) TEST_FAIL_("mkdir %s: %s", dir, strerror(errno));
    *slash = 0;
    make_dir(dir);
    *slash = '/';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) TEST_FAIL_("mkdir %s: %s", dir, strerror(errno));
}

void fake_put(const char *root, const char *rel, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (!text) {
        remove(path);
        return;
    }
    FILE *f = fopen(path, "w");
    if (!f) { /* its directory is missing: make it */
        char *slash = strrchr(path, '/');
        *slash = 0;
        make_dir(path);
        *slash = '/';
        f = fopen(path, "w");
    }
    if (!f) TEST_FAIL_("cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The threads of cores [c0, c1) of package p, as a sorted "a,b,c\n" list. */
static void core_list(const fake_machine *m, int p, int c0, int c1, char *out, size_t cap) {
    int v[4096], n = 0;
    for (int c = c0; c < c1; c++)
        for (int t = 0; t < m->threads; t++) v[n++] = fake_os(m, p, c, t);
    qsort(v, (size_t)n, sizeof *v, cmp_int);
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) len += (size_t)snprintf(out + len, cap - len, i ? ",%d" : "%d", v[i]);
    snprintf(out + len, cap - len, "\n");
}

#define CPU "sys/devices/system/cpu/cpu"

static void put_fmt(const char *root, const char *text, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put_fmt(const char *root, const char *text, const char *fmt, ...) {
    char rel[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    fake_put(root, rel, text);
}

static void write_cache(const char *root, int os, int k, const char *level, const char *type, const char *size,
                        const char *ways, const char *shared) {
    put_fmt(root, level, CPU "%d/cache/index%d/level", os, k);
    put_fmt(root, type, CPU "%d/cache/index%d/type", os, k);
    put_fmt(root, size, CPU "%d/cache/index%d/size", os, k);
    put_fmt(root, "64\n", CPU "%d/cache/index%d/coherency_line_size", os, k);
    put_fmt(root, ways, CPU "%d/cache/index%d/ways_of_associativity", os, k);
    put_fmt(root, shared, CPU "%d/cache/index%d/shared_cpu_list", os, k);
}

static void write_thread(const char *root, const fake_machine *m, int p, int c, int t) {
    int os = fake_os(m, p, c, t), step = m->core_id_step ? m->core_id_step : 1;
    int per_l3 = m->cores / m->l3s, l3 = c / per_l3;
    char buf[64], core[512], shared_l3[16384];
    snprintf(buf, sizeof buf, "%d\n", p);
    put_fmt(root, buf, CPU "%d/topology/physical_package_id", os);
    snprintf(buf, sizeof buf, "%d\n", c * step);
    put_fmt(root, buf, CPU "%d/topology/core_id", os);
    if (os != 0) put_fmt(root, "1\n", CPU "%d/online", os); /* cpu0 has no online file on x86 */
    core_list(m, p, c, c + 1, core, sizeof core);
    core_list(m, p, l3 * per_l3, (l3 + 1) * per_l3, shared_l3, sizeof shared_l3);
    write_cache(root, os, 0, "1\n", "Data\n", "48K\n", "12\n", core);
    write_cache(root, os, 1, "1\n", "Instruction\n", "32K\n", "8\n", core);
    write_cache(root, os, 2, "2\n", "Unified\n", "1024K\n", "16\n", core);
    write_cache(root, os, 3, "3\n", "Unified\n", "32768K\n", "16\n", shared_l3);
}

static void write_node(const char *root, int node, const char *cpulist) {
    char buf[128];
    put_fmt(root, cpulist, "sys/devices/system/node/node%d/cpulist", node);
    snprintf(buf, sizeof buf, "Node %d MemTotal:       16777216 kB\nNode %d MemFree:  1 kB\n", node, node);
    put_fmt(root, buf, "sys/devices/system/node/node%d/meminfo", node);
}

static char fake_root[256];

const char *fake_write(const fake_machine *m) {
    /* tmpfs where there is one: the trees have thousands of small files */
    struct stat st;
    const char *dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    snprintf(fake_root, sizeof fake_root, "%s/weft-topo-XXXXXX", dir);
    if (!mkdtemp(fake_root)) TEST_FAIL_("mkdtemp: %s", strerror(errno));
    for (int p = 0; p < m->packages; p++)
        for (int c = 0; c < m->cores; c++)
            for (int t = 0; t < m->threads; t++) write_thread(fake_root, m, p, c, t);
    int total = m->packages * m->cores * m->threads;
    for (int k = 0; k < m->offline; k++) put_fmt(fake_root, "0\n", CPU "%d/online", total + k);
    char list[16384];
    int per_node = m->nodes ? m->cores / m->nodes : 0;
    for (int p = 0; p < m->packages && m->nodes; p++)
        for (int n = 0; n < m->nodes; n++) {
            core_list(m, p, n * per_node, (n + 1) * per_node, list, sizeof list);
            write_node(fake_root, p * m->nodes + n, list);
        }
    for (int k = 0; k < m->memory_only_nodes; k++) write_node(fake_root, m->packages * m->nodes + k, "\n");
    return fake_root;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void fake_remove(const char *root) { nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

weft_topology *fake_detect(const char *root) {
    weft_topology *t = NULL;
    int st = weft__topology_detect_at(root, NULL, 0, &t);
    if (st != 0 || !t) TEST_FAIL_("detecting %s: %d", root, st);
    return t;
}

/* ---- an allocator that fails on demand ---- */

static atomic_long fail_budget;
static void *fail_alloc(void *ctx, size_t n) {
    (void)ctx;
    return atomic_fetch_sub(&fail_budget, 1) > 0 ? malloc(n) : NULL;
}
static void *fail_realloc(void *ctx, void *p, size_t o, size_t n) {
    (void)ctx, (void)o;
    return atomic_fetch_sub(&fail_budget, 1) > 0 ? realloc(p, n) : NULL;
}
static void plain_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    free(p);
}

void fake_fail_install(void) { weft_set_allocator(&(weft_allocator){fail_alloc, fail_realloc, plain_free, NULL}); }
void fake_fail_budget(long n) { atomic_store(&fail_budget, n); }
