/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Control flow in task graphs, with Taskflow's semantics: condition tasks (branches
 * and loops), subflows (graphs built while a task runs), modules (a taskflow run
 * as one task of another), and composition (reusable sub-graphs with named entry
 * and exit points, shared work, and factories driven by typed parameters).  The
 * rules are spelled out in docs/guide-control-flow.md; the short form:
 *
 *  - Edges out of a condition task are WEAK: they do not count toward the
 *    successor's join counter.  A condition task returns an index i; the
 *    successor added i-th (weft_precede order) runs at once, whatever its strong
 *    predecessors are doing; the others do not run.
 *  - A task whose predecessors are all weak is not a source: it runs only when a
 *    condition task picks it.  A task with strong and weak predecessors runs when
 *    its strong predecessors are done OR when a condition picks it; mixing is
 *    meant for loops (entered once through the strong edge, then repeated through
 *    the weak one), and a condition must not pick a task while that task's strong
 *    predecessors are still counting down.
 *  - Cycles that pass through a weak edge are loops and are allowed; a cycle of
 *    strong edges only fails with WEFT_ECYCLE, naming a task on it.
 *
 * Building these tasks follows the rules of weft_emplace (single-threaded per
 * taskflow, WEFT_EBUSY while the taskflow runs, the status of each call in
 * weft_taskflow_last_error, the detail of a failure in weft_last_error_message;
 * docs/errors.md).
 */
#ifndef WEFT_FLOW_H
#define WEFT_FLOW_H

#include "weft/graph.h"

WEFT_EXTERN_C_BEGIN

/* What a task does when it runs. */
typedef enum weft_task_kind {
    WEFT_TASK_STATIC, /* weft_emplace / weft_placeholder / weft_emplace_work */
    WEFT_TASK_CONDITION,       /* weft_emplace_condition: returns the successor to run */
    WEFT_TASK_MULTI_CONDITION, /* weft_emplace_multi_condition: picks successors to run */
    WEFT_TASK_SUBFLOW,         /* weft_emplace_subflow: builds a graph that runs after it */
    WEFT_TASK_MODULE           /* weft_emplace_module: runs another taskflow once */
} weft_task_kind;

/* The kind of a task (WEFT_TASK_STATIC for the null task). */
WEFT_API weft_task_kind weft_task_get_kind(weft_task t);
/* Number of weak edges into the task (edges from condition tasks); 0 for the
 * null task.  weft_task_num_dependents counts strong and weak edges. */
WEFT_API size_t weft_task_num_weak_dependents(weft_task t);

/* ---- condition tasks -------------------------------------------------------- */

/* A condition: returns the index of the successor to run.  An index >= the
 * number of successors runs none (that branch of the iteration ends there); a
 * negative value fails the run like a task returning non-zero (WEFT_ETASK with
 * that value as task_code). */
typedef int (*weft_cond_fn)(weft_ctx *ctx, void *arg);

/* Adds a condition task.  Errors as weft_emplace (fn must not be NULL). */
WEFT_API weft_task weft_emplace_condition(weft_taskflow *tf, weft_cond_fn fn, void *arg);

/* The set of successors a multi-condition task picks; valid only during the
 * call that received it. */
typedef struct weft_branches weft_branches;

/* A multi-condition: calls weft_branches_add for each successor to run, and
 * returns 0, or non-zero to fail the run (the picked successors are then
 * skipped).  The picked successors start after it returns. */
typedef int (*weft_multi_cond_fn)(weft_ctx *ctx, void *arg, weft_branches *out);

/* Adds a multi-condition task.  Errors as weft_emplace. */
WEFT_API weft_task weft_emplace_multi_condition(weft_taskflow *tf, weft_multi_cond_fn fn, void *arg);

/* Picks successor `index` (below the number of successors, in precede
 * order).  Picking one twice is the same as once.  WEFT_EINVAL (NULL, or
 * index out of range: nothing picked), WEFT_ENOMEM (only for an index of 64
 * or more, the first such pick of a call: those are kept in memory allocated
 * then).  Only from the multi-condition's own call. */
