/* weft.hpp: fork-join objects of one task are independent.  Each spawned and
 * task_group joins exactly its own children, whatever the order of the sync()
 * and wait() calls (the C frame stack is last in, first out). */
#include "cpp_test.hpp"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

TEST(cpp_spawned_synced_in_spawn_order_each_returns_its_own_child) {
    weft::executor ex(cpp_test_workers());
    /* Values. */
    auto r = ex.run_root([] {
        auto x = weft::spawn([] { return 1; });
        auto y = weft::spawn([] { return 2; });
        int a = x.sync();
        int b = y.sync();
        return std::make_pair(a, b);
    });
    ASSERT_EQ(r.first, 1);
    ASSERT_EQ(r.second, 2);
    /* Values that own memory (the old code moved out of an empty optional). */
    std::string s = ex.run_root([] {
        auto x = weft::spawn([] { return std::string(100, 'x'); });
        auto y = weft::spawn([] { return std::string(100, 'y'); });
        std::string a = x.sync();
        std::string b = y.sync();
        return a + "|" + b;
    });
    ASSERT_EQ(s.size(), 201u);
    ASSERT_TRUE(s == std::string(100, 'x') + "|" + std::string(100, 'y'));
    /* An exception comes from the sync of the child that threw, not another. */
    int where = ex.run_root([] {
        auto x = weft::spawn([]() -> int { throw std::runtime_error("from x"); });
        auto y = weft::spawn([] { return 2; });
        try {
            (void)x.sync();
            return 1;
        } catch (const std::runtime_error &e) {
            if (std::string(e.what()) != "from x") return 2;
        }
        return y.sync() == 2 ? 0 : 3;
    });
    ASSERT_EQ(where, 0);
    /* Many, synced oldest first, with children that spawn too. */
    long sum = ex.run_root([] {
        long total = 0;
        auto a = weft::spawn([] { auto c = weft::spawn([] { return 10L; }); return c.sync() + 1; });
        auto b = weft::spawn([] { return 100L; });
        auto c = weft::spawn([] { return 1000L; });
        total += a.sync() * 1;
        total += c.sync() * 2;
        total += b.sync() * 3;
        return total;
    });
    ASSERT_EQ(sum, 11L + 2000L + 300L);
}

TEST(cpp_task_groups_of_one_task_wait_only_for_their_own_children) {
    using namespace std::chrono_literals;
    weft::executor ex(2);
    /* io.wait() returns only after io's child (the old code returned after
     * joining compute's child, the innermost frame). */
    bool loaded_after_io_wait = ex.run_root([] {
        std::atomic<bool> loaded{false}, computed{false};
        weft::task_group io;
        weft::task_group compute;
        io.run([&] {
            std::this_thread::sleep_for(50ms);
            loaded = true;
        });
        compute.run([&] { computed = true; });
        io.wait();
        bool ok = loaded.load();
        compute.wait();
        return ok && computed.load();
    });
    ASSERT_TRUE(loaded_after_io_wait);
    /* A spawn made before a group is synced before the group's wait. */
    int v = ex.run_root([] {
        auto x = weft::spawn([] {
            std::this_thread::sleep_for(20ms);
            return 7;
        });
        weft::task_group tg;
        tg.run([] {});
        int got = x.sync();
        tg.wait();
        return got;
    });
    ASSERT_EQ(v, 7);
    /* The exception of g1's child comes from g1.wait(), and g2.wait() is clean. */
    int report = ex.run_root([] {
        weft::task_group g1, g2;
        g1.run([] { throw std::runtime_error("g1 child"); });
        g2.run([] {});
        int r = 0;
        try {
            g1.wait();
            r |= 1;
        } catch (const std::runtime_error &e) {
            if (std::string(e.what()) != "g1 child") r |= 2;
        }
        try {
            g2.wait();
        } catch (...) {
            r |= 4;
        }
        return r;
    });
    ASSERT_EQ(report, 0);
    /* Interleaved runs of two groups: each wait sees all of its own children. */
    int counts = ex.run_root([] {
        std::atomic<int> a{0}, b{0};
        weft::task_group ga, gb;
        for (int i = 0; i < 50; i++) {
            ga.run([&] { a++; });
            gb.run([&] { b++; });
        }
        ga.wait();
        int seen_a = a.load();
        gb.wait();
        return seen_a * 1000 + b.load();
    });
    ASSERT_EQ(counts, 50 * 1000 + 50);
}
