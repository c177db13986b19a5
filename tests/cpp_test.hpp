/* Shared by the C++ tests (tests/cpp_*.cpp): the C harness, weft.hpp, and a
 * check that an expression throws a given type. */
#ifndef WEFT_CPP_TEST_HPP
#define WEFT_CPP_TEST_HPP

#include "harness.h"

#include <weft.hpp>

/* Runs `expr`; fails unless it throws `type` (caught as `name`), then runs
 * `check` with `name` in scope. */
#define ASSERT_THROWS(expr, type, name, check)                                   \
    do {                                                                         \
        bool thrown_ = false;                                                    \
        try {                                                                    \
            expr;                                                                \
        } catch (const type &name) {                                             \
            thrown_ = true;                                                      \
            check;                                                               \
        }                                                                        \
        if (!thrown_) TEST_FAIL_("%s did not throw %s", #expr, #type);           \
    } while (0)

/* A small executor for tests: 4 workers (oversubscribed on small machines,
 * which is the point: stealing and waiting happen). */
static inline unsigned cpp_test_workers() { return 4; }

#endif
