/* Preparing a taskflow to run: cycle detection, sources, join counters.
 *
 * The cycle check is a depth-first search over strong edges kept in the nodes
 * themselves (colour, parent, edge cursor), so it needs no allocation and no
 * recursion however deep the graph.  The weak edges out of condition tasks are
 * not followed: a cycle through a weak edge is a loop, not an error. */
#include "graph/graph.h"

enum { WHITE, GRAY, BLACK };

#define FOR_EACH_NODE(tf, n, body)                                                      \
    do {                                                                                \
        size_t left_ = (tf)->nnodes;                                                    \
        for (size_t k_ = 0; k_ < (tf)->nchunks && left_; k_++) {                        \
            size_t cap_ = weft__chunk_capacity(k_), cnt_ = left_ < cap_ ? left_ : cap_; \
            for (size_t i_ = 0; i_ < cnt_; i_++) {                                      \
                weft__node *n = &(tf)->chunks[k_][i_];                                  \
                body                                                                    \
            }                                                                           \
            left_ -= cnt_;                                                              \
        }                                                                               \
    } while (0)

/* Returns a node on a cycle (and the node whose edge closes it), or NULL. */
static weft__node *find_cycle(weft_taskflow *tf, weft__node **closer) {
    FOR_EACH_NODE(tf, n, { n->dfs_color = WHITE; });
    weft__node *found = NULL;
    FOR_EACH_NODE(tf, root, {
        if (found || root->dfs_color != WHITE) continue;
        root->dfs_color = GRAY;
        root->dfs_parent = NULL;
        root->dfs_edge = 0;
        weft__node *cur = root;
        while (cur) {
            if (cur->dfs_edge < (weft__node_is_cond(cur) ? 0 : cur->nsucc)) {
                weft__node *s = weft__succ_array(cur)[cur->dfs_edge++];
                if (s->dfs_color == GRAY) { /* back edge: s is an ancestor of cur */
                    found = s;
                    *closer = cur;
                    break;
                }
                if (s->dfs_color == WHITE) {
                    s->dfs_color = GRAY;
                    s->dfs_parent = cur;
                    s->dfs_edge = 0;
                    cur = s;
                }
            } else {
                cur->dfs_color = BLACK;
                cur = cur->dfs_parent;
            }
        }
    });
    return found;
}

void weft__rearm_joins(weft_taskflow *tf) {
    FOR_EACH_NODE(tf, n, { atomic_store_explicit(&n->join, n->num_deps, memory_order_relaxed); });
}

weft_status weft__taskflow_prepare(weft_taskflow *tf, weft__node **on_cycle) {
    /* Sources and join counters are kept current while building (task.c); only
     * the cycle check is left, and only when an edge points backward. */
    if (!tf->dirty || tf->backward == 0) return WEFT_OK;
    weft__node *closer = NULL, *c = find_cycle(tf, &closer);
    if (c) {
        char b1[24], b2[24];
        if (on_cycle) *on_cycle = c;
        return weft__tf_error(tf, WEFT_ECYCLE,
                              "taskflow '%s' has a cycle through task '%s' (the edge '%s' -> '%s' closes it)",
                              tf->name ? tf->name : "", weft__node_label(c, b1, sizeof b1),
                              weft__node_label(closer, b2, sizeof b2), weft__node_label(c, b1, sizeof b1));
    }
    tf->dirty = false;
    return WEFT_OK;
}

weft_status weft_taskflow_validate(weft_taskflow *tf, weft_task *on_cycle) {
    if (!tf) return WEFT_EINVAL;
    weft__node *c = NULL;
    weft__mutex_lock(&tf->mu);
    /* With a run active the taskflow cannot have changed since it was prepared. */
    weft_status st = tf->active ? WEFT_OK : weft__taskflow_prepare(tf, &c);
    weft__mutex_unlock(&tf->mu);
    if (on_cycle) *on_cycle = (weft_task){c};
    return st;
}
