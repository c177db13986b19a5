/* Contracts of the C headers, part 2 (session 41): weft/algo.h, pipeline.h,
 * sched.h, cancel.h, observe.h and the semaphores of async.h.  Each test
 * checks one promise a header makes, by a call that would see it broken. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* usleep */
#endif
#include "harness.h"

#include <weft.h>
#include <weft/algo_typed.h>

#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int item_nop(void *item, size_t index, void *arg) {
    (void)item, (void)index, (void)arg;
    return 0;
}

/* weft/pipeline.h, weft_simple_pipeline_create and _set_items: "count items of
 * item_size bytes from `items` that would run past the end of the address
 * space" are WEFT_EINVAL.  The batch is refused when its last item runs past
 * the end, not only when it starts past it; a batch that ends on the last
 * byte is accepted (nothing is read at creation). */
TEST(a_simple_batch_whose_last_item_runs_past_the_end_of_memory_is_einval) {
    weft_item_stage st = { WEFT_STAGE_SERIAL, item_nop, NULL, "nop" };
    weft_status err = WEFT_OK;
    /* Three items of 8 bytes from 16 bytes before the end: the third starts
     * on the last byte and its other 7 bytes run past it. */
    void *near_end = (void *)(uintptr_t)(UINTPTR_MAX - 16);
    ASSERT_NULL(weft_simple_pipeline_create(1, near_end, 3, 8, &st, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "do not fit") != NULL);
    /* Items larger than what is left: one item of 32 bytes, 17 left. */
    err = WEFT_OK;
    ASSERT_NULL(weft_simple_pipeline_create(1, near_end, 1, 32, &st, 1, &err));
    ASSERT_STATUS(err, WEFT_EINVAL);
    /* Two items of 8 ending on the last byte fit (and so does the empty batch). */
    void *exact = (void *)(uintptr_t)(UINTPTR_MAX - 15);
    weft_pipeline *p = weft_simple_pipeline_create(1, exact, 2, 8, &st, 1, &err);
    ASSERT_NOT_NULL(p);
    /* set_items checks the same way, with the pipeline's item size. */
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, near_end, 3), WEFT_EINVAL);
    ASSERT_STATUS(weft_simple_pipeline_set_items(p, (void *)(uintptr_t)(UINTPTR_MAX - 6), 1), WEFT_EINVAL);
    ASSERT_OK(weft_simple_pipeline_set_items(p, exact, 2));
    ASSERT_OK(weft_simple_pipeline_set_items(p, near_end, 0));
    ASSERT_OK(weft_pipeline_destroy(p));
}

/* weft/cancel.h, weft_cancel_callback_remove: "If it is running on another
 * thread right now, this waits until it has returned ...; from inside the
 * callback itself it does not wait."  A callback running further up the
 * calling thread's own stack is not running on another thread: a callback of
 * token 1 cancels token 2, whose callback removes the first one's handle
 * (an object that tears down both registrations when either fires).  Waiting
 * there for the outer callback to return waits forever.  The remove returns
 * false (the callback ran), frees the handle once the outer callback returns,
 * and nothing is left registered. */
static weft_cancel_token *nest_t1, *nest_t2;
static weft_cancel_callback *nest_h1, *nest_h2;
static int nest_removed = -1, nest_outer_after = 0;
static void nest_outer(void *arg, const char *reason) {
    (void)arg, (void)reason;
    ASSERT_OK(weft_cancel_token_cancel(nest_t2));
    nest_outer_after = 1; /* the inner remove returned: this callback goes on */
}
static void nest_inner(void *arg, const char *reason) {
    (void)arg, (void)reason;
    nest_removed = weft_cancel_callback_remove(nest_h1);
}
TEST(removing_a_callback_that_runs_further_up_the_same_thread_does_not_wait_for_it) {
    alarm(10); /* the broken remove waits forever: fail instead of hanging */
    nest_t1 = weft_cancel_token_create(NULL, NULL);
    nest_t2 = weft_cancel_token_create(NULL, NULL);
    ASSERT_NOT_NULL(nest_t1);
    ASSERT_NOT_NULL(nest_t2);
    ASSERT_OK(weft_cancel_token_on_cancel(nest_t1, nest_outer, NULL, &nest_h1));
    ASSERT_OK(weft_cancel_token_on_cancel(nest_t2, nest_inner, NULL, &nest_h2));
    ASSERT_OK(weft_cancel_token_cancel(nest_t1));
    ASSERT_EQ(nest_removed, 0); /* it had run (it was running) */
    ASSERT_EQ(nest_outer_after, 1);
    ASSERT_FALSE(weft_cancel_callback_remove(nest_h2));
    /* Both tokens still work: a reset re-arms t1 and nothing runs on its
     * next cancel (the removed callback is gone). */
    nest_outer_after = 0;
    ASSERT_OK(weft_cancel_token_reset(nest_t1));
    ASSERT_OK(weft_cancel_token_cancel(nest_t1));
    ASSERT_EQ(nest_outer_after, 0);
    weft_cancel_token_destroy(nest_t1);
    weft_cancel_token_destroy(nest_t2);
    alarm(0);
}

