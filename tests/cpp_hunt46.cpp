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

#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace {

/* Runs fn in a child process with its stderr captured; returns whether it
 * was stopped by SIGABRT (std::terminate) within 10 s, with what it wrote
 * in *msg.  Exit code 3 from fn: it neither stopped nor hung. */
bool aborts_in_child(void (*fn)(), std::string *msg) {
    int err[2];
    if (pipe(err) != 0) return false;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        dup2(err[1], 2);
        close(err[0]);
        fn();
        _exit(3);
    }
    close(err[1]);
    int status = 0;
    pid_t w = 0;
    for (int ms = 0; ms < 10000 && (w = waitpid(pid, &status, WNOHANG)) == 0; ms++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        *msg = "(the child hung)";
        close(err[0]);
        return false;
    }
    char buf[1024] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(err[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    close(err[0]);
    *msg = buf;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

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

/* ---- weft::semaphore ------------------------------------------------------ */

TEST(a_semaphore_lets_at_most_max_value_tasks_run_at_once_and_every_task_runs_once) {
    weft::executor ex(4);
    weft::semaphore sem(2);
    ASSERT_EQ(sem.max_value(), 2u);
    ASSERT_EQ(sem.value(), 2u);
    weft::taskflow tf;
    std::atomic<int> inside{0}, most{0}, ran{0};
    for (int i = 0; i < 24; ++i) {
        auto t = tf.emplace([&] {
            int now = ++inside;
            int m = most.load();
            while (now > m && !most.compare_exchange_weak(m, now)) {
            }
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            ++ran;
            --inside;
        });
        t.acquire(sem).release(sem);
        ASSERT_EQ(t.num_acquires(), 1u);
        ASSERT_EQ(t.num_releases(), 1u);
    }
    for (int round = 0; round < 3; ++round) ex.run(tf).get();
    ASSERT_EQ(ran.load(), 72);
    ASSERT_TRUE(most.load() <= 2);
    ASSERT_EQ(sem.value(), 2u);
}

/* One semaphore of max 1 shared by two taskflows on two executors: a
 * critical section across them (the C contract: any executors). */
TEST(a_semaphore_of_one_is_a_critical_section_across_two_taskflows_on_two_executors) {
    weft::executor a(2), b(2);
    weft::semaphore sem(1);
    weft::taskflow t1, t2;
    std::atomic<int> inside{0}, bad{0};
    long plain = 0; /* guarded by sem only: TSan sees a race if it fails */
    auto body = [&] {
        if (++inside != 1) bad++;
        plain++;
        --inside;
    };
    for (int i = 0; i < 50; ++i) {
        t1.emplace(body).acquire(sem).release(sem);
        t2.emplace(body).acquire(sem).release(sem);
    }
    auto f1 = a.run_n(t1, 4);
    auto f2 = b.run_n(t2, 4);
    f1.get();
    f2.get();
    ASSERT_EQ(bad.load(), 0);
    ASSERT_EQ(plain, 400);
    ASSERT_EQ(sem.value(), 1u);
}

/* Acquire in one task, release in a later one: a section over a chain. */
TEST(a_semaphore_section_may_span_a_chain_from_an_acquiring_to_a_releasing_task) {
    weft::executor ex(4);
    weft::semaphore sem(1);
    weft::taskflow tf;
    std::atomic<int> inside{0}, bad{0};
    for (int c = 0; c < 6; ++c) {
        auto first = tf.emplace([&] { if (++inside != 1) bad++; });
        auto mid = tf.emplace([&] { if (inside.load() != 1) bad++; });
        auto last = tf.emplace([&] { --inside; });
        first.precede(mid);
        mid.precede(last);
        first.acquire(sem);
        last.release(sem);
    }
    ex.run_n(tf, 5).get();
    ASSERT_EQ(bad.load(), 0);
    ASSERT_EQ(sem.value(), 1u);
}

TEST(semaphore_misuse_gives_weft_errors_never_a_crash) {
    ASSERT_THROWS(weft::semaphore(0), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    weft::semaphore a(1);
    weft::semaphore b(std::move(a));
    ASSERT_TRUE(a.native() == nullptr);
    ASSERT_TRUE(b.native() != nullptr);
    ASSERT_THROWS((void)a.value(), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_THROWS((void)a.max_value(), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(a.reset(), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    weft::taskflow tf;
    auto t = tf.emplace([] {});
    ASSERT_THROWS(t.acquire(a), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_THROWS(t.release(a), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    ASSERT_EQ(t.num_acquires(), 0u);
    weft::task empty;
    ASSERT_THROWS(empty.acquire(b), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    /* Self-move and move-assign onto a live one: the old one is destroyed. */
    weft::semaphore c(3);
    c = std::move(b);
    ASSERT_EQ(c.max_value(), 1u);
    ASSERT_TRUE(b.native() == nullptr);
    weft::semaphore &cr = c;
    c = std::move(cr);
    ASSERT_EQ(c.max_value(), 1u);
    /* An edit while the taskflow runs: EBUSY, as every builder. */
    weft::executor ex(2);
    std::atomic<bool> go{false};
    weft::taskflow busy;
    busy.emplace([&] { while (!go.load()) std::this_thread::yield(); });
    auto other = busy.emplace([] {});
    auto f = ex.run(busy);
    ASSERT_THROWS(other.acquire(c), weft::error, e, ASSERT_EQ(e.status(), WEFT_EBUSY));
    go = true;
    f.get();
    other.acquire(c).release(c);
    ex.run(busy).get();
    ASSERT_EQ(c.value(), 1u);
}

/* A task holding a unit throws: the run rethrows it, the unit comes back,
 * and the parked tasks of that run are skipped, not left parked. */
TEST(a_task_holding_a_semaphore_that_throws_gives_its_unit_back_and_the_run_rethrows) {
    weft::executor ex(4);
    weft::semaphore sem(1);
    weft::taskflow tf;
    std::atomic<int> ran{0};
    for (int i = 0; i < 8; ++i)
        tf.emplace([&, i] {
            ran++;
            if (i == 3) throw boom(3);
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }).acquire(sem).release(sem);
    for (int round = 0; round < 5; ++round) {
        ran = 0;
        ASSERT_EQ(boom_id([&] { ex.run(tf).get(); }), 3);
        ASSERT_EQ(sem.value(), 1u);
        ASSERT_TRUE(ran.load() >= 1 && ran.load() <= 8);
    }
}

/* ~semaphore off the workers while a run that holds it is going waits for
 * the run (as ~taskflow does), so the run never touches freed memory. */
TEST(a_semaphore_destroyed_while_a_run_holds_it_waits_for_that_run) {
    weft::executor ex(2);
    auto sem = std::make_unique<weft::semaphore>(1);
    weft::taskflow tf;
    std::atomic<bool> in{false};
    std::atomic<int> done{0};
    auto a = tf.emplace([&] {
        in = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        done++;
    });
    auto b = tf.emplace([&] { done++; });
    a.precede(b);
    a.acquire(*sem);
    b.release(*sem);
    auto f = ex.run(tf);
    while (!in.load()) std::this_thread::yield();
    sem.reset(); /* waits */
    ASSERT_EQ(done.load(), 2);
    f.get();
}

static void destroy_semaphore_in_a_task_while_in_use() {
    weft::executor ex(2);
    auto sem = std::make_unique<weft::semaphore>(1);
    weft::taskflow user, killer;
    std::atomic<bool> in{false}, go{false};
    user.emplace([&] {
        in = true;
        while (!go.load()) std::this_thread::yield();
    }).acquire(*sem).release(*sem);
    auto f = ex.run(user);
    while (!in.load()) std::this_thread::yield();
    killer.emplace([&] { sem.reset(); });
    (void)ex.run(killer).wait_for(std::chrono::seconds(5));
    go = true;
    f.wait();
}

/* Inside a task the destructor cannot wait (the users may need the
 * worker): it stops the program with a message, as documented. */
TEST(a_semaphore_destroyed_inside_a_task_while_in_use_stops_with_a_message) {
#ifdef __SANITIZE_THREAD__
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    std::string msg;
    bool aborted = aborts_in_child(&destroy_semaphore_in_a_task_while_in_use, &msg);
    if (!aborted) TEST_FAIL_("the child did not abort: %s", msg.c_str());
    ASSERT_TRUE(msg.find("weft::semaphore destroyed inside a task while in use") != std::string::npos);
}

/* ---- ~weft::pipeline during a run ------------------------------------------ */

static void destroy_pipeline_while_it_runs() {
    weft::executor ex(2);
    std::atomic<bool> in{false}, go{false};
    weft::taskflow tf;
    auto pl = std::make_unique<weft::pipeline>(
        2, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
               if (pf.token() == 0) {
                   in = true;
                   while (!go.load()) std::this_thread::yield();
               }
               if (pf.token() == 3) pf.stop();
           }});
    tf.composed_of(*pl);
    auto f = ex.run(tf);
    while (!in.load()) std::this_thread::yield();
    pl.reset(); /* the stage is running: freeing its callable would be a use after free */
    go = true;
    f.wait();
}

TEST(a_pipeline_destroyed_while_it_runs_stops_with_a_message_instead_of_freeing_its_stages) {
#ifdef __SANITIZE_THREAD__
    SKIP("TSan cannot start threads after a multi-threaded fork");
#endif
    std::string msg;
    bool aborted = aborts_in_child(&destroy_pipeline_while_it_runs, &msg);
    if (!aborted) TEST_FAIL_("the child did not abort: %s", msg.c_str());
    ASSERT_TRUE(msg.find("weft::pipeline destroyed while it runs") != std::string::npos);
}

/* After its runs, a pipeline is destroyed quietly, and one moved from is
 * destroyed quietly too. */
TEST(a_pipeline_destroyed_after_its_runs_or_moved_from_is_destroyed_quietly) {
    weft::executor ex(2);
    int tokens = 0;
    auto pl = std::make_unique<weft::pipeline>(
        2, weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
               if (pf.token() == 5) pf.stop();
               else tokens++;
           }});
    weft::pipeline moved(std::move(*pl));
    {
        weft::taskflow tf;
        tf.composed_of(moved);
        ex.run(tf).get();
        ASSERT_THROWS(tf.composed_of(*pl), weft::error, e, ASSERT_EQ(e.status(), WEFT_EINVAL));
    }
    pl.reset();
    ASSERT_EQ(tokens, 5);
}
