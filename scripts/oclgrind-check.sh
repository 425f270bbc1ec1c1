#!/usr/bin/env bash
# The oclgrind pass (issue 11; `make test-oclgrind`, part of `make test`): runs
# tests/oclgrind_test.cpp (every __kernel of src/backends/opencl/kernels/*.cl on small
# images, results compared with the reference, every kernel function required to have run)
# under `oclgrind --check-api --data-races`, oclgrind's OpenCL device in place of the ICD's,
# three times: with the default schedules, with the A/B ones (the kernels only they reach), and
# with the new schedules not yet default (on their ops only).
#
# Usage: scripts/oclgrind-check.sh [BUILD_DIR]   (default: build; pixflow_tests and pixflow built)
#
# Fails (exit 1) when the test fails, or when oclgrind reports anything. oclgrind's exit status
# does not tell: it is the program's. Its kernel diagnostics (invalid reads and writes, data
# races, barrier divergence, ...) go to the --log file, which must stay empty; its API errors
# (--check-api: "Oclgrind - OpenCL runtime error detected") and fatal errors go to stderr,
# which must not mention oclgrind. Skips (exit 0, saying so) without oclgrind or without the
# OpenCL backend. --uninitialized stays off: docs/architecture.md (Testing) says why.
set -uo pipefail
build=${1:-build}
tests=$build/tests/pixflow_tests

if ! command -v oclgrind >/dev/null 2>&1; then
  echo "oclgrind pass: SKIPPED: oclgrind is not installed (scripts/install-deps.sh installs it)"
  exit 0
fi
if [ ! -x "$tests" ] || [ ! -x "$build/pixflow" ]; then
  echo "oclgrind pass: $tests or $build/pixflow is missing: build first (make build)" >&2
  exit 1
fi
# (the whole output first: grep -q quitting at its match would end pixflow by SIGPIPE, which
# pipefail turns into a failed test, skipping the pass)
if ! grep -q "OpenCL backend: compiled" <<<"$("$build/pixflow" info 2>/dev/null)"; then
  echo "oclgrind pass: SKIPPED: $build was built without the OpenCL backend"
  exit 0
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/pixflow-oclgrind.XXXXXX")
start=$(date +%s)
echo "oclgrind pass: $(oclgrind --version | grep -m1 Oclgrind), files in $out (kept on failure)"
# oclgrind's device gets the H100's 48 KiB of local memory (its default is 32): the tiles then
# take the shapes the GPU runs, and the fused gaussian_iir and bilateral tile kernels, which
# need more than 32 KiB, run at all.
# run LABEL ENV...: the test once under oclgrind with ENV set; its files are $out/LABEL.*;
# sets fail=1 on a failed test or any oclgrind report.
fail=0
run() {
  local label=$1 log=$out/$1.oclgrind.log
  shift
  echo "oclgrind pass, $label run: $*"
  # Only oclgrind's device is visible under oclgrind: device 0, the tests' default.
  env -u PIXFLOW_TEST_OPENCL -u PIXFLOW_TEST_OPENCL_DEVICE \
    PIXFLOW_TEST_OCLGRIND=1 PIXFLOW_OPENCL_LAUNCH_LOG="$out/launches.log" "$@" \
    oclgrind --check-api --data-races --local-mem-size 49152 --log "$log" \
    "$tests" --gtest_filter='Oclgrind.*' 2>"$out/$label.stderr.txt" | tee "$out/$label.output.txt"
  local rc=${PIPESTATUS[0]}
  if [ -s "$out/$label.stderr.txt" ]; then
    echo "oclgrind pass: stderr ($(wc -l <"$out/$label.stderr.txt") lines; the first 40):" >&2
    head -n 40 "$out/$label.stderr.txt" >&2
  fi
  if [ "$rc" -ne 0 ]; then
    echo "oclgrind pass: FAILED: the $label run's test exited with status $rc" >&2
    fail=1
  elif ! grep -q '^\[  PASSED  \] 1 test' "$out/$label.output.txt" ||
    grep -q '^\[  SKIPPED \]' "$out/$label.output.txt"; then
    echo "oclgrind pass: FAILED: the $label run's test did not run and pass" >&2
    fail=1
  fi
  if [ -s "$log" ]; then
    # One diagnostic per paragraph, its first line unindented; oclgrind stops at 1000.
    echo "oclgrind pass: FAILED: oclgrind reported $(grep '^[A-Z]' "$log" | grep -vc '^Oclgrind:') diagnostics in the $label run; by kind:" >&2
    grep '^[A-Z]' "$log" | grep -v '^Oclgrind:' | sed 's/ at .*//' | sort | uniq -c >&2
    echo "the first 60 lines of $log:" >&2
    head -n 60 "$log" >&2
    fail=1
  fi
  if grep -qi 'oclgrind' "$out/$label.stderr.txt"; then
    echo "oclgrind pass: FAILED: oclgrind reported on stderr in the $label run ($(grep -c 'OpenCL runtime error detected' "$out/$label.stderr.txt") API errors, --check-api; $out/$label.stderr.txt)" >&2
    fail=1
  fi
}
# The default schedules, then every op's A/B schedules (src/backends/opencl/variant.hpp and the
# family files' tuning notes: the earlier kernels each new one replaced, kept selectable and
# tested), then the new schedules not yet default on their ops; the launches of the later runs
# are added to the first's, and the last run checks that every __kernel ran.
run default PIXFLOW_OCLGRIND_SKIP_COVERAGE=1
run schedules PIXFLOW_OCLGRIND_APPEND=1 PIXFLOW_OCLGRIND_SKIP_COVERAGE=1 \
  PIXFLOW_OCL_LINEAR=direct PIXFLOW_OCL_IIR=line \
  PIXFLOW_OCL_MATMUL=simple PIXFLOW_OCL_MORPH=run PIXFLOW_OCL_MEDIAN=count \
  PIXFLOW_OCL_REMAP=pixel PIXFLOW_OCL_BILATERAL=pixel PIXFLOW_OCL_EPSILON=pixel
# The new schedules not yet default, on their ops only (morphology's packed u8 kernels
# morph_u8, morph_u8_comp, morph_u8_vh; box / gaussian sep_packed and filter2d rows; the median
# word kernel; bilateral's packed u8 x 3 and f32 x 1 tiles, bilateral_u8cn_tile and
# bilateral_f32c1_tile, also the default now; epsilon's u8 quad kernel); this last run checks
# that every __kernel ran over the three.
run packed PIXFLOW_OCLGRIND_APPEND=1 PIXFLOW_OCL_MORPH=packed PIXFLOW_OCL_BOX=packed \
  PIXFLOW_OCL_GAUSS=packed PIXFLOW_OCL_FILTER2D=rows PIXFLOW_OCL_MEDIAN=net,4,0,words \
  PIXFLOW_OCL_BILATERAL=packed PIXFLOW_OCL_EPSILON=quad \
  PIXFLOW_OCLGRIND_OPS=dilate,erode,open,close,gradient,tophat,blackhat,box,gaussian,filter2d,median,bilateral,epsilon
secs=$(($(date +%s) - start))
if [ $fail -ne 0 ]; then
  echo "oclgrind pass: FAILED after ${secs} s" >&2
  exit 1
fi
rm -rf "$out"
echo "oclgrind pass: OK in ${secs} s: no oclgrind diagnostic, every __kernel ran and matched ref"
