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
#include <limits>
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

/* ---- algorithms: move-only callables and awkward element types ---------------- */

namespace {
/* A value with no default constructor. */
struct nd {
    long v;
    explicit nd(long x) : v(x) {}
    nd(const nd &) = default;
    nd &operator=(const nd &) = default;
    friend bool operator==(const nd &a, const nd &b) { return a.v == b.v; }
};
} // namespace

/* emplace takes move-only callables; so must the algorithm tasks built on it
 * (the free functions already did).  They captured the body by copy, and a
 * body holding a std::unique_ptr did not compile. */
TEST(algorithm_tasks_take_move_only_bodies_as_emplace_does) {
    weft::executor ex(4);
    weft::taskflow tf;
    std::vector<int> v(1000);
    std::iota(v.begin(), v.end(), 0);
    std::vector<int> out(v.size()), out2(v.size()), sc(v.size()), esc(v.size()), sorted = v;
    std::reverse(sorted.begin(), sorted.end());
    std::atomic<long> sum{0}, isum{0}, bsum{0};
    int red = 0;
    std::vector<int>::iterator found, notfound, mn, mx;
    tf.for_each(v.begin(), v.end(), [k = std::make_unique<int>(1), &sum](int x) { sum += x * *k; });
    tf.for_each_index(0, 1000, 1, [k = std::make_unique<int>(2), &isum](int i) { isum += i * *k; });
    tf.for_each_by_index(weft::index_range<int>(0, 1000, 1), [k = std::make_unique<int>(1), &bsum](weft::index_range<int> r) {
        for (int i = r.begin(); i < r.end(); i += r.step_size()) bsum += i * *k;
    });
    tf.transform(v.begin(), v.end(), out.begin(), [k = std::make_unique<int>(3)](int x) { return x * *k; });
    tf.transform(v.begin(), v.end(), v.begin(), out2.begin(), [k = std::make_unique<int>(1)](int a, int b) { return (a + b) * *k; });
    tf.reduce(v.begin(), v.end(), red, [k = std::make_unique<int>(0)](int a, int b) { return a + b + *k; });
    tf.sort(sorted.begin(), sorted.end(), [k = std::make_unique<int>(0)](int a, int b) { return a + *k < b; });
    tf.inclusive_scan(v.begin(), v.end(), sc.begin(), [k = std::make_unique<int>(0)](int a, int b) { return a + b + *k; });
    tf.exclusive_scan(v.begin(), v.end(), esc.begin(), 0, [k = std::make_unique<int>(0)](int a, int b) { return a + b + *k; });
    tf.find_if(v.begin(), v.end(), found, [k = std::make_unique<int>(700)](int x) { return x == *k; });
    tf.find_if_not(v.begin(), v.end(), notfound, [k = std::make_unique<int>(10)](int x) { return x < *k; });
    tf.min_element(v.begin(), v.end(), mn, [k = std::make_unique<int>(0)](int a, int b) { return a + *k < b; });
    tf.max_element(v.begin(), v.end(), mx, [k = std::make_unique<int>(0)](int a, int b) { return a + *k < b; });
    ex.run(tf).get();
    ASSERT_EQ(sum.load(), 499500);
    ASSERT_EQ(isum.load(), 999000);
    ASSERT_EQ(bsum.load(), 499500);
    ASSERT_EQ(out[999], 2997);
    ASSERT_EQ(out2[999], 1998);
    ASSERT_EQ(red, 499500);
    ASSERT_TRUE(std::is_sorted(sorted.begin(), sorted.end()));
    ASSERT_EQ(sc[999], 499500);
    ASSERT_EQ(esc[999], 499500 - 999);
    ASSERT_EQ(found - v.begin(), 700);
    ASSERT_EQ(notfound - v.begin(), 10);
    ASSERT_EQ(mn - v.begin(), 0);
    ASSERT_EQ(mx - v.begin(), 999);
    /* The free functions, with the same move-only bodies. */
    std::vector<int> w = v;
    std::reverse(w.begin(), w.end());
    weft::sort(ex, w.begin(), w.end(), [k = std::make_unique<int>(0)](int a, int b) { return a + *k < b; });
    ASSERT_TRUE(w == v);
    weft::sort(ex, w, [k = std::make_unique<int>(0)](int a, int b) { return b + *k < a; });
    ASSERT_EQ(w[0], 999);
    ASSERT_EQ(weft::reduce(ex, v.begin(), v.end(), 0L, [k = std::make_unique<long>(0)](long a, long b) { return a + b + *k; }),
              499500L);
    weft::inclusive_scan(ex, v.begin(), v.end(), sc.begin(), [k = std::make_unique<int>(0)](int a, int b) { return a + b + *k; });
    ASSERT_EQ(sc[999], 499500);
    ASSERT_EQ(weft::find_if(ex, v.begin(), v.end(), [k = std::make_unique<int>(5)](int x) { return x == *k; }) - v.begin(), 5);
    ASSERT_EQ(weft::max_element(ex, v.begin(), v.end(), [k = std::make_unique<int>(0)](int a, int b) { return a + *k < b; }) -
                  v.begin(),
              999);
}

