/* Session 45's hunt in cancellation, deadlines and failure across every kind
 * of work (pass 3): the reason a token gives reaching the tasks of graphs
 * nested in a run, failures and cancels of each kind of work reported
 * exactly as the headers say, token trees changed on other threads while
 * they are cancelled, callbacks that submit work or drop their token, and
 * resets racing cancels. */
#include "cancel_test.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- a token's reason reaches every kind of work of the run it stops --------- */

/* What one task saw once its run was cancelled. */
typedef struct probe {
    atomic_int started, finished;
    weft_status st;  /* weft_ctx_check after the cancel */
    bool cancelled;  /* weft_ctx_cancelled after the cancel */
    char reason[WEFT_CANCEL_REASON_MAX];
    char message[WEFT_CANCEL_REASON_MAX];
    atomic_int *read_after; /* if not NULL: once stopped, wait for it to be set before reading */
} probe;

/* Waits (polling its context) until the run is stopped, then records what it
 * sees.  ctx may be weft_current_ctx() for callbacks that are not tasks. */
static void probe_wait(weft_ctx *ctx, probe *p) {
    atomic_fetch_add(&p->started, 1);
    double until = now_s() + 10;
    while (weft_ctx_check_and_yield(ctx) == WEFT_OK && now_s() < until) {
    }
    if (p->read_after) (void)wait_flag(p->read_after, 1, 10);
    p->st = weft_ctx_check(ctx);
    p->cancelled = weft_ctx_cancelled(ctx);
    snprintf(p->reason, sizeof p->reason, "%s", weft_ctx_cancel_reason(ctx));
    snprintf(p->message, sizeof p->message, "%s", weft_last_error_message());
    atomic_fetch_add(&p->finished, 1);
}

static int probe_task(weft_ctx *ctx, void *arg) {
    probe_wait(ctx, arg);
    return 0;
}

static void expect_probe(const char *kind, probe *p, const char *reason) {
    if (atomic_load(&p->finished) != 1) TEST_FAIL_("%s: the probe finished %d times", kind, atomic_load(&p->finished));
    if (!reason) { /* a sibling failed: no cancellation, no reason */
        if (p->st != WEFT_ETASK || !p->cancelled)
            TEST_FAIL_("%s: weft_ctx_check gave %s after a sibling failed, cancelled %d", kind, weft_errname(p->st),
                       p->cancelled);
        if (strcmp(p->reason, "") != 0) TEST_FAIL_("%s: a failure gave the reason \"%s\"", kind, p->reason);
        return;
    }
    if (p->st != WEFT_ECANCELED || !p->cancelled)
        TEST_FAIL_("%s: weft_ctx_check gave %s, cancelled %d", kind, weft_errname(p->st), p->cancelled);
    if (strcmp(p->reason, reason) != 0)
        TEST_FAIL_("%s: weft_ctx_cancel_reason gave \"%s\", want \"%s\"", kind, p->reason, reason);
    if (strcmp(p->message, reason) != 0)
        TEST_FAIL_("%s: weft_last_error_message gave \"%s\", want \"%s\"", kind, p->message, reason);
}

static int probe_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    weft_task t = weft_emplace(weft_subflow_graph(sf), probe_task, arg);
    return weft_task_is_null(t) ? 1 : 0;
}

static int probe_subflow_joined(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    if (probe_subflow(ctx, sf, arg) != 0) return 1;
    (void)weft_subflow_join(sf);
    return 0;
}

static int probe_subflow_detached(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    if (probe_subflow(ctx, sf, arg) != 0) return 1;
    return weft_subflow_detach(sf) == WEFT_OK ? 0 : 1;
}

static int probe_spawner(weft_ctx *ctx, void *arg) {
    if (weft_spawn(ctx, probe_task, arg) != WEFT_OK) return 1;
    (void)weft_sync(ctx);
    return 0;
}

static int probe_cond(weft_ctx *ctx, void *arg) {
    probe_wait(ctx, arg);
    return 0;
}

static int probe_stage(weft_pipeflow *pf, void *arg) {
    if (weft_pipeflow_token(pf) > 0) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 1;
    probe_wait(weft_current_ctx(), arg);
    return 0;
}

static void probe_range(size_t lo, size_t hi, void *arg) {
    (void)lo, (void)hi;
    probe_wait(weft_current_ctx(), arg);
}

static void probe_index(size_t i, void *arg) {
    (void)i;
    probe_wait(weft_current_ctx(), arg);
}

static int probe_direct_for(weft_ctx *ctx, void *arg) {
    (void)ctx;
    weft_status st = weft_parallel_for(weft_ctx_executor(ctx), 0, 1, 1, probe_index, arg, NULL);
    return st == WEFT_OK ? 0 : 1;
}

enum probe_kind {
    PK_PLAIN, PK_MODULE, PK_MODULE2, PK_SUBFLOW, PK_SUBFLOW_JOIN, PK_SUBFLOW_DETACH, PK_SPAWN, PK_COND,
    PK_PIPELINE, PK_EMPLACED_FOR, PK_DIRECT_FOR, PK_COUNT
};
static const char *const probe_kind_name[PK_COUNT] = {
    "plain task", "module body task", "task of a module of a module", "subflow task", "joined subflow task",
    "detached subflow task", "fork-join child", "condition task", "pipeline stage", "emplaced loop body",
    "loop body called from a task"};

/* A source task beside the probe that fails once the probe waits. */
static int fail_once_probe_waits(weft_ctx *ctx, void *arg) {
    (void)ctx;
    probe *p = arg;
    if (!wait_flag(&p->started, 1, 10)) return 99;
    return 5;
}

/* Runs kind k with a token attached, cancels it with `reason` once the probe
 * waits (reason NULL: a sibling task fails instead), and checks what the
 * probe saw. */
static void reason_reaches(weft_executor *ex, enum probe_kind k, const char *reason) {
    probe p;
    memset(&p, 0, sizeof p);
    weft_taskflow *tf = make_taskflow("outer"), *body = make_taskflow("body"), *body2 = make_taskflow("body2");
    weft_pipeline *pl = NULL;
    weft_for_desc d = {.first = 0, .last = 1, .step = 1, .body = probe_range, .arg = &p}; /* outlives the run */
    switch (k) {
    case PK_PLAIN: must_emplace(tf, probe_task, &p); break;
    case PK_MODULE:
        must_emplace(body, probe_task, &p);
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(tf, body)));
        break;
    case PK_MODULE2:
        must_emplace(body2, probe_task, &p);
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(body, body2)));
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(tf, body)));
        break;
    case PK_SUBFLOW: ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, probe_subflow, &p))); break;
    case PK_SUBFLOW_JOIN: ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, probe_subflow_joined, &p))); break;
    case PK_SUBFLOW_DETACH:
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, probe_subflow_detached, &p)));
        break;
    case PK_SPAWN: must_emplace(tf, probe_spawner, &p); break;
    case PK_COND: {
        weft_task c = weft_emplace_condition(tf, probe_cond, &p);
        ASSERT_FALSE(weft_task_is_null(c));
        ASSERT_OK(weft_precede(c, must_emplace(tf, noop, NULL)));
        break;
    }
    case PK_PIPELINE: {
        weft_stage st = {.kind = WEFT_STAGE_SERIAL, .fn = probe_stage, .arg = &p, .name = "probe"};
        weft_status err;
        pl = weft_pipeline_create(2, &st, 1, &err);
        ASSERT_NOT_NULL(pl);
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
        break;
    }
    case PK_EMPLACED_FOR: ASSERT_FALSE(weft_task_is_null(weft_emplace_for(tf, &d))); break;
    case PK_DIRECT_FOR: must_emplace(tf, probe_direct_for, &p); break;
    default: break;
    }
    if (!reason) ASSERT_OK(weft_task_set_name(must_emplace(tf, fail_once_probe_waits, &p), "sibling"));
    weft_cancel_token *t = new_token();
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_cancel_attach(t, f));
    if (!wait_flag(&p.started, 1, 10)) TEST_FAIL_("%s: the probe never started", probe_kind_name[k]);
    if (reason) ASSERT_OK(weft_cancel_token_cancel_with(t, reason));
    weft_status st = weft_future_wait(f);
    if (st != (reason ? WEFT_ECANCELED : WEFT_ETASK))
        TEST_FAIL_("%s: the run gave %s", probe_kind_name[k], weft_errname(st));
    expect_probe(probe_kind_name[k], &p, reason);
    if (!reason) {
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_EQ(info.task_code, 5);
        ASSERT_STREQ(info.failed_task, "sibling");
    }
    weft_future_destroy(f);
    weft_cancel_token_destroy(t);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_taskflow_destroy(body2));
    if (pl) ASSERT_OK(weft_pipeline_destroy(pl));
}

