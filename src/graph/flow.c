/* Control flow shared by all kinds: adding typed nodes, their `ext` records,
 * nested runs (a subflow's or a module's graph run inside a parent run). */
#include "graph/flow.h"
#include "core/alloc.h"

weft_task weft__add_kind(weft_taskflow *tf, uint8_t kind, weft__job_fn run, weft_task_fn fn, void *arg, void *ext) {
    weft_task t = weft__add_node_kind(tf, fn, arg, kind, run, ext);
    if (weft_task_is_null(t)) {
        /* The emplace call of this kind, not weft_emplace, ran out (R3). */
        static const char *const call[] = {
            [WEFT__KIND_STATIC] = "weft_emplace", [WEFT__KIND_COND] = "weft_emplace_condition",
            [WEFT__KIND_MCOND] = "weft_emplace_multi_condition", [WEFT__KIND_SUBFLOW] = "weft_emplace_subflow",
            [WEFT__KIND_MODULE] = "weft_emplace_module",
        };
        if (kind < sizeof call / sizeof call[0] && call[kind]) weft__add_named_oom(tf, call[kind]);
        return t;
    }
    if (kind == WEFT__KIND_COND || kind == WEFT__KIND_MCOND) tf->nconds++;
    return t;
}

weft_task_kind weft_task_get_kind(weft_task t) {
    static const weft_task_kind map[] = {
        [WEFT__KIND_STATIC] = WEFT_TASK_STATIC, [WEFT__KIND_COND] = WEFT_TASK_CONDITION,
        [WEFT__KIND_MCOND] = WEFT_TASK_MULTI_CONDITION, [WEFT__KIND_SUBFLOW] = WEFT_TASK_SUBFLOW,
        [WEFT__KIND_MODULE] = WEFT_TASK_MODULE,
    };
    return t.node_ ? map[weft__cold(t.node_)->kind] : WEFT_TASK_STATIC;
}

size_t weft_task_num_weak_dependents(weft_task t) { return t.node_ ? weft__cold(t.node_)->num_weak : 0; }

void weft__flow_release_node(weft_taskflow *tf, weft__node *n) {
    switch (weft__cold(n)->kind) {
    case WEFT__KIND_SUBFLOW: { /* keep it, graph and all, for the next subflow task */
        struct weft__subflow *s = weft__cold(n)->ext;
        s->next_free = tf->free_subs;
        tf->free_subs = s;
        break;
    }
    case WEFT__KIND_MODULE: weft__module_release(tf, weft__cold(n)->ext); break;
    default: weft_work_release(weft__cold(n)->ext); break;
    }
    weft__cold_mut(n)->ext = NULL;
}

void weft__flow_free_pool(weft_taskflow *tf) {
    /* Without recursion: freeing a record destroys its graph, whose own
     * subflow records would be freed by a nested call, three C frames a level
     * of nesting (a subflow 10^4 deep overflowed a 256 KiB stack).  So each
     * graph is cleared first, which returns its subflow tasks' records to its
     * pool, and that pool is moved onto tf's: the destroy then finds nothing
     * to recurse into. */
    while (tf->free_subs) {
        struct weft__subflow *s = tf->free_subs;
        tf->free_subs = s->next_free;
        if (s->graph) {
            (void)weft_taskflow_clear(s->graph); /* not busy: tf's runs are over */
            struct weft__subflow *inner = s->graph->free_subs;
            if (inner) {
                struct weft__subflow *tail = inner;
                while (tail->next_free) tail = tail->next_free;
                tail->next_free = tf->free_subs;
                tf->free_subs = inner;
                s->graph->free_subs = NULL;
            }
        }
        weft__subflow_free(s);
    }
}

weft__run *weft__nested_run_alloc(void) { return weft__calloc_aligned(sizeof(weft__run), WEFT__CACHE_LINE); }

void weft__nested_run_free(weft__run *r) {
    if (r) weft__free_aligned(r, sizeof *r, WEFT__CACHE_LINE);
}

void weft__nested_init(weft__run *sub, weft__run *r, weft__node *n, weft_taskflow *graph, uint8_t role) {
    sub->tf = graph;
    sub->ex = r->ex;
    sub->target = 1;
    sub->pred = NULL;
    sub->top = r->top;
    sub->parent = r;
    sub->pnode = n;
    sub->role = role;
    /* Detached subflows of this graph join the nearest run that is not itself a
     * subflow's (a subflow's record may be reused once its task is done). */
    sub->anchor = role == WEFT__ROLE_DETACHED ? r->anchor : (graph->is_subflow_graph ? r->anchor : sub);
    /* What a wait inside sub's tasks cannot wait for (core/future.c): a run
     * of graph, or of a graph sub is nested in.  A detached run outlives its
     * task, and the subflow's run record may be reused meanwhile: it names
     * its anchor, which it holds open, instead (a subflow's graph is never
     * run on its own, so the skipped level could match nothing). */
    sub->fut.owner = graph;
    sub->fut.up = role == WEFT__ROLE_DETACHED ? &sub->anchor->fut : &r->fut;
}

void weft__count_unrun(weft__worker *w, weft__run *r, const weft_taskflow *graph) {
    uint64_t unrun = graph->nnodes - graph->nerased;
    if (!unrun) return;
    atomic_fetch_add_explicit(&r->top->skipped, unrun, memory_order_relaxed);
    weft__hook_skipped_n(w, unrun);
}

weft__job *weft__enter_nested(weft__worker *w, weft__run *r, weft__node *n, weft__run *sub,
                              weft_taskflow *graph, uint8_t role) {
    weft__nested_init(sub, r, n, graph, role);
    /* A detached run holds a count on its anchor until it ends (run.c). */
    if (role == WEFT__ROLE_DETACHED) atomic_fetch_add_explicit(&sub->anchor->pending, 1, memory_order_relaxed);
    weft_status st;
    weft__job *now = weft__run_start_nested(sub, &st);
    if (st != WEFT_OK) {
        weft__count_unrun(w, r, graph); /* a cycle, no memory, a body stuck at fork(): it never runs */
        weft__fail_node(r, n, st);
        if (role == WEFT__ROLE_DETACHED) weft__run_settle(w, sub->anchor, -1); /* never reaches 0: n holds one */
        return weft__release_successors(w, r, n);
    }
    if (role == WEFT__ROLE_JOINED) return now; /* n finishes when sub ends */
    if (now) weft__push_local(w, now);
    return weft__release_successors(w, r, n);
}
