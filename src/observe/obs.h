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
#include "core/obs_hooks.h"
#include "weft/observe.h"

/* Span kinds.  WEFT__SPAN_WORK + k (k a weft__work of hooks.h) is work other
 * than a taskflow task: an async task, a fork-join root or stolen frame, an
 * algorithm's job, a pipeline stage call. */
enum { WEFT__SPAN_TASK = 0, WEFT__SPAN_PARK = 1, WEFT__SPAN_STEAL = 2, WEFT__SPAN_BATCH = 3, WEFT__SPAN_NONE = 4,
       WEFT__SPAN_WORK = 5 };
/* A GPU task's recording (its fn and event, gpu/task.c): busy time of its
 * worker but no run of the task (the task's own span, at its outcome, is
 * that).  tf, run, index and name are the task's, as in its task span.  Its
 * frame (while it runs) holds work WEFT__WORK_RECORDING. */
#define WEFT__WORK_RECORDING WEFT__WORK_KINDS
#define WEFT__SPAN_RECORDING (WEFT__SPAN_WORK + WEFT__WORK_RECORDING)
#define WEFT__SPAN_CHUNK 4096
#define WEFT__DEFAULT_MAX_SPANS ((size_t)1 << 20)

/* One recorded event.  `tf` is an identity only (matched against a live
 * taskflow by the DOT writer), never dereferenced after the task ran: the name
 * was interned when the span was recorded.  For a work span (WEFT__SPAN_WORK +
 * k) `tf` is what the work ran (the function, the pipeline), `index` and `run`
 * say which part (weft__work in hooks.h). */
typedef struct weft__span {
    uint64_t begin, end; /* ticks; equal for an instant (steal) */
    const void *tf;      /* the task's taskflow */
    uint32_t run;   /* run id (low 32 bits) */
    uint32_t index; /* task index; for a steal, the victim + 1 (0: injector) */
    uint32_t name;  /* 0: unnamed, else 1 + index into the worker's name table */
    uint8_t kind;   /* WEFT__SPAN_* */
    /* WEFT__SPAN_FAILED: the task or work returned non-zero.  For a task (and
     * a GPU recording, and a batch header for all its tasks)
     * WEFT__SPAN_INNER too: its graph is a subflow's or module's nested in the
     * run, not the run's own taskflow (flame.c finds the run's taskflow by it:
     * the earliest span's graph was a module body's when the module task came
     * first).  Test with the masks, never as a bool. */
    uint8_t failed;
    /* Begin and end shared out over a batch (task_hooks.c): 1, or WEFT__EST_LONG when
     * that batch held a task that ran long (the share says nothing then). */
    uint8_t estimated;
    union {
        uint8_t narrow; /* batch header: its entries are bare indices */
        uint8_t nested; /* task and work spans: ran inside another span of its worker */
    };
} weft__span;

#define WEFT__SPAN_FAILED 1u
#define WEFT__SPAN_INNER 2u

/* WEFT__SPAN_INNER when run r is a nested run (a subflow's or module's graph),
 * else 0. */
#define WEFT__SPAN_INNER_OF(r) ((r)->role != WEFT__ROLE_TOP ? WEFT__SPAN_INNER : 0u)

/* A span of something run (a taskflow task or other work), not a park or
 * steal, nor a GPU task's recording (counted with its task's run). */
static inline bool weft__span_is_run(const weft__span *s) {
    return s->kind == WEFT__SPAN_TASK || (s->kind >= WEFT__SPAN_WORK && s->kind < WEFT__SPAN_RECORDING);
}

/* A span of busy time: a run, or a GPU task's recording. */
static inline bool weft__span_is_busy(const weft__span *s) {
    return weft__span_is_run(s) || s->kind == WEFT__SPAN_RECORDING;
}

/* A batch of short tasks (task_hooks.c) is stored compactly: a header slot (a
 * weft__span of kind WEFT__SPAN_BATCH whose `index` is the number of tasks so
 * far, `name` the provisional ticks per task, `end` 0 while the batch is open)
 * followed by one entry per task: an (index, name) pair, or, when the
 * taskflow names no task (`narrow` set in the header), the index alone.  The top bit of a pair's name, or of a narrow index, is the task's
 * failure (narrow batches only hold taskflows of under 2^31 tasks).  Readers
 * see one ordinary task span per entry (weft__spans_for_each). */
typedef struct weft__span_pair {
    uint32_t index, name;
} weft__span_pair;
#define WEFT__PAIR_FAILED 0x80000000u
/* The name id of a named task whose name the worker's table could not take
 * (out of memory): labelled WEFT__NAME_LOST_LABEL, not "#index" as if it had
 * none.  Below WEFT__PAIR_FAILED, above any id a table hands out. */