WEFT_API weft_status weft_branches_add(weft_branches *out, unsigned index);

/* ---- subflows --------------------------------------------------------------- */

/* A subflow's handle, valid only during the call that received it. */
typedef struct weft_subflow weft_subflow;

/* The work of a subflow task: builds a graph in weft_subflow_graph(sf) (any task
 * kinds, nested subflows included) that runs after it returns.  Return 0, or
 * non-zero to fail the run (the graph built so far then does not run). */
typedef int (*weft_subflow_fn)(weft_ctx *ctx, weft_subflow *sf, void *arg);

/* Adds a subflow task.  By default its graph JOINS its task: the task's
 * successors start only once the whole subflow graph has finished.  Its graph is
 * kept and cleared at the task's next execution, so re-running reuses its memory
 * (no allocation per child once sizes are reached); after a run it can be drawn
 * with weft_taskflow_dump_dot.  Errors as weft_emplace. */
WEFT_API weft_task weft_emplace_subflow(weft_taskflow *tf, weft_subflow_fn fn, void *arg);

/* The graph to build.  Use the weft_emplace / weft_precede family on it; do not
 * clear it; weft_run*, weft_taskflow_destroy and weft_emplace_module refuse it
 * with WEFT_EINVAL.  NULL for NULL. */
WEFT_API weft_taskflow *weft_subflow_graph(weft_subflow *sf);

/* Detaches the subflow: the task's successors start as soon as the task returns,
 * and the subflow's graph joins the end of the enclosing run iteration (of the
 * top-level run, or of the module run it is part of): the run's future is ready
 * only after it has finished.  The graph is the task's one graph: a detached
 * subflow task that runs again in the same iteration (a condition loop) while
 * its previous graph still runs fails the run with task_code WEFT_EBUSY
 * (docs/guide-control-flow.md).  Detaching twice is the same as once.
 * WEFT_EINVAL (nothing changed) for NULL, after weft_subflow_join (the graph
 * has run: a joined subflow cannot be detached, as in Taskflow), or outside
 * the subflow's function. */
WEFT_API weft_status weft_subflow_detach(weft_subflow *sf);


/* Runs the graph built so far now, and returns when it has finished (Taskflow's
 * join inside the subflow).  The worker runs other tasks meanwhile, so this never
 * blocks it.  Afterwards the graph is sealed: adding to it fails with WEFT_EBUSY,
 * and the task's successors start when the function returns.  A failure inside
 * the graph fails the run (check weft_ctx_cancelled).  From the subflow's
 * function, or from a fork-join child it spawned (on whichever worker runs the
 * child, which then runs the graph); one thread at a time, as for building.
 * WEFT_OK (also when called twice), WEFT_EINVAL (NULL, outside the subflow's
 * function, detached, or on a thread that is no worker of the run's executor),
 * WEFT_EDEADLK (from a task of this subflow's own graph while the subflow
 * joins it: the graph cannot wait for itself; nothing changed),
 * WEFT_ECYCLE (the graph has a strong cycle; the run fails), WEFT_ENOMEM (no
 * memory to start the graph: the run fails with task_code WEFT_ENOMEM). */
WEFT_API weft_status weft_subflow_join(weft_subflow *sf);

/* True if weft_subflow_detach succeeded during this execution of the
 * subflow's function (false for NULL, and for a joined subflow). */
WEFT_API bool weft_subflow_detached(const weft_subflow *sf);

/* ---- modules ---------------------------------------------------------------- */

