/* Priorities under one worker: a table of priorities in, the exact order out;
 * handles (re-prioritise, remove, after completion); snapshot; inheritance. */
#include "sched_util.h"

enum { P_LOW = WEFT_PRIORITY_LOW, P_NORM = WEFT_PRIORITY_NORMAL, P_HIGH = WEFT_PRIORITY_HIGH, P_CRIT = WEFT_PRIORITY_CRITICAL };

/* Queues task i of the table at priority prio[i] with a handle (so that NORMAL
 * ones go through the priority queue too). */
static void queue_table(weft_executor *ex, order_log *log, logged *args, const int *prio, int n,
                        weft_sched_handle *h) {
    for (int i = 0; i < n; i++) {
        args[i] = (logged){log, i};
        ASSERT_OK(weft_async_with(ex, log_task, &args[i],
                                  &(weft_async_options){.priority = (weft_priority)prio[i], .handle = &h[i]}, NULL));
    }
}

/* The expected order: by priority, high first, then by position (FIFO). */
static void expected_order(const int *prio, int n, int *out) {
    int k = 0;
    for (int p = P_CRIT; p >= P_LOW; p--)
        for (int i = 0; i < n; i++)
            if (prio[i] == p) out[k++] = i;
}

static const int table[] = {P_LOW,  P_NORM, P_HIGH, P_CRIT, P_LOW,  P_HIGH, P_NORM, P_CRIT, P_LOW, P_LOW,
                            P_CRIT, P_NORM, P_HIGH, P_LOW,  P_CRIT, P_NORM, P_HIGH, P_HIGH, P_LOW, P_CRIT};
enum { NT = sizeof table / sizeof table[0] };

TEST(one_worker_runs_a_table_of_priorities_in_exact_order) {
    weft_executor *ex = make_executor(1);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    static logged args[NT];
    weft_sched_handle h[NT];
    queue_table(ex, &log, args, table, NT, h);
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    int want[NT];
    expected_order(table, NT, want);
    assert_order(&log, want, NT);
    weft_executor_destroy(ex);
}

/* The same table queued by a task on the one worker (the local path). */
static order_log inner_log;
static logged inner_args[NT];
static int queue_from_inside(weft_ctx *cx, void *arg) {
    weft_sched_handle h[NT];
    queue_table(weft_ctx_executor(cx), &inner_log, inner_args, table, NT, h);
    return 0;
}

TEST(one_worker_orders_the_table_queued_from_a_task_too) {
    weft_executor *ex = make_executor(1);
    ASSERT_OK(weft_silent_async(ex, queue_from_inside, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    int want[NT];
    expected_order(table, NT, want);
    assert_order(&inner_log, want, NT);
    weft_executor_destroy(ex);
}

TEST(default_priority_tasks_run_between_normal_and_low) {
    weft_executor *ex = make_executor(1);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    static logged a[4];
    for (int i = 0; i < 4; i++) a[i] = (logged){&log, i};
    ASSERT_OK(weft_async_with(ex, log_task, &a[0], &(weft_async_options){.priority = WEFT_PRIORITY_LOW}, NULL));
    ASSERT_OK(weft_silent_async(ex, log_task, &a[1])); /* the plain path: the injector */
    ASSERT_OK(weft_async_with(ex, log_task, &a[2], &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL}, NULL));
    ASSERT_OK(weft_silent_async(ex, log_task, &a[3]));
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, (int[]){2, 1, 3, 0}, 4);
    weft_executor_destroy(ex);
}

TEST(reprioritising_keeps_fifo_among_equals) {
    weft_executor *ex = make_executor(1);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    static logged args[6];
    int prio[6] = {P_LOW, P_HIGH, P_LOW, P_HIGH, P_NORM, P_NORM};
    weft_sched_handle h[6];
    queue_table(ex, &log, args, prio, 6, h);
    /* 0 and 2 up to HIGH: they were queued before 1 and 3, so they lead them;
     * 1 down to LOW; 4 removed. */
    ASSERT_OK(weft_sched_reprioritize(ex, h[2], WEFT_PRIORITY_HIGH));
    ASSERT_OK(weft_sched_reprioritize(ex, h[0], WEFT_PRIORITY_HIGH));
    ASSERT_OK(weft_sched_reprioritize(ex, h[1], WEFT_PRIORITY_LOW));
    ASSERT_OK(weft_sched_remove(ex, h[4]));
    weft_sched_entry snap[8];
    size_t n = 0;
    ASSERT_OK(weft_sched_snapshot(ex, snap, 8, &n));
    int want[] = {0, 2, 3, 5, 1};
    ASSERT_EQ(n, 5);
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(snap[i].handle.slot, h[want[i]].slot);
        ASSERT_EQ(snap[i].handle.gen, h[want[i]].gen);
    }
    size_t again = 0;
    ASSERT_OK(weft_sched_snapshot(ex, NULL, 0, &again)); /* changes nothing */
    ASSERT_EQ(again, 5);
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, want, 5);
    weft_executor_destroy(ex);
}

