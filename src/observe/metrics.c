/* Metrics: per-worker counters summed on read. */
#include "observe/obs.h"
#include "async/async.h"
#include "core/fj.h" /* weft__fj_bytes */
#include "core/error_detail.h"

#include <string.h>

static void zero(_Atomic uint64_t *c) { atomic_store_explicit(c, 0, memory_order_relaxed); }

void weft__obs_reset_counters(struct weft__obs *o) {
    for (unsigned i = 0; i < o->nworkers; i++) {
        weft__worker_stats *st = &o->ex->workers[i].stats;
        weft__obs_worker *ow = &o->w[i];
        zero(&st->steals), zero(&st->steal_fails), zero(&st->parks), zero(&st->wakeups);
        zero(&ow->tasks), zero(&ow->failed), zero(&ow->skipped), zero(&ow->busy_ticks);
        for (unsigned b = 0; b < WEFT_METRICS_BUCKETS; b++) zero(&ow->hist[b]);
    }
}

static void read_worker(const weft_executor *ex, unsigned i, uint64_t wall_ns, weft_worker_metrics *m) {
    const weft__worker_stats *st = &ex->workers[i].stats;
    memset(m, 0, sizeof *m);
    m->steals = weft__stat_read(&st->steals);
    m->steal_fails = weft__stat_read(&st->steal_fails);
    m->parks = weft__stat_read(&st->parks);
    m->wakeups = weft__stat_read(&st->wakeups);
    const struct weft__obs *o = weft__obs_state_get(ex);
    if (!o) return;
    const weft__obs_worker *ow = &o->w[i];
    m->tasks = weft__stat_read(&ow->tasks);
    m->failed = weft__stat_read(&ow->failed);
    /* A task counts in tasks and then in failed: a snapshot between the two
     * reads, or a reset (weft_metrics_enable mid-run) between the two
     * increments, can see a failure without its task, and tasks - failed
     * wrapped to ~1.8e19 succeeded.  An approximate snapshot still adds up. */
    if (m->failed > m->tasks) m->failed = m->tasks;
    m->succeeded = m->tasks - m->failed;
    m->skipped = weft__stat_read(&ow->skipped);
    m->busy_ns = (uint64_t)weft__ticks_ns(o, weft__stat_read(&ow->busy_ticks));
    if (m->busy_ns > wall_ns) m->busy_ns = wall_ns; /* clock skew between cores */
    m->idle_ns = wall_ns - m->busy_ns;
    m->utilisation = wall_ns ? (double)m->busy_ns / (double)wall_ns : 0.0;
    for (unsigned b = 0; b < WEFT_METRICS_BUCKETS; b++) m->histogram[b] = weft__stat_read(&ow->hist[b]);
}

static void add_worker(weft_worker_metrics *t, const weft_worker_metrics *m) {
    t->tasks += m->tasks, t->succeeded += m->succeeded, t->failed += m->failed;
    t->skipped += m->skipped, t->steals += m->steals, t->steal_fails += m->steal_fails;
    t->parks += m->parks, t->wakeups += m->wakeups;
    t->busy_ns += m->busy_ns, t->idle_ns += m->idle_ns;
    for (unsigned b = 0; b < WEFT_METRICS_BUCKETS; b++) t->histogram[b] += m->histogram[b];
}

/* What weft holds for ex: the executor, its workers, deques, observability. */
static size_t held_bytes(const weft_executor *ex) {
    /* Workers and submitter slots (core/submitter.c) alike. */
    size_t b = sizeof *ex + weft__workers_bytes(ex) + ex->layer_stride * weft__nslots(ex);
    for (unsigned i = 0; i < weft__nslots(ex); i++) {
        /* The deque's ring and the rings it outgrew, which stay allocated
         * until it is destroyed (core/deque.c): those were left out, up to
         * half of a grown deque. */
        b += weft__deque_bytes((weft__deque *)&ex->workers[i].deque);
        /* The fork-join frame stack, made at a worker's first spawn (2 MiB at
         * the default 65536 frames; a slot never spawns). */
        b += weft__fj_bytes(&ex->workers[i]);
        /* Blocks of silent async records (src/async/silent.c) and the async
         * records kept for reuse (async/record.c). */
        b += weft__async_held_bytes(&ex->workers[i]);
    }
    const struct weft__obs *o = weft__obs_state_get(ex);
    if (o) {
        b += sizeof *o + o->w_bytes;
        for (unsigned i = 0; i < o->nworkers; i++) b += atomic_load_explicit((_Atomic size_t *)&o->w[i].nchunks, memory_order_relaxed) * sizeof(weft__span_chunk);
    }
    return b;
}

weft_status weft_executor_metrics(const weft_executor *ex, weft_metrics *out, weft_worker_metrics *per_worker,
                                  size_t n) {
    if (!ex || !out || (n && !per_worker))
        return weft__fail(__func__, WEFT_EINVAL, "invalid argument (!ex || !out || (n && !per_worker))");
    memset(out, 0, sizeof *out);
    out->workers = ex->nworkers;
    const struct weft__obs *o = weft__obs_state_get(ex);
    if (o) {
        out->enabled = weft__obs_collecting(o);
        uint64_t t0 = atomic_load_explicit(&o->metrics_t0, memory_order_relaxed);
        uint64_t t1 = atomic_load_explicit(&o->metrics_t1, memory_order_relaxed);
        uint64_t end = out->enabled || t1 < t0 ? weft__ticks() : t1; /* off: the time they were on */
        out->wall_ns = t0 ? (uint64_t)weft__ticks_ns(o, end - t0) : 0;
    }
    for (unsigned i = 0; i < ex->nworkers; i++) {
        weft_worker_metrics m;
        read_worker(ex, i, out->wall_ns, &m);
        add_worker(&out->total, &m);
        if (i < n) per_worker[i] = m;
    }
    uint64_t cap = out->wall_ns * ex->nworkers;
    out->total.utilisation = cap ? (double)out->total.busy_ns / (double)cap : 0.0;
    out->tasks_per_second = out->wall_ns ? (double)out->total.tasks * 1e9 / (double)out->wall_ns : 0.0;
    out->bytes = held_bytes(ex);
    return WEFT_OK;
}
