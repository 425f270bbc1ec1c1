#!/usr/bin/env bash
# A quick GPU iteration (the full check is gpu-check.sh): configure + build the test and bench
# binaries in $BUILD (kept between calls while the device machine stays warm), then
#   TESTS='F1;F2;...'      runs pixflow_tests once per gtest filter, each under
#                          `timeout ${STEP_TIMEOUT:-120}` (a hang costs one step, not the call),
#                          as SHARDS parallel gtest shards (default 8: the CPU reference of the
#                          large-image tests is most of their time; 1 runs them in one process),
#   BENCH='REGEX'          runs pixflow-bench --filter REGEX (--json $OUT/bench-dev.json), also
#                          under the step timeout,
#   NCU='CASE@KERNEL;...'  profiles (ncu) the first launch of KERNEL in each bench CASE,
#   NCU_SRC='CASE@KERNEL;...' the same with warp-state sampling per SASS instruction: the
#                          top stalled instructions to stdout, the whole table to $OUT,
#   SANITIZE='TOOL@FILTER;...' runs compute-sanitizer over a test filter,
#   SASS='KERNEL_REGEX'    dumps the SASS of matching kernels (cuobjdump) to $OUT/sass.txt.
# Output: stdout, plus files under $OUT.
set -eu
BUILD="${BUILD:-build-gpu}"
OUT="${OUT:-./out}"
mkdir -p "$OUT"
t0=$(date +%s)
# Highway carried in .carry/hwy (gpu-check.sh builds with it): the binaries need its library.
if [ -d .carry/hwy/usr ]; then
  export LD_LIBRARY_PATH="$PWD/.carry/hwy/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DPIXFLOW_CUDA=ON -DPIXFLOW_BUILD_TESTS=ON -DPIXFLOW_BUILD_BENCH=ON >"$OUT/configure.log" 2>&1 ||
    { tail -30 "$OUT/configure.log"; exit 1; }
