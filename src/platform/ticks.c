/* Timestamp counter and process id for the profiler, raw fd writes for the
 * state dump. */
#include "platform/platform.h"
#include "weft/common.h"

#include <errno.h>
#include <unistd.h>


/* Bits of the calibrated double; 0 until calibrated.  Racing calibrations agree
 * closely and either result is fine, so relaxed suffices. */
static _Atomic uint64_t ns_per_tick_bits;

static double calibrate(void) {
#if defined(__x86_64__)
    uint64_t n0 = weft__now_ns(), t0 = weft__ticks(), n1, t1;
    do {
        n1 = weft__now_ns();
        t1 = weft__ticks();
    } while (n1 - n0 < 2000000u);
    return t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
#else
    return 1.0;
#endif
}

double weft__ns_per_tick(void) {
    union { uint64_t u; double d; } v = { atomic_load_explicit(&ns_per_tick_bits, memory_order_relaxed) };
    if (v.u == 0) {
        v.d = calibrate();
        atomic_store_explicit(&ns_per_tick_bits, v.u, memory_order_relaxed);
    }
    return v.d;
}

unsigned weft__process_id(void) { return (unsigned)getpid(); }

int weft__write_fd(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return WEFT_ESYS;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
