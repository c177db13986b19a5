/* Futures: the completion record of a run.  A producer (the graph run, later async
 * tasks) embeds a weft_future at the start of its own record and frees the record
 * through free_fn when the last reference goes.  Internal. */
#ifndef WEFT_CORE_FUTURE_H
#define WEFT_CORE_FUTURE_H

#include <stdatomic.h>

#include "weft/core.h"

/* Bits of weft_future.stop.  Tasks check (stop & WEFT__STOP_MASK) before starting. */
#define WEFT__STOP_CANCEL 1
#define WEFT__STOP_FAIL 2
#define WEFT__STOP_MASK (WEFT__STOP_CANCEL | WEFT__STOP_FAIL)
#define WEFT__STOP_FINISHED 4 /* set once by the producer when it decides the status */
/* On a set's future (parts, weft_run_many) only: its members are cancelled
 * too (weft_run_many_cancel, a token attached to the set), so a member
 * submitted after it was set starts cancelled (graph/run.c).  A plain
 * weft_future_cancel of the set sets CANCEL alone and cancels no member
 * (weft/graph.h).  Outside WEFT__STOP_MASK: no task reads a set's word. */
#define WEFT__STOP_PARTS 8
/* Set from the start, and never cleared, on the word of an async task's
 * future (async/record.c): a context's stop word with this bit is the stop of
 * a record of the async layer, which a wait's deadlock test (async.c,
 * weft__async_waits_behind) may then read, as the task is running (the
 * context is on the waiting worker's chain: the task itself, a fork-join
 * child a thief took from it, a chunk of an algorithm it called).  Outside
 * WEFT__STOP_MASK: no test of the word for cancellation sees it. */
#define WEFT__STOP_ASYNC 16

#define WEFT__FAILED_NAME_MAX 128

struct weft_future {
    _Atomic uint32_t done; /* futex word: 0 pending, 1 ready */
    _Atomic uint32_t waiters; /* threads in futex_wait on done */
    _Atomic uint32_t refs; /* the caller's handle + the producer */
    _Atomic int stop; /* WEFT__STOP_* bits */
    _Atomic int fail_claimed; /* first error wins */
    /* ex->fork_generation, copied at init (in what was padding): a wait that
     * finds the run unfinished tests weft__forked from here, since ex may be
     * destroyed (by another thread) as soon as the run ends. */
    uint32_t fork_generation;
    weft_executor *ex;
    uint64_t id; /* observe/: run id (weft_future_id); 0 but for graph runs (run.c) */
    void (*free_fn)(weft_future *);
    /* What this future waits for (a run's taskflow), or NULL: waiting on it from a
     * task whose run (weft_ctx.run), or a run that one is nested in, has the
     * same owner can never end (WEFT_EDEADLK). */
    const void *owner;
    /* Further owners the run waits behind (a graph run's module bodies, at
     * every depth: graph/module.c), in memory of the future's producer;
     * compared, never read.  A task of one of them waiting on this run waits
     * for a run that cannot start the body before that task returns. */
    const void *const *bodies;
    size_t nbodies;
    /* A nested run's (a module's or a subflow's graph): the run it is nested
     * in, which cannot end before it; NULL for a run of its own. */
    const weft_future *up;
    /* A future made of others (a weft_run_many set): it cannot end before
     * them, so a wait on it that one of them could never see end cannot end
     * either.  NULL entries are skipped. */
    weft_future *const *parts;
    size_t nparts;
    /* Results.  status/task_code/failed_task are written before `done` is set
     * (release) and read only after it is seen (acquire). */
    weft_status status;
    int task_code;
    _Atomic uint64_t skipped;
    _Atomic uint64_t iterations;
    char failed_task[WEFT__FAILED_NAME_MAX];
    /* Event-loop hooks (weft_future_then / weft_future_fd, src/async/events.c):
     * then_state is WEFT__THEN_*; efd is an eventfd or -1, closed on the last
     * release. */
    _Atomic int then_state;
    void (*then_fn)(weft_future *, weft_status, void *);
    void *then_arg;
    _Atomic int efd;
};

#define WEFT__THEN_NONE 0
#define WEFT__THEN_SETTING 1 /* a registrant is writing then_fn/then_arg */
#define WEFT__THEN_SET 2
#define WEFT__THEN_FIRED 3 /* the future is ready and no callback was taken: the next registrant runs its own */
#define WEFT__THEN_USED 4  /* a callback was taken (ran, or will run): a later registrant gets WEFT_EBUSY */

/* refs = 2 when the caller keeps a handle, 1 for a detached run. */
void weft__future_init(weft_future *f, weft_executor *ex, unsigned refs, void (*free_fn)(weft_future *));
/* Records a failure if it is the first; returns true if it was.  name may be NULL. */
bool weft__future_fail(weft_future *f, int task_code, const char *name, size_t index);
/* Decides the final status from the stop bits and makes the future ready, waking
 * waiters.  Called once by the producer. */
void weft__future_complete(weft_future *f);
/* weft__future_complete with the final status given, whatever the stop bits
 * say (a group whose own cancel stops nothing: graph/run_many.c). */
void weft__future_complete_as(weft_future *f, weft_status status);
/* Drops one reference; frees at zero. */
void weft__future_release(weft_future *f);

/* True if waiting on f from the calling thread can never end: a task on the
 * stack of the worker this thread is (of any executor) must return first.
 * That is a task of f itself (an async task, or a graph task of run f: its
 * stop word is f's), or one whose run, or a run that one is nested in, has f's
 * owner (runs of one taskflow go one at a time).  Walks the worker's task
 * chain: for the slow path of a wait only.  Any thread. */
bool weft__future_waits_on_itself(const weft_future *f);
/* True if a task on the calling thread's stack belongs to a run of `owner`
 * (a taskflow) or to a run nested in one: a new run of owner would queue
 * behind it, so a wait for that run would never end (checked before
 * submitting one to wait for).  Any thread. */
bool weft__runs_under(const void *owner);

#endif
