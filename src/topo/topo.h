/* Topology layer internals: the raw description a backend fills, the backend
 * interface, and the finished weft_topology.  Internal. */
#ifndef WEFT_TOPO_TOPO_H
#define WEFT_TOPO_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/topology.h"

/* ---- what a backend reports: the whole machine, unfiltered ---- */

typedef struct weft__raw_cpu {
    int os;       /* OS CPU number */
    int pkg;      /* the package's OS number (0 when unknown) */
    int core;     /* a key for its core, unique within the package (-1 - os when unknown: no core_id is negative) */
} weft__raw_cpu;

/* A cache or a NUMA node: attributes and the CPUs it covers (owned). */
typedef struct weft__raw_set {
    int os;            /* nodes: the node's number */
    unsigned level;    /* caches: 1, 2, 3 */
    int type;          /* caches: weft_cache_type */
    uint64_t bytes;    /* caches: size; nodes: memory; 0 unknown */
    unsigned line;     /* caches */
    int ways;          /* caches */
    int *cpus;         /* sorted, no duplicates */
    unsigned ncpus;
} weft__raw_set;

typedef struct weft__topo_raw {
    weft__raw_cpu *cpus;
    unsigned ncpus, cap_cpus;
    weft__raw_set *caches;
    unsigned ncaches, cap_caches;
    weft__raw_set *nodes;
    unsigned nnodes, cap_nodes;
    bool oom;        /* an add failed for memory: the topology is not built */
    bool warned;     /* a file was missing or malformed and a warning was logged */
} weft__topo_raw;

void weft__raw_init(weft__topo_raw *raw);
void weft__raw_free(weft__topo_raw *raw);
void weft__raw_add_cpu(weft__topo_raw *raw, int os, int pkg, int core);
/* Adds a cache, taking ownership of set->cpus (freed on a duplicate: same
 * level, type and CPUs as one already added).  True if it was new. */
bool weft__raw_add_cache(weft__topo_raw *raw, weft__raw_set *set);
/* True if a cache of that level and type whose first CPU is first_cpu is
 * already there (caches of one level and type partition the CPUs, so the first
 * CPU names one): lets sysfs skip the rest of its files. */
bool weft__raw_has_cache(const weft__topo_raw *raw, unsigned level, int type, int first_cpu);
/* Adds a NUMA node, taking ownership of set->cpus. */
void weft__raw_add_node(weft__topo_raw *raw, weft__raw_set *set);
/* Logs a warning about a sysfs or hwloc oddity, once per detection. */
void weft__raw_warn(weft__topo_raw *raw, const char *what, const char *path);

/* Parses a Linux CPU list ("0-3,8,10-11\n"; "" is empty) into a sorted array
 * without duplicates (weft__alloc'd, *n entries, free with weft__free(p, n *
 * sizeof(int)); NULL when empty).  0, WEFT_EINVAL (not a list, or a number
 * past WEFT__TOPO_MAX_CPU) or WEFT_ENOMEM. */
#define WEFT__TOPO_MAX_CPU 65535
int weft__cpulist_parse(const char *s, int **out, unsigned *n);
/* qsort's comparison of two ints. */
int weft__topo_cmp_int(const void *a, const void *b);
/* Frees a sorted CPU array of n entries. */
void weft__cpus_free(int *cpus, unsigned n);

/* ---- backends ---- */

typedef struct weft__topo_backend {
    const char *name;
    /* Fills raw with the whole machine.  root: prefix of every path ("" for the
     * real /sys).  0, or WEFT_ENOENT when the backend is not available here
     * or found no CPU, or WEFT_ENOMEM. */
    int (*load)(weft__topo_raw *raw, const char *root);
} weft__topo_backend;

extern const weft__topo_backend weft__topo_sysfs;
extern const weft__topo_backend weft__topo_hwloc;

/* ---- the finished topology ---- */

typedef struct weft__tcpu {
    int os;
    unsigned pkg, core, smt, node;
    int cache[3];
} weft__tcpu;

typedef struct weft__tgroup { /* a package, core, cache or node */
    int os;
    unsigned parent;  /* cores: their package; packages: their core count */
    unsigned level;   /* caches */
    int type;         /* caches */
    uint64_t bytes;   /* caches: size; nodes: memory */
    unsigned line;
    int ways;
    unsigned first, n; /* its CPUs: ids[first .. first + n) */
} weft__tgroup;

struct weft_topology {
    const char *backend;
    unsigned ncpus, usable;
    weft__tcpu *cpu;        /* [ncpus], increasing OS number */
    int max_os;             /* os_to_cpu has max_os entries */
    int *os_to_cpu;         /* OS number -> index in cpu[], or -1 */
    unsigned ngroup[4];     /* packages, cores, caches, nodes */
    weft__tgroup *group[4];
    int *ids;               /* every group's CPU list */
    unsigned nids;
};
enum { WEFT__G_PKG = 0, WEFT__G_CORE = 1, WEFT__G_CACHE = 2, WEFT__G_NODE = 3 };

/* Builds a topology from raw, listing only the CPUs in allowed[0..nallowed)
 * (sorted; NULL: all), with `quota` (0: none) capping usable.  0,
 * WEFT_ENOENT (no CPU left) or WEFT_ENOMEM. */
int weft__topo_build(const weft__topo_raw *raw, const int *allowed, unsigned nallowed, unsigned quota,
                     const char *backend, weft_topology **out);

/* The synthetic machine: the CPUs given (sorted) as cores of one package with
 * one shared L3 of unknown size and one NUMA node. */
int weft__topo_synthetic(weft__topo_raw *raw, const int *cpus, unsigned n);

/* Detection with everything explicit, for tests: the sysfs tree under `root`
 * (its cgroup files too: root/sys/fs/cgroup, root/proc/self/cgroup), listing
 * only allowed[0..nallowed) (NULL: all).  Falls back to the synthetic machine
 * over `allowed` (or CPU 0) when the tree has no CPU. */
int weft__topology_detect_at(const char *root, const int *allowed, unsigned nallowed,
                             weft_topology **out);

#endif
