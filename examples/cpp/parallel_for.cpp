// Parallel loops: over a container's iterators, over indices (forward and
// reverse, with a step), and over sub-ranges of an index range.
// Taskflow's examples/parallel_for.cpp, ported to weft.hpp (its first three
// demos; Taskflow's multi-dimensional IndexRanges have no weft.hpp form yet).
// Each demo also counts what it visited and says PASS or FAIL.
#include <weft.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <vector>

static bool all_ok = true;

static void report(const char* what, long got, long want) {
  printf("  %s: %ld (want %ld) %s\n", what, got, want, got == want ? "PASS" : "FAIL");
  all_ok = all_ok && got == want;
}

void demo_for_each(int N) {

  weft::executor executor;
  weft::taskflow taskflow;

  std::vector<int> data(N);
  std::iota(data.begin(), data.end(), 0);
  std::atomic<long> sum{0};

  taskflow.for_each(
    data.begin(), data.end(),
    [&sum](int v) {
      printf("[for_each] element = %d\n", v);
      sum += v;
    },
    weft::static_partitioner()
  );

  executor.run(taskflow).get();
  report("for_each sum", sum, (long)N * (N - 1) / 2);
}

void demo_for_each_index(int N) {

  weft::executor executor;
  weft::taskflow taskflow;
  std::atomic<long> count{0};

  taskflow.for_each_index(
    0, N, 2,
    [&count](int i) {
      printf("[for_each_index forward] i = %d\n", i);
      count++;
    }
  );
  executor.run(taskflow).wait();

  if (N > 0) {
    taskflow.clear();
    taskflow.for_each_index(
      N - 1, -1, -2,
      [&count](int i) {
        printf("[for_each_index reverse] i = %d\n", i);
        count++;
      }
    );
    executor.run(taskflow).wait();
  }
  report("for_each_index visits", count, (N + 1) / 2 * 2);
}

void demo_for_each_by_index_1d(int N) {

  weft::executor executor;
  weft::taskflow taskflow;
  std::atomic<long> count{0};

  {
    weft::index_range<int> range(0, N, 2);

    taskflow.for_each_by_index(
      range,
      [&count](weft::index_range<int> sub) {
        for (int i = sub.begin(); i < sub.end(); i += sub.step_size()) {
          printf("[for_each_by_index 1D forward] i = %d\n", i);
          count++;
        }
      },
      weft::guided_partitioner()  // shrinking chunks: good for uneven work
    );

    executor.run(taskflow).wait();
  }

  if (N > 0) {
    taskflow.clear();
    weft::index_range<int> range(N - 1, -1, -1);

    taskflow.for_each_by_index(
      range,
      [&count](weft::index_range<int> sub) {
        for (int i = sub.begin(); i > sub.end(); i += sub.step_size()) {
          printf("[for_each_by_index 1D reverse] i = %d\n", i);
          count++;
        }
      }
    );

    executor.run(taskflow).wait();
  }
  report("for_each_by_index visits", count, (N + 1) / 2 + N);
}

int main(int argc, char* argv[]) {

  if (argc != 2) {
    std::cerr << "Usage: ./parallel_for N\n"
              << "  N  - controls iteration counts; must be > 0\n";
    std::exit(EXIT_FAILURE);
  }

  int N = std::atoi(argv[1]);
  if (N <= 0) {
    std::cerr << "N must be a positive integer\n";
    std::exit(EXIT_FAILURE);
  }

  printf("=== 1. STL iterator parallelism ===\n");
  demo_for_each(N);

  printf("\n=== 2. Scalar index parallelism ===\n");
  demo_for_each_index(N);

  printf("\n=== 3. 1D range-based parallelism ===\n");
  demo_for_each_by_index_1d(N);

  return all_ok ? 0 : EXIT_FAILURE;
}
