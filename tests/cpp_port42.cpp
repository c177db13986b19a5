/* Session 42 (h42-4): oneTBB's examples and test shapes and the Barcelona
 * OpenMP Tasks Suite's kernels, written again for weft.hpp from what each
 * program computes (no code of theirs), with exact checks against a serial
 * run on 1, 2, 3, 4 and 8 workers.  tests/port_hunt42.c has the C forms. */
#include "cpp_test.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const unsigned kW[] = {1, 2, 3, 4, 8};

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

/* oneTBB's task_group fibonacci: both halves run in the group. */
long fib_group(int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    weft::task_group g;
    g.run([&] { x = fib_group(n - 1); });
    g.run([&] { y = fib_group(n - 2); });
    g.wait();
    return x + y;
}
/* The same with spawn / sync and a serial cutoff (BOTS fib's if-clause). */
long fib_spawn(int n) {
    if (n < 12) return fib_serial(n);
    auto x = weft::spawn([n] { return fib_spawn(n - 1); });
    long y = fib_spawn(n - 2);
    return x.sync() + y;
}

} // namespace

TEST(tbb_task_group_and_spawned_fibonacci_equal_the_serial_values) {
    for (unsigned w : kW) {
        weft::executor ex(w);
        for (int n : {0, 1, 2, 3, 10, 18}) {
            ASSERT_EQ(ex.run_root([n] { return fib_group(n); }), fib_serial(n));
            ASSERT_EQ(ex.run_root([n] { return fib_spawn(n + 4); }), fib_serial(n + 4));
        }
        /* from an async task and from a graph task too */
        ASSERT_EQ(ex.async([] { return fib_group(15); }).get(), fib_serial(15));
        long r = 0;
        weft::taskflow tf;
        tf.emplace([&] { r = fib_spawn(20); });
        ex.run(tf).wait();
        ASSERT_EQ(r, fib_serial(20));
    }
}

namespace {

using grid = std::array<unsigned char, 81>;
bool sud_ok(const grid &g, int pos, int v) {
    int r = pos / 9, c = pos % 9, br = r / 3 * 3, bc = c / 3 * 3;
    for (int k = 0; k < 9; k++)
        if (g[r * 9 + k] == v || g[k * 9 + c] == v || g[(br + k / 3) * 9 + bc + k % 3] == v) return false;
    return true;
}
long sud_serial(grid g) {
    int pos = 0;
    while (pos < 81 && g[pos]) pos++;
    if (pos == 81) return 1;
    long n = 0;
    for (int v = 1; v <= 9; v++)
        if (sud_ok(g, pos, v)) {
            g[pos] = static_cast<unsigned char>(v);
            n += sud_serial(g);
        }
    return n;
}
/* oneTBB's sudoku: every candidate of the first empty cell is a task of the
 * group; in find-one mode the first solution cancels the search. */
void sud_par(const grid &g, std::atomic<long> &count, bool find_one, weft::task_group *top, std::mutex &mu,
             grid &found) {
    if (top && top->is_cancelled()) return;
    int pos = 0;
    while (pos < 81 && g[pos]) pos++;
    if (pos == 81) {
        if (count.fetch_add(1) == 0 && find_one) {
            std::lock_guard<std::mutex> l(mu);
            found = g;
        }
        if (find_one) top->cancel();
        return;
    }
    weft::task_group grp;
    for (int v = 1; v <= 9; v++)
        if (sud_ok(g, pos, v)) {
            grid kid = g;
            kid[pos] = static_cast<unsigned char>(v);
            grp.run([kid, &count, find_one, top, &mu, &found] { sud_par(kid, count, find_one, top, mu, found); });
        }
    grp.wait();
}
bool sud_solved_from(const grid &sol, const grid &givens) {
    for (int i = 0; i < 81; i++) {
        if (givens[i] && givens[i] != sol[i]) return false;
        if (!sol[i]) return false;
        grid t = sol;
        t[i] = 0;
        if (!sud_ok(t, i, sol[i])) return false;
    }
    return true;
}

} // namespace

