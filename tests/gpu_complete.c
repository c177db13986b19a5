/* GPU completion without a waiting worker: an idle executor does not spin
 * while the device works, GPU tasks picked up while another's work runs do
 * not nest, completion reaches the successors within a bound, and a task's
 * record is reused correctly over many iterations. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_test.h"

static double now_s(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

/* An emulator kernel that takes a[0] milliseconds without using the CPU, then
 * stamps the monotonic clock into a[1][0] and how late its own sleep ended
 * into a[1][1]: the machine's wake-up delay at that moment. */
static int sleepy(const weft_gpu_range *r, void *const *a) {
    long ms = *(const long *)a[0];
    double t0 = now_s(CLOCK_MONOTONIC);
    sleep_ms(ms);
    double t1 = now_s(CLOCK_MONOTONIC);
    ((double *)a[1])[0] = t1;
    ((double *)a[1])[1] = t1 - t0 - (double)ms * 1e-3;
    return 0;
}

struct sleepy_job {
    weft_gpu_kernel *k;
    weft_gpu_buffer *stamp; /* two doubles: the kernel's end time, its sleep's wake-up delay */
    long ms;
    double end, woke_late; /* copied from stamp, in this order */
    double succ_start;
};

static int record_sleepy(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    struct sleepy_job *j = arg;
    weft_gpu_arg a[] = {WEFT_GPU_ARG_VALUE(j->ms), WEFT_GPU_ARG_BUFFER(j->stamp)};
    int st = weft_gpu_launch(s, j->k, &(weft_gpu_range){.global = {1}}, a, 2);
    return st ? st : weft_gpu_copy_to_host_async(s, j->stamp, 0, &j->end, 2);
}

static void sleepy_init(weft_gpu_device *d, struct sleepy_job *j, long ms) {
    weft_status st;
    *j = (struct sleepy_job){.ms = ms};
    j->k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "sleepy", .host = sleepy}, &st);
    ASSERT_OK(st);
    j->stamp = weft_gpu_buffer_create(d, sizeof(double), 2, 0, &st);
    ASSERT_OK(st);
}

static void sleepy_fini(struct sleepy_job *j) {
    weft_gpu_buffer_destroy(j->stamp);
    weft_gpu_kernel_destroy(j->k);
}

/* ---- no spinning ------------------------------------------------------------------ */

enum { LONG_MS = 300 };

/* CPU time of the process over the wall time of `body`, printed. */
static double cpu_share(void (*body)(void *), void *arg, const char *what) {
    double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), t0 = now_s(CLOCK_MONOTONIC);
    body(arg);
    double cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = now_s(CLOCK_MONOTONIC) - t0;
    printf("%s: %.1f ms CPU over %.1f ms wall (%.1f%%)\n", what, cpu * 1e3, wall * 1e3, 100 * cpu / wall);
    ASSERT_TRUE(wall >= LONG_MS * 1e-3 * 0.9);
    return cpu / wall;
}

struct spin_case {
    weft_executor *ex;
    weft_gpu_device *d;
    struct sleepy_job j;
};

static void run_graph_once(void *arg) {
    struct spin_case *c = arg;
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create("long-gpu", &st);
    ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf, c->d, record_sleepy, &c->j)));
    ASSERT_OK(weft_run_and_wait(c->ex, tf));
    weft_taskflow_destroy(tf);
}

/* Waits on a LONG_MS emulator kernel through `body` on an idle 2-worker executor:
 * a spinning worker would cost ~100% of a CPU, parked ones a wake-up per
 * millisecond at most. */
static void check_no_spin(void (*body)(void *), const char *what) {
    struct spin_case c = {.d = gpu_test_open(WEFT_GPU_EMULATOR)};
    weft_status st;
    c.ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    sleepy_init(c.d, &c.j, LONG_MS);
    ASSERT_TRUE(cpu_share(body, &c, what) < 0.25);
    weft_executor_destroy(c.ex);
    sleepy_fini(&c.j);
    weft_gpu_close(c.d);
}

TEST(idle_executor_waiting_on_a_gpu_task_does_not_spin) { check_no_spin(run_graph_once, "graph GPU task"); }

