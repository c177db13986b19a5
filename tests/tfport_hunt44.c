/* Taskflow's unit tests (unittests/test_*.cpp) ported to weft's C API, for the
 * checks that cpp_tfunit41.cpp, cpp_tfport39.cc and the algo/pipe/flow tests
 * did not make: each check's counts and results exact on 1, 2 and 4 workers
 * (adversarial round 44). */
#include "algo_test.h"

#include <limits.h>
#include <stdatomic.h>

static __attribute__((unused)) int wait_destroy(weft_future *f) {
    int st = weft_future_wait(f);
    weft_future_destroy(f);
    return st;
}

/* ---- pipelines (test_pipelines.cpp: 1P..3P x S/P x 1..4 lines x 1..4 workers) ----
 *
 * Every stage records each token it sees; a serial stage's record must be 0..N-1
 * in order, a parallel stage's a permutation of it; the first stage sees N + 1
 * calls (the last one stops).  Three runs in a row continue the token numbers
 * (Taskflow: num_tokens() counts across runs until reset), then a reset
 * restarts them. */
enum { PMAXN = 97, PSTAGES = 3 };
typedef struct pstate {
    size_t ntok;                 /* tokens per run */
    uint64_t base;               /* first token number of this run */
    atomic_size_t seen[PSTAGES]; /* calls per stage */
    uint64_t order[PSTAGES][PMAXN + 1];
    atomic_int count[PSTAGES][PMAXN + 1]; /* per token (relative to base) */
    atomic_int inflight, max_inflight, bad;
    size_t lines;
    weft_stage_kind kinds[PSTAGES];
} pstate;

static int pstage(weft_pipeflow *pf, void *arg) {
    pstate *s = arg;
    size_t st = weft_pipeflow_stage(pf);
    uint64_t tok = weft_pipeflow_token(pf);
    if (st == 0) {
        if (tok < s->base || tok - s->base > s->ntok) atomic_store(&s->bad, 1);
        if (tok - s->base == s->ntok) {
            if (weft_pipeflow_stop(pf) != WEFT_OK) atomic_store(&s->bad, 2);
            atomic_fetch_add(&s->seen[0], 1);
            return 0;
        }
        int n = atomic_fetch_add(&s->inflight, 1) + 1;
        int m = atomic_load(&s->max_inflight);
        while (n > m && !atomic_compare_exchange_weak(&s->max_inflight, &m, n)) {}
    }
    if (weft_pipeflow_line(pf) != tok % s->lines) atomic_store(&s->bad, 3);
    if (st != 0 && weft_pipeflow_stop(pf) != WEFT_EINVAL) atomic_store(&s->bad, 4);
    size_t k = atomic_fetch_add(&s->seen[st], 1);
    if (k <= PMAXN) s->order[st][k] = tok;
    size_t rel = (size_t)(tok - s->base);
    if (rel <= PMAXN) atomic_fetch_add(&s->count[st][rel], 1);
    return 0;
}
/* The last stage ends the token's flight. */
static int pstage_last(weft_pipeflow *pf, void *arg) {
    pstate *s = arg;
    int r = pstage(pf, arg);
    atomic_fetch_sub(&s->inflight, 1);
    return r;
}

static void pstate_reset(pstate *s, uint64_t base) {
    s->base = base;
    for (int i = 0; i < PSTAGES; i++) {
        atomic_store(&s->seen[i], 0);
        for (int j = 0; j <= PMAXN; j++) atomic_store(&s->count[i][j], 0);
    }
    atomic_store(&s->inflight, 0);
    atomic_store(&s->max_inflight, 0);
}

static void pcheck(pstate *s, size_t nstages, size_t lines) {
    ASSERT_EQ(atomic_load(&s->bad), 0);
    ASSERT_EQ(atomic_load(&s->seen[0]), s->ntok + 1);
    for (size_t st = 1; st < nstages; st++) ASSERT_EQ(atomic_load(&s->seen[st]), s->ntok);
    for (size_t st = 0; st < nstages; st++) {
        for (size_t t = 0; t < s->ntok; t++) {
            if (atomic_load(&s->count[st][t]) != 1)
                TEST_FAIL_("stage %zu saw token %zu %d times (lines %zu)", st, t, atomic_load(&s->count[st][t]), lines);
            if (s->kinds[st] == WEFT_STAGE_SERIAL && s->order[st][t] != s->base + t)
                TEST_FAIL_("serial stage %zu saw token %llu at place %zu", st, (unsigned long long)s->order[st][t], t);
        }
    }
    ASSERT_LE(atomic_load(&s->max_inflight), (int)lines);
}

TEST(tf_pipelines_every_shape_lines_and_workers_see_each_token_once_in_order_across_reruns) {
    static const char *shapes[] = { "S", "SS", "SP", "SSS", "SSP", "SPS", "SPP" };
    static const size_t ntoks[] = { 0, 1, 5, 97 };
    static pstate s;
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++) {
            size_t ns = strlen(shapes[sh]);
            for (size_t lines = 1; lines <= 4; lines++) {
                for (int sched = 0; sched <= 2; sched++) {
                    weft_stage st[PSTAGES];
                    for (size_t i = 0; i < ns; i++) {
                        s.kinds[i] = shapes[sh][i] == 'S' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL;
                        st[i] = (weft_stage){ s.kinds[i], i + 1 == ns ? pstage_last : pstage, &s, "st" };
                    }
                    if (ns == 1) st[0].fn = pstage; /* stage 0 alone: no inflight bookkeeping */
                    weft_status err;
                    weft_pipeline *p = weft_pipeline_create(lines, st, ns, &err);
                    ASSERT_NOT_NULL(p);
                    ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)sched));
                    weft_taskflow *tf = make_taskflow("pipe");
                    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                    uint64_t base = 0;
                    s.lines = lines;
                    atomic_store(&s.bad, 0);
                    for (size_t r = 0; r < sizeof ntoks / sizeof *ntoks; r++) {
                        s.ntok = ntoks[r];
                        pstate_reset(&s, base);
                        ASSERT_OK(weft_run_and_wait(ex, tf));
                        if (ns == 1) atomic_store(&s.max_inflight, 0);
                        pcheck(&s, ns, lines);
                        base += s.ntok;
                        ASSERT_EQ(weft_pipeline_num_tokens(p), base);
                    }
                    /* reset: the next run starts from token 0 again. */
                    ASSERT_OK(weft_pipeline_reset(p));
                    ASSERT_EQ(weft_pipeline_num_tokens(p), 0);
                    s.ntok = 5;
                    pstate_reset(&s, 0);
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    if (ns == 1) atomic_store(&s.max_inflight, 0);
                    pcheck(&s, ns, lines);
                    ASSERT_EQ(weft_pipeline_num_tokens(p), 5);
                    ASSERT_OK(weft_taskflow_destroy(tf));
                    ASSERT_OK(weft_pipeline_destroy(p));
                }
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- data pipelines (test_data_pipelines.cpp) ------------------------------
 *
 * int -> string-ish -> double: each stage's output is a function of the token,
 * checked by the next stage; serial stages in order. */
typedef struct dstate {
    size_t ntok;
    uint64_t base;
    atomic_int bad;
    atomic_size_t calls[3];
    uint64_t last_serial[3];
    weft_stage_kind kinds[3];
    atomic_llong sum;
} dstate;

typedef struct dmid { char text[24]; uint64_t tok; } dmid;

static void dserial(dstate *s, size_t st, uint64_t tok) {
    if (s->kinds[st] != WEFT_STAGE_SERIAL) return;
    if (tok != s->last_serial[st]) atomic_store(&s->bad, 10 + (int)st);
    s->last_serial[st] = tok + 1;
}
static int dfirst(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *s = arg;
    uint64_t tok = weft_pipeflow_token(pf);
    atomic_fetch_add(&s->calls[0], 1);
    if (in) atomic_store(&s->bad, 1);
    if (tok - s->base == s->ntok) return weft_pipeflow_stop(pf) == WEFT_OK ? 0 : 99;
    dserial(s, 0, tok);
    *(int *)out = (int)(tok * 3 + 1);
    return 0;
}
static int dmiddle(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *s = arg;
    uint64_t tok = weft_pipeflow_token(pf);
    atomic_fetch_add(&s->calls[1], 1);
    dserial(s, 1, tok);
    if (*(int *)in != (int)(tok * 3 + 1)) atomic_store(&s->bad, 2);
    dmid *m = out;
    snprintf(m->text, sizeof m->text, "%d", *(int *)in);
    m->tok = tok;
    return 0;
}
static int dlast(weft_pipeflow *pf, void *in, void *out, void *arg) {
    dstate *s = arg;
    uint64_t tok = weft_pipeflow_token(pf);
    atomic_fetch_add(&s->calls[2], 1);
    dserial(s, 2, tok);
    const dmid *m = in;
    if (out || m->tok != tok || atoi(m->text) != (int)(tok * 3 + 1)) atomic_store(&s->bad, 3);
    atomic_fetch_add(&s->sum, atoi(m->text));
    return 0;
}

TEST(tf_data_pipelines_pass_each_tokens_values_through_every_shape_lines_and_workers) {
    static const char *shapes[] = { "SSS", "SSP", "SPS", "SPP" };
    static dstate s;
    for (unsigned w = 1; w <= 4; w++) {
        weft_executor *ex = make_executor(w);
        for (size_t sh = 0; sh < 4; sh++) {
            for (size_t lines = 1; lines <= 4; lines++) {
                for (int sched = 0; sched <= 2; sched++) {
                    for (int i = 0; i < 3; i++)
                        s.kinds[i] = shapes[sh][i] == 'S' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL;
                    weft_data_stage st[3] = {
                        { .kind = s.kinds[0], .fn = dfirst, .arg = &s, .name = "make", .WEFT_DATA_OUT(int) },
                        { .kind = s.kinds[1], .fn = dmiddle, .arg = &s, .name = "fmt", .WEFT_DATA_IN(int),
                          .WEFT_DATA_OUT(dmid) },
                        { .kind = s.kinds[2], .fn = dlast, .arg = &s, .name = "sum", .WEFT_DATA_IN(dmid) },
                    };
                    weft_status err;
                    weft_pipeline *p = weft_data_pipeline_create(lines, st, 3, &err);
                    ASSERT_NOT_NULL(p);
                    ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)sched));
                    weft_taskflow *tf = make_taskflow("dpipe");
                    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                    uint64_t base = 0;
                    static const size_t ntoks[] = { 0, 1, 64, 3 };
                    for (size_t r = 0; r < 4; r++) {
                        s.ntok = ntoks[r];
                        s.base = base;
                        for (int i = 0; i < 3; i++) {
                            atomic_store(&s.calls[i], 0);
                            s.last_serial[i] = base;
                        }
                        atomic_store(&s.sum, 0);
                        atomic_store(&s.bad, 0);
                        ASSERT_OK(weft_run_and_wait(ex, tf));
                        ASSERT_EQ(atomic_load(&s.bad), 0);
                        ASSERT_EQ(atomic_load(&s.calls[0]), s.ntok + 1);
                        ASSERT_EQ(atomic_load(&s.calls[1]), s.ntok);
                        ASSERT_EQ(atomic_load(&s.calls[2]), s.ntok);
                        long long want = 0;
                        for (uint64_t t = base; t < base + s.ntok; t++) want += (long long)(t * 3 + 1);
                        ASSERT_EQ(atomic_load(&s.sum), want);
                        base += s.ntok;
                        ASSERT_EQ(weft_pipeline_num_tokens(p), base);
                    }
                    ASSERT_OK(weft_taskflow_destroy(tf));
                    ASSERT_OK(weft_pipeline_destroy(p));
                }
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- semaphores (test_semaphores.cpp) --------------------------------------- */

/* LinearChain: L tasks without edges; task i holds semaphores i-1 and i (each of
 * one unit) and bumps counters i-1 and i, so neighbours never overlap and every
 * plain (unsynchronised) counter ends at 2. */
enum { SEM_L = 2000 };
typedef struct chain { size_t i; size_t *counters; } chain;
static int chain_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    chain *c = arg;
    if (c->i) c->counters[c->i - 1]++;
    c->counters[c->i]++;
    return 0;
}
static int chain_async(weft_ctx *ctx, void *arg) { return chain_task(ctx, arg); }

TEST(tf_semaphores_linear_chain_of_neighbouring_semaphores_bumps_each_counter_twice_as_graph_and_async_tasks) {
    size_t *counters = xmalloc(SEM_L * sizeof *counters);
    chain *cs = xmalloc(SEM_L * sizeof *cs);
    weft_semaphore **sems = xmalloc(SEM_L * sizeof *sems);
    for (size_t i = 0; i < SEM_L; i++) {
        sems[i] = weft_semaphore_create(1, NULL);
        ASSERT_NOT_NULL(sems[i]);
        cs[i] = (chain){ i, counters };
    }
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_taskflow *tf = make_taskflow("chain");
        for (size_t i = 0; i < SEM_L; i++) {
            weft_task t = must_emplace(tf, chain_task, &cs[i]);
            if (i) {
                ASSERT_OK(weft_task_acquire(t, sems[i - 1]));
                ASSERT_OK(weft_task_release(t, sems[i - 1]));
            }
            ASSERT_OK(weft_task_acquire(t, sems[i]));
            ASSERT_OK(weft_task_release(t, sems[i]));
        }
        for (int run = 0; run < 2; run++) {
            memset(counters, 0, SEM_L * sizeof *counters);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            counters[SEM_L - 1]++;
            for (size_t i = 0; i < SEM_L; i++) ASSERT_EQ(counters[i], 2);
        }
        /* The same with async tasks holding both semaphores. */
        memset(counters, 0, SEM_L * sizeof *counters);
        for (size_t i = 0; i < SEM_L; i++) {
            weft_semaphore *two[2] = { sems[i], i ? sems[i - 1] : sems[i] };
            ASSERT_OK(weft_async_acquire(ex, chain_async, &cs[i], two, 2, NULL));
        }
        ASSERT_OK(weft_executor_wait_all(ex));
        counters[SEM_L - 1]++;
        for (size_t i = 0; i < SEM_L; i++) ASSERT_EQ(counters[i], 2);
        for (size_t i = 0; i < SEM_L; i++) ASSERT_EQ(weft_semaphore_value(sems[i]), 1);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
    for (size_t i = 0; i < SEM_L; i++) ASSERT_OK(weft_semaphore_destroy(sems[i]));
    free(sems);
    free(cs);
    free(counters);
}

