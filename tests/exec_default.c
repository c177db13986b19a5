/* The default executor (weft_default_executor, weft/core.h): one pool per
 * process, made on first use, shared by every call given NULL for its executor,
 * refused by weft_executor_destroy, destroyed at exit.
 *
 * Every test runs in a process of its own (the harness forks one per test), so
 * each sees the first use; they set WEFT_WORKERS=3 before it, so the size is
 * known.  The exit tests fork a child that exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fork_util.h"
#include "harness.h"
#include "test_util.h"
#include "warn_capture.h"

#include <weft.h>
#include <weft/algo_typed.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_WORKERS 3

static weft_executor *use_default(void) {
    setenv("WEFT_WORKERS", "3", 1); /* read when it is created */
    return weft_default_executor();
}

static int record_executor(weft_ctx *ctx, void *arg) {
    *(weft_executor **)arg = weft_ctx_executor(ctx);
    return 0;
}

/* ---- sharing -------------------------------------------------------------------- */

/* Two "libraries" that know nothing of each other: one runs a graph, the other
 * an async task, both with NULL. */
static weft_executor *library_a(void) {
    weft_executor *seen = NULL;
    weft_taskflow *tf = weft_taskflow_create("library_a", NULL);
    if (!tf || weft_task_is_null(weft_emplace(tf, record_executor, &seen))) return NULL;
    weft_status st = weft_run_and_wait(NULL, tf);
    (void)weft_taskflow_destroy(tf);
    return st == WEFT_OK ? seen : NULL;
}

static weft_executor *library_b(void) {
    weft_executor *seen = NULL;
    weft_future *f = NULL;
    if (weft_async(NULL, record_executor, &seen, &f) != WEFT_OK) return NULL;
    weft_status st = weft_future_wait(f);
    weft_future_destroy(f);
    return st == WEFT_OK ? seen : NULL;
}

TEST(two_libraries_passing_null_share_one_pool) {
    weft_executor *d = use_default();
    ASSERT_NOT_NULL(d);
    weft_executor *a = library_a(), *b = library_b();
    ASSERT_NOT_NULL(a);
    ASSERT_TRUE(a == d);
    ASSERT_TRUE(b == d);
    ASSERT_EQ(weft_executor_workers(d), DEFAULT_WORKERS); /* sized by WEFT_WORKERS */
    ASSERT_TRUE(weft_default_executor() == d);            /* the same one every time */
}

/* ---- first use from several threads at once -------------------------------------- */

#define RACERS 8
static atomic_int racers_ready;
static weft_executor *racer_got[RACERS];
static int racer_root[RACERS];

static int return_seven(weft_ctx *ctx, void *arg) { return 7; }

static void *racer(void *arg) {
    int i = (int)(intptr_t)arg;
    atomic_fetch_add(&racers_ready, 1);
    while (atomic_load(&racers_ready) < RACERS) {
    } /* start together */
    racer_got[i] = weft_default_executor();
    racer_root[i] = weft_run_root(NULL, return_seven, NULL);
    return NULL;
}

