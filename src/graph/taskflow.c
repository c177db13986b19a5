/* Taskflow objects: lifetime, the node slab, naming, iteration, errors. */
#include "graph/graph.h"
#include "graph/flow.h" /* struct weft__subflow: release_node_parts keeps them */
#include "core/alloc.h"
#include "core/error_detail.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

weft_status weft__tf_error(weft_taskflow *tf, weft_status st, const char *fmt, ...) {
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        weft__vset_error_message(fmt, ap);
        va_end(ap);
    } else if (tf && tf->name) {
        weft__set_error_message("taskflow '%s': %s", tf->name, weft_strerror(st));
    } else {
        weft__set_error_message("%s", weft_strerror(st));
    }
    return tf ? weft__tf_done(tf, st) : st;
}

weft_status weft__tf_oom(weft_taskflow *tf, const char *fn) {
    return weft__tf_error(tf, WEFT_ENOMEM, "%s: out of memory (taskflow '%s')", fn, tf && tf->name ? tf->name : "");
}

bool weft__tf_busy(weft_taskflow *tf) {
    if (tf->sealed) {
        weft__tf_error(tf, WEFT_EBUSY, "this subflow's graph was joined (its tasks have run); it cannot be "
                                       "changed until its task runs again");
        return true;
    }
    if (atomic_load_explicit(&tf->runs_inflight, memory_order_acquire) == 0) return false;
    weft__tf_error(tf, WEFT_EBUSY, "taskflow '%s' is being run; it cannot be changed now",
                   tf->name ? tf->name : "");
    return true;
}

weft_taskflow *weft_taskflow_create(const char *name, weft_status *err) {
    weft_taskflow *tf = weft__calloc(sizeof *tf);
    if (!tf) goto oom;
    if (name && !(tf->name = weft__strdup(name))) goto oom;
    if (weft__mutex_init(&tf->mu) != 0) {
        weft__free_str(tf->name);
        weft__free(tf, sizeof *tf);
        return weft__fail_null(err, __func__, WEFT_ESYS, "the mutex could not be initialised");
    }
    atomic_init(&tf->runs_inflight, 0);
    atomic_init(&tf->cold_unmarked, false);
    atomic_init(&tf->last_error, WEFT_OK);
    tf->sources_mode = WEFT__SOURCES_IMPLICIT; /* no task, so none with an edge (graph.h) */
    if (err) *err = WEFT_OK;
    return tf;
oom:
    if (tf) weft__free(tf, sizeof *tf);
    return weft__fail_null(err, __func__, WEFT_ENOMEM, NULL);
}

/* The walk of release_nodes over nodes that own something.  Out of line: in
 * it, its loop made release_nodes save six registers on every call, ~15
 * instructions of each clear of a subflow task's graph, leaves' included,
 * which own nothing.
 *
 * A chunk at a time, each node's cold part at the same distance from it
 * (weft__cold finds it from the node's index, a count of leading zeros and a
 * shift a node), and a subflow task's record handled here: appended to a list
 * in task order, which goes onto the pool's head at the end, so that the
 * next build takes back each task's own record (weft__flow_pool_in_order's
 * order, without pushing them last first and turning them round after, nor a
 * call a node).  Was ~100 instructions a subflow task in Taskflow's fibonacci
 * by subflows, whose every graph holds two of them. */
static __attribute__((noinline)) void release_node_parts(weft_taskflow *tf) {
    struct weft__subflow *head = NULL, **tail = &head;
    size_t left = tf->nnodes;
    for (size_t k = 0; k < tf->nchunks && left; k++) {
        size_t cap = weft__chunk_capacity(k), cnt = left < cap ? left : cap;
        weft__node *hot = tf->chunks[k];
        for (size_t i = 0; i < cnt; i++) {
            weft__node *nd = &hot[i];
            if (weft__node_erased(nd)) continue;
            weft__node_cold *c = (weft__node_cold *)(void *)&hot[cap + i]; /* weft__cold(nd) */
            if (c->name) weft__free_str(c->name);
            if (c->ext) {
                if (c->kind == WEFT__KIND_SUBFLOW) { /* kept, graph and all, for the next build */
                    struct weft__subflow *sub = c->ext;
                    *tail = sub;
                    tail = &sub->next_free;
                    c->ext = NULL;
                } else {
                    weft__flow_release_node(tf, nd);
                }
            }
            if (c->sems) weft__sem_use_free(nd);
        }
        left -= cnt;
    }
    if (head) {
        *tail = tf->free_subs;
        tf->free_subs = head;
    }
}

/* Frees what nodes own (names, successor arrays); keeps the chunks. */
static void release_nodes(weft_taskflow *tf) {
    /* The cold parts need no reset: a reused slot that was written is zeroed
     * when it is taken (node_init). */
    if (tf->nbodies) weft__module_release_all(tf); /* not one search per module */
    if (tf->nnamed || tf->next_owned || tf->nsems) release_node_parts(tf);
    tf->nnodes = tf->nerased = tf->nsems = tf->nprio = 0;
    tf->retire_from = tf->retire_below = 0; /* the copies are gone (edit.c) */
    /* The tasks added next are new (weft__node_run): the next run with
     * priorities arms them again, even if as many (priority.c). */
    tf->prio_armed = 0;
    tf->free_slots = NULL;
    tf->nnamed = 0;
    /* (a graph without successor arrays, a subflow's of independent tasks:
     * no call) */
    if (tf->succ_pool.blocks) weft__succ_pool_release(&tf->succ_pool);
    tf->cur_chunk = tf->cur_used = tf->fast_slots = 0;
    tf->nsources = 0;
    tf->sources_mode = WEFT__SOURCES_IMPLICIT;
    tf->backward = tf->loops = 0;
    tf->dirty = false;
    tf->nconds = tf->next_owned = 0;
}

