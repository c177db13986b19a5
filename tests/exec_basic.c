/* Executor basics: creation and worker counts, worker ids, destroy and wait_all.
 *
 * Every test builds its own executor and taskflows and frees them again, so a leak
 * checker run over any single test stays quiet. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static int sleep_and_bump(weft_ctx *ctx, void *arg) {
    sleep_us(200);
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

static unsigned cpus_in_affinity_mask(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    return (unsigned)CPU_COUNT(&set);
}

/* ---- creation ---------------------------------------------------------------- */

TEST(executor_create_defaults_and_worker_count) {
    unsetenv("WEFT_WORKERS");
    ASSERT_EQ(weft_executor_workers(NULL), 0);

    /* NULL config: one worker per CPU the process may run on. */
    weft_status err = WEFT_EINVAL;
    weft_executor *ex = weft_executor_create(NULL, &err);
    ASSERT_NOT_NULL(ex);
    unsigned cpus = cpus_in_affinity_mask();
    ASSERT_GE(weft_executor_workers(ex), 1);
    if (cpus) ASSERT_EQ(weft_executor_workers(ex), cpus);
    weft_executor_destroy(ex);

    /* err may be NULL; a zeroed config is the same as NULL. */
    ex = weft_executor_create(&(weft_executor_config){ 0 }, NULL);
    ASSERT_NOT_NULL(ex);
    if (cpus) ASSERT_EQ(weft_executor_workers(ex), cpus);
    weft_executor_destroy(ex);

    ex = weft_executor_create(&(weft_executor_config){ .workers = 3 }, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_EQ(weft_executor_workers(ex), 3);
    weft_executor_destroy(ex);

    /* WEFT_WORKERS fills in for workers == 0, and only then. */
    ASSERT_EQ(setenv("WEFT_WORKERS", "5", 1), 0);
    ex = weft_executor_create(NULL, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_EQ(weft_executor_workers(ex), 5);
    weft_executor_destroy(ex);
    ex = weft_executor_create(&(weft_executor_config){ .workers = 3 }, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_EQ(weft_executor_workers(ex), 3);
    weft_executor_destroy(ex);

    /* Tuning fields other than workers are accepted. */
    ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .steal_rounds = 1,
                                                       .yield_rounds = 1, .deque_capacity = 3,
                                                       .stack_size = 1u << 20 },
                              &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_EQ(weft_executor_workers(ex), 2);
    weft_executor_destroy(ex);

    /* Bad values of WEFT_WORKERS warn and fall back (exec_env.c). */
    /* Too many workers in the config. */
    err = WEFT_OK;
    ex = weft_executor_create(&(weft_executor_config){ .workers = 4097 }, &err);
    ASSERT_NULL(ex);
    ASSERT_STATUS(err, WEFT_EINVAL);
}

/* A deque capacity beyond 2^30 slots is WEFT_EINVAL with a message.  Before,
 * 2^61 overflowed the ring's byte count (a tiny block, then a write of 2^61
 * slots: SIGSEGV), 2^62 + 1 looped for ever rounding up to a power of two, and
 * 2^63 wrapped negative to 16 slots. */
TEST(executor_refuses_a_deque_capacity_beyond_2_30_and_a_stack_the_system_refuses) {
    size_t bad[] = { ((size_t)1 << 30) + 1, (size_t)1 << 61, ((size_t)1 << 62) + 1, (size_t)1 << 63, SIZE_MAX };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        weft_status err = WEFT_OK;
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .deque_capacity = bad[i] }, &err);
        ASSERT_NULL(ex);
        ASSERT_STATUS(err, WEFT_EINVAL);
        ASSERT_TRUE(strstr(weft_last_error_message(), "deque_capacity") != NULL);
    }
    weft_status err = WEFT_OK;
    /* A stack size the system refuses is WEFT_EINVAL (it was WEFT_ESYS). */
    ASSERT_NULL(weft_executor_create(&(weft_executor_config){ .workers = 1, .stack_size = SIZE_MAX }, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .deque_capacity = 100000 }, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_OK(weft_run_root(ex, noop, NULL));
    weft_executor_destroy(ex);
}

/* ---- affinity ---------------------------------------------------------------- */

struct bind_check {
    int workers;
    atomic_int arrived;
    int cpu_of[8];   /* the one CPU worker i is bound to, or -1 if unbound */
    atomic_int bad;
};

/* One task per worker: each waits (bounded) for the others to arrive, so the
 * tasks cannot all run on one worker, then records the worker's CPU mask. */