TEST(a_tokens_reason_reaches_the_tasks_of_every_graph_nested_in_the_run_it_cancels) {
    watchdog_start(60);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        for (int k = 0; k < PK_COUNT; k++) reason_reaches(ex, (enum probe_kind)k, "stopped by the test");
        weft_executor_destroy(ex);
    }
    watchdog_stop();
}

TEST(a_sibling_failing_reaches_the_tasks_of_every_graph_nested_in_the_run_as_etask_without_a_reason) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    for (int k = 0; k < PK_COUNT; k++) reason_reaches(ex, (enum probe_kind)k, NULL);
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* Stages and loop chunks that run on the other worker, in a context of the
 * run whose task is the null task, find the reason too. */
static probe spread_probes[2];

static int spread_first(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) >= 2) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 1;
    return 0;
}

static int spread_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    probe_wait(weft_current_ctx(), &spread_probes[weft_pipeflow_token(pf) % 2]);
    return 0;
}

static void spread_body(size_t lo, size_t hi, void *arg) {
    (void)hi, (void)arg;
    probe_wait(weft_current_ctx(), &spread_probes[lo % 2]);
}

TEST(a_tokens_reason_reaches_pipeline_stages_and_loop_chunks_on_every_worker) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    for (int kind = 0; kind < 2; kind++) {
        memset(spread_probes, 0, sizeof spread_probes);
        weft_taskflow *tf = make_taskflow("spread");
        weft_stage stages[2] = {{.kind = WEFT_STAGE_SERIAL, .fn = spread_first},
                                {.kind = WEFT_STAGE_PARALLEL, .fn = spread_stage}};
        weft_status err;
        weft_pipeline *pl = NULL;
        weft_for_desc d = {.first = 0, .last = 2, .step = 1, .body = spread_body,
                           .config = {.partitioner = WEFT_PARTITION_STATIC, .chunk = 1}};
        if (kind == 0) {
            pl = weft_pipeline_create(2, stages, 2, &err);
            ASSERT_NOT_NULL(pl);
            ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
        } else {
            ASSERT_FALSE(weft_task_is_null(weft_emplace_for(tf, &d)));
        }
        weft_cancel_token *t = new_token();
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_cancel_attach(t, f));
        ASSERT_TRUE(wait_flag(&spread_probes[0].started, 1, 10));
        ASSERT_TRUE(wait_flag(&spread_probes[1].started, 1, 10));
        ASSERT_OK(weft_cancel_token_cancel_with(t, "spread out"));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        expect_probe(kind ? "loop chunk 0" : "stage of token 0", &spread_probes[0], "spread out");
        expect_probe(kind ? "loop chunk 1" : "stage of token 1", &spread_probes[1], "spread out");
        weft_future_destroy(f);
        weft_cancel_token_destroy(t);
        ASSERT_OK(weft_taskflow_destroy(tf));
        if (pl) ASSERT_OK(weft_pipeline_destroy(pl));
    }
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* The same for the work that is not a graph's: async tasks of every form,
 * fork-join roots, a run at a priority, instances of a parallel run. */
enum async_kind { AK_ASYNC, AK_ASYNC_HIGH, AK_DEPENDENT, AK_ACQUIRE, AK_ASYNC_SPAWN, AK_ROOT, AK_ROOT_SPAWN,
                  AK_RUN_HIGH, AK_RUN_PARALLEL, AK_COUNT };
static const char *const async_kind_name[AK_COUNT] = {
    "async task", "async task at HIGH", "dependent async task", "async task holding a semaphore",
    "fork-join child of an async task", "fork-join root", "fork-join child of a root", "task of a run at HIGH",
    "instance of a parallel run"};

typedef struct root_call {
    weft_executor *ex;
    weft_cancel_token *t;
    weft_task_fn fn;
    probe *p;
    weft_status st;
    int result;
} root_call;

static void *root_thread(void *arg) {
    root_call *rc = arg;
    rc->st = weft_run_root_with_token(rc->ex, rc->t, rc->fn, rc->p, &rc->result);
    return NULL;
}

static void reason_reaches_other_work(weft_executor *ex, enum async_kind k, const char *reason) {
    probe p;
    memset(&p, 0, sizeof p);
    weft_cancel_token *t = new_token();
    weft_future *f = NULL, *dep = NULL;
    weft_semaphore *sem = NULL;
    weft_taskflow *tf = NULL;
    pthread_t th;
    root_call rc = {ex, t, k == AK_ROOT ? probe_task : probe_spawner, &p, WEFT_EAGAIN, -1};
    switch (k) {
    case AK_ASYNC: ASSERT_OK(weft_async(ex, probe_task, &p, &f)); break;
    case AK_ASYNC_HIGH: {
        weft_async_options o = {.priority = WEFT_PRIORITY_HIGH};
        ASSERT_OK(weft_async_with(ex, probe_task, &p, &o, &f));
        break;
    }
    case AK_DEPENDENT:
        ASSERT_OK(weft_async(ex, noop, NULL, &dep));
        ASSERT_OK(weft_dependent_async(ex, probe_task, &p, &dep, 1, &f));
        break;
    case AK_ACQUIRE: {
        weft_status err;
        sem = weft_semaphore_create(1, &err);
        ASSERT_NOT_NULL(sem);
        ASSERT_OK(weft_async_acquire(ex, probe_task, &p, &sem, 1, &f));
        break;
    }
    case AK_ASYNC_SPAWN: ASSERT_OK(weft_async(ex, probe_spawner, &p, &f)); break;
    case AK_ROOT:
    case AK_ROOT_SPAWN: ASSERT_EQ(pthread_create(&th, NULL, root_thread, &rc), 0); break;
    case AK_RUN_HIGH:
        tf = make_taskflow("high");
        must_emplace(tf, probe_task, &p);
        ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_HIGH, &f));
        break;
    case AK_RUN_PARALLEL:
        tf = make_taskflow("parallel");
        must_emplace(tf, probe_task, &p);
        ASSERT_OK(weft_run_n_parallel(ex, tf, 1, &f));
        break;
    default: break;
    }
    if (f) ASSERT_OK(weft_cancel_attach(t, f));
    if (!wait_flag(&p.started, 1, 10)) TEST_FAIL_("%s: the probe never started", async_kind_name[k]);
    ASSERT_OK(weft_cancel_token_cancel_with(t, reason));
    if (f) {
        weft_status st = weft_future_wait(f);
        if (st != WEFT_ECANCELED) TEST_FAIL_("%s: the future gave %s", async_kind_name[k], weft_errname(st));
    } else {
        pthread_join(th, NULL);
        if (rc.st != WEFT_ECANCELED || rc.result != 0)
            TEST_FAIL_("%s: the root gave %s, result %d", async_kind_name[k], weft_errname(rc.st), rc.result);
    }
    expect_probe(async_kind_name[k], &p, reason);
    weft_future_destroy(f);
    weft_future_destroy(dep);
    weft_cancel_token_destroy(t);
    if (sem) ASSERT_OK(weft_semaphore_destroy(sem));
    if (tf) ASSERT_OK(weft_taskflow_destroy(tf));
}

TEST(a_tokens_reason_reaches_async_tasks_roots_and_runs_at_a_priority_or_in_parallel) {
    watchdog_start(60);
    for (unsigned workers = 1; workers <= 2; workers++) {
        weft_executor *ex = make_executor(workers);
        for (int k = 0; k < AK_COUNT; k++) reason_reaches_other_work(ex, (enum async_kind)k, "out of time");
        weft_executor_destroy(ex);
    }
    watchdog_stop();
}

/* ---- token trees changed on other threads while they are cancelled ----------- */

enum { TREE_THREADS = 2, TREE_CHILDREN = 2000 };

typedef struct tree_child {
    atomic_int runs;     /* its callback's calls */
    int removed;         /* what weft_cancel_callback_remove said: 1 not run, 0 ran */
    bool created_after;  /* made after the root's cancel had returned */
    bool cancelled_at_create, reason_ok;
} tree_child;

typedef struct tree_ctx {
    weft_cancel_token *root;
    atomic_int cancelled; /* the root's cancel has returned */
    atomic_int go;
    atomic_int progress; /* threads past the cut */
    int cut;             /* the child after which the root may be cancelled */
    tree_child kids[TREE_THREADS][TREE_CHILDREN];
} tree_ctx;

