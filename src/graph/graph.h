/* Taskflow internals: nodes in a per-taskflow slab, edges, the run queue.  Internal.
 *
 * A node is a weft__job: the core runs it through node_run (run.c), which calls
 * the task, re-arms the node's join counter for the next iteration, and releases
 * its successors, handing the first ready one straight back to the worker. */
#ifndef WEFT_GRAPH_GRAPH_H
#define WEFT_GRAPH_GRAPH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "core/executor.h"
#include "core/future.h"
#include "core/obs_hooks.h"
#include "core/job.h"
#include "platform/platform.h"
#include "weft/graph.h"

typedef struct weft__node weft__node;
typedef struct weft__run weft__run;

/* The hot part of a node: one cache line holding everything a run touches,
 * including the only successor of a node that has one (chains), so re-running a
 * graph reads one line per node.  The cold part (weft__node_cold: building,
 * naming, validation) lives in a separate array of the same chunk, so hot lines
 * are contiguous: a run streams 64 bytes per node and no prefetcher drags in
 * cold lines next to them. */
struct weft__node {
    _Alignas(WEFT__CACHE_LINE) weft__job job; /* must stay first */
    _Atomic uint32_t join; /* strong predecessors still to finish, this iteration */
    uint32_t num_deps : 31; /* strong predecessors (edges into this node) */
    /* The cold part may be non-zero (written through weft__cold_mut).  A slot
     * reused after a clear is zeroed only if its last user set this, so a
     * graph of plain tasks never touches its cold lines (task.c). */
    uint32_t cold_dirty : 1;
    weft_task_fn fn;
    void *arg;
    weft_taskflow *tf;
    union {
        weft__node *one; /* nsucc <= 1 */
        weft__node **many; /* nsucc >= 2: equals spill */
    } succ;
    uint32_t nsucc;
    uint32_t index; /* emplace order; also locates the cold part */
};

/* Zero until written: a fresh chunk comes zeroed, and a slot reused after a clear
 * is zeroed if its last user wrote it (cold_dirty).  The dfs_* fields are
 * scratch of the cycle check, set before they are read: they are written without
 * marking the node and may hold anything. */
typedef struct weft__node_cold {
    weft__node **spill; /* successor array once there are 2+ (kept when back to 1) */
    char *name;
    void *data;
    weft__node *dfs_parent; /* validation: DFS tree parent */
    void *ext; /* per-kind record: subflow, module, or shared work (flow.h) */
    struct weft__sem_use *sems; /* semaphores it acquires/releases (semaphore.c), or NULL */
    uint32_t spill_cap;
    uint32_t dfs_edge; /* validation: next edge to explore */
    uint32_t num_weak; /* weak predecessors (edges from condition tasks) */
    uint8_t dfs_color;
    uint8_t kind; /* WEFT__KIND_*: what job.run does and how edges out of it count */
    uint8_t prio; /* its own priority + 2 (weft_priority), 0: none (priority.c) */
    /* Runs one instance at a time (a pipeline's task: a second one at once
     * fails with WEFT_EBUSY), so weft_run_n_parallel refuses it up front. */
    uint8_t single;
} weft__node_cold;

_Static_assert(sizeof(struct weft__node) == WEFT__CACHE_LINE, "the hot part of a node is one line");
_Static_assert(sizeof(weft__node_cold) <= sizeof(struct weft__node), "cold part fits a hot-sized slot");

/* Chunk k of the slab holds 8 << min(k, 13) nodes: cap hot nodes, then cap cold
 * parts in slots of the same size, in one allocation.  The first chunk is
 * small (1 KiB) because many graphs are: each subflow task's graph and each
 * module body of a few tasks has a slab of its own, and a first chunk of 64
 * nodes (8 KiB, zeroed) made each such graph cost ~10 KiB and most of a
 * subflow's time (a recursion of nested subflows, Taskflow's fibonacci,
 * ran 30-50 times slower than Taskflow's).  Chunks double up to the same
 * 65536 nodes as before, so a big graph has three more chunks, no more. */
enum { WEFT__CHUNK0_SHIFT = 3, WEFT__CHUNK_KMAX = 13 };
static inline size_t weft__chunk_capacity(size_t k) {
    return ((size_t)1 << WEFT__CHUNK0_SHIFT) << (k < WEFT__CHUNK_KMAX ? k : WEFT__CHUNK_KMAX);
}
static inline size_t weft__chunk_bytes(size_t k) { return 2 * weft__chunk_capacity(k) * sizeof(struct weft__node); }
/* Chunks of two huge pages or more start on a huge-page boundary (see task.c). */
static inline size_t weft__chunk_align(size_t k) {
    return weft__chunk_bytes(k) >= 2 * WEFT__HUGE_PAGE ? WEFT__HUGE_PAGE : WEFT__CACHE_LINE;
}

