/* Live statistics (weft_stats_start): a thread per publishing executor copies
 * the counters the workers keep anyway (weft__worker_stats, the task metrics
 * when on) into a mapped block that weft-top reads and/or a Prometheus
 * textfile, every interval.  Nothing here runs on a worker.
 *
 * Busy time without task metrics is sampled: every SAMPLE_NS the thread reads
 * each worker's state (one relaxed load) and credits the time since its last
 * look to the workers it sees running.  Over a 250 ms interval that is 25
 * looks per worker, and a wake-up costs the process a few microseconds each. */
#include "observe/live.h"
#include "cancel/cancel.h"
#include "core/alloc.h"
#include "core/env.h"
#include "core/log.h"
#include "platform/mapfile.h"
#include "core/error_detail.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SAMPLE_NS 10000000u          /* between looks at the workers' states */
#define DEFAULT_INTERVAL_MS 250u

struct weft__live {
    weft_executor *ex;
    struct weft__obs *o;
    weft__mapfile map;       /* the live block, or zeroed */
    char *path, *prom_path;  /* owned copies, or NULL */
    uint64_t interval_ns, start_ns, updates, last_look;
    uint64_t *sampled;       /* per worker: ns seen running (sampled busy time) */
    uint64_t *words;         /* one refresh, laid out as the block */
    size_t nwords;
    char *text;              /* the textfile's buffer */
    size_t text_len, text_cap;
    bool text_failed;        /* out of memory while formatting */
    bool warned;             /* a refresh of the thread's failed (said once) */
    _Atomic uint32_t stop;   /* futex word: 1 asks the thread to end */
    weft__thread thread;
};

static bool tasks_on(const struct weft__obs *o) {
    return weft__obs_collecting(o);
}

/* ---- one refresh ------------------------------------------------------------------ */

static void fill_worker(struct weft__live *l, unsigned i, bool exact, uint64_t *line) {
    weft__worker *w = &l->ex->workers[i];
    const weft__worker_stats *st = &w->stats;
    int state = atomic_load_explicit((_Atomic int *)&st->state, memory_order_relaxed);
    line[WEFT_STATS_W_STATE] = state == WEFT__WSTATE_RUNNING  ? WEFT_STATS_RUNNING
                               : state == WEFT__WSTATE_PARKED ? WEFT_STATS_PARKED
                                                              : WEFT_STATS_SEARCHING;
    line[WEFT_STATS_W_STEALS] = weft__stat_read(&st->steals);
    line[WEFT_STATS_W_STEAL_FAILS] = weft__stat_read(&st->steal_fails);
    line[WEFT_STATS_W_PARKS] = weft__stat_read(&st->parks);
    line[WEFT_STATS_W_WAKEUPS] = weft__stat_read(&st->wakeups);
    int64_t top = atomic_load_explicit(&w->deque.top, memory_order_relaxed);
    int64_t bottom = atomic_load_explicit(&w->deque.bottom, memory_order_relaxed);
    line[WEFT_STATS_W_DEQUE] = bottom > top ? (uint64_t)(bottom - top) : 0;
    const weft__obs_worker *ow = &l->o->w[i];
    line[WEFT_STATS_W_TASKS] = exact ? weft__stat_read(&ow->tasks) : 0;
    line[WEFT_STATS_W_BUSY_NS] = exact ? (uint64_t)weft__ticks_ns(l->o, weft__stat_read(&ow->busy_ticks))
                                       : l->sampled[i];
}

