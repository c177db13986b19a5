/* Dependent async tasks: random dependency sets respect their order. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test_util.h"

#define MAX_DEPS 4

struct node {
    atomic_int *clock; /* global finishing order */
    int finished_at;
    int ndeps;
    struct node *deps[MAX_DEPS];
    int bad; /* a dependency had not finished when this started */
};

static int visit(weft_ctx *cx, void *p) {
    struct node *n = p;
    for (int i = 0; i < n->ndeps; i++)
        if (__atomic_load_n(&n->deps[i]->finished_at, __ATOMIC_ACQUIRE) == 0) n->bad = 1;
    __atomic_store_n(&n->finished_at, atomic_fetch_add(n->clock, 1) + 1, __ATOMIC_RELEASE);
    return 0;
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void run_random_dag(unsigned workers, int n, uint64_t seed) {
    weft_executor *ex = make_executor(workers);
    struct node *nodes = calloc((size_t)n, sizeof *nodes);
    weft_future **futs = calloc((size_t)n, sizeof *futs);
    atomic_int clock = 0;
    for (int i = 0; i < n; i++) {
        struct node *nd = &nodes[i];
        nd->clock = &clock;
        weft_future *deps[MAX_DEPS];
        nd->ndeps = i ? (int)(rng_next(&seed) % (MAX_DEPS + 1)) : 0;
        for (int k = 0; k < nd->ndeps; k++) {
            int d = (int)(rng_next(&seed) % (uint64_t)i);
            nd->deps[k] = &nodes[d];
            deps[k] = futs[d];
        }
        ASSERT_OK(weft_dependent_async(ex, visit, nd, deps, (size_t)nd->ndeps, &futs[i]));
    }
    for (int i = 0; i < n; i++) {
        ASSERT_OK(weft_future_wait(futs[i]));
        ASSERT_FALSE(nodes[i].bad);
        for (int k = 0; k < nodes[i].ndeps; k++) ASSERT_LT(nodes[i].deps[k]->finished_at, nodes[i].finished_at);
    }
    for (int i = 0; i < n; i++) weft_future_destroy(futs[i]);
    free(futs);
    free(nodes);
    weft_executor_destroy(ex);
}

TEST(async_dependent_tasks_start_after_all_their_dependencies) {
    uint64_t seed = test_seed();
    int n = (int)test_scale(3000);
    for (unsigned w = 1; w <= 4; w *= 2) run_random_dag(w, n, seed + w);
}

/* Dependencies created from inside a task, where records come from free lists. */
static int build_inside(weft_ctx *cx, void *p) {
    weft_executor *ex = weft_ctx_executor(cx);
    atomic_int *count = p;
    weft_future *prev = NULL;
    for (int i = 0; i < 1000; i++) {
        weft_future *f = NULL;
        ASSERT_OK(weft_dependent_async(ex, bump, count, prev ? &prev : NULL, prev ? 1 : 0, &f));
        weft_future_destroy(prev); /* allowed: the link is made */
        prev = f;
    }
    int st = weft_future_wait(prev);
    weft_future_destroy(prev);
    return st;
}

TEST(async_dependent_chain_built_inside_a_task_runs_in_full) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_future *f = NULL;
    ASSERT_OK(weft_async(ex, build_inside, &count, &f));
    ASSERT_OK(weft_future_wait(f));
    ASSERT_EQ(atomic_load(&count), 1000);
    weft_future_destroy(f);
    weft_executor_destroy(ex);
}

TEST(async_dependency_must_be_an_async_future) {
    weft_executor *ex = make_executor(1);
    weft_taskflow *tf = make_taskflow("tf");
    weft_future *run = NULL;
    ASSERT_OK(weft_run(ex, tf, &run));
    weft_future *f = NULL;
    ASSERT_STATUS(weft_dependent_async(ex, bump, NULL, &run, 1, &f), WEFT_EINVAL);
    ASSERT_OK(weft_future_wait(run));
    weft_future_destroy(run);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* The message of a refused dependency names it and says what is wrong with it:
 * a taskflow run's future is of the right executor and not NULL, so a message
 * saying "NULL or of another executor" pointed its reader the wrong way. */
TEST(async_refused_dependency_message_names_the_dependency_and_the_reason) {
    weft_executor *ex = make_executor(1);
    weft_executor *other = make_executor(1);
    weft_taskflow *tf = make_taskflow("tf");
    weft_future *run = NULL, *done = NULL, *far = NULL, *f = NULL;
    atomic_int count = 0;
    ASSERT_OK(weft_run(ex, tf, &run));
    ASSERT_OK(weft_async(ex, bump, &count, &done));
    ASSERT_OK(weft_async(other, bump, &count, &far));
    weft_future *deps[2] = {done, run};
    ASSERT_STATUS(weft_dependent_async(ex, bump, &count, deps, 2, &f), WEFT_EINVAL);
    ASSERT_NOT_NULL(strstr(weft_last_error_message(), "weft_dependent_async: deps[1] is not the future of an async task"));
    deps[1] = far;
    ASSERT_STATUS(weft_async_with(ex, bump, &count, &(weft_async_options){.deps = deps, .ndeps = 2}, &f), WEFT_EINVAL);
    ASSERT_NOT_NULL(strstr(weft_last_error_message(), "weft_async_with: deps[1] is a task of another executor"));
    deps[0] = NULL;
    ASSERT_STATUS(weft_dependent_async(ex, bump, &count, deps, 2, &f), WEFT_EINVAL);
    ASSERT_NOT_NULL(strstr(weft_last_error_message(), "deps[0] is NULL"));
    ASSERT_STATUS(weft_async(ex, NULL, NULL, &f), WEFT_EINVAL);
    ASSERT_NOT_NULL(strstr(weft_last_error_message(), "weft_async: fn is NULL"));
    ASSERT_NULL(f);
    ASSERT_OK(weft_future_wait(run));
    ASSERT_OK(weft_future_wait(done));
    ASSERT_OK(weft_future_wait(far));
    ASSERT_EQ(atomic_load(&count), 2);
    weft_future_destroy(run);
    weft_future_destroy(done);
    weft_future_destroy(far);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(other);
    weft_executor_destroy(ex);
}
