/* The taskflow's DOT graph with each task's profiled time. */
#include "observe/obs.h"
#include "core/alloc.h"
#include "graph/graph.h"

#include <inttypes.h>
#include <string.h>

/* Spans are matched to the taskflow's nodes by address: a table from node
 * pointer to emplace index, open addressing. */
struct node_times {
    const weft__node **key;
    uint32_t *idx;
    size_t cap;
    uint64_t *ticks, *runs; /* per task index */
    size_t ntasks;
};

static size_t slot(const struct node_times *t, const void *p) {
    uintptr_t h = (uintptr_t)p * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 24) & (t->cap - 1);
    while (t->key[i] && t->key[i] != p) i = (i + 1) & (t->cap - 1);
    return i;
}

static bool add_node(weft_task task, void *arg) {
    struct node_times *t = arg;
    size_t i = slot(t, task.node_);
    t->key[i] = task.node_;
    t->idx[i] = task.node_->index;
    return true;
}

static bool add_span(const weft__span *s, unsigned w, void *arg) {
    struct node_times *t = arg;
    (void)w;
    if (s->kind != WEFT__SPAN_TASK) return true;
    size_t i = slot(t, s->node);
    if (!t->key[i] || t->idx[i] >= t->ntasks) return true;
    t->ticks[t->idx[i]] += s->end - s->begin;
    t->runs[t->idx[i]]++;
    return true;
}

static void free_times(struct node_times *t) {
    weft__free(t->key, t->cap * sizeof *t->key);
    weft__free(t->idx, t->cap * sizeof *t->idx);
    weft__free(t->ticks, t->ntasks * sizeof *t->ticks);
    weft__free(t->runs, t->ntasks * sizeof *t->runs);
}

static bool alloc_times(struct node_times *t, size_t ntasks) {
    t->ntasks = ntasks;
    t->cap = 16;
    while (t->cap < ntasks * 2) t->cap *= 2;
    t->key = weft__calloc(t->cap * sizeof *t->key);
    t->idx = weft__calloc(t->cap * sizeof *t->idx);
    t->ticks = weft__calloc((ntasks ? ntasks : 1) * sizeof *t->ticks);
    t->runs = weft__calloc((ntasks ? ntasks : 1) * sizeof *t->runs);
    return t->key && t->idx && t->ticks && t->runs;
}

struct dot_ctx {
    FILE *out;
    const struct node_times *t;
    const struct weft__obs *o;
    uint64_t max_ticks;
};

static void put_ns(FILE *out, double ns) {
    if (ns < 1e3) fprintf(out, "%.0f ns", ns);
    else if (ns < 1e6) fprintf(out, "%.1f us", ns / 1e3);
    else fprintf(out, "%.2f ms", ns / 1e6);
}

static bool put_node(weft_task task, void *arg) {
    struct dot_ctx *c = arg;
    const weft__node *n = task.node_;
    uint64_t ticks = c->t->ticks[n->index], runs = c->t->runs[n->index];
    char buf[24], label[256];
    snprintf(label, sizeof label, "%s", weft__node_label(n, buf, sizeof buf));
    fprintf(c->out, "  n%u [label=", n->index);
    weft__put_dot_str(c->out, label);
    if (runs) {
        double total = weft__ticks_ns(c->o, ticks);
        /* Append the time on a second line: the label string is closed, so reopen
         * it with DOT's string concatenation. */
        fprintf(c->out, " + \"\\n%" PRIu64 " run%s, ", runs, runs == 1 ? "" : "s");
        put_ns(c->out, total);
        fputs(" total, ", c->out);
        put_ns(c->out, total / (double)runs);
        /* Pale yellow (fast) to red (the slowest task). */
        double f = c->max_ticks ? (double)ticks / (double)c->max_ticks : 0;
        fprintf(c->out, " mean\", style=filled, fillcolor=\"0.%03d 0.%03d 1.0\"", (int)(160 * (1 - f)),
                (int)(150 + 800 * f));
    } else {
        fputs(", style=\"filled,dashed\", fillcolor=\"#eeeeee\"", c->out);
    }
    fputs("];\n", c->out);
    weft__node *const *succ = weft__succ_array(n);
    for (uint32_t i = 0; i < n->nsucc; i++) fprintf(c->out, "  n%u -> n%u;\n", n->index, succ[i]->index);
    return true;
}

weft_status weft_taskflow_dump_dot_profiled(const weft_taskflow *tf, const weft_executor *ex, FILE *out) {
    if (!tf || !ex || !out) return WEFT_EINVAL;
    struct node_times t = { 0 };
    if (!alloc_times(&t, tf->nnodes)) {
        free_times(&t);
        return WEFT_ENOMEM;
    }
    weft_taskflow_for_each_task(tf, add_node, &t);
    const struct weft__obs *o = ex->obs_state;
    struct dot_ctx c = { out, &t, o, 0 };
    if (o) weft__spans_for_each(o, add_span, &t);
    for (size_t i = 0; i < t.ntasks; i++)
        if (t.ticks[i] > c.max_ticks) c.max_ticks = t.ticks[i];
    fputs("digraph ", out);
    weft__put_dot_str(out, tf->name ? tf->name : "taskflow");
    fputs(" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n", out);
    weft_taskflow_for_each_task(tf, put_node, &c);
    fputs("}\n", out);
    free_times(&t);
    return weft__obs_finish_write(out);
}
