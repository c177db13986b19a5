/* Session 42 (h42-10): weft::subflow::join() called from a task of the
 * subflow's own graph while the subflow joins it, and the C API's
 * weft_subflow_join for the same misuse. */
#include "cpp_test.hpp"

#include <atomic>
#include <string>

namespace {

struct join_probe {
    std::atomic<int> thrown{0}, returned{0}, after{0};
    weft_status status = WEFT_OK;
    std::string what;
};

/* The C form: the subflow's function joins; a task of its graph joins too. */
struct c_probe {
    weft_subflow *sf;
    weft_status inner;
    std::atomic<int> after;
};

int c_inner_join(weft_ctx *, void *arg) {
    c_probe *p = static_cast<c_probe *>(arg);
    p->inner = weft_subflow_join(p->sf);
    return 0;
}

int c_after(weft_ctx *, void *arg) {
    static_cast<c_probe *>(arg)->after.store(1);
    return 0;
}

int c_subflow(weft_ctx *, weft_subflow *sf, void *arg) {
    c_probe *p = static_cast<c_probe *>(arg);
    p->sf = sf;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace(g, c_inner_join, p), b = weft_emplace(g, c_after, p);
    if (weft_task_is_null(a) || weft_task_is_null(b) || weft_precede(a, b) != WEFT_OK) return 1;
    return weft_subflow_join(sf) == WEFT_OK ? 0 : 2;
}

} // namespace

/* A task of the subflow's graph calling sf.join() while the subflow's
 * function joins that graph got back at once (the graph was marked joined
 * before it ran) and wrote joined_ from another thread while the function
 * used the object: a join that did not wait, and a race.  The graph cannot
 * wait for itself: weft::error WEFT_EDEADLK, as the C call's status. */
TEST(subflow_join_from_a_task_of_its_own_graph_throws_edeadlk) {
    weft::executor ex(cpp_test_workers());
    weft::taskflow tf("join-inside");
    join_probe p;
    tf.emplace([&p](weft::subflow &sf) {
        auto a = sf.emplace([&p, &sf] {
            try {
                sf.join();
                p.returned++;
            } catch (const weft::error &e) {
                p.status = e.status();
                p.what = e.what();
                p.thrown++;
            }
        });
        auto b = sf.emplace([&p] { p.after++; });
        a.precede(b);
        sf.join();
        if (p.after.load() != 1) p.returned += 100; /* the function's join waited for the graph */
    });
    ex.run(tf).get();
    if (p.thrown.load() != 1 || p.returned.load() != 0)
        TEST_FAIL_("thrown %d, returned %d (%s)", p.thrown.load(), p.returned.load(), p.what.c_str());
    ASSERT_EQ(p.status, WEFT_EDEADLK);
    ASSERT_TRUE(p.what.find("weft::subflow::join") != std::string::npos);
    ASSERT_TRUE(p.what.find("own graph") != std::string::npos);
    /* The taskflow runs again, with the same result. */
    p.thrown = 0;
    ex.run(tf).get();
    ASSERT_EQ(p.thrown.load(), 1);
}

TEST(weft_subflow_join_from_a_task_of_its_own_graph_is_edeadlk) {
    weft_executor_config cfg{};
    cfg.workers = 2;
    weft_executor *ex = weft_executor_create(&cfg, nullptr);
    ASSERT_NOT_NULL(ex);
    weft_taskflow *tf = weft_taskflow_create("c-join-inside", nullptr);
    ASSERT_NOT_NULL(tf);
    c_probe p{nullptr, WEFT_OK, {0}};
    ASSERT_FALSE(weft_task_is_null(weft_emplace_subflow(tf, c_subflow, &p)));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(p.inner, WEFT_EDEADLK);
    ASSERT_EQ(p.after.load(), 1);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
