/* Priorities on graph tasks (weft_task_set_priority) and on whole runs
 * (weft_run_with_priority): exact order under one worker, a CRITICAL task
 * overtaking queued LOW ones, priorities through erase, re-add and
 * compositions, with semaphores and every task kind, and many workers. */
#include "sched_util.h"

#include "weft/flow.h"

enum { P_LOW = WEFT_PRIORITY_LOW, P_NORM = WEFT_PRIORITY_NORMAL, P_HIGH = WEFT_PRIORITY_HIGH, P_CRIT = WEFT_PRIORITY_CRITICAL };

static const int table[] = {P_LOW,  P_NORM, P_HIGH, P_CRIT, P_LOW,  P_HIGH, P_NORM, P_CRIT, P_LOW, P_LOW,
                            P_CRIT, P_NORM, P_HIGH, P_LOW,  P_CRIT, P_NORM, P_HIGH, P_HIGH, P_LOW, P_CRIT};
enum { NT = sizeof table / sizeof table[0] };

/* By priority, high first, then by position (FIFO among equals). */
static void expected_order(const int *prio, int n, int *out) {
    int k = 0;
    for (int p = P_CRIT; p >= P_LOW; p--)
        for (int i = 0; i < n; i++)
            if (prio[i] == p) out[k++] = i;
}

static weft_task add_logged(weft_taskflow *tf, logged *a, order_log *log, int id, int prio) {
    *a = (logged){log, id};
    weft_task t = weft_emplace(tf, log_task, a);
    ASSERT_FALSE(weft_task_is_null(t));
    ASSERT_OK(weft_task_set_priority(t, (weft_priority)prio));
    return t;
}

