/* Shared work: a reference-counted function + state that several plain tasks
 * run.  Each task holds a reference in its node's `ext`. */
#include "graph/flow.h"
#include "core/alloc.h"
#include "core/error_detail.h"

weft_work *weft_work_create(weft_task_fn fn, void *state, void (*drop)(void *state), weft_status *err) {
    weft_work *w = fn ? weft__alloc(sizeof *w) : NULL;
    if (!w)
        return fn ? weft__fail_null(err, __func__, WEFT_ENOMEM, NULL)
                  : weft__fail_null(err, __func__, WEFT_EINVAL, "fn is NULL");
    atomic_init(&w->refs, 1);
    w->fn = fn;
    w->state = state;
    w->drop = drop;
    w->own_job = NULL;
    w->home = NULL;
    if (err) *err = WEFT_OK;
    return w;
}

weft_work *weft_work_retain(weft_work *w) {
    if (w) atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
    return w;
}

void weft_work_release(weft_work *w) {
    if (!w) return;
    /* acq_rel: the last release sees every other holder's use of the state. */
    if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1) return;
    if (w->drop) w->drop(w->state);
    weft__free(w, sizeof *w);
}

size_t weft_work_refs(const weft_work *w) { return w ? atomic_load_explicit(&w->refs, memory_order_relaxed) : 0; }

void weft__task_set_own_job(weft_task t, weft__job_fn job) {
    weft__node *n = t.node_;
    weft_work *w = weft__cold(n)->ext;
    w->own_job = job;
    w->home = n;
    weft__node_set_run(n, job);
}

weft_task weft_emplace_work(weft_taskflow *tf, weft_work *w) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!w) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_work: work is NULL");
        return WEFT_TASK_NULL;
    }
    weft_task t = weft__add_node(tf, w->fn, w->state);
    if (weft_task_is_null(t)) return weft__add_named_oom(tf, __func__), t;
    weft__cold_mut(t.node_)->ext = weft_work_retain(w);
    tf->next_owned++;
    return t;
}
