/* Session 45 review (h45-6): second look at the session's changes
 * (dab43b0..d02fa3f).
 *  - 34471a3 (a subflow's nested-run record made when its graph first runs):
 *    the new failure path (no memory for the record) fails the task with
 *    WEFT_ENOMEM; its graph's tasks, which never run, must count as skipped
 *    as on every other path where a started subflow's graph cannot run
 *    (04f9468, core.h weft_run_info.skipped).
 *  - 323fbe5 (the slab's first chunk 8 nodes): weft__chunk_locate and
 *    weft__chunk_capacity_of against a reference, for every index through
 *    the last small chunk and well into the big ones.
 *  - 6d2be60 (per-element loops in blocks): weft_parallel_for visits every
 *    index of first..last by step exactly once, for steps and ranges that do
 *    not divide, and near SIZE_MAX.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "counting_alloc.h"

#include "graph/graph.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static weft_executor *make_ex(unsigned workers) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers, .metrics = true}, &st);
    if (!ex) {
        fprintf(stderr, "executor: %s\n", weft_strerror(st));
        exit(1);
    }
    return ex;
}

static int noop(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

static int count_call(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* ---- 34471a3: no memory for a subflow's nested-run record ---- */

typedef struct {
    int join; /* 1: the function joins the graph (weft_subflow_join's record) */
    weft_status join_st;
} sub_arg;

/* Builds three tasks, then makes the next allocation fail: the nested-run
 * record's, made after the function returns (or in its join). */
static int build_three_then_starve(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    sub_arg *a = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 3; i++)
        if (weft_task_is_null(weft_emplace(g, noop, NULL))) return 91;
    fail_allocation(1);
    if (a->join) {
        a->join_st = weft_subflow_join(sf);
        fail_allocation(0);
        return a->join_st == WEFT_OK ? 0 : (int)a->join_st;
    }
    return 0;
}

