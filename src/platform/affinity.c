/* The CPUs this process may run on, as opposed to the calling thread's mask.
 *
 * Linux keeps an affinity mask per thread, not per process: a thread pinned
 * to one CPU (pthread_setaffinity_np) that sized an executor from its own
 * mask would get one worker, and threads it starts inherit its mask, so every
 * worker would share that CPU.  weft sizes executors, places workers and
 * starts its threads from the process's CPUs instead: the union of the mask
 * the process had when weft was loaded (a constructor records it: normally
 * the mask the program was started with, e.g. by taskset), the main thread's
 * mask now, and the calling thread's. */
#include "platform/affinity.h"
#include "platform/platform.h"

#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

typedef weft__cpu_mask mask;
enum { MASK_CPUS = WEFT__MASK_CPUS };

static mask initial;
static bool initial_ok;

__attribute__((constructor)) static void record_initial_mask(void) {
    initial_ok = sched_getaffinity(0, sizeof initial, (cpu_set_t *)initial.bits) == 0;
}

/* Adds a mask to m; false if it could not be read. */
static bool add_mask(mask *m, pid_t tid) {
    mask t;
    if (sched_getaffinity(tid, sizeof t, (cpu_set_t *)t.bits) != 0) return false;
    for (size_t i = 0; i < sizeof m->bits / sizeof m->bits[0]; i++) m->bits[i] |= t.bits[i];
    return true;
}

/* The process's CPUs (see above); false if no mask could be read. */
static bool process_mask(mask *m) {
    if (initial_ok) *m = initial;
    else memset(m, 0, sizeof *m);
    bool main_ok = add_mask(m, getpid()); /* the main thread's id is the process's */
    bool self_ok = add_mask(m, 0);
    return initial_ok || main_ok || self_ok;
}

int weft__process_cpu_count(void) {
    mask m;
    return process_mask(&m) ? CPU_COUNT_S(sizeof m, (cpu_set_t *)m.bits) : -1;
}

int weft__cpu_nth(unsigned k) {
    mask m;
    if (!process_mask(&m)) return -1;
    int n = CPU_COUNT_S(sizeof m, (cpu_set_t *)m.bits);
    if (n <= 0) return -1;
    k %= (unsigned)n;
    for (int cpu = 0; cpu < MASK_CPUS; cpu++)
        if (CPU_ISSET_S(cpu, sizeof m, (cpu_set_t *)m.bits) && k-- == 0) return cpu;
    return -1;
}

bool weft__attr_set_process_cpus(pthread_attr_t *attr) {
    mask m, self;
    if (!process_mask(&m)) return false;
    /* Already the calling thread's mask (the usual case): nothing to change. */
    if (sched_getaffinity(0, sizeof self, (cpu_set_t *)self.bits) == 0 && memcmp(&m, &self, sizeof m) == 0)
        return false;
    return pthread_attr_setaffinity_np(attr, sizeof m, (cpu_set_t *)m.bits) == 0;
}
