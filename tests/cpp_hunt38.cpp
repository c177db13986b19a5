/* weft.hpp, hunt 38: paths a Taskflow user porting code takes that the other
 * C++ tests do not (fork-join objects reached from other tasks, ...). */
#include "cpp_test.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

/* A task_group belongs to the task that made it: its frames are on that
 * task's worker.  A child that captured the group by reference and calls
 * run() or wait() on it (from its own task, maybe on another worker) used to
 * pop another thread's (empty) frame list and crash on a NULL link; it is an
 * error now, and the group still works for its own task. */
TEST(cpp_task_group_used_from_another_task_is_an_error_not_a_crash) {
    weft::executor ex(cpp_test_workers());
    std::atomic<int> refused_run{0}, refused_wait{0}, ran{0};
    for (int rep = 0; rep < 20; rep++) {
        int r = ex.run_root([&] {
            weft::task_group tg;
            tg.run([&] {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                try {
                    tg.run([&] { ran++; });
                } catch (const weft::error &e) {
                    if (e.status() == WEFT_EINVAL) refused_run++;
                }
                try {
                    tg.wait();
                } catch (const weft::error &e) {
                    if (e.status() == WEFT_EINVAL) refused_wait++;
                }
            });
            tg.run([&] { ran++; });
            tg.wait();
            return 1;
        });
        ASSERT_EQ(r, 1);
    }
    ASSERT_EQ(refused_run.load(), 20);
    ASSERT_EQ(refused_wait.load(), 20);
    ASSERT_EQ(ran.load(), 20);
}

/* The same for a spawned child's handle synced by another task. */
TEST(cpp_spawned_synced_from_another_task_is_an_error_not_a_crash) {
    weft::executor ex(cpp_test_workers());
    std::atomic<int> refused{0};
    for (int rep = 0; rep < 20; rep++) {
        int v = ex.run_root([&] {
            auto x = weft::spawn([] {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                return 5;
            });
            weft::task_group tg;
            tg.run([&] {
                try {
                    (void)x.sync();
                } catch (const weft::error &e) {
                    if (e.status() == WEFT_EINVAL) refused++;
                }
            });
            tg.wait();
            return x.sync();
        });
        ASSERT_EQ(v, 5);
    }
    ASSERT_EQ(refused.load(), 20);
}

/* A run that cannot start (a cycle) names the call that submitted it: run_n
 * and run_until said "weft::executor::run".  Nothing is left in flight: the
 * taskflow clears at once. */
TEST(cpp_refused_run_n_and_run_until_name_their_own_call) {
    weft::executor ex(cpp_test_workers());
    weft::taskflow tf("loop");
    auto a = tf.emplace([] {}), b = tf.emplace([] {});
    a.precede(b);
    b.precede(a);
    ASSERT_THROWS(ex.run(tf), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        ASSERT_EQ(std::string(e.what()).rfind("weft::executor::run: ", 0), 0u);
    });
    ASSERT_THROWS(ex.run_n(tf, 3), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        ASSERT_EQ(std::string(e.what()).rfind("weft::executor::run_n: ", 0), 0u);
    });
    ASSERT_THROWS(ex.run_until(tf, [] { return false; }), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        ASSERT_EQ(std::string(e.what()).rfind("weft::executor::run_until: ", 0), 0u);
    });
    tf.clear();
    ASSERT_EQ(tf.num_tasks(), 0u);
}
