/* The HTML report: one self-contained file (inline CSS and SVG, no script, no
 * network) with a timeline of the workers, their utilisation, the slowest tasks
 * and the histogram of task durations, all computed from the profiler's spans.
 * "Tasks" here are taskflow tasks and every other kind of work the profiler
 * records (async tasks, fork-join roots and stolen frames, algorithm jobs,
 * pipeline stage calls); figures that come from batched (estimated) spans are
 * marked as such. */
#include "observe/obs.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <inttypes.h>
#include <string.h>
#include <strings.h>

#define TL_WIDTH 1100   /* timeline width in px */
#define TL_ROW 26       /* px per worker */
#define TL_LEFT 80      /* room for the worker names */
#define MAX_RECTS 20000 /* above this many task spans, draw occupancy per pixel */
#define SLOWEST 15

/* A copy: the span visitor's spans of a batch live only during the call. */
struct slow { uint64_t ticks; unsigned worker; bool set; weft__span s; };

struct report {
    const struct weft__obs *o;
    FILE *out;
    uint64_t t_min, t_max, tasks, estimated, held_long;
    bool nested_pass; /* drawing: nested spans, after the others */
    uint64_t *busy;             /* per worker, ticks */
    uint64_t hist[WEFT_METRICS_BUCKETS];
    struct slow slow[SLOWEST];
    double *px;                 /* nworkers * TL_WIDTH busy ticks per pixel (dense mode) */
};

static void note_slow(struct report *r, const weft__span *s, unsigned w) {
    uint64_t d = s->end - s->begin;
    int k = SLOWEST - 1;
    if (r->slow[k].set && r->slow[k].ticks >= d) return;
    while (k > 0 && (!r->slow[k - 1].set || r->slow[k - 1].ticks < d)) {
        r->slow[k] = r->slow[k - 1];
        k--;
    }
    r->slow[k] = (struct slow){ d, w, true, *s };
}

static bool scan_span(const weft__span *s, unsigned w, void *arg) {
    struct report *r = arg;
    if (s->begin < r->t_min) r->t_min = s->begin;
    if (s->end > r->t_max) r->t_max = s->end;
    /* A GPU task's recording: busy time, not a task (nor a duration). */
    if (s->kind == WEFT__SPAN_RECORDING && !s->nested) r->busy[w] += s->end - s->begin;
    if (!weft__span_is_run(s)) return true;
    r->tasks++;
    r->estimated += s->estimated != 0;
    r->held_long += s->estimated == WEFT__EST_LONG;
    /* A nested span's time is inside its parent's: counted once. */
    if (!s->nested) r->busy[w] += s->end - s->begin;
    r->hist[weft__hist_bucket((uint64_t)weft__ticks_ns(r->o, s->end - s->begin))]++;
    /* A share of a batch that held a long task is no task's duration. */
    if (s->estimated != WEFT__EST_LONG) note_slow(r, s, w);
    return true;
}

static double x_of(const struct report *r, uint64_t t) {
    double span = (double)(r->t_max - r->t_min);
    return span > 0 ? (double)(t - r->t_min) * TL_WIDTH / span : 0.0;
}

/* A stable colour per task label. */
static unsigned hue_of(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h % 360;
}

/* &#181; rather than &micro;: the timeline is also a standalone SVG, which is XML. */
static void put_duration(FILE *out, double ns) { weft__put_duration(out, ns, "&#181;s"); }

