/* Detection: which backend, which CPUs, and the synthetic machine when
 * neither backend finds one. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/env.h"
#include "platform/files.h"
#include "platform/platform.h"
#include "topo/topo.h"
#include "core/error_detail.h"

int weft__topo_synthetic(weft__topo_raw *raw, const int *cpus, unsigned n) {
    weft__raw_set l3 = {.level = 3, .type = WEFT_CACHE_UNIFIED}, node = {0};
    l3.cpus = weft__alloc(n * sizeof *l3.cpus);
    node.cpus = weft__alloc(n * sizeof *node.cpus);
    if (!l3.cpus || !node.cpus) {
        weft__free(l3.cpus, n * sizeof *l3.cpus);
        weft__free(node.cpus, n * sizeof *node.cpus);
        return WEFT_ENOMEM;
    }
    memcpy(l3.cpus, cpus, n * sizeof *cpus);
    memcpy(node.cpus, cpus, n * sizeof *cpus);
    l3.ncpus = node.ncpus = n;
    for (unsigned i = 0; i < n; i++) weft__raw_add_cpu(raw, cpus[i], 0, cpus[i]);
    weft__raw_add_cache(raw, &l3);
    weft__raw_add_node(raw, &node);
    return raw->oom ? WEFT_ENOMEM : 0;
}

/* The synthetic machine over allowed (or CPU 0 when nothing is known). */
static int synthetic(const int *allowed, unsigned nallowed, unsigned quota, weft_topology **out) {
    static const int cpu0 = 0;
    if (!allowed || nallowed == 0) allowed = &cpu0, nallowed = 1;
    weft__topo_raw raw;
    weft__raw_init(&raw);
    int st = weft__topo_synthetic(&raw, allowed, nallowed);
    if (st == 0) st = weft__topo_build(&raw, NULL, 0, quota, "synthetic", out);
    weft__raw_free(&raw);
    return st;
}

/* One backend's machine, restricted to allowed.  WEFT_ENOENT when the backend
 * finds nothing, or nothing in allowed. */
static int from_backend(const weft__topo_backend *b, const char *root, const int *allowed, unsigned nallowed,
                        unsigned quota, weft_topology **out) {
    weft__topo_raw raw;
    weft__raw_init(&raw);
    int st = b->load(&raw, root);
    if (st == 0) st = weft__topo_build(&raw, allowed, nallowed, quota, b->name, out);
    weft__raw_free(&raw);
    return st;
}

static unsigned quota_at(const char *root) {
    char cg[1024], self[1024];
    if ((size_t)snprintf(cg, sizeof cg, "%s/sys/fs/cgroup", root) >= sizeof cg ||
        (size_t)snprintf(self, sizeof self, "%s/proc/self/cgroup", root) >= sizeof self)
        return 0;
    return weft__cgroup_cpu_limit(cg, self);
}

/* source: AUTO tries hwloc, then sysfs; HWLOC only hwloc; SYSFS only sysfs.
 * The synthetic machine covers the rest, except for an explicit HWLOC. */
static int detect(weft_topology_source source, bool hwloc_required, const char *root, const int *allowed,
                  unsigned nallowed, weft_topology **out) {
    *out = NULL;
    unsigned quota = quota_at(root);
    int st = WEFT_ENOENT;
    if (source != WEFT_TOPOLOGY_SYSFS) {
        st = from_backend(&weft__topo_hwloc, root, allowed, nallowed, quota, out);
        if (st != WEFT_ENOENT || hwloc_required) return st;
    }
    st = from_backend(&weft__topo_sysfs, root, allowed, nallowed, quota, out);
    if (st == WEFT_ENOENT) st = synthetic(allowed, nallowed, quota, out);
    return st;
}

int weft__topology_detect_at(const char *root, const int *allowed, unsigned nallowed, weft_topology **out) {
    return detect(WEFT_TOPOLOGY_SYSFS, false, root, allowed, nallowed, out);
}

