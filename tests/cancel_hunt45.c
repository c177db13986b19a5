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
} probe;

/* Waits (polling its context) until the run is stopped, then records what it
 * sees.  ctx may be weft_current_ctx() for callbacks that are not tasks. */
static void probe_wait(weft_ctx *ctx, probe *p) {
    atomic_fetch_add(&p->started, 1);
    double until = now_s() + 10;
    while (weft_ctx_check_and_yield(ctx) == WEFT_OK && now_s() < until) {
    }
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
    (void)weft_parallel_for(weft_ctx_executor(ctx), 0, 1, 1, probe_index, arg, NULL);
    return 0;
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
        sched_yield();
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