/* Capacity of the chunk holding the node of a given index: chunk k starts at index
 * 8 * (2^k - 1), so for k <= KMAX it is the k with 2^k <= index/8 + 1 < 2^(k+1). */
static inline size_t weft__chunk_capacity_of(uint32_t index) {
    size_t q = ((size_t)index >> WEFT__CHUNK0_SHIFT) + 1;
    if (q >= ((size_t)2 << WEFT__CHUNK_KMAX)) return weft__chunk_capacity(WEFT__CHUNK_KMAX);
    return ((size_t)1 << WEFT__CHUNK0_SHIFT) << (63 - __builtin_clzll((unsigned long long)q));
}

/* The cold part of n: `capacity` slots after it, in the chunk's second half. */
static inline weft__node_cold *weft__cold(const weft__node *n) {
    return (weft__node_cold *)((char *)n + weft__chunk_capacity_of(n->index) * sizeof(struct weft__node));
}

/* Node kinds.  The kind picks job.run, so a run never branches on it; building,
 * validation and DOT read it from the cold line. */
enum {
    WEFT__KIND_STATIC,
    WEFT__KIND_COND, /* edges out of it are weak */
    WEFT__KIND_MCOND, /* multi-condition: weak edges too */
    WEFT__KIND_SUBFLOW,
    WEFT__KIND_MODULE,
};

static inline bool weft__node_is_cond(const weft__node *n) {
    uint8_t kind = weft__cold(n)->kind;
    return kind == WEFT__KIND_COND || kind == WEFT__KIND_MCOND;
}

/* A slot freed by weft_task_erase (edit.c): on tf->free_slots, skipped by every
 * walk over the nodes, taken again by the next emplace. */
/* Relaxed atomic: a run with priorities rewrites its nodes' job.run (priority.c,
 * through weft__node_set_run) while another thread may be scanning the nodes
 * (weft_run_n_parallel's check of the kinds, which does not queue behind
 * runs); the value only tells erased (NULL) from not. */
static inline bool weft__node_erased(const weft__node *n) {
    return __atomic_load_n(&n->job.run, __ATOMIC_RELAXED) == NULL;
}
/* Sets a node's job function where weft__node_erased may read it meanwhile. */
static inline void weft__node_set_run(weft__node *n, weft__job_fn fn) { __atomic_store_n(&n->job.run, fn, __ATOMIC_RELAXED); }

/* Runs `body` with `n` bound to each node of tf in emplace order (erased slots
 * are skipped).  A `return` in
 * body leaves the enclosing function. */
#define WEFT__FOR_EACH_NODE(tf, n, body)                                                      \
    do {                                                                                \
        size_t left_ = (tf)->nnodes;                                                    \
        for (size_t k_ = 0; k_ < (tf)->nchunks && left_; k_++) {                        \
            size_t cap_ = weft__chunk_capacity(k_), cnt_ = left_ < cap_ ? left_ : cap_; \
            for (size_t i_ = 0; i_ < cnt_; i_++) {                                      \
                weft__node *n = &(tf)->chunks[k_][i_];                                  \
                if (!weft__node_erased(n)) { body }                                     \
            }                                                                           \
            left_ -= cnt_;                                                              \
        }                                                                               \
    } while (0)

/* The successors of n, in the order the edges were added. */
static inline weft__node *const *weft__succ_array(const weft__node *n) {
    return n->nsucc <= 1 ? &n->succ.one : n->succ.many;
}

/* Successor arrays (succ_pool.c): power-of-two capacities carved from blocks the
 * taskflow owns, with a free list per capacity. */
typedef struct weft__succ_block weft__succ_block;
typedef struct weft__succ_pool {
    weft__succ_block *blocks;
    char *cur; /* unused tail of the newest block */
    size_t left;
    weft__node **free[32]; /* by log2(capacity) */
} weft__succ_pool;

/* An array of `cap` (a power of two, >= 2) successor slots; NULL: out of memory. */
weft__node **weft__succ_alloc(weft__succ_pool *p, uint32_t cap);
/* Gives back an array from weft__succ_alloc (NULL is ignored). */
void weft__succ_free(weft__succ_pool *p, weft__node **a, uint32_t cap);
/* Frees every block; the pool is empty and usable afterwards. */
void weft__succ_pool_release(weft__succ_pool *p);

/* weft_taskflow.sources_mode */
enum { WEFT__SOURCES_KEPT, WEFT__SOURCES_STALE, WEFT__SOURCES_IMPLICIT };

