/* Slow paths (hunt 43): operations whose cost grew faster than their input.
 * Each was measured at n and 8n; these are the ones that grew quadratically
 * (64x and more where 8x was due).  A test measures the operation against a
 * linear one of the same size on the same data (building it, typically), so
 * the ratio does not depend on the machine's speed, and in CPU time, so it
 * does not depend on its load; the bounds are loose (a quadratic path is
 * tens to hundreds of times past them at these sizes).  Each test well under
 * a second once fixed.  SLOW_HUNT_PRINT=1 prints the figures. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU seconds of the calling thread: the operations timed here are the
 * caller's own (builders, lookups), and a thread's CPU time does not count
 * the time it was descheduled on a loaded machine, as wall time would. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process (every worker), for what runs. */
static double process_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best of `rounds` timings of fn(arg) (the least disturbed by other load). */
static double best_of(int rounds, double (*fn)(void *arg), void *arg) {
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        double d = fn(arg);
        if (d < best) best = d;
    }
    return best;
}

/* ---- clearing a taskflow with many modules ---------------------------------- */

struct modules {
    size_t k;
    double build, clear;
};

/* k module tasks, each of its own body: builds, then clears, timing both. */
static double modules_round(void *arg) {
    struct modules *m = arg;
    weft_taskflow *tf = make_taskflow("many modules");
    weft_taskflow **bodies = calloc(m->k, sizeof *bodies);
    ASSERT_NOT_NULL(bodies);
    for (size_t i = 0; i < m->k; i++) bodies[i] = make_taskflow(NULL); /* empty: no node chunk each */
    (void)must_emplace(bodies[0], noop, NULL);
    double t0 = cpu_s();
    for (size_t i = 0; i < m->k; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_module(tf, bodies[i])));
    double t1 = cpu_s();
    ASSERT_OK(weft_taskflow_clear(tf));
    double t2 = cpu_s();
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
    /* The taskflow is whole after the clear: a module again, and a run. */
    (void)weft_emplace_module(tf, bodies[0]);
    ASSERT_OK(weft_run_and_wait(NULL, tf));
    ASSERT_OK(weft_taskflow_destroy(tf));
    for (size_t i = 0; i < m->k; i++) ASSERT_OK(weft_taskflow_destroy(bodies[i]));
    free(bodies);
    if (t1 - t0 < m->build || m->build == 0) m->build = t1 - t0;
    return t2 - t1;
}

/* weft_taskflow_clear (and destroy) released each module by a search of the
 * taskflow's table of bodies from its newest entry, in emplace order: k^2 / 2
 * compares for k modules of distinct bodies (128,000 modules: 6.6 s). */
TEST(clearing_a_taskflow_of_many_modules_costs_no_more_than_building_it) {
    struct modules m = {.k = 48000};
    m.clear = best_of(3, modules_round, &m);
    if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "clear %.5f build %.5f\n", m.clear, m.build);
    if (m.clear > 4 * m.build + 0.02)
        TEST_FAIL_("clear of %zu modules took %.4f s, their emplace %.4f s", m.k, m.clear, m.build);
}

/* ---- erasing tasks ------------------------------------------------------------- */

enum erase_shape { UNCONNECTED, CHAIN_FROM_HEAD, CHAIN_FROM_TAIL, FAN_OUT_LEAVES, SHAPES };
static const char *const shape_names[SHAPES] = {"unconnected", "a chain from its head", "a chain from its tail",
                                                 "the leaves of a fan-out"};

struct erase {
    size_t n;
    enum erase_shape shape;
    double build, erase;
};

