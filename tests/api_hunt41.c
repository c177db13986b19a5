/* Session 41: the contracts of weft/core.h, graph.h, flow.h, async.h and
 * forkjoin.h, call by call: each documented error produced by a call, and the
 * thread's message (docs/errors.md, R3) naming the call that failed and the
 * task or parameter it failed on, never a family's internal helper, an empty
 * name, or a message that replaced the detail of the failure.  Each test
 * below pins a shape the sweep found broken. */
#include "harness.h"

#include "counting_alloc.h"

#include <weft.h>

#include <stdio.h>
#include <string.h>

static int work(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}
static int cond(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    return 0;
}

/* A message of another call's failure, so that a call which sets none is
 * seen (as tests/api_hunt35.c). */
static char sentinel[256];
static void set_sentinel(void) {
    weft_status st = WEFT_OK;
    ASSERT_NULL(weft_semaphore_create(0, &st));
    ASSERT_STATUS(st, WEFT_EINVAL);
    snprintf(sentinel, sizeof sentinel, "%s", weft_last_error_message());
}
/* The message is the call's own: set since the sentinel, naming `fn` (and
 * `detail`, if given). */
static bool message_is(const char *fn, const char *detail) {
    const char *m = weft_last_error_message();
    bool ok = strcmp(m, sentinel) != 0 && (!fn || strstr(m, fn)) && (!detail || strstr(m, detail));
    if (!ok)
        fprintf(stderr, "  want \"%s\"%s%s, got \"%s\"\n", fn ? fn : "", detail ? " ... " : "", detail ? detail : "", m);
    return ok;
}

/* ---- weft_params_get_* ---------------------------------------------------- */

TEST(a_params_get_given_a_null_set_or_name_names_the_getter_that_was_called) {
    weft_status st;
    weft_params *p = weft_params_create(&st);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(weft_params_set_int(p, "n", 1));
    int64_t i;
    double d;
    const char *s;
    bool b;
    int bad = 0;
    set_sentinel();
    ASSERT_STATUS(weft_params_get_int(NULL, "n", &i), WEFT_EINVAL);
    bad += !message_is("weft_params_get_int", "NULL");
    set_sentinel();
    ASSERT_STATUS(weft_params_get_float(p, NULL, &d), WEFT_EINVAL);
    bad += !message_is("weft_params_get_float", "NULL");
    set_sentinel();
    ASSERT_STATUS(weft_params_get_string(NULL, "n", &s), WEFT_EINVAL);
    bad += !message_is("weft_params_get_string", "NULL");
    set_sentinel();
    ASSERT_STATUS(weft_params_get_bool(p, NULL, &b), WEFT_EINVAL);
    bad += !message_is("weft_params_get_bool", "NULL");
    /* The deprecated per-set message says the same. */
    ASSERT_TRUE(strstr(weft_params_error_message(p), "weft_params_get_bool") != NULL);
    ASSERT_EQ(bad, 0);
    weft_params_destroy(p);
}

TEST(a_params_get_with_a_null_out_is_reported_by_the_sets_deprecated_message_too) {
    weft_status st;
    weft_params *p = weft_params_create(&st);
    ASSERT_NOT_NULL(p);
    ASSERT_OK(weft_params_set_int(p, "n", 1));
    int64_t i;
    ASSERT_OK(weft_params_get_int(p, "n", &i)); /* a success: "" */
    ASSERT_STREQ(weft_params_error_message(p), "");
    set_sentinel();
    ASSERT_STATUS(weft_params_get_int(p, "n", NULL), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_params_get_int", "out is NULL"));
    /* "If the calling thread's most recent get failed, its message". */
    ASSERT_TRUE(strstr(weft_params_error_message(p), "out is NULL") != NULL);
    weft_params_destroy(p);
}

/* ---- weft_subflow_join --------------------------------------------------- */

static char join_msg[256];
static weft_status join_st;
static int cyclic_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task x = weft_emplace(g, work, NULL), y = weft_emplace(g, work, NULL);
    weft_task_set_name(x, "x");
    weft_task_set_name(y, "y");
    weft_precede(x, y);
    weft_precede(y, x);
    set_sentinel();
    join_st = weft_subflow_join(sf);
    snprintf(join_msg, sizeof join_msg, "%s", weft_last_error_message());
    return 0;
}

