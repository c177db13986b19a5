/* Per-worker span buffers (chunked, bounded) and task-name interning. */
#include "observe/obs.h"
#include "core/alloc.h"

#include <stdio.h>
#include <string.h>

/* Moves to the next chunk (a spare one, or a new one), or returns false. */
static bool next_chunk(weft__obs_worker *ow) {
    weft__span_chunk *c = ow->cur ? ow->cur->next : ow->head;
    if (!c) {
        c = weft__alloc(sizeof *c);
        if (!c) return false;
        c->next = NULL;
        if (ow->cur) ow->cur->next = c;
        else ow->head = c;
        atomic_store_explicit(&ow->nchunks, atomic_load_explicit(&ow->nchunks, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    ow->cur = c;
    ow->used = 0;
    ow->cur_idx++;
    return true;
}

weft__span *weft__span_slots(struct weft__obs *o, weft__obs_worker *ow, uint32_t k, uint32_t want,
                             bool count_drop) {
    /* Every slot counts against the limit, whatever its kind; so does every span. */
    size_t in_use = ow->cur_idx ? (ow->cur_idx - 1) * WEFT__SPAN_CHUNK + ow->used : 0;
    if (ow->cur && ow->used + k > WEFT__SPAN_CHUNK) {
        /* The chunk's tail is too short: its slots stay unused (and counted). */
        for (uint32_t i = ow->used; i < WEFT__SPAN_CHUNK; i++) ow->cur->slot[i].span.kind = WEFT__SPAN_NONE;
        in_use += WEFT__SPAN_CHUNK - ow->used;
        ow->used = WEFT__SPAN_CHUNK;
    }
    if (in_use + k > o->max_spans || ow->nspans + want > o->max_spans ||
        ((!ow->cur || ow->used == WEFT__SPAN_CHUNK) && !next_chunk(ow))) {
        ow->room = 0;
        if (count_drop) weft__stat_inc(&ow->dropped);
        return NULL;
    }
    weft__span *s = &ow->cur->slot[ow->used].span;
    ow->used += k;
    in_use += k;
    /* Room for the fast path (weft__span_task_slots): to the chunk's end or the
     * limit, whichever comes first. */
    size_t taken = in_use > ow->nspans + want ? in_use : ow->nspans + want;
    size_t left = o->max_spans - taken, in_chunk = WEFT__SPAN_CHUNK - ow->used;
    ow->room = (uint32_t)(left < in_chunk ? left : in_chunk);
    return s;
}

void weft__spans_clear(weft__obs_worker *ow) {
    ow->cur = NULL;
    ow->used = 0;
    ow->room = 0;
    ow->cur_idx = 0;
    ow->nspans = 0;
    atomic_store_explicit(&ow->recorded, 0, memory_order_relaxed);
    atomic_store_explicit(&ow->dropped, 0, memory_order_relaxed);
}

static void names_free(weft__names *t) {
    for (size_t i = 0; i < t->n; i++) weft__free_str(t->copy[i]);
    weft__free(t->copy, t->copy_cap * sizeof *t->copy);
    weft__free(t->key, t->cap * sizeof *t->key);
    weft__free(t->id, t->cap * sizeof *t->id);
    memset(t, 0, sizeof *t);
}

void weft__spans_free(weft__obs_worker *ow) {
    for (weft__span_chunk *c = ow->head, *next; c; c = next) {
        next = c->next;
        weft__free(c, sizeof *c);
    }
    ow->head = ow->cur = NULL;
    ow->used = ow->room = 0;
    atomic_store_explicit(&ow->nchunks, 0, memory_order_relaxed);
    ow->cur_idx = 0;
    names_free(&ow->names);
}

/* ---- names -------------------------------------------------------------------- */

static size_t slot_of(const weft__names *t, const char *key) {
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) & (t->cap - 1);
    while (t->key[i] && t->key[i] != key) i = (i + 1) & (t->cap - 1);
    return i;
}

/* Doubles the table (rehashing), or returns false. */
static bool names_grow(weft__names *t) {
    size_t cap = t->cap ? t->cap * 2 : 64;
    weft__names n = { .key = weft__calloc(cap * sizeof *n.key), .id = weft__calloc(cap * sizeof *n.id), .cap = cap };
    if (!n.key || !n.id) {
        weft__free(n.key, cap * sizeof *n.key);
        weft__free(n.id, cap * sizeof *n.id);
        return false;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->key[i]) continue;
        size_t j = slot_of(&n, t->key[i]);
        n.key[j] = t->key[i];
        n.id[j] = t->id[i];
    }
    weft__free(t->key, t->cap * sizeof *t->key);
    weft__free(t->id, t->cap * sizeof *t->id);
    t->key = n.key, t->id = n.id, t->cap = cap;
    return true;
}

/* Appends a copy of name; returns its id or 0. */
static uint32_t names_add(weft__names *t, const char *name) {
    if (t->n == t->copy_cap) {
        size_t cap = t->copy_cap ? t->copy_cap * 2 : 16;
        char **c = weft__realloc(t->copy, t->copy_cap * sizeof *c, cap * sizeof *c);
        if (!c) return 0;
        t->copy = c, t->copy_cap = cap;
    }
    char *copy = weft__strdup(name);
    if (!copy) return 0;
    t->copy[t->n++] = copy;
    return (uint32_t)t->n;
}

uint32_t weft__name_intern(weft__names *t, const char *name) {
    if (!name || !*name) return 0;
    if ((t->n + 1) * 2 > t->cap && !names_grow(t)) return 0;
    size_t i = slot_of(t, name);
    if (t->key[i] && strcmp(t->copy[t->id[i] - 1], name) == 0) return t->id[i];
    /* New pointer, or an old address now holding other text: a new entry. */
    uint32_t id = names_add(t, name);
    if (id) t->key[i] = name, t->id[i] = id;
    return id;
}

/* ---- reading ------------------------------------------------------------------ */

static void visit_spans(const struct weft__obs *o, weft__span_visit_fn fn, void *arg);

/* Stops idle workers from recording (steal and park spans arrive at any time,
 * not only during runs), marks the buffers as being read (a batch closed from
 * now on leaves its spans alone, task_hooks.c) and waits out any span being written.
 * Dekker pairing: the seq_cst exchange and increment here against the worker's
 * seq_cst store of idle_writing followed by its seq_cst load of profile_on or
 * reading (task_hooks.c): either the worker sees them, or this sees its flag and
 * waits.  `reading` counts, as two threads may read at once. */
bool weft__spans_pause(struct weft__obs *o) {
    bool was_on = atomic_exchange_explicit(&o->profile_on, false, memory_order_seq_cst);
    atomic_fetch_add_explicit(&o->reading, 1, memory_order_seq_cst);
    for (unsigned w = 0; w < o->nworkers; w++)
        while (atomic_load_explicit(&o->w[w].idle_writing, memory_order_seq_cst)) weft__cpu_relax();
    return was_on;
}

void weft__spans_resume(struct weft__obs *o, bool was_on) {
    /* Release: a batch that sees the count drop also sees a clear's new epoch. */
    atomic_fetch_sub_explicit(&o->reading, 1, memory_order_release);
    if (was_on) atomic_store_explicit(&o->profile_on, true, memory_order_seq_cst);
}

void weft__spans_for_each(const struct weft__obs *o_, weft__span_visit_fn fn, void *arg) {
    struct weft__obs *o = (struct weft__obs *)o_; /* pausing writes profile_on and reading only */
    bool was_on = weft__spans_pause(o);
    visit_spans(o, fn, arg);
    weft__spans_resume(o, was_on);
}

/* Calls fn for each task of the batch whose header is h: one ordinary span
 * each, its times the batch's shared out evenly (provisional ones while the
 * batch is open).  Returns false when fn did. */
static bool visit_batch(const weft__span *h, unsigned w, weft__span_visit_fn fn, void *arg) {
    uint32_t n = h->index;
    if (n == 0) return true;
    uint64_t step = h->end > h->begin ? (h->end - h->begin) / n : h->name;
    weft__span s = { .tf = h->tf, .run = h->run, .kind = WEFT__SPAN_TASK, .estimated = h->estimated };
    for (uint32_t i = 0; i < n; i++) {
        s.begin = h->begin + i * step;
        s.end = i + 1 == n && h->end > h->begin ? h->end : s.begin + step;
        bool failed;
        weft__batch_entry(h, i, &s.index, &s.name, &failed);
        s.failed = (uint8_t)((failed ? WEFT__SPAN_FAILED : 0u) | (h->failed & WEFT__SPAN_INNER));
        if (!fn(&s, w, arg)) return false;
    }
    return true;
}

static void visit_spans(const struct weft__obs *o, weft__span_visit_fn fn, void *arg) {
    for (unsigned w = 0; w < o->nworkers; w++) {
        const weft__obs_worker *ow = &o->w[w];
        if (!ow->cur) continue;
        for (const weft__span_chunk *c = ow->head;; c = c->next) {
            uint32_t n = c == ow->cur ? ow->used : WEFT__SPAN_CHUNK;
            for (uint32_t i = 0; i < n; i++) {
                const weft__span *s = &c->slot[i].span;
                if (s->kind == WEFT__SPAN_NONE) continue;
                if (s->kind == WEFT__SPAN_BATCH) {
                    if (!visit_batch(s, w, fn, arg)) return;
                    i += WEFT__BATCH_SLOTS_OF(s) - 1;
                } else if (!fn(s, w, arg)) {
                    return;
                }
            }
            if (c == ow->cur) break;
        }
    }
}

static const char *const WORK_NAMES[WEFT__WORK_KINDS] = {
    "async", "silent async", "fork-join root", "stolen frame", "algorithm job", "pipeline stage",
};
static const char *const WORK_CATS[WEFT__WORK_KINDS] = { "async", "async", "forkjoin", "forkjoin", "algo", "pipeline" };

const char *weft__span_category(const weft__span *s) {
    if (s->kind == WEFT__SPAN_TASK) return "task";
    if (s->kind == WEFT__SPAN_RECORDING) return "gpu recording";
    unsigned k = (unsigned)s->kind - WEFT__SPAN_WORK;
    return k < WEFT__WORK_KINDS ? WORK_CATS[k] : "other";
}

const char *weft__span_label(const struct weft__obs *o, unsigned worker, const weft__span *s, char *buf,
                             size_t len) {
    /* A GPU task's recording is labelled as its task (its category says
     * what it is). */
    if (s->kind == WEFT__SPAN_TASK || s->kind == WEFT__SPAN_RECORDING) {
        if (s->name == WEFT__NAME_LOST) return WEFT__NAME_LOST_LABEL;
        if (s->name) return o->w[worker].names.copy[s->name - 1];
        snprintf(buf, len, "#%u", s->index);
        return buf;
    }
    unsigned k = (unsigned)s->kind - WEFT__SPAN_WORK;
    if (k == WEFT__WORK_STAGE) {
        snprintf(buf, len, "stage %u", s->index);
        return buf;
    }
    return k < WEFT__WORK_KINDS ? WORK_NAMES[k] : "?";
}
