/* Profile data as structs (weft_profile_get): the recorded spans grouped by
 * task (taskflow, index) or by work (kind, function or pipeline, stage), with
 * count, total, min, mean, max and percentiles of each group's durations, and
 * per-worker totals.
 *
 * Two passes over the spans: the first finds the groups (an open-addressing
 * table) and counts each group's spans, the second drops each duration into
 * its group's slice of one array, which is then sorted slice by slice for the
 * percentiles.  Memory: about 8 bytes per span, plus the groups. */
#include "observe/obs.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stdlib.h>
#include <string.h>

struct group {
    const void *id;
    uint32_t index;
    uint8_t kind;          /* span kind */
    bool used;
    uint64_t count, failed, estimated, long_shares;
    uint64_t total;        /* ticks */
    size_t at, filled;     /* its slice of the durations */
    char *name;
};

struct pass {
    const struct weft__obs *o;
    weft_profile *p;
    struct group *g;       /* the table */
    size_t cap, n;
    uint64_t *dur;         /* durations (ticks), by group slices (pass 2) */
    uint64_t *busy, *park, t_min, t_max;
    bool fill, oom;
};

/* What groups a span: algorithm jobs of one function are one group, whatever
 * the chunk; a stage is its index; a task its index. */
static uint32_t key_index(const weft__span *s) {
    unsigned k = (unsigned)s->kind - WEFT__SPAN_WORK;
    return s->kind == WEFT__SPAN_TASK || k == WEFT__WORK_STAGE ? s->index : 0;
}

/* A task's group is also told by its label: a task erased between runs and
 * the task that took its slot (the next one added takes the index) share
 * (taskflow, index), and were one group under the first one's name with both
 * tasks' runs ("the runs of one task", observe.h).  label: the span's, for a
 * task; NULL for other work. */
static size_t slot_of(const struct group *g, size_t cap, const void *id, uint32_t index, uint8_t kind,
                      const char *label) {
    uint64_t h = ((uint64_t)(uintptr_t)id * 0x9E3779B97F4A7C15u) ^ ((uint64_t)index * 0xC2B2AE3D27D4EB4Fu) ^ kind;
    size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);
    while (g[i].used &&
           !(g[i].id == id && g[i].index == index && g[i].kind == kind && (!label || !strcmp(g[i].name, label))))
        i = (i + 1) & (cap - 1);
    return i;
}

/* The label a group is told by (slot_of): a task's, else none. */
static const char *group_label(const struct pass *ps, const weft__span *s, unsigned w, char *buf, size_t len) {
    return s->kind == WEFT__SPAN_TASK ? weft__span_label(ps->o, w, s, buf, len) : NULL;
}

static bool grow(struct pass *ps) {
    size_t cap = ps->cap ? ps->cap * 2 : 256;
    struct group *g = weft__calloc(cap * sizeof *g);
    if (!g) return false;
    for (size_t i = 0; i < ps->cap; i++)
        if (ps->g[i].used) {
            const struct group *o = &ps->g[i];
            g[slot_of(g, cap, o->id, o->index, o->kind, o->kind == WEFT__SPAN_TASK ? o->name : NULL)] = *o;
        }
    weft__free(ps->g, ps->cap * sizeof *ps->g);
    ps->g = g, ps->cap = cap;
    return true;
}

static struct group *find(struct pass *ps, const weft__span *s, unsigned w) {
    if (2 * (ps->n + 1) > ps->cap && !grow(ps)) return NULL;
    uint32_t index = key_index(s);
    char buf[24];
    const char *label = group_label(ps, s, w, buf, sizeof buf);
    struct group *g = &ps->g[slot_of(ps->g, ps->cap, s->tf, index, s->kind, label)];
    if (g->used) return g;
    if (!(g->name = weft__strdup(label ? label : weft__span_label(ps->o, w, s, buf, sizeof buf)))) return NULL;
    g->used = true, g->id = s->tf, g->index = index, g->kind = s->kind;
    ps->n++;
    return g;
}