TEST(algorithms_over_move_only_and_non_default_constructible_elements_give_exact_results) {
    weft::executor ex(4);
    const int n = 5000;
    /* sort of move-only elements (std::sort and std::inplace_merge move them) */
    std::vector<std::unique_ptr<int>> ptrs;
    for (int i = 0; i < n; ++i) ptrs.push_back(std::make_unique<int>((i * 7919) % n));
    weft::sort(ex, ptrs.begin(), ptrs.end(), [](const std::unique_ptr<int> &a, const std::unique_ptr<int> &b) { return *a < *b; });
    for (int i = 0; i < n; ++i) ASSERT_EQ(*ptrs[static_cast<size_t>(i)], i);
    /* transform from move-only elements to a type with no default constructor */
    std::vector<nd> out(static_cast<size_t>(n), nd(-1));
    weft::transform(ex, ptrs.begin(), ptrs.end(), out.begin(), [](const std::unique_ptr<int> &p) { return nd(*p * 2); });
    ASSERT_TRUE(out[4999] == nd(9998));
    /* transform_reduce over move-only elements into a non-default-constructible T */
    nd total = weft::transform_reduce(ex, ptrs.begin(), ptrs.end(), nd(0),
                                      [](nd a, nd b) { return nd(a.v + b.v); },
                                      [](const std::unique_ptr<int> &p) { return nd(*p); });
    ASSERT_EQ(total.v, static_cast<long>(n) * (n - 1) / 2);
    /* reduce, scans, find, min / max over non-default-constructible elements */
    nd r = weft::reduce(ex, out.begin(), out.end(), nd(1), [](nd a, nd b) { return nd(a.v + b.v); });
    ASSERT_EQ(r.v, 1 + static_cast<long>(n) * (n - 1));
    std::vector<nd> sc(static_cast<size_t>(n), nd(0));
    weft::inclusive_scan(ex, out.begin(), out.end(), sc.begin(), [](nd a, nd b) { return nd(a.v + b.v); });
    ASSERT_EQ(sc[4999].v, static_cast<long>(n) * (n - 1));
    weft::exclusive_scan(ex, out.begin(), out.end(), sc.begin(), nd(5), [](nd a, nd b) { return nd(a.v + b.v); });
    ASSERT_EQ(sc[0].v, 5);
    ASSERT_EQ(sc[4999].v, 5 + static_cast<long>(n) * (n - 1) - 9998);
    auto it = weft::find(ex, out.begin(), out.end(), nd(4242));
    ASSERT_EQ(it - out.begin(), 2121);
    auto lo = weft::min_element(ex, out.begin(), out.end(), [](const nd &a, const nd &b) { return a.v < b.v; });
    auto hi = weft::max_element(ex, out.begin(), out.end(), [](const nd &a, const nd &b) { return a.v < b.v; });
    ASSERT_EQ(lo - out.begin(), 0);
    ASSERT_EQ(hi - out.begin(), n - 1);
    /* find_if over move-only elements */
    auto f = weft::find_if(ex, ptrs.begin(), ptrs.end(), [](const std::unique_ptr<int> &p) { return *p == 4321; });
    ASSERT_EQ(f - ptrs.begin(), 4321);
}

/* ---- exceptions from every kind of callable ------------------------------------ */

namespace {
/* A capture whose copies are counted: every callable below holds one, so
 * that a leak of a callable (or of a state holding it) shows. */
struct counted {
    static std::atomic<int> live;
    counted() { live++; }
    counted(const counted &) { live++; }
    counted(counted &&) noexcept { live++; }
    ~counted() { live--; }
};
std::atomic<int> counted::live{0};
} // namespace

/* Each kind throws its own id, which must come out exactly where
 * guide-cpp.md's table says, as itself, once; and every callable is freed. */
