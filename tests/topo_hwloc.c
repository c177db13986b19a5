#define _XOPEN_SOURCE 700
/* The hwloc backend against sysfs and lstopo on this machine; each test is
 * skipped by name where hwloc (the library, its header or lstopo) is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topo/hwloc_abi.h"
#include "topo/topo.h"
#include "weft.h"
#include "weft/topology.h"

#if defined(__has_include)
#  if __has_include(<hwloc.h>)
#    include <hwloc.h>
#    define HAVE_HWLOC_H 1
#  endif
#endif
#include <stddef.h>

TEST(hwloc_abi_mirror_matches_the_installed_header) {
#ifdef HAVE_HWLOC_H
    ASSERT_EQ(offsetof(struct weft__hwloc_obj, type), offsetof(struct hwloc_obj, type));
    ASSERT_EQ(offsetof(struct weft__hwloc_obj, os_index), offsetof(struct hwloc_obj, os_index));
    ASSERT_EQ(offsetof(struct weft__hwloc_obj, attr), offsetof(struct hwloc_obj, attr));
    ASSERT_EQ(offsetof(struct weft__hwloc_obj, logical_index), offsetof(struct hwloc_obj, logical_index));
    ASSERT_EQ(offsetof(struct weft__hwloc_obj, cpuset), offsetof(struct hwloc_obj, cpuset));
    ASSERT_EQ(offsetof(struct weft__hwloc_cache_attr, size), offsetof(struct hwloc_cache_attr_s, size));
    ASSERT_EQ(offsetof(struct weft__hwloc_cache_attr, depth), offsetof(struct hwloc_cache_attr_s, depth));
    ASSERT_EQ(offsetof(struct weft__hwloc_cache_attr, linesize), offsetof(struct hwloc_cache_attr_s, linesize));
    ASSERT_EQ(offsetof(struct weft__hwloc_cache_attr, associativity),
              offsetof(struct hwloc_cache_attr_s, associativity));
    ASSERT_EQ(offsetof(struct weft__hwloc_cache_attr, type), offsetof(struct hwloc_cache_attr_s, type));
    ASSERT_EQ(offsetof(struct weft__hwloc_numanode_attr, local_memory),
              offsetof(struct hwloc_numanode_attr_s, local_memory));
    ASSERT_EQ(WEFT__HWLOC_OBJ_PACKAGE, HWLOC_OBJ_PACKAGE);
    ASSERT_EQ(WEFT__HWLOC_OBJ_CORE, HWLOC_OBJ_CORE);
    ASSERT_EQ(WEFT__HWLOC_OBJ_PU, HWLOC_OBJ_PU);
    ASSERT_EQ(WEFT__HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1CACHE);
    ASSERT_EQ(WEFT__HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3CACHE);
    ASSERT_EQ(WEFT__HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L1ICACHE);
    ASSERT_EQ(WEFT__HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L3ICACHE);
    ASSERT_EQ(WEFT__HWLOC_OBJ_NUMANODE, HWLOC_OBJ_NUMANODE);
    ASSERT_EQ(WEFT__HWLOC_DEPTH_NUMANODE, HWLOC_TYPE_DEPTH_NUMANODE);
    ASSERT_EQ(WEFT_CACHE_UNIFIED, HWLOC_OBJ_CACHE_UNIFIED);
    ASSERT_EQ(WEFT_CACHE_DATA, HWLOC_OBJ_CACHE_DATA);
    ASSERT_EQ(WEFT_CACHE_INSTRUCTION, HWLOC_OBJ_CACHE_INSTRUCTION);
#else
    SKIP("hwloc.h is not installed (libhwloc-dev)");
#endif
}

static weft_topology *detect_hwloc(void) {
    weft_topology *t;
    int st = weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_HWLOC}, &t);
    if (st == WEFT_ENOENT) SKIP("libhwloc.so.15 cannot be loaded");
    ASSERT_OK(st);
    return t;
}

static void same_list(const int *a, unsigned na, const int *b, unsigned nb) {
    ASSERT_EQ(na, nb);
    for (unsigned i = 0; i < na; i++) ASSERT_EQ(a[i], b[i]);
}

TEST(hwloc_and_sysfs_agree_on_this_machine) {
    weft_topology *h = detect_hwloc(), *s;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &s));
    ASSERT_STREQ(weft_topology_backend(h), "hwloc");
    ASSERT_EQ(weft_topology_cpu_count(h), weft_topology_cpu_count(s));
    ASSERT_EQ(weft_topology_package_count(h), weft_topology_package_count(s));
    ASSERT_EQ(weft_topology_core_count(h), weft_topology_core_count(s));
    ASSERT_EQ(weft_topology_numa_node_count(h), weft_topology_numa_node_count(s));
    for (unsigned i = 0; i < weft_topology_cpu_count(s); i++) {
        weft_cpu_info a, b;
        ASSERT_OK(weft_topology_cpu(h, i, &a));
        ASSERT_OK(weft_topology_cpu(s, i, &b));
        ASSERT_EQ(a.os_index, b.os_index);
        ASSERT_EQ(a.package, b.package);
        ASSERT_EQ(a.core, b.core);
        ASSERT_EQ(a.smt, b.smt);
        ASSERT_EQ(a.numa_node, b.numa_node);
        for (int level = 0; level < 3; level++) {
            ASSERT_EQ(a.cache[level] < 0, b.cache[level] < 0);
            if (a.cache[level] < 0) continue;
            weft_cache_info x, y;
            ASSERT_OK(weft_topology_cache(h, (unsigned)a.cache[level], &x));
            ASSERT_OK(weft_topology_cache(s, (unsigned)b.cache[level], &y));
            ASSERT_EQ(x.level, y.level);
            ASSERT_EQ(x.size, y.size);
            ASSERT_EQ(x.line_size, y.line_size);
            same_list(x.cpus, x.ncpus, y.cpus, y.ncpus);
        }
    }
    for (unsigned i = 0; i < weft_topology_numa_node_count(s); i++) {
        weft_numa_node_info a, b;
        ASSERT_OK(weft_topology_numa_node(h, i, &a));
        ASSERT_OK(weft_topology_numa_node(s, i, &b));
        ASSERT_EQ(a.os_index, b.os_index);
        same_list(a.cpus, a.ncpus, b.cpus, b.ncpus);
        /* Both read the node's MemTotal; hwloc may round to pages. */
        ASSERT_LE(a.memory > b.memory ? a.memory - b.memory : b.memory - a.memory, b.memory / 100);
    }
    weft_topology_destroy(h);
    weft_topology_destroy(s);
}