struct weft_taskflow {
    char *name;
    /* Slab: chunk k holds chunk_capacity(k) nodes; nodes never move. */
    weft__node **chunks;
    size_t nchunks, chunks_cap;
    size_t nnodes; /* slots in use, erased ones included (edit.c) */
    size_t nerased; /* erased slots, linked through job.next from free_slots */
    weft__node *free_slots;
    bool no_reuse; /* a composition is being copied in: new nodes stay contiguous */
    /* Slots [retire_from, retire_below) hold copies of compositions
     * (compose.c), whose instances name tasks by index: an erased one there
     * is never reused (edit.c), or an instance would name the task added
     * next.  Both 0 after a clear (no copy). */
    size_t retire_from, retire_below;
    size_t nsems; /* nodes with a semaphore record (semaphore.c) */
    size_t nprio; /* nodes with a priority of their own (priority.c) */
    size_t prio_armed; /* nnodes when plain nodes were last armed for priorities, 0: not (priority.c) */
    /* Units held by sections that span tasks, per semaphore its tasks use
     * (semaphore.c); freed with the last record. */
    struct weft__sem_ledger *sem_ledger;
    size_t nsem_ledger, sem_ledger_cap;
    /* Past a few entries, a hash of them by semaphore (entry + 1; 0: empty,
     * sem_index_cap slots, a power of two), or NULL. */
    uint32_t *sem_index;
    size_t sem_index_cap;
    size_t cur_chunk, cur_used; /* where the next node goes */
    /* Nodes weft__add_node may still place with one test (task.c): room left
     * in the current chunk, and under the task limit, found by its slow path
     * while nothing else stood in the way (not sealed, no erased slot to
     * reuse).  0 sends the next node the slow way, which counts it afresh:
     * whatever changes those (a clear, an erase, a seal) sets it to 0. */
    size_t fast_slots;
    size_t high_water; /* slots below it were used before (clear) */
    bool any_cold_dirty; /* some node's cold part was written: zero them on destroy */
    /* weft_task_set_data during a run wrote a cold part without the node's bit
     * (the bit shares a word with num_deps, which running workers read): every
     * reused slot counts as dirty from then on. */
    _Atomic bool cold_unmarked;
    /* Kept current while building, so that a run needs no pass over the nodes:
     * the sources (nodes with no dependents), every node's join counter (equal to
     * num_deps whenever no run is active), and the number of edges that point
     * from a later-emplaced task to an earlier one.  With no such edge the emplace
     * order is a topological order and there can be no cycle, so the cycle check
     * runs only when `backward` edges exist and the graph changed (`dirty`).
     * Likewise when every edge is backward (their count is the sum of the
     * nodes' num_deps, found by one pass over the hot lines) and none goes
     * from a task to itself (`loops`), the reverse order is one: a graph built
     * from its sinks back, as Taskflow's graph benchmarks build theirs, needs
     * no check either. */
    weft__node **sources;
    size_t nsources, sources_cap;
    /* WEFT__SOURCES_KEPT: `sources` lists them (a stack while built, task.c).
     * STALE: recount at prepare.  IMPLICIT: every slot below nnodes holds a
     * source (no edge yet, none erased) and no list is kept: a wide graph of
     * independent tasks is built and run without writing or reading 8 bytes
     * a task there.  Read them through weft__nsources and weft__source_at;
     * the first edge or erase ends IMPLICIT (task.c). */
    uint8_t sources_mode;
    size_t backward; /* edges from index i to index j <= i (loops included) */
    size_t loops;    /* edges from a task to itself */
    bool dirty;
    weft__succ_pool succ_pool;
    /* Nodes owning heap memory (a name): when 0 (and next_owned is 0), clearing
     * or destroying needs no walk over the nodes. */
    size_t nnamed;
    /* Control flow (flow.h): condition tasks (each iteration then re-arms every
     * join counter, as a branch not taken leaves counters half counted), nodes
     * with an `ext` record, and spare subflow records kept for reuse. */
    size_t nconds, next_owned;
    /* The bodies of tf's module tasks, an entry per task (module.c).  A run of
     * tf holds each busy, and theirs (runs_inflight), from its submission to
     * its end: its module may start a body at any moment in between, and an
     * edit of the body racing with that start would be lost (WEFT_EBUSY
     * instead; flow.h). */
    weft_taskflow **bodies;
    size_t nbodies, bodies_cap;
    /* A subflow's graph is built while its parent's run goes, after that
     * run took its holds: each module emplaced into it holds its body (and
     * those below) from the emplace on, as a run would, and this says every
     * entry of `bodies` is so held, until the graph's nested run ends or it
     * is not to run (module.c, weft__module_drop_held).  Without it a body
     * could be edited or destroyed between the emplace and the module's
     * start. */
    bool bodies_held;
    struct weft__subflow *free_subs;
    bool is_subflow_graph; /* owned by a subflow task: not destroyable by users */
    bool is_composition_graph; /* owned by a composition (compose.c): not destroyable by users */
    /* A subflow graph joined inside its task (weft_subflow_join): its tasks have
     * run, so building it is refused until the task runs again.  Written and read
     * by the task's own worker only. */
    bool sealed;
    /* Runs: `active` is running; later ones wait in a list behind it. */
    weft__mutex mu;
    weft__run *active, *tail;
    _Atomic uint32_t runs_inflight; /* queued + active; non-zero forbids changes */
    /* The status of the most recent builder call or weft_run* on tf
     * (weft_taskflow_last_error; docs/errors.md, R2).  Atomic (relaxed) only so
     * that runs submitted from several threads do not race on it; its value
     * means something to a caller that orders its calls. */
    _Atomic int last_error;
};

