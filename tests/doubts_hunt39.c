/* Doubts left open by earlier hunts, each settled by a test:
 *  - a wait that overlaps the destroy of its future's executor (core/future.c
 *    read the executor after seeing the run unfinished);
 *  - a huge deque_capacity (each ring was written in full at create);
 *  - tasks with priorities after weft_taskflow_clear, a reused slot or a
 *    priority set back to NORMAL (the plain tasks were not armed again);
 *  - weft_run_until on an empty taskflow (calls its predicate: graph.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sched_util.h"

#include "graph/graph.h" /* a node's job function (priorities after clear) */

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- 1. a wait overlapping the executor's destroy -------------------------------
 *
 * weft_executor_destroy waits for every run, so a thread waiting on a future
 * of the executor may see the run unfinished, then the run end and the
 * executor be freed, all before the wait goes on.  The wait must not read the
 * executor after that first look.  The moment is made certain: the set of a
 * weft_run_many of MANY members (member 0 a gated run, the others refused
 * submissions) lives in memory this test maps; one page of its member list is
 * protected, and the wait's walk over the members (core/future.c,
 * weft__future_waits_on_itself) faults there.  The handler opens the gate and
 * holds the waiter until the destroy has returned.  The freed executor is
 * filled with a pattern, so a read of it shows without ASan too (its fork
 * generation no longer matches: WEFT_EFORKED instead of the set's status). */

enum { MANY = 2048 };

static struct {
    atomic_int arm; /* 1 during weft_run_many: its set's block is mapped here */
    char *block;
    size_t block_size;
    char *guard; /* the protected page */
    size_t page;
    atomic_int gate, destroyed, faults;
} D1;

static void *d1_alloc(void *ctx, size_t n) {
    (void)ctx;
    if (atomic_load(&D1.arm) && n >= MANY * sizeof(void *) && !D1.block) {
        size_t sz = (n + D1.page - 1) / D1.page * D1.page;
        void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
        D1.block = p;
        D1.block_size = sz;
        return p;
    }
    return malloc(n);
}

static void d1_free(void *ctx, void *p, size_t n) {
    (void)ctx, (void)n;
    if (!p) return;
    if ((char *)p == D1.block) {
        munmap(p, D1.block_size);
        D1.block = NULL;
        return;
    }
    memset(p, 0xA5, malloc_usable_size(p)); /* a read after free reads the pattern */
    __asm__ volatile("" : : "r"(p) : "memory"); /* (a store before free is otherwise dropped) */
    free(p);
}

static void d1_segv(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    char *a = si->si_addr;
    if (!D1.guard || a < D1.guard || a >= D1.guard + D1.page) {
        signal(sig, SIG_DFL); /* not ours: fault again, and die of it */
        return;
    }
    atomic_fetch_add(&D1.faults, 1);
    mprotect(D1.guard, D1.page, PROT_READ | PROT_WRITE);
    atomic_store(&D1.gate, 1);
    struct timespec ts = {0, 100000};
    while (!atomic_load(&D1.destroyed)) nanosleep(&ts, NULL);
}

static int d1_gated(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    while (!atomic_load(&D1.gate)) sleep_us(50);
    return 0;
}

struct d1_wait {
    weft_future *f;
    weft_status st;
};

static void *d1_waiter(void *arg) {
    struct d1_wait *w = arg;
    w->st = weft_future_wait(w->f);
    return NULL;
}

TEST(a_wait_overlapping_the_destroy_of_its_executor_reads_no_freed_executor) {
    D1.page = (size_t)sysconf(_SC_PAGESIZE);
    weft_set_allocator(&(weft_allocator){.alloc = d1_alloc, .free = d1_free});
    struct sigaction sa = {0}, old;
    sa.sa_sigaction = d1_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGSEGV, &sa, &old), 0);

    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("gated");
    must_emplace(tf, d1_gated, NULL);
    weft_taskflow **tfs = calloc(MANY, sizeof *tfs);
    ASSERT_NOT_NULL(tfs);
    tfs[0] = tf; /* the others NULL: refused, kept as NULL members */
    weft_future *set = NULL;
    atomic_store(&D1.arm, 1);
    ASSERT_OK(weft_run_many(ex, tfs, MANY, &set));
    atomic_store(&D1.arm, 0);
    ASSERT_NOT_NULL(D1.block);
    ASSERT_GE(D1.block_size, 4 * D1.page); /* the member list spans pages 0 .. 4 */
    D1.guard = D1.block + 2 * D1.page;
    ASSERT_EQ(mprotect(D1.guard, D1.page, PROT_NONE), 0);

    struct d1_wait w = {set, WEFT_EAGAIN};
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, d1_waiter, &w), 0);
    ASSERT_TRUE(wait_flag(&D1.gate, 1, 10.0)); /* the waiter is in its walk */
    weft_executor_destroy(ex);                 /* the set ends; ex is freed */
    atomic_store(&D1.destroyed, 1);
    pthread_join(th, NULL);
    ASSERT_EQ(atomic_load(&D1.faults), 1);
    /* Member 1 was refused (tf NULL): the set's status is WEFT_ETASK. */
    ASSERT_STATUS(w.st, WEFT_ETASK);

    weft_future_destroy(set);
    ASSERT_OK(weft_taskflow_destroy(tf));
    free(tfs);
    ASSERT_EQ(sigaction(SIGSEGV, &old, NULL), 0);
    weft_set_allocator(NULL);
}

