/* Tasks: creation from the slab, edges, names and queries. */
#include "graph/graph.h"
#include "graph/flow.h" /* shared work (weft_task_set_shared_work) */
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stddef.h>
#include <string.h>

/* A free node slot, growing the slab by one chunk when full.  NULL: out of memory. */
static weft__node *slab_take(weft_taskflow *tf) {
    if (tf->cur_chunk < tf->nchunks && tf->cur_used == weft__chunk_capacity(tf->cur_chunk)) {
        tf->cur_chunk++;
        tf->cur_used = 0;
    }
    if (tf->cur_chunk == tf->nchunks) {
        if (tf->nchunks == tf->chunks_cap) {
            size_t ncap = tf->chunks_cap ? tf->chunks_cap * 2 : 8;
            weft__node **c = weft__realloc(tf->chunks, tf->chunks_cap * sizeof *c, ncap * sizeof *c);
            if (!c) return NULL;
            tf->chunks = c;
            tf->chunks_cap = ncap;
        }
        /* Cold halves must start zeroed.  A chunk another taskflow gave back to
         * the block cache is (taskflow.c zeroes it), and so is a fresh one, whose
         * untouched pages (a chain's cold half) are never even faulted in.  Hot
         * lines are written whole when a slot is taken. */
        size_t k = tf->nchunks, bytes = weft__chunk_bytes(k), align = weft__chunk_align(k);
        weft__node *chunk = weft__block_cache_take(bytes, align);
        if (!chunk) {
            chunk = weft__calloc_aligned(bytes, align);
            if (!chunk) return NULL;
            /* Big chunks sit on huge-page boundaries, hot and cold halves apart. */
            if (align == WEFT__HUGE_PAGE) weft__mem_advise_huge(chunk, bytes);
        }
        tf->chunks[tf->nchunks++] = chunk;
    }
    return &tf->chunks[tf->cur_chunk][tf->cur_used];
}

/* Sources: nodes with no dependents, kept in tf->sources (order is irrelevant). */

/* Room for `need` entries in tf->sources (capacities double from 64). */
static bool sources_grow(weft_taskflow *tf, size_t need) {
    if (need <= tf->sources_cap) return true;
    size_t ncap = tf->sources_cap ? tf->sources_cap : 64;
    while (ncap < need) ncap *= 2;
    weft__node **a = weft__realloc(tf->sources, tf->sources_cap * sizeof *a, ncap * sizeof *a);
    if (!a) return false;
    tf->sources = a;
    tf->sources_cap = ncap;
    return true;
}

/* Room for one more, in a kept list (the only kind sources_add pushes to). */
static bool sources_reserve(weft_taskflow *tf) {
    return tf->sources_mode != WEFT__SOURCES_KEPT || sources_grow(tf, tf->nsources + 1);
}

/* Until the first edge every task is a source and the list is implicit (no
 * array write per emplace, no read per source at run time).  The first edge
 * into the newest task, as a chain is built, writes the list out (every slot
 * in order, no node line read) less that task, and keeps it as a stack from
 * there; an edge into any other task leaves it to the recount, as it would
 * have gone stale anyway.  Without memory for the array: stale too
 * (recounted, and the error given, at the next run), so that link() stays
 * infallible. */
static __attribute__((noinline, cold)) void sources_leave_implicit(weft_taskflow *tf, const weft__node *to) {
    size_t n = tf->nnodes;
    tf->sources_mode = WEFT__SOURCES_STALE;
    tf->fast_slots = 0; /* the slow path counts its room afresh, with the array's */
    if (to->index + 1 != n || !sources_grow(tf, n)) return;
    size_t i = 0;
    for (size_t k = 0; i < n - 1; k++)
        for (size_t j = 0, cap = weft__chunk_capacity(k); j < cap && i < n - 1; j++) tf->sources[i++] = &tf->chunks[k][j];
    tf->nsources = n - 1;
    tf->sources_mode = WEFT__SOURCES_KEPT;
}

/* Sources are kept as a stack while every node that stops being a source is the
 * newest one, as when a chain is built; any other removal (fan-out built after
 * the tasks, random edges) marks the list stale instead of searching it, and
 * weft__taskflow_prepare recounts it in one pass over the nodes. */
