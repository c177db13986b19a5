/* Misuse of the graph API: cycles, NULL arguments, changing a running taskflow,
 * edges between taskflows.  Every error must be reported, never crash, and leave
 * the taskflow as it was. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static weft_task named(weft_taskflow *tf, weft_task_fn fn, void *arg, const char *name) {
    weft_task t = must_emplace(tf, fn, arg);
    ASSERT_OK(weft_task_set_name(t, name));
    return t;
}

static bool always_true(void *arg) { return true; }

/* True when `t` can reach itself along successor edges, i.e. lies on a cycle.
 * Iterative DFS over task indices. */
static bool on_a_cycle(const weft_taskflow *tf, weft_task t) {
    size_t n = weft_taskflow_num_tasks(tf);
    unsigned char *seen = calloc(n ? n : 1, 1);
    size_t cap = 16, top = 0;
    weft_task *stack = malloc(cap * sizeof *stack);
    bool found = false;
    ASSERT_NOT_NULL(seen);
    ASSERT_NOT_NULL(stack);
    for (size_t i = 0; i < weft_task_num_successors(t); i++) {
        if (top == cap) {
            cap *= 2;
            stack = realloc(stack, cap * sizeof *stack);
            ASSERT_NOT_NULL(stack);
        }
        stack[top++] = weft_task_successor(t, i);
    }
    while (top && !found) {
        weft_task u = stack[--top];
        if (same_task(u, t)) { found = true; break; }
        size_t ui = weft_task_index(u);
        if (seen[ui]) continue;
        seen[ui] = 1;
        for (size_t i = 0; i < weft_task_num_successors(u); i++) {
            if (top == cap) {
                cap *= 2;
                stack = realloc(stack, cap * sizeof *stack);
                ASSERT_NOT_NULL(stack);
            }
            stack[top++] = weft_task_successor(u, i);
        }
    }
    free(seen);
    free(stack);
    return found;
}

/* ---- cycles ------------------------------------------------------------------ */

