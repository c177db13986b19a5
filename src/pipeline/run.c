/* Running pipelines: the slot jobs, the stop wave and the task that drives a run.
 *
 * Join counters.  Each slot's counter is re-armed (relaxed store) when the slot
 * starts, before anything it does can let a predecessor run again for the next
 * token; those predecessors are ordered after this slot by the counters and
 * deque hand-offs in between, so their decrements land on the re-armed value.
 * A slot whose full count is 1 has a single predecessor, which therefore knows
 * it is ready without touching the counter at all (the parallel stages).
 * Decrements are acq_rel: the one that reaches zero acquires everything the
 * other predecessors (and, through release sequences, their predecessors) did.
 */
#include "pipeline/pipeline.h"
#include "core/future.h"
#include "graph/graph.h"
#include "core/obs_hooks.h" /* metrics and profiler: each stage call is a span */
#include "sched/sched.h"      /* weft__sched_submit: a prioritised pipeline's slots */
#include "core/error_detail.h"

/* ---- the pipeflow handle ------------------------------------------------------ */

uint64_t weft_pipeflow_token(const weft_pipeflow *pf) { return pf ? pf->token : 0; }
size_t weft_pipeflow_line(const weft_pipeflow *pf) { return pf ? pf->line : 0; }
size_t weft_pipeflow_stage(const weft_pipeflow *pf) { return pf ? pf->stage - pf->p->simple : 0; }

const weft_future *weft_pipeflow_run(const weft_pipeflow *pf) {
    /* drive() keeps its task's weft_ctx_run for the stages. */
    return pf ? pf->p->run : NULL;
}

weft_status weft_pipeflow_stop(weft_pipeflow *pf) {
    if (!pf || pf->stage != 0) return weft__fail(__func__, WEFT_EINVAL, "pf is NULL, or not the first stage");
    pf->stop = true;
    return WEFT_OK;
}

/* ---- slots -------------------------------------------------------------------- */

static inline void rearm(weft__slot *s) {
    if (s->full != 1) atomic_store_explicit(&s->join, s->full, memory_order_relaxed);
}

/* Counts down one predecessor of s; true if s is now ready to run. */
static inline bool count_down(weft__slot *s) {
    if (s->full == 1) return true;
    return atomic_fetch_sub_explicit(&s->join, 1, memory_order_acq_rel) == 1;
}

static inline weft__slot *next_line(weft_pipeline *p, const weft__slot *s) {
    uint32_t l = s->line + 1;
    return weft__slot_at(p, l == p->nlines ? 0 : l, s->stage);
}

/* First stage: no new token once a stage failed or the graph run was stopped. */
static inline bool must_stop(const weft_pipeline *p) {
    return atomic_load_explicit(&p->failed, memory_order_relaxed) ||
           (atomic_load_explicit(p->cancel, memory_order_relaxed) & WEFT__STOP_MASK);
}

static void record_failure(weft_pipeline *p, weft__line *ln, int rc) {
    int none = 0;
    atomic_compare_exchange_strong_explicit(&p->code, &none, rc, memory_order_relaxed, memory_order_relaxed);
    atomic_store_explicit(&p->failed, 1, memory_order_relaxed);
    ln->skip = true;
}

static inline __attribute__((always_inline)) int stage_fn(weft_pipeline *p, weft__line *ln, weft_pipeflow *pf) {
    uint32_t s = pf->stage;
    const weft__stage *st = &p->stages[s];
    switch (st->call) {
    case WEFT__CALL_TOKEN:
        return st->fn.token(pf, st->arg);
    case WEFT__CALL_DATA:
        return st->fn.data(pf, s ? ln->buf[(s + 1) & 1] : NULL, s + 1 < p->nstages ? ln->buf[s & 1] : NULL, st->arg);
    case WEFT__CALL_ITEM:
        return st->fn.item(p->items + pf->token * p->item_size, (size_t)pf->token, st->arg);
    default: /* WEFT__CALL_GEN */
        if (pf->token >= p->count) pf->stop = true;
        return 0;
    }
}

