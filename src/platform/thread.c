/* POSIX threads and mutexes behind the platform interface. */
#include "platform/affinity.h"
#include "platform/platform.h"
#include "weft/common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

_Static_assert(sizeof(pthread_mutex_t) <= sizeof(((weft__mutex *)0)->opaque),
               "weft__mutex too small for pthread_mutex_t");
_Static_assert(sizeof(pthread_t) <= sizeof(unsigned long), "pthread_t does not fit");

int weft__thread_start(weft__thread *t, void *(*fn)(void *), void *arg, size_t stack_size) {
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return WEFT_ESYS;
    if (stack_size && pthread_attr_setstacksize(&attr, stack_size) != 0) {
        pthread_attr_destroy(&attr);
        return WEFT_EINVAL;
    }
    pthread_t th;
    /* On the process's CPUs, not only the caller's (a pinned thread would
     * otherwise hand its one CPU to every worker it starts). */
    bool widened = weft__attr_set_process_cpus(&attr);
    int r = pthread_create(&th, &attr, fn, arg);
    if (r == EINVAL && widened) { /* a CPU of the mask went away since: inherit, as before */
        pthread_attr_destroy(&attr);
        if (pthread_attr_init(&attr) != 0) return WEFT_ESYS;
        if (stack_size) (void)pthread_attr_setstacksize(&attr, stack_size);
        r = pthread_create(&th, &attr, fn, arg);
    }
    pthread_attr_destroy(&attr);
    /* EINVAL with a stack size set: the system refused that size (core.h). */
    if (r != 0) return r == ENOMEM || r == EAGAIN ? WEFT_ENOMEM : r == EINVAL && stack_size ? WEFT_EINVAL : WEFT_ESYS;
    t->handle = (unsigned long)th;
    return 0;
}

void weft__thread_join(weft__thread t) { pthread_join((pthread_t)t.handle, NULL); }

void weft__thread_yield(void) { sched_yield(); }

void weft__thread_set_name(const char *name) {
    char buf[16];
    strncpy(buf, name, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    pthread_setname_np(pthread_self(), buf);
}

int weft__thread_bind_self(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return WEFT_ESYS;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? 0 : WEFT_ESYS;
}

int weft__mutex_init(weft__mutex *m) {
    return pthread_mutex_init((pthread_mutex_t *)m->opaque, NULL) == 0 ? 0 : WEFT_ESYS;
}
void weft__mutex_destroy(weft__mutex *m) { pthread_mutex_destroy((pthread_mutex_t *)m->opaque); }
void weft__mutex_lock(weft__mutex *m) { pthread_mutex_lock((pthread_mutex_t *)m->opaque); }
void weft__mutex_unlock(weft__mutex *m) { pthread_mutex_unlock((pthread_mutex_t *)m->opaque); }