static int record_binding(weft_ctx *ctx, void *arg) {
    struct bind_check *c = arg;
    atomic_fetch_add(&c->arrived, 1);
    for (int i = 0; i < 20000 && atomic_load(&c->arrived) < c->workers; i++) sleep_us(100);
    int id = weft_ctx_worker_id(ctx);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (id < 0 || id >= 8 || sched_getaffinity(0, sizeof set, &set) != 0) {
        atomic_fetch_add(&c->bad, 1);
        return 0;
    }
    int only = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &set)) only = only == -1 ? cpu : -2;
    c->cpu_of[id] = only < 0 ? -1 : only;
    return 0;
}

static void check_bindings(weft_executor *ex, int workers, struct bind_check *c) {
    *c = (struct bind_check){ .workers = workers };
    for (int i = 0; i < 8; i++) c->cpu_of[i] = -3; /* not seen */
    weft_taskflow *tf = make_taskflow("bind");
    for (int i = 0; i < workers; i++) must_emplace(tf, record_binding, c);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_EQ(atomic_load(&c->bad), 0);
}

TEST(affinity_cpus_binds_worker_i_to_the_ith_cpu_of_the_mask) {
    unsetenv("WEFT_AFFINITY");
    unsigned cpus = cpus_in_affinity_mask();
    if (cpus == 0) SKIP("the affinity mask cannot be read");
    cpu_set_t mask;
    CPU_ZERO(&mask);
    ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
    int nth[8], k = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && k < 8; cpu++)
        if (CPU_ISSET(cpu, &mask)) nth[k++] = cpu;

    enum { W = 2 };
    weft_status err;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = W, .affinity = WEFT_AFFINITY_CPUS }, &err);
    ASSERT_NOT_NULL(ex);
    struct bind_check c;
    check_bindings(ex, W, &c);
    for (int i = 0; i < W; i++) {
        if (c.cpu_of[i] == -3) TEST_FAIL_("worker %d ran none of the %d tasks", i, W);
        if (c.cpu_of[i] != nth[i % k])
            TEST_FAIL_("worker %d is bound to CPU %d, want CPU %d", i, c.cpu_of[i], nth[i % k]);
    }
    weft_executor_destroy(ex);

    /* WEFT_AFFINITY=cpus does the same when the config leaves it at the default;
     * an explicit NONE in the config wins over it. */
    ASSERT_EQ(setenv("WEFT_AFFINITY", "cpus", 1), 0);
    ex = weft_executor_create(&(weft_executor_config){ .workers = W }, &err);
    ASSERT_NOT_NULL(ex);
    check_bindings(ex, W, &c);
    for (int i = 0; i < W; i++) ASSERT_EQ(c.cpu_of[i], nth[i % k]);
    weft_executor_destroy(ex);
    if (cpus > 1) {
        ex = weft_executor_create(&(weft_executor_config){ .workers = W, .affinity = WEFT_AFFINITY_NONE },
                                  &err);
        ASSERT_NOT_NULL(ex);
        check_bindings(ex, W, &c);
        for (int i = 0; i < W; i++) ASSERT_EQ(c.cpu_of[i], -1); /* the whole mask */
        weft_executor_destroy(ex);
    }
    unsetenv("WEFT_AFFINITY");
}

/* A bad value in the config is the caller's error; one in the environment
 * only warns (exec_env.c). */
TEST(affinity_bad_config_values_are_refused) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .affinity = (weft_affinity)7 }, &err);
    ASSERT_NULL(ex);
    ASSERT_STATUS(err, WEFT_EINVAL);
}

/* An out-of-range field is named in the message, with its value (weft/core.h:
 * a failure says which parameter is wrong).  The message used to list every
 * limit and leave the caller to guess which field broke one (steal_attempts
 * was not among them). */
