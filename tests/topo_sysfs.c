#define _XOPEN_SOURCE 700
/* The sysfs backend on fake trees (topo_fixture.h) and on this machine: what
 * it finds, what it does with missing and malformed files, and its memory. */
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "platform/files.h"
#include "topo_fixture.h"
#include "weft.h"
#include "weft/topology.h"

static weft_cpu_info cpu_at(const weft_topology *t, int os) {
    weft_cpu_info c;
    int i = weft_topology_cpu_index(t, os);
    if (i < 0) TEST_FAIL_("CPU %d not listed", os);
    ASSERT_OK(weft_topology_cpu(t, (unsigned)i, &c));
    return c;
}

TEST(cpulist_parse_reads_ranges_and_rejects_garbage) {
    int *v;
    unsigned n;
    ASSERT_OK(weft__cpulist_parse("0-3,8,10-11\n", &v, &n));
    ASSERT_EQ(n, 7);
    ASSERT_EQ(v[3], 3);
    ASSERT_EQ(v[4], 8);
    ASSERT_EQ(v[6], 11);
    weft__cpus_free(v, n);
    ASSERT_OK(weft__cpulist_parse("5,1-2,2,1\n", &v, &n)); /* sorted, each once */
    ASSERT_EQ(n, 3);
    ASSERT_EQ(v[0], 1);
    ASSERT_EQ(v[2], 5);
    weft__cpus_free(v, n);
    ASSERT_OK(weft__cpulist_parse("\n", &v, &n));
    ASSERT_EQ(n, 0);
    ASSERT_NULL(v);
    const char *bad[] = {"x", "1-", "3-1", "1,,2", "-1", "1 2", "99999999", "0-70000", "1;2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) ASSERT_STATUS(weft__cpulist_parse(bad[i], &v, &n), WEFT_EINVAL);
}

TEST(two_socket_smt_machine_has_its_packages_cores_and_siblings) {
    const fake_machine *m = &FAKE_TWO_SOCKET;
    const char *root = fake_write(m);
    weft_topology *t = fake_detect(root);
    ASSERT_STREQ(weft_topology_backend(t), "sysfs");
    ASSERT_EQ(weft_topology_cpu_count(t), 64);
    ASSERT_EQ(weft_topology_usable_cpus(t), 64);
    ASSERT_EQ(weft_topology_package_count(t), 2);
    ASSERT_EQ(weft_topology_core_count(t), 32);
    for (unsigned i = 0; i < 32; i++) {
        weft_core_info core;
        ASSERT_OK(weft_topology_core(t, i, &core));
        ASSERT_EQ(core.ncpus, 2);
        ASSERT_EQ(core.cpus[1] - core.cpus[0], 32); /* siblings far apart */
        ASSERT_EQ(core.package, i / 16);
    }
    weft_package_info pkg;
    ASSERT_OK(weft_topology_package(t, 1, &pkg));
    ASSERT_EQ(pkg.os_index, 1);
    ASSERT_EQ(pkg.ncores, 16);
    ASSERT_EQ(pkg.ncpus, 32);
    ASSERT_EQ(pkg.cpus[0], 16);
    ASSERT_EQ(pkg.cpus[16], 48);
    weft_cpu_info c = cpu_at(t, 40); /* thread 1 of core 8 of package 0 */
    ASSERT_EQ(c.package, 0);
    ASSERT_EQ(c.core, 8);
    ASSERT_EQ(c.smt, 1);
    ASSERT_EQ(cpu_at(t, 8).smt, 0);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(two_socket_machine_lists_each_cache_once_with_its_attributes) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    /* 32 cores x (L1d, L1i, L2) + 2 L3s */
    ASSERT_EQ(weft_topology_cache_count(t), 32 * 3 + 2);
    unsigned l3s = 0;
    for (unsigned i = 0; i < weft_topology_cache_count(t); i++) {
        weft_cache_info k;
        ASSERT_OK(weft_topology_cache(t, i, &k));
        ASSERT_EQ(k.line_size, 64);
        if (k.level == 1) ASSERT_EQ(k.ncpus, 2);
        if (k.level != 3) continue;
        l3s++;
        ASSERT_EQ(k.size, 32u << 20);
        ASSERT_EQ(k.ways, 16);
        ASSERT_EQ(k.ncpus, 32);
        ASSERT_EQ(k.type, WEFT_CACHE_UNIFIED);
    }
    ASSERT_EQ(l3s, 2);
    weft_cpu_info c = cpu_at(t, 50); /* package 1 */
    weft_cache_info l1, l3;
    ASSERT_OK(weft_topology_cache(t, (unsigned)c.cache[0], &l1));
    ASSERT_EQ(l1.type, WEFT_CACHE_DATA);
    ASSERT_EQ(l1.size, 48 << 10);
    ASSERT_EQ(l1.ways, 12);
    ASSERT_EQ(l1.cpus[0], 18);
    ASSERT_EQ(l1.cpus[1], 50);
    ASSERT_OK(weft_topology_cache(t, (unsigned)c.cache[2], &l3));
    ASSERT_EQ(l3.cpus[0], 16);
    ASSERT_NE(c.cache[2], cpu_at(t, 0).cache[2]);
    ASSERT_EQ(c.cache[2], cpu_at(t, 31).cache[2]);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(two_socket_machine_has_a_numa_node_per_package) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_numa_node_count(t), 2);
    weft_numa_node_info n;
    ASSERT_OK(weft_topology_numa_node(t, 1, &n));
    ASSERT_EQ(n.os_index, 1);
    ASSERT_EQ(n.memory, 16ull << 30);
    ASSERT_EQ(n.ncpus, 32);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(t, 40), 0);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(t, 20), 1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(t, 63), 1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(t, 64), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(t, -1), -1);
    ASSERT_EQ(weft_topology_numa_node_for_cpu(NULL, 0), -1);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(chiplet_machine_has_four_l3_domains_in_one_package) {
    const char *root = fake_write(&FAKE_CHIPLETS);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_package_count(t), 1);
    ASSERT_EQ(weft_topology_numa_node_count(t), 1);
    ASSERT_EQ(weft_topology_core_count(t), 32);
    int l3[4];
    for (int d = 0; d < 4; d++) {
        l3[d] = cpu_at(t, d * 8).cache[2];
        weft_cache_info k;
        ASSERT_OK(weft_topology_cache(t, (unsigned)l3[d], &k));
        ASSERT_EQ(k.ncpus, 16);
        ASSERT_EQ(k.cpus[0], d * 8);
        ASSERT_EQ(k.cpus[8], 32 + d * 8);
        for (int e = 0; e < d; e++) ASSERT_NE(l3[d], l3[e]);
        ASSERT_EQ(cpu_at(t, 32 + d * 8 + 7).cache[2], l3[d]);
    }
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(memory_only_node_is_listed_without_cpus) {
    const char *root = fake_write(&FAKE_MEMORY_NODE);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_numa_node_count(t), 2);
    weft_numa_node_info n;
    ASSERT_OK(weft_topology_numa_node(t, 1, &n));
    ASSERT_EQ(n.ncpus, 0);
    ASSERT_EQ(n.memory, 16ull << 30);
    ASSERT_OK(weft_topology_numa_node(t, 0, &n));
    ASSERT_EQ(n.ncpus, 8);
    for (int c = 0; c < 8; c++) ASSERT_EQ(weft_topology_numa_node_for_cpu(t, c), 0);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(odd_numbering_maps_interleaved_packages_and_skips_offline_cpus) {
    const fake_machine *m = &FAKE_ODD_NUMBERS;
    const char *root = fake_write(m);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_cpu_count(t), 16); /* cpu16 is offline */
    ASSERT_EQ(weft_topology_cpu_index(t, 16), -1);
    ASSERT_EQ(weft_topology_core_count(t), 8);
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < 4; c++) {
            weft_cpu_info a = cpu_at(t, fake_os(m, p, c, 0)), b = cpu_at(t, fake_os(m, p, c, 1));
            ASSERT_EQ(a.package, p);
            ASSERT_EQ(a.core, b.core);
            ASSERT_EQ(a.core, p * 4 + c); /* cores numbered by (package, core_id) */
            ASSERT_EQ(b.smt, 1);
            ASSERT_EQ(weft_topology_numa_node_for_cpu(t, fake_os(m, p, c, 1)), p);
        }
    weft_core_info core;
    ASSERT_OK(weft_topology_core(t, 5, &core));
    ASSERT_EQ(core.os_index, 2); /* core_id step 2: core 1 of package 1 */
    weft_package_info pkg;
    ASSERT_OK(weft_topology_package(t, 0, &pkg));
    ASSERT_EQ(pkg.cpus[0], 0);
    ASSERT_EQ(pkg.cpus[1], 2);
    ASSERT_EQ(pkg.cpus[4], 8);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(only_allowed_cpus_are_listed) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    static const int allowed[] = {0, 1, 16, 32, 33};
    weft_topology *t;
    ASSERT_OK(weft__topology_detect_at(root, allowed, 5, &t));
    ASSERT_EQ(weft_topology_cpu_count(t), 5);
    ASSERT_EQ(weft_topology_package_count(t), 2);
    ASSERT_EQ(weft_topology_core_count(t), 3);
    ASSERT_EQ(weft_topology_cpu_index(t, 2), -1);
    weft_cache_info l3;
    ASSERT_OK(weft_topology_cache(t, (unsigned)cpu_at(t, 0).cache[2], &l3));
    ASSERT_EQ(l3.ncpus, 4); /* 0, 1, 32, 33 of package 0's 32 */
    ASSERT_EQ(l3.size, 32u << 20);
    weft_numa_node_info n;
    ASSERT_OK(weft_topology_numa_node(t, 1, &n));
    ASSERT_EQ(n.ncpus, 1);
    ASSERT_EQ(n.cpus[0], 16);
    weft_topology_destroy(t);
    /* A mask with no CPU the tree knows: the synthetic machine over it. */
    static const int stranger[] = {200};
    ASSERT_OK(weft__topology_detect_at(root, stranger, 1, &t));
    ASSERT_STREQ(weft_topology_backend(t), "synthetic");
    ASSERT_EQ(weft_topology_cpu_index(t, 200), 0);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(cgroup_quota_caps_usable_cpus) {
    const char *root = fake_write(&FAKE_CHIPLETS);
    fake_put(root, "proc/self/cgroup", "0::/job\n");
    fake_put(root, "sys/fs/cgroup/job/cpu.max", "250000 100000\n");
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_cpu_count(t), 64);
    ASSERT_EQ(weft_topology_usable_cpus(t), 3);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(no_sysfs_gives_the_synthetic_single_l3_machine) {
    char root[] = "/tmp/weft-topo-empty-XXXXXX";
    ASSERT_NOT_NULL(mkdtemp(root));
    static const int allowed[] = {0, 3};
    weft_topology *t;
    ASSERT_OK(weft__topology_detect_at(root, allowed, 2, &t));
    ASSERT_STREQ(weft_topology_backend(t), "synthetic");
    ASSERT_EQ(weft_topology_cpu_count(t), 2);
    ASSERT_EQ(weft_topology_package_count(t), 1);
    ASSERT_EQ(weft_topology_core_count(t), 2);
    ASSERT_EQ(weft_topology_numa_node_count(t), 1);
    ASSERT_EQ(weft_topology_cache_count(t), 1);
    weft_cache_info l3;
    ASSERT_OK(weft_topology_cache(t, 0, &l3));
    ASSERT_EQ(l3.level, 3);
    ASSERT_EQ(l3.ncpus, 2);
    ASSERT_EQ(cpu_at(t, 3).cache[2], 0);
    ASSERT_EQ(cpu_at(t, 3).cache[0], -1);
    weft_topology_destroy(t);
    ASSERT_OK(weft__topology_detect_at(root, NULL, 0, &t)); /* nothing known: CPU 0 */
    ASSERT_EQ(weft_topology_cpu_count(t), 1);
    weft_topology_destroy(t);
    fake_remove(root);
}

