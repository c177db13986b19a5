/* Callables weft cannot run, one per WEFT_BAD_CASE: each must stop the build
 * with a static_assert that names the weft call and what it takes, as the
 * first error (before, most gave "no type named 'type' in task_result_t" or
 * pages of <optional>).  Compiled by cpp.wrong_callables_fail_with_a_weft_static_assert_N. */
#include <weft.hpp>

int main() {
    weft::executor ex(1);
    weft::taskflow tf;
    static int x = 0;
    (void)x;
#if WEFT_BAD_CASE == 1
    tf.emplace([](int) {});
#elif WEFT_BAD_CASE == 2
    (void)ex.async([](int) { return 1; });
#elif WEFT_BAD_CASE == 3
    ex.silent_async([](int &) {});
#elif WEFT_BAD_CASE == 4
    ex.run_root([](int) {});
#elif WEFT_BAD_CASE == 5
    ex.run_root([] {
        weft::task_group tg;
        tg.run([](int) {});
    });
#elif WEFT_BAD_CASE == 6
    ex.run_root([] { auto s = weft::spawn([](int) {}); });
#elif WEFT_BAD_CASE == 7
    (void)ex.async([]() -> int & { return x; });
#elif WEFT_BAD_CASE == 8
    ex.run_root([]() -> int & { return x; });
#elif WEFT_BAD_CASE == 9
    tf.emplace([](weft::subflow &, int) {});
#elif WEFT_BAD_CASE == 10
    (void)ex.dependent_async([](int) {}, ex.async([] {}));
#elif WEFT_BAD_CASE == 11
    tf.emplace([](weft::subflow) {}); /* by value: a subflow is not copyable */
#elif WEFT_BAD_CASE == 12
    tf.placeholder().work([] { return 1; }); /* a condition's work: a task keeps its kind */
#elif WEFT_BAD_CASE == 13
    tf.placeholder().work([](weft::subflow &) {});
#elif WEFT_BAD_CASE == 14
    tf.placeholder().work([](int) {});
#elif WEFT_BAD_CASE == 15
    tf.emplace([] { return 1.5; }); /* neither void, an integer, an unscoped enum nor branches */
#elif WEFT_BAD_CASE == 16
    enum class side { left, right }; /* scoped: no conversion to int (not a condition in Taskflow either) */
    tf.emplace([] { return side::right; });
#elif WEFT_BAD_CASE == 17
    weft::pipeline pl(1, weft::pipe{weft::pipe_type::serial, [] {}}); /* a stage takes a weft::pipeflow& */
#elif WEFT_BAD_CASE == 18
    (void)ex.run_until(tf, [] {}); /* a predicate returns bool */
#elif WEFT_BAD_CASE == 19
    (void)ex.run_until(tf, [](int) { return true; });
#elif WEFT_BAD_CASE == 20
    tf.for_each_task([] {}); /* a visitor takes a weft::task */
#elif WEFT_BAD_CASE == 21
    tf.placeholder().for_each_successor([](int *) {});
#endif
    return 0;
}