TEST(handles_after_completion_or_removal_give_enoent) {
    weft_executor *ex = make_executor(2);
    atomic_int ran = 0;
    weft_sched_handle h;
    weft_future *f = NULL;
    ASSERT_OK(weft_async_with(ex, bump, &ran, &(weft_async_options){.priority = WEFT_PRIORITY_HIGH, .handle = &h},
                              &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_STATUS(weft_sched_reprioritize(ex, h, WEFT_PRIORITY_LOW), WEFT_ENOENT);
    ASSERT_STATUS(weft_sched_remove(ex, h), WEFT_ENOENT);
    weft_priority p;
    ASSERT_STATUS(weft_sched_priority(ex, h, &p), WEFT_ENOENT);
    /* Removed: its future says cancelled, the function never ran. */
    gate g;
    gate_close(ex, &g, 2);
    ASSERT_OK(weft_async_with(ex, bump, &ran, &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &h},
                              &f));
    ASSERT_OK(weft_sched_priority(ex, h, &p));
    ASSERT_EQ(p, WEFT_PRIORITY_LOW);
    ASSERT_OK(weft_sched_remove(ex, h));
    ASSERT_STATUS(weft_sched_remove(ex, h), WEFT_ENOENT);
    ASSERT_STATUS(weft_sched_reprioritize(ex, h, WEFT_PRIORITY_HIGH), WEFT_ENOENT);
    gate_open(&g);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    weft_future_destroy(f);
    ASSERT_EQ(atomic_load(&ran), 1);
    /* Made-up handles and bad arguments. */
    ASSERT_STATUS(weft_sched_remove(ex, (weft_sched_handle){12345, 7}), WEFT_ENOENT);
    ASSERT_STATUS(weft_sched_remove(ex, (weft_sched_handle){0, 0}), WEFT_ENOENT);
    ASSERT_STATUS(weft_sched_remove(NULL, h), WEFT_EINVAL);
    ASSERT_STATUS(weft_sched_reprioritize(ex, h, (weft_priority)7), WEFT_EINVAL);
    ASSERT_STATUS(weft_async_with(ex, bump, &ran, &(weft_async_options){.priority = (weft_priority)3}, NULL),
                  WEFT_EINVAL);
    ASSERT_STATUS(weft_sched_snapshot(ex, NULL, 1, &(size_t){0}), WEFT_EINVAL);
    ASSERT_STATUS(weft_sched_get_stats(ex, NULL), WEFT_EINVAL);
    ASSERT_STREQ(weft_priority_name(WEFT_PRIORITY_CRITICAL), "critical");
    ASSERT_STREQ(weft_priority_name((weft_priority)9), "?");
    weft_executor_destroy(ex);
}

TEST(a_dependent_task_removed_before_it_was_queued_never_runs) {
    weft_executor *ex = make_executor(2);
    gate g;
    gate_close(ex, &g, 2);
    atomic_int ran = 0;
    weft_future *first = NULL, *second = NULL;
    ASSERT_OK(weft_async(ex, bump, &ran, &first));
    weft_sched_handle h;
    ASSERT_OK(weft_async_with(ex, bump, &ran,
                              &(weft_async_options){.handle = &h, .deps = &first, .ndeps = 1}, &second));
    ASSERT_OK(weft_sched_remove(ex, h)); /* reserved, not yet queued */
    gate_open(&g);
    ASSERT_OK(weft_future_wait(first));
    ASSERT_STATUS(weft_future_wait(second), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_future_destroy(first);
    weft_future_destroy(second);
    weft_executor_destroy(ex);
}

/* A queued task taken out by weft_sched_remove reports itself cancelled
 * there and then: its future is ready when remove returns, and its CRITICAL
 * dependent is queued at CRITICAL, ahead of the HIGH tasks queued before it.
 * It used to report from the injector, behind every HIGH task, its future
 * pending and its dependent held back until then. */
TEST(removing_a_queued_task_reports_it_at_once_and_its_critical_dependent_runs_first) {
    weft_sched_config sc = {.no_escalation = true};
    weft_executor *ex = make_sched_executor(1, &sc);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    static logged args[5];
    for (int i = 0; i < 5; i++) args[i] = (logged){&log, i};
    weft_sched_handle hb;
    weft_future *fb = NULL, *fc = NULL;
    ASSERT_OK(weft_async_with(ex, log_task, &args[0],
                              &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &hb}, &fb));
    ASSERT_OK(weft_async_with(ex, log_task, &args[1],
                              &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL, .deps = &fb, .ndeps = 1},
                              &fc));
    for (int i = 2; i < 5; i++)
        ASSERT_OK(weft_async_with(ex, log_task, &args[i], &(weft_async_options){.priority = WEFT_PRIORITY_HIGH}, NULL));
    ASSERT_OK(weft_sched_remove(ex, hb));
    ASSERT_TRUE(weft_future_ready(fb)); /* no worker was free: reported by remove itself */
    ASSERT_STATUS(weft_future_status(fb), WEFT_ECANCELED);
    weft_sched_entry snap[8];
    size_t n = 0;
    ASSERT_OK(weft_sched_snapshot(ex, snap, 8, &n));
    ASSERT_EQ(n, 4); /* the dependent, released, and the three HIGH tasks */
    ASSERT_EQ(snap[0].priority, WEFT_PRIORITY_CRITICAL);
    gate_open(&g);
    ASSERT_OK(weft_future_wait(fc));
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, (int[]){1, 2, 3, 4}, 4);
    weft_future_destroy(fb);
    weft_future_destroy(fc);
    weft_executor_destroy(ex);
}

