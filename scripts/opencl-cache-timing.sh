#!/usr/bin/env bash
# What pixflow's disk cache of OpenCL program binaries adds over the driver's own cache: the
# first call of every catalogue op (bench/opencl_first_call.cpp), each run a fresh process,
# under each cache setting, median of REPS runs (default 3) per op.
#
#   scripts/opencl-cache-timing.sh BUILD_DIR [DEVICE]      (DEVICE: opencl:N's N, default 0)
#
# Columns (ms):
#   off          PIXFLOW_OPENCL_CACHE_DIR=off, the driver's cache as is (after one run that
#                filled it with these programs)
#   cold         pixflow's cache on, its folder empty at each run (the cost of writing it)
#   warm         pixflow's cache on, filled by the cold runs
#   nodrv-off    the driver's cache disabled too (NVIDIA: CUDA_CACHE_DISABLE=1; PoCL:
#   nodrv-warm   POCL_KERNEL_CACHE=0), pixflow's cache off / warm
#   2nd          the op's second call in the `off` runs (every program built): what a call
#                costs once the build is paid
# Rows: `context` (first allocation: context and queue), one row per op, `total` (the median
# over runs of the sum of the ops' first calls). The `stats` lines (program_cache_stats of the
# last run of each setting) say whether programs were built, loaded or saved as the column
# means to. Nothing is written to the user's cache folder: every run names its own.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 BUILD_DIR [DEVICE]" >&2
  exit 2
fi
build=$1
device=${2:-0}
reps=${REPS:-3}

cmake --build "$build" --target pixflow-opencl-first-call >/dev/null
tool=$build/bench/pixflow-opencl-first-call
[[ -x $tool ]] || { echo "$tool not built (is the OpenCL backend on?)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pixflow-cl-timing.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run LABEL REP ENV...: one fresh process, its output kept as $work/LABEL.REP
run() {
  local label=$1 rep=$2
  shift 2
  if ! env "$@" "$tool" "$device" >"$work/$label.$rep" 2>"$work/$label.$rep.err"; then
    echo "$label run $rep failed:" >&2
    cat "$work/$label.$rep.err" >&2
    exit 1
  fi
}

probe=$("$tool" "$device" __no_op__)  # device and platform only
platform=$(sed -n 's/^platform //p' <<<"$probe")
device_line=$(sed -n 's/^device //p' <<<"$probe")
case $platform in
  *NVIDIA*) nodrv=(CUDA_CACHE_DISABLE=1) ;;
  *Portable\ Computing\ Language*) nodrv=(POCL_KERNEL_CACHE=0) ;;
  *) nodrv=() ;;
esac

labels=(off cold warm)
run warmup 0 PIXFLOW_OPENCL_CACHE_DIR=off  # the driver's cache holds every program from here on
for r in $(seq "$reps"); do run off "$r" PIXFLOW_OPENCL_CACHE_DIR=off; done
for r in $(seq "$reps"); do
  rm -rf "$work/cache"
  run cold "$r" PIXFLOW_OPENCL_CACHE_DIR="$work/cache"
done
for r in $(seq "$reps"); do run warm "$r" PIXFLOW_OPENCL_CACHE_DIR="$work/cache"; done
if [[ ${#nodrv[@]} -gt 0 ]]; then
  labels+=(nodrv-off nodrv-warm)
  for r in $(seq "$reps"); do run nodrv-off "$r" PIXFLOW_OPENCL_CACHE_DIR=off "${nodrv[@]}"; done
  for r in $(seq "$reps"); do
    run nodrv-warm "$r" PIXFLOW_OPENCL_CACHE_DIR="$work/cache" "${nodrv[@]}"
  done
fi

echo "$device_line"
echo "first call of each op in a fresh process, ms (median of $reps runs); driver cache off by: ${nodrv[*]:-n/a}"
for label in "${labels[@]}"; do
  for r in $(seq "$reps"); do
    awk -v L="$label" '$1 == "context" { print L, "context", $2 }
      $1 == "op" { print L, $2, $3; t += $3; if (L == "off") { print "2nd", $2, $4; t2 += $4 } }
      END { print L, "total", t; if (L == "off") print "2nd", "total", t2 }' "$work/$label.$r"
  done
done | awk -v labels="${labels[*]} 2nd" '
  { v[$1 SUBSEP $2] = v[$1 SUBSEP $2] " " $3; if (!($2 in seen)) { seen[$2] = 1; rows[++n] = $2 } }
  function median(s,   a, k, i, j, t) {
    k = split(s, a, " ")
    if (k == 0) return "-"
    for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    m = split(labels, L, " ")
    printf "%-14s", "op"; for (i = 1; i <= m; i++) printf " %11s", L[i]; printf "\n"
    # context first, the ops in catalogue order, total last
    order[1] = "context"; k = 1
    for (r = 1; r <= n; r++) if (rows[r] != "context" && rows[r] != "total") order[++k] = rows[r]
    order[++k] = "total"
    for (r = 1; r <= k; r++) {
      printf "%-14s", order[r]
      for (i = 1; i <= m; i++) {
        key = L[i] SUBSEP order[r]
        if (key in v) printf " %11.1f", median(v[key]); else printf " %11s", "-"
      }
      printf "\n"
    }
  }'
for label in "${labels[@]}"; do
  printf "stats %-11s %s\n" "$label" "$(sed -n 's/^stats //p' "$work/$label.$reps")"
done