TEST(a_subflow_whose_nested_run_record_cannot_be_allocated_counts_its_graphs_tasks_as_skipped) {
    weft_set_allocator(&counting);
    weft_executor *ex = make_ex(1);
    for (int join = 0; join < 2; join++) {
        weft_taskflow *tf = weft_taskflow_create(NULL, NULL);
        ASSERT_TRUE(tf != NULL);
        sub_arg a = {join, WEFT_OK};
        weft_task s = weft_emplace_subflow(tf, build_three_then_starve, &a);
        ASSERT_FALSE(weft_task_is_null(s));
        atomic_int calls = 0;
        weft_task after = weft_emplace(tf, count_call, &calls);
        ASSERT_FALSE(weft_task_is_null(after));
        ASSERT_OK(weft_precede(s, after));
        weft_metrics m0, m1;
        ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        weft_status st = weft_future_wait(f);
        fail_allocation(0);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
        /* The failure hit the record (576 bytes and its alignment), not
         * something else on the way. */
        if (A.fail_size < sizeof(struct weft__run))
            TEST_FAIL_("join %d: the failed allocation asked %zu bytes, not the nested-run record", join,
                       A.fail_size);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_STATUS(st, WEFT_ETASK);
        ASSERT_EQ(info.task_code, WEFT_ENOMEM);
        if (join) ASSERT_STATUS(a.join_st, WEFT_ENOMEM);
        /* The three tasks of its graph and the successor. */
        if (info.skipped != 4 || m1.total.skipped - m0.total.skipped != 4)
            TEST_FAIL_("join %d: skipped %llu, metrics %llu, want 4", join, (unsigned long long)info.skipped,
                       (unsigned long long)(m1.total.skipped - m0.total.skipped));
        ASSERT_EQ(atomic_load(&calls), 0);
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}

/* ---- 323fbe5: the slab's chunk arithmetic against a reference ---- */

TEST(chunk_locate_and_capacity_of_agree_with_the_chunks_laid_end_to_end_for_every_index) {
    /* Reference: chunk k holds 8 << min(k, 13) nodes, the chunks laid end
     * to end from index 0.  Every index through the last small chunk
     * (65527) and the first four big ones, then the top of uint32_t. */
    size_t start = 0, k = 0, checked = 0;
    const size_t upto = 65528 + 4 * 65536 + 3;
    for (size_t i = 0; i < upto; i++) {
        size_t cap = (size_t)8 << (k < 13 ? k : 13);
        if (i == start + cap) start += cap, k++, cap = (size_t)8 << (k < 13 ? k : 13);
        ASSERT_EQ(weft__chunk_capacity(k), cap);
        size_t slot = (size_t)-1, got = weft__chunk_locate(i, &slot);
        if (got != k || slot != i - start || weft__chunk_capacity_of((uint32_t)i) != cap) {
            TEST_FAIL_("index %zu: chunk %zu slot %zu capacity_of %zu, want chunk %zu slot %zu capacity %zu", i, got,
                       slot, weft__chunk_capacity_of((uint32_t)i), k, i - start, cap);
        }
        /* A chunk's nodes, hot then cold, fit its allocation. */
        ASSERT_EQ(weft__chunk_bytes(k), 2 * cap * sizeof(struct weft__node));
        checked++;
    }
    ASSERT_EQ(k, 13 + 4);
    for (uint64_t i = UINT32_MAX - 70000; i <= UINT32_MAX; i++) {
        size_t slot, got = weft__chunk_locate((size_t)i, &slot);
        size_t want_k = 13 + ((size_t)i - 65528) / 65536, want_slot = ((size_t)i - 65528) % 65536;
        if (got != want_k || slot != want_slot || weft__chunk_capacity_of((uint32_t)i) != 65536)
            TEST_FAIL_("index %llu: chunk %zu slot %zu capacity_of %zu", (unsigned long long)i, got, slot,
                       weft__chunk_capacity_of((uint32_t)i));
    }
    ASSERT_TRUE(checked == upto);
}

/* Graphs whose size ends on each side of every small chunk's end: each
 * task's name (in its cold part, found through capacity_of) and its run
 * come out right. */
static int bump_index(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_int *hits = arg;
    weft_task t = weft_ctx_task(ctx);
    size_t i = weft_task_index(t);
    char want[32];
    snprintf(want, sizeof want, "t%zu", i);
    const char *name = weft_task_name(t);
    if (!name || strcmp(name, want) != 0) return 1; /* the run fails: the cold part is not this task's */
    atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
    return 0;
}

TEST(graphs_ending_on_each_side_of_every_small_chunk_run_each_task_once_with_its_name) {
    weft_executor *ex = make_ex(2);
    enum { MAXN = 8 * 127 + 2 }; /* chunks 0..6 and into chunk 7 */
    static atomic_int hits[MAXN];
    size_t ends[] = {1, 7, 8, 9, 23, 24, 25, 55, 56, 57, 119, 120, 121, 247, 248, 249, 503, 504, 505, 1015, 1016, 1017};
    for (size_t e = 0; e < sizeof ends / sizeof *ends; e++) {
        size_t n = ends[e];
        weft_taskflow *tf = weft_taskflow_create(NULL, NULL);
        ASSERT_TRUE(tf != NULL);
        weft_task prev = WEFT_TASK_NULL;
        for (size_t i = 0; i < n; i++) {
            weft_task t = weft_emplace(tf, bump_index, hits);
            ASSERT_FALSE(weft_task_is_null(t));
            char name[32];
            snprintf(name, sizeof name, "t%zu", i);
            ASSERT_OK(weft_task_set_name(t, name));
            if (i % 3 == 2) ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
        for (size_t i = 0; i < n; i++) atomic_store(&hits[i], 0);
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        for (size_t i = 0; i < n; i++)
            if (atomic_load(&hits[i]) != 1) TEST_FAIL_("n %zu: task %zu ran %d times", n, i, atomic_load(&hits[i]));
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
}

/* ---- 6d2be60: per-element loops in blocks of 64 ---- */

typedef struct {
    size_t first, step, n;
    atomic_uchar *seen;
    atomic_long bad;
} idx_check;

static void mark_index(size_t i, void *arg) {
    idx_check *c = arg;
    size_t d = i - c->first;
    if (d % c->step != 0 || d / c->step >= c->n) {
        atomic_fetch_add(&c->bad, 1);
        return;
    }
    atomic_fetch_add_explicit(&c->seen[d / c->step], 1, memory_order_relaxed);
}

TEST(parallel_for_visits_every_index_once_for_steps_that_do_not_divide_and_near_size_max) {
    weft_executor *ex = make_ex(2);
    const size_t steps[] = {1, 2, 3, 7, 63, 64, 65, 127, 1000};
    const size_t lens[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 10000};
    static atomic_uchar seen[10001];
    const size_t bases[] = {0, 5, SIZE_MAX - 10000, SIZE_MAX - 9999 * 7 - 1};
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++)
        for (size_t s = 0; s < sizeof steps / sizeof *steps; s++)
            for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
                for (size_t grain = 0; grain < 3; grain++) {
                    size_t step = steps[s], first = bases[b], len = lens[l];
                    /* last = first + len, capped at SIZE_MAX (the range may end there) */
                    size_t last = SIZE_MAX - first < len ? SIZE_MAX : first + len;
                    size_t n = last > first ? (last - first - 1) / step + 1 : 0;
                    ASSERT_TRUE(n <= 10001);
                    for (size_t i = 0; i < n; i++) atomic_store(&seen[i], 0);
                    idx_check c = {first, step, n, seen, 0};
                    weft_algo_config cfg = {0};
                    cfg.chunk = grain == 0 ? 0 : grain == 1 ? 1 : 1000;
                    ASSERT_OK(weft_parallel_for(ex, first, last, step, mark_index, &c, &cfg));
                    ASSERT_EQ(atomic_load(&c.bad), 0);
                    for (size_t i = 0; i < n; i++)
                        if (atomic_load(&seen[i]) != 1)
                            TEST_FAIL_("first %zu last %zu step %zu grain %zu: element %zu seen %d times", first,
                                       last, step, cfg.chunk, i, atomic_load(&seen[i]));
                }
    /* The whole of size_t by a huge step: the last index is SIZE_MAX - 0. */
    {
        size_t step = SIZE_MAX / 3 + 1; /* 0, step, 2 step: three, the next wraps */
        idx_check c = {0, step, 3, seen, 0};
        for (int i = 0; i < 3; i++) atomic_store(&seen[i], 0);
        ASSERT_OK(weft_parallel_for(ex, 0, SIZE_MAX, step, mark_index, &c, NULL));
        ASSERT_EQ(atomic_load(&c.bad), 0);
        for (int i = 0; i < 3; i++) ASSERT_EQ(atomic_load(&seen[i]), 1);
    }
    weft_executor_destroy(ex);
}

/* ---- d19891a: one policy state shared by two executors ---- */

#include <pthread.h>
#include <time.h>

/* A FIFO that logs every push with its priority. */
typedef struct log_policy {
    pthread_mutex_t m;
    weft_sched_item *q[4096];
    size_t head, n;
    struct { weft_sched_item *it; weft_priority p; } log[4096];
    size_t nlog;
    bool nolog;
} log_policy;

static int log_push(void *st, weft_sched_item *it, weft_priority p, int worker) {
    (void)worker;
    log_policy *l = st;
    pthread_mutex_lock(&l->m);
    int full = l->n == 4096 || (!l->nolog && l->nlog == 4096);
    if (!full) {
        l->q[(l->head + l->n++) % 4096] = it;
        if (!l->nolog) l->log[l->nlog].it = it, l->log[l->nlog++].p = p;
    }
    pthread_mutex_unlock(&l->m);
    return full;
}

static weft_sched_item *log_pop(void *st, int worker) {
    (void)worker;
    log_policy *l = st;
    weft_sched_item *it = NULL;
    pthread_mutex_lock(&l->m);
    if (l->n) it = l->q[l->head], l->head = (l->head + 1) % 4096, l->n--;
    pthread_mutex_unlock(&l->m);
    return it;
}

static bool wait_flag(atomic_int *f, int want, double secs) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(f) < want) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > secs) return false;
        struct timespec nap = {0, 100000};
        nanosleep(&nap, NULL);
    }
    return true;
}