TEST(an_out_of_range_config_field_is_named_in_the_message_with_its_value) {
    const struct { weft_executor_config c; const char *want; } cases[] = {
        {{ .workers = 4097 }, "config->workers is 4097, more than 4096"},
        {{ .steal_attempts = { 0, 70000, 0 } }, "config->steal_attempts[1] is 70000"},
        {{ .yield_rounds = WEFT_SEARCH_ROUNDS_MAX + 1 }, "config->yield_rounds"},
        {{ .steal_batch = 300 }, "config->steal_batch is 300, more than 256"},
        {{ .local_queue_capacity = ((size_t)1 << 30) + 1 }, "config->local_queue_capacity"},
        {{ .fork_join_frames = WEFT_FORK_JOIN_FRAMES_MAX + 1 }, "config->fork_join_frames is 16777217, more than 16777216"},
        {{ .affinity = (weft_affinity)-1 }, "config->affinity is -1, not a weft_affinity"},
        {{ .workers = 1, .stack_size = 1 }, "config->stack_size 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        weft_status err = WEFT_OK;
        ASSERT_NULL(weft_executor_create(&cases[i].c, &err));
        ASSERT_STATUS(err, WEFT_EINVAL);
        if (!strstr(weft_last_error_message(), cases[i].want))
            TEST_FAIL_("case %zu: \"%s\" lacks \"%s\"", i, weft_last_error_message(), cases[i].want);
    }
}

/* A config part that a layer refuses (config->sched, config->placement) is
 * named in the message, not "its sched, placement or observer part failed";
 * a create that succeeds leaves the thread's last message alone. */
static void refused_saying(const weft_executor_config *c, const char *says) {
    weft_status err = WEFT_OK;
    ASSERT_NULL(weft_executor_create(c, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    if (!strstr(weft_last_error_message(), says))
        TEST_FAIL_("message \"%s\" does not name %s", weft_last_error_message(), says);
}

TEST(a_refused_sched_or_placement_config_is_named_in_the_message) {
    refused_saying(&(weft_executor_config){ .sched = &(weft_sched_config){ .kind = (weft_sched_kind)99 } },
                   "config->sched->kind 99");
    refused_saying(&(weft_executor_config){ .sched = &(weft_sched_config){ .kind = WEFT_SCHED_CUSTOM } },
                   "policy is NULL");
    refused_saying(&(weft_executor_config){ .placement = &(weft_placement_config){ .strategy = (weft_placement)42 } },
                   "config->placement->strategy 42");
    unsigned nodes[1] = { 4000 };
    refused_saying(&(weft_executor_config){ .placement = &(weft_placement_config){
                       .strategy = WEFT_PLACE_COMPACT, .numa_nodes = nodes, .numa_node_count = 1 } },
                   "placement");
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_TRUE(strstr(weft_last_error_message(), "placement") != NULL); /* kept from before */
    weft_executor_destroy(ex);
}

/* ---- worker ids -------------------------------------------------------------- */

struct id_check {
    weft_executor *ex, *other;
    int workers;
    atomic_int bad;
    atomic_int bad_ctx_id, bad_ex_id, bad_other_id;
    atomic_uint seen; /* bit per worker id seen */
};

static int record_worker_id(weft_ctx *ctx, void *arg) {
    struct id_check *c = arg;
    int a = weft_ctx_worker_id(ctx);
    int b = weft_executor_worker_id(c->ex);
    int o = weft_executor_worker_id(c->other);
    if (a != b || a < 0 || a >= c->workers || o != -1 || weft_ctx_executor(ctx) != c->ex) {
        atomic_store(&c->bad_ctx_id, a);
        atomic_store(&c->bad_ex_id, b);
        atomic_store(&c->bad_other_id, o);
        atomic_fetch_add(&c->bad, 1);
    }
    if (a >= 0 && a < 32) atomic_fetch_or(&c->seen, 1u << a);
    sleep_us(20); /* long enough that the other workers pick up some tasks */
    return 0;
}

TEST(worker_id_is_minus_one_outside_and_in_range_inside_tasks) {
    weft_executor *ex = make_executor(4);
    weft_executor *other = make_executor(1);
    ASSERT_EQ(weft_executor_worker_id(ex), -1);
    ASSERT_EQ(weft_executor_worker_id(other), -1);

    struct id_check c = { .ex = ex, .other = other, .workers = 4 };
    weft_taskflow *tf = make_taskflow("ids");
    for (int i = 0; i < 400; i++) must_emplace(tf, record_worker_id, &c);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    if (atomic_load(&c.bad))
        TEST_FAIL_("%d tasks saw inconsistent ids: ctx %d, executor %d, other executor %d",
                   atomic_load(&c.bad), atomic_load(&c.bad_ctx_id), atomic_load(&c.bad_ex_id),
                   atomic_load(&c.bad_other_id));
    ASSERT_NE(atomic_load(&c.seen), 0);
    ASSERT_EQ(weft_executor_worker_id(ex), -1);

    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    weft_executor_destroy(other);
}

/* ---- destroy and wait_all ---------------------------------------------------- */

TEST(executor_destroy_waits_for_pending_runs) {
    enum { FLOWS = 8, TASKS = 10, RUNS = 3 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf[FLOWS];
    atomic_int done = 0;
    for (int i = 0; i < FLOWS; i++) {
        tf[i] = make_taskflow(NULL);
        weft_task prev = WEFT_TASK_NULL;
        for (int k = 0; k < TASKS; k++) {
            weft_task t = must_emplace(tf[i], sleep_and_bump, &done);
            if (k % 2 && !weft_task_is_null(prev)) ASSERT_OK(weft_precede(prev, t));
            prev = t;
        }
    }
    /* One run keeps its future: it must stay valid after the executor is gone. */
    weft_future *kept = NULL;
    for (int r = 0; r < RUNS; r++)
        for (int i = 0; i < FLOWS; i++)
            ASSERT_OK(weft_run(ex, tf[i], (r == RUNS - 1 && i == 0) ? &kept : NULL));
    ASSERT_NOT_NULL(kept);
    weft_executor_destroy(ex);

    ASSERT_EQ(atomic_load(&done), FLOWS * TASKS * RUNS);
    ASSERT_TRUE(weft_future_ready(kept));
    ASSERT_OK(weft_future_status(kept));
    weft_future_destroy(kept);
    for (int i = 0; i < FLOWS; i++) ASSERT_OK(weft_taskflow_destroy(tf[i]));
}

struct deadlock_probe {
    atomic_int status;
    atomic_int ran;
};

static int call_wait_all(weft_ctx *ctx, void *arg) {
    struct deadlock_probe *p = arg;
    atomic_store(&p->status, (int)weft_executor_wait_all(weft_ctx_executor(ctx)));
    atomic_store(&p->ran, 1);
    return 0;
}

TEST(wait_all_from_a_task_returns_edeadlk) {
    ASSERT_STATUS(weft_executor_wait_all(NULL), WEFT_EINVAL);
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("deadlock");
    struct deadlock_probe p = { .status = 12345 };
    must_emplace(tf, call_wait_all, &p);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_wait_for(f, 10 * SEC), WEFT_OK);
    ASSERT_EQ(atomic_load(&p.ran), 1);
    ASSERT_STATUS(atomic_load(&p.status), WEFT_EDEADLK);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(wait_all_from_outside_waits_for_detached_runs) {
    enum { FLOWS = 6, TASKS = 12 };
    weft_executor *ex = make_executor(2);
    /* Nothing submitted yet: returns at once. */
    ASSERT_OK(weft_executor_wait_all(ex));

    weft_taskflow *tf[FLOWS];
    atomic_int done = 0;
    for (int i = 0; i < FLOWS; i++) {
        tf[i] = make_taskflow(NULL);
        for (int k = 0; k < TASKS; k++) must_emplace(tf[i], sleep_and_bump, &done);
    }
    for (int round = 1; round <= 3; round++) {
        for (int i = 0; i < FLOWS; i++) ASSERT_OK(weft_run(ex, tf[i], NULL));
        ASSERT_OK(weft_run_n(ex, tf[0], 2, NULL));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&done), round * (FLOWS + 2) * TASKS);
        /* Every run has ended, so the taskflows may be changed again. */
        weft_task t = weft_placeholder(tf[1]);
        ASSERT_FALSE(weft_task_is_null(t));
    }
    for (int i = 0; i < FLOWS; i++) ASSERT_OK(weft_taskflow_destroy(tf[i]));
    weft_executor_destroy(ex);
}

struct self_destroy {
    atomic_int ran;
};

static int destroy_own_executor(weft_ctx *ctx, void *arg) {
    struct self_destroy *s = arg;
    weft_executor_destroy(weft_ctx_executor(ctx)); /* documented: does nothing here */
    atomic_store(&s->ran, 1);
    return 0;
}

TEST(executor_destroy_from_its_own_worker_does_nothing) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    struct self_destroy s = { 0 };
    must_emplace(tf, destroy_own_executor, &s);
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
    ASSERT_EQ(atomic_load(&s.ran), 1);
    weft_future_destroy(f);

    /* The executor still works. */
    atomic_int n = 0;
    weft_taskflow *tf2 = make_taskflow(NULL);
    for (int i = 0; i < 10; i++) must_emplace(tf2, bump, &n);
    ASSERT_OK(weft_run_and_wait(ex, tf2));
    ASSERT_EQ(atomic_load(&n), 10);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(tf2));
    weft_executor_destroy(ex);
}

