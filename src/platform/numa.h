/* weft — platform: NUMA memory policy through the raw Linux system calls
 * (mbind, get_mempolicy, move_pages), so weft needs no libnuma.  Nodes are
 * the OS's numbers (/sys/devices/system/node/nodeN).  Internal. */
#ifndef WEFT_PLATFORM_NUMA_H
#define WEFT_PLATFORM_NUMA_H

#include <stdbool.h>
#include <stddef.h>

/* The largest node number these calls can name, plus one. */
#define WEFT__NUMA_MAX_NODES 1024

/* The page size (a power of two).  Any thread. */
size_t weft__page_size(void);

/* Sets the memory policy of the whole pages [p, p + len) (p page-aligned):
 * interleave false: prefer nodes[0] (MPOL_PREFERRED: pages come from that
 * node while it has memory, from another after, never a failure);
 * interleave true: pages round-robin over nodes[0..n) (MPOL_INTERLEAVE).
 * Pages already touched are moved where the kernel can (MPOL_MF_MOVE).
 * n == 0 resets the range to the default policy (first touch).  0,
 * WEFT_EINVAL (a node number < 0 or >= WEFT__NUMA_MAX_NODES, p not aligned)
 * or WEFT_ESYS (the kernel refused: a node it does not have, no NUMA
 * support, a seccomp filter).  Any thread. */
int weft__numa_set_policy(void *p, size_t len, const int *nodes, unsigned n, bool interleave);

/* The node the page holding p is on: move_pages' query, which does not
 * fault the page in.  0 with *node set, WEFT_ENOENT (the page has never been
 * touched: no node yet) or WEFT_ESYS (the calls are not there or refused).
 * Any thread. */
int weft__numa_node_of(const void *p, int *node);

/* The policy of the range holding p (get_mempolicy with MPOL_F_ADDR): *mode
 * receives 0 default, 1 preferred, 2 bind, 3 interleave (the kernel's MPOL_*
 * numbers), and the first node of its node mask goes in *first (-1: none).
 * 0 or WEFT_ESYS.  For tests.  Any thread. */
int weft__numa_policy_of(const void *p, int *mode, int *first);

#endif