static double erase_round(void *arg) {
    struct erase *e = arg;
    weft_taskflow *tf = make_taskflow("erase");
    weft_task *t = calloc(e->n, sizeof *t);
    ASSERT_NOT_NULL(t);
    double t0 = cpu_s();
    for (size_t i = 0; i < e->n; i++) t[i] = must_emplace(tf, noop, NULL);
    if (e->shape == CHAIN_FROM_HEAD || e->shape == CHAIN_FROM_TAIL) ASSERT_OK(weft_linearize(t, e->n));
    if (e->shape == FAN_OUT_LEAVES) ASSERT_OK(weft_precede_many(t[0], t + 1, e->n - 1));
    double t1 = cpu_s();
    if (e->shape == CHAIN_FROM_TAIL)
        for (size_t i = e->n; i-- > 0;) ASSERT_OK(weft_task_erase(t[i]));
    else if (e->shape == FAN_OUT_LEAVES)
        for (size_t i = e->n; i-- > 1;) ASSERT_OK(weft_task_erase(t[i]));
    else
        for (size_t i = 0; i < e->n; i++) ASSERT_OK(weft_task_erase(t[i]));
    double t2 = cpu_s();
    if (e->shape == FAN_OUT_LEAVES) {
        ASSERT_EQ(weft_task_num_successors(t[0]), 0);
        ASSERT_OK(weft_task_erase(t[0]));
    }
    ASSERT_EQ(weft_taskflow_num_tasks(tf), 0);
    /* The slots are reused, and the graph runs. */
    atomic_int hits = 0;
    weft_task a = must_emplace(tf, bump, &hits), b = must_emplace(tf, bump, &hits), c = must_emplace(tf, bump, &hits);
    ASSERT_OK(weft_precede(a, b));
    ASSERT_OK(weft_precede(c, b));
    ASSERT_OK(weft_precede(b, b)); /* a loop: found on b itself */
    ASSERT_OK(weft_task_erase(b));
    ASSERT_EQ(weft_task_num_successors(a), 0);
    ASSERT_EQ(weft_task_num_successors(c), 0);
    ASSERT_OK(weft_run_and_wait(NULL, tf));
    ASSERT_EQ(atomic_load(&hits), 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    free(t);
    if (t1 - t0 < e->build || e->build == 0) e->build = t1 - t0;
    return t2 - t1;
}

/* weft_task_erase scanned every task's successors, from the first, for edges
 * into the task, also when it had none: erasing n unconnected tasks (or a
 * chain from its head) one by one cost n^2 / 2 node visits (32,000 tasks:
 * 4 s), and a chain erased from its tail as much (10.7 s). */
TEST(erasing_the_tasks_of_a_big_graph_one_by_one_costs_no_more_than_building_it) {
    for (int shape = 0; shape < SHAPES; shape++) {
        struct erase e = {.n = 16000, .shape = (enum erase_shape)shape};
        e.erase = best_of(3, erase_round, &e);
        if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "erase %s %.5f build %.5f\n", shape_names[shape], e.erase, e.build);
        if (e.erase > 4 * e.build + 0.02)
            TEST_FAIL_("erasing %zu tasks of %s took %.4f s, building them %.4f s", e.n, shape_names[shape], e.erase,
                       e.build);
    }
}

/* ---- instantiating a composition with an erased task --------------------------- */

struct inst {
    size_t k;
    bool erased; /* the composition has an erased task */
};

static double inst_round(void *arg) {
    struct inst *in = arg;
    weft_composition *c = weft_composition_create("c", NULL);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task a = must_emplace(g, noop, NULL), b = must_emplace(g, noop, NULL), x = must_emplace(g, noop, NULL);
    ASSERT_OK(weft_precede(a, b));
    if (in->erased) ASSERT_OK(weft_task_erase(x));
    ASSERT_OK(weft_composition_set_entry(c, "in", a));
    weft_taskflow *dst = make_taskflow("dst");
    weft_instance inst;
    double t0 = cpu_s();
    for (size_t i = 0; i < in->k; i++) ASSERT_OK(weft_composition_instantiate(c, dst, NULL, &inst));
    double d = cpu_s() - t0;
    ASSERT_EQ(weft_taskflow_num_tasks(dst), in->k * (in->erased ? 2 : 3));
    ASSERT_EQ(weft_task_num_successors(weft_instance_entry(&inst, "in")), 1);
    ASSERT_OK(weft_taskflow_destroy(dst));
    ASSERT_OK(weft_composition_destroy(c));
    return d;
}

/* An erased task of a composition is copied as a placeholder erased at once,
 * and that erase scanned the whole destination: k instances of it into one
 * taskflow cost k^2 node visits (16,000 instances: 2.8 s). */
TEST(instantiating_a_composition_with_an_erased_task_many_times_stays_linear) {
    struct inst plain = {.k = 8000, .erased = false}, holed = {.k = 8000, .erased = true};
    double p = best_of(3, inst_round, &plain), h = best_of(3, inst_round, &holed);
    if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "with %.5f without %.5f\n", h, p);
    if (h > 4 * p + 0.02) TEST_FAIL_("%zu instances took %.4f s with an erased task, %.4f s without", holed.k, h, p);
}

/* ---- one task with many semaphores --------------------------------------------- */

struct sems {
    size_t k;
    bool one_task; /* every semaphore on one task, else one task each */
};

