/* Graph editing: erasing tasks, removing edges, linearize, slot reuse. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "graph2_util.h"

struct log {
    atomic_int n;
    int order[32];
};

static int log_task(weft_ctx *cx, void *arg) {
    struct log *l = arg;
    int i = atomic_fetch_add(&l->n, 1);
    if (i < 32) l->order[i] = (int)weft_task_index(weft_ctx_task(cx));
    return 0;
}

TEST(erase_task_with_edges_both_ways_keeps_the_rest_runnable) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("e");
    struct log l = {0};
    weft_task a = must_emplace(tf, log_task, &l), b = must_emplace(tf, log_task, &l);
    weft_task c = must_emplace(tf, log_task, &l), d = must_emplace(tf, log_task, &l);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(b, c));
    ASSERT_OK(weft_precede(d, b)); /* b: two in, one out */
    ASSERT_OK(weft_precede(a, c));
    ASSERT_OK(weft_task_set_name(b, "b"));
    ASSERT_OK(weft_task_erase(b));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 3);
    ASSERT_EQ(weft_task_num_successors(a), 1);
    ASSERT_EQ(weft_task_num_successors(d), 0);
    ASSERT_EQ(weft_task_num_dependents(c), 1);
    ASSERT_STATUS(weft_task_erase(b), WEFT_EINVAL); /* twice */
    ASSERT_STATUS(weft_precede(a, b), WEFT_EINVAL);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.n), 3);
    int pos_a = -1, pos_c = -1;
    for (int i = 0; i < 3; i++) {
        if (l.order[i] == (int)weft_task_index(a)) pos_a = i;
        if (l.order[i] == (int)weft_task_index(c)) pos_c = i;
    }
    ASSERT_TRUE(pos_a >= 0 && pos_a < pos_c);
    /* The slot is reused, index and all. */
    weft_task e = must_emplace(tf, log_task, &l);
    ASSERT_EQ(weft_task_index(e), 1);
    ASSERT_EQ(weft_task_num_dependents(e), 0);
    ASSERT_STREQ(weft_task_name(e), "");
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 4);
    atomic_store(&l.n, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.n), 4);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(remove_edges_successors_dependents_and_linearize) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("r");
    struct log l = {0};
    weft_task t[4];
    for (int i = 0; i < 4; i++) t[i] = must_emplace(tf, log_task, &l);
    ASSERT_OK(weft_linearize(t, 4));
    ASSERT_EQ(weft_task_num_successors(t[0]), 1);
    ASSERT_OK(weft_edge_remove(t[1], t[2]));
    ASSERT_STATUS(weft_edge_remove(t[1], t[2]), WEFT_ENOENT);
    ASSERT_EQ(weft_task_num_dependents(t[2]), 0);
    ASSERT_OK(weft_precede(t[3], t[0])); /* no cycle now: 2 -> 3 -> 0 -> 1 */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&l.n), 4);
    ASSERT_EQ(l.order[0], 2);
    ASSERT_EQ(l.order[3], 1);
    ASSERT_OK(weft_task_remove_successors(t[3]));
    ASSERT_EQ(weft_task_num_dependents(t[0]), 0);
    ASSERT_OK(weft_task_remove_dependents(t[3]));
    ASSERT_EQ(weft_task_num_successors(t[2]), 0);
    /* A cycle made by linearize is refused at run time, as any. */
    weft_task cyc[3] = {t[1], t[2], t[0]};
    ASSERT_OK(weft_linearize(cyc, 3));
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_OK(weft_task_remove_dependents(t[1]));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_task bad[2] = {t[0], WEFT_TASK_NULL};
    size_t before = weft_task_num_successors(t[0]);
    ASSERT_STATUS(weft_linearize(bad, 2), WEFT_EINVAL);
    ASSERT_EQ(weft_task_num_successors(t[0]), before);
    ASSERT_OK(weft_linearize(NULL, 0));
    ASSERT_STATUS(weft_task_erase(WEFT_TASK_NULL), WEFT_EINVAL);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(erase_during_a_run_is_ebusy) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("busy");
    atomic_int gate = 0;
    weft_task a = must_emplace(tf, wait_gate, &gate), b = weft_placeholder(tf);
    ASSERT_OK(weft_precede(a, b));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_STATUS(weft_task_erase(b), WEFT_EBUSY);
    ASSERT_STATUS(weft_edge_remove(a, b), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_remove_successors(a), WEFT_EBUSY);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EBUSY);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_task_erase(b));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 1);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* ---- out of memory: erase and re-add --------------------------------------- */