static int call_sleepy(weft_ctx *ctx, void *arg) {
    struct spin_case *c = arg;
    return weft_gpu_call(c->d, record_sleepy, &c->j);
}

static void run_async_once(void *arg) {
    struct spin_case *c = arg;
    weft_future *f;
    ASSERT_OK(weft_async(c->ex, call_sleepy, c, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
}

TEST(gpu_call_waiting_with_nothing_to_run_does_not_spin) {
    check_no_spin(run_async_once, "weft_gpu_call in an async task");
}

/* ---- no nesting --------------------------------------------------------------------- */

static _Atomic int flag;

/* Finishes once `flag` is set, or fails after 3 s. */
static int wait_for_flag(const weft_gpu_range *r, void *const *a) {
    for (int i = 0; i < 3000 && !atomic_load(&flag); i++) sleep_ms(1);
    return atomic_load(&flag) ? 0 : 1;
}

static int record_flag_wait(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    return weft_gpu_launch(s, arg, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

static int set_flag(weft_ctx *ctx, void *arg) {
    atomic_store(&flag, 1);
    return 0;
}

static int nothing(weft_ctx *ctx, void *arg) { return 0; }

/* One worker.  start -> A (short kernel) -> set_flag;  start -> B (kernel
 * that waits for the flag).  A runs first and B is picked up while A's work
 * runs: if B's wait were nested inside A's, A's successor could not run
 * before B ended, and B waits for A's successor. */
/* `prio_first`: the graph ran once before with B at HIGH and then back at
 * NORMAL (and once with the run's own priority): B must be a parking GPU task
 * again, not a task that waits for its work on its worker's stack. */
static void no_nest(bool prio_first) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    ASSERT_OK(st);
    struct sleepy_job a;
    sleepy_init(d, &a, 20);
    weft_gpu_kernel *kb =
        weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "flag", .host = wait_for_flag}, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("no-nest", &st);
    weft_task start = weft_emplace(tf, nothing, NULL);
    weft_task ta = weft_emplace_gpu(tf, d, record_sleepy, &a);
    weft_task tb = weft_emplace_gpu(tf, d, record_flag_wait, kb);
    weft_task after_a = weft_emplace(tf, set_flag, NULL);
    ASSERT_OK(weft_precede(start, ta)); /* first edge: A runs right after start */
    ASSERT_OK(weft_precede(start, tb));
    ASSERT_OK(weft_precede(ta, after_a));
    if (prio_first) {
        /* Runs that do not wait on each other: B's kernel does not wait for a
         * flag already set. */
        atomic_store(&flag, 1);
        ASSERT_OK(weft_task_set_priority(tb, WEFT_PRIORITY_HIGH));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_task_set_priority(tb, WEFT_PRIORITY_NORMAL));
        weft_future *f;
        ASSERT_OK(weft_run_with_priority(ex, tf, WEFT_PRIORITY_LOW, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
    }
    atomic_store(&flag, 0);
    double t0 = now_s(CLOCK_MONOTONIC);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    double took = now_s(CLOCK_MONOTONIC) - t0;
    printf("took %.1f ms\n", took * 1e3);
    ASSERT_TRUE(took < 2.0);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_gpu_kernel_destroy(kb);
    sleepy_fini(&a);
    weft_gpu_close(d);
}

TEST(gpu_task_picked_up_during_another_does_not_nest_inside_it) { no_nest(false); }

/* A priority's wrapper, and the end of a run with a priority, gave a GPU task
 * the plain task's job back: from then on it waited for its work on its
 * worker's stack, and here B's wait held the one worker that A's successor
 * (which B's kernel waits for) needed. */
TEST(a_gpu_task_parks_again_after_runs_with_priorities) { no_nest(true); }

/* ---- semaphores ------------------------------------------------------------------------ */

static atomic_int in_flight, max_in_flight;

/* An emulator kernel that counts itself in flight for 20 ms. */
static int counted(const weft_gpu_range *r, void *const *a) {
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    for (int m = atomic_load(&max_in_flight); now > m && !atomic_compare_exchange_weak(&max_in_flight, &m, now);) {}
    sleep_ms(20);
    atomic_fetch_sub(&in_flight, 1);
    return 0;
}

static int record_counted(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    return weft_gpu_launch(s, arg, &(weft_gpu_range){.global = {1}}, NULL, 0);
}

/* A GPU task holds its semaphore's units until its GPU work ends (the
 * semaphore's wrapper runs it to its end on the worker, docs/guide-gpu.md):
 * four GPU tasks sharing a one-unit semaphore never have two kernels in
 * flight, on two workers and a pool of streams where they could.  Without the
 * semaphore, they do overlap. */
TEST(gpu_tasks_sharing_a_one_unit_semaphore_never_have_two_kernels_in_flight) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *k =
        weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "counted", .host = counted}, &st);
    ASSERT_OK(st);
    weft_semaphore *sem = weft_semaphore_create(1, &st);
    ASSERT_OK(st);
    weft_taskflow *tf = weft_taskflow_create("gpu-sem", &st);
    weft_task t[4];
    for (int i = 0; i < 4; i++) t[i] = weft_emplace_gpu(tf, d, record_counted, k);
    for (int round = 0; round < 2; round++) {
        atomic_store(&max_in_flight, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        printf("%s: at most %d kernels in flight\n", round ? "with the semaphore" : "without",
               atomic_load(&max_in_flight));
        if (round == 1) ASSERT_EQ(atomic_load(&max_in_flight), 1);
        for (int i = 0; i < 4 && round == 0; i++) {
            ASSERT_OK(weft_task_acquire(t[i], sem));
            ASSERT_OK(weft_task_release(t[i], sem));
        }
    }
    ASSERT_EQ(weft_semaphore_value(sem), 1u);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    ASSERT_OK(weft_semaphore_destroy(sem));
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}

/* ---- bounded completion latency ------------------------------------------------------- */

static int stamp_start(weft_ctx *ctx, void *arg) {
    struct sleepy_job *j = arg;
    j->succ_start = now_s(CLOCK_MONOTONIC);
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Judges the times from a kernel's end to what it let go (lat[i], one per run),
 * given the wake-up delay the kernel's own sleep saw in that run (late[i]).
 * docs/guide-gpu.md: a completion is seen at most one nap (1 ms) late, plus a
 * wake-up.  The wake-up is the machine's: unbounded on a loaded one (a 2-core
 * machine at load 18 under ASan gave a 12 ms median, 44 ms max, failing the
 * old bound of 20 ms on the max).  So the bound is on the median over the runs
 * of each latency less its kernel's wake-up delay: a completion seen tens of
 * ms late, or only at some later event, still fails it; a preempted run does
 * not. */
static void check_latencies(const char *what, double *lat, const double *late, int n) {
    double excess[64];
    ASSERT_LE(n, 64);
    for (int i = 0; i < n; i++) excess[i] = lat[i] - late[i];
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    qsort(excess, (size_t)n, sizeof *excess, cmp_double);
    printf("kernel end -> %s: median %.1f us, max %.1f us; less the kernel's own wake-up delay: median %.1f us\n",
           what, lat[n / 2] * 1e6, lat[n - 1] * 1e6, excess[n / 2] * 1e6);
    if (excess[n / 2] >= 0.020)
        TEST_FAIL_("kernel end -> %s: median %.1f ms beyond the machine's wake-up delay", what, excess[n / 2] * 1e3);
}

/* The time from the kernel's end to its successor's start, over runs whose
 * kernels take long enough for the idle workers to have parked: at most the
 * watcher's longest nap (1 ms) plus a wake-up (check_latencies). */
/* An emulator device, a 2-worker executor and a graph of two tasks: a GPU task
 * whose kernel sleeps `ms`, then a task that stamps its start. */
struct gpu_then_stamp {
    weft_gpu_device *d;
    weft_executor *ex;
    struct sleepy_job j;
    weft_taskflow *tf;
    weft_task gpu;
};

static void gpu_then_stamp_open(struct gpu_then_stamp *g, long ms, const char *name) {
    weft_status st;
    g->d = gpu_test_open(WEFT_GPU_EMULATOR);
    g->ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    sleepy_init(g->d, &g->j, ms);
    g->tf = weft_taskflow_create(name, &st);
    ASSERT_OK(st);
    g->gpu = weft_emplace_gpu(g->tf, g->d, record_sleepy, &g->j);
    ASSERT_OK(weft_precede(g->gpu, weft_emplace(g->tf, stamp_start, &g->j)));
}

static void gpu_then_stamp_close(struct gpu_then_stamp *g) {
    weft_taskflow_destroy(g->tf);
    weft_executor_destroy(g->ex);
    sleepy_fini(&g->j);
    weft_gpu_close(g->d);
}

TEST(gpu_task_completion_reaches_its_successor_within_a_bound) {
    struct gpu_then_stamp g;
    gpu_then_stamp_open(&g, 10, "latency");
    enum { RUNS = 20 };
    double lat[RUNS], late[RUNS];
    for (int i = 0; i < RUNS; i++) {
        ASSERT_OK(weft_run_and_wait(g.ex, g.tf));
        lat[i] = g.j.succ_start - g.j.end;
        late[i] = g.j.woke_late;
        ASSERT_TRUE(lat[i] >= 0.0);
    }
    check_latencies("successor start", lat, late, RUNS);
    gpu_then_stamp_close(&g);
}

/* weft_gpu_call from an async task on an otherwise idle executor: its worker
 * waits cooperatively and naps while nothing else can run (20 us doubling to
 * 1 ms, stream.c), so the call returns at most a nap after the kernel's end,
 * under the same loose bound as a graph task's successor. */
struct call_job {
    weft_gpu_device *d;
    struct sleepy_job j;
};

static int call_then_stamp(weft_ctx *ctx, void *arg) {
    struct call_job *c = arg;
    int st = weft_gpu_call(c->d, record_sleepy, &c->j);
    c->j.succ_start = now_s(CLOCK_MONOTONIC);
    return st;
}

TEST(gpu_call_returns_within_a_bound_of_its_kernels_end) {
    struct call_job c = {.d = gpu_test_open(WEFT_GPU_EMULATOR)};
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    ASSERT_OK(st);
    sleepy_init(c.d, &c.j, 10);
    enum { RUNS = 20 };
    double lat[RUNS], late[RUNS];
    for (int i = 0; i < RUNS; i++) {
        weft_future *f;
        ASSERT_OK(weft_async(ex, call_then_stamp, &c, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        lat[i] = c.j.succ_start - c.j.end;
        late[i] = c.j.woke_late;
        ASSERT_TRUE(lat[i] >= 0.0);
    }
    check_latencies("weft_gpu_call's return", lat, late, RUNS);
    weft_executor_destroy(ex);
    sleepy_fini(&c.j);
    weft_gpu_close(c.d);
}

/* A GPU task given a priority (docs/guide-scheduling.md, Limits) runs as
 * weft_run_n_parallel runs it, synchronously, but runs: its kernel finishes
 * before its successor starts, and the run completes, at every level. */
TEST(gpu_task_with_a_priority_runs_before_its_successor) {
    struct gpu_then_stamp g;
    gpu_then_stamp_open(&g, 2, "gpu-prio");
    const weft_priority levels[] = {WEFT_PRIORITY_CRITICAL, WEFT_PRIORITY_LOW, WEFT_PRIORITY_NORMAL};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
        ASSERT_OK(weft_task_set_priority(g.gpu, levels[i]));
        g.j.end = g.j.succ_start = 0;
        ASSERT_OK(weft_run_and_wait(g.ex, g.tf));
        ASSERT_TRUE(g.j.end > 0.0);
        ASSERT_TRUE(g.j.succ_start >= g.j.end);
    }
    gpu_then_stamp_close(&g);
}

/* ---- many iterations, many tasks, one worker ---------------------------------------------- */

static int bump_on_gpu(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    void **a = arg; /* kernel, buffer */
    weft_gpu_arg x = WEFT_GPU_ARG_BUFFER((weft_gpu_buffer *)a[1]);
    return weft_gpu_launch(s, a[0], &(weft_gpu_range){.global = {1}}, &x, 1);
}

static int bump_host(const weft_gpu_range *r, void *const *a) {
    atomic_fetch_add((_Atomic long *)a[0], 1); /* kernels of several streams at once */
    return 0;
}

static long cpu_count;
static int bump_cpu(weft_ctx *ctx, void *arg) {
    cpu_count++; /* ordered by the chain's edges */
    return 0;
}

/* A chain gpu, cpu, gpu, cpu, ... run 50 times on one worker and on four:
 * every GPU task's completion releases the next, its record reused each
 * iteration. */
static void chain_iterations(unsigned workers) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = workers}, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *k = weft_gpu_kernel_create(d, &(weft_gpu_kernel_source){.name = "bump", .host = bump_host}, &st);
    weft_gpu_buffer *b = weft_gpu_buffer_create(d, sizeof(long), 1, 0, &st);
    ASSERT_OK(st);
    long zero = 0;
    ASSERT_OK(weft_gpu_copy_to_device(b, 0, &zero, 1));
    void *args[2] = {k, b};
    enum { LEN = 20, ITER = 50 };
    weft_task t[2 * LEN];
    weft_taskflow *tf = weft_taskflow_create("chain", &st);
    for (int i = 0; i < LEN; i++) {
        t[2 * i] = weft_emplace_gpu(tf, d, bump_on_gpu, args);
        t[2 * i + 1] = weft_emplace(tf, bump_cpu, NULL);
    }
    ASSERT_OK(weft_linearize(t, 2 * LEN));
    cpu_count = 0;
    ASSERT_OK(weft_run_n(ex, tf, ITER, NULL));
    ASSERT_OK(weft_executor_wait_all(ex));
    long got;
    ASSERT_OK(weft_gpu_copy_to_host(b, 0, &got, 1));
    ASSERT_EQ(got, (long)LEN * ITER);
    ASSERT_EQ(cpu_count, (long)LEN * ITER);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    weft_gpu_buffer_destroy(b);
    weft_gpu_kernel_destroy(k);
    weft_gpu_close(d);
}
TEST(gpu_chain_over_many_iterations_one_worker) { chain_iterations(1); }
TEST(gpu_chain_over_many_iterations_four_workers) { chain_iterations(4); }