TEST(tbb_sudoku_task_groups_count_every_solution_and_find_one_by_cancelling) {
    const char *puzzle = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
    grid base{};
    for (int i = 0; i < 81; i++) base[i] = puzzle[i] == '.' ? 0 : static_cast<unsigned char>(puzzle[i] - '0');
    grid holes = base;
    for (int i = 0; i < 81; i += 6) holes[i] = 0; /* 131 completions */
    long want = sud_serial(holes);
    ASSERT_GT(want, 1);
    for (unsigned w : kW) {
        weft::executor ex(w);
        std::atomic<long> count{0};
        std::mutex mu;
        grid found{};
        ex.run_root([&] { sud_par(holes, count, false, nullptr, mu, found); });
        ASSERT_EQ(count.load(), want);
        count = 0;
        ex.run_root([&] {
            weft::task_group top;
            top.run([&] { sud_par(holes, count, true, &top, mu, found); });
            top.wait();
        });
        ASSERT_GE(count.load(), 1);
        ASSERT_TRUE(sud_solved_from(found, holes));
    }
}

/* oneTBB's sub_string_finder: for each position, the longest substring that
 * also starts at another position, and where (a loop over positions). */
TEST(tbb_sub_string_finder_finds_each_positions_longest_repeat_as_the_serial_loop) {
    /* Fibonacci string, as the example builds */
    std::string a = "a", b = "b";
    while (b.size() < 1500) {
        std::string t = b + a;
        a = b;
        b = t;
    }
    const std::string s = b.substr(0, 1500);
    const std::size_t n = s.size();
    auto scan = [&](std::size_t i, std::vector<std::size_t> &mx, std::vector<std::size_t> &at) {
        std::size_t best = 0, where = 0;
        for (std::size_t j = 0; j < n; j++)
            if (j != i) {
                std::size_t k = 0, lim = n - std::max(i, j);
                while (k < lim && s[i + k] == s[j + k]) k++;
                if (k > best) best = k, where = j;
            }
        mx[i] = best;
        at[i] = where;
    };
    std::vector<std::size_t> mx(n), at(n), pm(n), pa(n);
    for (std::size_t i = 0; i < n; i++) scan(i, mx, at);
    for (unsigned w : kW) {
        weft::executor ex(w);
        std::fill(pm.begin(), pm.end(), 7777);
        weft::parallel_for(ex, std::size_t(0), n, [&](std::size_t i) { scan(i, pm, pa); }, weft::guided_partitioner(3));
        ASSERT_TRUE(pm == mx);
        ASSERT_TRUE(pa == at);
        std::fill(pm.begin(), pm.end(), 7777);
        weft::for_each_by_index(ex, weft::index_range<std::size_t>(0, n, 1), [&](weft::index_range<std::size_t> r) {
            for (std::size_t i = r.begin(); i < r.end(); i += r.step_size()) scan(i, pm, pa);
        });
        ASSERT_TRUE(pm == mx);
    }
}

/* oneTBB's count_strings: a loop inserting words into a shared map (a
 * locked std::map standing in for concurrent_hash_map). */
TEST(tbb_count_strings_by_a_parallel_loop_gives_the_serial_counts) {
    std::vector<std::string> words(20000);
    for (std::size_t i = 0; i < words.size(); i++) {
        std::uint64_t h = mix(i) % 977;
        words[i] = std::string(1 + h % 5, static_cast<char>('a' + h % 26)) + std::to_string(h % 31);
    }
    std::map<std::string, long> want;
    for (auto &x : words) want[x]++;
    for (unsigned w : kW) {
        weft::executor ex(w);
        std::map<std::string, long> got[16];
        std::mutex mu[16];
        weft::for_each(ex, words.begin(), words.end(), [&](const std::string &x) {
            std::size_t b = std::hash<std::string>{}(x) % 16;
            std::lock_guard<std::mutex> l(mu[b]);
            got[b][x]++;
        }, weft::dynamic_partitioner(64));
        std::map<std::string, long> all;
        for (auto &m : got)
            for (auto &kv : m) all[kv.first] += kv.second;
        ASSERT_TRUE(all == want);
    }
}

