/* Out-of-memory sweep (hunt 42): for one representative program per area, the
 * counting allocator fails allocation number k, for k = 1, 2, ... (sampled
 * for long programs) until the program gets through with no failure injected.
 * At each k:
 *   - every call meeting the failure reports WEFT_ENOMEM (a run, or an async
 *     task, whose worker met it fails with task code WEFT_ENOMEM), and the
 *     thread's message names the call;
 *   - no crash, no hang (a watchdog ends the process after 20 s);
 *   - no leak: every byte handed out is given back once the program has
 *     destroyed what it made (run it under ASan/LSan too: build-asan);
 *   - the object stays usable: the program retries the failed call, which
 *     must then succeed, and finishes with the exact results;
 *   - no silent success: a call that returns WEFT_OK did all it was asked
 *     (exact results, whole exports).  A failure no call reports is counted
 *     as absorbed by a fallback (OOM_SURVEY=1 prints each with its stack);
 *     those seen are caches and queues with a slower path (a taskflow's
 *     source list, recounted at the run; a priority lane, the shared queue;
 *     a fork-join frame stack, the child run at once; an algorithm's shared
 *     job block, jobs on the caller's stack) and profiler spans counted as
 *     dropped.
 * One TEST per area, each well under a second normally. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"
#include "counting_alloc.h"

#include <weft.h>
#include <weft/algo_typed.h>

#include <execinfo.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The counting allocator: tests/counting_alloc.h (A.burst fails a run of calls). */

/* ---- the sweep --------------------------------------------------------------- */

static struct {
    const char *area;
    long k;
    int reported;      /* failures some call or run reported */
    long absorbed;     /* failures met that nothing reported (fallbacks) */
    char problems[4096];
} S;

static bool survey(void) { return getenv("OOM_SURVEY") != NULL; }

static void print_site(void) {
    char **sym = backtrace_symbols(A.bt, A.nbt);
    for (int i = 1; sym && i < A.nbt; i++) fprintf(stderr, "    %s\n", sym[i]);
    free(sym);
}

/* A defect: fails the test (or, with OOM_SURVEY set, is printed and the sweep
 * goes on). */
static void problem(const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (survey()) {
        fprintf(stderr, "[%s k=%ld size %zu] %s\n", S.area, S.k, A.fail_size, msg);
        if (atomic_load(&A.failures)) print_site();
        return;
    }
    TEST_FAIL_("%s, allocation %ld failing: %s", S.area, S.k, msg);
}

/* Whether message m names `call` (docs/errors.md R3: the call that failed,
 * by its own name, not a family such as "weft_parallel_*"). */
static bool names_call(const char *m, const char *call) {
    if (strstr(m, call)) return true;
    /* R3: "why a factory failed", naming the factory */
    return !strcmp(call, "weft_factory_make") && !strncmp(m, "factory '", 9);
}

/* A call (or a run, or a task) reported WEFT_ENOMEM; `call` is what its
 * message must name (NULL: the message is on another thread).  Later
 * allocations succeed, so the retry must. */
static void enomem(const char *call) {
    if (atomic_load(&A.failures) == 0) problem("%s: WEFT_ENOMEM with no allocation failed", call ? call : "a run");
    if (call) {
        const char *m = weft_last_error_message();
        if (!names_call(m, call)) problem("%s gave WEFT_ENOMEM with the message \"%s\"", call, m);
    }
    S.reported++;
    atomic_store(&A.fail_at, 0);
}

/* Sets the thread's message to a sentinel, so a failing call that sets none is seen. */
static void sentinel(void) { (void)weft_future_wait(NULL); }

/* A status call: WEFT_ENOMEM is reported, then the call is retried once. */
#define ST(call, expr)                                                                   \
    do {                                                                                 \
        sentinel();                                                                      \
        weft_status s_ = (expr);                                                         \
        if (s_ == WEFT_ENOMEM) {                                                         \
            enomem(call);                                                                \
            s_ = (expr);                                                                 \
        }                                                                                \
        if (s_ != WEFT_OK) problem("%s: %s (%s)", call, weft_errname(s_), weft_last_error_message()); \
    } while (0)

/* A creation: `var = expr` with `&err_` in it gives NULL and WEFT_ENOMEM, then again. */
#define NEW(call, var, expr)                                                             \
    do {                                                                                 \
        weft_status err_ = WEFT_OK;                                                      \
        sentinel();                                                                      \
        var = (expr);                                                                    \
        if (!var) {                                                                      \
            if (err_ != WEFT_ENOMEM) problem("%s: NULL with %s", call, weft_errname(err_)); \
            enomem(call);                                                                \
            var = (expr);                                                                \
        }                                                                                \
        if (!var) {                                                                      \
            problem("%s failed again: %s", call, weft_errname(err_));                   \
            return;                                                                      \
        }                                                                                \
    } while (0)

/* A builder returning a task: the null task with last_error WEFT_ENOMEM. */
#define TASK(call, tf, var, expr)                                                        \
    do {                                                                                 \
        size_t n_ = weft_taskflow_num_tasks(tf);                                         \
        sentinel();                                                                      \
        var = (expr);                                                                    \
        if (weft_task_is_null(var)) {                                                    \
            if (weft_taskflow_last_error(tf) != WEFT_ENOMEM)                             \
                problem("%s: null task with %s", call, weft_errname(weft_taskflow_last_error(tf))); \
            if (weft_taskflow_num_tasks(tf) != n_) problem("%s: failed but added a task", call); \
            enomem(call);                                                                \
            var = (expr);                                                                \
        }                                                                                \
        if (weft_task_is_null(var)) {                                                    \
            problem("%s failed again", call);                                            \
            return;                                                                      \
        }                                                                                \
    } while (0)

/* The outcome of a run or async task: OK; or it met the failure on a worker
 * (WEFT_ENOMEM, or WEFT_ETASK with task code WEFT_ENOMEM): then *again is set
 * and the caller reruns it.  Anything else is a problem. */
static bool outcome(const char *what, weft_future *f, weft_status st, bool *again) {
    weft_run_info info = { 0 };
    if (st == WEFT_ETASK) (void)weft_future_info(f, &info);
    if (st == WEFT_ENOMEM || (st == WEFT_ETASK && info.task_code == WEFT_ENOMEM)) {
        enomem(NULL);
        *again = true;
        return true;
    }
    if (st != WEFT_OK) {
        problem("%s: %s (task code %d, failed task '%s')", what, weft_errname(st), info.task_code,
                info.failed_task ? info.failed_task : "");
        return false;
    }
    return true;
}

/* The taskflow a RUN submits, for its last error (docs/errors.md R2: the
 * submission of a weft_run* sets it); NULL for async tasks. */
#define RUN_TF run_tf_
static weft_taskflow *run_tf_;

/* Submits with `submit` (a status expression writing future f) and waits;
 * reruns once when the failure was met. */
#define RUN(call, f, submit)                                                             \
    do {                                                                                 \
        for (int try_ = 0; try_ < 2; try_++) {                                           \
            f = NULL;                                                                    \
            bool again_ = false;                                                         \
            sentinel();                                                                  \
            weft_status s_ = (submit);                                                   \
            if (s_ == WEFT_ENOMEM) {                                                     \
                if (f) problem("%s: WEFT_ENOMEM with a future", call);                   \
                if (RUN_TF && weft_taskflow_last_error(RUN_TF) != WEFT_ENOMEM)           \
                    problem("%s: WEFT_ENOMEM but the taskflow's last error is %s", call, \
                            weft_errname(weft_taskflow_last_error(RUN_TF)));             \
                enomem(call);                                                            \
                continue;                                                                \
            }                                                                            \
            if (s_ != WEFT_OK) {                                                         \
                problem("%s: %s", call, weft_errname(s_));                               \
                return;                                                                  \
            }                                                                            \
            s_ = weft_future_wait_for(f, 10 * SEC);                                      \
            if (s_ == WEFT_ETIMEDOUT) {                                                  \
                problem("%s: the run did not end in 10 s", call);                        \
                return;                                                                  \
            }                                                                            \
            bool ok_ = outcome(call, f, s_, &again_);                                    \
            weft_future_destroy(f);                                                      \
            f = NULL;                                                                    \
            if (!ok_) return;                                                            \
            if (!again_) break;                                                          \
            if (try_ == 1) problem("%s: failed again", call);                            \
        }                                                                                \
    } while (0)

static void on_alarm(int sig) {
    (void)sig;
    char msg[160];
    int n = snprintf(msg, sizeof msg, "\nHANG: %s with allocation %ld failing did not end in time\n",
                     S.area, S.k);
    if (write(2, msg, (size_t)n) < 0) _exit(3);
    _exit(3);
}

typedef void (*program_fn)(void);

static void run_once(program_fn p, long k, bool check_leak) {
    run_tf_ = NULL; /* a program that returned early may have left its own */
    S.k = k;
    S.reported = 0;
    long long bytes0 = atomic_load(&A.outstanding);
    long blocks0 = atomic_load(&A.blocks);
    atomic_store(&A.calls, 0);
    atomic_store(&A.failures, 0);
    atomic_store(&A.fail_at, k);
    alarm(20);
    p();
    alarm(0);
    atomic_store(&A.fail_at, 0);
    long long bytes = atomic_load(&A.outstanding) - bytes0;
    long blocks = atomic_load(&A.blocks) - blocks0;
    if ((bytes || blocks) && check_leak) problem("leak: %lld bytes in %ld blocks left", bytes, blocks);
    /* A failure nobody reported: a fallback the program could not see (its
     * results were checked exact).  Counted; OOM_SURVEY=1 prints where. */
    if (atomic_load(&A.failures) && !S.reported) {
        S.absorbed++;
        if (survey()) {
            fprintf(stderr, "[%s k=%ld size %zu] absorbed: an allocation failed and nothing reported it\n", S.area,
                    S.k, A.fail_size);
            print_site();
        }
    }
}

/* Runs program p with no failure, then with allocation k failing for every k
 * up to its count (every k up to 120, then `samples` more spread evenly). */
static void sweep(const char *area, program_fn p, long samples) {
    signal(SIGALRM, on_alarm);
    weft_log_set_level(WEFT_LOG_OFF); /* creations that fail log an error each */
    S.area = area;
    S.absorbed = 0;
    weft_set_allocator(&counting);
    run_once(p, 0, false); /* warm up: anything weft keeps for the process is made now */
    run_once(p, 0, true);
    long total = atomic_load(&A.calls);
    if (total == 0) problem("the program allocates nothing through the hook");
    long step = total > 120 ? (total - 120) / samples + 1 : 1;
    long n = 0;
    atomic_store(&A.burst, 1);
    for (long k = 1; k <= total; k += k < 120 ? 1 : step, n++) run_once(p, k, true);
    run_once(p, total + 1, true);
    /* Then three failures in a row from k: the failure paths' own
     * allocations (unwinding, a fallback) meet one too.  The first report
     * ends the burst, so the retry gets memory. */
    atomic_store(&A.burst, 3);
    for (long k = 1; k <= total; k += k < 120 ? 1 : step) run_once(p, k, true);
    if (getenv("OOM_LONG_BURST")) {
        atomic_store(&A.burst, atol(getenv("OOM_LONG_BURST")));
        for (long k = 1; k <= total; k += k < 120 ? 1 : step) run_once(p, k, true);
    }
    atomic_store(&A.burst, 1);
    weft_set_allocator(NULL);
    printf("%s: %ld allocations, %ld failed one at a time, %ld absorbed by a fallback\n", area, total, n,
           S.absorbed);
}

