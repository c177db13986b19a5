// Fibonacci by recursive fork-join: each call runs fib(N-1) in a task group
// while it computes fib(N-2) itself, then waits for the group.
// Taskflow's examples/fibonacci.cpp, ported to weft.hpp.
#include <weft.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

weft::executor& get_executor() {
  static weft::executor executor;
  return executor;
}

size_t spawn_async(size_t N) {

  if (N < 2) {
    return N;
  }

  size_t res1, res2;

  // a group of the task running on this thread (weft::error outside a task)
  weft::task_group tg = get_executor().task_group();

  tg.silent_async([N, &res1]() { res1 = spawn_async(N - 1); });

  res2 = spawn_async(N - 2);

  tg.corun();  // waits without blocking the worker; rethrows a child's exception

  return res1 + res2;
}

int main(int argc, char* argv[]) {

  if (argc != 2) {
    std::cerr << "usage: ./fibonacci N\n";
    std::exit(EXIT_FAILURE);
  }

  size_t N = std::atoi(argv[1]);

  auto& executor = get_executor();

  auto tbeg = std::chrono::steady_clock::now();
  printf("fib[%zu] = %zu\n", N, executor.async([N]() { return spawn_async(N); }).get());
  auto tend = std::chrono::steady_clock::now();

  std::cout << "elapsed time: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(tend - tbeg).count()
            << " ms\n";

  return 0;
}
