/* weft-bench — issue 19: what cancellation costs.  weft only.
 * SPDX-License-Identifier: MIT
 *
 * cancel_is_cancelled: size = calls of weft_cancel_token_is_cancelled on a
 *     token never cancelled (the loop sums the results, so no call is hoisted:
 *     the token is reached through a volatile pointer).  ns_per_task is the
 *     cost of one call, loop included.
 * linear_chain_token / binary_tree_token: the graphs and kernels of
 *     linear_chain / binary_tree (bench_weft.c, through its bench_ops), run
 *     with weft_run + weft_cancel_attach of one long-lived token that never
 *     fires + weft_future_wait, where the plain rows call weft_run_and_wait
 *     (which is weft_run + weft_future_wait).  The ratio to the plain row
 *     (rounds.py --ratio linear_chain_token/linear_chain) is a token's cost.
 * cancel_to_skip: a gate task with size successors (10^6 by default).  The
 *     gate waits for its run to be cancelled; the timed unit is weft_run +
 *     attach, the gate starting, weft_cancel_token_cancel and the wait until
 *     the run is finished, i.e. until every successor was skipped (verified:
 *     none ran, weft_run_info.skipped = size).  Its twin fanout_run runs the
 *     same graph uncancelled (the gate returns at once, every successor runs
 *     an empty body): skipping against running.
 * deadline_1ms / _10ms / _100ms: size deadlines per rep (100 by default), the
 *     i-th armed with weft_cancel_at at start + D + i * D / size, each token's
 *     callback recording how late it ran (callback time - deadline).  A rep
 *     lasts about 2 D.  The lateness of every sample is kept: at the end the
 *     row prints "lateness: median, p99, max" to stderr, and a deadline that
 *     fires early fails verification.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "bench_work.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <weft.h>

/* ---- cancel_is_cancelled ---------------------------------------------------- */

typedef struct poll_data {
    weft_cancel_token *tok;
    size_t n;
    size_t seen; /* calls that returned true (0) */
} poll_data;

static size_t plain_shape(size_t req) { return req ? req : 1; }

static void poll_destroy(void *data) {
    poll_data *d = data;
    if (!d) return;
    weft_cancel_token_destroy(d->tok);
    free(d);
}

static void *poll_create(size_t n) {
    poll_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->tok = weft_cancel_token_create(NULL, NULL);
    if (d->tok) return d;
    poll_destroy(d);
    return NULL;
}

static void poll_reset(void *data) { ((poll_data *)data)->seen = 1; }

static int poll_verify(const void *data, char *msg, size_t len) {
    const poll_data *d = data;
    if (d->seen == 0) return 0;
    snprintf(msg, len, "is_cancelled was true %zu times on a token never cancelled", d->seen);
    return -1;
}

static int poll_oneshot(void *env, void *data) {
    (void)env;
    poll_data *d = data;
    weft_cancel_token *volatile tok = d->tok;
    size_t seen = 0;
    for (size_t i = 0; i < d->n; i++) seen += weft_cancel_token_is_cancelled(tok);
    d->seen = seen;
    return 0;
}

const bench_work bench_work_cancel_poll = { plain_shape, poll_create, poll_reset, poll_verify, poll_destroy };
const bench_ops bench_weft_cancel_is_cancelled = { poll_oneshot, NULL, NULL, NULL };

/* ---- linear_chain / binary_tree with a token attached ------------------------ */

/* The long-lived token every run is attached to (never cancelled).  Made by
 * the first run; freed at exit by nobody (one per process, like a server's). */
static weft_cancel_token *shared_token(void) {
    static weft_cancel_token *tok;
    if (!tok) tok = weft_cancel_token_create(NULL, NULL);
    return tok;
}

static int run_with_token(void *env, void *graph) {
    weft_cancel_token *tok = shared_token();
    weft_future *f = NULL;
    weft_status st = tok ? weft_run(env, graph, &f) : WEFT_ENOMEM;
    if (st == WEFT_OK) {
        weft_status ast = weft_cancel_attach(tok, f);
        st = weft_future_wait(f);
        weft_future_destroy(f);
        if (st == WEFT_OK) st = ast;
    }
    if (st != WEFT_OK) fprintf(stderr, "weft: run with a token: %s\n", weft_errname(st));
    return st == WEFT_OK ? 0 : -1;
}

/* Wraps a plain weft bench_ops: same build and destroy, run through run_with_token. */
#define TOKEN_OPS(name)                                                                          \
    static int name##_tok_build(void *env, void *data, void **graph) {                           \
        return bench_weft_##name.build(env, data, graph);                                        \
    }                                                                                            \
    static void name##_tok_destroy(void *env, void *graph) { bench_weft_##name.destroy(env, graph); } \
    static int name##_tok_oneshot(void *env, void *data) {                                       \
        void *graph = NULL;                                                                      \
        if (name##_tok_build(env, data, &graph) != 0) return -1;                                 \
        int rc = run_with_token(env, graph);                                                     \
        name##_tok_destroy(env, graph);                                                          \
        return rc;                                                                               \
    }                                                                                            \
    const bench_ops bench_weft_##name##_token = { name##_tok_oneshot, name##_tok_build, run_with_token, \
                                                  name##_tok_destroy };