static void tree_cb(void *arg, const char *reason) {
    (void)reason;
    atomic_fetch_add((atomic_int *)arg, 1);
}

typedef struct tree_arg {
    tree_ctx *c;
    int id;
} tree_arg;

static void *tree_thread(void *p) {
    tree_arg *a = p;
    tree_ctx *c = a->c;
    while (!atomic_load(&c->go)) {
    }
    /* A few children alive at once: a middle one of a chain of two, and a
     * leaf under it, each destroyed at its own time. */
    weft_cancel_token *mid = NULL;
    weft_cancel_callback *handles[TREE_CHILDREN];
    weft_cancel_token *tokens[TREE_CHILDREN];
    for (int i = 0; i < TREE_CHILDREN; i++) {
        tree_child *k = &c->kids[a->id][i];
        k->created_after = atomic_load(&c->cancelled);
        weft_status st;
        weft_cancel_token *parent = (i % 3 == 2 && mid) ? mid : c->root;
        tokens[i] = weft_cancel_token_create(parent, &st);
        if (!tokens[i]) TEST_FAIL_("create: %s", weft_errname(st));
        k->cancelled_at_create = weft_cancel_token_is_cancelled(tokens[i]);
        if (k->cancelled_at_create)
            k->reason_ok = strcmp(weft_cancel_token_reason(tokens[i]), "root down") == 0;
        if (weft_cancel_token_on_cancel(tokens[i], tree_cb, &k->runs, &handles[i]) != WEFT_OK)
            TEST_FAIL_("on_cancel failed");
        if (i % 3 == 1) mid = tokens[i];
        /* Past the round's cut, go slowly until the root is cancelled: the
         * cancel then meets children being made and dropped. */
        if (i >= c->cut) {
            if (i == c->cut) atomic_fetch_add(&c->progress, 1);
            if (!atomic_load(&c->cancelled)) sched_yield();
        }
        /* Drop older ones out of order: the token goes with the last of its
         * own reference and its handle's. */
        if (i >= 4 && i % 2 == 0) {
            int j = i - 4;
            c->kids[a->id][j].removed = weft_cancel_callback_remove(handles[j]) ? 1 : 0;
            weft_cancel_token_destroy(tokens[j]);
            tokens[j] = NULL;
        }
    }
    for (int j = 0; j < TREE_CHILDREN; j++)
        if (tokens[j]) {
            c->kids[a->id][j].removed = weft_cancel_callback_remove(handles[j]) ? 1 : 0;
            weft_cancel_token_destroy(tokens[j]);
        }
    return NULL;
}

TEST(a_token_tree_cancelled_while_other_threads_make_and_drop_children_calls_each_callback_once_or_never) {
#ifdef UNDER_TSAN
    int rounds = 3;
#else
    int rounds = 10;
#endif
    for (int round = 0; round < rounds; round++) {
        tree_ctx *c = calloc(1, sizeof *c);
        ASSERT_NOT_NULL(c);
        c->root = new_token();
        c->cut = TREE_CHILDREN * (round + 1) / (rounds + 2); /* a different share each round */
        pthread_t th[TREE_THREADS];
        tree_arg args[TREE_THREADS];
        for (int i = 0; i < TREE_THREADS; i++) {
            args[i] = (tree_arg){c, i};
            ASSERT_EQ(pthread_create(&th[i], NULL, tree_thread, &args[i]), 0);
        }
        atomic_store(&c->go, 1);
        while (atomic_load(&c->progress) < TREE_THREADS) {
        }
        ASSERT_OK(weft_cancel_token_cancel_with(c->root, "root down"));
        atomic_store(&c->cancelled, 1);
        for (int i = 0; i < TREE_THREADS; i++) pthread_join(th[i], NULL);
        for (int t = 0; t < TREE_THREADS; t++)
            for (int i = 0; i < TREE_CHILDREN; i++) {
                tree_child *k = &c->kids[t][i];
                int runs = atomic_load(&k->runs);
                if (runs != 1 - k->removed)
                    TEST_FAIL_("round %d child %d/%d: callback ran %d times, remove said %s", round, t, i, runs,
                               k->removed ? "not run" : "ran");
                if (k->created_after && !k->cancelled_at_create)
                    TEST_FAIL_("round %d child %d/%d: made under a cancelled root but not cancelled", round, t, i);
                if (k->cancelled_at_create && !k->reason_ok)
                    TEST_FAIL_("round %d child %d/%d: made cancelled without the root's reason", round, t, i);
            }
        weft_cancel_token_destroy(c->root);
        free(c);
    }
}

/* ---- resets racing cancels, a parent's cancels and deadlines ------------------ */

enum { RACE_ITERS = 20000 };

typedef struct race_ctx {
    weft_cancel_token *parent, *t;
    atomic_int go, done;
    atomic_long registered, ran;
    atomic_long cancels_ok, resets_ok;
} race_ctx;

static void race_cb(void *arg, const char *reason) {
    race_ctx *c = arg;
    /* The reason is the token's, whole: one of the texts cancels give. */
    if (strcmp(reason, "direct") != 0 && strcmp(reason, "from parent") != 0 && strcmp(reason, "deadline exceeded") != 0 &&
        strcmp(reason, "final") != 0)
        TEST_FAIL_("a callback got the reason \"%s\"", reason);
    atomic_fetch_add(&c->ran, 1);
}

static void *race_canceller(void *p) {
    race_ctx *c = p;
    while (!atomic_load(&c->go)) {
    }
    for (int i = 0; i < RACE_ITERS; i++) {
        if (weft_cancel_token_on_cancel(c->t, race_cb, c, NULL) != WEFT_OK) TEST_FAIL_("on_cancel");
        atomic_fetch_add(&c->registered, 1);
        weft_status st = weft_cancel_token_cancel_with(c->t, "direct");
        if (st == WEFT_OK) atomic_fetch_add(&c->cancels_ok, 1);
        else if (st != WEFT_ECANCELED) TEST_FAIL_("cancel: %s", weft_errname(st));
    }
    return NULL;
}

static void *race_resetter(void *p) {
    race_ctx *c = p;
    while (!atomic_load(&c->go)) {
    }
    for (int i = 0; i < RACE_ITERS; i++) {
        weft_status st = weft_cancel_token_reset(c->t);
        if (st == WEFT_OK) atomic_fetch_add(&c->resets_ok, 1);
        else if (st != WEFT_EBUSY) TEST_FAIL_("reset: %s", weft_errname(st));
        if (i % 64 == 0) sched_yield();
    }
    return NULL;
}

static void *race_parent(void *p) {
    race_ctx *c = p;
    while (!atomic_load(&c->go)) {
    }
    for (int i = 0; i < RACE_ITERS / 4; i++) {
        (void)weft_cancel_token_cancel_with(c->parent, "from parent");
        while (weft_cancel_token_reset(c->parent) == WEFT_EBUSY) sched_yield();
        if (weft_cancel_after(c->t, (uint64_t)(i % 7) * 20000) != WEFT_OK) TEST_FAIL_("cancel_after");
        /* A yield every 16th time, not each time: on a loaded machine each
         * sched_yield waits for the other runnable threads (about 4 ms at
         * load 20, the process using 0.006 CPUs), and 26566 of them in 5
         * rounds took the test past its 60 s watchdog (ASan, load 15).  The
         * token still goes from armed to cancelled about 300 times a round,
         * as with a yield each time. */
        if (i % 16 == 0) sched_yield();
    }
    return NULL;
}

