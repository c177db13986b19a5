// Four tasks: A runs before B and C, D runs after B and C.
// Taskflow's examples/simple.cpp, ported to weft.hpp: the same lines with
// tf:: spelled weft:: and the types in lower case.
#include <weft.hpp>  // the only include you need

#include <iostream>

int main() {

  weft::executor executor;
  weft::taskflow taskflow("simple");

  auto A = taskflow.emplace([]() { std::cout << "TaskA\n"; }).name("A");
  auto B = taskflow.emplace([]() { std::cout << "TaskB\n"; }).name("B");
  auto C = taskflow.emplace([]() { std::cout << "TaskC\n"; }).name("C");
  auto D = taskflow.emplace([]() { std::cout << "TaskD\n"; }).name("D");

  A.precede(B, C);  // A runs before B and C
  D.succeed(B, C);  // D runs after  B and C

  executor.run(taskflow).wait();

  taskflow.dump(std::cout);  // the graph in DOT, on standard output

  return 0;
}
