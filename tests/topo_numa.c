/* NUMA memory: blocks on a node and interleaved, through the real system
 * calls on this machine (one node here: node 0 must be accepted and the
 * page's node reported) and on fake machines with more nodes than the
 * kernel has (the policy is refused and the block is plain memory). */
#include "harness.h"

#include <string.h>

#include "platform/numa.h"
#include "topo_fixture.h"
#include "weft.h"

/* Skips when this kernel has no NUMA calls or a filter refuses them. */
static void need_numa_calls(void) {
    int mode, first;
    static char probe[1];
    if (weft__numa_policy_of(probe, &mode, &first) != 0) SKIP("get_mempolicy refused or missing here");
}

TEST(numa_syscalls_accept_node_0_and_report_the_page_node) {
    need_numa_calls();
    size_t page = weft__page_size(), len = 4 * page;
    void *mem;
    ASSERT_OK(weft_numa_alloc(NULL, len, 0, &mem, NULL)); /* page-aligned, whole pages */
    char *p = mem;
    int mode = -1, first = -1, node = -1, zero = 0;
    ASSERT_EQ(weft__numa_set_policy(p, len, &zero, 1, false), 0);
    ASSERT_OK(weft__numa_policy_of(p, &mode, &first));
    ASSERT_EQ(mode, 1); /* MPOL_PREFERRED */
    ASSERT_EQ(first, 0);
    ASSERT_EQ(weft__numa_set_policy(p + page, page, &zero, 1, true), 0);
    ASSERT_OK(weft__numa_policy_of(p + page, &mode, &first));
    ASSERT_EQ(mode, 3); /* MPOL_INTERLEAVE */
    ASSERT_EQ(first, 0);
    /* Never touched: on no node yet (move_pages does not fault it in). */
    ASSERT_STATUS(weft__numa_node_of(p + 3 * page, &node), WEFT_ENOENT);
    memset(p, 1, len);
    ASSERT_OK(weft__numa_node_of(p + page + 7, &node));
    ASSERT_EQ(node, 0);
    unsigned idx = 99;
    ASSERT_OK(weft_numa_node_of_address(NULL, p + 3 * page, &idx));
    ASSERT_EQ(idx, 0);
    /* Bad node numbers never reach the kernel; node 1000 is refused by it. */
    int bad = -1, far = 1000;
    ASSERT_STATUS(weft__numa_set_policy(p, len, &bad, 1, false), WEFT_EINVAL);
    ASSERT_STATUS(weft__numa_set_policy(p, len, &far, 1, false), WEFT_ESYS);
    ASSERT_STATUS(weft__numa_set_policy(p + 1, page, &zero, 1, false), WEFT_EINVAL);
    /* Reset: back to the default policy. */
    ASSERT_EQ(weft__numa_set_policy(p, len, NULL, 0, false), 0);
    ASSERT_OK(weft__numa_policy_of(p, &mode, &first));
    ASSERT_EQ(mode, 0);
    weft_numa_free(mem, len);
}

TEST(numa_alloc_on_a_one_node_machine_is_plain_memory_and_says_so) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.source = WEFT_TOPOLOGY_SYSFS}, &t));
    if (weft_topology_numa_node_count(t) != 1) {
        weft_topology_destroy(t);
        SKIP("this machine has several NUMA nodes");
    }
    void *p = NULL;
    weft_numa_outcome how = WEFT_NUMA_PLACED;
    ASSERT_OK(weft_numa_alloc(t, 100000, 0, &p, &how));
    ASSERT_EQ(how, WEFT_NUMA_ONE_NODE);
    ASSERT_EQ((uintptr_t)p % weft__page_size(), 0);
    memset(p, 7, 100000);
    int mode, first;
    if (weft__numa_policy_of(p, &mode, &first) == 0) ASSERT_EQ(mode, 0); /* no call was made */
    weft_numa_free(p, 100000);
    how = WEFT_NUMA_PLACED;
    ASSERT_OK(weft_numa_alloc_interleaved(t, 3, NULL, 0, &p, &how));
    ASSERT_EQ(how, WEFT_NUMA_ONE_NODE);
    ((char *)p)[2] = 1;
    weft_numa_free(p, 3);
    weft_topology_destroy(t);
}

/* A size near SIZE_MAX is WEFT_ENOMEM with *out NULL: rounding it up to whole
 * pages plus the alignment slack used to wrap around to a tiny block. */
TEST(numa_alloc_of_a_size_near_size_max_is_enomem) {
    weft_topology *t;
    ASSERT_OK(weft_topology_detect(NULL, &t));
    for (size_t slack = 0; slack <= 65536; slack = slack ? slack * 16 : 1) {
        void *p = (void *)1;
        ASSERT_STATUS(weft_numa_alloc(t, SIZE_MAX - slack, 0, &p, NULL), WEFT_ENOMEM);
        ASSERT_NULL(p);
        p = (void *)1;
        ASSERT_STATUS(weft_numa_alloc_interleaved(t, SIZE_MAX - slack, NULL, 0, &p, NULL), WEFT_ENOMEM);
        ASSERT_NULL(p);
    }
    weft_topology_destroy(t);
}

/* A two-socket fake tree (nodes 0 and 1) on this machine: node 0 exists in
 * the kernel too, node 1 (here) does not. */
