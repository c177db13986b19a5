/* Distributed flows: an ordinary taskflow inserted as distributed tasks
 * (weft_mpi_insert_taskflow).  Each task becomes one distributed task on the
 * rank the map names; an edge becomes a read of the predecessor's output
 * handle (its declared output, or a one-byte token that only orders), so an
 * edge across ranks is one message and the rest is the usual machinery. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h" /* weft__node: a task's function and argument */
#include "mpi/dist.h"
#include "weft/flow.h"

/* What a token handle's owner sends: nothing reads or writes its value (the
 * owner's tasks never touch it; copies land in buffers weft allocates). */
static unsigned char token_byte;

/* The distributed task: the wrapped task's own work, read at run time (a
 * placeholder does nothing). */
static int run_wrapped(weft_ctx *cx, void *const *bufs, void *arg) {
    (void)bufs;
    const weft__node *n = arg;
    return n->fn ? n->fn(cx, n->arg) : 0;
}

int weft_mpi_taskflow_task(weft_ctx *ctx, void *const *bufs, void *tf) {
    (void)bufs;
    return tf ? (int)weft_run_and_wait(weft_ctx_executor(ctx), tf) : WEFT_EINVAL;
}

/* The taskflow's tasks, numbered densely in emplace order.  A task's index
 * (weft_task_index) is not that number once a task was erased: erasing leaves
 * a hole that a later task may fill, so indices run up to the largest ever
 * used, and pos[] maps each index to its task's number. */
typedef struct walk {
    weft_task *tasks; /* by number */
    size_t *pos;      /* [npos]: task index -> number */
    size_t n, npos, seen;
    const char *bad;  /* why the taskflow cannot be wrapped */
    weft_task bad_task;
} walk;

static bool max_index(weft_task t, void *arg) {
    size_t *npos = arg, i = weft_task_index(t);
    if (i >= *npos) *npos = i + 1;
    return true;
}

/* The number of a task of the walk (edges only join tasks of the taskflow). */
static size_t num(const walk *w, weft_task t) { return w->pos[weft_task_index(t)]; }

static bool collect(weft_task t, void *arg) {
    walk *w = arg;
    size_t i = weft_task_index(t);
    if (i >= w->npos || w->seen >= w->n) {
        w->bad = "task indices out of range";
        return false;
    }
    w->pos[i] = w->seen;
    w->tasks[w->seen++] = t;
    const char *why = NULL;
    switch (weft_task_get_kind(t)) {
    case WEFT_TASK_STATIC: break;
    case WEFT_TASK_CONDITION:
    case WEFT_TASK_MULTI_CONDITION: why = "a condition task (its branch is chosen at run time, on one rank)"; break;
    case WEFT_TASK_SUBFLOW: why = "a subflow task (its graph is built at run time, on one rank)"; break;
    case WEFT_TASK_MODULE: why = "a module task (insert the module's taskflow itself)"; break;
    }
    if (!why && (weft_task_num_acquires(t) || weft_task_num_releases(t)))
        why = "a task with semaphores (they limit concurrency within one process)";
    if (why && !w->bad) {
        w->bad = why;
        w->bad_task = t;
    }
    return true;
}

static weft_status fail(weft_mpi_flow *f, weft_status st, const char *fmt, const char *what, const char *name) {
    snprintf(f->errmsg, sizeof f->errmsg, fmt, what, name && *name ? name : "(unnamed)");
    f->last_error = st;
    return st;
}

/* Kahn's algorithm, smallest index first among the ready (a FIFO over the
 * index order): the same order on every rank.  order[] receives the indices;
 * returns how many were ordered (< n: a cycle).  preds[] receives each task's
 * predecessor indices (pred_first[i] .. pred_first[i + 1]). */
static size_t topo_order(const walk *w, size_t *order, size_t *indeg, size_t *pred_first, size_t *preds) {
    size_t n = w->n;
    memset(indeg, 0, n * sizeof *indeg);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0, m = weft_task_num_successors(w->tasks[i]); k < m; k++)
            indeg[num(w, weft_task_successor(w->tasks[i], k))]++;
    pred_first[0] = 0;
    for (size_t i = 0; i < n; i++) pred_first[i + 1] = pred_first[i] + indeg[i];
    size_t *fill = order; /* borrowed as a cursor per task before the sort */
    for (size_t i = 0; i < n; i++) fill[i] = pred_first[i];
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0, m = weft_task_num_successors(w->tasks[i]); k < m; k++) {
            size_t s = num(w, weft_task_successor(w->tasks[i], k));
            preds[fill[s]++] = i;
        }
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0) order[tail++] = i;
    while (head < tail) {
        size_t i = order[head++];
        for (size_t k = 0, m = weft_task_num_successors(w->tasks[i]); k < m; k++) {
            size_t s = num(w, weft_task_successor(w->tasks[i], k));
            if (--indeg[s] == 0) order[tail++] = s;
        }
    }
    return tail;
}

