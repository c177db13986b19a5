/* weft-bench — the Taskflow peers of the fork-join and async benchmarks.
 * SPDX-License-Identifier: MIT
 *
 * As Taskflow's benchmarks/fibonacci, skynet and nqueens: the root runs in
 * executor.async(..).get(); each node opens executor.task_group(), starts its
 * children with tg.silent_async and joins them with tg.corun() (the waiting
 * worker runs other tasks meanwhile).  fib spawns fib(n-1) and calls fib(n-2)
 * itself, as Taskflow's does; fib_spawn2 spawns both.  nqueens keeps the child
 * boards on the stack (Taskflow's allocates N vectors per node) and uses the
 * shared nq_safe test, so only the scheduling differs from the other impls.
 * async_task is benchmarks/async_task/taskflow.cpp: executor.silent_async in a
 * loop on main, then executor.wait_for_all().
 */
#include "bench_work.h"
#include "fj_work.h"
#include "tf_common.hpp"

namespace {

long fib1(int n, tf::Executor &ex) {
    if (n < 2) return n;
    long x = 0;
    tf::TaskGroup tg = ex.task_group();
    tg.silent_async([n, &x, &ex] { x = fib1(n - 1, ex); });
    long y = fib1(n - 2, ex);
    tg.corun();
    return x + y;
}

long fib2(int n, tf::Executor &ex) {
    if (n < 2) return n;
    long x = 0, y = 0;
    tf::TaskGroup tg = ex.task_group();
    tg.silent_async([n, &x, &ex] { x = fib2(n - 1, ex); });
    tg.silent_async([n, &y, &ex] { y = fib2(n - 2, ex); });
    tg.corun();
    return x + y;
}

long skynet(long num, long size, tf::Executor &ex) {
    if (size == 1) return num;
    long sum[SKYNET_FANOUT], sub = size / SKYNET_FANOUT;
    tf::TaskGroup tg = ex.task_group();
    for (long i = 0; i < SKYNET_FANOUT; i++)
        tg.silent_async([&sum, &ex, i, num, sub] { sum[i] = skynet(num + i * sub, sub, ex); });
    tg.corun();
    long s = 0;
    for (long v : sum) s += v;
    return s;
}

struct board {
    signed char cols[32];
};

long nqueens(int n, int row, const board &b, tf::Executor &ex) {
    if (row == n) return 1;
    long count[32];
    board kid[32];
    int k = 0;
    tf::TaskGroup tg = ex.task_group();
    for (int c = 0; c < n; c++) {
        if (!nq_safe(b.cols, row, c)) continue;
        kid[k] = b;
        kid[k].cols[row] = static_cast<signed char>(c);
        tg.silent_async([&count, &kid, &ex, k, n, row] { count[k] = nqueens(n, row + 1, kid[k], ex); });
        k++;
    }
    tg.corun();
    long s = 0;
    for (int i = 0; i < k; i++) s += count[i];
    return s;
}

int tf_fib(void *env, void *data) {
    fib_data *d = static_cast<fib_data *>(data);
    tf::Executor &ex = tf_executor(env);
    return tf_guarded("fib", [&] { d->result = ex.async([&] { return fib1(d->n, ex); }).get(); });
}
int tf_fib_spawn2(void *env, void *data) {
    fib_data *d = static_cast<fib_data *>(data);
    tf::Executor &ex = tf_executor(env);
    return tf_guarded("fib_spawn2", [&] { d->result = ex.async([&] { return fib2(d->n, ex); }).get(); });
}
int tf_skynet(void *env, void *data) {
    skynet_data *d = static_cast<skynet_data *>(data);
    tf::Executor &ex = tf_executor(env);
    long leaves = 1;
    for (int i = 0; i < d->depth; i++) leaves *= SKYNET_FANOUT;
    return tf_guarded("skynet", [&] { d->result = ex.async([&] { return skynet(0, leaves, ex); }).get(); });
}
int tf_nqueens(void *env, void *data) {
    nqueens_data *d = static_cast<nqueens_data *>(data);
    tf::Executor &ex = tf_executor(env);
    return tf_guarded("nqueens", [&] { d->result = ex.async([&] { return nqueens(d->n, 0, board{}, ex); }).get(); });
}
int tf_async_task(void *env, void *data) {
    async_data *d = static_cast<async_data *>(data);
    tf::Executor &ex = tf_executor(env);
    return tf_guarded("async_task", [&] {
        for (size_t i = 0; i < d->n; i++) {
            uint64_t *p = &d->out[i];
            ex.silent_async([p] { emb_kernel(p); });
        }
        ex.wait_for_all();
    });
}

}  // namespace

extern "C" {
const bench_ops bench_tf_fib = {tf_fib, nullptr, nullptr, nullptr};
const bench_ops bench_tf_fib_spawn2 = {tf_fib_spawn2, nullptr, nullptr, nullptr};
const bench_ops bench_tf_skynet = {tf_skynet, nullptr, nullptr, nullptr};
const bench_ops bench_tf_nqueens = {tf_nqueens, nullptr, nullptr, nullptr};
const bench_ops bench_tf_async_task = {tf_async_task, nullptr, nullptr, nullptr};
}