/* Adds a module task (Taskflow's composed_of): when it runs, it runs `body` once
 * as part of the same run (one iteration, sharing the run's cancellation and
 * failure), and its successors start when body has finished.  `body` must
 * outlive `tf`'s runs and cannot be changed while a run uses it (WEFT_EBUSY):
 * a run of tf uses body, and the bodies of body's modules, from its submission
 * until it ends, also before its module starts; a module emplaced into a
 * subflow's graph (tf = weft_subflow_graph) uses them from the emplace until
 * that graph's run ends (or, if the graph does not run, the subflow's task
 * ends).
 * One taskflow may be the body of many modules and graphs: runs of one taskflow
 * never overlap, so a module whose body is already running (another module, or
 * a weft_run of it) waits in the body's queue and runs after it, without blocking
 * a worker; the body's run executes on the executor of the run its module is
 * part of, also when the run ahead of it was on another executor.  A body that contains (directly or through other modules) the module
 * running it would wait for itself: that fails the run with task_code
 * WEFT_EDEADLK; a body with a strong cycle fails it with task_code WEFT_ECYCLE.
 * Errors as weft_emplace; WEFT_EINVAL for body == NULL, body == tf or a
 * subflow's graph.
 * Depth: a run's submission and its end walk every body below tf (to hold
 * and release them), by recursion along each chain of modules, comparing
 * each body with the chain above it: nesting of depth D costs O(D^2) per run
 * and some 300 bytes of the walking thread's stack per level (the submitter's
 * and a worker's).  A thousand levels cost milliseconds per run; ten
 * thousand about a second per run, and they overflow a 256 KiB worker stack
 * (weft_executor_config.stack_size); some 25,000 overflow the default 8 MiB.
 * Keep module chains shallow (compose wide, or use weft_composition_instantiate
 * to copy a graph in instead of nesting it). */
WEFT_API weft_task weft_emplace_module(weft_taskflow *tf, weft_taskflow *body);

/* The body of a module task (NULL for other tasks). */
WEFT_API weft_taskflow *weft_task_module(weft_task t);

/* ---- shared work ------------------------------------------------------------ */

/* A reference-counted unit of work: a function and a state that several tasks
 * (in one or many taskflows) share.  The creator holds one reference; each task
 * made by weft_emplace_work holds one more until the task is cleared or its
 * taskflow destroyed; the state is dropped (drop(state), if drop is not NULL)
 * with the last reference.  Tasks sharing work may run at the same time: the
 * state must allow it. */
typedef struct weft_work weft_work;

/* Creates work.  NULL with *err = WEFT_EINVAL (fn NULL) or WEFT_ENOMEM. */
WEFT_API WEFT_NODISCARD weft_work *weft_work_create(weft_task_fn fn, void *state, void (*drop)(void *state),
                                                    weft_status *err);
/* Takes one more reference; returns w.  Any thread. */
WEFT_API weft_work *weft_work_retain(weft_work *w);
/* Drops one reference (NULL is a no-op).  Any thread. */
WEFT_API void weft_work_release(weft_work *w);
/* Current number of references (0 for NULL); for tests and diagnostics. */
WEFT_API size_t weft_work_refs(const weft_work *w);
/* Adds a plain task running w's function on w's state; the task holds a
 * reference.  Errors as weft_emplace (WEFT_EINVAL for w NULL). */
WEFT_API weft_task weft_emplace_work(weft_taskflow *tf, weft_work *w);
/* Gives plain task t (made by weft_emplace, weft_placeholder or
 * weft_emplace_work) w's function and state, as weft_emplace_work does: t takes
 * a reference on w and then drops the one it held on earlier shared work (whose
 * drop runs if that was the last).  So a layer that allocates a task's state
 * hands it to the taskflow, which drops it once: when t's work is replaced
 * again (by this call: weft_task_set_work refuses a task holding shared work),
 * t is erased, or its taskflow cleared or destroyed (weft.hpp's task::work
 * does so).  Builder rules (weft_taskflow_last_error): WEFT_EINVAL (null or
 * erased task, w NULL, a task of another kind or a GPU task), WEFT_EBUSY while
 * the taskflow runs; on an error nothing changes and w keeps the references it
 * had. */
WEFT_API weft_status weft_task_set_shared_work(weft_task t, weft_work *w);

/* ---- compositions ----------------------------------------------------------- */

/* A reusable sub-graph: a taskflow built once, with named entry and exit tasks,
 * copied into other taskflows (each copy is independent; shared work stays
 * shared, modules keep their body).  Not thread-safe. */
typedef struct weft_composition weft_composition;

/* Creates an empty composition (name copied, may be NULL).  NULL with *err =
 * WEFT_ENOMEM. */
