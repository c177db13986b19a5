/* weft-bench — command line, timing and reporting.  SPDX-License-Identifier: MIT
 *
 *   weft-bench [--bench NAME[,NAME..]] [--impl weft,omp,tbb,tf,lace,serial] [--threads 1,2]
 *              [--reps R] [--size-scale F] [--quick] [--timeout S] [--list]
 *
 * Prints one line per (benchmark, implementation, thread count):
 *   bench=NAME impl=IMPL threads=N size=S median_ms=X min_ms=Y ns_per_task=Z
 * where size is the number of tasks in the graph and ns_per_task is the median
 * divided by it.  Other lines start with '#'.  Every rep's result is verified
 * outside the timer; a wrong result prints an error instead of a time and makes
 * the exit status 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <weft.h>

#define MAX_THREAD_COUNTS 16
#define MAX_REPS 1000

typedef struct options {
    bool *cases;                /* 2 * bench_table_len: [2i] NAME, [2i + 1] NAME_rerun */
    bool impls[BENCH_IMPL_COUNT];
    unsigned threads[MAX_THREAD_COUNTS];
    size_t nthreads;
    int reps;                   /* 0: default (7, or 3 with --quick) */
    double scale;
    bool quick;
    unsigned timeout_s;         /* per case; 0 disables the watchdog */
} options;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- watchdog: a runtime that deadlocks must not hang `make bench` forever --- */

static char watchdog_msg[256];
static volatile size_t watchdog_len;

static void on_alarm(int sig) {
    (void)sig;
    ssize_t w = write(STDERR_FILENO, watchdog_msg, watchdog_len);
    (void)w;
    _exit(3);
}

static void watchdog_arm(unsigned seconds, const char *name, const char *impl, unsigned threads) {
    if (seconds == 0) return;
    int n = snprintf(watchdog_msg, sizeof watchdog_msg,
                     "error: bench=%s impl=%s threads=%u did not finish within %u s (hung?)\n", name,
                     impl, threads, seconds);
    watchdog_len = n < 0 ? 0 : (size_t)n < sizeof watchdog_msg ? (size_t)n : sizeof watchdog_msg - 1;
    alarm(seconds);
}

static void watchdog_disarm(void) { alarm(0); }

/* ---- one (benchmark, implementation, thread count) -------------------------- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t requested_size(const bench_def *def, const options *o) {
    double s = (double)def->default_size * o->scale + 0.5;
    if (s < 1) s = 1;
    if (s > (double)((size_t)1 << 30)) s = (double)((size_t)1 << 30);  /* cells use 32-bit offsets */
    return (size_t)s;
}

/* rep < 0 names the untimed warm-up run of a _rerun case. */
static void report_failure(const char *name, const char *impl, unsigned threads, int rep,
                           const char *why) {
    char where[32];
    if (rep < 0) snprintf(where, sizeof where, "warm-up");
    else snprintf(where, sizeof where, "%d", rep);
    fprintf(stderr, "error: bench=%s impl=%s threads=%u rep=%s: %s\n", name, impl, threads, where, why);
}

/* Times `reps` reps and prints the result line.  Returns 0, or -1 after printing
 * an error (a failed call or a wrong result: no time is printed then). */