/* Semaphore.Module / Semaphores.Module: a module task holding the semaphore(s)
 * its body's 1024 tasks also take; at most 2 run at once, all run. */
typedef struct semmod { atomic_int in, max, count; } semmod;
static int semmod_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    semmod *m = arg;
    int n = atomic_fetch_add(&m->in, 1) + 1;
    int mx = atomic_load(&m->max);
    while (n > mx && !atomic_compare_exchange_weak(&m->max, &mx, n)) {}
    atomic_fetch_add(&m->count, 1);
    atomic_fetch_sub(&m->in, 1);
    return 0;
}

TEST(tf_semaphores_a_module_task_and_its_bodys_tasks_sharing_one_or_ten_semaphores_all_run_two_at_a_time) {
    for (unsigned w = 1; w <= 4; w++) {
        for (size_t nsem = 1; nsem <= 10; nsem += 9) {
            weft_executor *ex = make_executor(w);
            weft_semaphore *sems[10];
            for (size_t i = 0; i < nsem; i++) ASSERT_NOT_NULL(sems[i] = weft_semaphore_create(2, NULL));
            weft_taskflow *body = make_taskflow("body"), *top = make_taskflow("top");
            static semmod m;
            atomic_store(&m.max, 0);
            atomic_store(&m.count, 0);
            for (int i = 0; i < 1024; i++) {
                weft_task t = must_emplace(body, semmod_task, &m);
                for (size_t k = 0; k < nsem; k++) {
                    ASSERT_OK(weft_task_acquire(t, sems[k]));
                    ASSERT_OK(weft_task_release(t, sems[k]));
                }
            }
            weft_task mt = weft_emplace_module(top, body);
            ASSERT_FALSE(weft_task_is_null(mt));
            for (size_t k = 0; k < nsem; k++) {
                ASSERT_OK(weft_task_acquire(mt, sems[k]));
                ASSERT_OK(weft_task_release(mt, sems[k]));
            }
            for (int run = 1; run <= 3; run++) {
                ASSERT_OK(weft_run_and_wait(ex, top));
                ASSERT_EQ(atomic_load(&m.count), 1024 * run);
            }
            ASSERT_LE(atomic_load(&m.max), 2);
            for (size_t k = 0; k < nsem; k++) ASSERT_EQ(weft_semaphore_value(sems[k]), 2);
            ASSERT_OK(weft_taskflow_destroy(top));
            ASSERT_OK(weft_taskflow_destroy(body));
            for (size_t k = 0; k < nsem; k++) ASSERT_OK(weft_semaphore_destroy(sems[k]));
            weft_executor_destroy(ex);
        }
    }
}

/* ---- dependent asyncs (test_dependent_asyncs.cpp) --------------------------- */

typedef struct dep_node { atomic_int *order; int id; int ran_at; atomic_int runs; } dep_node;
static int dep_run(weft_ctx *ctx, void *arg) {
    (void)ctx;
    dep_node *d = arg;
    d->ran_at = atomic_fetch_add(d->order, 1);
    atomic_fetch_add(&d->runs, 1);
    return 0;
}
static int dep_fail(weft_ctx *ctx, void *arg) {
    dep_run(ctx, arg);
    return 7;
}

/* One task after many: 3000 dependencies, the first half finished before it is
 * submitted, some failed, one cancelled before it ran, the same future given
 * three times, every dependency's future destroyed right after the call. */
TEST(tf_dependent_asyncs_a_task_after_thousands_of_finished_failed_cancelled_and_repeated_deps_runs_once_last) {
    enum { ND = 3000 };
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        atomic_int order = 0;
        static dep_node nodes[ND + 1];
        weft_future **fs = xmalloc((ND + 3) * sizeof *fs);
        for (int i = 0; i < ND; i++) {
            nodes[i] = (dep_node){ .order = &order, .id = i, .ran_at = -1 };
            ASSERT_OK(weft_async(ex, i % 97 == 5 ? dep_fail : dep_run, &nodes[i], &fs[i]));
            if (i == ND / 2) {
                for (int k = 0; k <= i; k++) (void)weft_future_wait(fs[k]);
            }
        }
        fs[ND] = fs[10];
        fs[ND + 1] = fs[ND - 1];
        fs[ND + 2] = fs[10];
        nodes[ND] = (dep_node){ .order = &order, .id = ND, .ran_at = -1 };
        weft_future *last;
        ASSERT_OK(weft_dependent_async(ex, dep_run, &nodes[ND], fs, ND + 3, &last));
        for (int i = 0; i < ND; i++) weft_future_destroy(fs[i]);
        ASSERT_OK(wait_destroy(last));
        for (int i = 0; i < ND; i++) ASSERT_EQ(atomic_load(&nodes[i].runs), 1);
        ASSERT_EQ(atomic_load(&nodes[ND].runs), 1);
        ASSERT_EQ(nodes[ND].ran_at, ND);
        ASSERT_OK(weft_executor_wait_all(ex));
        free(fs);
        weft_executor_destroy(ex);
    }
}

/* A dependency cancelled before it started never runs, yet its dependents do,
 * after it ("whatever its status"). */
static int block_until(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_int *go = arg;
    while (!atomic_load(go)) sleep_us(50);
    return 0;
}
TEST(tf_dependent_asyncs_after_a_cancelled_dependency_the_dependents_run_and_it_does_not) {
    weft_executor *ex = make_executor(1);
    atomic_int go = 0, order = 0;
    weft_future *blocker, *cancelled, *after, *after2;
    dep_node a = { .order = &order, .ran_at = -1 }, b = { .order = &order, .ran_at = -1 },
             c = { .order = &order, .ran_at = -1 };
    ASSERT_OK(weft_async(ex, block_until, &go, &blocker));
    ASSERT_OK(weft_dependent_async(ex, dep_run, &a, &blocker, 1, &cancelled));
    ASSERT_OK(weft_future_cancel(cancelled));
    ASSERT_OK(weft_dependent_async(ex, dep_run, &b, &cancelled, 1, &after));
    weft_future *both[2] = { cancelled, after };
    ASSERT_OK(weft_dependent_async(ex, dep_run, &c, both, 2, &after2));
    atomic_store(&go, 1);
    ASSERT_OK(wait_destroy(blocker));
    ASSERT_STATUS(wait_destroy(cancelled), WEFT_ECANCELED);
    ASSERT_OK(wait_destroy(after));
    ASSERT_OK(wait_destroy(after2));
    ASSERT_EQ(atomic_load(&a.runs), 0);
    ASSERT_EQ(atomic_load(&b.runs), 1);
    ASSERT_EQ(atomic_load(&c.runs), 1);
    ASSERT_LT(b.ran_at, c.ran_at);
    weft_executor_destroy(ex);
}

/* DependentAsync.NullDependency: Taskflow ignores an empty AsyncTask in the
 * list; weft's contract refuses anything that is not an async task's future,
 * NULL included, and queues nothing. */
TEST(tf_dependent_asyncs_a_null_dependency_is_einval_and_queues_nothing) {
    weft_executor *ex = make_executor(2);
    atomic_int order = 0;
    dep_node a = { .order = &order, .ran_at = -1 };
    weft_future *ok, *out = (weft_future *)&order;
    ASSERT_OK(weft_async(ex, dep_run, &a, &ok));
    weft_future *deps[3] = { ok, NULL, ok };
    ASSERT_STATUS(weft_dependent_async(ex, dep_run, &a, deps, 3, &out), WEFT_EINVAL);
    ASSERT_NULL(out);
    ASSERT_STATUS(weft_dependent_async(ex, dep_run, &a, deps, 3, NULL), WEFT_EINVAL);
    ASSERT_OK(wait_destroy(ok));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_EQ(atomic_load(&a.runs), 1);
    weft_executor_destroy(ex);
}

/* ---- find_if / find_if_not / min_element / max_element (test_find.cpp) ----
 *
 * n = 0..256, then 2n + 1 up to 65536; values rand() % (2n) + 1 (so repeats);
 * every partitioner with chunks 0, 1, 3, 7, 99; the first matching index. */
static bool is5(const void *e, void *arg) { (void)arg; return *(const int *)e == 5; }
static bool is0(const void *e, void *arg) { (void)arg; return *(const int *)e == 0; }
/* find_if_not(x == first value): the first index whose value differs. */
static bool not_eq_arg(const void *e, void *arg) { return *(const int *)e != *(const int *)arg; }
static int cmp_int(const void *a, const void *b, void *arg) {
    (void)arg;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

TEST(tf_find_if_find_if_not_min_and_max_element_give_the_first_index_for_every_size_chunk_and_partitioner) {
    static const size_t chunks[] = { 0, 1, 3, 7, 99 };
    int *in = xmalloc(65536 * sizeof *in);
    uint64_t seed = 44;
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        size_t top = (size_t)test_scale(65536); /* sanitizer builds: fewer of the large sizes */
        for (size_t n = 0; n <= 65536 && (n <= 256 || n <= top); n <= 256 ? n++ : (n = 2 * n + 1)) {
            if (n > 4096 && w == 2) continue; /* keep the test short */
            for (size_t i = 0; i < n; i++) in[i] = (int)(test_rand(&seed) % (2 * n)) + 1;
            /* a run of equal values at the front for find_if_not, now and then */
            if (n > 3 && n % 3 == 0) for (size_t i = 0; i < n / 2; i++) in[i] = in[0];
            size_t f5 = n, f0 = n, fne = n, mn = n, mx = n;
            for (size_t i = 0; i < n; i++) {
                if (f5 == n && in[i] == 5) f5 = i;
                if (fne == n && in[i] != in[0]) fne = i;
                if (mn == n || in[i] < in[mn]) mn = i;
                if (mx == n || in[i] > in[mx]) mx = i;
            }
            for (int p = 0; p < 4; p++) {
                for (size_t c = 0; c < 5; c++) {
                    weft_algo_config cfg = { .partitioner = (weft_partitioner)p, .chunk = chunks[c] };
                    size_t r = SIZE_MAX;
                    int first = n ? in[0] : 0;
                    ASSERT_OK(weft_parallel_find_if(ex, in, n, sizeof *in, is5, NULL, &r, &cfg));
                    ASSERT_EQ(r, f5);
                    ASSERT_OK(weft_parallel_find_if(ex, in, n, sizeof *in, is0, NULL, &r, &cfg));
                    ASSERT_EQ(r, f0);
                    ASSERT_OK(weft_parallel_find_if(ex, in, n, sizeof *in, not_eq_arg, &first, &r, &cfg));
                    ASSERT_EQ(r, fne);
                    ASSERT_OK(weft_parallel_min_element(ex, in, n, sizeof *in, cmp_int, NULL, &r, &cfg));
                    if (r != mn) TEST_FAIL_("min n=%zu p=%d c=%zu w=%u: %zu vs %zu", n, p, chunks[c], w, r, mn);
                    ASSERT_OK(weft_parallel_max_element(ex, in, n, sizeof *in, cmp_int, NULL, &r, &cfg));
                    if (r != mx) TEST_FAIL_("max n=%zu p=%d c=%zu w=%u: %zu vs %zu", n, p, chunks[c], w, r, mx);
                }
            }
        }
        weft_executor_destroy(ex);
    }
    free(in);
}

/* ---- scans (test_scan.cpp): n = 0..17 and large, every partitioner and chunk,
 *      with and without init, in place and not, int + and int *, and the
 *      transformed scans (Taskflow's transform_inclusive/exclusive_scan) as
 *      range scans applying the transform in both bodies. ---- */
static void add_int(void *acc, const void *x, void *arg) { (void)arg; *(int *)acc += *(const int *)x; }
static void mul_int(void *acc, const void *x, void *arg) {
    (void)arg;
    *(int *)acc = (int)((unsigned)*(int *)acc * (unsigned)*(const int *)x);
}
typedef struct tscan { const int *in; int *out; bool mul, exclusive; } tscan;
static int tmap(int v) { return v * 2 + 1; }
static int tcomb(const tscan *t, int a, int b) { return t->mul ? (int)((unsigned)a * (unsigned)b) : a + b; }
static void tscan_op(void *acc, const void *x, void *arg) { *(int *)acc = tcomb(arg, *(int *)acc, *(const int *)x); }
static void tscan_reduce(size_t lo, size_t hi, void *acc, void *arg) {
    const tscan *t = arg;
    int a = tmap(t->in[lo]);
    for (size_t i = lo + 1; i < hi; i++) a = tcomb(t, a, tmap(t->in[i]));
    *(int *)acc = a;
}
static void tscan_scan(size_t lo, size_t hi, void *acc, bool has_acc, void *arg) {
    const tscan *t = arg;
    int a = has_acc ? *(int *)acc : 0;
    bool have = has_acc;
    for (size_t i = lo; i < hi; i++) {
        int v = tmap(t->in[i]);
        if (t->exclusive) {
            t->out[i] = a; /* the exclusive form always has an init */
            a = tcomb(t, a, v);
        } else {
            a = have ? tcomb(t, a, v) : v;
            have = true;
            t->out[i] = a;
        }
    }
}

