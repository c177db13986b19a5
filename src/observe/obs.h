/* Observability state of one executor: metrics, profiler spans, the observer.
 * Internal to src/observe/.
 *
 * Ownership: ex->obs_state owns one weft__obs for the executor's life (allocated
 * at create when anything is configured, or by the first enable call).  ex->obs
 * points to it only while something is on, which is what the hooks test.
 * Each worker owns one weft__obs_worker (its own cache lines): only that worker
 * writes it; counters are atomics written with relaxed load + store and read by
 * anyone; span buffers are plain memory, read only when no run is in flight. */
#ifndef WEFT_OBSERVE_OBS_H
#define WEFT_OBSERVE_OBS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/executor.h"
#include "observe/hooks.h"
#include "weft/observe.h"

enum { WEFT__SPAN_TASK = 0, WEFT__SPAN_PARK = 1, WEFT__SPAN_STEAL = 2 };
#define WEFT__SPAN_CHUNK 4096
#define WEFT__DEFAULT_MAX_SPANS ((size_t)1 << 20)

/* One recorded event.  `node` is an identity only (matched against a live
 * taskflow by the DOT writer), never dereferenced after the task ran: the name
 * was interned when the span was recorded. */
typedef struct weft__span {
    uint64_t begin, end; /* ticks; equal for an instant (steal) */
    const void *node;
    uint32_t run;   /* run id (low 32 bits) */
    uint32_t index; /* task index; for a steal, the victim + 1 (0: injector) */
    uint32_t name;  /* 0: unnamed, else 1 + index into the worker's name table */
    uint8_t kind;   /* WEFT__SPAN_* */
    uint8_t failed;
} weft__span;

typedef struct weft__span_chunk {
    struct weft__span_chunk *next;
    weft__span span[WEFT__SPAN_CHUNK];
} weft__span_chunk;

/* Interned task names of one worker: an open-addressing table keyed by the name
 * pointer, each entry checked against the live string (a freed name's address can
 * come back with other text). */
typedef struct weft__names {
    const char **key; /* name pointer seen */
    uint32_t *id;     /* 1 + index into copy */
    size_t cap;       /* power of two, or 0 */
    char **copy;      /* owned copies, in id order */
    size_t n, copy_cap;
} weft__names;

/* A task in progress.  A task that waits (weft_run_and_wait, a future) runs other
 * tasks meanwhile, so a worker has a stack of them. */
#define WEFT__OBS_DEPTH 16
typedef struct weft__obs_frame {
    _Atomic(const void *) node; /* read (relaxed) by the state dump */
    _Atomic(const void *) run;
    uint64_t begin; /* ticks */
    uint64_t child; /* ticks spent in nested tasks (not this task's busy time) */
} weft__obs_frame;

typedef struct weft__obs_worker {
    /* Tasks in progress: written by the owner, read (relaxed) by the state dump.
     * depth may exceed WEFT__OBS_DEPTH; deeper tasks are counted, not timed. */
    _Alignas(WEFT__CACHE_LINE) _Atomic unsigned depth;
    weft__obs_frame frame[WEFT__OBS_DEPTH];
    uint64_t park_begin;
    /* End of the last task this worker finished (ticks), and the worker's job
     * count (weft__worker_stats.jobs) at that moment, or UINT64_MAX for none.  A task that
     * starts in the very next job begins its span there, so a worker running
     * tasks back to back reads the clock once per task, not twice. */
    uint64_t mark, mark_job;
    /* 1 while the owner writes a steal or park span: those come from an idle
     * worker at any time, so a reader of the spans pauses the profiler and waits
     * for this to clear (weft__spans_for_each). */
    _Atomic int idle_writing;
    /* Task metrics (relaxed load + store by the owner). */
    _Atomic uint64_t tasks, failed, skipped, busy_ticks;
    _Atomic uint64_t hist[WEFT_METRICS_BUCKETS];
    /* Spans: chunks head..cur are in use (cur holds `used`), later ones spare. */
    weft__span_chunk *head, *cur;
    uint32_t used;   /* spans in cur */
    /* Spans that may still go into cur without a check (chunk end and the
     * max_spans bound both respected): the task path's fast case. */
    uint32_t room;
    size_t cur_idx;  /* chunks in use, cur included (0: none) */
    size_t nchunks;  /* chunks allocated */
    _Atomic uint64_t recorded, dropped; /* task spans */
    weft__names names;
} weft__obs_worker;