/* How many objects of a type lstopo shows ("--only core" prints one line each). */
static long lstopo_count(const char *type) {
    char cmd[256], line[512];
    snprintf(cmd, sizeof cmd, "lstopo-no-graphics --only %s 2>/dev/null", type);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    long n = 0;
    while (fgets(line, sizeof line, p)) n++;
    return pclose(p) == 0 ? n : -1;
}

TEST(lstopo_sees_what_weft_sees_on_this_machine) {
    if (lstopo_count("pu") <= 0) SKIP("lstopo-no-graphics is not installed (hwloc)");
    weft_topology *t;
    /* lstopo lists the CPUs of the cgroup's cpuset, not of the affinity mask. */
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS, .all_cpus = true}, &t));
    ASSERT_EQ(lstopo_count("pu"), weft_topology_cpu_count(t));
    ASSERT_EQ(lstopo_count("core"), weft_topology_core_count(t));
    ASSERT_EQ(lstopo_count("package"), weft_topology_package_count(t));
    ASSERT_EQ(lstopo_count("numanode"), weft_topology_numa_node_count(t));
    long l3 = 0;
    for (unsigned i = 0; i < weft_topology_cache_count(t); i++) {
        weft_cache_info k;
        ASSERT_OK(weft_topology_cache(t, i, &k));
        l3 += k.level == 3;
    }
    ASSERT_EQ(lstopo_count("l3cache"), l3);
    weft_topology_destroy(t);
}

TEST(hwloc_reads_no_fake_tree) {
    weft__topo_raw raw;
    weft__raw_init(&raw);
    ASSERT_STATUS(weft__topo_hwloc.load(&raw, "/tmp/not-a-machine"), WEFT_ENOENT);
    weft__raw_free(&raw);
}