TEST(tf_scans_inclusive_exclusive_and_transformed_equal_the_serial_scan_for_n_0_to_17_and_large) {
    static const size_t chunks[] = { 0, 1, 3, 7, 99 };
    enum { BIG = 100003 };
    int *in = xmalloc(BIG * sizeof *in), *out = xmalloc(BIG * sizeof *out), *want = xmalloc(BIG * sizeof *want);
    uint64_t seed = 7;
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        size_t big = (size_t)test_scale(BIG) < 1001 ? 1001 : (size_t)test_scale(BIG);
        for (size_t n = 0; n <= big; n = n < 17 ? n + 1 : (n == 17 ? 1000 : (n == 1000 ? big : big + 1))) {
            for (size_t i = 0; i < n; i++) in[i] = (int)(test_rand(&seed) % 7) - 2;
            for (int p = 0; p < 4; p++) {
                for (size_t c = 0; c < 5; c++) {
                    if (n > 17 && c != 0 && c != 4) continue;
                    weft_algo_config cfg = { .partitioner = (weft_partitioner)p, .chunk = chunks[c] };
                    for (int mul = 0; mul < 2; mul++) {
                        weft_combine_fn op = mul ? mul_int : add_int;
                        for (int kind = 0; kind < 5; kind++) { /* incl, incl+init, excl, tincl, texcl */
                            for (int inplace = 0; inplace < 2; inplace++) {
                                int init = mul ? 3 : 10;
                                /* serial answer */
                                int a = init;
                                bool have = kind == 1 || kind == 2 || kind == 4;
                                for (size_t i = 0; i < n; i++) {
                                    int v = kind >= 3 ? tmap(in[i]) : in[i];
                                    tscan ts = { .mul = mul };
                                    if (kind == 2 || kind == 4) {
                                        want[i] = a;
                                        a = tcomb(&ts, a, v);
                                    } else {
                                        a = have ? tcomb(&ts, a, v) : v;
                                        have = true;
                                        want[i] = a;
                                    }
                                }
                                int *dst = out;
                                if (inplace) {
                                    if (kind >= 3) continue; /* the range bodies read in[] as they write */
                                    memcpy(out, in, n * sizeof *in);
                                }
                                const int *src = inplace ? out : in;
                                if (n) memset(inplace ? want + n : out, 0, 0);
                                if (!inplace && n) memset(out, 0x55, n * sizeof *out);
                                weft_status st;
                                if (kind == 0)
                                    st = weft_parallel_inclusive_scan(ex, src, dst, n, sizeof(int), NULL, op, NULL, &cfg);
                                else if (kind == 1)
                                    st = weft_parallel_inclusive_scan(ex, src, dst, n, sizeof(int), &init, op, NULL, &cfg);
                                else if (kind == 2)
                                    st = weft_parallel_exclusive_scan(ex, src, dst, n, sizeof(int), &init, op, NULL, &cfg);
                                else {
                                    tscan ts = { in, out, mul, kind == 4 };
                                    st = weft_parallel_scan_range(ex, n, sizeof(int), kind == 4 ? &init : NULL,
                                                                  tscan_reduce, tscan_scan, tscan_op, &ts, &cfg);
                                }
                                ASSERT_OK(st);
                                for (size_t i = 0; i < n; i++)
                                    if (out[i] != want[i])
                                        TEST_FAIL_("kind %d mul %d inplace %d n %zu p %d c %zu w %u: out[%zu] = %d, want %d",
                                                   kind, mul, inplace, n, p, chunks[c], w, i, out[i], want[i]);
                            }
                        }
                    }
                }
            }
        }
        weft_executor_destroy(ex);
    }
    free(in);
    free(out);
    free(want);
}

/* ---- a pipeline run that failed or was cancelled, then run again ------------
 *
 * Taskflow's pipelines rerun from where they stopped; weft's contract: a
 * failing stage ends the run (tokens in flight finish), and the next run goes
 * on from the pipeline's token count.  The rerun must see every token from
 * weft_pipeline_num_tokens on exactly once, in order at serial stages. */
typedef struct pfail { pstate *s; uint64_t fail_at; int mode; weft_future *run; } pfail;
static pfail g_pfail;
static int pstage_maybe_fail(weft_pipeflow *pf, void *arg) {
    pstate *s = arg;
    uint64_t tok = weft_pipeflow_token(pf);
    if (g_pfail.mode && tok == g_pfail.fail_at) {
        if (g_pfail.mode == 1) return 42;
        /* mode 2: cancel the run from the stage */
        (void)weft_future_cancel((weft_future *)weft_pipeflow_run(pf));
    }
    (void)s;
    return pstage(pf, arg);
}

TEST(tf_pipelines_rerun_after_a_failed_or_cancelled_run_sees_every_later_token_once_in_order) {
    static pstate s;
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (int sched = 0; sched <= 2; sched++) {
            for (int mode = 1; mode <= 2; mode++) {
                for (size_t lines = 1; lines <= 4; lines += 3) {
                    static const char *shape = "SPS";
                    weft_stage st[3];
                    for (size_t i = 0; i < 3; i++) {
                        s.kinds[i] = shape[i] == 'S' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL;
                        st[i] = (weft_stage){ s.kinds[i], i == 1 ? pstage_maybe_fail : (i == 2 ? pstage_last : pstage), &s,
                                              "st" };
                    }
                    weft_pipeline *p = weft_pipeline_create(lines, st, 3, NULL);
                    ASSERT_NOT_NULL(p);
                    ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)sched));
                    weft_taskflow *tf = make_taskflow("pipe");
                    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                    s.lines = lines;
                    atomic_store(&s.bad, 0);
                    /* run 1: stage 1 fails (or cancels) at token 20 of 1000 */
                    s.ntok = 1000;
                    pstate_reset(&s, 0);
                    g_pfail = (pfail){ &s, 20, mode, NULL };
                    weft_status r1 = weft_run_and_wait(ex, tf);
                    ASSERT_STATUS(r1, mode == 1 ? WEFT_ETASK : WEFT_ECANCELED);
                    uint64_t made = weft_pipeline_num_tokens(p);
                    ASSERT_GE(made, 21);
                    ASSERT_LT(made, 1000);
                    /* run 2: no failure; tokens go on from `made` */
                    g_pfail.mode = 0;
                    s.ntok = 50;
                    pstate_reset(&s, made);
                    atomic_store(&s.bad, 0);
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    pcheck(&s, 3, lines);
                    ASSERT_EQ(weft_pipeline_num_tokens(p), made + 50);
                    ASSERT_OK(weft_taskflow_destroy(tf));
                    ASSERT_OK(weft_pipeline_destroy(p));
                }
            }
        }
        weft_executor_destroy(ex);
    }
}

/* ---- transform with two inputs in place (test_transform.cpp's
 *      ParallelTransform2: std::transform(a, a + n, b, a, op)) ---- */
static void add_i64_i32(const void *a, const void *b, void *out, void *arg) {
    (void)arg;
    *(int64_t *)out = *(const int64_t *)a * 3 + *(const int32_t *)b;
}
static void add_i32_i64(const void *a, const void *b, void *out, void *arg) {
    (void)arg;
    *(int64_t *)out = *(const int32_t *)a * 3 + *(const int64_t *)b;
}

TEST(tf_transform2_in_place_over_either_input_is_exact_and_mismatched_sizes_in_place_are_einval) {
    enum { N = 20011 };
    int64_t *a = xmalloc(N * sizeof *a), *want = xmalloc(N * sizeof *want);
    int32_t *b = xmalloc(N * sizeof *b);
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (size_t c = 0; c < NCONFIGS; c++) {
            for (size_t i = 0; i < N; i++) {
                a[i] = (int64_t)i * 7 - 5;
                b[i] = (int32_t)(i % 101);
                want[i] = a[i] * 3 + b[i];
            }
            /* out == a (same sizes) */
            ASSERT_OK(weft_parallel_transform2(ex, a, sizeof *a, b, sizeof *b, a, sizeof *a, N, add_i64_i32, NULL,
                                               &CONFIGS[c]));
            for (size_t i = 0; i < N; i++) ASSERT_EQ(a[i], want[i]);
            /* out == b (b's elements as wide as out's): a second array of int64 */
            int64_t *bb = a;
            int32_t *aa = b;
            for (size_t i = 0; i < N; i++) want[i] = (int64_t)aa[i] * 3 + bb[i];
            ASSERT_OK(weft_parallel_transform2(ex, aa, sizeof *aa, bb, sizeof *bb, bb, sizeof *bb, N, add_i32_i64,
                                               NULL, &CONFIGS[c]));
            for (size_t i = 0; i < N; i++) ASSERT_EQ(bb[i], want[i]);
        }
        /* in place with an output wider than that input: the writes of element i
         * would land on inputs i + 1 ... of other chunks; like
         * weft_parallel_transform's in == out with in_size != out_size, refused
         * and nothing written. */
        for (size_t i = 0; i < N; i++) b[i] = (int32_t)i;
        ASSERT_STATUS(weft_parallel_transform2(ex, a, sizeof *a, b, sizeof *b, b, sizeof *a, N / 2, add_i64_i32,
                                               NULL, NULL),
                      WEFT_EINVAL);
        ASSERT_STATUS(weft_parallel_transform2(ex, b, sizeof *b, a, sizeof *a, b, sizeof *a, N / 2, add_i32_i64,
                                               NULL, NULL),
                      WEFT_EINVAL);
        for (size_t i = 0; i < N; i++) ASSERT_EQ(b[i], (int32_t)i);
        /* empty: (NULL, 0) in place is fine */
        ASSERT_OK(weft_parallel_transform2(ex, b, sizeof *b, a, sizeof *a, b, sizeof *a, 0, add_i32_i64, NULL, NULL));
        weft_executor_destroy(ex);
    }
    free(a);
    free(b);
    free(want);
}

/* ---- subflows (test_subflows.cpp, BitState): every execution of a subflow
 *      task starts with an empty, joinable graph; the graph of the last
 *      execution is kept (Taskflow's retain) and drawn after the run. ---- */
typedef struct sfstate { atomic_int execs, children, bad; } sfstate;
static int sf_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    atomic_fetch_add(&((sfstate *)arg)->children, 1);
    return 0;
}
static int sf_body(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    sfstate *s = arg;
    int k = atomic_fetch_add(&s->execs, 1);
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_taskflow_num_tasks(g) != 0 || weft_subflow_detached(sf)) atomic_store(&s->bad, 1);
    /* execution k builds k % 5 + 1 children, named for the execution */
    for (int i = 0; i <= k % 5; i++) {
        weft_task t = weft_emplace(g, sf_child, s);
        char name[32];
        snprintf(name, sizeof name, "child%d_%d", k, i);
        if (weft_task_is_null(t) || weft_task_set_name(t, name) != WEFT_OK) atomic_store(&s->bad, 2);
    }
    if (k % 2) {
        if (weft_subflow_join(sf) != WEFT_OK) atomic_store(&s->bad, 3);
        if (weft_subflow_detach(sf) != WEFT_EINVAL) atomic_store(&s->bad, 4);
        if (weft_subflow_detached(sf)) atomic_store(&s->bad, 5);
    }
    return 0;
}
static int sf_loop(weft_ctx *ctx, void *arg) {
    (void)ctx;
    int *i = arg;
    return (*i)++ < 100 ? 0 : 1;
}

TEST(tf_subflows_each_execution_in_a_condition_loop_starts_empty_and_joinable_and_the_last_graph_is_drawn) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_taskflow *tf = make_taskflow("bits");
        static sfstate s;
        atomic_store(&s.execs, 0);
        atomic_store(&s.children, 0);
        atomic_store(&s.bad, 0);
        int i = 0;
        weft_task init = must_emplace(tf, noop, NULL);
        weft_task task = weft_emplace_subflow(tf, sf_body, &s);
        weft_task cond = weft_emplace_condition(tf, sf_loop, &i);
        ASSERT_OK(weft_precede(init, task));
        ASSERT_OK(weft_precede(task, cond));
        ASSERT_OK(weft_precede(cond, task));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&s.bad), 0);
        ASSERT_EQ(atomic_load(&s.execs), 101);
        int want = 0;
        for (int k = 0; k < 101; k++) want += k % 5 + 1;
        ASSERT_EQ(atomic_load(&s.children), want);
        /* the last execution (k = 100) built 1 child: only it is drawn */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ASSERT_OK(weft_taskflow_dump_dot(tf, f));
        fclose(f);
        ASSERT_NOT_NULL(strstr(buf, "child100_0"));
        ASSERT_NULL(strstr(buf, "child99_"));
        free(buf);
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- sort (test_sort.cpp): sizes 0..17 and 100000, random, sorted, reversed,
 *      nearly sorted, all equal; a descending comparator with a payload for
 *      stability; called directly, from an async task, from a dependent async
 *      task and as an emplaced task; 1, 2, 4 workers. ---- */
typedef struct kv { int key; unsigned pos; } kv;
static int cmp_kv_desc(const void *a, const void *b, void *arg) {
    (void)arg;
    int x = ((const kv *)a)->key, y = ((const kv *)b)->key;
    return (y > x) - (y < x);
}
typedef struct sortjob { weft_executor *ex; kv *v; size_t n; bool stable; weft_status st; } sortjob;
static int sort_in_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    sortjob *j = arg;
    j->st = j->stable ? weft_parallel_stable_sort(j->ex, j->v, j->n, sizeof(kv), cmp_kv_desc, NULL, NULL)
                      : weft_parallel_sort(j->ex, j->v, j->n, sizeof(kv), cmp_kv_desc, NULL, NULL);
    return 0;
}
static void fill_kv(kv *v, size_t n, int pattern, uint64_t *seed) {
    for (size_t i = 0; i < n; i++) {
        int k;
        switch (pattern) {
        case 0: k = (int)(test_rand(seed) % (n / 4 + 1)); break;  /* random with many ties */
        case 1: k = (int)i; break;                                /* ascending (reverse of the order) */
        case 2: k = (int)(n - i); break;                          /* already sorted descending */
        case 3: k = (int)(n - i) + ((i % 97 == 3) ? 5 : 0); break; /* nearly sorted */
        default: k = 42; break;                                   /* all equal */
        }
        v[i] = (kv){ k, (unsigned)i };
    }
}
static void check_sorted_kv(const kv *v, size_t n, bool stable, const char *how) {
    for (size_t i = 1; i < n; i++) {
        if (v[i - 1].key < v[i].key) TEST_FAIL_("%s: n %zu not sorted at %zu", how, n, i);
        if (stable && v[i - 1].key == v[i].key && v[i - 1].pos > v[i].pos)
            TEST_FAIL_("%s: n %zu not stable at %zu", how, n, i);
    }
    /* a permutation: every pos once */
    unsigned char *seen = calloc(n + 1, 1);
    for (size_t i = 0; i < n; i++) {
        if (v[i].pos >= n || seen[v[i].pos]++) TEST_FAIL_("%s: n %zu not a permutation", how, n);
    }
    free(seen);
}