WEFT_API WEFT_NODISCARD weft_composition *weft_composition_create(const char *name, weft_status *err);
/* Frees it and its graph (copies already made are unaffected).  Returns
 * WEFT_OK (also for NULL), or WEFT_EBUSY, freeing nothing (c stays whole and
 * usable), while a run uses its graph: a run of it, or of a taskflow with a
 * module whose body it is (weft_emplace_module), from the run's submission to
 * its end, or a module built in a running subflow's graph, from its emplace
 * to that graph's end (weft_emplace_module says when); wait for that run,
 * then destroy c.  (It returned nothing
 * before, and then freed c and leaked the graph.) */
WEFT_API weft_status weft_composition_destroy(weft_composition *c);
/* The graph to build the composition in (owned by c: weft_taskflow_destroy
 * refuses it with WEFT_EINVAL); NULL for NULL.  weft_taskflow_clear on it
 * keeps the entries and exits, which name tasks by index: in copies made
 * after the graph is rebuilt each resolves to the task that took its index
 * (the null task if there is none), so set them again after a rebuild. */
WEFT_API weft_taskflow *weft_composition_graph(weft_composition *c);
/* Names a task of c's graph as an entry (a place other graphs link into) or an
 * exit (a place they link out of).  Names are unique per kind; setting one
 * again replaces it for copies made from then on (each setting is kept, a few
 * bytes, so that earlier copies keep resolving as before).  Erasing the task
 * later leaves the name on no task: copies made after the erase resolve it
 * to the null task (weft_task_erase keeps that slot of c's graph free).  WEFT_EINVAL (NULL,
 * or t not in c's graph), WEFT_ENOMEM (nothing changed). */
WEFT_API weft_status weft_composition_set_entry(weft_composition *c, const char *name, weft_task t);
WEFT_API weft_status weft_composition_set_exit(weft_composition *c, const char *name, weft_task t);

/* A copy of a composition inside a taskflow: a small value, valid while that
 * taskflow is not cleared or destroyed and the composition lives.  It resolves
 * entries and exits as they were when the copy was made: changing the
 * composition afterwards (adding tasks, moving or adding an entry) affects
 * later copies only.  A task of the copy erased from that taskflow leaves its
 * names on no task (the null task): its slot is not reused (weft_task_erase).
 * The fields are private. */
typedef struct weft_instance {
    const weft_composition *comp_; /* private: the composition copied */
    weft_taskflow *tf_;            /* private: the taskflow the copy is in */
    size_t base_;  /* index in tf_ of the copy of the composition's first task */
    size_t size_;  /* tasks in the copy */
    size_t marks_; /* entry/exit records of comp_ at instantiation */
} weft_instance;

/* Copies every task and edge of c's graph into dst (not c's own graph) (names get the prefix
 * "<prefix>/" if prefix is not NULL) and fills *out; link the copy to dst's
 * other tasks through weft_instance_entry / weft_instance_exit.  On failure
 * (WEFT_EINVAL, WEFT_ENOMEM, WEFT_EBUSY) *out is untouched and dst may hold part
 * of the copy: clear dst (weft_taskflow_clear) before running it. */
WEFT_API WEFT_NODISCARD weft_status weft_composition_instantiate(const weft_composition *c, weft_taskflow *dst,
                                                                 const char *prefix, weft_instance *out);
/* The copy of the entry / exit named `name` in this instance, as the
 * composition named it when the instance was made (the null task if there was
 * none, or for NULL).  Not thread-safe against changes to the composition. */
WEFT_API weft_task weft_instance_entry(const weft_instance *inst, const char *name);
WEFT_API weft_task weft_instance_exit(const weft_instance *inst, const char *name);

/* ---- typed parameters and composition factories ----------------------------- */

/* The type of a parameter (weft_factory_require): which weft_params_set_* and
 * _get_* pair it is read and written with. */
typedef enum weft_param_type {
    WEFT_PARAM_INT,    /* an int64_t (weft_params_get_int) */
    WEFT_PARAM_FLOAT,  /* a double (weft_params_get_float) */
    WEFT_PARAM_STRING, /* a NUL-terminated string, copied by the set */
    WEFT_PARAM_BOOL    /* a bool (weft_params_get_bool) */
} weft_param_type;

