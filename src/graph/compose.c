/* Compositions: a reusable sub-graph (a taskflow of its own) with named entry and
 * exit tasks, copied task by task into other taskflows. */
#include "graph/flow.h"
#include "graph/name_index.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stdio.h>
#include <string.h>

/* Entries and exits are kept as a log: setting a name appends a record, and
 * the newest record of a name wins.  An instance remembers how long the log was
 * when it was made and reads only that prefix, so moving an entry, adding one
 * or extending the graph afterwards never changes what an earlier copy resolves
 * to (without the snapshot, an entry moved to a task added later resolved, in
 * an earlier copy, to a task of the copy after it).  An index maps each name
 * (entry or exit) to its newest record, each record links to the one before
 * it of its name: a lookup searched the whole log, so k named points looked up
 * once each cost k^2 / 2 string compares (16,000 entries: 1.6 s). */
struct point {
    char *name;
    uint32_t index; /* emplace index in the composition's graph */
    bool exit;
    uint32_t prev; /* the record before this one of its name and kind, or WEFT__NAME_NONE */
};

struct weft_composition {
    weft_taskflow *graph;
    struct point *log;
    size_t nlog, cap;
    weft__name_index names; /* (name, exit) -> its newest record */
};

static const char *point_key(const void *ctx, uint32_t i, unsigned *tag) {
    const struct point *pt = &((const weft_composition *)ctx)->log[i];
    *tag = pt->exit;
    return pt->name;
}

weft_composition *weft_composition_create(const char *name, weft_status *err) {
    weft_composition *c = weft__calloc(sizeof *c);
    if (!c) return weft__fail_null(err, __func__, WEFT_ENOMEM, NULL);
    c->graph = weft_taskflow_create(name, err);
    if (c->graph) {
        c->graph->is_composition_graph = true; /* weft_taskflow_destroy refuses it */
        return c;
    }
    weft__free(c, sizeof *c);
    return NULL; /* weft_taskflow_create set *err and said why */
}

weft_status weft_composition_destroy(weft_composition *c) {
    if (!c) return WEFT_OK;
    /* A graph a run still uses (a module's body) cannot go: refused, with c
     * whole.  It was handed to weft_taskflow_destroy, which refused it while
     * c was freed: the graph leaked, and the caller had nothing to retry. */
    if (atomic_load_explicit(&c->graph->runs_inflight, memory_order_acquire) != 0)
        return weft__tf_error(c->graph, WEFT_EBUSY,
                              "a run uses the graph of composition '%s' (as a module's body, "
                              "or its own run): wait for it, then destroy",
                              weft_taskflow_name(c->graph));
    c->graph->is_composition_graph = false;
    (void)weft_taskflow_destroy(c->graph);
    for (size_t i = 0; i < c->nlog; i++) weft__free_str(c->log[i].name);
    weft__free(c->log, c->cap * sizeof *c->log);
    weft__name_index_free(&c->names);
    weft__free(c, sizeof *c);
    return WEFT_OK;
}

weft_taskflow *weft_composition_graph(weft_composition *c) { return c ? c->graph : NULL; }

/* The newest of the first `n` records naming `name` as an entry (exit false)
 * or an exit. */
static const struct point *point_find(const weft_composition *c, size_t n, bool exit, const char *name) {
    uint32_t i = weft__name_find(&c->names, name, exit, point_key, c);
    while (i != WEFT__NAME_NONE && i >= n) i = c->log[i].prev; /* set after the instance was made */
    return i != WEFT__NAME_NONE ? &c->log[i] : NULL;
}

