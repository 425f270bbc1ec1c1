#!/usr/bin/env bash
# Runs a fixed set of pipelines through two pixflow binaries (or two backends of one) on an
# image and reports any output that is not byte-identical. Used to check that a refactoring
# changed no result, and that every backend gives the reference's bytes.
#   scripts/cli-compare.sh BIN_A "ARGS_A" BIN_B "ARGS_B" [IMAGE]
# e.g. scripts/cli-compare.sh build/pixflow "--backend ref" build/pixflow "--backend cuda"
set -u
a=$1 args_a=$2 b=$3 args_b=$4
img=${5:-$(dirname "$0")/../data/astronaut.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pipelines=(
  "median k=5" "median kw=7 kh=3 border=wrap" "median k=3" "dilate k=5 iterations=2"
  "erode k=3" "open k=3" "close k=15" "gradient k=3" "tophat k=5"
  "blackhat k=3 border=constant value=30" "box k=9" "box k=3" "box kw=4 kh=7 normalize=0"
  "gaussian sigma=2" "gaussian k=3" "gaussian k=5 border=replicate" "gaussian_iir sigma=8"
  "gray | sobel dx=1 dy=0 | convert to=u8 abs=1"
  "gray | scharr dx=0 dy=1 | convert to=u8 abs=1 scale=0.5"
  "sobel dx=1 dy=1 k=5 to=f32 | convert to=u8 abs=1"
  "filter2d kernel=0,-1,0;-1,5,-1;0,-1,0" "epsilon r=3 t=15"
  "bilateral d=9 sigma_color=50 sigma_space=5" "transpose" "gray from=bgr" "add value=17"
  "mul value=1.5" "absdiff value=100" "convert to=u16 scale=257 | convert to=u8 scale=0.00389"
  "threshold t=100 type=binary_inv" "gray | median k=3 | threshold t=128"
  "convert to=f32 scale=0.0039215686 | gaussian sigma=3 | median k=5 | convert to=u8 scale=255"
  "convert to=f32 scale=0.0039215686 | bilateral d=5 sigma_color=0.2 sigma_space=3 | convert to=u8 scale=255"
  "add with=$img" "sub with=$img"
)
fail=0 i=0
for p in "${pipelines[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$a" run "$p" "$img" -o "$tmp/a$i.png" $args_a 2>"$tmp/a$i.err"; ra=$?
  # shellcheck disable=SC2086
  "$b" run "$p" "$img" -o "$tmp/b$i.png" $args_b 2>"$tmp/b$i.err"; rb=$?
  if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
    echo "ERROR  [$p] exit $ra / $rb: $(cat "$tmp/a$i.err" "$tmp/b$i.err")"; fail=1
  elif ! cmp -s "$tmp/a$i.png" "$tmp/b$i.png"; then
    echo "DIFF   [$p]"; fail=1
  fi
done
echo "cli-compare: $i pipelines, $([ $fail -eq 0 ] && echo 'all byte-identical' || echo 'DIFFERENCES')"
exit $fail
