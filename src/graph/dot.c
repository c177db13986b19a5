/* Graphviz DOT output of a taskflow.  Condition tasks are diamonds and the weak
 * edges out of them dashed; a subflow task is a cluster holding the graph its
 * last execution built, and a module task a cluster holding its body.  Node ids
 * carry a cluster prefix, because one body may be drawn in several clusters. */
#include "graph/flow.h"
#include "core/escape.h"
#include "core/error_detail.h"

#include <stdio.h>

enum { DOT_MAX_DEPTH = 16 }; /* a module containing itself is drawn this deep */

/* Names are any C string: invalid UTF-8 becomes U+FFFD (core/escape.h). */
void weft__dot_put_escaped(FILE *out, const char *s) { weft__put_dot_escaped(out, s); }

struct dot {
    FILE *out;
    unsigned next_cluster;
};

static void dump_graph(struct dot *d, const weft_taskflow *tf, unsigned prefix, int depth);

static const char *node_style(const weft__node *n) {
    switch (weft__cold(n)->kind) {
    case WEFT__KIND_COND:
    case WEFT__KIND_MCOND: return ", shape=diamond";
    case WEFT__KIND_SUBFLOW: return ", shape=box, style=bold";
    case WEFT__KIND_MODULE: return ", shape=box3d";
    default: return n->fn ? "" : ", style=dashed";
    }
}

/* The graph a subflow or module node stands for (NULL for the other kinds). */
static const weft_taskflow *inner_graph(const weft__node *n) {
    if (weft__cold(n)->kind == WEFT__KIND_SUBFLOW) return ((const struct weft__subflow *)weft__cold(n)->ext)->graph;
    if (weft__cold(n)->kind == WEFT__KIND_MODULE) return ((const struct weft__module *)weft__cold(n)->ext)->body;
    return NULL;
}

static void dump_node(struct dot *d, const weft__node *n, unsigned prefix, int depth) {
    char buf[24];
    const weft_taskflow *inner = inner_graph(n);
    unsigned cl = 0;
    if (inner && depth < DOT_MAX_DEPTH) {
        cl = ++d->next_cluster;
        fprintf(d->out, "  subgraph cluster_%u {\n  label=\"", cl);
        weft__dot_put_escaped(d->out, weft__cold(n)->kind == WEFT__KIND_MODULE ? "module: " : "subflow: ");
        weft__dot_put_escaped(d->out, weft__node_label(n, buf, sizeof buf));
        if (weft__cold(n)->kind == WEFT__KIND_MODULE) {
            fputs(" [", d->out);
            weft__dot_put_escaped(d->out, weft_taskflow_name(inner));
            fputc(']', d->out);
        }
        fputs("\";\n", d->out);
    }
    fprintf(d->out, "  g%u_n%u [label=\"", prefix, n->index);
    weft__dot_put_escaped(d->out, weft__node_label(n, buf, sizeof buf));
    fprintf(d->out, "\"%s];\n", node_style(n));
    if (cl) {
        dump_graph(d, inner, cl, depth + 1);
        fputs("  }\n", d->out);
    }
    weft__node *const *succ = weft__succ_array(n);
    const char *edge = weft__node_is_cond(n) ? " [style=dashed" : "";
    for (uint32_t i = 0; i < n->nsucc; i++) {
        fprintf(d->out, "  g%u_n%u -> g%u_n%u%s", prefix, n->index, prefix, succ[i]->index, edge);
        if (*edge) fprintf(d->out, ", label=\"%u\"]", i);
        fputs(";\n", d->out);
    }
}

struct dump_arg {
    struct dot *d;
    unsigned prefix;
    int depth;
};

static bool dump_visit(weft_task t, void *arg) {
    struct dump_arg *a = arg;
    dump_node(a->d, t.node_, a->prefix, a->depth);
    return true;
}

static void dump_graph(struct dot *d, const weft_taskflow *tf, unsigned prefix, int depth) {
    struct dump_arg a = {d, prefix, depth};
    weft_taskflow_for_each_task(tf, dump_visit, &a);
}

weft_status weft_taskflow_dump_dot(const weft_taskflow *tf, FILE *out) {
    if (!tf || !out) return weft__fail(__func__, WEFT_EINVAL, "tf or out is NULL");
    fputs("digraph \"", out);
    weft__dot_put_escaped(out, tf->name ? tf->name : "taskflow");
    fputs("\" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n", out);
    struct dot d = {out, 0};
    dump_graph(&d, tf, 0, 0);
    fputs("}\n", out);
    return (fflush(out) == 0 && !ferror(out)) ? WEFT_OK : weft__fail(__func__, WEFT_ESYS, "writing to out failed");
}
