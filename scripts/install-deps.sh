#!/usr/bin/env bash
# Installs what pixflow needs to build and test on Debian 12, only where it is missing.
# Runs apt-get as root (directly, or through sudo when not root).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libpng-dev libjpeg62-turbo-dev libtiff-dev   # codecs
  libwebp-dev                                  # WebP (optional: PIXFLOW_WEBP=AUTO builds without it)
  libcli11-dev                                 # the CLI
  libhwy-dev                                   # SIMD kernels of the cpu backend (Highway)
  libgtest-dev libopencv-dev                   # tests (OpenCV is used by tests only)
  libbenchmark-dev python3                     # benchmarks
  python3-dev python3-pip python3-venv         # the Python package (headers; pip and venv: PyPI, make test-pip)
  libopenblas-dev                              # pixflow-bench-cpu's matmul peer
  clang libclang-rt-14-dev                     # fuzzing (libFuzzer, make fuzz)
  ocl-icd-opencl-dev opencl-c-headers clinfo  # the OpenCL backend (ICD loader, headers)
  pocl-opencl-icd                              # an OpenCL CPU device for its tests (PoCL)
  oclgrind                                     # the oclgrind pass over every kernel (make test-oclgrind)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every Debian package is installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# PyPI packages for the Python package (nanobind, scikit-build-core) and its tests
# (python/requirements-test.txt), into the python3 first on PATH: the interpreter CMake builds
# the module for. pip skips what is already installed.
root="$(cd "$(dirname "$0")/.." && pwd)"
pip_flags=(-q --disable-pip-version-check)
if python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
  # Debian's own python3 (PEP 668): this machine is a build host, the packages are its own.
  pip_flags+=(--break-system-packages)
  if [ "$(id -u)" -ne 0 ]; then pip_flags+=(--user); fi
fi
echo "install-deps: pip install nanobind scikit-build-core -r python/requirements-test.txt ($(command -v python3))"
python3 -m pip install "${pip_flags[@]}" "nanobind>=2.0" "scikit-build-core>=0.10" \
  -r "$root/python/requirements-test.txt"
