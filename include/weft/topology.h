/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * The machine's shape: CPUs, cores, caches and NUMA nodes; where to put
 * workers and in which order a thief should look for work.
 *
 *     weft_topology *topo;
 *     if (weft_topology_detect(NULL, &topo) == WEFT_OK) {
 *         printf("%u CPUs in %u packages (%s)\n", weft_topology_cpu_count(topo),
 *                weft_topology_package_count(topo), weft_topology_backend(topo));
 *         weft_topology_destroy(topo);
 *     }
 *
 * A topology is a snapshot taken once, at detection; afterwards it is read-only,
 * so every query below may be called from any number of threads at once
 * (wait-free: plain reads).  Nothing is detected behind the caller's back.
 *
 * Numbering.  CPUs are named by the OS's number (`os_index`, the number
 * sched_setaffinity and /proc/cpuinfo use), which may have gaps.  Packages,
 * cores, caches and NUMA nodes are named by their index in this topology,
 * 0..count-1, in increasing order of the OS's own number for them; each info
 * struct also carries the OS's number.  Lists of CPUs (`cpus`, `ncpus`) are in
 * increasing OS number and point into the topology: they stay valid until
 * weft_topology_destroy.
 *
 * Backends.  Two sources fill a topology, chosen at run time:
 *   - "hwloc": libhwloc.so.15 (hwloc 2.x), loaded with dlopen only when there;
 *     weft never needs it to build or to run.  Thorough, but slow to load
 *     (25-50 ms on a small machine, seconds on a large one).
 *   - "sysfs": Linux's /sys/devices/system/{cpu,node}, always there; well
 *     under a millisecond on small machines.
 * When neither yields a CPU (no /sys, as in some containers), the topology is
 * "synthetic": the CPUs of the affinity mask as cores of one package, sharing
 * one L3 of unknown size, in one NUMA node.  A file that is missing or does
 * not parse is warned about (log level warn) and its part is treated as
 * unknown: detection never fails because of sysfs's contents.
 * The environment variable WEFT_TOPOLOGY=auto|sysfs|hwloc picks the backend
 * for WEFT_TOPOLOGY_AUTO (the rule of docs/errors.md: a bad value is warned
 * about once and auto is used).  docs/guide-topology.md has the whole story.
 */
#ifndef WEFT_TOPOLOGY_H
#define WEFT_TOPOLOGY_H

#include "weft/common.h"

WEFT_EXTERN_C_BEGIN

/* A detected machine: its CPUs, packages, cores, caches and NUMA nodes
 * (weft_topology_detect, weft_topology_destroy).  Opaque; read-only once
 * made. */
typedef struct weft_topology weft_topology;

/* Where a topology comes from. */
typedef enum weft_topology_source {
    /* WEFT_TOPOLOGY if set; else hwloc when libhwloc.so.15 loads; else sysfs. */
    WEFT_TOPOLOGY_AUTO = 0,
    /* sysfs (or the synthetic fallback), never hwloc: the fast choice. */
    WEFT_TOPOLOGY_SYSFS = 1,
    /* hwloc only: detection fails with WEFT_ENOENT when it cannot be loaded. */
    WEFT_TOPOLOGY_HWLOC = 2
} weft_topology_source;

/* Detection settings; zero (or a NULL pointer) means the defaults. */
typedef struct weft_topology_config {
    /* Where to read the machine from (weft_topology_source).  0:
     * WEFT_TOPOLOGY_AUTO. */
    weft_topology_source source;
    /* List every online CPU of the machine, not only those in the calling
     * thread's affinity mask (the default). */
    bool all_cpus;
    /* A directory holding a sysfs tree (DIR/sys/devices/system/{cpu,node}) to
     * read instead of the real /sys: tools and tests describe machines they
     * do not run on this way.  Set, it means the sysfs backend and every CPU
     * of the tree (the affinity mask is about this machine, not that one);
     * a directory that cannot be read, or one with no
     * sys/devices/system/cpu directory in it (no sysfs tree: "/tmp"), is
     * WEFT_ENOENT, naming it; a tree whose cpu/ lists no usable CPU gives
     * the synthetic machine.  NULL: the real machine. */
    const char *sysfs_root;
} weft_topology_config;

