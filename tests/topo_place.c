/* Placement strategies and steal tiers on the fake machines: exact CPU lists
 * and victim orders. */
#include <string.h>

#include "harness.h"
#include "topo_fixture.h"
#include "weft.h"
#include "weft/topology.h"

/* Places `workers` workers and compares with want[0..workers). */
static void expect_place(const weft_topology *t, weft_placement_config c, unsigned workers, const int *want) {
    int got[128];
    ASSERT_OK(weft_topology_place(t, &c, workers, got));
    for (unsigned w = 0; w < workers; w++) {
        if (got[w] != want[w]) TEST_FAIL_("strategy %d, worker %u: CPU %d, want %d", c.strategy, w, got[w], want[w]);
        int one;
        ASSERT_OK(weft_topology_worker_cpu(t, &c, w, workers, &one));
        ASSERT_EQ(one, want[w]);
    }
}

static weft_placement_config with(weft_placement s) { return (weft_placement_config){.strategy = s}; }

TEST(two_socket_strategies_give_their_cpu_orders) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    /* Package 0: cores 0-15 with siblings 32-47; package 1: 16-31 with 48-63. */
    static const int compact[] = {0, 32, 1, 33, 2, 34};
    static const int cores[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    static const int scatter[] = {0, 16, 1, 17, 2, 18, 3, 19};
    static const int dense[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32, 33};
    expect_place(t, with(WEFT_PLACE_COMPACT), 6, compact);
    expect_place(t, with(WEFT_PLACE_PHYSICAL_CORES), 18, cores);
    expect_place(t, with(WEFT_PLACE_SCATTER), 8, scatter);
    expect_place(t, with(WEFT_PLACE_SPARSE), 8, scatter);
    expect_place(t, with(WEFT_PLACE_NUMA_ROUND_ROBIN), 8, scatter);
    expect_place(t, with(WEFT_PLACE_L3_DOMAIN), 8, scatter);
    expect_place(t, with(WEFT_PLACE_NUMA_DENSE), 18, dense);
    int all[64];
    ASSERT_OK(weft_topology_place(t, &(weft_placement_config){.strategy = WEFT_PLACE_SCATTER}, 64, all));
    ASSERT_EQ(all[32], 32); /* siblings only after every core */
    ASSERT_EQ(all[33], 48);
    ASSERT_EQ(all[63], 63);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(every_strategy_uses_each_cpu_once_before_any_twice) {
    const fake_machine *ms[] = {&FAKE_TWO_SOCKET, &FAKE_CHIPLETS, &FAKE_MEMORY_NODE, &FAKE_ODD_NUMBERS};
    for (size_t m = 0; m < sizeof ms / sizeof *ms; m++) {
        const char *root = fake_write(ms[m]);
        weft_topology *t = fake_detect(root);
        unsigned n = weft_topology_cpu_count(t);
        for (int s = WEFT_PLACE_COMPACT; s <= WEFT_PLACE_L3_DOMAIN; s++) {
            int cpus[128];
            ASSERT_OK(weft_topology_place(t, &(weft_placement_config){.strategy = (weft_placement)s}, n + 3, cpus));
            for (unsigned i = 0; i < n; i++) {
                ASSERT_GE(weft_topology_cpu_index(t, cpus[i]), 0);
                for (unsigned j = 0; j < i; j++) ASSERT_NE(cpus[i], cpus[j]);
            }
            for (unsigned i = n; i < n + 3; i++) ASSERT_EQ(cpus[i], cpus[i - n]); /* then around again */
        }
        weft_topology_destroy(t);
        fake_remove(root);
    }
}

TEST(chiplet_strategies_spread_over_l3_domains) {
    const char *root = fake_write(&FAKE_CHIPLETS);
    weft_topology *t = fake_detect(root);
    /* Four L3 domains of 8 cores: 0-7, 8-15, 16-23, 24-31; siblings +32. */
    static const int spread[] = {0, 8, 16, 24, 1, 9, 17, 25};
    static const int cores[] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int compact[] = {0, 32, 1, 33};
    expect_place(t, with(WEFT_PLACE_SCATTER), 8, spread);
    expect_place(t, with(WEFT_PLACE_L3_DOMAIN), 8, spread);
    expect_place(t, with(WEFT_PLACE_NUMA_ROUND_ROBIN), 8, cores); /* one node: cores first */
    expect_place(t, with(WEFT_PLACE_PHYSICAL_CORES), 8, cores);
    expect_place(t, with(WEFT_PLACE_COMPACT), 4, compact);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(odd_numbering_strategies_follow_the_machine_not_the_numbers) {
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    weft_topology *t = fake_detect(root);
    /* Package 0 has 0,2,4,6 (siblings 8,10,12,14); package 1 has 1,3,5,7 (9,11,13,15). */
    static const int compact[] = {0, 8, 2, 10, 4, 12, 6, 14, 1, 9};
    static const int scatter[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    static const int cores[] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10};
    expect_place(t, with(WEFT_PLACE_COMPACT), 10, compact);
    expect_place(t, with(WEFT_PLACE_SCATTER), 10, scatter);
    expect_place(t, with(WEFT_PLACE_PHYSICAL_CORES), 10, cores);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(numa_restricted_placement_uses_only_the_chosen_nodes) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    static const unsigned node1[] = {1};
    static const int compact[] = {16, 48, 17, 49};
    static const int cores[] = {16, 17, 18};
    expect_place(t, (weft_placement_config){.strategy = WEFT_PLACE_COMPACT, .numa_nodes = node1, .numa_node_count = 1},
                 4, compact);
    expect_place(t, (weft_placement_config){.strategy = WEFT_PLACE_PHYSICAL_CORES, .numa_nodes = node1,
                                            .numa_node_count = 1},
                 3, cores);
    weft_topology_destroy(t);
    fake_remove(root);
    root = fake_write(&FAKE_MEMORY_NODE);
    t = fake_detect(root);
    int cpus[4];
    ASSERT_STATUS(weft_topology_place(t,
                                      &(weft_placement_config){.strategy = WEFT_PLACE_COMPACT, .numa_nodes = node1,
                                                               .numa_node_count = 1},
                                      4, cpus),
                  WEFT_ENOENT);
    static const int rr[] = {0, 1, 2, 3}; /* the memory-only node takes no worker */
    expect_place(t, with(WEFT_PLACE_NUMA_ROUND_ROBIN), 4, rr);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(no_placement_binds_nobody_and_bad_arguments_give_einval) {
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    weft_topology *t = fake_detect(root);
    int cpus[3] = {7, 7, 7}, one = 7;
    ASSERT_OK(weft_topology_place(t, NULL, 3, cpus));
    for (int i = 0; i < 3; i++) ASSERT_EQ(cpus[i], -1);
    ASSERT_OK(weft_topology_worker_cpu(t, NULL, 1, 3, &one));
    ASSERT_EQ(one, -1);
    static const unsigned node9[] = {9};
    ASSERT_STATUS(weft_topology_place(NULL, NULL, 3, cpus), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(t, NULL, 3, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(t, NULL, 0, cpus), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(t, &(weft_placement_config){.strategy = (weft_placement)99}, 3, cpus),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(t, &(weft_placement_config){.numa_nodes = node9, .numa_node_count = 1}, 3, cpus),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_place(t, &(weft_placement_config){.numa_node_count = 1}, 3, cpus), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_worker_cpu(t, NULL, 3, 3, &one), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_worker_cpu(t, NULL, 0, 3, NULL), WEFT_EINVAL);
    weft_topology_destroy(t);
    fake_remove(root);
}

/* ---- steal tiers ---- */

static void expect_tiers(const weft_topology *t, const int *cpus, unsigned workers, unsigned self, const unsigned *want,
                         const unsigned want_end[WEFT_TIERS]) {
    unsigned victims[128], end[WEFT_TIERS];
    ASSERT_OK(weft_topology_steal_tiers(t, cpus, workers, self, victims, end));
    for (int k = 0; k < WEFT_TIERS; k++) ASSERT_EQ(end[k], want_end[k]);
    for (unsigned i = 0; i + 1 < workers; i++)
        if (victims[i] != want[i]) TEST_FAIL_("worker %u, victim %u: %u, want %u", self, i, victims[i], want[i]);
}

TEST(two_socket_tiers_put_the_other_package_last) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    int cpus[4];
    ASSERT_OK(weft_topology_place(t, &(weft_placement_config){.strategy = WEFT_PLACE_SCATTER}, 4, cpus));
    /* cpus: 0, 16, 1, 17 */
    expect_tiers(t, cpus, 4, 0, (const unsigned[]){2, 1, 3}, (const unsigned[]){1, 1, 3});
    expect_tiers(t, cpus, 4, 3, (const unsigned[]){1, 0, 2}, (const unsigned[]){1, 1, 3});
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(chiplet_tiers_try_the_l3_then_the_node) {
    const char *root = fake_write(&FAKE_CHIPLETS);
    weft_topology *t = fake_detect(root);
    int cpus[8];
    ASSERT_OK(weft_topology_place(t, &(weft_placement_config){.strategy = WEFT_PLACE_L3_DOMAIN}, 8, cpus));
    /* cpus: 0, 8, 16, 24, 1, 9, 17, 25: worker w shares its L3 with w +- 4 */
    expect_tiers(t, cpus, 8, 0, (const unsigned[]){4, 1, 2, 3, 5, 6, 7}, (const unsigned[]){1, 7, 7});
    expect_tiers(t, cpus, 8, 6, (const unsigned[]){2, 0, 1, 3, 4, 5, 7}, (const unsigned[]){1, 7, 7});
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(unbound_workers_and_flat_machines_have_one_tier) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    static const int unbound[] = {-1, 0, 1};
    expect_tiers(t, unbound, 3, 0, (const unsigned[]){1, 2}, (const unsigned[]){0, 0, 2});
    static const int stranger[] = {0, 999, 1}; /* a CPU the topology does not list */
    expect_tiers(t, stranger, 3, 0, (const unsigned[]){2, 1}, (const unsigned[]){1, 1, 2});
    weft_topology_destroy(t);
    fake_remove(root);
    static const int two[] = {0, 3};
    ASSERT_OK(weft__topology_detect_at("/nonexistent-weft-root", two, 2, &t)); /* synthetic: one L3 */
    static const int cpus[] = {3, 0, 3};
    expect_tiers(t, cpus, 3, 1, (const unsigned[]){0, 2}, (const unsigned[]){2, 2, 2});
    unsigned v[2], end[WEFT_TIERS];
    ASSERT_OK(weft_topology_steal_tiers(t, cpus, 1, 0, v, end)); /* one worker: no victim */
    ASSERT_EQ(end[WEFT_TIER_REST], 0);
    ASSERT_STATUS(weft_topology_steal_tiers(t, cpus, 3, 3, v, end), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_steal_tiers(t, NULL, 3, 0, v, end), WEFT_EINVAL);
    ASSERT_STATUS(weft_topology_steal_tiers(NULL, cpus, 3, 0, v, end), WEFT_EINVAL);
    weft_topology_destroy(t);
}

/* ---- binding ---- */

TEST(thread_bind_pins_the_calling_thread) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(NULL, &t));
    weft_cpu_info last;
    ASSERT_OK(weft_topology_cpu(t, weft_topology_cpu_count(t) - 1, &last));
    ASSERT_OK(weft_thread_bind(&last.os_index, 1));
    weft_topology *after;
    ASSERT_OK(weft_topology_detect(NULL, &after)); /* lists the calling thread's mask */
    ASSERT_EQ(weft_topology_cpu_count(after), 1);
    ASSERT_EQ(weft_topology_cpu_index(after, last.os_index), 0);
    static const int bad[] = {-1};
    ASSERT_STATUS(weft_thread_bind(bad, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_thread_bind(NULL, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_thread_bind(&last.os_index, 0), WEFT_EINVAL);
    weft_topology_destroy(after);
    weft_topology_destroy(t);
}

TEST(the_guide_drawing_is_what_each_strategy_does) {
    /* docs/guide-topology.md draws 8 workers on 2 packages x 4 cores x 2 threads. */
    const fake_machine m = {.packages = 2, .cores = 4, .threads = 2, .l3s = 1, .nodes = 1};
    const char *root = fake_write(&m);
    weft_topology *t = fake_detect(root);
    static const int compact[] = {0, 8, 1, 9, 2, 10, 3, 11};
    static const int cores[] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int scatter[] = {0, 4, 1, 5, 2, 6, 3, 7};
    static const int dense[] = {0, 1, 2, 3, 8, 9, 10, 11};
    expect_place(t, with(WEFT_PLACE_COMPACT), 8, compact);
    expect_place(t, with(WEFT_PLACE_PHYSICAL_CORES), 8, cores);
    expect_place(t, with(WEFT_PLACE_SCATTER), 8, scatter);
    expect_place(t, with(WEFT_PLACE_NUMA_DENSE), 8, dense);
    expect_place(t, with(WEFT_PLACE_NUMA_ROUND_ROBIN), 8, scatter);
    expect_place(t, with(WEFT_PLACE_L3_DOMAIN), 8, scatter);
    expect_tiers(t, scatter, 8, 0, (const unsigned[]){2, 4, 6, 1, 3, 5, 7}, (const unsigned[]){3, 3, 7});
    weft_topology_destroy(t);
    fake_remove(root);
}