TEST(cycle_is_rejected_naming_a_task_on_it) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_taskflow *tf = make_taskflow("cyclic");
    weft_task a = named(tf, bump, &count, "alpha");
    weft_task b = named(tf, bump, &count, "bravo");
    weft_task c = named(tf, bump, &count, "charlie");
    weft_task d = named(tf, bump, &count, "delta");   /* leads into the cycle */
    weft_task e = named(tf, bump, &count, "echo");    /* hangs off it */
    ASSERT_OK(weft_precede(d, a));
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(b, c));
    ASSERT_OK(weft_precede(c, a));
    ASSERT_OK(weft_precede(c, e));

    weft_future *f = NULL;
    ASSERT_STATUS(weft_run(ex, tf, &f), WEFT_ECYCLE);
    ASSERT_NULL(f);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ECYCLE);
    const char *msg = weft_taskflow_error_message(tf);
    ASSERT_NOT_NULL(msg);
    if (!strstr(msg, "alpha") && !strstr(msg, "bravo") && !strstr(msg, "charlie"))
        TEST_FAIL_("message names no task on the cycle: \"%s\"", msg);
    if (strstr(msg, "delta") || strstr(msg, "echo"))
        TEST_FAIL_("message names a task that is not on the cycle: \"%s\"", msg);

    weft_task on = WEFT_TASK_NULL;
    ASSERT_STATUS(weft_taskflow_validate(tf, &on), WEFT_ECYCLE);
    ASSERT_TRUE(same_task(on, a) || same_task(on, b) || same_task(on, c));
    ASSERT_TRUE(on_a_cycle(tf, on));
    ASSERT_TRUE(strstr(weft_taskflow_error_message(tf), weft_task_name(on)) != NULL);
    ASSERT_STATUS(weft_taskflow_validate(tf, NULL), WEFT_ECYCLE);

    /* Every way of running refuses, and nothing runs. */
    ASSERT_STATUS(weft_run(ex, tf, NULL), WEFT_ECYCLE);
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_STATUS(weft_run_n(ex, tf, 3, &f), WEFT_ECYCLE);
    ASSERT_NULL(f);
    ASSERT_STATUS(weft_run_until(ex, tf, always_true, NULL, &f), WEFT_ECYCLE);
    ASSERT_NULL(f);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&count), 0);

    /* Rebuilt without the cycle, it runs. */
    ASSERT_OK(weft_taskflow_clear(tf));
    a = named(tf, bump, &count, "alpha");
    b = named(tf, bump, &count, "bravo");
    ASSERT_OK(weft_precede(a, b));
    on = WEFT_TASK_NULL;
    ASSERT_OK(weft_taskflow_validate(tf, &on));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(self_loop_is_a_cycle) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow(NULL);
    weft_task x = named(tf, noop, NULL, "first");
    weft_task y = named(tf, noop, NULL, "loopy");
    ASSERT_OK(weft_precede(x, y));
    ASSERT_OK(weft_precede(y, y));
    weft_task on = WEFT_TASK_NULL;
    ASSERT_STATUS(weft_taskflow_validate(tf, &on), WEFT_ECYCLE);
    ASSERT_TRUE(same_task(on, y));
    ASSERT_TRUE(strstr(weft_taskflow_error_message(tf), "loopy") != NULL);
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* A graph built from its sinks back (every edge from a later task to an
 * earlier one, as Taskflow's graph benchmarks build) skips the cycle check:
 * the reverse of emplace order is topological.  Not with a task that
 * precedes itself, nor once one edge goes forward and closes a cycle; and
 * removing that edge brings the skip back. */
TEST(a_graph_built_from_its_sinks_back_runs_and_its_loops_and_cycles_are_still_caught) {
    enum { N = 500 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("backward");
    static atomic_int count;
    static weft_task t[N];
    for (int i = 0; i < N; i++) t[i] = must_emplace(tf, bump, &count);
    for (int i = N - 1; i > 0; i--) { /* t[i] -> t[i-1] and t[i] -> t[i/2]: all backward */
        ASSERT_OK(weft_precede(t[i], t[i - 1]));
        if (i / 2 != i - 1) ASSERT_OK(weft_precede(t[i], t[i / 2]));
    }
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), N);
    /* A self-loop is a backward edge too: caught. */
    ASSERT_OK(weft_precede(t[7], t[7]));
    weft_task on = WEFT_TASK_NULL;
    ASSERT_STATUS(weft_taskflow_validate(tf, &on), WEFT_ECYCLE);
    ASSERT_TRUE(same_task(on, t[7]));
    ASSERT_OK(weft_edge_remove(t[7], t[7]));
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    /* One forward edge closing a cycle (t[3] -> t[400] -> ... -> t[3]): caught. */
    ASSERT_OK(weft_precede(t[3], t[400]));
    ASSERT_STATUS(weft_taskflow_validate(tf, NULL), WEFT_ECYCLE);
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_OK(weft_edge_remove(t[3], t[400]));
    atomic_store(&count, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), N);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(cycle_added_after_a_good_run_is_caught) {
    /* weft_run caches validation; a new edge must invalidate the cache. */
    enum { N = 2000 };
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow(NULL);
    static atomic_int count;
    static weft_task t[N];
    uint64_t rng = test_seed();
    for (int i = 0; i < N; i++) {
        t[i] = must_emplace(tf, bump, &count);
        if (i) ASSERT_OK(weft_precede(t[test_rand(&rng) % (uint64_t)i], t[i]));
        if (i > 1) ASSERT_OK(weft_precede(t[test_rand(&rng) % (uint64_t)i], t[i]));
    }
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&count), N);

    /* Close a long cycle: from the last task back to one of its ancestors. */
    weft_task anc = t[N - 1];
    for (int hops = 0; hops < 5; hops++) {
        /* walk up: find some task whose successor list holds anc */
        for (int i = (int)weft_task_index(anc) - 1; i >= 0; i--) {
            bool found = false;
            for (size_t k = 0; k < weft_task_num_successors(t[i]); k++)
                if (same_task(weft_task_successor(t[i], k), anc)) found = true;
            if (found) { anc = t[i]; break; }
        }
    }
    ASSERT_FALSE(same_task(anc, t[N - 1]));
    ASSERT_OK(weft_precede(t[N - 1], anc));
    weft_task on = WEFT_TASK_NULL;
    ASSERT_STATUS(weft_run(ex, tf, NULL), WEFT_ECYCLE);
    ASSERT_STATUS(weft_taskflow_validate(tf, &on), WEFT_ECYCLE);
    ASSERT_FALSE(weft_task_is_null(on));
    if (!on_a_cycle(tf, on))
        TEST_FAIL_("validate named task #%zu, which is not on a cycle", weft_task_index(on));
    char label[32];
    snprintf(label, sizeof label, "#%zu", weft_task_index(on));
    if (!strstr(weft_taskflow_error_message(tf), label))
        printf("note: message \"%s\" does not name unnamed task %s\n",
               weft_taskflow_error_message(tf), label);
    ASSERT_EQ(atomic_load(&count), N);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- NULL arguments ---------------------------------------------------------- */

