/* eventfd: the descriptor a future makes readable when it is ready (Linux). */
#include "platform/platform.h"
#include "weft/common.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

int weft__eventfd_open(int *fd) {
    int f = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (f < 0) return WEFT_ESYS;
    *fd = f;
    return 0;
}

void weft__eventfd_signal(int fd) {
    uint64_t one = 1;
    /* Only EAGAIN (count saturated: already readable) or EINTR can happen. */
    while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

void weft__fd_close(int fd) { (void)close(fd); }