static double sems_round(void *arg) {
    struct sems *p = arg;
    weft_semaphore **s = calloc(p->k, sizeof *s);
    ASSERT_NOT_NULL(s);
    for (size_t i = 0; i < p->k; i++) ASSERT_NOT_NULL(s[i] = weft_semaphore_create(1, NULL));
    weft_taskflow *tf = make_taskflow("sems");
    atomic_int hits = 0;
    weft_task t = must_emplace(tf, bump, &hits);
    double t0 = cpu_s();
    for (size_t i = 0; i < p->k; i++) {
        weft_task u = p->one_task ? t : must_emplace(tf, bump, &hits);
        weft_semaphore *x = s[i % 2 ? p->k - 1 - i / 2 : i / 2]; /* from both ends: inserts in the middle */
        ASSERT_OK(weft_task_acquire(u, x));
        ASSERT_OK(weft_task_release(u, x));
        if (p->one_task) ASSERT_OK(weft_task_acquire(u, x)); /* a repeat counts once */
    }
    double d = cpu_s() - t0;
    if (p->one_task) {
        ASSERT_EQ(weft_task_num_acquires(t), p->k);
        ASSERT_EQ(weft_task_num_releases(t), p->k);
    }
    ASSERT_OK(weft_run_and_wait(NULL, tf));
    ASSERT_EQ(atomic_load(&hits), p->one_task ? 1 : (int)p->k + 1);
    ASSERT_OK(weft_taskflow_destroy(tf));
    for (size_t i = 0; i < p->k; i++) {
        ASSERT_EQ(weft_semaphore_value(s[i]), 1);
        ASSERT_OK(weft_semaphore_destroy(s[i]));
    }
    free(s);
    return d;
}

/* weft_task_acquire and weft_task_release recounted, for each call, whether
 * the task's acquires and releases match (each acquire looked for in the
 * releases, and the reverse: k^2 per call), and re-sorted its acquire set:
 * k semaphores on one task cost k^3 (1,600 semaphores: 0.64 s). */
TEST(giving_one_task_many_semaphores_costs_about_as_much_as_giving_many_tasks_one_each) {
    struct sems one = {.k = 1200, .one_task = true}, each = {.k = 1200, .one_task = false};
    double a = best_of(3, sems_round, &one), b = best_of(3, sems_round, &each);
    if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "one task %.5f one each %.5f\n", a, b);
    if (a > 4 * b + 0.02) TEST_FAIL_("%zu semaphores on one task took %.4f s, one on each of %zu tasks %.4f s", one.k, a, each.k, b);
}

/* ---- named points of a composition, parameters ----------------------------------- */

struct named {
    size_t k;
    double build;
};

/* k entries and k exits set, then looked up in two instances, one made
 * before the first entry moved. */
static double points_round(void *arg) {
    struct named *m = arg;
    weft_composition *c = weft_composition_create("points", NULL);
    ASSERT_NOT_NULL(c);
    weft_taskflow *g = weft_composition_graph(c);
    weft_task *t = calloc(m->k, sizeof *t);
    ASSERT_NOT_NULL(t);
    char name[32];
    double t0 = cpu_s();
    for (size_t i = 0; i < m->k; i++) {
        t[i] = must_emplace(g, noop, NULL);
        snprintf(name, sizeof name, "p%zu", i);
        ASSERT_OK(weft_composition_set_entry(c, name, t[i]));
        ASSERT_OK(weft_composition_set_exit(c, name, t[i]));
    }
    double t1 = cpu_s();
    weft_taskflow *dst = make_taskflow("dst");
    weft_instance before, after;
    ASSERT_OK(weft_composition_instantiate(c, dst, NULL, &before));
    ASSERT_OK(weft_composition_set_entry(c, "p0", t[m->k - 1])); /* moved: `before` keeps the old place */
    ASSERT_OK(weft_composition_instantiate(c, dst, NULL, &after));
    double t2 = cpu_s();
    for (size_t i = 0; i < m->k; i++) {
        snprintf(name, sizeof name, "p%zu", i);
        size_t want = i == 0 ? m->k - 1 : i;
        ASSERT_EQ(weft_task_index(weft_instance_entry(&after, name)), m->k + want);
        ASSERT_EQ(weft_task_index(weft_instance_entry(&before, name)), i);
        ASSERT_EQ(weft_task_index(weft_instance_exit(&after, name)), m->k + i);
    }
    double t3 = cpu_s();
    ASSERT_TRUE(weft_task_is_null(weft_instance_entry(&after, "nope")));
    ASSERT_OK(weft_taskflow_destroy(dst));
    ASSERT_OK(weft_composition_destroy(c));
    free(t);
    if (t1 - t0 < m->build || m->build == 0) m->build = t1 - t0;
    (void)t2;
    return t3 - t2;
}

/* weft_instance_entry and weft_instance_exit searched the composition's
 * whole log of entries and exits from its newest record: k named points
 * looked up once each cost k^2 / 2 string compares (16,000 entries: 1.6 s). */
TEST(looking_up_each_of_many_entries_of_a_composition_costs_no_more_than_setting_them) {
    struct named m = {.k = 6000};
    double look = best_of(3, points_round, &m);
    if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "lookups %.5f sets %.5f\n", look, m.build);
    if (look > 4 * m.build + 0.02) TEST_FAIL_("3 x %zu lookups took %.4f s, setting the points %.4f s", m.k, look, m.build);
}