weft_status weft_mpi_insert_taskflow(weft_mpi_flow *f, weft_taskflow *tf, const weft_mpi_taskflow_map *map) {
    if (!f) return WEFT_EINVAL;
    f->errmsg[0] = '\0';
    if (f->sealed) return f->last_error = WEFT_EBUSY;
    if (!tf || !map || !map->rank) return f->last_error = WEFT_EINVAL;
    walk w = { .n = weft_taskflow_num_tasks(tf) };
    if (w.n == 0) return f->last_error = WEFT_OK;
    (void)weft_taskflow_for_each_task(tf, max_index, &w.npos);
    w.tasks = weft_mem_calloc(w.n * sizeof *w.tasks);
    w.pos = weft_mem_alloc(w.npos * sizeof *w.pos);
    size_t *order = weft_mem_alloc(w.n * sizeof *order), *indeg = weft_mem_alloc(w.n * sizeof *indeg);
    size_t *pred_first = weft_mem_alloc((w.n + 1) * sizeof *pred_first);
    size_t nedges = 0;
    weft_status st = WEFT_OK;
    if (!w.tasks || !w.pos || !order || !indeg || !pred_first) {
        st = f->last_error = WEFT_ENOMEM;
        goto out;
    }
    (void)weft_taskflow_for_each_task(tf, collect, &w);
    if (w.bad || w.seen != w.n) {
        st = fail(f, WEFT_EINVAL, "weft_mpi_insert_taskflow: the taskflow has %s: task '%s'", w.bad ? w.bad : "holes",
                  w.bad ? weft_task_name(w.bad_task) : NULL);
        goto out;
    }
    for (size_t i = 0; i < w.n; i++) nedges += weft_task_num_successors(w.tasks[i]);
    size_t *preds = weft_mem_alloc(nedges * sizeof *preds);
    weft_mpi_data *handle = weft_mem_calloc(w.n * sizeof *handle);
    int *rank = weft_mem_alloc(w.n * sizeof *rank);
    struct out { void *buf; size_t size; } *out = weft_mem_alloc(w.n * sizeof *out);
    if (!preds || !handle || !rank || !out) {
        st = f->last_error = WEFT_ENOMEM;
    } else if (topo_order(&w, order, indeg, pred_first, preds) != w.n) {
        size_t stuck = 0; /* a task Kahn never freed: on a cycle or after one */
        while (indeg[stuck] == 0) stuck++;
        st = fail(f, WEFT_ECYCLE, "weft_mpi_insert_taskflow: the taskflow has %s (task '%s' is on or after it)",
                  "a cycle", weft_task_name(w.tasks[stuck]));
    } else {
        /* Every task's rank and output handle first, then the tasks in an order
         * that respects the edges (the distributed flow orders by insertion). */
        for (size_t i = 0; i < w.n && st == WEFT_OK; i++) {
            rank[i] = map->rank(w.tasks[i], map->arg);
            if (rank[i] < 0 || rank[i] >= f->size)
                st = fail(f, WEFT_EINVAL, "weft_mpi_insert_taskflow: %s: task '%s'", "the map gave a rank out of range",
                          weft_task_name(w.tasks[i]));
            /* Before anything is registered or inserted: a refusal other than
             * WEFT_ENOMEM leaves f as it was (mpi.h). */
            else if (pred_first[i + 1] - pred_first[i] + 1 > WEFT__MPI_MAX_ACCESS)
                st = fail(f, WEFT_EINVAL, "weft_mpi_insert_taskflow: %s: task '%s'", "more than 63 predecessors",
                          weft_task_name(w.tasks[i]));
            /* The outputs too (map->output is asked once per task): one over
             * a handle's INT_MAX bytes used to be refused by the registration
             * below, with handles of earlier tasks registered already and no
             * message. */
            else if (out[i].size = 0, out[i].buf = map->output ? map->output(w.tasks[i], &out[i].size, map->arg) : NULL,
                     out[i].buf && out[i].size > INT_MAX)
                st = fail(f, WEFT_EINVAL, "weft_mpi_insert_taskflow: %s: task '%s'",
                          "an output over INT_MAX bytes (a handle's most)", weft_task_name(w.tasks[i]));
        }
        for (size_t k = 0; k < w.n && st == WEFT_OK; k++) {
            size_t i = order[k];
            size_t size = out[i].size;
            void *buf = out[i].buf;
            if (!buf || size == 0) {
                buf = rank[i] == f->rank ? &token_byte : NULL;
                size = 1;
            }
            handle[i] = weft_mpi_data_register(f, buf, size, rank[i]);
            if (handle[i].id_ == 0) st = f->last_error;
        }
        for (size_t k = 0; k < w.n && st == WEFT_OK; k++) {
            size_t i = order[k], np = pred_first[i + 1] - pred_first[i];
            weft_mpi_access acc[WEFT__MPI_MAX_ACCESS];
            /* An unnamed task is "#index" in errors, as weft's other tools
             * label it (its position in f would name no task of tf). */
            char label[32];
            const char *name = weft_task_name(w.tasks[i]);
            if (!*name) snprintf(label, sizeof label, "#%zu", weft_task_index(w.tasks[i])), name = label;
            acc[0] = (weft_mpi_access){ handle[i], WEFT_MPI_W };
            for (size_t p = 0; p < np; p++) acc[p + 1] = (weft_mpi_access){ handle[preds[pred_first[i] + p]], WEFT_MPI_R };
            st = weft_mpi_insert(f, &(weft_mpi_task_desc){ .fn = run_wrapped, .arg = w.tasks[i].node_,
                                                           .name = name, .access = acc,
                                                           .naccess = np + 1, .rank_set = true, .rank = rank[i] });
        }
    }
    weft_mem_free(preds, nedges * sizeof *preds);
    weft_mem_free(handle, w.n * sizeof *handle);
    weft_mem_free(rank, w.n * sizeof *rank);
    weft_mem_free(out, w.n * sizeof *out);
out:
    weft_mem_free(w.tasks, w.n * sizeof *w.tasks);
    weft_mem_free(w.pos, w.npos * sizeof *w.pos);
    weft_mem_free(order, w.n * sizeof *order);
    weft_mem_free(indeg, w.n * sizeof *indeg);
    weft_mem_free(pred_first, (w.n + 1) * sizeof *pred_first);
    return st;
}
