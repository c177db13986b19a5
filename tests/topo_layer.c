/* The topology layer inside an executor: bound workers get steal tiers from
 * the machine's shape and still run everything. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>

#include "async/async.h"
#include "core/layer.h"
#include "harness.h"
#include "observe/observe_layer.h"
#include "platform/files.h"
#include "topo/topo_layer.h"
#include "topo_fixture.h"
#include "weft.h"

/* A layer that places workers the way the executor's configuration will ask
 * the topology layer to (core/layer.h: before the topology layer's init). */
static weft_placement want_place = WEFT_PLACE_NONE;
static int place_init(weft_executor *ex, const weft_executor_config *config) {
    (void)config;
    return weft__topo_place_workers(ex, want_place);
}
static weft__layer place_layer = {.name = "test-place", .executor_init = place_init};

static weft_executor *create(unsigned workers, weft_affinity affinity) {
    static weft__layer *const layers[] = {&weft__async_layer, &weft__observe_layer, &place_layer, &weft__topo_layer};
    weft_status st;
    weft_executor *ex =
        weft__executor_create(&(weft_executor_config){.workers = workers, .affinity = affinity}, layers, 4, &st);
    ASSERT_OK(st);
    return ex;
}

static atomic_int ran, widest_mask;
static int count(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set), seen = atomic_load(&widest_mask);
        while (n > seen && !atomic_compare_exchange_weak(&widest_mask, &seen, n)) {}
    }
    atomic_fetch_add(&ran, 1);
    return 0;
}

/* Runs 1000 tasks; returns how many CPUs the widest worker's mask held. */
static int run_some(weft_executor *ex) {
    atomic_store(&ran, 0);
    atomic_store(&widest_mask, 0);
    for (int i = 0; i < 1000; i++) ASSERT_OK(weft_silent_async(ex, count, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ran), 1000);
    return atomic_load(&widest_mask);
}

TEST(bound_workers_on_two_packages_steal_from_their_own_l3_first) {
    /* cpu0 and cpu1 of the odd-numbered machine lie on different packages, so
     * the two real CPUs of any test machine make two domains. */
    const char *root = fake_write(&FAKE_ODD_NUMBERS);
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    int mask[2];
    if (weft__affinity_cpus(mask, 2) < 2 || mask[0] != 0 || mask[1] != 1) SKIP("needs CPUs 0 and 1");
    weft_executor *ex = create(4, WEFT_AFFINITY_CPUS); /* workers on CPUs 0, 1, 0, 1 */
    const weft__worker *w = &ex->workers[0];
    ASSERT_EQ(w->ntiers, 2);
    ASSERT_EQ(w->tier_end[0], 1);
    ASSERT_EQ(w->tier_end[1], 3);
    ASSERT_EQ(w->victims[0], 2); /* on CPU 0 too */
    ASSERT_EQ(w->victims[1], 1);
    ASSERT_EQ(w->victims[2], 3);
    ASSERT_EQ(ex->workers[3].victims[0], 1);
    ASSERT_EQ(run_some(ex), 1); /* each worker bound to its one CPU */
    weft_executor_destroy(ex);
    weft__topo_layer_set_machine(NULL);
}

TEST(unbound_or_flat_executors_keep_random_stealing) {
    const char *root = fake_write(&FAKE_TWO_SOCKET); /* CPUs 0 and 1 share an L3 */
    weft__topo_layer_set_machine(fake_detect(root));
    fake_remove(root);
    weft_executor *ex = create(4, WEFT_AFFINITY_NONE);
    for (unsigned i = 0; i < 4; i++) ASSERT_NULL(ex->workers[i].victims);
    run_some(ex);
    weft_executor_destroy(ex);
    ex = create(4, WEFT_AFFINITY_CPUS);
    for (unsigned i = 0; i < 4; i++) ASSERT_NULL(ex->workers[i].victims); /* one tier: nothing set */
    ASSERT_EQ(run_some(ex), 1);
    weft_executor_destroy(ex);
    weft__topo_layer_set_machine(NULL);
    ex = create(3, WEFT_AFFINITY_CPUS); /* this machine, detected by the layer */
    ASSERT_EQ(run_some(ex), 1);
    weft_executor_destroy(ex);
}

