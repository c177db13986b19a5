/* weft.hpp, hunt 42 (session 41's open doubts): executor::num_waiters(),
 * Taskflow's count of the workers asleep (weft_executor_waiters). */
#include "cpp_test.hpp"

#include <atomic>
#include <chrono>
#include <thread>

static bool wait_num_waiters(const weft::executor &ex, std::size_t want) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ex.num_waiters() != want) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

TEST(cpp42_executor_num_waiters_counts_the_workers_asleep) {
    weft::executor ex(2);
    ASSERT_TRUE(wait_num_waiters(ex, 2)); /* idle: both asleep */
    std::atomic<bool> go{false};
    auto f = ex.async([&] {
        while (!go.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
    ASSERT_TRUE(wait_num_waiters(ex, 1)); /* one runs it, the other sleeps */
    ASSERT_LE(ex.num_waiters(), ex.num_workers());
    go = true;
    f.get();
    ex.wait_for_all();
    ASSERT_TRUE(wait_num_waiters(ex, 2));
}
