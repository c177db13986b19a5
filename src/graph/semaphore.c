/* Graph tasks that acquire and release semaphores (async/semaphore.c has the
 * semaphore itself).
 *
 * A task given a semaphore keeps its kind's job function in a record and runs
 * through sem_node_run instead, so tasks without semaphores pay nothing.  The
 * wrapper takes the task's acquire set (or parks the node on a semaphore: the
 * node stays counted in its run's pending count, so the iteration waits for
 * it, and no worker does), calls the kind's function, then gives back the
 * release set.  The kind's function may already have readied successors and
 * even ended the run's iteration; the wrapper holds one extra count on the run
 * meanwhile, so the run (and with it the taskflow) outlives the release.
 *
 * A section may span tasks: one task acquires, a later one releases.  Should
 * the run stop in between, the releasing task is skipped, and the unit would
 * stay taken for good, with any task parked on the semaphore (one of this run's
 * included, so the run could never end) waiting for ever.  So the taskflow
 * keeps a ledger per semaphore of the units its spanning sections hold: a
 * task acquiring a semaphore it does not release itself adds one, a task
 * releasing one it did not acquire takes one off, and a skipped task of the
 * second kind gives back a unit the ledger says the taskflow holds.  Sections
 * inside one task never touch the ledger. */
#include "graph/graph.h"
#include "async/semaphore.h"
#include "core/alloc.h"
#include "core/error_detail.h"

#include <string.h>

enum { INLINE = 2 };

struct weft__sem_use {
    weft__job_fn inner; /* the kind's job function */
    weft__sem_waiter wait;
    weft_semaphore **set[2]; /* [0]: acquired before, [1]: released after */
    uint32_t n[2], cap[2];
    /* The first INLINE of each set live here: a task with one semaphore reads
     * its record and the semaphore, no third line (cache misses were most of
     * a semaphore's cost per task). */
    weft_semaphore *inl[2][INLINE];
    bool spans; /* acquires one it does not release, or the reverse: uses the ledger */
    /* Semaphores of set[ACQ] not in set[REL], plus entries of set[REL] not
     * in set[ACQ]: spans is unmatched != 0.  Kept as each one is added (a
     * recount over both sets per weft_task_acquire made k of them cost k^3). */
    uint32_t unmatched;
};

struct weft__sem_ledger {
    weft_semaphore *s;
    _Atomic size_t held; /* units taken by this taskflow's spanning sections */
};

enum { ACQ, REL };

static bool in_set(weft_semaphore *const *a, uint32_t n, const weft_semaphore *s) {
    for (uint32_t i = 0; i < n; i++)
        if (a[i] == s) return true;
    return false;
}

/* A taskflow's ledger has an entry per semaphore its tasks use.  Searched
 * entry by entry, m semaphores (one per task: a lock per resource) cost m^2 / 2
 * compares to attach (64,000: 1.5 s) and a run of sections spanning tasks m^2
 * reads; past LEDGER_LINEAR entries a hash finds them. */
enum { LEDGER_LINEAR = 8 };

static size_t ledger_hash(const weft_semaphore *s) {
    uint64_t x = (uint64_t)(uintptr_t)s;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return (size_t)(x ^ (x >> 29));
}

/* The slot of tf->sem_index holding s's entry, or the empty one where it goes. */
static size_t ledger_slot(const weft_taskflow *tf, const uint32_t *slots, size_t cap, const weft_semaphore *s) {
    size_t mask = cap - 1, i = ledger_hash(s) & mask;
    while (slots[i] && tf->sem_ledger[slots[i] - 1].s != s) i = (i + 1) & mask;
    return i;
}

/* s's entry, or NULL. */
static struct weft__sem_ledger *ledger_find(const weft_taskflow *tf, const weft_semaphore *s) {
    if (tf->sem_index) {
        uint32_t e = tf->sem_index[ledger_slot(tf, tf->sem_index, tf->sem_index_cap, s)];
        return e ? &tf->sem_ledger[e - 1] : NULL;
    }
    for (size_t i = 0; i < tf->nsem_ledger; i++)
        if (tf->sem_ledger[i].s == s) return &tf->sem_ledger[i];
    return NULL;
}

/* The ledger entry of s (made by attach before any run). */
static struct weft__sem_ledger *ledger_of(weft_taskflow *tf, const weft_semaphore *s) { return ledger_find(tf, s); }

