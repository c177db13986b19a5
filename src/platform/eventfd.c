/* eventfd: the descriptor a future makes readable when it is ready (Linux). */
#include "platform/platform.h"
#include "weft/common.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

int weft__eventfd_open(int *fd, const char **why) {
    int f = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (f < 0) {
        /* Not strerror: it need not be thread-safe. */
        if (why)
            *why = errno == EMFILE   ? "the process has too many open files"
                   : errno == ENFILE ? "the system has too many open files"
                   : errno == ENOMEM ? "no kernel memory"
                                     : "the system refused it";
        return WEFT_ESYS;
    }
    *fd = f;
    return 0;
}

void weft__eventfd_signal(int fd) {
    uint64_t one = 1;
    /* Only EAGAIN (count saturated: already readable) can fail it; EINTR is
     * retried by weft__write_fd. */
    (void)weft__write_fd(fd, &one, sizeof one);
}

void weft__fd_close(int fd) { (void)close(fd); }