/* Detects the machine's topology and returns it in *out (set to NULL on
 * failure).  Errors: WEFT_EINVAL (out NULL, an unknown source), WEFT_ENOENT
 * (source HWLOC and hwloc cannot be loaded or fails; a sysfs_root that is not
 * a readable directory or holds no sys/devices/system/cpu), WEFT_ENOMEM.  Any
 * thread; the calling thread's affinity mask decides which CPUs are listed. */
WEFT_API WEFT_NODISCARD weft_status weft_topology_detect(const weft_topology_config *config,
                                                         weft_topology **out);
/* Frees a topology (NULL is allowed).  No query may run on it concurrently. */
WEFT_API void weft_topology_destroy(weft_topology *topo);

/* "sysfs", "hwloc" or "synthetic"; "" for NULL.  A static string. */
WEFT_API const char *weft_topology_backend(const weft_topology *topo);

/* ---- CPUs ---- */

/* One CPU (a hardware thread). */
typedef struct weft_cpu_info {
    int os_index;       /* the OS's number for it */
    unsigned package;   /* index of its package */
    unsigned core;      /* index of its core */
    unsigned smt;       /* its rank among its core's threads: 0, then 1 for an SMT sibling, ... */
    unsigned numa_node; /* index of its NUMA node */
    /* Index of the data or unified cache it uses at level 1, 2 and 3, or -1
     * where there is none (or it is not known). */
    int cache[3];
} weft_cpu_info;

/* How many CPUs are listed (>= 1 for a detected topology; 0 for NULL): those
 * of the affinity mask, or all online ones with all_cpus. */
WEFT_API unsigned weft_topology_cpu_count(const weft_topology *topo);
/* How many CPUs the process can keep busy at once: the listed count, capped by
 * a cgroup v2 CPU quota (cpu.max, rounded up).  The default worker count. */
WEFT_API unsigned weft_topology_usable_cpus(const weft_topology *topo);
/* The i-th listed CPU (0 <= i < cpu_count, increasing OS number).  WEFT_EINVAL
 * for a NULL argument or i out of range. */
WEFT_API WEFT_NODISCARD weft_status weft_topology_cpu(const weft_topology *topo, unsigned i,
                                                      weft_cpu_info *out);
/* The index of the CPU the OS numbers os_index, or -1 when it is not listed
 * (or topo is NULL).  O(1). */
WEFT_API int weft_topology_cpu_index(const weft_topology *topo, int os_index);
/* The index of the NUMA node of the CPU the OS numbers cpu, or -1 when that
 * CPU is not listed.  O(1): two array reads. */
WEFT_API int weft_topology_numa_node_for_cpu(const weft_topology *topo, int cpu);

/* ---- packages and cores ---- */

/* A physical package (socket). */
typedef struct weft_package_info {
    int os_index;      /* physical_package_id */
    unsigned ncores;   /* cores with at least one listed CPU */
    const int *cpus;   /* its listed CPUs */
    unsigned ncpus;    /* entries of cpus */
} weft_package_info;

/* A core: its CPUs are SMT siblings of each other. */
typedef struct weft_core_info {
    int os_index;      /* core_id (unique within its package only), or hwloc's logical index;
                        * -1 when sysfs does not say (the CPU is then a core of its own) */
    unsigned package;  /* index of its package */
    const int *cpus;   /* its listed CPUs (OS numbers), SMT siblings of each other */
    unsigned ncpus;    /* entries of cpus (its listed SMT threads) */
} weft_core_info;

/* How many packages / cores topo lists (>= 1 for a detected topology; 0 for
 * NULL). */
WEFT_API unsigned weft_topology_package_count(const weft_topology *topo);
WEFT_API unsigned weft_topology_core_count(const weft_topology *topo);
/* The i-th package or core; WEFT_EINVAL for NULL arguments or i out of range. */
WEFT_API WEFT_NODISCARD weft_status weft_topology_package(const weft_topology *topo, unsigned i,
                                                          weft_package_info *out);
WEFT_API WEFT_NODISCARD weft_status weft_topology_core(const weft_topology *topo, unsigned i,
                                                       weft_core_info *out);

/* ---- caches ---- */

/* What a cache holds (weft_cache_info.type). */
typedef enum weft_cache_type {
    WEFT_CACHE_UNIFIED = 0,    /* data and instructions */
    WEFT_CACHE_DATA = 1,       /* data only (an L1d) */
    WEFT_CACHE_INSTRUCTION = 2 /* instructions only (an L1i) */
} weft_cache_type;

