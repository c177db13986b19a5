/* Condition and multi-condition tasks: the weak edges out of them are not
 * counted in join counters; the successor they pick is made ready directly.
 *
 * Counting (see run.c): the condition task was counted in its run's `pending`
 * when it became ready.  Handing on one picked successor keeps that count (it
 * moves to the successor); each further pick adds one before it is pushed;
 * picking none gives the count back, which may end the iteration. */
#include "graph/flow.h"
#include "core/alloc.h"
#include "core/error_detail.h"

weft_task weft_emplace_condition(weft_taskflow *tf, weft_cond_fn fn, void *arg) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!fn) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_condition: function is NULL");
        return WEFT_TASK_NULL;
    }
    /* Stored as a weft_task_fn and cast back before the call (same signature). */
    return weft__add_kind(tf, WEFT__KIND_COND, weft__cond_run, (weft_task_fn)fn, arg, NULL);
}

weft_task weft_emplace_multi_condition(weft_taskflow *tf, weft_multi_cond_fn fn, void *arg) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!fn) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_emplace_multi_condition: function is NULL");
        return WEFT_TASK_NULL;
    }
    /* Stored as a weft_task_fn and cast back to weft_multi_cond_fn before the call. */
    return weft__add_kind(tf, WEFT__KIND_MCOND, weft__mcond_run, (weft_task_fn)(void (*)(void))fn, arg, NULL);
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
            /* takes over this node's count; to the deque when the worker's
             * look at the shared queues is due (a condition loop) */
            return weft__hand_on(w, &weft__succ_array(n)[k]->job);
        }
    }
    return weft__run_settle(w, r, -1);
}

struct weft_branches {
    const weft__node *n;
    uint64_t picked; /* bit i: successor i, for i < 64 */
    /* Successors from 64 on, bit i - 64; NULL until one of them is picked
     * (allocated then: most multi-conditions have fewer than 64). */
    uint64_t *more;
};

/* Words of weft_branches.more for node n. */
static size_t more_words(const weft__node *n) { return n->nsucc > 64 ? (n->nsucc - 64 + 63) / 64 : 0; }

weft_status weft_branches_add(weft_branches *out, unsigned index) {
    if (!out) return weft__fail(__func__, WEFT_EINVAL, "out is NULL");
    if (index >= out->n->nsucc)
        return weft__fail(__func__, WEFT_EINVAL, "successor %u picked; the task has %u", index, out->n->nsucc);
    if (index < 64) {
        out->picked |= (uint64_t)1 << index;
        return WEFT_OK;
    }
    if (!out->more && !(out->more = weft__calloc(more_words(out->n) * sizeof *out->more)))
        return weft__fail(__func__, WEFT_ENOMEM, "no memory to pick successor %u", index);
    out->more[(index - 64) / 64] |= (uint64_t)1 << ((index - 64) % 64);
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
    return weft__hand_on(w, &succ[first]->job); /* as weft__cond_run's */
}

/* The successors one word of picks names (bit i: succ[base + i]): the first
 * of all goes to *first while that is NULL, the others are pushed. */
static void hand_word(weft__worker *w, weft__node *const *succ, size_t base, uint64_t p, weft__job **first) {
    for (; p; p &= p - 1) {
        weft__job *j = &succ[base + (size_t)__builtin_ctzll(p)]->job;
        if (!*first) *first = j;
        else weft__push_local(w, j);
    }
}

/* hand_out when successors from 64 on were picked too (b->more): the picks
 * are counted first, then handed out word by word; frees b->more. */
static __attribute__((noinline)) weft__job *hand_out_more(weft__worker *w, weft__run *r, const weft__node *n,
                                                          weft_branches *b) {
    size_t words = more_words(n);
    int total = __builtin_popcountll(b->picked);
    for (size_t k = 0; k < words; k++) total += __builtin_popcountll(b->more[k]);
    if (total > 1) atomic_fetch_add_explicit(&r->pending, total - 1, memory_order_relaxed);
    weft__node *const *succ = weft__succ_array(n);
    weft__job *first = NULL;
    hand_word(w, succ, 0, b->picked, &first);
    for (size_t k = 0; k < words; k++) hand_word(w, succ, 64 + 64 * k, b->more[k], &first);
    weft__free(b->more, words * sizeof *b->more);
    b->more = NULL;
    return first ? weft__hand_on(w, first) : weft__run_settle(w, r, -1); /* none picked: give the count back */
}

weft__job *weft__mcond_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    weft__run *r = n->tf->active;
    weft_future *top = r->top;
    weft_branches b = {n, 0, NULL};
    if (weft__node_enter(w, n, top)) {
        weft_ctx cx;
        struct weft__obs *o = weft__task_enter(w, &cx, n, r);
        int rc = ((weft_multi_cond_fn)(void (*)(void))n->fn)(&cx, n->arg, &b);
        weft__task_leave(w, &cx, o, n, r, rc);
        if (rc != 0) weft__fail_node(r, n, rc);
    }
    if (__builtin_expect(b.more != NULL, 0)) return hand_out_more(w, r, n, &b);
    if (b.picked) return hand_out(w, r, n, b.picked);
    return weft__run_settle(w, r, -1);
}
