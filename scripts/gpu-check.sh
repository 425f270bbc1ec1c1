#!/usr/bin/env bash
# The one command for the GPU machine: build (sm_90, Release), the whole test suite, the CUDA
# tests under compute-sanitizer, pixflow-bench, pixflow-bench-opencl, the peers (CuPy, OpenCV on
# the CPU and through its OpenCL T-API) and the comparison.
# Everything lands in ${OUT:-./out}: summary.txt, build.log, logs.tar.gz (the other logs),
# bench.json, bench-opencl.json, peers.json, RESULTS.md, chart.png. Each stage is time-boxed; a
# failed stage is reported and the next one runs; the exit status is non-zero if any stage failed.
# NO_BENCH=1 stops after the tests (a correctness run: build, ctest, memcheck, binary checks);
# NO_TESTS=1 skips ctest and memcheck (the bench, peers and comparison after a NO_BENCH run on
# the same warm machine, whose build it reuses: the two halves fit one 10-minute call each);
# STORED_PEERS=1 takes CuPy's and OpenCV's numbers from the newest stored peers run, and OpenCV's
# OpenCL (T-API) numbers from the newest stored bench/results/*-ocvocl.json unless OCV_OCL=1,
# which runs peers.py for that peer alone (stage peers-ocl, T_PEERS_OCL s, default 150; its JSON
# is $OUT/peers-ocl.json: store it as bench/results/<gpu>-<date>-ocvocl.json).
# OCL_ONLY=1: the OpenCL quick loop instead of all the above: a CUDA-off build (-DPIXFLOW_CUDA=OFF,
# ~60 s) into ${BUILD:-build-ocl} and pixflow-bench-opencl on NVIDIA's OpenCL device into
# $OUT/bench-opencl.json; OCL_TESTS=1 also runs the OpenCL tests first (OCL_TEST_FILTER: their
# gtest filter). NO_BENCH_OCL=1 leaves pixflow-bench-opencl out (of a normal or an OCL_ONLY run).
# T_BENCH_OCL: the pixflow-bench-opencl stage's limit (s; default 120, 400 with OCL_ONLY); the
# binary gets --max-s (the limit minus 25 s) so that it stops starting cases in time and lists
# the rest as "not reached"; OCL_BENCH_ARGS: more arguments (e.g. --quick, --filter REGEX).
set -u

# Tests run under compute-sanitizer (gtest filter): the CUDA-backend tests.
# The out-of-memory test is left out: it provokes a failing cudaMalloc on purpose, which
# memcheck reports as an API error.
SANITIZER_FILTER="${SANITIZER_FILTER:-*Cuda*:*CUDA*:*Backend*:-*OutOfMemory*}"
JOBS="${JOBS:-16}"
if [ -n "${OCL_ONLY:-}" ]; then BUILD="${BUILD:-build-ocl}"; else BUILD="${BUILD:-build-gpu}"; fi
# Per-stage limits (s), and one deadline for the whole script: a stage gets at most what is left
# of TOTAL minus the time reserved for the stages after it, so one slow stage cannot push the
# run past the 10-minute call.
TOTAL="${TOTAL:-560}"
T_CONFIGURE=60 T_BUILD="${T_BUILD:-240}" T_CTEST=150 T_SANITIZER=200 T_BENCH=180 T_PEERS=100 T_COMPARE=30
if [ -n "${OCL_ONLY:-}" ]; then T_BENCH_OCL="${T_BENCH_OCL:-400}"; else T_BENCH_OCL="${T_BENCH_OCL:-120}"; fi
# A tests-only run (NO_BENCH) reserves nothing for the bench: memcheck gets what is left (the
# default filter outgrew 200 s in session 11: it was still running at 174 s).
# CTEST_RESERVE: what the ctest stage leaves for the stages after it (memcheck and the bench, or
# memcheck alone); with 200 reserved in a tests-only run whose TOTAL was cut to 430, ctest was
# left 28 s on a fresh machine (session 13) and timed out.
MEMCHECK_RESERVE=160 CTEST_RESERVE=200
# With stored peers only the bench (65-67 s for 208 cases, sessions 15-16) and compare follow
# memcheck: reserving 160 s there left memcheck 84 s after a fresh machine's 240 s build in
# session 16 (it needs ~110 s) and it timed out with every finished shard clean.
[ -n "${STORED_PEERS:-}" ] && MEMCHECK_RESERVE=100
if [ -n "${NO_BENCH:-}" ]; then T_SANITIZER=400 MEMCHECK_RESERVE=5 CTEST_RESERVE=60; fi

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT" || exit 1
OUT="${OUT:-./out}"
mkdir -p "$OUT" "$OUT/logs"
OUT="$(cd "$OUT" && pwd)"
LOGS="$OUT/logs"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
FAILED=()
START=$(date +%s)

