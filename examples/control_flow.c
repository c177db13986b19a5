/* control_flow: condition tasks, loops, subflows and modules.  SPDX-License-Identifier: MIT
 *
 * Three graphs, the ones drawn in docs/guide-control-flow.md:
 *
 *  1. a loop: Newton's method for sqrt(2), one step per trip round the loop, until
 *     two steps agree (a condition task with a weak edge back to the step);
 *  2. a branch: a condition task sends the run down one of two paths, and a
 *     subflow task fans out work it decides on at run time;
 *  3. a composition: the loop taskflow used as a module (one task) of an outer
 *     graph, twice, with a run_until around the whole thing.
 *
 *     control_flow [DIR]    also writes loop.dot, branch.dot and composed.dot into DIR
 */
#include <weft.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- 1. the loop ------------------------------------------------------------- */

struct newton {
    double x, prev;
    int steps;
};

static int newton_init(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct newton *n = arg;
    n->x = 1.0, n->prev = 0.0, n->steps = 0;
    return 0;
}

static int newton_step(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct newton *n = arg;
    n->prev = n->x;
    n->x = 0.5 * (n->x + 2.0 / n->x);
    n->steps++;
    return 0;
}

/* A condition task returns the index of the successor to run: 0 = step again. */
static int newton_converged(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct newton *n = arg;
    return fabs(n->x - n->prev) > 1e-15 ? 0 : 1;
}

static int newton_report(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct newton *n = arg;
    printf("  loop: sqrt(2) = %.15f after %d steps\n", n->x, n->steps);
    return 0;
}

static weft_taskflow *build_loop(struct newton *n) {
    weft_taskflow *tf = weft_taskflow_create("newton", NULL);
    if (!tf) return NULL;
    weft_task init = weft_emplace(tf, newton_init, n);
    weft_task step = weft_emplace(tf, newton_step, n);
    weft_task cond = weft_emplace_condition(tf, newton_converged, n);
    weft_task done = weft_emplace(tf, newton_report, n);
    weft_task_set_name(init, "init");
    weft_task_set_name(step, "step");
    weft_task_set_name(cond, "converged?");
    weft_task_set_name(done, "report");
    weft_precede(init, step);
    weft_precede(step, cond);
    weft_precede(cond, step); /* index 0: the weak edge that makes the loop */
    weft_precede(cond, done); /* index 1 */
    return tf;
}

/* ---- 2. a branch and a subflow ----------------------------------------------- */

static int pick(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return *(int *)arg;
}

static int say(weft_ctx *ctx, void *arg) {
    (void)ctx;
    printf("  branch: ran %s\n", (const char *)arg);
    return 0;
}

static int square(weft_ctx *ctx, void *arg) {
    (void)ctx;
    long *v = arg;
    *v = *v * *v;
    return 0;
}

/* A subflow task builds a graph while it runs; its successors wait for all of it. */
static int fan_out(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    long *v = arg;
    weft_taskflow *g = weft_subflow_graph(sf);
    for (int i = 0; i < 4; i++) {
        v[i] = i + 1;
        weft_task t = weft_emplace(g, square, &v[i]);
        char name[24]; /* "square " and any int: no truncation warning */
        snprintf(name, sizeof name, "square %d", i + 1);
        weft_task_set_name(t, name);
    }
    return weft_taskflow_last_error(g) == WEFT_OK ? 0 : 1;
}

static int sum(weft_ctx *ctx, void *arg) {
    (void)ctx;
    long *v = arg;
    printf("  subflow: 1 + 4 + 9 + 16 = %ld\n", v[0] + v[1] + v[2] + v[3]);
    return 0;
}

static weft_taskflow *build_branch(int *choice, long *v) {
    weft_taskflow *tf = weft_taskflow_create("branch", NULL);
    if (!tf) return NULL;
    weft_task c = weft_emplace_condition(tf, pick, choice);
    weft_task left = weft_emplace(tf, say, "left"), right = weft_emplace(tf, say, "right");
    weft_task fan = weft_emplace_subflow(tf, fan_out, v), total = weft_emplace(tf, sum, v);
    weft_task_set_name(c, "which?");
    weft_task_set_name(left, "left");
    weft_task_set_name(right, "right");
    weft_task_set_name(fan, "fan out");
    weft_task_set_name(total, "sum");
    weft_precede(c, left);
    weft_precede(c, right);
    weft_precede(right, fan);
    weft_precede(fan, total);
    return tf;
}

/* ---- 3. composition ----------------------------------------------------------- */

static bool three_times(void *arg) { return ++*(int *)arg > 3; }

static weft_taskflow *build_composed(weft_taskflow *loop, weft_taskflow *branch) {
    weft_taskflow *tf = weft_taskflow_create("composed", NULL);
    if (!tf) return NULL;
    weft_task a = weft_emplace_module(tf, loop), b = weft_emplace_module(tf, branch);
    weft_task_set_name(a, "sqrt2");
    weft_task_set_name(b, "branchy");
    weft_precede(a, b);
    return tf;
}

static int write_dot(const char *dir, const char *file, weft_taskflow *tf) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (!f) return perror(path), 1;
    weft_status st = weft_taskflow_dump_dot(tf, f);
    fclose(f);
    printf("  wrote %s\n", path);
    return st != WEFT_OK;
}

int main(int argc, char **argv) {
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    if (!ex) return fprintf(stderr, "weft_executor_create: %s\n", weft_strerror(st)), 1;
    struct newton n;
    int choice = 1, rounds = 0;
    long v[4];
    weft_taskflow *loop = build_loop(&n), *branch = build_branch(&choice, v);
    weft_taskflow *composed = loop && branch ? build_composed(loop, branch) : NULL;
    int rc = 1;
    if (!composed || weft_taskflow_last_error(loop) || weft_taskflow_last_error(branch) ||
        weft_taskflow_last_error(composed)) {
        fprintf(stderr, "building failed\n");
        goto out;
    }
    printf("1. the loop on its own\n");
    if ((st = weft_run_and_wait(ex, loop)) != WEFT_OK) goto failed;
    printf("2. the branch, taking index %d\n", choice);
    if ((st = weft_run_and_wait(ex, branch)) != WEFT_OK) goto failed;
    printf("3. both as modules of one graph, run until a predicate says stop\n");
    weft_future *f;
    if ((st = weft_run_until(ex, composed, three_times, &rounds, &f)) != WEFT_OK) goto failed;
    st = weft_future_wait(f);
    weft_future_destroy(f);
    if (st != WEFT_OK) goto failed;
    rc = 0;
    if (argc > 1)
        rc = write_dot(argv[1], "loop.dot", loop) | write_dot(argv[1], "branch.dot", branch) |
             write_dot(argv[1], "composed.dot", composed);
    goto out;
failed:
    fprintf(stderr, "run failed: %s\n", weft_strerror(st));
out:
    weft_taskflow_destroy(composed);
    weft_taskflow_destroy(branch);
    weft_taskflow_destroy(loop);
    weft_executor_destroy(ex);
    return rc;
}
