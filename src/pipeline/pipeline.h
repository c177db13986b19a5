/* Pipeline internals.  Internal.
 *
 * A pipeline of S stages and L lines is a ring of L x S slots, one per (line,
 * stage), each a weft__job with a join counter, on a cache line of its own.  Slot
 * (l, s) runs stage s for the token on line l once its predecessors are done:
 *   - (l, s-1), the same token's previous stage (s > 0);
 *   - (l-1, s), the previous token in this stage, when stage s is serial (line
 *     l-1 carries the previous token; lines wrap around);
 *   - for s == 0, (l, S-1): the line's previous token has left the last stage,
 *     so the line is free (the backpressure edge).
 * A slot that finishes counts down its successors and hands the first one that
 * becomes ready straight back to its worker (job continuation); others are pushed
 * to the worker's deque.  Stopping sends a "stop wave" round the first stage's
 * slots: each forwards it once its line has drained, and the slot before the
 * stopping line ends the pipeline.  That is a "spread" phase of a run; in an
 * "inline" phase the driving task's worker takes tokens through every stage
 * itself, and WEFT_PIPELINE_AUTO picks between them by measuring (run.c).
 * docs/design.md ("Pipelines") has the proof
 * sketch.
 */
#ifndef WEFT_PIPELINE_PIPELINE_H
#define WEFT_PIPELINE_PIPELINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/executor.h"
#include "core/job.h"
#include "platform/platform.h"
#include "weft/pipeline.h"

#define WEFT__PIPE_MAX 65536

typedef enum weft__call {
    WEFT__CALL_TOKEN, /* weft_stage_fn */
    WEFT__CALL_DATA,  /* weft_data_stage_fn with the line's buffers */
    WEFT__CALL_ITEM,  /* weft_item_fn on items[token] */
    WEFT__CALL_GEN,   /* a simple pipeline's own first stage: stops at count */
} weft__call;

typedef struct weft__stage {
    uint8_t parallel;
    uint8_t call; /* weft__call */
    union {
        weft_stage_fn token;
        weft_data_stage_fn data;
        weft_item_fn item;
    } fn;
    void *arg;
} weft__stage;

/* What WEFT_PIPELINE_AUTO has measured (run.c): per phase kind (spread, inline)
 * the average ticks per token (0: not measured yet) and the next phase's length;
 * phases of the faster kind since the slower one was last tried.  Touched only
 * by the driving task, one run at a time. */
typedef struct weft__pipe_tune {
    uint64_t cost[2];
    uint64_t len[2];
    unsigned since_trial;
} weft__pipe_tune;

typedef struct weft__slot {
    _Alignas(WEFT__CACHE_LINE) weft__job job; /* must stay first */
    _Atomic uint32_t join; /* predecessors still to finish for the next token */
    uint32_t full;         /* join's value when re-armed: 1 or 2 */
    uint32_t line, stage;
    weft_pipeline *p;
    /* First stage only, in a spread phase: the token this slot makes next.  The
     * slot before it writes it before the count-down that readies it, so the
     * number travels on the line the hand-off moves anyway (p->next_token is
     * brought up to date when the phase ends). */
    uint64_t tok;
} weft__slot;

/* What one line carries: its current token and, for data pipelines, two buffers
 * (stage s reads buf[(s + 1) & 1] and writes buf[s & 1]). */
typedef struct weft__line {
    _Alignas(WEFT__CACHE_LINE) uint64_t token;
    bool skip; /* a stage failed: the token skips its remaining stages */
    unsigned char *buf[2];
} weft__line;

struct weft_pipeflow {
    weft_pipeline *p;
    uint64_t token;
    uint32_t line, stage;
    bool stop;
};

struct weft_pipeline {
    size_t nlines, nstages;
    weft__stage *stages;
    weft__slot *slots; /* line-major: slot (l, s) is slots[l * nstages + s] */
    weft__line *lines;
    unsigned char *bufs; /* 2 * nlines buffers of buf_size bytes */
    size_t buf_size;
    /* Simple pipelines: the batch.  Their stage 0 is our generator, so the
     * user's index of internal stage s is s - simple. */
    unsigned char *items;
    size_t count, item_size;
    bool simple;
    const _Atomic int *cancel; /* the graph run's stop bits */
    const weft_future *run;    /* the driving task's run (weft_ctx_run), for weft_pipeflow_run */
    /* The driving task's own run (its context's `run`: a module's or subflow's
     * nested run, whose `up` chain reaches the top one), for the context a slot
     * runs in on another worker (run.c, weft__slot_run). */
    const weft_future *nest;
    weft_pipeline_scheduling scheduling;
    /* weft_pipeline_set_priority: the level (a weft_priority) at which a spread
     * phase queues the slots it readies; 0 hands them on as jobs of the worker.
     * A slot reads it when it starts (p may be gone after its last count-down). */
    signed char prio;
    weft__pipe_tune tune;
    /* Tokens of the current or last run taken inline: written by the driver only,
     * atomic (relaxed) so that weft_pipeline_num_inline_tokens may read it. */
    _Atomic uint64_t inline_tokens;
    /* Run state.  next_token and the stop fields are touched only by the
     * first-stage slots, which run one after another (each is ordered after the
     * previous by a join counter), and by the driver between phases, so they
     * need no atomics.  On a line of their own, as they are written while the
     * fields above are read by every slot on every worker.  A spread phase
     * passes the next token from slot to slot (weft__slot.tok) and stores
     * next_token once, when it stops making tokens: a line written per token
     * would move between the workers with every token. */
    _Alignas(WEFT__CACHE_LINE) _Atomic uint64_t next_token; /* atomic for num_tokens */
    uint64_t epoch_end; /* a spread phase makes no token from this one on */
    bool stopping;
    bool ended;         /* stopped, failed or cancelled: no phase follows */
    uint32_t stop_line;
    _Alignas(WEFT__CACHE_LINE) _Atomic int running;
    _Atomic int failed;  /* a stage returned non-zero: make no more tokens */
    _Atomic int code;    /* the first non-zero stage result */
    _Atomic uint32_t done; /* set once when the pipeline has ended */
    _Alignas(WEFT__CACHE_LINE) char pad_;
};

static inline weft__slot *weft__slot_at(weft_pipeline *p, size_t line, size_t stage) {
    return &p->slots[line * p->nstages + stage];
}

/* The job function of every slot (run.c). */
weft__job *weft__slot_run(weft__worker *w, weft__job *job);

#endif
