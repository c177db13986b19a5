/* Preparing a taskflow to run: cycle detection, sources, join counters.
 *
 * The cycle check is a depth-first search over strong edges kept in the nodes
 * themselves (colour, parent, edge cursor), so it needs no allocation and no
 * recursion however deep the graph.  The weak edges out of condition tasks are
 * not followed: a cycle through a weak edge is a loop, not an error. */
#include "graph/graph.h"
#include "core/alloc.h"
#include "core/error_detail.h"
#include "core/log.h"

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

/* Whether n is a source: no predecessor of either kind (weak ones: only with
 * conditions, so their cold part is read only then). */
static inline bool is_source(const weft_taskflow *tf, const weft__node *n) {
    return n->num_deps == 0 && (!tf->nconds || weft__cold(n)->num_weak == 0);
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
        if (is_source(tf, n)) tf->sources[k++] = n;
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

/* The tasks no run can ever reach, in a graph with condition tasks: a
 * forward pass from the sources, in which a task is reached when all its
 * strong predecessors are, or when any condition task before it is (what a
 * run can do at best, whatever the conditions return).  A task left with some
 * strong predecessors reached and some not waits for ever: typically a loop
 * whose back edge into the task is strong (body -> cond where body is a plain
 * task), so the task waits for a predecessor that runs only after it.  Logs
 * one warning naming such a task (or, failing one, the first task never
 * reached while the graph has sources: a loop with no way in), and the count.
 * Uses the dfs_* scratch: dfs_color (BLACK: reached), dfs_edge (strong
 * predecessors not yet reached), dfs_parent (the work stack). */
static void warn_never_ready(weft_taskflow *tf) {
    weft__node *stack = NULL;
    bool any_source = false;
    WEFT__FOR_EACH_NODE(tf, n, {
        weft__node_cold *c = weft__cold(n);
        c->dfs_edge = n->num_deps;
        if (is_source(tf, n)) {
            c->dfs_color = BLACK;
            c->dfs_parent = stack;
            stack = n;
            any_source = true;
        } else {
            c->dfs_color = WHITE;
        }
    });
    if (!any_source) return; /* a graph with no source runs nothing: documented */
    while (stack) {
        weft__node *n = stack;
        stack = weft__cold(n)->dfs_parent;
        bool weak = weft__node_is_cond(n);
        weft__node *const *succ = weft__succ_array(n);
        for (uint32_t i = 0; i < n->nsucc; i++) {
            weft__node_cold *sc = weft__cold(succ[i]);
            if (!weak && sc->dfs_edge) sc->dfs_edge--;
            if (sc->dfs_color == WHITE && (weak || sc->dfs_edge == 0)) {
                sc->dfs_color = BLACK;
                sc->dfs_parent = stack;
                stack = succ[i];
            }
        }
    }
    size_t never = 0;
    weft__node *stuck = NULL, *first = NULL;
    WEFT__FOR_EACH_NODE(tf, n, {
        weft__node_cold *c = weft__cold(n);
        if (c->dfs_color == WHITE) {
            never++;
            if (!first) first = n;
            if (!stuck && c->dfs_edge < n->num_deps) stuck = n;
        }
    });
    if (!never) return;
    char b[24];
    if (stuck)
        weft__log(WEFT_LOG_WARN,
                  "weft_taskflow_validate: taskflow '%s': task '%s' can never run: %u of its %u strong "
                  "predecessors never run (a loop back into it through a strong edge? make the edge "
                  "that closes the loop come from a condition task); %zu task(s) in all never run",
                  tf->name ? tf->name : "", weft__node_label(stuck, b, sizeof b),
                  (unsigned)weft__cold(stuck)->dfs_edge, (unsigned)stuck->num_deps, never);
    else
        weft__log(WEFT_LOG_WARN,
                  "weft_taskflow_validate: taskflow '%s': task '%s' can never run: no source leads to it "
                  "(a loop needs a strong way in); %zu task(s) in all never run",
                  tf->name ? tf->name : "", weft__node_label(first, b, sizeof b), never);
}

weft_status weft_taskflow_validate(weft_taskflow *tf, weft_task *on_cycle) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    weft__node *c = NULL;
    weft__mutex_lock(&tf->mu);
    /* With a run active the taskflow cannot have changed since it was prepared. */
    weft_status st = tf->active ? WEFT_OK : weft__taskflow_prepare(tf, &c, __func__);
    if (st == WEFT_OK && !tf->active && tf->nconds) warn_never_ready(tf);
    weft__mutex_unlock(&tf->mu);
    if (on_cycle) *on_cycle = (weft_task){c};
    return st == WEFT_OK ? weft__tf_done(tf, WEFT_OK) : st;
}