TEST(tf_sorts_with_a_descending_comparator_are_sorted_and_stable_from_every_kind_of_caller) {
    enum { BIGN = 100000 };
    kv *v = xmalloc(BIGN * sizeof *v);
    uint64_t seed = 99;
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        size_t bign = (size_t)test_scale(BIGN) < 1001 ? 1001 : (size_t)test_scale(BIGN);
        for (size_t n = 0; n <= bign; n = n < 17 ? n + 1 : (n == 17 ? 1000 : (n == 1000 ? bign : bign + 1))) {
            for (int pattern = 0; pattern < 5; pattern++) {
                for (int stable = 0; stable < 2; stable++) {
                    for (int how = 0; how < 4; how++) {
                        if (n == bign && how != pattern % 4) continue;
                        fill_kv(v, n, pattern, &seed);
                        sortjob j = { ex, v, n, stable, WEFT_EINVAL };
                        weft_future *f = NULL, *f2 = NULL;
                        switch (how) {
                        case 0: (void)sort_in_task(NULL, &j); break;
                        case 1:
                            ASSERT_OK(weft_async(ex, sort_in_task, &j, &f));
                            ASSERT_OK(wait_destroy(f));
                            break;
                        case 2:
                            ASSERT_OK(weft_async(ex, noop, NULL, &f));
                            ASSERT_OK(weft_dependent_async(ex, sort_in_task, &j, &f, 1, &f2));
                            weft_future_destroy(f);
                            ASSERT_OK(wait_destroy(f2));
                            break;
                        default: {
                            weft_taskflow *tf = make_taskflow("sort");
                            weft_sort_desc d = { v, n, sizeof(kv), cmp_kv_desc, NULL, stable, { 0 } };
                            ASSERT_FALSE(weft_task_is_null(weft_emplace_sort(tf, &d)));
                            ASSERT_OK(weft_run_and_wait(ex, tf));
                            ASSERT_OK(weft_taskflow_destroy(tf));
                            j.st = WEFT_OK;
                        }
                        }
                        ASSERT_OK(j.st);
                        /* the generic sort happens to be stable too (weft/algo.h) */
                        check_sorted_kv(v, n, true, how == 0 ? "direct" : how == 1 ? "async" : how == 2 ? "dependent" : "emplaced");
                    }
                }
            }
        }
        weft_executor_destroy(ex);
    }
    free(v);
}

/* ---- cancellation (test_cancellation.cpp) ----------------------------------
 *
 * CancelComposition: F4 = module(F3) -> module(F2), F3 = module(F2) + f3A,
 * F2 = f2A, f2B -> f2C + module(F1), F1 = f1A, f1B: eleven leaf tasks per run,
 * F2 the body of two modules of one run.  Rounds of 100 runs of F4 queued at
 * once, most cancelled right away: every run ends, a completed run ran each of
 * its eleven leaves once (tasks say which run they belong to through
 * weft_ctx_run, also inside the modules), a cancelled one at most that, and
 * afterwards every taskflow is idle (destroy succeeds). */
enum { CC_RUNS = 100 };
static weft_future *cc_futs[CC_RUNS];
static atomic_int cc_count[CC_RUNS], cc_bad;
static int cc_leaf(weft_ctx *ctx, void *arg) {
    (void)arg;
    const weft_future *run = weft_ctx_run(ctx);
    for (int i = 0; i < CC_RUNS; i++)
        if (cc_futs[i] == run) {
            atomic_fetch_add(&cc_count[i], 1);
            return 0;
        }
    atomic_store(&cc_bad, 1);
    return 0;
}

TEST(tf_cancel_composition_runs_of_nested_modules_cancelled_while_queued_all_end_and_completed_ones_run_each_leaf_once) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_taskflow *f1 = make_taskflow("F1"), *f2 = make_taskflow("F2"), *f3 = make_taskflow("F3"),
                      *f4 = make_taskflow("F4");
        must_emplace(f1, cc_leaf, NULL);
        must_emplace(f1, cc_leaf, NULL);
        weft_task a = must_emplace(f2, cc_leaf, NULL), b = must_emplace(f2, cc_leaf, NULL),
                  c = must_emplace(f2, cc_leaf, NULL);
        ASSERT_OK(weft_precede(a, c));
        ASSERT_OK(weft_precede(b, c));
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(f2, f1)));
        ASSERT_FALSE(weft_task_is_null(weft_emplace_module(f3, f2)));
        must_emplace(f3, cc_leaf, NULL);
        weft_task m3 = weft_emplace_module(f4, f3), m2 = weft_emplace_module(f4, f2);
        ASSERT_OK(weft_precede(m3, m2));
        /* the futures array is written before any task reads it: runs are
         * submitted while a blocker run of F1's... simpler: a gate task. */
        for (int round = 0; round < 20; round++) {
            /* hold the executor so the runs queue before any starts */
            atomic_int go = 0;
            weft_future *gate[4];
            for (unsigned k = 0; k < w; k++) ASSERT_OK(weft_async(ex, block_until, &go, &gate[k]));
            for (int i = 0; i < CC_RUNS; i++) {
                atomic_store(&cc_count[i], 0);
                ASSERT_OK(weft_run(ex, f4, &cc_futs[i]));
            }
            for (int i = 0; i < CC_RUNS; i++)
                if ((i + round) % 4 != 0) ASSERT_OK(weft_future_cancel(cc_futs[i]));
            atomic_store(&go, 1);
            for (unsigned k = 0; k < w; k++) ASSERT_OK(wait_destroy(gate[k]));
            ASSERT_OK(weft_executor_wait_all(ex));
            for (int i = 0; i < CC_RUNS; i++) {
                weft_status st = weft_future_status(cc_futs[i]);
                if ((i + round) % 4 != 0) {
                    ASSERT_STATUS(st, WEFT_ECANCELED);
                    ASSERT_LE(atomic_load(&cc_count[i]), 11);
                } else {
                    ASSERT_OK(st);
                    if (atomic_load(&cc_count[i]) != 11)
                        TEST_FAIL_("w %u round %d run %d ran %d leaves", w, round, i, atomic_load(&cc_count[i]));
                }
            }
            for (int i = 0; i < CC_RUNS; i++) weft_future_destroy(cc_futs[i]);
            memset(cc_futs, 0, sizeof cc_futs);
        }
        ASSERT_EQ(atomic_load(&cc_bad), 0);
        ASSERT_OK(weft_taskflow_destroy(f4));
        ASSERT_OK(weft_taskflow_destroy(f3));
        ASSERT_OK(weft_taskflow_destroy(f2));
        ASSERT_OK(weft_taskflow_destroy(f1));
        weft_executor_destroy(ex);
    }
}

/* CancelInfiniteLoop: a hundred self-looping conditions, cancelled: the run
 * ends, ECANCELED; and CancelFromAnother: a task of another taskflow cancels. */
static int loop_forever(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    return 0;
}
static int cancel_it(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return weft_future_cancel(*(weft_future **)arg) == WEFT_OK ? 0 : 1;
}
TEST(tf_cancel_infinite_condition_loops_end_when_cancelled_directly_or_from_another_taskflows_task) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_taskflow *tf = make_taskflow("loops"), *other = make_taskflow("other");
        for (int i = 0; i < 100; i++) {
            weft_task a = must_emplace(tf, noop, NULL);
            weft_task b = weft_emplace_condition(tf, loop_forever, NULL);
            ASSERT_OK(weft_precede(a, b));
            ASSERT_OK(weft_precede(b, b));
        }
        weft_future *f;
        ASSERT_OK(weft_run(ex, tf, &f));
        ASSERT_OK(weft_future_cancel(f));
        ASSERT_STATUS(wait_destroy(f), WEFT_ECANCELED);
        ASSERT_OK(weft_run(ex, tf, &f));
        sleep_us(2000);
        ASSERT_FALSE(weft_future_ready(f));
        must_emplace(other, cancel_it, &f);
        ASSERT_OK(weft_run_and_wait(ex, other));
        ASSERT_STATUS(wait_destroy(f), WEFT_ECANCELED);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(other));
        weft_executor_destroy(ex);
    }
}

/* ---- Runtime.ImplicitJoin / RecursiveImplicitJoin (test_runtimes.cpp) ------
 *
 * Spawns a task leaves unsynced are synced by weft when it returns (weft/
 * forkjoin.h): a task of every kind spawns 100 children, each spawning 10
 * grandchildren, none synced; its successor sees all 1100 counted. */
enum { IJ_N1 = 100, IJ_N2 = 10 };
static atomic_long ij_count;
static atomic_int ij_bad;
static int ij_leaf(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_add(&ij_count, 1);
    return 0;
}
static int ij_child(weft_ctx *ctx, void *arg) {
    (void)arg;
    atomic_fetch_add(&ij_count, 1);
    for (int j = 0; j < IJ_N2; j++)
        if (weft_spawn(ctx, ij_leaf, NULL) != WEFT_OK) atomic_store(&ij_bad, 1);
    return 0;
}
static void ij_spawn_all(weft_ctx *ctx) {
    for (int i = 0; i < IJ_N1; i++)
        if (weft_spawn(ctx, ij_child, NULL) != WEFT_OK) atomic_store(&ij_bad, 2);
}
static int ij_plain(weft_ctx *ctx, void *arg) { (void)arg; ij_spawn_all(ctx); return 0; }
static int ij_cond(weft_ctx *ctx, void *arg) { (void)arg; ij_spawn_all(ctx); return 0; }
static int ij_mcond(weft_ctx *ctx, void *arg, weft_branches *b) {
    (void)arg;
    ij_spawn_all(ctx);
    return weft_branches_add(b, 0) == WEFT_OK ? 0 : 1;
}
static int ij_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)sf;
    (void)arg;
    ij_spawn_all(ctx);
    return 0;
}
typedef struct ij_check { long want; } ij_check;
static int ij_checker(weft_ctx *ctx, void *arg) {
    (void)ctx;
    ij_check *c = arg;
    long got = atomic_load(&ij_count);
    if (got != c->want) {
        fprintf(stderr, "implicit join: counted %ld, want %ld\n", got, c->want);
        atomic_store(&ij_bad, 3);
    }
    c->want += IJ_N1 + IJ_N1 * IJ_N2;
    return 0;
}

TEST(tf_runtime_implicit_join_of_unsynced_spawns_in_every_kind_of_task_counts_all_before_its_successor) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        atomic_store(&ij_count, 0);
        atomic_store(&ij_bad, 0);
        static ij_check chk;
        chk.want = IJ_N1 + IJ_N1 * IJ_N2;
        /* plain -> check -> condition -> check -> multi-condition -> check ->
         * subflow -> check -> module(body: plain) -> check */
        weft_taskflow *tf = make_taskflow("ij"), *body = make_taskflow("body");
        must_emplace(body, ij_plain, NULL);
        weft_task t[10];
        t[0] = must_emplace(tf, ij_plain, NULL);
        t[1] = must_emplace(tf, ij_checker, &chk);
        t[2] = weft_emplace_condition(tf, ij_cond, NULL);
        t[3] = must_emplace(tf, ij_checker, &chk);
        t[4] = weft_emplace_multi_condition(tf, ij_mcond, NULL);
        t[5] = must_emplace(tf, ij_checker, &chk);
        t[6] = weft_emplace_subflow(tf, ij_subflow, NULL);
        t[7] = must_emplace(tf, ij_checker, &chk);
        t[8] = weft_emplace_module(tf, body);
        t[9] = must_emplace(tf, ij_checker, &chk);
        for (int i = 0; i < 10; i++) ASSERT_FALSE(weft_task_is_null(t[i]));
        ASSERT_OK(weft_linearize(t, 10));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&ij_bad), 0);
        ASSERT_EQ(atomic_load(&ij_count), 5 * (IJ_N1 + IJ_N1 * IJ_N2));
        /* async and dependent async tasks: their futures are ready only after
         * the implicit sync */
        for (int k = 0; k < 3; k++) {
            atomic_store(&ij_count, 0);
            weft_future *f, *g;
            ASSERT_OK(weft_async(ex, ij_plain, NULL, &f));
            ASSERT_OK(weft_dependent_async(ex, ij_plain, NULL, &f, 1, &g));
            ASSERT_OK(wait_destroy(f));
            ASSERT_OK(wait_destroy(g));
            ASSERT_EQ(atomic_load(&ij_count), 2 * (IJ_N1 + IJ_N1 * IJ_N2));
            atomic_store(&ij_count, 0);
            ASSERT_OK(weft_silent_async(ex, ij_plain, NULL));
            ASSERT_OK(weft_executor_wait_all(ex));
            ASSERT_EQ(atomic_load(&ij_count), IJ_N1 + IJ_N1 * IJ_N2);
        }
        ASSERT_EQ(atomic_load(&ij_bad), 0);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(body));
        weft_executor_destroy(ex);
    }
}

