/* Session 45 (h45-3): the peers' benchmark programs (Taskflow's benchmarks/
 * and Lace's benchmarks/) written again the way a C user would write them
 * from the peer's definition, against weft's public headers only, shaped as
 * the peer's program is (async tasks submitted from main, a graph rebuilt
 * each iteration, a pipeline of the peer's lines and stages, task groups of
 * the peer's fan-out).  Each result is checked exactly against a serial
 * computation on 1, 2 and 4 workers at small sizes (each test well under a
 * second).  PEERS_HUNT_BIG=1 runs the peer's default sizes instead and
 * PEERS_HUNT_PRINT=1 prints each case's time (the figures in the report). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const unsigned kW[] = {1, 2, 4};
#define NW (sizeof kW / sizeof kW[0])

static bool big(void) {
    const char *e = getenv("PEERS_HUNT_BIG");
    return e && *e == '1';
}
static bool printing(void) {
    const char *e = getenv("PEERS_HUNT_PRINT");
    return e && *e == '1';
}
/* PEERS_HUNT_CPU=1: the times are the process's CPU time (workers' and
 * caller's), which a loaded machine does not inflate as it does wall time. */
static double peers_clock(void) {
    const char *e = getenv("PEERS_HUNT_CPU");
    if (e && *e == '1') {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    return now_s();
}
#define now_s() peers_clock()
static void report_time(const char *what, unsigned w, uint64_t size, double secs) {
    if (printing()) printf("peers: %-28s workers=%u size=%-10llu %10.3f ms\n", what, w, (unsigned long long)size, secs * 1e3);
}

/* ---- async_task: N silent async tasks from main, then wait_for_all ---------- */

static int async_inc(weft_ctx *ctx, void *arg) {
    atomic_fetch_add_explicit((atomic_size_t *)arg, 1, memory_order_relaxed);
    return 0;
}

TEST(taskflow_async_task_silent_asyncs_from_main_each_run_once_before_wait_all_returns) {
    size_t maxn = big() ? ((size_t)1 << 21) : ((size_t)1 << 14);
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t n = 1; n <= maxn; n <<= 1) {
            atomic_size_t counter = 0;
            double t0 = now_s();
            for (size_t i = 0; i < n; i++) ASSERT_OK(weft_silent_async(ex, async_inc, &counter));
            ASSERT_OK(weft_executor_wait_all(ex));
            double t = now_s() - t0;
            ASSERT_EQ(atomic_load(&counter), n);
            if (n >= maxn / 4) report_time("async_task", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- skynet: each node a task group of ten children, root by weft_async ----- */

typedef struct sky_arg {
    size_t base, depth, maxdepth, result;
} sky_arg;

static int skynet_one(weft_ctx *cx, void *p) {
    sky_arg *a = p;
    if (a->depth == a->maxdepth) {
        a->result = a->base;
        return 0;
    }
    size_t off = 1;
    for (size_t i = 0; i < a->maxdepth - a->depth - 1; i++) off *= 10;
    sky_arg ch[10];
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (size_t i = 0; i < 10; i++) {
        ch[i] = (sky_arg){a->base + off * i, a->depth + 1, a->maxdepth, 0};
        if (weft_task_group_spawn(&g, skynet_one, &ch[i]) != WEFT_OK) return -1;
    }
    int st = weft_task_group_wait(&g);
    size_t sum = 0;
    for (size_t i = 0; i < 10; i++) sum += ch[i].result;
    a->result = sum;
    return st;
}

/* The same with the literal port of tg.silent_async + tg.corun: each child
 * an async task with a future, the parent waiting on each future. */
static int skynet_async(weft_ctx *cx, void *p) {
    sky_arg *a = p;
    if (a->depth == a->maxdepth) {
        a->result = a->base;
        return 0;
    }
    size_t off = 1;
    for (size_t i = 0; i < a->maxdepth - a->depth - 1; i++) off *= 10;
    sky_arg ch[10];
    weft_future *f[10];
    for (size_t i = 0; i < 10; i++) {
        ch[i] = (sky_arg){a->base + off * i, a->depth + 1, a->maxdepth, 0};
        if (weft_async(weft_ctx_executor(cx), skynet_async, &ch[i], &f[i]) != WEFT_OK) return -1;
    }
    int st = 0;
    for (size_t i = 0; i < 10; i++) {
        if (weft_future_wait(f[i]) != WEFT_OK) st = -1;
        weft_future_destroy(f[i]);
    }
    size_t sum = 0;
    for (size_t i = 0; i < 10; i++) sum += ch[i].result;
    a->result = sum;
    return st;
}

static void skynet_case(weft_task_fn fn, const char *what, size_t maxd) {
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t d = 1; d <= maxd; d++) {
            sky_arg a = {0, 0, d, 0};
            weft_future *f = NULL;
            double t0 = now_s();
            ASSERT_OK(weft_async(ex, fn, &a, &f));
            ASSERT_OK(weft_future_wait(f));
            double t = now_s() - t0;
            weft_future_destroy(f);
            size_t n = 1;
            for (size_t i = 0; i < d; i++) n *= 10;
            ASSERT_EQ(a.result, n * (n - 1) / 2);
            if (d + 1 >= maxd) report_time(what, kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

TEST(taskflow_skynet_by_task_groups_of_ten_sums_every_leaf_number) {
    skynet_case(skynet_one, "skynet(task group)", big() ? 7 : 4);
}

TEST(taskflow_skynet_by_async_tasks_waited_from_tasks_sums_every_leaf_number) {
    skynet_case(skynet_async, "skynet(async+wait)", getenv("PEERS_SKY_D") ? (size_t)atoi(getenv("PEERS_SKY_D")) : big() ? 6 : 4);
}

/* ---- fibonacci: task group of one child, the other called inline ------------ */

typedef struct fib_arg {
    size_t n, r;
} fib_arg;

static int fib_tg(weft_ctx *cx, void *p) {
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_task_group g;
    weft_task_group_init(&g, cx);
    if (weft_task_group_spawn(&g, fib_tg, &x) != WEFT_OK) return -1;
    fib_tg(cx, &y);
    int st = weft_task_group_wait(&g);
    a->r = x.r + y.r;
    return st;
}

static size_t fib_serial(size_t n) {
    size_t a = 0, b = 1;
    for (size_t i = 0; i < n; i++) {
        size_t c = a + b;
        a = b;
        b = c;
    }
    return a;
}

TEST(taskflow_fibonacci_by_a_task_group_and_an_inline_call_is_exact_from_1_to_n) {
    size_t maxf = big() ? 32 : 20;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t n = 1; n <= maxf; n++) {
            fib_arg a = {n, 0};
            weft_future *f = NULL;
            double t0 = now_s();
            ASSERT_OK(weft_async(ex, fib_tg, &a, &f));
            ASSERT_OK(weft_future_wait(f));
            double t = now_s() - t0;
            weft_future_destroy(f);
            ASSERT_EQ(a.r, fib_serial(n));
            if (n == maxf) report_time("fibonacci(task group)", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- integrate: adaptive quadrature, left half by a task group -------------- */

static double integ_fn(double x) { return (x * x + 1.0) * x; }
static const double integ_eps = 1.0e-9;

typedef struct integ_arg {
    double x1, y1, x2, y2, area, r;
} integ_arg;

static int integ_tg(weft_ctx *cx, void *p) {
    integ_arg *a = p;
    double half = (a->x2 - a->x1) / 2.0, x0 = a->x1 + half, y0 = integ_fn(x0);
    double l = (a->y1 + y0) / 2 * half, r = (y0 + a->y2) / 2 * half, lr = l + r;
    if (lr - a->area < integ_eps && a->area - lr < integ_eps) {
        a->r = lr;
        return 0;
    }
    integ_arg left = {a->x1, a->y1, x0, y0, l, 0}, right = {x0, y0, a->x2, a->y2, r, 0};
    weft_task_group g;
    weft_task_group_init(&g, cx);
    if (weft_task_group_spawn(&g, integ_tg, &left) != WEFT_OK) return -1;
    integ_tg(cx, &right);
    int st = weft_task_group_wait(&g);
    a->r = left.r + right.r;
    return st;
}

static double integ_serial(double x1, double y1, double x2, double y2, double area) {
    double half = (x2 - x1) / 2.0, x0 = x1 + half, y0 = integ_fn(x0);
    double l = (y1 + y0) / 2 * half, r = (y0 + y2) / 2 * half, lr = l + r;
    if (lr - area < integ_eps && area - lr < integ_eps) return lr;
    double a = integ_serial(x1, y1, x0, y0, l);
    double b = integ_serial(x0, y0, x2, y2, r);
    return a + b;
}

TEST(taskflow_integrate_by_task_groups_equals_the_serial_quadrature_bit_for_bit) {
    size_t maxv = big() ? 100 : 20;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t v = 0; v <= maxv; v += big() ? 20 : 10) {
            integ_arg a = {0, integ_fn(0), (double)v, integ_fn((double)v), 0.0, 0};
            weft_future *f = NULL;
            double t0 = now_s();
            ASSERT_OK(weft_async(ex, integ_tg, &a, &f));
            ASSERT_OK(weft_future_wait(f));
            double t = now_s() - t0;
            weft_future_destroy(f);
            double want = integ_serial(0, integ_fn(0), (double)v, integ_fn((double)v), 0.0);
            ASSERT_TRUE(memcmp(&a.r, &want, sizeof want) == 0);
            if (v == maxv) report_time("integrate(task group)", kW[wi], v, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- nqueens: a task group per row, a board copy per child ------------------ */

static const long queens_answers[] = {0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596};

static bool queens_ok(int n, const char *a) {
    for (int i = 0; i < n; i++) {
        char p = a[i];
        for (int j = i + 1; j < n; j++) {
            char q = a[j];
            if (q == p || q == p - (j - i) || q == p + (j - i)) return false;
        }
    }
    return true;
}

typedef struct queens_arg {
    int n, j;
    const char *a;
    long r;
} queens_arg;

static int queens_tg(weft_ctx *cx, void *p) {
    queens_arg *q = p;
    int n = q->n, j = q->j;
    if (n == j) {
        q->r = 1;
        return 0;
    }
    char *buf = malloc((size_t)n * (size_t)n);
    queens_arg *parts = malloc(sizeof *parts * (size_t)n);
    if (!buf || !parts) {
        free(buf);
        free(parts);
        return -1;
    }
    weft_task_group g;
    weft_task_group_init(&g, cx);
    for (int i = 0; i < n; i++) {
        char *b = buf + (size_t)i * (size_t)n;
        memcpy(b, q->a, (size_t)j);
        b[j] = (char)i;
        parts[i] = (queens_arg){n, j + 1, b, 0};
        if (queens_ok(j + 1, b)) weft_task_group_spawn(&g, queens_tg, &parts[i]);
    }
    int st = weft_task_group_wait(&g);
    long sum = 0;
    for (int i = 0; i < n; i++) sum += parts[i].r;
    q->r = sum;
    free(buf);
    free(parts);
    return st;
}

TEST(taskflow_nqueens_by_task_groups_with_a_board_per_child_counts_every_size) {
    int maxq = big() ? 12 : 8;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (int n = 1; n <= maxq; n++) {
            char *board = calloc((size_t)n, 1);
            queens_arg a = {n, 0, board, 0};
            weft_future *f = NULL;
            double t0 = now_s();
            ASSERT_OK(weft_async(ex, queens_tg, &a, &f));
            ASSERT_OK(weft_future_wait(f));
            double t = now_s() - t0;
            weft_future_destroy(f);
            free(board);
            ASSERT_EQ(a.r, queens_answers[n]);
            if (n == maxq) report_time("nqueens(task group)", kW[wi], (uint64_t)n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- linear_chain: a chain built, linearized, run and destroyed each size --- */

static int chain_step(weft_ctx *ctx, void *arg) {
    size_t *c = arg;
    (*c)++; /* the chain orders every task: a plain counter, as Taskflow's */
    return 0;
}

TEST(taskflow_linear_chain_rebuilt_for_each_length_runs_each_task_once_in_order) {
    unsigned maxlog = big() ? 22 : 14;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (unsigned lg = 1; lg <= maxlog; lg++) {
            size_t len = (size_t)1 << lg, counter = 0;
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("linear_chain");
            weft_task *tasks = malloc(sizeof *tasks * len);
            ASSERT_NOT_NULL(tasks);
            for (size_t i = 0; i < len; i++) tasks[i] = must_emplace(tf, chain_step, &counter);
            ASSERT_OK(weft_linearize(tasks, len));
            weft_future *f = NULL;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            ASSERT_OK(weft_taskflow_destroy(tf));
            free(tasks);
            double t = now_s() - t0;
            ASSERT_EQ(counter, len);
            if (lg + 4 >= maxlog) report_time("linear_chain", kW[wi], len, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- binary_tree: task i precedes 2i and 2i+1 ------------------------------ */

TEST(taskflow_binary_tree_rebuilt_for_each_depth_runs_every_node_once) {
    unsigned maxl = big() ? 21 : 13;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (unsigned l = 1; l <= maxl; l++) {
            size_t n = (size_t)1 << l;
            atomic_size_t counter = 0;
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("binary_tree");
            weft_task *tasks = malloc(sizeof *tasks * n);
            ASSERT_NOT_NULL(tasks);
            for (size_t i = 1; i < n; i++) tasks[i] = must_emplace(tf, async_inc, &counter);
            for (size_t i = 1; i < n; i++) {
                size_t lc = i << 1, rc = lc + 1;
                if (lc < n && rc < n) {
                    weft_task kids[2] = {tasks[lc], tasks[rc]};
                    ASSERT_OK(weft_precede_many(tasks[i], kids, 2));
                }
            }
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_taskflow_destroy(tf));
            free(tasks);
            double t = now_s() - t0;
            ASSERT_EQ(atomic_load(&counter) + 1, n);
            if (l + 4 >= maxl) report_time("binary_tree", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- wavefront: MB x NB placeholders given work later, right and down edges - */

typedef struct wave {
    int mb, nb;
    atomic_int *done; /* each block's order of completion */
    atomic_int next;
    atomic_int bad;
} wave;

typedef struct wave_blk {
    wave *w;
    int i, j;
} wave_blk;

static int wave_block(weft_ctx *ctx, void *arg) {
    wave_blk *b = arg;
    wave *w = b->w;
    /* Both inputs must be done before this block. */
    if (b->i > 0 && atomic_load(&w->done[(b->i - 1) * w->nb + b->j]) == 0) atomic_store(&w->bad, 1);
    if (b->j > 0 && atomic_load(&w->done[b->i * w->nb + b->j - 1]) == 0) atomic_store(&w->bad, 1);
    if (atomic_exchange(&w->done[b->i * w->nb + b->j], atomic_fetch_add(&w->next, 1) + 1) != 0)
        atomic_store(&w->bad, 1);
    return 0;
}

TEST(taskflow_wavefront_of_placeholders_runs_every_block_once_after_its_left_and_upper_blocks) {
    int maxs = getenv("PEERS_WAVE_MAX") ? atoi(getenv("PEERS_WAVE_MAX")) : big() ? 256 : 64;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (int s = 8; s <= maxs; s <<= 1) {
            int mb = s, nb = s;
            wave w = {mb, nb, calloc((size_t)mb * (size_t)nb, sizeof(atomic_int)), 0, 0};
            wave_blk *blk = malloc(sizeof *blk * (size_t)mb * (size_t)nb);
            weft_task *node = malloc(sizeof *node * (size_t)mb * (size_t)nb);
            ASSERT_TRUE(w.done && blk && node);
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("wavefront");
            for (int k = 0; k < mb * nb; k++) node[k] = weft_placeholder(tf);
            for (int i = mb; --i >= 0;)
                for (int j = nb; --j >= 0;) {
                    blk[i * nb + j] = (wave_blk){&w, i, j};
                    ASSERT_OK(weft_task_set_work(node[i * nb + j], wave_block, &blk[i * nb + j]));
                    if (j + 1 < nb) ASSERT_OK(weft_precede(node[i * nb + j], node[i * nb + j + 1]));
                    if (i + 1 < mb) ASSERT_OK(weft_precede(node[i * nb + j], node[(i + 1) * nb + j]));
                }
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_taskflow_destroy(tf));
            double t = now_s() - t0;
            ASSERT_EQ(atomic_load(&w.bad), 0);
            ASSERT_EQ(atomic_load(&w.next), mb * nb);
            free(w.done);
            free(blk);
            free(node);
            if (s * 8 >= maxs) report_time("wavefront", kW[wi], (uint64_t)mb * nb, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- thread_pool: 1000 unconnected placeholders, a fresh taskflow per
 * iteration; then the same 1000 as async tasks with futures ------------------ */

static int tp_work(weft_ctx *ctx, void *arg) {
    volatile float acc = 0;
    for (uint64_t k = 0; k < 100; ++k) acc += (float)k;
    atomic_fetch_add_explicit((atomic_size_t *)arg, 1, memory_order_relaxed);
    return 0;
}

TEST(taskflow_thread_pool_fresh_taskflows_of_1000_tasks_and_1000_futures_run_each_task_once) {
    unsigned iters = big() ? 100 : 10;
    enum { BLOCKS = 1000 };
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        atomic_size_t counter = 0;
        double t0 = now_s();
        for (unsigned it = 0; it < iters; it++) {
            weft_taskflow *tf = make_taskflow("thread_pool");
            weft_task node[BLOCKS];
            for (size_t i = 0; i < BLOCKS; i++) node[i] = weft_placeholder(tf);
            for (size_t i = 0; i < BLOCKS; i++) ASSERT_OK(weft_task_set_work(node[i], tp_work, &counter));
            weft_future *f = NULL;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            ASSERT_OK(weft_taskflow_destroy(tf));
        }
        double t1 = now_s();
        ASSERT_EQ(atomic_load(&counter), (size_t)iters * BLOCKS);
        for (unsigned it = 0; it < iters; it++) {
            weft_future *fs[BLOCKS];
            for (size_t i = 0; i < BLOCKS; i++) ASSERT_OK(weft_async(ex, tp_work, &counter, &fs[i]));
            for (size_t i = 0; i < BLOCKS; i++) {
                ASSERT_OK(weft_future_wait(fs[i]));
                weft_future_destroy(fs[i]);
            }
        }
        double t2 = now_s();
        ASSERT_EQ(atomic_load(&counter), (size_t)iters * BLOCKS * 2);
        report_time("thread_pool(taskflows)", kW[wi], (uint64_t)iters * BLOCKS, t1 - t0);
        report_time("thread_pool(futures)", kW[wi], (uint64_t)iters * BLOCKS, t2 - t1);
        weft_executor_destroy(ex);
    }
}

/* ---- linear_pipeline: 8 lines, a serial input stage and up to 15 filters,
 * "s"/"p" per stage, a fresh taskflow and pipeline each size ----------------- */

enum { LP_MAX_STAGES = 16 };

typedef struct lp_state {
    size_t size;            /* the input stops at token == size (Input's i++ == size) */
    size_t nstages;
    unsigned spin;          /* work(): a short spin instead of the peer's 10 us sleep */
    atomic_size_t seen[LP_MAX_STAGES];
    uint64_t last[LP_MAX_STAGES]; /* serial stages: the last token seen (+1) */
    atomic_int bad;
} lp_state;

static void lp_work(unsigned spin) {
    volatile unsigned x = 0;
    for (unsigned i = 0; i < spin; i++) x += i;
}

static int lp_stage(weft_pipeflow *pf, void *arg) {
    lp_state *s = arg;
    size_t st = weft_pipeflow_stage(pf);
    uint64_t tok = weft_pipeflow_token(pf);
    lp_work(s->spin);
    if (st == 0 && tok == s->size) {
        weft_pipeflow_stop(pf);
        return 0;
    }
    if (weft_pipeflow_line(pf) != tok % 8) atomic_store(&s->bad, 1);
    atomic_fetch_add(&s->seen[st], 1);
    return 0;
}

static int lp_serial_stage(weft_pipeflow *pf, void *arg) {
    lp_state *s = arg;
    size_t st = weft_pipeflow_stage(pf);
    uint64_t tok = weft_pipeflow_token(pf);
    if (!(st == 0 && tok == s->size)) {
        if (s->last[st] != tok) atomic_store(&s->bad, 1); /* serial: in token order */
        s->last[st] = tok + 1;
    }
    return lp_stage(pf, arg);
}

static void linear_pipeline_case(const char *pipes, size_t maxlog, unsigned spin) {
    size_t ns = strlen(pipes);
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t lg = 1; lg <= maxlog; lg++) {
            lp_state *s = calloc(1, sizeof *s);
            ASSERT_NOT_NULL(s);
            s->size = (size_t)1 << lg;
            s->nstages = ns;
            s->spin = spin;
            weft_stage stages[LP_MAX_STAGES];
            for (size_t k = 0; k < ns; k++)
                stages[k] = (weft_stage){pipes[k] == 's' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL,
                                         pipes[k] == 's' ? lp_serial_stage : lp_stage, s, NULL};
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("linear_pipeline");
            weft_status err;
            weft_pipeline *pl = weft_pipeline_create(8, stages, ns, &err);
            ASSERT_NOT_NULL(pl);
            ASSERT_TRUE(weft_pipeline_emplace(tf, pl).node_ != NULL);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            double t = now_s() - t0;
            ASSERT_EQ(weft_pipeline_num_tokens(pl), s->size);
            ASSERT_OK(weft_taskflow_destroy(tf));
            ASSERT_OK(weft_pipeline_destroy(pl));
            for (size_t k = 0; k < ns; k++) ASSERT_EQ(atomic_load(&s->seen[k]), s->size);
            ASSERT_EQ(atomic_load(&s->bad), 0);
            if (lg + 1 >= maxlog) {
                char what[64];
                snprintf(what, sizeof what, "linear_pipeline(%s)", pipes);
                report_time(what, kW[wi], s->size, t);
            }
            free(s);
        }
        weft_executor_destroy(ex);
    }
}

TEST(taskflow_linear_pipeline_of_8_lines_and_8_serial_stages_passes_every_token_in_order) {
    linear_pipeline_case("ssssssss", big() ? 16 : 10, 200);
}

TEST(taskflow_linear_pipeline_of_8_lines_and_alternating_stages_passes_every_token) {
    linear_pipeline_case("spspspsp", big() ? 16 : 10, 200);
    linear_pipeline_case("s", big() ? 16 : 10, 0);
    linear_pipeline_case("sppppppppppppppp", big() ? 14 : 8, 200);
}

/* ---- data_pipeline: int -> int -> ... -> void, 8 lines --------------------- */

typedef struct dp_state {
    size_t size;
    atomic_llong sum;
    atomic_size_t count;
} dp_state;

static int dp_first(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dp_state *s = arg;
    uint64_t tok = weft_pipeflow_token(pf);
    if (tok == s->size) {
        weft_pipeflow_stop(pf);
        return 0;
    }
    *(int *)out = (int)tok;
    return 0;
}
static int dp_mid(weft_pipeflow *pf, void *in, void *out, void *arg) {
    *(int *)out = *(int *)in + 1;
    return 0;
}
static int dp_last(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dp_state *s = arg;
    atomic_fetch_add(&s->sum, *(int *)in);
    atomic_fetch_add(&s->count, 1);
    return 0;
}

TEST(taskflow_data_pipeline_of_8_lines_passes_each_tokens_int_through_every_stage) {
    size_t maxlog = big() ? 18 : 11;
    static const char *shapes[] = {"ss", "sp", "ssssssss", "spspspsp"};
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
            const char *p = shapes[sh];
            size_t ns = strlen(p);
            for (size_t lg = 1; lg <= maxlog; lg += big() ? 1 : 5) {
                dp_state s = {(size_t)1 << lg, 0, 0};
                weft_data_stage st[8];
                for (size_t k = 0; k < ns; k++) {
                    st[k] = (weft_data_stage){p[k] == 's' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL,
                                              k == 0 ? dp_first : k + 1 == ns ? dp_last : dp_mid, &s, NULL,
                                              k == 0 ? 0 : sizeof(int), k + 1 == ns ? 0 : sizeof(int), NULL, NULL};
                }
                double t0 = now_s();
                weft_taskflow *tf = make_taskflow("data_pipeline");
                weft_status err;
                weft_pipeline *pl = weft_data_pipeline_create(8, st, ns, &err);
                ASSERT_NOT_NULL(pl);
                ASSERT_TRUE(weft_pipeline_emplace(tf, pl).node_ != NULL);
                ASSERT_OK(weft_run_and_wait(ex, tf));
                double t = now_s() - t0;
                ASSERT_OK(weft_taskflow_destroy(tf));
                ASSERT_OK(weft_pipeline_destroy(pl));
                long long n = (long long)s.size;
                ASSERT_EQ(atomic_load(&s.count), s.size);
                ASSERT_EQ(atomic_load(&s.sum), n * (n - 1) / 2 + n * (long long)(ns - 2));
                if (lg == maxlog) {
                    char what[64];
                    snprintf(what, sizeof what, "data_pipeline(%s)", p);
                    report_time(what, kW[wi], s.size, t);
                }
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- mandelbrot: one row per index, dynamic chunks of one ------------------- */

typedef struct mandel {
    int w, h, *out;
} mandel;

static int mandel_px(int x, int y, int w, int h) {
    double cr = -2.0 + 3.0 * x / w, ci = -1.5 + 3.0 * y / h, zr = 0, zi = 0;
    int k = 0;
    for (; k < 256 && zr * zr + zi * zi < 4.0; k++) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
    }
    return k;
}

static void mandel_row(size_t i, void *arg) {
    mandel *m = arg;
    for (int x = 0; x < m->w; x++) m->out[i * (size_t)m->w + (size_t)x] = mandel_px(x, (int)i, m->w, m->h);
}

TEST(taskflow_mandelbrot_by_a_dynamic_parallel_for_gives_the_serial_image) {
    int maxn = big() ? 1000 : 200;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (int n = 100; n <= maxn; n += big() ? 300 : 100) {
            mandel m = {n, n, calloc((size_t)n * (size_t)n, sizeof(int))};
            ASSERT_NOT_NULL(m.out);
            weft_algo_config cfg = {.partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 1};
            double t0 = now_s();
            ASSERT_OK(weft_parallel_for(ex, 0, (size_t)n, 1, mandel_row, &m, &cfg));
            double t = now_s() - t0;
            for (int y = 0; y < n; y++)
                for (int x = 0; x < n; x += 7) ASSERT_EQ(m.out[(size_t)y * (size_t)n + (size_t)x], mandel_px(x, y, n, n));
            free(m.out);
            if (n + (big() ? 300 : 100) > maxn) report_time("mandelbrot", kW[wi], (uint64_t)n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- matrix_multiplication: a taskflow of three loops (init a, b, c), then
 * the product, as Taskflow's (emplace_for tasks), rebuilt each size ---------- */

typedef struct mm {
    int n;
    double *a, *b, *c;
} mm;

static void mm_init_a(size_t lo, size_t hi, void *arg) {
    mm *m = arg;
    for (size_t i = lo; i < hi; i++)
        for (int j = 0; j < m->n; j++) m->a[i * (size_t)m->n + (size_t)j] = (double)(i + (size_t)j);
}
static void mm_init_b(size_t lo, size_t hi, void *arg) {
    mm *m = arg;
    for (size_t i = lo; i < hi; i++)
        for (int j = 0; j < m->n; j++) m->b[i * (size_t)m->n + (size_t)j] = (double)i * (double)j;
}
static void mm_init_c(size_t lo, size_t hi, void *arg) {
    mm *m = arg;
    for (size_t i = lo; i < hi; i++)
        for (int j = 0; j < m->n; j++) m->c[i * (size_t)m->n + (size_t)j] = 0;
}
static void mm_row(size_t lo, size_t hi, void *arg) {
    mm *m = arg;
    size_t n = (size_t)m->n;
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t k = 0; k < n; k++) s += m->a[i * n + k] * m->b[k * n + j];
            m->c[i * n + j] = s;
        }
}

TEST(taskflow_matrix_multiplication_by_a_taskflow_of_loops_equals_the_triple_loop) {
    int maxn = big() ? 512 : 96;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (int n = 32; n <= maxn; n *= 2) {
            size_t nn = (size_t)n * (size_t)n;
            mm m = {n, malloc(nn * sizeof(double)), malloc(nn * sizeof(double)), malloc(nn * sizeof(double))};
            ASSERT_TRUE(m.a && m.b && m.c);
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("matmul");
            weft_for_desc da = {0, (size_t)n, 1, mm_init_a, &m, {0}}, db = da, dc = da, dm = da;
            db.body = mm_init_b;
            dc.body = mm_init_c;
            dm.body = mm_row;
            weft_task ta = weft_emplace_for(tf, &da), tb = weft_emplace_for(tf, &db), tc = weft_emplace_for(tf, &dc);
            weft_task tm = weft_emplace_for(tf, &dm);
            ASSERT_OK(weft_precede(ta, tm));
            ASSERT_OK(weft_precede(tb, tm));
            ASSERT_OK(weft_precede(tc, tm));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_taskflow_destroy(tf));
            double t = now_s() - t0;
            for (size_t i = 0; i < (size_t)n; i += 5)
                for (size_t j = 0; j < (size_t)n; j += 3) {
                    double s = 0;
                    for (size_t k = 0; k < (size_t)n; k++) s += (double)(i + k) * ((double)k * (double)j);
                    ASSERT_TRUE(s == m.c[i * (size_t)n + j]);
                }
            free(m.a);
            free(m.b);
            free(m.c);
            if (n * 2 > maxn) report_time("matrix_multiplication", kW[wi], (uint64_t)n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- fibonacci by nested subflows (Taskflow's subflow form): each task a
 * subflow of two subflow tasks, summed after an explicit join --------------- */

static int fib_sf(weft_ctx *cx, weft_subflow *sf, void *p) {
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_task_is_null(weft_emplace_subflow(g, fib_sf, &x))) return -1;
    if (weft_task_is_null(weft_emplace_subflow(g, fib_sf, &y))) return -1;
    weft_status st = weft_subflow_join(sf);
    a->r = x.r + y.r;
    return st == WEFT_OK ? 0 : -1;
}

TEST(taskflow_fibonacci_by_nested_joined_subflows_is_exact_and_reruns_alike) {
    size_t maxf = big() ? 24 : 16;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t n = 0; n <= maxf; n += 4) {
            fib_arg a = {n, 0};
            weft_taskflow *tf = make_taskflow("fib_subflow");
            ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, fib_sf, &a)));
            for (int rep = 0; rep < 2; rep++) {
                a.r = 12345;
                double t0 = now_s();
                ASSERT_OK(weft_run_and_wait(ex, tf));
                double t = now_s() - t0;
                ASSERT_EQ(a.r, fib_serial(n));
                if (n == maxf) report_time(rep ? "fibonacci(subflow) rerun" : "fibonacci(subflow)", kW[wi], n, t);
            }
            ASSERT_OK(weft_taskflow_destroy(tf));
        }
        weft_executor_destroy(ex);
    }
}

/* The memory behind that recursion, counted through the allocator hook: each
 * subflow task has a graph of its own, and a graph of two tasks held a slab
 * chunk of 64 (8 KiB, zeroed) -- most of a nested subflow's cost, which made
 * this program 30-50 times slower than Taskflow's.  Live bytes per subflow
 * task after a run of fib(12) (465 subflow tasks, 232 with a graph of two):
 * 5.4 KiB with the 64-task first chunk, under 2 KiB with an 8-task one. */
static atomic_llong live_bytes;
static void *count_alloc(void *ctx, size_t n) {
    atomic_fetch_add(&live_bytes, (long long)n);
    return malloc(n);
}
static void *count_realloc(void *ctx, void *p, size_t old, size_t n) {
    void *q = realloc(p, n);
    if (q) atomic_fetch_add(&live_bytes, (long long)n - (long long)old);
    return q;
}
static void count_free(void *ctx, void *p, size_t n) {
    if (p) atomic_fetch_sub(&live_bytes, (long long)n);
    free(p);
}

TEST(nested_subflows_of_two_tasks_hold_under_3_kib_a_task_not_a_64_task_slab) {
    weft_set_allocator(&(weft_allocator){count_alloc, count_realloc, count_free, NULL});
    weft_executor *ex = make_executor(1);
    fib_arg a = {12, 0};
    long long before = atomic_load(&live_bytes);
    weft_taskflow *tf = make_taskflow("fib_subflow");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, fib_sf, &a)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(a.r, (size_t)144);
    long long held = atomic_load(&live_bytes) - before;
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    if (printing()) printf("peers: fib(12) by subflows holds %lld bytes, %lld a subflow task\n", held, held / 465);
    ASSERT_LT(held / 465, 3072);
}

/* Half the tasks of a binary recursion of subflows are leaves that build
 * nothing: each still allocated a nested-run record (576 bytes, cache-line
 * aligned) it never used, and freed it with the taskflow.  It is now made when
 * the graph first runs: 1515 bytes a leaf before, 867 after. */
static int sub_nothing(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}
static int sub_join_then_build(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    int *r = arg;
    r[0] = weft_subflow_join(sf); /* nothing built: joins at once */
    weft_taskflow *g = weft_subflow_graph(sf);
    r[1] = g != NULL;
    r[2] = g ? (weft_task_is_null(weft_emplace(g, noop, NULL)) ? weft_taskflow_last_error(g) : WEFT_OK) : -1;
    return 0;
}

TEST(subflow_tasks_that_build_nothing_hold_no_nested_run_record_and_a_join_of_nothing_seals_the_graph) {
    weft_set_allocator(&(weft_allocator){count_alloc, count_realloc, count_free, NULL});
    weft_executor *ex = make_executor(2);
    atomic_int calls = 0;
    long long before = atomic_load(&live_bytes);
    weft_taskflow *tf = make_taskflow("leaves");
    for (int i = 0; i < 1000; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, sub_nothing, &calls)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(atomic_load(&calls), 2000);
    long long held = atomic_load(&live_bytes) - before;
    /* drawn as clusters, as subflow tasks always are */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ASSERT_OK(weft_taskflow_dump_dot(tf, mem));
    fclose(mem);
    ASSERT_TRUE(strstr(text, "cluster_1000") != NULL);
    free(text);
    ASSERT_OK(weft_taskflow_destroy(tf));
    int r[3] = {-9, -9, -9};
    tf = make_taskflow("join_then_build");
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, sub_join_then_build, r)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(r[0]);
    ASSERT_EQ(r[1], 1);
    ASSERT_STATUS(r[2], WEFT_EBUSY); /* sealed by the join, as a graph built before it */
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    weft_set_allocator(NULL);
    if (printing()) printf("peers: 1000 subflow tasks that build nothing hold %lld bytes\n", held);
    ASSERT_LT(held / 1000, 1024);
}

/* ---- graph_traversal: a level graph, each node 1..4 edges into the next
 * level (a shuffled cover, as Taskflow's LevelGraph), one task per node ------ */

typedef struct lg_node {
    struct lgraph *g;
    int level, idx, nin;
    int *in; /* the previous level's nodes with an edge to this one */
    atomic_int visited;
} lg_node;

typedef struct lgraph {
    int levels, len;
    lg_node *nodes;
    atomic_int bad;
} lgraph;

static int lg_visit(weft_ctx *ctx, void *arg) {
    lg_node *n = arg;
    for (int k = 0; k < n->nin; k++)
        if (!atomic_load(&n->g->nodes[(n->level - 1) * n->g->len + n->in[k]].visited)) atomic_store(&n->g->bad, 1);
    if (atomic_exchange(&n->visited, 1)) atomic_store(&n->g->bad, 1);
    return 0;
}

static void lg_build(lgraph *g, int levels, int len, uint64_t seed, int **edges_out, int **nedges_out) {
    g->levels = levels;
    g->len = len;
    g->nodes = calloc((size_t)levels * (size_t)len, sizeof *g->nodes);
    int *perm = malloc(sizeof(int) * (size_t)len);
    int *edges = malloc(sizeof(int) * (size_t)levels * (size_t)len * 4); /* out-edges, 4 slots a node */
    int *nedges = calloc((size_t)levels * (size_t)len, sizeof(int));
    uint64_t s = seed;
    for (int l = 0; l < levels; l++) {
        for (int i = 0; i < len; i++) perm[i] = i;
        for (int i = len - 1; i > 0; i--) {
            int j = (int)(test_rand(&s) % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int start = 0;
        for (int i = 0; i < len; i++) {
            lg_node *n = &g->nodes[l * len + i];
            n->g = g;
            n->level = l;
            n->idx = i;
            if (l + 1 == levels) continue;
            int k = 1 + (int)(test_rand(&s) % 4);
            if (start + k > len) start = 0;
            for (int e = 0; e < k && start + e < len; e++) edges[(l * len + i) * 4 + nedges[l * len + i]++] = perm[start + e];
            start += k;
        }
    }
    for (int l = 0; l + 1 < levels; l++)
        for (int i = 0; i < len; i++)
            for (int e = 0; e < nedges[l * len + i]; e++) g->nodes[(l + 1) * len + edges[(l * len + i) * 4 + e]].nin++;
    for (int x = 0; x < levels * len; x++) g->nodes[x].in = malloc(sizeof(int) * (size_t)(g->nodes[x].nin + 1)), g->nodes[x].nin = 0;
    for (int l = 0; l + 1 < levels; l++)
        for (int i = 0; i < len; i++)
            for (int e = 0; e < nedges[l * len + i]; e++) {
                lg_node *d = &g->nodes[(l + 1) * len + edges[(l * len + i) * 4 + e]];
                d->in[d->nin++] = i;
            }
    free(perm);
    *edges_out = edges;
    *nedges_out = nedges;
}

TEST(taskflow_graph_traversal_of_level_graphs_visits_every_node_once_after_its_inputs) {
    int maxs = getenv("PEERS_GT_MAX") ? atoi(getenv("PEERS_GT_MAX")) : big() ? 512 : 64;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (int s = 1; s <= maxs; s <<= 1) {
            lgraph g = {0};
            int *edges, *nedges;
            lg_build(&g, s, s, 7 + (uint64_t)s, &edges, &nedges);
            size_t nn = (size_t)s * (size_t)s;
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("graph_traversal");
            weft_task *t = malloc(sizeof *t * nn);
            for (size_t x = 0; x < nn; x++) t[x] = must_emplace(tf, lg_visit, &g.nodes[x]);
            for (int l = 0; l + 1 < s; l++)
                for (int i = 0; i < s; i++)
                    for (int e = 0; e < nedges[l * s + i]; e++)
                        ASSERT_OK(weft_precede(t[l * s + i], t[(l + 1) * s + edges[(l * s + i) * 4 + e]]));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_OK(weft_taskflow_destroy(tf));
            double tt = now_s() - t0;
            ASSERT_EQ(atomic_load(&g.bad), 0);
            for (size_t x = 0; x < nn; x++) ASSERT_EQ(atomic_load(&g.nodes[x].visited), 1);
            for (size_t x = 0; x < nn; x++) free(g.nodes[x].in);
            free(g.nodes);
            free(edges);
            free(nedges);
            free(t);
            if (s * 8 >= maxs) report_time("graph_traversal", kW[wi], nn, tt);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- Lace fib: SPAWN, CALL, SYNC with weft_spawn / weft_sync under
 * weft_run_root (lace's RUN from main) -------------------------------------- */

static int lace_fib(weft_ctx *cx, void *p) {
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return 0;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    weft_spawn(cx, lace_fib, &x);
    lace_fib(cx, &y);
    int st = weft_sync(cx);
    a->r = x.r + y.r;
    return st;
}

TEST(lace_fib_by_spawn_call_sync_under_run_root_is_exact) {
    size_t maxf = big() ? 32 : 20;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t n = 0; n <= maxf; n++) {
            fib_arg a = {n, 0};
            double t0 = now_s();
            ASSERT_EQ(weft_run_root(ex, lace_fib, &a), 0);
            double t = now_s() - t0;
            ASSERT_EQ(a.r, fib_serial(n));
            if (n == maxf) report_time("lace fib(spawn)", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- Lace uts: a binomial tree, each node's children spawned in a flat loop
 * and synced in a second loop (Lace's uts-lace.c shape) ---------------------- */

typedef struct uts_arg {
    uint64_t state;
    int depth;
    double q;
    int m, b; /* b: the root's children */
    long count;
    int maxdepth;
} uts_arg;

static int uts_node(weft_ctx *cx, void *p) {
    uts_arg *a = p;
    uint64_t s = a->state;
    /* Binomial: the root has m children; any other node has m with
     * probability q, else none. */
    int nk = a->depth == 0 ? a->b : ((double)(test_rand(&s) >> 11) * 0x1.0p-53 < a->q ? a->m : 0);
    /* A child record each, as Lace's alloca per child. */
    uts_arg *kid = nk ? __builtin_alloca(sizeof *kid * (size_t)nk) : NULL;
    for (int i = 0; i < nk; i++) {
        kid[i] = (uts_arg){a->state * 6364136223846793005ull + 1442695040888963407ull + (uint64_t)i * 0x9e3779b97f4a7c15ull,
                           a->depth + 1, a->q, a->m, a->b, 0, 0};
        weft_spawn(cx, uts_node, &kid[i]);
    }
    int st = 0;
    for (int i = 0; i < nk; i++) {
        int r = weft_sync(cx);
        if (r && !st) st = r;
    }
    long c = 1;
    int md = a->depth;
    for (int i = 0; i < nk; i++) {
        c += kid[i].count;
        if (kid[i].maxdepth > md) md = kid[i].maxdepth;
    }
    a->count = c;
    a->maxdepth = md;
    return st;
}

/* Serial count, by an explicit stack: a near-critical tree is thousands of
 * levels deep. */
static long uts_serial(uint64_t root, double q, int m, int b) {
    typedef struct { uint64_t state; int depth; } item;
    size_t cap = 1024, top = 0;
    item *st = malloc(cap * sizeof *st);
    st[top++] = (item){root, 0};
    long c = 0;
    while (top) {
        item it = st[--top];
        c++;
        uint64_t s = it.state;
        int nk = it.depth == 0 ? b : ((double)(test_rand(&s) >> 11) * 0x1.0p-53 < q ? m : 0);
        if (top + (size_t)nk > cap) st = realloc(st, (cap = 2 * (top + (size_t)nk)) * sizeof *st);
        for (int i = 0; i < nk; i++)
            st[top++] = (item){it.state * 6364136223846793005ull + 1442695040888963407ull + (uint64_t)i * 0x9e3779b97f4a7c15ull,
                               it.depth + 1};
    }
    free(st);
    return c;
}

TEST(lace_uts_binomial_trees_by_flat_spawn_loops_count_the_serial_tree) {
    /* q * m just below 1: trees of a few thousand (small) to ~10^5 nodes. */
    static const uint64_t seeds[] = {1, 19, 42, 1234};
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
            double q = getenv("PEERS_UTS_Q") ? atof(getenv("PEERS_UTS_Q")) : big() ? 0.1999 : 0.199;
            int b = getenv("PEERS_UTS_B") ? atoi(getenv("PEERS_UTS_B")) : 8;
            uts_arg a = {seeds[k], 0, q, 5, b, 0, 0};
            long want = uts_serial(seeds[k], q, 5, b);
            double t0 = now_s();
            ASSERT_EQ(weft_run_root(ex, uts_node, &a), 0);
            double t = now_s() - t0;
            ASSERT_EQ(a.count, want);
            if (printing()) printf("peers: uts seed %llu: %ld nodes, depth %d\n", (unsigned long long)seeds[k], want, a.maxdepth);
            if (k == 3) report_time("lace uts", kW[wi], (uint64_t)want, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- black_scholes: init -> for_each_index (static) -> condition back to the
 * loop NUM_RUNS times; a fresh taskflow per size -------------------------------
 * Taskflow's condition returns -1 to stop; weft's fails the run on a negative
 * value (flow.h) and stops on an index past the successors: the port returns 1. */

typedef struct bs {
    size_t n;
    double *spot, *strike, *vol, *t, *price;
    int runs, i;
    atomic_int loops;
} bs;

static double bs_cndf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double bs_price(double s, double k, double v, double t) {
    double r = 0.02, d1 = (log(s / k) + (r + v * v / 2) * t) / (v * sqrt(t)), d2 = d1 - v * sqrt(t);
    return s * bs_cndf(d1) - k * exp(-r * t) * bs_cndf(d2);
}
static void bs_body(size_t lo, size_t hi, void *arg) {
    bs *b = arg;
    for (size_t i = lo; i < hi; i++) b->price[i] = bs_price(b->spot[i], b->strike[i], b->vol[i], b->t[i]);
}
static int bs_count(weft_ctx *ctx, void *arg) {
    atomic_fetch_add(&((bs *)arg)->loops, 1);
    return 0;
}
static int bs_cond(weft_ctx *ctx, void *arg) {
    bs *b = arg;
    return ++b->i == b->runs ? 1 : 0;
}
static int bs_cond_literal(weft_ctx *ctx, void *arg) {
    bs *b = arg;
    return ++b->i == b->runs ? -1 : 0;
}

TEST(taskflow_black_scholes_loop_under_a_condition_prices_every_option_each_run) {
    size_t maxn = big() ? 10000 : 2000;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t n = 1000; n <= maxn; n += big() ? 3000 : 1000) {
            bs b = {n, malloc(n * 8), malloc(n * 8), malloc(n * 8), malloc(n * 8), calloc(n, 8), 5, 0, 0};
            uint64_t s = n;
            for (size_t i = 0; i < n; i++) {
                b.spot[i] = 50 + (double)(test_rand(&s) % 100);
                b.strike[i] = 50 + (double)(test_rand(&s) % 100);
                b.vol[i] = 0.1 + (double)(test_rand(&s) % 50) / 100;
                b.t[i] = 0.25 + (double)(test_rand(&s) % 8) / 4;
            }
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("black_scholes");
            weft_task init = weft_placeholder(tf);
            weft_for_desc d = {0, n, 1, bs_body, &b, {.partitioner = WEFT_PARTITION_STATIC}};
            weft_task loop = weft_emplace_for(tf, &d);
            weft_task count = must_emplace(tf, bs_count, &b);
            weft_task cond = weft_emplace_condition(tf, bs_cond, &b);
            ASSERT_OK(weft_precede(init, loop));
            ASSERT_OK(weft_precede(loop, count));
            ASSERT_OK(weft_precede(count, cond));
            ASSERT_OK(weft_precede(cond, loop));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            double t = now_s() - t0;
            ASSERT_EQ(atomic_load(&b.loops), 5);
            for (size_t i = 0; i < n; i++) {
                double want = bs_price(b.spot[i], b.strike[i], b.vol[i], b.t[i]);
                ASSERT_TRUE(memcmp(&want, &b.price[i], sizeof want) == 0);
            }
            /* The literal port's -1 fails the run, as flow.h says. */
            b.i = 0;
            b.runs = 2;
            ASSERT_OK(weft_taskflow_clear(tf));
            init = weft_placeholder(tf); /* without it nothing runs: the loop's one edge in is weak (flow.h) */
            loop = weft_emplace_for(tf, &d);
            cond = weft_emplace_condition(tf, bs_cond_literal, &b);
            ASSERT_OK(weft_precede(init, loop));
            ASSERT_OK(weft_precede(loop, cond));
            ASSERT_OK(weft_precede(cond, loop));
            ASSERT_STATUS(weft_run_and_wait(ex, tf), WEFT_ETASK);
            ASSERT_EQ(b.i, 2);
            ASSERT_OK(weft_taskflow_destroy(tf));
            free(b.spot), free(b.strike), free(b.vol), free(b.t), free(b.price);
            if (n + (big() ? 3000 : 1000) > maxn) report_time("black_scholes(5 runs)", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- merge_sort: right half in a task group, left half called, merged ---- */

typedef struct ms_arg {
    int *data, *buf;
    size_t lo, hi;
} ms_arg;

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int msort(weft_ctx *cx, void *p) {
    ms_arg *a = p;
    size_t n = a->hi - a->lo;
    if (n <= 1024) {
        qsort(a->data + a->lo, n, sizeof(int), cmp_int);
        return 0;
    }
    size_t mid = a->lo + n / 2;
    ms_arg right = {a->data, a->buf, mid, a->hi}, left = {a->data, a->buf, a->lo, mid};
    weft_task_group g;
    weft_task_group_init(&g, cx);
    if (weft_task_group_spawn(&g, msort, &right) != WEFT_OK) return -1;
    msort(cx, &left);
    int st = weft_task_group_wait(&g);
    size_t i = a->lo, j = mid, k = a->lo;
    while (i < mid && j < a->hi) a->buf[k++] = a->data[j] < a->data[i] ? a->data[j++] : a->data[i++];
    while (i < mid) a->buf[k++] = a->data[i++];
    while (j < a->hi) a->buf[k++] = a->data[j++];
    memcpy(a->data + a->lo, a->buf + a->lo, n * sizeof(int));
    return st;
}

TEST(taskflow_merge_sort_by_task_groups_sorts_like_qsort) {
    size_t maxn = big() ? 10000000 : 200000;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (size_t n = 1; n <= maxn; n *= 7) {
            int *v = malloc(n * sizeof(int)), *w = malloc(n * sizeof(int)), *buf = malloc(n * sizeof(int));
            uint64_t s = n;
            for (size_t i = 0; i < n; i++) v[i] = w[i] = (int)(test_rand(&s) % 1000000);
            ms_arg a = {v, buf, 0, n};
            weft_future *f = NULL;
            double t0 = now_s();
            ASSERT_OK(weft_async(ex, msort, &a, &f));
            ASSERT_OK(weft_future_wait(f));
            double t = now_s() - t0;
            weft_future_destroy(f);
            qsort(w, n, sizeof(int), cmp_int);
            ASSERT_TRUE(memcmp(v, w, n * sizeof(int)) == 0);
            free(v), free(w), free(buf);
            if (n * 7 > maxn) report_time("merge_sort", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- reduce_sum, sort, scan (multiplies) and for_each (tan): each one task
 * of a fresh taskflow, as Taskflow's ------------------------------------------ */

static void sum_range(size_t lo, size_t hi, void *acc, void *arg) {
    const double *v = arg;
    double s = 0; /* the body writes its range's sum (algo.h): *acc holds nothing on entry */
    for (size_t i = lo; i < hi; i++) s += v[i];
    *(double *)acc = s;
}
static void add_double(void *acc, const void *x, void *arg) { *(double *)acc += *(const double *)x; }
static void mul_uint(void *acc, const void *x, void *arg) { *(unsigned *)acc *= *(const unsigned *)x; }
static int cmp_int_r(const void *a, const void *b, void *arg) { return cmp_int(a, b); }
static void tan_range(size_t lo, size_t hi, void *arg) {
    double *v = arg;
    for (size_t i = lo; i < hi; i++) v[i] = tan(v[i]);
}
typedef struct red_task {
    size_t n;
    double *v, result;
    weft_status st;
} red_task;
static int reduce_in_task(weft_ctx *ctx, void *arg) {
    red_task *r = arg;
    r->result = 0.0;
    r->st = weft_parallel_reduce_range(weft_ctx_executor(ctx), r->n, sizeof(double), &r->result, sum_range, add_double,
                                       r->v, NULL);
    return r->st;
}

TEST(taskflow_reduce_sort_scan_and_for_each_tasks_equal_the_serial_loops) {
    size_t n = big() ? 10000000 : 100000;
    double *v = malloc(n * sizeof(double)), *v2 = malloc(n * sizeof(double));
    int *iv = malloc(n * sizeof(int)), *iw = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        uint64_t s = 99;
        for (size_t i = 0; i < n; i++) {
            v[i] = v2[i] = (double)(test_rand(&s) % 1000) / 7.0;
            iv[i] = iw[i] = (int)(test_rand(&s) % 1000);
        }
        /* reduce_sum: integers in doubles (exact whatever the grouping) */
        for (size_t i = 0; i < n; i++) v[i] = (double)(i % 1000);
        red_task r = {n, v, 0, WEFT_OK};
        double t0 = now_s();
        weft_taskflow *tf = make_taskflow("reduce_sum");
        must_emplace(tf, reduce_in_task, &r);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_taskflow_destroy(tf));
        double t1 = now_s();
        ASSERT_OK(r.st);
        double want = 0;
        for (size_t i = 0; i < n; i++) want += v[i];
        ASSERT_TRUE(r.result == want);
        /* sort */
        weft_sort_desc sd = {iv, n, sizeof(int), cmp_int_r, NULL, false, {0}};
        double t2 = now_s();
        tf = make_taskflow("sort");
        ASSERT_FALSE(weft_task_is_null(weft_emplace_sort(tf, &sd)));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_taskflow_destroy(tf));
        double t3 = now_s();
        qsort(iw, n, sizeof(int), cmp_int);
        ASSERT_TRUE(memcmp(iv, iw, n * sizeof(int)) == 0);
        /* inclusive scan with multiplies, in unsigned ints (they wrap: exact
         * in any grouping) */
        unsigned *uv = (unsigned *)iv, *uo = (unsigned *)out;
        for (size_t i = 0; i < n; i++) uv[i] = (unsigned)(i % 3) + 1;
        weft_scan_desc sc = {uv, uo, n, sizeof(unsigned), NULL, mul_uint, NULL, false, {0}};
        double t4 = now_s();
        tf = make_taskflow("scan");
        ASSERT_FALSE(weft_task_is_null(weft_emplace_scan(tf, &sc)));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_taskflow_destroy(tf));
        double t5 = now_s();
        unsigned acc = 1;
        for (size_t i = 0; i < n; i++) {
            acc *= uv[i];
            ASSERT_EQ(uo[i], acc);
        }
        /* for_each tan */
        for (size_t i = 0; i < n; i++) v[i] = v2[i];
        weft_for_desc fd = {0, n, 1, tan_range, v, {0}};
        double t6 = now_s();
        tf = make_taskflow("for_each");
        ASSERT_FALSE(weft_task_is_null(weft_emplace_for(tf, &fd)));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_taskflow_destroy(tf));
        double t7 = now_s();
        for (size_t i = 0; i < n; i++) {
            double w = tan(v2[i]);
            ASSERT_TRUE(memcmp(&w, &v[i], sizeof w) == 0);
        }
        report_time("reduce_sum", kW[wi], n, t1 - t0);
        report_time("sort", kW[wi], n, t3 - t2);
        report_time("scan(multiplies)", kW[wi], n, t5 - t4);
        report_time("for_each(tan)", kW[wi], n, t7 - t6);
        weft_executor_destroy(ex);
    }
    free(v), free(v2), free(iv), free(iw), free(out);
}

/* ---- embarrassing_parallelism: N unconnected tasks in a fresh taskflow ----- */

TEST(taskflow_embarrassing_parallelism_runs_every_unconnected_task_once) {
    unsigned maxlog = big() ? 21 : 14;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (unsigned lg = 0; lg <= maxlog; lg++) {
            size_t n = (size_t)1 << lg;
            atomic_size_t counter = 0;
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("embarrassing_parallelism");
            for (size_t i = 0; i < n; i++) must_emplace(tf, async_inc, &counter);
            weft_future *f = NULL;
            ASSERT_OK(weft_run(ex, tf, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_future_destroy(f);
            ASSERT_OK(weft_taskflow_destroy(tf));
            double t = now_s() - t0;
            ASSERT_EQ(atomic_load(&counter), n);
            if (lg + 2 >= maxlog) report_time("embarrassing_parallelism", kW[wi], n, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- graph_pipeline: a pipeline walks a level graph node by node (the
 * first stage), middle stages work on the node, the last stage sets its
 * value from the previous level's values: serial stages keep the order ---- */

typedef struct gp {
    lgraph *g;
    int lev, len;
    int buf[8]; /* a uid per line */
    uint64_t *val; /* sums wrap: unsigned */
} gp;

static int gp_work(int uid) { return (int)(((unsigned)uid * 2654435761u) >> 20); }

static int gp_input(weft_pipeflow *pf, void *arg) {
    gp *p = arg;
    if (p->len == 0 && p->lev == p->g->levels) {
        weft_pipeflow_stop(pf);
        return 0;
    }
    int uid = p->lev * p->g->len + p->len;
    p->buf[weft_pipeflow_line(pf)] = uid;
    p->val[uid] = gp_work(uid);
    if (p->len == p->g->len - 1) {
        p->lev++;
        p->len = 0;
    } else {
        p->len++;
    }
    return 0;
}
static int gp_filter(weft_pipeflow *pf, void *arg) {
    gp *p = arg;
    int uid = p->buf[weft_pipeflow_line(pf)];
    p->val[uid] = gp_work(uid) + (int)weft_pipeflow_stage(pf);
    return 0;
}
static int gp_final(weft_pipeflow *pf, void *arg) {
    gp *p = arg;
    int uid = p->buf[weft_pipeflow_line(pf)], lev = uid / p->g->len;
    uint64_t v = (uint64_t)gp_work(uid);
    lg_node *n = &p->g->nodes[uid];
    for (int k = 0; lev > 0 && k < n->nin; k++) v += p->val[(lev - 1) * p->g->len + n->in[k]];
    p->val[uid] = v;
    return 0;
}

TEST(taskflow_graph_pipeline_over_level_graphs_gives_each_node_the_serial_value_for_1_to_8_stages) {
    int maxs = big() ? 451 : 46;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (int sz = 1; sz <= maxs; sz += 15) {
            lgraph g = {0};
            int *edges, *nedges;
            lg_build(&g, sz, sz, 3 + (uint64_t)sz, &edges, &nedges);
            size_t nn = (size_t)sz * (size_t)sz;
            uint64_t *want = malloc(nn * sizeof *want);
            for (int l = 0; l < sz; l++)
                for (int i = 0; i < sz; i++) {
                    int uid = l * sz + i;
                    uint64_t v = (uint64_t)gp_work(uid);
                    lg_node *n = &g.nodes[uid];
                    for (int k = 0; l > 0 && k < n->nin; k++) v += want[(l - 1) * sz + n->in[k]];
                    want[uid] = v;
                }
            for (int ns = 1; ns <= 8; ns++) {
                gp p = {&g, 0, 0, {0}, calloc(nn, sizeof(uint64_t))};
                weft_stage st[8];
                for (int k = 0; k < ns; k++)
                    st[k] = (weft_stage){WEFT_STAGE_SERIAL, k == 0 ? gp_input : k + 1 == ns ? gp_final : gp_filter, &p, NULL};
                double t0 = now_s();
                weft_taskflow *tf = make_taskflow("graph_pipeline");
                weft_status err;
                weft_pipeline *pl = weft_pipeline_create(8, st, (size_t)ns, &err);
                ASSERT_NOT_NULL(pl);
                ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
                ASSERT_OK(weft_run_and_wait(ex, tf));
                double t = now_s() - t0;
                ASSERT_EQ(weft_pipeline_num_tokens(pl), (uint64_t)nn);
                ASSERT_OK(weft_taskflow_destroy(tf));
                ASSERT_OK(weft_pipeline_destroy(pl));
                if (ns > 1)
                    for (size_t x = 0; x < nn; x++) ASSERT_EQ(p.val[x], want[x]);
                free(p.val);
                if (ns == 8 && sz + 15 > maxs) report_time("graph_pipeline(8 stages)", kW[wi], nn, t);
            }
            for (size_t x = 0; x < nn; x++) free(g.nodes[x].in);
            free(g.nodes), free(edges), free(nedges), free(want);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- mnist: Taskflow's training graph (forward, a backward chain and an
 * update per layer, each iteration's updates before the next forward,
 * shuffles on min(workers, epochs) rotating copies of the data), with an
 * integer model whose result depends on every one of those orders -------- */

enum { MN_LAYERS = 3, MN_ITERS = 12, MN_ROWS = 24 };

typedef struct mnist {
    unsigned nstore;
    uint64_t (*mats)[MN_ROWS]; /* nstore copies of the data */
    uint64_t w[MN_LAYERS], act[MN_LAYERS + 1], delta[MN_LAYERS];
} mnist;

typedef struct mn_task {
    mnist *d;
    unsigned kind, i, e, j; /* 0 forward, 1 backward, 2 update, 3 shuffle */
} mn_task;

static void mn_shuffle(uint64_t *rows, unsigned e) {
    uint64_t s = 1000 + e;
    for (int i = MN_ROWS - 1; i > 0; i--) {
        int j = (int)(test_rand(&s) % (uint64_t)(i + 1));
        uint64_t t = rows[i];
        rows[i] = rows[j];
        rows[j] = t;
    }
}
static void mn_do(mnist *d, unsigned kind, unsigned i, unsigned e, unsigned j) {
    uint64_t *rows = d->mats[e % d->nstore];
    switch (kind) {
    case 0: /* forward: every layer's weight, the batch's rows */
        d->act[0] = rows[(2 * i) % MN_ROWS] ^ rows[(2 * i + 1) % MN_ROWS];
        for (unsigned l = 0; l < MN_LAYERS; l++) d->act[l + 1] = d->act[l] * 6364136223846793005ull + d->w[l];
        break;
    case 1: /* backward of layer j: the delta after it (or the output), its weight */
        d->delta[j] = (j + 1 == MN_LAYERS ? d->act[MN_LAYERS] : d->delta[j + 1]) * 3 + d->w[j] + d->act[j] + rows[i % MN_ROWS];
        break;
    case 2: d->w[j] += d->delta[j] >> 7; break;
    case 3: if (e) mn_shuffle(rows, e); break;
    }
}
static int mn_run(weft_ctx *ctx, void *arg) {
    mn_task *t = arg;
    mn_do(t->d, t->kind, t->i, t->e, t->j);
    return 0;
}

static void mn_init(mnist *d, unsigned nstore) {
    memset(d, 0, sizeof *d);
    d->nstore = nstore;
    d->mats = malloc(sizeof *d->mats * nstore);
    for (unsigned s = 0; s < nstore; s++)
        for (unsigned r = 0; r < MN_ROWS; r++) d->mats[s][r] = 0x9e3779b97f4a7c15ull * (r + 1);
    for (unsigned l = 0; l < MN_LAYERS; l++) d->w[l] = l + 1;
}

TEST(taskflow_mnist_training_graph_updates_the_model_exactly_as_the_serial_epochs) {
    unsigned maxe = big() ? 100 : 20;
    for (size_t wi = 0; wi < NW; wi++) {
        weft_executor *ex = make_executor(kW[wi]);
        for (unsigned epochs = 10; epochs <= maxe; epochs += 10) {
            unsigned nstore = kW[wi] < epochs ? kW[wi] : epochs;
            mnist serial, par;
            mn_init(&serial, nstore);
            mn_init(&par, nstore);
            for (unsigned e = 0; e < epochs; e++) {
                mn_do(&serial, 3, 0, e, 0);
                for (unsigned i = 0; i < MN_ITERS; i++) {
                    mn_do(&serial, 0, i, e, 0);
                    for (int j = MN_LAYERS - 1; j >= 0; j--) {
                        mn_do(&serial, 1, i, e, (unsigned)j);
                        mn_do(&serial, 2, i, e, (unsigned)j);
                    }
                }
            }
            size_t ntasks = (size_t)epochs * (MN_ITERS * (1 + 2 * MN_LAYERS) + 1), k = 0;
            mn_task *args = malloc(sizeof *args * ntasks);
            weft_task *fw = malloc(sizeof *fw * epochs * MN_ITERS), *bw = malloc(sizeof *bw * epochs * MN_ITERS * MN_LAYERS),
                      *up = malloc(sizeof *up * epochs * MN_ITERS * MN_LAYERS), *sh = malloc(sizeof *sh * epochs);
            size_t nf = 0, nb = 0, nu = 0;
            double t0 = now_s();
            weft_taskflow *tf = make_taskflow("mnist");
            for (unsigned e = 0; e < epochs; e++) {
                for (unsigned i = 0; i < MN_ITERS; i++) {
                    args[k] = (mn_task){&par, 0, i, e, 0};
                    weft_task f = fw[nf++] = must_emplace(tf, mn_run, &args[k++]);
                    if (i != 0 || e != 0)
                        for (unsigned j = 1; j <= MN_LAYERS; j++) ASSERT_OK(weft_precede(up[nu - j], f));
                    for (int j = MN_LAYERS - 1; j >= 0; j--) {
                        args[k] = (mn_task){&par, 1, i, e, (unsigned)j};
                        weft_task b = bw[nb++] = must_emplace(tf, mn_run, &args[k++]);
                        args[k] = (mn_task){&par, 2, i, e, (unsigned)j};
                        weft_task u = up[nu++] = must_emplace(tf, mn_run, &args[k++]);
                        ASSERT_OK(weft_precede(j + 1 == MN_LAYERS ? f : bw[nb - 2], b));
                        ASSERT_OK(weft_precede(b, u));
                    }
                }
                args[k] = (mn_task){&par, 3, 0, e, 0};
                weft_task s = sh[e] = must_emplace(tf, mn_run, &args[k++]);
                ASSERT_OK(weft_precede(s, fw[nf - MN_ITERS]));
                if (e >= nstore) {
                    unsigned pe = e - nstore;
                    ASSERT_OK(weft_precede(sh[pe], s));
                    ASSERT_OK(weft_precede(bw[(size_t)(pe + 1) * MN_ITERS * MN_LAYERS - 1], s));
                }
            }
            ASSERT_EQ(k, ntasks);
            weft_future *fut = NULL;
            ASSERT_OK(weft_run(ex, tf, &fut));
            ASSERT_OK(weft_future_wait(fut));
            weft_future_destroy(fut);
            ASSERT_OK(weft_taskflow_destroy(tf));
            double t = now_s() - t0;
            for (unsigned l = 0; l < MN_LAYERS; l++) ASSERT_EQ(par.w[l], serial.w[l]);
            for (unsigned s2 = 0; s2 < nstore; s2++) ASSERT_TRUE(memcmp(par.mats[s2], serial.mats[s2], sizeof par.mats[s2]) == 0);
            free(args), free(fw), free(bw), free(up), free(sh), free(serial.mats), free(par.mats);
            if (epochs + 10 > maxe) report_time("mnist(graph)", kW[wi], ntasks, t);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- the same programs on the default executor (ex NULL), as thread_pool.cpp's
 * global tf::Executor: asyncs from main, fresh taskflows, a task-group recursion */

TEST(taskflow_programs_on_the_default_executor_run_each_task_once_and_exit_cleanly) {
    atomic_size_t counter = 0;
    for (size_t i = 0; i < 5000; i++) ASSERT_OK(weft_silent_async(NULL, async_inc, &counter));
    ASSERT_OK(weft_executor_wait_all(weft_default_executor()));
    ASSERT_EQ(atomic_load(&counter), (size_t)5000);
    for (unsigned it = 0; it < 5; it++) {
        weft_taskflow *tf = make_taskflow("thread_pool");
        weft_task node[1000];
        for (size_t i = 0; i < 1000; i++) node[i] = weft_placeholder(tf);
        for (size_t i = 0; i < 1000; i++) ASSERT_OK(weft_task_set_work(node[i], tp_work, &counter));
        weft_future *f = NULL;
        ASSERT_OK(weft_run(NULL, tf, &f));
        ASSERT_OK(weft_future_wait(f));
        weft_future_destroy(f);
        ASSERT_OK(weft_taskflow_destroy(tf));
    }
    ASSERT_EQ(atomic_load(&counter), (size_t)10000);
    fib_arg a = {20, 0};
    weft_future *f = NULL;
    ASSERT_OK(weft_async(NULL, fib_tg, &a, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(a.r, fib_serial(20));
    sky_arg s = {0, 0, 3, 0};
    ASSERT_EQ(weft_run_root(NULL, skynet_one, &s), 0);
    ASSERT_EQ(s.result, (size_t)999 * 1000 / 2);
    /* left running: the default executor is destroyed at exit */
    for (size_t i = 0; i < 1000; i++) ASSERT_OK(weft_silent_async(NULL, async_inc, &counter));
}
