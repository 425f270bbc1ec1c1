#!/usr/bin/env bash
# CV-CUDA on the GPU machine, which has no internet: its wheel (cvcuda-cu13 0.19.0, 127.8 MB)
# goes over in three 43 MiB pieces, one per device call (64 MiB a call with the ~12 MiB working
# tree: 60 MiB pieces no longer fit in session 25), while the
# machine stays warm (bench/NOTES.md: "CV-CUDA peer"). Prepare once on the dev host:
#   pip download --no-deps --python-version 3.12 --only-binary=:all: \
#     --platform manylinux2014_x86_64 cvcuda-cu13==0.19.0 -d /tmp/cv
#   mkdir -p .carry/cvcuda-p{1,2,3}; split -b 43M -d /tmp/cv/*.whl cvpart.
#   mv cvpart.00 .carry/cvcuda-p1/; mv cvpart.01 .carry/cvcuda-p2/; mv cvpart.02 .carry/cvcuda-p3/
# On the GPU machine, one call each, carrying .carry/cvcuda-pN alone:
#   bash scripts/cvcuda-carry.sh stash N      keeps piece N under $BUILD/cvparts
#   bash scripts/cvcuda-carry.sh install      joins, checks the sha256, unpacks to $BUILD/cvcuda-site
# gpu-check.sh puts $BUILD/cvcuda-site on PYTHONPATH when it exists, so peers.py finds cvcuda.
set -eu
BUILD="${BUILD:-build-gpu}"
SHA256=dd62ea08f13e4bebfd62c02e947fedd6d48705cea6f11d6abc7b8e5f65f101ae
PARTS="$BUILD/cvparts"
SITE="$BUILD/cvcuda-site"
case "${1:-}" in
  stash)
    n="${2:?piece number 1-3}"
    mkdir -p "$PARTS"
    cp .carry/cvcuda-p"$n"/cvpart.* "$PARTS"/
    ls -l "$PARTS"
    ;;
  install)
    for n in 1 2 3; do
      [ -d .carry/cvcuda-p"$n" ] && cp .carry/cvcuda-p"$n"/cvpart.* "$PARTS"/ 2>/dev/null || true
    done
    cat "$PARTS"/cvpart.* >"$BUILD/cvcuda.whl"
    echo "$SHA256  $BUILD/cvcuda.whl" | sha256sum -c -
    rm -rf "$SITE"
    mkdir -p "$SITE"
    # Only the CPython 3.12 extension is needed; the wheel is a zip with no install hooks.
    python3 -m zipfile -e "$BUILD/cvcuda.whl" "$SITE"
    rm -f "$BUILD/cvcuda.whl" "$PARTS"/cvpart.*
    PYTHONPATH="$SITE" python3 -c 'import cvcuda; print("cvcuda", cvcuda.__version__)'
    ;;
  *)
    echo "usage: $0 stash N | install" >&2
    exit 2
    ;;
esac