weft_status weft_taskflow_destroy(weft_taskflow *tf) {
    if (!tf) return WEFT_OK;
    if (tf->is_subflow_graph) return weft__tf_error(tf, WEFT_EINVAL, "weft_taskflow_destroy: a subflow's graph belongs to its task");
    if (tf->is_composition_graph)
        return weft__tf_error(tf, WEFT_EINVAL,
                              "weft_taskflow_destroy: a composition's graph belongs to it: weft_composition_destroy "
                              "frees both");
    if (weft__tf_busy(tf)) {
        /* In a child of fork(), a run in flight at the fork on an executor of
         * the parent never ends: busy for ever, which waiting cannot change
         * (graph.h).  Said, as a caller waiting for the EBUSY to pass would
         * wait for ever. */
        weft__mutex_lock(&tf->mu);
        bool forked = weft__tf_stuck_at_fork(tf);
        weft__mutex_unlock(&tf->mu);
        if (forked)
            return weft__tf_error(tf, WEFT_EBUSY,
                                  "weft_taskflow_destroy: a run of this taskflow was in flight at fork() on an "
                                  "executor of the parent process; in this child it never ends, so the taskflow "
                                  "stays busy (its memory goes with the process)");
        return WEFT_EBUSY;
    }
    release_nodes(tf);
    weft__flow_free_pool(tf); /* (the modules' release freed tf->bodies) */
    size_t start = 0; /* index of the first slot of chunk k */
    for (size_t k = 0; k < tf->nchunks; k++) {
        size_t cap = weft__chunk_capacity(k), bytes = weft__chunk_bytes(k), align = weft__chunk_align(k);
        size_t used = tf->high_water > start ? tf->high_water - start : 0;
        weft__node *chunk = tf->chunks[k];
        /* Cached chunks keep the invariant of fresh ones: cold halves zeroed
         * (untouched unless some node's cold part was written). */
        if (tf->any_cold_dirty || atomic_load_explicit(&tf->cold_unmarked, memory_order_relaxed)) memset(chunk + cap, 0, (used < cap ? used : cap) * sizeof(weft__node));
        if (!weft__block_cache_give(chunk, bytes, align)) weft__free_aligned(chunk, bytes, align);
        start += cap;
    }
    weft__free(tf->chunks, tf->chunks_cap * sizeof *tf->chunks);
    weft__free(tf->sources, tf->sources_cap * sizeof *tf->sources);
    weft__free_str(tf->name);
    weft__mutex_destroy(&tf->mu);
    weft__free(tf, sizeof *tf);
    return WEFT_OK;
}

weft_status weft_taskflow_set_name(weft_taskflow *tf, const char *name) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    if (weft__tf_busy(tf)) return WEFT_EBUSY;
    char *copy = NULL;
    if (name && !(copy = weft__strdup(name))) return weft__tf_oom(tf, __func__);
    weft__free_str(tf->name);
    tf->name = copy;
    return weft__tf_done(tf, WEFT_OK);
}

const char *weft_taskflow_name(const weft_taskflow *tf) { return tf && tf->name ? tf->name : ""; }

weft_status weft_taskflow_clear(weft_taskflow *tf) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL");
    if (weft__tf_busy(tf)) return WEFT_EBUSY;
    weft__taskflow_reset(tf);
    return WEFT_OK;
}

void weft__taskflow_reset(weft_taskflow *tf) {
    release_nodes(tf);
    /* The first chunk, kept, is the fast path's room (task.c): the slow path
     * reached the same count on the first task added, at ~55 instructions,
     * once per execution of every subflow task that builds a graph.  Nothing
     * else stands in the way after a clear: not sealed (tf_busy refused
     * that), no erased slot, the sources implicit. */
    if (tf->nchunks) tf->fast_slots = weft__chunk_capacity(0);
    weft__tf_done(tf, WEFT_OK);
}

size_t weft_taskflow_num_tasks(const weft_taskflow *tf) { return tf ? tf->nnodes - tf->nerased : 0; }

size_t weft_taskflow_num_runs(const weft_taskflow *tf) {
    /* Acquire: pairs with weft__tf_inflight_out's release, so that 0 also says
     * the ended runs' last touches of what tf's tasks use are done. */
    return tf ? atomic_load_explicit(&((weft_taskflow *)tf)->runs_inflight, memory_order_acquire) : 0;
}

weft_status weft_taskflow_for_each_task(const weft_taskflow *tf, weft_task_visit_fn visit, void *arg) {
    if (!tf || !visit) return weft__fail(__func__, WEFT_EINVAL, "tf or visit is NULL");
    WEFT__FOR_EACH_NODE(tf, n, {
        if (!visit((weft_task){n}, arg)) return WEFT_OK;
    });
    return WEFT_OK;
}

weft_status weft_taskflow_last_error(const weft_taskflow *tf) {
    /* Atomic loads take non-const pointers; the object is only read. */
    return tf ? (weft_status)atomic_load_explicit(&((weft_taskflow *)tf)->last_error, memory_order_relaxed)
              : WEFT_EINVAL;
}

/* Deprecated: the thread's message while tf's last call failed (R3 keeps no
 * text per object, so reading it cannot race with anything). */
const char *weft_taskflow_error_message(const weft_taskflow *tf) {
    return weft_taskflow_last_error(tf) != WEFT_OK && tf ? weft_last_error_message() : "";
}

const char *weft__node_label(const weft__node *n, char *buf, size_t len) {
    const char *name = weft__cold(n)->name;
    if (name && *name) return name;
    snprintf(buf, len, "#%u", n->index);
    return buf;
}