static inline void sources_add(weft_taskflow *tf, weft__node *n) { /* room reserved */
    if (tf->sources_mode == WEFT__SOURCES_KEPT) tf->sources[tf->nsources++] = n;
}

static inline void sources_remove(weft_taskflow *tf, weft__node *n) {
    if (tf->sources_mode == WEFT__SOURCES_STALE) return; /* tasks first, edges after: one test an edge */
    if (__builtin_expect(tf->sources_mode == WEFT__SOURCES_IMPLICIT, 0)) {
        sources_leave_implicit(tf, n); /* the first edge */
    } else if (tf->nsources && tf->sources[tf->nsources - 1] == n) {
        tf->nsources--;
    } else {
        tf->sources_mode = WEFT__SOURCES_STALE;
    }
}

/* Field by field, not `*n = (weft__node){...}`: a compound literal compiles to
 * `rep stos`, whose start-up cost was a third of emplace.  The hot line is
 * written whole; the cold part is already zero (fresh or cached chunk, see
 * slab_take) unless the slot's user before a clear wrote it.  Zero
 * cold means: no name, no data, no successor array, kind STATIC, no weak edge. */
static inline void node_init_hot(weft__node *n, weft_taskflow *tf, weft_task_fn fn, void *arg) {
    n->job = (weft__job){weft__node_run, NULL};
    atomic_init(&n->join, 0);
    n->num_deps = 0;
    n->cold_dirty = 0;
    n->fn = fn;
    n->arg = arg;
    n->tf = tf;
    n->succ.one = NULL;
    n->nsucc = 0;
}

/* c: n's cold part where the caller has found it already (weft__add_node_kind),
 * or NULL, to find it here only if it has to be zeroed. */
static inline __attribute__((always_inline)) void node_init(weft__node *n, weft__node_cold *c, weft_taskflow *tf,
                                                            weft_task_fn fn, void *arg) {
    /* A slot used before a clear: its cold part is stale only if the last user
     * wrote it (read before the hot line is overwritten).  A slot at or above
     * high_water is fresh, its hot line not ours to read.  Reading the old line
     * stalls on a miss where writing it would not, so only when some cold part
     * of this taskflow was ever written. */
    size_t i = tf->nnodes;
    bool stale = false;
    if (i < tf->high_water)
        stale = (tf->any_cold_dirty && n->cold_dirty) || atomic_load_explicit(&tf->cold_unmarked, memory_order_relaxed);
    else
        tf->high_water = i + 1;
    node_init_hot(n, tf, fn, arg);
    n->index = (uint32_t)i;
    tf->nnodes = i + 1;
    if (stale) *(c ? c : weft__cold(n)) = (weft__node_cold){0};
}

/* A slot weft_task_erase freed (edit.c) takes the new node: it keeps its index,
 * and its cold part was zeroed when it was erased.  Apart from the fast path,
 * which pays one test for it. */
static __attribute__((noinline)) weft_task add_in_erased_slot(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    weft__node *n = tf->free_slots;
    if (!sources_reserve(tf)) {
        weft__tf_oom(tf, "weft_emplace"); /* see add_node_slow */
        return WEFT_TASK_NULL;
    }
    weft__slot_unfree(tf);
    tf->prio_armed = 0; /* a new plain task, the task count unchanged: arm again (priority.c) */
    node_init_hot(n, tf, fn, arg);
    sources_add(tf, n);
    weft__tf_done(tf, WEFT_OK);
    return (weft_task){n};
}

/* The new node takes slot n of the current chunk (room checked); c is its cold
 * part, or NULL (node_init). */
static inline __attribute__((always_inline)) weft_task add_at(weft_taskflow *tf, weft__node *n, weft__node_cold *c,
                                                              weft_task_fn fn, void *arg) {
    node_init(n, c, tf, fn, arg);
    tf->cur_used++;
    sources_add(tf, n);
    weft__tf_done(tf, WEFT_OK);
    return (weft_task){n};
}