TEST(resets_racing_cancels_a_parents_cancels_and_deadlines_run_every_callback_exactly_once) {
    watchdog_start(60);
#ifdef UNDER_TSAN
    int rounds = 2;
#else
    int rounds = 5;
#endif
    for (int round = 0; round < rounds; round++) {
        race_ctx c;
        memset(&c, 0, sizeof c);
        c.parent = new_token();
        weft_status st;
        c.t = weft_cancel_token_create(c.parent, &st);
        ASSERT_OK(st);
        pthread_t a, b, p;
        ASSERT_EQ(pthread_create(&a, NULL, race_canceller, &c), 0);
        ASSERT_EQ(pthread_create(&b, NULL, race_resetter, &c), 0);
        ASSERT_EQ(pthread_create(&p, NULL, race_parent, &c), 0);
        atomic_store(&c.go, 1);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        pthread_join(p, NULL);
        /* Quiet now: re-arm both, cancel once more; every callback registered
         * and not yet run runs now, once. */
        (void)weft_cancel_disarm(c.t);
        while (weft_cancel_token_reset(c.parent) == WEFT_EBUSY) sched_yield();
        for (int tries = 0; weft_cancel_token_reset(c.t) != WEFT_OK; tries++) {
            if (tries > 100000) TEST_FAIL_("reset stays busy with nothing running");
            sched_yield();
        }
        ASSERT_FALSE(weft_cancel_token_is_cancelled(c.t));
        ASSERT_STREQ(weft_cancel_token_reason(c.t), "");
        ASSERT_OK(weft_cancel_token_cancel_with(c.t, "final"));
        ASSERT_STREQ(weft_cancel_token_reason(c.t), "final");
        ASSERT_EQ(atomic_load(&c.ran), atomic_load(&c.registered));
        ASSERT_GE(weft_cancel_token_cancel_count(c.t), (uint64_t)atomic_load(&c.cancels_ok) + 1);
        weft_cancel_token_destroy(c.t);
        weft_cancel_token_destroy(c.parent);
    }
    watchdog_stop();
}

/* ---- a deadline that fires while the run waits -------------------------------- */

static atomic_int gate;

static int wait_gate(weft_ctx *ctx, void *arg) {
    (void)ctx, (void)arg;
    if (!wait_flag(&gate, 1, 20)) return 99;
    return 0;
}

static int count_call(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

/* A token with a deadline `ms` from now, attached to f. */
static weft_cancel_token *deadline_on(weft_future *f, unsigned ms) {
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_after(t, ms * MS));
    ASSERT_OK(weft_cancel_attach(t, f));
    return t;
}

static void wait_cancelled(weft_cancel_token *t) {
    for (int i = 0; i < 20000 && !weft_cancel_token_is_cancelled(t); i++) sleep_us(100);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t));
    ASSERT_STREQ(weft_cancel_token_reason(t), "deadline exceeded");
}

static void expect_info(weft_future *f, weft_status st, uint64_t skipped) {
    weft_run_info info;
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.status, st);
    ASSERT_EQ(info.skipped, skipped);
    ASSERT_EQ(info.task_code, 0);
    ASSERT_STREQ(info.failed_task, "");
}

TEST(a_deadline_firing_while_a_run_is_parked_on_a_semaphore_ends_it_at_the_release_cancelled) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    weft_status err;
    weft_semaphore *sem = weft_semaphore_create(1, &err);
    ASSERT_NOT_NULL(sem);
    atomic_store(&gate, 0);
    weft_future *holder;
    ASSERT_OK(weft_async_acquire(ex, wait_gate, NULL, &sem, 1, &holder));
    while (weft_semaphore_value(sem) != 0) sleep_us(100);
    atomic_int calls = 0;
    weft_taskflow *tf = make_taskflow("parked");
    weft_task a = must_emplace(tf, count_call, &calls), b = must_emplace(tf, count_call, &calls);
    ASSERT_OK(weft_task_acquire(a, sem));
    ASSERT_OK(weft_task_release(a, sem));
    ASSERT_OK(weft_precede(a, b));
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    weft_cancel_token *t = deadline_on(f, 5);
    wait_cancelled(t);
    /* a stays parked until the holder's release (weft_task_acquire). */
    ASSERT_STATUS(weft_future_wait_for(f, 20 * MS), WEFT_ETIMEDOUT);
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(holder));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    expect_info(f, WEFT_ECANCELED, 2);
    ASSERT_EQ(atomic_load(&calls), 0);
    ASSERT_EQ(weft_semaphore_value(sem), 1);
    weft_future_destroy(f);
    weft_future_destroy(holder);
    weft_cancel_token_destroy(t);
    /* Whole again: the same taskflow runs both tasks. */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&calls), 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_semaphore_destroy(sem));
    weft_executor_destroy(ex);
    watchdog_stop();
}

TEST(a_deadline_firing_while_a_dependent_async_task_waits_skips_it_and_its_dependents_still_run) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    atomic_store(&gate, 0);
    atomic_int calls = 0, after = 0;
    weft_future *x, *d, *e;
    ASSERT_OK(weft_async(ex, wait_gate, NULL, &x));
    ASSERT_OK(weft_dependent_async(ex, count_call, &calls, &x, 1, &d));
    ASSERT_OK(weft_dependent_async(ex, count_call, &after, &d, 1, &e));
    weft_cancel_token *t = deadline_on(d, 5);
    wait_cancelled(t);
    ASSERT_FALSE(weft_future_ready(d)); /* it waits for x all the same */
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(x));
    ASSERT_STATUS(weft_future_wait(d), WEFT_ECANCELED);
    expect_info(d, WEFT_ECANCELED, 1);
    ASSERT_OK(weft_future_wait(e));
    ASSERT_EQ(atomic_load(&calls), 0);
    ASSERT_EQ(atomic_load(&after), 1);
    weft_future_destroy(x);
    weft_future_destroy(d);
    weft_future_destroy(e);
    weft_cancel_token_destroy(t);
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* The emulator's kernel that takes a while (until the test opens the gate:
 * 20 s at most), counting its runs. */
static int slow_kernel(const weft_gpu_range *r, void *const *a) {
    (void)r;
    (void)wait_flag(&gate, 1, 20);
    atomic_fetch_add((atomic_int *)a[0], 1);
    return 0;
}
static const weft_gpu_kernel_source slow_kernel_src = {.name = "slow", .host = slow_kernel};

typedef struct slow_launch {
    weft_gpu_kernel *k;
    weft_gpu_buffer *b;
    atomic_int recorded;
} slow_launch;

static int launch_slow_kernel(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    slow_launch *sl = arg;
    atomic_fetch_add(&sl->recorded, 1);
    return weft_gpu_launch(s, sl->k, &(weft_gpu_range){.global = {1}}, &WEFT_GPU_ARG_BUFFER(sl->b), 1);
}

TEST(a_deadline_firing_while_a_gpu_task_runs_ends_the_run_after_its_work_cancelled) {
    watchdog_start(60);
    weft_status st;
    weft_gpu_device *dev = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR}, &st);
    if (!dev) SKIP("no emulated GPU device");
    weft_executor *ex = make_executor(2);
    slow_launch sl = {0};
    sl.k = weft_gpu_kernel_create(dev, &slow_kernel_src, &st);
    ASSERT_NOT_NULL(sl.k);
    sl.b = weft_gpu_buffer_create(dev, sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st);
    ASSERT_NOT_NULL(sl.b);
    atomic_int *kernels = weft_gpu_buffer_host_ptr(sl.b);
    atomic_init(kernels, 0);
    atomic_int calls = 0;
    weft_taskflow *tf = make_taskflow("gpu");
    weft_task g = weft_emplace_gpu(tf, dev, launch_slow_kernel, &sl);
    ASSERT_FALSE(weft_task_is_null(g));
    weft_task c = must_emplace(tf, count_call, &calls), c2 = must_emplace(tf, count_call, &calls);
    ASSERT_OK(weft_precede(g, c));
    ASSERT_OK(weft_precede(c, c2));
    atomic_store(&gate, 0);
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    /* The deadline is armed once the kernel is launched, and the kernel ends
     * only after the deadline fired: a 5 ms deadline armed at the run's start
     * fired before the GPU task started on a loaded machine (ASan, load 15:
     * recorded 0), and a kernel of a fixed 30 ms could end before it. */
    for (int i = 0; i < 200000 && !atomic_load(&sl.recorded); i++) sleep_us(100);
    ASSERT_EQ(atomic_load(&sl.recorded), 1);
    weft_cancel_token *t = deadline_on(f, 5);
    wait_cancelled(t);
    ASSERT_FALSE(weft_future_ready(f)); /* the run waits for the kernel */
    atomic_store(&gate, 1);
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    /* The kernel was on the device when the deadline fired; the run ended
     * after it (a GPU task completes when its work does). */
    ASSERT_EQ(atomic_load(&sl.recorded), 1);
    ASSERT_EQ(atomic_load(kernels), 1);
    expect_info(f, WEFT_ECANCELED, 2);
    ASSERT_EQ(atomic_load(&calls), 0);
    weft_future_destroy(f);
    weft_cancel_token_destroy(t);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(kernels), 2);
    ASSERT_EQ(atomic_load(&calls), 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    weft_gpu_buffer_destroy(sl.b);
    weft_gpu_kernel_destroy(sl.k);
    weft_gpu_close(dev);
    watchdog_stop();
}

/* A task of ex1 waits for a run on ex2; one deadline token is attached to
 * both runs. */
