/* Session 47 (h47-4): weft.hpp under a failing allocator, the calls that
 * session 40's sweep (cpp_hunt40b) did not reach: run_until, corun, a task's
 * exception, dependent_async over a range, silent_dependent_async, task_group
 * async / dependent_async, the algorithm tasks of a taskflow and of a
 * subflow, work() / linearize / remove_successors, a pipeline stage's
 * exception, scans, find and transform_reduce.  Every failing allocation must
 * give weft::error WEFT_ENOMEM (or a run failed by weft with task code
 * WEFT_ENOMEM), never another error, a crash or a leaked capture; the sweep
 * goes on until the workload completes without reaching the failing
 * allocation. */
#include "cpp_test.hpp"

#include <atomic>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace {
std::atomic<long> oom_calls{0}, oom_fail_at{0};
void *oom_alloc(void *, size_t n) { return oom_calls.fetch_add(1) + 1 == oom_fail_at.load() ? nullptr : std::malloc(n); }
void *oom_realloc(void *, void *p, size_t, size_t n) { return oom_calls.fetch_add(1) + 1 == oom_fail_at.load() ? nullptr : std::realloc(p, n); }
void oom_free(void *, void *p, size_t) { std::free(p); }
std::atomic<long> live_{0};
struct counted { counted() { live_++; } counted(const counted &) { live_++; } counted(counted &&) noexcept { live_++; } ~counted() { live_--; } };
struct boom { int id; };
const char *stage = "";
bool workload(weft::executor &ex, int &errors) {
    try {
        counted c;
        std::atomic<int> n{0};
        stage = "run_until";
        { weft::taskflow tf; tf.emplace([c, &n] { n++; }); int k = 0; ex.run_until(tf, [c, &k] { return ++k > 2; }).get(); }
        stage = "corun";
        { weft::taskflow tf; tf.emplace([c, &n] { n++; }); ex.corun(tf); }
        stage = "throw";
        { weft::taskflow tf; tf.emplace([c] { throw boom{1}; });
          bool got = false; try { ex.run(tf).get(); } catch (const boom &) { got = true; } if (!got) return false; }
        stage = "async range";
        { std::vector<weft::future<int>> fs; fs.push_back(ex.async([c] { return 1; })); fs.push_back(ex.async([c] { return 2; }));
          auto d = ex.dependent_async([c] { return 3; }, fs.begin(), fs.end());
          ex.silent_dependent_async([c] {}, fs.begin(), fs.end());
          ex.silent_dependent_async([c] {}, fs[0]);
          if (d.get() != 3) return false; }
        stage = "tg";
        { int r = ex.run_root([c, &ex] {
              weft::task_group tg = ex.task_group();
              auto a = tg.async([c] { return 1; });
              auto b = tg.dependent_async([c] { return 2; }, a);
              std::vector<weft::future<int>> v; v.push_back(tg.async([c] { return 3; }));
              auto d = tg.dependent_async([c] { return 4; }, v.begin(), v.end());
              tg.silent_async([c] {});
              tg.corun();
              return a.get() + b.get() + v[0].get() + d.get(); });
          if (r != 10) return false; }
        stage = "algo tasks";
        { std::vector<int> v(6000); std::iota(v.rbegin(), v.rend(), 0); long sum = 0; std::vector<int> out(v.size());
          std::vector<int>::iterator fi, mi;
          std::vector<int> sub_out(10); /* the subflow's own output: its siblings read v meanwhile */
          weft::taskflow tf;
          auto a = tf.for_each(v.begin(), v.end(), [c](int &x) { x += 1; });
          auto b = tf.sort(v.begin(), v.end(), [c](int x, int y) { return x < y; });
          auto r = tf.reduce(v.begin(), v.end(), sum, [c](long x, long y) { return x + y; });
          auto s = tf.inclusive_scan(v.begin(), v.end(), out.begin(), [c](int x, int y) { return x + y; });
          auto f = tf.find_if(v.begin(), v.end(), fi, [c](int x) { return x == 100; });
          auto m = tf.min_element(v.begin(), v.end(), mi, [c](int x, int y) { return x < y; });
          auto sf = tf.emplace([c, &v, &sub_out](weft::subflow &sub) { sub.for_each_index(0, 100, 1, [c](int) {}); sub.transform(v.begin(), v.begin() + 10, sub_out.begin(), [c](int x) { return x; }); });
          a.precede(b); b.precede(r, s, f, m, sf);
          ex.run(tf).get();
          if (sum != 6000L * 6001 / 2 || *fi != 100 || *mi != 1) return false; }
        stage = "edit";
        { weft::taskflow tf; auto p = tf.placeholder(); auto q = tf.emplace([c] {}); auto w = tf.emplace([c] {});
          p.work([c, &n] { n++; }); tf.linearize({p, q, w}); q.remove_successors(w); q.precede(w);
          ex.run(tf).get(); }
        stage = "pipeline throw";
        { weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [c](weft::pipeflow &pf) { if (pf.token() == 5) throw boom{2}; }},
                              weft::pipe{weft::pipe_type::parallel, [c](weft::pipeflow &) {}});
          weft::taskflow tf; tf.composed_of(pl);
          bool got = false; try { ex.run(tf).get(); } catch (const boom &) { got = true; } if (!got) return false; }
        stage = "free algos";
        { std::vector<int> v(5000, 1); std::vector<int> o(5000);
          weft::inclusive_scan(ex, v.begin(), v.end(), o.begin());
          weft::exclusive_scan(ex, v.begin(), v.end(), o.begin(), 0);
          if (weft::find(ex, v.begin(), v.end(), 2) != v.end()) return false;
          (void)weft::max_element(ex, v.begin(), v.end());
          (void)weft::transform_reduce(ex, v.begin(), v.end(), 0L, std::plus<>(), [c](int x) { return x; }); }
        stage = "done";
        return true;
    } catch (const weft::error &e) {
        /* Out of memory inside a run, where weft itself fails a task (a
         * subflow's nested run, a condition's pick: the C rule of
         * docs/errors.md, task_code WEFT_ENOMEM), reaches get() as the failed
         * run's weft::error WEFT_ETASK naming that code. */
        bool run_oom = e.status() == WEFT_ETASK &&
                       e.detail().find("returned " + std::to_string(WEFT_ENOMEM)) != std::string::npos;
        if (e.status() != WEFT_ENOMEM && !run_oom) {
            std::fprintf(stderr, "[%s] unexpected weft::error: %s\n", stage, e.what());
            errors++;
        }
    } catch (const boom &) { std::fprintf(stderr, "[%s] unexpected boom\n", stage); errors++;
    } catch (const std::bad_alloc &) {
    } catch (const std::exception &e) { std::fprintf(stderr, "[%s] unexpected %s\n", stage, e.what()); errors++; }
    return false;
}
}

