#!/usr/bin/env bash
# A short hash of the files that make the build (CMake files, include/, src/, tests/, bench/*.cpp,
# tools/, fuzz/), independent of git metadata: gpu-check.sh prints it so that a result names the
# tree it came from even where the device copy's .git is stale.
cd "$(dirname "$0")/.." || exit 1
find CMakeLists.txt include src tests tools fuzz bench -type f \
  \( -name '*.txt' -o -name '*.cmake' -o -name '*.hpp' -o -name '*.h' -o -name '*.cpp' \
  -o -name '*.cu' -o -name '*.cuh' -o -name '*.cl' \) -not -path '*/results/*' 2>/dev/null |
  LC_ALL=C sort | xargs sha1sum | sha1sum | cut -c1-12
