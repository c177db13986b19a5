/* Out of memory on the control-flow allocation sites: the Nth allocation fails,
 * for N = 1, 2, ... until a whole scenario (conditions, nested subflows, modules,
 * shared work, compositions, parameters) gets through with no failure.  Every
 * call must succeed or report WEFT_ENOMEM, the retry must then succeed, results
 * must be right, and no block may stay allocated at the end. */
#define _GNU_SOURCE
#include "test_util.h"

static atomic_long calls, fail_at, failures, live;

static bool fail_now(void) {
    long n = atomic_fetch_add(&calls, 1) + 1;
    if (n != atomic_load(&fail_at)) return false;
    atomic_fetch_add(&failures, 1);
    return true;
}
static void *f_alloc(void *ctx, size_t size) {
    void *p = fail_now() ? NULL : malloc(size);
    if (p) atomic_fetch_add(&live, 1);
    return p;
}
static void *f_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    if (fail_now()) return NULL;
    void *p = realloc(ptr, new_size);
    if (p && !ptr) atomic_fetch_add(&live, 1);
    return p;
}
static void f_free(void *ctx, void *ptr, size_t size) {
    if (ptr) atomic_fetch_sub(&live, 1);
    free(ptr);
}
static const weft_allocator failing = {.alloc = f_alloc, .realloc = f_realloc, .free = f_free};

/* A call reported WEFT_ENOMEM: it must be one we caused; the retry may not fail. */
static void injected(const char *what) {
    if (atomic_load(&failures) == 0) TEST_FAIL_("%s: WEFT_ENOMEM with no injected failure", what);
    atomic_store(&fail_at, 0);
}

#define TRY(what, expr)                                                               \
    do {                                                                              \
        weft_status s_ = (expr);                                                      \
        if (s_ == WEFT_ENOMEM) {                                                      \
            injected(what);                                                           \
            s_ = (expr);                                                              \
        }                                                                             \
        if (s_ != WEFT_OK) TEST_FAIL_("%s: %s", what, weft_errname(s_));              \
    } while (0)

/* Runs tf once; a failure to allocate inside a subflow fails the run with
 * task_code WEFT_ENOMEM, which counts as a reported failure too. */
static weft_status run_once(weft_executor *ex, weft_taskflow *tf) {
    weft_future *f;
    weft_status st = weft_run(ex, tf, &f);
    if (st != WEFT_OK) return st;
    st = weft_future_wait(f);
    weft_run_info info;
    (void)weft_future_info(f, &info);
    weft_future_destroy(f);
    return st == WEFT_ETASK && info.task_code == WEFT_ENOMEM ? WEFT_ENOMEM : st;
}

static weft_task task_or_retry(weft_taskflow *tf, weft_task t, weft_task (*again)(weft_taskflow *, void *),
                               void *arg) {
    if (!weft_task_is_null(t)) return t;
    ASSERT_STATUS(weft_taskflow_last_error(tf), WEFT_ENOMEM);
    injected("emplace");
    t = again(tf, arg);
    ASSERT_FALSE(weft_task_is_null(t));
    return t;
}

static atomic_int leaf_runs;
static int leaf(weft_ctx *c, void *a) { return bump(c, &leaf_runs); }
static int cond_once(weft_ctx *c, void *a) { return 1; }

static int sub_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    int depth = (int)(intptr_t)arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace(g, leaf, NULL))) return WEFT_ENOMEM;
    weft_task c = weft_emplace_condition(g, cond_once, NULL);
    if (weft_task_is_null(c)) return WEFT_ENOMEM;
    if (depth > 0 && weft_task_is_null(weft_emplace_subflow(g, sub_fn, (void *)(intptr_t)(depth - 1)))) return WEFT_ENOMEM;
    return 0;
}

static weft_task again_sub(weft_taskflow *tf, void *a) { return weft_emplace_subflow(tf, sub_fn, a); }
static weft_task again_mod(weft_taskflow *tf, void *a) { return weft_emplace_module(tf, a); }
static weft_task again_work(weft_taskflow *tf, void *a) { return weft_emplace_work(tf, a); }
static weft_task again_cond(weft_taskflow *tf, void *a) { return weft_emplace_condition(tf, cond_once, a); }

