// weft-bench — shared by the oneTBB peers (*.cpp).  SPDX-License-Identifier: MIT
#ifndef WEFT_BENCH_TBB_GUARD_HPP
#define WEFT_BENCH_TBB_GUARD_HPP

#include <cstdio>
#include <exception>

/* TBB reports failure (bad_alloc, a body that threw) with exceptions; none may
 * cross into C.  Runs fn(); 0, or -1 after printing what went wrong. */
template <class Fn> inline int tbb_guarded(const char *what, Fn fn) {
    try {
        fn();
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tbb: %s: %s\n", what, e.what());
    } catch (...) {
        std::fprintf(stderr, "tbb: %s: unknown exception\n", what);
    }
    return -1;
}

#endif