/* A strong edge from -> to is gone: the counts of struct weft_taskflow's
 * backward and loops (task.c, edit.c). */
static inline void weft__edge_uncount(weft_taskflow *tf, const weft__node *from, const weft__node *to) {
    if (from->index >= to->index) {
        tf->backward--;
        if (from == to) tf->loops--;
    }
}

/* The chunk holding the node of emplace index i, and the node's slot in it:
 * chunks 0..KMAX-1 hold 8 << k nodes and start at 8 * (2^k - 1); every later
 * chunk holds 65536. */
static inline size_t weft__chunk_locate(size_t i, size_t *slot) {
    enum { BASE = 1 << WEFT__CHUNK0_SHIFT, SMALL = BASE * ((1 << WEFT__CHUNK_KMAX) - 1) }; /* nodes in chunks 0..KMAX-1 */
    const size_t big = weft__chunk_capacity(WEFT__CHUNK_KMAX);
    if (i >= SMALL) {
        *slot = (i - SMALL) % big;
        return WEFT__CHUNK_KMAX + (i - SMALL) / big;
    }
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)(i >> WEFT__CHUNK0_SHIFT) + 1);
    *slot = i - ((size_t)BASE << k) + BASE;
    return k;
}

/* The node of tf with emplace index i (i < tf->nnodes). */
static inline weft__node *weft__node_at(const weft_taskflow *tf, size_t i) {
    size_t slot, k = weft__chunk_locate(i, &slot);
    return &tf->chunks[k][slot];
}

/* The sources of tf (see sources_mode; not STALE): how many, and the i-th. */
static inline size_t weft__nsources(const weft_taskflow *tf) {
    return tf->sources_mode == WEFT__SOURCES_IMPLICIT ? tf->nnodes : tf->nsources;
}
static inline weft__node *weft__source_at(const weft_taskflow *tf, size_t i) {
    return tf->sources_mode == WEFT__SOURCES_IMPLICIT ? weft__node_at(tf, i) : tf->sources[i];
}

/* The cold part of n, for writing: marks it dirty (see cold_dirty).  Only while
 * no run of n's taskflow is active (see cold_unmarked). */
static inline weft__node_cold *weft__cold_mut(weft__node *n) {
    if (!n->cold_dirty) {
        n->cold_dirty = 1;
        n->tf->any_cold_dirty = true;
    }
    return weft__cold(n);
}

/* Marks t as a task that runs one instance at a time (weft__node_cold.single):
 * pipeline/ marks the task that drives a pipeline. */
static inline void weft__task_mark_single(weft_task t) {
    if (t.node_) weft__cold_mut(t.node_)->single = 1;
}


/* A range of an iteration's sources run as one job, split lazily (sources.c). */
typedef struct weft__range {
    weft__job job; /* must stay first */
    weft__run *r;
    uint32_t lo, hi; /* indices into r->tf->sources */
} weft__range; /* r->range, or allocated by a split (freed by whoever runs it) */

struct weft__run {
    weft_future fut; /* must stay first: the future handle is the run */
    weft__job start; /* starts the run on a worker */
    weft_taskflow *tf;
    weft_executor *ex;
    weft__run *next; /* next queued run of the same taskflow */
    uint64_t target; /* iterations wanted */
    weft_pred_fn pred;
    void *pred_arg;
    /* Nested runs (flow.h): the run of a subflow's or a module's graph inside a
     * parent run.  `top` is the future of the outermost run (its stop bits stop
     * every level; &fut for a top-level run); `parent`/`pnode` the run and task
     * to resume when this one ends; `anchor` the nearest run that is not a
     * subflow's, which detached subflows join. */
    weft_future *top;
    weft__run *parent;
    weft__node *pnode;
    weft__run *anchor;
    uint8_t role; /* WEFT__ROLE_* */
    uint8_t prio; /* the run's priority + 2 (weft_run_with_priority), 0: none */
    weft__range range; /* the iteration's first range of sources (sources.c) */
    /* top->skipped when the current iteration began: an iteration that a cancel
     * reached with none of its tasks skipped still completed (weft__run_settle). */
    uint64_t skip_mark;
    /* Nodes made runnable and not yet finished in the current iteration. */
    _Alignas(WEFT__CACHE_LINE) _Atomic int64_t pending;
    _Alignas(WEFT__CACHE_LINE) char pad_;
};