/* Room in the index for `want` entries (at most half full); none needed
 * while the ledger is small.  False: out of memory, nothing changed. */
static bool ledger_index_reserve(weft_taskflow *tf, size_t want) {
    if (want <= LEDGER_LINEAR || want * 2 <= tf->sem_index_cap) return true;
    if (want >= UINT32_MAX / 2) return false;
    size_t cap = tf->sem_index_cap ? 2 * tf->sem_index_cap : 4 * LEDGER_LINEAR;
    while (cap < want * 2) cap *= 2;
    uint32_t *slots = weft__calloc(cap * sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < tf->nsem_ledger; i++) slots[ledger_slot(tf, slots, cap, tf->sem_ledger[i].s)] = (uint32_t)i + 1;
    weft__free(tf->sem_index, tf->sem_index_cap * sizeof *tf->sem_index);
    tf->sem_index = slots;
    tf->sem_index_cap = cap;
    return true;
}

/* Takes one unit off s's entry; false if the taskflow holds none. */
static bool ledger_take(struct weft__sem_ledger *l) {
    size_t v = atomic_load_explicit(&l->held, memory_order_relaxed);
    while (v && !atomic_compare_exchange_weak_explicit(&l->held, &v, v - 1, memory_order_relaxed,
                                                       memory_order_relaxed)) {
    }
    return v != 0;
}

/* Relaxed is enough: a releasing task runs after the acquiring one (an edge,
 * with the join counters' acquire/release between them) or the section's
 * count is the user's to get right. */
static void ledger_acquired(weft_taskflow *tf, const struct weft__sem_use *u) {
    for (uint32_t i = 0; i < u->n[ACQ]; i++)
        if (!in_set(u->set[REL], u->n[REL], u->set[ACQ][i]))
            atomic_fetch_add_explicit(&ledger_of(tf, u->set[ACQ][i])->held, 1, memory_order_relaxed);
}

static void ledger_released(weft_taskflow *tf, const struct weft__sem_use *u) {
    for (uint32_t i = 0; i < u->n[REL]; i++)
        if (!in_set(u->set[ACQ], u->n[ACQ], u->set[REL][i])) (void)ledger_take(ledger_of(tf, u->set[REL][i]));
}

/* A skipped task: gives back what it was to release for a section begun by
 * another task, if the taskflow holds such a unit. */
static void ledger_give_back(weft__worker *w, weft_taskflow *tf, const struct weft__sem_use *u) {
    for (uint32_t i = 0; i < u->n[REL]; i++) {
        weft_semaphore *s = u->set[REL][i];
        if (!in_set(u->set[ACQ], u->n[ACQ], s) && ledger_take(ledger_of(tf, s))) (void)weft__sem_release(w, &s, 1);
    }
}

/* Gives back n's release set (a unit released that nobody took fails the run). */
static void release_set(weft__worker *w, weft__run *r, weft__node *n, const struct weft__sem_use *u) {
    if (u->spans) ledger_released(n->tf, u);
    if (weft__sem_release(w, u->set[REL], u->n[REL]) != WEFT_OK) weft__fail_node(r, n, WEFT_EINVAL);
}

weft__job *weft__sem_node_run(weft__worker *w, weft__job *job) {
    weft__node *n = (weft__node *)job;
    struct weft__sem_use *u = weft__cold(n)->sems;
    weft__run *r = n->tf->active;
    if (atomic_load_explicit(&r->top->stop, memory_order_acquire) & WEFT__STOP_MASK) {
        /* Skipped tasks neither acquire nor release; units handed over while it
         * was parked go back. */
        weft__sem_give_back(w, u->set[ACQ], u->wait.held);
        u->wait.held = 0;
        if (u->spans) ledger_give_back(w, n->tf, u); /* before inner: the run may end in it */
        return u->inner(w, job);
    }
    u->wait.job = job;
    u->wait.ex = r->ex;
    if (!weft__sem_acquire(u->set[ACQ], u->n[ACQ], &u->wait)) return NULL; /* parked */
    if (u->spans) ledger_acquired(n->tf, u);
    if (u->n[REL] == 0) return u->inner(w, job);
    if (u->inner == weft__node_run) {
        /* A plain task: its call, its releases, then its successors, so the
         * units are back before any successor can start (node_run would
         * ready them first), and n's own count keeps the run alive. */
        weft__call_node(w, r, n);
        release_set(w, r, n, u);
        return weft__release_successors(w, r, n);
    }
    /* Other kinds ready successors (or end the run) inside their function:
     * an extra count keeps the run alive until the release. */
    atomic_fetch_add_explicit(&r->pending, 1, memory_order_relaxed); /* n is counted: pending > 0 */
    weft__job *next = u->inner(w, job);
    release_set(w, r, n, u);
    weft__job *end = weft__run_settle(w, r, -1);
    if (!end) return next;
    if (next) weft__push_local(w, next);
    return end;
}