static bool visit_any(weft_task t, void *arg) { return true; }
static bool pred_any(void *arg) { return true; }

TEST(null_arguments_give_einval) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("nulls");
    weft_taskflow *other = make_taskflow("other");
    weft_task a = must_emplace(tf, noop, NULL);
    weft_task b = must_emplace(tf, noop, NULL);
    const weft_task null = WEFT_TASK_NULL;
    weft_future *f = NULL;
    weft_run_info info;

    /* executor */
    ASSERT_STATUS(weft_executor_wait_all(NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_executor_workers(NULL), 0);
    ASSERT_EQ(weft_executor_worker_id(NULL), -1);
    weft_executor_destroy(NULL);

    /* taskflow */
    ASSERT_OK(weft_taskflow_destroy(NULL));
    ASSERT_STATUS(weft_taskflow_set_name(NULL, "x"), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_clear(NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_taskflow_num_tasks(NULL), 0);
    ASSERT_STATUS(weft_taskflow_for_each_task(NULL, visit_any, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_for_each_task(tf, NULL, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_validate(NULL, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    ASSERT_NOT_NULL(weft_taskflow_error_message(tf));
    ASSERT_STATUS(weft_taskflow_dump_dot(NULL, stdout), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_dump_dot(tf, NULL), WEFT_EINVAL);

    /* tasks */
    ASSERT_TRUE(weft_task_is_null(weft_emplace(NULL, noop, NULL)));
    ASSERT_TRUE(weft_task_is_null(weft_emplace(tf, NULL, NULL)));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 2);
    ASSERT_TRUE(weft_task_is_null(weft_placeholder(NULL)));
    ASSERT_STATUS(weft_task_set_work(null, noop, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_task_set_name(null, "x"), WEFT_EINVAL);
    ASSERT_STREQ(weft_task_name(null), "");
    ASSERT_STATUS(weft_task_set_data(null, &info), WEFT_EINVAL);
    ASSERT_NULL(weft_task_data(null));
    ASSERT_EQ(weft_task_index(null), SIZE_MAX);
    ASSERT_EQ(weft_task_num_successors(null), 0);
    ASSERT_EQ(weft_task_num_dependents(null), 0);
    ASSERT_TRUE(weft_task_is_null(weft_task_successor(null, 0)));

    /* edges */
    ASSERT_STATUS(weft_precede(null, b), WEFT_EINVAL);
    ASSERT_STATUS(weft_precede(a, null), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed(null, a), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed(b, null), WEFT_EINVAL);
    ASSERT_STATUS(weft_precede_many(null, &b, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_precede_many(a, NULL, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed_many(null, &a, 1), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed_many(b, NULL, 2), WEFT_EINVAL);
    /* A null task inside the array: all or nothing, so no edge is added. */
    weft_task mixed[3] = { b, null, b };
    ASSERT_STATUS(weft_precede_many(a, mixed, 3), WEFT_EINVAL);
    weft_task mixed2[2] = { a, null };
    ASSERT_STATUS(weft_succeed_many(b, mixed2, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_EQ(weft_task_num_successors(a), 0);
    ASSERT_EQ(weft_task_num_dependents(b), 0);

    /* running (a NULL executor is the default one: default_executor_tests) */
    ASSERT_STATUS(weft_run(ex, NULL, &f), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_n(ex, NULL, 1, &f), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_until(ex, NULL, pred_any, NULL, &f), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_until(ex, tf, NULL, NULL, &f), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_and_wait(ex, NULL), WEFT_EINVAL);
    ASSERT_NULL(f);

    /* futures */
    ASSERT_STATUS(weft_future_wait(NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_future_wait_for(NULL, 1000), WEFT_EINVAL);
    ASSERT_FALSE(weft_future_ready(NULL));
    ASSERT_STATUS(weft_future_info(NULL, &info), WEFT_EINVAL);
    ASSERT_STATUS(weft_future_cancel(NULL), WEFT_EINVAL);
    weft_future_destroy(NULL);
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_future_info(f, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);

    /* Nothing above broke the taskflow. */
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(other));
    weft_executor_destroy(ex);
}

/* ---- changing a running taskflow --------------------------------------------- */

struct gate {
    atomic_int started, release, ran;
};

static int gated(weft_ctx *ctx, void *arg) {
    struct gate *g = arg;
    atomic_fetch_add(&g->started, 1);
    wait_flag(&g->release, 1, 10.0);
    atomic_fetch_add(&g->ran, 1);
    return 0;
}

/* Every mutating call on `tf` must fail with WEFT_EBUSY and change nothing. */
static void assert_all_changes_refused(weft_taskflow *tf, weft_task a, weft_task b) {
    size_t tasks = weft_taskflow_num_tasks(tf);
    size_t succ_a = weft_task_num_successors(a), dep_b = weft_task_num_dependents(b);

    weft_task t = weft_emplace(tf, noop, NULL);
    ASSERT_TRUE(weft_task_is_null(t));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EBUSY);
    t = weft_placeholder(tf);
    ASSERT_TRUE(weft_task_is_null(t));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EBUSY);
    ASSERT_STATUS(weft_precede(a, b), WEFT_EBUSY);
    ASSERT_STATUS(weft_succeed(b, a), WEFT_EBUSY);
    ASSERT_STATUS(weft_precede_many(a, &b, 1), WEFT_EBUSY);
    ASSERT_STATUS(weft_succeed_many(b, &a, 1), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_set_name(a, "changed"), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_set_work(b, noop, NULL), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_set_name(tf, "changed"), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_clear(tf), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_destroy(tf), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EBUSY);

    ASSERT_EQ(weft_taskflow_num_tasks(tf), tasks);
    ASSERT_EQ(weft_task_num_successors(a), succ_a);
    ASSERT_EQ(weft_task_num_dependents(b), dep_b);
    ASSERT_STREQ(weft_task_name(a), "first");
    ASSERT_STREQ(weft_taskflow_name(tf), "busy");

    /* User data may change while running. */
    int x;
    ASSERT_OK(weft_task_set_data(a, &x));
    ASSERT_TRUE(weft_task_data(a) == (void *)&x);
    ASSERT_OK(weft_task_set_data(a, NULL));
}

TEST(changing_a_running_graph_gives_ebusy) {
    weft_executor *ex = make_executor(2);
    struct gate g = { 0 };
    atomic_int after = 0;
    weft_taskflow *tf = make_taskflow("busy");
    weft_task a = named(tf, gated, &g, "first");
    weft_task b = named(tf, bump, &after, "second");
    ASSERT_OK(weft_precede(a, b));

    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.started, 1, 5.0));
    assert_all_changes_refused(tf, a, b);

    atomic_store(&g.release, 1);
    ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&g.ran), 1);
    ASSERT_EQ(atomic_load(&after), 1);

    /* Unchanged, and runs as before. */
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 2);
    ASSERT_EQ(weft_task_num_successors(a), 1);
    ASSERT_EQ(weft_task_num_dependents(b), 1);
    ASSERT_STREQ(weft_task_name(b), "second");
    atomic_store(&g.release, 1);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&g.ran), 2);
    ASSERT_EQ(atomic_load(&after), 2);

    /* Now changes are accepted again. */
    ASSERT_OK(weft_task_set_name(a, "renamed"));
    ASSERT_FALSE(weft_task_is_null(weft_placeholder(tf)));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(changing_a_queued_graph_gives_ebusy) {
    /* One worker, blocked in another taskflow's task: the second run is queued,
     * not started, and its taskflow must already be locked. */
    weft_executor *ex = make_executor(1);
    struct gate g = { 0 };
    weft_taskflow *blocker = make_taskflow("blocker");
    must_emplace(blocker, gated, &g);
    atomic_int after = 0;
    weft_taskflow *tf = make_taskflow("busy");
    weft_task a = named(tf, bump, &after, "first");
    weft_task b = named(tf, bump, &after, "second");
    ASSERT_OK(weft_precede(a, b));

    weft_future *fb = NULL, *f = NULL;
    ASSERT_OK(weft_run(ex, blocker, &fb));
    ASSERT_TRUE(wait_flag(&g.started, 1, 5.0));
    ASSERT_OK(weft_run(ex, tf, &f));
    assert_all_changes_refused(tf, a, b);
    ASSERT_EQ(atomic_load(&after), 0);

    atomic_store(&g.release, 1);
    ASSERT_OK(weft_future_wait_for(fb, 10 * SEC));
    ASSERT_OK(weft_future_wait_for(f, 10 * SEC));
    ASSERT_EQ(atomic_load(&after), 2);
    weft_future_destroy(fb);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(blocker));
    weft_executor_destroy(ex);
}

