/* Partitioners: how [0, n) is cut into chunks, and how tasks take them. */
#include "algo/algo.h"

#include "core/alloc.h"
#include "core/executor.h"
#include "core/error_detail.h"

/* AUTO claims chunks from a shared counter like DYNAMIC, but chunks shrink as the
 * work runs out: each is 1/32 of what is left, down to n/1024 (about 140 chunks,
 * as few claims as 128 fixed ones would take; every claim is an atomic increment
 * of a line the other workers also increment, and 1024 fixed chunks cost 2-4% of
 * a memory-bound 10^7-element loop on 2 threads of this project's VM).  The small
 * last chunks let the workers finish together: with 128 fixed chunks a worker
 * could idle for most of a chunk at the end, and a worker woken late (~100 us on
 * a VM whose idle vCPUs are halted) left its share of the tail to the other.
 * The chunks depend on n only, never on the worker count or timing; with
 * several tasks a claim takes a run of them (claim_end). */
enum { STATIC_CHUNKS = 256, DYNAMIC_CHUNKS = 1024, AUTO_GUIDE_TASKS = 16, AUTO_MIN_DIV = 1024 };

static size_t div_up(size_t a, size_t b) { return a / b + (a % b != 0); }

unsigned weft__task_limit(weft_executor *ex, const weft_algo_config *cfg) {
    unsigned t = weft_executor_workers(ex);
    if (cfg && cfg->max_tasks && cfg->max_tasks < t) t = cfg->max_tasks;
    return t ? t : 1;
}

/* Guided: each chunk is remaining / (2 * tasks), at least min_chunk.  Called
 * twice: once to count (bounds NULL), once to fill. */
static size_t guided_walk(size_t n, unsigned tasks, size_t min_chunk, size_t *bounds) {
    size_t k = 0, at = 0;
    while (at < n) {
        size_t c = (n - at) / (2 * (size_t)tasks);
        if (c < min_chunk) c = min_chunk;
        if (c > n - at) c = n - at;
        if (bounds) bounds[k] = at;
        at += c;
        k++;
    }
    if (bounds) bounds[k] = n;
    return k;
}

/* call: the public call the user made (its name, not the family's, in the
 * message: weft_last_error_message). */
static int plan_guided(weft__plan *p, unsigned tasks, size_t min_chunk, size_t max_chunks, const char *call) {
    p->nchunks = guided_walk(p->n, tasks, min_chunk, NULL);
    /* A call that keeps state per chunk (max_chunks: reductions and scans,
     * weft__state_max_chunks) gets no more chunks than that: every chunk but
     * the last is at least min_chunk, so a minimum of n / max_chunks (rounded
     * up) makes at most max_chunks.  Only the fixed plans were capped: AUTO's
     * ~140 shrinking chunks of a 256 KiB accumulator asked for 35 MiB, and
     * GUIDED's with many workers for hundreds, against the 16 MiB of chunk
     * state weft/algo.h promises.  Depends on n and the state's size only
     * (and, as GUIDED always does, the task count). */
    if (max_chunks && p->nchunks > max_chunks) {
        size_t least = div_up(p->n, max_chunks);
        if (least > min_chunk) min_chunk = least;
        p->nchunks = guided_walk(p->n, tasks, min_chunk, NULL);
    }
    p->bounds = weft__alloc((p->nchunks + 1) * sizeof(size_t));
    if (!p->bounds) return weft__fail(call, WEFT_ENOMEM, "out of memory for the chunk plan");
    (void)guided_walk(p->n, tasks, min_chunk, p->bounds);
    return WEFT_OK;
}

/* kind is never AUTO here: AUTO's own chunks are planned apart (shrinking). */
static size_t default_chunk(size_t n, weft_partitioner kind, weft__plan_rules rules) {
    if (rules.fixed_chunk) return rules.fixed_chunk;
    if (kind == WEFT_PARTITION_GUIDED) return 1;
    return div_up(n, kind == WEFT_PARTITION_STATIC ? STATIC_CHUNKS : DYNAMIC_CHUNKS);
}

