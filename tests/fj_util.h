/* Helpers shared by the fork-join tests. */
#ifndef WEFT_FJ_UTIL_H
#define WEFT_FJ_UTIL_H

#include "test_util.h"

/* One run over leaves [0, leaves): marks hits[i] once per leaf i it reaches and
 * fails the test itself on any other error. */
typedef void (*fj_leaf_run)(weft_executor *ex, unsigned leaves, atomic_uchar *hits);

/* Runs `run` 5 times on executors of 2, 4 and 8 workers over 2^16 leaves (scaled
 * by test_scale, at least 1024) and checks that every leaf ran exactly once. */
static inline void check_every_leaf_once(fj_leaf_run run) {
    unsigned leaves = (unsigned)test_scale(1 << 16);
    if (leaves < 1024) leaves = 1024;
    atomic_uchar *hits = calloc(leaves, 1);
    ASSERT_NOT_NULL(hits);
    unsigned workers[] = {2, 4, 8};
    for (size_t wi = 0; wi < 3; wi++) {
        weft_executor *ex = make_executor(workers[wi]);
        for (int rep = 0; rep < 5; rep++) {
            memset(hits, 0, leaves);
            run(ex, leaves, hits);
            for (unsigned i = 0; i < leaves; i++)
                if (atomic_load(&hits[i]) != 1) TEST_FAIL_("leaf %u ran %d times", i, (int)hits[i]);
        }
        weft_executor_destroy(ex);
    }
    free(hits);
}

#endif
