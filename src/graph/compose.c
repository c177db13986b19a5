/* Compositions: a reusable sub-graph (a taskflow of its own) with named entry and
 * exit tasks, copied task by task into other taskflows. */
#include "graph/flow.h"
#include "core/alloc.h"

#include <stdio.h>
#include <string.h>

struct point {
    char *name;
    uint32_t index;
};

struct points {
    struct point *v;
    size_t n, cap;
};

struct weft_composition {
    weft_taskflow *graph;
    struct points entries, exits;
};

weft_composition *weft_composition_create(const char *name, weft_status *err) {
    weft_composition *c = weft__calloc(sizeof *c);
    if (c) c->graph = weft_taskflow_create(name, err);
    if (c && c->graph) return c;
    weft__free(c, sizeof *c);
    if (err) *err = WEFT_ENOMEM;
    return NULL;
}

static void points_free(struct points *p) {
    for (size_t i = 0; i < p->n; i++) weft__free_str(p->v[i].name);
    weft__free(p->v, p->cap * sizeof *p->v);
}

void weft_composition_destroy(weft_composition *c) {
    if (!c) return;
    (void)weft_taskflow_destroy(c->graph);
    points_free(&c->entries);
    points_free(&c->exits);
    weft__free(c, sizeof *c);
}

weft_taskflow *weft_composition_graph(weft_composition *c) { return c ? c->graph : NULL; }

static struct point *points_find(const struct points *p, const char *name) {
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->v[i].name, name) == 0) return &p->v[i];
    return NULL;
}

static weft_status points_set(struct points *p, const char *name, uint32_t index) {
    struct point *old = points_find(p, name);
    if (old) {
        old->index = index;
        return WEFT_OK;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4;
        struct point *v = weft__realloc(p->v, p->cap * sizeof *v, cap * sizeof *v);
        if (!v) return WEFT_ENOMEM;
        p->v = v;
        p->cap = cap;
    }
    char *copy = weft__strdup(name);
    if (!copy) return WEFT_ENOMEM;
    p->v[p->n++] = (struct point){copy, index};
    return WEFT_OK;
}

static weft_status set_point(weft_composition *c, struct points *p, const char *name, weft_task t) {
    if (!c || !name || !t.node_) return WEFT_EINVAL;
    if (t.node_->tf != c->graph)
        return weft__tf_error(c->graph, WEFT_EINVAL, "task is not in composition '%s'", weft_taskflow_name(c->graph));
    return points_set(p, name, t.node_->index);
}

weft_status weft_composition_set_entry(weft_composition *c, const char *name, weft_task t) {
    return c ? set_point(c, &c->entries, name, t) : WEFT_EINVAL;
}

weft_status weft_composition_set_exit(weft_composition *c, const char *name, weft_task t) {
    return c ? set_point(c, &c->exits, name, t) : WEFT_EINVAL;
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
    default: return weft__add_kind(dst, weft__cold(n)->kind, n->job.run, n->fn, n->arg);
    }
}

static weft_status copy_name(weft_task t, const weft__node *n, const char *prefix) {
    if (!weft__cold(n)->name) return WEFT_OK;
    if (!prefix) return weft_task_set_name(t, weft__cold(n)->name);
    size_t len = strlen(prefix) + strlen(weft__cold(n)->name) + 2;
    char *buf = weft__alloc(len);
    if (!buf) return WEFT_ENOMEM;
    snprintf(buf, len, "%s/%s", prefix, weft__cold(n)->name);
    weft_status st = weft_task_set_name(t, buf);
    weft__free(buf, len);
    return st;
}

weft_status weft_composition_instantiate(const weft_composition *c, weft_taskflow *dst, const char *prefix,
                                         weft_instance *out) {
    if (!c || !dst || !out) return WEFT_EINVAL;
    if (dst == c->graph) return weft__tf_error(dst, WEFT_EINVAL, "a composition cannot be copied into itself");
    const weft_taskflow *src = c->graph;
    size_t base = dst->nnodes;
    for (size_t i = 0; i < src->nnodes; i++) {
        const weft__node *n = weft__node_at(src, i);
        weft_task t = copy_work(dst, n);
        if (weft_task_is_null(t)) return weft_taskflow_last_error(dst);
        weft_status st = copy_name(t, n, prefix);
        if (st != WEFT_OK) return weft__tf_error(dst, st, NULL);
    }
    for (size_t i = 0; i < src->nnodes; i++) {
        const weft__node *n = weft__node_at(src, i);
        weft__node *const *succ = weft__succ_array(n);
        for (uint32_t k = 0; k < n->nsucc; k++) {
            weft_status st = weft_precede((weft_task){weft__node_at(dst, base + i)}, (weft_task){weft__node_at(dst, base + succ[k]->index)});
            if (st != WEFT_OK) return st;
        }
    }
    *out = (weft_instance){c, dst, base};
    return WEFT_OK;
}

static weft_task instance_point(const weft_instance *inst, const struct points *p, const char *name) {
    const struct point *pt = name ? points_find(p, name) : NULL;
    if (!pt || inst->base_ + pt->index >= inst->tf_->nnodes) return WEFT_TASK_NULL;
    return (weft_task){weft__node_at(inst->tf_, inst->base_ + pt->index)};
}

weft_task weft_instance_entry(const weft_instance *inst, const char *name) {
    return inst && inst->comp_ ? instance_point(inst, &inst->comp_->entries, name) : WEFT_TASK_NULL;
}

weft_task weft_instance_exit(const weft_instance *inst, const char *name) {
    return inst && inst->comp_ ? instance_point(inst, &inst->comp_->exits, name) : WEFT_TASK_NULL;
}
