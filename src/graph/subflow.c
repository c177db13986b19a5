/* Subflow tasks: the task's function builds a graph while it runs; the graph then
 * runs as a nested run that either joins the task (its successors wait for the
 * whole graph) or is detached (it joins the end of the enclosing iteration).
 *
 * Memory: each subflow task owns a record with its graph and nested-run record.
 * The graph is cleared, not freed, at the task's next execution, and a cleared
 * graph returns the records of its own subflow tasks to its pool, in task
 * order (taskflow.c, release_node_parts), so re-running nested subflows
 * allocates nothing once the sizes have been reached. */
#include "graph/flow.h"
#include "core/alloc.h"
#include "core/error_detail.h"

void weft__subflow_free(struct weft__subflow *s) {
    if (!s) return;
    if (s->graph) {
        s->graph->is_subflow_graph = false; /* the owner may destroy it */
        (void)weft_taskflow_destroy(s->graph);
    }
    weft__nested_run_free(s->run);
    weft__free(s, sizeof *s);
}

/* A record from tf's pool, or a new one.  NULL: out of memory. */
static struct weft__subflow *subflow_take(weft_taskflow *tf) {
    struct weft__subflow *s = tf->free_subs;
    if (s) {
        tf->free_subs = s->next_free;
        return s;
    }
    s = weft__calloc(sizeof *s);
    if (!s) return NULL;
    /* The nested-run record (576 bytes) comes when the graph first runs
     * (run_record): a subflow task that builds nothing, the leaves of a
     * recursion of subflows (half its tasks), never needs one. */
    s->graph = weft_taskflow_create(NULL, NULL);
    if (!s->graph) {
        weft__subflow_free(s);
        return NULL;
    }
    s->graph->is_subflow_graph = true;
    return s;
}

/* s's nested-run record, made the first time its graph runs.  NULL: out of
 * memory (the caller fails the task with WEFT_ENOMEM, as a run that cannot
 * start its graph does). */
static weft__run *run_record(struct weft__subflow *s) {
    if (!s->run) s->run = weft__nested_run_alloc();
    return s->run;
}

weft_task weft_emplace_subflow(weft_taskflow *tf, weft_subflow_fn fn, void *arg) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!fn) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_subflow: function is NULL");
        return WEFT_TASK_NULL;
    }
    /* weft__tf_busy's two tests inline, the call only to refuse: the call
     * made this function save registers on every emplace. */
    if (__builtin_expect(tf->sealed || atomic_load_explicit(&tf->runs_inflight, memory_order_acquire) != 0, 0) &&
        weft__tf_busy(tf))
        return WEFT_TASK_NULL;
    struct weft__subflow *s = subflow_take(tf);
    if (!s) {
        weft__tf_oom(tf, "weft_emplace_subflow");
        return WEFT_TASK_NULL;
    }
    s->fn = fn;
    s->arg = arg;
    /* (not through weft__add_kind: one call less, ~10 instructions) */
    weft_task t = weft__add_node_kind(tf, NULL, NULL, WEFT__KIND_SUBFLOW, weft__subflow_run, s);
    if (weft_task_is_null(t)) { /* back to the pool */
        s->next_free = tf->free_subs;
        tf->free_subs = s;
        weft__add_named_oom(tf, "weft_emplace_subflow"); /* as weft__add_kind names it */
        return t;
    }
    tf->next_owned++;
    return t;
}

weft_taskflow *weft_subflow_graph(weft_subflow *sf) {
    return sf ? ((struct weft__subflow *)(void *)sf)->graph : NULL;
}

weft_status weft_subflow_detach(weft_subflow *sf) {
    struct weft__subflow *s = (struct weft__subflow *)(void *)sf;
    if (!s) return weft__fail(__func__, WEFT_EINVAL, "sf is NULL");
    /* A joined graph has run already: detaching it afterwards returned
     * WEFT_OK and made weft_subflow_detached say true of a graph that had
     * joined its task.  Refused, as Taskflow refuses to detach a subflow that
     * is not joinable; and outside the subflow's function (s->w is set only
     * during it), as weft_subflow_join is. */
    if (!s->w) return weft__fail(__func__, WEFT_EINVAL, "not the running subflow (its function has returned)");
    if (s->joined)
        return weft__fail(__func__, WEFT_EINVAL,
                          "the subflow was joined (weft_subflow_join): its graph has run, it cannot be detached");
    s->detached = true;
    return WEFT_OK;
}

bool weft_subflow_detached(const weft_subflow *sf) {
    return sf && ((const struct weft__subflow *)(const void *)sf)->detached;
}