static weft_executor *g_ex; /* the executor of the program running */

#define EXECUTOR(nw)                                                                \
    NEW("weft_executor_create", g_ex,                                                    \
        weft_executor_create(&(weft_executor_config){ .workers = (nw) }, &err_))


static void expect_count(const char *what, atomic_int *c, int n, int want) {
    for (int i = 0; i < n; i++)
        if (atomic_load(&c[i]) != want) {
            problem("%s: task %d ran %d times, want %d", what, i, atomic_load(&c[i]), want);
            return;
        }
}

/* ==== executor create / destroy ============================================= */

static void p_executor(void) {
    EXECUTOR(2);
    static atomic_int c[1];
    atomic_store(&c[0], 0);
    weft_future *f;
    RUN("weft_async", f, weft_async(g_ex, bump, &c[0], &f));
    ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    weft_executor_destroy(g_ex);
}

TEST(executor_create_and_destroy_report_enomem_and_leak_nothing_at_each_allocation) {
    sweep("executor", p_executor, 60);
}

/* ==== taskflow: build, run, rerun =========================================== */

static bool until2(void *arg) { return ++*(int *)arg > 2; }

static void p_taskflow(void) {
    enum { NT = 8 };
    static atomic_int c[NT];
    for (int i = 0; i < NT; i++) atomic_store(&c[i], 0);
    EXECUTOR(2);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("flow", &err_));
    weft_task t[NT];
    for (int i = 0; i < NT; i++) {
        TASK("weft_emplace", tf, t[i], weft_emplace(tf, bump, &c[i]));
        ST("weft_task_set_name", weft_task_set_name(t[i], "a task"));
        if (i) ST("weft_precede", weft_precede(t[(i - 1) / 2], t[i]));
    }
    ST("weft_succeed_many", weft_succeed_many(t[NT - 1], t + 1, 3));
    ST("weft_taskflow_validate", weft_taskflow_validate(tf, NULL));
    weft_future *f;
    run_tf_ = tf;
    RUN("weft_run", f, weft_run(g_ex, tf, &f));
    int n = 1;
    expect_count("weft_run", c, NT, n);
    RUN("weft_run", f, weft_run_n(g_ex, tf, 2, &f));
    /* a run that met the failure on a worker may have run some tasks: recount */
    for (int i = 0; i < NT; i++) atomic_store(&c[i], 0);
    RUN("weft_run", f, weft_run_n(g_ex, tf, 2, &f));
    expect_count("weft_run_n", c, NT, 2);
    int calls = 0;
    RUN("weft_run", f, (calls = 0, weft_run_until(g_ex, tf, until2, &calls, &f)));
    RUN("weft_run_n_parallel", f, weft_run_n_parallel(g_ex, tf, 3, &f));
    RUN("weft_run", f, weft_run_with_priority(g_ex, tf, WEFT_PRIORITY_HIGH, &f));
    sentinel();
    weft_status st = weft_run_and_wait(g_ex, tf);
    if (st == WEFT_ENOMEM) enomem("weft_run"), st = weft_run_and_wait(g_ex, tf);
    else if (st == WEFT_ETASK) enomem(NULL), st = weft_run_and_wait(g_ex, tf);
    if (st != WEFT_OK) problem("weft_run_and_wait: %s", weft_errname(st));
    ST("weft_taskflow_clear", weft_taskflow_clear(tf));
    TASK("weft_emplace", tf, t[0], weft_emplace(tf, bump, &c[0]));
    RUN("weft_run", f, weft_run(g_ex, tf, &f));
    run_tf_ = NULL;
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(a_taskflow_built_run_and_rerun_reports_enomem_at_each_allocation_and_stays_usable) {
    sweep("taskflow", p_taskflow, 150);
}

/* ==== subflow =============================================================== */

static int sub_build(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    atomic_int *c = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < 4; i++) {
        weft_task t = weft_emplace(g, bump, &c[i]);
        if (weft_task_is_null(t)) return weft_taskflow_last_error(g);
        if (!weft_task_is_null(prev)) {
            weft_status st = weft_precede(prev, t);
            if (st) return st;
        }
        prev = t;
    }
    return weft_subflow_join(sf);
}
static int sub_detach(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 3; i++)
        if (weft_task_is_null(weft_emplace(g, bump, arg))) return weft_taskflow_last_error(g);
    return weft_subflow_detach(sf);
}

static void p_subflow(void) {
    static atomic_int c[5];
    EXECUTOR(2);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("sub", &err_));
    weft_task a, b, d;
    TASK("weft_emplace_subflow", tf, a, weft_emplace_subflow(tf, sub_build, c));
    TASK("weft_emplace_subflow", tf, b, weft_emplace_subflow(tf, sub_detach, &c[4]));
    TASK("weft_emplace", tf, d, weft_emplace(tf, bump, &c[4]));
    ST("weft_precede", weft_precede(a, d));
    ST("weft_precede", weft_precede(b, d));
    weft_future *f;
    for (int r = 0; r < 2; r++) {
        for (int i = 0; i < 5; i++) atomic_store(&c[i], 0);
        RUN("weft_run", f, weft_run(g_ex, tf, &f));
        ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    }
    expect_count("subflow", c, 4, 1);
    if (atomic_load(&c[4]) != 4) problem("detached subflow: %d runs, want 4", atomic_load(&c[4]));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(subflows_joined_and_detached_report_enomem_at_each_allocation_and_rerun) {
    sweep("subflow", p_subflow, 150);
}

/* ==== module ================================================================ */

static void p_module(void) {
    static atomic_int c[3];
    for (int i = 0; i < 3; i++) atomic_store(&c[i], 0);
    EXECUTOR(2);
    weft_taskflow *body, *tf;
    NEW("weft_taskflow_create", body, weft_taskflow_create("body", &err_));
    NEW("weft_taskflow_create", tf, weft_taskflow_create("outer", &err_));
    weft_task x, y, m1, m2, z;
    TASK("weft_emplace", body, x, weft_emplace(body, bump, &c[0]));
    TASK("weft_emplace", body, y, weft_emplace(body, bump, &c[1]));
    ST("weft_precede", weft_precede(x, y));
    TASK("weft_emplace_module", tf, m1, weft_emplace_module(tf, body));
    TASK("weft_emplace_module", tf, m2, weft_emplace_module(tf, body));
    TASK("weft_emplace", tf, z, weft_emplace(tf, bump, &c[2]));
    ST("weft_precede", weft_precede(m1, m2));
    ST("weft_precede", weft_precede(m2, z));
    weft_future *f;
    for (int i = 0; i < 3; i++) atomic_store(&c[i], 0);
    RUN("weft_run", f, weft_run(g_ex, tf, &f));
    for (int i = 0; i < 3; i++) atomic_store(&c[i], 0);
    RUN("weft_run", f, weft_run_n(g_ex, tf, 2, &f));
    if (atomic_load(&c[0]) != 4 || atomic_load(&c[1]) != 4 || atomic_load(&c[2]) != 2)
        problem("module: counts %d %d %d, want 4 4 2", atomic_load(&c[0]), atomic_load(&c[1]),
                atomic_load(&c[2]));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(body));
    weft_executor_destroy(g_ex);
}

TEST(modules_report_enomem_at_each_allocation_and_rerun_exactly) {
    sweep("module", p_module, 150);
}

/* ==== condition tasks ======================================================= */

static int loop3(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return atomic_fetch_add((atomic_int *)arg, 1) < 2 ? 0 : 1;
}
static int pick_both(weft_ctx *ctx, void *arg, weft_branches *out) {
    (void)ctx, (void)arg;
    weft_status st = weft_branches_add(out, 0);
    return st ? st : (int)weft_branches_add(out, 1);
}

static void p_condition(void) {
    static atomic_int c[5];
    EXECUTOR(2);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("cond", &err_));
    weft_task init, body, cond, done, multi, l, r;
    TASK("weft_emplace", tf, init, weft_emplace(tf, bump, &c[0]));
    TASK("weft_emplace", tf, body, weft_emplace(tf, bump, &c[1]));
    TASK("weft_emplace_condition", tf, cond, weft_emplace_condition(tf, loop3, &c[2]));
    TASK("weft_emplace_multi_condition", tf, multi, weft_emplace_multi_condition(tf, pick_both, NULL));
    TASK("weft_emplace", tf, l, weft_emplace(tf, bump, &c[3]));
    TASK("weft_emplace", tf, r, weft_emplace(tf, bump, &c[4]));
    done = multi;
    ST("weft_precede", weft_precede(init, body));
    ST("weft_precede", weft_precede(body, cond));
    ST("weft_precede", weft_precede(cond, body)); /* 0: loop */
    ST("weft_precede", weft_precede(cond, done)); /* 1: out */
    ST("weft_precede", weft_precede(multi, l));
    ST("weft_precede", weft_precede(multi, r));
    weft_future *f;
    for (int try = 0; try < 2; try++) {
        for (int i = 0; i < 5; i++) atomic_store(&c[i], 0);
        RUN("weft_run", f, (atomic_store(&c[1], 0), atomic_store(&c[2], 0), atomic_store(&c[3], 0),
                            atomic_store(&c[4], 0), weft_run(g_ex, tf, &f)));
    }
    if (atomic_load(&c[1]) != 3 || atomic_load(&c[3]) != 1 || atomic_load(&c[4]) != 1)
        problem("condition: body %d, left %d, right %d; want 3 1 1", atomic_load(&c[1]),
                atomic_load(&c[3]), atomic_load(&c[4]));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(condition_and_multi_condition_loops_report_enomem_at_each_allocation) {
    sweep("condition", p_condition, 100);
}

/* ==== async and dependent async ============================================= */

