// The register arithmetic of the CUDA dilate/erode kernel for small centred windows on one u8
// channel (src/backends/cuda/morph_k_u8_packed.hpp, used by morphology.cu's morphk_u8_kernel)
// runs on the CPU: no GPU is needed. A thread's 8 outputs of a row come from the row bytes x0 - 4
// .. x0 + 11 (four tile words); hrow builds the lane pairs (v * 257 lanes, one PRMT each) and
// the horizontal K-window of each output; vpair takes the vertical window of two output rows
// from K + 1 rows of those words; pack gathers the output bytes. Checked here against a brute
// force max / min over the window: hrow alone (every odd K up to 9, every lane), vpair alone,
// and the kernel's whole per-thread schedule (rows in order, a pair of output rows as soon as
// its last row is there, as morphk_u8_kernel runs it) for K = 5 and 7 and R = 2 and 16, on
// random bytes drawn half the time from the extremes (0, 1, 127, 128, 254, 255: equal values
// and the lanes' edges). For K >= 15 (morphv_u8_kernel): vh16 (van Herk over 16 outputs), hseg
// (a row's segment pair) and a whole block of the kernel's schedule (v_item / vquad into the
// vertical result, h_item / hseg out of it) against the brute-force 2-D window.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "src/backends/cuda/morph_k_u8_packed.hpp"