#define WEFT__NAME_LOST 0x7fffffffu
#define WEFT__NAME_LOST_LABEL "(name lost: out of memory)"
#define WEFT__PAIRS_PER_SLOT (sizeof(weft__span) / sizeof(weft__span_pair))
#define WEFT__NARROW_PER_SLOT (sizeof(weft__span) / sizeof(uint32_t))

typedef union weft__span_slot {
    weft__span span;
    weft__span_pair pair[WEFT__PAIRS_PER_SLOT];
    uint32_t narrow[WEFT__NARROW_PER_SLOT];
} weft__span_slot;

typedef struct weft__span_chunk {
    struct weft__span_chunk *next;
    weft__span_slot slot[WEFT__SPAN_CHUNK];
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

/* Tasks per batch of back-to-back short tasks timed with one clock read (task_hooks.c).
 * A batch's open and close (a slow begin, the header, the clock read) cost
 * about as much as five batched tasks: at 20 they were 9% of
 * binary_tree_profiled_rerun's samples. */
#define WEFT__BATCH 40
/* Slots a batch takes: its header and its entries (pairs, or narrow indices). */
#define WEFT__BATCH_SLOTS (1 + (WEFT__BATCH + WEFT__PAIRS_PER_SLOT - 1) / WEFT__PAIRS_PER_SLOT)
#define WEFT__NARROW_SLOTS (1 + (WEFT__BATCH + WEFT__NARROW_PER_SLOT - 1) / WEFT__NARROW_PER_SLOT)
/* Slots of the batch whose header is h. */
#define WEFT__BATCH_SLOTS_OF(h) ((h)->narrow ? WEFT__NARROW_SLOTS : WEFT__BATCH_SLOTS)
/* Tasks are batched while the last stretch averaged less than this (ns): the
 * clock read they save is then over ~4% of their time. */
#define WEFT__BATCH_MAX_NS 250.0
/* A frame's begin while the task is part of the open batch (its start is the
 * worker's mark, the end of the batch's last task). */
#define WEFT__BEGIN_BATCHED UINT64_MAX
/* A batch whose time exceeds what its tasks were expected to take by more
 * than this (ns) held a task that ran long: its spans are marked
 * WEFT__EST_LONG and its tasks become suspects, never batched again (task_hooks.c).
 * Any other estimated span stands for a task that took less.
 * Well above what a batch's own hiccups cost (a page fault, a name copied, a
 * span chunk allocated: microseconds), so that those do not stop batching. */
#define WEFT__BATCH_LONG_NS 50000.0
#define WEFT__EST_LONG 2
/* Suspects (task_hooks.c): exact keys (at most half of the slots ever filled),
 * and a bitmap by (taskflow, index) the fast path tests. */
#define WEFT__SUSPECTS 256
#define WEFT__SUSPECT_BITS 65536

/* A batch's entries lie end to end over the slots after its header (each
 * slot's array fills it exactly), so entry i is element i of a flat array: no
 * division by 5 or 10 on the task path (~8 instructions per batched task). */
_Static_assert(WEFT__NARROW_PER_SLOT * sizeof(uint32_t) == sizeof(weft__span) &&
                   WEFT__PAIRS_PER_SLOT * sizeof(weft__span_pair) == sizeof(weft__span),
               "a batch's entries fill its slots");
static inline uint32_t *weft__batch_narrow(const weft__span *h) {
    return (uint32_t *)(void *)((union weft__span_slot *)(uintptr_t)h + 1);
}
static inline weft__span_pair *weft__batch_pairs(const weft__span *h) {
    return (weft__span_pair *)(void *)((union weft__span_slot *)(uintptr_t)h + 1);
}

/* Entry i of the batch whose header is h: the task's index, its name id and
 * whether it failed. */
static inline void weft__batch_entry(const weft__span *h, uint32_t i, uint32_t *index, uint32_t *name, bool *failed) {
    uint32_t x, id = 0;
    if (h->narrow) { /* the index, with the failure in its top bit */
        x = weft__batch_narrow(h)[i];
    } else {
        const weft__span_pair *p = &weft__batch_pairs(h)[i];
        x = p->index | (p->name & WEFT__PAIR_FAILED);
        id = p->name & ~WEFT__PAIR_FAILED;
    }
    *index = x & ~WEFT__PAIR_FAILED;
    *name = id;
    *failed = (x & WEFT__PAIR_FAILED) != 0;
}

/* A task in progress.  A task that waits (weft_run_and_wait, a future) runs other
 * tasks meanwhile, so a worker has a stack of them. */
#define WEFT__OBS_DEPTH 16
typedef struct weft__obs_frame {
    /* What the task path touches first, so that frame 0 shares the cache line
     * of `depth` (56 bytes after it). */
    _Atomic(const void *) node; /* read (relaxed) by the state dump; NULL for work */
    _Atomic(const void *) run;
    uint64_t begin; /* ticks */
    uint64_t child; /* ticks spent in nested tasks (not this task's busy time) */
    bool estimated; /* begin estimated (a batch closed under the running task) */
    /* Work other than a taskflow task (node NULL): its kind (weft__work, read by
     * the state dump), what it runs and which part, as in its span. */
    _Atomic uint8_t work;
    /* A suspect's task, timed alone (task_hooks.c): set by the begin's slow
     * path only, so stale after a batched begin (the end looks it up again). */
    bool suspect;
    uint32_t index, part;
    const void *id;
} weft__obs_frame;
_Static_assert(sizeof(weft__obs_frame) == 56, "frame 0 fits the line of depth");

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
    /* Batched timing (task_hooks.c).  Tasks at depth 0 that follow each other with no
     * gap, while they are short, end without a clock read: they join the open
     * batch, which one clock read closes every WEFT__BATCH tasks (or at a gap)
     * and whose time is shared out evenly among them.  Owner only. */
    uint32_t batch_n;      /* tasks ended in the open batch; 0: none open */
    uint32_t batch_bucket; /* histogram bucket their counts went to for now */
    uint32_t batch_epoch;  /* o->span_epoch when the batch took its spans */
    uint32_t batch_mepoch; /* o->metrics_epoch when it opened (its tasks' counts) */
    uint32_t batch_cap;    /* spans its header has room for (0: none recorded) */
    bool batch_on;         /* the last timed stretch was short: batch on */
    bool batch_named;      /* the batch's taskflow has named tasks */
    bool batch_narrow;     /* its entries are bare indices (see weft__span_pair) */
    bool suspects_on;      /* o->nsuspects was non-zero at the last batch_open (task_hooks.c) */
    uint32_t batch_tfh;    /* suspect_tfh of batch_tf (task_hooks.c) */
    uint64_t batch_when;   /* suspect_when of its run when it opened (task_hooks.c) */
    uint64_t batch_begin;  /* ticks: start of the batch's first task */
    uint64_t batch_avg;    /* ticks per task of the last timed stretch */
    uint64_t batch_run;    /* run id of the batch's tasks (a batch holds one run) */
    const void *batch_tf;  /* and their taskflow (one too) */
    weft__span *batch_hdr; /* its header slot, NULL when its spans were dropped */
    /* Task metrics (relaxed load + store by the owner; skipped by fetch_add from
     * any thread, see weft__obs_task_skipped). */
    _Atomic uint64_t tasks, failed, skipped, busy_ticks;
    _Atomic uint64_t hist[WEFT_METRICS_BUCKETS];
    /* Spans: chunks head..cur are in use (cur holds `used`), later ones spare. */
    weft__span_chunk *head, *cur;
    uint32_t used;   /* spans in cur */
    /* Spans (and slots) that may still go into cur without a check (chunk end
     * and the max_spans bound both respected): the task path's fast case. */
    uint32_t room;
    uint64_t nspans; /* spans stored (a batch's counted per task); owner only */
    size_t cur_idx;  /* chunks in use, cur included (0: none) */
    /* Chunks allocated: written by the owner (load + store), read by
     * weft_executor_metrics on any thread, hence atomic (relaxed). */
    _Atomic size_t nchunks;
    _Atomic uint64_t recorded, dropped; /* task spans */
    weft__names names;
} weft__obs_worker;