/* oneTBB's parallel_reduce / parallel_scan tests with a non-commutative
 * operation: the operands must stay in order. */
TEST(tbb_reduce_and_scan_with_non_commutative_operations_keep_operands_in_order) {
    struct m2 {
        std::uint64_t a, b, c, d;
        bool operator==(const m2 &o) const { return a == o.a && b == o.b && c == o.c && d == o.d; }
    };
    const std::uint64_t P = 1000003;
    auto mul = [P](const m2 &x, const m2 &y) {
        return m2{(x.a * y.a + x.b * y.c) % P, (x.a * y.b + x.b * y.d) % P, (x.c * y.a + x.d * y.c) % P,
                  (x.c * y.b + x.d * y.d) % P};
    };
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(1023), std::size_t(5000)}) {
        std::vector<m2> v(n);
        for (std::size_t i = 0; i < n; i++) v[i] = m2{mix(i) % P, mix(i + 1) % P, mix(i + 2) % P, mix(i + 3) % P};
        m2 id{1, 0, 0, 1};
        m2 want = id;
        std::vector<m2> ws(n);
        for (std::size_t i = 0; i < n; i++) ws[i] = want = mul(want, v[i]);
        std::vector<std::string> strs(n);
        std::string cat;
        for (std::size_t i = 0; i < n; i++) strs[i] = std::to_string(i % 97) + ",", cat += strs[i];
        for (unsigned w : kW) {
            weft::executor ex(w);
            ASSERT_TRUE(weft::reduce(ex, v.begin(), v.end(), id, mul) == want);
            ASSERT_TRUE(weft::reduce(ex, strs.begin(), strs.end(), std::string(), std::plus<>()) == cat);
            std::vector<m2> out(n);
            weft::inclusive_scan(ex, v.begin(), v.end(), out.begin(), mul);
            ASSERT_TRUE(out == ws);
            weft::inclusive_scan(ex, v.begin(), v.end(), out.begin(), mul, id);
            ASSERT_TRUE(out == ws);
        }
    }
}

/* oneTBB's text_filter as a weft::pipeline composed into a taskflow: read a
 * slice (serial), capitalize its words (parallel), write (serial, in order). */
TEST(tbb_text_filter_weft_pipeline_capitalizes_words_in_order_over_two_runs) {
    std::string text;
    for (std::uint64_t k = 0; text.size() < 12000; k++) {
        std::uint64_t h = mix(k);
        std::size_t wl = 1 + h % 8;
        for (std::size_t i = 0; i < wl; i++) text += static_cast<char>('a' + (h >> (i * 5)) % 26);
        text += (h >> 60) % 5 == 0 ? '\n' : ' ';
    }
    auto cap = [](std::string &s, bool start) {
        for (std::size_t i = 0; i < s.size(); i++) {
            bool st = i == 0 ? start : (s[i - 1] == ' ' || s[i - 1] == '\n');
            if (st && s[i] >= 'a' && s[i] <= 'z') s[i] = static_cast<char>(s[i] - 'a' + 'A');
        }
    };
    std::string want = text;
    cap(want, true);
    for (unsigned w : kW)
        for (std::size_t lines : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(5)}) {
            weft::executor ex(w);
            std::size_t pos = 0;
            std::string out;
            std::vector<std::string> buf(lines);
            std::vector<char> start(lines); /* not vector<bool>: lines are written concurrently */
            weft::pipeline pl(lines,
                              weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                                             if (pos >= text.size()) {
                                                 pf.stop();
                                                 return;
                                             }
                                             std::size_t end = std::min(pos + 61, text.size());
                                             while (end < text.size() && end > pos + 1 && text[end - 1] != ' ' &&
                                                    text[end - 1] != '\n')
                                                 end--;
                                             buf[pf.line()] = text.substr(pos, end - pos);
                                             start[pf.line()] = pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == '\n';
                                             pos = end;
                                         }},
                              weft::pipe{weft::pipe_type::parallel,
                                         [&](weft::pipeflow &pf) { cap(buf[pf.line()], start[pf.line()] != 0); }},
                              weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) { out += buf[pf.line()]; }});
            weft::taskflow tf;
            auto rewind = tf.emplace([&] {
                pos = 0;
                out.clear();
            });
            auto p = tf.composed_of(pl);
            rewind.precede(p);
            ex.run_n(tf, 2).get();
            if (out != want) TEST_FAIL_("text differs with %zu lines on %u workers", lines, w);
        }
}