static void fill(struct weft__live *l, bool closed) {
    uint64_t *h = l->words;
    bool exact = tasks_on(l->o);
    h[WEFT_STATS_H_MAGIC] = WEFT_STATS_MAGIC;
    h[WEFT_STATS_H_VERSION] = WEFT_STATS_VERSION;
    h[WEFT_STATS_H_HEADER_WORDS] = WEFT_STATS_HEADER_WORDS;
    h[WEFT_STATS_H_WORKER_WORDS] = WEFT_STATS_WORKER_WORDS;
    h[WEFT_STATS_H_WORKERS] = l->ex->nworkers;
    h[WEFT_STATS_H_PID] = weft__process_id();
    h[WEFT_STATS_H_EXECUTOR] = l->o->seq;
    h[WEFT_STATS_H_INTERVAL_NS] = l->interval_ns;
    h[WEFT_STATS_H_FLAGS] = (exact ? WEFT_STATS_F_TASKS : 0) | (closed ? WEFT_STATS_F_CLOSED : 0);
    h[WEFT_STATS_H_UPDATES] = ++l->updates;
    h[WEFT_STATS_H_NOW_NS] = weft__now_ns();
    h[WEFT_STATS_H_RUNS_IN_FLIGHT] = weft__runs_in_flight(l->ex);
    h[WEFT_STATS_H_INJECTOR] = weft__injector_len(&l->ex->injector);
    h[WEFT_STATS_H_TIMERS] = weft__timer_armed();
    h[WEFT_STATS_H_START_NS] = l->start_ns;
    for (unsigned i = 0; i < l->ex->nworkers; i++)
        fill_worker(l, i, exact, h + WEFT_STATS_HEADER_WORDS + (size_t)i * WEFT_STATS_WORKER_WORDS);
}

/* Into the block: each word one relaxed store; the update count and the time
 * last, so that a reader that sees them moved sees the figures of about then. */
static void store_block(struct weft__live *l) {
    _Atomic uint64_t *b = l->map.addr;
    if (!b) return;
    for (size_t k = 0; k < l->nwords; k++) {
        if (k == WEFT_STATS_H_UPDATES || k == WEFT_STATS_H_NOW_NS) continue;
        atomic_store_explicit(&b[k], l->words[k], memory_order_relaxed);
    }
    atomic_store_explicit(&b[WEFT_STATS_H_NOW_NS], l->words[WEFT_STATS_H_NOW_NS], memory_order_relaxed);
    atomic_store_explicit(&b[WEFT_STATS_H_UPDATES], l->words[WEFT_STATS_H_UPDATES], memory_order_relaxed);
}

/* ---- the Prometheus textfile --------------------------------------------------------- */

__attribute__((format(printf, 2, 3))) static void put(struct weft__live *l, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = l->text_cap - l->text_len;
        int n = vsnprintf(l->text + l->text_len, room, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if ((size_t)n < room) {
            l->text_len += (size_t)n;
            return;
        }
        size_t cap = 2 * l->text_cap + (size_t)n;
        char *t = weft__realloc(l->text, l->text_cap, cap);
        if (!t) {
            l->text_failed = true;
            return;
        }
        l->text = t, l->text_cap = cap;
    }
}

/* One family: its HELP and TYPE lines, then a sample per worker (word `w`
 * of each line, scaled by `scale`; w < 0: an executor-wide header word -w). */