int weft__plan_init(weft__plan *p, weft_executor *ex, size_t n, const weft_algo_config *cfg,
                    weft__plan_rules rules) {
    weft_partitioner asked = cfg ? cfg->partitioner : WEFT_PARTITION_AUTO;
    weft_partitioner kind = asked == WEFT_PARTITION_AUTO ? WEFT_PARTITION_DYNAMIC : asked;
    if (kind != WEFT_PARTITION_STATIC && kind != WEFT_PARTITION_DYNAMIC && kind != WEFT_PARTITION_GUIDED)
        return weft__fail(rules.call, WEFT_EINVAL, "config partitioner %d is unknown", (int)asked);
    *p = (weft__plan){ .kind = kind, .n = n, .cancel = cfg ? cfg->cancel : NULL,
                       .run_stop = weft__algo_take_run_stop() };
    /* AUTO with neither a chunk asked for nor one the algorithm fixes. */
    bool shrinking = asked == WEFT_PARTITION_AUTO && !(cfg && cfg->chunk) && !rules.fixed_chunk;
    size_t chunk = cfg && cfg->chunk ? cfg->chunk : default_chunk(n, kind, rules);
    if (chunk == 0) chunk = 1;
    unsigned tasks = weft__task_limit(ex, cfg);
    if (n == 0) {
        p->chunk = 1;
    } else if (kind == WEFT_PARTITION_GUIDED) {
        int st = plan_guided(p, tasks, chunk, rules.max_chunks, rules.call);
        if (st != WEFT_OK) return st;
    } else if (shrinking) {
        /* Shrinking chunks: n/32 of what is left, down to n/1024 (see above). */
        int st = plan_guided(p, AUTO_GUIDE_TASKS, div_up(n, AUTO_MIN_DIV), rules.max_chunks, rules.call);
        if (st != WEFT_OK) return st;
        p->batch = true;
    } else {
        if (rules.max_chunks && div_up(n, chunk) > rules.max_chunks) chunk = div_up(n, rules.max_chunks);
        p->chunk = chunk;
        p->nchunks = div_up(n, chunk);
    }
    p->ntasks = p->nchunks < tasks ? (unsigned)(p->nchunks ? p->nchunks : 1) : tasks;
    return WEFT_OK;
}

void weft__plan_free(weft__plan *p) {
    if (p->bounds) weft__free(p->bounds, (p->nchunks + 1) * sizeof(size_t));
    p->bounds = NULL;
}

typedef struct chunk_run {
    const weft__plan *plan;
    weft__chunk_fn fn;
    void *ctx;
    bool counter;
    bool batch;           /* claims take runs of chunks (claim_end) */
    _Atomic bool skipped; /* static: a task left chunks unrun (the token fired) */
    _Atomic bool cut;     /* a running chunk stopped early (weft__chunk_cut) */
    _Alignas(WEFT__CACHE_LINE) _Atomic size_t next;
} chunk_run;

/* Static plans: looked at before each chunk of a task's share.  Relaxed store:
 * par_tasks joins the tasks before `skipped` is read. */
static bool stopped(chunk_run *r) {
    if (__builtin_expect(!weft__algo_stopped(r->plan->cancel, r->plan->run_stop), 1)) return false;
    atomic_store_explicit(&r->skipped, true, memory_order_relaxed);
    return true;
}

/* The chunk run this thread is in (weft__chunk_cut): set around each chunk and
 * put back after, as a chunk's elements may run other calls' chunks. */
static _Thread_local chunk_run *tls_chunk __attribute__((tls_model("initial-exec")));

static void run_chunk(chunk_run *r, size_t k) {
    size_t lo, hi;
    weft__plan_chunk(r->plan, k, &lo, &hi);
    chunk_run *outer = tls_chunk;
    tls_chunk = r;
    r->fn(r->ctx, k, lo, hi);
    tls_chunk = outer;
}

bool weft__chunk_cut(void) {
    chunk_run *r = tls_chunk;
    if (!r || __builtin_expect(!weft__algo_stopped(r->plan->cancel, r->plan->run_stop), 1)) return false;
    /* Relaxed: par_tasks joins the tasks before `cut` is read. */
    atomic_store_explicit(&r->cut, true, memory_order_relaxed);
    return true;
}