static double params_round(void *arg) {
    struct named *m = arg;
    weft_params *p = weft_params_create(NULL);
    ASSERT_NOT_NULL(p);
    char name[32];
    double t0 = cpu_s();
    for (size_t i = 0; i < m->k; i++) {
        snprintf(name, sizeof name, "n%zu", i);
        ASSERT_OK(weft_params_set_int(p, name, (int64_t)i));
    }
    ASSERT_OK(weft_params_set_string(p, "n1", "one")); /* replaced, not added */
    double d = cpu_s() - t0;
    for (size_t i = 0; i < m->k; i++) {
        snprintf(name, sizeof name, "n%zu", i);
        int64_t v = -1;
        if (i == 1) {
            const char *s = NULL;
            ASSERT_OK(weft_params_get_string(p, name, &s));
            ASSERT_STREQ(s, "one");
            ASSERT_STATUS(weft_params_get_int(p, name, &v), WEFT_EINVAL);
            continue;
        }
        ASSERT_OK(weft_params_get_int(p, name, &v));
        ASSERT_EQ(v, (int64_t)i);
    }
    int64_t v;
    ASSERT_STATUS(weft_params_get_int(p, "missing", &v), WEFT_ENOENT);
    weft_params_destroy(p);
    return d;
}

/* weft_params_set_* and the getters searched every parameter by name: n of
 * them set cost n^2 / 2 string compares (16,000 parameters: 0.9 s); a
 * factory's make, checking r required ones, r times the parameters given. */
TEST(setting_many_parameters_stays_linear) {
    struct named small = {.k = 1000}, big = {.k = 16000};
    double a = best_of(3, params_round, &small), b = best_of(3, params_round, &big);
    if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "params %zu: %.5f %zu: %.5f\n", small.k, a, big.k, b);
    /* 16x the parameters: 16x the time, some more for the caches; n^2 is 256x. */
    if (b > 60 * a + 0.02) TEST_FAIL_("%zu parameters took %.4f s, %zu took %.4f s", big.k, b, small.k, a);
}

/* ---- a taskflow using many semaphores --------------------------------------------- */

struct ledger {
    size_t m;
    bool distinct; /* a semaphore per section, else one for all */
};

/* m sections, each acquired by one task and released by its successor. */
static double ledger_round(void *arg) {
    struct ledger *l = arg;
    size_t ns = l->distinct ? l->m : 1;
    weft_semaphore **s = calloc(ns, sizeof *s);
    ASSERT_NOT_NULL(s);
    for (size_t i = 0; i < ns; i++) ASSERT_NOT_NULL(s[i] = weft_semaphore_create(1, NULL));
    weft_taskflow *tf = make_taskflow("sections");
    atomic_int hits = 0;
    double t0 = cpu_s();
    for (size_t i = 0; i < l->m; i++) {
        weft_task a = must_emplace(tf, bump, &hits), b = must_emplace(tf, bump, &hits);
        ASSERT_OK(weft_precede(a, b));
        ASSERT_OK(weft_task_acquire(a, s[l->distinct ? i : 0]));
        ASSERT_OK(weft_task_release(b, s[l->distinct ? i : 0]));
    }
    double d = cpu_s() - t0;
    t0 = process_cpu_s();
    ASSERT_OK(weft_run_and_wait(NULL, tf));
    d += process_cpu_s() - t0;
    ASSERT_EQ(atomic_load(&hits), 2 * (int)l->m);
    ASSERT_OK(weft_taskflow_destroy(tf));
    for (size_t i = 0; i < ns; i++) {
        ASSERT_EQ(weft_semaphore_value(s[i]), 1);
        ASSERT_OK(weft_semaphore_destroy(s[i]));
    }
    free(s);
    return d;
}

/* A taskflow keeps a ledger entry per semaphore its tasks use, found by a
 * search of the whole ledger on each weft_task_acquire / release and, for a
 * section spanning two tasks, at each of its acquires and releases in a run:
 * m semaphores cost m^2 / 2 compares to attach (64,000: 1.5 s) and as many
 * reads per run.  Compared with m sections over one semaphore, built and
 * run alike. */
TEST(attaching_and_running_sections_over_many_semaphores_stays_linear) {
    struct ledger many = {.m = 24000, .distinct = true}, one = {.m = 24000, .distinct = false};
    double a = best_of(3, ledger_round, &many), b = best_of(3, ledger_round, &one);
    if (getenv("SLOW_HUNT_PRINT")) fprintf(stderr, "many semaphores %.5f one %.5f\n", a, b);
    if (a > 4 * b + 0.03) TEST_FAIL_("%zu sections over as many semaphores took %.4f s, over one %.4f s", many.m, a, b);
}
