/* weft showcase — `make demo` runs this.  SPDX-License-Identifier: MIT
 *
 * A real computation as a task graph: the Smith-Waterman local-alignment score of
 * two long DNA sequences, computed as a blocked wavefront.  The score table is cut
 * into B x B blocks; block (i,j) needs the row above it (block (i-1,j)) and the
 * column left of it (block (i,j-1)), so the graph is a grid whose anti-diagonals
 * run in parallel.  With the default sizes that is 320 x 320 = 102,400 tasks.
 *
 * The graph runs on an executor with one worker and on one with every CPU, timed
 * against the same blocks computed in a plain loop; every result is checked against
 * a row-by-row loop written independently.  Besides wall time the table shows how
 * many CPUs the process kept busy, so a poor speed-up on a shared machine can be
 * told apart from one caused by weft.
 *
 * The program is a list of sections (see SECTIONS at the bottom); each is one
 * function that prints a titled block and returns 0 on success.  Later features
 * (parallel algorithms, traces) add a function and a line in that table.
 *
 *     showcase [--quick] [--blocks N] [--block-size B] [--reps R]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, getcwd */

#include <weft.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- shared state and small helpers ---------------------------------------- */

/* What every section may use: the two executors and the command-line sizes. */
struct showcase {
    weft_executor *one;  /* one worker: the same code, no parallelism */
    weft_executor *all;  /* .workers = 0: every CPU (or WEFT_WORKERS) */
    unsigned blocks;     /* blocks per side of the wavefront */
    unsigned block_size; /* cells per side of a block */
    unsigned reps;       /* timed runs per executor; the best one counts */
};

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

/* Busy and total CPU time of the whole machine so far, in clock ticks, from Linux's
 * /proc/stat; false where it cannot be read. */
static bool machine_ticks(double *busy, double *total) {
    unsigned long long v[8] = { 0 };
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return false;
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (got != 8) return false;
    *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]); /* all but idle and iowait */
    *total = *busy + (double)(v[3] + v[4]);
    return true;
}

/* A timed run: wall-clock seconds; CPU seconds used by this process (cpu / wall is
 * how many CPUs it kept busy on average); and how busy the whole machine was
 * meanwhile, from 0 to 1 (-1 if unknown). */
struct timing { double wall, cpu, machine; };

/* Where a measurement starts. */
struct mark { double wall, cpu, busy, total; bool ticks; };

static struct mark mark_now(void) {
    struct mark m = { now_s(), clock_s(CLOCK_PROCESS_CPUTIME_ID), 0, 0, false };
    m.ticks = machine_ticks(&m.busy, &m.total);
    return m;
}

static struct timing timing_since(struct mark m) {
    struct timing t = { now_s() - m.wall, clock_s(CLOCK_PROCESS_CPUTIME_ID) - m.cpu, -1 };
    double busy, total;
    if (m.ticks && machine_ticks(&busy, &total) && total > m.total)
        t.machine = (busy - m.busy) / (total - m.total);
    return t;
}

/* Prints "showcase: WHAT: <weft's description> (WEFT_E...)" and returns 1. */
static int report(const char *what, int status) {
    fflush(stdout); /* keep the order of the two streams when both go to one file */
    fprintf(stderr, "showcase: %s: %s (%s)\n", what, weft_strerror(status), weft_errname(status));
    return 1;
}

/* Formats n with thousands separators ("102,400"); uses one of four static buffers. */
static const char *group(uint64_t n) {
    static char bufs[4][32];
    static unsigned next;
    char *out = bufs[next++ % 4], tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%" PRIu64, n), o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = tmp[i];
    }
    out[o] = '\0';
    return out;
}

static void section_title(const char *title) { printf("\n== %s ==\n", title); }

/* ---- the computation: Smith-Waterman, linear gap penalty --------------------- */

/* With these scores unrelated sequences align poorly (the "local" regime), so the
 * best alignment is the planted stretch rather than noise. */
enum { MATCH = 2, MISMATCH = -3, GAP = 5, MAX_BLOCK = 256 };

/* The best cell: highest score; ties go to the smallest row, then column, which is
 * the first one a row-by-row scan meets. */