/* B, removed while it still waited for A, reports itself cancelled only once
 * A has; A, queued, is removed after it, so A's report releases B's on this
 * thread.  B's report is queued at CRITICAL, and so B's CRITICAL dependent
 * runs before the HIGH tasks, as it would had neither been removed. */
TEST(a_chain_of_removed_tasks_still_lets_its_critical_dependent_run_first) {
    weft_sched_config sc = {.no_escalation = true};
    weft_executor *ex = make_sched_executor(1, &sc);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    static logged args[5];
    for (int i = 0; i < 5; i++) args[i] = (logged){&log, i};
    weft_sched_handle ha, hb;
    weft_future *fa = NULL, *fb = NULL, *fc = NULL;
    ASSERT_OK(weft_async_with(ex, log_task, &args[0],
                              &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &ha}, &fa));
    ASSERT_OK(weft_async_with(ex, log_task, &args[1],
                              &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &hb, .deps = &fa,
                                                    .ndeps = 1},
                              &fb));
    ASSERT_OK(weft_async_with(ex, log_task, &args[2],
                              &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL, .deps = &fb, .ndeps = 1},
                              &fc));
    for (int i = 3; i < 5; i++)
        ASSERT_OK(weft_async_with(ex, log_task, &args[i], &(weft_async_options){.priority = WEFT_PRIORITY_HIGH}, NULL));
    ASSERT_OK(weft_sched_remove(ex, hb)); /* reserved: waits for A */
    ASSERT_OK(weft_sched_remove(ex, ha)); /* queued: reports now, which releases B */
    ASSERT_TRUE(weft_future_ready(fa));
    gate_open(&g);
    ASSERT_STATUS(weft_future_wait(fb), WEFT_ECANCELED);
    ASSERT_OK(weft_future_wait(fc));
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, (int[]){2, 3, 4}, 3);
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.removed, 2);
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    weft_future_destroy(fc);
    weft_executor_destroy(ex);
}

/* Under WEFT_SCHED_PRIORITY a worker's default-priority jobs wait in the
 * heap without a handle.  A snapshot used to hand out their slots, and
 * weft_sched_remove on one said WEFT_OK while the job ran all the same (only
 * an async task queued with a priority or handle can report itself
 * cancelled). */
static logged heap_args[3];
static atomic_int heap_queued;
static int queue_three_then_wait(weft_ctx *cx, void *arg) {
    gate *g = arg;
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_silent_async(weft_ctx_executor(cx), log_task, &heap_args[i]));
    atomic_store_explicit(&heap_queued, 1, memory_order_release);
    return gate_task(cx, g);
}

TEST(a_job_queued_in_the_heap_without_a_handle_cannot_be_removed) {
    weft_sched_config sc = {.kind = WEFT_SCHED_PRIORITY, .no_escalation = true};
    weft_executor *ex = make_sched_executor(1, &sc);
    static order_log log;
    for (int i = 0; i < 3; i++) heap_args[i] = (logged){&log, i};
    gate g;
    atomic_init(&g.entered, 0);
    atomic_init(&g.open, 0);
    ASSERT_OK(weft_silent_async(ex, queue_three_then_wait, &g));
    ASSERT_TRUE(wait_flag(&heap_queued, 1, 10));
    weft_sched_entry snap[8];
    size_t n = 0;
    ASSERT_OK(weft_sched_snapshot(ex, snap, 8, &n));
    ASSERT_EQ(n, 3);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(snap[i].handle.gen, 0); /* the null handle, as for the lanes' jobs */
        ASSERT_STATUS(weft_sched_remove(ex, snap[i].handle), WEFT_ENOENT);
    }
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, (int[]){0, 1, 2}, 3); /* every one ran */
    weft_executor_destroy(ex);
}

