/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Pipelines: a stream of tokens through a chain of stages.
 *
 * A pipeline has S stages and L lines.  The first stage makes tokens 0, 1, 2, ...
 * until it calls weft_pipeflow_stop; each token then passes through every stage
 * in order, on line token % L.  A line carries one token at a time, so at most L
 * tokens are in flight (backpressure).  A serial stage sees the tokens one at a
 * time and in token order; a parallel stage may run for several tokens at once.
 * The first stage is always serial.
 *
 *     static int make(weft_pipeflow *pf, void *arg) {
 *         if (weft_pipeflow_token(pf) == 1000) weft_pipeflow_stop(pf);
 *         return 0;
 *     }
 *     weft_stage stages[] = {
 *         { WEFT_STAGE_SERIAL, make, NULL, "make" },
 *         { WEFT_STAGE_PARALLEL, work, NULL, "work" },
 *         { WEFT_STAGE_SERIAL, write_out, NULL, "write" },
 *     };
 *     weft_pipeline *p = weft_pipeline_create(4, stages, 3, &err);
 *     weft_task t = weft_pipeline_emplace(tf, p);  // a task of a taskflow
 *     weft_run_and_wait(ex, tf);
 *
 * Three flavours share the weft_pipeline handle:
 *  - token pipelines (weft_pipeline_create): stages get only the token, line and
 *    stage numbers; the program keeps its data where it likes (e.g. per line);
 *  - data pipelines (weft_data_pipeline_create): each stage takes a value of a
 *    declared size from the previous stage and gives one to the next; the
 *    pipeline keeps them in per-line buffers and checks at creation that
 *    neighbouring stages agree on size and type tag;
 *  - simple pipelines (weft_simple_pipeline_create): a batch of items, each
 *    mutated in place by every stage in turn.
 *
 * A pipeline runs as a task of a taskflow (weft_pipeline_emplace), so it composes
 * with the rest of a graph and with weft_run_n / weft_run_until.  That task runs
 * the pipeline on the executor's workers and ends when the last token has left
 * the last stage.  Pipelines are created and destroyed by one thread; the stage
 * functions run on the executor's workers.
 */
#ifndef WEFT_PIPELINE_H
#define WEFT_PIPELINE_H

#include "weft/graph.h"

WEFT_EXTERN_C_BEGIN

/* A pipeline of any of the three flavours above; run as a taskflow task
 * (weft_pipeline_emplace).  Opaque; freed by weft_pipeline_destroy. */
typedef struct weft_pipeline weft_pipeline;

/* What a stage function receives: which token, line and stage it runs for.
 * Valid only during the call. */
typedef struct weft_pipeflow weft_pipeflow;

/* How a stage takes tokens.  The first stage must be serial. */
typedef enum weft_stage_kind {
    WEFT_STAGE_SERIAL = 0,   /* one token at a time, in token order */
    WEFT_STAGE_PARALLEL = 1, /* several tokens at once, in any order */
} weft_stage_kind;

/* ---- the pipeflow handle ------------------------------------------------------ */

/* The token's number: 0, 1, 2, ... in the order the first stage made them,
 * counted across runs until weft_pipeline_reset.  0 for NULL. */
WEFT_API uint64_t weft_pipeflow_token(const weft_pipeflow *pf);
/* The line carrying the token (token % lines).  0 for NULL. */
WEFT_API size_t weft_pipeflow_line(const weft_pipeflow *pf);
/* The stage being run (0-based; for a simple pipeline, the index of the stage
 * given at creation).  0 for NULL. */
WEFT_API size_t weft_pipeflow_stage(const weft_pipeflow *pf);
/* Called by the first stage: this token is not a token after all; no further
 * token is made, the tokens in flight finish, and the pipeline ends.  The
 * current token is not counted and reaches no other stage.  WEFT_OK, or
 * WEFT_EINVAL (NULL, or called from another stage than the first: nothing
 * happens). */