static void then_cb(weft_future *f, weft_status st, void *arg) {
    (void)f, (void)st;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void p_async(void) {
    static atomic_int c[8];
    for (int i = 0; i < 8; i++) atomic_store(&c[i], 0);
    EXECUTOR(2);
    weft_future *f, *a = NULL, *b = NULL;
    RUN("weft_async", f, weft_async(g_ex, bump, &c[0], &f));
    /* a -> b -> (dependent on both) */
    ST("weft_async", weft_async(g_ex, bump, &c[1], &a));
    ST("weft_dependent_async", weft_dependent_async(g_ex, bump, &c[2], &a, 1, &b));
    weft_future *deps[2] = { a, b };
    RUN("weft_dependent_async", f, weft_dependent_async(g_ex, bump, &c[3], deps, 2, &f));
    ST("weft_dependent_async", weft_dependent_async(g_ex, bump, &c[4], deps, 2, NULL));
    bool again = false;
    if (a && outcome("async a", a, weft_future_wait_for(a, 10 * SEC), &again) && again) c[1] = 1;
    if (b && outcome("async b", b, weft_future_wait_for(b, 10 * SEC), &again) && again) c[2] = 1;
    weft_future_destroy(a);
    weft_future_destroy(b);
    ST("weft_silent_async", weft_silent_async(g_ex, bump, &c[5]));
    weft_sched_handle h;
    RUN("weft_async_with", f,
        weft_async_with(g_ex, bump, &c[6], &(weft_async_options){ .priority = WEFT_PRIORITY_HIGH, .handle = &h },
                        &f));
    /* then: registered on a ready future, runs at once */
    f = NULL;
    ST("weft_async", weft_async(g_ex, bump, &c[7], &f));
    if (f) {
        ST("weft_future_wait", weft_future_wait(f));
        static atomic_int called;
        atomic_store(&called, 0);
        ST("weft_future_then", weft_future_then(f, then_cb, &called));
        if (atomic_load(&called) != 1) problem("then on a ready future did not run at once");
        weft_future_destroy(f);
    }
    ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    weft_executor_destroy(g_ex);
    for (int i = 0; i < 8; i++)
        if (atomic_load(&c[i]) < 1) problem("async task %d never ran", i);
}

TEST(async_dependent_async_and_priority_async_report_enomem_at_each_allocation) {
    sweep("async", p_async, 100);
}

/* ==== run_many ============================================================== */

static void p_run_many(void) {
    static atomic_int c[3];
    EXECUTOR(2);
    weft_taskflow *tfs[3];
    for (int i = 0; i < 3; i++) {
        NEW("weft_taskflow_create", tfs[i], weft_taskflow_create("member", &err_));
        weft_task t;
        TASK("weft_emplace", tfs[i], t, weft_emplace(tfs[i], bump, &c[i]));
    }
    weft_future *f;
    for (int i = 0; i < 3; i++) atomic_store(&c[i], 0);
    for (int try = 0; try < 2; try++) {
        sentinel();
        f = NULL;
        weft_status st = weft_run_many(g_ex, tfs, 3, &f);
        if (st == WEFT_ENOMEM) {
            if (f) problem("weft_run_many: WEFT_ENOMEM with a future");
            enomem("weft_run_many");
            continue;
        }
        if (st != WEFT_OK) {
            problem("weft_run_many: %s", weft_errname(st));
            break;
        }
        (void)weft_future_wait_for(f, 10 * SEC);
        bool again = false;
        for (size_t i = 0; i < 3; i++) {
            weft_status m = weft_run_many_status(f, i);
            if (m == WEFT_ENOMEM) {
                enomem(NULL);
                again = true;
            } else if (m != WEFT_OK) {
                weft_run_info info = { 0 };
                (void)weft_run_many_info(f, i, &info);
                if (m == WEFT_ETASK && info.task_code == WEFT_ENOMEM) enomem(NULL), again = true;
                else problem("run_many member %zu: %s", i, weft_errname(m));
            }
        }
        weft_future_destroy(f);
        if (!again) break;
    }
    weft_status sts[3];
    sentinel();
    weft_status st = weft_run_many_and_wait(g_ex, tfs, 3, sts);
    if (st == WEFT_ENOMEM || st == WEFT_ETASK) {
        /* a member's submission failed: its weft_run's message (R3) */
        enomem(st == WEFT_ENOMEM ? "weft_run" : NULL);
        st = weft_run_many_and_wait(g_ex, tfs, 3, sts);
    }
    if (st != WEFT_OK) problem("weft_run_many_and_wait: %s", weft_errname(st));
    for (int i = 0; i < 3; i++) ST("weft_taskflow_destroy", weft_taskflow_destroy(tfs[i]));
    weft_executor_destroy(g_ex);
    for (int i = 0; i < 3; i++)
        if (atomic_load(&c[i]) < 2) problem("run_many member %d ran %d times", i, atomic_load(&c[i]));
}

TEST(run_many_and_run_many_and_wait_report_enomem_per_member_at_each_allocation) {
    sweep("run_many", p_run_many, 100);
}

/* ==== fork-join: spawn/sync, typed, task groups ============================= */

struct fib { int n; long r; };
static int fib(weft_ctx *cx, void *p) {
    struct fib *a = p;
    if (a->n < 2) { a->r = a->n; return 0; }
    struct fib x = { a->n - 1, 0 }, y = { a->n - 2, 0 };
    int st = weft_spawn(cx, fib, &x);
    if (st) return st;
    st = fib(cx, &y);
    int s2 = weft_sync(cx);
    a->r = x.r + y.r;
    return st ? st : s2;
}

WEFT_FJ_TASK(long, tfib, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(tfib) x;
    WEFT_FJ_SPAWN(tfib, &x, n - 1);
    long b = WEFT_FJ_CALL(tfib, n - 2);
    return WEFT_FJ_SYNC(tfib, &x) + b;
}

static int leaf(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

struct fj_out { long fib, tfib; int group; };
static atomic_int group_hits;

static int fj_root(weft_ctx *cx, void *arg) {
    struct fj_out *o = arg;
    struct fib f = { 18, 0 };
    int st = fib(cx, &f);
    if (st) return st;
    o->fib = f.r;
    o->tfib = WEFT_FJ_RUN(cx, tfib, 18);
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < 200; i++)
        if ((st = weft_task_group_spawn(&g, leaf, &group_hits))) break;
    int w = weft_task_group_wait(&g);
    return st ? st : w;
}

static void p_forkjoin(void) {
    EXECUTOR(2);
    struct fj_out o = { 0 };
    for (int try = 0; try < 2; try++) {
        atomic_store(&group_hits, 0);
        int result = 0;
        sentinel();
        weft_status st = weft_run_root_status(g_ex, fj_root, &o, &result);
        if (st == WEFT_ENOMEM) {
            enomem("weft_run_root");
            continue;
        }
        if (st == WEFT_ETASK && result == WEFT_ENOMEM) {
            enomem(NULL);
            continue;
        }
        if (st != WEFT_OK) problem("weft_run_root_status: %s, result %d", weft_errname(st), result);
        break;
    }
    if (o.fib != 2584 || o.tfib != 2584 || atomic_load(&group_hits) != 200)
        problem("fork-join: fib %ld, typed fib %ld, group %d; want 2584 2584 200", o.fib, o.tfib,
                atomic_load(&group_hits));
    /* nested root from a task of a run */
    int r2 = 0;
    weft_future *f;
    RUN("weft_async", f, weft_async(g_ex, fj_root, &o, &f));
    (void)r2;
    weft_executor_destroy(g_ex);
}

TEST(fork_join_spawn_typed_and_task_groups_report_enomem_or_run_exactly_at_each_allocation) {
    sweep("forkjoin", p_forkjoin, 100);
}

/* ==== parallel algorithms ==================================================== */

enum { AN = 5000 };
static uint64_t av[AN], aout[AN], abuf[AN];
static atomic_uchar ahit[AN];

static void a_index(size_t i, void *arg) { (void)arg; atomic_fetch_add(&ahit[i], 1); }
static void a_range(size_t lo, size_t hi, void *arg) {
    (void)arg;
    for (size_t i = lo; i < hi; i++) atomic_fetch_add(&ahit[i], 1);
}
static void a_elem(void *e, void *arg) { (void)arg; *(uint64_t *)e += 1; }
static void a_double(const void *in, void *out, void *arg) { (void)arg; *(uint64_t *)out = 2 * *(const uint64_t *)in; }
static void a_add2(const void *a, const void *b, void *out, void *arg) {
    (void)arg;
    *(uint64_t *)out = *(const uint64_t *)a + *(const uint64_t *)b;
}
static void a_add(void *acc, const void *x, void *arg) { (void)arg; *(uint64_t *)acc += *(const uint64_t *)x; }
static void a_rsum(size_t lo, size_t hi, void *acc, void *arg) {
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++) s += ((const uint64_t *)arg)[i];
    *(uint64_t *)acc = s;
}
static void a_sscan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    (void)arg;
    uint64_t s = has_acc ? *(uint64_t *)acc : 0;
    for (size_t i = lo; i < hi; i++) aout[i] = (s += av[i]);
}
static int a_cmp(const void *a, const void *b, void *arg) {
    (void)arg;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
static bool a_is_target(const void *e, void *arg) { return *(const uint64_t *)e == *(uint64_t *)arg; }

static void a_fill(void) {
    uint64_t s = 42;
    for (size_t i = 0; i < AN; i++) av[i] = test_rand(&s) % 100000;
    memset((void *)ahit, 0, sizeof ahit);
}
static bool a_hits(int want) {
    for (size_t i = 0; i < AN; i++)
        if (atomic_load(&ahit[i]) != want) return false;
    return true;
}
static bool a_sorted(const uint64_t *x) {
    for (size_t i = 1; i < AN; i++)
        if (x[i - 1] > x[i]) return false;
    return true;
}

/* An algorithm call: OK with the exact result, or WEFT_ENOMEM having changed
 * nothing, then again. */
#define ALGO(call, prep, expr, exact, unchanged)                                       \
    do {                                                                               \
        for (int try_ = 0; try_ < 2; try_++) {                                         \
            prep;                                                                      \
            sentinel();                                                                \
            weft_status s_ = (expr);                                                   \
            if (s_ == WEFT_ENOMEM) {                                                   \
                if (!(unchanged)) problem("%s: WEFT_ENOMEM but the output changed", call); \
                enomem(call);                                                          \
                continue;                                                              \
            }                                                                          \
            if (s_ != WEFT_OK) problem("%s: %s", call, weft_errname(s_));              \
            else if (!(exact)) problem("%s: WEFT_OK with a wrong result", call);       \
            break;                                                                     \
        }                                                                              \
    } while (0)

static void p_algo(void) {
    EXECUTOR(2);
    weft_executor *ex = g_ex;
    const weft_algo_config *cfg = NULL;
    uint64_t sum = 0, maxv = 0;
    size_t maxi = 0, mini = 0;
    a_fill();
    for (size_t i = 0; i < AN; i++) {
        sum += av[i];
        if (av[i] > maxv) maxv = av[i], maxi = i;
        if (av[i] < av[mini]) mini = i;
    }
    ALGO("weft_parallel_for", memset((void *)ahit, 0, sizeof ahit),
         weft_parallel_for(ex, 0, AN, 1, a_index, NULL, cfg), a_hits(1), a_hits(0));
    ALGO("weft_parallel_for_range", memset((void *)ahit, 0, sizeof ahit),
         weft_parallel_for_range(ex, 0, AN, 1, a_range, NULL, cfg), a_hits(1), a_hits(0));
    ALGO("weft_parallel_for_each", memcpy(aout, av, sizeof av),
         weft_parallel_for_each(ex, aout, AN, 8, a_elem, NULL, cfg), aout[7] == av[7] + 1 && aout[AN - 1] == av[AN - 1] + 1,
         aout[7] == av[7]);
    ALGO("weft_parallel_transform", memset(aout, 0, sizeof aout),
         weft_parallel_transform(ex, av, 8, aout, 8, AN, a_double, NULL, cfg), aout[AN - 1] == 2 * av[AN - 1], aout[0] == 0);
    ALGO("weft_parallel_transform2", memset(aout, 0, sizeof aout),
         weft_parallel_transform2(ex, av, 8, av, 8, aout, 8, AN, a_add2, NULL, cfg), aout[AN - 1] == 2 * av[AN - 1],
         aout[0] == 0);
    uint64_t r = 0;
    ALGO("weft_parallel_reduce", r = 5, weft_parallel_reduce(ex, av, AN, 8, &r, a_add, NULL, cfg), r == sum + 5, r == 5);
    ALGO("weft_parallel_transform_reduce", r = 0,
         weft_parallel_transform_reduce(ex, av, AN, 8, 8, &r, a_double, a_add, NULL, cfg), r == 2 * sum, r == 0);
    ALGO("weft_parallel_reduce_range", r = 1,
         weft_parallel_reduce_range(ex, AN, 8, &r, a_rsum, a_add, av, cfg), r == sum + 1, r == 1);
    size_t idx = 0;
    ALGO("weft_parallel_min_element", idx = 77,
         weft_parallel_min_element(ex, av, AN, 8, a_cmp, NULL, &idx, cfg), idx == mini, idx == 77);
    ALGO("weft_parallel_max_element", idx = 77,
         weft_parallel_max_element(ex, av, AN, 8, a_cmp, NULL, &idx, cfg), idx == maxi, idx == 77);
    uint64_t target = av[AN - 3];
    size_t first = 0;
    while (av[first] != target) first++;
    ALGO("weft_parallel_find_if", idx = 77,
         weft_parallel_find_if(ex, av, AN, 8, a_is_target, &target, &idx, cfg), idx == first, idx == 77);
    uint64_t init = 0;
    ALGO("weft_parallel_inclusive_scan", memset(aout, 0, sizeof aout),
         weft_parallel_inclusive_scan(ex, av, aout, AN, 8, &init, a_add, NULL, cfg), aout[AN - 1] == sum, aout[AN - 1] == 0);
    ALGO("weft_parallel_exclusive_scan", memset(aout, 0, sizeof aout),
         weft_parallel_exclusive_scan(ex, av, aout, AN, 8, &init, a_add, NULL, cfg), aout[AN - 1] == sum - av[AN - 1],
         aout[AN - 1] == 0);
    ALGO("weft_parallel_scan_range", memset(aout, 0, sizeof aout),
         weft_parallel_scan_range(ex, AN, 8, NULL, a_rsum, a_sscan, a_add, av, cfg), aout[AN - 1] == sum,
         aout[AN - 1] == 0);
    ALGO("weft_parallel_sort", memcpy(aout, av, sizeof av),
         weft_parallel_sort(ex, aout, AN, 8, a_cmp, NULL, cfg), a_sorted(aout), !memcmp(aout, av, sizeof av));
    ALGO("weft_parallel_stable_sort", memcpy(aout, av, sizeof av),
         weft_parallel_stable_sort(ex, aout, AN, 8, a_cmp, NULL, cfg), a_sorted(aout), !memcmp(aout, av, sizeof av));
    ALGO("weft_parallel_sort", memcpy(aout, av, sizeof av), weft_u64_sort(ex, aout, AN, cfg), a_sorted(aout),
         !memcmp(aout, av, sizeof av));
    ALGO("weft_parallel_sort", memcpy(aout, av, sizeof av), weft_u64_stable_sort(ex, aout, AN, cfg), a_sorted(aout),
         !memcmp(aout, av, sizeof av));
    ALGO("weft_parallel_reduce", r = 0, weft_u64_sum_reduce(ex, av, AN, &r, cfg), r == sum, r == 0);
    ALGO("weft_parallel_inclusive_scan", memset(aout, 0, sizeof aout), weft_u64_sum_inclusive_scan(ex, av, aout, AN, NULL, cfg),
         aout[AN - 1] == sum, aout[AN - 1] == 0);
    ALGO("weft_parallel_exclusive_scan", memset(aout, 0, sizeof aout), weft_u64_sum_exclusive_scan(ex, av, aout, AN, 0, cfg),
         aout[AN - 1] == sum - av[AN - 1], aout[AN - 1] == 0);
    (void)abuf;
    weft_executor_destroy(g_ex);
}

TEST(every_parallel_algorithm_reports_enomem_unchanged_or_is_exact_at_each_allocation) {
    sweep("algorithms", p_algo, 250);
}

/* Emplaced algorithms in a taskflow: a failure inside fails the task with
 * task code WEFT_ENOMEM. */
static void p_algo_tasks(void) {
    EXECUTOR(2);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("algos", &err_));
    a_fill();
    static uint64_t r;
    weft_for_desc fd = { .first = 0, .last = AN, .step = 1, .body = a_range };
    weft_reduce_desc rd = { .in = av, .n = AN, .size = 8, .result = &r, .op = a_add };
    weft_sort_desc sd = { .base = aout, .n = AN, .size = 8, .cmp = a_cmp };
    static uint64_t tr[AN], sc[AN];
    static const uint64_t zero = 0;
    weft_transform_desc td = { .in = av, .in_size = 8, .out = tr, .out_size = 8, .n = AN, .f = a_double };
    weft_scan_desc scd = { .in = av, .out = sc, .n = AN, .size = 8, .init = &zero, .op = a_add, .exclusive = true };
    weft_task t1, t2, t3, t4, t5;
    TASK("weft_emplace_for", tf, t1, weft_emplace_for(tf, &fd));
    TASK("weft_emplace_reduce", tf, t2, weft_emplace_reduce(tf, &rd));
    TASK("weft_emplace_sort", tf, t3, weft_emplace_sort(tf, &sd));
    TASK("weft_emplace_transform", tf, t4, weft_emplace_transform(tf, &td));
    TASK("weft_emplace_scan", tf, t5, weft_emplace_scan(tf, &scd));
    weft_future *f;
    RUN("weft_run", f, (memset((void *)ahit, 0, sizeof ahit), r = 0, memcpy(aout, av, sizeof av), weft_run(g_ex, tf, &f)));
    uint64_t sum = 0;
    for (size_t i = 0; i < AN; i++) sum += av[i];
    if (!a_hits(1) || !a_sorted(aout) || r != sum || tr[AN - 1] != 2 * av[AN - 1] || sc[AN - 1] != sum - av[AN - 1])
        problem("emplaced algorithms: wrong result");
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(emplaced_algorithms_fail_their_task_with_enomem_at_each_allocation) {
    sweep("algorithm tasks", p_algo_tasks, 100);
}

/* ==== pipelines and data pipelines ========================================== */

static atomic_int pipe_seen;
static int st_first(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) >= 20) return (int)weft_pipeflow_stop(pf);
    return 0;
}
static int st_mid(weft_pipeflow *pf, void *arg) { (void)pf, (void)arg; return 0; }
static int st_last(weft_pipeflow *pf, void *arg) {
    (void)pf, (void)arg;
    atomic_fetch_add(&pipe_seen, 1);
    return 0;
}
static int d_first(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)in, (void)arg;
    if (weft_pipeflow_token(pf) >= 20) return (int)weft_pipeflow_stop(pf);
    *(double *)out = (double)weft_pipeflow_token(pf);
    return 0;
}
static int d_twice(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf, (void)arg;
    *(double *)out = 2 * *(double *)in;
    return 0;
}
static int d_last(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf, (void)out, (void)arg;
    atomic_fetch_add(&pipe_seen, (int)*(double *)in);
    return 0;
}
static int item_inc(void *item, size_t index, void *arg) {
    (void)index, (void)arg;
    (*(int *)item)++;
    return 0;
}