/* ---- run_until / run_n (Taskflow's executor.run_until(tf, pred)) ------------
 *
 * A predicate that itself runs a parallel reduction over the iteration's output
 * (it runs on a worker, between iterations), with a pipeline and a loop task in
 * the taskflow: iterations counted exactly, tokens go on across iterations,
 * weft_ctx_iteration numbers the iterations. */
typedef struct ru {
    weft_executor *ex;
    uint64_t *v;
    size_t n;
    int iters, stop_after;
    atomic_int bad;
    uint64_t sums[64];
} ru;
static ru g_ru;
static int ru_made; /* tokens of this iteration's pipeline run; ru_task zeroes it */
static void ru_fill(size_t i, void *arg) {
    ru *r = arg;
    r->v[i] = i * (uint64_t)r->iters; /* iteration k runs after the k + 1-th pred call */
}
static int ru_task(weft_ctx *ctx, void *arg) {
    ru *r = arg;
    ru_made = 0;
    if (weft_ctx_iteration(ctx) + 1 != (uint64_t)r->iters) atomic_store(&r->bad, 1);
    return weft_parallel_for(r->ex, 0, r->n, 1, ru_fill, r, NULL) == WEFT_OK ? 0 : 2;
}
static bool ru_pred(void *arg) {
    ru *r = arg;
    if (r->iters > 0) {
        uint64_t s = 0;
        if (weft_parallel_reduce(r->ex, r->v, r->n, sizeof(uint64_t), &s, add_u64, NULL, NULL) != WEFT_OK)
            atomic_store(&r->bad, 3);
        r->sums[r->iters - 1] = s;
    }
    return r->iters++ == r->stop_after;
}
static int ru_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (ru_made++ == 9) weft_pipeflow_stop(pf); /* the stopping token is not counted */
    return 0;
}

TEST(tf_run_until_with_a_predicate_running_parallel_calls_and_a_pipeline_counts_iterations_and_tokens_exactly) {
    enum { N = 50000 };
    g_ru.v = xmalloc(N * sizeof *g_ru.v);
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_taskflow *tf = make_taskflow("ru");
        weft_stage st = { WEFT_STAGE_SERIAL, ru_stage, NULL, "s" };
        weft_pipeline *p = weft_pipeline_create(2, &st, 1, NULL);
        ASSERT_NOT_NULL(p);
        weft_task a = must_emplace(tf, ru_task, &g_ru), b = weft_pipeline_emplace(tf, p);
        ASSERT_OK(weft_precede(a, b));
        for (int stop = 0; stop <= 7; stop += 7) {
            g_ru.ex = ex;
            g_ru.n = N;
            g_ru.iters = 0;
            g_ru.stop_after = stop;
            atomic_store(&g_ru.bad, 0);
            ASSERT_OK(weft_pipeline_reset(p));
            weft_future *f;
            ASSERT_OK(weft_run_until(ex, tf, ru_pred, &g_ru, &f));
            ASSERT_OK(weft_future_wait(f));
            weft_run_info info;
            ASSERT_OK(weft_future_info(f, &info));
            weft_future_destroy(f);
            ASSERT_EQ(atomic_load(&g_ru.bad), 0);
            ASSERT_EQ(info.iterations, (uint64_t)stop);
            ASSERT_EQ(weft_pipeline_num_tokens(p), 9 * (uint64_t)stop);
            for (int k = 0; k < stop; k++)
                ASSERT_EQ(g_ru.sums[k], (uint64_t)(k + 1) * ((uint64_t)N * (N - 1) / 2));
        }
        /* run_n of 0, then of 3: tokens 27 more */
        ASSERT_OK(weft_pipeline_reset(p));
        g_ru.iters = 0;
        weft_future *f;
        ASSERT_OK(weft_run_n(ex, tf, 0, &f));
        ASSERT_OK(wait_destroy(f));
        ASSERT_EQ(weft_pipeline_num_tokens(p), 0);
        ASSERT_OK(weft_run_n(ex, tf, 3, &f));
        ASSERT_OK(wait_destroy(f));
        ASSERT_EQ(weft_pipeline_num_tokens(p), 27);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(p));
        weft_executor_destroy(ex);
    }
    free(g_ru.v);
}

/* ---- typed sorts of long double and of objects (ParallelSort.ldouble,
 *      ParallelSort.object), with the stable form keeping ties in order ---- */
#define LD_LT(a, b) ((a) < (b))
WEFT_ALGO_SORT(tfp_ld, long double, LD_LT)
typedef struct tfobj { int key; unsigned pos; char pad[20]; } tfobj;
#define OBJ_LT(a, b) ((a).key < (b).key)
WEFT_ALGO_SORT(tfp_obj, tfobj, OBJ_LT)

TEST(tf_typed_sorts_of_long_doubles_and_objects_sort_exactly_and_the_stable_form_keeps_ties_in_order) {
    enum { N = 100000 };
    long double *ld = xmalloc(N * sizeof *ld);
    tfobj *ob = xmalloc(N * sizeof *ob);
    uint64_t seed = 5;
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        size_t big = (size_t)test_scale(N) < 4100 ? 4100 : (size_t)test_scale(N);
        for (size_t n = 0; n <= big; n = n < 17 ? n + 1 : (n == 17 ? 4099 : (n == 4099 ? big : big + 1))) {
            for (int pattern = 0; pattern < 3; pattern++) {
                for (size_t i = 0; i < n; i++) {
                    uint64_t r = test_rand(&seed);
                    ld[i] = pattern == 0 ? (long double)(r % 1000) / 7.0L : pattern == 1 ? (long double)(n - i) : 1.5L;
                    ob[i] = (tfobj){ pattern == 0 ? (int)(r % (n / 8 + 1)) : pattern == 1 ? (int)(n - i) : 3,
                                     (unsigned)i, { 0 } };
                }
                ASSERT_OK(tfp_ld_sort(ex, ld, n, NULL));
                for (size_t i = 1; i < n; i++) ASSERT_TRUE(ld[i - 1] <= ld[i]);
                ASSERT_OK(tfp_obj_stable_sort(ex, ob, n, NULL));
                for (size_t i = 1; i < n; i++) {
                    ASSERT_TRUE(ob[i - 1].key <= ob[i].key);
                    if (ob[i - 1].key == ob[i].key) ASSERT_TRUE(ob[i - 1].pos < ob[i].pos);
                }
                ASSERT_OK(tfp_obj_sort(ex, ob, n, NULL));
                for (size_t i = 1; i < n; i++) ASSERT_TRUE(ob[i - 1].key <= ob[i].key);
            }
        }
        weft_executor_destroy(ex);
    }
    free(ld);
    free(ob);
}

/* ---- simple pipelines: the batch always runs whole -------------------------
 *
 * Every stage (the first included, serial or parallel) maps each item once,
 * in stage order (its stages get no pipeflow: nothing can stop the batch);
 * set_items between runs points the next run at another batch, an empty one
 * included. */
static atomic_int sp_stop_ok, sp_bad;
static int sp_stage(void *item, size_t index, void *arg) {
    (void)arg;
    uint64_t *v = item;
    if (*v >> 32 != index) atomic_store(&sp_bad, 1);
    *v = (*v & ~(uint64_t)0xffffffffu) | ((*v & 0xffffffffu) * 3 + 1); /* low part: the stages */
    return 0;
}
TEST(tf_simple_pipelines_map_every_item_through_every_stage_for_each_shape_line_count_and_batch) {
    enum { NI = 777 };
    uint64_t *items = xmalloc(NI * sizeof *items), *other = xmalloc(NI * sizeof *other);
    static const char *shapes[] = { "S", "P", "SP", "PS", "PPP", "SSS" };
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (size_t sh = 0; sh < 6; sh++) {
            size_t ns = strlen(shapes[sh]);
            weft_item_stage st[3];
            for (size_t i = 0; i < ns; i++)
                st[i] = (weft_item_stage){ shapes[sh][i] == 'S' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL, sp_stage,
                                           NULL, "s" };
            for (size_t lines = 1; lines <= 4; lines++) {
                for (int sched = 0; sched <= 2; sched++) {
                    for (size_t i = 0; i < NI; i++) items[i] = (uint64_t)i << 32;
                    weft_pipeline *p = weft_simple_pipeline_create(lines, items, NI, sizeof *items, st, ns, NULL);
                    ASSERT_NOT_NULL(p);
                    ASSERT_EQ(weft_pipeline_num_stages(p), ns);
                    ASSERT_OK(weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)sched));
                    weft_taskflow *tf = make_taskflow("simple");
                    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    uint64_t want = 0;
                    for (size_t k = 0; k < ns; k++) want = want * 3 + 1;
                    for (size_t i = 0; i < NI; i++) ASSERT_EQ(items[i] & 0xffffffffu, want);
                    /* another batch, then an empty one, then the first again */
                    for (size_t i = 0; i < NI / 2; i++) other[i] = (uint64_t)i << 32;
                    ASSERT_OK(weft_simple_pipeline_set_items(p, other, NI / 2));
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    for (size_t i = 0; i < NI / 2; i++) ASSERT_EQ(other[i] & 0xffffffffu, want);
                    ASSERT_OK(weft_simple_pipeline_set_items(p, NULL, 0));
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    ASSERT_OK(weft_simple_pipeline_set_items(p, items, NI));
                    for (size_t i = 0; i < NI; i++) items[i] = (uint64_t)i << 32;
                    ASSERT_OK(weft_run_and_wait(ex, tf));
                    for (size_t i = 0; i < NI; i++) ASSERT_EQ(items[i] & 0xffffffffu, want);
                    ASSERT_EQ(atomic_load(&sp_bad), 0);
                    ASSERT_OK(weft_taskflow_destroy(tf));
                    ASSERT_OK(weft_pipeline_destroy(p));
                }
            }
        }
        weft_executor_destroy(ex);
    }
    (void)sp_stop_ok;
    free(items);
    free(other);
}

/* ---- dependent asyncs after tasks parked on a semaphore or removed from the
 *      queue: the dependents wait for the parked task to run, and run after
 *      a removed one (which never runs: WEFT_ECANCELED). ---- */
typedef struct blockst { atomic_int *go; atomic_int started; } blockst;
static int block_started(weft_ctx *ctx, void *arg) {
    blockst *b = arg;
    atomic_store(&b->started, 1);
    return block_until(ctx, b->go);
}
TEST(tf_dependent_asyncs_wait_for_a_dependency_parked_on_a_semaphore_and_follow_a_removed_one) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_semaphore *s = weft_semaphore_create(1, NULL);
        ASSERT_NOT_NULL(s);
        atomic_int go = 0, order = 0;
        weft_future *holder, *parked, *dep, *dep2;
        dep_node pn = { .order = &order, .ran_at = -1 }, dn = { .order = &order, .ran_at = -1 },
                 d2 = { .order = &order, .ran_at = -1 };
        blockst bs = { &go, 0 };
        ASSERT_OK(weft_async_acquire(ex, block_started, &bs, &s, 1, &holder));
        while (!atomic_load(&bs.started)) sleep_us(50); /* the holder has the unit */
        ASSERT_OK(weft_async_acquire(ex, dep_run, &pn, &s, 1, &parked));
        ASSERT_OK(weft_dependent_async(ex, dep_run, &dn, &parked, 1, &dep));
        sleep_us(2000);
        ASSERT_EQ(atomic_load(&dn.runs), 0);
        ASSERT_EQ(atomic_load(&pn.runs), 0);
        /* a removed (never run) dependency: a task with a handle, queued behind
         * the blocked worker(s) */
        weft_sched_handle h;
        weft_future *removed;
        dep_node rn = { .order = &order, .ran_at = -1 };
        ASSERT_OK(weft_async_with(ex, dep_run, &rn, &(weft_async_options){ .priority = WEFT_PRIORITY_LOW, .handle = &h },
                                  &removed));
        weft_future *both[2] = { removed, dep };
        ASSERT_OK(weft_dependent_async(ex, dep_run, &d2, both, 2, &dep2));
        weft_status rm = weft_sched_remove(ex, h);
        atomic_store(&go, 1);
        ASSERT_OK(wait_destroy(holder));
        ASSERT_OK(wait_destroy(parked));
        ASSERT_OK(wait_destroy(dep));
        ASSERT_OK(wait_destroy(dep2));
        if (rm == WEFT_OK) {
            ASSERT_STATUS(wait_destroy(removed), WEFT_ECANCELED);
            ASSERT_EQ(atomic_load(&rn.runs), 0);
        } else {
            ASSERT_STATUS(rm, WEFT_ENOENT); /* it had started (w > 1: a free worker took it) */
            ASSERT_OK(wait_destroy(removed));
            ASSERT_EQ(atomic_load(&rn.runs), 1);
        }
        ASSERT_EQ(atomic_load(&pn.runs), 1);
        ASSERT_EQ(atomic_load(&dn.runs), 1);
        ASSERT_EQ(atomic_load(&d2.runs), 1);
        ASSERT_LT(pn.ran_at, dn.ran_at);
        ASSERT_LT(dn.ran_at, d2.ran_at);
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(weft_semaphore_value(s), 1);
        ASSERT_OK(weft_semaphore_destroy(s));
        weft_executor_destroy(ex);
    }
}

/* ---- module composition (test_modules.cpp, by copies): a composition holding
 *      a condition loop, a multi-condition over 70 successors, a subflow and a
 *      module, instantiated three times in a chain into a taskflow and, each
 *      execution, into a subflow's graph; run_n of 4 counts every task. ---- */
typedef struct comp_cnt { atomic_int leaf, loop_body, picked, sub, mod; int bad; } comp_cnt;
static comp_cnt g_cc;
static _Thread_local int tl_dummy;
static int cc_leaf2(weft_ctx *ctx, void *arg) { (void)ctx; atomic_fetch_add((atomic_int *)arg, 1); return 0; }
/* the loop: body -> cond -> (0: body again, 1: out); 3 rounds per pass; the
 * round count lives in the task's data, zeroed by the entry task */
