/* Signals for opt-in preemption (src/cancel/preempt.c).  Internal; the only
 * code that installs handlers or sends signals. */
#ifndef WEFT_PLATFORM_SIGNAL_H
#define WEFT_PLATFORM_SIGNAL_H

#include <stdbool.h>

/* The default preemption signal (SIGUSR2). */
int weft__signal_default(void);
/* Installs handler for signo (SA_RESTART, so interrupted system calls of the
 * task resume).  If a handler other than the default or "ignore" is installed
 * already: WEFT_EBUSY unless chain, in which case the old one is kept and
 * called after handler returns, with the signal's siginfo_t and context when
 * it was installed with SA_SIGINFO.  0, WEFT_EINVAL (bad signal), WEFT_EBUSY,
 * WEFT_ESYS.  Not async-signal-safe; call once, before signals are sent. */
int weft__signal_install(int signo, bool chain, void (*handler)(int));
/* The calling thread, as a value weft__signal_thread takes.  Any thread. */
unsigned long weft__thread_self(void);
/* Sends signo to a thread of this process.  0 or WEFT_ESYS (the thread has
 * ended).  Any thread; async-signal-safe. */
int weft__signal_thread(unsigned long thread, int signo);
/* Unblocks signo on the calling thread; *was_blocked (may be NULL) says
 * whether it was blocked.  0 or WEFT_ESYS. */
int weft__signal_unblock(int signo, bool *was_blocked);
/* Blocks signo again on the calling thread (after weft__signal_unblock found
 * it blocked). */
void weft__signal_block(int signo);
/* The signals 1..64 blocked on the calling thread, signal k as bit k - 1. */
unsigned long long weft__signal_blocked_set(void);

#endif