/* The end of the run of chunks a batched claim at chunk k takes: chunks from
 * k until they hold about 1/(2 * tasks) of the elements left (at least one).
 * The chunks and their boundaries stay those of the plan (they depend on n
 * only); what the worker count changes is only which worker runs which, as
 * timing already does.  Why: with 2 workers on a memory-bound 10^7-element
 * loop, each taking one chunk at a time, the workers' chunks interleave
 * across the whole array; contiguous runs of chunks per worker, as OpenMP's
 * and oneTBB's halves give, ran it 5-8% faster (bench/README.md, "Session
 * 46"). */
static size_t claim_end(const weft__plan *p, size_t k, unsigned tasks) {
    size_t want = (p->n - p->bounds[k]) / (2 * (size_t)tasks), j = k + 1;
    while (j < p->nchunks && p->bounds[j + 1] - p->bounds[k] <= want) j++;
    return j;
}

static void chunk_task(void *ctx, unsigned t, unsigned n) {
    chunk_run *r = ctx;
    size_t total = r->plan->nchunks;
    if (!r->counter) { /* static: a fixed contiguous share per task */
        size_t from = total * t / n, to = total * (t + 1) / n;
        for (size_t k = from; k < to && !stopped(r); k++) run_chunk(r, k);
        return;
    }
    if (n == 1) { /* the only task: no one to race for a chunk, no RMW per chunk */
        size_t k = 0;
        for (; k < total && !weft__algo_stopped(r->plan->cancel, r->plan->run_stop); k++) run_chunk(r, k);
        atomic_store_explicit(&r->next, k, memory_order_relaxed); /* below total: skipped */
        return;
    }
    if (r->batch) {
        size_t k = atomic_load_explicit(&r->next, memory_order_relaxed), e;
        for (;;) {
            for (;;) { /* relaxed, as below */
                if (__builtin_expect(weft__algo_stopped(r->plan->cancel, r->plan->run_stop), 0)) return;
                if (k >= total) return;
                e = claim_end(r->plan, k, n);
                if (atomic_compare_exchange_weak_explicit(&r->next, &k, e, memory_order_relaxed,
                                                          memory_order_relaxed))
                    break;
            }
            run_chunk(r, k);
            while (++k < e) {
                if (stopped(r)) return; /* chunks [k, e) were taken and not run: skipped */
                run_chunk(r, k);
            }
        }
    }
    /* relaxed: the counter only hands out indices; the data each chunk reads was
     * published before the tasks were started.  The token is looked at before a
     * chunk is taken, so every chunk taken runs (a scan waits for each chunk's
     * predecessor), and chunks were skipped iff the counter ends below total. */
    for (size_t k;;) {
        if (__builtin_expect(weft__algo_stopped(r->plan->cancel, r->plan->run_stop), 0)) return;
        if ((k = atomic_fetch_add_explicit(&r->next, 1, memory_order_relaxed)) >= total) return;
        run_chunk(r, k);
    }
}

weft_status weft__par_chunks(weft_executor *ex, const weft__plan *p, bool in_order, weft__chunk_fn fn,
                             void *ctx) {
    if (p->nchunks == 0) return WEFT_OK;
    chunk_run r = { .plan = p, .fn = fn, .ctx = ctx,
                    .counter = in_order || p->kind != WEFT_PARTITION_STATIC, .batch = !in_order && p->batch };
    atomic_init(&r.next, 0);
    atomic_init(&r.skipped, false);
    atomic_init(&r.cut, false);
    weft__par_tasks(ex, p->ntasks, chunk_task, &r);
    /* relaxed: par_tasks has joined every task (its own acquire). */
    bool skipped = (r.counter && atomic_load_explicit(&r.next, memory_order_relaxed) < p->nchunks) ||
                   atomic_load_explicit(&r.skipped, memory_order_relaxed);
    skipped = skipped || atomic_load_explicit(&r.cut, memory_order_relaxed);
    return skipped ? WEFT_ECANCELED : WEFT_OK;
}

weft_status weft__par_plan_run(weft_executor *ex, size_t n, const weft_algo_config *cfg,
                               weft__plan_rules rules, weft__chunk_fn fn, void *ctx) {
    weft__plan p;
    int st = weft__plan_init(&p, ex, n, cfg, rules);
    if (st != WEFT_OK) return st;
    st = weft__par_chunks(ex, &p, false, fn, ctx);
    weft__plan_free(&p);
    return st;
}
