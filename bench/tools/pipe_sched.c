/* weft-pipe-sched — what WEFT_PIPELINE_AUTO chooses, against both forced ways.
 * SPDX-License-Identifier: MIT
 *
 *   weft-pipe-sched [workers [tokens]]
 *
 * A serial-parallel-serial token pipeline with 8 lines whose parallel stage does
 * a given amount of arithmetic, run with each scheduling (auto, spread, inline)
 * for a range of amounts.  Prints the median ns per token of 7 runs and how many
 * tokens of the last run went inline.  The amount at which spread overtakes
 * inline is this machine's break-even (docs/guide-pipelines.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <weft.h>

#define REPS 7

static uint64_t n_tokens;
static unsigned spin;
static volatile uint64_t sink;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int source(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_token(pf) == n_tokens) weft_pipeflow_stop(pf);
    return 0;
}

static int work(weft_pipeflow *pf, void *arg) {
    (void)pf;
    (void)arg;
    uint64_t x = 0;
    for (unsigned i = 0; i < spin; i++) x += (uint64_t)i * i;
    sink = x;
    return 0;
}

static int drain(weft_pipeflow *pf, void *arg) {
    (void)arg;
    sink += weft_pipeflow_token(pf);
    return 0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    unsigned workers = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    n_tokens = argc > 2 ? (uint64_t)atoll(argv[2]) : 100000;
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers }, &st);
    if (!ex) return fprintf(stderr, "executor: %s\n", weft_strerror(st)), 1;
    weft_stage stages[] = { { WEFT_STAGE_SERIAL, source, NULL, "source" },
                            { WEFT_STAGE_PARALLEL, work, NULL, "work" },
                            { WEFT_STAGE_SERIAL, drain, NULL, "drain" } };
    static const unsigned spins[] = { 0, 100, 300, 1000, 2000, 4000, 8000 };
    static const char *names[] = { "auto", "spread", "inline" };
    printf("# weft-pipe-sched: %u workers, %llu tokens, 8 lines, median of %d runs\n", workers,
           (unsigned long long)n_tokens, REPS);
    for (size_t i = 0; i < sizeof spins / sizeof spins[0]; i++) {
        spin = spins[i];
        for (int how = 0; how < 3; how++) {
            weft_pipeline *p = weft_pipeline_create(8, stages, 3, &st);
            weft_taskflow *tf = p ? weft_taskflow_create("pipe", &st) : NULL;
            if (!tf || weft_task_is_null(weft_pipeline_emplace(tf, p)) ||
                weft_pipeline_set_scheduling(p, (weft_pipeline_scheduling)how) != WEFT_OK)
                return fprintf(stderr, "setup failed\n"), 1;
            double t[REPS];
            for (int r = 0; r < REPS; r++) {
                (void)weft_pipeline_reset(p);
                double t0 = now_ns();
                if (weft_run_and_wait(ex, tf) != WEFT_OK) return fprintf(stderr, "run failed\n"), 1;
                t[r] = (now_ns() - t0) / (double)n_tokens;
            }
            qsort(t, REPS, sizeof t[0], cmp);
            printf("spin=%u sched=%s ns_per_token=%.1f inline=%llu\n", spin, names[how], t[REPS / 2],
                   (unsigned long long)weft_pipeline_num_inline_tokens(p));
            (void)weft_taskflow_destroy(tf);
            (void)weft_pipeline_destroy(p);
        }
    }
    weft_executor_destroy(ex);
    return 0;
}