static atomic_int warnings;
static void count_warning(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level == WEFT_LOG_WARN && strstr(message, "topology")) atomic_fetch_add(&warnings, 1);
}

TEST(malformed_sysfs_files_are_warned_about_and_taken_as_unknown) {
    weft_log_set_callback(count_warning, NULL);
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    fake_put(root, "sys/devices/system/cpu/cpu3/topology/physical_package_id", "banana\n");
    fake_put(root, "sys/devices/system/cpu/cpu5/topology/core_id", NULL);
    fake_put(root, "sys/devices/system/cpu/cpu0/cache/index0/size", "big\n");
    fake_put(root, "sys/devices/system/cpu/cpu0/cache/index2/level", "two\n");
    fake_put(root, "sys/devices/system/cpu/cpu1/cache/index3/shared_cpu_list", "9-1\n");
    fake_put(root, "sys/devices/system/cpu/cpu2/cache/index1/type", "\xff\xfe");
    fake_put(root, "sys/devices/system/node/node1/meminfo", NULL);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(atomic_load(&warnings), 1); /* one warning per detection */
    ASSERT_EQ(weft_topology_cpu_count(t), 16);
    ASSERT_EQ(cpu_at(t, 3).package, 0); /* unknown package: 0 */
    weft_cache_info k;
    ASSERT_OK(weft_topology_cache(t, (unsigned)cpu_at(t, 0).cache[0], &k));
    ASSERT_EQ(k.size, 0); /* unknown */
    ASSERT_EQ(cpu_at(t, 0).cache[1], cpu_at(t, 8).cache[1]); /* cpu8's L2 holds cpu0 */
    weft_numa_node_info n;
    ASSERT_OK(weft_topology_numa_node(t, 1, &n));
    ASSERT_EQ(n.memory, 0);
    weft_topology_destroy(t);
    /* Worse: a node list that leaves CPUs out, files that are empty. */
    fake_put(root, "sys/devices/system/node/node0/cpulist", "zero\n");
    fake_put(root, "sys/devices/system/cpu/cpu4/topology/core_id", "");
    t = fake_detect(root);
    ASSERT_EQ(weft_topology_numa_node_count(t), 1); /* not believed: one node */
    ASSERT_EQ(weft_topology_numa_node_for_cpu(t, 9), 0);
    weft_topology_destroy(t);
    ASSERT_EQ(atomic_load(&warnings), 3);
    weft_log_set_callback(NULL, NULL);
    fake_remove(root);
}

