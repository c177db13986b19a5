/* Module tasks (Taskflow's composed_of): one task that runs another taskflow as a
 * nested run of the same run.  Runs of one taskflow never overlap: a module
 * whose body is busy queues behind the body's current run like any weft_run, and
 * the run that ends before it starts it (run.c), so no worker blocks. */
#include "graph/flow.h"
#include "core/alloc.h"

void weft__module_free(struct weft__module *m) {
    if (!m) return;
    weft__nested_run_free(m->run);
    weft__free(m, sizeof *m);
}

weft_task weft_emplace_module(weft_taskflow *tf, weft_taskflow *body) {
    if (!tf) return WEFT_TASK_NULL;
    if (!body || body == tf || body->is_subflow_graph) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_module: the body is NULL, the taskflow itself or a subflow's graph");
        return WEFT_TASK_NULL;
    }
    if (weft__tf_busy(tf)) return WEFT_TASK_NULL;
    struct weft__module *m = weft__calloc(sizeof *m);
    if (m) m->run = weft__nested_run_alloc();
    weft_task t = (m && m->run) ? weft__add_kind(tf, WEFT__KIND_MODULE, weft__module_run, NULL, NULL) : WEFT_TASK_NULL;
    if (weft_task_is_null(t)) {
        if (!m || !m->run) weft__tf_error(tf, WEFT_ENOMEM, NULL);
        weft__module_free(m);
        return t;
    }
    m->body = body;
    weft__cold_mut(t.node_)->ext = m;
    tf->next_owned++;
    return t;
}

weft_taskflow *weft_task_module(weft_task t) {
    if (!t.node_ || weft__cold(t.node_)->kind != WEFT__KIND_MODULE) return NULL;
    return ((struct weft__module *)weft__cold(t.node_)->ext)->body;
}

/* True if `body` is the graph of r or of a run r is nested in: running it would
 * queue behind a run that waits for it. */
static bool runs_inside(const weft__run *r, const weft_taskflow *body) {
    for (; r; r = r->parent)
        if (r->tf == body) return true;
    return false;
}

weft__job *weft__module_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    struct weft__module *m = weft__cold(n)->ext;
    if (!weft__node_enter(w, n, r->top)) return weft__release_successors(w, r, n);
    if (runs_inside(r, m->body)) {
        weft__fail_node(r, n, WEFT_EDEADLK);
        return weft__release_successors(w, r, n);
    }
    return weft__enter_nested(w, r, n, m->run, m->body, WEFT__ROLE_JOINED);
}