TEST(numa_alloc_on_a_fake_two_node_machine_places_what_the_kernel_has) {
    need_numa_calls();
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    ASSERT_EQ(weft_topology_numa_node_count(t), 2);
    size_t len = 3 * weft__page_size() + 5;
    void *p;
    weft_numa_outcome how;
    ASSERT_OK(weft_numa_alloc(t, len, 0, &p, &how));
    ASSERT_EQ(how, WEFT_NUMA_PLACED);
    int mode, first;
    ASSERT_OK(weft__numa_policy_of(p, &mode, &first));
    ASSERT_EQ(mode, 1);
    ASSERT_EQ(first, 0);
    memset(p, 1, len);
    unsigned node = 9;
    ASSERT_OK(weft_numa_node_of_address(t, (char *)p + len - 1, &node));
    ASSERT_EQ(node, 0);
    weft_numa_free(p, len);
    if (weft__numa_set_policy(p, 1, &(int){1}, 1, false) == 0) {
        fake_remove(root);
        weft_topology_destroy(t);
        SKIP("this kernel has a node 1: the refusal cannot be shown");
    }
    ASSERT_OK(weft_numa_alloc(t, len, 1, &p, &how));
    ASSERT_EQ(how, WEFT_NUMA_UNPLACED); /* refused: plain memory, still usable */
    memset(p, 2, len);
    weft_numa_free(p, len);
    /* Interleaved over both: the kernel keeps the nodes it has. */
    ASSERT_OK(weft_numa_alloc_interleaved(t, len, NULL, 0, &p, &how));
    ASSERT_TRUE(how == WEFT_NUMA_PLACED || how == WEFT_NUMA_UNPLACED);
    memset(p, 3, len);
    weft_numa_free(p, len);
    ASSERT_OK(weft_numa_alloc_interleaved(t, len, (const unsigned[]){1}, 1, &p, &how));
    ASSERT_EQ(how, WEFT_NUMA_UNPLACED);
    weft_numa_free(p, len);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(numa_calls_reject_bad_arguments) {
    const char *root = fake_write(&FAKE_MEMORY_NODE);
    weft_topology *t = fake_detect(root);
    unsigned count = weft_topology_numa_node_count(t);
    void *p = (void *)1;
    ASSERT_STATUS(weft_numa_alloc(t, 64, count, &p, NULL), WEFT_EINVAL);
    ASSERT_NULL(p);
    ASSERT_STATUS(weft_numa_alloc(t, 0, 0, &p, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc(t, 64, 0, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc(t, SIZE_MAX, 0, &p, NULL), WEFT_ENOMEM);
    ASSERT_NULL(p);
    ASSERT_STATUS(weft_numa_alloc_interleaved(t, 64, NULL, 2, &p, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc_interleaved(t, 64, (const unsigned[]){0, count}, 2, &p, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc_interleaved(t, 64, (const unsigned[]){0}, 0, &p, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_alloc_interleaved(t, 64, NULL, 0, NULL, NULL), WEFT_EINVAL);
    unsigned node;
    ASSERT_STATUS(weft_numa_node_of_address(t, NULL, &node), WEFT_EINVAL);
    ASSERT_STATUS(weft_numa_node_of_address(t, &node, NULL), WEFT_EINVAL);
    weft_numa_free(NULL, 64);
    /* The memory-only node (index 1) is a valid target: memory, no CPU. */
    weft_numa_outcome how;
    ASSERT_OK(weft_numa_alloc(t, 64, count - 1, &p, &how));
    ((char *)p)[63] = 1;
    weft_numa_free(p, 64);
    weft_topology_destroy(t);
    fake_remove(root);
}

TEST(numa_alloc_reports_a_failing_allocator_and_recovers) {
    const char *root = fake_write(&FAKE_TWO_SOCKET);
    weft_topology *t = fake_detect(root);
    fake_fail_install();
    fake_fail_budget(0);
    void *p = (void *)1;
    ASSERT_STATUS(weft_numa_alloc(t, 10000, 0, &p, NULL), WEFT_ENOMEM);
    ASSERT_NULL(p);
    p = (void *)1;
    ASSERT_STATUS(weft_numa_alloc_interleaved(t, 10000, NULL, 0, &p, NULL), WEFT_ENOMEM);
    ASSERT_NULL(p);
    fake_fail_budget(1);
    ASSERT_OK(weft_numa_alloc(t, 10000, 0, &p, NULL));
    memset(p, 0, 10000);
    weft_numa_free(p, 10000);
    weft_set_allocator(NULL);
    weft_topology_destroy(t);
    fake_remove(root);
}

/* The public way to read a fake tree: every CPU of the tree, sysfs. */
TEST(topology_config_sysfs_root_reads_a_fake_tree) {
    const char *root = fake_write(&FAKE_CHIPLETS);
    weft_topology *t = NULL;
    ASSERT_OK(weft_topology_detect(&(weft_topology_config){.sysfs_root = root}, &t));
    ASSERT_STREQ(weft_topology_backend(t), "sysfs");
    ASSERT_EQ(weft_topology_cpu_count(t), 64);
    unsigned l3 = 0;
    for (unsigned i = 0; i < weft_topology_cache_count(t); i++) {
        weft_cache_info c;
        ASSERT_OK(weft_topology_cache(t, i, &c));
        l3 += c.level == 3;
    }
    ASSERT_EQ(l3, 4);
    weft_topology_destroy(t);
    fake_remove(root);
}