/* A stage call observed (observe/) as work of its own; o is the executor's
 * observation state, read by the caller.  An inline phase read it up to
 * INLINE_LOOK tokens ago: if observation was switched off since (metrics
 * disabled, a profiler that had turned them on stopped), the call is not
 * counted, as the hooks count whatever they are given and metrics that are
 * off must stay as they were.  Only this path pays for the second look. */
static __attribute__((noinline)) int call_stage_observed(weft__worker *w, struct weft__obs *o, weft_pipeline *p,
                                                         weft__line *ln, weft_pipeflow *pf) {
    if (!weft__obs_get(w->ex)) return stage_fn(p, ln, pf);
    /* A simple pipeline's stage 0 is our generator, not a stage the user
     * gave: it is no stage call in the metrics or the profile, and the
     * user's stages go by their own numbers (s - simple), as
     * weft_pipeflow_stage and weft_pipeline_num_stages count them.  Observed,
     * it was "stage 0" with count + 1 calls and the user's stages were
     * numbered from 1. */
    if (p->simple && pf->stage == 0) return stage_fn(p, ln, pf);
    weft__obs_hooks_of(o)->work_begin(o, w, WEFT__WORK_STAGE, p, pf->stage - (uint32_t)p->simple,
                                      (uint32_t)pf->token);
    int rc = stage_fn(p, ln, pf);
    weft__obs_hooks_of(o)->work_end(o, w, p, rc);
    return rc;
}

/* A stage call on worker w, with o = weft__obs_get(w->ex) (NULL: nothing
 * observes).  An inline phase reads o once per INLINE_LOOK tokens. */
static inline int call_stage(weft__worker *w, struct weft__obs *o, weft_pipeline *p, weft__line *ln,
                             weft_pipeflow *pf) {
    if (__builtin_expect(o != NULL, 0)) return call_stage_observed(w, o, p, ln, pf);
    return stage_fn(p, ln, pf);
}

/* In a slot (`slot` below: a spread phase's stage call, in weft__slot_run's
 * context): spawns the stage left unsynced are synced now, before the
 * count-downs after which the pipeline, and the run its context names, may be
 * gone; a failing one fails the stage.  (An inline phase's stage calls run in
 * the driving task's context, which syncs them as any task's.) */
static __attribute__((noinline, cold)) int slot_sync_left_slow(weft__worker *w, int rc) {
    int left = weft__fj_sync_left(w, w->ctx);
    return rc != 0 ? rc : left;
}
static inline int slot_sync_left(weft__worker *w, int rc) {
    return __builtin_expect(weft__fj_left_unsynced(w, w->ctx), 0) ? slot_sync_left_slow(w, rc) : rc;
}

/* Runs the first stage for token t on `line`.  False if it stopped (t was not
 * made).  The caller keeps p->next_token. */
static inline bool make_token(weft__worker *w, struct weft__obs *o, weft_pipeline *p, uint64_t t, uint32_t line,
                              const bool slot) {
    weft__line *ln = &p->lines[line];
    weft_pipeflow pf = {p, t, line, 0, false};
    ln->token = t;
    ln->skip = false;
    int rc = call_stage(w, o, p, ln, &pf);
    if (slot) rc = slot_sync_left(w, rc);
    if (rc != 0) record_failure(p, ln, rc); /* a stop with an error still fails */
    return !pf.stop;
}

/* Runs stage `stage` (> 0) for the token on `line`, unless an earlier stage of
 * that token failed. */
static inline void later_call(weft__worker *w, struct weft__obs *o, weft_pipeline *p, uint32_t line,
                              uint32_t stage, const bool slot) {
    weft__line *ln = &p->lines[line];
    if (ln->skip) return;
    weft_pipeflow pf = {p, ln->token, line, stage, false};
    int rc = call_stage(w, o, p, ln, &pf);
    if (slot) rc = slot_sync_left(w, rc);
    if (rc != 0) record_failure(p, ln, rc);
}

