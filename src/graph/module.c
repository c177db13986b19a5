/* Module tasks (Taskflow's composed_of): one task that runs another taskflow as a
 * nested run of the same run.  Runs of one taskflow never overlap: a module
 * whose body is busy queues behind the body's current run like any weft_run, and
 * the run that ends before it starts it (run.c), so no worker blocks. */
#include "graph/flow.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <string.h>

static void module_free(struct weft__module *m) {
    if (!m) return;
    weft__nested_run_free(m->run);
    weft__free(m, sizeof *m);
}

/* Room for one more entry in tf->bodies.  False: out of memory. */
static bool bodies_reserve(weft_taskflow *tf) {
    if (tf->nbodies < tf->bodies_cap) return true;
    size_t cap = tf->bodies_cap ? 2 * tf->bodies_cap : 4;
    weft_taskflow **a = weft__alloc(cap * sizeof *a);
    if (!a) return false;
    if (tf->nbodies) memcpy(a, tf->bodies, tf->nbodies * sizeof *a);
    weft__free(tf->bodies, tf->bodies_cap * sizeof *tf->bodies);
    tf->bodies = a;
    tf->bodies_cap = cap;
    return true;
}

static void hold_body(weft_taskflow *tf, weft_taskflow *b, int delta);

static void bodies_free(weft_taskflow *tf) {
    weft__free(tf->bodies, tf->bodies_cap * sizeof *tf->bodies);
    tf->bodies = NULL;
    tf->bodies_cap = 0;
}

void weft__module_release(weft_taskflow *tf, struct weft__module *m) {
    if (!m) return;
    /* The newest entries first: an erase of recent modules finds theirs at
     * once.  Entries are pointers only (the body may be gone).  A clear or
     * destroy emptied the table first (weft__module_release_all). */
    for (size_t i = tf->nbodies; i-- > 0;)
        if (tf->bodies[i] == m->body) {
            tf->bodies[i] = tf->bodies[--tf->nbodies];
            /* A module erased from a subflow's graph while it is built gives
             * back the hold its emplace took (the body lives: it was held). */
            if (tf->bodies_held) hold_body(tf, m->body, -1);
            break;
        }
    if (tf->nbodies == 0) tf->bodies_held = false;
    if (tf->nbodies == 0) bodies_free(tf);
    module_free(m);
}

void weft__module_release_all(weft_taskflow *tf) {
    /* Every module goes: the table goes whole, with the holds a subflow's
     * graph took (as each module's release above would give back its own).
     * Searched per module in emplace order, the clear of k modules of
     * distinct bodies cost k^2 / 2 compares (128,000 modules: 6.6 s). */
    weft__module_drop_held(tf);
    tf->nbodies = 0;
    bodies_free(tf);
}

weft_task weft_emplace_module(weft_taskflow *tf, weft_taskflow *body) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!body || body == tf || body->is_subflow_graph) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_module: the body is NULL, the taskflow itself or a subflow's graph");
        return WEFT_TASK_NULL;
    }
    if (weft__tf_busy(tf)) return WEFT_TASK_NULL;
    struct weft__module *m = weft__calloc(sizeof *m);
    if (m) m->run = weft__nested_run_alloc();
    bool room = m && m->run && bodies_reserve(tf);
    weft_task t = room ? weft__add_kind(tf, WEFT__KIND_MODULE, weft__module_run, NULL, NULL, NULL) : WEFT_TASK_NULL;
    if (weft_task_is_null(t)) {
        if (!room) weft__tf_oom(tf, "weft_emplace_module");
        module_free(m);
        /* The table bodies_reserve made for the first module: only a
         * module's release frees it (the destroy relies on that), and no
         * module holds it now, so it leaked with the taskflow. */
        if (tf->nbodies == 0 && tf->bodies) bodies_free(tf);
        return t;
    }
    m->body = body;
    tf->bodies[tf->nbodies++] = body;
    weft__cold_mut(t.node_)->ext = m;
    tf->next_owned++;
    /* A subflow's graph is built inside its parent's run, whose holds came
     * before this module: the module holds its body now, until the graph's
     * run ends (graph.h, bodies_held).  A graph is built by the subflow's
     * function only, and sealed once joined, so every entry is held. */
    if (tf->is_subflow_graph) {
        /* bodies_held says every entry is held.  Entries emplaced before
         * their holds were given back early (a weft_subflow_join whose start
         * failed: its cycle) are not: hold them all again, or the drop at the
         * end gave theirs back twice (runs_inflight wrapped: the body busy
         * for ever). */
        if (tf->bodies_held) hold_body(tf, body, 1);
        else weft__module_hold_bodies(tf, 1);
        tf->bodies_held = true;
    }
    return t;
}