static void p_pipeline(void) {
    EXECUTOR(2);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("pipes", &err_));
    const weft_stage stages[] = { { WEFT_STAGE_SERIAL, st_first, NULL, "first" },
                                  { WEFT_STAGE_PARALLEL, st_mid, NULL, "mid" },
                                  { WEFT_STAGE_SERIAL, st_last, NULL, "last" } };
    weft_pipeline *p, *d, *s;
    NEW("weft_pipeline_create", p, weft_pipeline_create(4, stages, 3, &err_));
    const weft_data_stage ds[] = {
        { .fn = d_first, .name = "make", .WEFT_DATA_OUT(double) },
        { .kind = WEFT_STAGE_PARALLEL, .fn = d_twice, .name = "twice", .WEFT_DATA_IN(double), .WEFT_DATA_OUT(double) },
        { .fn = d_last, .name = "sum", .WEFT_DATA_IN(double) },
    };
    NEW("weft_data_pipeline_create", d, weft_data_pipeline_create(3, ds, 3, &err_));
    static int items[16];
    memset(items, 0, sizeof items);
    const weft_item_stage is[] = { { WEFT_STAGE_PARALLEL, item_inc, NULL, "inc" } };
    NEW("weft_simple_pipeline_create", s, weft_simple_pipeline_create(2, items, 16, sizeof(int), is, 1, &err_));
    weft_task tp, td, ts;
    TASK("weft_pipeline_emplace", tf, tp, weft_pipeline_emplace(tf, p));
    TASK("weft_pipeline_emplace", tf, td, weft_pipeline_emplace(tf, d));
    TASK("weft_pipeline_emplace", tf, ts, weft_pipeline_emplace(tf, s));
    ST("weft_precede", weft_precede(tp, td));
    weft_future *f;
    RUN("weft_run", f, (atomic_store(&pipe_seen, 0), memset(items, 0, sizeof items), weft_pipeline_reset(p),
                        weft_pipeline_reset(d), weft_run(g_ex, tf, &f)));
    if (atomic_load(&pipe_seen) != 20 + 380 || items[15] != 1)
        problem("pipelines: %d seen, item %d; want 400, 1", atomic_load(&pipe_seen), items[15]);
    ST("weft_pipeline_set_scheduling", weft_pipeline_set_scheduling(p, WEFT_PIPELINE_SPREAD));
    ST("weft_pipeline_set_priority", weft_pipeline_set_priority(d, WEFT_PRIORITY_HIGH));
    RUN("weft_run", f, (atomic_store(&pipe_seen, 0), weft_pipeline_reset(p), weft_pipeline_reset(d),
                        weft_run(g_ex, tf, &f)));
    if (atomic_load(&pipe_seen) != 400) problem("pipelines rerun: %d seen, want 400", atomic_load(&pipe_seen));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    ST("weft_pipeline_destroy", weft_pipeline_destroy(p));
    ST("weft_pipeline_destroy", weft_pipeline_destroy(d));
    ST("weft_pipeline_destroy", weft_pipeline_destroy(s));
    weft_executor_destroy(g_ex);
}

TEST(pipelines_data_and_simple_pipelines_report_enomem_at_each_allocation_and_rerun) {
    sweep("pipeline", p_pipeline, 150);
}

/* ==== cancellation: tokens, callbacks, deadlines ============================= */

static atomic_int g_cb_runs, g_cb_failed;
static void on_cancel(void *arg, const char *reason) {
    (void)reason; atomic_fetch_add((atomic_int *)arg, 1); }
static int spin_until_cancelled(weft_ctx *ctx, void *arg) {
    (void)arg;
    for (int i = 0; i < 20000 && !weft_ctx_cancelled(ctx); i++) sleep_us(50);
    return 0;
}
static int with_dl(weft_cancel_token *t, void *arg) { (void)t, (void)arg; return 7; }
static int root_noop(weft_ctx *ctx, void *arg) { (void)ctx, (void)arg; return 0; }

/* The run attached to a token ends as soon as the token's flag is set, while
 * the timer thread may still be running the rest of that deadline's cancel
 * (the callbacks; cancel.h): the callback count and a reset are read once
 * that cancel is over.  weft_cancel_token_reset says WEFT_EBUSY while "t's
 * deadline is cancelling it right now; try again once it has returned". */