static bool visit(const weft__span *s, unsigned w, void *arg) {
    struct pass *ps = arg;
    if (ps->fill) { /* second pass: durations into their slices */
        if (!weft__span_is_run(s) || s->estimated == WEFT__EST_LONG) return true;
        char buf[24];
        struct group *g = &ps->g[slot_of(ps->g, ps->cap, s->tf, key_index(s), s->kind,
                                         group_label(ps, s, w, buf, sizeof buf))];
        ps->dur[g->at + g->filled++] = s->end - s->begin;
        return true;
    }
    weft_worker_profile *wp = &ps->p->per_worker[w];
    if (s->begin < ps->t_min) ps->t_min = s->begin;
    if (s->end > ps->t_max) ps->t_max = s->end;
    if (s->kind == WEFT__SPAN_PARK) {
        wp->parks++;
        ps->park[w] += s->end - s->begin;
        return true;
    }
    if (s->kind == WEFT__SPAN_STEAL) {
        wp->steals++;
        return true;
    }
    if (s->kind == WEFT__SPAN_RECORDING) { /* a GPU task's recording: busy time, no run */
        if (!s->nested) ps->busy[w] += s->end - s->begin;
        return true;
    }
    if (!weft__span_is_run(s)) return true;
    struct group *g = find(ps, s, w);
    if (!g) {
        ps->oom = true;
        return false;
    }
    g->count++;
    g->failed += (s->failed & WEFT__SPAN_FAILED) != 0;
    g->estimated += s->estimated != 0;
    g->long_shares += s->estimated == WEFT__EST_LONG;
    g->total += s->end - s->begin;
    wp->tasks++;
    if (!s->nested) ps->busy[w] += s->end - s->begin; /* a nested span's time is in its parent's */
    return true;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_total(const void *a, const void *b) {
    const weft_task_stats *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Nearest rank: the smallest duration with at least q of them at or under it. */
static uint64_t rank(const uint64_t *d, size_t n, double q) {
    size_t r = (size_t)(q * (double)n + 0.999999);
    return d[(r ? r : 1) - 1];
}

static uint64_t ns(const struct weft__obs *o, uint64_t ticks) { return (uint64_t)weft__ticks_ns(o, ticks); }

static void stats_of(const struct pass *ps, struct group *g, weft_task_stats *t) {
    const struct weft__obs *o = ps->o;
    unsigned k = (unsigned)g->kind - WEFT__SPAN_WORK;
    *t = (weft_task_stats){ .name = g->name, .kind = g->kind == WEFT__SPAN_TASK ? WEFT_PROFILE_TASK
                                                                                : (weft_profile_kind)(k + 1),
                            .id = g->id, .index = g->index, .count = g->count, .failed = g->failed,
                            .estimated = g->estimated, .total_ns = ns(o, g->total) };
    t->mean_ns = g->count ? (double)t->total_ns / (double)g->count : 0;
    g->name = NULL; /* the profile owns it now */
    /* Shares of a batch that held a long task are no task's duration: they
     * count in the total, not in min, max or the percentiles. */
    uint64_t *d = ps->dur + g->at;
    size_t n = g->filled;
    if (!n) return;
    if (n > 1) qsort(d, n, sizeof *d, cmp_u64);
    t->min_ns = ns(o, d[0]), t->max_ns = ns(o, d[n - 1]);
    t->p50_ns = ns(o, rank(d, n, 0.50)), t->p90_ns = ns(o, rank(d, n, 0.90)), t->p99_ns = ns(o, rank(d, n, 0.99));
}

static void pass_free(struct pass *ps, size_t ndur) {
    for (size_t i = 0; i < ps->cap; i++) weft__free_str(ps->g[i].name);
    weft__free(ps->g, ps->cap * sizeof *ps->g);
    weft__free(ps->dur, ndur * sizeof *ps->dur);
    unsigned nw = ps->p ? ps->p->workers : 0;
    weft__free(ps->busy, (nw ? nw : 1) * sizeof *ps->busy);
    weft__free(ps->park, (nw ? nw : 1) * sizeof *ps->park);
}

void weft_profile_free(weft_profile *p) {
    if (!p) return;
    for (size_t i = 0; i < p->ntasks; i++) weft__free_str((char *)p->tasks[i].name);
    weft__free(p->tasks, p->ntasks * sizeof *p->tasks);
    weft__free(p->per_worker, (p->workers ? p->workers : 1) * sizeof *p->per_worker);
    weft__free(p, sizeof *p);
}

/* Sums and utilisations once the spans are counted. */
static void totals(struct pass *ps) {
    weft_profile *p = ps->p;
    p->wall_ns = ps->t_max > ps->t_min ? ns(ps->o, ps->t_max - ps->t_min) : 0;
    for (unsigned w = 0; w < p->workers; w++) {
        weft_worker_profile *wp = &p->per_worker[w];
        wp->busy_ns = ns(ps->o, ps->busy[w]);
        wp->park_ns = ns(ps->o, ps->park[w]);
        wp->utilisation = p->wall_ns ? (double)wp->busy_ns / (double)p->wall_ns : 0;
        p->total.tasks += wp->tasks, p->total.busy_ns += wp->busy_ns, p->total.parks += wp->parks;
        p->total.park_ns += wp->park_ns, p->total.steals += wp->steals;
        p->total.utilisation += wp->utilisation / p->workers;
    }
    p->spans = p->total.tasks;
}

/* The groups' statistics: slices laid out, durations filled, sorted. */
static bool per_task(struct pass *ps, const weft_executor *ex, size_t *ndur) {
    weft_profile *p = ps->p;
    size_t at = 0;
    for (size_t i = 0; i < ps->cap; i++)
        if (ps->g[i].used) ps->g[i].at = at, at += ps->g[i].count - ps->g[i].long_shares;
    *ndur = at;
    if (at && !(ps->dur = weft__alloc(at * sizeof *ps->dur))) return false;
    if (ps->n && !(p->tasks = weft__calloc(ps->n * sizeof *p->tasks))) return false;
    ps->fill = true;
    weft__spans_for_each(weft__obs_state_get(ex), visit, ps);
    for (size_t i = 0; i < ps->cap; i++)
        if (ps->g[i].used) stats_of(ps, &ps->g[i], &p->tasks[p->ntasks++]);
    if (p->ntasks) qsort(p->tasks, p->ntasks, sizeof *p->tasks, cmp_total);
    return true;
}

weft_status weft_profile_get(const weft_executor *ex, weft_profile **out) {
    if (!out) return weft__fail(__func__, WEFT_EINVAL, "out is NULL");
    *out = NULL;
    if (!ex) return weft__fail(__func__, WEFT_EINVAL, "ex is NULL");
    /* From one of ex's workers the caller's own run is in flight: its spans
     * are being written while this reads them (observe.h: any thread not a
     * worker of ex), as weft_profiler_start refuses (switch.c). */
    if (weft__current_worker(ex))
        return weft__fail(__func__, WEFT_EBUSY,
                          "called from one of the executor's own workers, inside a run of it (observe.h: any "
                          "thread not a worker of ex)");
    const struct weft__obs *o = weft__obs_state_get(ex);
    unsigned nw = ex->nworkers;
    struct pass ps = { .o = o, .t_min = UINT64_MAX };
    size_t ndur = 0;
    weft_profile *p = ps.p = weft__calloc(sizeof *p);
    if (p) p->workers = nw;
    bool ok = p && (p->per_worker = weft__calloc((nw ? nw : 1) * sizeof *p->per_worker)) &&
              (ps.busy = weft__calloc((nw ? nw : 1) * sizeof *ps.busy)) &&
              (ps.park = weft__calloc((nw ? nw : 1) * sizeof *ps.park));
    if (ok && o) {
        weft__spans_for_each(o, visit, &ps);
        ok = !ps.oom && per_task(&ps, ex, &ndur);
        totals(&ps);
        (void)weft_profiler_count(ex, NULL, &p->dropped);
    }
    pass_free(&ps, ndur);
    if (!ok) {
        weft_profile_free(p);
        return weft__fail_st(__func__, WEFT_ENOMEM);
    }
    *out = p;
    return WEFT_OK;
}