static int run_case(const bench_def *def, bool rerun, bench_impl_id id, void *env,
                    unsigned threads, const options *o, int reps) {
    const bench_impl *impl = bench_impls[id];
    const bench_ops *ops = def->ops[id];
    const bench_work *work = def->work;
    char name[128];
    snprintf(name, sizeof name, "%s%s", def->name, rerun ? "_rerun" : "");

    size_t tasks = work->shape(requested_size(def, o));
    void *data = work->create(tasks);
    if (!data) {
        report_failure(name, impl->name, threads, 0, "out of memory for the benchmark data");
        return -1;
    }
    uint64_t samples[MAX_REPS];
    char why[256] = "";
    int rc = 0, rep = 0;        /* rep: the one that failed, -1 the warm-up */
    watchdog_arm(o->timeout_s, name, impl->name, threads);

    if (!rerun || !ops->build) {
        /* Build + run (+ teardown) timed together.  An implementation without a
         * reusable graph times this same path for NAME_rerun. */
        for (rep = 0; rep < reps; ++rep) {
            work->reset(data);
            uint64_t t0 = now_ns();
            rc = ops->oneshot(env, data);
            samples[rep] = now_ns() - t0;
            if (rc != 0) snprintf(why, sizeof why, "the run failed (see above)");
            else rc = work->verify(data, why, sizeof why);
            if (rc != 0) break;
        }
    } else {
        /* Build once, outside the timer; the first run is an untimed warm-up that
         * is verified too; then each rep times one run of the same graph. */
        void *graph = NULL;
        rep = -1;
        rc = ops->build(env, data, &graph);
        if (rc != 0) {
            snprintf(why, sizeof why, "building the graph failed (see above)");
        } else {
            work->reset(data);
            rc = ops->run(env, graph);
            if (rc != 0) snprintf(why, sizeof why, "the warm-up run failed (see above)");
            else rc = work->verify(data, why, sizeof why);
            if (rc == 0) {              /* else rep stays -1: the warm-up failed */
                for (rep = 0; rep < reps; ++rep) {
                    work->reset(data);
                    uint64_t t0 = now_ns();
                    rc = ops->run(env, graph);
                    samples[rep] = now_ns() - t0;
                    if (rc != 0) snprintf(why, sizeof why, "the run failed (see above)");
                    else rc = work->verify(data, why, sizeof why);
                    if (rc != 0) break;
                }
            }
            ops->destroy(env, graph);
        }
    }
    watchdog_disarm();
    work->destroy(data);
    if (rc != 0) {
        report_failure(name, impl->name, threads, rep, why);
        return -1;
    }

    qsort(samples, (size_t)reps, sizeof samples[0], cmp_u64);
    double median = reps % 2 ? (double)samples[reps / 2]
                             : ((double)samples[reps / 2 - 1] + (double)samples[reps / 2]) / 2;
    printf("bench=%s impl=%s threads=%u size=%zu median_ms=%.3f min_ms=%.3f ns_per_task=%.2f\n", name,
           impl->name, threads, tasks, median / 1e6, (double)samples[0] / 1e6, median / (double)tasks);
    fflush(stdout);
    return 0;
}

/* ---- command line ------------------------------------------------------------ */

static void usage(FILE *out) {
    fprintf(out,
            "usage: weft-bench [options]\n"
            "  --bench NAME[,NAME..]   benchmarks to run (default: all; see --list)\n"
            "  --impl IMPL[,IMPL..]    weft, omp, tbb, tf, lace, serial, cpp (default: all available)\n"
            "  --threads N[,N..]       thread counts (default: 1,2 and all CPUs if more)\n"
            "  --reps R                timed reps per case; the median is reported (default 7)\n"
            "  --size-scale F          multiply every default size by F (default 1)\n"
            "  --quick                 smoke run: 3 reps, sizes / 8\n"
            "  --timeout S             give up (exit 3) if one case takes over S seconds (default 600; 0: never)\n"
            "  --list                  print the benchmark names and default sizes\n");
}

static void list_benches(void) {
    for (size_t i = 0; i < bench_table_len; ++i) {
        const bench_def *d = &bench_table[i];
        printf("%-32s default size %zu tasks\n", d->name, d->work->shape(d->default_size));
        if (d->has_rerun) printf("%s_rerun%*s prebuilt graph, re-run\n", d->name,
                                 (int)(32 - 6 - strlen(d->name)), "");
    }
}

/* Calls fn(item, ctx) for each comma-separated item of `list`; stops at the first
 * non-zero return. */