static weft_status reset_once_idle(weft_cancel_token *t) {
    weft_status st;
    for (int i = 0; (st = weft_cancel_token_reset(t)) == WEFT_EBUSY && i < 100000; i++) sleep_us(100);
    return st;
}

static void p_cancel(void) {
    EXECUTOR(2);
    static atomic_int called;
    atomic_store(&called, 0);
    weft_cancel_token *t, *child;
    NEW("weft_cancel_token_create", t, weft_cancel_token_create(NULL, &err_));
    NEW("weft_cancel_token_create", child, weft_cancel_token_create(t, &err_));
    weft_cancel_callback *cb = NULL;
    ST("weft_cancel_token_on_cancel", weft_cancel_token_on_cancel(child, on_cancel, &called, &cb));
    /* a run stopped by the token */
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("spin", &err_));
    weft_task sp;
    TASK("weft_emplace", tf, sp, weft_emplace(tf, spin_until_cancelled, NULL));
    weft_future *f = NULL;
    ST("weft_run", weft_run(g_ex, tf, &f));
    if (f) {
        ST("weft_cancel_attach", weft_cancel_attach(child, f));
        ST("weft_cancel_after", weft_cancel_after(t, 2 * MS));
        weft_status st = weft_future_wait_for(f, 10 * SEC);
        if (st != WEFT_ECANCELED) problem("a run attached to a token cancelled by its deadline: %s", weft_errname(st));
        weft_future_destroy(f);
    }
    for (int i = 0; i < 10000 && atomic_load(&called) == 0; i++) sleep_us(1000);
    if (atomic_load(&called) != 1) problem("the token's callback ran %d times", atomic_load(&called));
    if (strcmp(weft_cancel_token_reason(child), "deadline exceeded"))
        problem("child's reason \"%s\"", weft_cancel_token_reason(child));
    (void)weft_cancel_callback_remove(cb);
    ST("weft_cancel_token_reset", reset_once_idle(t));
    ST("weft_cancel_token_reset", reset_once_idle(child));
    /* a deadline scope that ends in time */
    weft_deadline dl;
    ST("weft_deadline_begin", weft_deadline_begin(&dl, t, 10 * SEC));
    ST("weft_deadline_end", weft_deadline_end(&dl));
    int result = 0;
    sentinel();
    weft_status st = weft_with_deadline(10 * SEC, with_dl, NULL, &result);
    /* the message of the call it made that failed (R3) */
    if (st == WEFT_ENOMEM) enomem("weft_"), st = weft_with_deadline(10 * SEC, with_dl, NULL, &result);
    if (st != WEFT_OK || result != 7) problem("weft_with_deadline: %s, %d", weft_errname(st), result);
    sentinel();
    st = weft_run_root_with_token(g_ex, t, root_noop, NULL, &result);
    if (st == WEFT_ENOMEM)
        enomem("weft_run_root"), st = weft_run_root_with_token(g_ex, t, root_noop, NULL, &result);
    if (st != WEFT_OK) problem("weft_run_root_with_token: %s", weft_errname(st));
    ST("weft_cancel_token_cancel_with", weft_cancel_token_cancel_with(t, "enough"));
    weft_cancel_token_destroy(child);
    weft_cancel_token_destroy(t);
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(tokens_callbacks_deadlines_and_attached_runs_report_enomem_at_each_allocation) {
    sweep("cancel", p_cancel, 100);
}

/* ==== priorities and ready-queue policies ==================================== */

static void p_sched_kind(weft_sched_kind kind) {
    static atomic_int c[4];
    for (int i = 0; i < 4; i++) atomic_store(&c[i], 0);
    const weft_sched_config sc = { .kind = kind };
    NEW("weft_executor_create", g_ex,
        weft_executor_create(&(weft_executor_config){ .workers = kind == WEFT_SCHED_RANDOM ? 1 : 2, .sched = &sc },
                             &err_));
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("prio", &err_));
    weft_task t[4];
    for (int i = 0; i < 4; i++) {
        TASK("weft_emplace", tf, t[i], weft_emplace(tf, bump, &c[i]));
        ST("weft_task_set_priority", weft_task_set_priority(t[i], (weft_priority)(i % 4 - 1)));
    }
    ST("weft_precede", weft_precede(t[0], t[3]));
    weft_future *f;
    RUN("weft_run", f, weft_run(g_ex, tf, &f));
    RUN("weft_run", f, weft_run_with_priority(g_ex, tf, WEFT_PRIORITY_LOW, &f));
    weft_sched_handle h;
    RUN("weft_async_with", f,
        weft_async_with(g_ex, bump, &c[0], &(weft_async_options){ .priority = WEFT_PRIORITY_CRITICAL, .handle = &h }, &f));
    RUN("weft_async_with", f,
        weft_async_with(g_ex, bump, &c[0], &(weft_async_options){ .priority = WEFT_PRIORITY_LOW }, &f));
    weft_sched_entry e[4];
    size_t n = 0;
    ST("weft_sched_snapshot", weft_sched_snapshot(g_ex, e, 4, &n));
    size_t moved = 0;
    ST("weft_sched_escalate", weft_sched_escalate(g_ex, &moved));
    ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}
static void p_sched(void) {
    p_sched_kind(WEFT_SCHED_WORK_STEALING);
    p_sched_kind(WEFT_SCHED_FIFO);
    p_sched_kind(WEFT_SCHED_PRIORITY);
    p_sched_kind(WEFT_SCHED_ROUND_ROBIN);
    p_sched_kind(WEFT_SCHED_RANDOM);
}

TEST(priorities_under_every_ready_queue_policy_report_enomem_at_each_allocation) {
    sweep("sched", p_sched, 200);
}

/* ==== observe: metrics, profiler, trace export, dump ========================== */

/* Writes with w to a temporary file (weft_executor_dump writes through the
 * fd), retrying once after WEFT_ENOMEM; the text written by the call that
 * succeeded must hold `must` and not `must_not` (NULL: no check). */
static void to_file(const char *call, weft_status (*w)(const weft_executor *, FILE *), const char *must,
                    const char *must_not) {
    FILE *out = tmpfile();
    if (!out) return;
    sentinel();
    weft_status st = w(g_ex, out);
    if (st == WEFT_ENOMEM) {
        enomem(call);
        fflush(out);
        if (ftruncate(fileno(out), 0) != 0) problem("ftruncate");
        rewind(out);
        st = w(g_ex, out);
    }
    if (st != WEFT_OK) problem("%s: %s", call, weft_errname(st));
    fflush(out);
    long len = lseek(fileno(out), 0, SEEK_END);
    char *text = calloc(1, (size_t)(len > 0 ? len : 0) + 1);
    if (len <= 0) problem("%s wrote nothing", call);
    else if (pread(fileno(out), text, (size_t)len, 0) == len) {
        if (must && !strstr(text, must)) problem("%s: WEFT_OK but the output lacks \"%s\"", call, must);
        if (must_not && strstr(text, must_not)) problem("%s: WEFT_OK but the output holds \"%s\"", call, must_not);
    }
    free(text);
    fclose(out);
}
static weft_status w_folded(const weft_executor *ex, FILE *out) { return weft_profiler_write_folded(ex, NULL, out); }
static weft_status w_flame(const weft_executor *ex, FILE *out) { return weft_profiler_write_flame_svg(ex, NULL, out); }

static void p_observe(void) {
    static atomic_int c[3];
    EXECUTOR(2);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("observed", &err_));
    weft_task t[3];
    for (int i = 0; i < 3; i++) {
        TASK("weft_emplace", tf, t[i], weft_emplace(tf, bump, &c[i]));
        ST("weft_task_set_name", weft_task_set_name(t[i], "observed task"));
    }
    ST("weft_metrics_enable", weft_metrics_enable(g_ex, true));
    ST("weft_profiler_start", weft_profiler_start(g_ex));
    weft_future *f;
    RUN("weft_run", f, weft_run(g_ex, tf, &f));
    RUN("weft_async", f, weft_async(g_ex, bump, &c[0], &f));
    ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    ST("weft_profiler_stop", weft_profiler_stop(g_ex));
    weft_metrics m;
    weft_worker_metrics wm[2];
    ST("weft_executor_metrics", weft_executor_metrics(g_ex, &m, wm, 2));
    if (m.total.tasks < 4) problem("metrics count %llu tasks, want at least 4", (unsigned long long)m.total.tasks);
    /* Spans the profiler had no memory for are dropped, and counted so
     * (weft_profiler_count): what is in the exports is then not checked. */
    uint64_t spans = 0, dropped = 0;
    ST("weft_profiler_count", weft_profiler_count(g_ex, &spans, &dropped));
    bool whole = dropped == 0;
    /* every task is named: none passes for an unnamed one ("#index") */
    to_file("weft_profiler_write_json", weft_profiler_write_json, NULL, "\"#");
    /* a report whose flame graph is missing is no success */
    to_file("weft_profiler_write_html", weft_profiler_write_html, "Flame graph: busy time", "flame-missing");
    to_file("weft_profiler_write_timeline_svg", weft_profiler_write_timeline_svg, NULL, "<title>#");
    /* frames of unnamed taskflows are numbered from 1: 0 is no taskflow's */
    to_file("weft_profiler_write_folded", w_folded, whole ? "taskflow 1" : NULL, "taskflow 0");
    to_file("weft_profiler_write_flame_svg", w_flame, whole ? "taskflow 1" : NULL, "taskflow 0");
    to_file("weft_executor_dump", weft_executor_dump, NULL, NULL);
    weft_profile *pr = NULL;
    ST("weft_profile_get", weft_profile_get(g_ex, &pr));
    weft_profile_free(pr);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ST("weft_taskflow_dump_dot_profiled", (rewind(out), weft_taskflow_dump_dot_profiled(tf, g_ex, out)));
    fclose(out);
    free(text);
    ST("weft_metrics_enable", weft_metrics_enable(g_ex, false));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(metrics_profiler_exports_and_dumps_report_enomem_at_each_allocation) {
    sweep("observe", p_observe, 250);
}

/* ==== semaphores ============================================================= */

static void p_semaphore(void) {
    static atomic_int c[4];
    EXECUTOR(2);
    weft_semaphore *s;
    NEW("weft_semaphore_create", s, weft_semaphore_create(1, &err_));
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("sem", &err_));
    weft_task t[3];
    for (int i = 0; i < 3; i++) {
        TASK("weft_emplace", tf, t[i], weft_emplace(tf, bump, &c[i]));
        ST("weft_task_acquire", weft_task_acquire(t[i], s));
        ST("weft_task_release", weft_task_release(t[i], s));
    }
    weft_future *f;
    RUN("weft_run", f, weft_run(g_ex, tf, &f));
    RUN("weft_async_acquire", f, weft_async_acquire(g_ex, bump, &c[3], &s, 1, &f));
    if (weft_semaphore_value(s) != 1) problem("semaphore value %zu after the runs, want 1", weft_semaphore_value(s));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    ST("weft_semaphore_destroy", weft_semaphore_destroy(s));
    weft_executor_destroy(g_ex);
}

