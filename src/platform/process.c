/* Process-wide matters: the asymmetric fence (membarrier) and fork().
 *
 * Asymmetric fence.  Two threads that each store one word and then load the
 * other's need a full fence on both sides, or both may miss (store-load
 * reordering).  When one side runs per task and the other rarely (a worker
 * ending a run against a thread entering weft_executor_wait_all), the
 * membarrier system call moves the whole cost to the rare side: it makes every
 * running thread of the process execute a full barrier, so the frequent side
 * needs only a compiler barrier (urcu and folly's asymmetric fences do the
 * same).  Where the call is missing, both sides use a real fence.
 *
 * fork().  A child process has one thread: an executor created before the fork
 * has no workers there.  A handler registered with pthread_atfork bumps a
 * generation number in the child, which executors compare with theirs, and
 * calls the core's child hook (set before the first executor exists). */
#include "platform/platform.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic bool weft__asym_heavy_ok;
_Atomic uint32_t weft__fork_generation;
/* Set by every weft__process_init call (always the same function), read in the
 * child: atomic, as two threads may create executors at once. */
static void (*_Atomic child_hook)(void);

static bool membarrier_register(void) {
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
}

static void in_child(void) {
    atomic_fetch_add_explicit(&weft__fork_generation, 1, memory_order_relaxed);
    /* The child's memory map is new: register it again (or fall back to fences). */
    atomic_store_explicit(&weft__asym_heavy_ok, membarrier_register(), memory_order_relaxed);
    void (*hook)(void) = atomic_load_explicit(&child_hook, memory_order_relaxed);
    if (hook) hook();
}

static void init_once(void) {
    atomic_store_explicit(&weft__asym_heavy_ok, membarrier_register(), memory_order_relaxed);
    pthread_atfork(NULL, NULL, in_child);
}

static pthread_once_t process_once = PTHREAD_ONCE_INIT;

void weft__process_init(void (*on_fork_child)(void)) {
    atomic_store_explicit(&child_hook, on_fork_child, memory_order_relaxed);
    pthread_once(&process_once, init_once);
}

void weft__fork_guard(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
    pthread_once(&process_once, init_once); /* the generation count first (child handlers run in order) */
    pthread_atfork(prepare, parent, child);
}

void weft__fence_heavy(void) {
    if (atomic_load_explicit(&weft__asym_heavy_ok, memory_order_relaxed) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0)
        return;
    atomic_thread_fence(memory_order_seq_cst);
}