TEST(no_node_directory_means_one_node_with_every_cpu) {
    fake_machine m = FAKE_TWO_SOCKET;
    m.nodes = 0;
    const char *root = fake_write(&m);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_numa_node_count(t), 1);
    weft_numa_node_info n;
    ASSERT_OK(weft_topology_numa_node(t, 0, &n));
    ASSERT_EQ(n.ncpus, 64);
    ASSERT_EQ(n.memory, 0);
    weft_topology_destroy(t);
    fake_remove(root);
}

/* A cpu/ or node/ directory that lists no cpuN / nodeN entry (a container
 * that masks them) is detected like a missing one; listing it used to
 * qsort(NULL, 0, ...), which UBSan aborts on. */
TEST(empty_cpu_and_node_directories_fall_back_without_undefined_behaviour) {
    fake_machine m = FAKE_TWO_SOCKET;
    m.nodes = 0;
    const char *root = fake_write(&m);
    char path[512];
    snprintf(path, sizeof path, "%s/sys/devices/system/node", root);
    ASSERT_EQ(mkdir(path, 0755), 0); /* exists, holds no nodeN */
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_numa_node_count(t), 1);
    weft_topology_destroy(t);
    fake_remove(root);

    const char *empty = fake_write(&m);
    snprintf(path, sizeof path, "%s/sys/devices/system/cpu", empty);
    fake_remove(path); /* the whole cpu/ tree, then an empty one */
    ASSERT_EQ(mkdir(path, 0755), 0);
    weft_topology_config cfg = {.source = WEFT_TOPOLOGY_SYSFS, .sysfs_root = empty, .all_cpus = true};
    ASSERT_OK(weft_topology_detect(&cfg, &t)); /* the synthetic one-L3 machine */
    ASSERT_GT(weft_topology_cpu_count(t), 0);
    weft_topology_destroy(t);
    fake_remove(empty);
}