TEST(a_subflow_join_refusing_a_strong_cycle_says_which_task_is_on_it) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("tf", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, cyclic_subflow, NULL)));
    ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
    ASSERT_STATUS(join_st, WEFT_ECYCLE);
    /* As weft_run and weft_taskflow_validate say it (R3: the detail of a
     * cycle, never replaced on the way out). */
    if (!strstr(join_msg, "cycle through task 'x'") && !strstr(join_msg, "cycle through task 'y'"))
        TEST_FAIL_("join's message names no task on the cycle: \"%s\"", join_msg);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- builders on an erased task, a NULL semaphore, an unnamed task -------- */

TEST(every_builder_refusing_an_erased_task_names_itself) {
    weft_taskflow *tf = weft_taskflow_create("tf", NULL);
    ASSERT_NOT_NULL(tf);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(s);
    weft_task a = weft_emplace(tf, work, NULL), e = weft_emplace(tf, work, NULL);
    ASSERT_OK(weft_task_erase(e));
    int bad = 0;
#define ERASED(call, fn)                                                                     \
    do {                                                                                     \
        set_sentinel();                                                                      \
        weft_status st_ = (call);                                                            \
        if (st_ != WEFT_EINVAL || !message_is(fn, "erased"))                                 \
            fprintf(stderr, "  %s: %s\n", fn, weft_errname(st_)), bad++;                     \
        if (weft_taskflow_last_error(tf) != WEFT_EINVAL) fprintf(stderr, "  %s: last_error\n", fn), bad++; \
    } while (0)
    ERASED(weft_task_erase(e), "weft_task_erase");
    ERASED(weft_task_remove_successors(e), "weft_task_remove_successors");
    ERASED(weft_task_remove_dependents(e), "weft_task_remove_dependents");
    ERASED(weft_edge_remove(a, e), "weft_edge_remove");
    ERASED(weft_task_acquire(e, s), "weft_task_acquire");
    ERASED(weft_task_release(e, s), "weft_task_release");
    ERASED(weft_task_set_priority(e, WEFT_PRIORITY_HIGH), "weft_task_set_priority");
#undef ERASED
    /* A NULL semaphore: the call made, not "weft_task_acquire/release". */
    set_sentinel();
    ASSERT_STATUS(weft_task_release(a, NULL), WEFT_EINVAL);
    if (!message_is("weft_task_release: ", "NULL")) bad++;
    set_sentinel();
    ASSERT_STATUS(weft_task_acquire(a, NULL), WEFT_EINVAL);
    if (!message_is("weft_task_acquire: ", "NULL")) bad++;
    ASSERT_EQ(bad, 0);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_semaphore_destroy(s));
}

TEST(refusing_work_for_an_unnamed_task_names_it_by_its_index) {
    weft_taskflow *tf = weft_taskflow_create("tf", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, work, NULL)));
    weft_task c = weft_emplace_condition(tf, cond, NULL); /* index 1, unnamed */
    ASSERT_FALSE(weft_task_is_null(c));
    weft_work *w = weft_work_create(work, NULL, NULL, NULL);
    ASSERT_NOT_NULL(w);
    /* graph.h: "unnamed tasks are reported as "#<index>"" (not ''). */
    set_sentinel();
    ASSERT_STATUS(weft_task_set_work(c, work, NULL), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_task_set_work", "task '#1'"));
    set_sentinel();
    ASSERT_STATUS(weft_task_set_shared_work(c, w), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_task_set_shared_work", "task '#1'"));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_work_release(w);
}

TEST(run_n_parallel_refusing_a_task_with_a_semaphore_names_the_task) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("tf", NULL);
    ASSERT_NOT_NULL(tf);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(s);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, work, NULL)));
    weft_task t = weft_emplace(tf, work, NULL);
    ASSERT_OK(weft_task_set_name(t, "guarded"));
    ASSERT_OK(weft_task_acquire(t, s));
    weft_future *f = (weft_future *)&f;
    set_sentinel();
    /* graph.h: "a task with a semaphore, gives WEFT_EINVAL
     * (weft_last_error_message names it)". */
    ASSERT_STATUS(weft_run_n_parallel(ex, tf, 2, &f), WEFT_EINVAL);
    ASSERT_NULL(f);
    ASSERT_TRUE(message_is("weft_run_n_parallel", "'guarded'"));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_executor_destroy(ex);
}

