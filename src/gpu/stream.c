/* Streams, events, stream pools and guards, and waiting for GPU work without
 * blocking a worker. */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "core/executor.h"
#include "core/layer.h" /* the poll watcher's nap bounds */
#include "core/log.h"
#include "gpu/backend.h"

/* ---- streams ---------------------------------------------------------------- */

/* A stream of dev; pooled: a pool's, which is not one of the program's
 * objects (dev->live_streams). */
static weft_gpu_stream *stream_new(weft_gpu_device *dev, bool pooled, weft_status *err) {
    int st = WEFT_EINVAL;
    weft_gpu_stream *s = weft__calloc(sizeof *s);
    if (!s) {
        st = weft__fail_st("weft_gpu_stream_create", WEFT_ENOMEM);
        goto out;
    }
    s->dev = dev;
    s->pooled = pooled;
    st = dev->ops->stream_create(dev, &s->h);
    if (st) {
        weft__free(s, sizeof *s);
        s = NULL;
        goto out;
    }
    weft__mutex_lock(&dev->lock);
    s->next = dev->streams;
    if (s->next) s->next->prev = s;
    dev->streams = s;
    weft__mutex_unlock(&dev->lock);
    if (!pooled) atomic_fetch_add_explicit(&dev->live_streams, 1, memory_order_relaxed);
out:
    if (err) *err = (weft_status)st;
    return s;
}

weft_gpu_stream *weft_gpu_stream_create(weft_gpu_device *dev, weft_status *err) {
    if (!dev) return weft__fail_null(err, __func__, WEFT_EINVAL, "dev is NULL");
    return stream_new(dev, false, err);
}

/* Waits for the stream's work and frees it (a pool's too). */
static void stream_free(weft_gpu_stream *s) {
    weft_gpu_device *d = s->dev;
    weft__mutex_lock(&d->lock);
    if (s->prev) s->prev->next = s->next;
    else d->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    weft__mutex_unlock(&d->lock);
    (void)d->ops->stream_sync(d, s->h);
    if (s->query_h) d->ops->event_destroy(d, s->query_h);
    d->ops->stream_destroy(d, s->h);
    if (!s->pooled) atomic_fetch_sub_explicit(&d->live_streams, 1, memory_order_relaxed);
    weft__free(s, sizeof *s);
}

void weft_gpu_stream_destroy(weft_gpu_stream *s) {
    if (!s) return;
    /* A pool's stream (weft_gpu_stream_pool_get, weft_gpu_stream_begin, a GPU
     * task's) is the pool's: freed here, the pool handed it out again and
     * freed it a second time. */
    if (s->pooled) {
        weft__log(WEFT_LOG_WARN, "weft_gpu_stream_destroy: the stream belongs to a stream pool, which frees it: "
                                 "nothing done");
        return;
    }
    stream_free(s);
}

weft_gpu_device *weft_gpu_stream_device(const weft_gpu_stream *s) { return s ? s->dev : NULL; }

weft_status weft_gpu_stream_synchronize(weft_gpu_stream *s) {
    return s ? (weft_status)s->dev->ops->stream_sync(s->dev, s->h) : weft__fail(__func__, WEFT_EINVAL, "s is NULL");
}

/* ---- events ----------------------------------------------------------------- */

weft_gpu_event *weft_gpu_event_record(weft_gpu_stream *s, weft_status *err) {
    int st = WEFT_EINVAL;
    weft_gpu_event *e = NULL;
    if (!s) {
        st = weft__fail(__func__, WEFT_EINVAL, "s is NULL");
        goto out;
    }
    e = weft__calloc(sizeof *e);
    if (!e) {
        st = weft__fail_st(__func__, WEFT_ENOMEM);
        goto out;
    }
    e->dev = s->dev;
    st = s->dev->ops->event_record(s->dev, s->h, &e->h);
    if (st) {
        weft__free(e, sizeof *e);
        e = NULL;
    } else {
        atomic_fetch_add_explicit(&s->dev->live_events, 1, memory_order_relaxed);
    }
out:
    if (err) *err = (weft_status)st;
    return e;
}

weft_status weft_gpu_event_query(weft_gpu_event *e) {
    return e ? (weft_status)e->dev->ops->event_query(e->dev, e->h) : weft__fail(__func__, WEFT_EINVAL, "e is NULL");
}

void weft_gpu_event_destroy(weft_gpu_event *e) {
    if (!e) return;
    e->dev->ops->event_destroy(e->dev, e->h);
    atomic_fetch_sub_explicit(&e->dev->live_events, 1, memory_order_relaxed);
    weft__free(e, sizeof *e);
}