static int cc_cond(weft_ctx *ctx, void *arg) {
    (void)arg;
    weft_task me = weft_ctx_task(ctx);
    intptr_t k = (intptr_t)weft_task_data(me) + 1;
    (void)weft_task_set_data(me, (void *)k);
    (void)tl_dummy;
    return k < 3 ? 0 : 1;
}
static int cc_entry(weft_ctx *ctx, void *arg) {
    (void)ctx;
    weft_task cond = *(weft_task *)arg; /* unused in copies: see cc_reset */
    (void)cond;
    return 0;
}
static int cc_mcond(weft_ctx *ctx, void *arg, weft_branches *b) {
    (void)ctx;
    (void)arg;
    for (unsigned i = 0; i < 70; i += 3)
        if (weft_branches_add(b, i) != WEFT_OK) return 1;
    (void)weft_branches_add(b, 69);
    (void)weft_branches_add(b, 66); /* twice: once */
    return 0;
}
static int cc_sub(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    for (int i = 0; i < 5; i++)
        if (weft_task_is_null(weft_emplace(weft_subflow_graph(sf), cc_leaf2, &((comp_cnt *)arg)->sub))) return 1;
    return 0;
}
static weft_composition *g_comp;
static int cc_sub_inst(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    (void)arg;
    weft_instance a, b;
    weft_taskflow *g = weft_subflow_graph(sf);
    if (weft_composition_instantiate(g_comp, g, "sa", &a) != WEFT_OK) return 1;
    if (weft_composition_instantiate(g_comp, g, "sb", &b) != WEFT_OK) return 2;
    if (weft_precede(weft_instance_exit(&a, "out"), weft_instance_entry(&b, "in")) != WEFT_OK) return 3;
    return 0;
}
/* Zeroes the loop counters of every condition task of a taskflow: the round
 * count is per copy, so reset them per run. */
static bool zero_cond(weft_task t, void *arg) {
    (void)arg;
    if (weft_task_get_kind(t) == WEFT_TASK_CONDITION) (void)weft_task_set_data(t, NULL);
    return true;
}

TEST(tf_module_composition_copies_of_loops_multi_conditions_subflows_and_modules_count_every_task_in_chains_and_subflows) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        memset(&g_cc, 0, sizeof g_cc);
        weft_composition *c = weft_composition_create("unit", NULL);
        ASSERT_NOT_NULL(c);
        g_comp = c;
        weft_taskflow *cg = weft_composition_graph(c);
        weft_taskflow *body = make_taskflow("body");
        must_emplace(body, cc_leaf2, &g_cc.mod);
        must_emplace(body, cc_leaf2, &g_cc.mod);
        weft_task entry = must_emplace(cg, cc_entry, &entry);
        weft_task lb = must_emplace(cg, cc_leaf2, &g_cc.loop_body);
        weft_task cond = weft_emplace_condition(cg, cc_cond, NULL);
        weft_task mc = weft_emplace_multi_condition(cg, cc_mcond, NULL);
        weft_task join = must_emplace(cg, cc_leaf2, &g_cc.leaf);
        weft_task sub = weft_emplace_subflow(cg, cc_sub, &g_cc);
        weft_task mod = weft_emplace_module(cg, body);
        weft_task exitt = must_emplace(cg, cc_leaf2, &g_cc.leaf);
        ASSERT_OK(weft_precede(entry, lb));
        ASSERT_OK(weft_precede(lb, cond));
        ASSERT_OK(weft_precede(cond, lb));  /* 0: again */
        ASSERT_OK(weft_precede(cond, mc));  /* 1: on */
        for (int i = 0; i < 70; i++) {
            weft_task p = must_emplace(cg, cc_leaf2, &g_cc.picked);
            ASSERT_OK(weft_precede(mc, p));
        }
        /* join: runs once per pass, after the subflow and module */
        ASSERT_OK(weft_precede(entry, sub));
        ASSERT_OK(weft_precede(entry, mod));
        ASSERT_OK(weft_precede(sub, join));
        ASSERT_OK(weft_precede(mod, join));
        ASSERT_OK(weft_precede(join, exitt));
        ASSERT_OK(weft_composition_set_entry(c, "in", entry));
        ASSERT_OK(weft_composition_set_exit(c, "out", exitt));
        /* three copies chained, and a subflow making two more each execution */
        weft_taskflow *tf = make_taskflow("top");
        weft_instance in[3];
        for (int i = 0; i < 3; i++) {
            ASSERT_OK(weft_composition_instantiate(c, tf, "copy", &in[i]));
            if (i) ASSERT_OK(weft_precede(weft_instance_exit(&in[i - 1], "out"), weft_instance_entry(&in[i], "in")));
        }
        weft_task si = weft_emplace_subflow(tf, cc_sub_inst, NULL);
        ASSERT_OK(weft_precede(weft_instance_exit(&in[2], "out"), si));
        for (int run = 0; run < 4; run++) {
            ASSERT_OK(weft_taskflow_for_each_task(tf, zero_cond, NULL));
            ASSERT_OK(weft_run_and_wait(ex, tf));
        }
        /* per pass: loop body 3, picked 24 (0,3,..,69), leaves 2 (join, exit),
         * subflow children 5, module tasks 2; 5 passes per run, 4 runs */
        int passes = 5 * 4;
        ASSERT_EQ(atomic_load(&g_cc.loop_body), 3 * passes);
        ASSERT_EQ(atomic_load(&g_cc.picked), 24 * passes);
        ASSERT_EQ(atomic_load(&g_cc.leaf), 2 * passes);
        ASSERT_EQ(atomic_load(&g_cc.sub), 5 * passes);
        ASSERT_EQ(atomic_load(&g_cc.mod), 2 * passes);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_composition_destroy(c));
        ASSERT_OK(weft_taskflow_destroy(body));
        weft_executor_destroy(ex);
    }
}

/* ---- DependentAsync.ParallelGraphConstruction: graph tasks of a triangular
 *      taskflow each submit a dependent async task on the async tasks their
 *      predecessors submitted; each runs after its two dependencies. ---- */
enum { PGC_L = 150, PGC_N = (1 + PGC_L) * PGC_L / 2 };
typedef struct pgc { int id, pl, pr; } pgc;
static pgc g_pgc[PGC_N];
static weft_future *g_pgc_f[PGC_N];
static int g_pgc_data[PGC_N];
static weft_executor *g_pgc_ex;
static atomic_int g_pgc_bad;
static int pgc_async(weft_ctx *ctx, void *arg) {
    (void)ctx;
    const pgc *p = arg;
    if (p->pl >= 0 && (__atomic_load_n(&g_pgc_data[p->pl], __ATOMIC_ACQUIRE) != p->pl ||
                       __atomic_load_n(&g_pgc_data[p->pr], __ATOMIC_ACQUIRE) != p->pr))
        atomic_store(&g_pgc_bad, 1);
    __atomic_store_n(&g_pgc_data[p->id], p->id, __ATOMIC_RELEASE);
    return 0;
}
static int pgc_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    const pgc *p = arg;
    weft_future *deps[2];
    size_t nd = 0;
    if (p->pl >= 0) {
        deps[0] = g_pgc_f[p->pl];
        deps[1] = g_pgc_f[p->pr];
        nd = 2;
    }
    return weft_dependent_async(g_pgc_ex, pgc_async, (void *)p, deps, nd, &g_pgc_f[p->id]) == WEFT_OK ? 0 : 1;
}

TEST(tf_dependent_asyncs_submitted_by_graph_tasks_on_their_predecessors_async_tasks_run_in_dependency_order) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        g_pgc_ex = ex;
        atomic_store(&g_pgc_bad, 0);
        weft_taskflow *tf = make_taskflow("pgc");
        static weft_task tasks[PGC_N];
        int id = 0;
        for (int l = PGC_L; l >= 1; l--) {
            for (int i = 0; i < l; i++) {
                int pr = id - l, pl = id - l - 1;
                /* the first row has no predecessors; a row's first element's pl is
                 * the previous row's last: Taskflow's indexing, kept as is */
                if (l == PGC_L) pr = pl = -1;
                g_pgc[id] = (pgc){ id, pl, pr };
                g_pgc_data[id] = -1;
                tasks[id] = must_emplace(tf, pgc_task, &g_pgc[id]);
                if (pr >= 0) ASSERT_OK(weft_succeed(tasks[id], tasks[pr]));
                if (pl >= 0) ASSERT_OK(weft_succeed(tasks[id], tasks[pl]));
                id++;
            }
        }
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_OK(weft_executor_wait_all(ex));
        ASSERT_EQ(atomic_load(&g_pgc_bad), 0);
        for (int i = 0; i < PGC_N; i++) {
            ASSERT_EQ(g_pgc_data[i], i);
            ASSERT_OK(weft_future_status(g_pgc_f[i]));
            weft_future_destroy(g_pgc_f[i]);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- for_each_index with "negative" steps (ForEachIndex.NegativeIndex,
 *      InvalidRange) in C: the iterations are first + k * step below last,
 *      computed without wrapping, so a negative step cast to size_t gives
 *      `first` alone (first < last) or nothing (first >= last): there is no
 *      reverse loop.  A reverse loop is a forward one over mirrored indices. */
static void nix_count(size_t i, void *arg) {
    atomic_long *c = arg;
    atomic_fetch_add(&c[0], 1);
    atomic_fetch_add(&c[1], (long)i);
}
static void nix_rev(size_t i, void *arg) { atomic_fetch_add((atomic_long *)arg, (long)(100 - i)); }

TEST(tf_for_each_index_with_a_negative_step_cast_to_size_t_runs_first_alone_or_nothing_never_a_reverse_loop) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (size_t c = 0; c < NCONFIGS; c++) {
            atomic_long cnt[2] = { 0, 0 };
            /* Taskflow: for_each_index(10, 0, -1): 10, 9, ..., 1; in C, first >= last: nothing */
            ASSERT_OK(weft_parallel_for(ex, 10, 0, (size_t)-1, nix_count, cnt, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&cnt[0]), 0);
            /* first < last with step (size_t)-1 or -3: `first` alone */
            ASSERT_OK(weft_parallel_for(ex, 5, 100, (size_t)-1, nix_count, cnt, &CONFIGS[c]));
            ASSERT_OK(weft_parallel_for(ex, 7, 100, (size_t)-3, nix_count, cnt, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&cnt[0]), 2);
            ASSERT_EQ(atomic_load(&cnt[1]), 12);
            /* Taskflow's InvalidRange: for_each_index(0, -1, 1): last = SIZE_MAX
             * in C is a huge valid range; (0, 0, 1) is the empty one */
            atomic_store(&cnt[0], 0);
            ASSERT_OK(weft_parallel_for(ex, 0, 0, 1, nix_count, cnt, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&cnt[0]), 0);
            /* the reverse loop 100, 99, ..., 1 as a forward loop over 100 - i */
            atomic_long sum = 0;
            ASSERT_OK(weft_parallel_for(ex, 0, 100, 1, nix_rev, &sum, &CONFIGS[c]));
            ASSERT_EQ(atomic_load(&sum), 5050);
        }
        weft_executor_destroy(ex);
    }
}

/* ---- a critical section over several tasks: A_i acquires S (one unit),
 *      M_i works, B_i releases; 64 such chains, at most one inside at a time.
 *      A run where M_5 fails (or that is cancelled from inside) still ends and
 *      leaves S whole (the skipped releaser gives the unit back), and the next
 *      run goes through every chain. ---- */
typedef struct csec { atomic_int inside, max, done, fail_at, cancel_at; } csec;
static csec g_cs;
typedef struct csarg { int i; } csarg;
static int cs_enter(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    int n = atomic_fetch_add(&g_cs.inside, 1) + 1;
    int m = atomic_load(&g_cs.max);
    while (n > m && !atomic_compare_exchange_weak(&g_cs.max, &m, n)) {}
    return 0;
}
static int cs_mid(weft_ctx *ctx, void *arg) {
    const csarg *a = arg;
    if (a->i == atomic_load(&g_cs.fail_at)) return 9;
    if (a->i == atomic_load(&g_cs.cancel_at)) (void)weft_future_cancel((weft_future *)weft_ctx_run(ctx));
    return 0;
}
static int cs_leave(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_fetch_sub(&g_cs.inside, 1);
    atomic_fetch_add(&g_cs.done, 1);
    return 0;
}

TEST(tf_semaphore_sections_spanning_three_tasks_exclude_each_other_and_a_failed_or_cancelled_run_leaves_the_semaphore_whole) {
    enum { NC = 64 };
    static csarg args[NC];
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_semaphore *s = weft_semaphore_create(1, NULL);
        ASSERT_NOT_NULL(s);
        weft_taskflow *tf = make_taskflow("sections");
        for (int i = 0; i < NC; i++) {
            args[i].i = i;
            weft_task a = must_emplace(tf, cs_enter, &args[i]), m = must_emplace(tf, cs_mid, &args[i]),
                      b = must_emplace(tf, cs_leave, &args[i]);
            ASSERT_OK(weft_precede(a, m));
            ASSERT_OK(weft_precede(m, b));
            ASSERT_OK(weft_task_acquire(a, s));
            ASSERT_OK(weft_task_release(b, s));
        }
        for (int round = 0; round < 3; round++) {
            atomic_store(&g_cs.fail_at, round == 1 ? 5 : -1);
            atomic_store(&g_cs.cancel_at, round == 2 ? 7 : -1);
            atomic_store(&g_cs.done, 0);
            atomic_store(&g_cs.inside, 0);
            weft_status st = weft_run_and_wait(ex, tf);
            ASSERT_STATUS(st, round == 0 ? WEFT_OK : round == 1 ? WEFT_ETASK : WEFT_ECANCELED);
            ASSERT_EQ(weft_semaphore_value(s), 1);
            if (round == 0) ASSERT_EQ(atomic_load(&g_cs.done), NC);
            else ASSERT_LT(atomic_load(&g_cs.done), NC);
            /* then a clean run */
            atomic_store(&g_cs.fail_at, -1);
            atomic_store(&g_cs.cancel_at, -1);
            atomic_store(&g_cs.done, 0);
            atomic_store(&g_cs.inside, 0);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(atomic_load(&g_cs.done), NC);
            ASSERT_EQ(weft_semaphore_value(s), 1);
        }
        ASSERT_EQ(atomic_load(&g_cs.max), 1);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_semaphore_destroy(s));
        weft_executor_destroy(ex);
    }
}