/* Runs tf once on a new executor of one worker and checks the log against want. */
static void run_one_worker(weft_taskflow *tf, order_log *log, const int *want, int n) {
    weft_executor *ex = make_executor(1);
    atomic_store(&log->n, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    assert_order(log, want, n);
    weft_executor_destroy(ex);
}

TEST(one_worker_starts_a_graphs_sources_in_priority_order) {
    static order_log log;
    static logged a[NT];
    weft_taskflow *tf = weft_taskflow_create("sources", NULL);
    for (int i = 0; i < NT; i++) add_logged(tf, &a[i], &log, i, table[i]);
    int want[NT];
    expected_order(table, NT, want);
    run_one_worker(tf, &log, want, NT);
    run_one_worker(tf, &log, want, NT); /* and again: the marks are back at rest */
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* A root readying ns logged tasks of priorities succ[0..ns), run `times`
 * times on one worker, each run checked against the priority order. */
static void run_fan(const int *succ, int ns, logged *a, order_log *log, int times) {
    weft_taskflow *tf = weft_taskflow_create("fan", NULL);
    weft_task root = weft_placeholder(tf);
    for (int i = 0; i < ns; i++) ASSERT_OK(weft_precede(root, add_logged(tf, &a[i], log, i, succ[i])));
    int *want = malloc(sizeof *want * (size_t)ns);
    ASSERT_NOT_NULL(want);
    expected_order(succ, ns, want);
    for (int k = 0; k < times; k++) run_one_worker(tf, log, want, ns);
    free(want);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* The successors one task readies are queued together.  (A default-priority
 * successor readied first runs first: the task hands it straight on.) */
TEST(one_worker_starts_the_successors_of_a_task_in_priority_order) {
    static const int succ[] = {P_HIGH, P_LOW, P_CRIT, P_LOW, P_HIGH, P_CRIT, P_NORM, P_HIGH, P_LOW, P_CRIT};
    enum { NS = sizeof succ / sizeof succ[0] };
    static order_log log;
    static logged a[NS];
    run_fan(succ, NS, a, &log, 1);
}

/* A fan of 150: all queued as they became ready, so one worker starts them
 * in exact priority order.  Before, they waited on the deque and the first to
 * run queued only the 64 on top of it with itself; the rest were queued later,
 * behind HIGH and CRITICAL tasks of that first batch already run. */
TEST(one_worker_starts_a_wide_fan_of_successors_in_priority_order) {
    enum { NS = 150 };
    static order_log log;
    static logged a[NS];
    static int succ[NS];
    atomic_store(&log.n, 0);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < NS; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        static const int levels[] = {P_LOW, P_HIGH, P_CRIT};
        succ[i] = levels[rng % 3];
    }
    run_fan(succ, NS, a, &log, 2); /* twice: the wrappers are back at rest */
}

/* Sources: four LOW tasks and a default one, p, whose successor c is CRITICAL.
 * When c becomes ready the LOW tasks are queued; the worker runs c next. */
TEST(a_critical_task_ready_while_low_ones_are_queued_runs_next) {
    static order_log log;
    static logged a[6];
    weft_taskflow *tf = weft_taskflow_create("overtake", NULL);
    for (int i = 0; i < 4; i++) add_logged(tf, &a[i], &log, i, P_LOW);
    weft_task p = add_logged(tf, &a[4], &log, 4, P_NORM);
    weft_task c = add_logged(tf, &a[5], &log, 5, P_CRIT);
    ASSERT_OK(weft_precede(p, c));
    run_one_worker(tf, &log, (int[]){4, 5, 0, 1, 2, 3}, 6);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* The same with a second worker held busy the whole time, the graph submitted
 * from outside: the free worker still takes c before any LOW task. */
TEST(a_critical_task_overtakes_queued_low_ones_beside_a_busy_worker) {
    static order_log log;
    static logged a[6];
    weft_executor *ex = make_executor(2);
    gate g;
    atomic_init(&g.entered, 0);
    atomic_init(&g.open, 0);
    ASSERT_OK(weft_silent_async(ex, gate_task, &g));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 10));
    weft_taskflow *tf = weft_taskflow_create("overtake2", NULL);
    for (int i = 0; i < 4; i++) add_logged(tf, &a[i], &log, i, P_LOW);
    weft_task p = add_logged(tf, &a[4], &log, 4, P_NORM);
    ASSERT_OK(weft_precede(p, add_logged(tf, &a[5], &log, 5, P_CRIT)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    assert_order(&log, (int[]){4, 5, 0, 1, 2, 3}, 6);
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static int hold_task(weft_ctx *cx, void *arg) {
    gate *g = arg;
    return gate_task(cx, g);
}

TEST(set_priority_checks_its_arguments_and_refuses_a_running_taskflow) {
    weft_taskflow *tf = weft_taskflow_create("args", NULL);
    gate g;
    atomic_init(&g.entered, 0);
    atomic_init(&g.open, 0);
    weft_task t = weft_emplace(tf, hold_task, &g);
    ASSERT_EQ(weft_task_get_priority(t), WEFT_PRIORITY_NORMAL);
    ASSERT_EQ(weft_task_get_priority(WEFT_TASK_NULL), WEFT_PRIORITY_NORMAL);
    ASSERT_EQ(weft_task_set_priority(WEFT_TASK_NULL, WEFT_PRIORITY_HIGH), WEFT_EINVAL);
    ASSERT_EQ(weft_task_set_priority(t, (weft_priority)3), WEFT_EINVAL);
    ASSERT_EQ(weft_task_set_priority(t, (weft_priority)-2), WEFT_EINVAL);
    ASSERT_EQ(weft_run_with_priority(NULL, tf, (weft_priority)7, NULL), WEFT_EINVAL);
    ASSERT_EQ(weft_run_with_priority(NULL, NULL, WEFT_PRIORITY_HIGH, NULL), WEFT_EINVAL);
    ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_HIGH));
    weft_executor *ex = make_executor(1);
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_TRUE(wait_flag(&g.entered, 1, 10));
    ASSERT_EQ(weft_task_set_priority(t, WEFT_PRIORITY_LOW), WEFT_EBUSY);
    ASSERT_EQ(weft_taskflow_last_error(tf), WEFT_EBUSY);
    gate_open(&g);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(weft_task_get_priority(t), WEFT_PRIORITY_HIGH); /* unchanged */
    ASSERT_OK(weft_task_set_priority(t, WEFT_PRIORITY_LOW));
    ASSERT_EQ(weft_task_get_priority(t), WEFT_PRIORITY_LOW);
    ASSERT_OK(weft_task_erase(t));
    ASSERT_EQ(weft_task_set_priority(t, WEFT_PRIORITY_LOW), WEFT_EINVAL); /* erased */
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(priorities_survive_erasing_other_tasks_and_a_reused_slot_starts_without_one) {
    static order_log log;
    static logged a[6];
    weft_taskflow *tf = weft_taskflow_create("erase", NULL);
    weft_task t[5];
    static const int pr[] = {P_LOW, P_HIGH, P_CRIT, P_LOW, P_HIGH};
    for (int i = 0; i < 5; i++) t[i] = add_logged(tf, &a[i], &log, i, pr[i]);
    ASSERT_OK(weft_task_erase(t[2])); /* the CRITICAL one */
    for (int i = 0; i < 5; i++)
        if (i != 2) ASSERT_EQ(weft_task_get_priority(t[i]), pr[i]);
    a[5] = (logged){&log, 5};
    weft_task r = weft_emplace(tf, log_task, &a[5]); /* takes t[2]'s slot */
    ASSERT_EQ(weft_task_index(r), 2);
    ASSERT_EQ(weft_task_get_priority(r), WEFT_PRIORITY_NORMAL);
    /* HIGH ones (their tickets) first, then the default task r from the deque,
     * then the LOW ones: r is not CRITICAL any more. */
    run_one_worker(tf, &log, (int[]){1, 4, 5, 0, 3}, 5);
    ASSERT_OK(weft_taskflow_clear(tf));
    a[0] = (logged){&log, 0};
    weft_task c = weft_emplace(tf, log_task, &a[0]);
    ASSERT_EQ(weft_task_get_priority(c), WEFT_PRIORITY_NORMAL); /* clear drops them */
    ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(a_compositions_copies_keep_their_tasks_priorities) {
    static order_log log;
    static logged a[4];
    weft_composition *comp = weft_composition_create("comp", NULL);
    ASSERT_TRUE(comp != NULL);
    weft_taskflow *g = weft_composition_graph(comp);
    static const int pr[] = {P_LOW, P_CRIT, P_NORM, P_HIGH};
    for (int i = 0; i < 4; i++) {
        weft_task t = add_logged(g, &a[i], &log, i, pr[i]);
        if (i == 1) ASSERT_OK(weft_composition_set_entry(comp, "crit", t));
    }
    weft_taskflow *tf = weft_taskflow_create("copies", NULL);
    weft_instance i1, i2;
    ASSERT_OK(weft_composition_instantiate(comp, tf, "one", &i1));
    ASSERT_OK(weft_composition_instantiate(comp, tf, "two", &i2));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 8);
    ASSERT_EQ(weft_task_get_priority(weft_instance_entry(&i2, "crit")), WEFT_PRIORITY_CRITICAL);
    /* Both copies' sources, queued together: CRITICAL ones, HIGH ones, the
     * NORMAL ones (the plain path), LOW ones, each in copy order. */
    run_one_worker(tf, &log, (int[]){1, 1, 3, 3, 2, 2, 0, 0}, 8);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_composition_destroy(comp);
}

/* ---- whole runs ---- */

typedef struct two_flows {
    weft_taskflow *low, *crit;
    logged a[7];
} two_flows;

/* low: chain 0 -> 1 -> 2 and a source 3 of its own HIGH priority; crit: chain
 * 4 -> 5 -> 6.  No task of the chains has a priority of its own. */
static void build_two(two_flows *t, order_log *log) {
    t->low = weft_taskflow_create("low", NULL);
    t->crit = weft_taskflow_create("crit", NULL);
    weft_task c[7];
    for (int i = 0; i < 7; i++) {
        t->a[i] = (logged){log, i};
        c[i] = weft_emplace(i < 4 ? t->low : t->crit, log_task, &t->a[i]);
    }
    ASSERT_OK(weft_linearize(c, 3));
    ASSERT_OK(weft_linearize(c + 4, 3));
    ASSERT_OK(weft_task_set_priority(c[3], WEFT_PRIORITY_HIGH));
}

/* Both runs submitted (low's first) while the one worker is held. */
static void run_two(two_flows *t, order_log *log, bool with_priorities) {
    weft_executor *ex = make_executor(1);
    gate g;
    gate_close(ex, &g, 1);
    atomic_store(&log->n, 0);
    if (with_priorities) {
        ASSERT_OK(weft_run_with_priority(ex, t->low, WEFT_PRIORITY_LOW, NULL));
        ASSERT_OK(weft_run_with_priority(ex, t->crit, WEFT_PRIORITY_CRITICAL, NULL));
    } else {
        ASSERT_OK(weft_run(ex, t->low, NULL));
        ASSERT_OK(weft_run(ex, t->crit, NULL));
    }
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_executor_destroy(ex);
}

TEST(a_runs_priority_goes_to_its_tasks_without_one_of_their_own) {
    static order_log log;
    static two_flows t;
    build_two(&t, &log);
    /* low's start queues 0 (LOW, the run's) and 3 (HIGH, its own), which runs
     * at once; crit's start queues its chain CRITICAL; low's chain last. */
    run_two(&t, &log, true);
    assert_order(&log, (int[]){3, 4, 5, 6, 0, 1, 2}, 7);
    /* Afterwards the chains are plain again: low's runs before crit starts. */
    run_two(&t, &log, false);
    assert_order(&log, (int[]){3, 0, 1, 2, 4, 5, 6}, 7);
    ASSERT_OK(weft_taskflow_destroy(t.low));
    ASSERT_OK(weft_taskflow_destroy(t.crit));
}

TEST(a_run_with_normal_priority_is_a_plain_run) {
    static order_log log;
    static two_flows t;
    build_two(&t, &log);
    weft_executor *ex = make_executor(1);
    gate g;
    gate_close(ex, &g, 1);
    ASSERT_OK(weft_run_with_priority(ex, t.low, WEFT_PRIORITY_NORMAL, NULL));
    ASSERT_OK(weft_run(ex, t.crit, NULL));
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, (int[]){3, 0, 1, 2, 4, 5, 6}, 7);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(t.low));
    ASSERT_OK(weft_taskflow_destroy(t.crit));
}

/* ---- every kind, semaphores, many workers ---- */

typedef struct counts {
    atomic_int plain, cond, sub, child, inner;
    int loops;
} counts;

static int count_plain(weft_ctx *cx, void *arg) {
    atomic_fetch_add(&((counts *)arg)->plain, 1);
    return 0;
}
static int count_child(weft_ctx *cx, void *arg) {
    atomic_fetch_add(&((counts *)arg)->child, 1);
    return 0;
}
static int count_inner(weft_ctx *cx, void *arg) {
    atomic_fetch_add(&((counts *)arg)->inner, 1);
    return 0;
}
/* Loops back (branch 0) twice per iteration, then goes on (branch 1). */
static int loop_cond(weft_ctx *cx, void *arg) {
    counts *c = arg;
    int k = atomic_fetch_add(&c->cond, 1);
    return k % 3 < 2 ? 0 : 1;
}
static int build_sub(weft_ctx *cx, weft_subflow *sf, void *arg) {
    atomic_fetch_add(&((counts *)arg)->sub, 1);
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 4; i++) {
        weft_task t = weft_emplace(g, count_child, arg);
        if (weft_task_set_priority(t, (weft_priority)(i % 4 - 1)) != WEFT_OK) return 1;
    }
    return 0;
}

