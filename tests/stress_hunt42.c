/* Randomised mixed workloads (session 42): a seeded generator of short
 * programs that nest every kind of work inside every other, from several
 * outside threads at once, on two executors, and check invariants:
 *
 *  - every unit of work that must run runs exactly once per expected run
 *    (one counter per unit), and one that may be cancelled at most once;
 *  - nothing of a cancelled run runs after its wait has returned (its counters
 *    are frozen then), and ran + weft_run_info.skipped covers its graph;
 *  - every wait returns (a watchdog), results are exact (sums, fib, sorts),
 *    serial pipeline stages see tokens in order, semaphores bound concurrency;
 *  - the executors' metrics (weft/observe.h: tasks, skipped) equal the work the
 *    program counted, exactly where only deterministic kinds ran, and within
 *    the spawns' and algorithm jobs' bounds where fork-join and algorithms ran;
 *  - the documented cross-executor errors (a dependency of another executor,
 *    a scheduling handle given to another executor, an isolated wait for a
 *    taskflow run from a worker);
 *  - an observer's begins and ends pair and nest per worker, and its ends equal
 *    the graph tasks run; a profile's spans + dropped equal the metrics' tasks;
 *  - shared work is dropped once, simple pipelines' items are exact, edits
 *    between re-runs are followed.
 *
 * Executors are made afresh every 25 programs: 1 to 4 workers, each ready-
 * queue policy, batch steals, small local queues, 16 fork-join frames, an
 * observer on some.  Replay one program: WEFT_TEST_SEED=<run seed>
 * WEFT_HUNT42_ONE=<program seed> (both in the failure message's run);
 * WEFT_HUNT42_TRACE=1 prints what it does; WEFT_HUNT42_BUDGET and
 * WEFT_HUNT42_DEPTH make programs bigger and deeper.
 *
 * Nesting only ever moves from executor 0 to executor 1 (a task of 1 never
 * waits for work of 0), so blocking waits across executors cannot form a
 * circle.  WEFT_TEST_SEED replays a run; WEFT_HUNT42_PROGS overrides the
 * program count. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#include <pthread.h>
#include <stdarg.h>

enum { MAXID = 1 << 14, MAXFREEZE = 512, MAXTHREADS = 4 };
static int MAXDEPTH = 2; /* WEFT_HUNT42_DEPTH: nesting of actions in tasks */

struct freeze { int *ids; int n; long sum; };

struct prog {
    weft_executor *ex[2];
    bool exact; /* no spawns, groups, typed tasks or algorithms: metrics exact */
    atomic_int next_id;
    atomic_int cnt[MAXID];
    int expect[MAXID]; /* runs expected (exact), or the most allowed (loose) */
    unsigned char loose[MAXID];
    atomic_long exp_tasks[2], exp_skipped[2], maybe_tasks[2], exp_failed[2];
    atomic_long exp_graph[2], maybe_graph[2]; /* graph task calls, for the observer */
    atomic_long exp_removed[2];               /* weft_sched_remove successes */
    atomic_int budget;
    pthread_mutex_t mu;
    void **allocs;
    size_t nallocs, capallocs;
    struct freeze fr[MAXFREEZE];
    int nfr;
    weft_taskflow *shared;       /* run by every thread, on both executors, and as a module body */
    weft_cancel_token *parent;   /* the parent of some cancel runs' tokens */
    struct unit *shared_u[2];
    atomic_long shared_runs;
    atomic_int then_calls, then_expected;
    atomic_int failed;
    char fail[512];
    char exdesc[2][128];
    bool observed[2];
    uint64_t run_seed; /* WEFT_TEST_SEED of the run */
    uint64_t seed;
};

static void failf(struct prog *p, const char *fmt, ...) {
    if (atomic_exchange(&p->failed, 1)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->fail, sizeof p->fail, fmt, ap);
    va_end(ap);
}
#define TEST_FAILP_(p, fmt, ...)                                                              \
    TEST_FAIL_(fmt " [WEFT_TEST_SEED=%llu; %s; %s]", ##__VA_ARGS__, (unsigned long long)(p)->run_seed, \
               (p)->exdesc[0], (p)->exdesc[1])
#define CHECK(p, c, fmt, ...) do { if (!(c)) failf((p), "line %d: " fmt, __LINE__, ##__VA_ARGS__); } while (0)

static void *palloc(struct prog *p, size_t n) {
    void *m = calloc(1, n);
    if (!m) abort();
    pthread_mutex_lock(&p->mu);
    if (p->nallocs == p->capallocs) {
        p->capallocs = p->capallocs ? 2 * p->capallocs : 256;
        p->allocs = realloc(p->allocs, p->capallocs * sizeof *p->allocs);
        if (!p->allocs) abort();
    }
    p->allocs[p->nallocs++] = m;
    pthread_mutex_unlock(&p->mu);
    return m;
}

static int trace_flag; /* set before any thread starts */
static int trace_on(void) { return trace_flag; }
#define TRACE(...) do { if (trace_on()) fprintf(stderr, __VA_ARGS__); } while (0)

static int rnd(uint64_t *s, int n) { return (int)(test_rand(s) % (uint64_t)n); }

static int exi(struct prog *p, weft_ctx *ctx) {
    if (!ctx) return -1;
    weft_executor *e = weft_ctx_executor(ctx);
    if (e == p->ex[0]) return 0;
    if (e == p->ex[1]) return 1;
    failf(p, "a context of an unknown executor");
    return -1;
}

/* ---- units: the counted work ----------------------------------------------- */

enum { K_TASK, K_MAYBE, K_NONE }; /* how the metrics count a call of the unit */

struct unit {
    struct prog *p;
    int id;
    int depth;
    int kind;
    bool nest;          /* runs a nested action */
    uint64_t seed;      /* the nested action's */
    atomic_int *cs;     /* semaphore section: holders now */
    int csmax;
    weft_cancel_token *cancel; /* cancels this when it runs */
    int after;          /* a unit that must have run before this one (-1: none) */
    int fail;           /* returned (0: success) */
    atomic_int *drops;  /* shared work's state: drops counted here */
};

static void action(struct prog *p, weft_ctx *ctx, int depth, uint64_t seed, int emin);

static int new_id(struct prog *p) {
    int id = atomic_fetch_add(&p->next_id, 1);
    if (id >= MAXID) {
        failf(p, "out of unit ids");
        abort();
    }
    return id;
}

static struct unit *new_unit(struct prog *p, uint64_t *rng, int depth, int kind) {
    struct unit *u = palloc(p, sizeof *u);
    u->p = p;
    u->id = new_id(p);
    u->depth = depth;
    u->kind = kind;
    u->after = -1;
    u->seed = test_rand(rng);
    if (depth < MAXDEPTH && rnd(rng, 5) == 0 && atomic_fetch_sub(&p->budget, 1) > 0) u->nest = true;
    return u;
}

/* A graph task's call: the observer reports it (module tasks are not calls). */
static void count_graph(struct prog *p, weft_ctx *ctx) {
    int e = exi(p, ctx);
    if (e >= 0) atomic_fetch_add(&p->exp_graph[e], 1);
}

static void count_task(struct prog *p, weft_ctx *ctx, int kind) {
    int e = exi(p, ctx);
    if (e < 0) return;
    if (kind == K_TASK) atomic_fetch_add(&p->exp_tasks[e], 1);
    else if (kind == K_MAYBE) atomic_fetch_add(&p->maybe_tasks[e], 1);
}

static void spin(unsigned n) {
    for (volatile unsigned i = 0; i < n; i++) {
    }
}

static int unit_fn(weft_ctx *ctx, void *arg) {
    struct unit *u = arg;
    struct prog *p = u->p;
    atomic_fetch_add(&p->cnt[u->id], 1);
    count_task(p, ctx, u->kind);
    if (u->kind == K_TASK && ctx && !weft_task_is_null(weft_ctx_task(ctx))) count_graph(p, ctx);
    if (u->after >= 0) CHECK(p, atomic_load(&p->cnt[u->after]) >= 1, "unit %d ran before its dependency %d", u->id, u->after);
    if (u->cs) {
        int c = atomic_fetch_add(u->cs, 1) + 1;
        CHECK(p, c <= u->csmax, "%d holders of a semaphore of %d", c, u->csmax);
        spin(200);
        atomic_fetch_sub(u->cs, 1);
    }
    if (u->cancel) (void)weft_cancel_token_cancel(u->cancel);
    if (u->nest) action(p, ctx, u->depth + 1, u->seed, exi(p, ctx) < 0 ? 0 : exi(p, ctx));
    return u->fail;
}

static void expect(struct prog *p, struct unit *u, int times) { p->expect[u->id] += times; }

static void expect_loose(struct prog *p, struct unit *u, int most) {
    p->expect[u->id] += most;
    p->loose[u->id] = 1;
}

static long sum_ids(struct prog *p, const int *ids, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += atomic_load(&p->cnt[ids[i]]);
    return s;
}

/* Records the units' counts at a wait's return: none may change afterwards. */
static void freeze(struct prog *p, const int *ids, int n) {
    int *copy = palloc(p, (size_t)n * sizeof *copy);
    memcpy(copy, ids, (size_t)n * sizeof *copy);
    pthread_mutex_lock(&p->mu);
    if (p->nfr < MAXFREEZE) p->fr[p->nfr++] = (struct freeze){ copy, n, sum_ids(p, ids, n) };
    pthread_mutex_unlock(&p->mu);
}

/* Waits for f (cooperatively inside a task) and returns its status. */
static weft_status wait_f(struct prog *p, weft_future *f) {
    weft_status st = weft_future_wait_for(f, 0); /* a poll first */
    if (st == WEFT_ETIMEDOUT) st = weft_future_wait_for(f, 1000);
    if (st == WEFT_ETIMEDOUT) st = weft_future_wait(f);
    CHECK(p, weft_future_ready(f), "a wait returned before its future was ready");
    return st;
}

/* ---- taskflows --------------------------------------------------------------- */

struct loop { struct prog *p; int id_init, id_cond, k, i; };

static int loop_init(weft_ctx *ctx, void *arg) {
    struct loop *l = arg;
    atomic_fetch_add(&l->p->cnt[l->id_init], 1);
    count_task(l->p, ctx, K_TASK);
    count_graph(l->p, ctx);
    l->i = 0;
    return 0;
}

static int loop_cond(weft_ctx *ctx, void *arg) {
    struct loop *l = arg;
    atomic_fetch_add(&l->p->cnt[l->id_cond], 1);
    count_task(l->p, ctx, K_TASK);
    count_graph(l->p, ctx);
    return ++l->i < l->k ? 0 : 1;
}

static void work_drop(void *state) {
    struct unit *u = state;
    atomic_fetch_add(u->drops, 1);
}

struct mcond { struct prog *p; int id, k; unsigned pick; };

static int mcond_fn(weft_ctx *ctx, void *arg, weft_branches *out) {
    struct mcond *m = arg;
    atomic_fetch_add(&m->p->cnt[m->id], 1);
    count_task(m->p, ctx, K_TASK);
    count_graph(m->p, ctx);
    for (int i = 0; i < m->k; i++)
        if ((m->pick >> i) & 1) {
            weft_status st = weft_branches_add(out, (unsigned)i);
            if (st != WEFT_OK) return 1;
            if (i & 1) (void)weft_branches_add(out, (unsigned)i); /* twice is once */
        }
    return 0;
}

struct sub { struct prog *p; int id; int m; struct unit **kids; bool detach, join; };

static int sub_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    struct sub *s = arg;
    atomic_fetch_add(&s->p->cnt[s->id], 1);
    count_task(s->p, ctx, K_TASK);
    count_graph(s->p, ctx);
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < s->m; i++) {
        weft_task t = weft_emplace(g, unit_fn, s->kids[i]);
        if (weft_task_is_null(t)) return 1;
        if (i % 2 && !weft_task_is_null(prev)) (void)weft_precede(prev, t);
        prev = t;
    }
    if (s->detach) return weft_subflow_detach(sf) == WEFT_OK ? 0 : 2;
    if (s->join) return weft_subflow_join(sf) == WEFT_OK ? 0 : 3;
    return 0;
}

struct pipe { struct prog *p; int id[3]; int T, made; long last; bool work; };