struct best { int32_t score, i, j; };

static void best_merge(struct best *into, struct best b) {
    if (b.score > into->score ||
        (b.score == into->score && (b.i < into->i || (b.i == into->i && b.j < into->j))))
        *into = b;
}

/* The table H is (n+1) x (n+1) with H[0][*] = H[*][0] = 0; nobody stores it whole.
 * The wavefront keeps only the cells on block boundaries, each written once:
 *   rows[r][c] = H[r*B][c]   (r = 0..nb, c = 0..n): the last row of block-row r-1
 *   cols[s][i] = H[i][s*B]   (s = 0..nb, i = 0..n): the last column of block-column s-1
 * Row 0 and column 0 are the zero border.  Block (bi,bj) reads rows[bi] and cols[bj]
 * and writes rows[bi+1] and cols[bj+1], so dependencies alone keep it race-free. */
struct problem {
    const char *a, *b; /* the sequences, n bases each */
    unsigned n, nb, bs;
    int32_t *rows, *cols;
    struct best *block_best; /* one per block, merged after the run */
};

static int32_t *row_at(const struct problem *p, unsigned r) { return p->rows + (size_t)r * (p->n + 1); }
static int32_t *col_at(const struct problem *p, unsigned s) { return p->cols + (size_t)s * (p->n + 1); }

static inline int32_t max2(int32_t x, int32_t y) { return x > y ? x : y; }

/* Computes block (bi,bj) from its boundaries; the inner loop of the whole program. */
static void sw_block(const struct problem *p, unsigned bi, unsigned bj) {
    const unsigned bs = p->bs, i0 = bi * bs, j0 = bj * bs;
    int32_t prev[MAX_BLOCK + 1]; /* H[i-1][j0 .. j0+bs], updated in place to row i */
    memcpy(prev, row_at(p, bi) + j0, (bs + 1) * sizeof prev[0]);
    const int32_t *left_in = col_at(p, bj);
    int32_t *left_out = col_at(p, bj + 1);
    struct best best = { -1, 0, 0 };
    for (unsigned r = 1; r <= bs; r++) {
        const unsigned i = i0 + r;
        const char ai = p->a[i - 1];
        const char *bseg = p->b + j0;
        int32_t diag = prev[0], left = left_in[i];
        prev[0] = left;
        for (unsigned c = 1; c <= bs; c++) {
            const int32_t up = prev[c];
            int32_t h = diag + (ai == bseg[c - 1] ? MATCH : MISMATCH);
            h = max2(max2(h, 0), max2(up, left) - GAP);
            if (h > best.score) best = (struct best){ h, (int32_t)i, (int32_t)(j0 + c) };
            diag = up;
            prev[c] = left = h;
        }
        left_out[i] = left;
    }
    memcpy(row_at(p, bi + 1) + j0 + 1, prev + 1, bs * sizeof prev[0]);
    p->block_best[(size_t)bi * p->nb + bj] = best;
}

/* The reference: a plain row-by-row loop over the whole table, sharing nothing with
 * sw_block.  It records the same boundary cells so the check can compare them all.
 * Returns the best cell; score -1 if out of memory. */
static struct best sw_serial(const struct problem *p, int32_t *rows, int32_t *cols) {
    const unsigned n = p->n, bs = p->bs;
    int32_t *h = calloc(n + 1, sizeof *h); /* H[i-1][*], overwritten with H[i][*] */
    struct best best = { -1, 0, 0 };
    if (!h) return best;
    memset(rows, 0, (size_t)(p->nb + 1) * (n + 1) * sizeof *rows);
    memset(cols, 0, (size_t)(p->nb + 1) * (n + 1) * sizeof *cols);
    for (unsigned i = 1; i <= n; i++) {
        int32_t diag = 0; /* H[i-1][j-1] */
        for (unsigned j = 1; j <= n; j++) {
            int32_t v = diag + (p->a[i - 1] == p->b[j - 1] ? MATCH : MISMATCH);
            if (h[j] - GAP > v) v = h[j] - GAP;         /* from above: H[i-1][j] */
            if (h[j - 1] - GAP > v) v = h[j - 1] - GAP; /* from the left: H[i][j-1] */
            if (v < 0) v = 0;
            diag = h[j];
            h[j] = v;
            if (v > best.score) best = (struct best){ v, (int32_t)i, (int32_t)j };
        }
        for (unsigned s = 1; s <= p->nb; s++) cols[(size_t)s * (n + 1) + i] = h[s * bs];
        if (i % bs == 0) memcpy(rows + (size_t)(i / bs) * (n + 1), h, (n + 1) * sizeof *h);
    }
    free(h);
    return best;
}

