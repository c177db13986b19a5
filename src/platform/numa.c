/* NUMA memory policy by raw system calls (platform/numa.h).  The MPOL_*
 * numbers are the kernel's ABI (include/uapi/linux/mempolicy.h), written out
 * here so no kernel or libnuma header is needed. */
#include "platform/numa.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "weft/common.h"

enum {
    MODE_DEFAULT = 0,
    MODE_PREFERRED = 1,
    MODE_INTERLEAVE = 3,
    FLAG_NODE = 1 << 0, /* get_mempolicy: MPOL_F_NODE */
    FLAG_ADDR = 1 << 1, /* get_mempolicy: MPOL_F_ADDR */
    FLAG_MOVE = 1 << 1  /* mbind: MPOL_MF_MOVE */
};

#define LONG_BITS (sizeof(unsigned long) * CHAR_BIT)
#define MASK_LONGS (WEFT__NUMA_MAX_NODES / LONG_BITS)

size_t weft__page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

int weft__numa_set_policy(void *p, size_t len, const int *nodes, unsigned n, bool interleave) {
#if defined(SYS_mbind)
    if ((uintptr_t)p & (weft__page_size() - 1)) return WEFT_EINVAL;
    unsigned long mask[MASK_LONGS];
    memset(mask, 0, sizeof mask);
    for (unsigned i = 0; i < n; i++) {
        if (nodes[i] < 0 || nodes[i] >= WEFT__NUMA_MAX_NODES) return WEFT_EINVAL;
        mask[(unsigned)nodes[i] / LONG_BITS] |= 1ul << ((unsigned)nodes[i] % LONG_BITS);
        if (!interleave) break; /* preferred: one node */
    }
    int mode = n == 0 ? MODE_DEFAULT : interleave ? MODE_INTERLEAVE : MODE_PREFERRED;
    /* maxnode counts one more bit than the mask holds: the kernel drops the
     * last (a historical off-by-one every caller, libnuma too, follows). */
    long r = syscall(SYS_mbind, p, len, mode, n ? mask : NULL, n ? (unsigned long)WEFT__NUMA_MAX_NODES + 1 : 0,
                     n ? FLAG_MOVE : 0);
    if (r != 0 && n && errno == EIO) r = 0; /* some touched pages could not move: the policy is set */
    return r == 0 ? 0 : WEFT_ESYS;
#else
    (void)p, (void)len, (void)nodes, (void)n, (void)interleave;
    return WEFT_ESYS;
#endif
}

int weft__numa_node_of(const void *p, int *node) {
#if defined(SYS_move_pages)
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)(weft__page_size() - 1));
    int status = -1;
    long r = syscall(SYS_move_pages, 0, 1ul, &page, NULL, &status, 0);
    if (r == 0 && status >= 0) {
        *node = status;
        return 0;
    }
    if (r == 0 && status == -ENOENT) return WEFT_ENOENT;
#endif
#if defined(SYS_get_mempolicy)
    /* Without move_pages (or refused): get_mempolicy's answer, which faults
     * the page in when it was never touched. */
    int n = -1;
    if (syscall(SYS_get_mempolicy, &n, NULL, 0ul, p, (unsigned long)(FLAG_NODE | FLAG_ADDR)) == 0 && n >= 0) {
        *node = n;
        return 0;
    }
#endif
    (void)p, (void)node;
    return WEFT_ESYS;
}

int weft__numa_policy_of(const void *p, int *mode, int *first) {
#if defined(SYS_get_mempolicy)
    unsigned long mask[MASK_LONGS];
    memset(mask, 0, sizeof mask);
    int m = -1;
    if (syscall(SYS_get_mempolicy, &m, mask, (unsigned long)WEFT__NUMA_MAX_NODES + 1, p,
                (unsigned long)FLAG_ADDR) != 0)
        return WEFT_ESYS;
    *mode = m;
    *first = -1;
    for (unsigned i = 0; i < WEFT__NUMA_MAX_NODES; i++)
        if (mask[i / LONG_BITS] >> (i % LONG_BITS) & 1) {
            *first = (int)i;
            break;
        }
    return 0;
#else
    (void)p, (void)mode, (void)first;
    return WEFT_ESYS;
#endif
}
