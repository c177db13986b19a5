/* Pipelines: creation with argument and type checks, destruction, accessors. */
#include "pipeline/pipeline.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Creation fails before any object exists, so its message is the thread's
 * (weft_last_error_message, docs/errors.md).  The deprecated
 * weft_pipeline_error_message says "" after a successful creation: this
 * remembers, per thread, whether the most recent one failed. */
static _Thread_local bool last_create_failed;

const char *weft_pipeline_error_message(void) { return last_create_failed ? weft_last_error_message() : ""; }

/* Records why creation failed; returns NULL so callers can `return fail(...)`. */
static weft_pipeline *fail(weft_status *err, weft_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    weft__vset_error_message(fmt, ap);
    va_end(ap);
    last_create_failed = true;
    if (err) *err = st;
    return NULL;
}

/* "stage 2 'parse'" or "stage 2". */
static const char *label(char *buf, size_t len, size_t i, const char *name) {
    if (name && *name) snprintf(buf, len, "stage %zu '%s'", i, name);
    else snprintf(buf, len, "stage %zu", i);
    return buf;
}

static bool check_shape(size_t lines, const void *stages, size_t n, weft_status *err) {
    if (!stages || n == 0 || n > WEFT__PIPE_MAX)
        return fail(err, WEFT_EINVAL, "a pipeline needs 1 to %d stages (got %zu%s)", WEFT__PIPE_MAX, n,
                    stages ? "" : ", stages NULL"),
               false;
    if (lines == 0 || lines > WEFT__PIPE_MAX)
        return fail(err, WEFT_EINVAL, "a pipeline needs 1 to %d lines (got %zu)", WEFT__PIPE_MAX, lines), false;
    return true;
}

/* The checks every flavour shares, for stage i. */
static bool check_stage(size_t i, int kind, bool has_fn, const char *name, bool first_serial, weft_status *err) {
    char l[96];
    if (!has_fn) return fail(err, WEFT_EINVAL, "%s has no function", label(l, sizeof l, i, name)), false;
    if (kind != WEFT_STAGE_SERIAL && kind != WEFT_STAGE_PARALLEL)
        return fail(err, WEFT_EINVAL, "%s has kind %d (not serial or parallel)", label(l, sizeof l, i, name), kind),
               false;
    if (i == 0 && first_serial && kind != WEFT_STAGE_SERIAL)
        return fail(err, WEFT_EINVAL, "%s must be serial: the first stage makes the tokens",
                    label(l, sizeof l, i, name)),
               false;
    return true;
}

static void free_parts(weft_pipeline *p) {
    weft__free(p->stages, p->nstages * sizeof *p->stages);
    weft__free_aligned(p->slots, p->nlines * p->nstages * sizeof *p->slots, WEFT__CACHE_LINE);
    weft__free_aligned(p->lines, p->nlines * sizeof *p->lines, WEFT__CACHE_LINE);
    weft__free_aligned(p->bufs, 2 * p->nlines * p->buf_size, WEFT__CACHE_LINE);
    weft__free_aligned(p, sizeof *p, WEFT__CACHE_LINE);
}

static void init_slots(weft_pipeline *p) {
    for (size_t l = 0; l < p->nlines; l++) {
        for (size_t s = 0; s < p->nstages; s++) {
            weft__slot *sl = weft__slot_at(p, l, s);
            sl->job = (weft__job){weft__slot_run, NULL};
            sl->line = (uint32_t)l;
            sl->stage = (uint32_t)s;
            sl->p = p;
            /* Stage 0 waits for the previous line (if it is not alone) and for its
             * own line to drain (if there are later stages); a serial stage for
             * the same token's previous stage and the previous token. */
            if (s == 0) sl->full = 1 + (p->nstages > 1);
            else sl->full = 1 + !p->stages[s].parallel;
            atomic_init(&sl->join, sl->full);
        }
        weft__line *ln = &p->lines[l];
        ln->buf[0] = p->buf_size ? p->bufs + (2 * l) * p->buf_size : NULL;
        ln->buf[1] = p->buf_size ? p->bufs + (2 * l + 1) * p->buf_size : NULL;
    }
}

