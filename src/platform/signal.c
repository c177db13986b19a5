/* POSIX signals behind src/platform/signal.h. */
#include "platform/signal.h"
#include "weft/common.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

/* The action replaced by weft's, for chaining, and weft's handler; written
 * once at install. */
static struct sigaction old_action;
static bool chaining;
static void (*weft_handler)(int);

/* Installed with SA_SIGINFO, so that a replaced handler that takes a
 * siginfo_t (SA_SIGINFO) gets the one the kernel gave, not NULL. */
static void on_signal(int signo, siginfo_t *info, void *uc) {
    weft_handler(signo);
    if (!chaining) return;
    if (old_action.sa_flags & SA_SIGINFO) old_action.sa_sigaction(signo, info, uc);
    else old_action.sa_handler(signo);
}

int weft__signal_default(void) { return SIGUSR2; }

int weft__signal_install(int signo, bool chain, void (*handler)(int)) {
    if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP) return WEFT_EINVAL;
    struct sigaction old;
    if (sigaction(signo, NULL, &old) != 0) return WEFT_EINVAL;
    bool taken = (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL
                                              : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (taken && !chain) return WEFT_EBUSY;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    old_action = old;
    chaining = taken;
    weft_handler = handler;
    return sigaction(signo, &sa, NULL) == 0 ? 0 : WEFT_ESYS;
}

unsigned long weft__thread_self(void) { return (unsigned long)pthread_self(); }

int weft__signal_thread(unsigned long thread, int signo) {
    return pthread_kill((pthread_t)thread, signo) == 0 ? 0 : WEFT_ESYS;
}

int weft__signal_unblock(int signo, bool *was_blocked) {
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, signo);
    if (pthread_sigmask(SIG_UNBLOCK, &set, &old) != 0) return WEFT_ESYS;
    if (was_blocked) *was_blocked = sigismember(&old, signo) == 1;
    return 0;
}

void weft__signal_block(int signo) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    (void)pthread_sigmask(SIG_BLOCK, &set, NULL);
}

unsigned long long weft__signal_blocked_set(void) {
    sigset_t cur;
    unsigned long long bits = 0;
    if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0) return 0;
    for (int k = 1; k <= 64 && k < NSIG; k++)
        if (sigismember(&cur, k) == 1) bits |= 1ull << (k - 1);
    return bits;
}
