/* weft-pingpong — what one cache line costs to move between two CPUs.
 * SPDX-License-Identifier: MIT
 *
 *   weft-pingpong [CPU_A CPU_B] [ROUND_TRIPS]      (defaults: 0 1, 2000000)
 *
 * Two threads, pinned to CPU_A and CPU_B, take turns on one atomic counter:
 * each waits (acquire loads) for the other's value, then stores the next
 * (release).  Every turn moves the line from one CPU's cache to the other's,
 * so the time of a round trip is two one-way transfers: the floor of any
 * runtime that hands work from one worker to another, one line at a time.
 * Issue 17's pipeline_sps_spread at 2 threads costs weft, Taskflow and
 * oneTBB each about 76 ns a stage call on the dev VM, where this prints
 * 44-50 ns one way (bench/README.md, session 44).  Run it on a quiet
 * machine: a thread that loses its CPU stalls the other.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) _Atomic long turn;
static long rounds = 2000000;
static int cpu_b = 1;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
        fprintf(stderr, "weft-pingpong: cannot pin to CPU %d; running unpinned\n", cpu);
}

/* Odd values are this side's to answer. */
static void *other_side(void *arg) {
    (void)arg;
    pin(cpu_b);
    for (long i = 1; i < 2 * rounds; i += 2) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != i) {
        }
        atomic_store_explicit(&turn, i + 1, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int cpu_a = 0;
    if (argc >= 3) cpu_a = atoi(argv[1]), cpu_b = atoi(argv[2]);
    if (argc >= 4) rounds = atol(argv[3]);
    if (rounds < 1 || argc == 2 || argc > 4) {
        fprintf(stderr, "usage: weft-pingpong [CPU_A CPU_B] [ROUND_TRIPS]\n");
        return 2;
    }
    pin(cpu_a);
    pthread_t t;
    if (pthread_create(&t, NULL, other_side, NULL) != 0) {
        fprintf(stderr, "weft-pingpong: pthread_create failed\n");
        return 1;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < 2 * rounds; i += 2) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != i) {
        }
        atomic_store_explicit(&turn, i + 1, memory_order_release);
    }
    while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * rounds) {
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("CPUs %d and %d: round trip %.1f ns, one way %.1f ns (%ld round trips)\n", cpu_a, cpu_b, ns / rounds,
           ns / rounds / 2, rounds);
    return 0;
}
