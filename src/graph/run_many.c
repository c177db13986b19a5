/* weft_run_many: several taskflows submitted together, one future for all.
 *
 * Each taskflow is an ordinary run with its own future; the group's future
 * holds them and counts them down from their completion callbacks
 * (weft_future_then), plus one count that the submitting call holds until
 * every member is submitted, so the group cannot finish halfway through. */
#include "graph/graph.h"
#include "core/alloc.h"
#include "core/default_executor.h"
#include "weft/async.h"
#include "core/error_detail.h"

typedef struct many {
    weft_future fut; /* must stay first: the group's future handle */
    size_t n;
    _Atomic size_t left; /* members not finished, + 1 while submitting */
    weft_future **members; /* NULL where the submission failed */
    /* Each member's submission error; WEFT_EAGAIN until it is known and for
     * a member submitted (its run's future then says), so that a member not
     * yet submitted reads as not finished (run_many). */
    weft_status *submitted;
} many;

static size_t many_bytes(size_t n) { return sizeof(many) + n * (sizeof(weft_future *) + sizeof(weft_status)); }

static void many_free(weft_future *f) {
    many *m = (many *)f;
    for (size_t i = 0; i < m->n; i++) weft_future_destroy(m->members[i]);
    weft__free(m, many_bytes(m->n));
}

/* Member i's future, or NULL (not submitted, or not yet).  Any thread: a
 * task of an earlier member may read the table through the set's future
 * (graph.h: *out is stored before any member starts) while run_many is still
 * writing it, hence atomic (sequentially consistent: see run_many). */
static weft_future *member_at(const many *m, size_t i) { return __atomic_load_n(&m->members[i], __ATOMIC_SEQ_CST); }

static many *many_of(const weft_future *f) { return f && f->free_fn == many_free ? (many *)f : NULL; }

/* Member i's status: its submission error, or its run's status. */
static weft_status member_status(const many *m, size_t i) {
    weft_future *f = member_at(m, i);
    return f ? weft_future_status(f) : __atomic_load_n(&m->submitted[i], __ATOMIC_RELAXED);
}

/* Every member is done: the group's report is the first failing member's (in
 * index order), its skipped count the sum, its iterations the members that
 * succeeded. */
static void many_finish(many *m) {
    weft_status status = WEFT_OK;
    for (size_t i = 0; i < m->n; i++) {
        weft_run_info info = {.status = m->submitted[i], .failed_task = ""};
        if (m->members[i]) (void)weft_future_info(m->members[i], &info);
        atomic_fetch_add_explicit(&m->fut.skipped, info.skipped, memory_order_relaxed);
        if (info.status == WEFT_OK) atomic_fetch_add_explicit(&m->fut.iterations, 1, memory_order_relaxed);
        if (status != WEFT_OK || info.status == WEFT_OK) continue;
        status = info.status == WEFT_ECANCELED ? WEFT_ECANCELED : WEFT_ETASK;
        if (status == WEFT_ETASK)
            weft__future_fail(&m->fut, info.status == WEFT_ETASK ? info.task_code : info.status, info.failed_task, i);
    }
    /* The members decide, not the set's own stop bits: weft_future_cancel on
     * the set (or a token attached to it) stops nothing submitted, so a set
     * whose members all succeeded is WEFT_OK (graph.h). */
    weft__future_complete_as(&m->fut, status);
    weft__future_release(&m->fut); /* the producer's reference: m may be freed */
}

static void count_down(many *m) {
    /* acq_rel: the last one sees every member's results. */
    if (atomic_fetch_sub_explicit(&m->left, 1, memory_order_acq_rel) == 1) many_finish(m);
}

static void member_done(weft_future *f, weft_status st, void *arg) {
    (void)f, (void)st;
    count_down(arg);
}

/* weft_run_many; `keep`: the thread's message as it was before, put back if a
 * member's weft_run failed (a failure the set handles: docs/errors.md, R3), or
 * NULL to leave that member's message (weft_run_many_and_wait returns it). */