/* Deterministic pseudo-random numbers (splitmix64), so every run aligns the same data. */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Two random sequences of n bases, with a copy of a stretch of `a` planted in `b`
 * with ~8% point mutations and the odd indel: the alignment should find it. */
static void make_sequences(char *a, char *b, unsigned n, unsigned *plant_len) {
    static const char ACGT[4] = { 'A', 'C', 'G', 'T' };
    uint64_t s = 20240601;
    for (unsigned i = 0; i < n; i++) a[i] = ACGT[rng_next(&s) & 3];
    for (unsigned i = 0; i < n; i++) b[i] = ACGT[rng_next(&s) & 3];
    unsigned len = n / 10, from = n / 3, to = n / 2, k = 0;
    for (unsigned i = 0; i < len && to + k < n; i++) {
        unsigned roll = (unsigned)(rng_next(&s) % 100);
        if (roll < 1) continue;                                      /* deletion */
        if (roll < 2 && to + k + 1 < n) b[to + k++] = ACGT[rng_next(&s) & 3]; /* insertion */
        b[to + k++] = roll < 10 ? ACGT[rng_next(&s) & 3] : a[from + i];
    }
    *plant_len = len;
}

/* ---- the wavefront as a taskflow ------------------------------------------- */

struct block_arg {
    const struct problem *p;
    unsigned bi, bj;
};

static int block_task(weft_ctx *ctx, void *arg) {
    const struct block_arg *ba = arg;
    (void)ctx;
    sw_block(ba->p, ba->bi, ba->bj);
    return 0;
}

/* Builds the nb x nb grid: task (i,j) precedes (i+1,j) and (i,j+1).  `args` holds
 * nb*nb entries; with `names` set each task is called "(i,j)" (for the picture).
 * Returns WEFT_OK or the failing call's status. */
static weft_status build_wavefront(weft_taskflow *tf, const struct problem *p,
                                   struct block_arg *args, unsigned nb, bool names) {
    weft_task *row = malloc(nb * sizeof *row); /* the previous block-row's tasks */
    if (!row) return WEFT_ENOMEM;
    weft_status st = WEFT_OK;
    for (unsigned i = 0; i < nb && st == WEFT_OK; i++) {
        for (unsigned j = 0; j < nb && st == WEFT_OK; j++) {
            struct block_arg *ba = &args[(size_t)i * nb + j];
            *ba = (struct block_arg){ p, i, j };
            weft_task t = weft_emplace(tf, block_task, ba);
            if (weft_task_is_null(t)) { st = weft_taskflow_last_error(tf); break; }
            if (names) {
                char name[32];
                snprintf(name, sizeof name, "(%u,%u)", i, j);
                st = weft_task_set_name(t, name);
            }
            if (st == WEFT_OK && i > 0) st = weft_precede(row[j], t); /* from above */
            if (st == WEFT_OK && j > 0) st = weft_precede(row[j - 1], t); /* from the left */
            row[j] = t;
        }
    }
    free(row);
    return st;
}

/* The reference result: every boundary cell and the best cell, from sw_serial. */
struct reference {
    const int32_t *rows, *cols;
    struct best best;
};

/* Compares the wavefront's boundary cells and best cell with the reference.
 * Returns 0, or 1 after printing what differs. */