/* weft__add_node's general case: a busy taskflow (an error), a full chunk or
 * sources array, an erased slot to reuse. */
static __attribute__((noinline)) weft_task add_node_slow(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    if (weft__tf_busy(tf)) return WEFT_TASK_NULL;
    if (tf->nnodes >= UINT32_MAX) {
        weft__tf_error(tf, WEFT_ENOMEM, "a taskflow holds at most %u tasks", UINT32_MAX - 1);
        return WEFT_TASK_NULL;
    }
    /* no_reuse: a composition is being copied in, its nodes stay contiguous. */
    if (__builtin_expect(tf->free_slots != NULL, 0) && !tf->no_reuse) return add_in_erased_slot(tf, fn, arg);
    weft__node *n = slab_take(tf);
    if (!n || !sources_reserve(tf)) {
        /* weft_emplace's own message (R3 names the call; the status's
         * sentence alone named none): the other calls that add a task
         * through here put their name in it (weft__add_named_oom). */
        weft__tf_oom(tf, "weft_emplace");
        return WEFT_TASK_NULL;
    }
    weft_task t = add_at(tf, n, NULL, fn, arg);
    /* The fast path's room from here: the current chunk's slots left, under
     * the task limit; none while an erased slot waits (the busy tests above
     * passed, and whatever seals the taskflow sets it to 0). */
    size_t room = weft__chunk_capacity(tf->cur_chunk) - tf->cur_used;
    size_t limit = tf->nnodes < UINT32_MAX - 1 ? UINT32_MAX - 1 - tf->nnodes : 0;
    if (limit < room) room = limit;
    /* and room in the sources array, which the fast path then need not test
     * (validate.c's recount keeps this bound) */
    if (tf->sources_mode == WEFT__SOURCES_KEPT && tf->sources_cap - tf->nsources < room)
        room = tf->sources_cap - tf->nsources;
    tf->fast_slots = tf->free_slots ? 0 : room;
    return t;
}

/* The common case inline, with no call: a taskflow being built, no run in
 * flight (weft__tf_busy's other test), and a slot the slow path counted in
 * fast_slots (room in the current chunk and in the sources array while not
 * sealed and no erased slot waits).  A call to weft__tf_busy first made the
 * compiler save five registers on every emplace; this way a build of a
 * 2^20-task graph runs ~25 fewer instructions per task, and fast_slots'
 * one test instead of six ~17 fewer again. */
weft_task weft__add_node(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    if (__builtin_expect(tf->fast_slots == 0 || atomic_load_explicit(&tf->runs_inflight, memory_order_acquire) != 0, 0))
        return add_node_slow(tf, fn, arg);
    tf->fast_slots--;
    return add_at(tf, &tf->chunks[tf->cur_chunk][tf->cur_used], NULL, fn, arg);
}

/* weft__add_node, then the node's kind, job function and per-kind record
 * written (flow.c's weft__add_kind, and weft_emplace_subflow).  On the fast
 * path the node's cold part is found from the current chunk (its capacity of
 * slots after the node), once, to zero it if a former user wrote it and to
 * write the kind and record: through weft__add_node and weft__cold_mut it was
 * found twice from the node's index, with a call between (~35 instructions
 * of each subflow task emplaced in Taskflow's fibonacci by subflows).  The
 * rest is add_at's, inline, handed the cold part found. */
weft_task weft__add_node_kind(weft_taskflow *tf, weft_task_fn fn, void *arg, uint8_t kind, weft__job_fn run,
                              void *ext) {
    weft__node *n;
    weft__node_cold *c;
    if (__builtin_expect(tf->fast_slots == 0 || atomic_load_explicit(&tf->runs_inflight, memory_order_acquire) != 0, 0)) {
        weft_task t = add_node_slow(tf, fn, arg);
        if (weft_task_is_null(t)) return t;
        n = t.node_;
        c = weft__cold(n);
    } else {
        tf->fast_slots--;
        size_t k = tf->cur_chunk, slot = tf->cur_used;
        n = &tf->chunks[k][slot];
        c = (weft__node_cold *)(void *)&tf->chunks[k][slot + weft__chunk_capacity(k)]; /* weft__cold(n) */
        add_at(tf, n, c, fn, arg);
    }
    /* weft__cold_mut's mark, then the writes */
    if (!n->cold_dirty) {
        n->cold_dirty = 1;
        tf->any_cold_dirty = true;
    }
    c->kind = kind;
    c->ext = ext;
    n->job.run = run;
    return (weft_task){n};
}