TEST(placed_workers_are_bound_to_their_strategys_cpus) {
    int mask[64];
    int n = weft__affinity_cpus(mask, 64);
    ASSERT_GE(n, 1);
    want_place = WEFT_PLACE_PHYSICAL_CORES;
    weft_executor *ex = create(3, WEFT_AFFINITY_NONE);
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t));
    int want[3];
    ASSERT_OK(weft_topology_place(t, &(weft_placement_config){.strategy = WEFT_PLACE_PHYSICAL_CORES}, 3, want));
    for (unsigned i = 0; i < 3; i++) ASSERT_EQ(ex->workers[i].cpu, want[i]);
    ASSERT_TRUE(ex->bound);
    ASSERT_EQ(run_some(ex), 1); /* each worker sees a one-CPU mask from inside */
    weft_executor_destroy(ex);
    weft_topology_destroy(t);
    want_place = WEFT_PLACE_NONE;
    ex = create(2, WEFT_AFFINITY_NONE);
    ASSERT_EQ(ex->workers[0].cpu, -1);
    ASSERT_EQ(run_some(ex), n);
    weft_executor_destroy(ex);
}

/* Through the public API: weft_executor_create with config.placement (or
 * WEFT_PLACEMENT) places the workers; a placement that cannot be made fails
 * the create; a bad WEFT_PLACEMENT is warned about and ignored. */
TEST(executor_config_placement_binds_workers_and_bad_placements_get_a_status) {
    weft_placement_config pc = {.strategy = WEFT_PLACE_COMPACT};
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 3, .placement = &pc}, &st);
    ASSERT_OK(st);
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t));
    int want[3];
    ASSERT_OK(weft_topology_place(t, &pc, 3, want));
    for (unsigned i = 0; i < 3; i++) ASSERT_EQ(ex->workers[i].cpu, want[i]);
    ASSERT_TRUE(ex->bound);
    ASSERT_EQ(run_some(ex), 1);
    weft_executor_destroy(ex);
    weft_topology_destroy(t);

    unsigned no_such_node = 999;
    weft_placement_config bad = {.strategy = WEFT_PLACE_NUMA_DENSE, .numa_nodes = &no_such_node, .numa_node_count = 1};
    ASSERT_TRUE(weft_executor_create(&(weft_executor_config){.workers = 2, .placement = &bad}, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    weft_placement_config out_of_range = {.strategy = (weft_placement)77};
    ASSERT_TRUE(weft_executor_create(&(weft_executor_config){.workers = 2, .placement = &out_of_range}, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);

    setenv("WEFT_PLACEMENT", "scatter", 1);
    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    ASSERT_TRUE(ex->bound);
    ASSERT_EQ(run_some(ex), 1);
    weft_executor_destroy(ex);
    unsetenv("WEFT_PLACEMENT");
    setenv("WEFT_AFFINITY", "compact", 1); /* the seed's names in WEFT_AFFINITY too */
    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    ASSERT_TRUE(ex->bound);
    ASSERT_EQ(run_some(ex), 1);
    weft_executor_destroy(ex);
    unsetenv("WEFT_AFFINITY");
    setenv("WEFT_PLACEMENT", "everywhere", 1); /* not a strategy: warned about, unbound */
    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    ASSERT_FALSE(ex->bound);
    ASSERT_EQ(ex->workers[0].cpu, -1);
    weft_executor_destroy(ex);
    unsetenv("WEFT_PLACEMENT");
}

/* WEFT_AFFINITY is the default of config.affinity (weft/core.h): a placement
 * name in it binds the workers only when the config left affinity at
 * WEFT_AFFINITY_DEFAULT.  An explicit WEFT_AFFINITY_NONE is the program's
 * word, as it is against WEFT_AFFINITY=cpus (before: "compact" bound them). */
TEST(weft_affinity_placement_names_do_not_override_an_explicit_affinity_none) {
    setenv("WEFT_AFFINITY", "compact", 1);
    weft_status st;
    weft_executor *ex =
        weft_executor_create(&(weft_executor_config){.workers = 2, .affinity = WEFT_AFFINITY_NONE}, &st);
    ASSERT_OK(st);
    ASSERT_FALSE(ex->bound);
    for (unsigned i = 0; i < 2; i++) ASSERT_EQ(ex->workers[i].cpu, -1);
    weft_executor_destroy(ex);
    ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st); /* left to the environment */
    ASSERT_OK(st);
    ASSERT_TRUE(ex->bound);
    weft_executor_destroy(ex);
    unsetenv("WEFT_AFFINITY");
}