/* ---- edges between taskflows ------------------------------------------------- */

TEST(edges_across_taskflows_give_einval) {
    weft_taskflow *t1 = make_taskflow("one"), *t2 = make_taskflow("two");
    weft_task a = must_emplace(t1, noop, NULL);
    weft_task a2 = must_emplace(t1, noop, NULL);
    weft_task b = must_emplace(t2, noop, NULL);
    ASSERT_STATUS(weft_precede(a, b), WEFT_EINVAL);
    ASSERT_STATUS(weft_precede(b, a), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed(a, b), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed(b, a), WEFT_EINVAL);
    weft_task mixed[2] = { a2, b };
    ASSERT_STATUS(weft_precede_many(a, mixed, 2), WEFT_EINVAL);
    ASSERT_STATUS(weft_succeed_many(a, mixed, 2), WEFT_EINVAL);
    /* All or nothing: a2 got no edge either. */
    ASSERT_EQ(weft_task_num_successors(a), 0);
    ASSERT_EQ(weft_task_num_dependents(a), 0);
    ASSERT_EQ(weft_task_num_successors(a2), 0);
    ASSERT_EQ(weft_task_num_dependents(a2), 0);
    ASSERT_EQ(weft_task_num_successors(b), 0);
    ASSERT_EQ(weft_task_num_dependents(b), 0);

    weft_executor *ex = make_executor(1);
    ASSERT_OK(weft_run_and_wait(ex, t1));
    ASSERT_OK(weft_run_and_wait(ex, t2));
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(t1));
    ASSERT_OK(weft_taskflow_destroy(t2));
}

