/* Flame graphs from a profile: folded stacks (Brendan Gregg's format, one line
 * per distinct stack, "frame;frame;frame <weight>", the weight in ns), which
 * flamegraph.pl, speedscope and inferno read.
 *
 * A stack is: the executor; for a taskflow task, the taskflow of its run (the
 * top-level graph), the subflow or module graph it belongs to when that is
 * another one, and the task; for other work, its kind (and a pipeline's stage).
 * A span that ran inside another span of its worker (a task that waited and
 * ran others meanwhile, fork-join work run during a sync) goes on top of the
 * stack of the span it ran in.  Each line's weight is the span's self time
 * (its time minus what ran nested in it), so the lines add up to the busy time.
 *
 * What a span records decides what can be shown: the taskflow and run of a
 * task (top-level run id), not the chain of modules it came through, so a
 * module inside a module shows as one level under the top-level taskflow.  The
 * top-level graph of a run is the graph of its earliest task that is not of a
 * nested graph (WEFT__SPAN_INNER): a module task records no span of its own, so
 * a module body's tasks may be the run's first (the module task a source, or
 * before the taskflow's own tasks).  A run whose own graph ran no task of its
 * own (modules only) falls back to its earliest task's graph. */
#include "core/alloc.h"
#include "core/escape.h"
#include "observe/obs.h"
#include "core/error_detail.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One span of something run, with what the stack needs. */
typedef struct fspan {
    weft__span s;
    const void *top;  /* the taskflow of the span's run (tasks only) */
    int64_t self;     /* ticks, minus nested spans */
    size_t parent;    /* index + 1 of the span it ran in, 0 for none */
    unsigned worker;
} fspan;

typedef struct fspans {
    fspan *v;
    size_t n, cap;
    bool oom;
} fspans;

static bool collect(const weft__span *s, unsigned worker, void *arg) {
    fspans *a = arg;
    if (!weft__span_is_busy(s)) return true; /* parks and steals are not busy time */
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1024;
        fspan *v = weft__realloc(a->v, a->cap * sizeof *v, cap * sizeof *v);
        if (!v) return a->oom = true, false;
        a->v = v, a->cap = cap;
    }
    a->v[a->n++] = (fspan){ .s = *s, .self = (int64_t)(s->end - s->begin), .worker = worker };
    return true;
}

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

/* A span of a taskflow task: its run, or its GPU recording (which has the
 * task's taskflow, run and index). */
static bool of_task(const fspan *f) { return f->s.kind == WEFT__SPAN_TASK || f->s.kind == WEFT__SPAN_RECORDING; }

/* Task spans first, by run, then by begin: each run's first span is its top graph's. */
static int by_run(const void *pa, const void *pb) {
    const fspan *a = pa, *b = pb;
    bool ta = of_task(a), tb = of_task(b);
    if (ta != tb) return ta ? -1 : 1;
    int c = cmp_u64(a->s.run, b->s.run);
    return c ? c : cmp_u64(a->s.begin, b->s.begin);
}

/* By worker, then begin, the longer (enclosing) span first. */
static int by_worker_time(const void *pa, const void *pb) {
    const fspan *a = pa, *b = pb;
    int c = (a->worker > b->worker) - (a->worker < b->worker);
    if (!c) c = cmp_u64(a->s.begin, b->s.begin);
    if (!c) c = cmp_u64(b->s.end, a->s.end);
    return c ? c : (a->s.nested > b->s.nested) - (a->s.nested < b->s.nested);
}

static void find_top_graphs(fspans *a) {
    if (a->n > 1) qsort(a->v, a->n, sizeof *a->v, by_run);
    const void *top = NULL;
    for (size_t i = 0; i < a->n && of_task(&a->v[i]); i++) {
        if (i == 0 || a->v[i].s.run != a->v[i - 1].s.run) {
            /* The run's first span of its own graph, else its first span's. */
            top = a->v[i].s.tf;
            for (size_t j = i; j < a->n && of_task(&a->v[j]) && a->v[j].s.run == a->v[i].s.run; j++)
                if (!(a->v[j].s.failed & WEFT__SPAN_INNER)) {
                    top = a->v[j].s.tf;
                    break;
                }
        }
        a->v[i].top = top;
    }
}

/* Links each nested span to the span it ran in on its worker, and takes its
 * time out of that span's self time. */
