/* Structured logging, observe/'s part: the context of an entry (executor
 * number, task, run) from the worker's observation frames, and the JSON-lines
 * sink (weft_log_set_json). */
#include "observe/obs.h"
#include "core/log.h"
#include "core/utf8.h"
#include "graph/graph.h"
#include "platform/wallclock.h"

#include <inttypes.h>
#include <string.h>

/* The task's label outlives the context call: the entry is passed on after. */
static _Thread_local char task_label[64];

/* Copies a long name's first bytes into task_label, cut at a UTF-8 character
 * boundary (core/utf8.h): snprintf's cut at 63 bytes fell inside a
 * multi-byte character of a long non-ASCII name, and the entry callback got
 * invalid UTF-8 in weft_log_entry.task. */
static void copy_label(const char *label) { weft__utf8_copy(task_label, sizeof task_label, label); }

/* On the logging worker itself: its innermost task's frame, if one is timed. */
void weft__obs_log_context(weft__worker *w, weft_log_entry *e) {
    const struct weft__obs *o = weft__obs_state_get(w->ex);
    if (!o) return;
    e->executor_number = o->seq;
    if (!atomic_load_explicit(&w->ex->obs, memory_order_relaxed)) return; /* frames not kept */
    const weft__obs_worker *ow = &o->w[w->id];
    unsigned d = atomic_load_explicit((_Atomic unsigned *)&ow->depth, memory_order_relaxed);
    if (d == 0 || d > WEFT__OBS_DEPTH) return;
    const weft__obs_frame *f = &ow->frame[d - 1];
    const weft__node *n = atomic_load_explicit((_Atomic(const void *) *)&f->node, memory_order_relaxed);
    const weft__run *r = atomic_load_explicit((_Atomic(const void *) *)&f->run, memory_order_relaxed);
    if (!n) return; /* other work than a taskflow task */
    const char *label = weft__node_label(n, task_label, sizeof task_label);
    if (label != task_label) copy_label(label);
    e->task = task_label;
    if (r) e->run = r->top->id;
}

static const char *const level_names[] = { "off", "error", "warn", "info", "debug" };

static void json_entry(void *user, const weft_log_entry *e) {
    FILE *out = user;
    char when[40];
    weft__wall_format(e->time_ns, when, sizeof when);
    unsigned lv = (unsigned)e->level <= WEFT_LOG_DEBUG ? (unsigned)e->level : 0;
    flockfile(out); /* one line per entry, whatever the threads */
    fprintf(out, "{\"time\":\"%s\",\"level\":\"%s\"", when, level_names[lv]);
    if (e->executor_number) fprintf(out, ",\"executor\":%u", e->executor_number);
    if (e->worker >= 0) fprintf(out, ",\"worker\":%d", e->worker);
    if (e->task) {
        fputs(",\"task\":", out);
        weft__put_json_str(out, e->task);
    }
    if (e->run) fprintf(out, ",\"run\":%" PRIu64, e->run);
    fputs(",\"message\":", out);
    weft__put_json_str(out, e->message);
    fputs("}\n", out);
    fflush(out);
    funlockfile(out);
}

weft_status weft_log_set_json(FILE *out) {
    if (out) weft_log_set_entry_callback(json_entry, out);
    else weft_log_set_callback(NULL, NULL);
    return WEFT_OK;
}