/* ---- memory: every allocation may fail ---- */

TEST(detection_survives_every_allocation_failure) {
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    fake_fail_install();
    int st = WEFT_ENOMEM;
    long n;
    for (n = 0; n < 10000 && st == WEFT_ENOMEM; n++) {
        fake_fail_budget(n);
        weft_topology *t = (weft_topology *)1;
        st = weft__topology_detect_at(root, NULL, 0, &t);
        if (st == WEFT_ENOMEM) ASSERT_NULL(t);
        else weft_topology_destroy(t);
    }
    weft_set_allocator(NULL);
    ASSERT_OK(st);
    ASSERT_GT(n, 5);
    fake_remove(root);
}

/* ---- this machine ---- */

TEST(this_machine_lists_the_affinity_mask) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t));
    ASSERT_STREQ(weft_topology_backend(t), "sysfs");
    int mask[1024];
    int n = weft__affinity_cpus(mask, 1024);
    ASSERT_EQ(weft_topology_cpu_count(t), n);
    for (int i = 0; i < n; i++) ASSERT_EQ(weft_topology_cpu_index(t, mask[i]), i);
    ASSERT_GE(weft_topology_package_count(t), 1);
    ASSERT_GE(weft_topology_numa_node_count(t), 1);
    ASSERT_LE(weft_topology_usable_cpus(t), weft_topology_cpu_count(t));
    weft_topology_destroy(t);
}