static void find_nesting(fspans *a) {
    if (a->n > 1) qsort(a->v, a->n, sizeof *a->v, by_worker_time);
    size_t stack[WEFT__OBS_DEPTH + 1], depth = 0;
    for (size_t i = 0; i < a->n; i++) {
        fspan *f = &a->v[i];
        if (i > 0 && f->worker != a->v[i - 1].worker) depth = 0;
        while (depth > 0 && a->v[stack[depth - 1]].s.end <= f->s.begin) depth--;
        if (!f->s.nested) depth = 0;
        if (depth > 0) {
            f->parent = stack[depth - 1] + 1;
            a->v[stack[depth - 1]].self -= (int64_t)(f->s.end - f->s.begin);
        }
        if (depth < sizeof stack / sizeof *stack) stack[depth++] = i;
    }
}

/* ---- labels: taskflows and pipelines numbered in order of appearance ----------- */

typedef struct ident {
    const void *key;
    unsigned number; /* per class, from 1 */
    uint8_t cls;     /* 0 taskflow, 1 pipeline */
} ident;

typedef struct idents {
    ident *v;
    size_t cap, n;
    unsigned next[2];
    const weft_folded_options *opt;
    bool oom; /* a number could not be given: the stacks would say "taskflow 0" */
} idents;

static size_t ident_slot(const idents *t, const void *key) {
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 24) & (t->cap - 1);
    while (t->v[i].key && t->v[i].key != key) i = (i + 1) & (t->cap - 1);
    return i;
}

static bool idents_grow(idents *t) {
    idents n = { .v = weft__calloc((t->cap ? t->cap * 2 : 64) * sizeof(ident)), .cap = t->cap ? t->cap * 2 : 64 };
    if (!n.v) return false;
    for (size_t i = 0; i < t->cap; i++)
        if (t->v[i].key) n.v[ident_slot(&n, t->v[i].key)] = t->v[i];
    weft__free(t->v, t->cap * sizeof(ident));
    t->v = n.v, t->cap = n.cap;
    return true;
}

/* The number of `key` in its class, assigned on first sight; 0 when out of memory. */
static unsigned ident_number(idents *t, const void *key, uint8_t cls) {
    if ((t->n + 1) * 2 > t->cap && !idents_grow(t)) return t->oom = true, 0;
    size_t i = ident_slot(t, key);
    if (!t->v[i].key) t->v[i] = (ident){ key, ++t->next[cls], cls }, t->n++;
    return t->v[i].number;
}

/* The name the caller gave through a live taskflow, or NULL. */
static const char *given_name(const idents *t, const void *tf) {
    const weft_folded_options *o = t->opt;
    for (size_t i = 0; o && o->taskflows && i < o->ntaskflows; i++)
        if (o->taskflows[i] == tf && *weft_taskflow_name(o->taskflows[i])) return weft_taskflow_name(o->taskflows[i]);
    return NULL;
}

/* ---- building stacks into a string ---------------------------------------------- */

typedef struct strbuf {
    char *p;
    size_t len, cap;
    bool oom;
} strbuf;

