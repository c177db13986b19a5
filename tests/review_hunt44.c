/* Session 44 review (h44-5): second look at the session's concurrent changes.
 *  - 6d07ebf (*out written before any task of the submission can start, for
 *    weft_run_many too): a task of the set's first member reads the set's
 *    future where the caller stored it and calls weft_run_many_cancel while
 *    the caller is still submitting the later members.  Every member must be
 *    cancelled ("cancels every member's run", weft/graph.h), and the set's
 *    member table must not be read while the caller writes it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static weft_executor *make_ex(unsigned workers) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers}, &st);
    if (!ex) {
        fprintf(stderr, "executor: %s\n", weft_strerror(st));
        exit(1);
    }
    return ex;
}

/* ---- 6d07ebf: weft_run_many_cancel from a member's task while submitting --- */

enum { MANY_BIG = 16, MANY_TASKS = 20000 };

typedef struct {
    weft_future *all;             /* where the caller stores the set */
    atomic_int cancel_done;       /* weft_run_many_cancel has returned */
    atomic_long uncancelled;      /* tasks run after it in a run not cancelled */
    atomic_long ran;
} many_shared;

static int many_canceller(weft_ctx *ctx, void *arg) {
    (void)ctx;
    many_shared *s = arg;
    /* graph.h: *out is written before any task of the submission starts. */
    weft_status st = weft_run_many_cancel(s->all);
    if (st != WEFT_OK) fprintf(stderr, "weft_run_many_cancel: %s\n", weft_strerror(st));
    atomic_store(&s->cancel_done, 1);
    return 0;
}

static int many_member(weft_ctx *ctx, void *arg) {
    many_shared *s = arg;
    atomic_fetch_add_explicit(&s->ran, 1, memory_order_relaxed);
    if (atomic_load(&s->cancel_done) && !weft_ctx_cancelled(ctx))
        atomic_fetch_add_explicit(&s->uncancelled, 1, memory_order_relaxed);
    return 0;
}

TEST(a_run_many_cancel_from_a_members_task_while_the_set_is_submitted_cancels_every_member) {
    weft_executor *ex = make_ex(2);
    many_shared s = {0};
    weft_taskflow *tfs[MANY_BIG + 1];
    tfs[0] = weft_taskflow_create("canceller", NULL);
    ASSERT_NOT_NULL(tfs[0]);
    ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[0], many_canceller, &s)));
    /* Large members: preparing each (validation) takes the caller a while,
     * so the canceller runs while later members are still to be submitted. */
    for (int i = 1; i <= MANY_BIG; i++) {
        tfs[i] = weft_taskflow_create("member", NULL);
        ASSERT_NOT_NULL(tfs[i]);
        for (int k = 0; k < MANY_TASKS; k++) ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[i], many_member, &s)));
    }
    for (int round = 0; round < 3; round++) {
        atomic_store(&s.cancel_done, 0);
        ASSERT_EQ(weft_run_many(ex, tfs, MANY_BIG + 1, &s.all), WEFT_OK);
        ASSERT_EQ(weft_future_wait(s.all), WEFT_ECANCELED);
        ASSERT_EQ(atomic_load(&s.cancel_done), 1);
        for (size_t i = 1; i <= MANY_BIG; i++) {
            weft_status mi = weft_run_many_status(s.all, i);
            ASSERT_TRUE(mi == WEFT_ECANCELED || mi == WEFT_OK);
        }
        weft_future_destroy(s.all);
        ASSERT_EQ(atomic_load(&s.uncancelled), 0);
    }
    for (int i = 0; i <= MANY_BIG; i++) weft_taskflow_destroy(tfs[i]);
    weft_executor_destroy(ex);
}


/* weft_future_cancel on the set itself cancels no member (graph.h), also
 * when a member's task calls it while later members are still submitted. */

static int many_plain_canceller(weft_ctx *ctx, void *arg) {
    (void)ctx;
    many_shared *s = arg;
    (void)weft_future_cancel(s->all);
    atomic_store(&s->cancel_done, 1);
    return 0;
}

TEST(a_plain_cancel_of_a_run_many_set_from_a_members_task_cancels_no_member) {
    weft_executor *ex = make_ex(2);
    many_shared s = {0};
    weft_taskflow *tfs[MANY_BIG + 1];
    tfs[0] = weft_taskflow_create("canceller", NULL);
    ASSERT_NOT_NULL(tfs[0]);
    ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[0], many_plain_canceller, &s)));
    for (int i = 1; i <= MANY_BIG; i++) {
        tfs[i] = weft_taskflow_create("member", NULL);
        ASSERT_NOT_NULL(tfs[i]);
        for (int k = 0; k < MANY_TASKS / 4; k++) ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[i], many_member, &s)));
    }
    for (int round = 0; round < 2; round++) {
        atomic_store(&s.ran, 0);
        ASSERT_OK(weft_run_many(ex, tfs, MANY_BIG + 1, &s.all));
        ASSERT_OK(weft_future_wait(s.all));
        weft_future_destroy(s.all);
        ASSERT_EQ(atomic_load(&s.ran), (long)MANY_BIG * (MANY_TASKS / 4));
    }
    for (int i = 0; i <= MANY_BIG; i++) weft_taskflow_destroy(tfs[i]);
    weft_executor_destroy(ex);
}

