/* The part of hwloc 2.x's ABI (libhwloc.so.15) that the hwloc backend uses,
 * written out so that weft needs no hwloc header to build.  hwloc keeps this
 * ABI for the whole 2.x series (the library's SONAME changes otherwise); the
 * backend checks hwloc_get_api_version() at load.  tests/topo_hwloc.c compares
 * every offset below with <hwloc.h> where that header is installed.  Internal. */
#ifndef WEFT_TOPO_HWLOC_ABI_H
#define WEFT_TOPO_HWLOC_ABI_H

#include <stdint.h>

/* hwloc_obj_type_t */
enum {
    WEFT__HWLOC_OBJ_PACKAGE = 1,
    WEFT__HWLOC_OBJ_CORE = 2,
    WEFT__HWLOC_OBJ_PU = 3,
    WEFT__HWLOC_OBJ_L1CACHE = 4,
    WEFT__HWLOC_OBJ_L2CACHE = 5,
    WEFT__HWLOC_OBJ_L3CACHE = 6,
    WEFT__HWLOC_OBJ_L1ICACHE = 9,
    WEFT__HWLOC_OBJ_L2ICACHE = 10,
    WEFT__HWLOC_OBJ_L3ICACHE = 11,
    WEFT__HWLOC_OBJ_NUMANODE = 13
};
/* hwloc_get_type_depth's special answers */
enum { WEFT__HWLOC_DEPTH_UNKNOWN = -1, WEFT__HWLOC_DEPTH_MULTIPLE = -2, WEFT__HWLOC_DEPTH_NUMANODE = -3 };
/* hwloc_obj_cache_type_t: unified, data, instruction (weft_cache_type's order) */

struct weft__hwloc_cache_attr { /* union hwloc_obj_attr_u .cache */
    uint64_t size;
    unsigned depth;
    unsigned linesize;
    int associativity;
    int type;
};
struct weft__hwloc_numanode_attr { /* union hwloc_obj_attr_u .numanode, its first field */
    uint64_t local_memory;
};

/* struct hwloc_obj, up to the cpuset. */
struct weft__hwloc_obj {
    int type;
    char *subtype;
    unsigned os_index;
    char *name;
    uint64_t total_memory;
    void *attr;
    int depth;
    unsigned logical_index;
    struct weft__hwloc_obj *next_cousin, *prev_cousin, *parent;
    unsigned sibling_rank;
    struct weft__hwloc_obj *next_sibling, *prev_sibling;
    unsigned arity;
    struct weft__hwloc_obj **children;
    struct weft__hwloc_obj *first_child, *last_child;
    int symmetric_subtree;
    unsigned memory_arity;
    struct weft__hwloc_obj *memory_first_child;
    unsigned io_arity;
    struct weft__hwloc_obj *io_first_child;
    unsigned misc_arity;
    struct weft__hwloc_obj *misc_first_child;
    void *cpuset; /* hwloc_cpuset_t */
};

#endif
