// weft-bench — fork-join and async benchmarks with oneTBB task_group (the peer).
// The thread count comes from the global_control bench_tbb.cpp installs.
// SPDX-License-Identifier: MIT
#include "bench_work.h"
#include "tbb_guard.hpp"
#include "fj_work.h"

#include <cstdio>

#include <tbb/task_group.h>

namespace {


long fib1(int n) {
    if (n < 2) return n;
    long x = 0;
    tbb::task_group g;
    g.run([&] { x = fib1(n - 1); });
    long y = fib1(n - 2);
    g.wait();
    return x + y;
}

long fib2(int n) {
    if (n < 2) return n;
    long x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = fib2(n - 1); });
    g.run([&] { y = fib2(n - 2); });
    g.wait();
    return x + y;
}

long skynet(long num, long size) {
    if (size == 1) return num;
    long sum[SKYNET_FANOUT], sub = size / SKYNET_FANOUT;
    tbb::task_group g;
    for (long i = 0; i < SKYNET_FANOUT; i++) g.run([&sum, i, num, sub] { sum[i] = skynet(num + i * sub, sub); });
    g.wait();
    long s = 0;
    for (long v : sum) s += v;
    return s;
}

struct board {
    signed char cols[32];
};

long nqueens(int n, int row, const board &b) {
    if (row == n) return 1;
    long count[32];
    board kid[32];
    int k = 0;
    tbb::task_group g;
    for (int c = 0; c < n; c++) {
        if (!nq_safe(b.cols, row, c)) continue;
        kid[k] = b;
        kid[k].cols[row] = static_cast<signed char>(c);
        g.run([&count, &kid, k, n, row] { count[k] = nqueens(n, row + 1, kid[k]); });
        k++;
    }
    g.wait();
    long s = 0;
    for (int i = 0; i < k; i++) s += count[i];
    return s;
}

int tbb_fib(void *, void *data) {
    fib_data *d = static_cast<fib_data *>(data);
    return tbb_guarded("fib", [&] { d->result = fib1(d->n); });
}
int tbb_fib_spawn2(void *, void *data) {
    fib_data *d = static_cast<fib_data *>(data);
    return tbb_guarded("fib_spawn2", [&] { d->result = fib2(d->n); });
}
int tbb_skynet(void *, void *data) {
    skynet_data *d = static_cast<skynet_data *>(data);
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    return tbb_guarded("skynet", [&] { d->result = skynet(0, leaves); });
}
int tbb_nqueens(void *, void *data) {
    nqueens_data *d = static_cast<nqueens_data *>(data);
    return tbb_guarded("nqueens", [&] { d->result = nqueens(d->n, 0, board{}); });
}
int tbb_async_task(void *, void *data) {
    async_data *d = static_cast<async_data *>(data);
    return tbb_guarded("async_task", [&] {
        tbb::task_group g;
        for (size_t i = 0; i < d->n; i++) {
            uint64_t *p = &d->out[i];
            g.run([p] { emb_kernel(p); });
        }
        g.wait();
    });
}

} // namespace

extern "C" {
const bench_ops bench_tbb_fib = {tbb_fib, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_fib_spawn2 = {tbb_fib_spawn2, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_skynet = {tbb_skynet, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_nqueens = {tbb_nqueens, nullptr, nullptr, nullptr};
const bench_ops bench_tbb_async_task = {tbb_async_task, nullptr, nullptr, nullptr};
}
