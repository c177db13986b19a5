/* weft-bench — the "cpp" implementation: the graph benchmarks written with
 * include/weft.hpp (lambdas with captures, task handles, weft::future), to
 * measure the C++ layer's cost against the C API ("weft") on the same work.
 * Compiled as C++17 when a C++ compiler exists (bench/CMakeLists.txt); the file
 * ends in .cc so that the *.cpp glob of the oneTBB objects does not take it.
 * SPDX-License-Identifier: MIT
 *
 * The timed units match bench_weft.c: oneshot = make the taskflow, emplace,
 * precede, run and wait, destroy; rerun = build once, time each run. */
#include "bench_work.h"

#include <weft.hpp>

#include <cstdio>
#include <exception>
#include <vector>

namespace {

int cpp_env_init(unsigned threads, void **env) {
    try {
        auto *ex = new weft::executor(threads);
        if (ex->num_workers() != threads) {
            std::fprintf(stderr, "cpp: asked for %u workers, got %zu\n", threads, ex->num_workers());
            delete ex;
            return -1;
        }
        *env = ex;
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cpp: %s\n", e.what());
        return -1;
    }
}

void cpp_env_fini(void *env) { delete static_cast<weft::executor *>(env); }

/* As Taskflow's benchmarks/linear_chain/taskflow.cpp: a vector of every task
 * (value-initialised, as its std::vector<tf::Task> tasks(length)), then each
 * task made to precede the next (its taskflow.linearize(tasks)). */
void build_linear_chain(weft::taskflow &tf, void *data) {
    const auto *d = static_cast<const chain_data *>(data);
    std::vector<weft::task> task(d->n);
    for (size_t i = 0; i < d->n; ++i) {
        uint32_t *cell = chain_cell(d, i);
        task[i] = tf.emplace([cell] { chain_kernel(cell); });
    }
    for (size_t i = 0; i + 1 < d->n; ++i) task[i].precede(task[i + 1]);
}

/* As benchmarks/binary_tree/taskflow.cpp: a value-initialised vector of
 * handles (part of the timed build), every node emplaced in heap order, then
 * each inner node made to precede its two children. */
void build_binary_tree(weft::taskflow &tf, void *data) {
    const auto *d = static_cast<const tree_data *>(data);
    std::vector<weft::task> task(d->n + 1);
    for (size_t i = 1; i <= d->n; ++i) {
        tree_cell *c = &d->cell[i];
        task[i] = tf.emplace([c] { tree_kernel(c); });
    }
    for (size_t i = 1; 2 * i + 1 <= d->n; ++i) task[i].precede(task[2 * i], task[2 * i + 1]);
}

template <void (*Build)(weft::taskflow &, void *)>
int oneshot(void *env, void *data) {
    try {
        weft::taskflow tf;
        Build(tf, data);
        static_cast<weft::executor *>(env)->run(tf).get();
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cpp: %s\n", e.what());
        return -1;
    }
}

template <void (*Build)(weft::taskflow &, void *)>
int build(void *, void *data, void **graph) {
    try {
        auto *tf = new weft::taskflow;
        try {
            Build(*tf, data);
        } catch (...) {
            delete tf;
            throw;
        }
        *graph = tf;
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cpp: %s\n", e.what());
        return -1;
    }
}

int run(void *env, void *graph) {
    try {
        static_cast<weft::executor *>(env)->run(*static_cast<weft::taskflow *>(graph)).get();
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cpp: %s\n", e.what());
        return -1;
    }
}

void destroy(void *, void *graph) { delete static_cast<weft::taskflow *>(graph); }

} // namespace

extern "C" {
extern const bench_impl bench_impl_cpp;
extern const bench_ops bench_cpp_linear_chain, bench_cpp_binary_tree;
const bench_impl bench_impl_cpp = {"cpp", nullptr, 0, cpp_env_init, cpp_env_fini};
const bench_ops bench_cpp_linear_chain = {oneshot<build_linear_chain>, build<build_linear_chain>, run, destroy};
const bench_ops bench_cpp_binary_tree = {oneshot<build_binary_tree>, build<build_binary_tree>, run, destroy};
}