static weft_status build_two(weft_composition *c, const weft_params *p, void *arg) {
    int64_t n;
    weft_status st = weft_params_get_int(p, "n", &n);
    for (int64_t i = 0; st == WEFT_OK && i < n; i++)
        st = weft_task_is_null(weft_emplace(weft_composition_graph(c), leaf, NULL)) ? WEFT_ENOMEM : WEFT_OK;
    return st;
}

static void scenario(void) {
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &err);
    if (!ex) {
        injected("executor");
        ex = make_executor(2);
    }
    weft_taskflow *body = weft_taskflow_create("body", &err), *tf = NULL;
    if (!body) {
        injected("taskflow");
        body = make_taskflow("body");
    }
    TRY("taskflow create", (tf = weft_taskflow_create("main", &err)) ? WEFT_OK : err);
    weft_work *w = NULL;
    TRY("work create", (w = weft_work_create(leaf, NULL, NULL, &err)) ? WEFT_OK : err);
    weft_task s = task_or_retry(tf, weft_emplace_subflow(tf, sub_fn, (void *)(intptr_t)3), again_sub, (void *)(intptr_t)3);
    task_or_retry(body, weft_emplace_work(body, w), again_work, w);
    weft_task m = task_or_retry(tf, weft_emplace_module(tf, body), again_mod, body);
    weft_task c = task_or_retry(tf, weft_emplace_condition(tf, cond_once, NULL), again_cond, NULL);
    weft_work_release(w);
    TRY("precede", weft_precede(s, m));
    TRY("precede", weft_precede(m, c));
    TRY("precede weak", weft_precede(c, s));
    atomic_store(&leaf_runs, 0);
    TRY("run", run_once(ex, tf));
    TRY("run again", run_once(ex, tf));
    weft_params *p = NULL;
    TRY("params", (p = weft_params_create(&err)) ? WEFT_OK : err);
    TRY("params set", weft_params_set_int(p, "n", 3));
    TRY("params set", weft_params_set_string(p, "s", "text"));
    weft_factory *fac = NULL;
    TRY("factory", (fac = weft_factory_create("two", build_two, NULL, &err)) ? WEFT_OK : err);
    TRY("require", weft_factory_require(fac, "n", WEFT_PARAM_INT));
    weft_composition *comp = NULL;
    TRY("make", (comp = weft_factory_make(fac, p, &err)) ? WEFT_OK : err);
    weft_instance inst;
    weft_taskflow *dst = NULL;
    TRY("dst", (dst = weft_taskflow_create("dst", &err)) ? WEFT_OK : err);
    weft_status st = weft_composition_instantiate(comp, dst, "x", &inst);
    if (st == WEFT_ENOMEM) {
        injected("instantiate");
        ASSERT_OK(weft_taskflow_clear(dst));
        st = weft_composition_instantiate(comp, dst, "x", &inst);
    }
    ASSERT_OK(st);
    ASSERT_EQ(weft_taskflow_num_tasks(dst), 3);
    weft_composition_destroy(comp);
    weft_factory_destroy(fac);
    weft_params_destroy(p);
    ASSERT_OK(weft_taskflow_destroy(dst));
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    weft_executor_destroy(ex);
}

TEST(oom_at_every_control_flow_allocation_site) {
    weft_set_allocator(&failing);
    atomic_store(&fail_at, 0);
    atomic_store(&calls, 0);
    scenario();
    long total = atomic_load(&calls);
    ASSERT_EQ(atomic_load(&live), 0);
    for (long n = 1; n <= total + 1; n++) {
        atomic_store(&calls, 0);
        atomic_store(&failures, 0);
        atomic_store(&fail_at, n);
        scenario();
        if (atomic_load(&live) != 0) TEST_FAIL_("allocation %ld failing: %ld blocks leaked", n, atomic_load(&live));
    }
    printf("failed each of %ld allocations once\n", total);
    weft_set_allocator(NULL);
}