static int stage_child(weft_ctx *ctx, void *arg) {
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

static void stage_index(size_t i, void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

static int stage0(weft_pipeflow *pf, void *arg) {
    struct pipe *q = arg;
    /* the stopping call is a stage call too: the metrics count it */
    count_task(q->p, weft_current_ctx(), K_TASK);
    if (q->made == q->T) {
        q->made = 0;
        return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 1;
    }
    q->made++;
    atomic_fetch_add(&q->p->cnt[q->id[0]], 1);
    return 0;
}

static int stage1(weft_pipeflow *pf, void *arg) {
    struct pipe *q = arg;
    atomic_fetch_add(&q->p->cnt[q->id[1]], 1);
    weft_ctx *cx = weft_current_ctx();
    count_task(q->p, cx, K_TASK);
    if (q->work && cx) {
        /* a stage may spawn and sync through its context, and call an algorithm */
        atomic_int kids = 0, idx = 0;
        int e = exi(q->p, cx);
        CHECK(q->p, weft_spawn(cx, stage_child, &kids) == WEFT_OK, "stage spawn");
        CHECK(q->p, weft_spawn(cx, stage_child, &kids) == WEFT_OK, "stage spawn");
        CHECK(q->p, weft_sync(cx) == 0 && weft_sync(cx) == 0, "stage sync");
        CHECK(q->p, atomic_load(&kids) == 2, "stage children ran %d times", atomic_load(&kids));
        size_t n = 64 + (size_t)weft_pipeflow_token(pf) % 200;
        weft_status st = weft_parallel_for(weft_ctx_executor(cx), 0, n, 1, stage_index, &idx, NULL);
        CHECK(q->p, st == WEFT_OK && atomic_load(&idx) == (int)n, "parallel_for in a stage: %s, %d of %zu",
              weft_errname(st), atomic_load(&idx), n);
        if (e >= 0) atomic_fetch_add(&q->p->maybe_tasks[e], 2 + (long)weft_executor_workers(q->p->ex[e]));
    }
    return 0;
}

/* A simple pipeline's stage: each item gains one per stage per run. */
static int item_stage(void *item, size_t index, void *arg) {
    atomic_fetch_add((atomic_int *)item, 1);
    return 0;
}

static int stage2(weft_pipeflow *pf, void *arg) {
    struct pipe *q = arg;
    atomic_fetch_add(&q->p->cnt[q->id[2]], 1);
    count_task(q->p, weft_current_ctx(), K_TASK);
    long t = (long)weft_pipeflow_token(pf);
    CHECK(q->p, q->last < 0 || t == q->last + 1, "serial stage saw token %ld after %ld", t, q->last);
    q->last = t;
    return 0;
}

struct efor { struct prog *p; size_t n; int id[4]; weft_for_desc d; };

static void efor_body(size_t lo, size_t hi, void *arg) {
    struct efor *ef = arg;
    for (size_t i = lo; i < hi; i++) atomic_fetch_add(&ef->p->cnt[ef->id[i % 4]], 1);
}

struct until { int left; };
static bool until_pred(void *arg) { return ((struct until *)arg)->left-- <= 0; }

/* A built taskflow: per iteration, unit u runs per[u] times. */
struct built {
    weft_taskflow *tf, *body;
    weft_semaphore *sem;
    weft_pipeline *pipe;
    int ids[64];
    int per[64];
    int n;
    int ntasks; /* graph tasks counted per iteration (metrics) */
    int algo_jobs; /* emplaced algorithms: their jobs on other workers are counted too */
    int graph_extra; /* graph tasks that are not the test's functions (pipelines, emplaced algorithms) */
    atomic_int *items; /* a simple pipeline's batch */
    size_t nitems;
    int item_stages;
    bool simple;
    atomic_int *drops; /* shared work's drops: 1 once the taskflow is gone */
    int runs; /* completed runs (items check) */
    weft_task st[16]; /* the plain tasks, which edits between runs change */
    int st_idx[16];   /* their entries in ids/per; -1: erased */
    int nst;
};

static void add_id(struct built *b, int id, int per) {
    if (b->n < 64) {
        b->ids[b->n] = id;
        b->per[b->n] = per;
        b->n++;
    }
}

static void build_tf(struct prog *p, uint64_t *rng, int depth, struct built *b, bool plain_only) {
    memset(b, 0, sizeof *b);
    b->tf = weft_taskflow_create("h42", NULL);
    if (!b->tf) abort();
    int n = 1 + rnd(rng, 5);
    weft_task ts[8];
    for (int i = 0; i < n; i++) {
        struct unit *u = new_unit(p, rng, depth, K_TASK);
        ts[i] = weft_emplace(b->tf, unit_fn, u);
        b->st[b->nst] = ts[i];
        b->st_idx[b->nst++] = b->n;
        add_id(b, u->id, 1);
        if (rnd(rng, 4) == 0) (void)weft_task_set_priority(ts[i], (weft_priority)(rnd(rng, 4) - 1));
        for (int j = 0; j < i; j++)
            if (rnd(rng, 3) == 0) (void)weft_precede(ts[j], ts[i]);
    }
    TRACE("  taskflow of %d tasks%s\n", n, plain_only ? " (plain)" : "");
    if (plain_only) return;
    if (rnd(rng, 3) == 0) { /* a condition loop */
        TRACE("  + loop\n");
        struct loop *l = palloc(p, sizeof *l);
        l->p = p;
        l->k = 1 + rnd(rng, 4);
        l->id_init = new_id(p);
        l->id_cond = new_id(p);
        struct unit *body = new_unit(p, rng, depth, K_TASK);
        weft_task ti = weft_emplace(b->tf, loop_init, l);
        weft_task tb = weft_emplace(b->tf, unit_fn, body);
        weft_task tc = weft_emplace_condition(b->tf, loop_cond, l);
        (void)weft_precede(ti, tb);
        (void)weft_precede(tb, tc);
        (void)weft_precede(tc, tb);
        (void)weft_precede(ts[rnd(rng, n)], ti);
        add_id(b, l->id_init, 1);
        add_id(b, body->id, l->k);
        add_id(b, l->id_cond, l->k);
    }
    if (rnd(rng, 4) == 0) { /* a multi-condition picking some of its successors */
        TRACE("  + multi-condition\n");
        struct mcond *mc = palloc(p, sizeof *mc);
        mc->p = p;
        mc->id = new_id(p);
        mc->k = 1 + rnd(rng, 4);
        mc->pick = (unsigned)rnd(rng, 1 << mc->k);
        weft_task c = weft_emplace_multi_condition(b->tf, mcond_fn, mc);
        add_id(b, mc->id, 1);
        for (int i = 0; i < mc->k; i++) {
            struct unit *u = new_unit(p, rng, depth, K_TASK);
            (void)weft_precede(c, weft_emplace(b->tf, unit_fn, u));
            add_id(b, u->id, (mc->pick >> i) & 1);
        }
        if (rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, n)], c);
    }
    if (rnd(rng, 3) == 0) { /* a subflow */
        TRACE("  + subflow\n");
        struct sub *s = palloc(p, sizeof *s);
        s->p = p;
        s->id = new_id(p);
        s->m = 1 + rnd(rng, 4);
        s->kids = palloc(p, (size_t)s->m * sizeof *s->kids);
        int how = rnd(rng, 3);
        s->detach = how == 1;
        s->join = how == 2;
        add_id(b, s->id, 1);
        for (int i = 0; i < s->m; i++) {
            s->kids[i] = new_unit(p, rng, depth, K_TASK);
            add_id(b, s->kids[i]->id, 1);
        }
        weft_task t = weft_emplace_subflow(b->tf, sub_fn, s);
        if (rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, n)], t);
    }
    if (rnd(rng, 4) == 0) { /* shared work in two tasks, and a composition's copy */
        TRACE("  + shared work, composition\n");
        struct unit *u = new_unit(p, rng, depth, K_TASK);
        b->drops = palloc(p, sizeof *b->drops);
        weft_work *w = weft_work_create(unit_fn, u, work_drop, NULL);
        u->drops = b->drops;
        CHECK(p, w != NULL, "work_create");
        weft_task w1 = weft_emplace_work(b->tf, w), w2 = weft_emplace_work(b->tf, w);
        CHECK(p, !weft_task_is_null(w1) && !weft_task_is_null(w2), "emplace_work");
        if (rnd(rng, 2)) (void)weft_precede(w1, w2);
        int uses = 2;
        weft_composition *c = weft_composition_create("h42comp", NULL);
        weft_taskflow *cg = weft_composition_graph(c);
        struct unit *cu = new_unit(p, rng, depth, K_TASK);
        weft_task a = weft_emplace(cg, unit_fn, cu), wc = weft_emplace_work(cg, w);
        (void)weft_precede(a, wc);
        CHECK(p, weft_composition_set_entry(c, "in", a) == WEFT_OK && weft_composition_set_exit(c, "out", wc) == WEFT_OK,
              "composition entry/exit");
        int copies = 1 + rnd(rng, 2);
        for (int i = 0; i < copies; i++) {
            weft_instance inst;
            CHECK(p, weft_composition_instantiate(c, b->tf, "copy", &inst) == WEFT_OK, "instantiate: %s",
                  weft_last_error_message());
            (void)weft_precede(ts[rnd(rng, n)], weft_instance_entry(&inst, "in"));
            uses++;
        }
        add_id(b, cu->id, copies);
        add_id(b, u->id, uses);
        CHECK(p, weft_composition_destroy(c) == WEFT_OK, "composition destroy");
        weft_work_release(w); /* the tasks hold it now */
        CHECK(p, atomic_load(b->drops) == 0, "work dropped while tasks hold it");
    }
    if (rnd(rng, 4) == 0) { /* a module */
        TRACE("  + module\n");
        b->body = weft_taskflow_create("h42body", NULL);
        if (!b->body) abort();
        struct unit *u1 = new_unit(p, rng, depth, K_TASK), *u2 = new_unit(p, rng, depth, K_TASK);
        (void)weft_precede(weft_emplace(b->body, unit_fn, u1), weft_emplace(b->body, unit_fn, u2));
        add_id(b, u1->id, 1);
        add_id(b, u2->id, 1);
        weft_task m = weft_emplace_module(b->tf, b->body);
        CHECK(p, !weft_task_is_null(m), "module: %s", weft_last_error_message());
        if (rnd(rng, 2)) (void)weft_precede(m, ts[n - 1]);
    }
    if (rnd(rng, 4) == 0) { /* a semaphore over a few tasks */
        TRACE("  + semaphore\n");
        int max = 1 + rnd(rng, 2);
        b->sem = weft_semaphore_create((size_t)max, NULL);
        atomic_int *cs = palloc(p, sizeof *cs);
        int k = 2 + rnd(rng, 3);
        for (int i = 0; i < k; i++) {
            struct unit *u = new_unit(p, rng, MAXDEPTH, K_TASK);
            u->cs = cs;
            u->csmax = max;
            weft_task t = weft_emplace(b->tf, unit_fn, u);
            (void)weft_task_acquire(t, b->sem);
            (void)weft_task_release(t, b->sem);
            add_id(b, u->id, 1);
        }
    }
    if (!p->exact && rnd(rng, 4) == 0) { /* an emplaced parallel_for: every index once per run */
        TRACE("  + emplaced for\n");
        struct efor *ef = palloc(p, sizeof *ef);
        ef->p = p;
        ef->n = 1 + (size_t)rnd(rng, 2000);
        for (int i = 0; i < 4; i++) ef->id[i] = new_id(p); /* index i counts on id[i % 4] */
        ef->d = (weft_for_desc){ .first = 0, .last = ef->n, .step = 1, .body = efor_body, .arg = ef,
                                 .config = { .partitioner = (weft_partitioner)rnd(rng, 4) } };
        weft_task t = weft_emplace_for(b->tf, &ef->d);
        CHECK(p, !weft_task_is_null(t), "emplace_for");
        for (int i = 0; i < 4; i++) add_id(b, ef->id[i], (int)((ef->n + 3 - (size_t)i) / 4));
        b->ntasks++; /* its graph task */
        b->graph_extra++;
        b->algo_jobs++;
        if (rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, n)], t);
    }
    if (!b->pipe && rnd(rng, 6) == 0) { /* a simple pipeline: items mutated in place */
        TRACE("  + simple pipeline\n");
        size_t count = (size_t)rnd(rng, 40);
        int nst = 1 + rnd(rng, 3);
        b->items = palloc(p, (count + 1) * sizeof(atomic_int));
        b->nitems = count;
        weft_item_stage ist[3];
        for (int i = 0; i < nst; i++)
            ist[i] = (weft_item_stage){ (weft_stage_kind)rnd(rng, 2), item_stage, NULL, "item" };
        b->pipe = weft_simple_pipeline_create((size_t)(1 + rnd(rng, 4)), b->items, count, sizeof(atomic_int), ist,
                                              (size_t)nst, NULL);
        CHECK(p, b->pipe != NULL, "simple pipeline: %s", weft_last_error_message());
        if (!b->pipe) abort();
        b->item_stages = nst;
        weft_task t = weft_pipeline_emplace(b->tf, b->pipe);
        CHECK(p, !weft_task_is_null(t), "simple pipeline emplace");
        /* metrics: its task, and one call per item and stage (not the
         * pipeline's own first stage, which makes the tokens) */
        b->ntasks += 1 + (int)count * nst;
        b->graph_extra++;
        b->simple = true;
    }
    if (!b->pipe && rnd(rng, 5) == 0) { /* a pipeline */
        TRACE("  + pipeline\n");
        struct pipe *q = palloc(p, sizeof *q);
        q->p = p;
        q->T = 1 + rnd(rng, 12);
        q->last = -1;
        for (int i = 0; i < 3; i++) q->id[i] = new_id(p);
        weft_stage st[3] = {
            { WEFT_STAGE_SERIAL, stage0, q, "make" },
            { WEFT_STAGE_PARALLEL, stage1, q, "work" },
            { WEFT_STAGE_SERIAL, stage2, q, "order" },
        };
        q->work = !p->exact && rnd(rng, 2);
        b->pipe = weft_pipeline_create((size_t)(1 + rnd(rng, 3)), st, 3, NULL);
        if (!b->pipe) abort();
        (void)weft_pipeline_set_scheduling(b->pipe, (weft_pipeline_scheduling)rnd(rng, 3));
        weft_task t = weft_pipeline_emplace(b->tf, b->pipe);
        CHECK(p, !weft_task_is_null(t), "pipeline emplace");
        for (int i = 0; i < 3; i++) add_id(b, q->id[i], q->T);
        /* the pipeline's own task: counted as a graph task (one per run) */
        b->ntasks++;
        b->graph_extra++;
    }
}

