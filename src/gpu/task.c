/* GPU work as tasks.
 *
 * A graph's GPU task (weft_emplace_gpu) completes without any worker waiting
 * for it: its job records the work on a stream of the device's pool, records
 * an event after it, hands the event to the device's watch for the executor,
 * and returns, its node still counted in the run's pending count (as a task
 * parked on a semaphore is).  The watch is an idle-time poller (core/layer.h)
 * registered while the executor has GPU tasks outstanding on the device: idle
 * workers test the events, and a finished one's completion job is submitted;
 * it runs on a worker like any job, gives the stream back and releases the
 * task's successors (weft__release_successors), so they start then.
 * docs/design.md, "GPU completion", has the argument and the figures.
 *
 * Where that path is not available the task waits cooperatively (its worker
 * runs other jobs, naps when there are none: stream.c): weft_gpu_call from
 * async tasks and pipeline stages, a copy of the task made by a composition or
 * run by weft_run_n_parallel (they call the node's function, run_gpu_task), an
 * executor whose poller slots are full, and a task whose fn failed (the work
 * it queued may use memory the caller frees once it returns). */
#include "core/alloc.h"
#include "core/layer.h"
#include "core/obs_hooks.h" /* the recording: busy time and a span */
#include "gpu/backend.h"
#include "graph/flow.h" /* weft__task_set_own_job */
#include "weft/flow.h"
#include "core/error_detail.h"

typedef struct weft__gpu_watch weft__gpu_watch;

/* One outstanding completion: the task's work is queued, its event pending. */
typedef struct gpu_pending {
    weft__job job; /* first: the completion job the poller submits */
    struct gpu_pending *next; /* in the watch's inbox, then in its list */
    weft__gpu_watch *watch;
    weft__node *node;
    weft__run *run;
    weft_gpu_stream_guard guard;
    weft__gpu_scope scope; /* the task's failures (backend.h) */
    void *event; /* the backend's */
    int status;  /* the event's outcome, set by the poller */
} gpu_pending;

/* Each node runs at most once at a time (runs of a taskflow are queued, and a
 * task runs again only after its predecessors, which follow its completion),
 * so the record lives with the task. */
struct gpu_task {
    weft_gpu_device *dev;
    weft_gpu_task_fn fn;
    void *arg;
    gpu_pending pending;
};

/* GPU tasks of one device outstanding on one executor. */
struct weft__gpu_watch {
    weft_gpu_device *dev;
    weft_executor *ex;
    weft__poller *poller;
    weft__gpu_watch *next;           /* in dev->watches, under dev->watch_lock */
    unsigned outstanding;            /* parked and not yet completed: under watch_lock */
    _Atomic(gpu_pending *) inbox;    /* pushed by parking tasks */
    gpu_pending *list;               /* the poller's own: one caller at a time */
};

/* ---- the cooperative path ---------------------------------------------------- */

/* Takes a stream, calls fn in a scope of its own (so that the outcome is the
 * failure of fn's work, not of another task's sharing the stream), and waits
 * for the work. */
static int call_on_stream(weft_ctx *ctx, weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg) {
    weft_gpu_stream_guard g;
    weft__gpu_scope sc;
    weft_gpu_stream *s = weft_gpu_stream_begin(dev->pool, &g);
    weft__gpu_scope_enter(&sc, s);
    int rc = fn(ctx, s, arg);
    weft__gpu_scope_leave(&sc);
    /* Wait even when fn failed: work it queued before failing may still use
     * memory the caller frees once we return. */
    int st = weft__gpu_scope_end(&sc, &g, NULL);
    return rc ? rc : st;
}

int weft_gpu_call(weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg) {
    if (!dev || !fn) return weft__fail(__func__, WEFT_EINVAL, "dev or fn is NULL");
    return call_on_stream(weft_current_ctx(), dev, fn, arg);
}

static int run_gpu_task(weft_ctx *ctx, void *arg) {
    struct gpu_task *t = arg;
    return call_on_stream(ctx, t->dev, t->fn, t->arg);
}

/* ---- the watch: an idle-time poller per device and executor ------------------ */

/* Tests the events of w's tasks; submits the completion of each one done.
 * Called by idle workers of w->ex, one at a time (core/poll.c). */