void weft__sem_use_free(weft__node *n) {
    struct weft__sem_use *u = weft__cold(n)->sems;
    /* Its own job back (a GPU task's parks again; u->inner ran it to its
     * end); a priority's wrapper stays. */
    if (n->job.run == weft__sem_node_run) n->job.run = weft__kind_run(n);
    for (int k = 0; k < 2; k++)
        if (u->set[k] != u->inl[k]) weft__free(u->set[k], u->cap[k] * sizeof *u->set[k]);
    weft__free(u, sizeof *u);
    weft__cold_mut(n)->sems = NULL;
    weft_taskflow *tf = n->tf;
    if (--tf->nsems == 0) { /* the last record: the ledger goes too */
        weft__free(tf->sem_ledger, tf->sem_ledger_cap * sizeof *tf->sem_ledger);
        tf->sem_ledger = NULL;
        tf->nsem_ledger = tf->sem_ledger_cap = 0;
        weft__free(tf->sem_index, tf->sem_index_cap * sizeof *tf->sem_index);
        tf->sem_index = NULL;
        tf->sem_index_cap = 0;
    }
}

/* Makes sure tf's ledger has an entry for s.  False: out of memory. */
static bool ledger_reserve(weft_taskflow *tf, weft_semaphore *s) {
    if (ledger_find(tf, s)) return true;
    if (!ledger_index_reserve(tf, tf->nsem_ledger + 1)) return false;
    if (tf->nsem_ledger == tf->sem_ledger_cap) {
        size_t cap = tf->sem_ledger_cap ? 2 * tf->sem_ledger_cap : 4;
        struct weft__sem_ledger *a =
            weft__realloc(tf->sem_ledger, tf->sem_ledger_cap * sizeof *a, cap * sizeof *a); /* no run reads it */
        if (!a) return false;
        tf->sem_ledger = a;
        tf->sem_ledger_cap = cap;
    }
    struct weft__sem_ledger *l = &tf->sem_ledger[tf->nsem_ledger++];
    l->s = s;
    atomic_init(&l->held, 0);
    if (tf->sem_index) tf->sem_index[ledger_slot(tf, tf->sem_index, tf->sem_index_cap, s)] = (uint32_t)tf->nsem_ledger;
    return true;
}

/* Where s is, or goes, in the acquire set (kept in address order, each once:
 * async/semaphore.h says why): the first entry not below s. */
static uint32_t acq_slot(const struct weft__sem_use *u, const weft_semaphore *s) {
    uint32_t lo = 0, hi = u->n[ACQ];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)u->set[ACQ][mid] < (uintptr_t)s) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* u->unmatched once s joins set `which` (s not yet in it, for ACQ). */
static void count_match(struct weft__sem_use *u, int which, weft_semaphore *s) {
    if (which == ACQ) { /* the releases of s it had become matched; else s is unmatched */
        uint32_t c = 0;
        for (uint32_t i = 0; i < u->n[REL]; i++) c += u->set[REL][i] == s;
        u->unmatched = c ? u->unmatched - c : u->unmatched + 1;
        return;
    }
    uint32_t at = acq_slot(u, s);
    if (at == u->n[ACQ] || u->set[ACQ][at] != s) u->unmatched++; /* a release of one it does not acquire */
    else if (!in_set(u->set[REL], u->n[REL], s)) u->unmatched--; /* its acquire of s is matched now */
}

/* n's record, made on first use.  NULL: out of memory. */
static struct weft__sem_use *use_of(weft__node *n) {
    struct weft__sem_use *u = weft__cold(n)->sems;
    if (u) return u;
    if (!(u = weft__calloc(sizeof *u))) return NULL;
    for (int k = 0; k < 2; k++) {
        u->set[k] = u->inl[k];
        u->cap[k] = INLINE;
    }
    /* A priority's wrapper stays outermost: it queues the task, whose
     * semaphores are taken when it runs (priority.c). */
    u->inner = weft__kind_run_to_end(n); /* releases follow the work's end */
    if (weft__prio_index(n->job.run) < 0) n->job.run = weft__sem_node_run;
    weft__cold_mut(n)->sems = u;
    weft__prio_rewrap(n); /* its wrapper now reads the semaphores */
    n->tf->nsems++;
    return u;
}