typedef struct prio_spawner {
    weft_executor *ex;
    atomic_int n, spawned, release;
} prio_spawner;

static int bump(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static int spawn_high_then_hold(weft_ctx *cx, void *arg) {
    (void)cx;
    prio_spawner *sp = arg;
    for (int i = 0; i < 8; i++)
        if (weft_async_with(sp->ex, bump, &sp->n, &(weft_async_options){.priority = WEFT_PRIORITY_HIGH}, NULL) !=
            WEFT_OK)
            return 1;
    atomic_store(&sp->spawned, 1);
    (void)wait_flag(&sp->release, 1, 10);
    return 0;
}

/* weft/sched.h: push keeps an item "priority as given at submission".  With
 * one state shared by executors a and b, an item of a's that b's worker
 * takes goes back to a, which pushes it into the policy again: it must come
 * with its priority (HIGH here), not as a NORMAL job. */
TEST(an_item_another_executor_takes_from_a_shared_policy_is_pushed_again_with_its_priority) {
    log_policy *l = calloc(1, sizeof *l);
    ASSERT_TRUE(l != NULL);
    pthread_mutex_init(&l->m, NULL);
    weft_sched_policy pol = {.state = l, .push = log_push, .pop = log_pop};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
    weft_status st;
    weft_executor *a = weft_executor_create(&(weft_executor_config){.workers = 1, .sched = &sc}, &st);
    weft_executor *b = weft_executor_create(&(weft_executor_config){.workers = 1, .sched = &sc}, &st);
    ASSERT_TRUE(a && b);
    prio_spawner sp = {.ex = a};
    ASSERT_OK(weft_silent_async(a, spawn_high_then_hold, &sp));
    ASSERT_TRUE(wait_flag(&sp.spawned, 1, 10));
    atomic_int nb = 0; /* b's worker wakes for this one and finds a's 8 first */
    ASSERT_OK(weft_silent_async(b, bump, &nb));
    ASSERT_TRUE(wait_flag(&nb, 1, 10));
    atomic_store(&sp.release, 1);
    ASSERT_TRUE(wait_flag(&sp.n, 8, 10));
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_OK(weft_executor_wait_all(b));
    weft_sched_stats sa, sb;
    ASSERT_OK(weft_sched_get_stats(a, &sa));
    ASSERT_OK(weft_sched_get_stats(b, &sb));
    ASSERT_EQ(sa.policy_errors + sb.policy_errors, 0);
    /* Each item's pushes: the first one's priority every time. */
    size_t again = 0;
    for (size_t i = 0; i < l->nlog; i++)
        for (size_t k = 0; k < i; k++)
            if (l->log[k].it == l->log[i].it && l->log[k].p == WEFT_PRIORITY_HIGH) {
                again++;
                if (l->log[i].p != WEFT_PRIORITY_HIGH)
                    TEST_FAIL_("push %zu: a HIGH item pushed again at priority %d", i, (int)l->log[i].p);
                break;
            }
    /* b's worker took a's 8 items before its own (the FIFO's order), and
     * each was pushed again (more than once if b's worker took it again). */
    if (again < 8) TEST_FAIL_("%zu of a's 8 items pushed again", again);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
    pthread_mutex_destroy(&l->m);
    free(l);
}

/* Executor a destroyed while b's workers keep taking from the shared state
 * (a's items among them, sent back to a until a's destroy has waited for
 * them): every job of each runs once, b goes on, no policy error. */
typedef struct b_feeder {
    weft_executor *b;
    atomic_int n, done;
    int total;
} b_feeder;

static void *feed_b(void *arg) {
    b_feeder *f = arg;
    for (int i = 0; i < f->total; i++)
        if (weft_silent_async(f->b, bump, &f->n) != WEFT_OK) break;
    atomic_store(&f->done, 1);
    return NULL;
}

static int spawn_some(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_int *n = arg;
    weft_executor *ex = weft_ctx_executor(cx);
    for (int i = 0; i < 20; i++)
        if (weft_silent_async(ex, bump, n) != WEFT_OK) return 1;
    return 0;
}

TEST(destroying_one_of_two_executors_sharing_a_policy_state_while_the_other_takes_from_it_runs_every_job_once) {
    int rounds = (int)test_scale(10);
    for (int round = 0; round < rounds; round++) {
        log_policy *l = calloc(1, sizeof *l);
        ASSERT_TRUE(l != NULL);
        pthread_mutex_init(&l->m, NULL);
        l->nolog = true;
        weft_sched_policy pol = {.state = l, .push = log_push, .pop = log_pop};
        weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &pol};
        weft_status st;
        weft_executor *a = weft_executor_create(&(weft_executor_config){.workers = 2, .sched = &sc}, &st);
        weft_executor *b = weft_executor_create(&(weft_executor_config){.workers = 2, .sched = &sc}, &st);
        ASSERT_TRUE(a && b);
        b_feeder f = {.b = b, .total = 3000};
        pthread_t t;
        ASSERT_EQ(pthread_create(&t, NULL, feed_b, &f), 0);
        atomic_int na = 0;
        for (int i = 0; i < 50; i++) ASSERT_OK(weft_silent_async(a, spawn_some, &na));
        ASSERT_OK(weft_executor_wait_all(a));
        weft_sched_stats sa;
        ASSERT_OK(weft_sched_get_stats(a, &sa));
        weft_executor_destroy(a); /* b's workers are still at work */
        ASSERT_EQ(atomic_load(&na), 50 * 20);
        ASSERT_EQ(sa.policy_errors, 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_OK(weft_executor_wait_all(b));
        ASSERT_EQ(atomic_load(&f.n), f.total);
        weft_sched_stats sb;
        ASSERT_OK(weft_sched_get_stats(b, &sb));
        ASSERT_EQ(sb.policy_errors, 0);
        weft_executor_destroy(b);
        ASSERT_EQ(l->n, 0);
        pthread_mutex_destroy(&l->m);
        free(l);
    }
}