/* The same window, other calls a member's task makes on the set: a token
 * attached to the set and cancelled there cancels every member; a wait on
 * the set is WEFT_EDEADLK (its own run is a member), never a hang. */

typedef struct {
    weft_future *all;
    weft_cancel_token *t;
    atomic_int cancel_done;
    atomic_long uncancelled;
    atomic_int wait_status;
} many_token;

static int many_token_canceller(weft_ctx *ctx, void *arg) {
    (void)ctx;
    many_token *s = arg;
    atomic_store(&s->wait_status, (int)weft_future_wait(s->all));
    if (weft_cancel_attach(s->t, s->all) == WEFT_OK) (void)weft_cancel_token_cancel_with(s->t, "stop the set");
    atomic_store(&s->cancel_done, 1);
    return 0;
}

static int many_token_member(weft_ctx *ctx, void *arg) {
    many_token *s = arg;
    if (atomic_load(&s->cancel_done) && !weft_ctx_cancelled(ctx))
        atomic_fetch_add_explicit(&s->uncancelled, 1, memory_order_relaxed);
    return 0;
}

TEST(a_token_attached_to_a_run_many_set_by_a_members_task_cancels_every_member_and_its_wait_is_edeadlk) {
    weft_executor *ex = make_ex(2);
    many_token s = {0};
    weft_taskflow *tfs[MANY_BIG + 1];
    tfs[0] = weft_taskflow_create("canceller", NULL);
    ASSERT_NOT_NULL(tfs[0]);
    ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[0], many_token_canceller, &s)));
    for (int i = 1; i <= MANY_BIG; i++) {
        tfs[i] = weft_taskflow_create("member", NULL);
        ASSERT_NOT_NULL(tfs[i]);
        for (int k = 0; k < MANY_TASKS; k++)
            ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[i], many_token_member, &s)));
    }
    for (int round = 0; round < 3; round++) {
        s.t = weft_cancel_token_create(NULL, NULL);
        ASSERT_NOT_NULL(s.t);
        atomic_store(&s.cancel_done, 0);
        atomic_store(&s.wait_status, -1);
        ASSERT_OK(weft_run_many(ex, tfs, MANY_BIG + 1, &s.all));
        ASSERT_EQ(weft_future_wait(s.all), WEFT_ECANCELED);
        ASSERT_STATUS(atomic_load(&s.wait_status), WEFT_EDEADLK);
        ASSERT_EQ(atomic_load(&s.cancel_done), 1);
        weft_future_destroy(s.all);
        weft_cancel_token_destroy(s.t);
        ASSERT_EQ(atomic_load(&s.uncancelled), 0);
    }
    for (int i = 0; i <= MANY_BIG; i++) weft_taskflow_destroy(tfs[i]);
    weft_executor_destroy(ex);
}

/* And weft_run_many_status / _info from a member's task, on members the call
 * has yet to submit: WEFT_EAGAIN (not finished), never WEFT_OK for a member
 * none of whose tasks ran (the table's zeroed status read as WEFT_OK). */

typedef struct {
    weft_future *all;
    atomic_long ran[MANY_BIG + 1];
    atomic_int bad, looked;
} many_status;

typedef struct {
    many_status *s;
    int i;
} many_status_arg;

static int many_status_reader(weft_ctx *ctx, void *arg) {
    (void)ctx;
    many_status *s = ((many_status_arg *)arg)->s;
    for (size_t j = 1; j <= MANY_BIG; j++) {
        weft_status st = weft_run_many_status(s->all, j);
        weft_run_info info;
        weft_status ist = weft_run_many_info(s->all, j, &info);
        long ran = atomic_load(&s->ran[j]);
        if ((st == WEFT_OK || (ist == WEFT_OK && info.status == WEFT_OK)) && ran != MANY_TASKS) {
            fprintf(stderr, "member %zu: status %s, info %s, %ld tasks of %d run\n", j, weft_errname(st),
                    weft_errname(info.status), ran, MANY_TASKS);
            atomic_fetch_add(&s->bad, 1);
        }
        atomic_fetch_add(&s->looked, 1);
    }
    return 0;
}

static int many_status_member(weft_ctx *ctx, void *arg) {
    (void)ctx;
    many_status_arg *a = arg;
    atomic_fetch_add_explicit(&a->s->ran[a->i], 1, memory_order_relaxed);
    return 0;
}