/* ---- builders out of memory ----------------------------------------------- */

static weft_task oom_tasks[80];
enum { OOM_N = 80 };
static weft_taskflow *oom_tf;
static weft_semaphore *oom_sem;
static void oom_fresh(void) {
    if (oom_tf) ASSERT_OK(weft_taskflow_destroy(oom_tf));
    oom_tf = weft_taskflow_create("oomtf", NULL);
    ASSERT_NOT_NULL(oom_tf);
    for (int i = 0; i < OOM_N; i++) ASSERT_FALSE(weft_task_is_null(oom_tasks[i] = weft_emplace(oom_tf, work, NULL)));
}
static weft_status b_precede_many(void) { return weft_precede_many(oom_tasks[0], oom_tasks + 1, OOM_N - 1); }
static weft_status b_precede(void) {
    for (int i = 1; i < OOM_N; i++) {
        weft_status st = weft_precede(oom_tasks[0], oom_tasks[i]);
        if (st) return st;
    }
    return WEFT_OK;
}
static weft_status b_succeed_many(void) {
    /* Each predecessor's successor array grows from its inline room. */
    for (int k = 0; k < 8; k++) {
        weft_status st = weft_succeed_many(oom_tasks[40 + k], oom_tasks, 40);
        if (st) return st;
    }
    return WEFT_OK;
}
static weft_status b_task_set_name(void) { return weft_task_set_name(oom_tasks[0], "a name"); }
static weft_status b_taskflow_set_name(void) { return weft_taskflow_set_name(oom_tf, "a name"); }
static weft_status b_task_acquire(void) { return weft_task_acquire(oom_tasks[0], oom_sem); }
static weft_status b_task_release(void) { return weft_task_release(oom_tasks[0], oom_sem); }

TEST(a_builder_out_of_memory_names_itself_and_records_the_status_on_its_taskflow) {
    static const struct {
        const char *fn;
        weft_status (*call)(void);
    } rows[] = {
        {"weft_precede_many", b_precede_many},   {"weft_precede", b_precede},
        {"weft_succeed_many", b_succeed_many},   {"weft_task_set_name", b_task_set_name},
        {"weft_taskflow_set_name", b_taskflow_set_name}, {"weft_task_acquire", b_task_acquire},
        {"weft_task_release", b_task_release},
    };
    weft_set_allocator(&counting);
    oom_sem = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(oom_sem);
    int bad = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int enomem = 0;
        for (long k = 1; k < 400; k++) {
            oom_fresh();
            set_sentinel();
            fail_allocation(k);
            weft_status st = rows[r].call();
            long failures = atomic_load(&A.failures);
            fail_allocation(0);
            if (failures == 0) break; /* every allocation of the call passed */
            if (st != WEFT_ENOMEM) continue;
            enomem++;
            /* R3: "<function>: " and the status's sentence at least. */
            if (!message_is(rows[r].fn, "out of memory") || weft_taskflow_last_error(oom_tf) != WEFT_ENOMEM)
                fprintf(stderr, "  row %s, allocation %ld\n", rows[r].fn, k), bad++;
        }
        if (enomem == 0) fprintf(stderr, "  row %s never ran out of memory\n", rows[r].fn), bad++;
    }
    ASSERT_OK(weft_taskflow_destroy(oom_tf));
    oom_tf = NULL;
    ASSERT_OK(weft_semaphore_destroy(oom_sem));
    weft_set_allocator(NULL);
    ASSERT_EQ(bad, 0);
}

/* ---- compositions and owned graphs ---------------------------------------- */

static int keep_graph(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    weft_taskflow *g = weft_subflow_graph(sf);
    set_sentinel();
    *(bool *)arg = weft_taskflow_destroy(g) == WEFT_EINVAL && message_is("weft_taskflow_destroy", "subflow");
    return 0;
}

