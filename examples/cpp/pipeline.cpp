// A pipeline of three stages (serial, parallel, serial) over four lines,
// carrying five tokens, run as a task between two others.
// Taskflow's examples/pipeline.cpp, ported to weft.hpp.
#include <weft.hpp>

#include <array>
#include <cstdio>
#include <iostream>

int main() {

  weft::taskflow taskflow("pipeline");
  weft::executor executor;

  const size_t num_lines = 4;

  // a buffer per line: a line carries one token at a time
  std::array<size_t, num_lines> buffer;

  weft::pipeline pl(num_lines,
    weft::pipe{weft::pipe_type::serial, [&buffer](weft::pipeflow& pf) {
      if (pf.token() == 5) {
        pf.stop();
      }
      else {
        printf("stage 1: input token = %zu\n", pf.token());
        buffer[pf.line()] = pf.token();
      }
    }},

    weft::pipe{weft::pipe_type::parallel, [&buffer](weft::pipeflow& pf) {
      printf(
        "stage 2: input buffer[%zu] = %zu\n", pf.line(), buffer[pf.line()]
      );
      buffer[pf.line()] = buffer[pf.line()] + 1;
    }},

    weft::pipe{weft::pipe_type::serial, [&buffer](weft::pipeflow& pf) {
      printf(
        "stage 3: input buffer[%zu] = %zu\n", pf.line(), buffer[pf.line()]
      );
      buffer[pf.line()] = buffer[pf.line()] + 1;
    }}
  );

  weft::task init = taskflow.emplace([]() { std::cout << "ready\n"; })
                            .name("starting pipeline");
  weft::task task = taskflow.composed_of(pl)
                            .name("pipeline");
  weft::task stop = taskflow.emplace([]() { std::cout << "stopped\n"; })
                            .name("pipeline stopped");

  init.precede(task);
  task.precede(stop);

  taskflow.dump(std::cout);

  executor.run(taskflow).wait();

  return 0;
}