/* A step of the walk below: the graphs the walk is inside of. */
struct body_path {
    const weft_taskflow *tf;
    const struct body_path *up;
};

/* Calls visit(b, ctx) for every module body b below tf, parents first, along
 * every path (a body reached twice is visited twice; one already on the path,
 * a cycle, is skipped with what is below it).  Stops at the first visit that
 * returns true, and returns true then.  The one walk of hold, list and
 * runs-here below. */
static bool each_body_below(weft_taskflow *tf, bool (*visit)(weft_taskflow *b, void *ctx), void *ctx,
                            const struct body_path *up) {
    const struct body_path here = {tf, up};
    for (size_t i = 0; i < tf->nbodies; i++) {
        weft_taskflow *b = tf->bodies[i];
        bool cycle = false;
        for (const struct body_path *p = &here; p && !cycle; p = p->up) cycle = p->tf == b;
        if (cycle) continue;
        if (visit(b, ctx) || each_body_below(b, visit, ctx, &here)) return true;
    }
    return false;
}

static bool hold_one(weft_taskflow *b, void *delta) {
    /* As tf's own count: taken under the submitter's program order (its
     * later edits see it); given back with release before the run's
     * future is ready (an edit after the wait sees the run's reads
     * done). */
    if (*(const int *)delta > 0) weft__tf_inflight_in(b);
    else weft__tf_inflight_out(b);
    return false;
}

void weft__module_hold_bodies(weft_taskflow *tf, int delta) { (void)each_body_below(tf, hold_one, &delta, NULL); }

/* The part of weft__module_hold_bodies(tf, delta) that is b's, b an entry of
 * tf->bodies: b, then what is below it, along the same paths (tf on them). */
static void hold_body(weft_taskflow *tf, weft_taskflow *b, int delta) {
    const struct body_path here = {tf, NULL};
    (void)hold_one(b, &delta);
    (void)each_body_below(b, hold_one, &delta, &here);
}

void weft__module_drop_held(weft_taskflow *tf) {
    if (!tf->bodies_held) return;
    tf->bodies_held = false;
    weft__module_hold_bodies(tf, -1);
}

/* list_bodies' visit: counts (out NULL) or writes out[n++]. */
struct body_list {
    const void **out;
    size_t n;
};

static bool list_one(weft_taskflow *b, void *ctx) {
    struct body_list *l = ctx;
    if (l->out) l->out[l->n] = b;
    l->n++;
    return false;
}

weft_status weft__module_list_bodies(const weft_taskflow *tf, const void *const **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (!tf->nbodies) return WEFT_OK;
    weft_taskflow *t = (weft_taskflow *)tf; /* the walk only reads here */
    struct body_list l = {NULL, 0};
    (void)each_body_below(t, list_one, &l, NULL);
    size_t count = l.n;
    if (!(l.out = weft__alloc(count * sizeof *l.out))) return WEFT_ENOMEM;
    l.n = 0;
    (void)each_body_below(t, list_one, &l, NULL);
    *out = l.out;
    *n = count;
    return WEFT_OK;
}

static bool runs_here(weft_taskflow *b, void *ctx) {
    (void)ctx;
    return weft__runs_under(b);
}

/* The same walk, stopped at the first body a task here belongs to: no list
 * made (it was allocated and freed per call, and its ENOMEM said "no"). */
bool weft__module_body_runs_here(const weft_taskflow *tf) {
    return each_body_below((weft_taskflow *)tf, runs_here, NULL, NULL);
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
        weft__count_unrun(w, r, m->body); /* the body never runs here */
        weft__fail_node(r, n, WEFT_EDEADLK);
        return weft__release_successors(w, r, n);
    }
    return weft__enter_nested(w, r, n, m->run, m->body, WEFT__ROLE_JOINED);
}
