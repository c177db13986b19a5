// A critical region of one worker: five tasks that each acquire and release
// the same semaphore run one at a time, on a four-worker executor.
// Taskflow's examples/semaphore.cpp, ported to weft.hpp.
#include <weft.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

int main() {

  weft::executor executor(4);
  weft::taskflow taskflow;

  // define a critical region of 1 worker
  weft::semaphore semaphore(1);

  std::atomic<int> inside{0}, most{0};
  auto work = [&](const char *name) {
    return [&inside, &most, name]() {
      int now = ++inside;
      if (now > most) most = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::cout << name << std::endl;
      --inside;
    };
  };

  // create five tasks in the taskflow
  std::vector<weft::task> tasks {
    taskflow.emplace(work("A")),
    taskflow.emplace(work("B")),
    taskflow.emplace(work("C")),
    taskflow.emplace(work("D")),
    taskflow.emplace(work("E"))
  };

  for (auto &task : tasks) {
    task.acquire(semaphore);
    task.release(semaphore);
  }

  executor.run(taskflow);
  executor.wait_for_all();

  // Taskflow's example only prints; say what the semaphore promised.
  std::cout << "at most " << most << " at once, " << semaphore.value() << " of "
            << semaphore.max_value() << " units free" << std::endl;
  if (most != 1 || semaphore.value() != 1) return EXIT_FAILURE;
  return 0;
}