static int check(const struct problem *p, const struct reference *ref, const char *who) {
    const size_t edge_bytes = (size_t)(p->nb + 1) * (p->n + 1) * sizeof(int32_t);
    struct best got = { -1, 0, 0 };
    for (size_t k = 0; k < (size_t)p->nb * p->nb; k++) best_merge(&got, p->block_best[k]);
    bool same_best = got.score == ref->best.score && got.i == ref->best.i && got.j == ref->best.j;
    if (same_best && !memcmp(p->rows, ref->rows, edge_bytes) && !memcmp(p->cols, ref->cols, edge_bytes))
        return 0;
    fflush(stdout);
    fprintf(stderr, "showcase: MISMATCH (%s): score %d at (%d,%d), reference %d at (%d,%d)%s\n", who,
            got.score, got.i, got.j, ref->best.score, ref->best.i, ref->best.j,
            same_best ? "; boundary cells differ" : "");
    return 1;
}

/* Clears what a wavefront run writes (the zero border must be in place). */
static void reset(struct problem *p) {
    const size_t edge_bytes = (size_t)(p->nb + 1) * (p->n + 1) * sizeof(int32_t);
    memset(p->rows, 0, edge_bytes);
    memset(p->cols, 0, edge_bytes);
    memset(p->block_best, 0, (size_t)p->nb * p->nb * sizeof p->block_best[0]);
}

/* The baseline: the same blocks in a plain loop, row after row, no weft.  Returns
 * the fastest of `reps` runs; wall < 0 after a mismatch. */
static struct timing time_serial_blocks(struct problem *p, unsigned reps, const struct reference *ref) {
    struct timing best = { 1e30, 0, -1 };
    for (unsigned r = 0; r < reps; r++) {
        reset(p);
        struct mark m = mark_now();
        for (unsigned bi = 0; bi < p->nb; bi++)
            for (unsigned bj = 0; bj < p->nb; bj++) sw_block(p, bi, bj);
        struct timing t = timing_since(m);
        if (check(p, ref, "plain loop of blocks")) return (struct timing){ -1, 0, -1 };
        if (t.wall < best.wall) best = t;
    }
    return best;
}

/* Runs tf on ex `reps` times, checking each result.  Returns the fastest run; wall
 * < 0 after printing why it failed. */
static struct timing time_weft(weft_executor *ex, weft_taskflow *tf, struct problem *p,
                               unsigned reps, const struct reference *ref) {
    struct timing best = { 1e30, 0, -1 };
    for (unsigned r = 0; r < reps; r++) {
        reset(p);
        struct mark m = mark_now();
        weft_status st = weft_run_and_wait(ex, tf);
        struct timing t = timing_since(m);
        if (st != WEFT_OK) return report("weft_run_and_wait", st), (struct timing){ -1, 0, -1 };
        char who[64];
        snprintf(who, sizeof who, "weft, %u worker(s)", weft_executor_workers(ex));
        if (check(p, ref, who)) return (struct timing){ -1, 0, -1 };
        if (t.wall < best.wall) best = t;
    }
    return best;
}

static void print_time(const char *label, struct timing t, double base, size_t ntasks) {
    printf("  %-16s %7.3f s %9.2f us %8.2fx %9.1f\n", label, t.wall, t.wall / (double)ntasks * 1e6,
           base / t.wall, t.cpu / t.wall);
}

/* Prints the speed-up line and, when it is low, whether other programs held the
 * CPUs (the machine was busy but weft's workers were not) or weft left them idle. */
static void print_speedup(struct timing plain, struct timing one, struct timing all, unsigned w) {
    const double speedup = plain.wall / all.wall, busy = all.cpu / all.wall;
    printf("\n  speed-up     %.2fx on %u worker%s over the plain loop (ideal: %ux), %.2fx over weft on 1\n",
           speedup, w, w == 1 ? "" : "s", w, one.wall / all.wall);
    if (w == 1 || speedup >= 0.7 * w) return;
    if (all.machine > 0.9 && busy < 0.8 * w)
        printf("               low because other programs were running: the machine was %.0f%% busy\n"
               "               but weft's workers got only %.1f of its %u CPUs; try it on an idle machine\n",
               all.machine * 100, busy, w);
    else if (all.machine >= 0)
        printf("               low: weft kept %.1f of %u CPUs busy (the machine: %.0f%%)\n", busy, w,
               all.machine * 100);
    else
        printf("               low: weft kept %.1f of %u CPUs busy\n", busy, w);
}