/* Edits between two runs: erase a plain task, give one new work, add one,
 * drop edges.  The next runs must follow the graph as it is now. */
static void edit_tf(struct prog *p, uint64_t *rng, int depth, struct built *b) {
    int k = rnd(rng, b->nst);
    int what = rnd(rng, 5);
    TRACE("  edit %d on plain task %d\n", what, k);
    if (b->st_idx[k] < 0) what = 2;
    switch (what) {
    case 0:
        CHECK(p, weft_task_erase(b->st[k]) == WEFT_OK, "erase: %s", weft_last_error_message());
        b->per[b->st_idx[k]] = 0;
        b->st_idx[k] = -1;
        break;
    case 1: {
        struct unit *u = new_unit(p, rng, depth, K_TASK);
        if (b->n >= 64) break;
        CHECK(p, weft_task_set_work(b->st[k], unit_fn, u) == WEFT_OK, "set_work: %s", weft_last_error_message());
        b->per[b->st_idx[k]] = 0;
        b->st_idx[k] = b->n;
        add_id(b, u->id, 1);
        break;
    }
    case 2: {
        if (b->nst >= 16 || b->n >= 64) break;
        struct unit *u = new_unit(p, rng, depth, K_TASK);
        weft_task t = weft_emplace(b->tf, unit_fn, u);
        CHECK(p, !weft_task_is_null(t), "emplace after runs: %s", weft_last_error_message());
        for (int j = 0; j < b->nst; j++)
            if (b->st_idx[j] >= 0 && rnd(rng, 3) == 0) CHECK(p, weft_precede(b->st[j], t) == WEFT_OK, "precede after runs");
        b->st[b->nst] = t;
        b->st_idx[b->nst++] = b->n;
        add_id(b, u->id, 1);
        break;
    }
    case 3:
        CHECK(p, weft_task_remove_successors(b->st[k]) == WEFT_OK, "remove_successors");
        break;
    default:
        CHECK(p, weft_task_remove_dependents(b->st[k]) == WEFT_OK, "remove_dependents");
        break;
    }
    weft_task cyc;
    CHECK(p, weft_taskflow_validate(b->tf, &cyc) == WEFT_OK, "an edited taskflow fails validation: %s", weft_last_error_message());
}

static void free_built(struct prog *p, struct built *b) {
    for (size_t i = 0; b->simple && i < b->nitems; i++)
        CHECK(p, atomic_load(&b->items[i]) == b->item_stages * b->runs, "simple pipeline item %zu: %d, want %d x %d", i,
              atomic_load(&b->items[i]), b->item_stages, b->runs);
    weft_status st = weft_taskflow_destroy(b->tf);
    CHECK(p, st == WEFT_OK, "taskflow destroy after its runs: %s", weft_errname(st));
    if (b->drops) CHECK(p, atomic_load(b->drops) == 1, "shared work dropped %d times", atomic_load(b->drops));
    if (b->body) CHECK(p, weft_taskflow_destroy(b->body) == WEFT_OK, "body destroy");
    if (b->sem) {
        CHECK(p, weft_semaphore_value(b->sem) == weft_semaphore_max(b->sem), "semaphore not whole after its runs");
        CHECK(p, weft_semaphore_destroy(b->sem) == WEFT_OK, "semaphore destroy");
    }
    if (b->pipe) CHECK(p, weft_pipeline_destroy(b->pipe) == WEFT_OK, "pipeline destroy");
}

static void expect_built(struct prog *p, struct built *b, int iters) {
    b->runs += iters;
    for (int i = 0; i < b->n; i++) p->expect[b->ids[i]] += b->per[i] * iters;
}

static void act_taskflow(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    struct built b;
    build_tf(p, rng, depth, &b, false);
    int rounds = 1 + (rnd(rng, 3) == 0) + (rnd(rng, 4) == 0);
    for (int r = 0; r < rounds; r++) {
        if (r > 0 && rnd(rng, 2)) edit_tf(p, rng, depth, &b);
        int how = rnd(rng, 6);
        TRACE("  run how %d\n", how);
        weft_future *f = NULL, *g = NULL;
        weft_status st;
        int iters = 1;
        switch (how) {
        case 0:
            st = weft_run(p->ex[e], b.tf, &f);
            break;
        case 1:
            iters = rnd(rng, 4);
            st = weft_run_n(p->ex[e], b.tf, (uint64_t)iters, &f);
            break;
        case 2: {
            struct until *u = palloc(p, sizeof *u);
            u->left = iters = rnd(rng, 3);
            st = weft_run_until(p->ex[e], b.tf, until_pred, u, &f);
            break;
        }
        case 3:
            st = weft_run_with_priority(p->ex[e], b.tf, (weft_priority)(rnd(rng, 4) - 1), &f);
            break;
        case 4:
            expect_built(p, &b, 1);
            atomic_fetch_add(&p->exp_tasks[e], b.ntasks);
            atomic_fetch_add(&p->exp_graph[e], b.graph_extra);
            atomic_fetch_add(&p->maybe_tasks[e], (long)b.algo_jobs * (long)weft_executor_workers(p->ex[e]));
            st = weft_run_and_wait(p->ex[e], b.tf);
            CHECK(p, st == WEFT_OK, "run_and_wait: %s %s", weft_errname(st), weft_last_error_message());
            continue;
        default: /* the same taskflow on both executors at once (when allowed) */
            st = weft_run(p->ex[e], b.tf, &f);
            if (st == WEFT_OK && e == 0) {
                weft_status st2 = weft_run(p->ex[1], b.tf, &g);
                CHECK(p, st2 == WEFT_OK, "second run: %s", weft_errname(st2));
                if (st2 == WEFT_OK) expect_built(p, &b, 1);
                if (st2 == WEFT_OK) atomic_fetch_add(&p->exp_tasks[1], b.ntasks);
                if (st2 == WEFT_OK) atomic_fetch_add(&p->exp_graph[1], b.graph_extra);
            }
            break;
        }
        CHECK(p, st == WEFT_OK, "submit (how %d): %s %s", how, weft_errname(st), weft_last_error_message());
        if (st != WEFT_OK) continue;
        expect_built(p, &b, iters);
        atomic_fetch_add(&p->exp_tasks[e], (long)b.ntasks * iters);
        atomic_fetch_add(&p->exp_graph[e], (long)b.graph_extra * iters);
        atomic_fetch_add(&p->maybe_tasks[e], (long)b.algo_jobs * iters * (long)weft_executor_workers(p->ex[e]));
        if (g) atomic_fetch_add(&p->maybe_tasks[1], (long)b.algo_jobs * (long)weft_executor_workers(p->ex[1]));
        if (ctx && exi(p, ctx) == e && rnd(rng, 4) == 0) {
            /* documented: from a worker of ex, an isolated wait takes only an async task's future */
            weft_status iw = weft_future_wait_isolated(f);
            CHECK(p, iw == WEFT_EINVAL, "isolated wait for a taskflow run from a worker: %s", weft_errname(iw));
        }
        st = wait_f(p, f);
        CHECK(p, st == WEFT_OK, "taskflow run (how %d) ended %s", how, weft_errname(st));
        weft_run_info info;
        (void)weft_future_info(f, &info);
        CHECK(p, info.skipped == 0, "a run that succeeded skipped %llu", (unsigned long long)info.skipped);
        CHECK(p, how == 3 || how == 0 || how == 5 || info.iterations == (uint64_t)iters,
              "run (how %d) reports %llu iterations, want %d", how, (unsigned long long)info.iterations, iters);
        weft_future_destroy(f);
        if (g) {
            CHECK(p, wait_f(p, g) == WEFT_OK, "second executor's run failed");
            weft_future_destroy(g);
        }
    }
    free_built(p, &b);
}

/* A run cancelled at a random point: nothing runs after its wait, and every
 * task of the graph either ran or was counted skipped. */