struct weft__obs {
    weft__obs_head head; /* first: the hook table the core calls (core/obs_hooks.h) */
    weft_executor *ex;
    unsigned nworkers;
    weft__obs_worker *w;
    size_t w_bytes;
    weft_observer observer;
    bool has_observer;
    _Atomic bool metrics_on, profile_on;
    _Atomic bool metrics_by_profiler; /* weft_profiler_start turned metrics on: its stop turns them off */
    /* 1 while a reader walks or clears the span buffers (weft__spans_pause): a
     * batch closed then leaves its spans' provisional times.  span_epoch counts
     * clears, so that a batch never writes into a buffer cleared under it. */
    _Atomic int reading;
    _Atomic uint32_t span_epoch;
    /* Counts metric resets (weft_metrics_enable, weft_profiler_start): a batch
     * left open by the last run, closed by its idle worker after the reset,
     * must not add its tasks' time and histogram move to the new counts. */
    _Atomic uint32_t metrics_epoch;
    bool exact;             /* WEFT_PROFILE_EXACT / profile_exact: no batches */
    uint64_t batch_max;     /* ticks: a stretch averaging less is batched */
    uint64_t batch_long;    /* ticks: a batch over its expected time by this held a long task */
    unsigned seq;           /* this state's number in the process, from 1: trace tids */
    struct weft__obs *exit_next; /* on the at-exit list while save_path is set (lifetime.c) */
    unsigned exit_pid;      /* the process that put it there */
    bool saved;             /* the WEFT_PROFILE file was written */
    _Atomic uint64_t metrics_t0, profile_t0; /* ticks when enabled */
    _Atomic uint64_t metrics_t1; /* ticks when metrics went off, 0 while on (wall_ns ends there) */
    double ns_per_tick;
    uint64_t ns_mul; /* ns = ticks * ns_mul >> 20, the histogram's cheap conversion */
    size_t max_spans; /* per worker */
    /* Tasks found in a batch that held a long task and not yet found short
     * (task_hooks.c): (taskflow, index) keys, and one bit per key (modulo
     * WEFT__SUSPECT_BITS) for the fast path.  Cleared by weft_profiler_start. */
    _Atomic uint32_t nsuspects; /* live keys */
    _Atomic uint32_t nsuspect_slots; /* slots ever filled: live keys and tombstones */
    /* The keys' share of the slots ran out: from then on until the next start
     * a task whose bit is set is a suspect without a key (task_hooks.c). */
    _Atomic bool suspects_full;
    /* The run and iteration (suspect_when) every suspect was found in, when
     * that is one; 0 none yet, UINT64_MAX several. */
    _Atomic uint64_t suspects_when;
    _Atomic uint64_t suspect_bits[WEFT__SUSPECT_BITS / 64];
    _Atomic uint64_t suspect[WEFT__SUSPECTS];
    char *save_path;  /* WEFT_PROFILE, or NULL */
    struct weft__live *live; /* live statistics being published (live.c), or NULL */
};