/* weft/observe.h counts "each pipeline stage call (one per token and
 * stage)" and a profile entry's index is "a stage's number"; weft/pipeline.h
 * numbers a simple pipeline's stages as given at creation (its own first
 * stage, which hands out the items, is not counted: weft_pipeline_num_stages,
 * weft_pipeflow_stage).  The metrics and the profile counted that internal
 * stage as a stage call of its own ("stage 0", count + 1 calls of no user
 * function) and named the user's stages from 1.  A simple pipeline of 2
 * stages over 10 items makes 20 stage calls, "stage 0" and "stage 1", 10
 * each, with every way of scheduling. */
static int item_add_one(void *item, size_t index, void *arg) {
    (void)index, (void)arg;
    *(int *)item += 1;
    return 0;
}
TEST(a_simple_pipeline_profiles_and_counts_the_stages_it_was_given_and_no_other) {
    for (int how = WEFT_PIPELINE_AUTO; how <= WEFT_PIPELINE_INLINE; how++) {
        weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, NULL);
        ASSERT_NOT_NULL(ex);
        int items[10] = { 0 };
        weft_item_stage st[2] = { { WEFT_STAGE_PARALLEL, item_add_one, NULL, "x" },
                                  { WEFT_STAGE_SERIAL, item_add_one, NULL, "y" } };
        weft_status err;
        weft_pipeline *p = weft_simple_pipeline_create(3, items, 10, sizeof(int), st, 2, &err);
        ASSERT_NOT_NULL(p);
        ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)how));
        weft_taskflow *tf = weft_taskflow_create("simple", NULL);
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
        ASSERT_OK(weft_profiler_start(ex));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_profiler_stop(ex));
        for (int i = 0; i < 10; i++) ASSERT_EQ(items[i], 2);
        weft_metrics m;
        ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
        ASSERT_EQ(m.total.tasks, 1 + 10 * 2); /* the pipeline's task and its stage calls */
        weft_profile *pr = NULL;
        ASSERT_OK(weft_profile_get(ex, &pr));
        uint64_t calls[2] = { 0, 0 };
        for (size_t i = 0; i < pr->ntasks; i++) {
            const weft_task_stats *t = &pr->tasks[i];
            if (t->kind != WEFT_PROFILE_PIPELINE_STAGE) continue;
            ASSERT_TRUE(t->id == (const void *)p);
            ASSERT_LT(t->index, 2);
            char want[16];
            snprintf(want, sizeof want, "stage %u", (unsigned)t->index);
            ASSERT_STREQ(t->name, want);
            calls[t->index] += t->count;
        }
        ASSERT_EQ(calls[0], 10);
        ASSERT_EQ(calls[1], 10);
        weft_profile_free(pr);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(ex);
    }
}

/* weft/observe.h (as now written): a condition task that returns a branch
 * index is no failure (SUCCEEDED, code 0, counted succeeded); one that
 * returns a negative value FAILED with that code.  Pins what the observer and
 * the metrics report for the one kind of task whose non-zero return is not a
 * failure. */
