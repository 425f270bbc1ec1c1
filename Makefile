# The two set-up commands of the README: `make demo` and `make test`.
# Both install what is missing (apt-get), configure and build first.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test test-asan clean format

all: build

deps:
	bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/pixflow demo

# The whole suite, then the I/O, CLI and bad-input tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer (host code; CUDA off in that build).
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-asan

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPIXFLOW_CUDA=OFF \
	  -DPIXFLOW_BUILD_BENCH=OFF -DPIXFLOW_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -R 'Io|Cli|Pipeline|BadInput|Corrupt'

format:
	find include src tools tests bench -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' \
	  -o -name '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
