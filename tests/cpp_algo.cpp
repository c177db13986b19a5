/* weft.hpp: parallel algorithms over iterators and ranges (std::vector, arrays,
 * empty inputs, non-trivial element types), as direct calls and as graph tasks,
 * and exceptions from their bodies. */
#include "cpp_test.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

static std::vector<int> shuffled(size_t n, uint64_t seed) {
    std::vector<int> v(n);
    uint64_t s = seed;
    for (auto &x : v) x = (int)(test_rand(&s) % 100000) - 50000;
    return v;
}

TEST(cpp_for_each_and_transform_visit_every_element_once) {
    weft::executor ex(cpp_test_workers());
    std::vector<int> v(100003, 1);
    weft::for_each(ex, v.begin(), v.end(), [](int &x) { x += 1; });
    weft::for_each(ex, v, [](int &x) { x *= 3; }, weft::static_partitioner());
    ASSERT_TRUE(std::all_of(v.begin(), v.end(), [](int x) { return x == 6; }));
    std::vector<long> out(v.size());
    weft::transform(ex, v.begin(), v.end(), out.begin(), [](int x) { return (long)x * 2; });
    ASSERT_TRUE(std::all_of(out.begin(), out.end(), [](long x) { return x == 12; }));
    std::vector<long> sum(v.size());
    weft::transform(ex, v.begin(), v.end(), out.begin(), sum.begin(), [](int a, long b) { return a + b; });
    ASSERT_TRUE(std::all_of(sum.begin(), sum.end(), [](long x) { return x == 18; }));
    int arr[5] = {1, 2, 3, 4, 5};
    weft::for_each(ex, arr, [](int &x) { x = -x; });
    ASSERT_EQ(arr[4], -5);
}

TEST(cpp_for_each_index_covers_forward_reverse_and_strided_ranges) {
    weft::executor ex(cpp_test_workers());
    std::vector<std::atomic<int>> hit(1000);
    weft::for_each_index(ex, 0, 1000, 3, [&](int i) { hit[i]++; });
    weft::for_each_index(ex, 999, -1, -2, [&](int i) { hit[i] += 10; });
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(hit[i].load(), (i % 3 == 0 ? 1 : 0) + ((999 - i) % 2 == 0 ? 10 : 0));
    std::atomic<long> n{0};
    weft::for_each_by_index(ex, weft::index_range<int>(100, 0, -1), [&](weft::index_range<int> sub) {
        for (int i = sub.begin(); i > sub.end(); i += sub.step_size()) n += i;
    }, weft::guided_partitioner());
    ASSERT_EQ(n.load(), 5050);
    weft::for_each_index(ex, 5, 5, 1, [&](int) { n = -1; });
    weft::parallel_for(ex, 0, 10, [&](int i) { n += i; }); /* 45 */
    n -= 45;
    weft::for_each_index(ex, size_t(0), size_t(10), size_t(1), [&](size_t i) { n += (long)i; });
    ASSERT_EQ(n.load(), 5095);
    ASSERT_THROWS(weft::for_each_index(ex, 0, 10, 0, [](int) {}), weft::error, e,
                  ASSERT_STATUS(e.status(), WEFT_EINVAL));
}

TEST(cpp_for_each_index_near_the_type_limits_does_not_overflow) {
    weft::executor ex(cpp_test_workers());
    /* INT_MIN .. INT_MAX by 2^30: four indices (the old code overflowed int). */
    std::atomic<int> visits{0};
    std::atomic<long long> sum{0};
    weft::for_each_index(ex, INT_MIN, INT_MAX, 1 << 30, [&](int i) {
        visits++;
        sum += i;
    });
    ASSERT_EQ(visits.load(), 4);
    ASSERT_EQ(sum.load(), (long long)INT_MIN + (INT_MIN + (1LL << 30)) + 0 + (1LL << 30));
    /* The same downwards. */
    visits = 0;
    weft::for_each_index(ex, INT_MAX, INT_MIN, -(1 << 30), [&](int) { visits++; });
    ASSERT_EQ(visits.load(), 4);
    /* size_t 0 .. SIZE_MAX by 2^62: four (the old code's size() was 0). */
    visits = 0;
    std::atomic<size_t> last{0};
    weft::for_each_index(ex, size_t(0), SIZE_MAX, size_t(1) << 62, [&](size_t i) {
        visits++;
        if (i == size_t(3) << 62) last = i;
    });
    ASSERT_EQ(visits.load(), 4);
    ASSERT_TRUE(last.load() == size_t(3) << 62);
    ASSERT_EQ(weft::index_range<int>(INT_MIN, INT_MAX, 1).size(), (size_t)UINT_MAX);
}

