#!/usr/bin/env bash
# Installs what pixflow needs to build and test on Debian 12, only where it is missing.
# Runs apt-get as root (directly, or through sudo when not root).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libpng-dev libjpeg62-turbo-dev libtiff-dev   # codecs
  libcli11-dev                                 # the CLI
  libhwy-dev                                   # SIMD kernels of the cpu backend (Highway)
  libgtest-dev libopencv-dev                   # tests (OpenCV is used by tests only)
  libbenchmark-dev python3                     # benchmarks
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
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