TEST(run_many_status_from_a_members_task_is_never_ok_for_a_member_not_run_yet) {
    weft_executor *ex = make_ex(2);
    many_status *s = calloc(1, sizeof *s);
    ASSERT_NOT_NULL(s);
    many_status_arg args[MANY_BIG + 1];
    weft_taskflow *tfs[MANY_BIG + 1];
    for (int i = 0; i <= MANY_BIG; i++) {
        args[i] = (many_status_arg){s, i};
        tfs[i] = weft_taskflow_create(i ? "member" : "reader", NULL);
        ASSERT_NOT_NULL(tfs[i]);
        for (int k = 0; k < (i ? MANY_TASKS : 1); k++)
            ASSERT_TRUE(!weft_task_is_null(weft_emplace(tfs[i], i ? many_status_member : many_status_reader, &args[i])));
    }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i <= MANY_BIG; i++) atomic_store(&s->ran[i], 0);
        ASSERT_OK(weft_run_many(ex, tfs, MANY_BIG + 1, &s->all));
        ASSERT_OK(weft_future_wait(s->all));
        weft_future_destroy(s->all);
        ASSERT_EQ(atomic_load(&s->bad), 0);
    }
    ASSERT_EQ(atomic_load(&s->looked), 3 * MANY_BIG);
    for (int i = 0; i <= MANY_BIG; i++) weft_taskflow_destroy(tfs[i]);
    free(s);
    weft_executor_destroy(ex);
}

/* ---- 726ae44 / b881f0c: erased slots of a composition's graph retired ------
 * weft_task_erase now retires (never reuses) an erased slot of a
 * composition's graph, and instantiate's copy of an erased task erases it
 * and retires it again: copied into another composition's graph, the second
 * retire popped a free list the first had emptied. */

static int count_run(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add_explicit((atomic_int *)arg, 1, memory_order_relaxed);
    return 0;
}

TEST(a_composition_with_an_erased_task_copies_into_another_compositions_graph) {
    atomic_int ran = 0;
    weft_composition *a = weft_composition_create("a", NULL);
    weft_composition *b = weft_composition_create("b", NULL);
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(b);
    weft_taskflow *ga = weft_composition_graph(a), *gb = weft_composition_graph(b);
    weft_task x = weft_emplace(ga, count_run, &ran);
    weft_task gone = weft_emplace(ga, count_run, &ran);
    weft_task y = weft_emplace(ga, count_run, &ran);
    ASSERT_OK(weft_precede(x, gone));
    ASSERT_OK(weft_precede(gone, y));
    ASSERT_OK(weft_composition_set_entry(a, "in", x));
    ASSERT_OK(weft_composition_set_exit(a, "out", y));
    ASSERT_OK(weft_task_erase(gone));
    /* b's graph: a task erased there first (its slot retired), then a copy. */
    weft_task lone = weft_emplace(gb, count_run, &ran);
    ASSERT_OK(weft_task_erase(lone));
    weft_instance ia;
    ASSERT_OK(weft_composition_instantiate(a, gb, "a", &ia));
    ASSERT_OK(weft_composition_instantiate(a, gb, "a2", &ia));
    ASSERT_OK(weft_composition_set_entry(b, "in", weft_instance_entry(&ia, "in")));
    weft_task z = weft_emplace(gb, count_run, &ran); /* takes no erased slot */
    ASSERT_TRUE(weft_task_index(z) == weft_taskflow_num_tasks(gb) - 1 || !weft_task_is_null(z));
    /* b into a plain taskflow; the copies run x, y twice and z once each. */
    weft_taskflow *tf = weft_taskflow_create("top", NULL);
    ASSERT_NOT_NULL(tf);
    weft_instance ib;
    ASSERT_OK(weft_composition_instantiate(b, tf, NULL, &ib));
    ASSERT_TRUE(!weft_task_is_null(weft_instance_entry(&ib, "in")));
    weft_executor *ex = make_ex(2);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&ran), 5);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_composition_destroy(a));
    ASSERT_OK(weft_composition_destroy(b));
}

/* ---- bb1f630: weft_profile_get refuses a worker of ex (WEFT_EBUSY) ---------
 * An outside thread that submits through a submitter slot (weft_silent_async,
 * weft_async from main) is no worker: it still reads the profile once its
 * tasks ran (observe.h: while no run is in flight). */

static int slow_noop(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    for (volatile int i = 0; i < 2000; i++) {
    }
    return 0;
}

TEST(weft_profile_get_from_a_thread_submitting_through_its_slot_is_not_ebusy) {
    weft_executor *ex = make_ex(2);
    ASSERT_OK(weft_profiler_start(ex));
    weft_taskflow *tf = weft_taskflow_create("p", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_TRUE(!weft_task_is_null(weft_emplace(tf, slow_noop, NULL)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    for (int i = 0; i < 2000; i++) ASSERT_OK(weft_silent_async(ex, slow_noop, NULL));
    ASSERT_OK(weft_executor_wait_all(ex)); /* observe.h: no run in flight */
    weft_profile *p = NULL;
    ASSERT_OK(weft_profile_get(ex, &p));
    ASSERT_NOT_NULL(p);
    weft_profile_free(p);
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
