/* Session 47 (h47-4): the code fragments of docs/guide-cpp.md that have no
 * `int main` (tests/docs_snippets.py runs only whole programs), each pasted
 * into a test with the names it assumes, and checked for what the text around
 * it says the fragment does.  A fragment edited in the guide should be edited
 * here too (each test names the section it comes from). */
#include "cpp_test.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

/* "Tasks are lambdas": a placeholder given data and work; `use` sees the
 * round of each run. */
std::vector<int> seen_rounds;
void use(int r) { seen_rounds.push_back(r); }

} // namespace

TEST(guide_cpp_placeholder_with_data_and_work_sees_each_round) {
    weft::executor executor(cpp_test_workers());
    weft::taskflow taskflow;
    seen_rounds.clear();
    /* guide-cpp.md, "Tasks are lambdas" */
    int round = 0;
    auto t = taskflow.placeholder();
    t.data(&round).work([t] { use(*static_cast<int *>(t.data())); });
    for (round = 0; round < 10; round++) executor.run(taskflow).wait();
    /* end of fragment */
    ASSERT_EQ(seen_rounds.size(), (size_t)10);
    for (int i = 0; i < 10; i++) ASSERT_EQ(seen_rounds[(size_t)i], i);
}

TEST(guide_cpp_a_mutable_condition_loops_twice_and_keeps_its_state_across_runs) {
    /* "[i = 0]() mutable { return ++i < 3 ? 0 : 1; } is a condition that
     * loops twice, as in Taskflow"; what it changes stays from run to run. */
    weft::executor executor(cpp_test_workers());
    weft::taskflow tf;
    int body = 0, done = 0;
    auto init = tf.emplace([] {});
    auto b = tf.emplace([&] { body++; });
    auto c = tf.emplace([i = 0]() mutable { return ++i < 3 ? 0 : 1; });
    auto d = tf.emplace([&] { done++; });
    init.precede(b);
    b.precede(c);
    c.precede(b, d);
    executor.run(tf).get();
    ASSERT_EQ(body, 3);
    ASSERT_EQ(done, 1);
    executor.run(tf).get(); /* i is 3 now: the condition picks 1 at once */
    ASSERT_EQ(body, 4);
    ASSERT_EQ(done, 2);
}

TEST(guide_cpp_control_flow_subflow_and_pipeline_fragment_does_what_it_says) {
    weft::executor executor(cpp_test_workers());
    weft::taskflow tf;
    int counter = -1;
    std::vector<std::size_t> buf(4);
    std::atomic<std::size_t> worked{0}, sum{0};
    auto work = [&](std::size_t x) {
        worked++;
        sum += x;
    };
    /* guide-cpp.md, "Control flow, pipelines" */
    auto init = tf.emplace([&] { counter = 0; });
    auto body = tf.emplace([&] { counter++; });
    auto cond = tf.emplace([&] { return counter < 5 ? 0 : 1; });   // int: a condition
    auto done = tf.emplace([] {});
    init.precede(body); body.precede(cond); cond.precede(body, done);

    tf.emplace([](weft::subflow& sf) {                              // a subflow
        auto a = sf.emplace([] {}), b = sf.emplace([] {});
        a.precede(b);                                                // joins its task
    });

    weft::pipeline pl(4,                                             // 4 lines
        weft::pipe{weft::pipe_type::serial, [&](weft::pipeflow& pf) {
            if (pf.token() == 100) pf.stop(); else buf[pf.line()] = pf.token();
        }},
        weft::pipe{weft::pipe_type::parallel, [&](weft::pipeflow& pf) { work(buf[pf.line()]); }});
    tf.composed_of(pl);
    /* end of fragment */
    executor.run(tf).get();
    ASSERT_EQ(counter, 5);
    ASSERT_EQ(worked.load(), (std::size_t)100);
    ASSERT_EQ(sum.load(), (std::size_t)(99 * 100 / 2));
    ASSERT_EQ(pl.num_tokens(), (std::size_t)100);
}