static void put_family(struct weft__live *l, const char *name, const char *type, const char *help, int w,
                       double scale) {
    put(l, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    const uint64_t *h = l->words;
    char labels[64];
    snprintf(labels, sizeof labels, "pid=\"%" PRIu64 "\",executor=\"%" PRIu64 "\"", h[WEFT_STATS_H_PID],
             h[WEFT_STATS_H_EXECUTOR]);
    if (w < 0) {
        put(l, "%s{%s} %" PRIu64 "\n", name, labels, h[-w]);
        return;
    }
    for (unsigned i = 0; i < l->ex->nworkers; i++) {
        uint64_t v = h[WEFT_STATS_HEADER_WORDS + (size_t)i * WEFT_STATS_WORKER_WORDS + (unsigned)w];
        if (scale == 1.0) put(l, "%s{%s,worker=\"%u\"} %" PRIu64 "\n", name, labels, i, v);
        else put(l, "%s{%s,worker=\"%u\"} %.9g\n", name, labels, i, (double)v * scale);
    }
}

static void put_states(struct weft__live *l) {
    static const char *const names[] = { "searching", "running", "parked" };
    put(l, "# HELP weft_worker_state What the worker is doing now (1 for its state).\n"
           "# TYPE weft_worker_state gauge\n");
    const uint64_t *h = l->words;
    for (unsigned i = 0; i < l->ex->nworkers; i++)
        for (unsigned s = 0; s < 3; s++)
            put(l, "weft_worker_state{pid=\"%" PRIu64 "\",executor=\"%" PRIu64 "\",worker=\"%u\",state=\"%s\"} %d\n",
                h[WEFT_STATS_H_PID], h[WEFT_STATS_H_EXECUTOR], i, names[s],
                h[WEFT_STATS_HEADER_WORDS + (size_t)i * WEFT_STATS_WORKER_WORDS + WEFT_STATS_W_STATE] == s);
}

static int write_prom(struct weft__live *l) {
    if (!l->prom_path) return 0;
    l->text_len = 0, l->text_failed = false;
    put_states(l);
    put_family(l, "weft_worker_busy_seconds_total", "counter",
               "Time running work (exact while task metrics are on, else sampled every 10 ms).",
               WEFT_STATS_W_BUSY_NS, 1e-9);
    if (l->words[WEFT_STATS_H_FLAGS] & WEFT_STATS_F_TASKS)
        put_family(l, "weft_worker_tasks_total", "counter", "Work run: tasks, async tasks, jobs, stage calls.",
                   WEFT_STATS_W_TASKS, 1.0);
    put_family(l, "weft_worker_steals_total", "counter", "Jobs taken from another worker or the injector.",
               WEFT_STATS_W_STEALS, 1.0);
    put_family(l, "weft_worker_failed_steals_total", "counter", "Steal attempts that found nothing.",
               WEFT_STATS_W_STEAL_FAILS, 1.0);
    put_family(l, "weft_worker_parks_total", "counter", "Times the worker went to sleep.", WEFT_STATS_W_PARKS, 1.0);
    put_family(l, "weft_worker_wakeups_total", "counter", "Times it woke and found work.", WEFT_STATS_W_WAKEUPS, 1.0);
    put_family(l, "weft_worker_deque_jobs", "gauge", "Jobs in the worker's deque.", WEFT_STATS_W_DEQUE, 1.0);
    put_family(l, "weft_runs_in_flight", "gauge", "Runs begun and not ended.", -WEFT_STATS_H_RUNS_IN_FLIGHT, 1.0);
    put_family(l, "weft_injector_jobs", "gauge", "Jobs queued from outside the workers.", -WEFT_STATS_H_INJECTOR, 1.0);
    put_family(l, "weft_timers_armed", "gauge", "Deadlines armed in the process.", -WEFT_STATS_H_TIMERS, 1.0);
    put_family(l, "weft_stats_updates_total", "counter", "Refreshes of these figures.", -WEFT_STATS_H_UPDATES, 1.0);
    if (l->text_failed) return WEFT_ENOMEM;
    return weft__file_replace(l->prom_path, l->text, l->text_len);
}

static int publish(struct weft__live *l, bool closed) {
    fill(l, closed);
    store_block(l);
    return write_prom(l);
}

/* ---- the thread ------------------------------------------------------------------ */

/* Credits the time since the last look to the workers seen running now. */
static void look(struct weft__live *l) {
    uint64_t now = weft__now_ns(), dt = now - l->last_look;
    l->last_look = now;
    if (tasks_on(l->o)) return; /* busy time is exact then */
    if (dt > 4 * (uint64_t)SAMPLE_NS) dt = SAMPLE_NS; /* sampling was off meanwhile */
    for (unsigned i = 0; i < l->ex->nworkers; i++)
        if (atomic_load_explicit(&l->ex->workers[i].stats.state, memory_order_relaxed) == WEFT__WSTATE_RUNNING)
            l->sampled[i] += dt;
}

static void *live_main(void *arg) {
    struct weft__live *l = arg;
    weft__thread_set_name("weft-stats");
    uint64_t next = l->start_ns + l->interval_ns;
    /* Acquire: pairs with the release in weft__live_stop (nothing else is
     * published through it; the futex wakes us early). */
    while (!atomic_load_explicit(&l->stop, memory_order_acquire)) {
        uint64_t now = weft__now_ns();
        if (now >= next) {
            int st = publish(l, false);
            if (st != 0 && !l->warned) {
                l->warned = true;
                weft__log(WEFT_LOG_WARN, "cannot write the statistics to %s: %s", l->prom_path, weft_strerror(st));
            }
            next = now + l->interval_ns - (now - next) % l->interval_ns;
            continue;
        }
        uint64_t wait = next - now;
        if (!tasks_on(l->o) && wait > SAMPLE_NS) wait = SAMPLE_NS;
        (void)weft__futex_wait(&l->stop, 0, wait);
        look(l);
    }
    return NULL;
}

static void live_free(struct weft__live *l) {
    weft__mapfile_close(&l->map);
    weft__free_str(l->path);
    weft__free_str(l->prom_path);
    weft__free(l->sampled, sizeof *l->sampled * l->ex->nworkers);
    weft__free(l->words, sizeof *l->words * l->nwords);
    weft__free(l->text, l->text_cap);
    weft__free(l, sizeof *l);
}

static void remove_files(struct weft__live *l) {
    /* Only the block this publisher made: another one given the same path
     * since has replaced it (weft__mapfile_create) and keeps it. */
    if (l->path) (void)weft__mapfile_remove(&l->map, l->path);
    if (l->prom_path) (void)weft__file_remove(l->prom_path);
}

static struct weft__live *live_new(weft_executor *ex, struct weft__obs *o, const weft_stats_config *c) {
    struct weft__live *l = weft__calloc(sizeof *l);
    if (!l) return NULL;
    l->ex = ex, l->o = o;
    l->nwords = WEFT_STATS_HEADER_WORDS + (size_t)ex->nworkers * WEFT_STATS_WORKER_WORDS;
    l->text_cap = 4096;
    l->interval_ns = (uint64_t)(c->interval_ms ? c->interval_ms : DEFAULT_INTERVAL_MS) * 1000000u;
    l->sampled = weft__calloc(sizeof *l->sampled * ex->nworkers);
    l->words = weft__calloc(sizeof *l->words * l->nwords);
    l->text = weft__alloc(l->text_cap);
    bool ok = l->sampled && l->words && l->text;
    if (ok && c->path) ok = (l->path = weft__strdup(c->path)) != NULL;
    if (ok && c->prom_path) ok = (l->prom_path = weft__strdup(c->prom_path)) != NULL;
    if (!ok) {
        live_free(l);
        return NULL;
    }
    return l;
}

/* In a child of fork(), an executor of the parent publishes nothing here: its
 * files are the parent's, which a stop in the child removed (and a start
 * replaced) while the parent went on publishing to them. */
static weft_status forked_refusal(const char *fn) {
    return weft__fail(fn, WEFT_EFORKED,
                      "the executor was created before fork(); its live statistics are the parent's, "
                      "left alone in this child");
}

weft_status weft_stats_start(weft_executor *ex, const weft_stats_config *c) {
    if (!ex || !c || (!c->path && !c->prom_path))
        return weft__fail(__func__, WEFT_EINVAL, "ex or c is NULL, or c has neither path nor prom_path");
    if (weft__forked(ex)) return forked_refusal(__func__);
    struct weft__obs *o = weft__obs_state(ex);
    if (!o) return weft__fail_st(__func__, WEFT_ENOMEM);
    if (o->live) return weft__fail(__func__, WEFT_EBUSY, "live stats are running already");
    struct weft__live *l = live_new(ex, o, c);
    if (!l) return weft__fail_st(__func__, WEFT_ENOMEM);
    int st = l->path ? weft__mapfile_create(l->path, l->nwords * sizeof(uint64_t), &l->map) : 0;
    int step = st ? 1 : 0; /* what failed: 1 the block, 2 the textfile, 3 the thread */
    l->start_ns = l->last_look = weft__now_ns();
    if (st == 0 && (st = publish(l, false)) != 0) step = 2;
    if (st == 0 && (st = weft__thread_start(&l->thread, live_main, l, 0)) != 0) step = 3;
    if (st != 0) {
        /* Only the files this call made go: one it could not make (an
         * existing file it may not open, a textfile whose write failed, or
         * one never reached) may be the caller's. */
        if (step > 1 && l->path) (void)weft__mapfile_remove(&l->map, l->path);
        if (step > 2 && l->prom_path) (void)weft__file_remove(l->prom_path);
        weft_status fst = step == 3 ? weft__fail_st(__func__, (weft_status)st)
                          : weft__fail(__func__, (weft_status)st, "'%s' could not be %s",
                                       step == 1 ? l->path : l->prom_path,
                                       step == 1 ? "created and mapped" : "written");
        live_free(l);
        return fst;
    }
    o->live = l;
    return WEFT_OK;
}

void weft__live_stop(struct weft__obs *o) {
    struct weft__live *l = o->live;
    if (!l) return;
    atomic_store_explicit(&l->stop, 1, memory_order_release);
    weft__futex_wake(&l->stop, 1);
    weft__thread_join(l->thread);
    (void)publish(l, true); /* a reader holding the block sees it closed */
    remove_files(l);
    live_free(l);
    o->live = NULL;
}

weft_status weft_stats_stop(weft_executor *ex) {
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    if (weft__forked(ex)) return forked_refusal(__func__);
    struct weft__obs *o = weft__obs_state_get(ex);
    if (o) weft__live_stop(o);
    return WEFT_OK;
}

/* ---- WEFT_STATS ------------------------------------------------------------------- */

/* WEFT_STATS's files (weft__obs_names: the owner is the process that loaded
 * weft with it set, else the first to publish through it). */
static weft__obs_names stats_names;

__attribute__((constructor)) static void stats_names_at_load(void) { weft__obs_names_at_load(&stats_names, "WEFT_STATS"); }

/* weft__live_from_env with WEFT_STATS set to s: out of line, as its 12 KiB of
 * path buffers were reserved (and probed) on every executor's creation, the
 * variable set or not: weft_executor_create from a thread with a 16 KiB stack
 * crashed here. */
static __attribute__((noinline)) void live_start_from(weft_executor *ex, const char *s);

void weft__live_from_env(weft_executor *ex) {
    const char *s = weft__getenv("WEFT_STATS");
    if (!s) return;
    /* Set but empty: warned about once (core/env.h's rule), as any bad value;
     * it was silent.  The default, nothing published, is kept. */
    if (!*s) {
        if (weft__env_first_warning("WEFT_STATS"))
            weft__log(WEFT_LOG_WARN, "WEFT_STATS is set but empty: live statistics are not published (give it a path)");
        return;
    }
    live_start_from(ex, s);
}

static void live_start_from(weft_executor *ex, const char *s) {
    /* The k-th executor publishing: its paths get ".k"; a process forked
     * from the owner publishes to live.<pid>.stats, live.<pid>.1.stats, ...
     * (run.<pid>.prom, ...: weft__obs_names). */
    unsigned k = weft__obs_names_next(&stats_names);
    weft__obs_names_claim(&stats_names);
    char paths[2][4096] = { "", "" }, one[4096];
    weft_stats_config c = { 0 };
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, ",");
        if (n && n < sizeof one) {
            memcpy(one, p, n), one[n] = 0;
            bool prom = n > 5 && strcmp(one + n - 5, ".prom") == 0;
            weft__obs_names_path(&stats_names, paths[prom], sizeof paths[prom], one, k);
            if (prom) c.prom_path = paths[1];
            else c.path = paths[0];
        }
        p += n + (p[n] == ',');
    }
    weft__saved_message saved; /* a warning, not a failure of the caller's call */
    weft__error_message_save(&saved);
    weft_status st = c.path || c.prom_path ? weft_stats_start(ex, &c) : WEFT_EINVAL;
    weft__error_message_restore(&saved);
    /* Once per process, as every bad variable (core/env.h): each executor
     * reads it, and a program making many would log a line for each. */
    if (st != WEFT_OK && weft__env_first_warning("WEFT_STATS"))
        weft__log(WEFT_LOG_WARN, "WEFT_STATS=\"%s\": cannot publish the live statistics: %s; not published", s,
                  weft_strerror(st));
}
