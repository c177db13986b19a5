/* weft_taskflow_num_runs (session 47): the count of a taskflow's runs that
 * are submitted and not finished, queued or going, and of other taskflows'
 * runs that hold it as a module body, as graph.h says. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

static atomic_int gate47g;
static int hold47g(weft_ctx *cx, void *p) {
    (void)cx, (void)p;
    while (!atomic_load_explicit(&gate47g, memory_order_acquire)) sleep_us(100);
    return 0;
}

TEST(num_runs_counts_queued_going_and_module_runs_and_is_0_once_they_end) {
    ASSERT_EQ(weft_taskflow_num_runs(NULL), 0);
    weft_executor *ex = make_executor(1), *ex2 = make_executor(1);
    weft_taskflow *tf = make_taskflow("runs47"), *parent = make_taskflow("parent47");
    must_emplace(tf, hold47g, NULL);
    ASSERT_EQ(weft_taskflow_num_runs(tf), 0);

    /* one going on ex, one queued behind it on the same executor, one more on ex2 */
    atomic_store(&gate47g, 0);
    weft_future *r1 = NULL, *r2 = NULL, *r3 = NULL;
    ASSERT_OK(weft_run(ex, tf, &r1));
    ASSERT_EQ(weft_taskflow_num_runs(tf), 1);
    ASSERT_OK(weft_run(ex, tf, &r2));
    ASSERT_OK(weft_run(ex2, tf, &r3));
    ASSERT_EQ(weft_taskflow_num_runs(tf), 3);
    atomic_store(&gate47g, 1);
    ASSERT_OK(weft_future_wait(r1));
    ASSERT_OK(weft_future_wait(r2));
    ASSERT_OK(weft_future_wait(r3));
    ASSERT_EQ(weft_taskflow_num_runs(tf), 0); /* a wait returns after its run's end is counted */
    weft_future_destroy(r1);
    weft_future_destroy(r2);
    weft_future_destroy(r3);

    /* a parent's run holds tf as a module body from its submission on, before
     * the module task starts */
    atomic_store(&gate47g, 0);
    weft_task ph = must_emplace(parent, hold47g, NULL), m = weft_emplace_module(parent, tf);
    ASSERT_FALSE(weft_task_is_null(m));
    ASSERT_OK(weft_precede(ph, m));
    weft_future *rp = NULL;
    ASSERT_OK(weft_run(ex, parent, &rp));
    ASSERT_EQ(weft_taskflow_num_runs(parent), 1);
    ASSERT_EQ(weft_taskflow_num_runs(tf), 1);
    atomic_store(&gate47g, 1);
    ASSERT_OK(weft_future_wait(rp));
    weft_future_destroy(rp);
    ASSERT_EQ(weft_taskflow_num_runs(parent), 0);
    ASSERT_EQ(weft_taskflow_num_runs(tf), 0);

    /* weft_run_n_parallel: counted while its instances go */
    atomic_store(&gate47g, 0);
    weft_future *rn = NULL;
    ASSERT_OK(weft_run_n_parallel(ex2, tf, 3, &rn));
    ASSERT_TRUE(weft_taskflow_num_runs(tf) >= 1);
    atomic_store(&gate47g, 1);
    ASSERT_OK(weft_future_wait(rn));
    weft_future_destroy(rn);
    ASSERT_EQ(weft_taskflow_num_runs(tf), 0);

    ASSERT_OK(weft_taskflow_destroy(parent));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    weft_executor_destroy(ex2);
}