typedef struct nested {
    weft_executor *ex2;
    weft_taskflow *inner;
    weft_cancel_token *t;
    weft_status inner_status;
    probe p;
} nested;

static int wait_nested(weft_ctx *ctx, void *arg) {
    (void)ctx;
    nested *n = arg;
    weft_future *f;
    if (weft_run(n->ex2, n->inner, &f) != WEFT_OK) return 1;
    if (weft_cancel_attach(n->t, f) != WEFT_OK) return 2;
    n->inner_status = weft_future_wait(f);
    weft_future_destroy(f);
    return 0;
}

TEST(a_deadline_token_on_a_run_and_the_nested_run_it_waits_for_on_another_executor_stops_both) {
    watchdog_start(60);
    weft_executor *ex1 = make_executor(1), *ex2 = make_executor(1);
    nested n;
    memset(&n, 0, sizeof n);
    n.ex2 = ex2;
    n.inner = make_taskflow("inner");
    must_emplace(n.inner, probe_task, &n.p);
    n.t = new_token();
    atomic_int calls = 0;
    weft_taskflow *outer = make_taskflow("outer");
    weft_task w = must_emplace(outer, wait_nested, &n), after = must_emplace(outer, count_call, &calls);
    ASSERT_OK(weft_precede(w, after));
    weft_future *f;
    ASSERT_OK(weft_run(ex1, outer, &f));
    ASSERT_OK(weft_cancel_attach(n.t, f));
    ASSERT_TRUE(wait_flag(&n.p.started, 1, 10));
    ASSERT_OK(weft_cancel_after(n.t, 5 * MS));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
    ASSERT_STATUS(n.inner_status, WEFT_ECANCELED);
    expect_probe("task of the nested run", &n.p, "deadline exceeded");
    expect_info(f, WEFT_ECANCELED, 1);
    ASSERT_EQ(atomic_load(&calls), 0);
    weft_future_destroy(f);
    weft_cancel_token_destroy(n.t);
    ASSERT_OK(weft_taskflow_destroy(outer));
    ASSERT_OK(weft_taskflow_destroy(n.inner));
    weft_executor_destroy(ex1);
    weft_executor_destroy(ex2);
    watchdog_stop();
}

/* ---- weft_run_n_parallel: an instance whose every task ran is an iteration ---- */

typedef struct par_cancel {
    weft_future *run;
    weft_cancel_token *t;
    uint64_t at;   /* the instance whose last task stops the run */
    int how;       /* 0: weft_future_cancel, 1: the attached token, 2: the task fails */
    atomic_int ran;
} par_cancel;

static int par_first(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&((par_cancel *)arg)->ran, 1);
    return 0;
}

static int par_last(weft_ctx *ctx, void *arg) {
    par_cancel *pc = arg;
    atomic_fetch_add(&pc->ran, 1);
    if (weft_ctx_iteration(ctx) != pc->at) return 0;
    if (pc->how == 0) (void)weft_future_cancel(pc->run);
    if (pc->how == 1) (void)weft_cancel_token_cancel_with(pc->t, "enough");
    return pc->how == 2 ? 3 : 0;
}

/* core.h: the iterations are those whose every task ran; the one under way
 * when the run is cancelled counts if the cancel came after all its tasks had
 * started, one with a failing task does not.  weft_run_n's iterations follow
 * that; weft_run_n_parallel's instances counted only if no instance had
 * stopped the run by the time they ended, so an instance whose own last task
 * cancelled the run (every task of it ran) was not counted. */
TEST(a_parallel_runs_instances_whose_every_task_ran_before_a_cancel_count_as_iterations) {
    weft_executor *ex = make_executor(1); /* instance 0, then 1, then 2, one task at a time */
    weft_taskflow *tf = make_taskflow("instances");
    par_cancel pc;
    memset(&pc, 0, sizeof pc);
    weft_task a = must_emplace(tf, par_first, &pc), b = must_emplace(tf, par_last, &pc);
    ASSERT_OK(weft_task_set_name(b, "last"));
    ASSERT_OK(weft_precede(a, b));
    for (int how = 0; how < 3; how++)
        for (uint64_t at = 0; at < 3; at++) {
            pc.how = how;
            pc.at = at;
            atomic_store(&pc.ran, 0);
            pc.t = new_token();
            ASSERT_OK(weft_run_n_parallel(ex, tf, 3, &pc.run));
            ASSERT_OK(weft_cancel_attach(pc.t, pc.run));
            weft_status st = weft_future_wait(pc.run);
            weft_run_info info;
            ASSERT_OK(weft_future_info(pc.run, &info));
            /* Instances 0 .. at ran every task; the later ones none. */
            ASSERT_EQ(atomic_load(&pc.ran), 2 * (int)(at + 1));
            ASSERT_EQ(info.skipped, 2 * (2 - at));
            if (how == 2) {
                ASSERT_STATUS(st, WEFT_ETASK);
                ASSERT_EQ(info.task_code, 3);
                ASSERT_STREQ(info.failed_task, "last");
                ASSERT_EQ(info.iterations, at); /* the failing instance does not count */
            } else {
                ASSERT_STATUS(st, WEFT_ECANCELED);
                if (info.iterations != at + 1)
                    TEST_FAIL_("cancelled (%s) by instance %llu's last task: iterations %llu, want %llu",
                               how ? "token" : "future", (unsigned long long)at,
                               (unsigned long long)info.iterations, (unsigned long long)(at + 1));
            }
            weft_future_destroy(pc.run);
            weft_cancel_token_destroy(pc.t);
        }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- a run of no iteration cancelled while queued skips nothing --------------- */

static int hold_gate(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_store((atomic_int *)arg, 1); /* started */
    return wait_gate(ctx, NULL);
}

/* weft_run_n(tf, 0) and weft_run_n_parallel(tf, 0) run no task; cancelled
 * while queued they reported the tasks of an iteration they would never have
 * run as skipped (weft_run_info.skipped and the metrics), as if the cancel
 * had stopped them. */
TEST(a_run_of_zero_iterations_cancelled_while_queued_skips_no_task) {
    watchdog_start(60);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .metrics = true}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = make_taskflow("zero");
    atomic_int calls = 0;
    must_emplace(tf, count_call, &calls);
    must_emplace(tf, count_call, &calls);
    for (int kind = 0; kind < 2; kind++) {
        atomic_store(&gate, 0);
        atomic_int started = 0;
        weft_future *holder, *f;
        ASSERT_OK(weft_async(ex, hold_gate, &started, &holder));
        ASSERT_TRUE(wait_flag(&started, 1, 10)); /* the one worker is busy: the run stays queued */
        weft_metrics m0, m1;
        ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
        if (kind == 0) ASSERT_OK(weft_run_n(ex, tf, 0, &f));
        else ASSERT_OK(weft_run_n_parallel(ex, tf, 0, &f));
        weft_cancel_token *t = new_token();
        ASSERT_OK(weft_cancel_attach(t, f));
        ASSERT_OK(weft_cancel_token_cancel(t));
        atomic_store(&gate, 1);
        ASSERT_OK(weft_future_wait(holder));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        if (info.skipped != 0 || m1.total.skipped != m0.total.skipped)
            TEST_FAIL_("%s: skipped %llu, metrics %llu, want 0 and 0", kind ? "weft_run_n_parallel(0)" : "weft_run_n(0)",
                       (unsigned long long)info.skipped,
                       (unsigned long long)(m1.total.skipped - m0.total.skipped));
        ASSERT_EQ(info.iterations, 0);
        ASSERT_EQ(atomic_load(&calls), 0);
        weft_future_destroy(f);
        weft_future_destroy(holder);
        weft_cancel_token_destroy(t);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* ---- a failing subflow's graph, which never runs, counts as skipped ---------- */

static int build_three_then(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    int how = *(int *)arg; /* 0: fail, 1: detach and fail, 2: join and fail, 3: cancel the run and return 0 */
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 3; i++)
        if (weft_task_is_null(weft_emplace(g, noop, NULL))) return 90;
    if (how == 1 && weft_subflow_detach(sf) != WEFT_OK) return 91;
    if (how == 2 && weft_subflow_join(sf) != WEFT_OK) return 92;
    if (how == 3) {
        (void)weft_future_cancel((weft_future *)weft_ctx_run(ctx));
        return 0;
    }
    return 4;
}

/* weft_run_info.skipped (core.h): a subflow task that has started counts as
 * the tasks of its graph that were not run.  A subflow whose function built
 * a graph and then failed dropped that graph unrun and counted none of it
 * (the run's skipped and the metrics' both), while a cancel in the same
 * place counted every task of it. */
TEST(a_failing_subflows_graph_that_never_runs_counts_its_tasks_as_skipped) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .metrics = true}, NULL);
    ASSERT_NOT_NULL(ex);
    static const char *const what[4] = {"failing", "detached and failing", "joined and failing", "cancelling"};
    /* The graph's 3 tasks, unless it ran (joined), and the task after the subflow. */
    static const uint64_t want[4] = {4, 4, 1, 4};
    for (int how = 0; how < 4; how++) {
        weft_taskflow *tf = make_taskflow("sub");
        int h = how;
        weft_task s = weft_emplace_subflow(tf, build_three_then, &h);
        ASSERT_FALSE(weft_task_is_null(s));
        ASSERT_OK(weft_task_set_name(s, "sub"));
        atomic_int calls = 0;
        ASSERT_OK(weft_precede(s, must_emplace(tf, count_call, &calls)));
        weft_metrics m0, m1;
        ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        weft_status st = weft_future_wait(f);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        if (how == 3) {
            ASSERT_STATUS(st, WEFT_ECANCELED);
        } else {
            ASSERT_STATUS(st, WEFT_ETASK);
            ASSERT_EQ(info.task_code, 4);
            ASSERT_STREQ(info.failed_task, "sub");
        }
        if (info.skipped != want[how] || m1.total.skipped - m0.total.skipped != want[how])
            TEST_FAIL_("%s subflow: skipped %llu, metrics %llu, want %llu", what[how], (unsigned long long)info.skipped,
                       (unsigned long long)(m1.total.skipped - m0.total.skipped), (unsigned long long)want[how]);
        ASSERT_EQ(atomic_load(&calls), 0);
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    weft_executor_destroy(ex);
}

