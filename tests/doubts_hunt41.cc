/* weft.hpp, hunt 41 (session 40's open doubts):
 *  - index_range::sub ends every sub-range at begin + m * step, the last one
 *    included (it gave the range's own end there, unaligned: a loop `i !=
 *    end()` over the last sub-range ran past it);
 *  - an error thrown by executor::corun names weft::executor::corun (it named
 *    weft::future::wait or weft::executor::run). */
#include "cpp_test.hpp"

#include <atomic>
#include <climits>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

template <class I>
static void check_subs_aligned(I first, I last, I step) {
    weft::index_range<I> r(first, last, step);
    std::size_t n = r.size();
    for (std::size_t k = 0; k < n; ++k)
        for (std::size_t m = k + 1; m <= n; ++m) {
            weft::index_range<I> s = r.sub(k, m);
            ASSERT_EQ(s.size(), m - k);
            ASSERT_TRUE(s.begin() == r.at(k));
            ASSERT_TRUE(s.step_size() == step);
            /* Aligned: the end is the index after the sub-range's last. */
            ASSERT_TRUE(s.end() == r.at(m));
            /* So a loop `i != end()` visits exactly the sub-range. */
            std::size_t seen = 0;
            for (I i = s.begin(); i != s.end() && seen <= n; i = static_cast<I>(i + s.step_size())) ++seen;
            ASSERT_EQ(seen, m - k);
        }
}

TEST(cpp41_index_range_sub_ends_every_sub_range_aligned_the_last_included) {
    check_subs_aligned<int>(0, 10, 3);   /* 0 3 6 9: the last sub-range ends at 12, not 10 */
    check_subs_aligned<int>(10, 0, -3);  /* 10 7 4 1: ends at -2, not 0 */
    check_subs_aligned<int>(-7, 8, 4);   /* -7 -3 1 5 */
    check_subs_aligned<unsigned>(1u, 10u, 4u); /* 1 5 9 */
    check_subs_aligned<long>(5, 5 + 7 * 9 - 2, 7);
    /* Already aligned: the same as before. */
    check_subs_aligned<int>(0, 12, 3);
    weft::index_range<int> r(0, 10, 3);
    ASSERT_EQ(r.sub(2, 4).end(), 12);
    ASSERT_EQ(r.sub(2, 99).end(), 12); /* m past the size: as m == size() */
    ASSERT_EQ(r.sub(2, 99).size(), 2u);
}

/* Where the aligned end is past the index type's range, the range's own end
 * stands for it: the sub-range keeps its size (no wrap to a negative end). */
TEST(cpp41_index_range_sub_whose_aligned_end_would_overflow_keeps_the_range_end) {
    weft::index_range<int> r(INT_MAX - 10, INT_MAX, 4); /* MAX-10, MAX-6, MAX-2 */
    ASSERT_EQ(r.size(), 3u);
    weft::index_range<int> s = r.sub(1, 3);
    ASSERT_EQ(s.size(), 2u);
    ASSERT_EQ(s.begin(), INT_MAX - 6);
    ASSERT_EQ(s.end(), INT_MAX);
    weft::index_range<int> d(INT_MIN + 10, INT_MIN, -4);
    ASSERT_EQ(d.sub(0, 3).size(), 3u);
    ASSERT_EQ(d.sub(0, 3).end(), INT_MIN);
    weft::index_range<unsigned char> u(200, 255, 50); /* 200 250 */
    ASSERT_EQ(u.sub(0, 2).size(), 2u);
    ASSERT_EQ(u.sub(0, 2).end(), 255);
    ASSERT_EQ(u.sub(0, 1).end(), 250);
}

/* for_each_by_index hands out such sub-ranges: every index once. */
TEST(cpp41_for_each_by_index_sub_ranges_are_aligned_and_cover_each_index_once) {
    weft::executor ex(2);
    for (int step : {1, 3, 7}) {
        weft::index_range<int> r(0, 1000, step);
        std::mutex mu;
        std::multiset<int> seen;
        std::atomic<bool> unaligned{false};
        weft::taskflow tf;
        tf.for_each_by_index(r, [&](weft::index_range<int> s) {
            if ((s.end() - s.begin()) % step != 0) unaligned = true;
            std::lock_guard<std::mutex> g(mu);
            /* Bounded: with an unaligned end, `i != end()` never stops. */
            std::size_t left = s.size() + 1;
            for (int i = s.begin(); i != s.end() && left > 0; i += s.step_size(), --left) seen.insert(i);
        }, weft::static_partitioner(5));
        ex.run(tf).get();
        ASSERT_FALSE(unaligned.load());
        ASSERT_EQ(seen.size(), r.size());
        for (std::size_t k = 0; k < r.size(); ++k) ASSERT_EQ(seen.count(r.at(k)), 1u);
    }
}

static bool names_corun(const weft::error &e) {
    return std::strncmp(e.what(), "weft::executor::corun: ", 23) == 0;
}

static int fails_five(weft_ctx *, void *) { return 5; }

TEST(cpp41_corun_errors_name_corun_not_future_wait_or_run) {
    weft::executor ex(2);
    /* The run fails (a C task returning 5): weft::error WEFT_ETASK. */
    weft::taskflow bad("bad");
    ASSERT_FALSE(weft_task_is_null(weft_emplace(bad.native(), fails_five, nullptr)));
    ASSERT_THROWS(ex.corun(bad), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ETASK);
        if (!names_corun(e)) TEST_FAIL_("corun's error names another call: %s", e.what());
    });
    /* Submission refused (a strong cycle): WEFT_ECYCLE. */
    weft::taskflow cyc("cyc");
    auto a = cyc.emplace([] {}), b = cyc.emplace([] {});
    a.precede(b);
    b.precede(a);
    ASSERT_THROWS(ex.corun(cyc), weft::error, e, {
        ASSERT_EQ(e.status(), WEFT_ECYCLE);
        if (!names_corun(e)) TEST_FAIL_("corun's error names another call: %s", e.what());
    });
    /* From a task of the taskflow itself: WEFT_EDEADLK, named so, and no run
     * of it left queued. */
    weft::taskflow self("self");
    std::string what;
    std::atomic<int> calls{0};
    self.emplace([&] {
        calls++;
        try {
            ex.corun(self);
        } catch (const weft::error &e) {
            what = e.what();
        }
    });
    ex.run(self).get();
    ex.wait_for_all();
    ASSERT_EQ(calls.load(), 1);
    if (what.rfind("weft::executor::corun: ", 0) != 0) TEST_FAIL_("corun's error names another call: %s", what.c_str());
    ASSERT_TRUE(what.find("EDEADLK") != std::string::npos);
}