TEST(composition_and_owned_graph_refusals_name_the_call_that_was_made) {
    weft_composition *c = weft_composition_create("comp", NULL);
    ASSERT_NOT_NULL(c);
    weft_taskflow *tf = weft_taskflow_create("tf", NULL);
    ASSERT_NOT_NULL(tf);
    weft_task foreign = weft_emplace(tf, work, NULL);
    ASSERT_FALSE(weft_task_is_null(foreign));
    ASSERT_FALSE(weft_task_is_null(weft_emplace(weft_composition_graph(c), work, NULL)));
    set_sentinel();
    ASSERT_STATUS(weft_composition_set_entry(c, "in", foreign), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_composition_set_entry", "comp"));
    set_sentinel();
    ASSERT_STATUS(weft_composition_set_exit(c, "out", foreign), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_composition_set_exit", "comp"));
    weft_instance in;
    set_sentinel();
    ASSERT_STATUS(weft_composition_instantiate(c, weft_composition_graph(c), NULL, &in), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_composition_instantiate", NULL));
    set_sentinel();
    ASSERT_STATUS(weft_taskflow_destroy(weft_composition_graph(c)), WEFT_EINVAL);
    ASSERT_TRUE(message_is("weft_taskflow_destroy", "composition"));
    /* A subflow's graph, from inside its task. */
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, NULL);
    ASSERT_NOT_NULL(ex);
    bool refused = false;
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, keep_graph, &refused)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_TRUE(refused);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_composition_destroy(c);
}

TEST(a_composition_copy_running_out_of_memory_names_weft_composition_instantiate) {
    weft_set_allocator(&counting);
    weft_composition *c = weft_composition_create("comp", NULL);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_NOT_NULL(s);
    /* Enough tasks and edges that the copy grows the slab, the sources and
     * the successor arrays; names (prefixed), a semaphore, a priority. */
    weft_task t[40];
    for (int i = 0; i < 40; i++) {
        t[i] = weft_emplace(g, work, NULL);
        ASSERT_FALSE(weft_task_is_null(t[i]));
        ASSERT_OK(weft_task_set_name(t[i], "step"));
        if (i) ASSERT_OK(weft_precede_many(t[0], &t[i], 1));
    }
    ASSERT_OK(weft_task_acquire(t[1], s));
    ASSERT_OK(weft_task_release(t[2], s));
    ASSERT_OK(weft_task_set_priority(t[3], WEFT_PRIORITY_HIGH));
    int enomem = 0, bad = 0;
    for (long k = 1; k < 1000; k++) {
        weft_taskflow *dst = weft_taskflow_create("dst", NULL);
        ASSERT_NOT_NULL(dst);
        weft_instance in;
        set_sentinel();
        fail_allocation(k);
        weft_status st = weft_composition_instantiate(c, dst, "copy", &in);
        long failures = atomic_load(&A.failures);
        fail_allocation(0);
        if (st == WEFT_ENOMEM) {
            enomem++;
            if (!message_is("weft_composition_instantiate", "out of memory") ||
                weft_taskflow_last_error(dst) != WEFT_ENOMEM)
                fprintf(stderr, "  allocation %ld\n", k), bad++;
        } else {
            ASSERT_OK(st);
        }
        ASSERT_OK(weft_taskflow_destroy(dst));
        if (failures == 0) break;
    }
    weft_composition_destroy(c);
    ASSERT_OK(weft_semaphore_destroy(s));
    weft_set_allocator(NULL);
    ASSERT_GT(enomem, 2);
    ASSERT_EQ(bad, 0);
}

/* ---- every call that adds a task, out of memory --------------------------- */

static weft_taskflow *add_body;
static weft_work *add_work;
static weft_pipeline *add_pipe;
static int add_data[4], add_result;
static void add_range(size_t lo, size_t hi, void *arg) { (void)lo, (void)hi, (void)arg; }
static void add_index(size_t i, void *arg) { (void)i, (void)arg; }
static int add_mcond(weft_ctx *ctx, void *arg, weft_branches *b) {
    (void)ctx, (void)arg, (void)b;
    return 0;
}
static int add_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx, (void)sf, (void)arg;
    return 0;
}
static int add_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    return weft_pipeflow_stop(pf);
}
static void add_combine(void *acc, const void *x, void *arg) { (void)acc, (void)x, (void)arg; }
static weft_for_desc add_for = {.first = 0, .last = 4, .step = 1, .body = add_range};
static weft_reduce_desc add_reduce = {.in = add_data, .n = 4, .size = 4, .result = &add_result, .op = add_combine};
static weft_task a_emplace(weft_taskflow *tf) { return weft_emplace(tf, work, NULL); }
static weft_task a_placeholder(weft_taskflow *tf) { return weft_placeholder(tf); }
static weft_task a_condition(weft_taskflow *tf) { return weft_emplace_condition(tf, cond, NULL); }
static weft_task a_multi(weft_taskflow *tf) { return weft_emplace_multi_condition(tf, add_mcond, NULL); }
static weft_task a_subflow(weft_taskflow *tf) { return weft_emplace_subflow(tf, add_subflow, NULL); }
static weft_task a_module(weft_taskflow *tf) { return weft_emplace_module(tf, add_body); }
static weft_task a_work(weft_taskflow *tf) { return weft_emplace_work(tf, add_work); }
static weft_task a_pipeline(weft_taskflow *tf) { return weft_pipeline_emplace(tf, add_pipe); }
static weft_task a_for(weft_taskflow *tf) { return weft_emplace_for(tf, &add_for); }
static weft_task a_reduce(weft_taskflow *tf) { return weft_emplace_reduce(tf, &add_reduce); }