/* The timing table (t: plain loop, 1 worker, all workers), speed-up and result. */
static void print_results(const struct showcase *sc, const struct problem *p,
                          const struct reference *ref, const struct timing t[3]) {
    const unsigned w = weft_executor_workers(sc->all);
    const size_t ntasks = (size_t)p->nb * p->nb;
    char label[32], best_of[32];
    snprintf(label, sizeof label, "weft, %u worker%s", w, w == 1 ? "" : "s");
    snprintf(best_of, sizeof best_of, "best of %u", sc->reps);
    printf("\n  %-16s %9s %12s %9s %9s\n", best_of, "time", "per block", "speed-up", "CPUs busy");
    print_time("plain loop", t[0], t[0].wall, ntasks);
    print_time("weft, 1 worker", t[1], t[0].wall, ntasks);
    print_time(label, t[2], t[0].wall, ntasks);
    print_speedup(t[0], t[1], t[2], w);
    printf("  result       score %s; the alignment ends at a[%s], b[%s]\n",
           group((uint64_t)ref->best.score), group((uint64_t)ref->best.i), group((uint64_t)ref->best.j));
    printf("  checked      every run matches an independent row-by-row loop: the score, its\n"
           "               position and all %s block-boundary cells\n",
           group(2 * (uint64_t)(p->nb + 1) * (p->n + 1)));
}

static int section_wavefront(struct showcase *sc) {
    section_title("Wavefront: Smith-Waterman alignment as a task graph");
    const unsigned nb = sc->blocks, bs = sc->block_size, n = nb * bs;
    const size_t edge_cells = (size_t)(nb + 1) * (n + 1), ntasks = (size_t)nb * nb;
    struct problem p = { .n = n, .nb = nb, .bs = bs };
    char *a = malloc(n), *b = malloc(n);
    int32_t *ref_rows = malloc(edge_cells * sizeof *ref_rows);
    int32_t *ref_cols = malloc(edge_cells * sizeof *ref_cols);
    p.rows = malloc(edge_cells * sizeof *p.rows);
    p.cols = malloc(edge_cells * sizeof *p.cols);
    p.block_best = malloc(ntasks * sizeof *p.block_best);
    struct block_arg *args = malloc(ntasks * sizeof *args);
    weft_taskflow *tf = NULL;
    weft_status st;
    int rc = 1;
    if (!a || !b || !ref_rows || !ref_cols || !p.rows || !p.cols || !p.block_best || !args) {
        report("allocating the tables", WEFT_ENOMEM);
        goto done;
    }
    unsigned plant;
    make_sequences(a, b, n, &plant);
    p.a = a;
    p.b = b;
    struct reference ref = { ref_rows, ref_cols, sw_serial(&p, ref_rows, ref_cols) };
    if (ref.best.score < 0) { report("the reference loop", WEFT_ENOMEM); goto done; }

    double t0 = now_s();
    tf = weft_taskflow_create("wavefront", &st);
    if (!tf) { report("weft_taskflow_create", st); goto done; }
    st = build_wavefront(tf, &p, args, nb, false);
    if (st != WEFT_OK) { report("building the wavefront", st); goto done; }
    double t_build = now_s() - t0;

    printf("  problem      best local alignment of two random DNA sequences of %s bases\n"
           "               (a mutated copy of a %s-base stretch is planted in both)\n",
           group(n), group(plant));
    printf("  task graph   %u x %u blocks of %u x %u cells: %s tasks, %s edges, built in %.1f ms\n",
           nb, nb, bs, bs, group(weft_taskflow_num_tasks(tf)), group(2 * (uint64_t)nb * (nb - 1)),
           t_build * 1e3);

    struct timing t_plain = time_serial_blocks(&p, sc->reps, &ref);
    if (t_plain.wall < 0) goto done;
    struct timing t_one = time_weft(sc->one, tf, &p, sc->reps, &ref);
    if (t_one.wall < 0) goto done;
    struct timing t_all = time_weft(sc->all, tf, &p, sc->reps, &ref);
    if (t_all.wall < 0) goto done;

    print_results(sc, &p, &ref, (struct timing[3]){ t_plain, t_one, t_all });
    rc = 0;
done:
    if (tf && (st = weft_taskflow_destroy(tf)) != WEFT_OK) rc = report("weft_taskflow_destroy", st);
    free(args), free(p.block_best), free(p.cols), free(p.rows);
    free(ref_cols), free(ref_rows), free(b), free(a);
    return rc;
}

