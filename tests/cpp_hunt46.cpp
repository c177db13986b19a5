/* Session 46 (h46-3): weft.hpp, gaps a C++ user hits: graph semaphores from
 * C++ (weft::semaphore), subflow::join and stale exceptions of C API runs,
 * ~weft::pipeline during a run, exceptions from every kind of callable,
 * moved-from handles, and the algorithms over move-only and
 * non-default-constructible types. */
#include "cpp_test.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct boom : std::runtime_error {
    int id;
    explicit boom(int i) : std::runtime_error("boom " + std::to_string(i)), id(i) {}
};

int boom_id(const std::function<void()> &f) {
    try {
        f();
    } catch (const boom &b) {
        return b.id;
    } catch (const weft::error &) {
        return -2; /* weft's own error: the exception was lost */
    }
    return -1;
}

} // namespace

/* subflow::join rethrows the run's first exception, found by the run's key
 * (its future's address and id).  A run through the C API on another
 * executor, whose exception is never harvested, can leave an entry with the
 * same key as a later run's (the future's memory reused, ids restarting at 1
 * on a new executor): join must not take it for the new run's. */
TEST(subflow_join_never_rethrows_the_exception_of_a_c_api_run_with_its_future_address_and_id) {
    int counter = 0;
    int joined = 0; /* what join() rethrew in the last run */
    weft::taskflow tf;
    tf.emplace([&](weft::subflow &sf) {
        sf.emplace([p = &counter] { throw boom(++*p); });
        joined = boom_id([&] { sf.join(); });
    });
    int wrong = 0, wrong_get = 0;
    for (int round = 0; round < 20; ++round) {
        {
            weft::executor a(1);
            weft_future *f = nullptr;
            ASSERT_EQ(weft_run(a.native(), tf.native(), &f), WEFT_OK);
            ASSERT_EQ(weft_future_wait(f), WEFT_ETASK);
            weft_future_destroy(f); /* its exception is never harvested */
        }
        weft::executor b(1);
        int expect = counter + 1;
        joined = 0;
        int got = boom_id([&] { b.run(tf).get(); });
        if (joined != expect) wrong++;
        if (got != expect) wrong_get++;
    }
    ASSERT_EQ(wrong_get, 0);
    ASSERT_EQ(wrong, 0);
}