/* ---- 3. a huge deque_capacity ---------------------------------------------------
 *
 * Up to 2^30 slots (8 GiB) per worker is allowed (core.h).  The ring was
 * written slot by slot at create: 2^27 slots took a second and 1 GiB of
 * resident memory per worker, 2^30 eight times that (21 s for one worker; a
 * few workers were killed by the OOM killer, no WEFT_ENOMEM).  Zeroed memory
 * is taken lazily now: only the slots used are ever touched. */

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int bump_task(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

TEST(a_huge_deque_capacity_is_reserved_not_written_at_create) {
#ifdef UNDER_TSAN
    SKIP("ThreadSanitizer's calloc writes the memory it hands out");
#endif
    const size_t slots = (size_t)1 << 27; /* 1 GiB of ring per worker */
    long before = rss_kb();
    if (before < 0) SKIP("no /proc/self/statm");
    double t0 = now_s();
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2, .deque_capacity = slots}, &err);
    if (!ex) { /* strict overcommit: the refusal must say why */
        ASSERT_STATUS(err, WEFT_ENOMEM);
        ASSERT_TRUE(strstr(weft_last_error_message(), "deque_capacity") != NULL);
        SKIP("2 GiB of deques cannot be reserved here");
    }
    double took = now_s() - t0;
    long grew = rss_kb() - before;
    printf("create took %.3f s, resident memory grew by %ld KiB\n", took, grew);
    ASSERT_LT(grew, (long)(slots * sizeof(void *) / 1024 / 4)); /* not the rings written */
    /* It works: tasks go through the big deques. */
    atomic_int n = 0;
    weft_taskflow *tf = make_taskflow("fan");
    weft_task root = must_emplace(tf, bump_task, &n);
    for (int i = 0; i < 1000; i++) ASSERT_OK(weft_precede(root, must_emplace(tf, bump_task, &n)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&n), 1001);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static void *refuse_big(void *ctx, size_t n) {
    (void)ctx;
    return n >= ((size_t)1 << 30) ? NULL : malloc(n);
}

TEST(deques_that_cannot_be_allocated_fail_create_with_enomem_naming_deque_capacity) {
    weft_set_allocator(&(weft_allocator){.alloc = refuse_big});
    weft_status err = WEFT_OK;
    weft_executor *ex =
        weft_executor_create(&(weft_executor_config){.workers = 2, .deque_capacity = (size_t)1 << 30}, &err);
    ASSERT_NULL(ex);
    ASSERT_STATUS(err, WEFT_ENOMEM);
    const char *msg = weft_last_error_message();
    printf("message: %s\n", msg);
    ASSERT_TRUE(strstr(msg, "deque_capacity") != NULL);
    /* A bound as large is only a bound: nothing is reserved for it. */
    ex = weft_executor_create(&(weft_executor_config){.workers = 2, .local_queue_capacity = (size_t)1 << 30}, &err);
    ASSERT_NOT_NULL(ex);
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}

/* ---- 4. priorities after clear, slot reuse and a reset priority ------------------
 *
 * A run of a taskflow with priorities arms its plain tasks (they queue the
 * successors they ready at once, weft__node_run_prio) and remembers it by the
 * task count (tf->prio_armed).  weft_taskflow_clear and a reused slot keep
 * the count while the tasks are new, and a priority set back to NORMAL
 * disarms its task; the next run skipped arming, so a plain task's wide fan
 * of successors waited on the deque and ran out of priority order. */

enum { FAN = 150 };
static const int LEVELS[] = {WEFT_PRIORITY_LOW, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_CRITICAL};

static int fan_prio[FAN];
static order_log fan_log;
static logged fan_args[FAN];
static weft_task fan_tasks[FAN];

static void fan_init(void) {
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < FAN; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        fan_prio[i] = LEVELS[rng % 3];
        fan_args[i] = (logged){&fan_log, i};
    }
}

