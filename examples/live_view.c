/* Live statistics of a running program (docs/guide-observability.md).
 *
 *     ./live_view 10 live.stats &      # runs for 10 s, publishing live.stats
 *     weft-top $!                      # watch it (or: weft-top live.stats)
 *
 * The same without a line of code: WEFT_STATS=live.stats WEFT_METRICS=1 ./your_program.
 * A third argument ending in .prom also writes a Prometheus textfile.  The
 * load comes in waves (busy, then half idle), so the bars move. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <weft.h>

/* About `us` microseconds of arithmetic. */
static int spin(weft_ctx *ctx, void *arg) {
    (void)ctx;
    double x = 1.0;
    for (long i = 0; i < (long)arg * 300L; i++) x = x * 1.0000001 + 1e-9;
    volatile double keep = x; /* the loop is not optimised away (a local: no race between tasks) */
    (void)keep;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    weft_stats_config sc = { .path = argc > 2 ? argv[2] : "weft-live.stats",
                             .prom_path = argc > 3 ? argv[3] : NULL, .interval_ms = 250 };
    weft_status err = WEFT_OK;
    /* .metrics: tasks per second and exact busy time in the live view. */
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .metrics = true }, &err);
    weft_taskflow *tf = weft_taskflow_create("wave", &err);
    if (!ex || !tf) return fprintf(stderr, "setup: %s\n", weft_strerror(err)), 1;
    for (int i = 0; i < 64; i++)
        if (weft_task_is_null(weft_emplace(tf, spin, (void *)20L))) return 1;
    if ((err = weft_stats_start(ex, &sc)) != WEFT_OK)
        return fprintf(stderr, "weft_stats_start(%s): %s\n", sc.path, weft_strerror(err)), 1;
    fprintf(stderr, "pid %ld publishing %s: weft-top %ld\n", (long)getpid(), sc.path,
            (long)getpid());
    double t0 = now_s();
    while (now_s() - t0 < seconds) {
        /* A wave: busy for the first half of each second, half idle after. */
        double phase = now_s() - t0;
        if (weft_run_and_wait(ex, tf) != WEFT_OK) return 1;
        if (phase - (long)phase > 0.5) nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
    }
    err = weft_stats_stop(ex); /* also done by destroy */
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    return err == WEFT_OK ? 0 : 1;
}