static void sb_putc(strbuf *b, char c) {
    if (b->len + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        char *p = weft__realloc(b->p, b->cap, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p, b->cap = cap;
    }
    b->p[b->len++] = c;
    b->p[b->len] = '\0';
}

/* Appends text to the current frame.  ';' separates frames and a line ends
 * in " <weight>", so a ';' or a control character in a name becomes '?'
 * (spaces are fine).  Other bytes are kept; the writer prints invalid UTF-8
 * as U+FFFD (weft__put_utf8). */
static void sb_text(strbuf *b, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        sb_putc(b, (*p == ';' || *p < 0x20 || *p == 0x7f) ? '?' : (char)*p);
}

/* Starts a frame holding text. */
static void sb_frame(strbuf *b, const char *s) {
    if (b->len) sb_putc(b, ';');
    sb_text(b, s);
}

/* "taskflow <its name>", with the name the caller's live taskflow gives, else
 * "taskflow N" in order of appearance. */
static void graph_frame(strbuf *b, idents *t, const void *tf, const char *what) {
    const char *name = given_name(t, tf);
    char buf[48];
    if (name) {
        sb_frame(b, what);
        sb_putc(b, ' ');
        sb_text(b, name);
        return;
    }
    snprintf(buf, sizeof buf, "%s %u", what, ident_number(t, tf, 0));
    sb_frame(b, buf);
}

/* The frames of span f itself (not the spans it ran in). */
static void own_frames(strbuf *b, const struct weft__obs *o, idents *t, const fspan *f) {
    char buf[48];
    if (of_task(f)) {
        graph_frame(b, t, f->top ? f->top : f->s.tf, "taskflow");
        if (f->top && f->top != f->s.tf) graph_frame(b, t, f->s.tf, "subflow/module");
        sb_frame(b, weft__span_label(o, f->worker, &f->s, buf, sizeof buf));
        /* A GPU task's recording: a frame on top of its task's. */
        if (f->s.kind == WEFT__SPAN_RECORDING) sb_frame(b, "GPU recording");
        return;
    }
    if (f->s.kind - WEFT__SPAN_WORK == WEFT__WORK_STAGE) {
        snprintf(buf, sizeof buf, "pipeline %u", ident_number(t, f->s.tf, 1));
        sb_frame(b, buf);
    }
    sb_frame(b, weft__span_label(o, f->worker, &f->s, buf, sizeof buf));
}

static void stack_of(strbuf *b, const struct weft__obs *o, idents *t, const fspans *a, size_t i) {
    if (a->v[i].parent) stack_of(b, o, t, a, a->v[i].parent - 1);
    own_frames(b, o, t, &a->v[i]);
}

/* ---- merging equal stacks -------------------------------------------------------- */

typedef struct fline {
    char *stack;
    size_t bytes;
    int64_t ticks;
} fline;

typedef struct flines {
    fline *v;      /* distinct stacks */
    size_t n, cap;
    size_t *slot;  /* open addressing: index + 1 into v */
    size_t nslot;
} flines;

static uint64_t hash_str(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
    return h;
}

static bool flines_rehash(flines *m) {
    size_t n = m->nslot ? m->nslot * 2 : 256;
    size_t *slot = weft__calloc(n * sizeof *slot);
    if (!slot) return false;
    for (size_t i = 0; i < m->n; i++) {
        size_t j = (size_t)hash_str(m->v[i].stack) & (n - 1);
        while (slot[j]) j = (j + 1) & (n - 1);
        slot[j] = i + 1;
    }
    weft__free(m->slot, m->nslot * sizeof *m->slot);
    m->slot = slot, m->nslot = n;
    return true;
}

/* Adds ticks to the line of `stack`, creating it.  False when out of memory. */
static bool flines_add(flines *m, const char *stack, size_t len, int64_t ticks) {
    if ((m->n + 1) * 2 > m->nslot && !flines_rehash(m)) return false;
    size_t j = (size_t)hash_str(stack) & (m->nslot - 1);
    for (; m->slot[j]; j = (j + 1) & (m->nslot - 1)) {
        fline *l = &m->v[m->slot[j] - 1];
        if (strcmp(l->stack, stack) == 0) return l->ticks += ticks, true;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        fline *v = weft__realloc(m->v, m->cap * sizeof *v, cap * sizeof *v);
        if (!v) return false;
        m->v = v, m->cap = cap;
    }
    char *copy = weft__alloc(len + 1);
    if (!copy) return false;
    memcpy(copy, stack, len + 1);
    m->v[m->n] = (fline){ copy, len + 1, ticks };
    m->slot[j] = ++m->n;
    return true;
}

static void flines_free(flines *m) {
    for (size_t i = 0; i < m->n; i++) weft__free(m->v[i].stack, m->v[i].bytes);
    weft__free(m->v, m->cap * sizeof *m->v);
    weft__free(m->slot, m->nslot * sizeof *m->slot);
}

static int by_stack(const void *pa, const void *pb) {
    return strcmp(((const fline *)pa)->stack, ((const fline *)pb)->stack);
}

/* ---- the writer ------------------------------------------------------------------ */

/* The options' own check: a count with no array is a caller's slip (the
 * names it meant to give would silently not appear). */
static weft_status check_options(const char *call, const weft_folded_options *opt) {
    if (opt && !opt->taskflows && opt->ntaskflows)
        return weft__fail(call, WEFT_EINVAL, "opt->taskflows is NULL but opt->ntaskflows is %zu", opt->ntaskflows);
    return WEFT_OK;
}

/* The distinct stacks of ex's profile with their self times, sorted.  WEFT_OK
 * or WEFT_ENOMEM (m then holds what it held, to free), the message naming fn,
 * the public call (docs/errors.md, R3: not "weft_profiler_write_folded/
 * flame_svg"). */
static weft_status build_lines(const char *fn, const weft_executor *ex, const weft_folded_options *opt, flines *m) {
    const struct weft__obs *o = weft__obs_state_get(ex);
    if (!o) return WEFT_OK;
    fspans a = { 0 };
    weft__spans_for_each(o, collect, &a);
    idents t = { .opt = opt };
    strbuf b = { 0 };
    weft_status st = a.oom ? WEFT_ENOMEM : WEFT_OK;
    if (st == WEFT_OK) {
        find_top_graphs(&a);
        find_nesting(&a);
    }
    char root[48];
    snprintf(root, sizeof root, "executor %u", o->seq);
    for (size_t i = 0; i < a.n && st == WEFT_OK; i++) {
        b.len = 0;
        sb_frame(&b, root);
        if (opt && opt->per_worker) {
            char wbuf[32];
            snprintf(wbuf, sizeof wbuf, "worker %u", a.v[i].worker);
            sb_frame(&b, wbuf);
        }
        stack_of(&b, o, &t, &a, i);
        /* t.oom: a frame got the number 0, no taskflow's: out of memory, not
         * a wrong stack written with WEFT_OK. */
        if (b.oom || t.oom || !flines_add(m, b.p, b.len, a.v[i].self)) st = WEFT_ENOMEM;
    }
    weft__free(b.p, b.cap);
    weft__free(t.v, t.cap * sizeof *t.v);
    weft__free(a.v, a.cap * sizeof *a.v);
    if (st == WEFT_OK && m->n > 1) qsort(m->v, m->n, sizeof *m->v, by_stack);
    return st == WEFT_OK ? WEFT_OK : weft__fail_st(fn, st);
}

static void put_ascii(FILE *out, unsigned char c) { fputc(c, out); }

weft_status weft_profiler_write_folded(const weft_executor *ex, const weft_folded_options *opt, FILE *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    if (check_options(__func__, opt) != WEFT_OK) return WEFT_EINVAL;
    flines m = { 0 };
    weft_status st = build_lines(__func__, ex, opt, &m);
    const struct weft__obs *o = weft__obs_state_get(ex); /* set: build_lines found lines in it */
    for (size_t i = 0; i < m.n && st == WEFT_OK; i++) {
        int64_t ticks = m.v[i].ticks > 0 ? m.v[i].ticks : 0;
        uint64_t ns = (uint64_t)(weft__ticks_ns(o, (uint64_t)ticks) + 0.5);
        /* Every stack that ran keeps its line: a task of a batch of short ones
         * still open (its worker has not yet gone idle) has a provisional time
         * that may round to 0 ns, and dropping it hid the task (seen: a
         * module's one task, 7 exports in 100 right after the run). */
        if (!ns) ns = 1;
        weft__put_utf8(out, m.v[i].stack, put_ascii);
        fprintf(out, " %" PRIu64 "\n", ns);
    }
    flines_free(&m);
    return st == WEFT_OK ? weft__obs_finish_write(out, __func__) : st;
}

/* ---- a self-contained SVG flame graph -------------------------------------------- */

enum { SVG_WIDTH = 1200, SVG_ROW = 17, SVG_TOP = 30, SVG_MAX_DEPTH = 64 };

typedef struct svg_ctx {
    FILE *out;
    const struct weft__obs *o;
    double px_per_tick, total;
    unsigned height; /* pixels */
} svg_ctx;

/* A warm colour from the frame's text, stable from one graph to the next. */
static void frame_colour(const char *s, size_t len, unsigned rgb[3]) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    rgb[0] = 205 + (unsigned)(h % 50);
    rgb[1] = 80 + (unsigned)((h >> 8) % 150);
    rgb[2] = (unsigned)((h >> 16) % 55);
}