/* Adds root -> FAN logged successors with their priorities; returns root. */
static weft_task fan_build(weft_taskflow *tf) {
    weft_task root = weft_placeholder(tf);
    ASSERT_FALSE(weft_task_is_null(root));
    for (int i = 0; i < FAN; i++) {
        weft_task t = fan_tasks[i] = must_emplace(tf, log_task, &fan_args[i]);
        ASSERT_OK(weft_task_set_priority(t, (weft_priority)fan_prio[i]));
        ASSERT_OK(weft_precede(root, t));
    }
    return root;
}

/* One run on one worker; the fan must start in priority order (FIFO among equals). */
static void fan_check(weft_executor *ex, weft_taskflow *tf, const char *when) {
    int want[FAN], k = 0;
    for (int p = WEFT_PRIORITY_CRITICAL; p >= WEFT_PRIORITY_LOW; p--)
        for (int i = 0; i < FAN; i++)
            if (fan_prio[i] == p) want[k++] = i;
    atomic_store(&fan_log.n, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&fan_log.n), FAN);
    for (int i = 0; i < FAN; i++)
        if (fan_log.ids[i] != want[i])
            TEST_FAIL_("%s: position %d: task %d ran, task %d was due", when, i, fan_log.ids[i], want[i]);
}

TEST(a_cleared_taskflow_rebuilt_with_priorities_runs_them_in_order) {
    fan_init();
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("fan");
    fan_build(tf);
    fan_check(ex, tf, "first build");
    ASSERT_OK(weft_taskflow_clear(tf));
    fan_build(tf); /* as many tasks as before */
    fan_check(ex, tf, "rebuilt after clear");
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(a_plain_task_in_a_reused_slot_queues_its_successors_by_priority) {
    fan_init();
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("fan");
    weft_task root = fan_build(tf);
    fan_check(ex, tf, "first build");
    /* A new root in the old one's slot: the task count stays. */
    size_t ix = weft_task_index(root);
    ASSERT_OK(weft_task_erase(root));
    root = weft_placeholder(tf);
    ASSERT_EQ(weft_task_index(root), ix);
    for (int i = 0; i < FAN; i++) ASSERT_OK(weft_precede(root, fan_tasks[i]));
    fan_check(ex, tf, "new root in a reused slot");
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(a_task_whose_priority_is_set_back_to_normal_queues_its_successors_by_priority) {
    fan_init();
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("fan");
    weft_task root = fan_build(tf);
    fan_check(ex, tf, "first build");
    ASSERT_OK(weft_task_set_priority(root, WEFT_PRIORITY_HIGH));
    ASSERT_OK(weft_task_set_priority(root, WEFT_PRIORITY_NORMAL));
    fan_check(ex, tf, "root set HIGH then NORMAL");
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* A taskflow cleared and rebuilt without priorities runs its plain path
 * (no task count of priorities: the runs never look at prio_armed): each task
 * once a run, every task on weft__node_run, the plain job function. */
static bool is_plain_job(weft_task t, void *arg) {
    if (t.node_->job.run != weft__node_run) atomic_fetch_add((atomic_int *)arg, 1);
    return true;
}

TEST(a_cleared_taskflow_rebuilt_without_priorities_runs_plainly) {
    fan_init();
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("fan");
    fan_build(tf);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_clear(tf));
    atomic_int n = 0;
    weft_task root = must_emplace(tf, bump_task, &n);
    for (int i = 0; i < FAN; i++) ASSERT_OK(weft_precede(root, must_emplace(tf, bump_task, &n)));
    for (int r = 1; r <= 3; r++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&n), r * (FAN + 1));
    }
    atomic_int not_plain = 0;
    ASSERT_OK(weft_taskflow_for_each_task(tf, is_plain_job, &not_plain));
    ASSERT_EQ(atomic_load(&not_plain), 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- 5. weft_run_until on an empty taskflow --------------------------------------
 *
 * weft's contract (graph.h): the predicate is asked before every iteration,
 * the first included, an empty taskflow's iterations completing at once; so
 * the predicate runs until it returns true, as for any taskflow.  (Taskflow's
 * run_until returns at once on an empty taskflow without asking it.) */

struct until_count {
    atomic_int calls;
    int limit;
};

static bool until_limit(void *arg) {
    struct until_count *u = arg;
    return atomic_fetch_add(&u->calls, 1) >= u->limit;
}

TEST(run_until_on_an_empty_taskflow_asks_its_predicate_until_it_returns_true) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("empty");
    struct until_count u = {0, 0};
    weft_future *f = NULL;
    ASSERT_OK(weft_run_until(ex, tf, until_limit, &u, &f)); /* true at once */
    ASSERT_OK(weft_future_wait(f));
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 0);
    ASSERT_EQ(atomic_load(&u.calls), 1);
    weft_future_destroy(f);
    u = (struct until_count){0, 5};
    ASSERT_OK(weft_run_until(ex, tf, until_limit, &u, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.iterations, 5);
    ASSERT_EQ(atomic_load(&u.calls), 6);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