static void act_cancel(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    weft_taskflow *tf = weft_taskflow_create("h42cancel", NULL), *body = NULL;
    if (!tf) abort();
    /* Sometimes a child of the program's parent token, which another cancel
     * run's task may cancel (only cancel runs hang off it: all loose). */
    bool child = rnd(rng, 3) == 0;
    /* The parent's state is read before the child is made (cancel.h: "a child
     * of an already cancelled parent is created cancelled").  Read after, it
     * raced a cancel of the parent on another thread: its flag set, the child
     * made just before and not yet reached by that cancel's walk over the
     * children (CI, seed 0xe1686af58e94973b). */
    bool parent_was_cancelled = child && weft_cancel_token_is_cancelled(p->parent);
    weft_cancel_token *tok = weft_cancel_token_create(child ? p->parent : NULL, NULL);
    if (!tok) abort();
    if (parent_was_cancelled)
        CHECK(p, weft_cancel_token_is_cancelled(tok), "a child of a cancelled parent was created uncancelled");
    int fids[32], nf = 0;
    int n = 2 + rnd(rng, 8);
    struct unit *us[16];
    weft_task ts[16];
    for (int i = 0; i < n; i++) {
        us[i] = new_unit(p, rng, MAXDEPTH, K_TASK);
        expect_loose(p, us[i], 1);
        ts[i] = weft_emplace(tf, unit_fn, us[i]);
        fids[nf++] = us[i]->id;
        if (i && rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, i)], ts[i]);
    }
    struct sub *s = NULL;
    if (rnd(rng, 2)) {
        s = palloc(p, sizeof *s);
        s->p = p;
        s->id = new_id(p);
        p->expect[s->id] = 1;
        p->loose[s->id] = 1;
        fids[nf++] = s->id;
        s->m = 1 + rnd(rng, 3);
        s->kids = palloc(p, (size_t)s->m * sizeof *s->kids);
        s->detach = rnd(rng, 3) == 0;
        s->join = !s->detach && rnd(rng, 2);
        for (int i = 0; i < s->m; i++) {
            s->kids[i] = new_unit(p, rng, MAXDEPTH, K_TASK);
            expect_loose(p, s->kids[i], 1);
            fids[nf++] = s->kids[i]->id;
        }
        weft_task t = weft_emplace_subflow(tf, sub_fn, s);
        if (rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, n)], t);
    }
    struct unit *m1 = NULL, *m2 = NULL;
    if (rnd(rng, 2)) {
        body = weft_taskflow_create("h42cbody", NULL);
        m1 = new_unit(p, rng, MAXDEPTH, K_TASK);
        m2 = new_unit(p, rng, MAXDEPTH, K_TASK);
        expect_loose(p, m1, 1);
        expect_loose(p, m2, 1);
        fids[nf++] = m1->id;
        fids[nf++] = m2->id;
        (void)weft_precede(weft_emplace(body, unit_fn, m1), weft_emplace(body, unit_fn, m2));
        weft_task t = weft_emplace_module(tf, body);
        if (rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, n)], t);
    }
    weft_semaphore *sem = NULL;
    int nsem = 0;
    struct unit *su[4];
    if (rnd(rng, 3) == 0) { /* a semaphore section: parked tasks of a cancelled run are skipped */
        sem = weft_semaphore_create(1, NULL);
        atomic_int *cs = palloc(p, sizeof *cs);
        nsem = 2 + rnd(rng, 3);
        for (int i = 0; i < nsem; i++) {
            su[i] = new_unit(p, rng, MAXDEPTH, K_TASK);
            su[i]->cs = cs;
            su[i]->csmax = 1;
            expect_loose(p, su[i], 1);
            fids[nf++] = su[i]->id;
            weft_task t = weft_emplace(tf, unit_fn, su[i]);
            (void)weft_task_acquire(t, sem);
            (void)weft_task_release(t, sem);
        }
    }
    struct pipe *q = NULL;
    weft_pipeline *pl = NULL;
    if (rnd(rng, 4) == 0) { /* a pipeline stops with its run */
        q = palloc(p, sizeof *q);
        q->p = p;
        q->T = 1 + rnd(rng, 20);
        q->last = -1;
        for (int i = 0; i < 3; i++) {
            q->id[i] = new_id(p);
            p->expect[q->id[i]] = q->T;
            p->loose[q->id[i]] = 1;
            fids[nf++] = q->id[i];
        }
        weft_stage st3[3] = {
            { WEFT_STAGE_SERIAL, stage0, q, "make" },
            { WEFT_STAGE_PARALLEL, stage1, q, "work" },
            { WEFT_STAGE_SERIAL, stage2, q, "order" },
        };
        pl = weft_pipeline_create((size_t)(1 + rnd(rng, 3)), st3, 3, NULL);
        weft_task t = weft_pipeline_emplace(tf, pl);
        if (rnd(rng, 2)) (void)weft_precede(ts[rnd(rng, n)], t);
    }
    if (q) atomic_fetch_add(&p->maybe_tasks[e], 1); /* its task: run, or skipped before it started */
    if (q) atomic_fetch_add(&p->maybe_graph[e], 1);
    int mode = rnd(rng, 6);
    int iters = rnd(rng, 3) == 0 && !q ? 2 + rnd(rng, 3) : 1;
    if (iters > 1) { /* each unit may run once per iteration */
        for (int i = 0; i < nf; i++) p->expect[fids[i]] += iters - 1;
    }
    if (mode == 0) us[rnd(rng, n)]->cancel = rnd(rng, 4) == 0 ? p->parent : tok;
    struct unit *failing = NULL;
    if (mode == 5) { /* a task fails: the rest of the run is skipped, as for a cancel */
        failing = us[rnd(rng, n)];
        failing->fail = 7;
        for (int i = 0; i < n; i++)
            if (us[i] == failing) (void)weft_task_set_name(ts[i], "failing");
    }
    weft_future *f = NULL;
    if (mode == 3) (void)weft_cancel_token_cancel(tok);
    weft_status st;
    int sub_how = rnd(rng, 3);
    struct until *un = palloc(p, sizeof *un);
    un->left = 1;
    if (iters > 1) st = weft_run_n(p->ex[e], tf, (uint64_t)iters, &f);
    else if (sub_how == 1) st = weft_run_with_priority(p->ex[e], tf, (weft_priority)(rnd(rng, 4) - 1), &f);
    else if (sub_how == 2) st = weft_run_until(p->ex[e], tf, until_pred, un, &f);
    else st = weft_run(p->ex[e], tf, &f);
    CHECK(p, st == WEFT_OK, "cancel run submit: %s", weft_errname(st));
    if (st != WEFT_OK) abort();
    CHECK(p, weft_cancel_attach(tok, f) == WEFT_OK, "attach");
    if (mode == 1) CHECK(p, weft_cancel_after(tok, (uint64_t)rnd(rng, 50) * 1000u) == WEFT_OK, "cancel_after");
    if (mode == 2) (void)weft_future_cancel(f);
    if (mode == 4) {
        spin((unsigned)rnd(rng, 20000));
        weft_status cs = weft_future_cancel(f);
        CHECK(p, cs == WEFT_OK || cs == WEFT_ENOENT, "future_cancel: %s", weft_errname(cs));
    }
    st = wait_f(p, f);
    freeze(p, fids, nf);
    weft_run_info info;
    (void)weft_future_info(f, &info);
    if (failing) {
        bool failed = atomic_load(&p->cnt[failing->id]) > 0;
        /* a parent's cancel may come first: then ECANCELED, whether the task ran or not */
        bool cancelled = child && weft_cancel_token_is_cancelled(tok) && st == WEFT_ECANCELED;
        CHECK(p, cancelled || (failed ? st == WEFT_ETASK : st == WEFT_OK), "a run with a failing task ended %s (it ran: %d)",
              weft_errname(st), failed);
        if (failed && st == WEFT_ETASK) {
            CHECK(p, info.task_code == 7, "task_code %d", info.task_code);
            CHECK(p, strcmp(info.failed_task, "failing") == 0, "failed_task '%s'", info.failed_task);
        }
        if (failed) {
            atomic_fetch_add(&p->exp_failed[e], 1);
        }
        if (st == WEFT_ETASK) st = WEFT_ECANCELED; /* the accounting below is the same */
    }
    CHECK(p, st == WEFT_OK || st == WEFT_ECANCELED, "cancelled run ended %s", weft_errname(st));
    if (iters > 1) {
        /* every completed iteration ran every task once; the cancelled one at most once more */
        CHECK(p, info.iterations <= (uint64_t)iters, "%llu iterations of %d", (unsigned long long)info.iterations, iters);
        for (int i = 0; i < n; i++) {
            long c = atomic_load(&p->cnt[us[i]->id]);
            CHECK(p, c >= (long)info.iterations && c <= (long)info.iterations + 1,
                  "run_n cancelled after %llu iterations: a task ran %ld times", (unsigned long long)info.iterations, c);
        }
        if (st == WEFT_OK) CHECK(p, info.iterations == (uint64_t)iters && info.skipped == 0, "run_n OK but short");
        atomic_fetch_add(&p->exp_skipped[e], (long)info.skipped);
        goto done;
    }
    long ran = 0;
    for (int i = 0; i < n; i++) ran += atomic_load(&p->cnt[us[i]->id]);
    long total = n, total_alt = n;
    if (s) {
        int sr = atomic_load(&p->cnt[s->id]);
        ran += sr;
        total += 1;
        total_alt += 1;
        if (sr) {
            for (int i = 0; i < s->m; i++) ran += atomic_load(&p->cnt[s->kids[i]->id]);
            total += s->m;
            total_alt += s->m;
        }
    }
    if (m1) {
        long mr = atomic_load(&p->cnt[m1->id]) + atomic_load(&p->cnt[m2->id]);
        ran += mr;
        total += 2; /* started: its two tasks ran or were skipped */
        total_alt += mr ? 2 : 1; /* not started: the module counts as one */
    }
    for (int i = 0; i < nsem; i++) ran += atomic_load(&p->cnt[su[i]->id]);
    total += nsem;
    total_alt += nsem;
    if (q) { /* the pipeline's task: ran (not counted in ran) or skipped */
        total += 1;
        total_alt += 1;
    }
    long pipe_ran = q ? 1 : 0; /* unknown whether it ran: accept either */
    CHECK(p, ran + (long)info.skipped == total || ran + (long)info.skipped == total_alt ||
                 (pipe_ran && (ran + 1 + (long)info.skipped == total || ran + 1 + (long)info.skipped == total_alt)),
          "cancelled run (mode %d, %s): ran %ld + skipped %llu != %ld (or %ld)", mode, weft_errname(st), ran,
          (unsigned long long)info.skipped, total, total_alt);
    if (st == WEFT_OK) CHECK(p, info.skipped == 0 && ran + pipe_ran == total, "a run that succeeded skipped tasks");
    if (q && st == WEFT_OK) CHECK(p, atomic_load(&p->cnt[q->id[2]]) == q->T, "pipeline of an OK run made %d of %d tokens", atomic_load(&p->cnt[q->id[2]]), q->T);
    atomic_fetch_add(&p->exp_skipped[e], (long)info.skipped);
    goto done;
done:
    weft_future_destroy(f);
    weft_cancel_token_destroy(tok);
    CHECK(p, weft_taskflow_destroy(tf) == WEFT_OK, "cancelled taskflow destroy");
    if (body) CHECK(p, weft_taskflow_destroy(body) == WEFT_OK, "cancelled body destroy");
    if (sem) {
        CHECK(p, weft_semaphore_value(sem) == 1, "a cancelled run left its semaphore at %zu", weft_semaphore_value(sem));
        CHECK(p, weft_semaphore_destroy(sem) == WEFT_OK, "semaphore destroy after a cancelled run");
    }
    if (pl) CHECK(p, weft_pipeline_destroy(pl) == WEFT_OK, "pipeline destroy after a cancelled run");
}

static void act_many(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    int k = 1 + rnd(rng, 3);
    struct built b[3];
    weft_taskflow *tfs[4];
    int null_at = rnd(rng, 3) == 0 ? rnd(rng, k + 1) : -1;
    int j = 0;
    for (int i = 0; i < k; i++) {
        if (j == null_at) tfs[j++] = NULL;
        build_tf(p, rng, depth, &b[i], true);
        expect_built(p, &b[i], 1);
        tfs[j++] = b[i].tf;
    }
    if (null_at == j) tfs[j++] = NULL;
    if (rnd(rng, 2)) {
        weft_future *f = NULL;
        weft_status st = weft_run_many(p->ex[e], tfs, (size_t)j, &f);
        CHECK(p, st == WEFT_OK, "run_many: %s", weft_errname(st));
        st = wait_f(p, f);
        CHECK(p, st == (null_at >= 0 ? WEFT_ETASK : WEFT_OK), "run_many set ended %s", weft_errname(st));
        for (int i = 0; i < j; i++) {
            weft_status ms = weft_run_many_status(f, (size_t)i);
            CHECK(p, ms == (tfs[i] ? WEFT_OK : WEFT_EINVAL), "member %d: %s", i, weft_errname(ms));
        }
        weft_future_destroy(f);
    } else {
        weft_status sts[4];
        weft_status st = weft_run_many_and_wait(p->ex[e], tfs, (size_t)j, sts);
        CHECK(p, st == (null_at >= 0 ? WEFT_EINVAL : WEFT_OK), "run_many_and_wait: %s", weft_errname(st));
        for (int i = 0; i < j; i++)
            CHECK(p, sts[i] == (tfs[i] ? WEFT_OK : WEFT_EINVAL), "member %d: %s", i, weft_errname(sts[i]));
    }
    for (int i = 0; i < k; i++) free_built(p, &b[i]);
}

/* A run_many set cancelled (a token attached to the set, or run_many_cancel):
 * every member's tasks ran or were skipped, none runs after the wait. */