static atomic_int env_warnings;
static void count_env_warning(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level == WEFT_LOG_WARN && strstr(message, "WEFT_TOPOLOGY")) atomic_fetch_add(&env_warnings, 1);
}

TEST(bad_weft_topology_value_warns_once_and_detects_anyway) {
    setenv("WEFT_TOPOLOGY", "lstopo", 1);
    weft_log_set_callback(count_env_warning, NULL);
    for (int i = 0; i < 2; i++) {
        weft_topology *t;
        ASSERT_OK(weft_topology_detect(NULL, &t));
        ASSERT_GE(weft_topology_cpu_count(t), 1);
        weft_topology_destroy(t);
    }
    weft_log_set_callback(NULL, NULL);
    ASSERT_EQ(atomic_load(&env_warnings), 1);
    setenv("WEFT_TOPOLOGY", "sysfs", 1);
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(NULL, &t));
    ASSERT_STREQ(weft_topology_backend(t), "sysfs");
    weft_topology_destroy(t);
    unsetenv("WEFT_TOPOLOGY");
}

TEST(bad_arguments_give_einval_never_a_crash) {
    weft_topology *t = (weft_topology *)1;
    ASSERT_STATUS(weft_topology_detect(NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_detect(&(weft_topology_config){.source = (weft_topology_source)7}, &t), WEFT_EINVAL);
    ASSERT_NULL(t);
    weft_cpu_info c;
    weft_cache_info k;
    ASSERT_STATUS(weft_topology_cpu(NULL, 0, &c), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_cache(NULL, 0, &k), WEFT_EINVAL);
    ASSERT_EQ(weft_topology_cpu_count(NULL), 0);
    ASSERT_EQ(weft_topology_cpu_index(NULL, 0), -1);
    ASSERT_STREQ(weft_topology_backend(NULL), "");
    ASSERT_OK(weft_topology_detect(NULL, &t));
    ASSERT_STATUS(weft_topology_cpu(t, weft_topology_cpu_count(t), &c), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_cpu(t, 0, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_numa_node(t, 99, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_topology_cpu_index(t, 1 << 20), -1);
    weft_topology_destroy(t);
    weft_topology_destroy(NULL);
}
