/* Cancellation at odd moments (session 36's adversarial round): long chains
 * of parent and child tokens. */
#include "cancel_test.h"

#include <stdlib.h>

/* Deeper than a stack holds when each generation's cancel calls its child's,
 * or a leaf's last reference frees its parent by recursion. */
enum { CHAIN = 100000 };

static void count_cb(void *arg, const char *reason) {
    (void)reason;
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* A chain t[0] <- t[1] <- ... <- t[n-1] (each the parent of the next). */
static weft_cancel_token **new_chain(int n) {
    weft_cancel_token **t = malloc(sizeof *t * (size_t)n);
    ASSERT_TRUE(t != NULL);
    t[0] = new_token();
    for (int i = 1; i < n; i++) {
        weft_status st;
        t[i] = weft_cancel_token_create(t[i - 1], &st);
        ASSERT_OK(st);
    }
    return t;
}

/* Runs fn on a thread with a 1 MiB stack (a worker's or the timer thread's
 * could be as small), so that a depth that grows with the chain shows. */
static void on_small_stack(void *(*fn)(void *)) {
    pthread_attr_t attr;
    pthread_t th;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, (size_t)1 << 20), 0);
    ASSERT_EQ(pthread_create(&th, &attr, fn, NULL), 0);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
}

static void *cancel_a_chain(void *unused) {
    (void)unused;
    weft_cancel_token **t = new_chain(CHAIN);
    atomic_int ran = 0;
    ASSERT_OK(weft_cancel_token_on_cancel(t[CHAIN - 1], count_cb, &ran, NULL));
    ASSERT_OK(weft_cancel_token_on_cancel(t[CHAIN / 2], count_cb, &ran, NULL));
    ASSERT_STATUS(weft_cancel_token_cancel_with(t[0], "root"), WEFT_OK);
    /* Every callback ran before the cancel returned, with the root's reason. */
    ASSERT_EQ(atomic_load(&ran), 2);
    ASSERT_TRUE(weft_cancel_token_is_cancelled(t[CHAIN - 1]));
    ASSERT_STREQ(weft_cancel_token_reason(t[CHAIN - 1]), "root");
    ASSERT_EQ(weft_cancel_token_cancel_count(t[CHAIN - 1]), 1);
    /* The leaf's reference goes last: it frees the whole chain. */
    for (int i = 0; i < CHAIN; i++) weft_cancel_token_destroy(t[i]);
    free(t);
    return NULL;
}

TEST(cancelling_the_root_of_a_chain_of_100000_tokens_cancels_the_leaf_without_overflowing_the_stack) {
    on_small_stack(cancel_a_chain);
}

static void *free_a_chain(void *unused) {
    (void)unused;
    weft_cancel_token **t = new_chain(CHAIN);
    for (int i = 0; i < CHAIN; i++) weft_cancel_token_destroy(t[i]); /* the leaf's last */
    free(t);
    return NULL;
}

TEST(the_last_reference_of_a_chain_of_100000_tokens_frees_it_without_overflowing_the_stack) {
    on_small_stack(free_a_chain);
}

/* A callback of one token cancels a chain: that cancel, nested in the first,
 * returns only once the chain's callbacks have run. */
struct nested {
    weft_cancel_token *root;
    atomic_int *ran;
    int ran_when_it_returned;
};
static void cancel_other_chain(void *arg, const char *reason) {
    struct nested *n = arg;
    (void)reason;
    ASSERT_STATUS(weft_cancel_token_cancel_with(n->root, "nested"), WEFT_OK);
    n->ran_when_it_returned = atomic_load(n->ran);
}

TEST(a_cancel_nested_in_a_callback_returns_after_its_own_chain_callbacks_ran) {
    enum { N = 1000 };
    weft_cancel_token **a = new_chain(N), **b = new_chain(N);
    atomic_int ran = 0;
    struct nested n = {b[0], &ran, -1};
    ASSERT_OK(weft_cancel_token_on_cancel(a[N - 1], cancel_other_chain, &n, NULL));
    ASSERT_OK(weft_cancel_token_on_cancel(b[N - 1], count_cb, &ran, NULL));
    ASSERT_STATUS(weft_cancel_token_cancel(a[0]), WEFT_OK);
    ASSERT_EQ(n.ran_when_it_returned, 1);
    ASSERT_STREQ(weft_cancel_token_reason(b[N - 1]), "nested");
    for (int i = 0; i < N; i++) weft_cancel_token_destroy(a[i]);
    for (int i = 0; i < N; i++) weft_cancel_token_destroy(b[i]);
    free(a);
    free(b);
}