/* One cache, listed once however many CPUs share it. */
typedef struct weft_cache_info {
    unsigned level;        /* 1, 2, 3, ... */
    weft_cache_type type;  /* unified, data or instruction */
    uint64_t size;         /* bytes; 0 when unknown */
    unsigned line_size;    /* bytes; 0 when unknown */
    int ways;              /* associativity; 0 when unknown, -1 fully associative */
    const int *cpus;       /* the listed CPUs that share it */
    unsigned ncpus;        /* entries of cpus */
} weft_cache_info;

/* Caches are ordered by level, then type (unified, data, instruction), then
 * their first CPU. */
WEFT_API unsigned weft_topology_cache_count(const weft_topology *topo);
WEFT_API WEFT_NODISCARD weft_status weft_topology_cache(const weft_topology *topo, unsigned i,
                                                        weft_cache_info *out);

/* ---- NUMA nodes ---- */

/* A NUMA node.  A node may have memory and no CPU (ncpus 0): far or
 * CXL-attached memory; it is listed, but no worker is ever placed on it. */
typedef struct weft_numa_node_info {
    int os_index;      /* the N of /sys/devices/system/node/nodeN */
    uint64_t memory;   /* bytes of memory (MemTotal); 0 when unknown */
    const int *cpus;   /* its listed CPUs (OS numbers) */
    unsigned ncpus;    /* entries of cpus; 0 for a node with memory only */
} weft_numa_node_info;

/* A machine without NUMA information has one node holding every CPU. */
WEFT_API unsigned weft_topology_numa_node_count(const weft_topology *topo);
WEFT_API WEFT_NODISCARD weft_status weft_topology_numa_node(const weft_topology *topo, unsigned i,
                                                            weft_numa_node_info *out);

/* ---- placement: which CPU each worker binds to ---- */

/* Every strategy lays the (chosen) CPUs out in an order and gives worker w the
 * CPU at position w (w modulo the count when there are more workers than
 * CPUs).  "Cores first" below means: the first thread of every core in that
 * group, then their second threads, and so on. */
typedef enum weft_placement {
    /* No binding: every worker gets -1, and the OS places threads. */
    WEFT_PLACE_NONE = 0,
    /* Neighbours together: package by package, L3 by L3, core by core, SMT
     * siblings next to each other.  Most cache sharing between neighbours. */
    WEFT_PLACE_COMPACT = 1,
    /* Cores first over the whole machine: SMT siblings only once every core
     * has a worker. */
    WEFT_PLACE_PHYSICAL_CORES = 2,
    /* As far apart as possible: alternately across packages, then across L3
     * domains within a package, then across cores; SMT siblings last.  The
     * most cache and memory bandwidth per worker. */
    WEFT_PLACE_SCATTER = 3,
    /* One NUMA node after the other, cores first within each. */
    WEFT_PLACE_NUMA_DENSE = 4,
    /* Worker w on NUMA node w mod nodes (nodes with CPUs), cores first within
     * each node.  On nodes of unequal size (or a mask that leaves them so) the
     * nodes take turns while each has a CPU left for the round; a node out of
     * CPUs drops out of the turn, so every CPU takes a worker before any takes
     * two (3 + 1 CPUs: nodes 0, 1, 0, 0, then again). */
    WEFT_PLACE_NUMA_ROUND_ROBIN = 5,
    /* Worker w on L3 domain w mod domains, cores first within each domain;
     * on domains of unequal size, as NUMA_ROUND_ROBIN on unequal nodes. */
    WEFT_PLACE_L3_DOMAIN = 6
} weft_placement;
/* The seed's name for SCATTER. */
#define WEFT_PLACE_SPARSE WEFT_PLACE_SCATTER

/* Placement settings; zero means the defaults (no binding). */
typedef struct weft_placement_config {
    /* Where worker w goes (weft_placement).  0: WEFT_PLACE_NONE, no binding
     * by the placement: as an executor's placement, the executor's `affinity`
     * then decides (WEFT_AFFINITY_CPUS still binds each worker to a CPU;
     * weft/core.h), and WEFT_PLACEMENT is not read. */
    weft_placement strategy;
    /* Use only the CPUs of these NUMA nodes (indices); NULL means all. */
    const unsigned *numa_nodes;
    unsigned numa_node_count; /* entries of numa_nodes; 0 with NULL: every node */
} weft_placement_config;

