/* Session-39 hunt on the topology layer: every placement with awkward worker
 * counts, CPUs outside the mask, sysfs trees with broken files, and bad
 * environment variables, written from weft/topology.h's contract. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "topo_fixture.h"
#include "weft.h"
#include "weft/topology.h"

/* ---- invariants every detected topology must hold ---- */

static bool in_list(const int *v, unsigned n, int x) {
    for (unsigned i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

static void check_sorted_listed(const weft_topology *t, const int *v, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        ASSERT_GE(weft_topology_cpu_index(t, v[i]), 0);
        if (i) ASSERT_LT(v[i - 1], v[i]);
    }
}

/* What the header promises of any topology: each CPU in one package, core and
 * node that list it; cache lists of listed CPUs; placement and tiers work. */
static void check_topology(const weft_topology *t) {
    unsigned n = weft_topology_cpu_count(t);
    ASSERT_GE(n, 1);
    ASSERT_GE(weft_topology_usable_cpus(t), 1);
    ASSERT_LE(weft_topology_usable_cpus(t), n);
    unsigned np = weft_topology_package_count(t), nc = weft_topology_core_count(t),
             nn = weft_topology_numa_node_count(t), nk = weft_topology_cache_count(t);
    ASSERT_GE(np, 1);
    ASSERT_GE(nc, 1);
    ASSERT_GE(nn, 1);
    unsigned sum_p = 0, sum_c = 0, sum_n = 0;
    for (unsigned i = 0; i < np; i++) {
        weft_package_info p;
        ASSERT_OK(weft_topology_package(t, i, &p));
        check_sorted_listed(t, p.cpus, p.ncpus);
        sum_p += p.ncpus;
        ASSERT_GE(p.ncores, 1);
    }
    for (unsigned i = 0; i < nc; i++) {
        weft_core_info c;
        ASSERT_OK(weft_topology_core(t, i, &c));
        check_sorted_listed(t, c.cpus, c.ncpus);
        ASSERT_LT(c.package, np);
        sum_c += c.ncpus;
    }
    for (unsigned i = 0; i < nn; i++) {
        weft_numa_node_info d;
        ASSERT_OK(weft_topology_numa_node(t, i, &d));
        check_sorted_listed(t, d.cpus, d.ncpus);
        sum_n += d.ncpus;
    }
    ASSERT_EQ(sum_p, n);
    ASSERT_EQ(sum_c, n);
    ASSERT_EQ(sum_n, n);
    for (unsigned i = 0; i < nk; i++) {
        weft_cache_info k;
        ASSERT_OK(weft_topology_cache(t, i, &k));
        ASSERT_GE(k.level, 1);
        ASSERT_GE(k.ncpus, 1);
        check_sorted_listed(t, k.cpus, k.ncpus);
    }
    int prev = -1;
    for (unsigned i = 0; i < n; i++) {
        weft_cpu_info c;
        ASSERT_OK(weft_topology_cpu(t, i, &c));
        ASSERT_GT(c.os_index, prev);
        prev = c.os_index;
        ASSERT_EQ(weft_topology_cpu_index(t, c.os_index), (int)i);
        ASSERT_EQ(weft_topology_numa_node_for_cpu(t, c.os_index), (int)c.numa_node);
        ASSERT_LT(c.package, np);
        ASSERT_LT(c.core, nc);
        ASSERT_LT(c.numa_node, nn);
        weft_package_info p;
        weft_core_info co;
        weft_numa_node_info d;
        ASSERT_OK(weft_topology_package(t, c.package, &p));
        ASSERT_OK(weft_topology_core(t, c.core, &co));
        ASSERT_OK(weft_topology_numa_node(t, c.numa_node, &d));
        ASSERT_TRUE(in_list(p.cpus, p.ncpus, c.os_index));
        ASSERT_TRUE(in_list(co.cpus, co.ncpus, c.os_index));
        ASSERT_TRUE(in_list(d.cpus, d.ncpus, c.os_index));
        ASSERT_EQ(co.package, c.package);
        ASSERT_LT(c.smt, co.ncpus);
        for (int l = 0; l < 3; l++) {
            if (c.cache[l] < 0) continue;
            weft_cache_info k;
            ASSERT_OK(weft_topology_cache(t, (unsigned)c.cache[l], &k));
            ASSERT_EQ(k.level, (unsigned)l + 1);
            ASSERT_NE(k.type, WEFT_CACHE_INSTRUCTION);
            ASSERT_TRUE(in_list(k.cpus, k.ncpus, c.os_index));
        }
    }
    /* Every strategy gives each listed CPU once, then wraps. */
    int *cpus = malloc((3 * n + 1) * sizeof *cpus);
    unsigned *victims = malloc((3 * n + 1) * sizeof *victims);
    for (int s = WEFT_PLACE_NONE; s <= WEFT_PLACE_L3_DOMAIN; s++) {
        unsigned counts[] = {1, n, n + 1, 3 * n + 1};
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
            unsigned w = counts[ci];
            weft_placement_config pc = {.strategy = (weft_placement)s};
            ASSERT_OK(weft_topology_place(t, &pc, w, cpus));
            for (unsigned i = 0; i < w; i++) {
                if (s == WEFT_PLACE_NONE) {
                    ASSERT_EQ(cpus[i], -1);
                    continue;
                }
                ASSERT_GE(weft_topology_cpu_index(t, cpus[i]), 0);
                if (i >= n) ASSERT_EQ(cpus[i], cpus[i - n]);
                for (unsigned j = 0; j < i && i < n; j++) ASSERT_NE(cpus[i], cpus[j]);
                int one = -2;
                ASSERT_OK(weft_topology_worker_cpu(t, &pc, i, w, &one));
                ASSERT_EQ(one, cpus[i]);
            }
            unsigned end[WEFT_TIERS];
            for (unsigned self = 0; self < w; self += (w > 8 ? w / 4 : 1)) {
                ASSERT_OK(weft_topology_steal_tiers(t, cpus, w, self, victims, end));
                ASSERT_LE(end[0], end[1]);
                ASSERT_LE(end[1], end[2]);
                ASSERT_EQ(end[2], w - 1);
                for (unsigned i = 0; i + 1 < w; i++) {
                    ASSERT_NE(victims[i], self);
                    ASSERT_LT(victims[i], w);
                    for (unsigned j = 0; j < i; j++) ASSERT_NE(victims[i], victims[j]);
                }
            }
        }
    }
    free(cpus);
    free(victims);
}