static int cond_branch_one(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 1;
}
static int cond_fails(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return -5;
}
static int task_ok(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}
static int cond_seen_outcome = -1, cond_seen_code = -99;
static void cond_task_end(void *user, const weft_task_event *ev) {
    (void)user;
    if (strcmp(ev->name, "cond") != 0) return;
    cond_seen_outcome = (int)ev->outcome;
    cond_seen_code = ev->code;
}
TEST(the_observer_reports_a_condition_tasks_branch_as_success_and_a_negative_return_as_failure) {
    weft_observer ob = { NULL, cond_task_end, NULL };
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .observer = &ob }, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("branch", NULL);
    weft_task c = weft_emplace_condition(tf, cond_branch_one, NULL);
    weft_task a = weft_emplace(tf, task_ok, NULL), b = weft_emplace(tf, task_ok, NULL);
    ASSERT_OK(weft_task_set_name(c, "cond"));
    ASSERT_OK(weft_precede(c, a));
    ASSERT_OK(weft_precede(c, b));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(cond_seen_outcome, WEFT_TASK_SUCCEEDED);
    ASSERT_EQ(cond_seen_code, 0);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 2); /* the condition and branch 1 */
    ASSERT_EQ(m.total.succeeded, 2);
    ASSERT_EQ(m.total.failed, 0);
    weft_taskflow *tf2 = weft_taskflow_create("fails", NULL);
    weft_task c2 = weft_emplace_condition(tf2, cond_fails, NULL);
    ASSERT_OK(weft_task_set_name(c2, "cond"));
    ASSERT_OK(weft_precede(c2, weft_emplace(tf2, task_ok, NULL)));
    ASSERT_STATUS(weft_run_and_wait(ex, tf2), WEFT_ETASK);
    ASSERT_EQ(cond_seen_outcome, WEFT_TASK_FAILED);
    ASSERT_EQ(cond_seen_code, -5);
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.failed, 1);
    ASSERT_OK(weft_taskflow_destroy(tf2));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* weft/algo.h, weft_sort_ops: the driver checks what split returns, so a
 * wrong split never costs memory safety: a value outside the runs or cuts
 * that cross make it merge the pair whole (the array still ends sorted);
 * a cut inside the runs that is merely misplaced cannot be told without
 * comparing, and leaves a permutation in unspecified order (what the header
 * now says; it promised only lost speed).  Under ASan: no access outside the
 * array or its buffer either way. */
static int split_mode;
static size_t wrong_split(const void *a, size_t na, const void *b, size_t nb, size_t k, void *arg) {
    switch (split_mode) {
    case 0: return SIZE_MAX;                    /* outside the runs */
    case 1: return na + 1;                      /* just outside a */
    case 2: return (k * 7919) % (na + 1);       /* inside a, cuts that cross */
    default: {                                  /* inside, in order, off by one */
        size_t i = weft_u64__split(a, na, b, nb, k, arg);
        return i > 0 && k - i < nb ? i - 1 : i;
    }
    }
}
TEST(a_sort_with_a_wrong_split_keeps_memory_safe_and_a_permutation_and_sorts_when_it_can_tell) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 3 }, NULL);
    ASSERT_NOT_NULL(ex);
    size_t n = 100003;
    uint64_t *v = malloc(n * sizeof *v), seed = test_seed();
    ASSERT_NOT_NULL(v);
    for (split_mode = 0; split_mode < 4; split_mode++) {
        uint64_t sum = 0, mix = 0;
        for (size_t i = 0; i < n; i++) {
            v[i] = test_rand(&seed) % 1000;
            sum += v[i];
            mix ^= v[i] * 0x9e3779b97f4a7c15ull;
        }
        weft_sort_ops ops = { weft_u64__sort_block, weft_u64__merge, wrong_split };
        ASSERT_OK(weft_parallel_sort_ops(ex, v, n, sizeof *v, &ops, NULL, NULL));
        uint64_t sum2 = 0, mix2 = 0;
        size_t descents = 0;
        for (size_t i = 0; i < n; i++) {
            sum2 += v[i];
            mix2 ^= v[i] * 0x9e3779b97f4a7c15ull;
            if (i && v[i - 1] > v[i]) descents++;
        }
        ASSERT_EQ(sum2, sum); /* a permutation (sum and hash of the values) */
        ASSERT_EQ(mix2, mix);
        if (split_mode < 3) ASSERT_EQ(descents, 0); /* the driver saw it was wrong */
    }
    free(v);
    weft_executor_destroy(ex);
}

/* weft/algo.h, a direct call from a thread that is not a worker: with the
 * workers bound to CPUs it only sleeps (every chunk runs on a worker, never
 * beside a bound one on this thread's CPU); a call whose work fits one task
 * (max_tasks 1, a one-worker executor) is not spread and runs on the calling
 * thread, bound or not (what the header now says; it promised "only sleeps"
 * for every call). */
