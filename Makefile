# Two commands: `make demo` and `make test`.  Everything else wraps CMake too.
#   make demo        build and run the showcase (examples/showcase)
#   make test        build and run every test (ctest), ending with "N passed, N failed"
#   make bench       build weft-bench and print results and ratio tables
#   make test-tsan   the suite under ThreadSanitizer      (build-tsan/)
#   make test-asan   the suite under ASan + UBSan         (build-asan/)
#   make install PREFIX=/usr/local
#   make docs        the API reference from the headers (Doxygen) in build/docs/html;
#                    fails on any Doxygen warning (scripts/docs.sh)
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX  ?= /usr/local
CMAKE   ?= cmake
BUILD   ?= build

.PHONY: all build demo test bench test-tsan test-asan install docs clean

all: build

build:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@$(CMAKE) --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/examples/showcase

test: build
	@scripts/run-tests.sh $(BUILD) "tests"

bench: build
	@scripts/bench.sh $(BUILD)

test-tsan:
	@$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_SANITIZE=thread \
	  -DWEFT_TEST_TIMEOUT_MULT=6 -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_SHARED=OFF >/dev/null
	@$(CMAKE) --build build-tsan -j $(JOBS)
	@TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" scripts/run-tests.sh build-tsan "tsan tests"

test-asan:
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_SANITIZE=address \
	  -DWEFT_TEST_TIMEOUT_MULT=4 -DWEFT_BUILD_BENCH=OFF -DWEFT_BUILD_SHARED=OFF >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
	  scripts/run-tests.sh build-asan "asan tests"

install: build
	@$(CMAKE) --install $(BUILD)

docs:
	@scripts/docs.sh $(BUILD)/docs

clean:
	rm -rf build build-tsan build-asan
