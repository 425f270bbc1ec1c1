#!/usr/bin/env bash
# A/B of OpenCL kernel variants on the GPU machine, after `OCL_ONLY=1 scripts/gpu-check.sh`
# (whose build-ocl it reuses): each line of SPEC is `LABEL ENV=VALUE... -- REGEX [BENCH ARGS]`;
# pixflow-bench-opencl runs the cases matching REGEX (pixflow-bench's --filter) with those
# variables set, one process per line, every result checked against ref as usual. A table of
# case x label (wall µs per call; "!" marks a failed check) ends the output and
# $OUT/ab.md; each line's JSON is $OUT/ab-LABEL.json.
#   scripts/gpu-ocl-ab.sh SPEC [BUILD_DIR]
# Environment: AB_CASE_S (per-case cap, s; default 5), AB_TOTAL (s for all lines; default 200).
set -u
spec=$1
build=${2:-build-ocl}
OUT="${OUT:-./out}"
mkdir -p "$OUT"
mkdir -p /tmp/ocl-vendors
echo libnvidia-opencl.so.1 >/tmp/ocl-vendors/nvidia.icd
export OCL_ICD_VENDORS=/tmp/ocl-vendors
bench=$build/bench/pixflow-bench-opencl
[ -x "$bench" ] || { echo "gpu-ocl-ab: $bench not built" >&2; exit 1; }
start=$(date +%s)
labels=()
while read -r label rest; do
  [ -z "$label" ] || [ "${label#\#}" != "$label" ] && continue
  envs=${rest%% -- *}
  args=${rest#* -- }
  left=$(( ${AB_TOTAL:-200} - ($(date +%s) - start) ))
  if [ $left -lt 10 ]; then echo "gpu-ocl-ab: no time left for $label" | tee -a "$OUT/ab.log"; continue; fi
  regex=${args%% *}
  more=""
  [ "$regex" != "$args" ] && more=${args#* }
  echo "==== $label: $envs -- $regex $more" | tee -a "$OUT/ab.log"
  # shellcheck disable=SC2086
  env $envs timeout $((left + 5)) "$bench" --filter "$regex" --case-s "${AB_CASE_S:-5}" \
    --max-s $((left - 5)) --json "$OUT/ab-$label.json" $more >>"$OUT/ab.log" 2>&1
  echo "rc=$?" >>"$OUT/ab.log"
  labels+=("$label")
done <"$spec"
python3 - "$OUT" "${labels[@]}" <<'PY' | tee "$OUT/ab.md"
import json, sys
out, labels = sys.argv[1], sys.argv[2:]
table, cases = {}, []
for lab in labels:
    try:
        rows = json.load(open(f"{out}/ab-{lab}.json"))["rows"]
    except (OSError, ValueError, KeyError):
        continue
    for r in rows:
        if r.get("status") != "ok" and not r.get("failed"):
            continue
        c = r["case"]
        if c not in cases:
            cases.append(c)
        table[(c, lab)] = "%.1f%s" % (r.get("us") or 0, "!" if r.get("failed") else "")
print("| case | " + " | ".join(labels) + " |")
print("|---" * (len(labels) + 1) + "|")
for c in cases:
    print("| " + c + " | " + " | ".join(table.get((c, l), "") for l in labels) + " |")
PY
# Only 8 files come back from the device machine: the lines' JSONs travel as one archive.
(cd "$OUT" && tar czf ab-json.tar.gz ab-*.json && rm -f ab-*.json)