static int for_each_item(const char *list, int (*fn)(const char *item, void *ctx), void *ctx) {
    char buf[512];
    if (strlen(list) >= sizeof buf) {
        fprintf(stderr, "weft-bench: list too long: %s\n", list);
        return -1;
    }
    strcpy(buf, list);
    for (char *s = buf, *comma; s; s = comma ? comma + 1 : NULL) {
        comma = strchr(s, ',');
        if (comma) *comma = '\0';
        if (*s == '\0') continue;
        int rc = fn(s, ctx);
        if (rc != 0) return rc;
    }
    return 0;
}

static int select_bench(const char *item, void *ctx) {
    options *o = ctx;
    bool all = strcmp(item, "all") == 0;
    bool found = all;
    for (size_t i = 0; i < bench_table_len; ++i) {
        const bench_def *d = &bench_table[i];
        size_t len = strlen(d->name);
        if (all || strcmp(item, d->name) == 0) {
            o->cases[2 * i] = true;
            if (all && d->has_rerun) o->cases[2 * i + 1] = true;
            found = true;
        } else if (d->has_rerun && strncmp(item, d->name, len) == 0 && strcmp(item + len, "_rerun") == 0) {
            o->cases[2 * i + 1] = true;
            found = true;
        }
    }
    if (!found) {
        fprintf(stderr, "weft-bench: unknown benchmark '%s'; --list shows the names\n", item);
        return -1;
    }
    return 0;
}

static int select_impl(const char *item, void *ctx) {
    options *o = ctx;
    for (int i = 0; i < BENCH_IMPL_COUNT; ++i) {
        if (strcmp(item, bench_impls[i]->name) == 0) {
            o->impls[i] = true;
            return 0;
        }
    }
    fprintf(stderr, "weft-bench: unknown implementation '%s' (weft, omp, tbb, tf, lace, serial, cpp)\n", item);
    return -1;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > max || s[0] == '-') return -1;
    *out = v;
    return 0;
}

static int select_threads(const char *item, void *ctx) {
    options *o = ctx;
    unsigned long v;
    if (parse_uint(item, 4096, &v) != 0 || v == 0) {
        fprintf(stderr, "weft-bench: bad thread count '%s' (1..4096)\n", item);
        return -1;
    }
    if (o->nthreads == MAX_THREAD_COUNTS) {
        fprintf(stderr, "weft-bench: at most %d thread counts\n", MAX_THREAD_COUNTS);
        return -1;
    }
    o->threads[o->nthreads++] = (unsigned)v;
    return 0;
}

/* Accepts "--opt value" and "--opt=value".  Returns the value or NULL if `arg`
 * is not `opt`; advances *i past a separate value. */