/* Allocates a pipeline of n internal stages (filled in by the caller) whose lines
 * carry buffers of buf_size bytes (0: none).  `call` names the creating call
 * in the message of a failure: "out of memory" alone did not say which call
 * failed (docs/errors.md, R3: at least "<function>: " and the sentence). */
static weft_pipeline *alloc_pipeline(const char *call, size_t lines, size_t n, size_t buf_size,
                                     weft_status *err) {
    weft_pipeline *p = weft__calloc_aligned(sizeof *p, WEFT__CACHE_LINE);
    if (!p) return fail(err, WEFT_ENOMEM, "%s: out of memory", call);
    p->nlines = lines;
    p->nstages = n;
    /* Round up so that every buffer stays aligned for any type. */
    p->buf_size = (buf_size + WEFT__CACHE_LINE - 1) & ~(size_t)(WEFT__CACHE_LINE - 1);
    p->stages = weft__calloc(n * sizeof *p->stages);
    /* No product here overflows: every caller checked lines and stages (at
     * most WEFT__PIPE_MAX each) and a value's size (check_data_stages). */
    p->slots = weft__calloc_aligned(lines * n * sizeof *p->slots, WEFT__CACHE_LINE);
    p->lines = weft__calloc_aligned(lines * sizeof *p->lines, WEFT__CACHE_LINE);
    if (p->buf_size) p->bufs = weft__calloc_aligned(2 * lines * p->buf_size, WEFT__CACHE_LINE);
    if (!p->stages || !p->slots || !p->lines || (p->buf_size && !p->bufs)) {
        free_parts(p);
        return fail(err, WEFT_ENOMEM, "%s: out of memory", call);
    }
    atomic_init(&p->running, 0);
    atomic_init(&p->failed, 0);
    atomic_init(&p->code, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->next_token, 0);
    return p;
}

/* Fills in the slots once the stages are known and reports success. */
static weft_pipeline *finish(weft_pipeline *p, weft_status *err) {
    init_slots(p);
    last_create_failed = false;
    if (err) *err = WEFT_OK;
    return p;
}

weft_pipeline *weft_pipeline_create(size_t lines, const weft_stage *stages, size_t nstages, weft_status *err) {
    if (!check_shape(lines, stages, nstages, err)) return NULL;
    for (size_t i = 0; i < nstages; i++)
        if (!check_stage(i, (int)stages[i].kind, stages[i].fn != NULL, stages[i].name, true, err)) return NULL;
    weft_pipeline *p = alloc_pipeline("weft_pipeline_create", lines, nstages, 0, err);
    if (!p) return NULL;
    for (size_t i = 0; i < nstages; i++)
        p->stages[i] = (weft__stage){.parallel = stages[i].kind == WEFT_STAGE_PARALLEL,
                                     .call = WEFT__CALL_TOKEN,
                                     .fn.token = stages[i].fn,
                                     .arg = stages[i].arg};
    return finish(p, err);
}

/* ---- data pipelines ---------------------------------------------------------- */

static bool tags_differ(const char *a, const char *b) { return a && b && strcmp(a, b) != 0; }

/* Checks that stage i gives what stage i + 1 takes. */
static bool check_link(const weft_data_stage *a, const weft_data_stage *b, size_t i, weft_status *err) {
    if (a->out_size == b->in_size && !tags_differ(a->out_type, b->in_type)) return true;
    char la[96], lb[96];
    fail(err, WEFT_EINVAL, "%s gives %zu bytes ('%s') but %s takes %zu bytes ('%s')", label(la, sizeof la, i, a->name),
         a->out_size, a->out_type ? a->out_type : "untyped", label(lb, sizeof lb, i + 1, b->name), b->in_size,
         b->in_type ? b->in_type : "untyped");
    return false;
}