struct weft__obs {
    weft_executor *ex;
    unsigned nworkers;
    weft__obs_worker *w;
    size_t w_bytes;
    weft_observer observer;
    bool has_observer;
    _Atomic bool metrics_on, profile_on;
    _Atomic uint64_t metrics_t0, profile_t0; /* ticks when enabled */
    double ns_per_tick;
    uint64_t ns_mul; /* ns = ticks * ns_mul >> 20, the histogram's cheap conversion */
    size_t max_spans; /* per worker */
    char *save_path;  /* WEFT_PROFILE, or NULL */
};

/* ---- obs.c ---- */
/* The state of ex, allocated on first use.  NULL when out of memory. */
struct weft__obs *weft__obs_state(weft_executor *ex);
/* Points ex->obs at the state iff something is on. */
void weft__obs_publish(struct weft__obs *o);

/* ---- spans.c ---- */
/* Owner only: a slot for one more span, or NULL (limit reached or out of memory:
 * counted as dropped for task spans). */
weft__span *weft__span_slot(struct weft__obs *o, weft__obs_worker *ow, bool task);
/* Owner (or anyone while quiescent): the interned id of a task name, 0 if unnamed
 * or out of memory. */
uint32_t weft__name_intern(weft__names *t, const char *name);
/* Empties the buffers, keeping the chunks. */
void weft__spans_clear(weft__obs_worker *ow);
/* Stops recording (profile_on false) and waits until no idle worker is writing a
 * steal or park span; returns whether recording was on.  Task spans are written
 * only during runs: callers touch the buffers while no run is in flight. */
bool weft__spans_pause(struct weft__obs *o);

/* The task path's slot: the fast case inline, the rest in weft__span_slot. */
static inline weft__span *weft__span_task_slot(struct weft__obs *o, weft__obs_worker *ow) {
    if (__builtin_expect(ow->room == 0, 0)) return weft__span_slot(o, ow, true);
    ow->room--;
    weft__stat_inc(&ow->recorded);
    return &ow->cur->span[ow->used++];
}
void weft__spans_free(weft__obs_worker *ow);
/* Calls fn(span, ow, arg) for every recorded span of every worker, until it
 * returns false. */
typedef bool (*weft__span_visit_fn)(const weft__span *s, unsigned worker, void *arg);
void weft__spans_for_each(const struct weft__obs *o, weft__span_visit_fn fn, void *arg);
/* The label of a task span into buf: its interned name or "#index". */
const char *weft__span_label(const struct weft__obs *o, unsigned worker, const weft__span *s, char *buf,
                             size_t len);

/* ---- metrics.c ---- */
/* Duration histogram bucket of a duration in ns. */
static inline unsigned weft__hist_bucket(uint64_t ns) {
    if (ns < 2) return 0;
    unsigned b = 63u - (unsigned)__builtin_clzll(ns);
    return b < WEFT_METRICS_BUCKETS ? b : WEFT_METRICS_BUCKETS - 1;
}
void weft__obs_reset_counters(struct weft__obs *o);

/* ---- text helpers (text.c) ---- */
/* Writes s escaped for a JSON string (also fine in DOT and HTML attribute text
 * after html escaping, see below). */
void weft__put_json_str(FILE *out, const char *s);
/* Writes s escaped for HTML text and attributes. */
void weft__put_html(FILE *out, const char *s);
/* Writes s escaped for a DOT double-quoted string. */
void weft__put_dot_str(FILE *out, const char *s);
/* A duration in ns as "812 ns", "3.25 <micro>", "1.50 ms" or "2.00 s"; micro
 * is how the output format spells microseconds ("us", "&micro;s"). */
void weft__put_duration(FILE *out, double ns, const char *micro);
/* fflush + ferror: WEFT_OK or WEFT_ESYS. */
weft_status weft__obs_finish_write(FILE *out);
/* Ticks -> ns with the state's calibration. */
static inline double weft__ticks_ns(const struct weft__obs *o, uint64_t ticks) { return (double)ticks * o->ns_per_tick; }

#endif