/* One frame: `len` bytes of `name` at depth d, from x0 to x1 (ticks). */
static void svg_frame(const svg_ctx *c, const char *name, size_t len, unsigned d, double x0, double x1) {
    double x = x0 * c->px_per_tick, w = (x1 - x0) * c->px_per_tick;
    if (w < 0.1) return; /* too thin to see */
    char text[256];
    size_t n = len < sizeof text - 1 ? len : sizeof text - 1;
    memcpy(text, name, n);
    text[n] = '\0';
    unsigned rgb[3];
    frame_colour(name, len, rgb);
    double ns = weft__ticks_ns(c->o, (uint64_t)(x1 - x0));
    fputs("<g><title>", c->out);
    weft__put_html(c->out, text);
    fputs(" (", c->out);
    weft__put_duration(c->out, ns, "&#181;s");
    fprintf(c->out, ", %.2f%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\"/>",
            100.0 * (x1 - x0) / c->total, x, c->height - (d + 1) * SVG_ROW, w, SVG_ROW - 1, rgb[0], rgb[1], rgb[2]);
    size_t fit = w > 12 ? (size_t)((w - 6) / 6.5) : 0; /* characters that fit at 11 px */
    if (fit >= 3) {
        if (n > fit) memcpy(text + fit - 2, "..", 3);
        fprintf(c->out, "<text x=\"%.2f\" y=\"%u\">", x + 3, c->height - (d + 1) * SVG_ROW + 12);
        weft__put_html(c->out, text);
        fputs("</text>", c->out);
    }
    fputs("</g>\n", c->out);
}

