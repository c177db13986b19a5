/* Preparing a taskflow to run: cycle detection, sources, join counters.
 *
 * The cycle check is a depth-first search over strong edges kept in the nodes
 * themselves (colour, parent, edge cursor), so it needs no allocation and no
 * recursion however deep the graph.  The weak edges out of condition tasks are
 * not followed: a cycle through a weak edge is a loop, not an error. */
#include "graph/graph.h"
#include "core/alloc.h"
#include "core/error_detail.h"

enum { WHITE, GRAY, BLACK };


/* Marks n GRAY, entered from `parent`. */
static void dfs_enter(weft__node *n, weft__node *parent) {
    weft__node_cold *c = weft__cold(n);
    c->dfs_color = GRAY;
    c->dfs_parent = parent;
    c->dfs_edge = 0;
}

/* Depth-first search from root.  Returns a node on a cycle (and sets *closer to
 * the node whose edge closes it), or NULL. */
static weft__node *dfs_from(weft__node *root, weft__node **closer) {
    dfs_enter(root, NULL);
    weft__node *cur = root;
    while (cur) {
        weft__node_cold *c = weft__cold(cur);
        /* Edges out of a condition task are weak: a cycle through one is a loop. */
        uint32_t strong = weft__node_is_cond(cur) ? 0 : cur->nsucc;
        if (c->dfs_edge == strong) {
            c->dfs_color = BLACK;
            cur = c->dfs_parent;
            continue;
        }
        weft__node *s = weft__succ_array(cur)[c->dfs_edge++];
        uint8_t color = weft__cold(s)->dfs_color;
        if (color == GRAY) { /* back edge: s is an ancestor of cur */
            *closer = cur;
            return s;
        }
        if (color == WHITE) {
            dfs_enter(s, cur);
            cur = s;
        }
    }
    return NULL;
}

/* Returns a node on a cycle (and the node whose edge closes it), or NULL. */
static weft__node *find_cycle(weft_taskflow *tf, weft__node **closer) {
    WEFT__FOR_EACH_NODE(tf, n, { weft__cold(n)->dfs_color = WHITE; });
    weft__node *found = NULL;
    WEFT__FOR_EACH_NODE(tf, root, {
        if (!found && weft__cold(root)->dfs_color == WHITE) found = dfs_from(root, closer);
    });
    return found;
}

/* Collects the nodes with no dependents into tf->sources, in emplace order. */
static weft_status recount_sources(weft_taskflow *tf) {
    if (tf->sources_cap < tf->nnodes) {
        weft__node **a = weft__realloc(tf->sources, tf->sources_cap * sizeof *a, tf->nnodes * sizeof *a);
        if (!a) return weft__tf_error(tf, WEFT_ENOMEM, NULL);
        tf->sources = a;
        tf->sources_cap = tf->nnodes;
    }
    size_t k = 0;
    WEFT__FOR_EACH_NODE(tf, n, {
        /* A source has no predecessor of either kind (weak ones: only with conditions). */
        if (n->num_deps == 0 && (!tf->nconds || weft__cold(n)->num_weak == 0)) tf->sources[k++] = n;
    });
    tf->nsources = k;
    tf->sources_mode = WEFT__SOURCES_KEPT;
    /* Emplace's fast path counts on room in the array for its slots (task.c). */
    if (tf->fast_slots > tf->sources_cap - k) tf->fast_slots = tf->sources_cap - k;
    return WEFT_OK;
}

void weft__rearm_joins(weft_taskflow *tf) {
    WEFT__FOR_EACH_NODE(tf, n, { atomic_store_explicit(&n->join, n->num_deps, memory_order_relaxed); });
}

/* Whether every strong edge goes from a later-emplaced task to an earlier one:
 * their count against all strong edges, the sum of the nodes' num_deps (one
 * pass over the hot lines, where the cycle check walks every edge and the
 * cold parts).  Counted here, not per edge: a count kept by every weft_precede
 * costs every build a load and a store per edge, this pass one load per node
 * of the graphs that have backward edges. */
static bool all_backward(const weft_taskflow *tf) {
    size_t edges = 0;
    WEFT__FOR_EACH_NODE(tf, n, { edges += n->num_deps; });
    return edges == tf->backward;
}

/* call: the public call the user made, for the message (weft_run_n_parallel's
 * said "weft_taskflow_validate/weft_run"). */
weft_status weft__taskflow_prepare(weft_taskflow *tf, weft__node **on_cycle, const char *call) {
    /* Join counters are kept current while building (task.c); the sources too,
     * unless edges were added in an order that made that costly.  The cycle
     * check runs only when an edge points backward. */
    if (tf->sources_mode == WEFT__SOURCES_STALE && recount_sources(tf) != WEFT_OK)
        return weft__fail(call, WEFT_ENOMEM, "out of memory preparing taskflow '%s'",
                          tf->name ? tf->name : "");
    if (!tf->dirty || tf->backward == 0) return WEFT_OK;
    if (tf->loops == 0 && all_backward(tf)) { /* the reverse of emplace order is topological */
        tf->dirty = false;
        return WEFT_OK;
    }
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
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    weft__node *c = NULL;
    weft__mutex_lock(&tf->mu);
    /* With a run active the taskflow cannot have changed since it was prepared. */
    weft_status st = tf->active ? WEFT_OK : weft__taskflow_prepare(tf, &c, __func__);
    weft__mutex_unlock(&tf->mu);
    if (on_cycle) *on_cycle = (weft_task){c};
    return st == WEFT_OK ? weft__tf_done(tf, WEFT_OK) : st;
}