/* ---- the graph, drawn ----------------------------------------------------- */

static int section_dot(struct showcase *sc) {
    enum { NB = 4 };
    const char *path = "showcase-wavefront.dot";
    (void)sc;
    section_title("The graph, drawn");
    struct block_arg args[NB * NB];
    struct problem p = { .nb = NB }; /* never run: the tasks only need somewhere to point */
    weft_status st;
    weft_taskflow *tf = weft_taskflow_create("wavefront 4x4", &st);
    if (!tf) return report("weft_taskflow_create", st);
    int rc = 1;
    st = build_wavefront(tf, &p, args, NB, true);
    if (st != WEFT_OK) { report("building the small wavefront", st); goto done; }
    FILE *f = fopen(path, "w");
    if (!f) { perror("showcase: cannot write showcase-wavefront.dot"); goto done; }
    st = weft_taskflow_dump_dot(tf, f);
    if (fclose(f) != 0 && st == WEFT_OK) st = WEFT_ESYS;
    if (st != WEFT_OK) { report("weft_taskflow_dump_dot", st); goto done; }

    char cwd[4096];
    printf("  wrote        %s/%s\n", getcwd(cwd, sizeof cwd) ? cwd : ".", path);
    printf("               the same wavefront with %d x %d blocks: %zu tasks, %d edges\n", NB, NB,
           weft_taskflow_num_tasks(tf), 2 * NB * (NB - 1));
    printf("  render it    dot -Tsvg %s -o showcase-wavefront.svg\n", path);
    rc = 0;
done:
    if ((st = weft_taskflow_destroy(tf)) != WEFT_OK) rc = report("weft_taskflow_destroy", st);
    return rc;
}

/* ---- the run, traced --------------------------------------------------------- */

/* Writes one of the profiler's files and prints where it went. */
static int save_trace(weft_executor *ex, weft_taskflow *tf, const char *path, const char *how) {
    weft_status st;
    if (tf) {
        FILE *f = fopen(path, "w");
        if (!f) { perror(path); return 1; }
        st = weft_taskflow_dump_dot_profiled(tf, ex, f);
        if (fclose(f) != 0 && st == WEFT_OK) st = WEFT_ESYS;
    } else {
        st = weft_profiler_save(ex, path);
    }
    if (st != WEFT_OK) return report(path, st);
    char cwd[4096];
    printf("  wrote        %s/%s\n               %s\n", getcwd(cwd, sizeof cwd) ? cwd : ".", path, how);
    return 0;
}

/* Profiles one run of a named 12 x 12 wavefront on every worker and writes a
 * Chrome trace, the HTML report and the DOT graph with each block's time. */