TEST(concurrent_first_uses_create_one_default_executor) {
    setenv("WEFT_WORKERS", "3", 1);
    pthread_t t[RACERS];
    for (int i = 0; i < RACERS; i++) ASSERT_EQ(pthread_create(&t[i], NULL, racer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < RACERS; i++) pthread_join(t[i], NULL);
    ASSERT_NOT_NULL(racer_got[0]);
    for (int i = 0; i < RACERS; i++) {
        ASSERT_TRUE(racer_got[i] == racer_got[0]);
        ASSERT_EQ(racer_root[i], 7);
    }
    ASSERT_TRUE(weft_default_executor() == racer_got[0]);
    ASSERT_EQ(weft_executor_workers(racer_got[0]), DEFAULT_WORKERS);
}

/* ---- from inside its own tasks ---------------------------------------------------- */

static void add_u64(void *acc, const void *x, void *arg) { *(uint64_t *)acc += *(const uint64_t *)x; }

/* Returns 0, or which check failed. */
static int nested_user(weft_ctx *ctx, void *arg) {
    if (weft_default_executor() != weft_ctx_executor(ctx)) return 1;
    uint64_t v[1000], sum = 0;
    for (int i = 0; i < 1000; i++) v[i] = (uint64_t)i;
    if (weft_parallel_reduce(NULL, v, 1000, sizeof v[0], &sum, add_u64, NULL, NULL) != WEFT_OK) return 2;
    if (sum != 999 * 1000 / 2) return 3;
    atomic_int n = 0;
    weft_future *f = NULL;
    if (weft_async(NULL, bump, &n, &f) != WEFT_OK) return 4;
    if (weft_future_wait(f) != WEFT_OK || atomic_load(&n) != 1) return 5; /* runs other work meanwhile */
    weft_future_destroy(f);
    weft_taskflow *tf = weft_taskflow_create("nested", NULL);
    if (!tf || weft_task_is_null(weft_emplace(tf, bump, &n))) return 6;
    if (weft_run_and_wait(NULL, tf) != WEFT_OK || atomic_load(&n) != 2) return 7;
    if (weft_taskflow_destroy(tf) != WEFT_OK) return 8;
    if (weft_run_root(NULL, return_seven, NULL) != 7) return 9; /* nested: a plain call */
    return 0;
}

TEST(the_default_executor_runs_work_from_its_own_tasks) {
    ASSERT_NOT_NULL(use_default());
    int result = -1;
    ASSERT_STATUS(weft_run_root_status(NULL, nested_user, NULL, &result), WEFT_OK);
    ASSERT_EQ(result, 0);
}

/* ---- every call given NULL --------------------------------------------------------- */

static bool always(void *arg) { return true; }
static void count_index(size_t i, void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }
static void count_range(size_t lo, size_t hi, void *arg) { atomic_fetch_add((atomic_int *)arg, (int)(hi - lo)); }
static void double_u64(const void *in, void *out, void *arg) { *(uint64_t *)out = 2 * *(const uint64_t *)in; }
static void add2_u64(const void *a, const void *b, void *out, void *arg) {
    *(uint64_t *)out = *(const uint64_t *)a + *(const uint64_t *)b;
}
static void each_inc(void *x, void *arg) { ++*(uint64_t *)x; }
static int cmp_u64(const void *a, const void *b, void *arg) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}
static bool is_five(const void *x, void *arg) { return *(const uint64_t *)x == 5; }
static void range_sum(size_t lo, size_t hi, void *acc, void *arg) {
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++) s += i;
    *(uint64_t *)acc = s;
}
static void range_scan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    uint64_t *out = arg, a = has_acc ? *(uint64_t *)acc : 0;
    for (size_t i = lo; i < hi; i++) out[i] = a += i;
    *(uint64_t *)acc = a;
}