/* ---- placement with 1, CPUs, CPUs + 1 and 3 * CPUs + 1 workers ---- */

TEST(every_strategy_with_awkward_worker_counts_cycles_through_distinct_listed_cpus) {
    const fake_machine *ms[] = {&FAKE_TWO_SOCKET, &FAKE_CHIPLETS, &FAKE_MEMORY_NODE, &FAKE_ODD_NUMBERS};
    for (size_t m = 0; m < sizeof ms / sizeof *ms; m++) {
        const char *root = fake_write(ms[m]);
        weft_topology *t = fake_detect(root);
        check_topology(t);
        weft_topology_destroy(t);
        fake_remove(root);
    }
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(NULL, &t)); /* this machine */
    check_topology(t);
    weft_topology_destroy(t);
}

static atomic_int ran;
static int count_task(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    atomic_fetch_add(&ran, 1);
    return 0;
}

TEST(executors_with_every_placement_and_awkward_worker_counts_run_every_task) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t));
    unsigned n = weft_topology_cpu_count(t);
    weft_topology_destroy(t);
    unsigned counts[] = {1, n, n + 1, 3 * n + 1};
    for (int s = WEFT_PLACE_NONE; s <= WEFT_PLACE_L3_DOMAIN; s++)
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
            weft_placement_config pc = {.strategy = (weft_placement)s};
            weft_status st;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = counts[ci], .placement = &pc}, &st);
            ASSERT_OK(st);
            weft_taskflow *tf = weft_taskflow_create("placed", &st);
            ASSERT_OK(st);
            for (int i = 0; i < 64; i++) (void)weft_emplace(tf, count_task, NULL);
            atomic_store(&ran, 0);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(atomic_load(&ran), 64);
            weft_taskflow_destroy(tf);
            weft_executor_destroy(ex);
        }
}

/* ---- CPUs outside the mask ---- */