WEFT_API weft_status weft_pipeflow_stop(weft_pipeflow *pf);
/* The run the pipeline's task belongs to, as weft_ctx_run gives it for that
 * task: the future weft_run (or weft_run_n, ...) returned, also when the
 * pipeline is in a module's or subflow's graph nested in that run.  A stage
 * may run on any worker, where weft_current_ctx() is not always the
 * pipeline's task (it may be a context of the pipeline's run whose
 * weft_ctx_task is the null task and weft_ctx_run NULL); this says which run
 * the token is part of (weft.hpp keeps a stage's exception for that run).
 * On every worker that context belongs to the run: weft_ctx_cancelled sees
 * the run's cancellation, a stage may spawn and sync through it (weft/
 * forkjoin.h; sync what it spawns before it returns), and a wait from a stage
 * for the run, for a run of the pipeline's taskflow or of a graph its task
 * is nested in is refused with WEFT_EDEADLK, as from the pipeline's task.
 * NULL for NULL.  Only from inside a stage. */
WEFT_API const weft_future *weft_pipeflow_run(const weft_pipeflow *pf);

/* ---- token pipelines -------------------------------------------------------- */

/* A stage's work.  Return 0 to go on; any other value fails the pipeline: no
 * new token is made, this token skips its remaining stages, the tokens already
 * in flight finish, and the pipeline's task fails with that value (the run
 * reports WEFT_ETASK). */
typedef int (*weft_stage_fn)(weft_pipeflow *pf, void *arg);

/* One stage of a token pipeline (weft_pipeline_create). */
typedef struct weft_stage {
    weft_stage_kind kind; /* serial (0, the default) or parallel */
    weft_stage_fn fn;  /* required */
    void *arg;         /* passed to fn */
    const char *name;  /* optional, for error messages (not kept) */
} weft_stage;

/* Creates a pipeline of `nstages` stages (copied) and `lines` lines.  Returns
 * NULL with *err (if not NULL) = WEFT_EINVAL (stages NULL, nstages or lines 0 or
 * above 65536, a NULL fn, a bad kind, a first stage that is not serial) or
 * WEFT_ENOMEM; weft_last_error_message (weft/core.h) then says what was wrong.
 * Any thread. */
WEFT_API WEFT_NODISCARD weft_pipeline *weft_pipeline_create(size_t lines, const weft_stage *stages,
                                                            size_t nstages, weft_status *err);

/* ---- data pipelines --------------------------------------------------------- */

/* A data stage's work: read the value the previous stage gave (`in`, in_size
 * bytes; NULL for the first stage) and write the one for the next (`out`,
 * out_size bytes; NULL for the last stage; so a one-stage pipeline gets NULL
 * for both).  Between stages a value of size 0 is passed in a buffer that
 * holds nothing (NULL only when every stage's sizes are 0): a stage must not
 * read or write past in_size / out_size bytes.  Both buffers belong to the
 * token's line and are aligned for any type.  Return values as
 * weft_stage_fn. */
typedef int (*weft_data_stage_fn)(weft_pipeflow *pf, void *in, void *out, void *arg);

/* One stage of a data pipeline (weft_data_pipeline_create). */
typedef struct weft_data_stage {
    weft_stage_kind kind;  /* serial (0, the default) or parallel */
    weft_data_stage_fn fn; /* required */
    void *arg;             /* passed to fn */
    const char *name;      /* optional, for error messages (not kept) */
    size_t in_size;        /* bytes taken; must be 0 for the first stage */
    size_t out_size;       /* bytes given; must be 0 for the last stage */
    /* Optional type tags, e.g. "double" (compared with strcmp, not kept): when a
     * stage and the next both name the type that passes between them, the names
     * must be equal.  The WEFT_DATA_IN/OUT macros fill size and tag together. */
    const char *in_type;
    const char *out_type;  /* the tag of what it gives (as in_type); NULL: none */
} weft_data_stage;

/* Designated-initializer helpers: .WEFT_DATA_OUT(double) expands to
 * out_size = sizeof(double), out_type = "double". */
#define WEFT_DATA_IN(T) in_size = sizeof(T), .in_type = #T
#define WEFT_DATA_OUT(T) out_size = sizeof(T), .out_type = #T

/* Creates a data pipeline.  Besides the checks of weft_pipeline_create, each
 * stage's out_size must equal the next stage's in_size and their type tags must
 * match where both are given; the first stage takes nothing and the last gives
 * nothing.  A mismatch is WEFT_EINVAL with a message naming both stages (see
 * weft_last_error_message), so it never reaches run time.  Any thread. */
