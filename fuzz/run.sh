#!/usr/bin/env bash
# Runs every fuzz target of a fuzz build for a bounded time (what `make fuzz` does; see
# fuzz/README.md):
#   bash fuzz/run.sh BUILD_DIR SECONDS_PER_TARGET PARALLEL [TARGET...]
# Each target starts from the committed seeds (fuzz/corpus/<t>) and the stored findings
# (fuzz/regressions/<t>); new inputs go to BUILD_DIR/fuzz-corpus/<t> (kept between runs,
# never into the repository). A crash, sanitizer report, leak, timeout (> 10 s for one
# input) or out-of-memory (2 GiB RSS, or one allocation over 512 MiB) fails the run; the
# input is saved as BUILD_DIR/fuzz-findings/<t>-<kind>-<hash> and the log's end is printed.
# Extra libFuzzer flags: FUZZ_FLAGS="-only_ascii=1 ...".
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS PARALLEL [TARGET...]}
seconds=${2:?seconds per target}
parallel=${3:?targets at a time}
shift 3
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < "$build/fuzz/targets.txt"
fi

mkdir -p "$build/fuzz-corpus" "$build/fuzz-findings" "$build/fuzz-logs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

run_one() {
  local t=$1 build=$2 seconds=$3
  local dirs=("$build/fuzz-corpus/$t" "fuzz/corpus/$t")
  [ -d "fuzz/regressions/$t" ] && dirs+=("fuzz/regressions/$t")
  mkdir -p "$build/fuzz-corpus/$t"
  local start=$SECONDS rc=0
  # shellcheck disable=SC2086
  "$build/fuzz/pixflow_fuzz_$t" "${dirs[@]}" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-findings/$t-" ${FUZZ_FLAGS:-} \
    > "$build/fuzz-logs/$t.log" 2>&1 || rc=$?
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz-logs/$t.log")
  if [ "$rc" -eq 0 ]; then
    printf 'fuzz: %-13s ok     %4ds %9s inputs\n' "$t" $((SECONDS - start)) "${runs:-?}"
    return 0
  fi
  # One write, so that reports of targets running side by side do not interleave.
  local report
  report=$(printf 'fuzz: %-13s FAILED %4ds (exit %d); log %s:\n' "$t" $((SECONDS - start)) \
             "$rc" "$build/fuzz-logs/$t.log"
           grep -v -E '^#[0-9]+ +(NEW|REDUCE|pulse|RELOAD)|NEW_FUNC' "$build/fuzz-logs/$t.log" |
             tail -n 50 | sed 's/^/  | /')
  printf '%s\n' "$report"
  return 1
}
export -f run_one

status=0
printf '%s\n' "${targets[@]}" |
  xargs -P "$parallel" -I{} bash -c 'run_one "$@"' _ {} "$build" "$seconds" || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz: a target failed; the inputs are in $build/fuzz-findings/ (fuzz/README.md says" \
       "how to reproduce one and keep it as a regression)"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s without a finding"