static int watch_poll(weft_executor *ex, void *arg) {
    weft__gpu_watch *w = arg;
    gpu_pending *in = atomic_exchange_explicit(&w->inbox, NULL, memory_order_acquire);
    while (in) {
        gpu_pending *p = in;
        in = in->next;
        p->next = w->list;
        w->list = p;
    }
    bool progress = false;
    for (gpu_pending **at = &w->list; *at;) {
        gpu_pending *p = *at;
        int st = w->dev->ops->event_query(w->dev, p->event);
        if (st == WEFT_EAGAIN) {
            at = &p->next;
            continue;
        }
        *at = p->next;
        p->status = st;
        /* On one of ex's workers: its own deque, which it looks at next. */
        if (weft__submit(ex, &p->job) != WEFT_OK) {
            /* No memory for the injector (cannot happen on a worker): try
             * again next time. */
            p->next = *at;
            *at = p;
            at = &p->next;
            continue;
        }
        progress = true;
    }
    if (progress) return WEFT__POLL_PROGRESS;
    return w->list ? WEFT__POLL_PENDING : WEFT__POLL_IDLE;
}

/* Hands p (its event recorded) to the watch of dev and ex, made on first use.
 * 0, or a negative status (no memory, no poller slot): the caller waits
 * cooperatively instead. */
static int watch_park(weft_gpu_device *dev, weft_executor *ex, gpu_pending *p) {
    weft__mutex_lock(&dev->watch_lock);
    weft__gpu_watch *w = dev->watches;
    while (w && w->ex != ex) w = w->next;
    if (!w) {
        w = weft__calloc(sizeof *w);
        int st = w ? WEFT_OK : WEFT_ENOMEM;
        if (w) {
            w->dev = dev;
            w->ex = ex;
            st = weft__poller_add(ex, watch_poll, w, &w->poller); /* kicks a sleeper */
        }
        if (st != WEFT_OK) {
            weft__mutex_unlock(&dev->watch_lock);
            if (w) weft__free(w, sizeof *w);
            return st;
        }
        w->next = dev->watches;
        dev->watches = w;
    }
    w->outstanding++;
    weft__mutex_unlock(&dev->watch_lock);
    /* After the count: the watch lives until p's completion has run. */
    p->watch = w;
    gpu_pending *head = atomic_load_explicit(&w->inbox, memory_order_relaxed);
    do p->next = head;
    while (!atomic_compare_exchange_weak_explicit(&w->inbox, &head, p, memory_order_release, memory_order_relaxed));
    return 0;
}

/* p's completion has run: the last one of a watch unregisters and frees it
 * (never from inside the poller: this runs as a job). */
static void watch_done(weft__gpu_watch *w) {
    weft_gpu_device *dev = w->dev;
    weft__mutex_lock(&dev->watch_lock);
    bool last = --w->outstanding == 0;
    if (last) {
        weft__gpu_watch **at = &dev->watches;
        while (*at != w) at = &(*at)->next;
        *at = w->next;
        /* Under the lock, so that a task parking meanwhile makes a new watch
         * after this one is gone; the poller never takes the lock. */
        (void)weft__poller_remove(w->ex, w->poller);
    }
    weft__mutex_unlock(&dev->watch_lock);
    if (last) weft__free(w, sizeof *w);
}

/* ---- the graph node ---------------------------------------------------------- */

/* The task's begin and end as observers see them (metrics, profiles, the
 * observer's events), told once the outcome is known: a GPU task ends when its
 * work does, so both come then, on the worker that finishes it (the recording
 * ran before, unobserved: a begin there would stay open on its worker while it
 * runs other jobs, and an end with fn's 0 would call a failed kernel a
 * success). */
static void observe_outcome(weft__worker *wk, weft__node *n, weft__run *r, int status) {
    weft_ctx cx;
    struct weft__obs *o = weft__task_enter(wk, &cx, n, r);
    weft__task_leave(wk, &cx, o, n, r, status);
}

/* The task's end: observed, and its run failed if status says so. */
static weft__job *finish(weft__worker *wk, weft__node *n, weft__run *r, int status) {
    observe_outcome(wk, n, r, status);
    if (status != 0) weft__fail_node(r, n, status);
    /* Last: the next iteration may run this task again (and reuse its record). */
    return weft__release_successors(wk, r, n);
}

/* The completion job: the task's work is done (or failed). */
static weft__job *complete_run(weft__worker *wk, weft__job *job) {
    gpu_pending *p = (gpu_pending *)job;
    weft__node *n = p->node;
    weft__run *r = p->run;
    weft_gpu_device *dev = p->watch->dev;
    int status = weft__gpu_scope_status(dev, &p->scope, p->status);
    dev->ops->event_destroy(dev, p->event);
    weft__gpu_guard_release(&p->guard);
    watch_done(p->watch);
    return finish(wk, n, r, status);
}