TEST(semaphores_on_tasks_and_async_tasks_report_enomem_at_each_allocation) {
    sweep("semaphore", p_semaphore, 100);
}

/* ==== more paths: inside tasks, priorities, partitioners, overflow ========== */

/* Algorithms called from a task (a worker: its own deque), at a priority
 * (the scheduling layer's queue) and with each partitioner. */
struct in_task { int prio; weft_algo_config cfg; weft_status st; const char *call; };
static int algos_in_task(weft_ctx *cx, void *arg) {
    struct in_task *it = arg;
    weft_executor *ex = weft_ctx_executor(cx); /* (NULL would be the default executor) */
    weft_priority old;
    if (it->prio) (void)weft_algo_set_priority(WEFT_PRIORITY_CRITICAL, &old);
    uint64_t r = 0, sum = 0;
    for (size_t i = 0; i < AN; i++) sum += av[i];
    memset((void *)ahit, 0, sizeof ahit);
    it->call = "weft_parallel_for";
    it->st = weft_parallel_for(ex, 0, AN, 1, a_index, NULL, &it->cfg);
    if (it->st == WEFT_OK && !a_hits(1)) it->st = 1000;
    if (it->st == WEFT_ENOMEM && !a_hits(0)) it->st = 1001;
    if (it->st == WEFT_OK) {
        it->call = "weft_parallel_reduce";
        it->st = weft_u64_sum_reduce(ex, av, AN, &r, &it->cfg);
        if (it->st == WEFT_OK && r != sum) it->st = 1002;
    }
    if (it->st == WEFT_OK) {
        it->call = "weft_parallel_sort";
        memcpy(aout, av, sizeof av);
        it->st = weft_u64_stable_sort(ex, aout, AN, &it->cfg);
        if (it->st == WEFT_OK && !a_sorted(aout)) it->st = 1003;
        if (it->st == WEFT_ENOMEM && memcmp(aout, av, sizeof av)) it->st = 1004;
    }
    if (it->st == WEFT_OK) {
        it->call = "weft_parallel_exclusive_scan";
        it->st = weft_u64_sum_exclusive_scan(ex, av, aout, AN, 0, &it->cfg);
        if (it->st == WEFT_OK && aout[AN - 1] != sum - av[AN - 1]) it->st = 1005;
    }
    if (it->prio) (void)weft_algo_set_priority(old, NULL);
    return it->st == WEFT_ENOMEM ? WEFT_ENOMEM : 0;
}

static void p_algo_inside(void) {
    EXECUTOR(2);
    a_fill();
    static const weft_partitioner parts[] = { WEFT_PARTITION_AUTO, WEFT_PARTITION_GUIDED, WEFT_PARTITION_STATIC };
    for (int prio = 0; prio < 2; prio++)
        for (int p = 0; p < 3; p++) {
            struct in_task it = { prio, { .partitioner = parts[p] }, 0, "" };
            weft_future *f;
            RUN("weft_async", f, weft_async(g_ex, algos_in_task, &it, &f));
            if (it.st != WEFT_OK) problem("%s in a task (prio %d, partitioner %d): %d", it.call, prio, p, it.st);
        }
    weft_executor_destroy(g_ex);
}

TEST(algorithms_in_tasks_at_a_priority_and_with_each_partitioner_report_enomem_or_are_exact) {
    sweep("algorithms in tasks", p_algo_inside, 200);
}

/* Async from inside tasks (the worker's free list), silent async from
 * outside threads (a submitter slot each), an isolated wait and an eventfd. */
static int async_inside(weft_ctx *cx, void *arg) {
    atomic_int *c = arg;
    weft_executor *ex = weft_ctx_executor(cx);
    weft_future *a = NULL, *b = NULL;
    weft_status st = weft_async(ex, bump, &c[0], &a);
    if (st == WEFT_OK) st = weft_dependent_async(ex, bump, &c[1], &a, 1, &b);
    if (st == WEFT_OK) st = weft_silent_async(ex, bump, &c[2]);
    if (a) (void)weft_future_wait_isolated(a);
    if (b) (void)weft_future_wait(b);
    weft_future_destroy(a);
    weft_future_destroy(b);
    return st;
}
static void *outside_silent(void *arg) {
    weft_status *st = arg;
    static atomic_int sink;
    for (int i = 0; i < 4 && *st == WEFT_OK; i++) *st = weft_silent_async(g_ex, bump, &sink);
    return NULL;
}

static void p_async_paths(void) {
    static atomic_int c[3];
    EXECUTOR(2);
    weft_future *f;
    for (int i = 0; i < 3; i++) atomic_store(&c[i], 0);
    RUN("weft_async", f, weft_async(g_ex, async_inside, c, &f));
    pthread_t th[3];
    weft_status sts[3] = { WEFT_OK, WEFT_OK, WEFT_OK };
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, outside_silent, &sts[i]);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++) {
        if (sts[i] == WEFT_ENOMEM) enomem(NULL); /* its message is on that thread */
        else if (sts[i] != WEFT_OK) problem("weft_silent_async from a thread: %s", weft_errname(sts[i]));
    }
    ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    f = NULL;
    ST("weft_async", weft_async(g_ex, bump, &c[0], &f));
    if (f) {
        int fd = -1;
        weft_status st = weft_future_fd(f, &fd);
        if (st != WEFT_OK && st != WEFT_ESYS) problem("weft_future_fd: %s", weft_errname(st));
        if (weft_future_wait_isolated(f) != WEFT_OK) problem("weft_future_wait_isolated failed");
        weft_future_destroy(f);
    }
    weft_executor_destroy(g_ex);
}

TEST(async_from_tasks_and_from_several_outside_threads_reports_enomem_at_each_allocation) {
    sweep("async paths", p_async_paths, 150);
}

/* Fork-join past the frame stack (16 frames): overflow spawns run at once
 * and keep their statuses in a growing array. */
static int fails_7(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add((atomic_int *)arg, 1);
    return 7;
}
static atomic_int flat_hits;
static int flat_root(weft_ctx *cx, void *arg) {
    (void)arg;
    for (int i = 0; i < 100; i++) {
        int st = weft_spawn(cx, i == 60 ? fails_7 : leaf, &flat_hits);
        if (st) return st;
    }
    int first = 0;
    for (int i = 0; i < 100; i++) {
        int r = weft_sync(cx);
        if (r && !first) first = r;
    }
    return first;
}

static void p_fj_overflow(void) {
    NEW("weft_executor_create", g_ex,
        weft_executor_create(&(weft_executor_config){ .workers = 2, .fork_join_frames = 16 }, &err_));
    for (int try = 0; try < 2; try++) {
        atomic_store(&flat_hits, 0);
        int result = 0;
        sentinel();
        weft_status st = weft_run_root_status(g_ex, flat_root, NULL, &result);
        if (st == WEFT_ENOMEM) {
            enomem("weft_run_root");
            continue;
        }
        if (st == WEFT_ETASK && result == WEFT_ENOMEM) {
            enomem(NULL);
            continue;
        }
        if (st != WEFT_ETASK || result != 7 || atomic_load(&flat_hits) != 100)
            problem("a flat loop of 100 spawns past 16 frames: %s, result %d, %d ran; want WEFT_ETASK, 7, 100",
                    weft_errname(st), result, atomic_load(&flat_hits));
        break;
    }
    weft_executor_destroy(g_ex);
}

TEST(fork_join_spawns_past_the_frame_stack_keep_the_failing_childs_value_at_each_allocation) {
    sweep("fork-join overflow", p_fj_overflow, 100);
}

/* Live statistics published to files. */
static void p_stats(void) {
    EXECUTOR(2);
    char dir[] = "/tmp/oom_hunt42_XXXXXX";
    if (!mkdtemp(dir)) return;
    char path[64], prom[64];
    snprintf(path, sizeof path, "%s/live", dir);
    snprintf(prom, sizeof prom, "%s/weft.prom", dir);
    const weft_stats_config sc = { .path = path, .prom_path = prom };
    ST("weft_stats_start", weft_stats_start(g_ex, &sc));
    static atomic_int c;
    weft_future *f;
    RUN("weft_async", f, weft_async(g_ex, bump, &c, &f));
    ST("weft_stats_stop", weft_stats_stop(g_ex));
    weft_executor_destroy(g_ex);
    remove(path);
    remove(prom);
    rmdir(dir);
}

TEST(live_statistics_start_reports_enomem_at_each_allocation_and_leaves_nothing_running) {
    sweep("stats", p_stats, 100);
}

/* ==== executors with a user policy, an observer, options ===================== */

/* A user policy: a locked LIFO of at most 64 items (push refuses beyond). */
struct upol {
    pthread_mutex_t m;
    weft_sched_item *v[64];
    int n;
    atomic_int destroyed;
};
static int up_push(void *st, weft_sched_item *it, weft_priority p, int w) {
    (void)p, (void)w;
    struct upol *u = st;
    pthread_mutex_lock(&u->m);
    int ok = u->n < 64;
    if (ok) u->v[u->n++] = it;
    pthread_mutex_unlock(&u->m);
    return ok ? 0 : 1;
}
static weft_sched_item *up_pop(void *st, int w) {
    (void)w;
    struct upol *u = st;
    pthread_mutex_lock(&u->m);
    weft_sched_item *it = u->n ? u->v[--u->n] : NULL;
    pthread_mutex_unlock(&u->m);
    return it;
}
static size_t up_size(void *st) { return (size_t)((struct upol *)st)->n; }
static void up_destroy(void *st) { atomic_fetch_add(&((struct upol *)st)->destroyed, 1); }

static atomic_int obs_begin, obs_end;
static void ob_begin(void *u, const weft_task_event *ev) { (void)u, (void)ev; atomic_fetch_add(&obs_begin, 1); }
static void ob_end(void *u, const weft_task_event *ev) { (void)u, (void)ev; atomic_fetch_add(&obs_end, 1); }

static void p_executor_options(void) {
    static struct upol u = { .m = PTHREAD_MUTEX_INITIALIZER };
    static atomic_int c[6];
    u.n = 0;
    atomic_store(&u.destroyed, 0);
    const weft_sched_policy pol = { &u, up_push, up_pop, NULL, up_size, up_destroy };
    const weft_sched_config sc = { .kind = WEFT_SCHED_CUSTOM, .policy = &pol };
    const weft_observer ob = { ob_begin, ob_end, NULL };
    /* The policy's state stays the caller's when a create fails: destroy is
     * called only for an executor that was made (weft/sched.h). */
    weft_status err = WEFT_OK;
    sentinel();
    g_ex = weft_executor_create(
        &(weft_executor_config){ .workers = 3, .sched = &sc, .observer = &ob, .local_queue_capacity = 16 }, &err);
    if (!g_ex) {
        if (err != WEFT_ENOMEM) problem("weft_executor_create: %s", weft_errname(err));
        const char *dq = strstr(weft_last_error_message(), "deque of worker ");
        if (dq && atoi(dq + 16) >= 3) problem("a 3-worker executor's create blames \"%s\"", dq);
        enomem("weft_executor_create");
        if (atomic_load(&u.destroyed)) problem("a create that failed called the policy's destroy");
        g_ex = weft_executor_create(
            &(weft_executor_config){ .workers = 3, .sched = &sc, .observer = &ob, .local_queue_capacity = 16 }, &err);
        if (!g_ex) {
            problem("weft_executor_create failed again: %s", weft_errname(err));
            return;
        }
    }
    atomic_store(&obs_begin, 0);
    atomic_store(&obs_end, 0);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("custom", &err_));
    weft_task t[6];
    for (int i = 0; i < 6; i++) {
        TASK("weft_emplace", tf, t[i], weft_emplace(tf, bump, &c[i]));
        if (i) ST("weft_precede", weft_precede(t[0], t[i]));
    }
    weft_future *f;
    for (int i = 0; i < 6; i++) atomic_store(&c[i], 0);
    RUN("weft_run", f, (atomic_store(&obs_begin, 0), atomic_store(&obs_end, 0), weft_run_n(g_ex, tf, 3, &f)));
    if (atomic_load(&obs_begin) != atomic_load(&obs_end) || atomic_load(&obs_end) < 18)
        problem("observer saw %d begins and %d ends, want 18 each at least", atomic_load(&obs_begin),
                atomic_load(&obs_end));
    RUN("weft_async", f, weft_async(g_ex, bump, &c[0], &f));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
    if (atomic_load(&u.destroyed) != 1) problem("the policy's destroy ran %d times, want 1", atomic_load(&u.destroyed));
}