/* ---- objects used across executors: one semaphore serving two taskflows run
 *      at once on two executors (and async tasks of both), at most its two
 *      units in use; one pipeline's taskflow run on 1-, 4- and 2-worker
 *      executors in turn, its tokens going on. ---- */
TEST(tf_one_semaphore_across_two_executors_and_one_pipeline_run_on_three_executors_in_turn_stay_exact) {
    weft_executor *e1 = make_executor(1), *e2 = make_executor(4), *e3 = make_executor(2);
    weft_semaphore *s = weft_semaphore_create(2, NULL);
    ASSERT_NOT_NULL(s);
    static semmod m;
    atomic_store(&m.max, 0);
    atomic_store(&m.count, 0);
    weft_taskflow *ta = make_taskflow("a"), *tb = make_taskflow("b");
    for (int i = 0; i < 300; i++) {
        weft_task x = must_emplace(ta, semmod_task, &m), y = must_emplace(tb, semmod_task, &m);
        ASSERT_OK(weft_task_acquire(x, s));
        ASSERT_OK(weft_task_release(x, s));
        ASSERT_OK(weft_task_acquire(y, s));
        ASSERT_OK(weft_task_release(y, s));
    }
    for (int r = 0; r < 3; r++) {
        weft_future *fa, *fb;
        ASSERT_OK(weft_run(e1, ta, &fa));
        ASSERT_OK(weft_run(e2, tb, &fb));
        for (int i = 0; i < 50; i++) {
            ASSERT_OK(weft_async_acquire(e3, semmod_task, &m, &s, 1, NULL));
            ASSERT_OK(weft_async_acquire(e2, semmod_task, &m, &s, 1, NULL));
        }
        ASSERT_OK(wait_destroy(fa));
        ASSERT_OK(wait_destroy(fb));
        ASSERT_OK(weft_executor_wait_all(e3));
        ASSERT_OK(weft_executor_wait_all(e2));
    }
    ASSERT_EQ(atomic_load(&m.count), 3 * (600 + 100));
    ASSERT_LE(atomic_load(&m.max), 2);
    ASSERT_EQ(weft_semaphore_value(s), 2);
    ASSERT_OK(weft_taskflow_destroy(ta));
    ASSERT_OK(weft_taskflow_destroy(tb));
    ASSERT_OK(weft_semaphore_destroy(s));

    static pstate ps;
    weft_stage st[3];
    static const char *shape = "SPS";
    for (size_t i = 0; i < 3; i++) {
        ps.kinds[i] = shape[i] == 'S' ? WEFT_STAGE_SERIAL : WEFT_STAGE_PARALLEL;
        st[i] = (weft_stage){ ps.kinds[i], i == 2 ? pstage_last : pstage, &ps, "st" };
    }
    weft_pipeline *p = weft_pipeline_create(3, st, 3, NULL);
    ASSERT_NOT_NULL(p);
    weft_taskflow *tf = make_taskflow("pipe");
    ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, p)));
    ps.lines = 3;
    uint64_t base = 0;
    weft_executor *exs[3] = { e1, e2, e3 };
    for (int r = 0; r < 9; r++) {
        ps.ntok = 40 + (size_t)r;
        pstate_reset(&ps, base);
        ASSERT_OK(weft_run_and_wait(exs[r % 3], tf));
        pcheck(&ps, 3, 3);
        base += ps.ntok;
        ASSERT_EQ(weft_pipeline_num_tokens(p), base);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(e1);
    weft_executor_destroy(e2);
    weft_executor_destroy(e3);
}

/* ---- graph priorities (test_graph_priorities.cpp: QueueOrdering,
 *      DynamicChange) on one worker: the successors of one task start by
 *      level, then in queue order; changing the levels between runs changes
 *      the order; a run with a priority gives it to the tasks without one,
 *      while a task set to NORMAL explicitly stays NORMAL. ---- */
typedef struct prio_rec { int order[8]; atomic_int n; } prio_rec;
typedef struct prio_arg { prio_rec *r; int id; } prio_arg;
static int prio_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    prio_arg *a = arg;
    int k = atomic_fetch_add(&a->r->n, 1);
    if (k < 8) a->r->order[k] = a->id;
    return 0;
}

TEST(tf_graph_priorities_order_successors_by_level_on_one_worker_across_changed_levels_and_run_priorities) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("prio");
    static prio_rec r;
    static prio_arg args[5];
    weft_task start = must_emplace(tf, noop, NULL), t[5];
    for (int i = 0; i < 5; i++) {
        args[i] = (prio_arg){ &r, i };
        t[i] = must_emplace(tf, prio_task, &args[i]);
        ASSERT_OK(weft_precede(start, t[i]));
    }
    /* QueueOrdering: LOW, HIGH, NORMAL, HIGH, LOW -> 1, 3, 2, 0, 4 */
    static const weft_priority lv1[5] = { WEFT_PRIORITY_LOW, WEFT_PRIORITY_HIGH, WEFT_PRIORITY_NORMAL,
                                          WEFT_PRIORITY_HIGH, WEFT_PRIORITY_LOW };
    static const int want1[5] = { 1, 3, 2, 0, 4 };
    /* DynamicChange: CRITICAL last, LOW first, ... -> 4, 2, 3, 1, 0 */
    static const weft_priority lv2[5] = { WEFT_PRIORITY_LOW, WEFT_PRIORITY_NORMAL, WEFT_PRIORITY_HIGH,
                                          WEFT_PRIORITY_HIGH, WEFT_PRIORITY_CRITICAL };
    static const int want2[5] = { 4, 2, 3, 1, 0 };
    for (int round = 0; round < 4; round++) {
        const weft_priority *lv = round % 2 ? lv2 : lv1;
        const int *want = round % 2 ? want2 : want1;
        for (int i = 0; i < 5; i++) ASSERT_OK(weft_task_set_priority(t[i], lv[i]));
        atomic_store(&r.n, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&r.n), 5);
        for (int i = 0; i < 5; i++)
            if (r.order[i] != want[i]) TEST_FAIL_("round %d: place %d ran task %d, want %d", round, i, r.order[i], want[i]);
    }
    /* a run with priority HIGH over: t0 explicit NORMAL, t1 none (a fresh
     * taskflow's), t2 LOW, t3 CRITICAL -> 3, 1, 0, 2 */
    weft_taskflow *tf2 = make_taskflow("prio2");
    weft_task s2 = must_emplace(tf2, noop, NULL), u[4];
    for (int i = 0; i < 4; i++) {
        u[i] = must_emplace(tf2, prio_task, &args[i]);
        ASSERT_OK(weft_precede(s2, u[i]));
    }
    ASSERT_OK(weft_task_set_priority(u[0], WEFT_PRIORITY_NORMAL));
    ASSERT_OK(weft_task_set_priority(u[2], WEFT_PRIORITY_LOW));
    ASSERT_OK(weft_task_set_priority(u[3], WEFT_PRIORITY_CRITICAL));
    atomic_store(&r.n, 0);
    weft_future *f;
    ASSERT_OK(weft_run_with_priority(ex, tf2, WEFT_PRIORITY_HIGH, &f));
    ASSERT_OK(wait_destroy(f));
    static const int want3[4] = { 3, 1, 0, 2 };
    for (int i = 0; i < 4; i++)
        if (r.order[i] != want3[i]) TEST_FAIL_("run priority: place %d ran task %d, want %d", i, r.order[i], want3[i]);
    ASSERT_OK(weft_taskflow_destroy(tf2));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- a pipeline inside a subflow's graph and inside a module's body, under
 *      run_n: every stage, on every worker, says the run it belongs to is the
 *      top-level run (weft_pipeflow_run), and sees its cancellation. ---- */
static const weft_future *_Atomic g_pr_seen;
static atomic_int g_pr_bad, g_pr_calls;
static int pr_stage(weft_pipeflow *pf, void *arg) {
    const weft_future *r = weft_pipeflow_run(pf);
    const weft_future *expect = NULL;
    if (!atomic_compare_exchange_strong(&g_pr_seen, &expect, r) && expect != r) atomic_store(&g_pr_bad, 1);
    if (!r) atomic_store(&g_pr_bad, 2);
    atomic_fetch_add(&g_pr_calls, 1);
    /* the 20th first-stage call of each run stops it (a stopping token is
     * not counted, so the next run makes its number again) */
    if (weft_pipeflow_stage(pf) == 0 && ++*(int *)arg % 20 == 0) weft_pipeflow_stop(pf);
    return 0;
}
static weft_pipeline *g_pr_pipe2;
static int pr_sub(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    (void)arg;
    return weft_task_is_null(weft_pipeline_emplace(weft_subflow_graph(sf), g_pr_pipe2)) ? 1 : 0;
}

TEST(tf_pipelines_in_a_subflow_and_a_module_under_run_n_name_the_top_level_run_from_every_stage) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        static int calls1, calls2;
        calls1 = calls2 = 0;
        weft_stage st[3] = { { WEFT_STAGE_SERIAL, pr_stage, &calls1, "a" },
                             { WEFT_STAGE_PARALLEL, pr_stage, NULL, "b" },
                             { WEFT_STAGE_SERIAL, pr_stage, NULL, "c" } };
        weft_pipeline *p1 = weft_pipeline_create(4, st, 3, NULL);
        st[0].arg = &calls2;
        weft_pipeline *p2 = weft_pipeline_create(2, st, 3, NULL);
        ASSERT_NOT_NULL(p1);
        ASSERT_NOT_NULL(p2);
        ASSERT_OK(weft_pipeline_set_scheduling(p1, WEFT_PIPELINE_SPREAD));
        g_pr_pipe2 = p2;
        weft_taskflow *body = make_taskflow("body"), *tf = make_taskflow("top");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(body, p1)));
        weft_task m = weft_emplace_module(tf, body), s = weft_emplace_subflow(tf, pr_sub, NULL);
        ASSERT_OK(weft_precede(m, s));
        for (int n = 1; n <= 3; n++) {
            atomic_store(&g_pr_seen, NULL);
            atomic_store(&g_pr_bad, 0);
            atomic_store(&g_pr_calls, 0);
            weft_future *f;
            ASSERT_OK(weft_run_n(ex, tf, (uint64_t)n, &f));
            ASSERT_OK(weft_future_wait(f));
            ASSERT_EQ(atomic_load(&g_pr_bad), 0);
            ASSERT_TRUE(atomic_load(&g_pr_seen) == f);
            /* per iteration and pipeline: 19 tokens x 3 stages + the stopping call */
            ASSERT_EQ(atomic_load(&g_pr_calls), n * 2 * (19 * 3 + 1));
            weft_future_destroy(f);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(body));
        ASSERT_OK(weft_pipeline_destroy(p1));
        ASSERT_OK(weft_pipeline_destroy(p2));
        weft_executor_destroy(ex);
    }
}

/* ---- an emplaced loop in the instances of weft_run_n_parallel (Taskflow's
 *      parallel run_n): each instance runs the whole loop; every index is
 *      visited once per instance; a condition loop around it as well. ---- */
static void rnp_body(size_t lo, size_t hi, void *arg) {
    atomic_int *c = arg;
    for (size_t i = lo; i < hi; i++) atomic_fetch_add_explicit(&c[i], 1, memory_order_relaxed);
}
static int rnp_cond(weft_ctx *ctx, void *arg) {
    /* per instance: loop the emplaced loop 3 times, counted in a per-instance slot */
    atomic_int *rounds = arg;
    uint64_t inst = weft_ctx_iteration(ctx);
    return atomic_fetch_add(&rounds[inst], 1) + 1 < 3 ? 0 : 1;
}

TEST(tf_parallel_run_n_instances_each_run_an_emplaced_loop_in_a_condition_loop_over_every_index) {
    enum { NI = 10007, INST = 8 };
    static atomic_int counts[NI], rounds[INST];
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (size_t i = 0; i < NI; i++) atomic_store(&counts[i], 0);
        for (int i = 0; i < INST; i++) atomic_store(&rounds[i], 0);
        weft_taskflow *tf = make_taskflow("rnp");
        weft_for_desc d = { 0, NI, 1, rnp_body, counts, { .partitioner = WEFT_PARTITION_DYNAMIC, .chunk = 97 } };
        weft_task start = must_emplace(tf, noop, NULL), loop = weft_emplace_for(tf, &d),
                  cond = weft_emplace_condition(tf, rnp_cond, rounds);
        ASSERT_FALSE(weft_task_is_null(loop));
        ASSERT_OK(weft_precede(start, loop));
        ASSERT_OK(weft_precede(loop, cond));
        ASSERT_OK(weft_precede(cond, loop));
        weft_future *f;
        ASSERT_OK(weft_run_n_parallel(ex, tf, INST, &f));
        ASSERT_OK(wait_destroy(f));
        for (int i = 0; i < INST; i++) ASSERT_EQ(atomic_load(&rounds[i]), 3);
        for (size_t i = 0; i < NI; i++)
            if (atomic_load(&counts[i]) != 3 * INST) TEST_FAIL_("w %u: index %zu visited %d times", w, i, atomic_load(&counts[i]));
        ASSERT_OK(weft_taskflow_destroy(tf));
        weft_executor_destroy(ex);
    }
}