/* TOP: a weft_run; JOINED: resumes its task's successors; DETACHED: joins its
 * anchor; SYNC: sets fut.done for a weft_subflow_join waiting inside its task. */
enum { WEFT__ROLE_TOP, WEFT__ROLE_JOINED, WEFT__ROLE_DETACHED, WEFT__ROLE_SYNC };

/* The level task n runs at in run r, stored as a priority + 2 (0: none, as
 * NORMAL): its own (weft_task_set_priority), else the run's
 * (weft_run_with_priority: "as if it had been given it"). */
static inline uint8_t weft__task_level(const weft__node *n, const weft__run *r) {
    uint8_t own = weft__cold(n)->prio;
    return own ? own : r->prio;
}

/* The job function of every node (run.c). */
weft__job *weft__node_run(weft__worker *w, weft__job *job);

/* Adds delta to r's pending count; when it reaches 0 the iteration is over and
 * this returns the job that goes on (next iteration or the end of the run), else
 * NULL.  delta != 0. */
weft__job *weft__run_settle(weft__worker *w, weft__run *r, int64_t delta);

/* j, a ready job of a graph run that this worker would run next as the
 * continuation of the task it ends (the next link of a chain, the successor
 * a condition picked), or, when the worker's look at the shared queues is due
 * (core/executor.h, weft__fair_due) and finds a job there, that job, with j
 * queued on the deque to run after it.  A chain or a condition loop hands each
 * task straight on to the next, never back through the worker's loop where
 * that look is made, so a CRITICAL task from another thread waited until it
 * ended (3000 tasks at one worker).  j keeps the count it took over: pushed,
 * it is a ready job like any. */
weft__job *weft__hand_on_look(weft__worker *w, weft__job *j); /* the look (run.c) */
static inline weft__job *weft__hand_on(weft__worker *w, weft__job *j) {
    /* The look out of line: inline, its push cost a condition task 5
     * instructions in register moves whether or not it was due. */
    return __builtin_expect(weft__fair_due(w), 0) ? weft__hand_on_look(w, j) : j;
}

/* Releases n's successors in run r (n finished); returns a job to run next.
 * The node's own -1 may be held back on w (run.c). */
weft__job *weft__release_successors(weft__worker *w, weft__run *r, weft__node *n);

/* The job that starts the current iteration's sources of r (r->pending already
 * counts them): the first source's, the others pushed, or for many sources one
 * range job over all of them (sources.c). */
weft__job *weft__sources_start(weft__worker *w, weft__run *r);

/* Common start of every node kind: re-arms the join counter for the next time
 * and says whether the task should be called (false: the run stopped; counted
 * as skipped). */
static inline bool weft__node_enter(weft__worker *w, weft__node *n, weft_future *top) {
    /* Re-arm for the next iteration: every predecessor has already counted down.
     * (Nodes with one dependent never count down.) */
    if (n->num_deps > 1) atomic_store_explicit(&n->join, n->num_deps, memory_order_relaxed);
    if ((atomic_load_explicit(&top->stop, memory_order_acquire) & WEFT__STOP_MASK) == 0) return true;
    atomic_fetch_add_explicit(&top->skipped, 1, memory_order_relaxed);
    weft__hook_skipped(w); /* observe/: count skipped tasks */
    return false;
}

/* The context a task of run r runs in on worker w (n: the task, or NULL for a
 * predicate or a context whose task is set per call): chained on the worker's
 * current one, with the frame stack's top taken for the unsynced-spawn check.
 * For graph.h, run.c, sources.c and gpu/task.c. */
static inline weft_ctx weft__run_ctx(weft__worker *w, weft__run *r, void *n) {
    return weft__ctx_on(w, n, &r->top->stop, &r->fut);
}

/* Around the call of a task's function, whatever its kind: fills *cx, makes it
 * the worker's innermost context (the chain weft_future_wait checks for waits
 * that would deadlock), and tells the observer, if one is on.  Returns the
 * observer state for weft__task_leave: the same value both times, so begin and
 * end events come in pairs. */
static inline struct weft__obs *weft__task_enter(weft__worker *w, weft_ctx *cx, weft__node *n, weft__run *r) {
    *cx = weft__run_ctx(w, r, n);
    w->ctx = cx;
    struct weft__obs *o = weft__obs_get(w->ex); /* observe/: NULL unless switched on */
    weft__hook_task_begin(w, o, n, r);
    return o;
}

/* WEFT_EDEADLK (tf's last error, naming `call`) when the calling thread runs
 * a task of tf or of a graph nested in a run of tf: a run of tf submitted to
 * be waited for would wait behind it.  Else WEFT_OK.  run.c. */
weft_status weft__refuse_own_run(weft_taskflow *tf, const char *call);

