#!/usr/bin/env bash
# A/B of two trees on one GPU machine: a base tree (ab-base/, a `git archive` of a ref made
# here) and the working tree, built side by side, then the working tree's tests, a sanitizer
# pass over its new paths, and the benchmark cases of both interleaved (ROUNDS rounds), with a
# table of both times per case. Why: timings are compared only within one machine (H100 and
# H200 differ; so do two H100s by a few %), and a device call may find a fresh machine, so
# both builds happen in the call that times them.
#   here:   scripts/gpu-ab.sh prepare [REF]     (REF: main by default; writes ab-base/, ignored)
#   device: T='GTEST_FILTER' S='SANITIZER_FILTER' F='BENCH_REGEX' scripts/gpu-ab.sh run
#           (the device tool's carry: ["ab-base"]); R='RACECHECK_FILTER', ROUNDS (2), JOBS (16)
#           optional; the tests (T) run in 8 parallel gtest shards. An unset T, S, R or F skips that step, and the builds are incremental, so a run that does not
#           fit one call (600 s) splits into a tests call and, on the still-warm machine, a
#           bench call.
set -u
cmd=${1:-}
if [ "$cmd" = prepare ]; then
  ref=${2:-main}
  rm -rf ab-base && mkdir ab-base && git archive "$ref" | tar -x -C ab-base
  rm -rf ab-base/bench/results ab-base/docs ab-base/python
  echo "ab-base/ = $(git rev-parse --short "$ref") ($(du -sh ab-base | cut -f1))"
  exit 0
fi
[ "$cmd" = run ] || { echo "usage: $0 prepare [REF] | run" >&2; exit 2; }
[ -d ab-base ] || { echo "gpu-ab: no ab-base/ (run '$0 prepare' here and carry it)" >&2; exit 2; }
export OUT="${OUT:-./out}"
mkdir -p "$OUT"
t0=$(date +%s)
J=${JOBS:-16}
cfg() {
  [ -f "$2/CMakeCache.txt" ] || cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPIXFLOW_CUDA=ON -DPIXFLOW_BUILD_TESTS="$3" \
    -DPIXFLOW_BUILD_BENCH=ON >"$OUT/cfg-$2.log" 2>&1
}
# The working tree first with most of the cores (its tests need it first), the base beside it.
( cfg ab-base build-ab-base OFF && cmake --build build-ab-base -j$((J / 2)) --target pixflow-bench \
    >"$OUT/build-ab-base.log" 2>&1
  echo "base build rc=$? $(($(date +%s) - t0)) s" ) &
cfg . build-gpu ON && cmake --build build-gpu -j$((J / 2 + 1)) --target pixflow-bench pixflow_tests \
  >"$OUT/build.log" 2>&1
r=$?
echo "tree build rc=$r $(($(date +%s) - t0)) s"
[ $r -ne 0 ] && { grep -E "error" "$OUT/build.log" | head -20; wait; exit 1; }
rc=0
if [ -n "${T:-}" ]; then
  # In 8 parallel gtest shards (one process over a whole family's tests ran past 240 s in
  # session 16); a shard's log is tests-N.log.
  pids=()
  for ((i = 0; i < 8; i++)); do
    GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout "${T_TESTS:-240}" \
      build-gpu/tests/pixflow_tests --gtest_filter="$T" --gtest_brief=1 >"$OUT/tests-$i.log" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  for ((i = 0; i < 8; i++)); do
    if grep -q "^\[  PASSED" "$OUT/tests-$i.log" && ! grep -q "^\[  FAILED" "$OUT/tests-$i.log"; then
      :
    else
      rc=1
      echo "tests shard $i: not passed"
      grep -E "^\[  FAILED|Failure|rror" "$OUT/tests-$i.log" | head -10
    fi
  done
  echo "tests rc=$rc $(($(date +%s) - t0)) s: $(cat "$OUT"/tests-*.log |
    grep -Eo '[0-9]+ tests? from [0-9]+ test suites? ran' | awk '{s += $1} END {print s}') ran"
fi
wait
if [ -n "${S:-}" ]; then
  echo "==== memcheck: $S"
  timeout "${T_SANITIZER:-150}" bash scripts/sanitize-shards.sh memcheck 8 "$OUT/mc" \
    build-gpu/tests/pixflow_tests "$S" || rc=1
fi
if [ -n "${R:-}" ]; then
  echo "==== racecheck: $R"
  timeout "${T_SANITIZER:-150}" bash scripts/sanitize-shards.sh racecheck 8 "$OUT/rc" \
    build-gpu/tests/pixflow_tests "$R" || rc=1
fi
echo "elapsed $(($(date +%s) - t0)) s"
[ -n "${F:-}" ] || { echo "total $(($(date +%s) - t0)) s (no F: no bench)"; exit $rc; }
for ((i = 1; i <= ${ROUNDS:-2}; i++)); do
  build-ab-base/bench/pixflow-bench --filter "$F" --json "$OUT/base-$i.json" >"$OUT/base-$i.log" 2>&1
  build-gpu/bench/pixflow-bench --filter "$F" --json "$OUT/new-$i.json" >"$OUT/new-$i.log" 2>&1 || rc=1
done
python3 - "$OUT" "${ROUNDS:-2}" <<'PY'
import json, os, sys
o, n = sys.argv[1], int(sys.argv[2])
def load(name):
    try:
        return {r["case"]: r for r in json.load(open(os.path.join(o, name)))["rows"]}
    except Exception as e:
        print(name, e)
        return {}
base = [load("base-%d.json" % i) for i in range(1, n + 1)]
new = [load("new-%d.json" % i) for i in range(1, n + 1)]
us = lambda runs, k: " ".join("%8.1f" % r[k]["us"] if k in r else "       -" for r in runs)
for k in base[0] or (new[0] if new else {}):
    checks = ",".join(sorted({r[k]["check"] for r in new if k in r})) or "-"
    print("%-44s base %s  new %s  %s" % (k, us(base, k), us(new, k), checks))
PY
echo "total $(($(date +%s) - t0)) s"
exit $rc