fi
targets=(pixflow-bench)
{ [ -n "${TESTS:-}" ] || [ -n "${SANITIZE:-}" ]; } && targets+=(pixflow_tests)
cmake --build "$BUILD" -j"${JOBS:-16}" --target "${targets[@]}" >"$OUT/build.log" 2>&1 ||
  { grep -E "error|warning" "$OUT/build.log" | head -40; tail -20 "$OUT/build.log"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
rc=0
STEP_TIMEOUT="${STEP_TIMEOUT:-120}"
if [ -n "${TESTS:-}" ]; then
  IFS=';' read -ra filters <<<"$TESTS"
  n=0
  for f in "${filters[@]}"; do
    n=$((n + 1))
    log="$OUT/tests-$n.log"  # one log a filter: a crash's log is not overwritten by the next
    echo "==== tests: $f (timeout ${STEP_TIMEOUT}s, $log)"
    r=0
    shards="${SHARDS:-8}"
    pids=()
    for ((i = 0; i < shards; i++)); do
      GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout --kill-after=5 "$STEP_TIMEOUT" \
        "$BUILD/tests/pixflow_tests" --gtest_filter="$f" >"$log.$i" 2>&1 &
      pids+=($!)
    done
    for ((i = 0; i < shards; i++)); do
      ri=0
      wait "${pids[$i]}" || ri=$?
      if [ $ri -ne 0 ] && [ $r -eq 0 ]; then r=$ri; fi
    done
    cat "$log".* >"$log" && rm -f "$log".*
    grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|Failure|Which is|trace:|seed=" \
      "$log" | head -30
    if [ $r -eq 124 ] || [ $r -eq 137 ]; then echo "TIMEOUT: $f after ${STEP_TIMEOUT}s"; fi
    if [ $r -gt 128 ] && [ $r -ne 137 ]; then
      echo "CRASH (rc=$r): $f, in $(grep -E '^\[ RUN' "$log" | tail -1)"
      tail -5 "$log"
    fi
    if [ $r -ne 0 ]; then rc=1; fi
  done
fi
# SANITIZE='TOOL@FILTER;...': compute-sanitizer --tool TOOL (memcheck, racecheck, synccheck,
# initcheck) over pixflow_tests --gtest_filter=FILTER, under the step timeout.
if [ -n "${SANITIZE:-}" ]; then
  IFS=';' read -ra runs <<<"$SANITIZE"
  m=0
  for tf in "${runs[@]}"; do
    tool="${tf%@*}" f="${tf#*@}"
    m=$((m + 1))
    slog="$OUT/sanitize-$tool-$m.log"
    echo "==== compute-sanitizer --tool $tool: $f"
    r=0
    timeout --kill-after=5 "$STEP_TIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode 3 \
      "$BUILD/tests/pixflow_tests" --gtest_filter="$f" --gtest_brief=1 >"$slog" 2>&1 || r=$?
    grep -E "ERROR SUMMARY|^\[  (PASSED|FAILED)|=========  [A-Z]" "$slog" | head -12
    if [ $r -ne 0 ]; then rc=1; echo "sanitizer: rc=$r"; fi
  done
fi
B="$BUILD/bench/pixflow-bench"
if [ -n "${BENCH:-}" ]; then
  r=0
  timeout --kill-after=5 "$STEP_TIMEOUT" "$B" --filter "$BENCH" --json "$OUT/bench-dev.json" \
    >"$OUT/bench.log" 2>&1 || r=$?
  if [ $r -ne 0 ]; then rc=1; echo "bench: rc=$r (124: timeout)"; fi
  grep -vE "^\s*$|^\[bench\]|^CUDA ERROR #900" "$OUT/bench.log" | tail -60
fi
# NCU='CASE_REGEX@KERNEL_REGEX;...': one ncu profile (the first matching kernel launch) per
# bench case.
if [ -n "${NCU:-}" ]; then
  IFS=';' read -ra cases <<<"$NCU"
  for ck in "${cases[@]}"; do
    c="${ck%@*}" k="${ck#*@}"
    echo "==== ncu: $c (kernel /$k/)"
    timeout --kill-after=5 "$STEP_TIMEOUT" ncu --clock-control none -c 1 -k "regex:$k" --section SpeedOfLight --section Occupancy \
      --section SchedulerStats --section WarpStateStats --section LaunchStats \
      --section MemoryWorkloadAnalysis_Tables "$B" --filter "$c" 2>&1 |
      tee -a "$OUT/ncu.txt" |
      grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Compute \(SM\) Thr|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issued Warp Per|No Eligible|Block Limit (Reg|Shared)|Shared Memory Configuration Size|Static Shared|Dynamic Shared|Warp Cycles Per Issued|L1/TEX Hit|Stall" | head -40
  done
fi
# NCU_SRC='CASE_REGEX@KERNEL_REGEX;...': where the warps wait, per SASS instruction.
if [ -n "${NCU_SRC:-}" ]; then
  IFS=';' read -ra cases <<<"$NCU_SRC"
  n=0
  for ck in "${cases[@]}"; do
    c="${ck%@*}" k="${ck#*@}" n=$((n + 1))
    echo "==== ncu source: $c (kernel /$k/)"
    rep="$OUT/ncu-src-$n"
    timeout --kill-after=5 "$STEP_TIMEOUT" ncu --clock-control none -c 1 -k "regex:$k" \
      --section SourceCounters --section WarpStateStats -f -o "$rep" "$B" --filter "$c" \
      >"$OUT/ncu-src-$n.log" 2>&1 || { tail -5 "$OUT/ncu-src-$n.log"; continue; }
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1 || true
    rm -f "$rep.ncu-rep"
    python3 - "$rep.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = next((r for r in rows if any("Sampling" in h for h in r)), None)
if hdr is None:
    print("no sampling columns:", rows[:3]); sys.exit()
i0 = rows.index(hdr)
col = next(i for i, h in enumerate(hdr) if "Sampling (All" in h)
src = next((i for i, h in enumerate(hdr) if h.strip() == "Source"), 1)
body = [r for r in rows[i0 + 1:] if len(r) > col and r[col].replace(".", "").isdigit()]
tot = sum(float(r[col]) for r in body) or 1
print("samples %d over %d instructions" % (tot, len(body)))
for r in sorted(body, key=lambda r: -float(r[col]))[:30]:
    print("%5.1f%%  %s  %s" % (100 * float(r[col]) / tot, r[0], r[src][:90]))
PY
  done
fi
if [ -n "${SASS:-}" ]; then
  cuobjdump --dump-sass "$(find "$BUILD" -name libpixflow.a | head -1)" >"$OUT/sass-all.txt" 2>&1 || true
  python3 - "$SASS" "$OUT/sass-all.txt" "$OUT/sass.txt" <<'PY'
import re, sys
pat, src, dst = re.compile(sys.argv[1]), sys.argv[2], sys.argv[3]
out, keep = [], False
for line in open(src, errors="replace"):
    if "Function :" in line:
        keep = bool(pat.search(line))
    if keep:
        out.append(line)
open(dst, "w").writelines(out)
print("sass: %d lines for /%s/" % (len(out), sys.argv[1]))
PY
  rm -f "$OUT/sass-all.txt"
fi
echo "total: $(($(date +%s) - t0)) s"
exit $rc
