/* The layers an executor is built from (core/layer.h): the per-worker areas
 * they share, their init and fini in order, and the victim order a layer may
 * give each worker. */
#include "core/layer.h"
#include "core/alloc.h"
#include "core/log.h"

#include <string.h>

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/* Each layer's part starts on its own cache line: a part may hold a field other
 * workers write (async's silent_remote), which must not share a line with
 * another layer's owner-only fields.  The offsets depend only on the list,
 * which the composition root gives the same for every executor: they are
 * computed under a once-flag and stay. */
static weft__layer *const *laid_out;
static unsigned laid_out_n;
static size_t laid_out_stride;
static _Atomic int layout_state; /* 0: not yet, 1: being computed, 2: done */

static void layout(weft__layer *const *layers, unsigned n) {
    int expect = 0;
    if (atomic_compare_exchange_strong_explicit(&layout_state, &expect, 1, memory_order_acquire,
                                                memory_order_acquire)) {
        size_t off = 0;
        for (unsigned i = 0; i < n; i++) {
            layers[i]->offset = off;
            off += round_up(layers[i]->worker_bytes, WEFT__CACHE_LINE);
        }
        laid_out = layers;
        laid_out_n = n;
        laid_out_stride = off;
        atomic_store_explicit(&layout_state, 2, memory_order_release); /* publishes the above */
        return;
    }
    unsigned idle = 0; /* another thread is computing it: a few stores away */
    while (atomic_load_explicit(&layout_state, memory_order_acquire) != 2) weft__spin_pause(&idle);
}

int weft__layers_layout(weft_executor *ex, weft__layer *const *layers, unsigned n) {
    layout(layers, n);
    if (layers != laid_out || n != laid_out_n) {
        weft__log(WEFT_LOG_ERROR, "executors of one process must be built from one list of layers");
        return WEFT_EINVAL;
    }
    ex->layer_stride = laid_out_stride;
    if (laid_out_stride) {
        /* Submitter slots (core/submitter.c) have layer state too. */
        ex->layer_areas = weft__calloc_aligned(laid_out_stride * weft__nslots(ex), WEFT__CACHE_LINE);
        if (!ex->layer_areas) return WEFT_ENOMEM; /* nlayers stays 0: nothing to finish */
        for (unsigned i = 0; i < weft__nslots(ex); i++)
            ex->workers[i].layers = (char *)ex->layer_areas + (size_t)i * laid_out_stride;
    }
    ex->layers = layers;
    ex->nlayers = n;
    return WEFT_OK;
}

/* Layers [0, k) have had executor_init and worker_init (every worker): undo. */
static void fini_first(weft_executor *ex, unsigned k) {
    while (k-- > 0) {
        weft__layer *l = ex->layers[k];
        if (l->worker_fini)
            for (unsigned i = 0; i < weft__nslots(ex); i++)
                l->worker_fini(&ex->workers[i], weft__layer_state(&ex->workers[i], l));
        if (l->executor_fini) l->executor_fini(ex);
    }
}

int weft__layers_init(weft_executor *ex, const weft_executor_config *config) {
    for (unsigned k = 0; k < ex->nlayers; k++) {
        weft__layer *l = ex->layers[k];
        int st = l->executor_init ? l->executor_init(ex, config) : 0;
        unsigned done = 0;
        if (st == 0 && l->worker_init)
            for (; done < weft__nslots(ex); done++) {
                weft__worker *w = &ex->workers[done];
                if ((st = l->worker_init(w, weft__layer_state(w, l))) != 0) break;
            }
        if (st != 0) {
            if (l->worker_fini)
                while (done-- > 0) l->worker_fini(&ex->workers[done], weft__layer_state(&ex->workers[done], l));
            if (l->executor_fini && l->executor_init) l->executor_fini(ex);
            fini_first(ex, k);
            /* A config the layer refused (EINVAL) is the caller's to report:
             * weft_executor_create returns it with the layer's message, so an
             * error line on stderr as well was noise; a failure of the
             * machine (no memory, a system call) is logged as one. */
            weft__log(st == WEFT_EINVAL ? WEFT_LOG_DEBUG : WEFT_LOG_ERROR, "executor create: layer %s failed: %s",
                      l->name, weft_strerror(st));
            ex->nlayers = 0; /* teardown has nothing left to finish */
            return st;
        }
    }
    return WEFT_OK;
}

void weft__layers_thread_start(weft__worker *w) {
    const weft_executor *ex = w->ex;
    for (unsigned k = 0; k < ex->nlayers; k++)
        if (ex->layers[k]->thread_start) ex->layers[k]->thread_start(w, weft__layer_state(w, ex->layers[k]));
}

const char *weft__layers_waits_behind(weft__worker *w, const weft_future *f) {
    const weft_executor *ex = w->ex;
    for (unsigned k = 0; k < ex->nlayers; k++) {
        const weft__layer *l = ex->layers[k];
        const char *why = l->waits_behind ? l->waits_behind(w, weft__layer_state(w, l), f) : NULL;
        if (why) return why;
    }
    return NULL;
}