TEST(queries_for_cpus_outside_the_listed_ones_say_not_listed) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    const int allowed[] = {3, 17, 40, 63, 64, 9000}; /* 64 and 9000: not in the tree */
    weft_topology *t = NULL;
    ASSERT_OK(weft__topology_detect_at(root, allowed, 6, &t));
    ASSERT_EQ(weft_topology_cpu_count(t), 4);
    check_topology(t);
    const int outside[] = {-1, 0, 2, 4, 62, 64, 9000, 65535, 65536, 1 << 30, 0x7fffffff, -0x7fffffff - 1};
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
        ASSERT_EQ(weft_topology_cpu_index(t, outside[i]), -1);
        ASSERT_EQ(weft_topology_numa_node_for_cpu(t, outside[i]), -1);
    }
    /* Tiers with victims on unlisted CPUs: those are REST. */
    int cpus[] = {3, 0, 17, -1, 9000, 40};
    unsigned victims[5], end[WEFT_TIERS];
    ASSERT_OK(weft_topology_steal_tiers(t, cpus, 6, 0, victims, end));
    ASSERT_EQ(end[2], 5);
    ASSERT_OK(weft_topology_steal_tiers(t, cpus, 6, 1, victims, end)); /* an unlisted thief */
    ASSERT_EQ(end[0], 0);
    ASSERT_EQ(end[1], 0);
    ASSERT_EQ(end[2], 5);
    weft_topology_destroy(t);
    fake_remove(root);
}

/* ---- sysfs trees with broken files ---- */

static atomic_int warnings;
static void count_warning(void *user, weft_log_level level, const char *message) {
    (void)user, (void)message;
    if (level == WEFT_LOG_WARN) atomic_fetch_add(&warnings, 1);
}

typedef struct mutation {
    const char *file; /* under sys/devices/system/ */
    const char *text; /* NULL: removed; "<dir>": made a directory */
    bool warns;       /* a warning is expected */
} mutation;

#define SYS "sys/devices/system/"

static void apply(const char *root, const mutation *m) {
    char path[1024];
    snprintf(path, sizeof path, "%s/" SYS "%s", root, m->file);
    if (m->text && strcmp(m->text, "<dir>") == 0) {
        remove(path);
        ASSERT_EQ(mkdir(path, 0755), 0);
        return;
    }
    char rel[512];
    snprintf(rel, sizeof rel, SYS "%s", m->file);
    fake_put(root, rel, m->text);
}

TEST(broken_sysfs_files_warn_and_fall_back_never_crash) {
    static const mutation ms[] = {
        {"node/node0/cpulist", "", true},
        {"node/node0/cpulist", "0-\n", true},
        {"node/node0/cpulist", "0-99999\n", true},
        {"node/node0/cpulist", "0-65535\n", false}, /* a huge valid range: CPUs the tree lacks */
        {"node/node0/cpulist", "0,0,1,1,0-1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,32-47\n", false},
        {"node/node0/cpulist", "\n", true}, /* a node with no CPU: its CPUs are in none */
        {"node/node1/cpulist", "0-63\n", false}, /* overlapping nodes */
        {"node/node0/cpulist", "<dir>", true},
        {"node/node0/meminfo", "Node 0 MemTotal: 99999999999999999999999 kB\n", true},
        {"node/node0/meminfo", "Node 0 MemTotal: banana kB\n", true},
        {"cpu/cpu0/cache/index3/size", "big\n", true},
        {"cpu/cpu0/cache/index3/size", "-5K\n", true},
        {"cpu/cpu0/cache/index3/size", "99999999999999999999K\n", true},
        {"cpu/cpu0/cache/index3/size", "18014398509481984K\n", true}, /* 2^54 K overflows */
        {"cpu/cpu0/cache/index3/size", "32768KB\n", true},
        {"cpu/cpu0/cache/index3/size", "", true},
        {"cpu/cpu0/cache/index3/shared_cpu_list", "0-99999\n", true},
        {"cpu/cpu0/cache/index3/shared_cpu_list", "0-65535\n", false},
        {"cpu/cpu0/cache/index3/shared_cpu_list", "5-9\n", false}, /* not holding cpu0 */
        {"cpu/cpu0/cache/index3/shared_cpu_list", "", true},
        {"cpu/cpu1/cache/index3/shared_cpu_list", "1-40\n", false}, /* overlaps another L3 */
        {"cpu/cpu0/cache/index0/level", "0\n", true},
        {"cpu/cpu0/cache/index0/level", "9\n", true},
        {"cpu/cpu0/cache/index0/level", "", true},
        {"cpu/cpu0/cache/index0/type", "Trace\n", true},
        {"cpu/cpu0/cache/index0/coherency_line_size", "0\n", true},
        {"cpu/cpu0/cache/index0/ways_of_associativity", "-1\n", false},
        {"cpu/cpu0/topology/physical_package_id", "-1\n", false},
        {"cpu/cpu0/topology/physical_package_id", "99999999999\n", true},
        {"cpu/cpu0/topology/physical_package_id", "1e3\n", true},
        {"cpu/cpu0/topology/core_id", "-7\n", true},
        {"cpu/cpu0/topology/core_id", "<dir>", true},
        {"cpu/cpu3/online", "0\n", false},
        {"cpu/cpu0/online", "0\n", false},
        {"cpu/cpu5/online", "", false},
    };
    /* 2 packages x 4 cores x 2 threads, a node per package: small, so the
     * tree is written quickly for each mutation. */
    const fake_machine small = {.packages = 2, .cores = 4, .threads = 2, .l3s = 1, .nodes = 1};
    weft_log_set_callback(count_warning, NULL);
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        const char *root = fake_write(&small);
        apply(root, &ms[i]);
        atomic_store(&warnings, 0);
        weft_topology *t = NULL;
        int st = weft__topology_detect_at(root, NULL, 0, &t);
        if (st != 0 || !t) TEST_FAIL_("mutation %zu (%s = %s): status %d", i, ms[i].file, ms[i].text, st);
        check_topology(t);
        if (ms[i].warns && atomic_load(&warnings) == 0)
            TEST_FAIL_("mutation %zu (%s = %s): no warning", i, ms[i].file, ms[i].text);
        weft_topology_destroy(t);
        fake_remove(root);
    }
    weft_log_set_callback(NULL, NULL);
}

