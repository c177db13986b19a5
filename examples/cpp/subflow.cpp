// A subflow: while B runs it builds a graph of three tasks, B1 and B2 before
// B3, which joins B (D waits for all of it).  The graph is run three times.
// Taskflow's examples/subflow.cpp, ported to weft.hpp.  weft keeps the last
// subflow graph of a task for dump() anyway; retain(true) is accepted as a no-op.
#include <weft.hpp>

#include <cstdio>
#include <functional>
#include <iostream>
#include <numeric>
#include <vector>

int main() {

  weft::executor executor(4);
  weft::taskflow taskflow("Subflow Demo");

  auto A = taskflow.emplace([]() { std::cout << "TaskA\n"; });
  auto B = taskflow.emplace(
    [cap = std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}](weft::subflow& subflow) {
      std::cout << "TaskB is spawning B1, B2, and B3 ...\n";

      auto B1 = subflow.emplace([&]() {
        printf("  Subtask B1: reduce sum = %d\n",
               std::accumulate(cap.begin(), cap.end(), 0, std::plus<int>()));
      }).name("B1");

      auto B2 = subflow.emplace([&]() {
        printf("  Subtask B2: reduce multiply = %d\n",
               std::accumulate(cap.begin(), cap.end(), 1, std::multiplies<int>()));
      }).name("B2");

      auto B3 = subflow.emplace([&]() {
        printf("  Subtask B3: reduce minus = %d\n",
               std::accumulate(cap.begin(), cap.end(), 0, std::minus<int>()));
      }).name("B3");

      B1.precede(B3);
      B2.precede(B3);

      subflow.retain(true);
    }
  );

  auto C = taskflow.emplace([]() { std::cout << "TaskC\n"; });
  auto D = taskflow.emplace([]() { std::cout << "TaskD\n"; });
  A.name("A");
  B.name("B");
  C.name("C");
  D.name("D");

  A.precede(B);  // B runs after A
  A.precede(C);  // C runs after A
  B.precede(D);  // D runs after B
  C.precede(D);  // D runs after C

  executor.run_n(taskflow, 3).get();  // block until finished

  taskflow.dump(std::cout);

  return 0;
}