/* Retries a builder step until it gets through (one allocation fails once). */
#define RETRY(expr) do { weft_status s_; while ((s_ = (expr)) == WEFT_ENOMEM) {} ASSERT_OK(s_); } while (0)

static weft_task emplace_retry(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    for (;;) {
        weft_task t = weft_emplace(tf, fn, arg);
        if (!weft_task_is_null(t)) return t;
        ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
    }
}

/* The allocator is installed once, before the executor: switching it while a
 * worker frees a finished run's record races (weft_set_allocator's contract),
 * so the failures are switched on and off through fail_at instead. */
TEST(erase_and_readd_under_oom_stay_consistent) {
    install_failing_allocator();
    weft_executor *ex = make_executor(2);
    for (long at = 1; at < 200; at++) {
        weft_taskflow *tf = make_taskflow("oom");
        struct log l = {0};
        atomic_store(&calls, 0);
        atomic_store(&fail_at, at);
        weft_task t[8];
        for (int i = 0; i < 8; i++) t[i] = emplace_retry(tf, log_task, &l);
        for (int i = 1; i < 8; i++) RETRY(weft_precede(t[0], t[i])); /* fan-out: a spill array */
        RETRY(weft_task_set_name(t[3], "three"));
        ASSERT_OK(weft_task_erase(t[3]));
        ASSERT_OK(weft_task_erase(t[0]));
        t[0] = emplace_retry(tf, log_task, &l);
        t[3] = emplace_retry(tf, log_task, &l);
        RETRY(weft_linearize(t, 8));
        long used = atomic_load(&calls);
        atomic_store(&fail_at, 0);
        ASSERT_EQ(weft_taskflow_num_tasks(tf), 8);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&l.n), 8);
        for (int i = 0; i < 8; i++) ASSERT_EQ(l.order[i], (int)weft_task_index(t[i]));
        weft_taskflow_destroy(tf);
        if (used < at) break; /* no failure met: every allocation point was tried */
    }
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
}

/* ---- awkward paths ----------------------------------------------------------- */

/* A task with no edge is one of the taskflow's sources; erasing it must take
 * it out of them, or the next run starts the freed slot (a NULL job function)
 * or, once the slot is reused, runs the new task twice. */
TEST(erased_task_without_edges_is_never_started) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("lone");
    atomic_int ran = 0;
    must_emplace(tf, count_task, &ran);
    weft_task b = must_emplace(tf, count_task, &ran);
    ASSERT_OK(weft_task_erase(b));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ran), 1);
    must_emplace(tf, count_task, &ran); /* takes b's slot */
    atomic_store(&ran, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ran), 2);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(an_erased_tasks_name_data_and_work_are_refused_and_not_inherited_by_its_slot) {
    weft_taskflow *tf = make_taskflow("ghost");
    atomic_int n = 0;
    int data = 0;
    weft_task a = must_emplace(tf, count_task, &n);
    ASSERT_OK(weft_task_erase(a));
    ASSERT_STATUS(weft_task_set_name(a, "ghost"), WEFT_EINVAL);
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_EINVAL);
    ASSERT_STATUS(weft_task_set_data(a, &data), WEFT_EINVAL);
    ASSERT_STATUS(weft_task_set_work(a, count_task, &n), WEFT_EINVAL);
    weft_task b = must_emplace(tf, count_task, &n); /* takes a's slot */
    ASSERT_EQ(weft_task_index(b), weft_task_index(a));
    ASSERT_STREQ(weft_task_name(b), "");
    ASSERT_NULL(weft_task_data(b));
    /* A name set on an erased slot was never freed (clear skips such slots):
     * a leak under ASan before the refusal. */
    weft_task c = must_emplace(tf, count_task, &n);
    ASSERT_OK(weft_task_erase(c));
    ASSERT_STATUS(weft_task_set_name(c, "leak"), WEFT_EINVAL);
    ASSERT_OK(weft_taskflow_clear(tf));
    weft_taskflow_destroy(tf);
}

/* linearize takes the list as given: a task named twice gets an edge each time
 * (here a cycle, refused when run), and a failure later in the list takes back
 * every edge the call added, repeats included, and none it did not. */
