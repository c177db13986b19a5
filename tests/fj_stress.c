/* Fork-join under heavy stealing: every spawned task runs exactly once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include "fj_util.h"

struct tree {
    unsigned lo, hi;
    atomic_uchar *hits;
};

/* Splits [lo, hi) in two (or three) and spawns the parts; each leaf index is
 * marked once.  Odd-sized ranges use three children to vary the frame shapes. */
static int tree(weft_ctx *cx, void *p) {
    struct tree *t = p;
    unsigned n = t->hi - t->lo;
    if (n == 1) {
        atomic_fetch_add_explicit(&t->hits[t->lo], 1, memory_order_relaxed);
        return 0;
    }
    unsigned k = (n % 2 && n >= 3) ? 3 : 2;
    struct tree part[3];
    for (unsigned i = 0; i < k; i++) {
        part[i] = (struct tree){t->lo + n * i / k, t->lo + n * (i + 1) / k, t->hits};
        if (i + 1 < k) ASSERT_OK(weft_spawn(cx, tree, &part[i]));
    }
    int st = tree(cx, &part[k - 1]);
    for (unsigned i = 0; i + 1 < k; i++) {
        int s = weft_sync(cx);
        if (!st) st = s;
    }
    return st;
}

static void run_tree(weft_executor *ex, unsigned leaves, atomic_uchar *hits) {
    struct tree t = {0, leaves, hits};
    ASSERT_OK(weft_run_root(ex, tree, &t));
}

TEST(fj_every_task_runs_exactly_once_under_stealing) { check_every_leaf_once(run_tree); }

/* Several outside threads enter at once, each with its own tree. */
struct entry {
    weft_executor *ex;
    unsigned leaves;
    int ok;
};

static void *enter(void *p) {
    struct entry *e = p;
    atomic_uchar *hits = calloc(e->leaves, 1);
    struct tree t = {0, e->leaves, hits};
    e->ok = hits && weft_run_root(e->ex, tree, &t) == 0;
    for (unsigned i = 0; e->ok && i < e->leaves; i++) e->ok = hits[i] == 1;
    free(hits);
    return NULL;
}

TEST(fj_concurrent_roots_from_outside_threads_each_complete) {
    weft_executor *ex = make_executor(4);
    pthread_t th[4];
    struct entry e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = (struct entry){ex, 4096, 0};
        ASSERT_EQ(pthread_create(&th[i], NULL, enter, &e[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        ASSERT_TRUE(e[i].ok);
    }
    weft_executor_destroy(ex);
}
