// The CUDA 3x3 u8 -> s16 derivative kernel's packed arithmetic (src/backends/cuda/
// deriv3_u8_packed.hpp: bytes spread into 16-bit lanes by PRMT, row and column sums as plain
// 32-bit integer arithmetic on two lanes at once, the 0x8000 add / xor that makes the low lane
// exact) run on the CPU against the plain 3x3 integer sum, for every tap pair the kernel is
// compiled for and both channel strides (1, 3). Tiles of uniform bytes and of 0 / 255 only:
// the latter reach the largest magnitudes (4080 for scharr and for sobel dx=2 dy=2),
// where a carry or borrow between the lanes would show. The kernel itself (tile loads,
// borders, stores) is checked against the reference by Sobel.* / Scharr.* on a GPU.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "src/backends/cuda/deriv3_u8_packed.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace d3 = pixflow::cuda::deriv3_u8;
using d3::u32;

constexpr int kWords = 20;  // words a tile row: threads at word positions 0 .. kWords - 3

u32 word_of(const std::vector<std::uint8_t>& row, int w) {
  return u32(row[4 * w]) | u32(row[4 * w + 1]) << 8 | u32(row[4 * w + 2]) << 16 |
         u32(row[4 * w + 3]) << 24;
}

// Every thread position of `trials` random 3-row tiles: the kernel's per-thread code (rows of
// words a, b, c = tile words tx .. tx + 2; outputs = samples 4 tx + 4 .. + 7) against the sum.
template <int CN, class X, class Y>
::testing::AssertionResult packed_matches_sum(std::mt19937_64& rng, int trials, bool binary) {
  const int tx[3] = {X::t0, X::t1, X::t2}, ty[3] = {Y::t0, Y::t1, Y::t2};
  std::vector<std::uint8_t> rows[3];
  int biggest = 0;
  for (int t = 0; t < trials; ++t) {
    for (auto& r : rows) {
      r.resize(4 * kWords);
      for (auto& v : r) v = binary ? std::uint8_t(rng() & 1 ? 255 : 0) : std::uint8_t(rng());
    }
    for (int w = 0; w + 2 < kWords; ++w) {
      u32 h0[3], h1[3];
      for (int r = 0; r < 3; ++r)
        d3::row_sums<CN, X, Y>(word_of(rows[r], w), word_of(rows[r], w + 1),
                               word_of(rows[r], w + 2), h0[r], h1[r]);
      const u32 o[2] = {d3::column_out<X, Y>(h0[0], h0[1], h0[2]),
                        d3::column_out<X, Y>(h1[0], h1[1], h1[2])};
      for (int j = 0; j < 4; ++j) {
        const int e = 4 * w + 4 + j;  // the output sample's byte in the tile row
        int want = 0;
        for (int r = 0; r < 3; ++r) {
          int h = 0;
          for (int i = 0; i < 3; ++i) h += tx[i] * rows[r][std::size_t(e + (i - 1) * CN)];
          want += ty[r] * h;
        }
        biggest = std::max(biggest, want < 0 ? -want : want);
        const auto got = std::int16_t(std::uint16_t(o[j / 2] >> (16 * (j % 2))));
        if (got != want)
          return ::testing::AssertionFailure()
                 << "CN=" << CN << " taps x (" << tx[0] << "," << tx[1] << "," << tx[2] << ") y ("
                 << ty[0] << "," << ty[1] << "," << ty[2] << ") trial " << t << " word " << w
                 << " sample " << j << ": got " << got << ", want " << want;
      }
    }
  }
  // The 0/255 tiles must reach the extreme sums (else the test proves less than it says):
  // 255 times the larger of the 2-D kernel's positive and negative coefficient sums.
  int pos = 0, neg = 0;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 3; ++i) (tx[i] * ty[r] > 0 ? pos : neg) += std::abs(tx[i] * ty[r]);
  if (binary && biggest != 255 * std::max(pos, neg))
    return ::testing::AssertionFailure()
           << "largest |sum| " << biggest << " never reached " << 255 * std::max(pos, neg);
  return ::testing::AssertionSuccess();
}

template <int CN>
void check_every_tap_pair(std::mt19937_64& rng) {
  using d3::Diff101, d3::Diff121, d3::Smooth121, d3::Smooth3103;
  for (bool binary : {false, true}) {
    const int n = binary ? 3000 : 300;
    EXPECT_TRUE((packed_matches_sum<CN, Smooth121, Diff101>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Smooth121, Diff121>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff101, Smooth121>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff101, Diff101>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff101, Diff121>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff121, Smooth121>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff121, Diff101>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff121, Diff121>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Diff101, Smooth3103>(rng, n, binary)));
    EXPECT_TRUE((packed_matches_sum<CN, Smooth3103, Diff101>(rng, n, binary)));
  }
}

TEST(Deriv3Packed, EveryTapPairMatchesTheIntegerSumOneChannel) {
  auto rng = make_rng(0xd3a1);
  check_every_tap_pair<1>(rng);
}

TEST(Deriv3Packed, EveryTapPairMatchesTheIntegerSumThreeChannels) {
  auto rng = make_rng(0xd3a3);
  check_every_tap_pair<3>(rng);
}

// pair<I> for every I: bytes I and I + 1 of the 12 bytes as zero-extended lanes.
TEST(Deriv3Packed, PairSpreadsTwoBytesIntoLanes) {
  auto rng = make_rng(0xd3a2);
  for (int t = 0; t < 100; ++t) {
    const u32 a = u32(rng()), b = u32(rng()), c = u32(rng());
    const std::uint8_t bytes[12] = {
        std::uint8_t(a), std::uint8_t(a >> 8), std::uint8_t(a >> 16), std::uint8_t(a >> 24),
        std::uint8_t(b), std::uint8_t(b >> 8), std::uint8_t(b >> 16), std::uint8_t(b >> 24),
        std::uint8_t(c), std::uint8_t(c >> 8), std::uint8_t(c >> 16), std::uint8_t(c >> 24)};
    const u32 got[11] = {d3::pair<0>(a, b, c), d3::pair<1>(a, b, c), d3::pair<2>(a, b, c),
                         d3::pair<3>(a, b, c), d3::pair<4>(a, b, c), d3::pair<5>(a, b, c),
                         d3::pair<6>(a, b, c), d3::pair<7>(a, b, c), d3::pair<8>(a, b, c),
                         d3::pair<9>(a, b, c), d3::pair<10>(a, b, c)};
    for (int i = 0; i < 11; ++i)
      ASSERT_EQ(got[i], u32(bytes[i]) | u32(bytes[i + 1]) << 16) << "I=" << i;
  }
}

}  // namespace
}  // namespace pixflow::test
