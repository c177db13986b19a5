/* weft — platform layer: the only code that makes OS calls.  Internal. */
#ifndef WEFT_PLATFORM_H
#define WEFT_PLATFORM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#  include <x86intrin.h> /* _mm_pause, and __rdtsc for weft__ticks */
#  define weft__cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#  define weft__cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#  define weft__cpu_relax() ((void)0)
#endif

#define WEFT__CACHE_LINE 64

/* ---- futex: wait on / wake a 32-bit word ---- */
/* Sleeps while *word == expected.  timeout_ns == UINT64_MAX waits forever.  Returns
 * 0 when woken or when *word != expected (check the word again: wakeups may be
 * spurious), or WEFT_ETIMEDOUT. */
int weft__futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);
/* Wakes up to n threads sleeping on word (n == INT32_MAX: all). */
void weft__futex_wake(_Atomic uint32_t *word, int n);

/* ---- threads ---- */
typedef struct weft__thread { unsigned long handle; } weft__thread;
/* Starts fn(arg) on a new thread with the given stack size (0 = default).
 * Returns 0 or WEFT_ESYS / WEFT_ENOMEM. */
int weft__thread_start(weft__thread *t, void *(*fn)(void *), void *arg, size_t stack_size);
void weft__thread_join(weft__thread t);
void weft__thread_yield(void);
/* One step of a spin-wait for another thread: a pause for the first 64 steps
 * counted in *spins, a yield after. */
static inline void weft__spin_pause(unsigned *spins) {
    if (++*spins < 64) weft__cpu_relax();
    else weft__thread_yield();
}
/* Names the calling thread (best effort; truncated to 15 bytes). */
void weft__thread_set_name(const char *name);
/* Binds the calling thread to one CPU (an OS CPU number).  0 or WEFT_ESYS. */
int weft__thread_bind_self(int cpu);

/* ---- mutex (only off the hot path: run queues of a taskflow) ---- */
typedef struct weft__mutex { _Alignas(8) unsigned char opaque[48]; } weft__mutex;
int weft__mutex_init(weft__mutex *m);
void weft__mutex_destroy(weft__mutex *m);
void weft__mutex_lock(weft__mutex *m);
void weft__mutex_unlock(weft__mutex *m);

/* ---- eventfd (src/platform/eventfd.c) ---- */
/* Opens a non-blocking, close-on-exec eventfd with count 0.  0 or WEFT_ESYS;
 * then, if why is not NULL, *why says what the system refused, for the
 * caller's message ("too many open files" at the process's fd limit). */
int weft__eventfd_open(int *fd, const char **why);
/* Adds 1 to its count, making it readable.  Best effort (cannot fail usefully). */
void weft__eventfd_signal(int fd);
void weft__fd_close(int fd);

/* ---- process: asymmetric fence, fork (src/platform/process.c) ---- */
/* Once per process, before any worker exists (executor creation calls it):
 * sets up the asymmetric fence and a pthread_atfork child handler, which bumps
 * weft__fork_generation and calls on_fork_child in the child.  Any thread. */
void weft__process_init(void (*on_fork_child)(void));
/* Bumped in a child process at each fork(); an executor remembers its value. */
extern _Atomic uint32_t weft__fork_generation;
/* A module's lock held across fork() (pthread_atfork): prepare takes it in the
 * forking thread, parent and child give it back, so that a child never starts
 * with the lock held by a thread it does not have.  Also counts forks in
 * weft__fork_generation from now on, though no executor was made yet.  Any
 * thread; call once per lock. */
void weft__fork_guard(void (*prepare)(void), void (*parent)(void), void (*child)(void));
/* The two halves of an asymmetric store-load fence (process.c says why).  The
 * frequent side stores, calls weft__fence_light, then loads; the rare side
 * stores, calls weft__fence_heavy, then loads: one of them sees the other's
 * store.  Light is a compiler barrier when the heavy side can use membarrier,
 * else a full fence; the choice is made in weft__process_init, before any
 * thread that uses it starts. */
extern _Atomic bool weft__asym_heavy_ok;
static inline void weft__fence_light(void) {
    if (atomic_load_explicit(&weft__asym_heavy_ok, memory_order_relaxed))
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}
void weft__fence_heavy(void);

/* ---- memory ---- */
#define WEFT__HUGE_PAGE ((size_t)2 << 20)
/* Asks for transparent huge pages over the huge-page-aligned part of [p, p+len),
 * before it is first touched: one page fault per 2 MiB instead of 512.  Best
 * effort; a no-op where the OS has no such advice. */
void weft__mem_advise_huge(void *p, size_t len);

/* ---- system information ---- */
/* CPUs this process may use: its affinity mask (the process's, not the calling
 * thread's: platform/affinity.c), capped by a cgroup v2 CPU quota (cpu.max of
 * its cgroup or any parent, rounded up); at least 1. */
unsigned weft__cpu_count(void);
/* The same with the cgroup v2 mount point and the /proc/self/cgroup file given
 * (tests use a fake tree); a NULL root ignores quotas. */
unsigned weft__cpu_count_in(const char *cgroup_root, const char *self_cgroup);
/* The CPUs a cgroup v2 quota allows the process whose cgroup file is
 * `self_cgroup` ("0::/path" line), looking under `root`; 0 if no quota. */
unsigned weft__cgroup_cpu_limit(const char *root, const char *self_cgroup);
/* The OS number of the k-th CPU (from 0) of this process's mask (affinity.c), k taken
 * modulo their count; -1 if the mask cannot be read. */
int weft__cpu_nth(unsigned k);
/* Monotonic clock in nanoseconds. */
uint64_t weft__now_ns(void);
/* A cheap timestamp counter (the TSC on x86-64, else the monotonic clock in ns)
 * for the profiler's hot path, inline because it is read once per task there;
 * weft__ns_per_tick converts (calibrated once per process against the monotonic
 * clock, ~2 ms, on first use; any thread). */
static inline uint64_t weft__ticks(void) {
#if defined(__x86_64__)
    /* rdtsc, not rdtscp: a span's edges need not be fenced against the task's own
     * instructions at nanosecond precision, and rdtsc is the cheaper of the two.
     * Assumes an invariant TSC (every x86-64 CPU of the last decade). */
    return __rdtsc();
#else
    return weft__now_ns();
#endif
}
double weft__ns_per_tick(void);
/* The calling process's id (getpid), for the profiler's traces (ticks.c).
 * Any thread. */
unsigned weft__process_id(void);
/* write(2) of the whole buffer, retrying on EINTR and short writes.  0 or
 * WEFT_ESYS.  Async-signal-safe. */
int weft__write_fd(int fd, const void *buf, size_t len);
/* getenv, here so that the rest of the code stays OS-free. */
const char *weft__getenv(const char *name);

#endif