/* The same for a module or subflow whose graph cannot run: a body or a
 * subflow graph with a cycle (the run fails with task_code WEFT_ECYCLE), a
 * subflow joining such a graph, a module whose body runs it (WEFT_EDEADLK). */
static weft_taskflow *cyclic_graph(weft_taskflow *g) {
    weft_task x = must_emplace(g, noop, NULL), y = must_emplace(g, noop, NULL);
    must_emplace(g, noop, NULL);
    ASSERT_OK(weft_precede(x, y));
    ASSERT_OK(weft_precede(y, x));
    return g;
}

static int cyclic_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    cyclic_graph(weft_subflow_graph(sf));
    if (arg && weft_subflow_join(sf) != WEFT_ECYCLE) return 93;
    return 0;
}

TEST(a_module_or_subflow_whose_graph_cannot_run_counts_its_tasks_as_skipped) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .metrics = true}, NULL);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *body = cyclic_graph(make_taskflow("cyclic body"));
    static const char *const what[4] = {"module of a cyclic body", "cyclic subflow", "subflow joining a cycle",
                                        "module running its own taskflow"};
    for (int k = 0; k < 4; k++) {
        weft_taskflow *tf = make_taskflow("outer"), *inner = make_taskflow("inner");
        weft_task t;
        weft_status code = WEFT_ECYCLE;
        uint64_t want = 4; /* the graph's 3 tasks and the task after it */
        if (k == 0) t = weft_emplace_module(tf, body);
        else if (k < 3) t = weft_emplace_subflow(tf, cyclic_subflow, k == 2 ? (void *)1 : NULL);
        else {
            /* outer: M(inner) -> after; inner: M(outer), noop.  Running outer,
             * inner's module of outer fails (EDEADLK): outer's 2 tasks, as the
             * graph that module does not run, then inner's noop is skipped or
             * ran (one worker: skipped, it is readied after), and `after`. */
            t = weft_emplace_module(tf, inner);
            ASSERT_FALSE(weft_task_is_null(weft_emplace_module(inner, tf)));
            code = WEFT_EDEADLK;
        }
        ASSERT_FALSE(weft_task_is_null(t));
        atomic_int calls = 0;
        ASSERT_OK(weft_precede(t, must_emplace(tf, count_call, &calls)));
        if (k == 3) {
            must_emplace(inner, count_call, &calls);
            want = 2 + 1 + 1; /* outer's 2 tasks unrun by the failing module, inner's task, `after` */
        }
        weft_metrics m0, m1;
        ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        ASSERT_STATUS(info.task_code, code);
        uint64_t got = info.skipped, metrics = m1.total.skipped - m0.total.skipped;
        if (got != metrics || (k < 3 && got != want) || (k == 3 && (got < want - 1 || got > want)))
            TEST_FAIL_("%s: skipped %llu, metrics %llu, want %llu", what[k], (unsigned long long)got,
                       (unsigned long long)metrics, (unsigned long long)want);
        ASSERT_EQ(atomic_load(&calls), (int)(want - got)); /* inner's task ran if it was not skipped */
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(inner));
    }
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ex);
}

/* ---- two tokens on one run: the reason is the cancel that stopped it --------- */

/* weft_ctx_cancel_reason: "the reason the task's run was cancelled by a token
 * attached to it".  With two tokens attached, cancelled one after the other,
 * the run was cancelled by the first; a task asking afterwards got the
 * reason of whichever token was attached last (a deadline that fired after
 * the user had stopped the run read "deadline exceeded"). */
TEST(a_run_stopped_by_one_of_two_tokens_reports_that_tokens_reason_not_a_later_ones) {
    watchdog_start(60);
    weft_executor *ex = make_executor(2);
    for (int order = 0; order < 2; order++)
        for (int kind = 0; kind < 2; kind++) {
            probe p;
            memset(&p, 0, sizeof p);
            atomic_int both = 0;
            p.read_after = &both;
            weft_cancel_token *first = new_token(), *second = new_token();
            weft_future *f = NULL;
            weft_taskflow *tf = NULL;
            if (kind == 0) {
                tf = make_taskflow("two tokens");
                must_emplace(tf, probe_task, &p);
                ASSERT_OK(weft_run(ex, tf, &f));
            } else {
                ASSERT_OK(weft_async(ex, probe_task, &p, &f));
            }
            /* Attached in either order: which was attached last must not matter. */
            ASSERT_OK(weft_cancel_attach(order ? second : first, f));
            ASSERT_OK(weft_cancel_attach(order ? first : second, f));
            ASSERT_TRUE(wait_flag(&p.started, 1, 10));
            ASSERT_OK(weft_cancel_token_cancel_with(first, "first"));
            ASSERT_OK(weft_cancel_token_cancel_with(second, "second"));
            atomic_store(&both, 1); /* the task reads its reason after both cancels */
            ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
            expect_probe(kind == 0 ? "graph task" : "async task", &p, "first");
            weft_future_destroy(f);
            weft_cancel_token_destroy(first);
            weft_cancel_token_destroy(second);
            if (tf) ASSERT_OK(weft_taskflow_destroy(tf));
        }
    weft_executor_destroy(ex);
    watchdog_stop();
}

/* ---- callbacks that submit work, drop their token, cancel each other --------- */

typedef struct cb_world {
    weft_executor *ex;
    weft_cancel_token *owned; /* the reference the callback drops */
    weft_cancel_token *a, *b; /* cancel each other */
    atomic_int submitted_ran, a_calls, b_calls, dropped;
    atomic_int timer_thread_ok;
} cb_world;

static int submitted_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&((cb_world *)arg)->submitted_ran, 1);
    return 0;
}

static void cb_submit(void *arg, const char *reason) {
    cb_world *w = arg;
    /* Before the tasks it submits can be seen to run. */
    if (strcmp(reason, "deadline exceeded") == 0) atomic_store(&w->timer_thread_ok, 1);
    /* On the timer thread (a deadline) or a user thread: both may submit. */
    if (weft_silent_async(w->ex, submitted_task, w) != WEFT_OK) return;
    weft_future *f;
    if (weft_async(w->ex, submitted_task, w, &f) != WEFT_OK) return;
    weft_future_destroy(f); /* detached */
}

static void cb_drop_owner(void *arg, const char *reason) {
    (void)reason;
    cb_world *w = arg;
    /* The owner's reference, dropped from the token's own callback: the
     * cancel running it holds one of its own (cancel.h, destroy). */
    weft_cancel_token_destroy(w->owned);
    atomic_fetch_add(&w->dropped, 1);
}

static int cancel_token_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)weft_cancel_token_cancel_with(arg, "from a worker");
    return 0;
}