TEST(cpp_reduce_keeps_operand_order_and_works_on_strings) {
    weft::executor ex(cpp_test_workers());
    std::vector<long> v(1000000);
    std::iota(v.begin(), v.end(), 1);
    ASSERT_EQ(weft::reduce(ex, v.begin(), v.end(), 0L), 500000500000L);
    ASSERT_EQ(weft::reduce(ex, v, 10L, [](long a, long b) { return a + b; }), 500000500010L);
    ASSERT_EQ(weft::transform_reduce(ex, v.begin(), v.end(), 0L, std::plus<>(), [](long x) { return x % 2; }),
              500000);
    /* Concatenation is associative, not commutative: the order must hold. */
    std::vector<std::string> words(5000);
    std::string want = ">";
    for (size_t i = 0; i < words.size(); i++) {
        words[i] = std::to_string(i) + ",";
        want += words[i];
    }
    ASSERT_TRUE(weft::reduce(ex, words, std::string(">")) == want);
}

TEST(cpp_sort_orders_ints_strings_and_custom_comparators) {
    weft::executor ex(cpp_test_workers());
    for (size_t n : {0u, 1u, 2u, 3u, 1000u, 100003u}) {
        std::vector<int> v = shuffled(n, n + 1), w = v;
        weft::sort(ex, v);
        std::sort(w.begin(), w.end());
        ASSERT_TRUE(v == w);
        weft::sort(ex, v.begin(), v.end(), std::greater<>());
        ASSERT_TRUE(std::is_sorted(v.begin(), v.end(), std::greater<>()));
    }
    std::vector<std::string> s;
    for (int x : shuffled(20000, 7)) s.push_back(std::to_string(x));
    std::vector<std::string> t = s;
    weft::sort(ex, s);
    std::sort(t.begin(), t.end());
    ASSERT_TRUE(s == t);
}

TEST(cpp_scans_match_std_partial_sum_also_in_place) {
    weft::executor ex(cpp_test_workers());
    for (size_t n : {1u, 2u, 4095u, 4096u, 4097u, 300001u}) {
        std::vector<long> v(n);
        for (size_t i = 0; i < n; i++) v[i] = (long)(i % 7) - 3;
        std::vector<long> want(n), got(n);
        std::partial_sum(v.begin(), v.end(), want.begin());
        weft::inclusive_scan(ex, v.begin(), v.end(), got.begin());
        ASSERT_TRUE(got == want);
        std::vector<long> ex_want(n);
        long acc = 100;
        for (size_t i = 0; i < n; i++) { ex_want[i] = acc; acc += v[i]; }
        std::vector<long> in_place = v;
        weft::exclusive_scan(ex, in_place.begin(), in_place.end(), in_place.begin(), 100L);
        ASSERT_TRUE(in_place == ex_want);
    }
    std::vector<std::string> w = {"a", "b", "c"}, out(3);
    weft::inclusive_scan(ex, w.begin(), w.end(), out.begin());
    ASSERT_TRUE(out[2] == "abc");
}

/* Taskflow's inclusive_scan(first, last, d_first, bop, init), as a task and
 * over an executor: init comes before the first element. */
TEST(cpp_inclusive_scan_with_an_init_starts_from_it) {
    weft::executor ex(cpp_test_workers());
    for (size_t n : {0u, 1u, 4097u, 100000u}) {
        std::vector<long> v(n);
        for (size_t i = 0; i < n; i++) v[i] = (long)(i % 5) - 2;
        std::vector<long> want(n), got(n, -1), task_got(n, -1);
        long acc = 1000;
        for (size_t i = 0; i < n; i++) want[i] = acc += v[i];
        weft::inclusive_scan(ex, v.begin(), v.end(), got.begin(), std::plus<long>(), 1000L);
        ASSERT_TRUE(got == want);
        weft::taskflow tf;
        tf.inclusive_scan(v.begin(), v.end(), task_got.begin(), std::plus<long>(), 1000L);
        ex.run(tf).get();
        ASSERT_TRUE(task_got == want);
    }
    std::vector<std::string> w = {"a", "b", "c"}, out(3);
    weft::inclusive_scan(ex, w.begin(), w.end(), out.begin(), std::plus<std::string>(), std::string(">"));
    ASSERT_TRUE(out[0] == ">a" && out[2] == ">abc");
}

TEST(cpp_algorithms_on_an_empty_vector_do_nothing) {
    weft::executor ex(2);
    std::vector<int> v, out;
    bool called = false;
    weft::for_each(ex, v, [&](int) { called = true; });
    weft::for_each(ex, v.begin(), v.end(), [&](int) { called = true; });
    weft::transform(ex, v.begin(), v.end(), out.begin(), [&](int x) { called = true; return x; });
    ASSERT_EQ(weft::reduce(ex, v, 42), 42);
    ASSERT_EQ(weft::transform_reduce(ex, v.begin(), v.end(), 7, std::plus<>(), [&](int x) { called = true; return x; }), 7);
    weft::sort(ex, v);
    weft::inclusive_scan(ex, v.begin(), v.end(), out.begin());
    weft::exclusive_scan(ex, v.begin(), v.end(), out.begin(), 0);
    ASSERT_FALSE(called);
    ASSERT_TRUE(v.empty());
}