static void act_many_cancel(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    int k = 2 + rnd(rng, 3);
    weft_taskflow *tfs[4];
    struct unit *us[4][6];
    int ns[4], fids[24], nf = 0;
    weft_cancel_token *tok = weft_cancel_token_create(NULL, NULL);
    for (int i = 0; i < k; i++) {
        tfs[i] = weft_taskflow_create("h42mc", NULL);
        ns[i] = 1 + rnd(rng, 6);
        weft_task prev = WEFT_TASK_NULL;
        for (int j = 0; j < ns[i]; j++) {
            us[i][j] = new_unit(p, rng, MAXDEPTH, K_TASK);
            expect_loose(p, us[i][j], 1);
            fids[nf++] = us[i][j]->id;
            weft_task t = weft_emplace(tfs[i], unit_fn, us[i][j]);
            if (rnd(rng, 2) && !weft_task_is_null(prev)) (void)weft_precede(prev, t);
            prev = t;
        }
    }
    int mode = rnd(rng, 3);
    if (mode == 0) us[rnd(rng, k)][0]->cancel = tok;
    weft_future *f = NULL;
    weft_status st = weft_run_many(p->ex[e], tfs, (size_t)k, &f);
    CHECK(p, st == WEFT_OK, "run_many: %s", weft_errname(st));
    if (mode != 2) CHECK(p, weft_cancel_attach(tok, f) == WEFT_OK, "attach to a set");
    if (mode == 1) (void)weft_cancel_token_cancel(tok);
    if (mode == 2) { st = weft_run_many_cancel(f); CHECK(p, st == WEFT_OK || st == WEFT_ENOENT, "run_many_cancel: %s", weft_errname(st)); }
    st = wait_f(p, f);
    freeze(p, fids, nf);
    CHECK(p, st == WEFT_OK || st == WEFT_ECANCELED, "cancelled set: %s", weft_errname(st));
    uint64_t sk = 0;
    for (int i = 0; i < k; i++) {
        weft_run_info info;
        CHECK(p, weft_run_many_info(f, (size_t)i, &info) == WEFT_OK, "run_many_info");
        long ran = 0;
        for (int j = 0; j < ns[i]; j++) ran += atomic_load(&p->cnt[us[i][j]->id]);
        CHECK(p, info.status == WEFT_OK || info.status == WEFT_ECANCELED, "member %d: %s", i, weft_errname(info.status));
        CHECK(p, ran + (long)info.skipped == ns[i], "member %d (%s, mode %d): ran %ld + skipped %llu != %d", i,
              weft_errname(info.status), mode, ran, (unsigned long long)info.skipped, ns[i]);
        sk += info.skipped;
        atomic_fetch_add(&p->exp_skipped[e], (long)info.skipped);
    }
    weft_run_info all;
    (void)weft_future_info(f, &all);
    CHECK(p, all.skipped == sk, "the set's skipped %llu != members' %llu", (unsigned long long)all.skipped, (unsigned long long)sk);
    weft_future_destroy(f);
    weft_cancel_token_destroy(tok);
    for (int i = 0; i < k; i++) CHECK(p, weft_taskflow_destroy(tfs[i]) == WEFT_OK, "destroy member");
}

/* weft_run_n_parallel: N instances of a plain graph at once. */
struct ploop { struct prog *p; int id_init, id_cond, k; int i[8]; };

static int ploop_init(weft_ctx *ctx, void *arg) {
    struct ploop *l = arg;
    atomic_fetch_add(&l->p->cnt[l->id_init], 1);
    count_task(l->p, ctx, K_TASK);
    count_graph(l->p, ctx);
    l->i[weft_ctx_iteration(ctx) % 8] = 0;
    return 0;
}

static int ploop_cond(weft_ctx *ctx, void *arg) {
    struct ploop *l = arg;
    atomic_fetch_add(&l->p->cnt[l->id_cond], 1);
    count_task(l->p, ctx, K_TASK);
    count_graph(l->p, ctx);
    return ++l->i[weft_ctx_iteration(ctx) % 8] < l->k ? 0 : 1;
}

static void act_parallel_n(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    struct built b;
    build_tf(p, rng, depth, &b, true);
    int N = rnd(rng, 5);
    if (rnd(rng, 2)) { /* a condition loop per instance, its state by weft_ctx_iteration */
        struct ploop *l = palloc(p, sizeof *l);
        l->p = p;
        l->k = 1 + rnd(rng, 3);
        l->id_init = new_id(p);
        l->id_cond = new_id(p);
        struct unit *body = new_unit(p, rng, MAXDEPTH, K_TASK);
        weft_task ti = weft_emplace(b.tf, ploop_init, l), tb = weft_emplace(b.tf, unit_fn, body),
                  tc = weft_emplace_condition(b.tf, ploop_cond, l);
        (void)weft_precede(ti, tb);
        (void)weft_precede(tb, tc);
        (void)weft_precede(tc, tb);
        add_id(&b, l->id_init, 1);
        add_id(&b, body->id, l->k);
        add_id(&b, l->id_cond, l->k);
    }
    weft_future *f = NULL;
    weft_status st = weft_run_n_parallel(p->ex[e], b.tf, (uint64_t)N, &f);
    CHECK(p, st == WEFT_OK, "run_n_parallel: %s", weft_errname(st));
    expect_built(p, &b, N);
    st = wait_f(p, f);
    weft_run_info info;
    (void)weft_future_info(f, &info);
    CHECK(p, st == WEFT_OK && info.iterations == (uint64_t)N, "run_n_parallel ended %s, %llu instances",
          weft_errname(st), (unsigned long long)info.iterations);
    weft_future_destroy(f);
    free_built(p, &b);
}

/* Deadlines: a run under weft_with_deadline's token, or under a scope
 * (weft_deadline_begin/end) on a token of the caller's. */
struct dl { struct prog *p; weft_taskflow *tf; struct unit *us[8]; int n, e; weft_status run_st; };

static int dl_body(weft_cancel_token *t, void *arg) {
    struct dl *d = arg;
    struct prog *p = d->p;
    weft_future *f = NULL;
    weft_status st = weft_run(p->ex[d->e], d->tf, &f);
    CHECK(p, st == WEFT_OK, "deadline run: %s", weft_errname(st));
    if (st != WEFT_OK) return 1;
    CHECK(p, weft_cancel_attach(t, f) == WEFT_OK, "attach a deadline's token");
    d->run_st = wait_f(p, f);
    int ids[8];
    long ran = 0;
    for (int i = 0; i < d->n; i++) {
        ids[i] = d->us[i]->id;
        ran += atomic_load(&p->cnt[ids[i]]);
    }
    freeze(p, ids, d->n);
    weft_run_info info;
    (void)weft_future_info(f, &info);
    CHECK(p, ran + (long)info.skipped == d->n, "deadline run (%s): ran %ld + skipped %llu != %d",
          weft_errname(d->run_st), ran, (unsigned long long)info.skipped, d->n);
    atomic_fetch_add(&p->exp_skipped[d->e], (long)info.skipped);
    weft_future_destroy(f);
    return 5;
}

static void act_deadline(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    struct dl d = { .p = p, .e = e, .n = 1 + rnd(rng, 8) };
    d.tf = weft_taskflow_create("h42dl", NULL);
    weft_task prev = WEFT_TASK_NULL;
    for (int i = 0; i < d.n; i++) {
        d.us[i] = new_unit(p, rng, MAXDEPTH, K_TASK);
        d.us[i]->cs = NULL;
        expect_loose(p, d.us[i], 1);
        weft_task t = weft_emplace(d.tf, unit_fn, d.us[i]);
        if (rnd(rng, 2) && !weft_task_is_null(prev)) (void)weft_precede(prev, t);
        prev = t;
    }
    uint64_t budget = (uint64_t)rnd(rng, 100) * 1000u;
    if (rnd(rng, 2)) {
        int result = 0;
        weft_status st = weft_with_deadline(budget, dl_body, &d, &result);
        CHECK(p, st == WEFT_OK || st == WEFT_ETIMEDOUT, "with_deadline: %s", weft_errname(st));
        CHECK(p, result == 5, "with_deadline's result %d", result);
        if (d.run_st == WEFT_ECANCELED) CHECK(p, st == WEFT_ETIMEDOUT, "a run its deadline cancelled, but OK");
    } else {
        weft_cancel_token *tok = weft_cancel_token_create(NULL, NULL);
        weft_deadline outer, inner;
        CHECK(p, weft_deadline_begin(&outer, tok, 10 * SEC) == WEFT_OK, "deadline_begin");
        CHECK(p, weft_deadline_begin(&inner, tok, budget) == WEFT_OK, "nested deadline_begin");
        weft_deadline copy = inner; /* end closes it given any copy */
        (void)dl_body(tok, &d);
        weft_status ie = weft_deadline_end(&copy);
        weft_status oe = weft_deadline_end(&outer);
        CHECK(p, ie == WEFT_OK || ie == WEFT_ETIMEDOUT, "inner end: %s", weft_errname(ie));
        CHECK(p, oe == WEFT_OK, "outer end: %s", weft_errname(oe));
        if (d.run_st == WEFT_ECANCELED) CHECK(p, ie == WEFT_ETIMEDOUT, "a run its scope cancelled, but the scope OK");
        if (ie == WEFT_ETIMEDOUT) CHECK(p, weft_cancel_token_is_cancelled(tok), "an exceeded scope left its token alone");
        weft_cancel_token_destroy(tok);
    }
    CHECK(p, weft_taskflow_destroy(d.tf) == WEFT_OK, "deadline taskflow destroy");
}

/* The program's shared taskflow: run by every thread at once, on both
 * executors, directly and as the body of modules of other taskflows. */
static void act_shared(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    int how = rnd(rng, 3);
    /* Only from outside threads: runs of one taskflow go one at a time on any
     * executor, so a task of executor 1 waiting for a run of it could wait
     * behind a run on executor 0, whose workers may be waiting for executor 1:
     * a circle of the program's making (weft_executor_wait_all says so). */
    if (ctx) {
        act_parallel_n(p, ctx, depth, rng, e);
        return;
    }
    weft_future *f = NULL;
    weft_status st;
    if (how == 0) {
        st = weft_run(p->ex[e], p->shared, &f);
        CHECK(p, st == WEFT_OK, "shared run: %s", weft_errname(st));
        atomic_fetch_add(&p->shared_runs, 1);
        CHECK(p, wait_f(p, f) == WEFT_OK, "shared run failed");
        weft_future_destroy(f);
    } else if (how == 1) {
        int k = rnd(rng, 4);
        st = weft_run_n(p->ex[e], p->shared, (uint64_t)k, &f);
        CHECK(p, st == WEFT_OK, "shared run_n: %s", weft_errname(st));
        atomic_fetch_add(&p->shared_runs, k);
        /* sometimes detached: waited for at the program's end */
        if (rnd(rng, 2)) CHECK(p, wait_f(p, f) == WEFT_OK, "shared run_n failed");
        weft_future_destroy(f);
    } else {
        weft_taskflow *tf = weft_taskflow_create("h42mod", NULL);
        struct unit *u = new_unit(p, rng, depth, K_TASK);
        weft_task a = weft_emplace(tf, unit_fn, u);
        weft_task m = weft_emplace_module(tf, p->shared);
        CHECK(p, !weft_task_is_null(m), "module of the shared taskflow: %s", weft_last_error_message());
        if (rnd(rng, 2)) (void)weft_precede(a, m);
        else (void)weft_precede(m, a);
        int k = 1 + rnd(rng, 2);
        st = weft_run_n(p->ex[e], tf, (uint64_t)k, &f);
        CHECK(p, st == WEFT_OK, "run of a module of the shared taskflow: %s", weft_errname(st));
        expect(p, u, k);
        atomic_fetch_add(&p->shared_runs, k);
        st = wait_f(p, f);
        CHECK(p, st == WEFT_OK, "module of the shared taskflow ended %s", weft_errname(st));
        weft_future_destroy(f);
        CHECK(p, weft_taskflow_destroy(tf) == WEFT_OK, "module taskflow destroy");
    }
}

static void then_cb(weft_future *f, weft_status status, void *arg) {
    struct prog *p = arg;
    atomic_fetch_add(&p->then_calls, 1);
}

/* ---- async ----------------------------------------------------------------- */