weft__job *weft__subflow_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    weft_future *top = r->top;
    struct weft__subflow *s = weft__cold(n)->ext;
    if (!weft__node_enter(w, n, top)) return weft__release_successors(w, r, n);
    /* A detached graph from this task's last execution in the same iteration (a
     * loop) may still run; its record cannot be reused yet. */
    if (atomic_load_explicit(&s->graph->runs_inflight, memory_order_acquire) != 0) {
        weft__fail_node(r, n, WEFT_EBUSY);
        return weft__release_successors(w, r, n);
    }
    weft_taskflow *g = s->graph;
    if (g->nnodes != 0) {
        weft__taskflow_reset(g); /* weft_taskflow_clear's tests passed: runs_inflight above, not sealed */
    } else {
        /* Nothing was added since the last clear (a leaf of a recursion of
         * subflows, half its tasks): every field a clear resets holds its
         * cleared value already, nodes being what changes them, but for the
         * fast path's room, which a join of the empty graph took away, and
         * the last error (weft_taskflow_clear's WEFT_OK).  The clear's call
         * and stores were ~35 instructions of every such task. */
        if (g->nchunks) g->fast_slots = weft__chunk_capacity(0);
        weft__tf_done(g, WEFT_OK);
    }
    s->detached = s->joined = s->joining = false;
    s->w = w, s->parent = r, s->node = n;
    weft_ctx cx;
    struct weft__obs *o = weft__task_enter(w, &cx, n, r);
    int rc = s->fn(&cx, (weft_subflow *)(void *)s, s->arg);
    weft__task_leave(w, &cx, o, n, r, rc);
    s->w = NULL;
    s->graph->sealed = false; /* see weft_subflow_join */
    /* A graph to run without a record for its run fails the task as the
     * function failing would: dropped unrun, its tasks counted as skipped. */
    if (rc == 0 && s->graph->nnodes > 0 && !s->joined && !run_record(s)) rc = WEFT_ENOMEM;
    if (rc != 0) {
        weft__module_drop_held(s->graph); /* its graph does not run */
        /* A started subflow counts as the tasks of its graph that were not
         * run (core.h, weft_run_info.skipped): a graph built and not joined
         * is dropped unrun here, and went uncounted (in the run and the
         * metrics), where a cancel at the same point counts every task of it
         * (the graph's run starts stopped, run.c run_start). */
        if (!s->joined) weft__count_unrun(w, r, s->graph);
        weft__fail_node(r, n, rc);
        return weft__release_successors(w, r, n);
    }
    if (s->graph->nnodes == 0 || s->joined) {
        /* (a joined graph's run gave them back; none held: no call) */
        if (__builtin_expect(s->graph->bodies_held, 0)) weft__module_drop_held(s->graph);
        return weft__release_successors(w, r, n);
    }
    return weft__enter_nested(w, r, n, s->run, s->graph, s->detached ? WEFT__ROLE_DETACHED : WEFT__ROLE_JOINED);
}

static bool sync_done(void *arg) {
    /* Acquire: pairs with the release store in finish_nested (run.c). */
    return atomic_load_explicit(&((weft__run *)arg)->fut.done, memory_order_acquire) != 0;
}

weft_status weft_subflow_join(weft_subflow *sf) {
    struct weft__subflow *s = (struct weft__subflow *)(void *)sf;
    if (!s || !s->w || s->detached)
        return weft__fail(__func__, WEFT_EINVAL, "sf is NULL, detached, or not the running subflow");
    /* From a task of the graph being joined (the function waits in this very
     * call): it returned WEFT_OK at once, as if the graph had run, and the
     * task went on before its own graph had finished.  The graph cannot wait
     * for itself. */
    if (s->joining)
        return weft__fail(__func__, WEFT_EDEADLK,
                          "called from a task of the subflow's own graph while the subflow joins it: the graph "
                          "cannot wait for itself");
    if (s->joined) return WEFT_OK;
    /* The worker the calling thread is: the function's, or a thief's running a
     * child the function spawned (the function waits in its sync meanwhile).
     * Running the graph as s->w from a thief's thread pushed onto s->w's deque
     * and ran its tasks with s->w's context chain and frame stack, which only
     * s->w's own thread may touch.  A thread that is no worker of the run's
     * executor cannot run the graph: refused. */
    weft__worker *w = weft__current_worker(s->w->ex);
    if (!w) return weft__fail(__func__, WEFT_EINVAL, "not called on a worker of the subflow's executor");
    if (s->graph->nnodes > 0 && !run_record(s)) {
        /* As a graph that cannot start for want of memory (below): the run
         * fails, and the function may return the status. */
        weft__fail_node(s->parent, s->node, WEFT_ENOMEM);
        return weft__fail(__func__, WEFT_ENOMEM, "no memory for the subflow's nested run");
    }
    s->joined = true;
    if (s->graph->nnodes > 0) {
        weft__nested_init(s->run, s->parent, s->node, s->graph, WEFT__ROLE_SYNC);
        weft_status st;
        weft__job *now = weft__run_start_nested(s->run, &st); /* never queued: the graph is ours */
        if (st != WEFT_OK) {
            s->joined = false;
            weft__fail_node(s->parent, s->node, st);
            /* weft__taskflow_prepare said why (which task is on the cycle, or
             * what ran out of memory): R3 keeps that detail, as weft_run does;
             * "weft_subflow_join: taskflow has a cycle" replaced it. */
            return st;
        }
        int64_t mark = weft__worker_mark(w);
        s->joining = true;
        /* The start runs here at once, as the wait's first pop would have
         * taken it: pushed, it cost a push, a pop (with its fence) and a
         * turn of the wait's loop, ~60 instructions of every join (Taskflow's
         * fibonacci by subflows). */
        weft__execute(w, now);
        weft__worker_wait_until_own(w, mark, sync_done, s->run);
        s->joining = false;
    }
    /* Seal the graph: building it now fails with WEFT_EBUSY, as its tasks have run. */
    s->graph->sealed = true;
    s->graph->fast_slots = 0; /* building it goes the slow way, which refuses */
    return WEFT_OK;
}