TEST(an_exception_from_each_kind_of_callable_surfaces_where_the_guide_says_and_nothing_leaks) {
    {
        weft::executor ex(3);
        counted c;
        auto run_one = [&](const std::function<void(weft::taskflow &)> &build) {
            weft::taskflow tf;
            build(tf);
            return boom_id([&] { ex.run(tf).get(); });
        };
        ASSERT_EQ(run_one([&](weft::taskflow &tf) { tf.emplace([c] { throw boom(1); }); }), 1);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) { tf.emplace([] { throw boom(2); }); }), 2); /* packed */
        ASSERT_EQ(run_one([&](weft::taskflow &tf) {
                      auto a = tf.emplace([c]() -> int { throw boom(3); });
                      a.precede(tf.emplace([] {}));
                  }),
                  3);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) {
                      auto a = tf.emplace([c]() -> weft::branches { throw boom(4); });
                      a.precede(tf.emplace([] {}));
                  }),
                  4);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) { tf.emplace([c](weft::subflow &) { throw boom(5); }); }), 5);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) {
                      tf.emplace([c](weft::subflow &sf) { sf.emplace([c] { throw boom(6); }); });
                  }),
                  6);
        {
            weft::taskflow body;
            body.emplace([c] { throw boom(7); });
            ASSERT_EQ(run_one([&](weft::taskflow &tf) { tf.composed_of(body); }), 7);
        }
        {
            weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [c](weft::pipeflow &pf) {
                                  if (pf.token() == 2) throw boom(8);
                              }});
            ASSERT_EQ(run_one([&](weft::taskflow &tf) { tf.composed_of(pl); }), 8);
        }
        std::vector<int> v(5000, 1);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) {
                      tf.for_each(v.begin(), v.end(), [c](int x) {
                          if (x == 1) throw boom(9);
                      });
                  }),
                  9);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) {
                      tf.sort(v.begin(), v.end(), [c](int, int) -> bool { throw boom(10); });
                  }),
                  10);
        ASSERT_EQ(run_one([&](weft::taskflow &tf) { tf.placeholder().work([c] { throw boom(11); }); }), 11);
        /* run_until's predicate */
        {
            weft::taskflow tf;
            tf.emplace([] {});
            ASSERT_EQ(boom_id([&] { ex.run_until(tf, [c]() -> bool { throw boom(12); }).get(); }), 12);
        }
        /* async, dependent async: their own futures only; dependents still run */
        auto fa = ex.async([c]() -> int { throw boom(13); });
        std::atomic<bool> dep_ran{false};
        auto fd = ex.dependent_async([c, &dep_ran] { dep_ran = true; throw boom(14); }, fa);
        ASSERT_EQ(boom_id([&] { fa.get(); }), 13);
        ASSERT_EQ(boom_id([&] { fd.get(); }), 14);
        ASSERT_TRUE(dep_ran.load());
        ex.silent_async([c] { throw boom(15); }); /* dropped */
        ex.silent_dependent_async([c] { throw boom(16); }, fa);
        ex.wait_for_all();
        /* fork-join: task_group run child (wait), async child (its future),
         * spawn (sync), run_root */
        ASSERT_EQ(boom_id([&] {
                      ex.run_root([c] {
                          weft::task_group tg;
                          tg.run([c] { throw boom(17); });
                          tg.wait();
                      });
                  }),
                  17);
        ASSERT_EQ(ex.run_root([c] {
                      weft::task_group tg;
                      auto f = tg.async([c]() -> int { throw boom(18); });
                      tg.wait(); /* does not rethrow an async child's */
                      return boom_id([&] { f.get(); });
                  }),
                  18);
        ASSERT_EQ(ex.run_root([c] {
                      auto s = weft::spawn([c]() -> int { throw boom(19); });
                      return boom_id([&] { s.sync(); });
                  }),
                  19);
        ASSERT_EQ(boom_id([&] { ex.run_root([c]() -> int { throw boom(20); }); }), 20);
        /* free algorithms: the call */
        ASSERT_EQ(boom_id([&] { weft::for_each(ex, v.begin(), v.end(), [c](int) { throw boom(21); }); }), 21);
        ASSERT_EQ(boom_id([&] { (void)weft::reduce(ex, v.begin(), v.end(), 0, [c](int, int) -> int { throw boom(22); }); }),
                  22);
        ASSERT_EQ(boom_id([&] { (void)weft::find_if(ex, v.begin(), v.end(), [c](int) -> bool { throw boom(23); }); }), 23);
        ASSERT_EQ(boom_id([&] { weft::inclusive_scan(ex, v.begin(), v.end(), v.begin(), [c](int, int) -> int { throw boom(24); }); }),
                  24);
        /* the visitor of for_each_task */
        {
            weft::taskflow tf;
            tf.emplace([] {});
            ASSERT_EQ(boom_id([&] { tf.for_each_task([c](weft::task) { throw boom(25); }); }), 25);
        }
        /* a subflow that catches its child's exception from join() still
         * fails the run with it */
        std::atomic<int> caught{0};
        ASSERT_EQ(run_one([&](weft::taskflow &tf) {
                      tf.emplace([c, &caught](weft::subflow &sf) {
                          sf.emplace([c] { throw boom(26); });
                          caught = boom_id([&] { sf.join(); });
                      });
                  }),
                  26);
        ASSERT_EQ(caught.load(), 26);
    }
    ASSERT_EQ(counted::live.load(), 0);
}

