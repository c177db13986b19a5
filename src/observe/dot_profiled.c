/* The taskflow's DOT graph with each task's profiled time.  A task whose time
 * includes estimated spans (batched short tasks) says so with "~"; a pipeline
 * task also shows its stage calls; the executor's other work (async tasks,
 * fork-join, algorithm jobs, stages of other pipelines) is summed in a note. */
#include "observe/obs.h"
#include "core/alloc.h"
#include "graph/graph.h"
#include "core/error_detail.h"

#include <inttypes.h>
#include <string.h>

/* Time and runs per task index.  A span belongs to a task of the taskflow when
 * it recorded this taskflow and its index is in range (spans of other
 * taskflows match none). */
struct node_times {
    const weft_taskflow *tf;
    uint64_t *ticks, *runs, *estimated, *untimed;
    size_t ntasks;
    /* Pipelines driven by this taskflow's tasks: a stage span names its
     * pipeline, which is the argument of the task that drives it; each task's
     * argument, the stage calls' time per task, and the last match. */
    const void **pipe;
    const void *last_pipe;
    size_t last_task;
    uint64_t *stage_ticks, *stage_calls;
    /* Other work of the executor, by kind. */
    uint64_t work_ticks[WEFT__WORK_KINDS], work_runs[WEFT__WORK_KINDS];
};

/* The index of the task driving pipeline p, or ntasks. */
static size_t pipe_task(struct node_times *t, const void *p) {
    if (p == t->last_pipe) return t->last_task;
    size_t i = 0;
    while (i < t->ntasks && t->pipe[i] != p) i++;
    t->last_pipe = p;
    t->last_task = i;
    return i;
}

static bool add_span(const weft__span *s, unsigned w, void *arg) {
    struct node_times *t = arg;
    (void)w;
    uint64_t d = s->end - s->begin;
    if (s->kind == WEFT__SPAN_TASK) {
        if (s->tf != t->tf || s->index >= t->ntasks) return true;
        t->runs[s->index]++;
        /* A share of a batch that held a long task says nothing of this one. */
        if (s->estimated == WEFT__EST_LONG) t->untimed[s->index]++;
        else t->ticks[s->index] += d;
        t->estimated[s->index] += s->estimated == 1;
        return true;
    }
    if (s->kind == WEFT__SPAN_RECORDING) { /* a GPU task's recording: its task's time, no run */
        if (s->tf == t->tf && s->index < t->ntasks) t->ticks[s->index] += d;
        return true;
    }
    if (s->kind < WEFT__SPAN_WORK || s->kind - WEFT__SPAN_WORK >= WEFT__WORK_KINDS) return true;
    size_t i = s->kind - WEFT__SPAN_WORK == WEFT__WORK_STAGE ? pipe_task(t, s->tf) : t->ntasks;
    if (i < t->ntasks) {
        t->stage_ticks[i] += d;
        t->stage_calls[i]++;
        return true;
    }
    t->work_ticks[s->kind - WEFT__SPAN_WORK] += d;
    t->work_runs[s->kind - WEFT__SPAN_WORK]++;
    return true;
}

#define PER_TASK_ARRAYS(X) X(ticks) X(runs) X(estimated) X(untimed) X(stage_ticks) X(stage_calls)

static void free_times(struct node_times *t) {
    size_t n = t->ntasks ? t->ntasks : 1;
#define FREE_ONE(a) weft__free(t->a, n * sizeof *t->a);
    PER_TASK_ARRAYS(FREE_ONE)
    weft__free(t->pipe, n * sizeof *t->pipe);
}

static bool note_pipe(weft_task task, void *arg) {
    struct node_times *t = arg;
    const weft__node *n = task.node_;
    /* Only a pipeline's own task (weft_pipeline_emplace marks it single):
     * another task may take the pipeline as its argument too (one that resets
     * it, or logs its state), and was given the stage calls when it came
     * first. */
    if (weft__cold(n)->single) t->pipe[n->index] = n->arg;
    return true;
}