TEST(linearize_with_repeated_tasks_is_all_or_nothing) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("dup");
    atomic_int ran = 0;
    weft_task a = must_emplace(tf, count_task, &ran), b = must_emplace(tf, count_task, &ran);
    ASSERT_OK(weft_precede(a, b)); /* there before the calls below */
    weft_task bad[] = {a, b, a, b, WEFT_TASK_NULL};
    ASSERT_STATUS(weft_linearize(bad, 5), WEFT_EINVAL);
    ASSERT_EQ(weft_task_num_successors(a), 1);
    ASSERT_EQ(weft_task_num_successors(b), 0);
    ASSERT_EQ(weft_task_num_dependents(a), 0);
    ASSERT_EQ(weft_task_num_dependents(b), 1);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ran), 2);
    weft_task same[] = {a, a};
    ASSERT_OK(weft_linearize(same, 2)); /* a -> a */
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_OK(weft_edge_remove(a, a));
    weft_task cyc[] = {a, b, a};
    ASSERT_OK(weft_linearize(cyc, 3)); /* a -> b twice, b -> a */
    ASSERT_EQ(weft_task_num_dependents(b), 2);
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ECYCLE);
    ASSERT_OK(weft_edge_remove(b, a));
    ASSERT_OK(weft_edge_remove(a, b)); /* both copies */
    ASSERT_EQ(weft_task_num_dependents(b), 0);
    atomic_store(&ran, 0);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ran), 2);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* A run cancelled while it waits behind another reports each task of the
 * graph as skipped once: erased slots are no tasks. */
TEST(queued_run_cancelled_counts_live_tasks_not_erased_slots_as_skipped) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("q");
    atomic_int gate = 0, ran = 0;
    must_emplace(tf, wait_gate, &gate);
    weft_task t[3];
    for (int i = 0; i < 3; i++) t[i] = must_emplace(tf, count_task, &ran);
    ASSERT_OK(weft_task_erase(t[0]));
    ASSERT_OK(weft_task_erase(t[2]));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 2);
    weft_future *first, *second;
    ASSERT_OK(weft_run(ex, tf, &first));
    ASSERT_OK(weft_run(ex, tf, &second)); /* queued behind the first */
    ASSERT_OK(weft_future_cancel(second));
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(first));
    ASSERT_STATUS(weft_future_wait(second), WEFT_ECANCELED);
    weft_run_info info;
    ASSERT_OK(weft_future_info(second, &info));
    ASSERT_EQ(info.skipped, 2);
    weft_future_destroy(first), weft_future_destroy(second);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* A parallel run_n forbids edits as any run does, until its future is ready. */
TEST(erase_during_a_parallel_run_n_is_ebusy) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("pbusy");
    atomic_int gate = 0;
    weft_task a = must_emplace(tf, wait_gate, &gate), b = weft_placeholder(tf);
    ASSERT_OK(weft_precede(a, b));
    weft_future *f;
    ASSERT_OK(weft_run_n_parallel(ex, tf, 4, &f));
    ASSERT_STATUS(weft_task_erase(b), WEFT_EBUSY);
    ASSERT_STATUS(weft_task_remove_dependents(b), WEFT_EBUSY);
    weft_task both[] = {b, a};
    ASSERT_STATUS(weft_linearize(both, 2), WEFT_EBUSY);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(weft_task_num_dependents(b), 1);
    ASSERT_OK(weft_task_erase(b));
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 1);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

/* The next task takes an erased slot wherever the taskflow's current chunk
 * stands (emplace's one-test fast path counts the chunk's room, and an erase
 * must send the next task the slow way), and a clear starts over at index 0. */
TEST(an_erased_slot_is_taken_by_the_next_task_mid_chunk_and_a_clear_starts_at_index_0) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("midchunk");
    atomic_int ran = 0;
    weft_task t[40];
    for (int i = 0; i < 40; i++) t[i] = must_emplace(tf, count_task, &ran);
    size_t hole = weft_task_index(t[17]);
    ASSERT_OK(weft_task_erase(t[17]));
    weft_task again = must_emplace(tf, count_task, &ran);
    ASSERT_EQ(weft_task_index(again), hole);
    weft_task next = must_emplace(tf, count_task, &ran); /* slots go on after the last one */
    ASSERT_EQ(weft_task_index(next), 40u);
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 41u);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ran), 41);
    ASSERT_OK(weft_taskflow_clear(tf));
    ASSERT_EQ(weft_task_index(must_emplace(tf, count_task, &ran)), 0u);
    ASSERT_EQ(weft_task_index(must_emplace(tf, count_task, &ran)), 1u);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}
