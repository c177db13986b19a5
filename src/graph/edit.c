/* Editing a built graph: erasing tasks, removing edges, linearizing.
 *
 * Nodes keep no list of their predecessors (a run never needs one), so removing
 * the edges into a task scans the nodes' successors until its counts say all
 * are found: O(tasks + edges) at worst, the price of an edit, paid where runs
 * pay nothing; nothing for a task without dependents.  An erased node's slot keeps
 * its place in the slab (task handles are pointers into it), marked by a NULL
 * job function, and goes on the taskflow's free list: the next emplace takes
 * it, so a graph edited in a loop does not grow.  Walks over the nodes skip
 * such slots (WEFT__FOR_EACH_NODE). */
#include "graph/flow.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <string.h>

/* Takes back what the edge p -> s added to s's counts and tf's. */
static void uncount_edge(weft_taskflow *tf, weft__node *p, weft__node *s, bool weak) {
    tf->sources_mode = WEFT__SOURCES_STALE; /* s may have become a source: recounted at the next run */
    if (weak) {
        weft__cold_mut(s)->num_weak--;
        return;
    }
    s->num_deps--;
    atomic_store_explicit(&s->join, s->num_deps, memory_order_relaxed);
    weft__edge_uncount(tf, p, s);
}

/* Sets p's successor count to k after removals from its array a. */
static void succ_shrunk(weft__node *p, weft__node **a, uint32_t k) {
    if (k == 1 && p->nsucc >= 2) p->succ.one = a[0]; /* back inline; the spill array is kept */
    if (k == 0) p->succ.one = NULL;
    p->nsucc = k;
}

/* Removes every edge out of p.  Returns how many there were. */
static size_t drop_succ(weft__node *p) {
    weft_taskflow *tf = p->tf;
    bool weak = tf->nconds && weft__node_is_cond(p);
    weft__node **a = p->nsucc <= 1 ? &p->succ.one : p->succ.many;
    uint32_t n = p->nsucc;
    for (uint32_t i = 0; i < n; i++) uncount_edge(tf, p, a[i], weak);
    succ_shrunk(p, a, 0);
    return n;
}

/* Whether any edge (strong or weak) still points into n. */
static bool has_dependents(const weft_taskflow *tf, const weft__node *n) {
    return n->num_deps || (tf->nconds && weft__cold(n)->num_weak);
}

/* Removes the edges p -> s, keeping the order of p's other successors (a
 * condition task's indices shift down).  From the newest edge back, and no
 * further than the last edge into s (s's counts say when): removing the
 * newest edges, as erasing a fan-out's leaves from the last does, costs no
 * pass over the others.  Returns how many were removed. */
static size_t drop_succ_to(weft__node *p, weft__node *s) {
    weft_taskflow *tf = p->tf;
    bool weak = tf->nconds && weft__node_is_cond(p);
    weft__node **a = p->nsucc <= 1 ? &p->succ.one : p->succ.many;
    uint32_t len = p->nsucc;
    for (uint32_t i = p->nsucc; i-- > 0;) {
        if (a[i] != s) continue;
        uncount_edge(tf, p, s, weak);
        memmove(a + i, a + i + 1, (len - i - 1) * sizeof *a);
        len--;
        if (!has_dependents(tf, s)) break;
    }
    size_t removed = p->nsucc - len;
    succ_shrunk(p, a, len);
    return removed;
}

/* Drops p's edges to n; true once no edge into n is left. */
static bool drop_from(weft_taskflow *tf, weft__node *p, weft__node *n) {
    if (!weft__node_erased(p) && p->nsucc) drop_succ_to(p, n);
    return !has_dependents(tf, n);
}

/* Removes every edge into n.  n's counts say how many there are, so the scan
 * stops at the last one, and a task without any (a source) costs none.  It
 * goes out from both ends of the tasks up to n, the predecessors of a graph
 * built in order being there: just below n (a chain, a join) or at the start
 * (a root fanning out); then the tasks after n (edges added backward).  It
 * scanned every task each time, from the first: erasing the n sources of a
 * taskflow one by one cost n^2 / 2 node visits (32,000 tasks: 4 s), a chain
 * erased from its tail as much (10.7 s), and each instantiate of a
 * composition with an erased task a pass over the whole destination. */
static void drop_dependents(weft__node *n) {
    weft_taskflow *tf = n->tf;
    if (!has_dependents(tf, n)) return;
    size_t up = 0, down = n->index; /* [up, down] not visited yet; n itself may be one (a loop) */
    for (;;) {
        if (drop_from(tf, weft__node_at(tf, down), n)) return;
        if (down == up) break;
        down--;
        if (drop_from(tf, weft__node_at(tf, up), n)) return;
        if (up == down) break;
        up++;
    }
    for (size_t i = (size_t)n->index + 1; i < tf->nnodes; i++)
        if (drop_from(tf, weft__node_at(tf, i), n)) return;
}

/* A task an edit may change: WEFT_OK, else the error (recorded on its taskflow). */
static weft_status editable(weft__node *n, const char *fn) {
    if (!n) return weft__fail(fn, WEFT_EINVAL, "the task is the null task");
    /* R3: a plain failure names the call ("the task was erased" named none). */
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "%s: the task was erased", fn);
    if (weft__tf_busy(n->tf)) return WEFT_EBUSY;
    return WEFT_OK;
}