struct event_wait {
    weft_gpu_event *e;
    weft__worker *w;
    int status;
    uint32_t nap; /* the last nap's length in ns; 0: none since work was seen */
};

/* True if w sees no job anywhere: its own deque and overflow, the injector,
 * every other worker's deque.  A hint (a job pushed just after is found on
 * the wait's next look, at most one nap later). */
static bool nothing_to_run(weft__worker *w) {
    weft_executor *ex = w->ex;
    if (weft__deque_size(&w->deque) > 0 || w->overflow_head || !weft__injector_empty(&ex->injector)) return false;
    for (unsigned v = 0; v < ex->nworkers; v++)
        if (weft__deque_size(&ex->workers[v].deque) > 0) return false;
    return true;
}

/* The cooperative wait's test (weft__worker_wait_until calls it between
 * looks for work).  While the event is pending and the executor has nothing
 * to run, the worker naps instead of spinning: 20 us, doubling up to 1 ms
 * (the poll watcher's bounds, core/layer.h), so the completion is seen at
 * most one nap late and a long wait costs a wake-up per millisecond. */
static bool event_done(void *arg) {
    struct event_wait *ew = arg;
    int st = ew->e->dev->ops->event_query(ew->e->dev, ew->e->h);
    if (st != WEFT_EAGAIN) {
        ew->status = st;
        return true;
    }
    if (!ew->w || !nothing_to_run(ew->w)) {
        ew->nap = 0;
        return false;
    }
    ew->nap = weft__poll_nap_next(ew->nap);
    _Atomic uint32_t never = 0; /* a timed sleep: nobody wakes this word */
    (void)weft__futex_wait(&never, 0, ew->nap);
    return false;
}

/* Cooperative GPU waits open on this thread, each below the jobs it ran.  A
 * job picked up by a wait runs inside it, and a GPU task or weft_gpu_call
 * there records its work and waits in turn: the device is slower than the
 * recording, so nearly every such job nests once more, and a worker with
 * thousands of ready GPU calls went one wait deeper per call until its stack
 * overflowed (20000 async tasks each calling weft_gpu_call on one worker,
 * ~550 bytes a level).  Past this depth a wait blocks its thread instead: the
 * device finishes the work without the CPU, and the worker already has that
 * many waits' work in flight on it. */
enum { MAX_NESTED_WAITS = 64 };
static _Thread_local unsigned nested_waits;

int weft__gpu_event_wait_on(weft_gpu_event *e, weft__worker *w) {
    if (!w) {
        weft_ctx *cx = weft_current_ctx();
        w = cx ? cx->worker : NULL;
    }
    if (!w || nested_waits >= MAX_NESTED_WAITS) return e->dev->ops->event_sync(e->dev, e->h);
    /* On a worker: run other ready jobs until the event has passed, so the
     * worker is never idle behind the device (docs/design.md, "GPU
     * completion"). */
    struct event_wait ew = {.e = e, .w = w};
    nested_waits++;
    weft__worker_wait_until(w, event_done, &ew);
    nested_waits--;
    return ew.status;
}

int weft__gpu_event_wait_any(weft_gpu_event *e) { return weft__gpu_event_wait_on(e, NULL); }

weft_status weft_gpu_event_wait(weft_gpu_event *e) {
    return e ? (weft_status)weft__gpu_event_wait_any(e) : weft__fail(__func__, WEFT_EINVAL, "e is NULL");
}

/* What a synchronize of s reports once e, recorded on it, is done with
 * event_status: the backend's sync_status (take: the failures count as
 * reported), or event_status where failures cannot be told apart. */
static int sync_status(weft_gpu_stream *s, weft_gpu_event *e, int event_status, bool take) {
    const weft__gpu_ops *ops = s->dev->ops;
    if (event_status == WEFT_EAGAIN || !ops->sync_status) return event_status;
    return ops->sync_status(s->dev, s->h, e->h, take);
}

/* A synchronize that waits as weft__gpu_event_wait_on does (w NULL: the
 * calling thread's worker, else blocking). */
static weft_status stream_wait_on(weft_gpu_stream *s, weft__worker *w) {
    weft_gpu_event e = {.dev = s->dev};
    int st = s->dev->ops->event_record(s->dev, s->h, &e.h);
    if (st) return (weft_status)s->dev->ops->stream_sync(s->dev, s->h);
    st = sync_status(s, &e, weft__gpu_event_wait_on(&e, w), true);
    s->dev->ops->event_destroy(s->dev, e.h);
    return (weft_status)st;
}

