/* Slow paths (hunt 43): operations whose cost grew faster than their input.
 * Each was measured at n and 8n; these are the ones that grew quadratically
 * (64x and more where 8x was due).  A test measures the operation against a
 * linear one of the same size on the same data (building it, typically), so
 * the ratio does not depend on the machine's speed; the bounds are loose
 * (a quadratic path is tens to hundreds of times past them at these sizes).
 * Each test well under a second once fixed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "test_util.h"

#include <weft.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    for (size_t i = 0; i < m->k; i++) {
        bodies[i] = make_taskflow(NULL);
        (void)must_emplace(bodies[i], noop, NULL);
    }
    double t0 = now_s();
    for (size_t i = 0; i < m->k; i++) ASSERT_FALSE(weft_task_is_null(weft_emplace_module(tf, bodies[i])));
    double t1 = now_s();
    ASSERT_OK(weft_taskflow_clear(tf));
    double t2 = now_s();
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
    struct modules m = {.k = 32000};
    m.clear = best_of(3, modules_round, &m);
    if (m.clear > 4 * m.build + 0.005)
        TEST_FAIL_("clear of %zu modules took %.4f s, their emplace %.4f s", m.k, m.clear, m.build);
}
