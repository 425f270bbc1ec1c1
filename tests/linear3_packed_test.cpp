// The output arithmetic of the CUDA packed 3x3 box/Gaussian kernel on u8
// (src/backends/cuda/linear3_u8_packed.hpp, used by u8_3x3.cuh's linear3_u8_kernel) run on the
// CPU: no GPU is needed. Each function builds a row's 4 output bytes from packed 16-bit lanes
// (results in byte 2 of 32-bit values gathered by PRMT, a division by 9 as a multiply-shift);
// checked against the rule the kernel had per lane (lane_out: s / 9 rounded half to even, s
// saturated to 255, (vy0 a + vy1 b + vy0 c + 2^15) >> 16) — every sum of the box (0 .. 9 * 255)
// in every lane, and the Gaussian for every pair of vertical Q8 taps (2 vy0 + vy1 = 256) on
// random lanes up to 255 * 256 with the extremes mixed in.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "src/backends/cuda/linear3_u8_packed.hpp"

namespace pixflow::test {
namespace {

namespace lin = pixflow::cuda::linear3_u8;
using u32 = std::uint32_t;

// The former per-lane rule (u8_3x3.cuh lane_out).
u32 box_mean_rule(u32 s) {
  const u32 q = s / 9u, r = s - 9u * q;
  return q + (2u * r > 9u ? 1u : 0u);
}
u32 box_sum_rule(u32 s) {
  return s > 255u ? 255u : s;
}
u32 gauss_rule(u32 a, u32 b, u32 c, u32 vy0, u32 vy1) {
  const std::uint64_t v = std::uint64_t(vy0) * a + std::uint64_t(vy1) * b + std::uint64_t(vy0) * c;
  return u32((v + 32768u) >> 16);
}

u32 byte_of(u32 w, int j) {
  return (w >> (8 * j)) & 0xffu;
}

TEST(Linear3Packed, BoxRowsMatchTheRuleForEverySumInEveryLane) {
  std::mt19937_64 rng(0x11a3);
  constexpr u32 kMaxSum = 9 * 255;
  for (u32 s = 0; s <= kMaxSum; ++s)
    for (int lane = 0; lane < 4; ++lane) {
      u32 v[4];
      for (u32& x : v) x = u32(rng() % (kMaxSum + 1));
      v[lane] = s;
      const u32 s0 = v[0] | v[1] << 16, s1 = v[2] | v[3] << 16;
      const u32 mean = lin::box_mean_row(s0, s1), sum = lin::box_sum_row(s0, s1);
      for (int j = 0; j < 4; ++j) {
        ASSERT_EQ(byte_of(mean, j), box_mean_rule(v[j])) << "box mean of " << v[j];
        ASSERT_EQ(byte_of(sum, j), box_sum_rule(v[j])) << "box sum of " << v[j];
      }
    }
}

TEST(Linear3Packed, GaussianRowsMatchTheRuleForEveryTapPair) {
  std::mt19937_64 rng(0x11a4);
  constexpr u32 kMaxLane = 255 * 256;
  auto lane_value = [&]() -> u32 {
    switch (rng() % 4) {
      case 0:
        return kMaxLane;
      case 1:
        return u32(rng() % 2);
      default:
        return u32(rng() % (kMaxLane + 1));
    }
  };
  for (u32 vy0 = 0; vy0 <= 128; ++vy0) {
    const u32 vy1 = 256 - 2 * vy0;
    for (int it = 0; it < 2000; ++it) {
      u32 a[4], b[4], c[4];
      for (int j = 0; j < 4; ++j) a[j] = lane_value(), b[j] = lane_value(), c[j] = lane_value();
      const u32 out =
          lin::gauss_row(a[0] | a[1] << 16, b[0] | b[1] << 16, c[0] | c[1] << 16, a[2] | a[3] << 16,
                         b[2] | b[3] << 16, c[2] | c[3] << 16, vy0, vy1);
      for (int j = 0; j < 4; ++j)
        ASSERT_EQ(byte_of(out, j), gauss_rule(a[j], b[j], c[j], vy0, vy1))
            << "vy0=" << vy0 << " lanes " << a[j] << " " << b[j] << " " << c[j];
    }
  }
}

}  // namespace
}  // namespace pixflow::test