/* Fills cpus[0..workers-1] with the OS number of the CPU each worker binds to
 * (all -1 for WEFT_PLACE_NONE).  Errors: WEFT_EINVAL (topo or cpus NULL,
 * workers 0, an unknown strategy, a NUMA node index out of range or
 * numa_nodes NULL with a count), WEFT_ENOENT (the chosen nodes have no CPU),
 * WEFT_ENOMEM.  config NULL means the defaults.  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_topology_place(const weft_topology *topo,
                                                        const weft_placement_config *config,
                                                        unsigned workers, int *cpus);
/* The CPU of one worker out of `workers` (the seed's get_worker_cpus): the
 * same answer as cpus[worker] of weft_topology_place.  WEFT_EINVAL also when
 * worker >= workers. */
WEFT_API WEFT_NODISCARD weft_status weft_topology_worker_cpu(const weft_topology *topo,
                                                             const weft_placement_config *config,
                                                             unsigned worker, unsigned workers,
                                                             int *cpu);

/* Binds the calling thread to the n CPUs in cpus (OS numbers): it runs only
 * there from now on.  Errors: WEFT_EINVAL (cpus NULL, n 0, a negative number or
 * one past 8191), WEFT_ESYS (the OS refused: a CPU outside the cgroup's
 * cpuset, or offline).  Any thread, for itself. */
WEFT_API WEFT_NODISCARD weft_status weft_thread_bind(const int *cpus, size_t n);

/* ---- steal tiers: in which order a thief tries its victims ---- */

enum {
    WEFT_TIER_L3 = 0,   /* workers whose CPU shares the thief's L3 */
    WEFT_TIER_NUMA = 1, /* the others on the thief's NUMA node */
    WEFT_TIER_REST = 2, /* everyone else */
    WEFT_TIERS = 3      /* the number of tiers */
};

/* The victims of worker `self`, given every worker's CPU (cpus[w], an OS
 * number, or -1 for a worker that is not bound), grouped in tiers: fills
 * victims[0..workers-2] with the other workers' indices, tier by tier and in
 * increasing index within a tier, and tier_end[t] with the position just past
 * tier t (so tier t is victims[tier_end[t-1] .. tier_end[t]), tier -1 ending
 * at 0).  An unbound thief or victim, or a CPU that is not listed, falls in the
 * REST tier; on a machine with one L3 every bound victim is in the L3 tier.
 * Errors: WEFT_EINVAL (a NULL pointer, workers 0, self >= workers).  Any
 * thread. */
WEFT_API WEFT_NODISCARD weft_status weft_topology_steal_tiers(const weft_topology *topo,
                                                              const int *cpus, unsigned workers,
                                                              unsigned self, unsigned *victims,
                                                              unsigned tier_end[WEFT_TIERS]);

/* ---- NUMA memory: blocks on a node or interleaved over nodes ---- */

/* How a NUMA allocation came out.  Every outcome is usable memory; only
 * WEFT_NUMA_PLACED means the kernel will put its pages where asked. */
typedef enum weft_numa_outcome {
    /* The policy is set: each page comes from the node (preferred: from
     * another when the node is out of memory, never a failure) or, for an
     * interleaved block, from the nodes in turn, when first touched. */
    WEFT_NUMA_PLACED = 0,
    /* The topology has a single NUMA node: plain memory, nothing to place
     * (no system call made). */
    WEFT_NUMA_ONE_NODE = 1,
    /* The kernel refused the policy (no NUMA support, a seccomp filter, a
     * node it does not know): plain memory, first-touch placement. */
    WEFT_NUMA_UNPLACED = 2
} weft_numa_outcome;