/* A graph of every kind with priorities and a semaphore, run `iters` times on
 * `workers` workers, with or without a run priority: every task runs as often
 * as it should, the semaphore is whole again. */
static void every_kind(unsigned workers, int run_prio, int iters) {
    static counts c;
    memset(&c, 0, sizeof c);
    weft_semaphore *sem = weft_semaphore_create(1, NULL);
    weft_taskflow *body = weft_taskflow_create("body", NULL);
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_task_set_priority(weft_emplace(body, count_inner, &c), WEFT_PRIORITY_HIGH));
    weft_taskflow *tf = weft_taskflow_create("kinds", NULL);
    weft_task init = weft_emplace(tf, count_plain, &c);
    weft_task head = weft_emplace(tf, count_plain, &c);
    ASSERT_OK(weft_precede(init, head));
    weft_task cond = weft_emplace_condition(tf, loop_cond, &c);
    weft_task after = weft_emplace(tf, count_plain, &c);
    weft_task sub = weft_emplace_subflow(tf, build_sub, &c);
    weft_task mod = weft_emplace_module(tf, body);
    ASSERT_OK(weft_precede(head, cond));
    ASSERT_OK(weft_precede(cond, head)); /* branch 0: loop */
    ASSERT_OK(weft_precede(cond, after)); /* branch 1 */
    ASSERT_OK(weft_precede(after, sub));
    ASSERT_OK(weft_precede(after, mod));
    weft_task wide[16];
    for (int i = 0; i < 16; i++) {
        wide[i] = weft_emplace(tf, count_plain, &c);
        ASSERT_OK(weft_task_set_priority(wide[i], (weft_priority)(i % 4 - 1)));
        ASSERT_OK(weft_task_acquire(wide[i], sem)); /* each holds the semaphore alone */
        ASSERT_OK(weft_task_release(wide[i], sem));
        ASSERT_OK(weft_precede(sub, wide[i]));
    }
    ASSERT_OK(weft_task_set_priority(head, WEFT_PRIORITY_HIGH));
    ASSERT_OK(weft_task_set_priority(cond, WEFT_PRIORITY_CRITICAL));
    ASSERT_OK(weft_task_set_priority(sub, WEFT_PRIORITY_LOW));
    ASSERT_OK(weft_task_set_priority(mod, WEFT_PRIORITY_HIGH));
    weft_executor *ex = make_executor(workers);
    for (int it = 0; it < iters; it++) {
        weft_future *f;
        ASSERT_OK(weft_run_with_priority(ex, tf, (weft_priority)(run_prio == 9 ? it % 4 - 1 : run_prio), &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    ASSERT_EQ(atomic_load(&c.plain), iters * (1 + 3 + 1 + 16));
    ASSERT_EQ(atomic_load(&c.cond), iters * 3);
    ASSERT_EQ(atomic_load(&c.sub), iters);
    ASSERT_EQ(atomic_load(&c.child), iters * 4);
    ASSERT_EQ(atomic_load(&c.inner), iters * 3);
    ASSERT_EQ(weft_semaphore_value(sem), 1);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_semaphore_destroy(sem));
}

TEST(every_task_kind_with_priorities_runs_as_often_as_it_should) { every_kind(1, P_NORM, 3); }
TEST(every_task_kind_runs_under_a_run_priority) { every_kind(1, P_LOW, 3); }
TEST(many_workers_run_prioritised_graphs_each_task_as_often_as_it_should) {
    every_kind(4, 9, (int)test_scale(200) + 4);
}

/* Semaphores attached before or after the priority: the priority's wrapper
 * stays outermost, and erasing or clearing gives everything back. */
TEST(a_priority_and_semaphores_combine_in_either_order) {
    static counts c;
    memset(&c, 0, sizeof c);
    weft_semaphore *sem = weft_semaphore_create(1, NULL);
    weft_taskflow *tf = weft_taskflow_create("sem", NULL);
    weft_task a = weft_emplace(tf, count_plain, &c), b = weft_emplace(tf, count_plain, &c);
    ASSERT_OK(weft_task_set_priority(a, WEFT_PRIORITY_LOW));
    ASSERT_OK(weft_task_acquire(a, sem));
    ASSERT_OK(weft_task_release(a, sem));
    ASSERT_OK(weft_task_acquire(b, sem));
    ASSERT_OK(weft_task_release(b, sem));
    ASSERT_OK(weft_task_set_priority(b, WEFT_PRIORITY_CRITICAL));
    ASSERT_OK(weft_task_set_priority(b, WEFT_PRIORITY_NORMAL)); /* back to the semaphore's wrapper */
    weft_executor *ex = make_executor(2);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&c.plain), 2);
    ASSERT_OK(weft_task_erase(a));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&c.plain), 3);
    ASSERT_EQ(weft_semaphore_value(sem), 1);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_semaphore_destroy(sem));
}