static pthread_t caller_thread;
static atomic_int chunks_on_caller, chunks_elsewhere;
static void where_chunks_run(size_t lo, size_t hi, void *arg) {
    (void)lo, (void)hi, (void)arg;
    if (pthread_equal(pthread_self(), caller_thread)) atomic_fetch_add(&chunks_on_caller, 1);
    else atomic_fetch_add(&chunks_elsewhere, 1);
}
TEST(a_call_from_outside_bound_workers_only_sleeps_unless_its_work_fits_one_task) {
    caller_thread = pthread_self();
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .affinity = WEFT_AFFINITY_CPUS }, NULL);
    ASSERT_NOT_NULL(ex);
    for (int part = WEFT_PARTITION_AUTO; part <= WEFT_PARTITION_GUIDED; part++) {
        atomic_store(&chunks_on_caller, 0);
        atomic_store(&chunks_elsewhere, 0);
        weft_algo_config cfg = { .partitioner = (weft_partitioner)part, .chunk = part ? 64 : 0 };
        ASSERT_OK(weft_parallel_for_range(ex, 0, 20000, 1, where_chunks_run, NULL, &cfg));
        ASSERT_EQ(atomic_load(&chunks_on_caller), 0);
        ASSERT_GT(atomic_load(&chunks_elsewhere), 0);
    }
    atomic_store(&chunks_on_caller, 0);
    atomic_store(&chunks_elsewhere, 0);
    ASSERT_OK(weft_parallel_for_range(ex, 0, 20000, 1, where_chunks_run, NULL, &(weft_algo_config){ .max_tasks = 1 }));
    ASSERT_GT(atomic_load(&chunks_on_caller), 0);
    ASSERT_EQ(atomic_load(&chunks_elsewhere), 0);
    weft_executor_destroy(ex);
}

/* weft/observe.h, weft_future_id: ids of runs are > 0, unique per executor
 * and in submission order, and each is the run_id of its tasks' events; 0 for
 * NULL, an async task's future, and (as the header now says) a weft_run_many
 * set's future: the set is no run, its members' runs take ids of their own in
 * index order.  Checked across every way of submitting a run. */
static uint64_t event_ids[32];
static char event_names[32];
static atomic_int event_count;
static void record_run_id(void *user, const weft_task_event *ev) {
    (void)user;
    int i = atomic_fetch_add(&event_count, 1);
    if (i < 32) event_ids[i] = ev->run_id, event_names[i] = ev->name[0];
}
static bool stop_at_two(void *arg) { return ++*(int *)arg >= 2; }
TEST(run_ids_follow_submission_order_and_a_run_many_set_has_none_of_its_own) {
    weft_observer ob = { NULL, record_run_id, NULL };
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .observer = &ob }, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *a = weft_taskflow_create("a", NULL), *b = weft_taskflow_create("b", NULL);
    ASSERT_OK(weft_task_set_name(weft_emplace(a, task_ok, NULL), "a"));
    ASSERT_OK(weft_task_set_name(weft_emplace(b, task_ok, NULL), "b"));
    weft_future *f[7];
    int calls = 0;
    weft_taskflow *both[2] = { a, b };
    ASSERT_OK(weft_run(ex, a, &f[0]));
    ASSERT_OK(weft_future_wait(f[0]));
    ASSERT_OK(weft_run_n(ex, a, 2, &f[1]));
    ASSERT_OK(weft_future_wait(f[1]));
    ASSERT_OK(weft_run_until(ex, a, stop_at_two, &calls, &f[2]));
    ASSERT_OK(weft_future_wait(f[2]));
    ASSERT_OK(weft_run_with_priority(ex, a, WEFT_PRIORITY_HIGH, &f[3]));
    ASSERT_OK(weft_future_wait(f[3]));
    ASSERT_OK(weft_run_n_parallel(ex, a, 2, &f[4]));
    ASSERT_OK(weft_future_wait(f[4]));
    ASSERT_OK(weft_run_many(ex, both, 2, &f[5]));
    ASSERT_OK(weft_future_wait(f[5]));
    ASSERT_OK(weft_run(ex, b, &f[6]));
    ASSERT_OK(weft_future_wait(f[6]));
    /* Runs 1..5, the set's members 6 and 7, then 8. */
    for (int i = 0; i < 5; i++) ASSERT_EQ(weft_future_id(f[i]), (uint64_t)i + 1);
    ASSERT_EQ(weft_future_id(f[5]), 0);
    ASSERT_EQ(weft_future_id(f[6]), 8);
    ASSERT_EQ(weft_future_id(NULL), 0);
    weft_future *af;
    ASSERT_OK(weft_async(ex, task_ok, NULL, &af));
    ASSERT_OK(weft_future_wait(af));
    ASSERT_EQ(weft_future_id(af), 0);
    weft_future_destroy(af);
    /* Each task's event names its run: 1, 2 2, 3 (the predicate stops it at
     * its second call), 4, 5 5, 6 and 7, 8. */
    ASSERT_EQ(atomic_load(&event_count), 10);
    uint64_t seen[9] = { 0 };
    for (int i = 0; i < 10; i++) {
        ASSERT_GE(event_ids[i], 1);
        ASSERT_LE(event_ids[i], 8);
        seen[event_ids[i]]++;
        if (event_ids[i] == 6) ASSERT_EQ(event_names[i], 'a'); /* the set's member 0 */
        if (event_ids[i] == 7) ASSERT_EQ(event_names[i], 'b'); /* and member 1 */
    }
    const uint64_t want[9] = { 0, 1, 2, 1, 1, 2, 1, 1, 1 };
    for (int i = 1; i <= 8; i++) ASSERT_EQ(seen[i], want[i]);
    for (int i = 0; i < 7; i++) weft_future_destroy(f[i]);
    ASSERT_OK(weft_taskflow_destroy(a));
    ASSERT_OK(weft_taskflow_destroy(b));
    weft_executor_destroy(ex);
}