static bool check_data_stages(const weft_data_stage *st, size_t n, size_t *max_size, weft_status *err) {
    char l[96];
    if (st[0].in_size != 0)
        return fail(err, WEFT_EINVAL, "%s is the first stage: it takes nothing (in_size %zu, want 0)",
                    label(l, sizeof l, 0, st[0].name), st[0].in_size),
               false;
    if (st[n - 1].out_size != 0)
        return fail(err, WEFT_EINVAL, "%s is the last stage: it gives nothing (out_size %zu, want 0)",
                    label(l, sizeof l, n - 1, st[n - 1].name), st[n - 1].out_size),
               false;
    *max_size = 0;
    for (size_t i = 0; i < n; i++) {
        if (!check_stage(i, (int)st[i].kind, st[i].fn != NULL, st[i].name, true, err)) return false;
        if (i + 1 < n && !check_link(&st[i], &st[i + 1], i, err)) return false;
        if (st[i].out_size > *max_size) *max_size = st[i].out_size;
    }
    if (*max_size > (SIZE_MAX / 4) / WEFT__PIPE_MAX)
        return fail(err, WEFT_EINVAL, "a value of %zu bytes is too large", *max_size), false;
    return true;
}

weft_pipeline *weft_data_pipeline_create(size_t lines, const weft_data_stage *stages, size_t nstages,
                                         weft_status *err) {
    size_t max_size;
    if (!check_shape(lines, stages, nstages, err) || !check_data_stages(stages, nstages, &max_size, err)) return NULL;
    weft_pipeline *p = alloc_pipeline("weft_data_pipeline_create", lines, nstages, max_size, err);
    if (!p) return NULL;
    for (size_t i = 0; i < nstages; i++)
        p->stages[i] = (weft__stage){.parallel = stages[i].kind == WEFT_STAGE_PARALLEL,
                                     .call = WEFT__CALL_DATA,
                                     .fn.data = stages[i].fn,
                                     .arg = stages[i].arg};
    return finish(p, err);
}

/* ---- simple pipelines -------------------------------------------------------- */

/* Whether count items of item_size bytes from items end inside the address
 * space (pipeline.h): the batch's last byte, at offset count * item_size - 1
 * from items, must be at most UINTPTR_MAX - items.  Checking only where the
 * last item starts let one that starts on the last bytes and runs past them
 * through.  Written so that nothing overflows: the last item's own bytes
 * must fit, then the items before it. */
static bool items_fit(const void *items, size_t count, size_t item_size) {
    if (count == 0) return true;
    uintptr_t room = UINTPTR_MAX - (uintptr_t)items; /* offset of the last byte there is */
    if (item_size - 1 > room) return false;
    return count - 1 <= (room - (item_size - 1)) / item_size;
}

weft_pipeline *weft_simple_pipeline_create(size_t lines, void *items, size_t count, size_t item_size,
                                           const weft_item_stage *stages, size_t nstages, weft_status *err) {
    if (!check_shape(lines, stages, nstages, err)) return NULL;
    if ((!items && count > 0) || item_size == 0)
        return fail(err, WEFT_EINVAL, "a simple pipeline needs items (got %s) of a non-zero size (got %zu)",
                    items ? "a pointer" : "NULL", item_size);
    if (!items_fit(items, count, item_size))
        return fail(err, WEFT_EINVAL, "a simple pipeline's %zu items of %zu bytes do not fit in memory", count,
                    item_size);
    for (size_t i = 0; i < nstages; i++)
        if (!check_stage(i, (int)stages[i].kind, stages[i].fn != NULL, stages[i].name, false, err)) return NULL;
    /* Internal stage 0 hands out the items; the user's stages follow it. */
    weft_pipeline *p = alloc_pipeline("weft_simple_pipeline_create", lines, nstages + 1, 0, err);
    if (!p) return NULL;
    p->stages[0] = (weft__stage){.parallel = 0, .call = WEFT__CALL_GEN};
    for (size_t i = 0; i < nstages; i++)
        p->stages[i + 1] = (weft__stage){.parallel = stages[i].kind == WEFT_STAGE_PARALLEL,
                                         .call = WEFT__CALL_ITEM,
                                         .fn.item = stages[i].fn,
                                         .arg = stages[i].arg};
    p->items = items;
    p->count = count;
    p->item_size = item_size;
    p->simple = true;
    return finish(p, err);
}