/* weft::semaphore in the other places a task can be: subflow tasks, a
 * module body's tasks, a condition loop (one task acquiring again at each
 * iteration); a cancelled run with tasks parked on it ends, and leaves
 * every unit free. */
TEST(a_semaphore_works_in_subflows_module_bodies_and_loops_and_a_cancelled_run_leaves_it_whole) {
    weft::executor ex(4);
    weft::semaphore sem(1);
    std::atomic<int> inside{0}, bad{0}, ran{0};
    auto guarded = [&] {
        if (++inside != 1) bad++;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ran++;
        --inside;
    };
    {
        weft::taskflow body;
        for (int i = 0; i < 4; ++i) body.emplace(guarded).acquire(sem).release(sem);
        weft::taskflow tf;
        tf.emplace([&](weft::subflow &sf) {
            for (int i = 0; i < 4; ++i) sf.emplace(guarded).acquire(sem).release(sem);
        });
        tf.composed_of(body);
        int n = 0;
        auto init = tf.emplace([&] { n = 0; });
        auto loop = tf.emplace(guarded);
        loop.acquire(sem).release(sem);
        auto cond = tf.emplace([&] { return ++n < 4 ? 0 : 1; });
        auto end = tf.emplace([] {});
        init.precede(loop);
        loop.precede(cond);
        cond.precede(loop, end);
        ex.run_n(tf, 3).get();
        ASSERT_EQ(bad.load(), 0);
        ASSERT_EQ(ran.load(), 3 * (4 + 4 + 4));
        ASSERT_EQ(sem.value(), 1u);
    }
    /* A holder that waits for a flag; the others park.  reset() refuses
     * while they are parked; the run is cancelled and ends once the holder
     * returns; the parked tasks are skipped and the unit comes back. */
    weft::taskflow tf;
    std::atomic<bool> in{false}, go{false};
    std::atomic<int> others{0};
    tf.emplace([&] {
        in = true;
        while (!go.load()) std::this_thread::yield();
    }).acquire(sem).release(sem);
    for (int i = 0; i < 6; ++i) tf.emplace([&] { others++; }).acquire(sem).release(sem);
    auto f = ex.run(tf);
    while (!in.load()) std::this_thread::yield();
    ASSERT_TRUE(f.cancel());
    go = true;
    ASSERT_THROWS(f.get(), weft::error, e, ASSERT_EQ(e.status(), WEFT_ECANCELED));
    ASSERT_EQ(sem.value(), 1u);
    ASSERT_TRUE(others.load() <= 6);
}

/* wait_for with a floating duration that is NaN (a timeout computed from a
 * 0/0): it converted NaN to int64 nanoseconds (undefined; on x86 2^63 ns,
 * about 292 years: the call hung), and UBSan stops there.  A NaN gives no
 * time to wait: a poll, as 0 and negative durations. */