/* weft_emplace's refusals, out of line: the checks then cost a test each and
 * no stack frame on the way to weft__add_node. */
static __attribute__((noinline, cold)) weft_task emplace_refused(weft_taskflow *tf) {
    if (!tf) return weft__fail("weft_emplace", WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    weft__tf_error(tf, WEFT_EINVAL, "weft_emplace: task function is NULL (use weft_placeholder)");
    return WEFT_TASK_NULL;
}

weft_task weft_emplace(weft_taskflow *tf, weft_task_fn fn, void *arg) {
    if (__builtin_expect(!tf || !fn, 0)) return emplace_refused(tf);
    return weft__add_node(tf, fn, arg);
}

__attribute__((noinline, cold)) weft_status weft__add_named_oom(weft_taskflow *tf, const char *fn) {
    weft_status st = weft_taskflow_last_error(tf);
    return st == WEFT_ENOMEM ? weft__tf_oom(tf, fn) : st;
}

weft_task weft_placeholder(weft_taskflow *tf) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    weft_task t = weft__add_node(tf, NULL, NULL);
    if (__builtin_expect(weft_task_is_null(t), 0)) weft__add_named_oom(tf, __func__);
    return t;
}

/* The checks of the calls that give a plain task its work: WEFT_OK when n may
 * take new work.  A task holding shared work (weft_emplace_work) takes other
 * shared work only (`shared`): weft_task_set_work keeps refusing it, as
 * docs/guide-control-flow.md says, while weft.hpp's task::work replaces the
 * shared work it gave a task before.  A GPU task's work is the layer's own
 * (weft__own_job): never replaced. */
/* check_settable's refusal of a task that is not plain, out of line: its
 * label buffer kept check_settable from being inlined into weft_task_set_work,
 * which cost a graph build ~15 instructions a task (icount wavefront_rerun
 * +2.2%). */
static __attribute__((noinline, cold)) weft_status not_plain(weft__node *n, const char *call) {
    char b[24]; /* an unnamed task is "#<index>", as graph.h reports tasks (it was '') */
    return weft__tf_error(n->tf, WEFT_EINVAL, "%s: task '%s' is not a plain task%s", call,
                          weft__node_label(n, b, sizeof b),
                          weft__cold(n)->kind == WEFT__KIND_STATIC && !weft__own_job(n)
                              ? " (its work is shared work: use weft_task_set_shared_work)"
                              : "");
}

static weft_status check_settable(weft__node *n, bool shared, const char *call) {
    if (!n) return weft__fail(call, WEFT_EINVAL, "the task is the null task");
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "%s: the task was erased", call);
    if (weft__tf_busy(n->tf)) return WEFT_EBUSY;
    if (weft__cold(n)->kind != WEFT__KIND_STATIC || weft__own_job(n) || (!shared && weft__cold(n)->ext))
        return not_plain(n, call);
    return WEFT_OK;
}

/* Gives n fn/arg and the shared work w (NULL: none), dropping the reference n
 * held on earlier shared work last, once n is consistent (its drop runs user
 * code). */
static weft_status set_work(weft__node *n, weft_task_fn fn, void *arg, weft_work *w) {
    weft_taskflow *tf = n->tf;
    weft_work *old = weft__cold(n)->ext;
    if (w) weft_work_retain(w);
    if (w && !old) tf->next_owned++; /* n owns a record now: clear and destroy walk it */
    if (!w && old) tf->next_owned--;
    weft__cold_mut(n)->ext = w;
    n->fn = fn;
    n->arg = arg;
    if (weft__cold(n)->single) weft__cold_mut(n)->single = 0; /* no longer a pipeline's task */
    weft_work_release(old);
    return weft__tf_done(tf, WEFT_OK);
}

