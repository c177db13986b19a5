/* Platform-private: thread attributes for the process's CPUs (affinity.c). */
#ifndef WEFT_PLATFORM_AFFINITY_H
#define WEFT_PLATFORM_AFFINITY_H

#include <pthread.h>
#include <stdbool.h>

/* A CPU mask big enough for any CPU the kernel can number (CONFIG_NR_CPUS is
 * at most 8192 today); CPU_SETSIZE (1024) would miss CPUs of the largest
 * machines.  It lives on the stack (1 KiB), so no allocation bypasses weft's
 * hook.  Cast .bits to cpu_set_t * with sizeof(weft__cpu_mask) as the size. */
enum { WEFT__MASK_CPUS = 8192 };
typedef struct weft__cpu_mask { unsigned long bits[WEFT__MASK_CPUS / (8 * sizeof(unsigned long))]; } weft__cpu_mask;

/* The number of CPUs this process may run on (affinity.c), or -1 if no mask
 * can be read.  Unlike weft__affinity_cpus (the calling thread's, which
 * weft_topology_detect lists), a pinned caller does not shrink it. */
int weft__process_cpu_count(void);

/* Makes a thread started with `attr` run on the process's CPUs (affinity.c)
 * rather than inherit the calling thread's mask.  True if attr was changed
 * (the caller's mask is narrower); false if it is already the process's, or
 * the mask cannot be read or set. */
bool weft__attr_set_process_cpus(pthread_attr_t *attr);

#endif