static void act_async(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    weft_future *fa = NULL, *fb = NULL, *fc = NULL;
    struct unit *ua = new_unit(p, rng, depth, K_TASK);
    bool cancel_a = rnd(rng, 4) == 0;
    weft_status st = weft_async(p->ex[e], unit_fn, ua, &fa);
    CHECK(p, st == WEFT_OK, "async: %s", weft_errname(st));
    if (cancel_a) {
        (void)weft_future_cancel(fa);
        expect_loose(p, ua, 1);
    } else {
        expect(p, ua, 1);
    }
    struct unit *ub = new_unit(p, rng, depth, K_TASK);
    if (!cancel_a) ub->after = ua->id;
    st = weft_dependent_async(p->ex[e], unit_fn, ub, &fa, 1, &fb);
    CHECK(p, st == WEFT_OK, "dependent_async: %s", weft_errname(st));
    expect(p, ub, 1);
    /* documented cross-executor error: a dependency of another executor */
    struct unit *ux = new_unit(p, rng, MAXDEPTH, K_TASK);
    weft_future *fx = (weft_future *)(uintptr_t)1;
    st = weft_dependent_async(p->ex[1 - e], unit_fn, ux, &fa, 1, &fx);
    CHECK(p, st == WEFT_EINVAL, "a dependency of another executor: %s", weft_errname(st));
    CHECK(p, fx == NULL, "refused dependent_async left *out set");
    /* silent and silent-dependent tasks: waited for at the program's end */
    struct unit *us = new_unit(p, rng, depth, K_TASK);
    CHECK(p, weft_silent_async(p->ex[e], unit_fn, us) == WEFT_OK, "silent_async");
    expect(p, us, 1);
    struct unit *usd = new_unit(p, rng, depth, K_TASK);
    usd->after = ub->id;
    CHECK(p, weft_dependent_async(p->ex[e], unit_fn, usd, &fb, 1, NULL) == WEFT_OK, "silent dependent");
    expect(p, usd, 1);
    /* a prioritised one */
    struct unit *uc = new_unit(p, rng, depth, K_TASK);
    weft_async_options o = { .priority = (weft_priority)(rnd(rng, 4) - 1), .deps = &fb, .ndeps = (size_t)rnd(rng, 2) };
    if (o.ndeps) uc->after = ub->id;
    st = weft_async_with(p->ex[e], unit_fn, uc, &o, &fc);
    CHECK(p, st == WEFT_OK, "async_with: %s", weft_errname(st));
    expect(p, uc, 1);
    /* semaphore-bound async tasks */
    if (rnd(rng, 3) == 0) {
        weft_semaphore *sem = weft_semaphore_create(1, NULL);
        atomic_int *cs = palloc(p, sizeof *cs);
        weft_future *fs[3];
        for (int i = 0; i < 3; i++) {
            struct unit *u = new_unit(p, rng, MAXDEPTH, K_TASK);
            u->cs = cs;
            u->csmax = 1;
            CHECK(p, weft_async_acquire(p->ex[e], unit_fn, u, &sem, 1, &fs[i]) == WEFT_OK, "async_acquire");
            expect(p, u, 1);
        }
        for (int i = 0; i < 3; i++) {
            CHECK(p, wait_f(p, fs[i]) == WEFT_OK, "semaphore async failed");
            weft_future_destroy(fs[i]);
        }
        CHECK(p, weft_semaphore_destroy(sem) == WEFT_OK, "async semaphore destroy");
    }
    /* an isolated wait: cooperative on ex's own worker, a plain wait from a worker of the other executor */
    if (rnd(rng, 2) && ctx && exi(p, ctx) <= e && !cancel_a) st = weft_future_wait_isolated(fa);
    else st = wait_f(p, fa);
    CHECK(p, st == (cancel_a ? st : WEFT_OK), "async a: %s", weft_errname(st));
    if (cancel_a) {
        CHECK(p, st == WEFT_OK || st == WEFT_ECANCELED, "cancelled async: %s", weft_errname(st));
        freeze(p, &ua->id, 1);
        if (atomic_load(&p->cnt[ua->id]) == 0) atomic_fetch_add(&p->exp_skipped[e], 1);
    }
    /* a task queued with a handle, re-prioritised and perhaps removed, and a dependent of it */
    if (rnd(rng, 2)) {
        weft_sched_handle h;
        weft_future *fd = NULL, *fe = NULL;
        struct unit *ud = new_unit(p, rng, depth, K_TASK);
        struct unit *ue = new_unit(p, rng, MAXDEPTH, K_TASK);
        weft_async_options od = { .priority = (weft_priority)(rnd(rng, 4) - 1), .handle = &h, .deps = &fb,
                                  .ndeps = (size_t)rnd(rng, 2) };
        CHECK(p, weft_async_with(p->ex[e], unit_fn, ud, &od, &fd) == WEFT_OK, "async_with a handle");
        CHECK(p, weft_dependent_async(p->ex[e], unit_fn, ue, &fd, 1, &fe) == WEFT_OK, "dependent of a handle");
        expect(p, ue, 1);
        /* documented: a handle given to another executor is refused, and touches nothing there */
        weft_priority pr;
        CHECK(p, weft_sched_remove(p->ex[1 - e], h) == WEFT_EINVAL, "remove through another executor");
        CHECK(p, weft_sched_reprioritize(p->ex[1 - e], h, WEFT_PRIORITY_HIGH) == WEFT_EINVAL, "reprioritize through another executor");
        CHECK(p, weft_sched_priority(p->ex[1 - e], h, &pr) == WEFT_EINVAL, "priority through another executor");
        if (rnd(rng, 2)) {
            weft_status rs = weft_sched_reprioritize(p->ex[e], h, (weft_priority)(rnd(rng, 4) - 1));
            CHECK(p, rs == WEFT_OK || rs == WEFT_ENOENT, "reprioritize: %s", weft_errname(rs));
        }
        weft_status rm = rnd(rng, 2) ? weft_sched_remove(p->ex[e], h) : WEFT_ENOENT;
        CHECK(p, rm == WEFT_OK || rm == WEFT_ENOENT, "remove: %s", weft_errname(rm));
        weft_status ds = wait_f(p, fd);
        if (rm == WEFT_OK) {
            atomic_fetch_add(&p->exp_removed[e], 1);
            CHECK(p, ds == WEFT_ECANCELED, "a removed task's future: %s", weft_errname(ds));
            atomic_fetch_add(&p->exp_skipped[e], 1);
        } else {
            expect(p, ud, 1); /* removal failed (or none asked): it ran */
            if (rm == WEFT_ENOENT && ds != WEFT_OK) failf(p, "a task not removed ended %s", weft_errname(ds));
        }
        freeze(p, &ud->id, 1);
        CHECK(p, wait_f(p, fe) == WEFT_OK, "dependent of a removed task");
        weft_future_destroy(fd);
        weft_future_destroy(fe);
    }
    if (rnd(rng, 2)) {
        atomic_fetch_add(&p->then_expected, 1);
        CHECK(p, weft_future_then(fb, then_cb, p) == WEFT_OK, "then");
        CHECK(p, weft_future_then(fb, then_cb, p) == WEFT_EBUSY, "a second then");
    }
    CHECK(p, wait_f(p, fb) == WEFT_OK, "dependent");
    CHECK(p, wait_f(p, fc) == WEFT_OK, "async_with");
    weft_future_destroy(fa);
    weft_future_destroy(fb);
    weft_future_destroy(fc);
}

/* ---- fork-join ------------------------------------------------------------------ */

WEFT_FJ_TASK(long, fib42, int, n) {
    if (n < 2) return n;
    WEFT_FJ_SLOT(fib42) x;
    WEFT_FJ_SPAWN(fib42, &x, n - 1);
    long b = WEFT_FJ_CALL(fib42, n - 2);
    return WEFT_FJ_SYNC(fib42, &x) + b;
}
static long fib_ref(int n) { long a = 0, b = 1; for (int i = 0; i < n; i++) { long t = a + b; a = b; b = t; } return a; }

struct fj { struct prog *p; int depth; uint64_t seed; int kind; /* 0 spawn, 1 group, 2 typed */ int id; };

static int fj_root(weft_ctx *ctx, void *arg) {
    struct fj *j = arg;
    struct prog *p = j->p;
    atomic_fetch_add(&p->cnt[j->id], 1);
    uint64_t rng = j->seed;
    if (j->kind == 2) {
        int n = 8 + rnd(&rng, 8);
        long r = WEFT_FJ_RUN(ctx, fib42, n);
        CHECK(p, r == fib_ref(n), "typed fib(%d) = %ld", n, r);
        int e = exi(p, ctx);
        if (e >= 0) atomic_fetch_add(&p->maybe_tasks[e], 1L << n); /* stolen frames, at most one per spawn */
        return 0;
    }
    int k = 1 + rnd(&rng, 6);
    struct unit *us[6];
    for (int i = 0; i < k; i++) {
        us[i] = new_unit(p, &rng, j->depth, K_MAYBE);
        expect(p, us[i], 1);
    }
    if (j->kind == 0) {
        for (int i = 0; i < k; i++) CHECK(p, weft_spawn(ctx, unit_fn, us[i]) == WEFT_OK, "spawn");
        for (int i = 0; i < k; i++) CHECK(p, weft_sync(ctx) == 0, "sync");
    } else {
        weft_task_group g;
        weft_task_group_init(&g, ctx);
        for (int i = 0; i < k; i++) CHECK(p, weft_task_group_spawn(&g, unit_fn, us[i]) == WEFT_OK, "group spawn");
        CHECK(p, weft_task_group_wait(&g) == 0, "group wait");
    }
    return 0;
}

static void act_fj(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    struct fj *j = palloc(p, sizeof *j);
    j->p = p;
    j->depth = depth;
    j->seed = test_rand(rng);
    j->kind = rnd(rng, 3);
    j->id = new_id(p);
    p->expect[j->id] = 1;
    if (ctx && exi(p, ctx) == e && rnd(rng, 2)) {
        fj_root(ctx, j); /* inline in the running task */
        return;
    }
    int r = -1;
    weft_status st;
    if (rnd(rng, 3) == 0) { /* with a token, cancelled before or never: children are never skipped */
        weft_cancel_token *tok = weft_cancel_token_create(NULL, NULL);
        bool pre = rnd(rng, 2);
        if (pre) (void)weft_cancel_token_cancel(tok);
        st = weft_run_root_with_token(p->ex[e], tok, fj_root, j, &r);
        weft_cancel_token_destroy(tok);
        if (pre) {
            CHECK(p, st == WEFT_ECANCELED && r == 0, "root with a cancelled token: %s", weft_errname(st));
            p->expect[j->id] = 0;
            /* not called: counted as skipped */
            atomic_fetch_add(&p->exp_skipped[e], 1);
            return;
        }
    } else {
        st = weft_run_root_status(p->ex[e], fj_root, j, &r);
    }
    CHECK(p, st == WEFT_OK && r == 0, "run_root: %s %d", weft_errname(st), r);
    /* a root counts as a task (from a worker of ex it runs nested, right there) */
    atomic_fetch_add(&p->exp_tasks[e], 1);
}

/* ---- algorithms ------------------------------------------------------------------ */

struct algo { struct prog *p; int *slots; weft_cancel_token *tok; size_t stop_at; };

static void algo_body(size_t i, void *arg) {
    struct algo *a = arg;
    a->slots[i]++;
    if (a->tok && i == a->stop_at) (void)weft_cancel_token_cancel(a->tok);
}