TEST(every_call_that_takes_an_executor_accepts_null) {
    ASSERT_NOT_NULL(use_default());
    atomic_int n = 0;
    weft_taskflow *tf = weft_taskflow_create("null_executor", NULL);
    ASSERT_NOT_NULL(tf);
    ASSERT_FALSE(weft_task_is_null(weft_emplace(tf, bump, &n)));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(NULL, tf, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_run_n(NULL, tf, 2, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_run_until(NULL, tf, always, NULL, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_OK(weft_run_and_wait(NULL, tf));
    ASSERT_EQ(atomic_load(&n), 4); /* run_until's predicate is true at once: no iteration */
    ASSERT_OK(weft_taskflow_destroy(tf));

    weft_future *a = NULL, *b = NULL;
    ASSERT_OK(weft_async(NULL, bump, &n, &a));
    ASSERT_OK(weft_dependent_async(NULL, bump, &n, &a, 1, &b));
    ASSERT_OK(weft_future_wait(b));
    weft_future_destroy(a);
    weft_future_destroy(b);
    ASSERT_OK(weft_silent_async(NULL, bump, &n));
    ASSERT_OK(weft_executor_wait_all(weft_default_executor()));
    ASSERT_EQ(atomic_load(&n), 7);
    ASSERT_EQ(weft_run_root(NULL, return_seven, NULL), 7);
    int value = 0;
    ASSERT_STATUS(weft_run_root_status(NULL, return_seven, NULL, &value), WEFT_ETASK);
    ASSERT_EQ(value, 7);

    enum { N = 100 };
    uint64_t v[N], w[N], r = 0;
    size_t idx = 0;
    for (int i = 0; i < N; i++) v[i] = (uint64_t)(N - 1 - i);
    atomic_store(&n, 0);
    ASSERT_OK(weft_parallel_for(NULL, 0, N, 1, count_index, &n, NULL));
    ASSERT_OK(weft_parallel_for_range(NULL, 0, N, 1, count_range, &n, NULL));
    ASSERT_EQ(atomic_load(&n), 2 * N);
    ASSERT_OK(weft_parallel_for_each(NULL, w, 0, sizeof w[0], each_inc, NULL, NULL));
    ASSERT_OK(weft_parallel_transform(NULL, v, sizeof v[0], w, sizeof w[0], N, double_u64, NULL, NULL));
    ASSERT_EQ(w[0], 2 * (N - 1));
    ASSERT_OK(weft_parallel_transform2(NULL, v, sizeof v[0], v, sizeof v[0], w, sizeof w[0], N, add2_u64, NULL, NULL));
    ASSERT_EQ(w[1], 2 * (N - 2));
    ASSERT_OK(weft_parallel_reduce(NULL, v, N, sizeof v[0], &r, add_u64, NULL, NULL));
    ASSERT_EQ(r, N * (N - 1) / 2);
    r = 0;
    ASSERT_OK(weft_parallel_transform_reduce(NULL, v, N, sizeof v[0], sizeof r, &r, double_u64, add_u64, NULL, NULL));
    ASSERT_EQ(r, N * (N - 1));
    r = 0;
    ASSERT_OK(weft_parallel_reduce_range(NULL, N, sizeof r, &r, range_sum, add_u64, NULL, NULL));
    ASSERT_EQ(r, N * (N - 1) / 2);
    ASSERT_OK(weft_parallel_min_element(NULL, v, N, sizeof v[0], cmp_u64, NULL, &idx, NULL));
    ASSERT_EQ(idx, N - 1);
    ASSERT_OK(weft_parallel_max_element(NULL, v, N, sizeof v[0], cmp_u64, NULL, &idx, NULL));
    ASSERT_EQ(idx, 0);
    ASSERT_OK(weft_parallel_find_if(NULL, v, N, sizeof v[0], is_five, NULL, &idx, NULL));
    ASSERT_EQ(idx, N - 1 - 5);
    uint64_t zero = 0;
    ASSERT_OK(weft_parallel_inclusive_scan(NULL, v, w, N, sizeof v[0], NULL, add_u64, NULL, NULL));
    ASSERT_EQ(w[N - 1], N * (N - 1) / 2);
    ASSERT_OK(weft_parallel_exclusive_scan(NULL, v, w, N, sizeof v[0], &zero, add_u64, NULL, NULL));
    ASSERT_EQ(w[0], 0);
    ASSERT_OK(weft_parallel_scan_range(NULL, N, sizeof zero, NULL, range_sum, range_scan, add_u64, w, NULL));
    ASSERT_EQ(w[N - 1], N * (N - 1) / 2);
    ASSERT_OK(weft_parallel_sort(NULL, v, N, sizeof v[0], cmp_u64, NULL, NULL));
    ASSERT_EQ(v[0], 0);
    ASSERT_OK(weft_parallel_stable_sort(NULL, w, N, sizeof w[0], cmp_u64, NULL, NULL));
    ASSERT_OK(weft_u64_sort(NULL, v, N, NULL)); /* the typed wrappers pass NULL on */
    ASSERT_EQ(v[N - 1], N - 1);
}

/* ---- destroy is refused ------------------------------------------------------------ */

TEST(destroying_the_default_executor_is_refused) {
    weft_executor *d = use_default();
    ASSERT_NOT_NULL(d);
    weft_log_set_level(WEFT_LOG_WARN);
    weft_log_set_callback(capture, NULL);
    weft_executor_destroy(d); /* a library that thinks it owns it */
    weft_log_set_callback(NULL, NULL);
    ASSERT_EQ(atomic_load(&logged.warnings), 1);
    ASSERT_TRUE(strstr(logged.last, "default executor") != NULL);
    /* Still there and working. */
    ASSERT_TRUE(weft_default_executor() == d);
    ASSERT_EQ(weft_executor_workers(d), DEFAULT_WORKERS);
    ASSERT_EQ(weft_run_root(NULL, return_seven, NULL), 7);
}

/* ---- exit and fork ------------------------------------------------------------------- */

static int exit_pipe[2];

static int slow_then_write(weft_ctx *ctx, void *arg) {
    sleep_us(100000);
    (void)!write(exit_pipe[1], "done", 4);
    return 0;
}

/* Runs child() in a forked process and returns what it wrote to exit_pipe
 * (up to 15 bytes) once it has exited with status 0.  parent: the executor
 * whose workers this process has (NULL: none). */
static void run_child(weft_executor *parent, void (*child)(void), char *got) {
    ASSERT_EQ(pipe(exit_pipe), 0);
    /* ASan's allocator (gcc 12's libasan) is not locked across fork, as
     * glibc's malloc is: a parent worker still freeing its last job's memory
     * when we fork leaves its lock held in the child, and the child's first
     * workers then wait on it for ever (seen 2 runs in 15, b1caedc and later;
     * the child's threads stopped in SizeClassAllocator64::GetFromAllocator).
     * So the parent's workers park first (fork_util.h). */
    if (parent) every_other_worker_asleep(parent, 0);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        close(exit_pipe[0]);
        child(); /* ends with exit() */
        _exit(99);
    }
    close(exit_pipe[1]);
    int status = wait_child(pid, 30, "the child hung at exit");
    ssize_t len = read(exit_pipe[0], got, 15);
    got[len > 0 ? len : 0] = 0;
    close(exit_pipe[0]);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
}

static void exit_with_task_in_flight(void) {
    if (weft_silent_async(NULL, slow_then_write, NULL) != WEFT_OK) _exit(3);
    exit(0); /* the default executor's handler finishes the task first */
}

TEST(exit_waits_for_runs_in_flight_on_the_default_executor) {
    /* This process has no thread yet (a test runs in a process of its own), so
     * the child may start some, TSan included. */
    char got[16];
    run_child(NULL, exit_with_task_in_flight, got);
    ASSERT_STREQ(got, "done");
}

static void late_handler(void) {
    /* Runs after the default executor's handler (registered later). */
    char out[2] = {weft_default_executor() == NULL ? 'N' : 'x',
                   weft_run_root(NULL, return_seven, NULL) == WEFT_ESHUTDOWN ? 'S' : 'x'};
    (void)!write(exit_pipe[1], out, 2);
}

static void exit_with_an_earlier_handler(void) {
    if (atexit(late_handler) != 0) _exit(4);
    setenv("WEFT_WORKERS", "2", 1);
    if (weft_run_root(NULL, return_seven, NULL) != 7) _exit(5); /* first use, after atexit */
    exit(0);
}

TEST(an_atexit_handler_registered_before_first_use_gets_eshutdown) {
    /* This process has no thread yet (a test runs in a process of its own), so
     * the child may start some, TSan included. */
    /* (A child inherits its parent's registration, so the order is that of the
     * process's first use; this one has not used it.) */
    char got[16];
    run_child(NULL, exit_with_an_earlier_handler, got);
    ASSERT_STREQ(got, "NS");
}

static void child_uses_its_own(void) {
    weft_executor *d = weft_default_executor();
    /* The parent's has no workers here; the child's runs work. */
    char out[2] = {d && weft_run_root(NULL, return_seven, NULL) == 7 ? 'R' : 'x',
                   d && weft_executor_workers(d) == 2 ? 'W' : 'x'};
    (void)!write(exit_pipe[1], out, 2);
    exit(0);
}

TEST(a_forked_child_gets_a_default_executor_of_its_own) {
#ifdef __SANITIZE_THREAD__ /* gcc's and clang's -fsanitize=thread */
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    weft_executor *d = use_default();
    ASSERT_NOT_NULL(d);
    ASSERT_EQ(weft_run_root(NULL, return_seven, NULL), 7);
    setenv("WEFT_WORKERS", "2", 1); /* the child's is made with this */
    char got[16];
    run_child(d, child_uses_its_own, got);
    ASSERT_STREQ(got, "RW");
    /* The parent's is untouched. */
    ASSERT_TRUE(weft_default_executor() == d);
    ASSERT_EQ(weft_run_root(NULL, return_seven, NULL), 7);
}
