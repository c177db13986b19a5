/* run_variants: the ways to run a taskflow.  SPDX-License-Identifier: MIT
 *
 *   1. weft_run once and wait on the future
 *   2. weft_run_n: the same graph n times in a row
 *   3. weft_run_until: repeat until a predicate says stop
 *   4. futures: wait_for with a timeout, ready, status, info
 *   5. runs of one taskflow queue up in order; several taskflows run at once
 *   6. a detached run (no future) and weft_executor_wait_all
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <weft.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Exits with a message if a weft call failed: fine for an example. */
static void check(weft_status st, const char *what) {
    if (st != WEFT_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, weft_strerror(st), weft_errname(st));
        exit(1);
    }
}

/* Exits with a message if a result is not what the example expects. */
static void expect(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "unexpected: %s\n", what);
        exit(1);
    }
}

static void sleep_ms(long ms) {
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static weft_taskflow *new_taskflow(const char *name) {
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create(name, &st);
    check(tf ? WEFT_OK : st, "weft_taskflow_create");
    return tf;
}

static weft_task add_task(weft_taskflow *tf, weft_task_fn fn, void *arg, const char *name) {
    weft_task t = weft_emplace(tf, fn, arg);
    check(weft_task_is_null(t) ? weft_taskflow_last_error(tf) : WEFT_OK, "weft_emplace");
    check(weft_task_set_name(t, name), "weft_task_set_name");
    return t;
}

/* ---- tasks ------------------------------------------------------------------ */

static int count(weft_ctx *ctx, void *arg) {
    (void)ctx; /* unused */
    atomic_int *n = arg;
    atomic_fetch_add(n, 1);
    return 0;
}

/* Waits until *open is set (or the run is cancelled), checking every millisecond. */
static int wait_at_gate(weft_ctx *ctx, void *arg) {
    atomic_bool *open = arg;
    while (!atomic_load(open) && !weft_ctx_cancelled(ctx)) sleep_ms(1);
    return 0;
}

/* Sums i*i over a range: a small piece of real work. */
struct range {
    uint64_t lo, hi, sum;
};

static int sum_squares(weft_ctx *ctx, void *arg) {
    (void)ctx; /* unused */
    struct range *r = arg;
    r->sum = 0;
    for (uint64_t i = r->lo; i < r->hi; i++) r->sum += i * i;
    return 0;
}

/* Two tasks, enter -> leave, that notice if two runs of their taskflow ever
 * overlap.  They never do: runs of one taskflow execute one after another, which
 * is also why `runs` can be a plain int. */
struct stage_log {
    atomic_int inside;
    atomic_bool overlap;
    int runs;
};

static int enter(weft_ctx *ctx, void *arg) {
    (void)ctx; /* unused */
    struct stage_log *log = arg;
    if (atomic_fetch_add(&log->inside, 1) != 0) atomic_store(&log->overlap, true);
    sleep_ms(2);
    return 0;
}

static int leave(weft_ctx *ctx, void *arg) {
    (void)ctx; /* unused */
    struct stage_log *log = arg;
    sleep_ms(2);
    log->runs++;
    atomic_fetch_sub(&log->inside, 1);
    return 0;
}

/* ---- the variants ------------------------------------------------------------- */

static void run_once(weft_executor *ex) {
    atomic_int n = 0;
    weft_taskflow *tf = new_taskflow("once");
    weft_task a = add_task(tf, count, &n, "a");
    weft_task b = add_task(tf, count, &n, "b");
    check(weft_precede(a, b), "weft_precede");

    weft_future *f;
    check(weft_run(ex, tf, &f), "weft_run"); /* returns at once */
    weft_status st = weft_future_wait(f);      /* blocks until the run ends */
    printf("1. weft_run:        status %s, %d tasks ran\n", weft_errname(st), atomic_load(&n));
    check(st, "the run");
    expect(atomic_load(&n) == 2, "both tasks ran");
    weft_future_destroy(f);
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
}

static void run_n_times(weft_executor *ex) {
    atomic_int n = 0;
    weft_taskflow *tf = new_taskflow("five times");
    add_task(tf, count, &n, "count");

    weft_future *f;
    check(weft_run_n(ex, tf, 5, &f), "weft_run_n");
    check(weft_future_wait(f), "the runs");
    weft_run_info info;
    check(weft_future_info(f, &info), "weft_future_info");
    printf("2. weft_run_n(5):   %" PRIu64 " iterations, the task ran %d times\n", info.iterations,
           atomic_load(&n));
    expect(info.iterations == 5 && atomic_load(&n) == 5, "five iterations");
    weft_future_destroy(f);
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
}

/* The predicate of run_until: true means "stop".  It is called before every
 * iteration and never while a task of the run is running. */
static bool reached_ten(void *arg) {
    atomic_int *n = arg;
    return atomic_load(n) >= 10;
}

static void run_until_done(weft_executor *ex) {
    atomic_int n = 0;
    weft_taskflow *tf = new_taskflow("until ten");
    add_task(tf, count, &n, "count");

    weft_future *f;
    check(weft_run_until(ex, tf, reached_ten, &n, &f), "weft_run_until");
    check(weft_future_wait(f), "the runs");
    weft_run_info info;
    check(weft_future_info(f, &info), "weft_future_info");
    printf("3. weft_run_until:  stopped after %" PRIu64 " iterations, counter = %d\n",
           info.iterations, atomic_load(&n));
    expect(info.iterations == 10 && atomic_load(&n) == 10, "ten iterations");
    weft_future_destroy(f);
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
}

static void futures(weft_executor *ex) {
    atomic_bool open = false;
    weft_taskflow *tf = new_taskflow("gated");
    add_task(tf, wait_at_gate, &open, "gate");

    weft_future *f;
    check(weft_run(ex, tf, &f), "weft_run");
    /* The gate is closed, so the run cannot finish: waiting 20 ms times out. */
    weft_status st = weft_future_wait_for(f, 20 * 1000 * 1000);
    printf("4. futures:         wait_for(20 ms) -> %s; ready = %s, status = %s\n", weft_errname(st),
           weft_future_ready(f) ? "true" : "false", weft_errname(weft_future_status(f)));
    expect(st == WEFT_ETIMEDOUT, "wait_for times out while the gate is closed");

    atomic_store(&open, true);
    st = weft_future_wait_for(f, 5ull * 1000 * 1000 * 1000); /* now it ends quickly */
    printf("                    gate opened: wait_for(5 s) -> %s; ready = %s\n", weft_errname(st),
           weft_future_ready(f) ? "true" : "false");
    check(st, "the gated run");
    weft_future_destroy(f);
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
}

static void in_flight(weft_executor *ex) {
    /* Three runs of one taskflow, submitted without waiting: they queue up. */
    struct stage_log log = { 0 };
    weft_taskflow *staged = new_taskflow("staged");
    check(weft_precede(add_task(staged, enter, &log, "enter"), add_task(staged, leave, &log, "leave")),
          "weft_precede");
    weft_future *runs[3];
    for (int i = 0; i < 3; i++) check(weft_run(ex, staged, &runs[i]), "weft_run");

    /* Meanwhile three other taskflows run at the same time as those. */
    enum { N = 3, PARTS = 4 };
    const uint64_t per_part = 100000;
    struct range parts[N][PARTS];
    weft_taskflow *tfs[N];
    weft_future *futs[N];
    for (int k = 0; k < N; k++) {
        char name[16];
        snprintf(name, sizeof name, "sum %d", k);
        tfs[k] = new_taskflow(name);
        for (int p = 0; p < PARTS; p++) {
            uint64_t lo = (uint64_t)(k * PARTS + p) * per_part;
            parts[k][p] = (struct range){ lo, lo + per_part, 0 };
            add_task(tfs[k], sum_squares, &parts[k][p], "part");
        }
        check(weft_run(ex, tfs[k], &futs[k]), "weft_run");
    }

    uint64_t total = 0;
    for (int k = N - 1; k >= 0; k--) { /* wait in any order */
        check(weft_future_wait(futs[k]), "a sum");
        for (int p = 0; p < PARTS; p++) total += parts[k][p].sum;
        weft_future_destroy(futs[k]);
        check(weft_taskflow_destroy(tfs[k]), "weft_taskflow_destroy");
    }
    for (int i = 0; i < 3; i++) {
        check(weft_future_wait(runs[i]), "a staged run");
        weft_future_destroy(runs[i]);
    }
    const uint64_t n = (uint64_t)N * PARTS * per_part;
    const uint64_t want = (n - 1) * n * (2 * n - 1) / 6; /* sum of i*i for i < n */
    bool overlap = atomic_load(&log.overlap);
    printf("5. in flight:       3 queued runs of 'staged' ran one after another: %d runs, %s\n"
           "                    3 taskflows at once summed squares below %" PRIu64 ": %s\n",
           log.runs, overlap ? "OVERLAPPING" : "no overlap", n,
           total == want ? "correct" : "WRONG");
    check(weft_taskflow_destroy(staged), "weft_taskflow_destroy");
    expect(log.runs == 3 && !overlap, "three runs, one after another");
    expect(total == want, "the sums");
}

static void detached(weft_executor *ex) {
    atomic_int n = 0;
    weft_taskflow *tf = new_taskflow("detached");
    add_task(tf, count, &n, "count");
    check(weft_run_n(ex, tf, 3, NULL), "weft_run_n"); /* out == NULL: no future */
    check(weft_executor_wait_all(ex), "weft_executor_wait_all");
    printf("6. detached:        weft_run_n(3) without a future, then wait_all: counter = %d\n",
           atomic_load(&n));
    check(weft_taskflow_destroy(tf), "weft_taskflow_destroy");
    expect(atomic_load(&n) == 3, "three detached iterations");
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    check(ex ? WEFT_OK : st, "weft_executor_create");
    printf("executor with %u workers\n", weft_executor_workers(ex));

    run_once(ex);
    run_n_times(ex);
    run_until_done(ex);
    futures(ex);
    in_flight(ex);
    detached(ex);

    weft_executor_destroy(ex);
    printf("run_variants: done\n");
    return 0;
}