static bool draw_span(const weft__span *s, unsigned w, void *arg) {
    struct report *r = arg;
    double x0 = x_of(r, s->begin), x1 = x_of(r, s->end);
    double y = (double)w * TL_ROW + 3;
    if (s->kind == WEFT__SPAN_PARK) {
        fprintf(r->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"3\" fill=\"#bbb\"/>\n", TL_LEFT + x0,
                y + TL_ROW - 8, x1 - x0 < 0.5 ? 0.5 : x1 - x0);
        return true;
    }
    if (!weft__span_is_busy(s) || (bool)s->nested != r->nested_pass) return true;
    if (r->px) {
        if (s->nested) return true; /* its time is inside its parent's */
        /* Dense: spread the span's ticks over the pixels it covers. */
        double *row = r->px + (size_t)w * TL_WIDTH;
        double span = (double)(r->t_max - r->t_min) / TL_WIDTH;
        for (int p = (int)x0; p <= (int)x1 && p < TL_WIDTH; p++) {
            double lo = p > x0 ? p : x0, hi = p + 1 < x1 ? p + 1 : x1;
            if (hi > lo) row[p] += (hi - lo) * span;
        }
        return true;
    }
    char buf[24];
    const char *label = weft__span_label(r->o, w, s, buf, sizeof buf);
    /* Nested spans (drawn after the rest) take the lower half of the bar. */
    int h = s->nested ? (TL_ROW - 10) / 2 : TL_ROW - 10;
    fprintf(r->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"hsl(%u,60%%,%s)\"><title>",
            TL_LEFT + x0, y + (TL_ROW - 10 - h), x1 - x0 < 0.5 ? 0.5 : x1 - x0, h, hue_of(label),
            (s->failed & WEFT__SPAN_FAILED) ? "35%" : "60%");
    weft__put_html(r->out, label);
    if (s->kind == WEFT__SPAN_TASK) fprintf(r->out, " (run %" PRIu32 ") ", s->run);
    else fprintf(r->out, " (%s) ", weft__span_category(s));
    if (s->estimated) fputs("~", r->out);
    put_duration(r->out, weft__ticks_ns(r->o, s->end - s->begin));
    if (s->estimated) fputs(" (estimated)", r->out);
    fputs("</title></rect>\n", r->out);
    return true;
}

static void draw_dense(const struct report *r) {
    double tick_per_px = (double)(r->t_max - r->t_min) / TL_WIDTH;
    for (unsigned w = 0; w < r->o->nworkers; w++) {
        const double *row = r->px + (size_t)w * TL_WIDTH;
        for (int p = 0; p < TL_WIDTH; p++) {
            double f = tick_per_px > 0 ? row[p] / tick_per_px : 0;
            if (f <= 0.01) continue;
            fprintf(r->out, "<rect x=\"%d\" y=\"%u\" width=\"1\" height=\"%d\" fill=\"#2a7\" fill-opacity=\"%.2f\"/>\n",
                    TL_LEFT + p, w * TL_ROW + 3, TL_ROW - 10, f > 1 ? 1.0 : f);
        }
    }
}

/* The timeline as one <svg> element (standalone: with its own font rule). */
static void put_timeline_svg(struct report *r, bool standalone) {
    FILE *out = r->out;
    unsigned h = r->o->nworkers * TL_ROW + 24;
    fprintf(out, "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\""
                 " viewBox=\"0 0 %d %u\">\n", TL_LEFT + TL_WIDTH + 10, h, TL_LEFT + TL_WIDTH + 10, h);
    if (standalone) fputs("<style>text{font-family:sans-serif;font-size:12px}</style>\n", out);
    for (unsigned w = 0; w < r->o->nworkers; w++)
        fprintf(out, "<rect x=\"%d\" y=\"%u\" width=\"%d\" height=\"%d\" fill=\"%s\"/><text x=\"4\" y=\"%u\">worker %u</text>\n",
                TL_LEFT, w * TL_ROW, TL_WIDTH, TL_ROW, w % 2 ? "#f6f6f6" : "#ececec", w * TL_ROW + 17, w);
    r->nested_pass = false;
    weft__spans_for_each(r->o, draw_span, r);
    r->nested_pass = true;
    weft__spans_for_each(r->o, draw_span, r);
    if (r->px) draw_dense(r);
    unsigned y = r->o->nworkers * TL_ROW + 16;
    fprintf(out, "<text x=\"%d\" y=\"%u\">0</text><text x=\"%d\" y=\"%u\" text-anchor=\"end\">", TL_LEFT, y,
            TL_LEFT + TL_WIDTH, y);
    put_duration(out, weft__ticks_ns(r->o, r->t_max - r->t_min));
    fputs("</text>\n</svg>\n", out);
}