static void add_long(void *acc, const void *x, void *arg) { *(long *)acc += *(const long *)x; }
static int cmp_long(const void *a, const void *b, void *arg) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void act_algo(struct prog *p, weft_ctx *ctx, int depth, uint64_t *rng, int e) {
    size_t n = 1 + (size_t)rnd(rng, 3000);
    atomic_fetch_add(&p->maybe_tasks[e], 3 * (long)weft_executor_workers(p->ex[e]) + 3);
    struct algo a = { p, calloc(n, sizeof(int)), NULL, 0 };
    weft_algo_config cfg = { .partitioner = (weft_partitioner)rnd(rng, 4) };
    if (rnd(rng, 3) == 0) {
        a.tok = weft_cancel_token_create(NULL, NULL);
        a.stop_at = (size_t)rnd(rng, (int)n);
        cfg.cancel = a.tok;
    }
    weft_status st = weft_parallel_for(p->ex[e], 0, n, 1, algo_body, &a, &cfg);
    size_t ones = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(p, a.slots[i] <= 1, "parallel_for ran index %zu %d times", i, a.slots[i]);
        ones += a.slots[i] == 1;
    }
    if (a.tok) CHECK(p, st == WEFT_OK || st == WEFT_ECANCELED, "cancelled parallel_for: %s", weft_errname(st));
    else CHECK(p, st == WEFT_OK, "parallel_for: %s", weft_errname(st));
    if (st == WEFT_OK) CHECK(p, ones == n, "parallel_for OK but ran %zu of %zu", ones, n);
    weft_cancel_token_destroy(a.tok);
    free(a.slots);
    long *v = malloc(n * sizeof *v);
    long want = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = (long)(test_rand(rng) % 1000);
        want += v[i];
    }
    long sum = 0;
    st = weft_parallel_reduce(p->ex[e], v, n, sizeof *v, &sum, add_long, NULL, &(weft_algo_config){ .partitioner = cfg.partitioner });
    CHECK(p, st == WEFT_OK && sum == want, "reduce: %s %ld vs %ld", weft_errname(st), sum, want);
    st = weft_parallel_sort(p->ex[e], v, n, sizeof *v, cmp_long, NULL, NULL);
    long s2 = 0;
    for (size_t i = 0; i < n; i++) {
        s2 += v[i];
        if (i) CHECK(p, v[i - 1] <= v[i], "sort out of order at %zu", i);
    }
    CHECK(p, st == WEFT_OK && s2 == want, "sort: %s", weft_errname(st));
    free(v);
}

/* ---- the generator ------------------------------------------------------------ */

static void action(struct prog *p, weft_ctx *ctx, int depth, uint64_t seed, int emin) {
    uint64_t rng = seed ? seed : 1;
    int e = emin >= 1 ? 1 : rnd(&rng, 2);
    int kinds = p->exact ? 8 : 10;
    int k = rnd(&rng, kinds);
    TRACE( "action %d depth %d on ex %d from %s\n", k, depth, e, ctx ? "a task" : "outside");
    switch (k) {
    case 0: act_taskflow(p, ctx, depth, &rng, e); break;
    case 1: act_cancel(p, ctx, depth, &rng, e); break;
    case 2: act_many(p, ctx, depth, &rng, e); break;
    case 3: act_async(p, ctx, depth, &rng, e); break;
    case 4: act_many_cancel(p, ctx, depth, &rng, e); break;
    case 5: act_parallel_n(p, ctx, depth, &rng, e); break;
    case 6: act_shared(p, ctx, depth, &rng, e); break;
    case 7: act_deadline(p, ctx, depth, &rng, e); break;
    case 8: act_fj(p, ctx, depth, &rng, e); break;
    default: act_algo(p, ctx, depth, &rng, e); break;
    }
}

struct thr { struct prog *p; uint64_t seed; int n; };

static void *thread_main(void *arg) {
    struct thr *t = arg;
    uint64_t rng = t->seed;
    for (int i = 0; i < t->n; i++) {
        action(t->p, NULL, 0, test_rand(&rng), 0);
        if (trace_on()) {
            for (int e = 0; e < 2; e++) {
                weft_metrics m;
                uint64_t sp = 0, dr = 0;
                (void)weft_executor_metrics(t->p->ex[e], &m, NULL, 0);
                (void)weft_profiler_count(t->p->ex[e], &sp, &dr);
                TRACE("  [ex%d: tasks %llu spans %llu]\n", e, (unsigned long long)m.total.tasks, (unsigned long long)sp);
            }
        }
        /* the scheduling layer's queries while others submit */
        if (rnd(&rng, 3) == 0) {
            weft_sched_entry ents[8];
            size_t nq = 0, moved = 0;
            weft_sched_stats sst;
            weft_executor *x = t->p->ex[rnd(&rng, 2)];
            CHECK(t->p, weft_sched_snapshot(x, ents, 8, &nq) == WEFT_OK, "snapshot");
            for (size_t i = 0; i < nq && i < 8; i++)
                CHECK(t->p, ents[i].priority >= WEFT_PRIORITY_LOW && ents[i].priority <= WEFT_PRIORITY_CRITICAL, "snapshot priority");
            CHECK(t->p, weft_sched_escalate(x, &moved) == WEFT_OK, "escalate");
            CHECK(t->p, weft_sched_get_stats(x, &sst) == WEFT_OK, "sched stats");
        }
        /* wait_all from an outside thread while others still submit: returns */
        if (rnd(&rng, 4) == 0) CHECK(t->p, weft_executor_wait_all(t->p->ex[rnd(&rng, 2)]) == WEFT_OK, "wait_all");
    }
    return NULL;
}

static void metrics_of(weft_executor *ex, uint64_t *tasks, uint64_t *skipped, uint64_t *failed) {
    weft_metrics m;
    if (weft_executor_metrics(ex, &m, NULL, 0) != WEFT_OK) abort();
    *tasks = m.total.tasks;
    *skipped = m.total.skipped;
    *failed = m.total.failed;
    if (m.total.succeeded + m.total.failed != m.total.tasks) TEST_FAIL_("succeeded + failed != tasks");
}

static int budget_env; /* WEFT_HUNT42_BUDGET: nested actions per program */
static atomic_long obs_begin, obs_end, obs_bad; /* observer events (make_executors) */
static atomic_long obs_end_ex[2];

static void run_program(struct prog *p, uint64_t seed) {
    memset(p->cnt, 0, sizeof p->cnt);
    memset(p->expect, 0, sizeof p->expect);
    memset(p->loose, 0, sizeof p->loose);
    atomic_store(&p->next_id, 0);
    for (int e = 0; e < 2; e++) {
        atomic_store(&p->exp_tasks[e], 0);
        atomic_store(&p->exp_skipped[e], 0);
        atomic_store(&p->maybe_tasks[e], 0);
        atomic_store(&p->exp_failed[e], 0);
        atomic_store(&p->exp_graph[e], 0);
        atomic_store(&p->exp_removed[e], 0);
        atomic_store(&p->maybe_graph[e], 0);
        atomic_store(&obs_end_ex[e], 0);
    }
    p->nfr = 0;
    p->seed = seed;
    atomic_store(&p->shared_runs, 0);
    atomic_store(&p->then_calls, 0);
    atomic_store(&p->then_expected, 0);
    uint64_t rng = seed;
    p->exact = rnd(&rng, 3) == 0;
    atomic_store(&p->budget, budget_env > 0 ? budget_env : 16);
    p->parent = weft_cancel_token_create(NULL, NULL);
    p->shared = weft_taskflow_create("h42shared", NULL);
    for (int i = 0; i < 2; i++) p->shared_u[i] = new_unit(p, &rng, MAXDEPTH, K_TASK);
    (void)weft_precede(weft_emplace(p->shared, unit_fn, p->shared_u[0]), weft_emplace(p->shared, unit_fn, p->shared_u[1]));
    bool prof = rnd(&rng, 4) == 0; /* a profile of the program: one span per task counted */
    if (prof)
        for (int e = 0; e < 2; e++) ASSERT_OK(weft_profiler_start(p->ex[e]));
    if (rnd(&rng, 5) == 0) /* a reset between programs: every counter from 0 */
        for (int e = 0; e < 2; e++) {
            ASSERT_OK(weft_metrics_enable(p->ex[e], true));
            weft_metrics m;
            ASSERT_OK(weft_executor_metrics(p->ex[e], &m, NULL, 0));
            if (m.total.tasks || m.total.skipped || m.total.failed || m.total.steals || !m.enabled)
                TEST_FAILP_(p, "seed %#llx: metrics after a reset with nothing in flight: %llu tasks, %llu skipped, "
                            "%llu failed, %llu steals", (unsigned long long)seed, (unsigned long long)m.total.tasks,
                            (unsigned long long)m.total.skipped, (unsigned long long)m.total.failed,
                            (unsigned long long)m.total.steals);
        }
    uint64_t t0[2], s0[2], f0[2], r0[2];
    for (int e = 0; e < 2; e++) {
        metrics_of(p->ex[e], &t0[e], &s0[e], &f0[e]);
        weft_sched_stats sst;
        ASSERT_OK(weft_sched_get_stats(p->ex[e], &sst));
        r0[e] = sst.removed;
    }
    int nt = 1 + rnd(&rng, MAXTHREADS);
    pthread_t th[MAXTHREADS];
    struct thr ta[MAXTHREADS];
    for (int i = 0; i < nt; i++) {
        ta[i] = (struct thr){ p, test_rand(&rng), 1 + rnd(&rng, 4) };
        if (i > 0 && pthread_create(&th[i], NULL, thread_main, &ta[i]) != 0) abort();
    }
    thread_main(&ta[0]);
    for (int i = 1; i < nt; i++) pthread_join(th[i], NULL);
    for (int e = 0; e < 2; e++) ASSERT_OK(weft_executor_wait_all(p->ex[e]));
    if (atomic_load(&p->failed)) TEST_FAILP_(p, "seed %#llx: %s", (unsigned long long)seed, p->fail);
    for (int i = 0; i < 2; i++) p->expect[p->shared_u[i]->id] = (int)atomic_load(&p->shared_runs);
    ASSERT_OK(weft_taskflow_destroy(p->shared));
    weft_cancel_token_destroy(p->parent);
    /* a then callback runs after its future is ready: give it a moment */
    for (int i = 0; i < 2000 && atomic_load(&p->then_calls) != atomic_load(&p->then_expected); i++) sleep_us(100);
    if (atomic_load(&p->then_calls) != atomic_load(&p->then_expected))
        TEST_FAILP_(p, "seed %#llx: %d then callbacks ran, want %d", (unsigned long long)seed, atomic_load(&p->then_calls),
                   atomic_load(&p->then_expected));
    int ids = atomic_load(&p->next_id);
    for (int i = 0; i < ids; i++) {
        int c = atomic_load(&p->cnt[i]);
        if (p->loose[i] ? c > p->expect[i] : c != p->expect[i])
            TEST_FAILP_(p, "seed %#llx: unit %d ran %d times, want %s%d", (unsigned long long)seed, i, c,
                       p->loose[i] ? "at most " : "", p->expect[i]);
    }
    for (int i = 0; i < p->nfr; i++) {
        long s = sum_ids(p, p->fr[i].ids, p->fr[i].n);
        if (s != p->fr[i].sum)
            TEST_FAILP_(p, "seed %#llx: units from %d of a finished cancelled run ran after its wait (%ld -> %ld)",
                       (unsigned long long)seed, p->fr[i].ids[0], p->fr[i].sum, s);
    }
    if (atomic_load(&obs_begin) != atomic_load(&obs_end) || atomic_load(&obs_bad))
        TEST_FAILP_(p, "seed %#llx: observer saw %ld begins, %ld ends, %ld bad events", (unsigned long long)seed,
                    atomic_load(&obs_begin), atomic_load(&obs_end), atomic_load(&obs_bad));
    for (int e = 0; e < 2; e++) {
        long got = atomic_load(&obs_end_ex[e]), want = atomic_load(&p->exp_graph[e]), mg = atomic_load(&p->maybe_graph[e]);
        TRACE("observer ex%d (%d): %ld ends, %ld graph tasks (+%ld)\n", e, p->observed[e], got, want, mg);
        if (p->observed[e] && (got < want || got > want + mg))
            TEST_FAILP_(p, "seed %#llx: executor %d's observer saw %ld task ends, the program ran %ld graph tasks (+ up to %ld)",
                        (unsigned long long)seed, e, got, want, mg);
    }
    for (int e = 0; e < 2; e++) {
        weft_sched_stats sst;
        ASSERT_OK(weft_sched_get_stats(p->ex[e], &sst));
        uint64_t q_first = sst.queued;
        /* an entry of a task an isolated wait ran in place lingers until a worker
         * drops it (weft_sched_snapshot, sched.h): wait for that, briefly */
        for (int i = 0; i < 1000 && sst.queued != 0; i++) {
            sleep_us(100);
            ASSERT_OK(weft_sched_get_stats(p->ex[e], &sst));
        }
        if (q_first) TRACE("queued at rest: %llu, then %llu\n", (unsigned long long)q_first, (unsigned long long)sst.queued);
        if ((long)(sst.removed - r0[e]) != atomic_load(&p->exp_removed[e]) || sst.queued != 0)
            TEST_FAILP_(p, "seed %#llx: executor %d's scheduling stats: %llu removed (the program removed %ld), %llu queued at rest",
                        (unsigned long long)seed, e, (unsigned long long)(sst.removed - r0[e]), atomic_load(&p->exp_removed[e]),
                        (unsigned long long)sst.queued);
    }
    for (int e = 0; e < 2; e++) {
        uint64_t t1, s1, f1;
        metrics_of(p->ex[e], &t1, &s1, &f1);
        if ((long)(f1 - f0[e]) != atomic_load(&p->exp_failed[e]))
            TEST_FAILP_(p, "seed %#llx: executor %d's metrics count %ld failed, the program saw %ld", (unsigned long long)seed,
                        e, (long)(f1 - f0[e]), atomic_load(&p->exp_failed[e]));
        long dt = (long)(t1 - t0[e]), ds = (long)(s1 - s0[e]);
        long want = atomic_load(&p->exp_tasks[e]), maybe = atomic_load(&p->maybe_tasks[e]);
        if (dt < want || dt > want + maybe)
            TEST_FAILP_(p, "seed %#llx (%s): executor %d's metrics count %ld tasks, the program counted %ld (+ up to %ld)",
                       (unsigned long long)seed, p->exact ? "exact" : "bounded", e, dt, want, maybe);
        if (prof) {
            uint64_t spans = 0, dropped = 0;
            ASSERT_OK(weft_profiler_count(p->ex[e], &spans, &dropped));
            ASSERT_OK(weft_profiler_stop(p->ex[e]));
            if ((long)(spans + dropped) != dt)
                TEST_FAILP_(p, "seed %#llx: executor %d's profile holds %llu spans (+%llu dropped), its metrics %ld tasks",
                            (unsigned long long)seed, e, (unsigned long long)spans, (unsigned long long)dropped, dt);
        }
        if (ds != atomic_load(&p->exp_skipped[e]))
            TEST_FAILP_(p, "seed %#llx: executor %d's metrics count %ld skipped, the runs reported %ld",
                       (unsigned long long)seed, e, ds, atomic_load(&p->exp_skipped[e]));
    }
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->nallocs; i++) free(p->allocs[i]);
    p->nallocs = 0;
    pthread_mutex_unlock(&p->mu);
}

