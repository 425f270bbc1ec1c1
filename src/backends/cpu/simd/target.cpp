// Which SIMD target Highway's dynamic dispatch uses, for `pixflow info`, the benchmark and
// the tests (which run the kernels once per target the machine has).
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <cstdint>
#include <string>
#include <vector>

#include "src/backends/cpu/simd/rows.hpp"

namespace pixflow::cpu {
namespace {

// The targets compiled into the SIMD files (the same definitions for every file) that this
// CPU supports, best first (Highway numbers better targets with lower bits).
std::vector<std::int64_t> usable_targets() {
  std::vector<std::int64_t> out;
  const std::int64_t usable = HWY_TARGETS & hwy::SupportedTargets();
  for (int bit = 0; bit < 64; ++bit)
    if (usable >> bit & 1) out.push_back(std::int64_t(1) << bit);
  return out;
}

}  // namespace

const char* simd_target() noexcept {
  try {
    const auto t = usable_targets();
    return t.empty() ? "none" : hwy::TargetName(t.front());
  } catch (...) {
    return "none";
  }
}

std::vector<std::string> simd_targets() {
  std::vector<std::string> names;
  for (std::int64_t t : usable_targets()) names.emplace_back(hwy::TargetName(t));
  return names;
}

bool force_simd_target(const std::string& name) {
  if (name.empty()) {
    hwy::SetSupportedTargetsForTest(0);  // 0: back to what the CPU supports
    return true;
  }
  for (std::int64_t t : usable_targets())
    if (name == hwy::TargetName(t)) {
      hwy::SetSupportedTargetsForTest(t);
      return true;
    }
  return false;
}

}  // namespace pixflow::cpu
