/* Chrome Trace Event JSON (the format Perfetto and chrome://tracing open):
 *   {"traceEvents":[ ...metadata..., {"name":..,"cat":"task","ph":"X","ts":..,
 *    "dur":..,"pid":<process id>,"tid":<executor * 10000 + worker>,
 *    "args":{"run":..,"index":..}}, ... ], "displayTimeUnit":"ns","otherData":{...}}
 * Times are microseconds (with ns decimals) since the profiler started.  The
 * pid is the process's and each executor has its own range of tids, so traces
 * of several executors or processes can be merged into one. */
#include "observe/obs.h"
#include "platform/platform.h"
#include "core/error_detail.h"

#include <inttypes.h>

struct json_ctx {
    const struct weft__obs *o;
    FILE *out;
    uint64_t t0;
    unsigned pid;
};

/* Nanoseconds since the profiler started (0 for an earlier time, which no
 * span holds: parks are recorded from the start, task_hooks.c). */
static uint64_t ns_since(const struct json_ctx *c, uint64_t t) {
    return t > c->t0 ? (uint64_t)(weft__ticks_ns(c->o, t - c->t0) + 0.5) : 0;
}

/* A time in microseconds with ns digits, from integer ns: a span that ends where
 * the next begins (same ticks) prints the very same number for both, so
 * viewers never see two tasks of one worker overlap by a rounding error. */
static void put_us(FILE *out, const char *key, uint64_t ns) {
    fprintf(out, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static void put_times(const struct json_ctx *c, const weft__span *s) {
    uint64_t b = ns_since(c, s->begin), e = ns_since(c, s->end);
    put_us(c->out, "ts", b);
    put_us(c->out, "dur", e > b ? e - b : 0);
}

/* A work span: named after its kind, with what identifies it in args. */
static void put_work(const struct json_ctx *c, const weft__span *s) {
    FILE *out = c->out;
    char buf[24];
    fprintf(out, "\"%s\",\"cat\":\"%s\",\"ph\":\"X\"", weft__span_label(c->o, 0, s, buf, sizeof buf),
            weft__span_category(s));
    put_times(c, s);
    switch (s->kind - WEFT__SPAN_WORK) {
    case WEFT__WORK_STAGE:
        fprintf(out, ",\"args\":{\"pipeline\":\"%p\",\"stage\":%" PRIu32 ",\"token\":%" PRIu32, s->tf, s->index, s->run);
        break;
    case WEFT__WORK_CHUNK:
        fprintf(out, ",\"args\":{\"fn\":\"%p\",\"job\":%" PRIu32 ",\"jobs\":%" PRIu32, s->tf, s->index, s->run);
        break;
    default:
        fprintf(out, ",\"args\":{\"fn\":\"%p\"", s->tf);
    }
    fprintf(out, "%s%s}", (s->failed & WEFT__SPAN_FAILED) ? ",\"failed\":true" : "", s->nested ? ",\"nested\":true" : "");
}

static bool put_span(const weft__span *s, unsigned w, void *arg) {
    struct json_ctx *c = arg;
    FILE *out = c->out;
    char buf[24];
    fputs(",\n{\"name\":", out);
    if (s->kind == WEFT__SPAN_TASK) {
        weft__put_json_str(out, weft__span_label(c->o, w, s, buf, sizeof buf));
        fputs(",\"cat\":\"task\",\"ph\":\"X\"", out);
        put_times(c, s);
        /* A share of a batch; of one that held a long task, a share that says
         * nothing of this task's time. */
        fprintf(out, ",\"args\":{\"run\":%" PRIu32 ",\"index\":%" PRIu32 "%s%s%s}", s->run, s->index,
                (s->failed & WEFT__SPAN_FAILED) ? ",\"failed\":true" : "", s->estimated ? ",\"estimated\":true" : "",
                s->estimated == WEFT__EST_LONG ? ",\"batch_held_long_task\":true" : "");
    } else if (s->kind == WEFT__SPAN_RECORDING) {
        /* A GPU task's recording: named after its task, on the worker that ran it. */
        weft__put_json_str(out, weft__span_label(c->o, w, s, buf, sizeof buf));
        fputs(",\"cat\":\"gpu recording\",\"ph\":\"X\"", out);
        put_times(c, s);
        fprintf(out, ",\"args\":{\"run\":%" PRIu32 ",\"index\":%" PRIu32 "%s}", s->run, s->index,
                s->nested ? ",\"nested\":true" : "");
    } else if (s->kind >= WEFT__SPAN_WORK) {
        put_work(c, s);
    } else if (s->kind == WEFT__SPAN_PARK) {
        fputs("\"parked\",\"cat\":\"park\",\"ph\":\"X\"", out);
        put_times(c, s);
    } else {
        fputs("\"steal\",\"cat\":\"steal\",\"ph\":\"i\",\"s\":\"t\"", out);
        put_us(out, "ts", ns_since(c, s->begin));
        if (s->index) fprintf(out, ",\"args\":{\"victim\":%" PRIu32 "}", s->index - 1);
        else fputs(",\"args\":{\"victim\":\"injector\"}", out);
    }
    fprintf(out, ",\"pid\":%u,\"tid\":%" PRIu64 "}", c->pid, weft__trace_tid(c->o, w));
    return true;
}

/* The metadata: the process's name, and each worker's track named after its
 * executor (sorted by executor, then worker). */
static void put_metadata(FILE *out, const struct weft__obs *o, unsigned workers, unsigned pid) {
    unsigned seq = o ? o->seq : 0;
    fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"weft (pid %u)\"}}", pid,
            pid);
    for (unsigned w = 0; w < workers; w++) {
        uint64_t tid = weft__trace_tid(o, w);
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%" PRIu64
                     ",\"args\":{\"name\":\"executor %u worker %u\"}}", pid, tid, seq, w);
        fprintf(out, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%" PRIu64
                     ",\"args\":{\"sort_index\":%" PRIu64 "}}", pid, tid, tid);
    }
}

weft_status weft_profiler_write_json(const weft_executor *ex, FILE *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    const struct weft__obs *o = weft__obs_state_get(ex);
    unsigned pid = weft__process_id();
    fputs("{\"traceEvents\":[\n", out);
    put_metadata(out, o, ex->nworkers, pid);
    uint64_t spans = 0, dropped = 0;
    if (o) {
        struct json_ctx c = { o, out, atomic_load_explicit(&((struct weft__obs *)o)->profile_t0, memory_order_relaxed),
                              pid };
        weft__spans_for_each(o, put_span, &c);
        (void)weft_profiler_count(ex, &spans, &dropped);
    }
    fprintf(out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"weft\",\"workers\":%u,"
                 "\"executor\":%u,\"task_spans\":%" PRIu64 ",\"dropped_spans\":%" PRIu64 "}}\n",
            ex->nworkers, o ? o->seq : 0, spans, dropped);
    return weft__obs_finish_write(out, __func__);
}

weft_status weft_profiler_count(const weft_executor *ex, uint64_t *spans, uint64_t *dropped) {
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    uint64_t s = 0, d = 0;
    const struct weft__obs *o = weft__obs_state_get(ex);
    for (unsigned i = 0; o && i < o->nworkers; i++) {
        s += atomic_load_explicit(&((weft__obs_worker *)&o->w[i])->recorded, memory_order_relaxed);
        d += atomic_load_explicit(&((weft__obs_worker *)&o->w[i])->dropped, memory_order_relaxed);
    }
    if (spans) *spans = s;
    if (dropped) *dropped = d;
    return WEFT_OK;
}