TEST(an_executor_with_a_user_policy_and_an_observer_reports_enomem_and_destroys_the_policy_once) {
    sweep("executor options", p_executor_options, 150);
}

/* ==== nested runs: a run from a task, a module in a subflow ================== */

struct nest { weft_taskflow *inner; atomic_int *c; };
static int run_inner(weft_ctx *cx, void *arg) {
    struct nest *n = arg;
    weft_status st = weft_run_and_wait(weft_ctx_executor(cx), n->inner);
    if (st == WEFT_OK) st = weft_run_root(weft_ctx_executor(cx), bump, n->c);
    return st;
}
static int sub_module(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)cx;
    struct nest *n = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task m = weft_emplace_module(g, n->inner);
    if (weft_task_is_null(m)) return weft_taskflow_last_error(g); /* before the next builder resets it */
    weft_task a = weft_emplace(g, bump, n->c);
    if (weft_task_is_null(a)) return weft_taskflow_last_error(g);
    return weft_precede(m, a);
}

static void p_nested(void) {
    static atomic_int c[2];
    EXECUTOR(2);
    weft_taskflow *inner, *tf;
    NEW("weft_taskflow_create", inner, weft_taskflow_create("inner", &err_));
    NEW("weft_taskflow_create", tf, weft_taskflow_create("outer", &err_));
    weft_task x, a, b;
    TASK("weft_emplace", inner, x, weft_emplace(inner, bump, &c[0]));
    struct nest n = { inner, &c[1] };
    TASK("weft_emplace", tf, a, weft_emplace(tf, run_inner, &n));
    TASK("weft_emplace_subflow", tf, b, weft_emplace_subflow(tf, sub_module, &n));
    ST("weft_precede", weft_precede(a, b));
    weft_future *f;
    RUN("weft_run", f, (atomic_store(&c[0], 0), atomic_store(&c[1], 0), weft_run(g_ex, tf, &f)));
    if (atomic_load(&c[0]) != 2 || atomic_load(&c[1]) != 2)
        problem("nested: inner ran %d times, bumps %d; want 2 2", atomic_load(&c[0]), atomic_load(&c[1]));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(inner));
    weft_executor_destroy(g_ex);
}

TEST(runs_nested_in_tasks_and_modules_in_subflows_report_enomem_at_each_allocation) {
    sweep("nested runs", p_nested, 150);
}

/* ==== the default executor ==================================================== */

/* Its creation failing for want of memory is reported, and a later call
 * makes it (weft/core.h).  It lives until exit, so in a child process. */
TEST(the_default_executor_failing_to_be_made_for_want_of_memory_is_made_by_a_later_call) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        weft_log_set_level(WEFT_LOG_OFF);
        weft_set_allocator(&counting);
        static atomic_int c;
        int bad = 0;
        for (long k = 1; k < 1000; k++) {
            atomic_store(&A.calls, 0);
            atomic_store(&A.failures, 0);
            atomic_store(&A.burst, 1);
            atomic_store(&A.fail_at, k);
            weft_future *f = NULL;
            weft_status st = weft_async(NULL, bump, &c, &f);
            atomic_store(&A.fail_at, 0);
            if (st == WEFT_ENOMEM) {
                if (!atomic_load(&A.failures)) bad |= 1;
                if (!strstr(weft_last_error_message(), "memory")) bad |= 2;
                continue;
            }
            if (st != WEFT_OK) { bad |= 4; break; }
            st = weft_future_wait_for(f, 10 * SEC);
            weft_future_destroy(f);
            if (st == WEFT_OK) break;
            weft_run_info info = { 0 };
            if (st != WEFT_ETASK) bad |= 8;
            (void)info;
        }
        if (weft_default_executor() == NULL) bad |= 16;
        if (weft_run_root(NULL, bump, &c) != 0) bad |= 32;
        if (bad) fprintf(stderr, "default executor under out of memory: bad %#x\n", bad);
        exit(bad ? 1 : 0); /* exit destroys it */
    }
    int status = wait_child(pid, 30, "default executor child");
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

/* ==== tokens attached to async tasks and run_many sets; handles ============= */

static int wait_cancel(weft_ctx *cx, void *arg) {
    (void)arg;
    for (int i = 0; i < 20000 && weft_ctx_check(cx) == WEFT_OK; i++) sleep_us(50);
    return 0;
}
static void nested_cancel_cb(void *arg, const char *reason) {
    (void)reason;
    /* a callback registering another on its own cancelled token: runs at once */
    weft_cancel_token *t = arg;
    weft_status st = weft_cancel_token_on_cancel(t, on_cancel, &g_cb_runs, NULL);
    if (st != WEFT_OK) atomic_fetch_add(&g_cb_failed, 1);
}

static void p_cancel_attach(void) {
    EXECUTOR(2);
    atomic_store(&g_cb_runs, 0);
    atomic_store(&g_cb_failed, 0);
    weft_cancel_token *t;
    NEW("weft_cancel_token_create", t, weft_cancel_token_create(NULL, &err_));
    ST("weft_cancel_token_on_cancel", weft_cancel_token_on_cancel(t, nested_cancel_cb, t, NULL));
    /* an async task and a run_many set, both stopped by the token */
    weft_future *a = NULL, *set = NULL;
    ST("weft_async", weft_async(g_ex, wait_cancel, NULL, &a));
    weft_taskflow *tfs[2];
    for (int i = 0; i < 2; i++) {
        NEW("weft_taskflow_create", tfs[i], weft_taskflow_create("member", &err_));
        weft_task x;
        TASK("weft_emplace", tfs[i], x, weft_emplace(tfs[i], wait_cancel, NULL));
    }
    ST("weft_run_many", weft_run_many(g_ex, tfs, 2, &set));
    ST("weft_cancel_attach", weft_cancel_attach(t, a));
    ST("weft_cancel_attach", weft_cancel_attach(t, set));
    /* a queued task with a handle: reprioritised, then removed */
    weft_sched_handle h = { 0, 0 };
    weft_future *q = NULL;
    static atomic_int c;
    ST("weft_async_with",
       weft_async_with(g_ex, bump, &c, &(weft_async_options){ .priority = WEFT_PRIORITY_LOW, .handle = &h }, &q));
    weft_status rp = weft_sched_reprioritize(g_ex, h, WEFT_PRIORITY_HIGH);
    if (q && rp != WEFT_OK && rp != WEFT_ENOENT) problem("weft_sched_reprioritize: %s", weft_errname(rp));
    ST("weft_cancel_token_cancel_with", weft_cancel_token_cancel_with(t, "stop"));
    if (weft_future_wait_for(a, 10 * SEC) != WEFT_ECANCELED) problem("an async task attached to a cancelled token did not end cancelled");
    if (weft_future_wait_for(set, 10 * SEC) == WEFT_ETIMEDOUT) problem("a run_many set attached to a cancelled token did not end");
    for (size_t i = 0; i < 2; i++) {
        weft_status m = weft_run_many_status(set, i);
        if (m == WEFT_ENOMEM) S.reported++; /* its submission: the set says so */
        else if (m != WEFT_ECANCELED) problem("member %zu: %s", i, weft_errname(m));
    }
    if (weft_future_wait_for(q, 10 * SEC) == WEFT_ETIMEDOUT) problem("the reprioritised task never ended");
    weft_future_destroy(a);
    weft_future_destroy(set);
    weft_future_destroy(q);
    if (atomic_load(&g_cb_failed) == 0 && atomic_load(&g_cb_runs) != 1)
        problem("the callback registered by a callback ran %d times", atomic_load(&g_cb_runs));
    if (atomic_load(&g_cb_failed)) S.reported++; /* its WEFT_ENOMEM was told to the callback */
    weft_cancel_token_destroy(t);
    ST("weft_executor_wait_all", weft_executor_wait_all(g_ex));
    for (int i = 0; i < 2; i++) ST("weft_taskflow_destroy", weft_taskflow_destroy(tfs[i]));
    weft_executor_destroy(g_ex);
}

TEST(tokens_attached_to_async_tasks_and_run_many_sets_report_enomem_and_stop_them) {
    sweep("cancel attach", p_cancel_attach, 150);
}

/* ==== a semaphore waking a task of another executor with no memory ========== */

static int root_nothing(weft_ctx *ctx, void *arg) { (void)ctx, (void)arg; return 0; }

/* Leaves ex's injector so that its next push needs a new block: weft_run_root
 * from this thread pushes there and allocates nothing else, so with every
 * allocation failing it fails exactly when a block is needed. */
static void fill_injector(weft_executor *ex) {
    atomic_store(&A.calls, 0);
    atomic_store(&A.burst, LONG_MAX / 2);
    atomic_store(&A.fail_at, 1);
    int st = WEFT_OK;
    for (int i = 0; i < 200 && st == WEFT_OK; i++) st = weft_run_root(ex, root_nothing, NULL);
    atomic_store(&A.fail_at, 0);
    atomic_store(&A.burst, 1);
    if (st != WEFT_ENOMEM) TEST_FAIL_("filling the injector: %s", weft_errname(st));
}

struct holder { atomic_int running, go; };
static int hold_until_go(weft_ctx *cx, void *arg) {
    (void)cx;
    struct holder *h = arg;
    atomic_store(&h->running, 1);
    wait_flag(&h->go, 1, 10);
    return 0;
}

/* A task of executor A parked on a semaphore whose unit a task of executor B
 * holds; B's task gives it back while A's queue cannot take the waiter for
 * want of memory.  The waiter must still run (it stayed parked for ever,
 * holding the unit: the run never ended and destroying A hung). */