weft_status weft_task_set_work(weft_task t, weft_task_fn fn, void *arg) {
    weft_status st = check_settable(t.node_, false, __func__);
    if (st != WEFT_OK) return st;
    /* Inline rather than set_work: a graph built with placeholders calls this
     * once per task, and the shared-work bookkeeping (no work was shared: the
     * check refused that) cost it ~5 instructions a call (icount's
     * wavefront_rerun +1.7%, whose build is counted). */
    weft__node *n = t.node_;
    n->fn = fn;
    n->arg = arg;
    if (weft__cold(n)->single) weft__cold_mut(n)->single = 0; /* no longer a pipeline's task */
    return weft__tf_done(n->tf, WEFT_OK);
}

weft_status weft_task_set_shared_work(weft_task t, weft_work *w) {
    weft_status st = check_settable(t.node_, true, __func__);
    if (st != WEFT_OK) return st;
    if (!w) return weft__tf_error(t.node_->tf, WEFT_EINVAL, "weft_task_set_shared_work: work is NULL");
    return set_work(t.node_, w->fn, w->state, w);
}

/* Makes room for `extra` more successors of n, so that link() cannot fail: one
 * successor lives inline, more in the spill array.  WEFT_OK or WEFT_ENOMEM
 * (nothing changed). */
static weft_status reserve_succ(weft__node *n, size_t extra) {
    size_t need = (size_t)n->nsucc + extra;
    if (need <= 1) return WEFT_OK;
    weft__node_cold *c = weft__cold_mut(n);
    if (need <= c->spill_cap) return WEFT_OK;
    size_t cap = c->spill_cap ? c->spill_cap : 2;
    while (cap < need) cap *= 2;
    if (cap > ((size_t)1 << 31)) return WEFT_ENOMEM; /* the caller says why (weft__tf_error) */
    weft__succ_pool *pool = &n->tf->succ_pool;
    weft__node **a = weft__succ_alloc(pool, (uint32_t)cap);
    if (!a) return WEFT_ENOMEM;
    if (c->spill) {
        memcpy(a, c->spill, n->nsucc * sizeof *a);
        weft__succ_free(pool, c->spill, c->spill_cap);
    }
    c->spill = a;
    c->spill_cap = (uint32_t)cap;
    if (n->nsucc >= 2) n->succ.many = a;
    return WEFT_OK;
}

/* The edge a -> b is well formed (not its taskflow's state: see check_pair).
 * `call` is the public call whose check this is, for the message (R3). */
static inline weft_status check_ends(const char *call, weft__node *a, weft__node *b) {
    if (!a || !b) {
        weft__node *known = a ? a : b;
        return known ? weft__tf_error(known->tf, WEFT_EINVAL, "%s: edge to or from the null task", call)
                     : weft__fail(call, WEFT_EINVAL, "both tasks are the null task");
    }
    if (a->tf != b->tf)
        return weft__tf_error(a->tf, WEFT_EINVAL, "%s: edge between tasks of different taskflows", call);
    /* Only a taskflow with erased slots can hold one: a chain's build reads no
     * more than it did before erasing existed. */
    if (__builtin_expect(a->tf->nerased != 0, 0) && (weft__node_erased(a) || weft__node_erased(b)))
        return weft__tf_error(a->tf, WEFT_EINVAL, "%s: edge to or from an erased task", call);
    return WEFT_OK;
}

static weft_status check_pair(const char *call, weft__node *a, weft__node *b) {
    weft_status st = check_ends(call, a, b);
    if (st) return st;
    if (weft__tf_busy(a->tf)) return WEFT_EBUSY;
    return WEFT_OK;
}

/* Weak edges exist only out of condition tasks; while a taskflow has none, the
 * cold parts (kind, num_weak) need not be read: a chain is built hot lines only. */
static bool is_weak_source(const weft_taskflow *tf, const weft__node *from) {
    return tf->nconds && weft__node_is_cond(from);
}
static bool has_predecessors(const weft_taskflow *tf, const weft__node *n) {
    return n->num_deps || (tf->nconds && weft__cold(n)->num_weak);
}

