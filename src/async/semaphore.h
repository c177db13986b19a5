/* Counting semaphores that tasks acquire before they start and release when they
 * end (Taskflow's tf::Semaphore).  A task that finds no unit free does not block
 * its worker: its job is parked on the semaphore's wait list and queued again
 * when a unit is handed to it.  Graph tasks (graph/semaphore.c) and async tasks
 * (semaphore.c here) both go through the functions below.  Internal. */
#ifndef WEFT_ASYNC_SEMAPHORE_H
#define WEFT_ASYNC_SEMAPHORE_H

#include "core/executor.h"
#include "platform/platform.h"
#include "weft/async.h"

/* One parked acquisition: the job to queue again and where.  Lives in the
 * record of the task that parks (a graph node's semaphore record, an async
 * task's), which never waits on two lists at once. */
typedef struct weft__sem_waiter {
    struct weft__sem_waiter *next;
    weft__job *job;
    weft_executor *ex;
    /* How many semaphores of the task's set it holds: the set is taken in
     * order, and a release hands its unit to the first waiter (which bumps
     * this) rather than to whoever asks next. */
    uint32_t held;
} weft__sem_waiter;

struct weft_semaphore {
    size_t max;
    /* Units free when >= 0; else minus the number of acquirers that found none
     * (parked, or about to lock and park).  A task takes and gives back units
     * here without the lock while nobody waits (semaphore.c). */
    _Atomic intptr_t state;
    weft__mutex mu; /* guards the fields below; held for a few instructions */
    /* Units a release handed over before their acquirer was queued: the
     * acquirer takes one instead of parking. */
    size_t tokens;
    weft__sem_waiter *head, *tail; /* FIFO */
    /* Users in flight that may still acquire or release it: runs (queued or
     * going) of taskflows whose tasks name it (graph/semaphore.c,
     * weft__sem_users) and weft_async_acquire tasks not yet finished.
     * weft_semaphore_destroy refuses while it is not 0: a queued task that
     * has not reached the semaphore holds no unit and waits on no list, and
     * freeing it under that task was a use after free. */
    _Atomic size_t users;
};

/* Sorts a set and drops repeats: every task takes semaphores in address order,
 * so tasks that hold one while parked on the next cannot wait in a circle.
 * Returns the new length. */
size_t weft__sem_set_normalize(weft_semaphore **s, size_t n);

/* Takes one unit of each of s[wt->held .. n-1] in order.  True: the task holds
 * them all (wt->held is reset to 0 for its next activation).  False: it was
 * parked on the first one without a free unit, and will be queued again (its
 * job on its executor) when a release hands that unit over.  Any thread. */
bool weft__sem_acquire(weft_semaphore *const *s, size_t n, weft__sem_waiter *wt);

/* Gives back one unit of each s[i]: to the first parked waiter (queued again,
 * on w when w is a worker of its executor, else through the executor's
 * injector), or to the free count.  w: the calling worker or NULL.  Returns
 * WEFT_OK, or WEFT_EINVAL when some s[i] had all its units free (a release
 * without an acquire; the others are still released). */
weft_status weft__sem_release(weft__worker *w, weft_semaphore *const *s, size_t n);

/* Gives back the units of s[0 .. held-1] that a task took but will not use
 * (its run stopped while it was parked). */
void weft__sem_give_back(weft__worker *w, weft_semaphore *const *s, size_t held);

#endif