/* oneTBB's forward substitution (the flow graph example): L x = b by blocks,
 * block (r, c) after (r, c - 1) and the diagonal block (c, c). */
TEST(tbb_blocked_forward_substitution_graph_solves_as_the_serial_sweep_bit_for_bit) {
    const std::size_t N = 96, B = 12, NB = N / B;
    std::vector<double> L(N * N, 0.0), b0(N);
    for (std::size_t i = 0; i < N; i++) {
        for (std::size_t j = 0; j < i; j++) L[i * N + j] = static_cast<double>(mix(i * N + j) % 100) / 500.0;
        L[i * N + i] = 1.0 + static_cast<double>(mix(i) % 10);
        b0[i] = static_cast<double>(mix(i + 5) % 1000);
    }
    /* block (r, c), c < r: x[r-block] -= L[r][c] x[c-block]; (c, c): solve in place */
    auto diag = [&](std::vector<double> &x, std::size_t c) {
        for (std::size_t i = c * B; i < (c + 1) * B; i++) {
            for (std::size_t j = c * B; j < i; j++) x[i] -= L[i * N + j] * x[j];
            x[i] /= L[i * N + i];
        }
    };
    auto off = [&](std::vector<double> &x, std::size_t r, std::size_t c) {
        for (std::size_t i = r * B; i < (r + 1) * B; i++)
            for (std::size_t j = c * B; j < (c + 1) * B; j++) x[i] -= L[i * N + j] * x[j];
    };
    std::vector<double> ref = b0;
    for (std::size_t r = 0; r < NB; r++) {
        for (std::size_t c = 0; c < r; c++) off(ref, r, c);
        diag(ref, r);
    }
    for (unsigned w : kW) {
        weft::executor ex(w);
        std::vector<double> x;
        weft::taskflow tf;
        auto init = tf.emplace([&] { x = b0; });
        std::vector<std::vector<weft::task>> t(NB, std::vector<weft::task>(NB));
        for (std::size_t r = 0; r < NB; r++)
            for (std::size_t c = 0; c <= r; c++) {
                t[r][c] = c == r ? tf.emplace([&, r] { diag(x, r); }) : tf.emplace([&, r, c] { off(x, r, c); });
                if (c > 0) t[r][c - 1].precede(t[r][c]);
                else init.precede(t[r][c]);
                if (c < r) t[c][c].precede(t[r][c]);
            }
        ex.run_n(tf, 3).get();
        ASSERT_TRUE(x == ref);
    }
}

/* oneTBB's nesting tests: parallel loops called from graph tasks, subflow
 * tasks, async tasks and loop bodies, all at once. */
TEST(tbb_parallel_loops_nested_in_graph_subflow_async_and_loop_bodies_visit_each_index_once) {
    const std::size_t NI = 24, NJ = 50;
    for (unsigned w : kW) {
        weft::executor ex(w);
        std::vector<std::atomic<int>> hits(4 * NI * NJ);
        for (auto &h : hits) h = 0;
        auto inner = [&](std::size_t base) {
            weft::parallel_for(ex, std::size_t(0), NJ, [&, base](std::size_t j) { hits[base + j]++; },
                               weft::static_partitioner(1));
        };
        weft::taskflow tf;
        tf.emplace([&] {
            weft::parallel_for(ex, std::size_t(0), NI, [&](std::size_t i) { inner((0 * NI + i) * NJ); });
        });
        tf.emplace([&](weft::subflow &sf) {
            for (std::size_t i = 0; i < NI; i++) sf.emplace([&, i] { inner((1 * NI + i) * NJ); });
            sf.join();
        });
        tf.emplace([&] {
            std::vector<weft::future<void>> fs;
            for (std::size_t i = 0; i < NI; i++) fs.push_back(ex.async([&, i] { inner((2 * NI + i) * NJ); }));
            for (auto &f : fs) f.get();
        });
        tf.emplace([&] {
            weft::task_group g;
            for (std::size_t i = 0; i < NI; i++) g.run([&, i] { inner((3 * NI + i) * NJ); });
            g.wait();
        });
        ex.run(tf).get();
        for (std::size_t k = 0; k < hits.size(); k++)
            if (hits[k].load() != 1) TEST_FAIL_("index %zu ran %d times on %u workers", k, hits[k].load(), w);
    }
}

