/* Linux futex wrappers.  A futex lets a thread sleep on a 32-bit word until another
 * thread changes it and calls wake; the kernel re-checks the word atomically with
 * going to sleep, which is what makes the event-count protocols lose no wakeups. */
#include "platform/platform.h"
#include "weft/common.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int weft__futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns) {
    struct timespec ts, *tsp = NULL;
    if (timeout_ns != UINT64_MAX) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
        ts.tv_nsec = (long)(timeout_ns % 1000000000u);
        tsp = &ts;
    }
    /* FUTEX_WAIT takes a relative timeout; private: the word is never shared
     * between processes. */
    long r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
    if (r == -1 && errno == ETIMEDOUT) return WEFT_ETIMEDOUT;
    return 0; /* woken, EAGAIN (word changed) or EINTR: the caller re-checks */
}

void weft__futex_wake(_Atomic uint32_t *word, int n) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