say() { echo "$*" | tee -a "$SUMMARY"; }
# stage NAME SECONDS RESERVE LOG CMD...: runs CMD under timeout (SECONDS, or less when the
# deadline minus RESERVE seconds for later stages is nearer), logs to LOG, records the outcome.
stage() {
  local name=$1 secs=$2 reserve=$3 log=$4
  shift 4
  local t0=$(date +%s) rc
  local left=$((TOTAL - (t0 - START) - reserve))
  [ $left -lt $secs ] && secs=$left
  if [ $secs -lt 5 ]; then
    say "stage $name: SKIPPED (no time left before the deadline)"
    FAILED+=("$name")
    return 1
  fi
  echo "==== [$name] $* (limit ${secs}s)"
  timeout --kill-after=10 "$secs" "$@" >"$log" 2>&1
  rc=$?
  local dt=$(($(date +%s) - t0))
  if [ $rc -eq 0 ]; then
    say "stage $name: ok (${dt}s)"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    say "stage $name: TIMEOUT after ${secs}s"
    FAILED+=("$name")
  else
    say "stage $name: FAILED rc=$rc (${dt}s)"
    FAILED+=("$name")
  fi
  return $rc
}

# NVIDIA's OpenCL ICD for the OpenCL backend's tests.
mkdir -p /tmp/ocl-vendors
echo libnvidia-opencl.so.1 >/tmp/ocl-vendors/nvidia.icd
export OCL_ICD_VENDORS=/tmp/ocl-vendors

echo "==== nvidia-smi"
nvidia-smi 2>&1 | tee "$LOGS/nvidia-smi.txt" || say "nvidia-smi failed"
say "host: $(hostname), $(nproc) cores, $(date -u +%FT%TZ), git $(git rev-parse --short HEAD 2>/dev/null) ($(git rev-parse --abbrev-ref HEAD 2>/dev/null))"
# The device tool copies the working tree with the git metadata of an earlier checkout, so the
# commit above can be stale: a hash of the sources names the tree that was built (compare it
# with `scripts/source-hash.sh` where the tree came from).
say "sources: $(bash scripts/source-hash.sh)"

# Packs the logs into one file (few files come back from the machine).
pack_logs() {
  tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs 2>/dev/null && rm -rf "$LOGS"
}

# ---- Highway, carried: the GPU machine has no libhwy-dev. `.carry/hwy` holds the Debian 12
# packages' contents (apt-get download libhwy-dev libhwy1; dpkg-deb -x each into .carry/hwy);
# with it the cpu backend's SIMD kernels are built and tested on this host's CPU (AVX-512 where
# it has it, which the 2-core development machine lacks).
EXTRA_CMAKE=()
if [ -d "$ROOT/.carry/hwy/usr" ]; then
  # No build RPATH: it would name the carried folder (inside the source tree) in every binary,
  # which the no-build-path test rightly refuses; the loader finds libhwy by LD_LIBRARY_PATH.
  EXTRA_CMAKE+=("-DCMAKE_PREFIX_PATH=$ROOT/.carry/hwy/usr" -DCMAKE_SKIP_BUILD_RPATH=ON)
  export LD_LIBRARY_PATH="$ROOT/.carry/hwy/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# opencl_summary: the OpenCL test stage's device line, outcome and (when it was cut by its
