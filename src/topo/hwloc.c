/* The hwloc backend: libhwloc.so.15 (hwloc 2.x) through dlopen, so weft
 * never needs hwloc to build or to run.  The library stays loaded once found
 * (unloading a library that may have started plugins is not worth the risk);
 * each detection makes and destroys its own hwloc topology. */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "platform/files.h"
#include "platform/platform.h"
#include "topo/hwloc_abi.h"
#include "topo/topo.h"

typedef struct hwloc_api {
    unsigned (*get_api_version)(void);
    int (*topology_init)(void **topo);
    int (*topology_load)(void *topo);
    void (*topology_destroy)(void *topo);
    int (*set_icache_types_filter)(void *topo, int filter);
    int (*get_type_depth)(void *topo, int type);
    unsigned (*get_nbobjs_by_depth)(void *topo, int depth);
    struct weft__hwloc_obj *(*get_obj_by_depth)(void *topo, int depth, unsigned idx);
    int (*bitmap_first)(const void *set);
    int (*bitmap_next)(const void *set, int prev);
} hwloc_api;

static hwloc_api api;
/* 0: not tried, 2: being loaded by one thread, 1: loaded (api filled), -1: not
 * available.  api is written before the release store of 1 and read only
 * after an acquire load of 1. */
static _Atomic int api_state;

#define SYM(field, name) (*(void **)&api.field = weft__dl_sym(lib, name)) != NULL

static bool open_api(void) {
    void *lib = weft__dl_open("libhwloc.so.15");
    bool ok = lib && SYM(get_api_version, "hwloc_get_api_version") && SYM(topology_init, "hwloc_topology_init") &&
              SYM(topology_load, "hwloc_topology_load") && SYM(topology_destroy, "hwloc_topology_destroy") &&
              SYM(get_type_depth, "hwloc_get_type_depth") &&
              SYM(get_nbobjs_by_depth, "hwloc_get_nbobjs_by_depth") &&
              SYM(get_obj_by_depth, "hwloc_get_obj_by_depth") && SYM(bitmap_first, "hwloc_bitmap_first") &&
              SYM(bitmap_next, "hwloc_bitmap_next") && api.get_api_version() >> 16 == 2;
    /* Optional: without it hwloc 2 leaves instruction caches out. */
    if (ok) *(void **)&api.set_icache_types_filter = weft__dl_sym(lib, "hwloc_topology_set_icache_types_filter");
    if (!ok) weft__dl_close(lib);
    return ok;
}

/* Loads the library once per process; 1 when usable, else -1.  A thread that
 * finds another loading it waits (once per process, a few milliseconds). */
static int load_api(void) {
    int s = atomic_load_explicit(&api_state, memory_order_acquire);
    if (s == 1 || s == -1) return s;
    int expected = 0;
    if (atomic_compare_exchange_strong_explicit(&api_state, &expected, 2, memory_order_acquire,
                                                memory_order_acquire)) {
        s = open_api() ? 1 : -1;
        atomic_store_explicit(&api_state, s, memory_order_release); /* publishes api */
        return s;
    }
    unsigned spins = 0;
    while ((s = atomic_load_explicit(&api_state, memory_order_acquire)) == 2) weft__spin_pause(&spins);
    return s;
}

/* The OS numbers in an hwloc cpuset, sorted (hwloc's bitmaps are ordered). */
static int cpus_of(const void *set, int **out, unsigned *n) {
    *out = NULL;
    *n = 0;
    if (!set) return 0;
    unsigned count = 0;
    for (int c = api.bitmap_first(set); c >= 0; c = api.bitmap_next(set, c)) count++;
    if (!count) return 0;
    int *v = weft__alloc(count * sizeof *v);
    if (!v) return WEFT_ENOMEM;
    unsigned k = 0;
    for (int c = api.bitmap_first(set); c >= 0 && k < count; c = api.bitmap_next(set, c)) v[k++] = c;
    *out = v;
    *n = k;
    return 0;
}

static unsigned depth_count(void *topo, int type, int *depth) {
    *depth = api.get_type_depth(topo, type);
    if (*depth < 0 && *depth != WEFT__HWLOC_DEPTH_NUMANODE) return 0;
    return api.get_nbobjs_by_depth(topo, *depth);
}

/* Every PU, with its package's and core's numbers (hwloc's core numbers may
 * repeat across packages and be unknown; the core's logical index never). */