/* oneTBB's exception tests: a throw in an inner loop's body reaches the
 * outer loop's caller, and every wait on the way returns (no hang). */
TEST(tbb_exception_from_a_nested_loop_body_reaches_the_outer_callers_and_the_executor_stays_usable) {
    for (unsigned w : kW) {
        weft::executor ex(w);
        std::atomic<int> ran{0};
        ASSERT_THROWS(weft::parallel_for(ex, 0, 40, [&](int i) {
                          weft::parallel_for(ex, 0, 40, [&, i](int j) {
                              ran++;
                              if (i == 17 && j == 23) throw std::logic_error("inner 17/23");
                          });
                      }),
                      std::logic_error, e, ASSERT_TRUE(std::string(e.what()) == "inner 17/23"));
        ASSERT_GE(ran.load(), 1);
        /* from a task group child in a root task */
        ASSERT_THROWS(ex.run_root([&] {
                          weft::task_group g;
                          for (int k = 0; k < 8; k++)
                              g.run([&, k] {
                                  weft::parallel_for(ex, 0, 16, [k](int j) {
                                      if (k == 5 && j == 9) throw std::range_error("child 5");
                                  });
                              });
                          g.wait();
                      }),
                      std::range_error, e2, ASSERT_TRUE(std::string(e2.what()) == "child 5"));
        /* and then a clean run */
        std::atomic<long> sum{0};
        weft::parallel_for(ex, 0, 1000, [&](int i) { sum += i; });
        ASSERT_EQ(sum.load(), 499500);
    }
}

namespace {
thread_local long tl_iso = -1;
std::atomic<int> iso_bad{0};
void iso(long id, int depth) {
    long saved = tl_iso;
    tl_iso = id;
    if (depth < 5) {
        auto a = weft::spawn([id, depth] { iso(id * 4 + 1, depth + 1); });
        auto b = weft::spawn([id, depth] { iso(id * 4 + 2, depth + 1); });
        iso(id * 4 + 3, depth + 1);
        b.sync();
        a.sync();
    }
    if (tl_iso != id) iso_bad++;
    tl_iso = saved;
}
} // namespace

TEST(tbb_isolation_spawned_children_synced_leave_the_waiting_tasks_thread_state_alone) {
    for (unsigned w : kW) {
        weft::executor ex(w);
        iso_bad = 0;
        ex.run_root([] {
            weft::task_group g;
            for (long k = 1; k <= 4; k++) g.run([k] { iso(k, 1); });
            g.wait();
        });
        ASSERT_EQ(iso_bad.load(), 0);
    }
}

/* ==== BOTS kernels on weft.hpp ==== */

