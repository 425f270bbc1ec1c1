// The CUDA remap's u8x3 word path (src/backends/cuda/remap_u8x3.hpp) run on the CPU: no GPU
// is needed, so CI checks the kernel's per-pixel code everywhere. The source is an Image
// (start and stride multiples of 4, as the kernel requires); the words are read from its
// memory exactly as the kernel reads them (word q from the start), each read checked to lie
// inside the image's h * stride bytes, and every output byte is compared with the reference
// backend's remap of the same pixel.
#include <cmath>
#include <cstring>
#include <limits>

#include "src/backends/cuda/remap_u8x3.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace ru = pixflow::cuda::remap_u8x3;
using ru::u32;

// The 6 bytes of two taps from the three aligned words, for every start (all four shifts);
// the third word matters only when s == 3, so elsewhere it is garbage.
TEST(RemapU8x3, PairOfWordsGivesTheSixBytesAtEveryShift) {
  auto rng = make_rng(0x7e31);
  std::uint8_t bytes[64];
  for (auto& b : bytes) b = std::uint8_t(rng());
  const auto word = [&](int q) {
    u32 v;
    std::memcpy(&v, bytes + 4 * q, 4);
    return v;
  };
  for (int a = 0; a + 6 <= 52; ++a) {
    const int q = a / 4;
    const u32 s = u32(a % 4);
    const ru::Pair p =
        ru::pair_of_words(word(q), word(q + 1), s == 3 ? word(q + 2) : 0xdeadbeefu, s);
    for (int i = 0; i < 4; ++i) EXPECT_EQ((p.lo >> (8 * i)) & 0xffu, bytes[a + i]) << "a " << a;
    for (int i = 0; i < 2; ++i) EXPECT_EQ((p.hi >> (8 * i)) & 0xffu, bytes[a + 4 + i]) << "a " << a;
  }
}

TEST(RemapU8x3, ByteFloatIsTheByteExactly) {
  for (u32 b = 0; b < 256; ++b) {
    const u32 w = b << 16 | 0xa5u << 24 | 0x5au;
    EXPECT_EQ(ru::byte_float<2>(w), float(b));
  }
}

// Interior pixels of random sources (widths whose rows end at every byte of a word, strides
// with and without padding) and maps with arbitrary fractions plus the limits of the
// interior (0, integers, just below w - 1 and h - 1, halves), against the reference.
TEST(RemapU8x3, WordPathMatchesRefOnInteriorPixels) {
  auto rng = make_rng(0x7e32);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int iter = 0; iter < 60; ++iter) {
    const std::int64_t w = 2 + std::int64_t(rng() % 41), h = 2 + std::int64_t(rng() % 9);
    // Tight rows (stride = 3w rounded up to 4) or padded: the kernel needs multiples of 4.
    const std::int64_t stride = (3 * w + 3) / 4 * 4 + 4 * std::int64_t(rng() % 3);
    std::vector<u32> mem(std::size_t(h * stride / 4));
    auto* base = reinterpret_cast<std::uint8_t*>(mem.data());
    for (std::int64_t i = 0; i < h * stride; ++i)
      base[i] = rng() % 5 == 0 ? std::uint8_t(rng() % 2 ? 255 : 0) : std::uint8_t(rng());
    const ConstImageView src(base, w, h, stride, {Depth::u8, 3});
    const std::int64_t n = 257;
    Image mx(n, 1, {Depth::f32, 1}), my(n, 1, {Depth::f32, 1});
    const float lx = float(w - 1), ly = float(h - 1);
    const auto pick = [&](float l) {
      switch (rng() % 6) {
        case 0:
          return float(rng() % std::uint64_t(l));  // an integer: fraction 0
        case 1:
          return std::nextafter(l, 0.0f);  // the interior's last float
        case 2:
          return float(rng() % std::uint64_t(l)) + 0.5f;
        case 3:
          return 0.0f;
        default:
          return std::fmin(unit(rng) * l, std::nextafter(l, 0.0f));
      }
    };
    for (std::int64_t x = 0; x < n; ++x) {
      mx.view().row<float>(0)[x] = pick(lx);
      my.view().row<float>(0)[x] = pick(ly);
    }
    Image want(n, 1, {Depth::u8, 3});
    Context ref;
    ref.backend = Backend::ref;
    remap(src, mx.view(), my.view(), want.view(), RemapParams{Interp::linear, Border::constant(7)},
          ref);
    for (std::int64_t x = 0; x < n; ++x) {
      const float fx = mx.view().row<float>(0)[x], fy = my.view().row<float>(0)[x];
      PIXFLOW_TRACE(testing::Message() << "src " << w << "x" << h << " stride " << stride
                                       << " map (" << fx << ", " << fy << ")");
      ASSERT_TRUE(fx >= 0.0f && fx < lx && fy >= 0.0f && fy < ly);  // the kernel's interior
      bool inside = true;
      const auto word = [&](int q) {
        inside &= q >= 0 && std::int64_t(q) * 4 + 4 <= h * stride;
        return q >= 0 && std::size_t(q) < mem.size() ? mem[std::size_t(q)] : 0u;
      };
      const ru::Words t = ru::load_words(fx, fy, int(stride), word);
      ASSERT_TRUE(inside) << "a word outside the image's bytes";
      ru::u32 got[3];
      ru::finish_words(t, got);
      const std::uint8_t* exp = want.view().row<std::uint8_t>(0) + 3 * x;
      for (int c = 0; c < 3; ++c) {
        // The kernel stores the low byte of the bits of v + 2^23 (remap_pack.hpp): the rest is
        // 2^23's, nothing carried out of the byte.
        ASSERT_EQ(got[c] >> 8, 0x4B0000u) << "channel " << c;
        ASSERT_EQ(int(got[c] & 0xffu), int(exp[c])) << "channel " << c;
      }
    }
  }
}

}  // namespace
}  // namespace pixflow::test