static int section_trace(struct showcase *sc) {
    enum { NB = 12 };
    section_title("The run, traced (profiler, metrics, trace files)");
    const unsigned bs = sc->block_size * 4, n = NB * bs;
    const size_t edge = (size_t)(NB + 1) * (n + 1);
    struct problem p = { .n = n, .nb = NB, .bs = bs };
    char *a = malloc(n), *b = malloc(n);
    p.rows = calloc(edge, sizeof *p.rows), p.cols = calloc(edge, sizeof *p.cols);
    p.block_best = calloc(NB * NB, sizeof *p.block_best);
    struct block_arg args[NB * NB];
    weft_status st;
    weft_taskflow *tf = NULL;
    int rc = 1;
    if (!a || !b || !p.rows || !p.cols || !p.block_best) { report("allocating the tables", WEFT_ENOMEM); goto done; }
    unsigned plant;
    make_sequences(a, b, n, &plant);
    p.a = a, p.b = b;
    if (!(tf = weft_taskflow_create("wavefront 12x12", &st))) { report("weft_taskflow_create", st); goto done; }
    if ((st = build_wavefront(tf, &p, args, NB, true)) != WEFT_OK) { report("building", st); goto done; }
    if ((st = weft_profiler_start(sc->all)) != WEFT_OK) { report("weft_profiler_start", st); goto done; }
    st = weft_run_and_wait(sc->all, tf);
    weft_profiler_stop(sc->all);
    if (st != WEFT_OK) { report("weft_run_and_wait", st); goto done; }
    weft_metrics m;
    weft_worker_metrics per[64];
    if ((st = weft_executor_metrics(sc->all, &m, per, 64)) != WEFT_OK) { report("weft_executor_metrics", st); goto done; }
    printf("  metrics      %" PRIu64 " tasks, %" PRIu64 " steals, %" PRIu64 " parks, %.0f tasks/s, %.0f%% busy\n",
           m.total.tasks, m.total.steals, m.total.parks, m.tasks_per_second, 100 * m.total.utilisation);
    if (save_trace(sc->all, NULL, "showcase-trace.json", "open it in https://ui.perfetto.dev or chrome://tracing") ||
        save_trace(sc->all, NULL, "showcase-trace.html", "open it in any browser (one file, works offline)") ||
        save_trace(sc->all, tf, "showcase-trace.dot", "dot -Tsvg showcase-trace.dot -o showcase-trace.svg"))
        goto done;
    printf("  any program  WEFT_PROFILE=out.json ./your-program   (or out.html), no code change\n");
    rc = 0;
done:
    if (tf && (st = weft_taskflow_destroy(tf)) != WEFT_OK) rc = report("weft_taskflow_destroy", st);
    free(p.block_best), free(p.cols), free(p.rows), free(b), free(a);
    return rc;
}

/* ---- main ----------------------------------------------------------------- */

typedef int (*section_fn)(struct showcase *sc);
static const struct section {
    const char *name;
    section_fn run;
} SECTIONS[] = {
    { "wavefront", section_wavefront },
    { "dot", section_dot },
    { "trace", section_trace },
};

static int usage(void) {
    fprintf(stderr, "usage: showcase [--quick] [--blocks N] [--block-size B (1..%d)] [--reps R]\n",
            MAX_BLOCK);
    return 2;
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out) {
    char *end;
    unsigned long v = s ? strtoul(s, &end, 10) : 0;
    if (!s || *end || v < lo || v > hi) return false;
    *out = (unsigned)v;
    return true;
}

int main(int argc, char **argv) {
    struct showcase sc = { .blocks = 320, .block_size = 32, .reps = 3 };
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            sc.blocks = 48, sc.block_size = 16, sc.reps = 1;
        } else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) {
            if (!parse_uint(argv[++i], 1, 4096, &sc.blocks)) return usage();
        } else if (!strcmp(argv[i], "--block-size") && i + 1 < argc) {
            if (!parse_uint(argv[++i], 1, MAX_BLOCK, &sc.block_size)) return usage();
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (!parse_uint(argv[++i], 1, 100, &sc.reps)) return usage();
        } else {
            return usage();
        }
    }

    weft_status st;
    sc.one = weft_executor_create(&(weft_executor_config){ .workers = 1 }, &st);
    if (!sc.one) return report("weft_executor_create (1 worker)", st);
    sc.all = weft_executor_create(&(weft_executor_config){ .workers = 0 }, &st);
    if (!sc.all) {
        weft_executor_destroy(sc.one);
        return report("weft_executor_create (all CPUs)", st);
    }
    const unsigned w = weft_executor_workers(sc.all);
    const char *env = getenv("WEFT_WORKERS");
    printf("weft %s showcase: %u worker%s (%s)\n", weft_version(), w, w == 1 ? "" : "s",
           env ? "set by WEFT_WORKERS" : "one per CPU; set WEFT_WORKERS to change");

    int failed = 0;
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++) {
        if (SECTIONS[i].run(&sc) != 0) {
            fflush(stdout);
            fprintf(stderr, "showcase: section '%s' failed\n", SECTIONS[i].name);
            failed = 1;
            break;
        }
    }
    weft_executor_destroy(sc.all);
    weft_executor_destroy(sc.one);
    printf(failed ? "\nshowcase: FAILED\n" : "\nshowcase: all sections passed\n");
    return failed;
}