WEFT_API WEFT_NODISCARD weft_pipeline *weft_data_pipeline_create(size_t lines,
                                                                 const weft_data_stage *stages,
                                                                 size_t nstages, weft_status *err);

/* ---- simple pipelines ------------------------------------------------------- */

/* Mutates one item in place; `index` is its position in the batch. */
typedef int (*weft_item_fn)(void *item, size_t index, void *arg);

/* One stage of a simple pipeline (weft_simple_pipeline_create). */
typedef struct weft_item_stage {
    weft_stage_kind kind; /* serial (0, the default) or parallel */
    weft_item_fn fn;  /* required */
    void *arg;        /* passed to fn */
    const char *name; /* optional, for error messages (not kept) */
} weft_item_stage;

/* Creates a pipeline that passes each of `count` items of `item_size` bytes at
 * `items` (not copied: it must stay valid while the pipeline runs) through the
 * stages in order.  Every run processes the whole batch, from index 0 (token
 * numbers restart at 0 each run); any stage, the first included, may be
 * parallel.  count may be 0 (a run does nothing).  Errors as
 * weft_pipeline_create, plus WEFT_EINVAL for items NULL with count > 0,
 * item_size 0, or count items of item_size bytes from `items` that would run
 * past the end of the address space.  Any thread. */
WEFT_API WEFT_NODISCARD weft_pipeline *weft_simple_pipeline_create(size_t lines, void *items, size_t count,
                                                                   size_t item_size,
                                                                   const weft_item_stage *stages,
                                                                   size_t nstages, weft_status *err);

/* Points a simple pipeline at another batch for its next runs.  WEFT_EINVAL
 * (NULL p, not a simple pipeline, items NULL with count > 0, or a batch past
 * the end of the address space as in weft_simple_pipeline_create), WEFT_EBUSY
 * (it is running). */
WEFT_API weft_status weft_simple_pipeline_set_items(weft_pipeline *p, void *items, size_t count);

/* ---- all pipelines ---------------------------------------------------------- */

/* Adds a task to `tf` that runs the pipeline once from its current token number
 * and finishes when the pipeline has stopped and every token has left the last
 * stage.  While waiting, the task's worker runs other work (never blocks).  The
 * pipeline must outlive every run of tf and must not run twice at once (the
 * second task fails with task code WEFT_EBUSY).  Returns the null task on failure
 * (see weft_taskflow_last_error): WEFT_EINVAL (NULL), WEFT_ENOMEM, WEFT_EBUSY (tf
 * is running).  Not thread-safe for the same tf (like weft_emplace). */
WEFT_API weft_task weft_pipeline_emplace(weft_taskflow *tf, weft_pipeline *p);

/* Token numbers restart at 0 on the next run.  WEFT_EINVAL, WEFT_EBUSY (it is
 * running). */
WEFT_API weft_status weft_pipeline_reset(weft_pipeline *p);

/* Tokens made so far (since creation or the last reset); 0 for NULL.  Exact
 * when the pipeline is not running; while it runs, the count is brought up to
 * date as each phase of the run ends (weft_pipeline_set_scheduling), so it may
 * lag behind the tokens being made.  Any thread. */
WEFT_API uint64_t weft_pipeline_num_tokens(const weft_pipeline *p);
/* The lines and the stages given at creation (a simple pipeline's own first
 * stage is not counted); 0 for NULL.  Any thread. */
WEFT_API size_t weft_pipeline_num_lines(const weft_pipeline *p);
WEFT_API size_t weft_pipeline_num_stages(const weft_pipeline *p);

/* How a run shares its tokens among the workers.
 *  - WEFT_PIPELINE_AUTO (the default): the run alternates between the two ways
 *    below in phases of hundreds to thousands of tokens (at least 32 per line,
 *    so a spread phase's drain at its end stays rare), measures the time per
 *    token of each, and keeps to the faster one (trying the other again now and
 *    then, so a change in the stages' cost is followed).  Stages much cheaper
 *    than moving a token to another core (a few hundred ns on a virtual machine)
 *    end up inline; stages with real work spread.  The first phase spreads.
 *  - WEFT_PIPELINE_SPREAD: tokens go from stage to stage as jobs that idle
 *    workers steal, so parallel stages run for several tokens at once and
 *    serial stages overlap with one another.
 *    On a 1-worker executor AUTO runs inline throughout.
 *  - WEFT_PIPELINE_INLINE: the worker that runs the pipeline's task takes each
 *    token through every stage itself, one token at a time; other workers stay
 *    free for other tasks.
 * The guarantees are the same either way: serial stages see tokens in order,
 * one at a time; at most `lines` tokens are in flight; a token is on line
 * token % lines.  A stage must not wait for another token's stage (inline, that
 * waits forever; spread, it does on a 1-worker executor too).
 * What AUTO has measured is kept from run to run. */