static weft_status run_many(weft_executor *ex, weft_taskflow *const *tfs, size_t n, weft_future **out,
                            weft__saved_message *keep) {
    if (out) *out = NULL;
    if (n && !tfs) return weft__fail("weft_run_many", WEFT_EINVAL, "tfs is NULL with n = %zu", n);
    weft_status dst = weft__executor_or_default(&ex); /* NULL: the default executor */
    if (dst != WEFT_OK) return dst;
    if (n > (SIZE_MAX - sizeof(many)) / (sizeof(weft_future *) + sizeof(weft_status)))
        return weft__fail("weft_run_many", WEFT_ENOMEM, "%zu taskflows are too many", n);
    many *m = weft__calloc(many_bytes(n));
    if (!m) return weft__fail_st("weft_run_many", WEFT_ENOMEM);
    weft__future_init(&m->fut, ex, out ? 2 : 1, many_free);
    m->n = n;
    m->members = (weft_future **)(m + 1);
    m->submitted = (weft_status *)(m->members + n);
    atomic_init(&m->left, n + 1);
    /* The table is readable through the set's future from the first
     * member's start on (below): a member not submitted yet must read as
     * not finished (WEFT_EAGAIN, graph.h), not as the zeroed WEFT_OK. */
    for (size_t i = 0; i < n; i++) m->submitted[i] = WEFT_EAGAIN;
    if (keep) weft__error_message_save(keep);
    bool refused = false;
    /* Before the members can start: a task of one may read the caller's
     * handle of the set (run.c's submit says why), and a task of a member's
     * taskflow waiting on the set waits behind its own run (WEFT_EDEADLK,
     * core/future.c, which skips the members not submitted yet). */
    m->fut.parts = m->members;
    m->fut.nparts = n;
    if (out) *out = &m->fut;
    for (size_t i = 0; i < n; i++) {
        /* Member i is stored atomically (sequentially consistent), NULL on
         * failure, before its run can start; the run starts cancelled if the
         * set was cancelled by then (run.c). */
        weft_status si = weft__run_member(ex, tfs[i], &m->members[i], &m->fut);
        if (si != WEFT_OK) {
            __atomic_store_n(&m->submitted[i], si, __ATOMIC_RELAXED);
            refused = true;
            count_down(m);
            continue;
        }
        weft_future *f = m->members[i]; /* only this thread writes it */
        weft_status then = weft_future_then(f, member_done, m); /* ours: never WEFT_EBUSY */
        (void)then;
    }
    count_down(m);
    if (keep && refused) weft__error_message_restore(keep);
    return WEFT_OK;
}

weft_status weft_run_many(weft_executor *ex, weft_taskflow *const *tfs, size_t n, weft_future **out) {
    weft__saved_message keep;
    return run_many(ex, tfs, n, out, &keep);
}

weft_status weft_run_many_status(const weft_future *all, size_t i) {
    const many *m = many_of(all);
    return m && i < m->n ? member_status(m, i)
                         : weft__fail(__func__, WEFT_EINVAL,
                                      "all is not a weft_run_many future, or index %zu is out of range", i);
}

weft_status weft_run_many_info(const weft_future *all, size_t i, weft_run_info *info) {
    const many *m = many_of(all);
    if (!m || i >= m->n || !info)
        return weft__fail(__func__, WEFT_EINVAL,
                          "all is not a weft_run_many future, info is NULL, or index %zu is out of range", i);
    weft_future *f = member_at(m, i);
    if (f) return weft_future_info(f, info);
    *info = (weft_run_info){.status = __atomic_load_n(&m->submitted[i], __ATOMIC_RELAXED), .failed_task = ""};
    return WEFT_OK;
}

weft_status weft_run_many_cancel(weft_future *all) {
    many *m = many_of(all);
    if (!m) return weft__fail(__func__, WEFT_EINVAL, "all is not a weft_run_many future");
    /* The set's PARTS bit first, then the table: a member that run_many has
     * yet to put there starts cancelled when its submission sees the bit
     * (run.c, weft__run_member). */
    atomic_fetch_or_explicit(&all->stop, WEFT__STOP_PARTS, memory_order_seq_cst);
    weft_status st = weft_future_cancel(all);
    for (size_t i = 0; i < m->n; i++) {
        weft_future *f = member_at(m, i);
        if (f) (void)weft_future_cancel(f);
    }
    return st;
}

weft_status weft_run_many_and_wait(weft_executor *ex, weft_taskflow *const *tfs, size_t n, weft_status *statuses) {
    weft_future *all;
    /* The group's future has no owner of its own to refuse the wait by: a
     * member the caller's task belongs to is refused here, before any is
     * submitted (weft_run_and_wait). */
    for (size_t i = 0; tfs && i < n; i++) {
        weft_status own = tfs[i] ? weft__refuse_own_run(tfs[i], "weft_run_many_and_wait") : WEFT_OK;
        if (own != WEFT_OK) return own;
    }
    weft_status st = run_many(ex, tfs, n, &all, NULL);
    if (st != WEFT_OK) return st;
    (void)weft_future_wait(all);
    for (size_t i = 0; i < n; i++) {
        weft_status si = member_status(many_of(all), i);
        if (statuses) statuses[i] = si;
        if (st == WEFT_OK) st = si;
    }
    weft_future_destroy(all);
    return st;
}
