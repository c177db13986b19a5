/* weft — platform: a timed wait on a 32-bit word and a yield, header-only.
 * Internal.
 *
 * platform.h's weft__futex_wait/wake and weft__thread_yield do the same, but they live in libweft,
 * where every weft__ symbol is hidden (libweft.so exports the public API
 * only).  A library built beside weft and linked against libweft.so, such as
 * weft::mpi (src/mpi/, its own library), cannot call them; it includes this
 * header instead, whose functions are static inline and link nothing.  Linux
 * futex; as everywhere in weft, the only OS calls are in src/platform/. */
#ifndef WEFT_PLATFORM_WAIT_INLINE_H
#define WEFT_PLATFORM_WAIT_INLINE_H

#include <errno.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps while *word == expected, at most timeout_ns.  Returns 1 when the wait
 * timed out, 0 otherwise (woken, the word differed, or a signal: the caller
 * checks the word again; wake-ups may be spurious).  Any thread. */
static inline int weft__word_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns) {
    struct timespec ts = { .tv_sec = (time_t)(timeout_ns / 1000000000u), .tv_nsec = (long)(timeout_ns % 1000000000u) };
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
    return r == -1 && errno == ETIMEDOUT;
}

/* Wakes every thread sleeping in weft__word_wait on word.  It does not read or
 * write *word (the kernel only hashes the address), so a thread may call it
 * just after a store that lets the word's owner free it.  Any thread. */
static inline void weft__word_wake(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Gives the CPU to another runnable thread, if any.  Any thread. */
static inline void weft__yield_now(void) { (void)sched_yield(); }

#endif
