/* Graphviz DOT output of a taskflow. */
#include "graph/graph.h"

#include <stdio.h>

/* Writes s as a DOT double-quoted string body (escaping quotes and backslashes). */
static void put_escaped(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', out);
        if (*s == '\n') {
            fputs("\\n", out);
            continue;
        }
        fputc(*s, out);
    }
}

static bool dump_node(weft_task t, void *arg) {
    FILE *out = arg;
    const weft__node *n = t.node_;
    char buf[24];
    fprintf(out, "  n%u [label=\"", n->index);
    put_escaped(out, weft__node_label(n, buf, sizeof buf));
    fputs(n->fn ? "\"];\n" : "\", style=dashed];\n", out);
    weft__node *const *succ = weft__succ_array(n);
    for (uint32_t i = 0; i < n->nsucc; i++) fprintf(out, "  n%u -> n%u;\n", n->index, succ[i]->index);
    return true;
}

weft_status weft_taskflow_dump_dot(const weft_taskflow *tf, FILE *out) {
    if (!tf || !out) return WEFT_EINVAL;
    fputs("digraph \"", out);
    put_escaped(out, tf->name ? tf->name : "taskflow");
    fputs("\" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n", out);
    weft_taskflow_for_each_task(tf, dump_node, out);
    fputs("}\n", out);
    return (fflush(out) == 0 && !ferror(out)) ? WEFT_OK : WEFT_ESYS;
}