TOKEN_OPS(linear_chain)
TOKEN_OPS(binary_tree)

/* ---- cancel_to_skip / fanout_run ---------------------------------------------- */

typedef struct skip_data {
    size_t n;                 /* successors of the gate */
    _Atomic size_t ran;       /* successors that ran */
    _Atomic int gate_started;
    bool cancel;              /* cancel_to_skip (else fanout_run) */
    uint64_t skipped;         /* weft_run_info.skipped of the last run */
    weft_status status;       /* the last run's */
    weft_cancel_token *tok;
} skip_data;

static void skip_destroy(void *data) {
    skip_data *d = data;
    if (!d) return;
    weft_cancel_token_destroy(d->tok);
    free(d);
}

static void *skip_create(size_t n) {
    skip_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->tok = weft_cancel_token_create(NULL, NULL);
    if (d->tok) return d;
    skip_destroy(d);
    return NULL;
}

static void skip_reset(void *data) {
    skip_data *d = data;
    atomic_store(&d->ran, 0);
    atomic_store(&d->gate_started, 0);
    d->skipped = 0;
    d->status = WEFT_EAGAIN;
}

static int skip_verify(const void *data, char *msg, size_t len) {
    const skip_data *d = data;
    size_t ran = atomic_load(&d->ran);
    if (d->cancel && (d->status != WEFT_ECANCELED || ran != 0 || d->skipped != d->n)) {
        snprintf(msg, len, "cancelled run: status %s, %zu of %zu ran, %llu skipped", weft_errname(d->status), ran,
                 d->n, (unsigned long long)d->skipped);
        return -1;
    }
    if (!d->cancel && (d->status != WEFT_OK || ran != d->n)) {
        snprintf(msg, len, "uncancelled run: status %s, %zu of %zu ran", weft_errname(d->status), ran, d->n);
        return -1;
    }
    return 0;
}

static int gate_task(weft_ctx *ctx, void *arg) {
    skip_data *d = arg;
    atomic_store_explicit(&d->gate_started, 1, memory_order_release);
    if (d->cancel)
        while (weft_ctx_check(ctx) == WEFT_OK) sched_yield();
    return 0;
}

static int leaf_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add_explicit(&((skip_data *)arg)->ran, 1, memory_order_relaxed);
    return 0;
}

static int skip_build(void *env, void *data, void **graph) {
    (void)env;
    skip_data *d = data;
    weft_status st = WEFT_OK;
    weft_taskflow *tf = weft_taskflow_create("cancel_to_skip", &st);
    if (!tf) return -1;
    weft_task gate = weft_emplace(tf, gate_task, d);
    for (size_t i = 0; i < d->n && st == WEFT_OK; i++) st = weft_precede(gate, weft_emplace(tf, leaf_task, d));
    if (st != WEFT_OK || weft_taskflow_last_error(tf) != WEFT_OK) {
        fprintf(stderr, "weft: building cancel_to_skip: %s\n", weft_taskflow_error_message(tf));
        (void)weft_taskflow_destroy(tf);
        return -1;
    }
    *graph = tf;
    return 0;
}

static void skip_graph_destroy(void *env, void *graph) {
    (void)env;
    (void)weft_taskflow_destroy(graph);
}

static int skip_run(void *env, void *graph, skip_data *d) {
    weft_future *f = NULL;
    if (weft_cancel_token_reset(d->tok) != WEFT_OK) return -1;
    weft_status st = weft_run(env, graph, &f);
    if (st != WEFT_OK) return -1;
    if (d->cancel) {
        st = weft_cancel_attach(d->tok, f);
        while (st == WEFT_OK && !atomic_load_explicit(&d->gate_started, memory_order_acquire)) sched_yield();
        if (st == WEFT_OK) st = weft_cancel_token_cancel(d->tok);
    }
    d->status = weft_future_wait(f);
    weft_run_info info;
    if (weft_future_info(f, &info) == WEFT_OK) d->skipped = info.skipped;
    weft_future_destroy(f);
    return st == WEFT_OK ? 0 : -1;
}

/* The graph is built over one skip_data; build records which variant it is. */
#define SKIP_OPS(name, cancelled)                                                               \
    static int name##_build(void *env, void *data, void **graph) {                              \
        ((skip_data *)data)->cancel = cancelled;                                                \
        return skip_build(env, data, graph);                                                    \
    }                                                                                           \
    static skip_data *name##_current;                                                           \
    static int name##_build_keep(void *env, void *data, void **graph) {                         \
        name##_current = data;                                                                  \
        return name##_build(env, data, graph);                                                  \
    }                                                                                           \
    static int name##_run(void *env, void *graph) { return skip_run(env, graph, name##_current); } \
    static int name##_oneshot(void *env, void *data) {                                          \
        void *graph = NULL;                                                                     \
        if (name##_build(env, data, &graph) != 0) return -1;                                    \
        int rc = skip_run(env, graph, data);                                                    \
        skip_graph_destroy(env, graph);                                                         \
        return rc;                                                                              \
    }                                                                                           \
    const bench_ops bench_weft_##name = { name##_oneshot, name##_build_keep, name##_run, skip_graph_destroy };