/* Every CPU offline or no CPU with a topology: the synthetic machine. */
TEST(a_tree_whose_cpus_are_all_offline_gives_the_synthetic_machine) {
    fake_machine m = {.packages = 1, .cores = 4, .threads = 1, .l3s = 1, .nodes = 1};
    const char *root = fake_write(&m);
    for (int c = 0; c < 4; c++) {
        char rel[256];
        snprintf(rel, sizeof rel, SYS "cpu/cpu%d/online", c);
        fake_put(root, rel, "0\n");
    }
    weft_topology *t = NULL;
    ASSERT_OK(weft__topology_detect_at(root, NULL, 0, &t));
    ASSERT_STREQ(weft_topology_backend(t), "synthetic");
    check_topology(t);
    weft_topology_destroy(t);
    fake_remove(root);
}

/* Linux writes a node's cpulist whole however long it is (a bin attribute
 * since 5.14); with the CPUs of two packages interleaved (0, 2, 4, ... on one
 * node), 2048 CPUs make lists of over 4 KiB.  A valid tree must be read as it
 * is, not cut at a buffer's end into a list that leaves CPUs out. */
TEST(node_cpulists_longer_than_a_page_are_read_whole) {
    struct stat st;
    char root[256];
    snprintf(root, sizeof root, "%s/weft-topo-long-XXXXXX", stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp");
    ASSERT_NOT_NULL(mkdtemp(root));
    enum { NCPU = 2048 };
    static char list[2][NCPU * 6];
    size_t len[2] = {0, 0};
    for (int c = 0; c < NCPU; c++) {
        char rel[256], v[32];
        snprintf(rel, sizeof rel, SYS "cpu/cpu%d/topology/physical_package_id", c);
        snprintf(v, sizeof v, "%d\n", c % 2);
        fake_put(root, rel, v);
        snprintf(rel, sizeof rel, SYS "cpu/cpu%d/topology/core_id", c);
        snprintf(v, sizeof v, "%d\n", c / 2);
        fake_put(root, rel, v);
        int node = c % 2;
        len[node] += (size_t)snprintf(list[node] + len[node], sizeof list[node] - len[node], len[node] ? ",%d" : "%d", c);
    }
    for (int node = 0; node < 2; node++) {
        ASSERT_GT(len[node], 4096);
        snprintf(list[node] + len[node], sizeof list[node] - len[node], "\n");
        char rel[256];
        snprintf(rel, sizeof rel, SYS "node/node%d/cpulist", node);
        fake_put(root, rel, list[node]);
        snprintf(rel, sizeof rel, SYS "node/node%d/meminfo", node);
        fake_put(root, rel, "Node 0 MemTotal: 1024 kB\n");
    }
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_cpu_count(t), NCPU);
    ASSERT_EQ(weft_topology_package_count(t), 2);
    ASSERT_EQ(weft_topology_numa_node_count(t), 2);
    for (int c = 0; c < NCPU; c++) ASSERT_EQ(weft_topology_numa_node_for_cpu(t, c), c % 2);
    weft_numa_node_info n;
    ASSERT_OK(weft_topology_numa_node(t, 1, &n));
    ASSERT_EQ(n.ncpus, NCPU / 2);
    ASSERT_EQ(n.cpus[NCPU / 2 - 1], NCPU - 1);
    weft_topology_destroy(t);
    /* The larger buffer may fail to come: ENOMEM, nothing leaked. */
    fake_fail_install();
    int rc = WEFT_ENOMEM;
    for (long budget = 0; budget < 100000 && rc == WEFT_ENOMEM; budget += 1 + budget / 8) {
        fake_fail_budget(budget);
        t = NULL;
        rc = weft__topology_detect_at(root, NULL, 0, &t);
        if (rc == WEFT_ENOMEM) ASSERT_NULL(t);
    }
    weft_set_allocator(NULL);
    ASSERT_OK(rc);
    ASSERT_EQ(weft_topology_numa_node_count(t), 2);
    weft_topology_destroy(t);
    fake_remove(root);
}