/* Stop wave: slot s (stage 0) runs once its line has drained; it passes the wave
 * to the next line, and the line before the stopping one ends the pipeline.
 * Nothing may touch p after the store of `done` or a count-down that did not
 * make its slot ready: the pipeline may be gone by then. */
static weft__job *stop_wave(weft_pipeline *p, weft__slot *s) {
    weft__slot *n = next_line(p, s);
    if (n->line == p->stop_line) {
        /* Pairs with the acquire load in pipe_done: the driver sees every write
         * of the run (all lines drained into this slot through the counters). */
        atomic_store_explicit(&p->done, 1, memory_order_release);
        return NULL;
    }
    return count_down(n) ? &n->job : NULL;
}

/* A prioritised pipeline (weft_pipeline_set_priority): both successors go to
 * the scheduling layer's queue at its level, so between two stages the worker
 * takes whatever outranks them.  One the queue cannot take (out of memory)
 * goes the plain way. */
static weft__job *hand_on_prio(weft__worker *w, signed char prio, weft__slot *a, weft__slot *b) {
    if (b && weft__sched_submit(w->ex, w, &b->job, prio) != WEFT_OK) weft__push_local(w, &b->job);
    if (a && weft__sched_submit(w->ex, w, &a->job, prio) != WEFT_OK) return &a->job;
    return NULL;
}

/* Hands on a finished slot's successors: `a` is the one that runs next on this
 * worker (same line first, for locality), `b` goes to the deque.  `prio` was
 * read from the pipeline before the count-downs (it may be gone now). */
static inline weft__job *hand_on(weft__worker *w, signed char prio, weft__slot *a, weft__slot *b) {
    if (__builtin_expect(prio != 0, 0)) return hand_on_prio(w, prio, a, b);
    if (a && b) weft__push_local(w, &b->job);
    return a ? &a->job : b ? &b->job : NULL;
}

static weft__job *first_stage(weft__worker *w, weft_pipeline *p, weft__slot *s) {
    rearm(s);
    signed char prio = p->prio; /* p may be gone after the last count-down */
    if (!p->stopping) {
        /* The end of a spread phase (epoch_end) drains the lines like a stop,
         * but the run goes on: `ended` stays false. */
        uint64_t t = s->tok;
        if (must_stop(p)) {
            p->ended = true;
        } else if (t < p->epoch_end) {
            if (make_token(w, weft__obs_get(w->ex), p, t, s->line, true)) {
                weft__slot *same = p->nstages > 1 ? s + 1 : NULL;
                weft__slot *a = same && count_down(same) ? same : NULL;
                weft__slot *gen = next_line(p, s);
                gen->tok = t + 1; /* before the count-down that may ready it */
                /* With one stage the token is done, so this slot's line is free. */
                return hand_on(w, prio, a, count_down(gen) ? gen : NULL);
            }
            p->ended = true;
        }
        /* t is the first token not made: the phase's count for the driver. */
        atomic_store_explicit(&p->next_token, t, memory_order_relaxed);
        p->stopping = true;
        p->stop_line = s->line;
    }
    return stop_wave(p, s);
}

static weft__job *later_stage(weft__worker *w, weft_pipeline *p, weft__slot *s) {
    rearm(s);
    uint32_t st = s->stage;
    signed char prio = p->prio; /* p may be gone after the last count-down */
    later_call(w, weft__obs_get(w->ex), p, s->line, st, true);
    weft__slot *b = NULL;
    if (!p->stages[st].parallel) {
        weft__slot *c = next_line(p, s);
        if (count_down(c)) b = c;
    }
    /* The same token's next stage, or after the last stage the line's first
     * stage (the line is free).  This count-down must come last: it may let the
     * pipeline end. */
    weft__slot *n = st + 1 < p->nstages ? s + 1 : weft__slot_at(p, s->line, 0);
    return hand_on(w, prio, count_down(n) ? n : NULL, b);
}

