/* The unit the core runs.  The core knows nothing of graphs: a graph node, a run's
 * start, and later an async task, a fork-join frame or a pipeline token all embed
 * a weft__job as their first member and are cast back in their run function.
 *
 * run() executes the job on worker w and may return the next job to execute on the
 * same worker immediately (continuation passing): that is how a finished task hands
 * its first ready successor straight to its worker with no deque round trip. */
#ifndef WEFT_CORE_JOB_H
#define WEFT_CORE_JOB_H

typedef struct weft__worker weft__worker;
typedef struct weft__job weft__job;
typedef weft__job *(*weft__job_fn)(weft__worker *w, weft__job *self);

struct weft__job {
    weft__job_fn run;
    /* Link for a worker's private overflow list (used only when its deque cannot
     * grow for lack of memory); unused while the job sits in a deque. */
    weft__job *next;
};

#endif