/* Allocates `size` bytes (rounded up to whole pages, page-aligned, through
 * weft_set_allocator's hook, not zeroed) whose pages come from NUMA node
 * `node` (an index of topo, 0..weft_topology_numa_node_count - 1) when first
 * touched.  topo NULL means the machine as executors see it (every online
 * CPU, sysfs; detected once per process).  *out receives the block;
 * *outcome (may be NULL) says whether it was placed.  Errors: WEFT_EINVAL
 * (out NULL, size 0, node out of range), WEFT_ENOMEM (the allocator failed;
 * *out is NULL), WEFT_ENOENT (topo NULL and the machine cannot be
 * detected).  Free with weft_numa_free and the same size.  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_numa_alloc(const weft_topology *topo, size_t size, unsigned node,
                                                    void **out, weft_numa_outcome *outcome);
/* The same with the pages spread round-robin over the nodes
 * nodes[0..n) (indices of topo), or over every node with memory when nodes
 * is NULL and n is 0: for data every worker reads, so no node's memory
 * bandwidth is the bottleneck.  Errors as weft_numa_alloc, and WEFT_EINVAL
 * for nodes NULL with n > 0, nodes given with n == 0, or a node out of
 * range.  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_numa_alloc_interleaved(const weft_topology *topo, size_t size,
                                                                const unsigned *nodes, unsigned n,
                                                                void **out, weft_numa_outcome *outcome);
/* Frees a block of weft_numa_alloc or weft_numa_alloc_interleaved; size is
 * the size asked for.  Its range gets the default policy back first, so
 * memory the allocator reuses is not bound to a node.  NULL is allowed.
 * Any thread (not while another still uses the block). */
WEFT_API void weft_numa_free(void *p, size_t size);
/* The NUMA node (index of topo) the page holding address p is on, in *node.
 * topo NULL means the machine as for weft_numa_alloc.  Never faults the page
 * in.  Errors: WEFT_EINVAL (p or node NULL), WEFT_ENOENT (the page has not
 * been touched yet, so it is on no node; or the kernel names a node topo
 * does not list; or topo NULL and no machine), WEFT_ESYS (the kernel cannot
 * say: no NUMA support, calls refused).  Any thread. */
WEFT_API WEFT_NODISCARD weft_status weft_numa_node_of_address(const weft_topology *topo, const void *p,
                                                              unsigned *node);

/* ---- config sizes (docs/abi.md) ----------------------------------------------
 *
 * Each call of this header that takes a config struct by pointer has a _sized
 * form, told the sizeof the caller was compiled with (right after the
 * pointer).  A program never names them: the header defines each call's name
 * as an inline function that passes this header's size.  A shorter struct (an
 * older header) reads as zero, the defaults, for the fields it lacks; a
 * longer one (a newer header) is WEFT_EINVAL, logged with the offset, unless
 * every byte this library does not know is zero.  Otherwise each behaves,
 * fails and may be called exactly as the call of its name.  The exported
 * symbols without _sized, which binaries built before the sizes were passed
 * call, read the 1.0 layout. */
/* weft_topology_detect with a weft_topology_config of config_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_topology_detect_sized(const weft_topology_config *config,
                                                               size_t config_size,
                                                               weft_topology **out);
/* weft_topology_place with a weft_placement_config of config_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status weft_topology_place_sized(const weft_topology *topo,
                                                              const weft_placement_config *config,
                                                              size_t config_size, unsigned workers,
                                                              int *cpus);
/* weft_topology_worker_cpu with a weft_placement_config of config_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_status
weft_topology_worker_cpu_sized(const weft_topology *topo, const weft_placement_config *config,
                               size_t config_size, unsigned worker, unsigned workers, int *cpu);
#ifndef WEFT_BUILDING
WEFT_NODISCARD static inline weft_status
weft__topology_detect_inline(const weft_topology_config *config, weft_topology **out) {
    return weft_topology_detect_sized(config, sizeof(weft_topology_config), out);
}
#define weft_topology_detect weft__topology_detect_inline
WEFT_NODISCARD static inline weft_status
weft__topology_place_inline(const weft_topology *topo, const weft_placement_config *config,
                            unsigned workers, int *cpus) {
    return weft_topology_place_sized(topo, config, sizeof(weft_placement_config), workers, cpus);
}
#define weft_topology_place weft__topology_place_inline
WEFT_NODISCARD static inline weft_status
weft__topology_worker_cpu_inline(const weft_topology *topo, const weft_placement_config *config,
                                 unsigned worker, unsigned workers, int *cpu) {
    return weft_topology_worker_cpu_sized(topo, config, sizeof(weft_placement_config), worker,
                                          workers, cpu);
}
#define weft_topology_worker_cpu weft__topology_worker_cpu_inline
#endif

WEFT_EXTERN_C_END
#endif
