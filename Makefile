# The two set-up commands of the README: `make demo` and `make test`.
# Both install what is missing (apt-get), configure and build first.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# Seconds each fuzz target runs, and how many run at a time (`make fuzz`).
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= $(JOBS)
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test test-pip test-oclgrind test-asan fuzz clean format

all: build

deps:
	bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/pixflow demo

# The whole suite, then the oclgrind pass over every OpenCL kernel (test-oclgrind), then the
# I/O, CLI, bad-input, fuzz-corpus and backend-versus-reference tests (the cpu backend's
# SIMD kernels, every target the CPU has) again under AddressSanitizer and
# UndefinedBehaviorSanitizer (host code; CUDA and OpenCL off in that build: the drivers are
# not built with the sanitizers, and PoCL's LLVM would be checked instead of pixflow), then
# every fuzz target for FUZZ_SECONDS.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-pip
	$(MAKE) test-oclgrind
	$(MAKE) test-asan
	$(MAKE) fuzz

# `pip install .` as a user runs it, into a fresh venv (build-pip/venv, which also sees the
# system's NumPy and pytest), in the small configuration (CPU backend without SIMD, no OpenCL,
# no TIFF: about a minute on 2 cores; ctest already tests the full package of $(BUILD)); then
# the `pixflow` console script and the pipeline and error tests against the installed package.
PIP_VENV = build-pip/venv
test-pip: deps
	rm -rf build-pip && python3 -m venv --system-site-packages $(PIP_VENV)
	$(PIP_VENV)/bin/python -m pip install -q --disable-pip-version-check \
	  --config-settings=build-dir=build-pip/build \
	  --config-settings=cmake.define.PIXFLOW_SIMD=OFF --config-settings=cmake.define.PIXFLOW_OPENCL=OFF \
	  --config-settings=cmake.define.PIXFLOW_TIFF=OFF --config-settings=cmake.define.PIXFLOW_CUDA=OFF .
	$(PIP_VENV)/bin/pixflow info
	cd build-pip && venv/bin/python -c 'import pixflow, sys; \
	  assert "/venv/" in pixflow.__file__, pixflow.__file__; print("installed:", pixflow.__file__)'
	cd build-pip && PIXFLOW_CLI=$(CURDIR)/$(PIP_VENV)/bin/pixflow venv/bin/python -m pytest -q \
	  -p no:cacheprovider ../tests/python/test_pipeline.py ../tests/python/test_errors.py

# Every __kernel of src/backends/opencl/kernels/*.cl on small images (19x13 and 67x61) on
# oclgrind's simulated device, checked against the reference, under
# `oclgrind --check-api --data-races`: any oclgrind diagnostic (out-of-bounds access, data
# race, API error) or a kernel that never ran fails (scripts/oclgrind-check.sh,
# tests/oclgrind_test.cpp; run twice, default then A/B schedules: about 3 CPU-minutes each).
# Says SKIPPED without oclgrind or without the OpenCL backend.
test-oclgrind: build
	bash scripts/oclgrind-check.sh $(BUILD)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPIXFLOW_CUDA=OFF -DPIXFLOW_OPENCL=OFF \
	  -DPIXFLOW_BUILD_BENCH=OFF -DPIXFLOW_SANITIZE=address,undefined
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -R 'Io|Cli|Pipeline|BadInput|Corrupt|Fuzz|EveryBackend|SchemaBackends'

# The libFuzzer targets of fuzz/ (fuzz/README.md): a clang build of the library only, with
# ASan, UBSan and coverage; each target runs FUZZ_SECONDS from the committed corpus and the
# stored findings, FUZZ_JOBS at a time. Any finding fails (inputs in $(FUZZ_BUILD)/fuzz-findings).
fuzz: deps
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Fuzz \
	  -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" -DPIXFLOW_FUZZ=ON -DPIXFLOW_CUDA=OFF -DPIXFLOW_OPENCL=OFF \
	  -DPIXFLOW_BUILD_TESTS=OFF -DPIXFLOW_BUILD_BENCH=OFF -DPIXFLOW_SANITIZE=address,undefined
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target pixflow_fuzz
	bash fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_JOBS)

format:
	find include src tools tests bench fuzz -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' \
	  -o -name '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) build-pip build-py