# limit) how many tests had passed and which one was running.
opencl_summary() {
  { grep -m1 -F "[pixflow] OpenCL tests run on" "$LOGS/opencl.log"
    grep -E "^\[  (PASSED|FAILED) +\]|differs from ref" "$LOGS/opencl.log" | head -12
    echo "opencl tests: $(grep -c '^\[       OK \]' "$LOGS/opencl.log") passed," \
      "$(grep -c '^\[  FAILED  \]' "$LOGS/opencl.log") failed lines, last started:" \
      "$(grep '^\[ RUN      \]' "$LOGS/opencl.log" | tail -1 | cut -c14-)"
  } | tee -a "$SUMMARY"
}

# bench_opencl RESERVE: pixflow-bench-opencl (on the first NVIDIA OpenCL device, its default)
# into $OUT/bench-opencl.json, as a stage of at most T_BENCH_OCL s (less when the deadline minus
# RESERVE is nearer). The untuned kernels can be slow: the binary's --max-s stops it starting
# cases 25 s before the stage's limit (the rest are "not reached" in its JSON, which it rewrites
# around every case, so even a kill leaves the finished cases and names the one running).
bench_opencl() {
  local reserve=$1 bin="$BUILD/bench/pixflow-bench-opencl"
  if [ ! -x "$bin" ]; then
    say "stage bench-opencl: $bin not built"
    FAILED+=(bench-opencl)
    return 1
  fi
  local secs=$T_BENCH_OCL left=$((TOTAL - ($(date +%s) - START) - reserve))
  [ $left -lt $secs ] && secs=$left
  local cap=$((secs - 25))
  [ $cap -lt 5 ] && cap=5
  stage bench-opencl "$T_BENCH_OCL" "$reserve" "$LOGS/bench-opencl.log" "$bin" --max-s "$cap" \
    --json "$OUT/bench-opencl.json" ${OCL_BENCH_ARGS:-}
  grep -E "^pixflow-bench-opencl:|FAILED|device lost|not reached" "$LOGS/bench-opencl.log" |
    head -30 | tee -a "$SUMMARY"
}

# peers_ocl: OpenCV's OpenCL path alone (peers.py --skip cupy,cvcuda,opencv: one CPU call a case
# for its check and fallback test) into $OUT/peers-ocl.json.
T_PEERS_OCL="${T_PEERS_OCL:-150}"
peers_ocl() {
  stage peers-ocl "$T_PEERS_OCL" 15 "$LOGS/peers-ocl.log" python3 bench/peers.py \
    --skip cupy,cvcuda,opencv --budget $((T_PEERS_OCL - 15)) --json "$OUT/peers-ocl.json" \
    ${PEERS_ARGS:-}
  grep -E "OpenCL device|trace probe|^peers.py:" "$LOGS/peers-ocl.log" | tail -n 4 | tee -a "$SUMMARY"
}

# The newest stored file of bench/results matching a glob, or nothing.
newest() { ls "$ROOT"/bench/results/$1 2>/dev/null | sort | tail -1; }