/* mark_job of a worker with no usable mark: mark_job + 1 wraps to 0, and a
 * task's job count is at least 1. */
#define WEFT__OBS_NO_MARK UINT64_MAX

/* ---- lifetime.c ---- */
/* The state of ex, allocated on first use.  NULL when out of memory. */
struct weft__obs *weft__obs_state(weft_executor *ex);
/* Task metrics are being collected: asked for (metrics_on), or implicitly
 * while an observer or the profiler is on (weft/observe.h): whenever the
 * hooks run, they count.  weft_metrics.enabled, the live view's TASKS flag
 * and the end of the metrics' wall clock (metrics_t1) follow this, not
 * metrics_on alone. */
static inline bool weft__obs_collecting(const struct weft__obs *o) {
    return o->has_observer || atomic_load_explicit(&((struct weft__obs *)o)->metrics_on, memory_order_relaxed) ||
           atomic_load_explicit(&((struct weft__obs *)o)->profile_on, memory_order_relaxed);
}

/* The state of ex, or NULL if none was made yet.  Acquire: pairs with the
 * release CAS in weft__obs_state, as a state may be made on first use by one
 * thread (weft_metrics_enable) while another reads it (weft_executor_metrics,
 * which any thread may call). */
static inline struct weft__obs *weft__obs_state_get(const weft_executor *ex) {
    return __atomic_load_n(&ex->obs_state, __ATOMIC_ACQUIRE);
}
/* Points ex->obs at the state iff something is on. */
void weft__obs_publish(struct weft__obs *o);
/* The path the k-th executor (from 0) of a process writes for an environment
 * variable's `base`: base itself for k = 0, else ".k" before its ending
 * (run.json -> run.1.json; no ending: run -> run.1).  Truncated to cap. */
void weft__obs_nth_path(char *out, size_t cap, const char *base, unsigned k);

/* The files one such variable names (WEFT_PROFILE, WEFT_STATS), across
 * fork().  The owner, the process that loaded weft with the variable set or
 * else the first to claim it, keeps the plain names: base, base.1, ...  A
 * process made by fork() from it inherits both fields, so knows it is not the
 * owner and that the count is its parent's: it names its files
 * base.<pid>, base.<pid>.1, ... from its own count.  With one count for all,
 * parent and child both took base.1 and one replaced the other's file.  (Not
 * covered: a program that sets the variable itself and forks before it
 * claims: both processes think they own the names.) */