static void put_timeline(struct report *r) {
    fputs("<h2>Timeline</h2>\n", r->out);
    put_timeline_svg(r, false);
    if (r->px) fputs("<p class=\"note\">Too many spans to draw one by one: each pixel column shows how busy the worker was.</p>\n", r->out);
}

static void put_utilisation(const struct report *r) {
    FILE *out = r->out;
    double wall = weft__ticks_ns(r->o, r->t_max - r->t_min);
    fputs("<h2>Utilisation</h2>\n<table><tr><th>worker</th><th>busy</th><th>utilisation</th><th></th></tr>\n", out);
    for (unsigned w = 0; w < r->o->nworkers; w++) {
        double busy = weft__ticks_ns(r->o, r->busy[w]);
        double u = wall > 0 ? 100.0 * busy / wall : 0;
        fprintf(out, "<tr><td>%u</td><td>", w);
        put_duration(out, busy);
        fprintf(out, "</td><td>%.1f%%</td><td><div class=\"bar\" style=\"width:%.0fpx\"></div></td></tr>\n", u,
                u * 3 > 300 ? 300 : u * 3);
    }
    fputs("</table>\n", out);
}

/* The slowest spans, each saying whether its duration was measured or is a
 * batch's share (then "~", and the task took less than the batching bound). */
static void put_slowest(const struct report *r) {
    FILE *out = r->out;
    fputs("<h2>Slowest tasks</h2>\n<table id=\"slowest\"><tr><th>task</th><th>kind</th><th>duration</th><th>timing</th>"
          "<th>run</th><th>worker</th></tr>\n", out);
    for (int k = 0; k < SLOWEST && r->slow[k].set; k++) {
        char buf[24];
        const weft__span *s = &r->slow[k].s;
        double ns = weft__ticks_ns(r->o, r->slow[k].ticks);
        fprintf(out, "<tr class=\"slow\" data-ns=\"%.0f\" data-estimated=\"%d\"><td>", ns, s->estimated);
        weft__put_html(out, weft__span_label(r->o, r->slow[k].worker, s, buf, sizeof buf));
        fprintf(out, "</td><td>%s</td><td>%s", weft__span_category(s), s->estimated ? "~" : "");
        put_duration(out, ns);
        fprintf(out, "</td><td>%s</td><td>", s->estimated ? "estimated" : "measured");
        if (s->kind == WEFT__SPAN_TASK) fprintf(out, "%" PRIu32, s->run);
        fprintf(out, "</td><td>%u</td></tr>\n", r->slow[k].worker);
    }
    fputs("</table>\n", out);
    if (r->estimated) {
        fputs("<p class=\"note\" id=\"estimates\">~ estimated: ", out);
        fprintf(out, "%" PRIu64 " of the %" PRIu64 " spans are of short tasks timed in batches that share one interval"
                     " evenly; each such task took under ", r->estimated, r->tasks);
        put_duration(out, WEFT__BATCH_LONG_NS);
        fputs(", unless its batch held a task that ran longer.  Totals, utilisation and counts are exact.</p>\n", out);
    }
    if (r->held_long) {
        fprintf(out, "<p class=\"note\" id=\"held-long\">%" PRIu64 " spans come from batches that held a task which ran"
                     " longer than ", r->held_long);
        put_duration(out, WEFT__BATCH_LONG_NS);
        fputs(": one clock reading cannot tell it from the short tasks beside it, so their shares are left out of this"
              " table (the trace marks them <code>batch_held_long_task</code>).  Those tasks are timed one by one from"
              " their next run on, so a long one shows here after it ran twice.</p>\n", out);
    }
}

