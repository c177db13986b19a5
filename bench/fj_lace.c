/* weft-bench — the Lace peer of the fork-join benchmarks (fib, fib_spawn2,
 * skynet, nqueens).  SPDX-License-Identifier: MIT
 *
 * Written as Lace's own benchmarks (benchmarks/fib/fib-lace.c,
 * benchmarks/queens/queens-lace.c): TASK_n functions, SPAWN the children,
 * CALL the last one where Lace's does, SYNC them all (Lace syncs in LIFO
 * order), the root started from main with RUN (main is not a Lace worker; it
 * waits until the root is done, as with every other impl here).  lace_start /
 * lace_stop once per thread count, outside the timers.  nqueens copies the
 * board into an alloca'd array per child as Lace's queens does, but tests a
 * square with the shared nq_safe (Lace's re-checks the whole board), and
 * skynet (not among Lace's benchmarks) is the same 10-way spawn + sync.  fib is
 * also the peer of fib_typed: Lace's TASK macros are already typed direct calls.
 * Compiled only when CMake was given LACE_DIR (a Lace checkout).
 */
#include "bench_work.h"
#include "fj_work.h"

#include <alloca.h>
#include <string.h>

#include <lace.h>

TASK_1(long, lace_fib1, int, n) {
    if (n < 2) return n;
    SPAWN(lace_fib1, n - 1);
    long k = CALL(lace_fib1, n - 2);
    long m = SYNC(lace_fib1);
    return m + k;
}

TASK_1(long, lace_fib2, int, n) {
    if (n < 2) return n;
    SPAWN(lace_fib2, n - 1);
    SPAWN(lace_fib2, n - 2);
    long k = SYNC(lace_fib2);
    long m = SYNC(lace_fib2);
    return m + k;
}

TASK_2(long, lace_skynet, long, num, long, size) {
    if (size == 1) return num;
    long sub = size / SKYNET_FANOUT, sum = 0;
    for (long i = 0; i < SKYNET_FANOUT; i++) SPAWN(lace_skynet, num + i * sub, sub);
    for (long i = 0; i < SKYNET_FANOUT; i++) sum += SYNC(lace_skynet);
    return sum;
}

TASK_3(long, lace_nqueens, int, n, int, row, const signed char *, cols) {
    if (row == n) return 1;
    int k = 0;
    for (int c = 0; c < n; c++) {
        if (!nq_safe(cols, row, c)) continue;
        signed char *b = alloca((size_t)row + 1);
        memcpy(b, cols, (size_t)row);
        b[row] = (signed char)c;
        k++;
        SPAWN(lace_nqueens, n, row + 1, b);
    }
    long res = 0;
    for (int i = 0; i < k; i++) res += SYNC(lace_nqueens);
    return res;
}

static int lace_fib(void *env, void *data) {
    fib_data *d = data;
    (void)env;
    d->result = RUN(lace_fib1, d->n);
    return 0;
}

static int lace_fib_spawn2(void *env, void *data) {
    fib_data *d = data;
    (void)env;
    d->result = RUN(lace_fib2, d->n);
    return 0;
}

static int lace_skynet(void *env, void *data) {
    skynet_data *d = data;
    (void)env;
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    d->result = RUN(lace_skynet, 0, leaves);
    return 0;
}

static int lace_nqueens(void *env, void *data) {
    nqueens_data *d = data;
    (void)env;
    signed char none[1] = {0};
    d->result = RUN(lace_nqueens, d->n, 0, none);
    return 0;
}

/* Lace has one global pool: started here, stopped in fini.  Its default task
 * deque (100 000 entries per worker, as its benchmarks use) is deep enough for
 * every recursion here. */
static int lace_env_init(unsigned threads, void **env) {
    lace_start(threads, 0);
    *env = NULL;
    /* Wake the workers once so the first timed run does not start them. */
    (void)RUN(lace_fib1, 10);
    return 0;
}

static void lace_env_fini(void *env) {
    (void)env;
    lace_stop();
}

const bench_ops bench_lace_fib = {lace_fib, NULL, NULL, NULL};
const bench_ops bench_lace_fib_spawn2 = {lace_fib_spawn2, NULL, NULL, NULL};
const bench_ops bench_lace_skynet = {lace_skynet, NULL, NULL, NULL};
const bench_ops bench_lace_nqueens = {lace_nqueens, NULL, NULL, NULL};
const bench_impl bench_impl_lace = {"lace", NULL, 0, lace_env_init, lace_env_fini};