weft_status weft_gpu_stream_wait(weft_gpu_stream *s) {
    return s ? stream_wait_on(s, NULL) : weft__fail(__func__, WEFT_EINVAL, "s is NULL");
}

/* The marker of the last query is asked again while no work was queued since;
 * new work (a launch or a copy on s) makes the next query record a new one.
 * It reports what a synchronize would, and leaves it to report. */
weft_status weft_gpu_stream_query(weft_gpu_stream *s) {
    if (!s) return weft__fail(__func__, WEFT_EINVAL, "s is NULL");
    weft_gpu_device *d = s->dev;
    /* No work was ever queued (launches and copies set query_stale): all of
     * it is done.  A marker recorded now could still be pending at the first
     * query (the emulator's stream thread has not seen it), which said
     * WEFT_EAGAIN for a stream that never had work. */
    if (!s->query_h && !atomic_load_explicit(&s->query_stale, memory_order_relaxed)) return WEFT_OK;
    if (!s->query_h || atomic_exchange_explicit(&s->query_stale, false, memory_order_relaxed)) {
        if (s->query_h) d->ops->event_destroy(d, s->query_h);
        s->query_h = NULL;
        int st = d->ops->event_record(d, s->h, &s->query_h);
        if (st) {
            /* No marker: the work since stays unasked-about.  Without the
             * flag back, no marker and no flag read as "never had work",
             * and the next query said WEFT_OK with work still pending. */
            s->query_h = NULL;
            atomic_store_explicit(&s->query_stale, true, memory_order_relaxed);
            return (weft_status)st;
        }
    }
    weft_gpu_event e = {.dev = d, .h = s->query_h};
    return (weft_status)sync_status(s, &e, d->ops->event_query(d, s->query_h), false);
}

/* ---- task scopes -------------------------------------------------------------- */

_Thread_local weft__gpu_scope *weft__gpu_scope_now;

void weft__gpu_scope_enter(weft__gpu_scope *sc, weft_gpu_stream *s) {
    sc->stream = s->h;
    sc->outer = weft__gpu_scope_now;
    atomic_store_explicit(&sc->status, 0, memory_order_relaxed);
    sc->message[0] = '\0';
    weft__gpu_scope_now = sc;
}

void weft__gpu_scope_leave(weft__gpu_scope *sc) { weft__gpu_scope_now = sc->outer; }

int weft__gpu_scope_status(weft_gpu_device *dev, weft__gpu_scope *sc, int event_status) {
    if (!dev->ops->scopes || event_status == WEFT_EAGAIN) return event_status;
    /* acquire: pairs with the backend's release store of status, after the
     * message. */
    int st = atomic_load_explicit(&sc->status, memory_order_acquire);
    if (st) weft__set_error_message("%s", sc->message);
    return st;
}

int weft__gpu_scope_end(weft__gpu_scope *sc, weft_gpu_stream_guard *g, weft__worker *w) {
    weft_gpu_stream *s = g->pool_->streams[g->slot_];
    weft_gpu_event e = {.dev = s->dev};
    int st = s->dev->ops->event_record(s->dev, s->h, &e.h);
    if (st == 0) {
        st = weft__gpu_event_wait_on(&e, w);
        s->dev->ops->event_destroy(s->dev, e.h);
    } else if (s->dev->ops->stream_drain) {
        /* No marker: wait without a synchronize, which would take the
         * stream's loose failures (no task's) as reported, while the scope's
         * outcome below is all this reports: they were lost to the stream's
         * own synchronize. */
        s->dev->ops->stream_drain(s->dev, s->h);
        st = 0;
    } else {
        st = s->dev->ops->stream_sync(s->dev, s->h);
    }
    weft__gpu_guard_release(g);
    return weft__gpu_scope_status(s->dev, sc, st);
}

/* ---- pools and guards ------------------------------------------------------- */

static void pool_free(weft_gpu_stream_pool *p) {
    for (unsigned i = 0; p->streams && i < p->n; i++)
        if (p->streams[i]) stream_free(p->streams[i]);
    if (p->streams) weft__free(p->streams, sizeof *p->streams * p->n);
    if (p->held) weft__free((void *)p->held, sizeof *p->held * p->n);
    weft__free(p, sizeof *p);
}

void weft__gpu_pool_free(weft_gpu_stream_pool *p) { pool_free(p); }

