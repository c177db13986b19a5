/* Fake sysfs trees for the topology tests: a machine described in a few numbers
 * is written as /sys/devices/system/{cpu,node} under a fresh temporary
 * directory, the way Linux lays it out, so a 2-core test machine can stand in
 * for a two-socket server. */
#ifndef WEFT_TEST_TOPO_FIXTURE_H
#define WEFT_TEST_TOPO_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "topo/topo.h"

/* How OS numbers are given to hardware threads. */
enum fake_numbering {
    /* Linux on Intel: every core's first thread, then every core's second
     * (siblings are total_cores apart). */
    NUMBER_SIBLINGS_FAR = 0,
    /* Siblings next to each other (0,1 = one core). */
    NUMBER_SIBLINGS_NEAR = 1,
    /* Cores alternate between packages (0 on package 0, 1 on package 1, ...),
     * as some server firmware numbers them; siblings far. */
    NUMBER_PACKAGES_INTERLEAVED = 2
};

typedef struct fake_machine {
    int packages;
    int cores;            /* per package */
    int threads;          /* per core */
    int l3s;              /* L3 domains per package (cores split evenly) */
    int nodes;            /* NUMA nodes per package with CPUs (cores split evenly); 0: no node directory */
    int memory_only_nodes; /* extra nodes with memory and no CPU, numbered after */
    int offline;          /* extra CPUs numbered after all others, offline */
    enum fake_numbering numbering;
    int core_id_step;     /* core_id = core index * step (Intel leaves gaps); 0 means 1 */
} fake_machine;

/* The machines the issue asks for. */
extern const fake_machine FAKE_TWO_SOCKET;   /* 2 x 16 cores x 2 threads, an L3 and a node per package */
extern const fake_machine FAKE_CHIPLETS;     /* 1 x 32 x 2, four L3 domains of 8 cores, one node */
extern const fake_machine FAKE_MEMORY_NODE;  /* 1 x 8 x 1, node 0 with the CPUs, node 1 memory only */
extern const fake_machine FAKE_ODD_NUMBERS;  /* 2 x 4 x 2, cores interleaved across packages, core_id
                                              * step 2, one offline CPU */

/* Writes the machine under a new temporary directory; returns its path
 * (static storage, valid until fake_remove).  Fails the test on error. */
const char *fake_write(const fake_machine *m);
/* OS number of thread t of core c of package p. */
int fake_os(const fake_machine *m, int p, int c, int t);
/* Writes text to root + rel (creating directories); removes the file for
 * text NULL. */
void fake_put(const char *root, const char *rel, const char *text);
/* Removes the tree. */
void fake_remove(const char *root);

/* Detects the tree with every CPU listed; fails the test unless it works. */
weft_topology *fake_detect(const char *root);

/* An allocator that fails once `budget` more allocations have succeeded:
 * fake_fail_install() puts it in (weft_set_allocator), fake_fail_budget(n)
 * sets what is left, weft_set_allocator(NULL) takes it out. */
void fake_fail_install(void);
void fake_fail_budget(long n);

#endif