/* A slot's job, and the slot jobs it hands on: the same token's next stage or
 * the next token's first runs here, not through a return to weft__execute and
 * another call (what weft__execute does between two jobs is kept:
 * weft__job_next). */
weft__job *weft__slot_run(weft__worker *w, weft__job *job) {
    /* The stages run in a context of the pipeline's run, chained on the
     * worker's as a task's is: on a worker other than the driver's (a spread
     * phase's thief) there was none, so a stage's wait for a run of its own
     * taskflow, of a graph its task is nested in, or for its run's future
     * (weft_pipeflow_run) was not refused with WEFT_EDEADLK as from the
     * driver's worker, and hung the run.  Read before the first slot: p may be
     * gone after the last count-down, and the run with it (the context is
     * only read by waits made from a stage). */
    weft_pipeline *p0 = ((weft__slot *)job)->p;
    weft_ctx cx = weft__ctx_on(w, NULL, p0->cancel, p0->nest);
    w->ctx = &cx;
    for (;;) {
        weft__slot *s = (weft__slot *)job;
        weft_pipeline *p = s->p;
        weft__job *next = s->stage == 0 ? first_stage(w, p, s) : later_stage(w, p, s);
        if (!next || next->run != weft__slot_run) {
            w->ctx = cx.outer;
            return next;
        }
        weft__job_next(w, next);
        job = next;
    }
}

/* Arms every join counter for a phase that starts at p->next_token; returns
 * that token's first-stage slot. */
static weft__slot *arm(weft_pipeline *p) {
    size_t L = p->nlines, S = p->nstages;
    size_t r = (size_t)(atomic_load_explicit(&p->next_token, memory_order_relaxed) % L);
    for (size_t l = 0; l < L; l++) {
        bool first = l == r; /* the line of the phase's first token */
        for (size_t s = 0; s < S; s++) {
            weft__slot *sl = weft__slot_at(p, l, s);
            /* Edges from tokens before the phase's first one never fire: stage 0
             * waits only for the previous line, a serial stage on the first line
             * only for its own token. */
            uint32_t init = s == 0 ? !first : sl->full - first;
            atomic_store_explicit(&sl->join, init, memory_order_relaxed);
        }
    }
    p->stopping = false;
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    weft__slot *first = weft__slot_at(p, r, 0);
    first->tok = atomic_load_explicit(&p->next_token, memory_order_relaxed);
    return first;
}

/* ---- the driving task ----------------------------------------------------------- */

static bool pipe_done(void *arg) {
    return atomic_load_explicit(&((weft_pipeline *)arg)->done, memory_order_acquire) != 0;
}

/* A spread phase: tokens up to `end` (or the stop) go round the slots, on every
 * worker that steals them; this worker starts the first and helps until the
 * lines have drained. */
static void spread_phase(weft__worker *w, weft_pipeline *p, uint64_t end) {
    p->epoch_end = end;
    weft__execute(w, &arm(p)->job);
    weft__worker_wait_until(w, pipe_done, p);
}

/* Tokens t.. up to `end` (or the stop) on this worker, through every stage,
 * with o the observation state for all of them: returns the first token not
 * made.  Inlined twice, with o NULL and not. */
static inline __attribute__((always_inline)) uint64_t inline_tokens(weft__worker *w, struct weft__obs *o,
                                                                    weft_pipeline *p, uint64_t t, uint64_t end,
                                                                    uint32_t *linep) {
    uint32_t line = *linep;
    for (; t < end; t++) {
        if (must_stop(p) || !make_token(w, o, p, t, line, false)) break;
        for (uint32_t s = 1; s < p->nstages; s++) later_call(w, o, p, line, s, false);
        line = line + 1 == p->nlines ? 0 : line + 1;
    }
    *linep = line;
    return t;
}

/* Tokens between two looks for an observer in an inline phase: a profiler
 * started meanwhile sees the stage calls from at most this many tokens on. */
#define INLINE_LOOK 64u