TEST(every_allocation_failing_in_the_newer_cpp_calls_gives_enomem_and_frees_every_capture) {
    static const weft_allocator a{oom_alloc, oom_realloc, oom_free, nullptr};
    weft_set_allocator(&a);
    int errors = 0;
    bool done = false;
    long at = 1;
    for (; at < 100000 && !done && errors == 0; at++) {
        live_ = 0;
        oom_calls = 0;
        oom_fail_at = at;
        try {
            weft::executor ex(2);
            bool ok = workload(ex, errors);
            if (ok && oom_calls.load() < at) done = true; /* the failing allocation was never reached */
            oom_fail_at = 0;
            ex.wait_for_all();
        } catch (const weft::error &e) {
            if (e.status() != WEFT_ENOMEM) {
                std::fprintf(stderr, "executor: %s\n", e.what());
                errors++;
            }
        }
        oom_fail_at = 0;
        /* The executor is gone: every run, async task and group it ran has
         * finished and freed its callables. */
        if (live_.load() != 0) {
            std::fprintf(stderr, "failing allocation %ld [%s]: %ld captures alive\n", at, stage, live_.load());
            errors++;
        }
    }
    weft_set_allocator(nullptr);
    ASSERT_EQ(errors, 0);
    ASSERT_TRUE(done);
}

#include <sys/resource.h>
#include <unistd.h>

/* taskflow::dump() wrote the DOT through std::tmpfile(): a file in /tmp and
 * a descriptor.  Where neither is to be had (a container whose root, /tmp
 * included, is read-only; a process at its descriptor limit) it threw
 * weft::error WEFT_ESYS "tmpfile failed", where Taskflow's dump just writes
 * to the stream.  The descriptor limit stands in for both here: with no
 * descriptor free, dump() must still give the same text. */
TEST(taskflow_dump_needs_no_file_and_no_free_descriptor) {
    weft::taskflow tf("dumped");
    auto a = tf.emplace([] {}).name("A");
    auto b = tf.emplace([] { return 0; }).name("B");
    auto c = tf.emplace([] {}).name("C");
    a.precede(b);
    b.precede(c);
    const std::string want = tf.dump();
    ASSERT_TRUE(want.find("digraph") != std::string::npos);
    ASSERT_TRUE(want.find("\"A\"") != std::string::npos || want.find("A") != std::string::npos);

    struct rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    int lowest = dup(2); /* the lowest free descriptor */
    ASSERT_TRUE(lowest >= 0);
    close(lowest);
    struct rlimit none = old;
    none.rlim_cur = static_cast<rlim_t>(lowest); /* no descriptor can be opened now */
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &none), 0);
    int probe = dup(2);
    std::string got;
    weft_status st = WEFT_OK;
    std::string what;
    try {
        got = tf.dump();
    } catch (const weft::error &e) {
        st = e.status();
        what = e.what();
    }
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    ASSERT_EQ(probe, -1); /* the limit held */
    if (st != WEFT_OK) TEST_FAIL_("dump() threw: %s", what.c_str());
    ASSERT_TRUE(got == want);
}