static int load_pus(weft__topo_raw *raw, void *topo) {
    int dp, dc, du;
    unsigned np = depth_count(topo, WEFT__HWLOC_OBJ_PACKAGE, &dp);
    unsigned nc = depth_count(topo, WEFT__HWLOC_OBJ_CORE, &dc);
    unsigned nu = depth_count(topo, WEFT__HWLOC_OBJ_PU, &du);
    for (unsigned i = 0; i < nu; i++) {
        struct weft__hwloc_obj *pu = api.get_obj_by_depth(topo, du, i);
        if (pu && pu->os_index <= WEFT__TOPO_MAX_CPU) weft__raw_add_cpu(raw, (int)pu->os_index, 0, (int)pu->os_index);
    }
    if (raw->oom) return WEFT_ENOMEM;
    /* OS number -> raw index, so that each package's and core's PUs are found
     * in O(1) */
    int max = 0;
    for (unsigned k = 0; k < raw->ncpus; k++) max = raw->cpus[k].os > max ? raw->cpus[k].os : max;
    int *slot = weft__alloc(((size_t)max + 1) * sizeof *slot);
    if (!slot) return WEFT_ENOMEM;
    for (int os = 0; os <= max; os++) slot[os] = -1;
    for (unsigned k = 0; k < raw->ncpus; k++) slot[raw->cpus[k].os] = (int)k;
    for (unsigned pass = 0; pass < 2; pass++) {
        unsigned n = pass ? nc : np;
        for (unsigned i = 0; i < n; i++) {
            struct weft__hwloc_obj *o = api.get_obj_by_depth(topo, pass ? dc : dp, i);
            if (!o || !o->cpuset) continue;
            for (int c = api.bitmap_first(o->cpuset); c >= 0; c = api.bitmap_next(o->cpuset, c)) {
                if (c > max || slot[c] < 0) continue;
                weft__raw_cpu *cpu = &raw->cpus[slot[c]];
                if (pass) cpu->core = (int)o->logical_index;
                else cpu->pkg = o->os_index <= 1u << 30 ? (int)o->os_index : (int)i;
            }
        }
    }
    weft__free(slot, ((size_t)max + 1) * sizeof *slot);
    return 0;
}

static int load_caches(weft__topo_raw *raw, void *topo) {
    static const int types[] = {WEFT__HWLOC_OBJ_L1CACHE,  WEFT__HWLOC_OBJ_L2CACHE,  WEFT__HWLOC_OBJ_L3CACHE,
                                WEFT__HWLOC_OBJ_L1ICACHE, WEFT__HWLOC_OBJ_L2ICACHE, WEFT__HWLOC_OBJ_L3ICACHE};
    for (unsigned t = 0; t < sizeof types / sizeof *types; t++) {
        int depth;
        unsigned n = depth_count(topo, types[t], &depth);
        for (unsigned i = 0; i < n; i++) {
            struct weft__hwloc_obj *o = api.get_obj_by_depth(topo, depth, i);
            if (!o || !o->attr) continue;
            const struct weft__hwloc_cache_attr *a = o->attr;
            weft__raw_set c = {.level = a->depth, .type = a->type, .bytes = a->size, .line = a->linesize,
                               .ways = a->associativity};
            if (c.type < WEFT_CACHE_UNIFIED || c.type > WEFT_CACHE_INSTRUCTION) c.type = WEFT_CACHE_UNIFIED;
            if (cpus_of(o->cpuset, &c.cpus, &c.ncpus)) return WEFT_ENOMEM;
            if (c.ncpus) weft__raw_add_cache(raw, &c);
            if (raw->oom) return WEFT_ENOMEM;
        }
    }
    return 0;
}

static int load_nodes(weft__topo_raw *raw, void *topo) {
    int depth;
    unsigned n = depth_count(topo, WEFT__HWLOC_OBJ_NUMANODE, &depth);
    for (unsigned i = 0; i < n; i++) {
        struct weft__hwloc_obj *o = api.get_obj_by_depth(topo, depth, i);
        if (!o) continue;
        weft__raw_set node = {.os = (int)o->os_index};
        if (o->attr) node.bytes = ((const struct weft__hwloc_numanode_attr *)o->attr)->local_memory;
        if (cpus_of(o->cpuset, &node.cpus, &node.ncpus)) return WEFT_ENOMEM;
        weft__raw_add_node(raw, &node);
        if (raw->oom) return WEFT_ENOMEM;
    }
    return 0;
}

static int hwloc_load(weft__topo_raw *raw, const char *root) {
    /* hwloc reads the real machine only: a test's fake tree is sysfs's. */
    if (root[0] || load_api() != 1) return WEFT_ENOENT;
    void *topo = NULL;
    if (api.topology_init(&topo) != 0) return WEFT_ENOENT;
    if (api.set_icache_types_filter) api.set_icache_types_filter(topo, 0 /* HWLOC_TYPE_FILTER_KEEP_ALL */);
    int st = api.topology_load(topo) == 0 ? 0 : WEFT_ENOENT;
    if (st == 0) st = load_pus(raw, topo);
    if (st == 0) st = load_caches(raw, topo);
    if (st == 0) st = load_nodes(raw, topo);
    if (st == 0 && raw->ncpus == 0) st = WEFT_ENOENT;
    api.topology_destroy(topo);
    return st;
}

const weft__topo_backend weft__topo_hwloc = {.name = "hwloc", .load = hwloc_load};