namespace pixflow::test {
namespace {

namespace mk = pixflow::cuda::morph_k;
using u32 = std::uint32_t;

std::uint8_t random_byte(std::mt19937_64& rng) {
  static constexpr std::uint8_t kEdges[] = {0, 1, 127, 128, 254, 255};
  return rng() % 2 ? kEdges[rng() % 6] : std::uint8_t(rng() % 256);
}

u32 word_of(const std::uint8_t* b) {
  return u32(b[0]) | u32(b[1]) << 8 | u32(b[2]) << 16 | u32(b[3]) << 24;
}

// Output k (0..7) of a word array from hrow: lane k % 2 of word k / 2, which must hold the byte
// times 257.
::testing::AssertionResult lane_is(u32 w, int lane, std::uint8_t want) {
  const u32 v = lane == 0 ? w & 0xffffu : w >> 16;
  if (v == u32(want) * 257u) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "lane " << lane << " = " << v << ", want " << int(want) << " * 257";
}

template <int K, bool kMax>
void check_hrow(std::mt19937_64& rng) {
  for (int t = 0; t < 20000; ++t) {
    std::array<std::uint8_t, 16> b;
    for (auto& v : b) v = random_byte(rng);
    u32 o[4];
    mk::hrow<K, kMax>(word_of(&b[0]), word_of(&b[4]), word_of(&b[8]), word_of(&b[12]), o);
    for (int k = 0; k < 8; ++k) {
      std::uint8_t want = b[4 + k - K / 2];
      for (int i = 1; i < K; ++i) {
        const std::uint8_t v = b[4 + k - K / 2 + i];
        want = kMax ? std::max(want, v) : std::min(want, v);
      }
      ASSERT_TRUE(lane_is(o[k / 2], k % 2, want))
          << "K " << K << " max " << kMax << " output " << k;
    }
  }
}

TEST(MorphKPacked, HorizontalWindowOfEveryOutput) {
  auto rng = std::mt19937_64(0x3b51);
  check_hrow<3, true>(rng);
  check_hrow<3, false>(rng);
  check_hrow<5, true>(rng);
  check_hrow<5, false>(rng);
  check_hrow<7, true>(rng);
  check_hrow<7, false>(rng);
  check_hrow<9, true>(rng);
  check_hrow<9, false>(rng);
}

template <int K, bool kMax>
void check_vpair(std::mt19937_64& rng) {
  for (int t = 0; t < 20000; ++t) {
    u32 r[K + 1];
    std::uint8_t lo[K + 1], hi[K + 1];
    for (int i = 0; i <= K; ++i) {
      lo[i] = random_byte(rng);
      hi[i] = random_byte(rng);
      r[i] = u32(lo[i]) * 257u | (u32(hi[i]) * 257u) << 16;
    }
    u32 o0, o1;
    mk::vpair<K, kMax>(r, o0, o1);
    for (int row = 0; row < 2; ++row)
      for (int lane = 0; lane < 2; ++lane) {
        const std::uint8_t* v = lane == 0 ? lo : hi;
        std::uint8_t want = v[row];
        for (int i = 1; i < K; ++i)
          want = kMax ? std::max(want, v[row + i]) : std::min(want, v[row + i]);
        ASSERT_TRUE(lane_is(row == 0 ? o0 : o1, lane, want)) << "K " << K << " row " << row;
      }
  }
}

TEST(MorphKPacked, VerticalWindowOfTwoRows) {
  auto rng = std::mt19937_64(0x3b52);
  check_vpair<3, true>(rng);
  check_vpair<3, false>(rng);
  check_vpair<5, true>(rng);
  check_vpair<5, false>(rng);
  check_vpair<7, true>(rng);
  check_vpair<7, false>(rng);
  check_vpair<9, true>(rng);
  check_vpair<9, false>(rng);
}

// The kernel's body for one thread (morphk_u8_kernel): R + K - 1 rows of 16 bytes, outputs
// 8 x R, packed bytes compared with the 2-D window.
template <int K, int R, bool kMax>
void check_thread(std::mt19937_64& rng) {
  constexpr int kRows = R + K - 1;
  for (int t = 0; t < 2000; ++t) {
    std::vector<std::array<std::uint8_t, 16>> in(kRows);
    for (auto& row : in)
      for (auto& v : row) v = random_byte(rng);
    u32 hw[kRows][4];
    std::vector<std::array<u32, 2>> out(R, {0u, 0u});
    std::vector<int> order;
    for (int r = 0; r < kRows; ++r) {
      const auto& b = in[std::size_t(r)];
      mk::hrow<K, kMax>(word_of(&b[0]), word_of(&b[4]), word_of(&b[8]), word_of(&b[12]), hw[r]);
      if (r >= K && (r - K) % 2 == 0) {
        const int i = r - K;
        u32 o0[4], o1[4];
        for (int j = 0; j < 4; ++j) {
          u32 col[K + 1];
          for (int s = 0; s <= K; ++s) col[s] = hw[i + s][j];
          mk::vpair<K, kMax>(col, o0[j], o1[j]);
        }
        out[std::size_t(i)] = {mk::pack(o0[0], o0[1]), mk::pack(o0[2], o0[3])};
        out[std::size_t(i) + 1] = {mk::pack(o1[0], o1[1]), mk::pack(o1[2], o1[3])};
        order.push_back(i);
        order.push_back(i + 1);
      }
    }
    ASSERT_EQ(int(order.size()), R) << "every output row once";
    for (int i = 0; i < R; ++i) {
      ASSERT_EQ(order[std::size_t(i)], i) << "rows in order (put steps the pointer a row a call)";
      for (int k = 0; k < 8; ++k) {
        std::uint8_t want = kMax ? 0 : 255;
        for (int dy = 0; dy < K; ++dy)
          for (int dx = 0; dx < K; ++dx) {
            const std::uint8_t v = in[std::size_t(i + dy)][std::size_t(4 + k - K / 2 + dx)];
            want = kMax ? std::max(want, v) : std::min(want, v);
          }
        const u32 w = out[std::size_t(i)][std::size_t(k / 4)];
        ASSERT_EQ(int((w >> (8 * (k % 4))) & 0xffu), int(want))
            << "K " << K << " R " << R << " max " << kMax << " row " << i << " output " << k;
      }
    }
  }
}

TEST(MorphKPacked, ThreadScheduleMatchesTheWindow) {
  auto rng = std::mt19937_64(0x3b53);
  check_thread<5, 2, true>(rng);
  check_thread<5, 2, false>(rng);
  check_thread<5, 16, true>(rng);
  check_thread<5, 16, false>(rng);
  check_thread<7, 2, true>(rng);
  check_thread<7, 2, false>(rng);
  check_thread<7, 16, true>(rng);
  check_thread<7, 16, false>(rng);
}

// ---- K >= 15 (morphology.cu, morphv_u8_kernel): van Herk on items of 16 outputs -------------

// vh16 on one stream of v * 257 lanes (two independent streams, one a lane): input order and
// every output against the K-run.
template <int K, bool kMax>
void check_vh16(std::mt19937_64& rng) {
  for (int t = 0; t < 5000; ++t) {
    std::uint8_t in[2][K + 15];
    for (auto& lane : in)
      for (auto& v : lane) v = random_byte(rng);
    std::vector<int> reads, writes;
    u32 got[16] = {};
    mk::vh16<K, kMax, 1>(
        [&](int j, u32(&v)[1]) {
          reads.push_back(j);
          v[0] = u32(in[0][j]) * 257u | (u32(in[1][j]) * 257u) << 16;
        },
        [&](int i, const u32(&o)[1]) {
          writes.push_back(i);
          got[i] = o[0];
        });
    ASSERT_EQ(int(reads.size()), K + 15) << "every input once";
    ASSERT_EQ(int(writes.size()), 16) << "every output once";
    for (int i = 0; i < 16; ++i) {
      ASSERT_EQ(writes[std::size_t(i)], i) << "outputs in order";
      for (int lane = 0; lane < 2; ++lane) {
        std::uint8_t want = in[lane][i];
        for (int d = 1; d < K; ++d)
          want = kMax ? std::max(want, in[lane][i + d]) : std::min(want, in[lane][i + d]);
        ASSERT_TRUE(lane_is(got[i], lane, want)) << "K " << K << " max " << kMax << " output " << i;
      }
    }
    std::sort(reads.begin(), reads.end());
    for (int j = 0; j < K + 15; ++j) ASSERT_EQ(reads[std::size_t(j)], j) << "input " << j;
  }
}

TEST(MorphKPacked, VanHerk16OfEveryOutput) {
  auto rng = std::mt19937_64(0x3b54);
  check_vh16<15, true>(rng);
  check_vh16<15, false>(rng);
  check_vh16<17, true>(rng);
  check_vh16<17, false>(rng);
}

// Brute force of the 2-D K x K window over a tile of bytes: output (r, c) of a block is the op
// of tile rows r .. r + K - 1 and tile bytes 16 + c - K / 2 .. 16 + c + K / 2.
template <int K, bool kMax>
std::uint8_t window_of(const std::vector<std::uint8_t>& tile, int pitch, int r, int c) {
  std::uint8_t want = kMax ? 0 : 255;
  for (int dy = 0; dy < K; ++dy)
    for (int dx = 0; dx < K; ++dx) {
      const std::uint8_t v = tile[std::size_t((r + dy) * pitch + 16 + c - K / 2 + dx)];
      want = kMax ? std::max(want, v) : std::min(want, v);
    }
  return want;
}

// A whole block of morphv_u8_kernel on the CPU: the tile (288 bytes x (64 + K - 1) rows, as
// morphk_load_tile leaves it), every vertical item of the schedule (v_item, vquad) into the mid
// buffer, a check that every mid word the horizontal items read was written, every horizontal
// item (h_item, hseg) into the block's outputs, each output written once and equal to the 2-D
// window. Random tiles (half the bytes from the extremes) and tiles of one impulse on a flat
// background (the impulse's square must come out exactly where the window reaches it).
template <int K, bool kMax>
void check_morphv_block(std::mt19937_64& rng, int trials) {
  constexpr int kPitch = 288, kRows = mk::kVBH + K - 1;
  for (int t = 0; t < trials; ++t) {
    std::vector<std::uint8_t> tile(std::size_t(kPitch * kRows));
    if (t % 2 == 0) {
      for (auto& v : tile) v = random_byte(rng);
    } else {
      const std::uint8_t flat = kMax ? 3 : 250, spike = kMax ? 200 : 9;
      for (auto& v : tile) v = flat;
      tile[rng() % tile.size()] = spike;
    }
    auto tile_word = [&](int r, int w) { return word_of(&tile[std::size_t(r * kPitch + 4 * w)]); };
    std::vector<u32> mid(std::size_t(mk::kVBH * mk::kVQuads), 0u);
    std::vector<int> mid_writes(mid.size(), 0);
    for (int it = 0; it < mk::kVItems; ++it) {
      int g, q;
      mk::v_item(it, g, q);
      mk::vquad<K, kMax>([&](int j) { return tile_word(16 * g + j, q + mk::kVQuadWord); },
                         [&](int i, u32 w) {
                           const std::size_t at = std::size_t((16 * g + i) * mk::kVQuads + q);
                           mid[at] = w;
                           ++mid_writes[at];
                         });
    }
    for (int x : mid_writes) ASSERT_EQ(x, 1) << "every mid word written once";
    std::vector<std::uint8_t> out(std::size_t(mk::kVBW * mk::kVBH), 0);
    std::vector<int> out_writes(out.size(), 0);
    for (int it = 0; it < mk::kHItems; ++it) {
      int r, s;
      mk::h_item(it, r, s);
      ASSERT_TRUE(r >= 0 && r < mk::kVBH && s >= 0 && s < 8);
      u32 a[8], b[8], oa[4], ob[4];
      for (int i = 0; i < 8; ++i) {
        a[i] = mid[std::size_t(r * mk::kVQuads + 4 * s + i)];
        b[i] = mid[std::size_t(r * mk::kVQuads + 4 * s + 32 + i)];
      }
      mk::hseg<K, kMax>(a, b, oa, ob);
      for (int e = 0; e < 16; ++e) {
        const std::size_t xa = std::size_t(r * mk::kVBW + 16 * s + e), xb = xa + 128;
        out[xa] = std::uint8_t(oa[e / 4] >> (8 * (e % 4)));
        out[xb] = std::uint8_t(ob[e / 4] >> (8 * (e % 4)));
        ++out_writes[xa];
        ++out_writes[xb];
      }
    }
    for (int r = 0; r < mk::kVBH; ++r)
      for (int c = 0; c < mk::kVBW; ++c) {
        const std::size_t at = std::size_t(r * mk::kVBW + c);
        ASSERT_EQ(out_writes[at], 1) << "output " << r << ", " << c << " written once";
        ASSERT_EQ(int(out[at]), int(window_of<K, kMax>(tile, kPitch, r, c)))
            << "K " << K << " max " << kMax << " trial " << t << " output row " << r << " column "
            << c;
      }
  }
}

TEST(MorphKPacked, VanHerkBlockMatchesTheWindow) {
  auto rng = std::mt19937_64(0x3b55);
  check_morphv_block<15, true>(rng, 6);
  check_morphv_block<15, false>(rng, 6);
  check_morphv_block<17, true>(rng, 2);
  check_morphv_block<17, false>(rng, 2);
}

// hseg alone on every lane position of random rows: the bytes the K-run reads reach 8 a side.
template <int K, bool kMax>
void check_hseg(std::mt19937_64& rng) {
  for (int t = 0; t < 5000; ++t) {
    std::uint8_t row[160];
    for (auto& v : row) v = random_byte(rng);
    u32 a[8], b[8], oa[4], ob[4];
    for (int i = 0; i < 8; ++i) {
      a[i] = word_of(&row[4 * i]);        // bytes x0 - 8 .. x0 + 23, x0 = 8
      b[i] = word_of(&row[128 + 4 * i]);  // bytes x0 + 120 ..
    }
    mk::hseg<K, kMax>(a, b, oa, ob);
    for (int e = 0; e < 16; ++e)
      for (int lane = 0; lane < 2; ++lane) {
        const int c = 8 + e + 128 * lane;
        std::uint8_t want = row[c - K / 2];
        for (int d = 1; d < K; ++d)
          want = kMax ? std::max(want, row[c - K / 2 + d]) : std::min(want, row[c - K / 2 + d]);
        const u32 w = (lane == 0 ? oa : ob)[e / 4];
        ASSERT_EQ(int((w >> (8 * (e % 4))) & 0xffu), int(want))
            << "K " << K << " max " << kMax << " lane " << lane << " output " << e;
      }
  }
}

TEST(MorphKPacked, HorizontalSegmentPairOfEveryOutput) {
  auto rng = std::mt19937_64(0x3b56);
  check_hseg<15, true>(rng);
  check_hseg<15, false>(rng);
  check_hseg<17, true>(rng);
  check_hseg<17, false>(rng);
}

}  // namespace
}  // namespace pixflow::test