static void put_histogram(const struct report *r) {
    FILE *out = r->out;
    unsigned lo = WEFT_METRICS_BUCKETS, hi = 0;
    uint64_t max = 0;
    for (unsigned b = 0; b < WEFT_METRICS_BUCKETS; b++) {
        if (!r->hist[b]) continue;
        if (b < lo) lo = b;
        hi = b;
        if (r->hist[b] > max) max = r->hist[b];
    }
    fputs("<h2>Task durations</h2>\n", out);
    if (!max) { fputs("<p>No task spans.</p>\n", out); return; }
    unsigned n = hi - lo + 1, bw = 76;
    fprintf(out, "<svg id=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"200\">\n", n * bw + 20);
    for (unsigned b = lo; b <= hi; b++) {
        double h = 140.0 * (double)r->hist[b] / (double)max;
        unsigned x = 10 + (b - lo) * bw;
        fprintf(out, "<rect x=\"%u\" y=\"%.1f\" width=\"%u\" height=\"%.1f\" fill=\"#47a\"><title>%" PRIu64 " tasks</title></rect>",
                x + 4, 170 - h, bw - 8, h, r->hist[b]);
        fprintf(out, "<text x=\"%u\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"11\">%" PRIu64 "</text>", x + bw / 2,
                165 - h, r->hist[b]);
        fprintf(out, "<text x=\"%u\" y=\"188\" text-anchor=\"middle\" font-size=\"11\">&#8805;", x + bw / 2);
        put_duration(out, b ? (double)((uint64_t)1 << b) : 0.0);
        fputs("</text>\n", out);
    }
    fputs("</svg>\n", out);
}

static const char *const STYLE =
    "body{font-family:sans-serif;margin:20px;color:#222}h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse}td,th{padding:3px 10px;text-align:left;border-bottom:1px solid #ddd}"
    ".bar{height:12px;background:#2a7}.note{color:#666;font-size:13px}svg text{font-size:12px}";

static weft_status put_report(struct report *r, uint64_t dropped) {
    FILE *out = r->out;
    fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>weft profile</title><style>%s</style>"
                 "</head><body>\n<h1>weft profile</h1>\n<p>%u workers, %" PRIu64 " task spans", STYLE,
            r->o->nworkers, r->tasks);
    if (r->estimated) fprintf(out, " (%" PRIu64 " estimated, see below)", r->estimated);
    if (dropped) fprintf(out, ", <b>%" PRIu64 " dropped</b> (buffer limit or out of memory)", dropped);
    fputs(", over ", out);
    put_duration(out, r->tasks ? weft__ticks_ns(r->o, r->t_max - r->t_min) : 0);
    fputs(".</p>\n", out);
    put_timeline(r);
    put_utilisation(r);
    put_slowest(r);
    put_histogram(r);
    /* The flame graph (flame.c) inline: the same self-contained SVG that
     * weft_profiler_write_flame_svg writes.  Out of memory, the report goes
     * without it, says so, and the call returns WEFT_ENOMEM: a report short
     * of a part with WEFT_OK was a success nobody could tell from a whole one. */
    weft_status st = WEFT_OK;
    if (r->tasks) {
        fputs("<h2>Flame graph</h2>\n<p class=\"note\">Self time by stack: executor, taskflow, subflow or "
              "module, task (the folded stacks of weft_profiler_write_folded).</p>\n",
              out);
        if (weft_profiler_write_flame_svg(r->o->ex, NULL, out) == WEFT_ENOMEM) {
            fputs("<p class=\"note\" id=\"flame-missing\">Left out: out of memory.</p>\n", out);
            st = weft__fail("weft_profiler_write_html", WEFT_ENOMEM,
                            "out of memory for the flame graph; the report was written without it");
        }
    }
    fputs("</body></html>\n", out);
    return st;
}

/* Reads the spans into r (which the caller zeroes) for writing to out:
 * bounds, busy time, histogram, and per-pixel occupancy when there are too
 * many spans to draw.  WEFT_OK or WEFT_ENOMEM, the message naming fn, the
 * public call (docs/errors.md, R3: not "weft_profiler_write_html/
 * timeline_svg"). */