typedef enum weft_pipeline_scheduling {
    WEFT_PIPELINE_AUTO = 0,   /* the default: measures both, keeps the faster */
    WEFT_PIPELINE_SPREAD = 1, /* tokens move between stages as stealable jobs */
    WEFT_PIPELINE_INLINE = 2, /* one worker takes each token through every stage */
} weft_pipeline_scheduling;

/* Sets how the next runs share their tokens (above).  WEFT_OK, WEFT_EINVAL (NULL
 * p, a value not in the enum: nothing changes), WEFT_EBUSY (a run is going).
 * Like weft_pipeline_reset, call it only from the thread that owns the pipeline
 * and while no run of it can start: EBUSY reports a run already going, it does
 * not lock one out. */
WEFT_API weft_status weft_pipeline_set_scheduling(weft_pipeline *p, weft_pipeline_scheduling how);

/* Sets the priority level (weft/sched.h) at which the next runs queue their
 * stage jobs.  In a spread phase every slot a finished stage readies (the same
 * token's next stage, the next token's turn at a serial stage) goes to the
 * executor's priority queue at that level instead of the worker's deque, so
 * an idle worker takes a CRITICAL pipeline's stages before queued HIGH,
 * NORMAL and LOW work, and a LOW pipeline's only when nothing else is ready;
 * between two stages a worker takes whatever outranks them.  Inline phases
 * (WEFT_PIPELINE_INLINE, and AUTO's inline phases, which a one-worker executor
 * always runs) queue nothing, so the level changes nothing there: pick
 * WEFT_PIPELINE_SPREAD to have it apply throughout.  The pipeline's own task
 * takes a priority as any graph task (weft_task_set_priority).  NORMAL (the
 * default) costs nothing; another level costs a locked queue operation per
 * stage per token.  WEFT_OK, WEFT_EINVAL (NULL p, a value outside LOW..CRITICAL:
 * nothing changes), WEFT_EBUSY (a run is going; as weft_pipeline_set_scheduling,
 * call it from the owning thread while no run can start). */
WEFT_API weft_status weft_pipeline_set_priority(weft_pipeline *p, weft_priority priority);
/* The level weft_pipeline_set_priority set (NORMAL for NULL).  Any thread. */
WEFT_API weft_priority weft_pipeline_priority(const weft_pipeline *p);

/* How many tokens of the current run (or, once it is over, the last run) went
 * through inline phases; the run's other tokens were spread.  For seeing what
 * WEFT_PIPELINE_AUTO chose.  Counted since the run began, not since the last
 * reset (unlike weft_pipeline_num_tokens), and updated as each phase ends and
 * every 64 tokens of an inline phase (an INLINE run, or an AUTO run on a
 * one-worker executor, is one phase as long as the run), so during a run it
 * lags by up to one phase (16384 tokens, or 32 per line where that is more:
 * 2^21 with 65536 lines).  Any thread, also while the pipeline runs.  0 for
 * NULL. */
WEFT_API uint64_t weft_pipeline_num_inline_tokens(const weft_pipeline *p);

/* Frees the pipeline.  WEFT_EBUSY (and frees nothing) while it runs; NULL gives
 * WEFT_OK.  Tasks that run it must not run again afterwards. */
WEFT_API weft_status weft_pipeline_destroy(weft_pipeline *p);

/* Deprecated: use weft_last_error_message() (weft/core.h), which a failed
 * creation sets.  If the calling thread's most recent pipeline creation failed,
 * that message, e.g. "stage 1 'parse' gives 8 bytes ('double') but stage 2
 * 'sum' takes 4 bytes ('float')"; "" after a successful one.  Never NULL; valid
 * until the thread's next failure. */
WEFT_API const char *weft_pipeline_error_message(void);

WEFT_EXTERN_C_END
#endif