static weft_status attach(weft_task t, weft_semaphore *s, int which, const char *fn) {
    weft__node *n = t.node_;
    if (!n) return weft__fail(fn, WEFT_EINVAL, "the task is the null task");
    /* R3: name the call made (fn), not the pair or nothing. */
    if (!s) return weft__tf_error(n->tf, WEFT_EINVAL, "%s: the semaphore is NULL", fn);
    if (weft__node_erased(n)) return weft__tf_error(n->tf, WEFT_EINVAL, "%s: the task was erased", fn);
    if (weft__tf_busy(n->tf)) return WEFT_EBUSY;
    struct weft__sem_use *u = use_of(n);
    if (!u) return weft__tf_oom(n->tf, fn);
    if (!ledger_reserve(n->tf, s)) {
        if (u->n[ACQ] + u->n[REL] == 0) weft__sem_use_free(n); /* as before the call */
        return weft__tf_oom(n->tf, fn);
    }
    uint32_t at = u->n[which];
    if (which == ACQ) {
        at = acq_slot(u, s);
        if (at < u->n[ACQ] && u->set[ACQ][at] == s) return weft__tf_done(n->tf, WEFT_OK); /* repeats count once */
    }
    if (u->n[which] == u->cap[which]) {
        uint32_t cap = 2 * u->cap[which];
        bool inl = u->set[which] == u->inl[which];
        weft_semaphore **a = inl ? weft__alloc(cap * sizeof *a)
                                 : weft__realloc(u->set[which], u->cap[which] * sizeof *a, cap * sizeof *a);
        if (a && inl) memcpy(a, u->inl[which], sizeof u->inl[which]);
        if (!a) {
            if (u->n[ACQ] + u->n[REL] == 0) weft__sem_use_free(n); /* as before the call */
            return weft__tf_oom(n->tf, fn);
        }
        u->set[which] = a;
        u->cap[which] = cap;
    }
    count_match(u, which, s);
    /* Acquired in address order, each once: inserted in place (a sort of
     * the whole set per call cost k^2 log k for k semaphores). */
    weft_semaphore **a = u->set[which];
    if (at < u->n[which]) memmove(a + at + 1, a + at, (u->n[which] - at) * sizeof *a);
    a[at] = s;
    u->n[which]++;
    u->spans = u->unmatched != 0;
    return weft__tf_done(n->tf, WEFT_OK);
}

weft_status weft_task_acquire(weft_task t, weft_semaphore *s) { return attach(t, s, ACQ, __func__); }
weft_status weft_task_release(weft_task t, weft_semaphore *s) { return attach(t, s, REL, __func__); }

size_t weft_task_num_acquires(weft_task t) {
    const struct weft__sem_use *u = t.node_ ? weft__cold(t.node_)->sems : NULL;
    return u ? u->n[ACQ] : 0;
}

size_t weft_task_num_releases(weft_task t) {
    const struct weft__sem_use *u = t.node_ ? weft__cold(t.node_)->sems : NULL;
    return u ? u->n[REL] : 0;
}

void weft__sem_users(weft_taskflow *tf, int delta) {
    /* The ledger lists every semaphore tf's tasks acquire or release (attach
     * reserves an entry first); an entry left by an erased task counts too,
     * which only refuses a destroy while such a run is in flight. */
    for (size_t i = 0; i < tf->nsem_ledger; i++) {
        weft_semaphore *s = tf->sem_ledger[i].s;
        if (delta > 0) atomic_fetch_add_explicit(&s->users, 1, memory_order_relaxed);
        else atomic_fetch_sub_explicit(&s->users, 1, memory_order_release); /* after the run's last touch */
    }
}

weft_status weft__sem_copy(weft_task to, const weft__node *from) {
    const struct weft__sem_use *u = weft__cold(from)->sems;
    for (uint32_t k = 0; u && k < 2; k++)
        for (uint32_t i = 0; i < u->n[k]; i++) {
            weft_status st = attach(to, u->set[k][i], (int)k, "weft_composition_instantiate");
            if (st != WEFT_OK) return st;
        }
    return WEFT_OK;
}