/* A run of tf is submitted (+1) or has ended (-1): counts it as a run of
 * every module body below tf, along every path of modules (one that comes
 * back to a graph on its own path stops there: a cycle of modules fails at
 * run time with WEFT_EDEADLK).  While tf is busy, so its modules cannot
 * change between the two calls.  module.c. */
void weft__module_hold_bodies(weft_taskflow *tf, int delta);

/* Gives back the holds a subflow's graph took on its modules' bodies
 * (bodies_held above): its nested run has ended, or it will not run.  A
 * no-op when none are held.  Only by the graph's run or its subflow task.
 * module.c. */
void weft__module_drop_held(weft_taskflow *tf);

/* Empties tf's bodies table at once (giving back a subflow graph's holds
 * on them), before a clear or destroy releases every module of tf: each
 * module's release then has no entry to look for.  module.c. */
void weft__module_release_all(weft_taskflow *tf);

/* Every module body below tf, along every path as weft__module_hold_bodies
 * walks them (a body reached twice is listed twice), in a new array of *n
 * entries (weft__free it with *n * sizeof(void *)); NULL and 0 for a
 * taskflow without modules.  WEFT_ENOMEM: nothing made.  module.c. */
weft_status weft__module_list_bodies(const weft_taskflow *tf, const void *const **out, size_t *n);
/* True if the calling thread runs a task of a module body below tf (or of a
 * graph nested in a run of one): a run of tf would wait behind it for that
 * body.  Allocates nothing.  module.c. */
bool weft__module_body_runs_here(const weft_taskflow *tf);

/* Fails the outermost run of r on behalf of node n (its name and index go into
 * the run's info).  run.c. */
void weft__fail_node(weft__run *r, weft__node *n, int code);

/* Ends what weft__task_enter began.  Spawns the task left unsynced (weft_spawn
 * without its weft_sync) are synced first, as weft_run_root does; a failing
 * one fails the run on behalf of n. */
static inline void weft__task_leave(weft__worker *w, weft_ctx *cx, struct weft__obs *o, weft__node *n,
                                    weft__run *r, int rc) {
    if (__builtin_expect(weft__fj_left_unsynced(w, cx), 0)) {
        int left = weft__fj_sync_left(w, cx);
        if (left != 0) weft__fail_node(r, n, left);
        /* A child's failure fails the run on n's behalf: n's outcome for the
         * observer and the metrics, as for a plain task (observe/'s
         * task_call), unless n failed on its own already. */
        if (rc == 0) rc = left;
    }
    weft__hook_task_end(w, o, n, r, rc);
    w->ctx = cx->outer;
}

/* A plain task with no function (a placeholder, or work set to NULL) runs
 * as a no-op: while something observes, it is reported as a task that ran
 * and returned 0 (its begin and end events, the metrics' tasks and
 * succeeded, a span), as it is counted skipped when its run stops first
 * (observe.h).  Only called while ex->obs is set.  run.c. */
void weft__noop_observed(weft__worker *w, weft__run *r, weft__node *n);

/* Calls plain node n's function (unless the run stopped): run.c, and
 * graph/semaphore.c for a plain task holding semaphores. */
static inline void weft__call_node(weft__worker *w, weft__run *r, weft__node *n) {
    if (weft__node_enter(w, n, r->top)) {
        if (__builtin_expect(!n->fn, 0)) {
            if (weft__obs_get(w->ex)) weft__noop_observed(w, r, n);
            return;
        }
        /* weft__task_enter and weft__task_leave, the observer's two events in
         * one hook around the call. */
        weft_ctx cx = weft__run_ctx(w, r, n);
        w->ctx = &cx;
        int rc = weft__hook_task_call(w, weft__obs_get(w->ex), n, r, n->fn, &cx, n->arg);
        /* Spawns left unsynced: synced here, as weft_run_root does.  The
         * marks are taken into the context (weft_sync_status reads them); one
         * compare of the top after the call (weft__fj_left_unsynced). */
        if (__builtin_expect(weft__fj_left_unsynced(w, &cx), 0)) {
            int left = weft__fj_sync_left(w, &cx);
            if (rc == 0) rc = left;
        }
        w->ctx = cx.outer;
        if (rc != 0) weft__fail_node(r, n, rc);
    }
}

/* Starts (or queues behind the run ahead) a nested run `sub` of graph sub->tf;
 * fields other than the queue are filled by the caller.  Returns the job to run
 * now (the start of sub) or NULL when queued; WEFT_ECYCLE in *st when the graph
 * has a cycle (nothing started). */
weft__job *weft__run_start_nested(weft__run *sub, weft_status *st);
/* weft_run for member *out of the weft_run_many set `set` (run_many.c): *out
 * is stored atomically, and the run starts cancelled if the set is. */
weft_status weft__run_member(weft_executor *ex, weft_taskflow *tf, weft_future **out, const weft_future *set);

/* Writes s as the inside of a DOT double-quoted string: quotes and backslashes
 * escaped, newlines as \n (dot.c; also the profiled DOT's writer). */
