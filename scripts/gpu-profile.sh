#!/usr/bin/env bash
# Profiles chosen pixflow-bench cases with Nsight Compute on the GPU machine (one kernel
# launch each): speed of light, memory, warp stall reasons, instruction mix. Writes
# ${OUT:-./out}/profile.txt. Usage: scripts/gpu-profile.sh 'REGEX1' 'REGEX2' ...
set -u
OUT="${OUT:-./out}"
mkdir -p "$OUT"
BUILD="${BUILD:-build-prof}"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DPIXFLOW_BUILD_TESTS=OFF >"$OUT/prof-build.log" 2>&1 &&
  cmake --build "$BUILD" -j16 --target pixflow-bench >>"$OUT/prof-build.log" 2>&1 ||
  { tail -40 "$OUT/prof-build.log"; exit 1; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
for f in "$@"; do
  echo "==== $f" | tee -a "$OUT/profile.txt"
  timeout 120 "$NCU" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats \
    "$BUILD/bench/pixflow-bench" --filter "$f" >>"$OUT/profile.txt" 2>&1
  grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per|Stall|Block Size|Grid Size|L1/TEX Hit|L2 Hit|Executed Ipc" \
    "$OUT/profile.txt" | tail -40
done