/* An inline phase: this worker takes tokens up to `end` (or the stop) through
 * every stage itself, one token at a time.  The same calls in the same order as
 * a spread phase would allow (serial stages in token order, one token per line),
 * with none of the hand-offs.  Whether something observes is read once per
 * INLINE_LOOK tokens, not at each stage call: three loads and a test per stage
 * call cost pipeline_sps_rerun 9 of its ~135 instructions a token. */
static void inline_phase(weft__worker *w, weft_pipeline *p, uint64_t end, uint64_t inline_before) {
    uint64_t t0 = atomic_load_explicit(&p->next_token, memory_order_relaxed), t = t0;
    uint32_t line = (uint32_t)(t % p->nlines);
    while (t < end) {
        uint64_t to = end - t > INLINE_LOOK ? t + INLINE_LOOK : end;
        struct weft__obs *o = weft__obs_get(w->ex);
        uint64_t made = o ? inline_tokens(w, o, p, t, to, &line) : inline_tokens(w, NULL, p, t, to, &line);
        bool stopped = made < to;
        t = made;
        if (stopped) break;
        /* The counts for other threads, every INLINE_LOOK tokens: an INLINE run
         * (AUTO's on a one-worker executor too) is one phase without end, and
         * weft_pipeline_num_inline_tokens read 0 until the run was over,
         * against its bound of one phase (16384 tokens, 32 per line) of lag.
         * Nothing else reads them during an inline phase. */
        atomic_store_explicit(&p->next_token, t, memory_order_relaxed);
        atomic_store_explicit(&p->inline_tokens, inline_before + (t - t0), memory_order_relaxed);
    }
    atomic_store_explicit(&p->next_token, t, memory_order_relaxed); /* the first token not made */
    p->ended = t < end;
}

/* ---- choosing between the phases ---------------------------------------------------
 *
 * Handing a token to another worker moves the slots' and the line's cache lines
 * between cores: a few hundred ns on a virtual machine, ~100 ns on bare metal.
 * Stages cheaper than that run faster on one worker than spread.  No threshold
 * is right on every machine and for every stage, so WEFT_PIPELINE_AUTO measures:
 * it runs phases of each kind, keeps the ticks per token of each (an average
 * over the recent phases), and runs the faster one, trying the other again now
 * and then (so a change in the stages' cost is seen).  The first phase spreads:
 * stages that wait for one another (see the header) get their workers at once.
 * A short spread trial flatters spreading (the other workers are still waking
 * up for its first tokens); the long phases that follow if it wins correct the
 * average within a few phases. */

enum { PHASE_SPREAD = 0, PHASE_INLINE = 1 };
#define PHASE_MIN 256u      /* tokens in a trial phase */
#define PHASE_MAX 16384u    /* tokens in a phase of the faster kind, at most */
#define RETRY_EVERY 8u      /* phases of the faster kind between two trials */

static unsigned choose_phase(weft_pipeline *p) {
    weft__pipe_tune *u = &p->tune;
    if (u->cost[PHASE_SPREAD] == 0) return PHASE_SPREAD;
    if (u->cost[PHASE_INLINE] == 0) return PHASE_INLINE;
    unsigned best = u->cost[PHASE_INLINE] < u->cost[PHASE_SPREAD] ? PHASE_INLINE : PHASE_SPREAD;
    if (++u->since_trial > RETRY_EVERY) {
        u->since_trial = 0;
        return !best;
    }
    return best;
}

/* Tokens for the next phase of kind k: short while it is on trial, growing while
 * it keeps winning. */
static uint64_t phase_tokens(weft_pipeline *p, unsigned k) {
    weft__pipe_tune *u = &p->tune;
    bool winning = u->cost[k] != 0 && u->cost[!k] != 0 && u->cost[k] <= u->cost[!k];
    uint64_t len = u->len[k] < PHASE_MIN ? PHASE_MIN : u->len[k];
    u->len[k] = winning ? (len < PHASE_MAX / 2 ? len * 2 : PHASE_MAX) : PHASE_MIN;
    /* A spread phase drains its lines at the end: many lines, longer phases. */
    return u->len[k] > 32 * p->nlines ? u->len[k] : 32 * p->nlines;
}