/* A run submitted from a task while the executor is being destroyed either runs
 * before destroy returns or is refused with WEFT_ESHUTDOWN: never lost. */
struct late_submit {
    weft_taskflow *late;
    weft_future *late_future;
    atomic_int status;
    atomic_int late_ran;
};

static int submit_late(weft_ctx *ctx, void *arg) {
    struct late_submit *s = arg;
    sleep_us(50000); /* let the main thread get into weft_executor_destroy */
    weft_future *f = NULL;
    weft_status st = weft_run(weft_ctx_executor(ctx), s->late, &f);
    s->late_future = f;
    atomic_store(&s->status, (int)st);
    return 0;
}

static int mark_late(weft_ctx *ctx, void *arg) {
    atomic_store(&((struct late_submit *)arg)->late_ran, 1);
    return 0;
}

TEST(run_submitted_during_destroy_runs_or_gives_eshutdown) {
    weft_executor *ex = make_executor(2);
    struct late_submit s = { .status = 12345 };
    weft_taskflow *first = make_taskflow("first");
    s.late = make_taskflow("late");
    must_emplace(first, submit_late, &s);
    must_emplace(s.late, mark_late, &s);
    ASSERT_OK(weft_run(ex, first, NULL));
    weft_executor_destroy(ex);

    int st = atomic_load(&s.status);
    if (st == WEFT_OK) {
        ASSERT_NOT_NULL(s.late_future);
        ASSERT_EQ(atomic_load(&s.late_ran), 1);
        ASSERT_TRUE(weft_future_ready(s.late_future));
        ASSERT_OK(weft_future_status(s.late_future));
    } else {
        ASSERT_STATUS(st, WEFT_ESHUTDOWN);
        ASSERT_EQ(atomic_load(&s.late_ran), 0);
    }
    weft_future_destroy(s.late_future);
    ASSERT_OK(weft_taskflow_destroy(first));
    ASSERT_OK(weft_taskflow_destroy(s.late));
}