/* graph.h: a cancel does not take a task parked on a semaphore off it; the
 * task is skipped when the holder's release hands it the unit, gives the unit
 * straight back, and its run ends then with ECANCELED: its function never
 * runs and the semaphore is whole afterwards. */
static atomic_int sem_held, sem_release, sem_parked_ran;

static int sem_holder(weft_ctx *cx, void *a) {
    (void)cx, (void)a;
    atomic_store(&sem_held, 1);
    while (!atomic_load(&sem_release)) usleep(1000);
    return 0;
}

static int sem_parked(weft_ctx *cx, void *a) {
    (void)cx, (void)a;
    atomic_store(&sem_parked_ran, 1);
    return 0;
}

TEST(a_cancelled_run_parked_on_a_semaphore_ends_at_the_holders_release_skipped_and_leaves_it_whole) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, &st);
    ASSERT_NOT_NULL(ex);
    weft_semaphore *s = weft_semaphore_create(1, &st);
    ASSERT_NOT_NULL(s);
    weft_taskflow *t1 = weft_taskflow_create("holder", &st), *t2 = weft_taskflow_create("parked", &st);
    weft_task a = weft_emplace(t1, sem_holder, NULL), b = weft_emplace(t2, sem_parked, NULL);
    ASSERT_OK(weft_task_acquire(a, s));
    ASSERT_OK(weft_task_release(a, s));
    ASSERT_OK(weft_task_acquire(b, s));
    ASSERT_OK(weft_task_release(b, s));
    weft_future *f1 = NULL, *f2 = NULL;
    ASSERT_OK(weft_run(ex, t1, &f1));
    while (!atomic_load(&sem_held)) usleep(100);
    ASSERT_OK(weft_run(ex, t2, &f2));
    usleep(20 * 1000);
    ASSERT_OK(weft_future_cancel(f2));
    usleep(20 * 1000);
    ASSERT_FALSE(weft_future_ready(f2)); /* parked behind the holder, cancelled or not */
    atomic_store(&sem_release, 1);
    ASSERT_STATUS(weft_future_wait(f2), WEFT_ECANCELED);
    ASSERT_OK(weft_future_wait(f1));
    ASSERT_EQ(atomic_load(&sem_parked_ran), 0);
    ASSERT_EQ(weft_semaphore_value(s), 1);
    weft_future_destroy(f1);
    weft_future_destroy(f2);
    weft_taskflow_destroy(t1);
    weft_taskflow_destroy(t2);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}