namespace {
long nq_count(int n, int row, std::array<int, 16> cols) {
    if (row == n) return 1;
    std::array<long, 16> part{};
    weft::task_group g;
    for (int c = 0; c < n; c++) {
        bool ok = true;
        for (int r = 0; r < row && ok; r++) ok = cols[r] != c && cols[r] - c != row - r && c - cols[r] != row - r;
        if (!ok) continue;
        std::array<int, 16> kid = cols;
        kid[row] = c;
        g.run([&part, n, row, kid, c] { part[c] = nq_count(n, row + 1, kid); });
    }
    g.wait();
    return std::accumulate(part.begin(), part.end(), 0L);
}

/* BOTS sort (cilksort): sort quarters in parallel, merge pairs in parallel
 * with a split merge, then the halves. */
void cmerge(const int *a, std::size_t na, const int *b, std::size_t nb, int *out) {
    if (na + nb < 256) {
        std::merge(a, a + na, b, b + nb, out);
        return;
    }
    if (na < nb) {
        /* keep a the longer run; ties of equal values may go either way for ints */
        std::swap(a, b);
        std::swap(na, nb);
    }
    std::size_t ma = na / 2;
    std::size_t mb = static_cast<std::size_t>(std::lower_bound(b, b + nb, a[ma]) - b);
    out[ma + mb] = a[ma];
    auto left = weft::spawn([=] { cmerge(a, ma, b, mb, out); });
    cmerge(a + ma + 1, na - ma - 1, b + mb, nb - mb, out + ma + mb + 1);
    left.sync();
}
void csort(int *a, int *tmp, std::size_t n) {
    if (n < 512) {
        std::sort(a, a + n);
        return;
    }
    std::size_t q = n / 4;
    int *A = a, *B = a + q, *C = a + 2 * q, *D = a + 3 * q;
    {
        auto s1 = weft::spawn([=] { csort(A, tmp, q); });
        auto s2 = weft::spawn([=] { csort(B, tmp + q, q); });
        auto s3 = weft::spawn([=] { csort(C, tmp + 2 * q, q); });
        csort(D, tmp + 3 * q, n - 3 * q);
        s3.sync();
        s2.sync();
        s1.sync();
    }
    {
        auto m1 = weft::spawn([=] { cmerge(A, q, B, q, tmp); });
        cmerge(C, q, D, n - 3 * q, tmp + 2 * q);
        m1.sync();
    }
    cmerge(tmp, 2 * q, tmp + 2 * q, n - 2 * q, a);
}
} // namespace

TEST(bots_nqueens_by_task_groups_and_cilksort_by_spawns_give_exact_results) {
    const long want[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352};
    for (unsigned w : kW) {
        weft::executor ex(w);
        for (int n = 1; n <= 9; n++) ASSERT_EQ(ex.run_root([n] { return nq_count(n, 0, {}); }), want[n]);
        for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(511), std::size_t(513), std::size_t(20011)}) {
            std::vector<int> v(n), tmp(n);
            for (std::size_t i = 0; i < n; i++) v[i] = static_cast<int>(mix(i + n) % 5000);
            std::vector<int> ref = v;
            std::sort(ref.begin(), ref.end());
            ex.run_root([&] { csort(v.data(), tmp.data(), n); });
            ASSERT_TRUE(v == ref);
            /* and weft's own sort, for the same data */
            for (std::size_t i = 0; i < n; i++) v[i] = static_cast<int>(mix(i + n) % 5000);
            weft::sort(ex, v.begin(), v.end());
            ASSERT_TRUE(v == ref);
        }
    }
}

/* BOTS uts-like tree walk where every node is a weft::task_group child that
 * makes a group of its own (a binomial tree), counted exactly. */
namespace {
long uts_serial(std::uint64_t id, int depth) {
    long n = 1;
    int kids = depth == 0 ? 40 : static_cast<int>(mix(id) % 100 < 22 ? 4 : 0);
    for (int k = 0; k < kids; k++) n += uts_serial(mix(id * 8 + static_cast<std::uint64_t>(k) + 1), depth + 1);
    return n;
}
long uts_par(std::uint64_t id, int depth) {
    int kids = depth == 0 ? 40 : static_cast<int>(mix(id) % 100 < 22 ? 4 : 0);
    if (kids == 0) return 1;
    std::vector<long> part(static_cast<std::size_t>(kids));
    weft::task_group g;
    for (int k = 0; k < kids; k++)
        g.run([&part, id, depth, k] { part[static_cast<std::size_t>(k)] = uts_par(mix(id * 8 + static_cast<std::uint64_t>(k) + 1), depth + 1); });
    g.wait();
    return 1 + std::accumulate(part.begin(), part.end(), 0L);
}
} // namespace

TEST(bots_uts_binomial_tree_of_task_groups_counts_every_node_once) {
    long want = uts_serial(7, 0);
    ASSERT_GT(want, 41);
    for (unsigned w : kW) {
        weft::executor ex(w);
        ASSERT_EQ(ex.run_root([] { return uts_par(7, 0); }), want);
    }
}