/* ---- waits that could never end ------------------------------------------------ */

struct self_wait {
    weft_executor *ex;
    weft_taskflow *own; /* the taskflow to start a run of and wait on */
    weft_status got;
    _Atomic int calls;
};

static int wait_on_a_run_of(weft_ctx *ctx, void *arg) {
    struct self_wait *s = arg;
    if (atomic_fetch_add(&s->calls, 1) != 0) return 0; /* the queued run itself */
    weft_future *f;
    ASSERT_OK(weft_run(s->ex, s->own, &f));
    s->got = weft_future_wait(f);
    weft_future_destroy(f);
    return 0;
}

TEST(task_waiting_on_a_run_of_its_own_taskflow_gets_edeadlk) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = weft_taskflow_create("self", NULL);
    struct self_wait s = {ex, tf, WEFT_OK, 0};
    must_emplace(tf, wait_on_a_run_of, &s);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(s.got, WEFT_EDEADLK);
    weft_executor_wait_all(ex); /* the run queued by the task still runs, later */
    ASSERT_EQ(atomic_load(&s.calls), 2);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* A (taskflow a) waits on a run of b; with one worker, that wait runs b's task
 * here, which waits on a run of a: A is still on this worker's stack. */
TEST(nested_wait_back_on_an_enclosing_taskflow_gets_edeadlk) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *a = weft_taskflow_create("a", NULL), *b = weft_taskflow_create("b", NULL);
    struct self_wait inner = {ex, a, WEFT_OK, 0}, outer = {ex, b, WEFT_OK, 0};
    must_emplace(a, wait_on_a_run_of, &outer);
    must_emplace(b, wait_on_a_run_of, &inner);
    ASSERT_OK(weft_run_and_wait(ex, a));
    ASSERT_EQ(outer.got, WEFT_OK); /* b's run finished: its task got EDEADLK and returned */
    ASSERT_EQ(inner.got, WEFT_EDEADLK);
    weft_executor_wait_all(ex);
    weft_taskflow_destroy(a);
    weft_taskflow_destroy(b);
    weft_executor_destroy(ex);
}