void weft__layers_fini(weft_executor *ex) {
    fini_first(ex, ex->nlayers);
    ex->nlayers = 0;
    if (ex->layer_areas) weft__free_aligned(ex->layer_areas, ex->layer_stride * weft__nslots(ex), WEFT__CACHE_LINE);
    ex->layer_areas = NULL;
    for (unsigned i = 0; i < ex->nworkers; i++) {
        weft__worker *w = &ex->workers[i];
        weft__free(w->victims, sizeof(unsigned) * w->nvictims);
        weft__free(w->tier_end, sizeof(unsigned) * w->ntiers);
        weft__free(w->tier_tries, sizeof(unsigned) * w->ntiers);
        w->victims = w->tier_end = w->tier_tries = NULL;
    }
    for (unsigned k = 0; k < ex->nnodes; k++) weft__injector_destroy(&ex->mailboxes[k].q);
    if (ex->mailboxes) weft__free_aligned(ex->mailboxes, sizeof *ex->mailboxes * ex->nnodes, WEFT__CACHE_LINE);
    ex->mailboxes = NULL, ex->nnodes = 0;
}

int weft__executor_set_nodes(weft_executor *ex, const int *node, unsigned nnodes) {
    if (!ex || !node || !nnodes || ex->mailboxes) return WEFT_EINVAL;
    for (unsigned i = 0; i < ex->nworkers; i++)
        if (node[i] < -1 || node[i] >= (int)nnodes) return WEFT_EINVAL;
    weft__mailbox *m = weft__calloc_aligned(sizeof *m * nnodes, WEFT__CACHE_LINE);
    if (!m) return WEFT_ENOMEM;
    for (unsigned k = 0; k < nnodes; k++)
        if (weft__injector_init(&m[k].q) != 0) {
            for (unsigned j = 0; j < k; j++) weft__injector_destroy(&m[j].q);
            weft__free_aligned(m, sizeof *m * nnodes, WEFT__CACHE_LINE);
            return WEFT_ENOMEM;
        }
    for (unsigned i = 0; i < ex->nworkers; i++) {
        ex->workers[i].node = node[i];
        if (node[i] >= 0) m[node[i]].nworkers++;
    }
    ex->mailboxes = m, ex->nnodes = nnodes;
    return WEFT_OK;
}

int weft__worker_set_tier_tries(weft__worker *w, const unsigned *tries) {
    if (!w || !tries || !w->ntiers) return WEFT_EINVAL;
    for (unsigned t = 0; t < w->ntiers; t++)
        if (tries[t] == 0) return WEFT_EINVAL;
    unsigned *c = weft__alloc(sizeof(unsigned) * w->ntiers);
    if (!c) return WEFT_ENOMEM;
    memcpy(c, tries, sizeof(unsigned) * w->ntiers);
    weft__free(w->tier_tries, sizeof(unsigned) * w->ntiers);
    w->tier_tries = c;
    return WEFT_OK;
}

int weft__worker_set_victims(weft__worker *w, const unsigned *order, unsigned n, const unsigned *tier_end,
                             unsigned ntiers) {
    if (!w || (n && (!order || !tier_end || !ntiers)) || (!n && ntiers)) return WEFT_EINVAL;
    unsigned nw = w->ex->nworkers;
    for (unsigned i = 0; i < n; i++)
        if (order[i] >= nw || order[i] == w->id) return WEFT_EINVAL;
    for (unsigned t = 0; t < ntiers; t++)
        if (tier_end[t] <= (t ? tier_end[t - 1] : 0) || tier_end[t] > n) return WEFT_EINVAL;
    if (ntiers && tier_end[ntiers - 1] != n) return WEFT_EINVAL;
    unsigned *o = n ? weft__alloc(sizeof(unsigned) * n) : NULL;
    unsigned *t = ntiers ? weft__alloc(sizeof(unsigned) * ntiers) : NULL;
    if ((n && !o) || (ntiers && !t)) {
        weft__free(o, sizeof(unsigned) * n);
        weft__free(t, sizeof(unsigned) * ntiers);
        return WEFT_ENOMEM;
    }
    if (n) memcpy(o, order, sizeof(unsigned) * n);
    if (ntiers) memcpy(t, tier_end, sizeof(unsigned) * ntiers);
    weft__free(w->victims, sizeof(unsigned) * w->nvictims);
    weft__free(w->tier_end, sizeof(unsigned) * w->ntiers);
    weft__free(w->tier_tries, sizeof(unsigned) * w->ntiers);
    w->tier_tries = NULL; /* each victim once until weft__worker_set_tier_tries */
    w->victims = o, w->nvictims = n;
    w->tier_end = t, w->ntiers = ntiers;
    return WEFT_OK;
}

int weft__source_set(weft_executor *ex, const weft__source *src, void *state) {
    if (!ex || !src || !src->take) return WEFT_EINVAL;
    if (src->push) /* before the workers start (core/layer.h): their deques are empty */
        for (unsigned i = 0; i < ex->nworkers; i++)
            if (weft__deque_seal(&ex->workers[i].deque) != WEFT_OK) return WEFT_ENOMEM;
    const weft__source *cur = atomic_load_explicit(&ex->source, memory_order_acquire);
    if (cur) return cur == src && ex->source_state == state ? WEFT_OK : WEFT_EBUSY;
    /* The state first, then the source (seq_cst: a worker's final look, after
     * its idle announcement, either sees it or our notify sees that worker). */
    weft__mutex_lock(&ex->poll_lock); /* two setters: one wins, the other compares */
    cur = atomic_load_explicit(&ex->source, memory_order_relaxed);
    if (!cur) {
        ex->source_state = state;
        atomic_store_explicit(&ex->source, src, memory_order_seq_cst);
    }
    weft__mutex_unlock(&ex->poll_lock);
    return !cur || (cur == src && ex->source_state == state) ? WEFT_OK : WEFT_EBUSY;
}

void weft__source_notify(weft_executor *ex, weft__worker *w) {
    if (w) weft__sleep_notify_local(&ex->sleep);
    else weft__sleep_notify(&ex->sleep);
}
