/* A data pipeline over a real file: read it line by line, parse the numbers on
 * each line in parallel, and add them up in file order.
 *
 *     pipeline_file [FILE]
 *
 * Each line holds integers separated by commas or spaces.  Without FILE the
 * program writes a file of 50,000 random lines itself (in $TMPDIR or /tmp),
 * processes it, checks the totals against the ones it computed while writing,
 * and removes it.
 *
 *   stage 0 "read"  (serial)   fgets the next line into the line's buffer
 *   stage 1 "parse" (parallel) turn its text into a count, sum, min and max
 *   stage 2 "total" (serial)   fold those into the totals, in line order
 *
 * The stages hand values to each other through the pipeline's per-line buffers,
 * whose sizes and types are declared below and checked when it is created.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <weft.h>

#define MAX_LINE 512

typedef struct text_line {
    uint64_t number; /* 0-based line number */
    char text[MAX_LINE];
} text_line;

typedef struct line_stats {
    uint64_t number;
    uint64_t count;
    int64_t sum, min, max;
} line_stats;

typedef struct totals {
    uint64_t lines, numbers, out_of_order;
    int64_t sum, min, max;
} totals;

/* ---- the stages ------------------------------------------------------------------- */

static int read_line(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)in;
    text_line *l = out;
    if (!fgets(l->text, sizeof l->text, (FILE *)arg)) {
        weft_pipeflow_stop(pf); /* end of file: no more tokens */
        return 0;
    }
    l->number = weft_pipeflow_token(pf);
    return 0;
}

static int parse_line(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf;
    (void)arg;
    const text_line *l = in;
    line_stats *s = out;
    *s = (line_stats){.number = l->number, .min = INT64_MAX, .max = INT64_MIN};
    const char *p = l->text;
    for (;;) {
        char *end;
        p += strspn(p, " ,\t\r\n");
        if (!*p) break;
        long long v = strtoll(p, &end, 10);
        if (end == p) return 1; /* not a number: fail the run with code 1 */
        p = end;
        s->count++;
        s->sum += v;
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
    }
    return 0;
}

static int add_up(weft_pipeflow *pf, void *in, void *out, void *arg) {
    (void)pf;
    (void)out;
    const line_stats *s = in;
    totals *t = arg;
    if (s->number != t->lines) t->out_of_order++; /* a serial stage sees lines in order */
    t->lines++;
    t->numbers += s->count;
    t->sum += s->sum;
    if (s->count && s->min < t->min) t->min = s->min;
    if (s->count && s->max > t->max) t->max = s->max;
    return 0;
}

/* ---- running it ---------------------------------------------------------------------- */

static int process(FILE *f, totals *t) {
    weft_data_stage stages[] = {
        {WEFT_STAGE_SERIAL, read_line, f, "read", .WEFT_DATA_OUT(text_line)},
        {WEFT_STAGE_PARALLEL, parse_line, NULL, "parse", .WEFT_DATA_IN(text_line), .WEFT_DATA_OUT(line_stats)},
        {WEFT_STAGE_SERIAL, add_up, t, "total", .WEFT_DATA_IN(line_stats)},
    };
    weft_status st;
    weft_executor *ex = weft_executor_create(NULL, &st);
    if (!ex) return fprintf(stderr, "executor: %s\n", weft_strerror(st)), -1;
    /* 16 lines: up to 16 lines of the file in flight at once. */
    weft_pipeline *p = weft_data_pipeline_create(16, stages, 3, &st);
    weft_taskflow *tf = p ? weft_taskflow_create("file", &st) : NULL;
    if (!p || !tf) {
        fprintf(stderr, "pipeline: %s %s\n", weft_strerror(st), weft_pipeline_error_message());
    } else if (weft_task_is_null(weft_pipeline_emplace(tf, p))) {
        st = weft_taskflow_last_error(tf);
        fprintf(stderr, "emplace: %s\n", weft_strerror(st));
    } else {
        st = weft_run_and_wait(ex, tf);
        if (st != WEFT_OK) fprintf(stderr, "run: %s (a line that is not numbers?)\n", weft_strerror(st));
    }
    if (tf) (void)weft_taskflow_destroy(tf);
    (void)weft_pipeline_destroy(p);
    weft_executor_destroy(ex);
    return st == WEFT_OK ? 0 : -1;
}

/* Writes `n` lines of 1 to 12 random numbers to a new temporary file and the
 * totals a correct run must find to *want.  Returns the open file (rewound). */
static FILE *make_input(char *path, size_t n, totals *want) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, 256, "%s/weft-pipeline-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f) return perror(path), NULL;
    uint64_t seed = 2026;
    *want = (totals){.lines = n, .min = INT64_MAX, .max = INT64_MIN};
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        int k = 1 + (int)((seed >> 33) % 12);
        for (int j = 0; j < k; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int64_t v = (int64_t)((seed >> 20) % 2000001) - 1000000;
            fprintf(f, j ? ", %" PRId64 : "%" PRId64, v);
            want->numbers++;
            want->sum += v;
            if (v < want->min) want->min = v;
            if (v > want->max) want->max = v;
        }
        fputc('\n', f);
    }
    rewind(f);
    return f;
}

int main(int argc, char **argv) {
    char path[256];
    totals want = {0}, got = {.min = INT64_MAX, .max = INT64_MIN};
    FILE *f = argc > 1 ? fopen(argv[1], "r") : make_input(path, 50000, &want);
    if (!f) return perror(argc > 1 ? argv[1] : "input"), 1;
    int rc = process(f, &got);
    fclose(f);
    if (argc == 1) unlink(path);
    if (rc != 0) return 1;
    printf("%" PRIu64 " lines, %" PRIu64 " numbers, sum %" PRId64 ", min %" PRId64 ", max %" PRId64 "\n", got.lines,
           got.numbers, got.sum, got.numbers ? got.min : 0, got.numbers ? got.max : 0);
    if (got.out_of_order) return fprintf(stderr, "error: %" PRIu64 " lines out of order\n", got.out_of_order), 1;
    if (argc == 1) {
        bool ok = got.lines == want.lines && got.numbers == want.numbers && got.sum == want.sum &&
                  got.min == want.min && got.max == want.max;
        printf("%s\n", ok ? "matches the totals computed while writing the file" : "error: totals differ");
        return ok ? 0 : 1;
    }
    return 0;
}
