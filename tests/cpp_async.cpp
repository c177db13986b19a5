/* weft.hpp: async tasks and their futures (values, exceptions, cancel), the
 * executor's task groups, spawn/sync and run_root (values and exceptions of
 * fork-join children). */
#include "cpp_test.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

TEST(cpp_async_future_get_returns_the_value) {
    weft::executor ex(cpp_test_workers());
    weft::future<int> a = ex.async([] { return 6 * 7; });
    weft::future<std::string> b = ex.async([s = std::string("we")] { return s + "ft"; });
    auto owned = std::make_unique<double>(2.5);
    weft::future<std::unique_ptr<double>> c = ex.async([p = std::move(owned)]() mutable { return std::move(p); });
    int side = 0;
    weft::future<void> d = ex.async([&side] { side = 1; });
    ASSERT_EQ(a.get(), 42);
    ASSERT_TRUE(b.get() == "weft");
    ASSERT_TRUE(*c.get() == 2.5);
    d.get();
    ASSERT_EQ(side, 1);
    ASSERT_TRUE(a.ready());
    std::vector<weft::future<size_t>> many;
    for (size_t i = 0; i < 1000; i++) many.push_back(ex.async([i] { return i * i; }));
    for (size_t i = 0; i < 1000; i++) ASSERT_EQ(many[i].get(), i * i);
}

/* info() of a future with no state (default-made or moved from) throws as
 * wait() and get() do; it returned a zeroed record, status WEFT_OK, as if a
 * run had succeeded. */