static const char *option_value(int argc, char **argv, int *i, const char *opt, bool *missing) {
    size_t len = strlen(opt);
    const char *arg = argv[*i];
    if (strncmp(arg, opt, len) != 0) return NULL;
    if (arg[len] == '=') return arg + len + 1;
    if (arg[len] != '\0') return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int parse_args(int argc, char **argv, options *o) {
    bool any_bench = false, any_impl = false;
    for (int i = 1; i < argc; ++i) {
        bool missing = false;
        const char *v;
        unsigned long n;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(argv[i], "--list") == 0) {
            list_benches();
            exit(0);
        } else if (strcmp(argv[i], "--quick") == 0) {
            o->quick = true;
        } else if ((v = option_value(argc, argv, &i, "--bench", &missing))) {
            if (for_each_item(v, select_bench, o) != 0) return -1;
            any_bench = true;
        } else if ((v = option_value(argc, argv, &i, "--impl", &missing))) {
            if (for_each_item(v, select_impl, o) != 0) return -1;
            any_impl = true;
        } else if ((v = option_value(argc, argv, &i, "--threads", &missing))) {
            if (for_each_item(v, select_threads, o) != 0) return -1;
        } else if ((v = option_value(argc, argv, &i, "--reps", &missing))) {
            if (parse_uint(v, MAX_REPS, &n) != 0 || n == 0) {
                fprintf(stderr, "weft-bench: bad --reps '%s' (1..%d)\n", v, MAX_REPS);
                return -1;
            }
            o->reps = (int)n;
        } else if ((v = option_value(argc, argv, &i, "--size-scale", &missing))) {
            char *end;
            o->scale = strtod(v, &end);
            if (end == v || *end || !(o->scale > 0)) {
                fprintf(stderr, "weft-bench: bad --size-scale '%s' (a number > 0)\n", v);
                return -1;
            }
        } else if ((v = option_value(argc, argv, &i, "--timeout", &missing))) {
            if (parse_uint(v, 86400, &n) != 0) {
                fprintf(stderr, "weft-bench: bad --timeout '%s' (seconds)\n", v);
                return -1;
            }
            o->timeout_s = (unsigned)n;
        } else {
            if (missing) fprintf(stderr, "weft-bench: %s needs a value\n", argv[i]);
            else fprintf(stderr, "weft-bench: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return -1;
        }
    }
    if (!any_bench && select_bench("all", o) != 0) return -1;
    if (!any_impl)
        for (int i = 0; i < BENCH_IMPL_COUNT; ++i) o->impls[i] = true;
    if (o->nthreads == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        o->threads[o->nthreads++] = 1;
        o->threads[o->nthreads++] = 2;
        if (cpus > 2) o->threads[o->nthreads++] = (unsigned)(cpus > 4096 ? 4096 : cpus);
    }
    if (o->quick) o->scale /= 8;
    if (o->reps == 0) o->reps = o->quick ? 3 : 7;
    return 0;
}

/* ---- main ------------------------------------------------------------------------ */

int main(int argc, char **argv) {
    options o = { .scale = 1.0, .timeout_s = 600 };
    o.cases = calloc(2 * bench_table_len, sizeof *o.cases);
    if (!o.cases) return 2;
    if (parse_args(argc, argv, &o) != 0) return 2;
    signal(SIGALRM, on_alarm);

    const char *affinity = getenv("WEFT_AFFINITY");
    printf("# weft-bench: weft %s, reps=%d (median reported), size-scale=%g, cpus=%ld, WEFT_AFFINITY=%s\n",
           weft_version(), o.reps, o.scale, sysconf(_SC_NPROCESSORS_ONLN), affinity ? affinity : "(unset)");
    for (int id = 0; id < BENCH_IMPL_COUNT; ++id)
        if (o.impls[id] && bench_impls[id]->unavailable)
            printf("# impl=%s skipped (%s)\n", bench_impls[id]->name, bench_impls[id]->unavailable);
    fflush(stdout);

    int failures = 0;
    for (size_t t = 0; t < o.nthreads; ++t) {
        unsigned threads = o.threads[t];
        /* One implementation at a time, so no other runtime's idle threads compete
         * for the CPUs while it is timed. */
        for (int id = 0; id < BENCH_IMPL_COUNT; ++id) {
            const bench_impl *impl = bench_impls[id];
            if (!o.impls[id] || impl->unavailable) continue;
            if (impl->max_threads && threads > impl->max_threads) continue;
            void *env = NULL;
            if (impl->init(threads, &env) != 0) {
                fprintf(stderr, "error: impl=%s threads=%u: could not start\n", impl->name, threads);
                ++failures;
                continue;
            }
            for (size_t c = 0; c < 2 * bench_table_len; ++c) {
                const bench_def *def = &bench_table[c / 2];
                if (!o.cases[c] || !def->ops[id]) continue;
                if (run_case(def, c % 2 == 1, (bench_impl_id)id, env, threads, &o, o.reps) != 0)
                    ++failures;
            }
            impl->fini(env);
        }
    }
    free(o.cases);
    if (failures) {
        fprintf(stderr, "weft-bench: %d case(s) failed; their times were not reported\n", failures);
        return 1;
    }
    return 0;
}
