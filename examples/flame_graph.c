/* A flame graph of a profiled run (docs/guide-tooling.md).
 *
 *     ./flame_graph > run.folded               # folded stacks on stdout
 *     flamegraph.pl run.folded > run.svg       # or open run.folded in speedscope.app
 *     ./flame_graph run.svg > /dev/null        # weft's own SVG flame graph too
 *
 * A taskflow "pipeline" loads, then runs a module "transform" (its own
 * taskflow) and a task that waits for another taskflow, then saves. */
#include <stdio.h>
#include <weft.h>

/* About `us` microseconds of arithmetic. */
static void work(int us) {
    double x = 1.0;
    for (long i = 0; i < us * 300L; i++) x = x * 1.0000001 + 1e-9;
    volatile double keep = x; /* the loop is not optimised away (a local: no race between tasks) */
    (void)keep;
}

/* Each task: `arg` is its length in microseconds. */
static int step(weft_ctx *ctx, void *arg) {
    (void)ctx;
    work((int)(long)arg);
    return 0;
}
/* Runs the "verify" taskflow and waits: its tasks run nested in this one. */
static int verify(weft_ctx *ctx, void *arg) {
    return weft_run_and_wait(weft_ctx_executor(ctx), arg) == WEFT_OK ? 0 : 1;
}

static weft_task named(weft_taskflow *tf, weft_task_fn fn, void *arg, const char *name) {
    weft_task t = weft_emplace(tf, fn, arg);
    if (!weft_task_is_null(t) && weft_task_set_name(t, name) != WEFT_OK) return (weft_task){ 0 };
    return t;
}

int main(int argc, char **argv) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .profile = true }, &err);
    weft_taskflow *tf = weft_taskflow_create("pipeline", &err);
    weft_taskflow *body = weft_taskflow_create("transform", &err);
    weft_taskflow *check = weft_taskflow_create("verify", &err);
    if (!ex || !tf || !body || !check) return fprintf(stderr, "setup: %s\n", weft_strerror(err)), 1;
    for (int i = 0; i < 4; i++) named(body, step, (void *)100L, "transform_step");
    for (int i = 0; i < 3; i++) named(check, step, (void *)30L, "checksum");
    weft_task l = named(tf, step, (void *)200L, "load");
    weft_task m = weft_emplace_module(tf, body);
    weft_task v = named(tf, verify, check, "verify");
    weft_task s = named(tf, step, (void *)50L, "save");
    if (weft_precede(l, m) || weft_precede(m, v) || weft_precede(v, s)) return 1;
    for (int r = 0; r < 20; r++)
        if (weft_run_and_wait(ex, tf) != WEFT_OK) return 1;

    /* Name the frames after the taskflows (else "taskflow 1", "taskflow 2"...). */
    const weft_taskflow *names[] = { tf, body, check };
    err = weft_profiler_write_folded(ex, &(weft_folded_options){ .taskflows = names, .ntaskflows = 3 }, stdout);
    if (err != WEFT_OK) fprintf(stderr, "folded: %s\n", weft_strerror(err));
    FILE *svg = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (svg) {
        weft_status st = weft_profiler_write_flame_svg(ex, &(weft_folded_options){ .taskflows = names, .ntaskflows = 3 }, svg);
        if (fclose(svg) != 0 || st != WEFT_OK) err = st != WEFT_OK ? st : WEFT_ESYS;
    }
    weft_taskflow_destroy(tf);
    weft_taskflow_destroy(body);
    weft_taskflow_destroy(check);
    weft_executor_destroy(ex);
    return err == WEFT_OK ? 0 : 1;
}
