/* hello_graph: the first task graph.  SPDX-License-Identifier: MIT
 *
 * Four tasks: A runs first, then B and C (which may run at the same time, on
 * different workers), then D.
 *
 *          +---> B ---+
 *     A ---+          +---> D
 *          +---> C ---+
 *
 *     hello_graph [FILE.dot]    also writes the graph as Graphviz DOT to FILE.dot
 */
#include <weft.h>

#include <stdio.h>

/* Every task has this shape: it gets the context of the running task and the
 * pointer given to weft_emplace, and returns 0 for success. */
static int say(weft_ctx *ctx, void *arg) {
    const char *name = arg;
    printf("task %s runs on worker %d\n", name, weft_ctx_worker_id(ctx));
    return 0;
}

int main(int argc, char **argv) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st); /* NULL: defaults, all CPUs */
    if (!ex) {
        fprintf(stderr, "weft_executor_create: %s\n", weft_strerror(st));
        return 1;
    }
    weft_taskflow *tf = weft_taskflow_create("hello", &st);
    if (!tf) {
        fprintf(stderr, "weft_taskflow_create: %s\n", weft_strerror(st));
        weft_executor_destroy(ex);
        return 1;
    }

    weft_task A = weft_emplace(tf, say, "A");
    weft_task B = weft_emplace(tf, say, "B");
    weft_task C = weft_emplace(tf, say, "C");
    weft_task D = weft_emplace(tf, say, "D");
    weft_task_set_name(A, "A");
    weft_task_set_name(B, "B");
    weft_task_set_name(C, "C");
    weft_task_set_name(D, "D");

    weft_precede_many(A, (weft_task[]){ B, C }, 2); /* A runs before B and C */
    weft_succeed_many(D, (weft_task[]){ B, C }, 2); /* D runs after B and C */

    /* Calls that fail record their status in the taskflow, like errno, so one check
     * after building is enough for a small graph like this one. */
    if ((st = weft_taskflow_last_error(tf)) != WEFT_OK) {
        fprintf(stderr, "building the graph: %s\n", weft_strerror(st));
        return 1;
    }

    printf("running '%s' (%zu tasks) on %u workers\n", weft_taskflow_name(tf),
           weft_taskflow_num_tasks(tf), weft_executor_workers(ex));
    st = weft_run_and_wait(ex, tf);
    if (st != WEFT_OK) {
        fprintf(stderr, "run: %s\n", weft_strerror(st));
        return 1;
    }

    if (argc > 1) { /* the graph as Graphviz DOT */
        FILE *f = fopen(argv[1], "w");
        st = f ? weft_taskflow_dump_dot(tf, f) : WEFT_ESYS;
        if (f && fclose(f) != 0) st = WEFT_ESYS;
        if (st != WEFT_OK) {
            fprintf(stderr, "writing %s: %s\n", argv[1], weft_strerror(st));
            return 1;
        }
        printf("wrote %s; render it with: dot -Tsvg %s -o hello_graph.svg\n", argv[1], argv[1]);
    }

    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    return 0;
}