/* Folds a phase's ticks per token into the kind's average (1/4 new).  Phases of
 * a handful of tokens (a short run, an early stop) say little: skipped. */
static void phase_measured(weft_pipeline *p, unsigned k, uint64_t ticks, uint64_t tokens) {
    if (tokens < 16) return;
    uint64_t c = ticks / tokens + 1, *avg = &p->tune.cost[k];
    *avg = *avg ? *avg - *avg / 4 + c / 4 : c;
}

static int drive(weft_ctx *cx, void *arg) {
    weft_pipeline *p = arg;
    int idle = 0;
    if (!atomic_compare_exchange_strong_explicit(&p->running, &idle, 1, memory_order_acquire, memory_order_relaxed))
        return WEFT_EBUSY;
    if (p->simple) atomic_store_explicit(&p->next_token, 0, memory_order_relaxed);
    p->cancel = cx->stop;
    p->run = weft_ctx_run(cx);
    p->nest = cx->run;
    p->ended = false;
    atomic_store_explicit(&p->inline_tokens, 0, memory_order_relaxed);
    atomic_store_explicit(&p->failed, 0, memory_order_relaxed);
    atomic_store_explicit(&p->code, 0, memory_order_relaxed);
    /* Read once: weft_pipeline_set_scheduling is refused while this run goes. */
    weft_pipeline_scheduling how = p->scheduling;
    if (how == WEFT_PIPELINE_AUTO && cx->worker->ex->nworkers == 1) how = WEFT_PIPELINE_INLINE;
    uint64_t inline_made = 0;
    if (how != WEFT_PIPELINE_AUTO) { /* one phase, nothing to measure */
        uint64_t t0 = atomic_load_explicit(&p->next_token, memory_order_relaxed);
        if (how == WEFT_PIPELINE_SPREAD) spread_phase(cx->worker, p, UINT64_MAX);
        else inline_phase(cx->worker, p, UINT64_MAX, 0);
        if (how == WEFT_PIPELINE_INLINE) inline_made = atomic_load_explicit(&p->next_token, memory_order_relaxed) - t0;
    }
    while (!p->ended) {
        unsigned k = choose_phase(p);
        uint64_t t0 = atomic_load_explicit(&p->next_token, memory_order_relaxed);
        uint64_t end = t0 + phase_tokens(p, k);
        uint64_t c0 = weft__ticks();
        if (k == PHASE_SPREAD) spread_phase(cx->worker, p, end);
        else inline_phase(cx->worker, p, end, inline_made);
        uint64_t made = atomic_load_explicit(&p->next_token, memory_order_relaxed) - t0;
        phase_measured(p, k, weft__ticks() - c0, made);
        if (k == PHASE_INLINE) {
            inline_made += made;
            atomic_store_explicit(&p->inline_tokens, inline_made, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&p->inline_tokens, inline_made, memory_order_relaxed);
    int code = atomic_load_explicit(&p->code, memory_order_relaxed);
    /* Release: pairs with the acquire in is_running (build.c), so a caller that
     * sees the pipeline idle may change or free it. */
    atomic_store_explicit(&p->running, 0, memory_order_release);
    return code;
}

weft_task weft_pipeline_emplace(weft_taskflow *tf, weft_pipeline *p) {
    if (!tf) return weft__fail(__func__, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!p) {
        weft__tf_error(tf, WEFT_EINVAL, "weft_pipeline_emplace: the pipeline is NULL");
        return WEFT_TASK_NULL;
    }
    weft_task t = weft_emplace(tf, drive, p);
    if (weft_task_is_null(t)) return weft__add_named_oom(tf, __func__), t; /* R3: this call's name */
    weft__task_mark_single(t); /* weft_run_n_parallel refuses it */
    return t;
}