void weft__dot_put_escaped(FILE *out, const char *s);

/* Takes the slot weft_task_erase just freed off tf->free_slots for good: it
 * stays erased and is never reused (edit.c; an instance's copy of an erased
 * task, whose index its entries and exits may name). */
void weft__slot_retire(weft_taskflow *tf);
/* Takes the first erased slot off tf->free_slots (edit.c): the next node goes
 * there. */
void weft__slot_unfree(weft_taskflow *tf);

/* Counts a run of tf (queued or going, or a parent's hold on tf as a module
 * body) in or out of tf->runs_inflight.  A taskflow whose tasks use
 * semaphores also counts the run on each of them (weft__sem_users), so that
 * weft_semaphore_destroy refuses while a run that may still acquire or
 * release one is in flight: it freed a semaphore a queued run would then
 * touch.  The ledger cannot change meanwhile (edits are refused while
 * runs_inflight is not 0), so the out matches the in; it comes before the
 * count drops, after which tf may be edited. */
void weft__sem_users(weft_taskflow *tf, int delta);
static inline void weft__tf_inflight_in(weft_taskflow *tf) {
    atomic_fetch_add_explicit(&tf->runs_inflight, 1, memory_order_relaxed);
    if (__builtin_expect(tf->nsem_ledger != 0, 0)) weft__sem_users(tf, 1);
}
static inline void weft__tf_inflight_out(weft_taskflow *tf) {
    if (__builtin_expect(tf->nsem_ledger != 0, 0)) weft__sem_users(tf, -1);
    atomic_fetch_sub_explicit(&tf->runs_inflight, 1, memory_order_release);
}

/* Frees node n's semaphore record and gives it its own job function back
 * (graph/semaphore.c). */
void weft__sem_use_free(weft__node *n);
/* Gives task `to` the semaphores of `from` (a composition's copy).  WEFT_OK,
 * WEFT_ENOMEM. */
weft_status weft__sem_copy(weft_task to, const weft__node *from);

/* Priorities (priority.c).  The job functions of tasks with a priority (their
 * own, or their run's): wrappers that queue the ready task in the scheduling
 * layer, one per level (index & 3: LOW 0 .. CRITICAL 3) for plain tasks
 * (index 4-7: static, no semaphores) and for the others (0-3). */
extern weft__job_fn const weft__prio_wrapper[8];
/* The index of f in weft__prio_wrapper, or -1 (a task without a wrapper). */
static inline int weft__prio_index(weft__job_fn f) {
    for (int i = 0; i < 8; i++)
        if (f == weft__prio_wrapper[i]) return i;
    return -1;
}
/* The job function of a queued task, until it is taken. */
extern weft__job_fn const weft__prio_taken;
/* Queues ready task n, whose job function is weft__prio_wrapper[ix], at its
 * level: true; false (n unchanged) if the layer lacks memory.  Worker w
 * only. */
bool weft__prio_route(weft__worker *w, weft__node *n, unsigned ix);
/* weft__prio_route for k ready tasks n[i] (ix[i]: their wrappers' indices),
 * in order, with one clock read and one lock; those the layer lacks memory for
 * go to w's deque (their wrappers try again when they run).  k <= WEFT__PRIO_ROUTE_MAX. */
enum { WEFT__PRIO_ROUTE_MAX = 32 };
void weft__prio_route_all(weft__worker *w, weft__node *const *n, const uint8_t *ix, unsigned k);
/* Gives n, if it has a wrapper, the one that fits its kind and semaphores now
 * (after they changed).  While no run of its taskflow is going. */
void weft__prio_rewrap(weft__node *n);
/* weft__node_run in a run with priorities: queues the ready successors that
 * have a wrapper at once (weft__prio_route). */
weft__job *weft__node_run_prio(weft__worker *w, weft__job *job);
/* The job function n runs without wrappers: its own (flow.h,
 * weft__task_set_own_job), else its kind's. */
weft__job_fn weft__kind_run(const weft__node *n);
/* Its kind's job function, which runs n to its end on the worker (a plain
 * task's calls fn), for a wrapper with something to do after it. */
weft__job_fn weft__kind_run_to_end(const weft__node *n);
/* The semaphore wrapper (semaphore.c). */
weft__job *weft__sem_node_run(weft__worker *w, weft__job *job);
/* Gives task `to` the priority of `from` (a composition's copy).  WEFT_OK or
 * the error of weft_task_set_priority. */
weft_status weft__prio_copy(weft_task to, const weft__node *from);
/* Runs with priorities.  Begin: with a run priority, every task of r's
 * taskflow without a wrapper of its own gets one for the run (end takes it
 * back); else the plain tasks get weft__node_run_prio, and keep it after the
 * run (tf->prio_armed).  Called by the worker that starts / ends r, while no
 * task of the taskflow runs; end only for a run with a priority. */