static void cb_a(void *arg, const char *reason) {
    (void)reason;
    cb_world *w = arg;
    atomic_fetch_add(&w->a_calls, 1);
    (void)weft_cancel_token_cancel_with(w->b, "from a");
}

static void cb_b(void *arg, const char *reason) {
    (void)reason;
    cb_world *w = arg;
    atomic_fetch_add(&w->b_calls, 1);
    (void)weft_cancel_token_cancel_with(w->a, "from b");
}

TEST(cancel_callbacks_may_submit_work_drop_their_owners_reference_and_cancel_each_other_from_any_thread) {
    watchdog_start(60);
    cb_world w;
    memset(&w, 0, sizeof w);
    w.ex = make_executor(2);
    /* A deadline's callbacks on the timer thread submit work. */
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_token_on_cancel(t, cb_submit, &w, NULL));
    ASSERT_OK(weft_cancel_after(t, 1 * MS));
    for (int i = 0; i < 10000 && atomic_load(&w.submitted_ran) < 2; i++) sleep_us(100);
    ASSERT_OK(weft_executor_wait_all(w.ex));
    ASSERT_EQ(atomic_load(&w.submitted_ran), 2);
    ASSERT_EQ(atomic_load(&w.timer_thread_ok), 1);
    weft_cancel_token_destroy(t);
    /* The owner's reference dropped in the callback, by a deadline and by a
     * cancel from a task of the executor. */
    for (int how = 0; how < 2; how++) {
        w.owned = new_token();
        atomic_store(&w.dropped, 0);
        ASSERT_OK(weft_cancel_token_on_cancel(w.owned, cb_drop_owner, &w, NULL));
        ASSERT_OK(weft_cancel_token_on_cancel(w.owned, cb_submit, &w, NULL)); /* runs first: registered last */
        if (how == 0) ASSERT_OK(weft_cancel_after(w.owned, 1 * MS));
        else ASSERT_OK(weft_cancel_token_cancel(w.owned));
        for (int i = 0; i < 10000 && !atomic_load(&w.dropped); i++) sleep_us(100);
        ASSERT_EQ(atomic_load(&w.dropped), 1);
    }
    ASSERT_OK(weft_executor_wait_all(w.ex));
    /* Two tokens whose callbacks cancel each other, cancelled from two threads at once. */
    for (int round = 0; round < 200; round++) {
        w.a = new_token();
        w.b = new_token();
        atomic_store(&w.a_calls, 0);
        atomic_store(&w.b_calls, 0);
        ASSERT_OK(weft_cancel_token_on_cancel(w.a, cb_a, &w, NULL));
        ASSERT_OK(weft_cancel_token_on_cancel(w.b, cb_b, &w, NULL));
        /* One from a worker, the other from here, at about the same time. */
        weft_future *f;
        ASSERT_OK(weft_async(w.ex, cancel_token_task, round % 2 ? w.a : w.b, &f));
        (void)weft_cancel_token_cancel_with(round % 2 ? w.b : w.a, "here");
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_TRUE(weft_cancel_token_is_cancelled(w.a));
        ASSERT_TRUE(weft_cancel_token_is_cancelled(w.b));
        ASSERT_EQ(atomic_load(&w.a_calls), 1);
        ASSERT_EQ(atomic_load(&w.b_calls), 1);
        ASSERT_EQ(weft_cancel_token_cancel_count(w.a), 1);
        ASSERT_EQ(weft_cancel_token_cancel_count(w.b), 1);
        weft_cancel_token_destroy(w.a);
        weft_cancel_token_destroy(w.b);
    }
    ASSERT_OK(weft_executor_wait_all(w.ex));
    weft_executor_destroy(w.ex);
    watchdog_stop();
}

/* ---- what a failure reports in each kind of future ----------------------------- */

static int fail_with(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return (int)(intptr_t)arg;
}

TEST(failed_task_names_an_async_task_and_an_unsubmitted_set_member_as_core_h_says) {
    weft_executor *ex = make_executor(2);
    weft_run_info info;
    /* An async task: "#0", its value, and its dependents run. */
    weft_future *f, *d;
    atomic_int after = 0;
    ASSERT_OK(weft_async(ex, fail_with, (void *)(intptr_t)7, &f));
    ASSERT_OK(weft_dependent_async(ex, count_call, &after, &f, 1, &d));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    ASSERT_OK(weft_future_wait(d));
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_EQ(info.task_code, 7);
    ASSERT_STREQ(info.failed_task, "#0");
    ASSERT_EQ(info.skipped, 0);
    ASSERT_EQ(atomic_load(&after), 1);
    weft_future_destroy(f);
    weft_future_destroy(d);
    /* A set whose member 1 is NULL: "#1", its error as the code. */
    weft_taskflow *a = make_taskflow("a");
    must_emplace(a, noop, NULL);
    weft_taskflow *tfs[2] = {a, NULL};
    ASSERT_OK(weft_run_many(ex, tfs, 2, &f));
    ASSERT_STATUS(weft_future_wait(f), WEFT_ETASK);
    ASSERT_OK(weft_future_info(f, &info));
    ASSERT_STATUS(info.task_code, WEFT_EINVAL);
    ASSERT_STREQ(info.failed_task, "#1");
    ASSERT_EQ(info.iterations, 1);
    weft_future_destroy(f);
    ASSERT_OK(weft_taskflow_destroy(a));
    weft_executor_destroy(ex);
}

/* ---- one token attached from many threads while it is cancelled and reset ---- */

typedef struct attach_storm {
    weft_executor *ex;
    weft_cancel_token *t;
    atomic_int go, stop;
    atomic_long ran, cancelled, ok;
} attach_storm;

static int storm_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&((attach_storm *)arg)->ran, 1);
    return 0;
}

static void *storm_attacher(void *p) {
    attach_storm *s = p;
    while (!atomic_load(&s->go)) {
    }
    for (int i = 0; i < 400; i++) {
        weft_future *f;
        if (weft_async(s->ex, storm_task, s, &f) != WEFT_OK) TEST_FAIL_("async");
        if (weft_cancel_attach(s->t, f) != WEFT_OK) TEST_FAIL_("attach");
        weft_future_destroy(f); /* the link holds its own reference */
        if (i % 8 == 0) {
            /* A run too, waited for: its status is one of the three. */
            weft_future *g;
            if (weft_async(s->ex, storm_task, s, &g) != WEFT_OK) TEST_FAIL_("async");
            if (weft_cancel_attach(s->t, g) != WEFT_OK) TEST_FAIL_("attach");
            weft_status st = weft_future_wait(g);
            if (st == WEFT_ECANCELED) atomic_fetch_add(&s->cancelled, 1);
            else if (st == WEFT_OK) atomic_fetch_add(&s->ok, 1);
            else TEST_FAIL_("a task gave %s", weft_errname(st));
            weft_future_destroy(g);
        }
    }
    return NULL;
}

static void *storm_canceller(void *p) {
    attach_storm *s = p;
    while (!atomic_load(&s->go)) {
    }
    while (!atomic_load(&s->stop)) {
        (void)weft_cancel_token_cancel_with(s->t, "storm");
        sched_yield();
        while (weft_cancel_token_reset(s->t) == WEFT_EBUSY) sched_yield();
        sched_yield();
    }
    return NULL;
}

TEST(one_token_attached_from_many_threads_while_cancelled_and_reset_stops_or_runs_every_task_once) {
    watchdog_start(120);
    attach_storm s;
    memset(&s, 0, sizeof s);
    s.ex = make_executor(2);
    s.t = new_token();
    enum { ATTACHERS = 3 };
    pthread_t th[ATTACHERS], c;
    for (int i = 0; i < ATTACHERS; i++) ASSERT_EQ(pthread_create(&th[i], NULL, storm_attacher, &s), 0);
    ASSERT_EQ(pthread_create(&c, NULL, storm_canceller, &s), 0);
    atomic_store(&s.go, 1);
    for (int i = 0; i < ATTACHERS; i++) pthread_join(th[i], NULL);
    atomic_store(&s.stop, 1);
    pthread_join(c, NULL);
    ASSERT_OK(weft_executor_wait_all(s.ex));
    /* Every waited task was stopped or ran; none ran twice (ran counts at
     * most one call per task). */
    ASSERT_EQ(atomic_load(&s.cancelled) + atomic_load(&s.ok), ATTACHERS * 50);
    ASSERT_LE(atomic_load(&s.ran), ATTACHERS * 450);
    weft_cancel_token_destroy(s.t); /* frees the links still held */
    weft_executor_destroy(s.ex);
    watchdog_stop();
}