/* ---- status table and version ------------------------------------------------- */

TEST(strerror_and_errname_cover_every_code) {
#define CHECK_CODE(name, value, text)                                                   \
    ASSERT_STREQ(weft_errname(value), #name);                                           \
    ASSERT_STREQ(weft_strerror(value), text);
    WEFT_ERROR_TABLE(CHECK_CODE)
#undef CHECK_CODE
    ASSERT_STREQ(weft_strerror(-9999), "unknown status");
    ASSERT_STREQ(weft_errname(-9999), "WEFT_E?");
    ASSERT_STREQ(weft_errname(17), "WEFT_E?");
}

TEST(version_matches_the_header) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
             WEFT_VERSION_PATCH);
    ASSERT_STREQ(weft_version(), want);
    ASSERT_EQ(weft_version_number(), WEFT_VERSION);
}

/* A timeout too large for now + timeout to fit in 64 bits never elapses: the
 * wait returns when the run ends, from outside and from inside a task. */
static int nap_20ms(weft_ctx *ctx, void *arg) {
    sleep_us(20000);
    return 0;
}

struct huge_wait {
    weft_taskflow *inner;
    atomic_int status;
};

static int wait_inner_huge(weft_ctx *ctx, void *arg) {
    struct huge_wait *h = arg;
    weft_future *f;
    weft_status st = weft_run(weft_ctx_executor(ctx), h->inner, &f);
    if (st == WEFT_OK) {
        st = weft_future_wait_for(f, UINT64_MAX - 3);
        weft_future_destroy(f);
    }
    atomic_store(&h->status, (int)st);
    return 0;
}

TEST(wait_for_with_a_huge_timeout_waits_for_the_run) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("nap");
    must_emplace(tf, nap_20ms, NULL);
    const uint64_t huge[] = { UINT64_MAX, UINT64_MAX - 1, UINT64_MAX / 2 };
    for (size_t i = 0; i < 3; i++) {
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_future_wait_for(f, huge[i]));
        ASSERT_TRUE(weft_future_ready(f));
        weft_future_destroy(f);
    }
    struct huge_wait h = { .inner = tf, .status = 12345 };
    weft_taskflow *outer = make_taskflow("outer");
    must_emplace(outer, wait_inner_huge, &h);
    ASSERT_OK(weft_run_and_wait(ex, outer));
    ASSERT_STATUS(atomic_load(&h.status), WEFT_OK);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