void weft__prio_run_begin(weft__run *r);
void weft__prio_run_end(weft__run *r);
/* Starts an iteration of r whose taskflow has tasks with priorities: every
 * source with a wrapper is queued now, the others pushed, so that the queue
 * orders all of them before any runs.  Returns a job to run next, or NULL. */
weft__job *weft__prio_sources_start(weft__worker *w, weft__run *r);

/* The node a task context runs: ctx->task, or the node of a parallel
 * instance's shadow (run_parallel.c).  NULL outside graph tasks. */
weft__node *weft__ctx_node(const weft_ctx *ctx);

/* Adds a plain node (task.c); the flow code then sets its kind.  Errors as
 * weft_emplace. */
weft_task weft__add_node(weft_taskflow *tf, weft_task_fn fn, void *arg);
/* weft__add_node, and the node's kind (WEFT__KIND_*), job function `run` and
 * per-kind record `ext` written (the cold part marked).  Errors as
 * weft__add_node (no message naming the caller: weft__add_named_oom). */
weft_task weft__add_node_kind(weft_taskflow *tf, weft_task_fn fn, void *arg, uint8_t kind, weft__job_fn run,
                              void *ext);
/* After weft__add_node gave the null task: its WEFT_ENOMEM message names
 * `fn`, the call that was adding the task, instead of weft_emplace (R3);
 * other statuses keep theirs.  Returns tf's last error. */
weft_status weft__add_named_oom(weft_taskflow *tf, const char *fn);

/* Gives back what a node's `ext` record holds (flow code), and frees the spare
 * subflow records of a taskflow being destroyed. */
void weft__flow_release_node(weft_taskflow *tf, weft__node *n);
void weft__flow_free_pool(weft_taskflow *tf);

/* Records a failed call's status on tf and its detail as the calling thread's
 * message (weft_last_error_message; fmt NULL: the status's sentence); returns
 * st. */
weft_status weft__tf_error(weft_taskflow *tf, weft_status st, const char *fmt, ...);
/* weft__tf_error for WEFT_ENOMEM in builder `fn`: "<fn>: out of memory
 * (taskflow '<name>')", which names the call as R3 asks (the sentence alone,
 * "taskflow 'x': out of memory", named none). */
weft_status weft__tf_oom(weft_taskflow *tf, const char *fn);

/* Records the outcome of a builder call on tf: WEFT_OK resets the last error
 * (failures go through weft__tf_error, which also says why).  Returns st. */
static inline weft_status weft__tf_done(weft_taskflow *tf, weft_status st) {
    atomic_store_explicit(&tf->last_error, st, memory_order_relaxed);
    return st;
}

/* True (and records WEFT_EBUSY) if a run of tf is queued or going. */
bool weft__tf_busy(weft_taskflow *tf);

/* weft_taskflow_clear without its tests, for a taskflow known not busy and
 * not sealed (a subflow task's own graph at the task's next execution:
 * weft__subflow_run has tested runs_inflight, and the seal is lifted when
 * the function returns).  taskflow.c. */
void weft__taskflow_reset(weft_taskflow *tf);

/* Under tf->mu: in a child of fork(), a run of tf that was in flight at the
 * fork on an executor of the parent never ends (that executor has no workers
 * here), so tf stays busy for ever and a run queued behind it never starts. */
static inline bool weft__tf_stuck_at_fork(const weft_taskflow *tf) {
    return tf->active && weft__forked(tf->active->ex);
}
/* Records and returns WEFT_EFORKED for `call`, a run of such a taskflow
 * (graph/run.c). */
weft_status weft__tf_refuse_stuck(weft_taskflow *tf, const char *call);

/* Validates (cycles), collects the sources and arms every join counter.  Caller
 * holds tf->mu, and no run is active.  WEFT_OK, WEFT_ECYCLE (*on_cycle set),
 * WEFT_ENOMEM. */
weft_status weft__taskflow_prepare(weft_taskflow *tf, weft__node **on_cycle, const char *call);
/* True when weft__taskflow_prepare has nothing to do (validate.c: the sources
 * are kept or implicit, and no backward edge came since the last check): a
 * run's start asks this inline, and calls it only otherwise -- the call and
 * its two tests were ~20 instructions of every nested run of a subflow's
 * graph.  Keep in step with weft__taskflow_prepare. */
static inline bool weft__taskflow_prepared(const weft_taskflow *tf) {
    return tf->sources_mode != WEFT__SOURCES_STALE && (!tf->dirty || tf->backward == 0);
}

/* Sets every join counter to its node's strong dependent count (graphs with
 * condition tasks, at the start of each iteration). */
void weft__rearm_joins(weft_taskflow *tf);

/* Label of a node for messages and DOT: its name, or "#index". */
const char *weft__node_label(const weft__node *n, char *buf, size_t len);

#endif
