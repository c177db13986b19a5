/* Config structs across library versions (docs/abi.md): a binary built against
 * an older header passes a shorter struct, one built against a newer header a
 * longer one, and the _sized entry points (which the header's macros call with
 * the caller's sizeof) read exactly what the caller has.
 *
 * An "old" struct here is a copy of the current one without its last fields,
 * laid in a buffer whose bytes after it are all 0xff: a library that read past
 * the caller's size would see an affinity or pointer made of 0xff bytes. */
#include "harness.h"

#include <weft.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* weft_executor_config as an older header might have had it: the first five fields. */
typedef struct old_executor_config {
    unsigned workers;
    unsigned steal_rounds;
    unsigned yield_rounds;
    size_t deque_capacity;
    size_t stack_size;
} old_executor_config;

/* weft_executor_config as a newer header might have it: one field appended. */
typedef struct new_executor_config {
    weft_executor_config base;
    uint64_t appended;
} new_executor_config;

/* The old struct at the start of a buffer of junk, as it is in an old binary's
 * memory when something else follows it. */
typedef union junk_after {
    unsigned char bytes[sizeof(weft_executor_config) + 64];
    old_executor_config old;
    max_align_t align;
} junk_after;

TEST(executor_config_from_an_older_header_reads_defaults_for_the_fields_it_lacks) {
    junk_after buf;
    memset(&buf, 0xff, sizeof buf);
    buf.old = (old_executor_config){ .workers = 2, .steal_rounds = 3 };
    memset(buf.bytes + sizeof buf.old, 0xff, sizeof buf - sizeof buf.old); /* padding too */
    weft_status st = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create_sized((const weft_executor_config *)(void *)&buf,
                                                   sizeof(old_executor_config), &st);
    ASSERT_EQ(st, WEFT_OK);
    ASSERT_TRUE(ex != NULL);
    ASSERT_EQ(weft_executor_workers(ex), 2);
    weft_executor_destroy(ex);
}

TEST(executor_config_from_a_newer_header_with_a_field_set_is_einval) {
    new_executor_config c = { .base = { .workers = 2 }, .appended = 1 };
    weft_status st = WEFT_OK;
    ASSERT_TRUE(weft_executor_create_sized(&c.base, sizeof c, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "weft_executor_config") != NULL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "offset") != NULL);
}

TEST(executor_config_from_a_newer_header_with_zero_new_fields_works) {
    new_executor_config c = { .base = { .workers = 2 } };
    weft_status st = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create_sized(&c.base, sizeof c, &st);
    ASSERT_EQ(st, WEFT_OK);
    ASSERT_TRUE(ex != NULL);
    ASSERT_EQ(weft_executor_workers(ex), 2);
    weft_executor_destroy(ex);
}

TEST(executor_create_macro_and_exported_name_both_work) {
    weft_status st = WEFT_EINVAL;
    weft_executor *a = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    ASSERT_EQ(st, WEFT_OK);
    ASSERT_EQ(weft_executor_workers(a), 1);
    /* The exported symbol an old binary calls (the header's macro gone). */
#undef weft_executor_create
    weft_executor *b = weft_executor_create(&(weft_executor_config){ .workers = 2, .steal_rounds = 1 }, &st);
    ASSERT_EQ(st, WEFT_OK);
    ASSERT_EQ(weft_executor_workers(b), 2);
    weft_executor *c = weft_executor_create_sized(NULL, 0, &st); /* NULL: all defaults */
    ASSERT_TRUE(c != NULL);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    weft_executor_destroy(c);
}

/* ---- weft_algo_config --------------------------------------------------------- */

/* weft_algo_config before its cancel field. */
typedef struct old_algo_config {
    weft_partitioner partitioner;
    size_t chunk;
    unsigned max_tasks;
} old_algo_config;

typedef struct new_algo_config {
    weft_algo_config base;
    uint64_t appended;
} new_algo_config;

typedef union algo_junk_after {
    unsigned char bytes[sizeof(weft_algo_config) + 64];
    old_algo_config old;
    max_align_t align;
} algo_junk_after;

enum { N = 1000 };

static void count_one(size_t i, void *arg) {
    (void)i;
    atomic_fetch_add_explicit((_Atomic size_t *)arg, 1, memory_order_relaxed);
}

TEST(algo_config_from_an_older_header_reads_defaults_for_the_fields_it_lacks) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, NULL);
    ASSERT_TRUE(ex != NULL);
    algo_junk_after buf;
    memset(&buf, 0xff, sizeof buf); /* a cancel token read from here would be 0xff...ff */
    buf.old = (old_algo_config){ .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 7 };
    memset(buf.bytes + sizeof buf.old, 0xff, sizeof buf - sizeof buf.old);
    _Atomic size_t runs = 0;
    ASSERT_EQ(weft_parallel_for_sized(ex, 0, N, 1, count_one, &runs,
                                      (const weft_algo_config *)(void *)&buf, sizeof(old_algo_config)),
              WEFT_OK);
    ASSERT_EQ(atomic_load(&runs), N);
    weft_executor_destroy(ex);
}