TEST(every_call_adding_a_task_names_itself_when_memory_runs_out) {
    static const struct {
        const char *fn;
        weft_task (*call)(weft_taskflow *tf);
    } rows[] = {
        {"weft_emplace", a_emplace},
        {"weft_placeholder", a_placeholder},
        {"weft_emplace_condition", a_condition},
        {"weft_emplace_multi_condition", a_multi},
        {"weft_emplace_subflow", a_subflow},
        {"weft_emplace_module", a_module},
        {"weft_emplace_work", a_work},
        {"weft_pipeline_emplace", a_pipeline},
        {"weft_emplace_for", a_for},
        {"weft_emplace_reduce", a_reduce},
    };
    weft_set_allocator(&counting);
    weft_status st;
    add_body = weft_taskflow_create("body", &st);
    ASSERT_NOT_NULL(add_body);
    add_work = weft_work_create(work, NULL, NULL, &st);
    ASSERT_NOT_NULL(add_work);
    add_pipe = weft_pipeline_create(1, (weft_stage[]){{.fn = add_stage}}, 1, &st);
    ASSERT_NOT_NULL(add_pipe);
    (void)add_index;
    int bad = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int enomem = 0;
        for (long k = 1; k < 100; k++) {
            weft_taskflow *tf = weft_taskflow_create("tf", &st); /* empty: the first task allocates */
            ASSERT_NOT_NULL(tf);
            set_sentinel();
            fail_allocation(k);
            weft_task t = rows[r].call(tf);
            long failures = atomic_load(&A.failures);
            fail_allocation(0);
            if (weft_task_is_null(t)) {
                ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
                enomem++;
                if (!message_is(rows[r].fn, "out of memory")) fprintf(stderr, "  row %s, allocation %ld\n", rows[r].fn, k), bad++;
            }
            ASSERT_OK(weft_taskflow_destroy(tf));
            if (failures == 0) break;
        }
        if (enomem == 0) fprintf(stderr, "  row %s never ran out of memory\n", rows[r].fn), bad++;
    }
    ASSERT_OK(weft_pipeline_destroy(add_pipe));
    weft_work_release(add_work);
    ASSERT_OK(weft_taskflow_destroy(add_body));
    weft_set_allocator(NULL);
    ASSERT_EQ(bad, 0);
}

TEST(a_module_refused_for_want_of_memory_leaves_nothing_behind_once_its_taskflow_is_destroyed) {
    weft_set_allocator(&counting);
    weft_taskflow *body = weft_taskflow_create("body", NULL);
    ASSERT_NOT_NULL(body);
    int refused = 0;
    for (long k = 1; k < 50; k++) {
        long long before = atomic_load(&A.outstanding);
        weft_taskflow *tf = weft_taskflow_create("tf", NULL); /* no module yet: the first one allocates its table */
        ASSERT_NOT_NULL(tf);
        fail_allocation(k);
        weft_task t = weft_emplace_module(tf, body);
        long failures = atomic_load(&A.failures);
        fail_allocation(0);
        refused += weft_task_is_null(t);
        ASSERT_OK(weft_taskflow_destroy(tf));
        if (atomic_load(&A.outstanding) != before)
            TEST_FAIL_("allocation %ld failed: %lld bytes still held after the destroy", k,
                       (long long)(atomic_load(&A.outstanding) - before));
        if (failures == 0) break;
    }
    ASSERT_GT(refused, 1);
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_set_allocator(NULL);
}