/* Priority inheritance: a CRITICAL task that depends on a queued LOW one
 * raises it, so the LOW one runs before the NORMAL ones queued earlier. */
static void inheritance_case(bool inherit) {
    weft_sched_config sc = {.no_inheritance = !inherit, .no_escalation = true};
    weft_executor *ex = make_sched_executor(1, &sc);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    atomic_store(&log.n, 0);
    static logged args[4];
    int prio[3] = {P_NORM, P_NORM, P_LOW};
    weft_sched_handle h[3];
    queue_table(ex, &log, args, prio, 3, h);
    weft_future *low = NULL;
    /* Task 2's future: queue a copy we hold a future of instead. */
    ASSERT_OK(weft_sched_remove(ex, h[2]));
    ASSERT_OK(weft_async_with(ex, log_task, &args[2],
                              &(weft_async_options){.priority = WEFT_PRIORITY_LOW, .handle = &h[2]}, &low));
    args[3] = (logged){&log, 3};
    ASSERT_OK(weft_async_with(ex, log_task, &args[3],
                              &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL, .deps = &low, .ndeps = 1},
                              NULL));
    weft_priority p;
    ASSERT_OK(weft_sched_priority(ex, h[2], &p));
    ASSERT_EQ(p, inherit ? WEFT_PRIORITY_CRITICAL : WEFT_PRIORITY_LOW);
    weft_sched_stats st;
    ASSERT_OK(weft_sched_get_stats(ex, &st));
    ASSERT_EQ(st.inherited, inherit ? 1 : 0);
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_future_destroy(low);
    int want_inherit[] = {2, 3, 0, 1}, want_plain[] = {0, 1, 2, 3};
    assert_order(&log, inherit ? want_inherit : want_plain, 4);
    weft_executor_destroy(ex);
}

TEST(a_critical_task_raises_the_queued_low_task_it_depends_on) { inheritance_case(true); }
TEST(without_inheritance_the_low_dependency_waits_its_turn) { inheritance_case(false); }

TEST(manual_escalation_moves_old_tasks_up_one_level) {
    weft_sched_config sc = {.no_escalation = true, .escalate_low_ns = 1, .escalate_normal_ns = 1};
    weft_executor *ex = make_sched_executor(1, &sc);
    gate g;
    gate_close(ex, &g, 1);
    static order_log log;
    static logged args[3];
    int prio[3] = {P_LOW, P_NORM, P_HIGH};
    weft_sched_handle h[3];
    queue_table(ex, &log, args, prio, 3, h);
    sleep_us(100);
    size_t moved = 0;
    ASSERT_OK(weft_sched_escalate(ex, &moved));
    ASSERT_EQ(moved, 2); /* HIGH stays: escalation never makes CRITICAL */
    weft_priority p;
    ASSERT_OK(weft_sched_priority(ex, h[0], &p));
    ASSERT_EQ(p, WEFT_PRIORITY_NORMAL);
    ASSERT_OK(weft_sched_priority(ex, h[1], &p));
    ASSERT_EQ(p, WEFT_PRIORITY_HIGH);
    gate_open(&g);
    ASSERT_OK(weft_executor_wait_all(ex));
    assert_order(&log, (int[]){1, 2, 0}, 3); /* 1 and 2 both HIGH now: FIFO; then 0 */
    weft_executor_destroy(ex);
}

/* A task queues 10 default-priority tasks (its own deque) and then a CRITICAL
 * one: the worker runs the CRITICAL one before its deque (the ticket), not
 * after it. */
static order_log ticket_log;
static logged ticket_args[11];
static int queue_then_critical(weft_ctx *cx, void *arg) {
    weft_executor *ex = weft_ctx_executor(cx);
    for (int i = 0; i < 10; i++) ASSERT_OK(weft_silent_async(ex, log_task, &ticket_args[i]));
    ASSERT_OK(weft_async_with(ex, log_task, &ticket_args[10],
                              &(weft_async_options){.priority = WEFT_PRIORITY_CRITICAL}, NULL));
    return 0;
}

TEST(a_critical_task_queued_by_a_worker_runs_before_that_workers_deque) {
    weft_executor *ex = make_executor(1);
    for (int i = 0; i < 11; i++) ticket_args[i] = (logged){&ticket_log, i};
    ASSERT_OK(weft_silent_async(ex, queue_then_critical, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&ticket_log.n), 11);
    ASSERT_EQ(ticket_log.ids[0], 10);
    weft_executor_destroy(ex);
}