TEST(a_semaphore_release_on_one_executor_wakes_a_task_of_another_whose_queue_has_no_memory) {
    memset(&A, 0, sizeof A);
    atomic_store(&A.burst, 1);
    weft_log_set_level(WEFT_LOG_OFF);
    weft_set_allocator(&counting);
    weft_executor *ea = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    weft_executor *eb = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    weft_semaphore *s = weft_semaphore_create(1, NULL);
    ASSERT_TRUE(ea && eb && s);
    static struct holder h;
    static atomic_int ran;
    atomic_store(&h.running, 0);
    atomic_store(&h.go, 0);
    atomic_store(&ran, 0);
    weft_future *fh = NULL, *fw = NULL;
    ASSERT_OK(weft_async_acquire(eb, hold_until_go, &h, &s, 1, &fh));
    ASSERT_TRUE(wait_flag(&h.running, 1, 10));
    ASSERT_OK(weft_async_acquire(ea, bump, &ran, &s, 1, &fw));
    sleep_us(50000); /* A's worker takes the task and parks it on s */
    ASSERT_FALSE(weft_future_ready(fw));
    fill_injector(ea);
    /* every allocation fails while B's task gives the unit back */
    atomic_store(&A.calls, 0);
    atomic_store(&A.burst, LONG_MAX / 2);
    atomic_store(&A.fail_at, 1);
    atomic_store(&h.go, 1);
    ASSERT_OK(weft_future_wait_for(fh, 10 * SEC));
    weft_status st = weft_future_wait_for(fw, 2 * SEC);
    atomic_store(&A.fail_at, 0);
    atomic_store(&A.burst, 1);
    if (st == WEFT_ETIMEDOUT) TEST_FAIL_("the woken task of A never ran: it stays parked holding the unit");
    ASSERT_OK(st);
    ASSERT_EQ(atomic_load(&ran), 1);
    ASSERT_EQ(weft_semaphore_value(s), 1);
    weft_future_destroy(fh);
    weft_future_destroy(fw);
    /* both executors go on working */
    ASSERT_OK(weft_run_root(ea, bump, &ran));
    ASSERT_OK(weft_run_root(eb, bump, &ran));
    weft_executor_destroy(ea);
    weft_executor_destroy(eb);
    ASSERT_OK(weft_semaphore_destroy(s));
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    weft_set_allocator(NULL);
}

/* ==== weft_sched_remove releasing dependents with no memory ================= */

/* weft_sched_remove on a thread that is not a worker reports the removed task
 * cancelled there and queues its dependents through the injector; with no
 * memory for the injector's next block that must neither hang the caller nor
 * lose the dependent (it spun until memory came back). */
TEST(removing_a_queued_task_whose_dependent_must_go_through_a_full_injector_with_no_memory_does_not_hang) {
    memset(&A, 0, sizeof A);
    atomic_store(&A.burst, 1);
    weft_log_set_level(WEFT_LOG_OFF);
    weft_set_allocator(&counting);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1 }, NULL);
    ASSERT_NOT_NULL(ex);
    static struct holder h;
    static atomic_int ran;
    atomic_store(&h.running, 0);
    atomic_store(&h.go, 0);
    atomic_store(&ran, 0);
    fill_injector(ex);
    /* the worker busy (through this thread's submitter slot, not the injector) */
    ASSERT_OK(weft_silent_async(ex, hold_until_go, &h));
    ASSERT_TRUE(wait_flag(&h.running, 1, 10));
    weft_sched_handle hd;
    weft_future *fa = NULL, *fb = NULL;
    ASSERT_OK(weft_async_with(ex, bump, &ran, &(weft_async_options){ .priority = WEFT_PRIORITY_LOW, .handle = &hd }, &fa));
    ASSERT_OK(weft_dependent_async(ex, bump, &ran, &fa, 1, &fb));
    /* every allocation fails from here */
    atomic_store(&A.calls, 0);
    atomic_store(&A.burst, LONG_MAX / 2);
    atomic_store(&A.fail_at, 1);
    alarm(5);
    signal(SIGALRM, on_alarm);
    S.area = "weft_sched_remove";
    weft_status st = weft_sched_remove(ex, hd);
    alarm(0);
    atomic_store(&A.fail_at, 0);
    atomic_store(&A.burst, 1);
    atomic_store(&h.go, 1);
    ASSERT_OK(st);
    ASSERT_STATUS(weft_future_wait_for(fa, 10 * SEC), WEFT_ECANCELED);
    ASSERT_OK(weft_future_wait_for(fb, 10 * SEC));
    ASSERT_EQ(atomic_load(&ran), 1);
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    weft_set_allocator(NULL);
}

/* ==== compositions, factories, parameters, shared work ======================== */

static atomic_int comp_hits;
static weft_status build_chain(weft_composition *c, const weft_params *p, void *arg) {
    (void)arg;
    int64_t n = 0;
    weft_status st = weft_params_get_int(p, "n", &n);
    if (st) return st;
    weft_taskflow *g = weft_composition_graph(c);
    weft_task prev = WEFT_TASK_NULL, first = WEFT_TASK_NULL;
    for (int64_t i = 0; i < n; i++) {
        weft_task t = weft_emplace(g, bump, &comp_hits);
        if (weft_task_is_null(t)) return weft_taskflow_last_error(g);
        if (i == 0) first = t;
        else if ((st = weft_precede(prev, t))) return st;
        prev = t;
    }
    if ((st = weft_composition_set_entry(c, "in", first))) return st;
    return weft_composition_set_exit(c, "out", prev);
}
static void drop_state(void *state) { atomic_fetch_add((atomic_int *)state, 100); }

static void p_composition(void) {
    EXECUTOR(2);
    atomic_store(&comp_hits, 0);
    weft_params *p;
    NEW("weft_params_create", p, weft_params_create(&err_));
    ST("weft_params_set_int", weft_params_set_int(p, "n", 3));
    ST("weft_params_set_string", weft_params_set_string(p, "label", "a chain of three"));
    weft_factory *fac;
    NEW("weft_factory_create", fac, weft_factory_create("chain", build_chain, NULL, &err_));
    ST("weft_factory_require", weft_factory_require(fac, "n", WEFT_PARAM_INT));
    weft_composition *c;
    NEW("weft_factory_make", c, weft_factory_make(fac, p, &err_));
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("composed", &err_));
    weft_instance i1, i2;
    ST("weft_composition_instantiate", weft_composition_instantiate(c, tf, "one", &i1));
    ST("weft_composition_instantiate", weft_composition_instantiate(c, tf, "two", &i2));
    ST("weft_precede", weft_precede(weft_instance_exit(&i1, "out"), weft_instance_entry(&i2, "in")));
    static atomic_int shared_hits;
    atomic_store(&shared_hits, 0);
    weft_work *w;
    NEW("weft_work_create", w, weft_work_create(bump, &shared_hits, drop_state, &err_));
    weft_task s1, s2;
    TASK("weft_emplace_work", tf, s1, weft_emplace_work(tf, w));
    TASK("weft_emplace_work", tf, s2, weft_emplace_work(tf, w));
    weft_work_release(w);
    weft_future *f;
    RUN("weft_run", f, (atomic_store(&comp_hits, 0), atomic_store(&shared_hits, 0), weft_run(g_ex, tf, &f)));
    if (atomic_load(&comp_hits) != 6 || atomic_load(&shared_hits) != 2)
        problem("composition: %d chain tasks and %d shared runs; want 6 and 2", atomic_load(&comp_hits),
                atomic_load(&shared_hits));
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    if (atomic_load(&shared_hits) != 102) problem("the shared work's state was not dropped once (%d)", atomic_load(&shared_hits));
    ST("weft_composition_destroy", weft_composition_destroy(c));
    weft_factory_destroy(fac);
    weft_params_destroy(p);
    weft_executor_destroy(g_ex);
}

TEST(compositions_factories_parameters_and_shared_work_report_enomem_at_each_allocation) {
    sweep("composition", p_composition, 150);
}

/* ==== larger shapes: growth paths ============================================= */

static int wide_sub(weft_ctx *cx, weft_subflow *sf, void *arg) {
    (void)cx;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task first = weft_emplace(g, bump, arg);
    if (weft_task_is_null(first)) return weft_taskflow_last_error(g);
    for (int i = 0; i < 99; i++) {
        weft_task t = weft_emplace(g, bump, arg);
        if (weft_task_is_null(t)) return weft_taskflow_last_error(g);
        weft_status st = weft_precede(first, t);
        if (st) return st;
    }
    return 0;
}

static void p_large(void) {
    enum { NT = 300 };
    static atomic_int c[NT], sub_hits, chain_hits;
    EXECUTOR(3);
    weft_taskflow *tf;
    NEW("weft_taskflow_create", tf, weft_taskflow_create("large", &err_));
    static weft_task t[NT];
    for (int i = 0; i < NT; i++) TASK("weft_emplace", tf, t[i], weft_emplace(tf, bump, &c[i]));
    /* a hub with many successors and one with many dependents, then a lattice */
    ST("weft_precede_many", weft_precede_many(t[0], t + 1, 99));
    ST("weft_succeed_many", weft_succeed_many(t[NT - 1], t + 100, 99));
    for (int i = 1; i < 100; i++) ST("weft_precede", weft_precede(t[i], t[100 + (i * 7) % 99]));
    for (int i = 200; i < NT - 1; i++) ST("weft_precede", weft_precede(t[i - 100], t[i]));
    weft_future *f;
    /* preparing the graph names the call made (it said "weft_taskflow_validate/weft_run") */
    RUN("weft_run_n_parallel", f, (memset(c, 0, sizeof c), weft_run_n_parallel(g_ex, tf, 8, &f)));
    expect_count("large graph in parallel", c, NT, 8);
    weft_task s; /* (weft_run_n_parallel refuses subflows) */
    TASK("weft_emplace_subflow", tf, s, weft_emplace_subflow(tf, wide_sub, &sub_hits));
    ST("weft_precede", weft_precede(t[0], s));
    RUN("weft_run", f, (memset(c, 0, sizeof c), atomic_store(&sub_hits, 0), weft_run_n(g_ex, tf, 2, &f)));
    expect_count("large graph", c, NT, 2);
    if (atomic_load(&sub_hits) != 200) problem("wide subflow: %d, want 200", atomic_load(&sub_hits));
    /* a chain of 60 dependent async tasks, each on the three before it */
    atomic_store(&chain_hits, 0);
    weft_future *fs[60] = { 0 };
    int made = 0;
    for (; made < 60; made++) {
        size_t nd = made < 3 ? (size_t)made : 3;
        sentinel();
        weft_status st = weft_dependent_async(g_ex, bump, &chain_hits, fs + made - nd, nd, &fs[made]);
        if (st == WEFT_ENOMEM) {
            enomem("weft_dependent_async");
            st = weft_dependent_async(g_ex, bump, &chain_hits, fs + made - nd, nd, &fs[made]);
        }
        if (st != WEFT_OK) {
            problem("weft_dependent_async: %s", weft_errname(st));
            break;
        }
    }
    for (int i = 0; i < made; i++) {
        if (weft_future_wait_for(fs[i], 10 * SEC) != WEFT_OK) problem("chain task %d failed", i);
        weft_future_destroy(fs[i]);
    }
    if (atomic_load(&chain_hits) != made) problem("chain: %d ran of %d", atomic_load(&chain_hits), made);
    ST("weft_taskflow_destroy", weft_taskflow_destroy(tf));
    weft_executor_destroy(g_ex);
}

TEST(a_large_graph_a_wide_subflow_and_a_long_dependent_chain_report_enomem_at_sampled_allocations) {
    sweep("large", p_large, 150);
}