/* The job of a GPU task's node: records the work, parks on the watch. */
static weft__job *gpu_node_run(weft__worker *wk, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    /* As weft__node_run: another run's held-back count first. */
    if (__builtin_expect(wk->defer_obj != NULL && wk->defer_obj != r, 0)) weft__defer_settle_local(wk);
    if (!weft__node_enter(wk, n, r->top)) return weft__release_successors(wk, r, n);
    struct gpu_task *t = n->arg;
    weft_gpu_device *dev = t->dev;
    gpu_pending *p = &t->pending;
    /* The recording (fn and the event) is this worker's busy time and a
     * "GPU recording" span of the task, though the task's begin and end are
     * observed at its outcome (observe_outcome): without this, a task that
     * spent 30 ms preparing its launch showed in no busy_ns and no span. */
    struct weft__obs *obs = weft__hook_record_begin(wk, n);
    *p = (gpu_pending){.job = {.run = complete_run}, .node = n, .run = r};
    weft_gpu_stream *s = weft_gpu_stream_begin(dev->pool, &p->guard);
    /* The task's context, as weft__task_enter makes it but unobserved
     * (observe_outcome says why). */
    weft_ctx cx = weft__run_ctx(wk, r, n);
    wk->ctx = &cx;
    weft__gpu_scope_enter(&p->scope, s);
    int rc = t->fn(&cx, s, t->arg);
    /* Spawns fn left unsynced, as every graph task's (graph.h, weft__task_leave). */
    if (__builtin_expect(weft__fj_left_unsynced(wk, &cx), 0)) {
        int left = weft__fj_sync_left(wk, &cx);
        if (rc == 0) rc = left;
    }
    weft__gpu_scope_leave(&p->scope);
    wk->ctx = cx.outer;
    int st = rc ? rc : dev->ops->event_record(dev, s->h, &p->event);
    if (st == 0) {
        st = dev->ops->event_query(dev, p->event);
        /* Before the park (once parked, another worker may finish the task
         * and its run, and n and r may be gone) and before any wait (work
         * run meanwhile counts itself). */
        weft__hook_record_end(wk, obs, n, r);
        if (st == WEFT_EAGAIN && watch_park(dev, wk->ex, p) == 0) return NULL; /* completes later */
        if (st == WEFT_EAGAIN) {
            weft_gpu_event e = {.dev = dev, .h = p->event};
            st = weft__gpu_event_wait_any(&e);
        }
        st = weft__gpu_scope_status(dev, &p->scope, st);
        dev->ops->event_destroy(dev, p->event);
        weft__gpu_guard_release(&p->guard);
    } else {
        weft__hook_record_end(wk, obs, n, r);
        /* fn failed, or no event: wait for what was queued, cooperatively. */
        int end = weft__gpu_scope_end(&p->scope, &p->guard, wk);
        if (st == 0) st = end;
    }
    return finish(wk, n, r, st);
}

/* ---- pipeline stages --------------------------------------------------------- */

int weft_gpu_stage_run(weft_pipeflow *pf, void *stage) {
    weft_gpu_stage *g = stage;
    if (!pf || !g || !g->dev || !g->fn) return weft__fail(__func__, WEFT_EINVAL, "pf, g, g->dev or g->fn is NULL");
    /* A spread pipeline's stage runs as a job with no task context: the
     * executor finds the worker, so that the wait is cooperative. */
    weft__worker *w = g->ex ? weft__current_worker(g->ex) : NULL;
    weft_gpu_stream_guard guard;
    weft__gpu_scope sc;
    weft_gpu_stream *s = weft_gpu_stream_begin(g->dev->pool, &guard);
    weft__gpu_scope_enter(&sc, s);
    int rc = g->fn(pf, s, g->arg);
    weft__gpu_scope_leave(&sc);
    int st = weft__gpu_scope_end(&sc, &guard, w); /* even after a failure: see call_on_stream */
    return rc ? rc : st;
}

static void drop_gpu_task(void *arg) { weft__free(arg, sizeof(struct gpu_task)); }

weft_task weft_emplace_gpu(weft_taskflow *tf, weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg) {
    /* As weft_emplace: the message names the call, and a NULL dev or fn is
     * tf's last error (weft_emplace(NULL, ...) set neither). */
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!dev || !fn) return weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_gpu: dev or fn is NULL"), WEFT_TASK_NULL;
    struct gpu_task *t = weft__calloc(sizeof *t);
    if (!t) return weft__tf_error(tf, WEFT_ENOMEM, NULL), WEFT_TASK_NULL;
    t->dev = dev;
    t->fn = fn;
    t->arg = arg;
    weft_status st;
    weft_work *w = weft_work_create(run_gpu_task, t, drop_gpu_task, &st);
    if (!w) {
        drop_gpu_task(t);
        return weft__tf_done(tf, st), WEFT_TASK_NULL; /* weft_work_create said why */
    }
    weft_task task = weft_emplace_work(tf, w);
    weft_work_release(w); /* the task holds its own reference, or failed and holds none */
    /* The node's function stays run_gpu_task (what copies of the task and
     * weft_run_n_parallel call); its job records and parks instead. */
    if (!weft_task_is_null(task)) weft__task_set_own_job(task, gpu_node_run);
    return task;
}