TEST(algo_config_from_a_newer_header_is_einval_with_a_field_set_and_works_without) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, NULL);
    ASSERT_TRUE(ex != NULL);
    _Atomic size_t runs = 0;
    new_algo_config c = { .base = { .chunk = 3 }, .appended = 5 };
    ASSERT_EQ(weft_parallel_for_sized(ex, 0, N, 1, count_one, &runs, &c.base, sizeof c), WEFT_EINVAL);
    ASSERT_EQ(atomic_load(&runs), 0);
    ASSERT_TRUE(strstr(weft_last_error_message(), "weft_algo_config") != NULL);
    c.appended = 0;
    ASSERT_EQ(weft_parallel_for_sized(ex, 0, N, 1, count_one, &runs, &c.base, sizeof c), WEFT_OK);
    ASSERT_EQ(atomic_load(&runs), N);
    /* The header's name passes its own size; NULL is all defaults. */
    ASSERT_EQ(weft_parallel_for(ex, 0, N, 1, count_one, &runs, &(weft_algo_config){ .chunk = 3, .max_tasks = 2 }), WEFT_OK);
    ASSERT_EQ(weft_parallel_for_sized(ex, 0, N, 1, count_one, &runs, NULL, 0), WEFT_OK);
    ASSERT_EQ(atomic_load(&runs), 3 * N);
    weft_executor_destroy(ex);
}

/* ---- every other config struct passed by pointer ------------------------------- */

static int record_nothing(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}

static int record_ran(weft_ctx *ctx, void *arg) {
    (void)ctx;
    *(int *)arg = 1;
    return 0;
}

/* A struct of a newer header: the library's struct, then one set field. */
#define NEWER(type) struct { type base; uint64_t appended; }

TEST(every_sized_entry_refuses_a_newer_struct_with_a_field_set) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    ASSERT_TRUE(ex != NULL);
    weft_topology *topo = NULL;
    NEWER(weft_topology_config) tc = { .appended = 1 };
    ASSERT_EQ(weft_topology_detect_sized(&tc.base, sizeof tc, &topo), WEFT_EINVAL);
    ASSERT_TRUE(topo == NULL);
    ASSERT_EQ(weft_topology_detect(NULL, &topo), WEFT_OK);
    NEWER(weft_placement_config) pc = { .appended = 1 };
    int cpus[1];
    ASSERT_EQ(weft_topology_place_sized(topo, &pc.base, sizeof pc, 1, cpus), WEFT_EINVAL);
    ASSERT_EQ(weft_topology_worker_cpu_sized(topo, &pc.base, sizeof pc, 0, 1, cpus), WEFT_EINVAL);
    pc.appended = 0;
    ASSERT_EQ(weft_topology_place_sized(topo, &pc.base, sizeof pc, 1, cpus), WEFT_OK);
    weft_topology_destroy(topo);
    NEWER(weft_preempt_config) rc = { .appended = 1 };
    ASSERT_EQ(weft_preempt_install_sized(&rc.base, sizeof rc), WEFT_EINVAL);
    NEWER(weft_gpu_config) gc = { .appended = 1 };
    weft_status st = WEFT_OK;
    ASSERT_TRUE(weft_gpu_open_sized(&gc.base, sizeof gc, &st) == NULL);
    ASSERT_EQ(st, WEFT_EINVAL);
    NEWER(weft_stats_config) sc = { .appended = 1 };
    ASSERT_EQ(weft_stats_start_sized(ex, &sc.base, sizeof sc), WEFT_EINVAL);
    NEWER(weft_folded_options) fo = { .appended = 1 };
    ASSERT_EQ(weft_profiler_write_folded_sized(ex, &fo.base, sizeof fo, stdout), WEFT_EINVAL);
    ASSERT_EQ(weft_profiler_write_flame_svg_sized(ex, &fo.base, sizeof fo, stdout), WEFT_EINVAL);
    NEWER(weft_async_options) ao = { .appended = 1 };
    weft_future *f = NULL;
    ASSERT_EQ(weft_async_with_sized(ex, record_nothing, NULL, &ao.base, sizeof ao, &f), WEFT_EINVAL);
    ASSERT_TRUE(f == NULL);
    weft_executor_destroy(ex);
}

/* weft_async_options without its dependency fields, followed by junk that
 * would be a wild deps pointer and count if read. */
typedef struct old_async_options {
    weft_priority priority;
    weft_sched_handle *handle;
} old_async_options;

typedef union async_junk_after {
    unsigned char bytes[sizeof(weft_async_options) + 64];
    old_async_options old;
    max_align_t align;
} async_junk_after;

TEST(async_options_and_topology_config_from_an_older_header_read_defaults) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    ASSERT_TRUE(ex != NULL);
    async_junk_after buf;
    memset(&buf, 0xff, sizeof buf);
    buf.old = (old_async_options){ .priority = WEFT_PRIORITY_HIGH };
    memset(buf.bytes + sizeof buf.old, 0xff, sizeof buf - sizeof buf.old);
    weft_future *f = NULL;
    int ran = 0;
    ASSERT_EQ(weft_async_with_sized(ex, record_ran, &ran, (const weft_async_options *)(void *)&buf,
                                    sizeof(old_async_options), &f),
              WEFT_OK);
    ASSERT_EQ(weft_future_wait(f), WEFT_OK);
    weft_future_destroy(f);
    ASSERT_EQ(ran, 1);
    /* weft_topology_config without sysfs_root: junk there would be a wild path. */
    union { unsigned char bytes[sizeof(weft_topology_config)]; weft_topology_config c; } t;
    memset(&t, 0xff, sizeof t);
    t.c.source = WEFT_TOPOLOGY_AUTO;
    t.c.all_cpus = false;
    weft_topology *topo = NULL;
    ASSERT_EQ(weft_topology_detect_sized(&t.c, offsetof(weft_topology_config, sysfs_root), &topo), WEFT_OK);
    ASSERT_TRUE(weft_topology_cpu_count(topo) >= 1);
    weft_topology_destroy(topo);
    weft_executor_destroy(ex);
}