static weft_status set_point(weft_composition *c, bool exit, const char *name, weft_task t, const char *fn) {
    if (!c || !name || !t.node_) return weft__fail(fn, WEFT_EINVAL, "c or name is NULL, or the task is the null task");
    if (t.node_->tf != c->graph)
        return weft__tf_error(c->graph, WEFT_EINVAL, "%s: the task is not in composition '%s'", fn,
                              weft_taskflow_name(c->graph));
    /* An erased task's handle is invalid (graph.h): its slot may be reused by
     * the next task added, which the name would then silently resolve to. */
    if (weft__node_erased(t.node_))
        return weft__tf_error(c->graph, WEFT_EINVAL, "%s: the task was erased", fn);
    if (c->nlog >= UINT32_MAX - 1 || !weft__name_reserve(&c->names, point_key, c))
        return weft__fail_st(fn, WEFT_ENOMEM);
    if (c->nlog == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        struct point *v = weft__realloc(c->log, c->cap * sizeof *v, cap * sizeof *v);
        if (!v) return weft__fail_st(fn, WEFT_ENOMEM);
        c->log = v;
        c->cap = cap;
    }
    char *copy = weft__strdup(name);
    if (!copy) return weft__fail_st(fn, WEFT_ENOMEM);
    uint32_t rec = (uint32_t)c->nlog++;
    c->log[rec] = (struct point){copy, t.node_->index, exit, weft__name_find(&c->names, name, exit, point_key, c)};
    weft__name_set(&c->names, name, exit, rec, point_key, c);
    return WEFT_OK;
}

weft_status weft_composition_set_entry(weft_composition *c, const char *name, weft_task t) {
    return set_point(c, false, name, t, __func__);
}

weft_status weft_composition_set_exit(weft_composition *c, const char *name, weft_task t) {
    return set_point(c, true, name, t, __func__);
}

/* Adds to dst a task doing what n does. */
static weft_task copy_work(weft_taskflow *dst, const weft__node *n) {
    switch (weft__cold(n)->kind) {
    case WEFT__KIND_SUBFLOW: {
        const struct weft__subflow *s = weft__cold(n)->ext;
        return weft_emplace_subflow(dst, s->fn, s->arg);
    }
    case WEFT__KIND_MODULE: return weft_emplace_module(dst, ((const struct weft__module *)weft__cold(n)->ext)->body);
    case WEFT__KIND_STATIC:
        return weft__cold(n)->ext ? weft_emplace_work(dst, weft__cold(n)->ext) : weft__add_node(dst, n->fn, n->arg);
    default: /* (job.run may be a semaphore wrapper: the kind says which function) */
        return weft__add_kind(dst, weft__cold(n)->kind,
                              weft__cold(n)->kind == WEFT__KIND_COND ? weft__cond_run : weft__mcond_run, n->fn, n->arg,
                              NULL);
    }
}

static weft_status copy_name(weft_task t, const weft__node *n, const char *prefix) {
    if (!weft__cold(n)->name) return WEFT_OK;
    if (!prefix) return weft_task_set_name(t, weft__cold(n)->name);
    size_t len = strlen(prefix) + strlen(weft__cold(n)->name) + 2;
    char *buf = weft__alloc(len);
    if (!buf) return weft__tf_error(t.node_->tf, WEFT_ENOMEM, "weft_composition_instantiate: out of memory");
    snprintf(buf, len, "%s/%s", prefix, weft__cold(n)->name);
    weft_status st = weft_task_set_name(t, buf);
    weft__free(buf, len);
    return st;
}

/* A step of the copy failed with st.  Out of memory anywhere in it (a node,
 * a name, a semaphore record, an edge) is the instantiate's own failure:
 * the steps' texts ("taskflow 'd': out of memory", "weft_precede: ...")
 * named a call the user did not make, or none (R3).  Other statuses keep
 * the step's message. */
static weft_status copy_failed(weft_taskflow *dst, weft_status st) {
    return st == WEFT_ENOMEM ? weft__tf_oom(dst, "weft_composition_instantiate") : weft__tf_done(dst, st);
}