static bool is_running(const weft_pipeline *p) {
    return atomic_load_explicit(&p->running, memory_order_acquire) != 0;
}

weft_status weft_simple_pipeline_set_items(weft_pipeline *p, void *items, size_t count) {
    if (!p || !p->simple || (!items && count > 0))
        return weft__fail(__func__, WEFT_EINVAL, "p is NULL or not a simple pipeline, or items is NULL with count > 0");
    if (!items_fit(items, count, p->item_size))
        return weft__fail(__func__, WEFT_EINVAL, "%zu items of %zu bytes do not fit in memory", count, p->item_size);
    if (is_running(p)) return weft__fail(__func__, WEFT_EBUSY, "the pipeline is running");
    p->items = items;
    p->count = count;
    return WEFT_OK;
}

/* ---- all pipelines ----------------------------------------------------------- */

weft_status weft_pipeline_reset(weft_pipeline *p) {
    if (!p) return weft__fail(__func__, WEFT_EINVAL, "p is NULL");
    if (is_running(p)) return weft__fail(__func__, WEFT_EBUSY, "the pipeline is running");
    atomic_store_explicit(&p->next_token, 0, memory_order_relaxed);
    return WEFT_OK;
}

weft_status weft_pipeline_set_scheduling(weft_pipeline *p, weft_pipeline_scheduling how) {
    if (!p || (unsigned)how > WEFT_PIPELINE_INLINE)
        return weft__fail(__func__, WEFT_EINVAL, "p is NULL, or scheduling %d is unknown", (int)how);
    if (is_running(p)) return weft__fail(__func__, WEFT_EBUSY, "the pipeline is running");
    p->scheduling = how;
    return WEFT_OK;
}

weft_status weft_pipeline_set_priority(weft_pipeline *p, weft_priority priority) {
    if (!p || priority < WEFT_PRIORITY_LOW || priority > WEFT_PRIORITY_CRITICAL)
        return weft__fail(__func__, WEFT_EINVAL, "p is NULL, or %d is not a priority", (int)priority);
    if (is_running(p)) return weft__fail(__func__, WEFT_EBUSY, "the pipeline is running");
    p->prio = (signed char)priority;
    return WEFT_OK;
}

weft_priority weft_pipeline_priority(const weft_pipeline *p) {
    return p ? (weft_priority)p->prio : WEFT_PRIORITY_NORMAL;
}

uint64_t weft_pipeline_num_inline_tokens(const weft_pipeline *p) {
    return p ? atomic_load_explicit(&p->inline_tokens, memory_order_relaxed) : 0;
}

uint64_t weft_pipeline_num_tokens(const weft_pipeline *p) {
    return p ? atomic_load_explicit(&p->next_token, memory_order_relaxed) : 0;
}
size_t weft_pipeline_num_lines(const weft_pipeline *p) { return p ? p->nlines : 0; }
size_t weft_pipeline_num_stages(const weft_pipeline *p) { return p ? p->nstages - p->simple : 0; }

weft_status weft_pipeline_destroy(weft_pipeline *p) {
    if (!p) return WEFT_OK;
    if (is_running(p)) return weft__fail(__func__, WEFT_EBUSY, "the pipeline is running");
    free_parts(p);
    return WEFT_OK;
}