TEST(future_wait_for_a_nan_duration_polls_instead_of_hanging) {
    weft::executor ex(2);
    std::atomic<bool> go{false};
    auto f = ex.async([&] {
        while (!go.load()) std::this_thread::yield();
        return 7;
    });
    volatile double zero = 0.0;
    std::chrono::duration<double> nan_s(zero / zero);
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_FALSE(f.wait_for(nan_s));
    ASSERT_FALSE(f.wait_for(std::chrono::duration<double, std::milli>(-zero / zero)));
    ASSERT_TRUE(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    go = true;
    ASSERT_TRUE(f.wait_for(std::chrono::duration<double>(std::numeric_limits<double>::infinity())));
    ASSERT_EQ(f.get(), 7);
}

/* subflow::join looks the run's stamp up among every live taskflow (one
 * process-wide list) and waits for submissions in flight: several threads
 * making, running (a subflow child throws, join() rethrows it), and
 * destroying taskflows at once each get their own exception from join()
 * and get(), with no hang. */
TEST(joins_of_failing_runs_on_many_threads_each_rethrow_their_own_exception) {
    weft::executor ex(3);
    std::atomic<int> wrong{0};
    auto worker = [&](int base) {
        for (int i = 0; i < 40; ++i) {
            int id = base + i;
            int joined = 0;
            weft::taskflow tf;
            tf.emplace([&joined, id](weft::subflow &sf) {
                sf.emplace([id] { throw boom(id); });
                joined = boom_id([&] { sf.join(); });
            });
            tf.emplace([] {}); /* another task of the run */
            int got = boom_id([&] { ex.run(tf).get(); });
            if (got != id || joined != id) wrong++;
        }
    };
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) ts.emplace_back(worker, 1000 * (t + 1));
    for (auto &t : ts) t.join();
    ASSERT_EQ(wrong.load(), 0);
}

/* ---- out of memory: weft::semaphore and task::acquire / release ------------------ */

namespace {
/* A counting allocator for weft (weft_set_allocator): call number fail_at
 * returns NULL (0: none); live counts the blocks not yet freed. */
struct oom_alloc {
    static std::atomic<long> calls, fail_at, live;
    static void *alloc(void *, size_t size) {
        long n = ++calls;
        if (fail_at.load() && n == fail_at.load()) return nullptr;
        void *p = std::malloc(size);
        if (p) ++live;
        return p;
    }
    static void *realloc(void *, void *ptr, size_t, size_t size) {
        long n = ++calls;
        if (fail_at.load() && n == fail_at.load()) return nullptr;
        void *p = std::realloc(ptr, size);
        if (p && !ptr) ++live;
        return p;
    }
    static void free(void *, void *ptr, size_t) {
        if (ptr) --live;
        std::free(ptr);
    }
};
std::atomic<long> oom_alloc::calls{0}, oom_alloc::fail_at{0}, oom_alloc::live{0};
} // namespace

/* Every allocation of making a semaphore and a taskflow whose task acquires
 * and releases it fails in turn: each failure is weft::error WEFT_ENOMEM
 * (never a crash or another status), the objects unwind through RAII, and
 * nothing weft allocated stays; a task whose acquire failed has no acquire,
 * and with memory back the same build runs. */
TEST(every_allocation_of_a_semaphore_and_its_acquire_failing_gives_enomem_and_leaks_nothing) {
    weft_allocator a{};
    a.alloc = &oom_alloc::alloc;
    a.realloc = &oom_alloc::realloc;
    a.free = &oom_alloc::free;
    a.ctx = nullptr;
    weft_set_allocator(&a); /* no executor alive */
    long base = oom_alloc::live.load();
    int failures = 0, other = 0;
    bool done = false;
    for (long n = 1; n < 200 && !done; ++n) {
        oom_alloc::calls = 0;
        oom_alloc::fail_at = n;
        try {
            weft::semaphore s(2);
            weft::taskflow tf;
            auto t = tf.emplace([] {});
            try {
                t.acquire(s);
            } catch (const weft::error &e) {
                if (t.num_acquires() != 0) other++; /* a failed acquire leaves none */
                throw;
            }
            t.release(s);
            if (oom_alloc::calls.load() < n) done = true; /* the whole build fit before call n */
        } catch (const weft::error &e) {
            if (e.status() == WEFT_ENOMEM) failures++;
            else other++;
        } catch (...) {
            other++;
        }
    }
    oom_alloc::fail_at = 0;
    long leaked = oom_alloc::live.load() - base;
    weft_set_allocator(nullptr);
    ASSERT_TRUE(done);
    ASSERT_TRUE(failures > 0);
    ASSERT_EQ(other, 0);
    ASSERT_EQ(leaked, 0);
    weft::executor ex(2);
    weft::semaphore s(1);
    weft::taskflow tf;
    std::atomic<int> ran{0};
    for (int i = 0; i < 4; ++i) tf.emplace([&] { ran++; }).acquire(s).release(s);
    ex.run(tf).get();
    ASSERT_EQ(ran.load(), 4);
}