static weft_status copy_tasks(const weft_taskflow *src, weft_taskflow *dst, const char *prefix) {
    for (size_t i = 0; i < src->nnodes; i++) {
        const weft__node *n = weft__node_at(src, i);
        weft_task t = weft__node_erased(n) ? weft_placeholder(dst) : copy_work(dst, n);
        if (weft_task_is_null(t)) return copy_failed(dst, weft_taskflow_last_error(dst));
        weft_status st = copy_name(t, n, prefix);
        if (st == WEFT_OK) st = weft__sem_copy(t, n);
        if (st == WEFT_OK) st = weft__prio_copy(t, n);
        if (st != WEFT_OK) return copy_failed(dst, st);
        if (weft__cold(n)->single) weft__task_mark_single(t); /* a copied pipeline task */
        /* An erased task is copied as an erased slot that is never reused:
         * an entry or exit naming it then stays the null task in this
         * instance, instead of naming whatever a later weft_emplace put
         * there.  Retired here only if the erase left it on the free list:
         * weft_task_erase retires a slot of a composition's graph itself
         * (edit.c), and a second retire popped a list it had emptied (a
         * composition with an erased task copied into another's graph
         * crashed). */
        if (weft__node_erased(n) && weft_task_erase(t) == WEFT_OK && dst->free_slots == t.node_)
            weft__slot_retire(dst);
    }
    return WEFT_OK;
}

weft_status weft_composition_instantiate(const weft_composition *c, weft_taskflow *dst, const char *prefix,
                                         weft_instance *out) {
    if (!c || !dst || !out)
        return dst ? weft__tf_error(dst, WEFT_EINVAL, "weft_composition_instantiate: NULL argument")
                   : weft__fail(__func__, WEFT_EINVAL, "dst is NULL");
    if (dst == c->graph) return weft__tf_error(dst, WEFT_EINVAL, "weft_composition_instantiate: a composition cannot be copied into its own graph");
    const weft_taskflow *src = c->graph;
    size_t base = dst->nnodes;
    /* Copies keep the source's indices (base + i), erased slots included: new
     * nodes go at the end, and an erased source slot is copied as one. */
    dst->no_reuse = true;
    weft_status st = copy_tasks(src, dst, prefix);
    dst->no_reuse = false;
    if (st != WEFT_OK) return st;
    for (size_t i = 0; i < src->nnodes; i++) {
        const weft__node *n = weft__node_at(src, i);
        if (weft__node_erased(n)) continue;
        weft__node *const *succ = weft__succ_array(n);
        for (uint32_t k = 0; k < n->nsucc; k++) {
            st = weft_precede((weft_task){weft__node_at(dst, base + i)}, (weft_task){weft__node_at(dst, base + succ[k]->index)});
            if (st != WEFT_OK) return copy_failed(dst, st);
        }
    }
    *out = (weft_instance){c, dst, base, src->nnodes, c->nlog};
    if (src->nnodes) { /* the copies' slots, for edit.c */
        if (dst->retire_from == dst->retire_below || base < dst->retire_from) dst->retire_from = base;
        if (base + src->nnodes > dst->retire_below) dst->retire_below = base + src->nnodes;
    }
    return weft__tf_done(dst, WEFT_OK);
}

/* The copy's task for a point as the composition had it at instantiation.  A
 * point on a task that the graph no longer had then (cleared and rebuilt
 * smaller) has no copy. */
static weft_task instance_point(const weft_instance *inst, bool exit, const char *name) {
    if (!inst || !inst->comp_ || !name || inst->marks_ > inst->comp_->nlog) return WEFT_TASK_NULL;
    const struct point *pt = point_find(inst->comp_, inst->marks_, exit, name);
    if (!pt || pt->index >= inst->size_ || inst->base_ + pt->index >= inst->tf_->nnodes) return WEFT_TASK_NULL;
    weft__node *n = weft__node_at(inst->tf_, inst->base_ + pt->index);
    return weft__node_erased(n) ? WEFT_TASK_NULL : (weft_task){n};
}

weft_task weft_instance_entry(const weft_instance *inst, const char *name) { return instance_point(inst, false, name); }

weft_task weft_instance_exit(const weft_instance *inst, const char *name) { return instance_point(inst, true, name); }