/* Gives back what n owns and turns its slot into a free one. */
static void free_slot(weft__node *n) {
    weft_taskflow *tf = n->tf;
    weft__node_cold *c = weft__cold(n);
    if (c->name) tf->nnamed--;
    if (c->prio) tf->nprio--; /* a reused slot starts with no priority */
    weft__free_str(c->name);
    if (c->ext) {
        weft__flow_release_node(tf, n);
        tf->next_owned--;
    }
    if (c->sems) weft__sem_use_free(n);
    if (c->kind == WEFT__KIND_COND || c->kind == WEFT__KIND_MCOND) tf->nconds--;
    weft__succ_free(&tf->succ_pool, c->spill, c->spill_cap);
    *c = (weft__node_cold){0}; /* a reused slot starts clean (task.c, node_init) */
    n->cold_dirty = 0;
    n->fn = NULL;
    n->arg = NULL;
    n->num_deps = 0;
    atomic_store_explicit(&n->join, 0, memory_order_relaxed);
    /* n may be a source (a task with no edge in): recounted at the next run,
     * or it would start the free slot.  The list is no longer every slot. */
    tf->sources_mode = WEFT__SOURCES_STALE;
    n->job.run = NULL; /* erased (weft__node_erased) */
    n->job.next = (weft__job *)tf->free_slots;
    tf->free_slots = n;
    tf->fast_slots = 0; /* the next node takes this slot: the slow path */
    tf->nerased++;
}

void weft__slot_retire(weft_taskflow *tf) {
    tf->free_slots = (weft__node *)tf->free_slots->job.next; /* still erased and counted so */
}

void weft__slot_unfree(weft_taskflow *tf) {
    tf->free_slots = (weft__node *)tf->free_slots->job.next;
    tf->nerased--;
}

weft_status weft_task_erase(weft_task t) {
    weft__node *n = t.node_;
    weft_status st = editable(n, __func__);
    if (st != WEFT_OK) return st;
    drop_dependents(n);
    drop_succ(n);
    free_slot(n);
    /* A composition's entries and exits name tasks by index (compose.c): a
     * slot of its graph reused by the next task added made a name on the
     * erased task resolve, in later copies, to that unrelated task; and a
     * slot of a copy reused made its instance name the task added there.
     * Such a slot stays erased for good (as a copy's erased slots do). */
    if (n->tf->is_composition_graph || (n->index >= n->tf->retire_from && n->index < n->tf->retire_below))
        weft__slot_retire(n->tf);
    return weft__tf_done(n->tf, WEFT_OK);
}

weft_status weft_edge_remove(weft_task from, weft_task to) {
    weft_status st = editable(from.node_, __func__);
    if (st == WEFT_OK) st = editable(to.node_, __func__);
    if (st != WEFT_OK) return st;
    weft_taskflow *tf = from.node_->tf;
    if (to.node_->tf != tf) return weft__tf_error(tf, WEFT_EINVAL, "weft_edge_remove: tasks of different taskflows");
    if (drop_succ_to(from.node_, to.node_) == 0) {
        char a[24], b[24]; /* unnamed tasks by their index, as elsewhere */
        return weft__tf_error(tf, WEFT_ENOENT, "weft_edge_remove: no edge from '%s' to '%s'",
                              weft__node_label(from.node_, a, sizeof a), weft__node_label(to.node_, b, sizeof b));
    }
    return weft__tf_done(tf, WEFT_OK);
}

weft_status weft_task_remove_successors(weft_task t) {
    weft_status st = editable(t.node_, __func__);
    if (st != WEFT_OK) return st;
    drop_succ(t.node_);
    return weft__tf_done(t.node_->tf, WEFT_OK);
}

weft_status weft_task_remove_dependents(weft_task t) {
    weft_status st = editable(t.node_, __func__);
    if (st != WEFT_OK) return st;
    drop_dependents(t.node_);
    return weft__tf_done(t.node_->tf, WEFT_OK);
}

/* Removes the most recently added edge from -> to (undoing a weft_precede). */
static void drop_last(weft__node *from, weft__node *to) {
    weft__node **a = from->nsucc <= 1 ? &from->succ.one : from->succ.many;
    uint32_t i = from->nsucc;
    while (i-- > 0 && a[i] != to) {
    }
    for (uint32_t k = i; k + 1 < from->nsucc; k++) a[k] = a[k + 1];
    if (from->nsucc == 2) from->succ.one = a[0];
    else if (from->nsucc == 1) from->succ.one = NULL;
    from->nsucc--;
    uncount_edge(from->tf, from, to, from->tf->nconds && weft__node_is_cond(from));
}

weft_status weft_linearize(const weft_task *tasks, size_t n) {
    if (n && !tasks) return weft__fail(__func__, WEFT_EINVAL, "tasks is NULL with n > 0");
    if (n > PTRDIFF_MAX / sizeof *tasks) /* as weft_precede_many: before reading past the array */
        return weft__fail(__func__, WEFT_EINVAL, "n = %zu tasks: more than an array holds", n);
    for (size_t i = 0; i + 1 < n; i++) {
        weft_status st = weft_precede(tasks[i], tasks[i + 1]);
        if (st == WEFT_OK) continue;
        while (i-- > 0) drop_last(tasks[i].node_, tasks[i + 1].node_); /* all or nothing */
        return st;
    }
    return n && tasks[0].node_ ? weft__tf_done(tasks[0].node_->tf, WEFT_OK) : WEFT_OK;
}