namespace {
std::atomic<int> writing{0}, most_writing{0}, written{0};
void write(const std::string &) {
    int now = ++writing;
    int m = most_writing.load();
    while (now > m && !most_writing.compare_exchange_weak(m, now)) {
    }
    for (volatile int i = 0; i < 1000; i = i + 1) {
    }
    written++;
    --writing;
}
} // namespace

TEST(guide_cpp_semaphore_fragment_keeps_at_most_two_writers) {
    std::vector<std::string> files;
    for (int i = 0; i < 64; i++) files.push_back("file" + std::to_string(i));
    /* guide-cpp.md, "Semaphores" */
    weft::executor executor(4);
    weft::semaphore disk(2);                          // two writers at a time
    weft::taskflow taskflow;
    for (auto &file : files)
        taskflow.emplace([&file] { write(file); }).acquire(disk).release(disk);
    executor.run(taskflow).wait();
    /* end of fragment */
    ASSERT_EQ(written.load(), 64);
    ASSERT_LE(most_writing.load(), 2);
    ASSERT_EQ(disk.value(), (std::size_t)2);
}

namespace {
weft::executor *fj_executor;
#define executor (*fj_executor)
/* guide-cpp.md, "Fork-join and async" */
long fib(long n) {                                   // spawn / sync: no allocation
    if (n < 2) return n;
    auto x = weft::spawn([n] { return fib(n - 1); }); // may run on another worker
    long b = fib(n - 2);
    return x.sync() + b;                             // the child's value, or its exception
}

size_t fib_group(size_t n) {                         // Taskflow's TaskGroup
    if (n < 2) return n;
    size_t a, b;
    weft::task_group tg = executor.task_group();     // or weft::task_group tg;
    tg.silent_async([n, &a] { a = fib_group(n - 1); });   // also tg.run(f)
    b = fib_group(n - 2);
    tg.corun();                                      // also tg.wait(); rethrows
    return a + b;
}
/* end of fragment */
#undef executor
} // namespace

TEST(guide_cpp_fork_join_fragment_computes_fibonacci_both_ways) {
    weft::executor executor(cpp_test_workers());
    fj_executor = &executor;
    long r = executor.run_root([] { return fib(20); });  // a fork-join root, from any thread
    ASSERT_EQ(r, 6765);
    std::size_t g = executor.run_root([] { return fib_group(18); });
    ASSERT_EQ(g, (std::size_t)2584);
    /* From a plain std::thread too ("from any thread"). */
    long t = 0;
    std::thread th([&] { t = executor.run_root([] { return fib(15); }); });
    th.join();
    ASSERT_EQ(t, 610);
}

TEST(guide_cpp_config_struct_fragment_compiles_and_makes_four_workers) {
    /* guide-cpp.md, "C idioms that are not C++" */
    weft_executor_config cfg{};       // zero means "default" in every field
    cfg.workers = 4;
    weft::executor executor(cfg);     // or weft_executor_create(&cfg, &err)
    /* end of fragment */
    ASSERT_EQ(weft_executor_workers(executor.native()), 4u);
}

TEST(guide_cpp_first_program_names_and_emplace_tuple) {
    /* "emplace(f1, f2, f3) adds the tasks in that order and returns a
     * std::tuple of them (auto [A, B, C] = ...)" */
    weft::executor executor(2);
    weft::taskflow taskflow("simple");
    std::vector<char> order;
    std::mutex mu;
    auto [A, B, C] = taskflow.emplace([&] { std::lock_guard<std::mutex> l(mu); order.push_back('A'); },
                                      [&] { std::lock_guard<std::mutex> l(mu); order.push_back('B'); },
                                      [&] { std::lock_guard<std::mutex> l(mu); order.push_back('C'); });
    A.name("A");
    B.name("B");
    C.name("C");
    A.precede(B, C);
    ASSERT_EQ(A.num_successors(), (std::size_t)2);
    ASSERT_EQ(B.num_dependents(), (std::size_t)1);
    executor.run(taskflow).wait();
    ASSERT_EQ(order.size(), (std::size_t)3);
    ASSERT_EQ(order[0], 'A');
    ASSERT_TRUE(A.name() == std::string("A"));
}
