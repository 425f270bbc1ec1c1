// The CUDA remap's rounding and packing of integer results (src/backends/cuda/remap_pack.hpp)
// run on the CPU. The kernel keeps a u8/u16 linear result as the bits of v + 2^23 and stores
// their low byte / half without a clamp, which is right only if the bilinear expression never
// rounds past 255 / 65535 (remap_pack.hpp's bound). These tests evaluate the reference's
// expression with separately rounded operations at the bound's worst cases (every sample at
// the maximum, fractions from subnormal to just below 1, the fractions a map value's floor
// leaves) and random ones, and check that the bits are 0x4B000000 + the reference's
// saturate_cast, i.e. that nothing carries out of the low byte / half.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "src/backends/cuda/remap_pack.hpp"
#include "src/base/numeric.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace rp = pixflow::cuda::remap_pack;
using cuda::add_rn;
using cuda::mul_rn;
using cuda::sub_rn;
using rp::u32;

// The reference's expression (src/ref/remap.cpp) for fractions fx, fy and samples p.
float lerp(float fx, float fy, float p00, float p10, float p01, float p11) {
  const float bx = sub_rn(1.0f, fx), by = sub_rn(1.0f, fy);
  const float top = add_rn(mul_rn(bx, p00), mul_rn(fx, p10));
  const float bot = add_rn(mul_rn(bx, p01), mul_rn(fx, p11));
  return add_rn(mul_rn(by, top), mul_rn(fy, bot));
}

// Fractions m - floor(m) of the map values that stress the bound: 0, subnormal and tiny ones
// (1 - f rounds to 1), just below 1 and 1/2, and those of large coordinates (coarse ulps).
std::vector<float> edge_fractions() {
  std::vector<float> f = {0.0f,
                          std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(),
                          std::ldexp(1.0f, -30),
                          std::ldexp(1.0f, -25),
                          std::ldexp(1.0f, -24),
                          std::ldexp(3.0f, -25),
                          std::ldexp(1.0f, -23),
                          0.25f,
                          std::nextafter(0.5f, 0.0f),
                          0.5f,
                          std::nextafter(0.5f, 1.0f),
                          std::nextafter(1.0f, 0.0f),
                          1.0f - std::ldexp(3.0f, -24)};
  for (float m : {1.0f, 3.0f, 1000.0f, 4095.0f, 8388000.0f}) {
    for (float x = std::nextafter(m, 0.0f), k = 0; k < 4; x = std::nextafter(x, 0.0f), ++k)
      f.push_back(x - std::floor(x));
    f.push_back(std::nextafter(m, 2 * m) - m);
  }
  return f;
}

template <class T>
void check_round(float v, const char* what) {
  constexpr u32 kHi = std::numeric_limits<T>::max();
  const u32 bits = rp::round_bits(v);
  const T want = detail::saturate_cast<T>(double(v));
  ASSERT_GE(bits, 0x4B000000u) << what << " v " << v;
  ASSERT_LE(bits - 0x4B000000u, kHi) << what << ": rounds past the maximum, v " << v;
  ASSERT_EQ(T(bits), want) << what << " v " << v;
}

TEST(RemapPack, RoundBitsNeverCarriesPastTheMaximumAtTheBoundsWorstCases) {
  const std::vector<float> f = edge_fractions();
  for (float fx : f)
    for (float fy : f) {
      check_round<std::uint8_t>(lerp(fx, fy, 255, 255, 255, 255), "u8 all 255");
      check_round<std::uint16_t>(lerp(fx, fy, 65535, 65535, 65535, 65535), "u16 all 65535");
      check_round<std::uint8_t>(lerp(fx, fy, 255, 254, 255, 255), "u8");
      check_round<std::uint8_t>(lerp(fx, fy, 0, 255, 1, 254), "u8");
      check_round<std::uint16_t>(lerp(fx, fy, 65534, 65535, 65535, 0), "u16");
      check_round<std::uint8_t>(lerp(fx, fy, 0, 0, 0, 0), "u8 zeros");
    }
  // -0 fractions (the fast path's floor of -0): +-0 results.
  check_round<std::uint8_t>(lerp(-0.0f, -0.0f, 0, 0, 0, 0), "u8 -0");
  check_round<std::uint8_t>(lerp(-0.0f, -0.0f, 255, 255, 255, 255), "u8 -0");
}

TEST(RemapPack, RoundBitsIsSaturateCastOnRandomPixels) {
  auto rng = make_rng(0x9ac1);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const std::vector<float> edges = edge_fractions();
  const auto frac = [&] {
    return rng() % 4 == 0 ? edges[rng() % edges.size()] : unit(rng) * (rng() % 2 ? 1.0f : 0.001f);
  };
  for (int i = 0; i < 200000; ++i) {
    const float fx = frac(), fy = frac();
    const auto s8 = [&] { return float(rng() % 3 == 0 ? 255 - rng() % 2 : rng() % 256); };
    const auto s16 = [&] { return float(rng() % 3 == 0 ? 65535 - rng() % 2 : rng() % 65536); };
    check_round<std::uint8_t>(lerp(fx, fy, s8(), s8(), s8(), s8()), "u8 random");
    check_round<std::uint16_t>(lerp(fx, fy, s16(), s16(), s16(), s16()), "u16 random");
  }
}

TEST(RemapPack, PackTakesTheLowBytesAndHalves) {
  auto rng = make_rng(0x9ac2);
  for (int i = 0; i < 1000; ++i) {
    const u32 a = u32(rng()), b = u32(rng()), c = u32(rng()), d = u32(rng());
    EXPECT_EQ(rp::pack_u8(a, b, c, d),
              (a & 0xffu) | (b & 0xffu) << 8 | (c & 0xffu) << 16 | (d & 0xffu) << 24);
    EXPECT_EQ(rp::pack_u16(a, b), (a & 0xffffu) | (b & 0xffffu) << 16);
  }
}

}  // namespace
}  // namespace pixflow::test