TEST(cpp_info_of_a_future_without_state_throws_instead_of_reporting_success) {
    weft::executor ex(1);
    weft::future<void> none;
    ASSERT_THROWS(none.info(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    weft::taskflow tf;
    tf.emplace([] { throw 1; });
    weft::future<void> f = ex.run(tf);
    weft::future<void> g = std::move(f);
    ASSERT_THROWS(g.get(), int, e, (void)e);
    ASSERT_THROWS(f.info(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    ASSERT_STATUS(g.info().status, WEFT_ETASK);
}

TEST(cpp_async_exception_is_rethrown_from_get) {
    weft::executor ex(cpp_test_workers());
    weft::future<int> f = ex.async([]() -> int { throw std::out_of_range("index 9"); });
    ASSERT_THROWS(f.get(), std::out_of_range, e, ASSERT_STREQ(e.what(), "index 9"));
    ASSERT_STATUS(f.info().status, WEFT_ETASK);
    /* A dropped future: the task still runs and frees its state. */
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; i++) (void)ex.async([&ran] { ran++; throw 1; });
    ex.wait_for_all();
    ASSERT_EQ(ran.load(), 100);
    ex.silent_async([&ran] { ran++; });
    ex.wait_for_all();
    ASSERT_EQ(ran.load(), 101);
}

TEST(cpp_async_inside_a_task_waits_without_blocking_the_worker) {
    weft::executor ex(1); /* one worker: a blocking wait would hang */
    weft::future<long> outer = ex.async([&ex] {
        std::vector<weft::future<long>> inner;
        for (long i = 1; i <= 10; i++) inner.push_back(ex.async([i] { return i; }));
        long s = 0;
        for (auto &f : inner) s += f.get();
        return s;
    });
    ASSERT_EQ(outer.get(), 55);
}

TEST(cpp_cancelled_async_never_runs_and_leaks_nothing) {
    weft::executor ex(1);
    std::atomic<bool> release{false};
    std::atomic<int> ran{0};
    weft::future<void> blocker = ex.async([&] {
        while (!release.load()) std::this_thread::yield();
    });
    auto big = std::make_shared<int>(5);
    weft::future<int> f = ex.async([&ran, big] { ran++; return *big; });
    ASSERT_TRUE(f.cancel());
    release = true;
    blocker.get();
    ASSERT_THROWS(f.get(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_ECANCELED));
    ASSERT_EQ(ran.load(), 0);
    f = weft::future<int>(); /* the state (and its copy of big) is freed by the callback */
    ex.wait_for_all();
    ASSERT_EQ(big.use_count(), 1);
}

/* The guide sends a port to native() for what the C++ layer lacks, such as a
 * cancellation token: an async task that a token skips never runs its
 * trampoline, and its state (with the lambda's captures) must still be freed,
 * whether the future is kept until then or dropped first. */
TEST(cpp_async_skipped_through_its_c_handle_frees_its_captures) {
    weft::executor ex(1);
    std::atomic<bool> release{false};
    weft::future<void> blocker = ex.async([&] {
        while (!release.load()) std::this_thread::yield();
    });
    auto big = std::make_shared<int>(5);
    weft::future<int> kept = ex.async([big] { return *big; });
    weft::future<int> dropped = ex.async([big] { return *big; });
    weft_cancel_token *t = weft_cancel_token_create(nullptr, nullptr);
    ASSERT_TRUE(t != nullptr);
    ASSERT_STATUS(weft_cancel_attach(t, kept.native()), WEFT_OK);
    ASSERT_STATUS(weft_cancel_attach(t, dropped.native()), WEFT_OK);
    dropped = weft::future<int>(); /* detached before it is skipped */
    ASSERT_EQ(big.use_count(), 3);
    ASSERT_STATUS(weft_cancel_token_cancel(t), WEFT_OK);
    release = true;
    blocker.get();
    ASSERT_THROWS(kept.get(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_ECANCELED));
    kept = weft::future<int>();
    ex.wait_for_all();
    weft_cancel_token_destroy(t);
    ASSERT_EQ(big.use_count(), 1);
}

TEST(cpp_dependent_async_starts_after_its_dependencies) {
    weft::executor ex(cpp_test_workers());
    std::atomic<int> done{0};
    weft::future<int> a = ex.async([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        done++;
        return 1;
    });
    weft::future<void> b = ex.async([&] { done++; throw std::runtime_error("b"); }); /* failed: still a dependency */
    weft::future<int> c = ex.dependent_async([&] { return done.load(); }, a, b);
    ASSERT_EQ(c.get(), 2);
    ASSERT_EQ(ex.dependent_async([] { return 7; }).get(), 7);
    weft::taskflow tf;
    tf.emplace([] {});
    weft::future<void> run = ex.run(tf);
    ASSERT_THROWS(ex.dependent_async([] {}, run), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    run.get();
}

TEST(cpp_future_wait_for_times_out_then_succeeds) {
    weft::executor ex(2);
    std::atomic<bool> go{false};
    weft::future<int> f = ex.async([&] {
        while (!go.load()) std::this_thread::yield();
        return 3;
    });
    ASSERT_FALSE(f.wait_for(std::chrono::milliseconds(1)));
    go = true;
    ASSERT_TRUE(f.wait_for(std::chrono::seconds(30)));
    ASSERT_EQ(f.get(), 3);
    weft::future<int> empty;
    ASSERT_FALSE(empty.valid());
    ASSERT_THROWS(empty.wait(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
}

TEST(cpp_future_wait_for_a_very_long_duration_waits) {
    weft::executor ex(2);
    auto slow = [] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return 1;
    };
    /* seconds::max() and 1000 years overflow int64 nanoseconds: the old code
     * waited for no time and returned false. */
    weft::future<int> f = ex.async(slow);
    ASSERT_TRUE(f.wait_for(std::chrono::seconds::max()));
    ASSERT_EQ(f.get(), 1);
    weft::future<int> g = ex.async(slow);
    ASSERT_TRUE(g.wait_for(std::chrono::hours(24 * 365 * 1000)));
    weft::future<int> h = ex.async(slow);
    ASSERT_TRUE(h.wait_for(std::chrono::duration<double>(1e300)));
    ASSERT_TRUE(h.ready());
}

/* ---- fork-join ------------------------------------------------------------------- */

static long fib_group(weft::executor &ex, long n) {
    if (n < 2) return n;
    long a = 0, b = 0;
    weft::task_group tg = ex.task_group();
    tg.silent_async([&ex, n, &a] { a = fib_group(ex, n - 1); });
    b = fib_group(ex, n - 2);
    tg.corun();
    return a + b;
}

static long fib_spawn(long n) {
    if (n < 2) return n;
    auto x = weft::spawn([n] { return fib_spawn(n - 1); });
    long b = fib_spawn(n - 2);
    return x.sync() + b;
}

TEST(cpp_task_group_and_spawn_compute_fibonacci) {
    weft::executor ex(cpp_test_workers());
    ASSERT_EQ(ex.async([&ex] { return fib_group(ex, 20); }).get(), 6765);
    ASSERT_EQ(ex.run_root([] { return fib_spawn(24); }), 46368);
    weft::taskflow tf;
    long r = 0;
    tf.emplace([&r] { r = fib_spawn(18); });
    ex.run(tf).get();
    ASSERT_EQ(r, 2584);
}

TEST(cpp_fork_join_child_exception_reaches_wait_sync_and_get) {
    weft::executor ex(cpp_test_workers());
    /* task_group::wait rethrows the first child's exception; the others ran,
     * or were skipped if they had not started when it threw (Taskflow's
     * rule: cpp_hunt42). */
    std::atomic<int> ran{0};
    int caught = ex.run_root([&] {
        weft::task_group g;
        for (int i = 0; i < 64; i++)
            g.run([i, &ran] {
                ran++;
                if (i == 13) throw std::invalid_argument("child 13");
            });
        try {
            g.wait();
        } catch (const std::invalid_argument &e) {
            return std::string(e.what()) == "child 13" ? 1 : 2;
        }
        return 0;
    });
    ASSERT_EQ(caught, 1);
    ASSERT_GE(ran.load(), 1);
    ASSERT_LE(ran.load(), 64);
    /* spawned::sync rethrows; uncaught, it leaves the async task for its future. */
    weft::future<int> f = ex.async([] {
        auto x = weft::spawn([]() -> int { throw std::length_error("spawned"); });
        return x.sync();
    });
    ASSERT_THROWS(f.get(), std::length_error, e, ASSERT_STREQ(e.what(), "spawned"));
    /* run_root rethrows its root's exception. */
    ASSERT_THROWS(ex.run_root([] { throw std::domain_error("root"); }), std::domain_error, e, (void)e);
    /* A child left unsynced is synced by its destructor when the parent throws. */
    std::atomic<int> done{0};
    ASSERT_THROWS(ex.run_root([&] {
        auto x = weft::spawn([&] { done++; });
        weft::task_group g;
        g.run([&] { done++; });
        throw std::runtime_error("parent");
    }), std::runtime_error, e, (void)e);
    ASSERT_EQ(done.load(), 2);
}

TEST(cpp_fork_join_outside_a_task_is_an_error_not_a_crash) {
    weft::executor ex(2);
    ASSERT_THROWS(ex.task_group(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(weft::spawn([] {}), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(weft::task_group(), weft::error, e, ASSERT_STATUS(e.status(), WEFT_EINVAL));
    weft::executor other(1);
    ASSERT_THROWS(ex.run_root([&other] { (void)other.task_group(); }), weft::error, e,
                  ASSERT_STATUS(e.status(), WEFT_EINVAL));
}

TEST(cpp_current_context_is_the_innermost_task_also_after_c_waits) {
    weft::executor ex(1); /* one worker: the inner runs happen inside the waits */
    ASSERT_NULL(weft_current_ctx());
    weft::taskflow inner;
    std::atomic<int> inner_ok{0};
    inner.emplace([&](weft::runtime &rt) { inner_ok += weft_current_ctx() == rt.native(); });
    weft::taskflow outer;
    bool same_before = false, same_after_c = false, same_after_cpp = false;
    long fib = 0;
    outer.emplace([&](weft::runtime &rt) {
        same_before = weft_current_ctx() == rt.native();
        (void)weft_run_and_wait(ex.native(), inner.native()); /* a C wait: inner runs here */
        same_after_c = weft_current_ctx() == rt.native();
        ex.run(inner).get(); /* a C++ wait */
        same_after_cpp = weft_current_ctx() == rt.native();
        fib = fib_spawn(15); /* spawn finds this task's context */
    });
    ex.run(outer).get();
    ASSERT_TRUE(same_before);
    ASSERT_TRUE(same_after_c);
    ASSERT_TRUE(same_after_cpp);
    ASSERT_EQ(inner_ok.load(), 2);
    ASSERT_EQ(fib, 610);
    ASSERT_NULL(weft::this_task_context());
}

TEST(cpp_executor_moves_and_default_executor_is_shared) {
    weft::executor a(2);
    ASSERT_EQ(a.num_workers(), 2);
    weft::executor b(std::move(a));
    ASSERT_EQ(b.async([] { return 1; }).get(), 1);
    weft::executor &d1 = weft::executor::default_executor();
    weft::executor &d2 = weft::executor::default_executor();
    ASSERT_TRUE(&d1 == &d2);
    ASSERT_TRUE(d1.native() == weft_default_executor());
    ASSERT_EQ(d1.async([] { return 5; }).get(), 5);
    /* Moving from the shared default (it owns nothing) leaves it usable: it
     * was empty for the rest of the program (every call EINVAL). */
    weft::executor moved(std::move(weft::executor::default_executor()));
    ASSERT_TRUE(moved.native() == weft_default_executor());
    ASSERT_TRUE(weft::executor::default_executor().native() == weft_default_executor());
    ASSERT_EQ(weft::executor::default_executor().async([] { return 6; }).get(), 6);
    weft::executor other(1);
    other = std::move(weft::executor::default_executor());
    ASSERT_EQ(weft::executor::default_executor().async([] { return 7; }).get(), 7);
    ASSERT_EQ(other.async([] { return 8; }).get(), 8);
}