/* Adds the edge; room is reserved.  Keeps join, sources and the backward-edge
 * count current (see struct weft_taskflow). */
static inline __attribute__((always_inline)) void link(weft__node *from, weft__node *to) {
    weft_taskflow *tf = from->tf;
    if (from->nsucc == 0) {
        from->succ.one = to;
    } else {
        if (from->nsucc == 1) { /* move the inline successor to the array */
            weft__node **spill = weft__cold(from)->spill;
            spill[0] = from->succ.one;
            from->succ.many = spill;
        }
        from->succ.many[from->nsucc] = to;
    }
    from->nsucc++;
    if (!has_predecessors(tf, to)) sources_remove(tf, to);
    if (is_weak_source(tf, from)) { /* weak: not counted in `to`'s join, never a cycle */
        weft__cold_mut(to)->num_weak++;
        return;
    }
    to->num_deps++;
    atomic_store_explicit(&to->join, to->num_deps, memory_order_relaxed);
    if (from->index >= to->index) {
        tf->backward++;
        if (from == to) tf->loops++;
    }
    /* Once any edge points backward, every new edge may close a cycle. */
    if (tf->backward) tf->dirty = true;
}

/* Undoes the most recent link(from, to). */
static void unlink_last(weft__node *from, weft__node *to) {
    weft_taskflow *tf = from->tf;
    if (--from->nsucc == 1) from->succ.one = from->succ.many[0]; /* back inline */
    bool weak = is_weak_source(tf, from);
    if (weak) weft__cold_mut(to)->num_weak--;
    else to->num_deps--;
    if (!has_predecessors(tf, to)) sources_add(tf, to); /* its old slot is free again */
    if (weak) return;
    atomic_store_explicit(&to->join, to->num_deps, memory_order_relaxed);
    weft__edge_uncount(tf, from, to);
}

weft_status weft_precede(weft_task from, weft_task to) {
    weft_status st = check_pair(__func__, from.node_, to.node_);
    if (st) return st;
    if (reserve_succ(from.node_, 1)) return weft__tf_oom(from.node_->tf, __func__);
    link(from.node_, to.node_);
    return weft__tf_done(from.node_->tf, WEFT_OK);
}

weft_status weft_succeed(weft_task t, weft_task before) { return weft_precede(before, t); }

weft_status weft_precede_many(weft_task from, const weft_task *to, size_t n) {
    if (!from.node_ || (n && !to))
        return weft__fail(__func__, WEFT_EINVAL, "the task is the null task, or to is NULL with n > 0");
    /* A count no array holds (a negative one cast to size_t): refused before
     * the checks below read to[i] far past the caller's array. */
    if (n > PTRDIFF_MAX / sizeof *to) return weft__fail(__func__, WEFT_EINVAL, "n = %zu tasks: more than an array holds", n);
    /* The targets' lines, all at once: on a big graph built tasks first, edges
     * after, each is a cache miss that check_pair and link would take in turn. */
    for (size_t i = 0; i < n && i < 8; i++) __builtin_prefetch(to[i].node_, 1, 3);
    for (size_t i = 0; i < n; i++) {
        weft_status st = check_ends(__func__, from.node_, to[i].node_);
        if (st) return st;
    }
    if (n == 0) return weft__tf_done(from.node_->tf, WEFT_OK);
    /* Every target is in from's taskflow: one look at its state for them all
     * (a call and a lock-free load per edge were a sixth of a wide build). */
    if (weft__tf_busy(from.node_->tf)) return WEFT_EBUSY;
    if (reserve_succ(from.node_, n)) return weft__tf_oom(from.node_->tf, __func__);
    for (size_t i = 0; i < n; i++) link(from.node_, to[i].node_);
    return weft__tf_done(from.node_->tf, WEFT_OK);
}