static weft_status report_open(const char *fn, struct report *r, const weft_executor *ex, struct weft__obs *none,
                               FILE *out) {
    /* Never profiled: an empty report (the state is not made here, which would
     * race with a thread switching things on). */
    *none = (struct weft__obs){ .ex = (weft_executor *)ex, .ns_per_tick = 1.0 };
    const struct weft__obs *o = weft__obs_state_get(ex);
    if (!o) o = none;
    *r = (struct report){ .o = o, .out = out, .t_min = UINT64_MAX };
    r->busy = weft__calloc((o->nworkers ? o->nworkers : 1) * sizeof *r->busy);
    if (!r->busy) return weft__fail_st(fn, WEFT_ENOMEM);
    weft__spans_for_each(o, scan_span, r);
    if (r->t_min > r->t_max) r->t_min = r->t_max = 0;
    if (r->tasks > MAX_RECTS && !(r->px = weft__calloc((size_t)o->nworkers * TL_WIDTH * sizeof(double)))) {
        weft__free(r->busy, (o->nworkers ? o->nworkers : 1) * sizeof *r->busy);
        return weft__fail_st(fn, WEFT_ENOMEM);
    }
    return WEFT_OK;
}

static void report_close(struct report *r) {
    unsigned nw = r->o->nworkers;
    if (r->px) weft__free(r->px, (size_t)nw * TL_WIDTH * sizeof(double));
    weft__free(r->busy, (nw ? nw : 1) * sizeof *r->busy);
}

weft_status weft_profiler_write_html(const weft_executor *ex, FILE *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    struct weft__obs none;
    struct report r;
    weft_status st = report_open(__func__, &r, ex, &none, out);
    if (st != WEFT_OK) return st;
    uint64_t dropped = 0;
    (void)weft_profiler_count(ex, NULL, &dropped);
    weft_status part = put_report(&r, dropped);
    report_close(&r);
    st = weft__obs_finish_write(out, __func__);
    return st != WEFT_OK ? st : part;
}

weft_status weft_profiler_write_timeline_svg(const weft_executor *ex, FILE *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    struct weft__obs none;
    struct report r;
    weft_status st = report_open(__func__, &r, ex, &none, out);
    if (st != WEFT_OK) return st;
    put_timeline_svg(&r, true);
    report_close(&r);
    return weft__obs_finish_write(out, __func__);
}

weft_status weft_profiler_save(const weft_executor *ex, const char *path) {
    if (!ex || !path) return weft__fail(__func__, WEFT_EINVAL, "ex or path is NULL");
    size_t n = strlen(path);
/* Any case: "REPORT.HTML" is a report, as a file manager would open it. */
#define ENDS_WITH(sfx) (n >= sizeof(sfx) - 1 && strcasecmp(path + n - (sizeof(sfx) - 1), sfx) == 0)
    bool html = ENDS_WITH(".html") || ENDS_WITH(".htm");
    bool folded = ENDS_WITH(".folded"), svg = ENDS_WITH(".svg");
#undef ENDS_WITH
    FILE *f = fopen(path, "w");
    if (!f) return weft__fail(__func__, WEFT_ESYS, "'%s' could not be opened for writing", path);
    weft_status st = html     ? weft_profiler_write_html(ex, f)
                     : folded ? weft_profiler_write_folded(ex, NULL, f)
                     : svg    ? weft_profiler_write_flame_svg(ex, NULL, f)
                              : weft_profiler_write_json(ex, f);
    if (fclose(f) != 0 && st == WEFT_OK) st = WEFT_ESYS;
    /* A writer's failure names a stream ("weft_profiler_write_json: writing
     * to out failed"); the caller gave a path: name it (a full disk, a quota). */
    if (st == WEFT_ESYS) st = weft__fail(__func__, WEFT_ESYS, "'%s' could not be written", path);
    return st;
}