/* Two devices' tasks and two executors at once: a watch per device and
 * executor, each gone when its last task completes. */
static void fan(weft_executor *ex, weft_gpu_device *d, weft_future **f, weft_taskflow **tfp, void **args) {
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create("fan", &st);
    for (int i = 0; i < 16; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_gpu(tf, d, bump_on_gpu, args)));
    ASSERT_OK(weft_run_n(ex, tf, 10, f));
    *tfp = tf;
}

TEST(gpu_tasks_of_two_devices_on_two_executors) {
    weft_gpu_device *d[2] = {gpu_test_open(WEFT_GPU_EMULATOR), gpu_test_open(WEFT_GPU_EMULATOR)};
    weft_status st;
    weft_executor *ex[2];
    weft_gpu_kernel *k[2];
    weft_gpu_buffer *b[2];
    void *args[2][2];
    for (int i = 0; i < 2; i++) {
        ex[i] = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
        ASSERT_OK(st);
        k[i] = weft_gpu_kernel_create(d[i], &(weft_gpu_kernel_source){.name = "bump", .host = bump_host}, &st);
        b[i] = weft_gpu_buffer_create(d[i], sizeof(long), 1, 0, &st);
        ASSERT_OK(st);
        long zero = 0;
        ASSERT_OK(weft_gpu_copy_to_device(b[i], 0, &zero, 1));
        args[i][0] = k[i];
        args[i][1] = b[i];
    }
    weft_future *f[4];
    weft_taskflow *tf[4];
    for (int i = 0; i < 4; i++) fan(ex[i & 1], d[i >> 1], &f[i], &tf[i], args[i >> 1]);
    for (int i = 0; i < 4; i++) {
        ASSERT_OK(weft_future_wait(f[i]));
        weft_future_destroy(f[i]);
        weft_taskflow_destroy(tf[i]);
    }
    for (int i = 0; i < 2; i++) {
        long got;
        ASSERT_OK(weft_gpu_copy_to_host(b[i], 0, &got, 1));
        ASSERT_EQ(got, 2 * 16 * 10);
        weft_executor_destroy(ex[i]);
        weft_gpu_buffer_destroy(b[i]);
        weft_gpu_kernel_destroy(k[i]);
        weft_gpu_close(d[i]);
    }
}