weft_status weft_succeed_many(weft_task t, const weft_task *before, size_t n) {
    if (!t.node_ || (n && !before))
        return weft__fail(__func__, WEFT_EINVAL, "the task is the null task, or before is NULL with n > 0");
    if (n > PTRDIFF_MAX / sizeof *before) /* as weft_precede_many */
        return weft__fail(__func__, WEFT_EINVAL, "n = %zu tasks: more than an array holds", n);
    for (size_t i = 0; i < n; i++) {
        weft_status st = check_pair(__func__, before[i].node_, t.node_);
        if (st) return st;
    }
    /* All or nothing: link one by one and undo on failure.  Each edge was appended
     * at the end of its predecessor's array, so undoing in reverse pops them. */
    for (size_t i = 0; i < n; i++) {
        if (reserve_succ(before[i].node_, 1)) {
            while (i-- > 0) unlink_last(before[i].node_, t.node_);
            return weft__tf_oom(t.node_->tf, __func__);
        }
        link(before[i].node_, t.node_);
    }
    return weft__tf_done(t.node_->tf, WEFT_OK);
}

weft_status weft_task_set_name(weft_task t, const char *name) {
    weft__node *n = t.node_;
    if (!n) return weft__fail(__func__, WEFT_EINVAL, "the task is the null task");
    /* An erased slot's cold part must stay zero: the next task added takes
     * the slot as it is (add_in_erased_slot), and a name there would be its
     * name, never freed by a clear (which skips erased slots). */
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "weft_task_set_name: the task was erased");
    if (weft__tf_busy(n->tf)) return WEFT_EBUSY;
    char *copy = NULL;
    if (name && !(copy = weft__strdup(name))) return weft__tf_oom(n->tf, __func__);
    weft__node_cold *c = weft__cold_mut(n);
    n->tf->nnamed += (copy != NULL) - (c->name != NULL);
    weft__free_str(c->name);
    c->name = copy;
    return weft__tf_done(n->tf, WEFT_OK);
}

const char *weft_task_name(weft_task t) {
    const char *name = t.node_ ? weft__cold(t.node_)->name : NULL;
    return name ? name : "";
}

weft_status weft_task_set_data(weft_task t, void *data) {
    weft__node *n = t.node_;
    if (!n) return weft__fail(__func__, WEFT_EINVAL, "the task is the null task");
    /* As weft_task_set_name: the next task in the slot would inherit it.  (No
     * task is erased while a run is in flight.) */
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "weft_task_set_data: the task was erased");
    /* During a run, workers read num_deps, which shares its word with the
     * node's dirty bit: mark the taskflow instead (relaxed: the run's end orders
     * it before any rebuild). */
    if (atomic_load_explicit(&n->tf->runs_inflight, memory_order_relaxed) != 0 && !n->cold_dirty) {
        atomic_store_explicit(&n->tf->cold_unmarked, true, memory_order_relaxed);
        weft__cold(n)->data = data;
        return WEFT_OK;
    }
    weft__cold_mut(n)->data = data;
    return WEFT_OK;
}

void *weft_task_data(weft_task t) { return t.node_ ? weft__cold(t.node_)->data : NULL; }
size_t weft_task_index(weft_task t) { return t.node_ ? t.node_->index : SIZE_MAX; }
size_t weft_task_num_successors(weft_task t) { return t.node_ ? t.node_->nsucc : 0; }
size_t weft_task_num_dependents(weft_task t) { return t.node_ ? (size_t)t.node_->num_deps + weft__cold(t.node_)->num_weak : 0; }

weft_task weft_task_successor(weft_task t, size_t i) {
    if (!t.node_ || i >= t.node_->nsucc) return WEFT_TASK_NULL;
    return (weft_task){weft__succ_array(t.node_)[i]};
}

weft_task weft_ctx_task(const weft_ctx *ctx) {
    /* Only graph nodes (and parallel instances' shadows of them) set ctx->task. */
    return ctx ? (weft_task){weft__ctx_node(ctx)} : WEFT_TASK_NULL;
}

const weft_future *weft_ctx_run(const weft_ctx *ctx) {
    /* A graph task's context holds the stop word of its top-level run's
     * future (weft__task_enter: &r->top->stop), nested runs included. */
    if (!ctx || !weft__ctx_node(ctx) || !ctx->stop) return NULL;
    return (const weft_future *)(const void *)((const char *)ctx->stop - offsetof(weft_future, stop));
}
