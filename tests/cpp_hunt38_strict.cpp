/* weft.hpp instantiated in every template a user reaches, compiled (not run)
 * by the test cpp.weft_hpp_instantiated_is_warning_free with -Wall -Wextra
 * -Wshadow -Wconversion -Wsign-conversion -Wzero-as-null-pointer-constant
 * -pedantic -Werror: a header's
 * warnings land in its users' builds, and only instantiated templates show
 * them (cpp.weft_hpp_compiles_alone_as_cxx17 instantiates none). */
#include <weft.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct strict_moveonly {
    std::unique_ptr<int> p;
};

int strict_instantiations(weft::executor &ex);
int strict_instantiations(weft::executor &ex) {
    std::vector<int> v(100, 1), out(100);
    std::vector<std::string> sv(10, "x");
    std::vector<double> dv(100, 0.5);
    std::vector<std::uint8_t> bytes(100, 1);
    int total = 0;

    weft::taskflow tf("strict");
    auto a = tf.emplace([] {});
    auto b = tf.emplace([&total] { return total > 0; });
    auto c = tf.emplace([&total]() -> std::size_t { return static_cast<std::size_t>(total); });
    auto d = tf.emplace([](weft::runtime &rt) { (void)rt.worker_id(); });
    auto e = tf.emplace([]() -> weft::branches { return {0, 1}; });
    auto f = tf.emplace([](weft::subflow &sf) {
        auto [x, y] = sf.emplace([] {}, [](weft::runtime &) { return 0; });
        x.precede(y);
        sf.join();
    });
    auto g = tf.emplace([m = strict_moveonly{std::make_unique<int>(1)}]() mutable { ++*m.p; });
    auto [h, i, j] = tf.emplace([] {}, [] {}, [] {});
    auto ph = tf.placeholder();
    ph.data(&v).work([m = strict_moveonly{std::make_unique<int>(2)}](weft::runtime &) mutable { ++*m.p; });
    a.precede(b, c, d);
    e.succeed(d);
    f.precede(g, h);
    i.succeed(h).precede(j, ph);
    a.priority(weft::task_priority::high).remove_successors(d).remove_predecessors(b, c);
    a.precede(d);
    if (a.priority() == weft::task_priority::low || a.type() != weft::task_type::plain) total++;
    tf.for_each(v.begin(), v.end(), [](int &x) { x++; }, weft::static_partitioner(4));
    tf.for_each_index(0, 100, 2, [](int) {});
    tf.for_each_index(std::size_t(0), v.size(), 1, [](std::size_t) {});
    tf.for_each_by_index(weft::index_range<long>(0, 100, 3), [](weft::index_range<long>) {});
    tf.transform(v.begin(), v.end(), out.begin(), [](int x) { return x * 2; });
    tf.transform(v.begin(), v.end(), out.begin(), out.begin(), [](int x, int y) { return x + y; });
    tf.reduce(v.begin(), v.end(), total, std::plus<int>());
    tf.sort(v.begin(), v.end());
    tf.sort(sv.begin(), sv.end(), std::greater<>());
    tf.inclusive_scan(v.begin(), v.end(), out.begin(), std::plus<int>());
    tf.inclusive_scan(v.begin(), v.end(), out.begin(), std::plus<int>(), 5);
    tf.exclusive_scan(v.begin(), v.end(), out.begin(), 0, std::plus<int>());
    weft::pipeline pl(2, weft::pipe{weft::pipe_type::serial, [](weft::pipeflow &pf) { if (pf.token() == 4) pf.stop(); }},
                      weft::pipe{weft::pipe_type::parallel, [](weft::pipeflow &pf) { (void)pf.line(); }});
    tf.composed_of(pl);
    weft::taskflow body;
    body.emplace([] {});
    tf.composed_of(body);
    (void)tf.dump();

    ex.run(tf).wait();
    ex.run_n(tf, 2).get();
    int n = 0;
    ex.run_until(tf, [&n] { return ++n == 2; }).get();
    ex.corun(tf);
    auto f1 = ex.async([] { return std::string("s"); });
    auto f2 = ex.async([](weft::runtime &) {});
    auto f3 = ex.dependent_async([] { return 1; }, f1, f2);
    ex.silent_async([] {});
    (void)f3.wait_for(std::chrono::milliseconds(1));
    (void)f3.wait_for(std::chrono::seconds::max());
    total += f3.get() + static_cast<int>(f1.get().size());
    total += ex.run_root([] {
        weft::task_group tg;
        int r = 0;
        tg.run([&r] { r = 1; });
        tg.silent_async([] {});
        auto ga = tg.async([] { return 3; });
        auto gb = tg.async([](weft::runtime &) {});
        auto gc = tg.dependent_async([] { return 4L; }, ga, gb);
        r += static_cast<int>(tg.size());
        if (tg.is_cancelled()) tg.cancel();
        tg.corun();
        std::vector<weft::future<int>> gv;
        gv.push_back(tg.async([] { return 1; }));
        auto gd = tg.dependent_async([] { return 2; }, gv.begin(), gv.end());
        r += ga.get() + static_cast<int>(gc.get());
        r += gd.get();
        auto s = weft::spawn([] { return 2; });
        return r + s.sync();
    });
    ex.wait_for_all();
    if (const weft::worker *w = ex.this_worker()) total += static_cast<int>(w->id());

    weft::for_each(ex, v.begin(), v.end(), [](int &x) { x--; });
    weft::for_each(ex, v, [](int &x) { x++; }, weft::guided_partitioner());
    weft::for_each_index(ex, 100, 0, -3, [](int) {});
    weft::parallel_for(ex, 0, v.size(), [](std::size_t) {});
    weft::for_each_by_index(ex, weft::index_range<int>(0, 10, 1), [](weft::index_range<int>) {});
    weft::transform(ex, v.begin(), v.end(), out.begin(), [](int x) { return x; });
    weft::transform(ex, v.begin(), v.end(), v.begin(), out.begin(), [](int x, int y) { return x - y; });
    total += weft::reduce(ex, v.begin(), v.end(), 0);
    total += weft::reduce(ex, v, 0, std::plus<int>());
    total += static_cast<int>(weft::reduce(ex, dv, 0.0));
    total += static_cast<int>(weft::reduce(ex, bytes, 0u));
    total += weft::transform_reduce(ex, v.begin(), v.end(), 0, std::plus<int>(), [](int x) { return x * x; });
    (void)weft::reduce(ex, sv, std::string());
    weft::sort(ex, v.begin(), v.end());
    weft::sort(ex, sv, std::greater<>());
    weft::inclusive_scan(ex, v.begin(), v.end(), out.begin());
    weft::inclusive_scan(ex, v.begin(), v.end(), out.begin(), std::plus<int>(), 1);
    weft::exclusive_scan(ex, v.begin(), v.end(), out.begin(), 0);
    weft::exclusive_scan(ex, sv.begin(), sv.end(), sv.begin(), std::string());
    /* the searches (session 40) */
    total += static_cast<int>(weft::find_if(ex, v.begin(), v.end(), [](int x) { return x > 3; }) - v.begin());
    total += static_cast<int>(weft::find_if_not(ex, bytes.begin(), bytes.end(), [](unsigned char u) { return u < 9; }) -
                              bytes.begin());
    total += static_cast<int>(weft::find(ex, sv.begin(), sv.end(), "b") - sv.begin());
    total += *weft::min_element(ex, v.begin(), v.end()) + *weft::max_element(ex, dv.begin(), dv.end(), std::less<>()) > 0;
    {
        weft::taskflow ft;
        auto r = v.begin();
        auto si = sv.begin();
        ft.find_if(v.begin(), v.end(), r, [](int x) { return x == 2; });
        ft.find_if_not(v.begin(), v.end(), r, [](int x) { return x != 2; });
        ft.min_element(sv.begin(), sv.end(), si);
        ft.max_element(v.begin(), v.end(), r, std::greater<>());
        ex.run(ft).get();
        auto t1 = ft.placeholder(), t2 = ft.placeholder(), t3 = ft.placeholder();
        ft.linearize({t1, t2});
        ft.linearize(std::vector<weft::task>{t2, t3});
        ft.remove_dependency(t1, t2);
        std::size_t seen = 0;
        ft.for_each_task([&seen](weft::task) { seen++; });
        total += static_cast<int>(seen);
        auto fa = ex.async([] { return 1; });
        ex.silent_dependent_async([] {}, fa);
        ex.silent_dependent_async([](weft::runtime &) {});
        std::vector<weft::future<int>> deps;
        deps.push_back(ex.async([] { return 2; }));
        ex.silent_dependent_async([] {}, deps.begin(), deps.end());
        total += ex.dependent_async([] { return 3; }, deps.cbegin(), deps.cend()).get();
        ex.wait_for_all();
    }
    return total;
}

int main() {
    weft::executor ex(2);
    return strict_instantiations(ex) > 0 ? 0 : 1;
}