/* The same, with the cancel at any moment on two workers: iterations is the
 * number of instances that ran all their tasks, and skipped the tasks the
 * others did not run. */
enum { PAR_N = 64, PAR_CHAIN = 3 };
static atomic_int par_ran[PAR_N];

static int par_count(weft_ctx *ctx, void *arg) {
    (void)arg;
    atomic_fetch_add(&par_ran[weft_ctx_iteration(ctx) % PAR_N], 1);
    for (volatile int spin = 0; spin < 2000; spin++) {
    }
    return 0;
}

TEST(a_parallel_run_cancelled_at_any_moment_counts_whole_instances_as_iterations_and_the_rest_as_skipped) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("chain");
    weft_task t[PAR_CHAIN];
    for (int i = 0; i < PAR_CHAIN; i++) t[i] = must_emplace(tf, par_count, NULL);
    ASSERT_OK(weft_linearize(t, PAR_CHAIN));
    for (int round = 0; round < 40; round++) {
        for (int i = 0; i < PAR_N; i++) atomic_store(&par_ran[i], 0);
        weft_future *f;
        ASSERT_OK(weft_run_n_parallel(ex, tf, PAR_N, &f));
        weft_cancel_token *tok = new_token();
        ASSERT_OK(weft_cancel_attach(tok, f));
        sleep_us((unsigned)(round * 25));
        (void)weft_cancel_token_cancel(tok);
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        uint64_t whole = 0, unrun = 0;
        for (int i = 0; i < PAR_N; i++) {
            int r = atomic_load(&par_ran[i]);
            whole += r == PAR_CHAIN;
            unrun += (uint64_t)(PAR_CHAIN - r);
        }
        if (info.iterations != whole || info.skipped != unrun)
            TEST_FAIL_("round %d (%s): iterations %llu, skipped %llu; %llu instances ran whole, %llu tasks did not run",
                       round, weft_errname(st), (unsigned long long)info.iterations, (unsigned long long)info.skipped,
                       (unsigned long long)whole, (unsigned long long)unrun);
        ASSERT_STATUS(st, whole == PAR_N && unrun == 0 ? (weft_future_status(f)) : WEFT_ECANCELED);
        weft_future_destroy(f);
        weft_cancel_token_destroy(tok);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* weft_run_n and weft_run_until the same way: the iterations are those whose
 * every task ran, and skipped the tasks of the iteration under way that did
 * not run. */
enum { SER_N = 40 };
static atomic_int ser_ran[SER_N];
static atomic_int ser_pred_calls;

static int ser_count(weft_ctx *ctx, void *arg) {
    (void)arg;
    atomic_fetch_add(&ser_ran[weft_ctx_iteration(ctx) % SER_N], 1);
    for (volatile int spin = 0; spin < 2000; spin++) {
    }
    return 0;
}

static bool ser_pred(void *arg) {
    (void)arg;
    return atomic_fetch_add(&ser_pred_calls, 1) >= SER_N;
}

TEST(a_serial_run_cancelled_at_any_moment_counts_whole_iterations_and_skips_the_rest_of_the_one_under_way) {
    weft_executor *ex = make_executor(2);
    weft_taskflow *tf = make_taskflow("chain");
    weft_task t[PAR_CHAIN];
    for (int i = 0; i < PAR_CHAIN; i++) t[i] = must_emplace(tf, ser_count, NULL);
    ASSERT_OK(weft_linearize(t, PAR_CHAIN));
    for (int round = 0; round < 40; round++) {
        for (int i = 0; i < SER_N; i++) atomic_store(&ser_ran[i], 0);
        atomic_store(&ser_pred_calls, 0);
        weft_future *f;
        if (round % 2) ASSERT_OK(weft_run_until(ex, tf, ser_pred, NULL, &f));
        else ASSERT_OK(weft_run_n(ex, tf, SER_N, &f));
        weft_cancel_token *tok = new_token();
        ASSERT_OK(weft_cancel_attach(tok, f));
        sleep_us((unsigned)(round * 30));
        (void)weft_cancel_token_cancel(tok);
        weft_status st = weft_future_wait(f);
        weft_run_info info;
        ASSERT_OK(weft_future_info(f, &info));
        uint64_t whole = 0, unrun = 0;
        int partial = 0;
        for (int i = 0; i < SER_N; i++) {
            int r = atomic_load(&ser_ran[i]);
            if (r == PAR_CHAIN) whole++;
            else if (r > 0) {
                partial++;
                unrun += (uint64_t)(PAR_CHAIN - r);
            }
        }
        /* At most one iteration is under way when the cancel comes; one
         * whose first task never started is skipped whole only if it had
         * begun (its sources were readied): skipped is then PAR_CHAIN. */
        ASSERT_LE(partial, 1);
        if (info.iterations != whole || (info.skipped != unrun && !(partial == 0 && info.skipped == PAR_CHAIN)))
            TEST_FAIL_("round %d (%s): iterations %llu, skipped %llu; %llu iterations ran whole, %llu tasks of the "
                       "one under way did not run",
                       round, weft_errname(st), (unsigned long long)info.iterations, (unsigned long long)info.skipped,
                       (unsigned long long)whole, (unsigned long long)unrun);
        weft_future_destroy(f);
        weft_cancel_token_destroy(tok);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- two tokens cancelling at the same moment ---------------------------------- */

/* A task that reads its reason the moment it sees the cancel, and again once
 * both cancels have returned: the two must agree.  attach.c set the stop bit
 * and then marked the link that set it, and a reader between the two found
 * no mark and took the other cancelled token's reason ("second"), then
 * "first" after the mark: one run, two reasons.  Both now happen under the
 * lock the reader takes.  The window is a few instructions wide, so this is a
 * stress probe, not a reproducer. */
typedef struct racing {
    atomic_int go, ready, both_done;
    char early[WEFT_CANCEL_REASON_MAX], late[WEFT_CANCEL_REASON_MAX];
} racing;

static int read_reason_at_once(weft_ctx *cx, void *arg) {
    racing *r = arg;
    atomic_store(&r->ready, 1);
    while (!weft_ctx_cancelled(cx)) { /* spin: read the reason the moment the bit shows */
    }
    snprintf(r->early, sizeof r->early, "%s", weft_ctx_cancel_reason(cx));
    while (!atomic_load(&r->both_done)) sleep_us(10);
    snprintf(r->late, sizeof r->late, "%s", weft_ctx_cancel_reason(cx));
    return 0;
}

typedef struct canceller {
    racing *r;
    weft_cancel_token *t;
    const char *why;
} canceller;

static void *cancel_on_go(void *arg) {
    canceller *c = arg;
    while (!atomic_load(&c->r->go)) {
    }
    (void)weft_cancel_token_cancel_with(c->t, c->why);
    return NULL;
}

TEST(a_task_that_reads_its_reason_while_two_tokens_cancel_at_once_reads_one_reason_throughout) {
    watchdog_start(60);
    weft_executor *ex = make_executor(1);
    int rounds = (int)test_scale(200), mismatches = 0;
    for (int i = 0; i < rounds; i++) {
        racing r;
        memset(&r, 0, sizeof r);
        weft_cancel_token *a = new_token(), *b = new_token();
        weft_future *f = NULL;
        ASSERT_OK(weft_async(ex, read_reason_at_once, &r, &f));
        ASSERT_OK(weft_cancel_attach(a, f));
        ASSERT_OK(weft_cancel_attach(b, f));
        ASSERT_TRUE(wait_flag(&r.ready, 1, 10));
        canceller ca = {&r, a, "first"}, cb = {&r, b, "second"};
        pthread_t ta, tb;
        ASSERT_EQ(pthread_create(&ta, NULL, cancel_on_go, &ca), 0);
        ASSERT_EQ(pthread_create(&tb, NULL, cancel_on_go, &cb), 0);
        atomic_store(&r.go, 1);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        atomic_store(&r.both_done, 1);
        ASSERT_STATUS(weft_future_wait(f), WEFT_ECANCELED);
        if (strcmp(r.early, r.late) != 0) {
            mismatches++;
            printf("  round %d: read \"%s\" at once, \"%s\" after\n", i, r.early, r.late);
        }
        ASSERT_TRUE(strcmp(r.late, "first") == 0 || strcmp(r.late, "second") == 0);
        weft_future_destroy(f);
        weft_cancel_token_destroy(a);
        weft_cancel_token_destroy(b);
    }
    ASSERT_EQ(mismatches, 0);
    weft_executor_destroy(ex);
    watchdog_stop();
}
