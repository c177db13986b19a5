/* The raw machine description that backends fill (topo.h), and CPU lists. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/log.h"

void weft__raw_init(weft__topo_raw *raw) { memset(raw, 0, sizeof *raw); }

void weft__cpus_free(int *cpus, unsigned n) { weft__free(cpus, (size_t)n * sizeof *cpus); }

static void sets_free(weft__raw_set *sets, unsigned n, unsigned cap) {
    for (unsigned i = 0; i < n; i++) weft__cpus_free(sets[i].cpus, sets[i].ncpus);
    weft__free(sets, (size_t)cap * sizeof *sets);
}

void weft__raw_free(weft__topo_raw *raw) {
    weft__free(raw->cpus, (size_t)raw->cap_cpus * sizeof *raw->cpus);
    sets_free(raw->caches, raw->ncaches, raw->cap_caches);
    sets_free(raw->nodes, raw->nnodes, raw->cap_nodes);
    weft__raw_init(raw);
}

/* Makes room for one more element in a growable array; false (and raw->oom)
 * when memory runs out. */
static bool grow(weft__topo_raw *raw, void **arr, unsigned n, unsigned *cap, size_t elem) {
    if (n < *cap) return true;
    unsigned ncap = *cap ? *cap * 2 : 8;
    void *p = weft__realloc(*arr, (size_t)*cap * elem, (size_t)ncap * elem);
    if (!p) {
        raw->oom = true;
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

void weft__raw_add_cpu(weft__topo_raw *raw, int os, int pkg, int core) {
    if (!grow(raw, (void **)&raw->cpus, raw->ncpus, &raw->cap_cpus, sizeof *raw->cpus)) return;
    raw->cpus[raw->ncpus++] = (weft__raw_cpu){.os = os, .pkg = pkg, .core = core};
}

static bool same_cpus(const weft__raw_set *a, const weft__raw_set *b) {
    return a->ncpus == b->ncpus && (a->ncpus == 0 || memcmp(a->cpus, b->cpus, a->ncpus * sizeof *a->cpus) == 0);
}

bool weft__raw_add_cache(weft__topo_raw *raw, weft__raw_set *set) {
    for (unsigned i = 0; i < raw->ncaches; i++) {
        const weft__raw_set *c = &raw->caches[i];
        if (c->level == set->level && c->type == set->type && same_cpus(c, set)) {
            weft__cpus_free(set->cpus, set->ncpus);
            return false;
        }
    }
    if (!grow(raw, (void **)&raw->caches, raw->ncaches, &raw->cap_caches, sizeof *raw->caches)) {
        weft__cpus_free(set->cpus, set->ncpus);
        return false;
    }
    raw->caches[raw->ncaches++] = *set;
    return true;
}

bool weft__raw_has_cache(const weft__topo_raw *raw, unsigned level, int type, int first_cpu) {
    for (unsigned i = 0; i < raw->ncaches; i++) {
        const weft__raw_set *c = &raw->caches[i];
        if (c->level == level && c->type == type && c->ncpus && c->cpus[0] == first_cpu) return true;
    }
    return false;
}

void weft__raw_add_node(weft__topo_raw *raw, weft__raw_set *set) {
    if (!grow(raw, (void **)&raw->nodes, raw->nnodes, &raw->cap_nodes, sizeof *raw->nodes)) {
        weft__cpus_free(set->cpus, set->ncpus);
        return;
    }
    raw->nodes[raw->nnodes++] = *set;
}

void weft__raw_warn(weft__topo_raw *raw, const char *what, const char *path) {
    if (raw->warned) return;
    raw->warned = true;
    weft__log(WEFT_LOG_WARN, "topology: %s (%s); that part of the machine is taken as unknown", what, path);
}

/* ---- CPU lists ---- */

/* Reads a decimal number of at most WEFT__TOPO_MAX_CPU at *s; -1 if none. */
static int read_number(const char **s) {
    const char *p = *s;
    if (*p < '0' || *p > '9') return -1;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (v > WEFT__TOPO_MAX_CPU) return -1;
    }
    *s = p;
    return (int)v;
}

int weft__topo_cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Walks the list; with out NULL it only counts (ranges expanded). */
static int walk_list(const char *s, int *out, size_t *count) {
    size_t n = 0;
    while (*s == ' ' || *s == '\t') s++;
    while (*s && *s != '\n') {
        int lo = read_number(&s), hi = lo;
        if (lo < 0) return WEFT_EINVAL;
        if (*s == '-') {
            s++;
            hi = read_number(&s);
            if (hi < lo) return WEFT_EINVAL;
        }
        for (int c = lo; c <= hi; c++) {
            if (out) out[n] = c;
            n++;
        }
        if (*s == ',') s++;
        else if (*s && *s != '\n') return WEFT_EINVAL;
    }
    *count = n;
    return 0;
}

int weft__cpulist_parse(const char *s, int **out, unsigned *n) {
    *out = NULL;
    *n = 0;
    size_t count;
    int st = walk_list(s, NULL, &count);
    if (st) return st;
    if (count == 0) return 0;
    int *cpus = weft__alloc(count * sizeof *cpus);
    if (!cpus) return WEFT_ENOMEM;
    walk_list(s, cpus, &count);
    if (count > 1) qsort(cpus, count, sizeof *cpus, weft__topo_cmp_int);
    size_t k = 0; /* drop duplicates ("0,0" or overlapping ranges) */
    for (size_t i = 0; i < count; i++)
        if (k == 0 || cpus[i] != cpus[k - 1]) cpus[k++] = cpus[i];
    if (k < count) { /* an exact-size copy: a block is freed with its size */
        int *copy = weft__alloc(k * sizeof *copy);
        if (copy) memcpy(copy, cpus, k * sizeof *copy);
        weft__free(cpus, count * sizeof *cpus);
        if (!copy) return WEFT_ENOMEM;
        cpus = copy;
    }
    *out = cpus;
    *n = (unsigned)k;
    return 0;
}