/* An observer on some executors: begins and ends pair up, nest per worker
 * thread like a stack, and carry a run id. */
static _Thread_local const void *obs_stack[64];
static _Thread_local int obs_top;

static void obs_task_begin(void *user, const weft_task_event *ev) {
    atomic_fetch_add(&obs_begin, 1);
    if (ev->run_id == 0 || weft_task_is_null(ev->task) || ev->outcome != WEFT_TASK_RUNNING) atomic_fetch_add(&obs_bad, 1);
    if (obs_top < 64) obs_stack[obs_top] = ev->task.node_;
    obs_top++;
}

static void obs_task_end(void *user, const weft_task_event *ev) {
    atomic_fetch_add(&obs_end, 1);
    struct prog *p = user;
    if (ev->executor == p->ex[0]) atomic_fetch_add(&obs_end_ex[0], 1);
    else if (ev->executor == p->ex[1]) atomic_fetch_add(&obs_end_ex[1], 1);
    else atomic_fetch_add(&obs_bad, 1);
    if (obs_top <= 0) {
        atomic_fetch_add(&obs_bad, 1);
        return;
    }
    obs_top--;
    if (obs_top < 64 && obs_stack[obs_top] != ev->task.node_) atomic_fetch_add(&obs_bad, 1);
    if (ev->outcome == WEFT_TASK_RUNNING || (ev->outcome == WEFT_TASK_FAILED) != (ev->code != 0)) atomic_fetch_add(&obs_bad, 1);
}

static weft_observer the_observer = { obs_task_begin, obs_task_end, NULL };

/* Executors of 1 to 4 workers, each ready-queue policy, small local queues,
 * batch steals and few fork-join frames (spawns past them run at once). */
static void make_executors(struct prog *p, uint64_t *rng) {
    for (int e = 0; e < 2; e++) {
        weft_executor_destroy(p->ex[e]);
        static const weft_sched_kind kinds[] = { WEFT_SCHED_WORK_STEALING, WEFT_SCHED_WORK_STEALING, WEFT_SCHED_FIFO,
                                                 WEFT_SCHED_PRIORITY, WEFT_SCHED_ROUND_ROBIN, WEFT_SCHED_RANDOM };
        static weft_sched_config scs[2];
        weft_sched_config *sc = &scs[e];
        memset(sc, 0, sizeof *sc);
        sc->kind = kinds[rnd(rng, 6)];
        sc->seed = test_rand(rng);
        weft_executor_config c = { .workers = 1 + (unsigned)rnd(rng, 4), .metrics = true, .sched = sc };
        the_observer.user = p;
        if (rnd(rng, 3) == 0) c.observer = &the_observer;
        p->observed[e] = c.observer != NULL;
        if (rnd(rng, 3) == 0) c.steal_batch = 1 + (unsigned)rnd(rng, 8);
        if (rnd(rng, 3) == 0) c.local_queue_capacity = 16;
        if (rnd(rng, 3) == 0) c.fork_join_frames = 16;
        if (rnd(rng, 3) == 0) c.profile_max_spans = 1 + (size_t)rnd(rng, 100); /* spans past it dropped, counted */
        weft_status err;
        p->ex[e] = weft_executor_create(&c, &err);
        if (!p->ex[e]) TEST_FAIL_("executor create: %s", weft_errname(err));
        snprintf(p->exdesc[e], sizeof p->exdesc[e], "ex%d: %u workers, policy %d, batch %u, lq %zu, frames %zu%s", e,
                 c.workers, (int)sc->kind, c.steal_batch, c.local_queue_capacity, c.fork_join_frames,
                 c.observer ? ", observer" : "");
        TRACE("%s\n", p->exdesc[e]);
    }
}

TEST(random_mixed_programs_run_every_unit_exactly_once_and_metrics_match) {
    struct prog *p = calloc(1, sizeof *p);
    ASSERT_NOT_NULL(p);
    pthread_mutex_init(&p->mu, NULL);
    p->ex[0] = p->ex[1] = NULL;
    trace_flag = getenv("WEFT_HUNT42_TRACE") != NULL;
    if (getenv("WEFT_HUNT42_BUDGET")) budget_env = atoi(getenv("WEFT_HUNT42_BUDGET"));
    if (getenv("WEFT_HUNT42_DEPTH")) MAXDEPTH = atoi(getenv("WEFT_HUNT42_DEPTH"));
    const char *np = getenv("WEFT_HUNT42_PROGS");
    /* ~1 s normally, a few under the sanitizers (which scale to 0.1: at least 200) */
    uint64_t progs = np && *np ? strtoull(np, NULL, 0) : test_scale(600);
    if (progs < 200 && !(np && *np)) progs = 200;
    uint64_t base = test_seed();
    p->run_seed = base;
    const char *one = getenv("WEFT_HUNT42_ONE");
    watchdog_start(120);
    uint64_t xrng = base ^ 0xabcdefULL;
    for (uint64_t i = 0; i < progs; i++) {
        if (i % 25 == 0) make_executors(p, &xrng);
        uint64_t seed = base * 1000003u + i * 0x9e3779b97f4a7c15ULL + 1;
        /* WEFT_HUNT42_ONE=<program seed>: replay that program alone, on the executors it had */
        if (one && *one && seed != strtoull(one, NULL, 0)) continue;
        double t0 = now_s();
        run_program(p, seed);
        if (now_s() - t0 > 0.2) TRACE("slow program: seed %#llx took %.2f s\n", (unsigned long long)seed, now_s() - t0);
        if (one && *one) break;
    }
    watchdog_stop();
    weft_executor_destroy(p->ex[0]);
    weft_executor_destroy(p->ex[1]);
    pthread_mutex_destroy(&p->mu);
    free(p->allocs);
    free(p);
}

/* ---- defects the generator found, minimised ------------------------------------ */

/* Work nested more than 16 deep on one worker (the observer's timed frames,
 * WEFT__OBS_DEPTH) is counted, not timed.  Its end formed the address of
 * frame[depth] before testing the depth: out of bounds (undefined behaviour,
 * which the ASan/UBSan build stops at), found by a program whose waits ran
 * nested roots and async tasks 17 deep. */
static int nest_root(weft_ctx *ctx, void *arg) {
    int *left = arg;
    if (--*left > 0) return weft_run_root(weft_ctx_executor(ctx), nest_root, arg);
    return 0;
}

TEST(work_nested_deeper_than_the_timed_frames_is_counted_without_reading_past_them) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, NULL);
    ASSERT_NOT_NULL(ex);
    int left = 24;
    ASSERT_EQ(weft_run_root(ex, nest_root, &left), 0);
    ASSERT_EQ(left, 0);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, 24);
    weft_executor_destroy(ex);
}

/* Work nested more than 16 deep on one worker has no span (it is counted, not
 * timed).  Its span went missing without a count: the profile held 16 spans
 * for 24 runs, 0 dropped, where weft_profiler_count's spans + dropped are the
 * runs.  Found by the generator's profiled programs (run_n_parallel instances
 * whose waits ran one another's nested work). */
TEST(a_profile_counts_the_span_of_work_nested_deeper_than_the_timed_frames_as_dropped) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 1, .metrics = true }, NULL);
    ASSERT_NOT_NULL(ex);
    ASSERT_OK(weft_profiler_start(ex));
    int left = 24;
    ASSERT_EQ(weft_run_root(ex, nest_root, &left), 0);
    uint64_t spans = 0, dropped = 0;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_EQ(spans, 16);
    ASSERT_EQ(spans + dropped, 24);
    weft_executor_destroy(ex);
}

/* What the generator's exact metrics rest on for pipelines (observe.h): one
 * task per stage call, the first stage's stopping call included, plus the
 * pipeline's own task; a simple pipeline, one per item and stage given. */
static int pm_made;
static int pm_first(weft_pipeflow *pf, void *arg) {
    if (pm_made == 5) {
        pm_made = 0;
        return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 1;
    }
    pm_made++;
    return 0;
}
static int pm_next(weft_pipeflow *pf, void *arg) { return 0; }

TEST(pipeline_metrics_count_every_stage_call_the_stopping_one_included) {
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .metrics = true }, NULL);
    ASSERT_NOT_NULL(ex);
    weft_stage st[3] = { { WEFT_STAGE_SERIAL, pm_first, NULL, "a" }, { WEFT_STAGE_PARALLEL, pm_next, NULL, "b" },
                         { WEFT_STAGE_SERIAL, pm_next, NULL, "c" } };
    weft_pipeline *pl = weft_pipeline_create(2, st, 3, NULL);
    int items[4] = { 0 };
    weft_item_stage ist[2] = { { WEFT_STAGE_SERIAL, item_stage, NULL, "x" }, { WEFT_STAGE_PARALLEL, item_stage, NULL, "y" } };
    weft_pipeline *sp = weft_simple_pipeline_create(2, items, 4, sizeof(int), ist, 2, NULL);
    ASSERT_NOT_NULL(pl);
    ASSERT_NOT_NULL(sp);
    weft_taskflow *tf = make_taskflow("pm"), *tf2 = make_taskflow("sp");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, pl)));
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf2, sp)));
    for (int r = 0; r < 3; r++) {
        weft_metrics m0, m1;
        ASSERT_OK(weft_executor_metrics(ex, &m0, NULL, 0));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_run_and_wait(ex, tf2));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_OK(weft_executor_metrics(ex, &m1, NULL, 0));
        /* 5 tokens x 3 stages + the stopping call + the task; 4 items x 2 stages + the task */
        ASSERT_EQ(m1.total.tasks - m0.total.tasks, (5 * 3 + 1 + 1) + (4 * 2 + 1));
    }
    ASSERT_EQ(items[0], 6);
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(tf2));
    ASSERT_OK(weft_pipeline_destroy(pl));
    ASSERT_OK(weft_pipeline_destroy(sp));
    weft_executor_destroy(ex);
}
