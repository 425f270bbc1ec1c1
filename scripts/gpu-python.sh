#!/usr/bin/env bash
# The Python package on the GPU machine (issue 12), writing under $OUT:
#   1. `pip install .` into the environment of the python3 first on PATH (on the GPU machine a
#      venv that holds CuPy, PyTorch, nanobind and scikit-build-core; no build isolation: the
#      machine is offline), which builds the CUDA backend because nvcc is there (pip.log);
#   2. the `pixflow` console script of that install (`pixflow info`);
#   3. pytest over tests/python against the installed package: the CPU tests and the CuPy /
#      PyTorch tests (pytest.log, pytest.xml);
#   4. bench/python_overhead.py: what a Python call adds over the C++ API (python-overhead.json;
#      OVERHEAD_ARGS, e.g. "--frameworks cupy,torch --repeats 9").
# T_PIP (s, default 420) bounds the build; the build folder (build-py/) stays while the machine
# is warm, so a second call rebuilds only what changed.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT" || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
rc_all=0
PY="$(command -v python3)"
BIN="$(dirname "$PY")"
if ! "$PY" -m pip --version >/dev/null 2>&1; then "$PY" -m ensurepip -q >/dev/null 2>&1; fi
say "host: $(hostname), $(nproc) cores, $PY ($("$PY" -V 2>&1)), sources $(bash scripts/source-hash.sh)"
mkdir -p /tmp/ocl-vendors && echo libnvidia-opencl.so.1 >/tmp/ocl-vendors/nvidia.icd
export OCL_ICD_VENDORS=/tmp/ocl-vendors
export CMAKE_BUILD_PARALLEL_LEVEL="${JOBS:-16}"

t0=$(date +%s)
timeout "${T_PIP:-420}" "$PY" -m pip install --no-build-isolation --no-deps -v \
  --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=90 . >"$OUT/pip.log" 2>&1
rc=$?
say "pip install .: rc=$rc in $(($(date +%s) - t0)) s"
grep -E "pixflow: |Successfully|error" "$OUT/pip.log" | head -20 | tee -a "$SUMMARY"
if [ $rc -ne 0 ]; then
  tail -n 40 "$OUT/pip.log"
  exit 1
fi

# Out of the source tree, so that `import pixflow` is the installed package.
cd /tmp || exit 1
say "---- pixflow info (the console script)"
"$BIN/pixflow" info 2>&1 | head -12 | tee -a "$SUMMARY"
SITE="$("$PY" -c 'import pixflow, os; print(os.path.dirname(pixflow.__file__))')"
say "package: $SITE"
ls "$SITE" | tr '\n' ' ' | tee -a "$SUMMARY"; echo | tee -a "$SUMMARY"

t0=$(date +%s)
PIXFLOW_CLI="$SITE/bin/pixflow" timeout "${T_PYTEST:-300}" "$PY" -m pytest -q \
  -p no:cacheprovider -rs --junitxml "$OUT/pytest.xml" ${PYTEST_ARGS:-} "$ROOT/tests/python" \
  >"$OUT/pytest.log" 2>&1
rc=$?
[ $rc -ne 0 ] && rc_all=1
say "pytest: rc=$rc in $(($(date +%s) - t0)) s"
tail -n 15 "$OUT/pytest.log" | tee -a "$SUMMARY"

if [ -z "${NO_OVERHEAD:-}" ]; then
  timeout "${T_OVERHEAD:-180}" "$PY" "$ROOT/bench/python_overhead.py" \
    --json "$OUT/python-overhead.json" ${OVERHEAD_ARGS:-} >"$OUT/overhead.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && rc_all=1
  say "python_overhead: rc=$rc"
  tee -a "$SUMMARY" <"$OUT/overhead.log"
fi
exit $rc_all
