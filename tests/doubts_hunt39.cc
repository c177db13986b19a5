/* weft.hpp, hunt 39: run_until on an empty taskflow behaves as weft_run_until
 * (graph.h): the predicate is asked before every iteration, the first
 * included, until it returns true; each empty iteration completes at once.
 * (Taskflow's executor returns at once on an empty taskflow without calling
 * the predicate; weft's rule is the same for every taskflow.) */
#include "cpp_test.hpp"

#include <atomic>

TEST(cpp_run_until_on_an_empty_taskflow_asks_the_predicate_as_weft_run_until_does) {
    weft::executor ex(2);
    weft::taskflow tf("empty");
    int calls = 0;
    ex.run_until(tf, [&] { return ++calls > 3; }).get();
    ASSERT_EQ(calls, 4); /* 3 empty iterations, then true */
    calls = 0;
    ex.run_until(tf, [&] { return ++calls > 0; }).get();
    ASSERT_EQ(calls, 1); /* true at once: no iteration */
    /* The same taskflow through the C call: the same count. */
    struct count {
        int calls;
    } c = {0};
    weft_future *f = nullptr;
    ASSERT_OK(weft_run_until(
        ex.native(), tf.native(), [](void *a) { return ++static_cast<count *>(a)->calls > 3; }, &c, &f));
    ASSERT_OK(weft_future_wait(f));
    weft_future_destroy(f);
    ASSERT_EQ(c.calls, 4);
}