/* oneTBB's mixing tests the other way round: task groups, spawns, corun and
 * executor.task_group() inside parallel loop bodies called from a task (a
 * loop body runs in a context of the calling task's run on every worker,
 * weft/algo.h), and a throw from a group child inside a body. */
TEST(tbb_task_groups_spawns_and_corun_inside_loop_bodies_called_from_a_task_give_exact_counts) {
    for (unsigned w : kW) {
        weft::executor ex(w);
        const int N = 40;
        std::vector<long> fibs(N, -1), spawned(N, -1);
        std::atomic<int> coruns{0};
        weft::taskflow inner;
        inner.emplace([&] { coruns++; });
        ex.run_root([&] {
            weft::parallel_for(ex, 0, N, [&](int i) {
                fibs[static_cast<std::size_t>(i)] = fib_group(i % 16);
                auto s = weft::spawn([i] { return fib_spawn(12 + i % 6); });
                weft::task_group g2 = ex.task_group();
                long extra = 0;
                g2.run([&extra] { extra = 1; });
                g2.wait();
                spawned[static_cast<std::size_t>(i)] = s.sync() + extra;
                if (i % 10 == 0) ex.corun(inner);
            }, weft::dynamic_partitioner(1));
        });
        for (int i = 0; i < N; i++) {
            ASSERT_EQ(fibs[static_cast<std::size_t>(i)], fib_serial(i % 16));
            ASSERT_EQ(spawned[static_cast<std::size_t>(i)], fib_serial(12 + i % 6) + 1);
        }
        ASSERT_EQ(coruns.load(), 4);
        /* a throw from a group child in a body: through g.wait(), the body and the loop */
        ASSERT_THROWS(ex.run_root([&] {
                          weft::parallel_for(ex, 0, 16, [&](int i) {
                              weft::task_group g;
                              g.run([i] {
                                  if (i == 11) throw std::out_of_range("child of 11");
                              });
                              g.wait();
                          });
                      }),
                      std::out_of_range, e, ASSERT_TRUE(std::string(e.what()) == "child of 11"));
    }
}

/* A weft::pipeline whose parallel pipe spawns (weft::spawn and a task group
 * through the stage's context, pipeline.h) and whose serial pipe runs a
 * reduction: each token's value in token order. */
TEST(tbb_pipeline_pipes_that_spawn_and_reduce_give_each_token_its_value_in_order) {
    for (unsigned w : kW) {
        weft::executor ex(w);
        const std::size_t lines = 3, ntok = 30;
        std::vector<std::vector<long>> vals(lines, std::vector<long>(64));
        std::vector<long> sums(lines);
        std::vector<long> out;
        weft::pipeline pl(lines,
                          weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                                         if (pf.token() == ntok) pf.stop();
                                     }},
                          weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow &pf) {
                                         auto &v = vals[pf.line()];
                                         int base = static_cast<int>(pf.token() % 7);
                                         weft::task_group g;
                                         for (std::size_t i = 0; i < v.size(); i++)
                                             g.run([&v, i, base] { v[i] = fib_serial(base + static_cast<int>(i % 9)); });
                                         auto s = weft::spawn([base] { return fib_group(base + 3); });
                                         g.wait();
                                         v[0] += s.sync();
                                     }},
                          weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow &pf) {
                                         auto &v = vals[pf.line()];
                                         sums[pf.line()] = weft::reduce(ex, v.begin(), v.end(), 0L);
                                     }},
                          weft::pipe{weft::pipe_type::serial,
                                     [&](weft::pipeflow &pf) { out.push_back(sums[pf.line()]); }});
        weft::taskflow tf;
        tf.composed_of(pl);
        ex.run(tf).get();
        ASSERT_EQ(out.size(), ntok);
        for (std::size_t t = 0; t < ntok; t++) {
            int base = static_cast<int>(t % 7);
            long want = fib_serial(base + 3);
            for (int i = 0; i < 64; i++) want += fib_serial(base + i % 9);
            if (out[t] != want) TEST_FAIL_("token %zu: %ld, want %ld (%u workers)", t, out[t], want, w);
        }
    }
}
