/* Condition and multi-condition tasks: the weak edges out of them are not
 * counted in join counters; the successor they pick is made ready directly.
 *
 * Counting (see run.c): the condition task was counted in its run's `pending`
 * when it became ready.  Handing on one picked successor keeps that count (it
 * moves to the successor); each further pick adds one before it is pushed;
 * picking none gives the count back, which may end the iteration. */
#include "graph/flow.h"
#include "core/error_detail.h"

weft_task weft_emplace_condition(weft_taskflow *tf, weft_cond_fn fn, void *arg) {
    if (!tf) return WEFT_TASK_NULL;
    if (!fn) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_condition: function is NULL");
        return WEFT_TASK_NULL;
    }
    /* Stored as a weft_task_fn and cast back before the call (same signature). */
    return weft__add_kind(tf, WEFT__KIND_COND, weft__cond_run, (weft_task_fn)fn, arg);
}

weft_task weft_emplace_multi_condition(weft_taskflow *tf, weft_multi_cond_fn fn, void *arg) {
    if (!tf) return WEFT_TASK_NULL;
    if (!fn) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_multi_condition: function is NULL");
        return WEFT_TASK_NULL;
    }
    /* Stored as a weft_task_fn and cast back to weft_multi_cond_fn before the call. */
    return weft__add_kind(tf, WEFT__KIND_MCOND, weft__mcond_run, (weft_task_fn)(void (*)(void))fn, arg);
}

weft__job *weft__cond_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    weft_future *top = r->top;
    if (weft__node_enter(w, n, top)) {
        weft_ctx cx;
        struct weft__obs *o = weft__task_enter(w, &cx, n, r);
        int k = ((weft_cond_fn)n->fn)(&cx, n->arg);
        weft__task_leave(w, &cx, o, n, r, k < 0 ? k : 0);
        if (k < 0) {
            weft__fail_node(r, n, k);
        } else if ((uint32_t)k < n->nsucc) {
            return &weft__succ_array(n)[k]->job; /* takes over this node's count */
        }
    }
    return weft__run_settle(w, r, -1);
}

struct weft_branches {
    const weft__node *n;
    uint64_t picked; /* bit i: successor i */
};

weft_status weft_branches_add(weft_branches *out, unsigned index) {
    if (!out || index >= 64 || index >= out->n->nsucc)
        return weft__fail(__func__, WEFT_EINVAL, "invalid argument (!out || index >= 64 || index >= out->n->nsucc)");
    out->picked |= (uint64_t)1 << index;
    return WEFT_OK;
}

/* Makes the picked successors ready: the first is handed back, the others are
 * counted, then pushed. */
static weft__job *hand_out(weft__worker *w, weft__run *r, const weft__node *n, uint64_t picked) {
    weft__node *const *succ = weft__succ_array(n);
    int first = __builtin_ctzll(picked);
    picked &= picked - 1;
    int more = __builtin_popcountll(picked);
    if (more) atomic_fetch_add_explicit(&r->pending, more, memory_order_relaxed);
    for (; picked; picked &= picked - 1) weft__push_local(w, &succ[__builtin_ctzll(picked)]->job);
    return &succ[first]->job;
}

weft__job *weft__mcond_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    weft_future *top = r->top;
    weft_branches b = {n, 0};
    if (weft__node_enter(w, n, top)) {
        weft_ctx cx;
        struct weft__obs *o = weft__task_enter(w, &cx, n, r);
        int rc = ((weft_multi_cond_fn)(void (*)(void))n->fn)(&cx, n->arg, &b);
        weft__task_leave(w, &cx, o, n, r, rc);
        if (rc != 0) weft__fail_node(r, n, rc);
    }
    if (b.picked) return hand_out(w, r, n, b.picked);
    return weft__run_settle(w, r, -1);
}