typedef struct weft__obs_names {
    _Atomic unsigned owner; /* process id (0: none yet) */
    _Atomic uint64_t count; /* process id << 32 | files numbered in it */
} weft__obs_names;
/* At load (a constructor): this process owns the names if `var` is set. */
void weft__obs_names_at_load(weft__obs_names *n, const char *var);
/* This process owns the names unless a process already does. */
void weft__obs_names_claim(weft__obs_names *n);
/* Numbers a new file (or set of files) of this process: 0, 1, ... */
unsigned weft__obs_names_next(weft__obs_names *n);
/* The path of the k-th file of this process for the variable's `base`. */
void weft__obs_names_path(const weft__obs_names *n, char *out, size_t cap, const char *base, unsigned k);

/* ---- log_json.c ---- */
/* A log entry's context from worker w's frames (core/log.h's context hook). */
void weft__obs_log_context(weft__worker *w, weft_log_entry *e);

/* ---- task_hooks.c ---- */
/* What the core calls (core/obs_hooks.h), set in every state. */
extern const weft__obs_hooks weft__obs_hook_table;
/* Forgets the tasks found running long inside batches (weft_profiler_start). */
void weft__obs_clear_suspects(struct weft__obs *o);

/* ---- spans.c ---- */
/* Owner only: k contiguous slots (k <= WEFT__BATCH_SLOTS) for room for `want`
 * more spans (1 for a span, WEFT__BATCH for a batch), or NULL (limit reached,
 * in slots or in spans, or out of memory; counted as dropped if count_drop).
 * The caller counts the spans it stores in nspans. */
weft__span *weft__span_slots(struct weft__obs *o, weft__obs_worker *ow, uint32_t k, uint32_t want,
                             bool count_drop);
/* Owner (or anyone while quiescent): the interned id of a task name, 0 if unnamed
 * or out of memory. */
uint32_t weft__name_intern(weft__names *t, const char *name);
/* Empties the buffers, keeping the chunks. */
void weft__spans_clear(weft__obs_worker *ow);
/* Stops recording (profile_on false) and waits until no idle worker is writing a
 * steal or park span; returns whether recording was on.  Task spans are written
 * only during runs: callers touch the buffers while no run is in flight. */
bool weft__spans_pause(struct weft__obs *o);
/* Ends a pause: reading off, and profiling back on if was_on. */
void weft__spans_resume(struct weft__obs *o, bool was_on);

/* The task path's slots: the fast case inline, the rest in weft__span_slots. */
static inline weft__span *weft__span_task_slots(struct weft__obs *o, weft__obs_worker *ow, uint32_t k,
                                               uint32_t want, bool count_drop) {
    if (__builtin_expect(ow->room < want, 0)) return weft__span_slots(o, ow, k, want, count_drop);
    ow->room -= want;
    weft__span *s = &ow->cur->slot[ow->used].span;
    ow->used += k;
    return s;
}
void weft__spans_free(weft__obs_worker *ow);
/* Calls fn(span, ow, arg) for every recorded span of every worker, until it
 * returns false. */
typedef bool (*weft__span_visit_fn)(const weft__span *s, unsigned worker, void *arg);
void weft__spans_for_each(const struct weft__obs *o, weft__span_visit_fn fn, void *arg);
/* The label of a task span: its interned name or "#index" (in buf); of a work
 * span, its kind ("async", "stage 2", ...).  buf holds 24 bytes or more. */
const char *weft__span_label(const struct weft__obs *o, unsigned worker, const weft__span *s, char *buf,
                             size_t len);
/* The trace category of a task or work span: "task", "async", "forkjoin",
 * "algo" or "pipeline". */
const char *weft__span_category(const weft__span *s);
/* Trace ids: this process's pid, and worker w's tid, distinct per executor
 * (its state's seq) so that traces of several executors merge cleanly. */
#define WEFT__TID_STRIDE 10000u
static inline uint64_t weft__trace_tid(const struct weft__obs *o, unsigned w) {
    return (uint64_t)(o ? o->seq : 0) * WEFT__TID_STRIDE + w;
}

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
/* fflush + ferror: WEFT_OK or WEFT_ESYS, the message naming fn (the public call). */
weft_status weft__obs_finish_write(FILE *out, const char *fn);
/* Ticks -> ns with the state's calibration. */
static inline double weft__ticks_ns(const struct weft__obs *o, uint64_t ticks) { return (double)ticks * o->ns_per_tick; }

#endif