SKIP_OPS(cancel_to_skip, true)
SKIP_OPS(fanout_run, false)

const bench_work bench_work_cancel_skip = { plain_shape, skip_create, skip_reset, skip_verify, skip_destroy };

/* ---- deadline lateness -------------------------------------------------------- */

typedef struct late_slot {
    weft_cancel_token *tok;
    uint64_t when;
    _Atomic uint64_t fired_at; /* 0 until the callback ran */
} late_slot;

typedef struct late_data {
    size_t n;
    late_slot *slots;
    int64_t *samples; /* lateness in ns, every rep's */
    size_t nsamples, cap;
    int64_t earliest;
} late_data;

static void late_fired(void *arg, const char *reason) {
    (void)reason;
    late_slot *s = arg;
    atomic_store_explicit(&s->fired_at, weft_cancel_now_ns(), memory_order_release);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void late_destroy(void *data) {
    late_data *d = data;
    if (!d) return;
    if (d->nsamples) {
        qsort(d->samples, d->nsamples, sizeof *d->samples, cmp_i64);
        size_t p99 = (d->nsamples * 99 + 99) / 100 - 1; /* nearest rank */
        fprintf(stderr, "deadline lateness over %zu deadlines: median %.1f us, p99 %.1f us, max %.1f us\n",
                d->nsamples, (double)d->samples[d->nsamples / 2] / 1e3, (double)d->samples[p99] / 1e3,
                (double)d->samples[d->nsamples - 1] / 1e3);
    }
    for (size_t i = 0; d->slots && i < d->n; i++) weft_cancel_token_destroy(d->slots[i].tok);
    free(d->slots);
    free(d->samples);
    free(d);
}

static void *late_create(size_t n) {
    late_data *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->n = n;
    d->slots = calloc(n, sizeof *d->slots);
    d->earliest = INT64_MAX;
    for (size_t i = 0; d->slots && i < n; i++) {
        d->slots[i].tok = weft_cancel_token_create(NULL, NULL);
        if (!d->slots[i].tok || weft_cancel_token_on_cancel(d->slots[i].tok, late_fired, &d->slots[i], NULL) != WEFT_OK)
            break;
        if (i + 1 == n) return d;
    }
    late_destroy(d);
    return NULL;
}

static void late_reset(void *data) { (void)data; }

static int late_verify(const void *data, char *msg, size_t len) {
    const late_data *d = data;
    if (d->earliest >= 0) return 0;
    snprintf(msg, len, "a deadline fired %lld ns early", (long long)-d->earliest);
    return -1;
}

/* Arms the n tokens at start + D + i * D / n, waits until every one fired,
 * records the lateness and re-arms the callbacks for the next rep. */
static int late_run(late_data *d, uint64_t D) {
    uint64_t start = weft_cancel_now_ns();
    for (size_t i = 0; i < d->n; i++) {
        late_slot *s = &d->slots[i];
        atomic_store(&s->fired_at, 0);
        s->when = start + D + i * D / d->n;
        if (weft_cancel_at(s->tok, s->when) != WEFT_OK) return -1;
    }
    if (d->nsamples + d->n > d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 4 * d->n;
        while (cap < d->nsamples + d->n) cap *= 2;
        int64_t *p = realloc(d->samples, cap * sizeof *p);
        if (!p) return -1;
        d->samples = p;
        d->cap = cap;
    }
    for (size_t i = 0; i < d->n; i++) {
        late_slot *s = &d->slots[i];
        uint64_t at;
        while ((at = atomic_load_explicit(&s->fired_at, memory_order_acquire)) == 0) {
            /* Sleep, not spin: the timer thread may need this core. */
            nanosleep(&(struct timespec){0, 20000}, NULL);
        }
        int64_t late = (int64_t)(at - s->when);
        d->samples[d->nsamples++] = late;
        if (late < d->earliest) d->earliest = late;
        weft_status st;
        while ((st = weft_cancel_token_reset(s->tok)) == WEFT_EBUSY) /* its cancel is still in the callback */
            sched_yield();
        if (st != WEFT_OK) return -1;
        if (weft_cancel_token_on_cancel(s->tok, late_fired, s, NULL) != WEFT_OK) return -1;
    }
    return 0;
}

#define LATE_OPS(D)                                                                           \
    static int late_##D##_oneshot(void *env, void *data) {                                    \
        (void)env;                                                                            \
        return late_run(data, (uint64_t)(D) * 1000000u);                                      \
    }                                                                                         \
    const bench_ops bench_weft_deadline_##D##ms = { late_##D##_oneshot, NULL, NULL, NULL };

LATE_OPS(1)
LATE_OPS(10)
LATE_OPS(100)

const bench_work bench_work_cancel_late = { plain_shape, late_create, late_reset, late_verify, late_destroy };