/* ---- semaphores on tasks inside condition loops: two loops, each body and
 *      each condition holding one unit of the same one-unit semaphore, run
 *      side by side; every pick of a parked body resumes it; 50 rounds each,
 *      never two holders at once. ---- */
static semmod g_lm;
static int lm_cond(weft_ctx *ctx, void *arg) {
    (void)semmod_task(ctx, &g_lm);
    atomic_int *k = arg;
    return atomic_fetch_add(k, 1) + 1 < 50 ? 0 : 1;
}

TEST(tf_semaphore_held_by_bodies_and_conditions_of_two_side_by_side_loops_serialises_all_rounds) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_semaphore *s = weft_semaphore_create(1, NULL);
        ASSERT_NOT_NULL(s);
        weft_taskflow *tf = make_taskflow("loops");
        static atomic_int k[2];
        for (int run = 0; run < 3; run++) {
            if (run == 0) {
                for (int l = 0; l < 2; l++) {
                    weft_task init = must_emplace(tf, noop, NULL), body = must_emplace(tf, semmod_task, &g_lm),
                              cond = weft_emplace_condition(tf, lm_cond, &k[l]);
                    ASSERT_OK(weft_precede(init, body)); /* a loop is entered through a strong edge */
                    ASSERT_OK(weft_precede(body, cond));
                    ASSERT_OK(weft_precede(cond, body));
                    ASSERT_OK(weft_task_acquire(body, s));
                    ASSERT_OK(weft_task_release(body, s));
                    ASSERT_OK(weft_task_acquire(cond, s));
                    ASSERT_OK(weft_task_release(cond, s));
                }
            }
            atomic_store(&k[0], 0);
            atomic_store(&k[1], 0);
            atomic_store(&g_lm.count, 0);
            atomic_store(&g_lm.max, 0);
            ASSERT_OK(weft_run_and_wait(ex, tf));
            ASSERT_EQ(atomic_load(&k[0]), 50);
            ASSERT_EQ(atomic_load(&k[1]), 50);
            ASSERT_EQ(atomic_load(&g_lm.count), 2 * 100);
            ASSERT_EQ(atomic_load(&g_lm.max), 1);
            ASSERT_EQ(weft_semaphore_value(s), 1);
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_semaphore_destroy(s));
        weft_executor_destroy(ex);
    }
}

/* ---- a scan's init pointing into its own input or output (Taskflow passes
 *      init by value: inclusive_scan(v.begin(), v.end(), v.begin(), op, v.back())):
 *      the result is that of a copy of init taken before the call. ---- */
TEST(tf_scans_whose_init_points_into_their_own_in_place_array_use_its_value_from_before_the_call) {
    enum { NS = 30011 };
    int64_t *v = xmalloc(NS * sizeof *v), *want = xmalloc(NS * sizeof *want), *src = xmalloc(NS * sizeof *src);
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (size_t c = 0; c < NCONFIGS; c++) {
            static const size_t ns[] = { 1, 2, 17, 9000, NS };
            for (size_t k = 0; k < 5; k++) {
                size_t n = ns[k];
                for (int excl = 0; excl < 2; excl++) {
                    for (int where = 0; where < 3; where++) { /* init = &v[0], &v[n/2], &v[n-1] */
                        for (size_t i = 0; i < n; i++) src[i] = (int64_t)(i % 13) - 4;
                        size_t at = where == 0 ? 0 : where == 1 ? n / 2 : n - 1;
                        int64_t init = src[at], acc = init;
                        for (size_t i = 0; i < n; i++) {
                            if (excl) {
                                want[i] = acc;
                                acc += src[i];
                            } else {
                                acc += src[i];
                                want[i] = acc;
                            }
                        }
                        memcpy(v, src, n * sizeof *v);
                        weft_status st = excl ? weft_parallel_exclusive_scan(ex, v, v, n, sizeof *v, &v[at], add_u64, NULL,
                                                                             &CONFIGS[c])
                                              : weft_parallel_inclusive_scan(ex, v, v, n, sizeof *v, &v[at], add_u64, NULL,
                                                                             &CONFIGS[c]);
                        ASSERT_OK(st);
                        for (size_t i = 0; i < n; i++)
                            if (v[i] != want[i])
                                TEST_FAIL_("w %u cfg %zu n %zu excl %d init at %zu: v[%zu] = %lld, want %lld", w, c, n, excl,
                                           at, i, (long long)v[i], (long long)want[i]);
                        /* the typed scans (weft/algo_typed.h): inclusive takes init by
                         * pointer, exclusive by value */
                        memcpy(v, src, n * sizeof *v);
                        st = excl ? weft_i64_sum_exclusive_scan(ex, v, v, n, v[at], &CONFIGS[c])
                                  : weft_i64_sum_inclusive_scan(ex, v, v, n, &v[at], &CONFIGS[c]);
                        ASSERT_OK(st);
                        for (size_t i = 0; i < n; i++)
                            if (v[i] != want[i])
                                TEST_FAIL_("typed: w %u cfg %zu n %zu excl %d init at %zu: v[%zu] = %lld, want %lld", w, c,
                                           n, excl, at, i, (long long)v[i], (long long)want[i]);
                    }
                }
            }
        }
        weft_executor_destroy(ex);
    }
    free(v);
    free(want);
    free(src);
}

/* ---- a subflow joined from a fork-join child its function spawned (allowed by
 *      weft_subflow_join), and an async task making a dependent of its own
 *      future while it runs (the dependent starts after it returns). ---- */
typedef struct sfj { weft_subflow *sf; atomic_int *count; weft_status st; } sfj;
static int sfj_child(weft_ctx *ctx, void *arg) {
    (void)ctx;
    sfj *j = arg;
    weft_taskflow *g = weft_subflow_graph(j->sf);
    for (int i = 0; i < 20; i++)
        if (weft_task_is_null(weft_emplace(g, bump, j->count))) return 1;
    j->st = weft_subflow_join(j->sf);
    return 0;
}
static int sfj_fn(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    sfj j = { sf, arg, WEFT_EINVAL };
    if (weft_spawn(ctx, sfj_child, &j) != WEFT_OK) return 1;
    int rc = weft_sync(ctx);
    if (rc != 0 || j.st != WEFT_OK) return 2;
    /* joined: the graph ran already */
    return atomic_load((atomic_int *)arg) % 20 == 0 ? 0 : 3;
}
static weft_future *_Atomic g_self_fut;
static atomic_int g_self_order, g_self_a_done, g_self_b_at;
static weft_executor *g_self_ex;
static int self_b(weft_ctx *ctx, void *arg) {
    (void)ctx;
    (void)arg;
    atomic_store(&g_self_b_at, atomic_load(&g_self_a_done) ? 1 : -1);
    return 0;
}
static int self_a(weft_ctx *ctx, void *arg) {
    (void)ctx;
    weft_future **out = arg;
    weft_future *me;
    while (!(me = atomic_load(&g_self_fut))) sleep_us(20);
    if (weft_dependent_async(g_self_ex, self_b, NULL, &me, 1, out) != WEFT_OK) return 1;
    sleep_us(1000);
    atomic_store(&g_self_a_done, 1);
    return 0;
}

TEST(tf_subflow_joined_from_a_spawned_child_and_an_async_tasks_dependent_on_its_own_future_run_in_order) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        static atomic_int cnt[8];
        weft_taskflow *tf = make_taskflow("sfj");
        for (int i = 0; i < 8; i++) {
            atomic_store(&cnt[i], 0);
            ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, sfj_fn, &cnt[i])));
        }
        weft_taskflow *one = make_taskflow("one");
        static atomic_int cnt1;
        atomic_store(&cnt1, 0);
        ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(one, sfj_fn, &cnt1)));
        for (int r = 0; r < 5; r++) {
            ASSERT_OK(weft_run_and_wait(ex, one));
            ASSERT_EQ(atomic_load(&cnt1), 20 * (r + 1));
            ASSERT_OK(weft_run_and_wait(ex, tf));
            for (int i = 0; i < 8; i++) ASSERT_EQ(atomic_load(&cnt[i]), 20 * (r + 1));
        }
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_taskflow_destroy(one));

        /* an async task that depends... its own dependent */
        atomic_store(&g_self_fut, NULL);
        g_self_ex = ex;
        atomic_store(&g_self_a_done, 0);
        atomic_store(&g_self_b_at, 0);
        weft_future *fa, *fb = NULL;
        ASSERT_OK(weft_async(ex, self_a, &fb, &fa));
        atomic_store(&g_self_fut, fa);
        ASSERT_OK(weft_future_wait(fa));
        ASSERT_NOT_NULL(fb);
        ASSERT_OK(wait_destroy(fb));
        weft_future_destroy(fa);
        ASSERT_EQ(atomic_load(&g_self_b_at), 1);
        weft_executor_destroy(ex);
    }
    (void)g_self_order;
}

/* ---- changing a pipeline from its own stages while it runs: reset,
 *      scheduling, priority and destroy say WEFT_EBUSY and change nothing; the
 *      run goes on, and after it each call works. ---- */
static weft_pipeline *g_busy_p;
static atomic_int g_busy_bad;
static int busy_stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) == 3 && weft_pipeflow_stage(pf) == 1) {
        if (weft_pipeline_reset(g_busy_p) != WEFT_EBUSY) atomic_store(&g_busy_bad, 1);
        if (weft_pipeline_set_scheduling(g_busy_p, WEFT_PIPELINE_INLINE) != WEFT_EBUSY) atomic_store(&g_busy_bad, 2);
        if (weft_pipeline_set_priority(g_busy_p, WEFT_PRIORITY_HIGH) != WEFT_EBUSY) atomic_store(&g_busy_bad, 3);
        if (weft_pipeline_destroy(g_busy_p) != WEFT_EBUSY) atomic_store(&g_busy_bad, 4);
    }
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 30) weft_pipeflow_stop(pf);
    return 0;
}
TEST(tf_pipeline_changes_made_from_its_own_stages_are_ebusy_and_the_run_goes_on) {
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        weft_stage st[2] = { { WEFT_STAGE_SERIAL, busy_stage, NULL, "a" }, { WEFT_STAGE_PARALLEL, busy_stage, NULL, "b" } };
        g_busy_p = weft_pipeline_create(2, st, 2, NULL);
        ASSERT_NOT_NULL(g_busy_p);
        ASSERT_OK(weft_pipeline_set_scheduling(g_busy_p, WEFT_PIPELINE_SPREAD));
        weft_taskflow *tf = make_taskflow("busy");
        ASSERT_FALSE(weft_task_is_null(weft_pipeline_emplace(tf, g_busy_p)));
        atomic_store(&g_busy_bad, 0);
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(atomic_load(&g_busy_bad), 0);
        ASSERT_EQ(weft_pipeline_num_tokens(g_busy_p), 30);
        ASSERT_EQ(weft_pipeline_priority(g_busy_p), WEFT_PRIORITY_NORMAL);
        ASSERT_EQ(weft_pipeline_num_inline_tokens(g_busy_p), 0); /* still SPREAD */
        ASSERT_OK(weft_pipeline_reset(g_busy_p));
        ASSERT_OK(weft_pipeline_set_scheduling(g_busy_p, WEFT_PIPELINE_INLINE));
        ASSERT_OK(weft_run_and_wait(ex, tf));
        ASSERT_EQ(weft_pipeline_num_tokens(g_busy_p), 30);
        ASSERT_EQ(weft_pipeline_num_inline_tokens(g_busy_p), 30);
        ASSERT_OK(weft_taskflow_destroy(tf));
        ASSERT_OK(weft_pipeline_destroy(g_busy_p));
        weft_executor_destroy(ex);
    }
}

/* ---- min/max_element with a comparison that is not a strict weak order
 *      (doubles holding NaN compared with < and >): some index below n, on
 *      every partitioner and worker count; find_if over the same array finds
 *      the first NaN exactly. ---- */
static int cmp_dbl_naive(const void *a, const void *b, void *arg) {
    (void)arg;
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static bool is_nan_elem(const void *e, void *arg) { (void)arg; return isnan(*(const double *)e); }

TEST(tf_min_max_element_with_nans_give_an_index_below_n_and_find_if_finds_the_first_nan) {
    double *v = xmalloc(3000 * sizeof *v);
    uint64_t seed = 3;
    for (unsigned w = 1; w <= 4; w *= 2) {
        weft_executor *ex = make_executor(w);
        for (size_t n = 1; n <= 3000; n = n < 40 ? n + 1 : n * 3) {
            for (int pat = 0; pat < 3; pat++) {
                size_t first_nan = n;
                for (size_t i = 0; i < n; i++) {
                    bool nan = pat == 2 || (pat == 1 ? i % 2 == 0 : test_rand(&seed) % 5 == 0);
                    v[i] = nan ? NAN : (double)(test_rand(&seed) % 100);
                    if (nan && first_nan == n) first_nan = i;
                }
                for (size_t c = 0; c < NCONFIGS; c++) {
                    size_t r = SIZE_MAX;
                    ASSERT_OK(weft_parallel_min_element(ex, v, n, sizeof *v, cmp_dbl_naive, NULL, &r, &CONFIGS[c]));
                    ASSERT_LT(r, n);
                    r = SIZE_MAX;
                    ASSERT_OK(weft_parallel_max_element(ex, v, n, sizeof *v, cmp_dbl_naive, NULL, &r, &CONFIGS[c]));
                    ASSERT_LT(r, n);
                    ASSERT_OK(weft_parallel_find_if(ex, v, n, sizeof *v, is_nan_elem, NULL, &r, &CONFIGS[c]));
                    ASSERT_EQ(r, first_nan);
                }
            }
        }
        weft_executor_destroy(ex);
    }
    free(v);
}