/* Frames of a sorted line: start offsets and lengths, up to SVG_MAX_DEPTH. */
static unsigned split_frames(const char *s, size_t start[], size_t len[]) {
    unsigned n = 0;
    size_t i = 0;
    while (n < SVG_MAX_DEPTH) {
        size_t j = i;
        while (s[j] && s[j] != ';') j++;
        start[n] = i, len[n] = j - i, n++;
        if (!s[j]) break;
        i = j + 1;
    }
    return n;
}

/* Lines sorted by stack keep every frame's lines together: each frame is one
 * rectangle, from where its prefix first appears to where it stops. */
static void svg_frames(const svg_ctx *c, const flines *m) {
    size_t ps[SVG_MAX_DEPTH], pl[SVG_MAX_DEPTH], cs[SVG_MAX_DEPTH], cl[SVG_MAX_DEPTH];
    double x0[SVG_MAX_DEPTH], x = 0;
    unsigned pn = 0;
    const char *prev = "";
    for (size_t i = 0; i <= m->n; i++) {
        const char *cur = i < m->n ? m->v[i].stack : "";
        if (i < m->n && m->v[i].ticks <= 0) continue;
        unsigned cn = i < m->n ? split_frames(cur, cs, cl) : 0, common = 0;
        while (common < pn && common < cn && pl[common] == cl[common] &&
               memcmp(prev + ps[common], cur + cs[common], cl[common]) == 0)
            common++;
        for (unsigned d = pn; d-- > common;) svg_frame(c, prev + ps[d], pl[d], d, x0[d], x);
        for (unsigned d = common; d < cn; d++) x0[d] = x;
        if (i == m->n) break;
        x += (double)m->v[i].ticks;
        memcpy(ps, cs, cn * sizeof *cs);
        memcpy(pl, cl, cn * sizeof *cl);
        pn = cn, prev = cur;
    }
}

weft_status weft_profiler_write_flame_svg(const weft_executor *ex, const weft_folded_options *opt, FILE *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    if (check_options(__func__, opt) != WEFT_OK) return WEFT_EINVAL;
    flines m = { 0 };
    weft_status st = build_lines(__func__, ex, opt, &m);
    if (st != WEFT_OK) return flines_free(&m), st;
    double total = 0;
    unsigned depth = 1;
    size_t s0[SVG_MAX_DEPTH], l0[SVG_MAX_DEPTH];
    for (size_t i = 0; i < m.n; i++) {
        if (m.v[i].ticks <= 0) continue;
        total += (double)m.v[i].ticks;
        unsigned d = split_frames(m.v[i].stack, s0, l0);
        if (d > depth) depth = d;
    }
    svg_ctx c = { out, weft__obs_state_get(ex), total > 0 ? SVG_WIDTH / total : 0, total > 0 ? total : 1,
                  SVG_TOP + depth * SVG_ROW };
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
                 "font-family=\"monospace\" font-size=\"11\">\n"
                 "<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf8\"/>\n"
                 "<text x=\"%d\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">Flame graph: busy time ",
            SVG_WIDTH, c.height, SVG_WIDTH, c.height, SVG_WIDTH / 2);
    weft__put_duration(out, c.o ? weft__ticks_ns(c.o, (uint64_t)total) : 0, "&#181;s");
    fputs(" (hover a frame for its time)</text>\n", out);
    if (total > 0) svg_frames(&c, &m);
    fputs("</svg>\n", out);
    flines_free(&m);
    return weft__obs_finish_write(out, __func__);
}