weft_gpu_stream_pool *weft__gpu_pool_new(weft_gpu_device *dev, unsigned n, bool own, weft_status *err) {
    static const char call[] = "weft_gpu_stream_pool_create";
    int st = WEFT_EINVAL;
    weft_gpu_stream_pool *p = NULL;
    if (n == 0) n = 4;
    if (!dev || n > 256) {
        st = weft__fail(call, WEFT_EINVAL, "dev is NULL, or %u streams are more than 256", n);
        goto out;
    }
    st = WEFT_ENOMEM;
    p = weft__calloc(sizeof *p);
    if (!p) {
        st = weft__fail_st(call, WEFT_ENOMEM);
        goto out;
    }
    p->dev = dev;
    p->n = n;
    p->own = own;
    p->streams = weft__calloc(sizeof *p->streams * n);
    p->held = weft__calloc(sizeof *p->held * n);
    if (!p->streams || !p->held) st = weft__fail_st(call, WEFT_ENOMEM);
    if (p->streams && p->held) {
        st = WEFT_OK; /* weft_gpu_stream_create says why it failed */
        for (unsigned i = 0; i < n && st == WEFT_OK; i++)
            p->streams[i] = stream_new(dev, true, (weft_status *)&st);
    }
    if (st) {
        pool_free(p);
        p = NULL;
    } else if (!own) {
        atomic_fetch_add_explicit(&dev->live_pools, 1, memory_order_relaxed);
    }
out:
    if (err) *err = (weft_status)st;
    return p;
}

weft_gpu_stream_pool *weft_gpu_stream_pool_create(weft_gpu_device *dev, unsigned n, weft_status *err) {
    return weft__gpu_pool_new(dev, n, false, err);
}

void weft_gpu_stream_pool_destroy(weft_gpu_stream_pool *p) {
    if (!p) return;
    /* The device's own pool (weft_gpu_device_pool) is the device's: its GPU
     * tasks use it until weft_gpu_close, which frees it.  Freed here, close
     * freed it a second time. */
    if (p->own) {
        weft__log(WEFT_LOG_WARN, "weft_gpu_stream_pool_destroy: the pool is the device's own (weft_gpu_device_pool); "
                                 "weft_gpu_close frees it: nothing done");
        return;
    }
    atomic_fetch_sub_explicit(&p->dev->live_pools, 1, memory_order_relaxed);
    pool_free(p);
}

unsigned weft_gpu_stream_pool_size(const weft_gpu_stream_pool *p) { return p ? p->n : 0; }

weft_gpu_stream *weft_gpu_stream_pool_get(weft_gpu_stream_pool *p, unsigned i) {
    return p ? p->streams[i % p->n] : NULL;
}

weft_gpu_stream *weft_gpu_stream_begin(weft_gpu_stream_pool *p, weft_gpu_stream_guard *g) {
    if (!p || !g) {
        /* A closed guard, so that a weft_gpu_stream_end of it (the pattern
         * with no check between) is WEFT_EINVAL, not a read of whatever the
         * caller's guard held. */
        if (g) *g = (weft_gpu_stream_guard){0};
        return weft__fail(__func__, WEFT_EINVAL, "p or g is NULL"), NULL;
    }
    unsigned start = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
    *g = (weft_gpu_stream_guard){.pool_ = p, .slot_ = start % p->n, .reserved_ = true};
    for (unsigned k = 0; k < p->n; k++) {
        unsigned i = (start + k) % p->n;
        unsigned none = 0;
        /* acquire: pairs with the release in weft_gpu_stream_end, so the last
         * holder's enqueues happen before ours. */
        if (atomic_compare_exchange_strong_explicit(&p->held[i], &none, 1, memory_order_acquire,
                                                    memory_order_relaxed)) {
            g->slot_ = i;
            return p->streams[i];
        }
    }
    /* Every stream is held: share the one the rotation starts at, counted, so
     * that it is not taken as free while this guard is open. */
    atomic_fetch_add_explicit(&p->held[g->slot_], 1, memory_order_acquire);
    return p->streams[g->slot_];
}

void weft__gpu_guard_release(weft_gpu_stream_guard *g) {
    if (g->reserved_) atomic_fetch_sub_explicit(&g->pool_->held[g->slot_], 1, memory_order_release);
    g->reserved_ = false;
    g->pool_ = NULL;
}

weft_status weft_gpu_stream_end(weft_gpu_stream_guard *g) {
    if (!g || !g->pool_) return weft__fail(__func__, WEFT_EINVAL, "g or g->pool_ is NULL");
    weft_gpu_stream_pool *p = g->pool_;
    weft_status st = stream_wait_on(p->streams[g->slot_], NULL);
    weft__gpu_guard_release(g);
    return st;
}