finish() {
  pack_logs
  echo
  echo "================ summary ($(($(date +%s) - START)) s)"
  cat "$SUMMARY"
  [ ${#FAILED[@]} -gt 0 ] && { echo "FAILED stages: ${FAILED[*]}"; exit 1; }
  echo "all stages ok"
  exit 0
}

# ---- OCL_ONLY: CUDA-off build, (OpenCL tests,) pixflow-bench-opencl, comparison; then stop ----
if [ -n "${OCL_ONLY:-}" ]; then
  targets=(pixflow-bench-opencl pixflow_cli)
  tests=OFF
  [ -n "${OCL_TESTS:-}" ] && { targets+=(pixflow_tests); tests=ON; }
  BUILD_OK=0
  if stage configure $T_CONFIGURE 60 "$LOGS/configure.log" \
      cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPIXFLOW_CUDA=OFF -DPIXFLOW_OPENCL=ON \
      -DPIXFLOW_BUILD_TESTS=$tests -DPIXFLOW_BUILD_BENCH=ON "${EXTRA_CMAKE[@]}"; then
    grep -E "pixflow" "$LOGS/configure.log" | tee -a "$SUMMARY"
    stage build $T_BUILD 60 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" \
      --target "${targets[@]}" && BUILD_OK=1
  fi
  if [ $BUILD_OK -ne 1 ]; then
    echo "---- last 60 lines of the configure or build log"
    tail -n 60 "$OUT/build.log" 2>/dev/null || tail -n 60 "$LOGS/configure.log"
    finish
  fi
  "$BUILD/pixflow" info 2>&1 | grep -E "OpenCL|^    opencl:" | tee -a "$SUMMARY"
  if [ -n "${OCL_TESTS:-}" ]; then
    CL_NVIDIA=$("$BUILD/pixflow" info 2>/dev/null | sed -n 's/^ *opencl:\([0-9]*\) .*NVIDIA CUDA.*/\1/p' | head -1)
    [ -n "$CL_NVIDIA" ] && export PIXFLOW_TEST_OPENCL_DEVICE=$CL_NVIDIA
    # The device tests, the schema harness and every schedule's edge tests (the suites named
    # *Opencl and OpenclSchedules); a fresh machine builds each program variant cold (NVIDIA:
    # 0.3-0.6 s each), which is most of the time.
    stage opencl "${T_OPENCL:-200}" 120 "$LOGS/opencl.log" "$BUILD/tests/pixflow_tests" \
      --gtest_filter="${OCL_TEST_FILTER:-OpenclBackend.*:Catalogue/SchemaBackends.*:CliRun.Opencl*:OpenclSchedules.*:*Opencl.*}"
    opencl_summary
  fi
  if [ -n "${NO_BENCH_OCL:-}" ]; then
    say "stage bench-opencl: skipped (NO_BENCH_OCL)"
  else
    bench_opencl $([ -n "${OCV_OCL:-}" ] && echo $((T_PEERS_OCL + 20)) || echo 20)
  fi
  [ -n "${OCV_OCL:-}" ] && peers_ocl
  # RESULTS.md: this run beside the newest stored CUDA run and the stored peers.
  CMP_ARGS=()
  [ -f "$OUT/bench-opencl.json" ] && CMP_ARGS+=(--opencl "$OUT/bench-opencl.json")
  CUDA_JSON="$(newest '*-s[0-9]*.json')"
  [ -n "$CUDA_JSON" ] && CMP_ARGS+=(--bench "$CUDA_JSON") && say "CUDA column: ${CUDA_JSON#$ROOT/} (stored)"
  # The first file that has a peer's cell wins: this run's OpenCV-OpenCL numbers first.
  [ -f "$OUT/peers-ocl.json" ] && CMP_ARGS+=(--peers "$OUT/peers-ocl.json")
  for g in '*-peers.json' '*-cvcuda.json' '*-ocvocl.json'; do
    f="$(newest "$g")"
    [ -n "$f" ] && CMP_ARGS+=(--peers "$f")
  done
  stage compare $T_COMPARE 0 "$LOGS/compare.log" python3 bench/compare.py "${CMP_ARGS[@]}" \
    --md "$OUT/RESULTS.md" --png "$OUT/chart.png"
  tail -n 3 "$LOGS/compare.log" | tee -a "$SUMMARY"
  finish
fi

# ---- build: on failure, the last 60 lines and stop ----
BUILD_OK=0
if stage configure $T_CONFIGURE 200 "$LOGS/configure.log" \
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DPIXFLOW_CUDA=ON -DPIXFLOW_BUILD_TESTS=ON -DPIXFLOW_BUILD_BENCH=ON \
    -DPIXFLOW_PYTEST_STRICT=OFF "${EXTRA_CMAKE[@]}"; then
  grep -E "pixflow|NPP|CUBLAS|Warning" "$LOGS/configure.log" | tee -a "$SUMMARY"
  stage build $T_BUILD 200 "$OUT/build.log" cmake --build "$BUILD" -j"$JOBS" && BUILD_OK=1
  if [ -f "$BUILD/bench/PIXFLOW_HAVE_NPP_try_compile.log" ]; then
    cp "$BUILD/bench/PIXFLOW_HAVE_NPP_try_compile.log" "$LOGS/"
    say "NPP peer file did not compile (NPP column off): logs/PIXFLOW_HAVE_NPP_try_compile.log"
    grep -m5 -E "error" "$BUILD/bench/PIXFLOW_HAVE_NPP_try_compile.log" | tee -a "$SUMMARY"
  fi
  if [ $BUILD_OK -ne 1 ]; then
    echo "---- last 60 lines of $OUT/build.log"
    tail -n 60 "$OUT/build.log"
  fi
else
  echo "---- last 60 lines of configure.log"
  tail -n 60 "$LOGS/configure.log"
  cp "$LOGS/configure.log" "$OUT/build.log"
fi
if [ $BUILD_OK -ne 1 ]; then
  pack_logs
  echo "================ summary"
  cat "$SUMMARY"
  echo "FAILED stages: ${FAILED[*]} (build failed: nothing else was run)"
  exit 1
fi

"$BUILD/pixflow" info 2>&1 | grep -E "CPU backend|CPU threads|OpenCL|^    opencl:" | tee -a "$SUMMARY"
# The OpenCL tests run on NVIDIA's device (PoCL, also registered here, is what CI tests).
CL_NVIDIA=$("$BUILD/pixflow" info 2>/dev/null | sed -n 's/^ *opencl:\([0-9]*\) .*NVIDIA CUDA.*/\1/p' | head -1)
if [ -n "$CL_NVIDIA" ]; then
  export PIXFLOW_TEST_OPENCL_DEVICE=$CL_NVIDIA
  say "OpenCL tests on opencl:$CL_NVIDIA (NVIDIA)"
else
  say "OpenCL: no NVIDIA OpenCL device found (the OpenCL tests run on whatever is device 0)"
fi
grep -m1 "model name" /proc/cpuinfo | tee -a "$SUMMARY"

# ---- tests ----
{
  # -V: every test's output is in the log, so GTEST_SKIP reasons and the "[pixflow] CUDA
  # backend not tested" note can be found.
  if [ -n "${NO_TESTS:-}" ]; then
    say "stage ctest, memcheck: skipped (NO_TESTS)"
  else
  # The suite without OpenCL (its family tests' first, per-sample kernels on NVIDIA's driver did
  # not finish in 8 minutes in session 21); the OpenCL tests run as the next stage.
  stage ctest $T_CTEST $CTEST_RESERVE "$LOGS/ctest.log" \
    env PIXFLOW_TEST_OPENCL=off ctest --test-dir "$BUILD" -j"$JOBS" -V --timeout 120
  {
    echo "---- ctest"
    grep -E "tests passed|tests failed|Total Test time" "$LOGS/ctest.log"
    echo "tests run: $(grep -cE '^ *[0-9]+/[0-9]+ Test +#' "$LOGS/ctest.log")"
    echo "skipped: $(grep -cE '^ *[0-9]+/[0-9]+ Test +#.*(\*\*\*Skipped|Not Run|Disabled)' "$LOGS/ctest.log")"
    grep -E '^ *[0-9]+/[0-9]+ Test +#.*(\*\*\*Skipped|Not Run|Disabled)' "$LOGS/ctest.log" | sed 's/^ */  /' | head -40
    grep -E "^ *[0-9]+ - .*(Failed|Timeout|SEGFAULT|Exception)" "$LOGS/ctest.log" | sed 's/^/  FAILED /' | head -40
    grep -m3 -F "[pixflow] CUDA backend not tested" "$LOGS/ctest.log"
    grep -m1 -F "[pixflow] OpenCL tests run on" "$LOGS/ctest.log"
    grep -m1 -F "[pixflow] OpenCL backend not tested" "$LOGS/ctest.log"
  } | tee -a "$SUMMARY"
  TESTBIN=$(find "$BUILD" -maxdepth 3 -type f -name pixflow_tests -perm -u+x | head -1)
  if [ -n "$TESTBIN" ]; then
    # ---- OpenCL on NVIDIA's device: the device tests and the schema harness (every op,
    # awkward sizes, every border / depth / channel count against the reference; 19 s in
    # session 21). The family tests' large images wait for faster kernels.
    stage opencl "${T_OPENCL:-90}" $MEMCHECK_RESERVE "$LOGS/opencl.log" "$TESTBIN" \
      --gtest_filter='OpenclBackend.*:Catalogue/SchemaBackends.*:CliRun.Opencl*'
    opencl_summary
    # ---- compute-sanitizer on the CUDA-backend tests ----
    if command -v compute-sanitizer >/dev/null; then
      # MEMCHECK_SHARDS processes in parallel (scripts/sanitize-shards.sh): in one process the
      # filter ran past 312 s in session 14.
      # Without the OpenCL backend (PIXFLOW_TEST_OPENCL=off): memcheck checks the CUDA kernels,
      # and the OpenCL tests would only add time there.
      stage memcheck $T_SANITIZER $MEMCHECK_RESERVE "$LOGS/memcheck.log" \
        env PIXFLOW_TEST_OPENCL=off bash scripts/sanitize-shards.sh \
        memcheck "${MEMCHECK_SHARDS:-8}" "$LOGS/memcheck-shard" "$TESTBIN" "$SANITIZER_FILTER"
      { cat "$LOGS/memcheck.log"
        grep -hE "^\[  FAILED  \]" "$LOGS"/memcheck-shard-*.log | head -10
        grep -hE "Invalid|out of bounds|uninitialized" "$LOGS"/memcheck-shard-*.log | head -10; } | tee -a "$SUMMARY"
    else
      say "stage memcheck: compute-sanitizer not found"
      FAILED+=(memcheck)
    fi
  else
    say "stage memcheck: no pixflow_tests binary"
    FAILED+=(memcheck)
  fi
  fi  # NO_TESTS

  # ---- the shipped binary holds no build path (no __FILE__ of the source tree) ----
  {
    echo "---- build paths in $BUILD/pixflow: $(strings "$BUILD/pixflow" | grep -c '/src/') (want 0)"
    strings "$BUILD/pixflow" | grep -m5 '/src/'
  } | tee -a "$SUMMARY"

  # ---- benchmark ----
  BENCH="$BUILD/bench/pixflow-bench"
  if [ -n "${NO_BENCH:-}" ]; then
    say "stage bench: skipped (NO_BENCH)"
  elif [ -x "$BENCH" ]; then
    stage bench $T_BENCH 70 "$LOGS/bench.log" "$BENCH" --json "$OUT/bench.json" ${BENCH_ARGS:-}
    grep -E "^pixflow-bench:|FAILED|context lost" "$LOGS/bench.log" | head -30 | tee -a "$SUMMARY"
  else
    say "stage bench: $BENCH not built"
    FAILED+=(bench)
  fi
  # ---- the same cases on the OpenCL backend (NVIDIA's OpenCL device), before the peers: what
  # is left after it goes to the peers and the comparison.
  if [ -n "${NO_BENCH:-}" ] || [ -n "${NO_BENCH_OCL:-}" ]; then
    say "stage bench-opencl: skipped (${NO_BENCH:+NO_BENCH}${NO_BENCH_OCL:+NO_BENCH_OCL})"
  else
    if [ -z "${STORED_PEERS:-}" ]; then r=$((T_PEERS + 15))
    elif [ -n "${OCV_OCL:-}" ]; then r=$((T_PEERS_OCL + 30))
    else r=30; fi
    bench_opencl $r
  fi
}

if [ -n "${NO_BENCH:-}" ]; then
  pack_logs
  echo
  echo "================ summary ($(($(date +%s) - START)) s)"
  cat "$SUMMARY"
  [ ${#FAILED[@]} -gt 0 ] && { echo "FAILED stages: ${FAILED[*]}"; exit 1; }
  echo "all stages ok"
  exit 0
fi

# ---- peers and the comparison ----
# CV-CUDA, when scripts/cvcuda-carry.sh has unpacked its wheel on this machine.
if [ -d "$BUILD/cvcuda-site/cvcuda" ]; then
  export PYTHONPATH="$ROOT/$BUILD/cvcuda-site${PYTHONPATH:+:$PYTHONPATH}"
fi
CMP_ARGS=()
[ -f "$OUT/bench.json" ] && CMP_ARGS+=(--bench "$OUT/bench.json")
[ -f "$OUT/bench-opencl.json" ] && CMP_ARGS+=(--opencl "$OUT/bench-opencl.json")
if [ -n "${STORED_PEERS:-}" ]; then
  # OpenCV's OpenCL path: this run's (OCV_OCL=1), else the newest stored one.
  if [ -n "${OCV_OCL:-}" ]; then
    peers_ocl
    [ -f "$OUT/peers-ocl.json" ] && CMP_ARGS+=(--peers "$OUT/peers-ocl.json")
  else
    OCVOCL_JSON="$(newest '*-ocvocl.json')"
    [ -n "$OCVOCL_JSON" ] && CMP_ARGS+=(--peers "$OCVOCL_JSON") &&
      say "OpenCV-OpenCL column: ${OCVOCL_JSON#$ROOT/} (stored)"
  fi
  # STORED_PEERS=1: no peers stage; CuPy's and OpenCV's times from the newest stored run
  # (bench/results/*-peers.json: they do not change with pixflow, and the stage costs ~100 s
  # of a call). NPP runs in pixflow-bench's own process either way.
  PEERS_JSON="$(ls "$ROOT"/bench/results/*-peers.json 2>/dev/null | sort | tail -1)"
  say "stage peers: skipped (STORED_PEERS: ${PEERS_JSON#$ROOT/})"
  [ -n "$PEERS_JSON" ] && CMP_ARGS+=(--peers "$PEERS_JSON")
else
  stage peers $T_PEERS 15 "$LOGS/peers.log" python3 bench/peers.py --json "$OUT/peers.json" ${PEERS_ARGS:-}
  tail -n 3 "$LOGS/peers.log" | tee -a "$SUMMARY"
  [ -f "$OUT/peers.json" ] && CMP_ARGS+=(--peers "$OUT/peers.json")
fi
# Without CV-CUDA on this machine (its wheel is carried in three calls), its column comes from
# the newest stored CV-CUDA-only run (bench/results/*-cvcuda.json; its date is in RESULTS.md).
if [ ! -d "$BUILD/cvcuda-site/cvcuda" ]; then
  CVCUDA_JSON="${CVCUDA_JSON:-$(ls "$ROOT"/bench/results/*-cvcuda.json 2>/dev/null | sort | tail -1)}"
  [ -n "$CVCUDA_JSON" ] && CMP_ARGS+=(--peers "$CVCUDA_JSON")
fi
stage compare $T_COMPARE 0 "$LOGS/compare.log" python3 bench/compare.py "${CMP_ARGS[@]}" \
  --md "$OUT/RESULTS.md" --png "$OUT/chart.png"
tail -n 3 "$LOGS/compare.log" | tee -a "$SUMMARY"

pack_logs

# ---- summary last ----
echo
echo "================ summary ($(($(date +%s) - START)) s)"
cat "$SUMMARY"
if [ -f "$OUT/RESULTS.md" ]; then
  echo "---- RESULTS.md (8192x8192 u8 rows)"
  grep -E "^\| (case|---)|8192x8192" "$OUT/RESULTS.md" | grep -E "^\| (case|---)|u8x1 " | head -45
fi
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "FAILED stages: ${FAILED[*]}"
  exit 1
fi
echo "all stages ok"
exit 0