static bool alloc_times(struct node_times *t, const weft_taskflow *tf) {
    t->tf = tf;
    t->ntasks = tf->nnodes;
    t->last_task = t->ntasks; /* last_pipe NULL: never a stage's pipeline */
    size_t n = t->ntasks ? t->ntasks : 1;
    bool ok = true;
#define ALLOC_ONE(a) ok = (t->a = weft__calloc(n * sizeof *t->a)) != NULL && ok;
    PER_TASK_ARRAYS(ALLOC_ONE)
    ok = (t->pipe = weft__calloc(n * sizeof *t->pipe)) != NULL && ok;
    if (ok) weft_taskflow_for_each_task(tf, note_pipe, t);
    return ok;
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
    uint64_t est = c->t->estimated[n->index], calls = c->t->stage_calls[n->index];
    uint64_t untimed = c->t->untimed[n->index];
    char buf[24], label[256];
    snprintf(label, sizeof label, "%s", weft__node_label(n, buf, sizeof buf));
    fprintf(c->out, "  n%u [label=", n->index);
    weft__put_dot_str(c->out, label);
    if (runs) {
        double total = weft__ticks_ns(c->o, ticks);
        /* Append the time on a second line: the label string is closed, so reopen
         * it with DOT's string concatenation. */
        fprintf(c->out, " + \"\\n%" PRIu64 " run%s, %s", runs, runs == 1 ? "" : "s", est ? "~" : "");
        put_ns(c->out, total);
        fputs(" total, ", c->out);
        put_ns(c->out, runs > untimed ? total / (double)(runs - untimed) : 0.0);
        /* Estimated: some of its runs were shares of a batch (see the note). */
        fputs(" mean", c->out);
        if (est || untimed) fputs(" (", c->out);
        if (est) fprintf(c->out, "%" PRIu64 " estimated%s", est, untimed ? ", " : "");
        if (untimed) fprintf(c->out, "%" PRIu64 " untimed", untimed);
        if (est || untimed) fputs(")", c->out);
        if (calls) {
            fprintf(c->out, "\\n%" PRIu64 " stage call%s, ", calls, calls == 1 ? "" : "s");
            put_ns(c->out, weft__ticks_ns(c->o, c->t->stage_ticks[n->index]));
        }
        /* Pale yellow (fast) to red (the slowest task). */
        double f = c->max_ticks ? (double)ticks / (double)c->max_ticks : 0;
        fprintf(c->out, "\", style=filled, fillcolor=\"0.%03d 0.%03d 1.0\"", (int)(160 * (1 - f)),
                (int)(150 + 800 * f));
    } else {
        fputs(", style=\"filled,dashed\", fillcolor=\"#eeeeee\"", c->out);
    }
    fputs("];\n", c->out);
    weft__node *const *succ = weft__succ_array(n);
    for (uint32_t i = 0; i < n->nsucc; i++) fprintf(c->out, "  n%u -> n%u;\n", n->index, succ[i]->index);
    return true;
}

/* A note node: what "~" means, and the executor's work outside this
 * taskflow's tasks (async, fork-join, algorithm jobs, other pipelines). */
static void put_notes(const struct dot_ctx *c) {
    static const char *const kinds[WEFT__WORK_KINDS] = { "async tasks", "silent async tasks", "fork-join roots",
                                                         "stolen fork-join frames", "algorithm jobs",
                                                         "pipeline stage calls" };
    bool est = false, other = false, untimed = false;
    for (size_t i = 0; i < c->t->ntasks; i++) {
        est |= c->t->estimated[i] != 0;
        untimed |= c->t->untimed[i] != 0;
    }
    for (unsigned k = 0; k < WEFT__WORK_KINDS; k++) other |= c->t->work_runs[k] != 0;
    if (!est && !other && !untimed) return;
    fputs("  profile_note [shape=note, style=filled, fillcolor=\"#ffffff\", label=\"", c->out);
    if (est) {
        fputs("~ estimated: short tasks timed in batches, each\\nbatch's time shared out evenly (each took under ", c->out);
        put_ns(c->out, WEFT__BATCH_LONG_NS);
        fputs(")\\l", c->out);
    }
    if (untimed)
        fputs("untimed: run in a batch that held a task which ran long;\\nits time is left out (such tasks are timed"
              "\\none by one from their next run on)\\l", c->out);
    if (other) fputs("Other work on this executor:\\l", c->out);
    for (unsigned k = 0; k < WEFT__WORK_KINDS; k++) {
        if (!c->t->work_runs[k]) continue;
        fprintf(c->out, "  %" PRIu64 " %s, ", c->t->work_runs[k], kinds[k]);
        put_ns(c->out, weft__ticks_ns(c->o, c->t->work_ticks[k]));
        fputs("\\l", c->out);
    }
    fputs("\"];\n", c->out);
}

weft_status weft_taskflow_dump_dot_profiled(const weft_taskflow *tf, const weft_executor *ex, FILE *out) {
    if (!tf || !ex || !out) return weft__fail(__func__, WEFT_EINVAL, "tf, ex or out is NULL");
    struct node_times t = { 0 };
    if (!alloc_times(&t, tf)) {
        free_times(&t);
        return weft__fail_st(__func__, WEFT_ENOMEM);
    }
    const struct weft__obs *o = weft__obs_state_get(ex);
    struct dot_ctx c = { out, &t, o, 0 };
    if (o) weft__spans_for_each(o, add_span, &t);
    for (size_t i = 0; i < t.ntasks; i++)
        if (t.ticks[i] > c.max_ticks) c.max_ticks = t.ticks[i];
    fputs("digraph ", out);
    weft__put_dot_str(out, tf->name ? tf->name : "taskflow");
    fputs(" {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n", out);
    weft_taskflow_for_each_task(tf, put_node, &c);
    put_notes(&c);
    fputs("}\n", out);
    free_times(&t);
    return weft__obs_finish_write(out, __func__);
}