/* ---- bad environment variables ---- */

static atomic_int env_warns;
static const char *env_name;
static void count_env(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level == WEFT_LOG_WARN && strstr(message, env_name)) atomic_fetch_add(&env_warns, 1);
}

static atomic_int widest;
static int note_mask(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set), seen = atomic_load(&widest);
        while (n > seen && !atomic_compare_exchange_weak(&widest, &seen, n)) {}
    }
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* In a child: sets name=value, creates two executors of 3 workers and runs
 * 200 tasks on each; exits 0 when every task ran, the variable was warned
 * about `warns` times, and (unbound) a worker's mask held every CPU. */
static void env_case(const char *name, const char *value, int warns, bool unbound) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        setenv(name, value, 1);
        env_name = name;
        weft_log_set_callback(count_env, NULL);
        cpu_set_t mine;
        sched_getaffinity(0, sizeof mine, &mine);
        for (int k = 0; k < 2; k++) {
            weft_status st;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 3}, &st);
            if (!ex) _exit(2);
            atomic_store(&ran, 0);
            atomic_store(&widest, 0);
            for (int i = 0; i < 200; i++)
                if (weft_silent_async(ex, note_mask, NULL) != WEFT_OK) _exit(3);
            if (weft_executor_wait_all(ex) != WEFT_OK || atomic_load(&ran) != 200) _exit(4);
            weft_executor_destroy(ex);
            if (unbound && atomic_load(&widest) != CPU_COUNT(&mine)) _exit(5);
        }
        weft_topology *t;
        if (weft_topology_detect(NULL, &t) != WEFT_OK) _exit(6);
        weft_topology_destroy(t);
        _exit(atomic_load(&env_warns) == warns ? 0 : 7);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        TEST_FAIL_("%s=\"%s\": child status %d", name, value, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

TEST(bad_placement_affinity_and_topology_variables_warn_once_and_change_nothing) {
    const char *bad[] = {"bogus", "", " compact", "compact,scatter", "3", "numa-dense"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        env_case("WEFT_PLACEMENT", bad[i], 1, true);
        env_case("WEFT_AFFINITY", bad[i], 1, true);
        env_case("WEFT_TOPOLOGY", bad[i], 1, false);
    }
    /* Good words in any case: no warning. */
    env_case("WEFT_PLACEMENT", "L3_Domain", 0, false);
    env_case("WEFT_PLACEMENT", "none", 0, true);
    env_case("WEFT_AFFINITY", "Sparse", 0, false);
    env_case("WEFT_TOPOLOGY", "HWLOC", 0, false);
}

/* guide-topology.md: a CPU whose core_id is missing or bad gets "a core of
 * its own".  Its OS number stood in for the core id, so with SMT siblings
 * numbered next to each other (cpu 2k and 2k+1 share core k) cpu 1 became a
 * third SMT thread of core 1 (cpus 2 and 3). */
TEST(a_cpu_with_no_core_id_gets_a_core_of_its_own) {
    const fake_machine m = {.packages = 1, .cores = 4, .threads = 2, .l3s = 1, .nodes = 1,
                            .numbering = NUMBER_SIBLINGS_NEAR};
    const char *bad[] = {NULL, "banana\n", "-7\n"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        const char *root = fake_write(&m);
        fake_put(root, SYS "cpu/cpu1/topology/core_id", bad[b]);
        weft_topology *t = fake_detect(root);
        check_topology(t);
        ASSERT_EQ(weft_topology_core_count(t), 5);
        weft_cpu_info c1, c2;
        ASSERT_OK(weft_topology_cpu(t, 1, &c1));
        ASSERT_OK(weft_topology_cpu(t, 2, &c2));
        ASSERT_NE(c1.core, c2.core);
        weft_core_info core;
        ASSERT_OK(weft_topology_core(t, c1.core, &core));
        ASSERT_EQ(core.ncpus, 1);
        ASSERT_OK(weft_topology_core(t, c2.core, &core));
        ASSERT_EQ(core.ncpus, 2);
        weft_topology_destroy(t);
        fake_remove(root);
    }
}

/* The creating thread's mask decides which CPUs a placement may use: with a
 * mask of one CPU, every strategy binds every worker to that CPU, and the
 * topology it detects lists no other. */
static atomic_int off_cpu;
static int check_cpu(weft_ctx *cx, void *arg) {
    (void)cx;
    if (sched_getcpu() != *(int *)arg) atomic_fetch_add(&off_cpu, 1);
    atomic_fetch_add(&ran, 1);
    return 0;
}

TEST(a_placement_from_a_thread_bound_to_one_cpu_uses_only_that_cpu) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(NULL, &t));
    weft_cpu_info last;
    ASSERT_OK(weft_topology_cpu(t, weft_topology_cpu_count(t) - 1, &last));
    unsigned before = weft_topology_cpu_count(t);
    weft_topology_destroy(t);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        int cpu = last.os_index;
        if (weft_thread_bind(&cpu, 1) != WEFT_OK) _exit(2);
        weft_topology *mine;
        if (weft_topology_detect(NULL, &mine) != WEFT_OK || weft_topology_cpu_count(mine) != 1) _exit(3);
        for (int os = 0; os < 64; os++)
            if (os != cpu && (weft_topology_cpu_index(mine, os) != -1 || weft_topology_numa_node_for_cpu(mine, os) != -1))
                _exit(4);
        weft_topology_destroy(mine);
        for (int s = WEFT_PLACE_COMPACT; s <= WEFT_PLACE_L3_DOMAIN; s++) {
            weft_placement_config pc = {.strategy = (weft_placement)s};
            weft_status st;
            weft_executor *ex =
                weft_executor_create(&(weft_executor_config){.workers = 2 * before + 1, .placement = &pc}, &st);
            if (!ex) _exit(5);
            atomic_store(&ran, 0);
            for (int i = 0; i < 300; i++)
                if (weft_silent_async(ex, check_cpu, &cpu) != WEFT_OK) _exit(6);
            if (weft_executor_wait_all(ex) != WEFT_OK || atomic_load(&ran) != 300) _exit(7);
            weft_executor_destroy(ex);
        }
        _exit(atomic_load(&off_cpu) == 0 ? 0 : 8);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* topology.h: a sysfs_root that is not a readable directory is WEFT_ENOENT,
 * naming it (it gave a one-CPU synthetic machine, silently: a typo in the
 * path described the wrong machine). */
TEST(a_sysfs_root_that_does_not_exist_is_enoent_naming_it) {
    weft_topology *t = (weft_topology *)1;
    weft_topology_config cfg = {.source = WEFT_TOPOLOGY_SYSFS, .sysfs_root = "/nonexistent-weft-root-39"};
    ASSERT_STATUS(weft_topology_detect(&cfg, &t), WEFT_ENOENT);
    ASSERT_NULL(t);
    ASSERT_TRUE(strstr(weft_last_error_message(), "/nonexistent-weft-root-39") != NULL);
    /* An empty directory holds no sysfs tree: WEFT_ENOENT too since session
     * 42 (config_hunt42b; a tree with an empty cpu/ is still synthetic,
     * topo_sysfs). */
    char root[] = "/tmp/weft-topo-empty39-XXXXXX";
    ASSERT_NOT_NULL(mkdtemp(root));
    cfg.sysfs_root = root;
    ASSERT_STATUS(weft_topology_detect(&cfg, &t), WEFT_ENOENT);
    ASSERT_NULL(t);
    ASSERT_EQ(rmdir(root), 0);
}
