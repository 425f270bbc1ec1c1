#!/usr/bin/env bash
# compute-sanitizer over a gtest filter in SHARDS parallel processes (gtest's own sharding:
# GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX split the selected tests between them), one log a
# shard. A whole-suite memcheck in one process outgrew its time box (312 s, session 14); the
# tests are independent, so N processes on one GPU divide the wall time by up to N.
# Usage: sanitize-shards.sh TOOL SHARDS LOG_PREFIX TEST_BINARY GTEST_FILTER
# Exit status: 0 when every shard passed with no sanitizer error, 1 otherwise.
set -u
tool=$1 shards=$2 prefix=$3 bin=$4 filter=$5
pids=()
# A time box (timeout) that stops this script stops the shards too.
trap 'kill "${pids[@]}" 2>/dev/null; exit 124' TERM INT
for ((i = 0; i < shards; i++)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i compute-sanitizer --tool "$tool" \
    --error-exitcode 1 "$bin" --gtest_filter="$filter" --gtest_brief=1 >"$prefix-$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for ((i = 0; i < shards; i++)); do
  r=0
  wait "${pids[$i]}" || r=$?
  summary=$(grep -hE "ERROR SUMMARY|RACECHECK SUMMARY" "$prefix-$i.log" | tail -1)
  tests=$(grep -hE "^\[==========\] [0-9]+ tests? from" "$prefix-$i.log" | tail -1)
  # A shard that got no test (fewer tests than shards) is not a failure: the sanitizer exits
  # 255 when the program never touched the GPU.
  if [ $r -ne 0 ] && grep -qE "^\[==========\] 0 tests from 0 test suites ran" "$prefix-$i.log"; then
    echo "shard $i/$shards: no test in this shard"
    continue
  fi
  echo "shard $i/$shards: rc=$r; ${tests:-no test summary}; ${summary:-no sanitizer summary}"
  [ $r -ne 0 ] && rc=1
done
exit $rc
