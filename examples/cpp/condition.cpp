// A loop made of a condition task: B increments a counter and C sends the
// flow back to B until the counter is 5, then on to D.
// Taskflow's examples/condition.cpp, ported to weft.hpp.
#include <weft.hpp>

#include <cstdlib>
#include <iostream>

int main() {

  weft::executor executor;
  weft::taskflow taskflow("Conditional Tasking Demo");

  int counter;

  auto A = taskflow.emplace([&]() {
    std::cout << "initializes the counter to zero\n";
    counter = 0;
  }).name("A");

  auto B = taskflow.emplace([&]() {
    std::cout << "loops to increment the counter\n";
    counter++;
  }).name("B");

  // a lambda returning int is a condition task: it returns the successor to run
  auto C = taskflow.emplace([&]() {
    std::cout << "counter is " << counter << " -> ";
    if (counter != 5) {
      std::cout << "loops again (goes to B)\n";
      return 0;
    }
    std::cout << "breaks the loop (goes to D)\n";
    return 1;
  }).name("C");

  auto D = taskflow.emplace([&]() {
    std::cout << "done with counter equal to " << counter << '\n';
  }).name("D");

  A.precede(B);
  B.precede(C);
  C.precede(B);
  C.precede(D);

  taskflow.dump(std::cout);

  executor.run(taskflow).wait();

  // Taskflow asserts here; an assert vanishes under NDEBUG, so say it.
  if (counter != 5) {
    std::cerr << "counter is " << counter << ", expected 5\n";
    return EXIT_FAILURE;
  }

  return 0;
}
