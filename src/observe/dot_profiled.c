/* The taskflow's DOT graph with each task's profiled time. */
#include "observe/obs.h"
#include "core/alloc.h"
#include "graph/graph.h"

#include <inttypes.h>
#include <string.h>

/* Time and runs per task index.  A span belongs to a task of the taskflow when
 * it recorded this taskflow and its index is in range (spans of other
 * taskflows match none). */
struct node_times {
    const weft_taskflow *tf;
    uint64_t *ticks, *runs;
    size_t ntasks;
};

static bool add_span(const weft__span *s, unsigned w, void *arg) {
    struct node_times *t = arg;
    (void)w;
    if (s->kind != WEFT__SPAN_TASK || s->tf != t->tf || s->index >= t->ntasks) return true;
    t->ticks[s->index] += s->end - s->begin;
    t->runs[s->index]++;
    return true;
}

static void free_times(struct node_times *t) {
    size_t n = t->ntasks ? t->ntasks : 1;
    weft__free(t->ticks, n * sizeof *t->ticks);
    weft__free(t->runs, n * sizeof *t->runs);
}

static bool alloc_times(struct node_times *t, const weft_taskflow *tf) {
    t->tf = tf;
    t->ntasks = tf->nnodes;
    size_t n = t->ntasks ? t->ntasks : 1;
    t->ticks = weft__calloc(n * sizeof *t->ticks);
    t->runs = weft__calloc(n * sizeof *t->runs);
    return t->ticks && t->runs;
}

struct dot_ctx {
    FILE *out;
    const struct node_times *t;
    const struct weft__obs *o;
    uint64_t max_ticks;
};

static void put_ns(FILE *out, double ns) { weft__put_duration(out, ns, "us"); }

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
    if (!alloc_times(&t, tf)) {
        free_times(&t);
        return WEFT_ENOMEM;
    }
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