TEST(cpp_algorithm_body_exception_is_rethrown_to_the_caller) {
    weft::executor ex(cpp_test_workers());
    std::vector<int> v(100000, 1);
    std::atomic<int> calls{0};
    ASSERT_THROWS(weft::for_each(ex, v, [&](int x) {
        if (calls.fetch_add(1) == 499 && x == 1) throw std::runtime_error("body"); /* exactly one call throws */
    }), std::runtime_error, e, ASSERT_STREQ(e.what(), "body"));
    ASSERT_LT(calls.load(), 100000 + 1);
    ASSERT_THROWS(weft::reduce(ex, v, 0, [](int a, int b) -> int {
        if (b == 1 && a > 5000) throw std::overflow_error("too big");
        return a + b;
    }), std::overflow_error, e, (void)e);
    ASSERT_THROWS(weft::sort(ex, v, [](int, int) -> bool { throw std::logic_error("cmp"); }), std::logic_error, e,
                  (void)e);
}

/* Taskflow's tf.transform(first1, last1, first2, d_first, bop): before, only
 * the unary task existed and a ported call did not compile. */
TEST(cpp_binary_transform_task_combines_two_ranges_element_by_element) {
    weft::executor ex(cpp_test_workers());
    weft::taskflow tf;
    std::vector<int> a(10000), b(10000), out(10000, -1);
    std::iota(a.begin(), a.end(), 0);
    std::iota(b.begin(), b.end(), 5);
    auto t = tf.transform(a.begin(), a.end(), b.begin(), out.begin(), [](int x, long y) { return x * 3 + (int)y; });
    auto after = tf.emplace([] {});
    t.precede(after);
    ex.run(tf).get();
    for (int i = 0; i < 10000; i++) ASSERT_EQ(out[i], i * 3 + i + 5);
}

/* Taskflow's own parallel_reduce example: a bop taking its left operand as
 * `int&`.  Before, weft.hpp moved the accumulator in and it did not compile. */
TEST(cpp_reduce_takes_a_bop_whose_left_operand_is_an_lvalue_reference) {
    weft::executor ex(cpp_test_workers());
    std::vector<int> v(100000);
    for (std::size_t i = 0; i < v.size(); i++) v[i] = (int)((i * 7919) % 100003) - 50000;
    int tmin = INT_MAX;
    weft::taskflow tf;
    tf.reduce(v.begin(), v.end(), tmin, [](int &l, const auto &r) { return std::min(l, r); });
    ex.run(tf).get();
    ASSERT_EQ(tmin, *std::min_element(v.begin(), v.end()));
    std::vector<std::string> words{"a", "b", "c", "d"};
    std::string joined = weft::reduce(ex, words.begin(), words.end(), std::string(),
                                      [](std::string a, const std::string &b) { return a + b; });
    ASSERT_TRUE(joined == "abcd");
}

TEST(cpp_algorithm_tasks_run_in_a_taskflow) {
    weft::executor ex(cpp_test_workers());
    weft::taskflow tf;
    std::vector<int> data;
    std::vector<int> doubled(1000);
    std::vector<int> scanned(1000);
    int total = 0;
    auto fill = tf.emplace([&] { data.assign(1000, 0); std::iota(data.begin(), data.end(), 0); });
    /* The iterators are taken when the task is made: give the range its size first. */
    data.resize(1000);
    auto each = tf.for_each(data.begin(), data.end(), [](int &x) { x += 1; }, weft::dynamic_partitioner(16));
    auto tr = tf.transform(data.begin(), data.end(), doubled.begin(), [](int x) { return 2 * x; });
    auto red = tf.reduce(doubled.begin(), doubled.end(), total, std::plus<int>());
    auto scan = tf.inclusive_scan(data.begin(), data.end(), scanned.begin(), std::plus<int>());
    auto srt = tf.sort(doubled.begin(), doubled.end(), std::greater<int>());
    std::atomic<int> idx{0};
    auto fi = tf.for_each_index(0, 100, 1, [&](int) { idx++; });
    fill.precede(each);
    each.precede(tr, scan);
    tr.precede(red);
    red.precede(srt);
    ex.run(tf).get();
    ASSERT_EQ(total, 1000 * 1001);
    ASSERT_EQ(scanned[999], 1000 * 1001 / 2);
    ASSERT_EQ(doubled[0], 2000);
    ASSERT_EQ(idx.load(), 100);
    (void)fi;
    weft::taskflow bad;
    bad.for_each(data.begin(), data.end(), [](int) { throw std::runtime_error("in task"); });
    ASSERT_THROWS(ex.run(bad).get(), std::runtime_error, e, ASSERT_STREQ(e.what(), "in task"));
}
