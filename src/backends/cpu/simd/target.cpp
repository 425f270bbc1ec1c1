// Which SIMD target Highway's dynamic dispatch uses, for `pixflow info`, the benchmark and
// the tests (which run the kernels once per target the machine has).
#include <hwy/highway.h>
#include <hwy/targets.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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

std::int64_t last_level_cache_bytes() noexcept {
  static const std::int64_t bytes = [] {
    constexpr std::int64_t kDefault = std::int64_t(32) << 20;
    // index3 is the L3 on x86 Linux; take the largest level there is.
    std::int64_t best = 0;
    for (int i = 0; i < 8; ++i) {
      char path[64];
      std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
      std::FILE* f = std::fopen(path, "r");
      if (!f) continue;
      long long v = 0;
      char unit = 0;
      const int got = std::fscanf(f, "%lld%c", &v, &unit);
      std::fclose(f);
      if (got < 1 || v <= 0) continue;
      const std::int64_t b = unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : v;
      best = std::max(best, b);
    }
    return best > (std::int64_t(1) << 20) ? best : kDefault;
  }();
  return bytes;
}

namespace {
std::atomic<std::int64_t> g_stream_threshold{-1};  // -1: a quarter of the last-level cache
}  // namespace

bool stream_output(const ImageView& dst) noexcept {
  static const bool enabled = [] {
    const char* e = std::getenv("PIXFLOW_STREAM_STORES");
    return !(e && std::string(e) == "0");
  }();
  const std::int64_t t = g_stream_threshold.load(std::memory_order_relaxed);
  return enabled &&
         dst.row_bytes() * dst.height() >= (t < 0 ? last_level_cache_bytes() / 4 + 1 : t);
}

void set_stream_threshold_for_test(std::int64_t bytes) noexcept {
  g_stream_threshold.store(bytes, std::memory_order_relaxed);
}

namespace {
std::atomic<int> g_split_512{-1};  // -1: from the CPU
}  // namespace

bool splits_512bit_ops() noexcept {
  static const bool zen4 = [] {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
    const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;  // AuthenticAMD
    if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
    const unsigned family = ((a >> 8) & 0xf) + ((a >> 20) & 0xff);
    return family == 0x19;  // Zen 3 has no AVX-512; Zen 4 is the one that splits it
#else
    return false;
#endif
  }();
  const int forced = g_split_512.load(std::memory_order_relaxed);
  return forced < 0 ? zen4 : forced != 0;
}

void set_splits_512bit_for_test(int split) noexcept {
  g_split_512.store(split, std::memory_order_relaxed);
}

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
