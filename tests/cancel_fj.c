/* Tokens on fork-join roots (weft_run_root_with_token), and cancellation
 * reaching every fork-join child: the ones a thief stole and ran in a context
 * of its own, their own children, task-group members, and the children of a
 * graph task. */
#include "cancel_test.h" /* first: it defines _GNU_SOURCE */

#include <string.h>

static int must_not_run(weft_ctx *cx, void *p) {
    atomic_store((atomic_int *)p, 1);
    return 0;
}

TEST(root_with_a_cancelled_token_is_skipped_not_run) {
    weft_executor *ex = make_executor(2);
    weft_cancel_token *t = new_token();
    ASSERT_OK(weft_cancel_token_cancel(t));
    atomic_int ran = 0;
    int value = -7;
    ASSERT_STATUS(weft_run_root_with_token(ex, t, must_not_run, &ran, &value), WEFT_ECANCELED);
    ASSERT_EQ(atomic_load(&ran), 0);
    ASSERT_EQ(value, 0);
    /* A fresh token: it runs, and OK says nobody cancelled it. */
    ASSERT_OK(weft_cancel_token_reset(t));
    ASSERT_OK(weft_run_root_with_token(ex, t, must_not_run, &ran, &value));
    ASSERT_EQ(atomic_load(&ran), 1);
    ASSERT_STATUS(weft_run_root_with_token(ex, NULL, must_not_run, &ran, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_run_root_with_token(ex, t, NULL, NULL, &value), WEFT_EINVAL);
    weft_cancel_token_destroy(t);
    weft_executor_destroy(ex);
}

/* ---- a tree of fork-join children that spin until they see the cancel ---- */

#define FANOUT 4
#define LEVELS 3 /* 64 leaves */
#define PATIENCE_NS (3ull * 1000000000ull)

struct tree {
    weft_cancel_token *tok;
    atomic_int leaves, saw_cancel, saw_reason, stolen, timed_out;
    pthread_t root_thread;
};
struct node {
    struct tree *tr;
    int level;
};

/* A leaf: polls until weft_ctx_check says cancelled (or gives up). */
static int leaf(weft_ctx *cx, struct tree *tr) {
    atomic_fetch_add(&tr->leaves, 1);
    if (!pthread_equal(pthread_self(), tr->root_thread)) atomic_fetch_add(&tr->stolen, 1);
    uint64_t give_up = now_ns() + PATIENCE_NS;
    weft_status st;
    while ((st = weft_ctx_check(cx)) == WEFT_OK) {
        if (now_ns() > give_up) {
            atomic_fetch_add(&tr->timed_out, 1);
            return 0;
        }
        sleep_us(50);
    }
    if (st == WEFT_ECANCELED && weft_ctx_cancelled(cx)) atomic_fetch_add(&tr->saw_cancel, 1);
    if (strcmp(weft_ctx_cancel_reason(cx), "client went away") == 0) atomic_fetch_add(&tr->saw_reason, 1);
    return 0;
}

/* Inner levels: even levels use a task group, odd ones plain spawns. */
static int tree_node(weft_ctx *cx, void *p) {
    struct node *n = p;
    if (n->level == LEVELS) return leaf(cx, n->tr);
    struct node kids[FANOUT];
    for (int i = 0; i < FANOUT; i++) kids[i] = (struct node){n->tr, n->level + 1};
    if (n->level % 2 == 0) {
        weft_task_group g;
        weft_task_group_init(&g, cx);
        for (int i = 0; i < FANOUT; i++) ASSERT_OK(weft_task_group_spawn(&g, tree_node, &kids[i]));
        return weft_task_group_wait(&g);
    }
    for (int i = 0; i < FANOUT; i++) ASSERT_OK(weft_spawn(cx, tree_node, &kids[i]));
    int r = 0;
    for (int i = 0; i < FANOUT; i++) {
        int s = weft_sync(cx);
        if (r == 0) r = s;
    }
    return r;
}

static int tree_root(weft_ctx *cx, void *p) {
    struct tree *tr = p;
    tr->root_thread = pthread_self();
    struct node top = {tr, 0};
    return tree_node(cx, &top);
}

static void check_tree(struct tree *tr) {
    int leaves = atomic_load(&tr->leaves), timed_out = atomic_load(&tr->timed_out);
    int saw_cancel = atomic_load(&tr->saw_cancel), saw_reason = atomic_load(&tr->saw_reason);
    ASSERT_EQ(leaves, 64);
    ASSERT_EQ(timed_out, 0); /* leaves that never saw the cancel */
    ASSERT_EQ(saw_cancel, 64);
    ASSERT_EQ(saw_reason, 64);
}

/* Cancels tr->tok with a reason after a while, from a thread of its own. */
static void *cancel_later(void *p) {
    struct tree *tr = p;
    sleep_us(30 * 1000);
    (void)weft_cancel_token_cancel_with(tr->tok, "client went away");
    return NULL;
}

/* Runs the tree under a fresh token until at least one leaf ran on another
 * worker than the root (a theft is likely, not certain, on a busy machine). */
static void run_tree(weft_executor *ex, struct tree *tr, weft_status (*run)(weft_executor *, struct tree *)) {
    for (int attempt = 0; attempt < 5; attempt++) {
        memset(tr, 0, sizeof *tr);
        tr->tok = new_token();
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, cancel_later, tr), 0);
        ASSERT_STATUS(run(ex, tr), WEFT_ECANCELED);
        pthread_join(th, NULL);
        weft_cancel_token_destroy(tr->tok);
        if (atomic_load(&tr->stolen) > 0) return;
    }
    SKIP("no fork-join child was stolen in 5 tries");
}

static weft_status run_root_tree(weft_executor *ex, struct tree *tr) {
    int value = -1;
    weft_status st = weft_run_root_with_token(ex, tr->tok, tree_root, tr, &value);
    ASSERT_EQ(value, 0);
    return st;
}

TEST(cancelling_a_roots_token_reaches_stolen_children_and_theirs) {
    weft_executor *ex = make_executor(4);
    struct tree tr;
    run_tree(ex, &tr, run_root_tree);
    check_tree(&tr);
    weft_executor_destroy(ex);
}

/* The same tree as a graph task, with the token attached to its run: the
 * children a thief runs see the run's cancel (labelled from the graph task's
 * context, which no fork-join mark covers). */
static weft_status run_graph_tree(weft_executor *ex, struct tree *tr) {
    weft_taskflow *tf = make_taskflow("tree");
    (void)must_emplace(tf, tree_root, tr);
    weft_future *f;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_cancel_attach(tr->tok, f));
    weft_status st = weft_future_wait(f);
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    return st;
}

TEST(cancelling_a_run_reaches_the_stolen_fork_join_children_of_its_task) {
    weft_executor *ex = make_executor(4);
    struct tree tr;
    run_tree(ex, &tr, run_graph_tree);
    check_tree(&tr);
    weft_executor_destroy(ex);
}