/* The calling thread's affinity mask, sorted, in *out (weft__alloc'd, *cap
 * entries of which *n are the mask's): 0, with *out NULL when the mask
 * cannot be read (every CPU is listed then), or WEFT_ENOMEM.  A failed
 * allocation is WEFT_ENOMEM, not "cannot be read": that listed every online
 * CPU, outside the caller's mask, as a success.  A mask that changes between
 * the count and the read is read again (a grown one was taken as unreadable;
 * a shrunk one left entries unwritten). */
static int affinity(int **out, unsigned *n, unsigned *cap) {
    *out = NULL;
    *n = *cap = 0;
    for (int tries = 0; tries < 4; tries++) {
        int count = weft__affinity_cpus(NULL, 0);
        if (count <= 0) return 0;
        int *cpus = weft__alloc((size_t)count * sizeof *cpus);
        if (!cpus) return WEFT_ENOMEM;
        int again = weft__affinity_cpus(cpus, count);
        if (again > 0 && again <= count) {
            *out = cpus;
            *n = (unsigned)again;
            *cap = (unsigned)count;
            return 0;
        }
        weft__free(cpus, (size_t)count * sizeof *cpus);
        if (again <= 0) return 0;
    }
    return 0; /* still changing: every CPU */
}

static weft_topology_source env_source(void) {
    static const char *const words[] = {"auto", "sysfs", "hwloc", NULL};
    int k = weft__env_choice("WEFT_TOPOLOGY", words, "auto");
    return k < 0 ? WEFT_TOPOLOGY_AUTO : (weft_topology_source)k;
}

static int stop_at_first(void *ctx, const char *name) {
    (void)ctx, (void)name;
    return 1;
}

weft_status weft_topology_detect(const weft_topology_config *config, weft_topology **out) {
    if (!out) return weft__fail(__func__, WEFT_EINVAL, "out is NULL");
    *out = NULL;
    weft_topology_config c = config ? *config : (weft_topology_config){0};
    if ((unsigned)c.source > WEFT_TOPOLOGY_HWLOC)
        return weft__fail(__func__, WEFT_EINVAL, "source %d is unknown", (int)c.source);
    int st;
    if (c.sysfs_root) {
        /* A root that is not there is the caller's slip (a typo, a tree not
         * made yet): refused, where it gave the one-CPU synthetic machine.
         * So is a directory that holds no sysfs tree at all (sysfs_root = "/tmp",
         * or the tree's parent): topology.h asks for DIR/sys/devices/system/cpu.
         * A tree whose cpu/ has no usable CPU still describes a machine:
         * synthetic. */
        if (weft__dir_each(c.sysfs_root, stop_at_first, NULL) != 0)
            return weft__fail(__func__, WEFT_ENOENT, "sysfs_root '%s' is not a directory that can be read",
                              c.sysfs_root);
        char cpu_dir[4096];
        int len = snprintf(cpu_dir, sizeof cpu_dir, "%s/sys/devices/system/cpu", c.sysfs_root);
        if (len < 0 || (size_t)len >= sizeof cpu_dir || weft__dir_each(cpu_dir, stop_at_first, NULL) != 0)
            return weft__fail(__func__, WEFT_ENOENT,
                              "sysfs_root '%s' holds no sysfs tree: '%s/sys/devices/system/cpu' is not a directory "
                              "that can be read",
                              c.sysfs_root, c.sysfs_root);
        st = weft__topology_detect_at(c.sysfs_root, NULL, 0, out);
        return st == 0 ? WEFT_OK
                       : weft__fail(__func__, (weft_status)st, "no topology under '%s': %s", c.sysfs_root,
                                    weft_strerror((weft_status)st));
    }
    bool required = c.source == WEFT_TOPOLOGY_HWLOC;
    /* The environment only states a preference: hwloc asked for there but
     * missing means sysfs, not a failure. */
    if (c.source == WEFT_TOPOLOGY_AUTO) c.source = env_source();
    unsigned n = 0, cap = 0;
    int *allowed = NULL;
    st = c.all_cpus ? 0 : affinity(&allowed, &n, &cap);
    if (st == 0) st = detect(c.source, required, "", allowed, n, out);
    weft__free(allowed, (size_t)cap * sizeof *allowed);
    return st == 0 ? WEFT_OK : weft__fail_st(__func__, (weft_status)st);
}