/* A set of named, typed parameters.  Gets only read the set (a failed get's
 * message is the calling thread's, weft_last_error_message): any number of
 * threads may get at once, while no thread sets or destroys it. */
typedef struct weft_params weft_params;

/* An empty set, or NULL with *err (if err is not NULL) = WEFT_ENOMEM.  Destroy
 * frees it and every copied string (NULL is ignored). */
WEFT_API WEFT_NODISCARD weft_params *weft_params_create(weft_status *err);
WEFT_API void weft_params_destroy(weft_params *p);
/* Set (or replace) a parameter; names and strings are copied.  WEFT_EINVAL,
 * WEFT_ENOMEM. */
WEFT_API weft_status weft_params_set_int(weft_params *p, const char *name, int64_t v);
WEFT_API weft_status weft_params_set_float(weft_params *p, const char *name, double v);
WEFT_API weft_status weft_params_set_string(weft_params *p, const char *name, const char *v);
WEFT_API weft_status weft_params_set_bool(weft_params *p, const char *name, bool v);
/* Read a parameter: WEFT_ENOENT if it is missing, WEFT_EINVAL if it has another
 * type (an int is accepted as a float), also for NULL p, name or out; *out is
 * left alone then, and weft_last_error_message says which name and types. */
WEFT_API weft_status weft_params_get_int(const weft_params *p, const char *name, int64_t *out);
WEFT_API weft_status weft_params_get_float(const weft_params *p, const char *name, double *out);
WEFT_API weft_status weft_params_get_string(const weft_params *p, const char *name, const char **out);
WEFT_API weft_status weft_params_get_bool(const weft_params *p, const char *name, bool *out);
/* Deprecated: use weft_last_error_message() (weft/core.h).  If the calling
 * thread's most recent get failed, its message, e.g. "parameter 'n' is a
 * string, expected int"; else "".  Never NULL; any thread. */
WEFT_API const char *weft_params_error_message(const weft_params *p);

/* Builds a composition from parameters: fill weft_composition_graph(c) and set
 * entries and exits; return WEFT_OK or an error (the composition is then
 * dropped). */
typedef weft_status (*weft_composition_build_fn)(weft_composition *c, const weft_params *p, void *arg);

/* A factory: a build function plus the parameters it requires. */
typedef struct weft_factory weft_factory;

/* A factory named `name` (copied; may be NULL) calling build(c, params, arg).
 * NULL with *err = WEFT_EINVAL (build is NULL) or WEFT_ENOMEM.  Destroy frees it
 * (NULL is ignored); compositions it made are independent of it.  A factory is
 * used by one thread at a time. */
WEFT_API WEFT_NODISCARD weft_factory *weft_factory_create(const char *name, weft_composition_build_fn build,
                                                          void *arg, weft_status *err);
WEFT_API void weft_factory_destroy(weft_factory *f);
/* Declares a required parameter: weft_factory_make checks it before building.
 * WEFT_EINVAL, WEFT_ENOMEM. */
WEFT_API weft_status weft_factory_require(weft_factory *f, const char *name, weft_param_type type);
/* Checks the declared parameters, then builds.  Returns NULL with *err =
 * WEFT_ENOENT (a required parameter is missing), WEFT_EINVAL (one has the wrong
 * type), WEFT_ENOMEM, or the build function's error; weft_last_error_message
 * (and weft_factory_error_message) then says which.  It only reads p (as the
 * getters do); f is used by one thread at a time. */
WEFT_API WEFT_NODISCARD weft_composition *weft_factory_make(weft_factory *f, const weft_params *p,
                                                            weft_status *err);
/* Deprecated: use weft_last_error_message() (weft/core.h).  Why the most recent
 * weft_factory_make on f failed ("" if it succeeded or none was made).  Never
 * NULL; from the thread that uses f. */
WEFT_API const char *weft_factory_error_message(const weft_factory *f);

WEFT_EXTERN_C_END
#endif
