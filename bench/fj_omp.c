/* weft-bench — fork-join and async benchmarks with OpenMP tasks (the peer).
 * SPDX-License-Identifier: MIT */
#include "bench_work.h"
#include "fj_work.h"

#include <omp.h>

static long fib1(int n) {
    if (n < 2) return n;
    long x, y;
    #pragma omp task shared(x) firstprivate(n)
    x = fib1(n - 1);
    y = fib1(n - 2);
    #pragma omp taskwait
    return x + y;
}

static long fib2(int n) {
    if (n < 2) return n;
    long x, y;
    #pragma omp task shared(x) firstprivate(n)
    x = fib2(n - 1);
    #pragma omp task shared(y) firstprivate(n)
    y = fib2(n - 2);
    #pragma omp taskwait
    return x + y;
}

static int run_fib(fib_data *d, long (*fn)(int)) {
    #pragma omp parallel
    #pragma omp single
    d->result = fn(d->n);
    return 0;
}
static int omp_fib(void *env, void *data) { (void)env; return run_fib(data, fib1); }
static int omp_fib_spawn2(void *env, void *data) { (void)env; return run_fib(data, fib2); }
const bench_ops bench_omp_fib = {omp_fib, NULL, NULL, NULL};
const bench_ops bench_omp_fib_spawn2 = {omp_fib_spawn2, NULL, NULL, NULL};

static long skynet(long num, long size) {
    if (size == 1) return num;
    long sum[SKYNET_FANOUT], sub = size / SKYNET_FANOUT;
    for (long i = 0; i < SKYNET_FANOUT; i++) {
        #pragma omp task shared(sum) firstprivate(i, num, sub)
        sum[i] = skynet(num + i * sub, sub);
    }
    #pragma omp taskwait
    long s = 0;
    for (int i = 0; i < SKYNET_FANOUT; i++) s += sum[i];
    return s;
}

static int omp_skynet(void *env, void *data) {
    (void)env;
    skynet_data *d = data;
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    #pragma omp parallel
    #pragma omp single
    d->result = skynet(0, leaves);
    return 0;
}
const bench_ops bench_omp_skynet = {omp_skynet, NULL, NULL, NULL};

static long nqueens(int n, int row, const signed char *cols) {
    if (row == n) return 1;
    long count[32];
    int k = 0;
    for (int c = 0; c < n; c++) {
        if (!nq_safe(cols, row, c)) continue;
        #pragma omp task shared(count) firstprivate(c, k)
        {
            signed char mine[32];
            for (int r = 0; r < row; r++) mine[r] = cols[r];
            mine[row] = (signed char)c;
            count[k] = nqueens(n, row + 1, mine);
        }
        k++;
    }
    #pragma omp taskwait
    long s = 0;
    for (int i = 0; i < k; i++) s += count[i];
    return s;
}

static int omp_nqueens(void *env, void *data) {
    (void)env;
    nqueens_data *d = data;
    signed char cols[32] = {0};
    #pragma omp parallel
    #pragma omp single
    d->result = nqueens(d->n, 0, cols);
    return 0;
}
const bench_ops bench_omp_nqueens = {omp_nqueens, NULL, NULL, NULL};

static int omp_async_task(void *env, void *data) {
    (void)env;
    async_data *d = data;
    #pragma omp parallel
    #pragma omp single
    for (size_t i = 0; i < d->n; i++) {
        uint64_t *p = &d->out[i];
        #pragma omp task firstprivate(p)
        emb_kernel(p);
    }
    return 0;
}
const bench_ops bench_omp_async_task = {omp_async_task, NULL, NULL, NULL};