/* ---- error channels (docs/errors.md) -------------------------------------------- */

/* R2: weft_taskflow_last_error is the status of the most recent builder call;
 * a success resets it (it used to stay at the last failure forever). */
TEST(taskflow_last_error_is_reset_by_the_next_successful_builder_call) {
    weft_taskflow *tf = make_taskflow("resets");
    weft_task a = must_emplace(tf, noop, NULL);
    ASSERT_TRUE(weft_task_is_null(weft_emplace(tf, NULL, NULL)));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "NULL") != NULL);
    ASSERT_TRUE(strstr(weft_taskflow_error_message(tf), "NULL") != NULL);
    weft_task b = must_emplace(tf, noop, NULL); /* success: reset */
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_OK);
    ASSERT_STREQ(weft_taskflow_error_message(tf), "");
    /* The thread's message is not cleared by a success (errno-like). */
    ASSERT_TRUE(strstr(weft_last_error_message(), "NULL") != NULL);
    /* Every kind of builder call resets it. */
    ASSERT_STATUS(weft_precede(a, WEFT_TASK_NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_OK);
    ASSERT_OK(weft_precede(b, a)); /* a cycle: found by validate, not by precede */
    ASSERT_STATUS(weft_taskflow_validate(tf, NULL), WEFT_ECYCLE);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ECYCLE);
    ASSERT_OK(weft_task_set_name(a, "a"));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_OK);
    ASSERT_STATUS(weft_taskflow_validate(tf, NULL), WEFT_ECYCLE);
    ASSERT_OK(weft_taskflow_clear(tf));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_OK);
    ASSERT_OK(weft_taskflow_validate(tf, NULL));
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_OK);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* R3: one message per thread.  Two threads fail differently at the same time
 * (a cycle; a missing parameter) and each reads its own message afterwards. */
struct own_message {
    pthread_barrier_t *both_failed;
    bool cycle; /* else a parameter */
    char seen[256];
};

static void *fail_and_read(void *arg) {
    struct own_message *m = arg;
    weft_taskflow *tf = NULL;
    weft_params *p = NULL;
    if (m->cycle) {
        tf = make_taskflow("loop");
        weft_task a = must_emplace(tf, noop, NULL), b = must_emplace(tf, noop, NULL);
        ASSERT_OK(weft_task_set_name(a, "ay"));
        ASSERT_OK(weft_task_set_name(b, "bee"));
        ASSERT_OK(weft_precede(a, b));
        ASSERT_OK(weft_precede(b, a));
        ASSERT_STATUS(weft_taskflow_validate(tf, NULL), WEFT_ECYCLE);
    } else {
        p = weft_params_create(NULL);
        ASSERT_NOT_NULL(p);
        int64_t v;
        ASSERT_STATUS(weft_params_get_int(p, "width", &v), WEFT_ENOENT);
    }
    pthread_barrier_wait(m->both_failed); /* the other thread has failed too */
    snprintf(m->seen, sizeof m->seen, "%s", weft_last_error_message());
    if (tf) ASSERT_OK(weft_taskflow_destroy(tf));
    weft_params_destroy(p);
    return NULL;
}

TEST(each_thread_reads_the_message_of_its_own_last_failure) {
    pthread_barrier_t both;
    ASSERT_EQ(pthread_barrier_init(&both, NULL, 2), 0);
    struct own_message m[2] = {{&both, true, ""}, {&both, false, ""}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_create(&t[i], NULL, fail_and_read, &m[i]), 0);
    for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&both);
    if (!strstr(m[0].seen, "cycle") || !strstr(m[0].seen, "bee"))
        TEST_FAIL_("the cycle's thread read \"%s\"", m[0].seen);
    ASSERT_STREQ(m[1].seen, "parameter 'width' is missing (want int)");
}
