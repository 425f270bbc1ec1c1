// The register arithmetic of the CUDA van Herk dilate/erode kernel for large centred windows on
// one u8 channel (src/backends/cuda/morph_vh2_u8_packed.hpp, used by morphology.cu's
// vh2_u8c1_kernel) runs on the CPU: no GPU is needed. Checked against a brute force max / min:
// - window (van Herk over 16 outputs) for windows of 2 .. 31 samples on random 16-bit lanes
//   (both lanes, both ops);
// - the kernel's whole block as it runs it: a random tile (the loaded, border-extended input)
//   through the vertical items (vcol, vpair, 16-byte stores into the row-pair buffer at the
//   geometry's pitch), then the horizontal items (16-byte loads from kShift on, window, hpack),
//   for the tall and short block heights and several window sizes (odd anchors 4 .. 10 give
//   every kShift), every output byte of the block against the window over the tile.
// Bytes are drawn half the time from the extremes (0, 1, 127, 128, 254, 255).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "src/backends/cuda/morph_vh2_u8_packed.hpp"

namespace pixflow::test {
namespace {

namespace mv = pixflow::cuda::morph_vh2;
using u32 = std::uint32_t;

std::uint8_t random_byte(std::mt19937_64& rng) {
  static constexpr std::uint8_t kEdges[] = {0, 1, 127, 128, 254, 255};
  return rng() % 2 ? kEdges[rng() % 6] : std::uint8_t(rng() % 256);
}

template <int K, bool kMax>
void check_window(std::mt19937_64& rng) {
  constexpr int kIn = mv::kN + K - 1;
  for (int t = 0; t < 2000; ++t) {
    u32 in[kIn];
    for (u32& w : in) w = u32(rng() & 0xffffu) | u32(rng() % 7 == 0 ? 0 : rng() & 0xffffu) << 16;
    u32 out[mv::kN];
    mv::window<kMax, K, mv::kN>(in, out);
    for (int i = 0; i < mv::kN; ++i)
      for (int lane = 0; lane < 2; ++lane) {
        u32 want = (in[i] >> (16 * lane)) & 0xffffu;
        for (int j = 1; j < K; ++j) {
          const u32 v = (in[i + j] >> (16 * lane)) & 0xffffu;
          want = kMax ? std::max(want, v) : std::min(want, v);
        }
        ASSERT_EQ((out[i] >> (16 * lane)) & 0xffffu, want)
            << "K " << K << " max " << kMax << " output " << i << " lane " << lane;
      }
  }
}

template <int K>
void check_window_both(std::mt19937_64& rng) {
  check_window<K, true>(rng);
  check_window<K, false>(rng);
}

TEST(MorphVh2Packed, WindowMatchesBruteForce) {
  std::mt19937_64 rng(0x7e2);
  check_window_both<2>(rng);
  check_window_both<3>(rng);
  check_window_both<5>(rng);
  check_window_both<8>(rng);
  check_window_both<9>(rng);
  check_window_both<15>(rng);
  check_window_both<16>(rng);
  check_window_both<17>(rng);
  check_window_both<21>(rng);
  check_window_both<31>(rng);
}

// vh2_u8c1_kernel's block, thread by thread, on the host.
template <int K, bool kMax>
void check_block(int bh, std::mt19937_64& rng) {
  using G = mv::Geom<K>;
  constexpr int kN = mv::kN;
  const int th = bh + K - 1;
  std::vector<std::uint8_t> tile(std::size_t(G::kTW) * th);
  for (auto& b : tile) b = random_byte(rng);
  auto tile_word = [&](int r, int quad) {
    const std::uint8_t* b = &tile[std::size_t(r) * G::kTW + 4 * quad];
    return u32(b[0]) | u32(b[1]) << 8 | u32(b[2]) << 16 | u32(b[3]) << 24;
  };
  // Row-pair words; poisoned, so that a word the vertical pass does not write shows.
  std::vector<u32> vt(std::size_t(bh / 2) * G::kPitch, 0xdeadbeefu);
  for (int s = 0; s < bh / kN; ++s)
    for (int c = 0; c < G::kQuads; ++c) {
      u32 t[kN + K - 1];
      for (int r = 0; r < kN + K - 1; ++r) t[r] = tile_word(s * kN + r, G::kQ0 + c);
      u32 lo[kN], hi[kN];
      mv::vcol<kMax, K>(t, lo, hi);
      for (int i = 0; i < kN / 2; ++i) {
        u32 w[4];
        mv::vpair(lo[2 * i], hi[2 * i], lo[2 * i + 1], hi[2 * i + 1], w);
        u32* v = &vt[std::size_t(s * (kN / 2) + i) * G::kPitch + 4 * c];
        for (int m = 0; m < 4; ++m) v[m] = w[m];
      }
    }
  for (int p = 0; p < bh / 2; ++p)
    for (int q = 0; q < mv::kBW / kN; ++q) {
      const u32* v = &vt[std::size_t(p) * G::kPitch + kN * q];
      ASSERT_LE(kN * q + 4 * G::kLoads, 4 * G::kQuads) << "loads past the vertical pass's words";
      u32 in[kN + K - 1];
      for (int j = 0; j < kN + K - 1; ++j) in[j] = v[G::kShift + j];
      u32 o[kN], r0[kN / 4], r1[kN / 4];
      mv::window<kMax, K, kN>(in, o);
      for (int j = 0; j < kN / 4; ++j)
        mv::hpack(o[4 * j], o[4 * j + 1], o[4 * j + 2], o[4 * j + 3], r0[j], r1[j]);
      for (int row = 0; row < 2; ++row)
        for (int e = 0; e < kN; ++e) {
          const int y = 2 * p + row, x = kN * q + e;
          std::uint8_t want = kMax ? 0 : 255;
          for (int dy = 0; dy < K; ++dy)
            for (int dx = 0; dx < K; ++dx) {
              const std::uint8_t b = tile[std::size_t(y + dy) * G::kTW + G::kOff + x + dx];
              want = kMax ? std::max(want, b) : std::min(want, b);
            }
          const u32 w = (row == 0 ? r0 : r1)[e / 4];
          ASSERT_EQ(int((w >> (8 * (e % 4))) & 0xffu), int(want))
              << "K " << K << " max " << kMax << " bh " << bh << " output (" << x << ", " << y
              << ")";
        }
    }
}

template <int K>
void check_block_all(std::mt19937_64& rng) {
  for (int bh : {64, 32})
    for (int t = 0; t < 2; ++t) {
      check_block<K, true>(bh, rng);
      check_block<K, false>(bh, rng);
    }
}

TEST(MorphVh2Packed, KernelBlockMatchesBruteForce) {
  std::mt19937_64 rng(0x7e3);
  check_block_all<15>(rng);  // the compiled window: kOff 9, kShift 1
  check_block_all<9>(rng);   // kOff 12, kShift 0
  check_block_all<11>(rng);  // kOff 11, kShift 3
  check_block_all<13>(rng);  // kOff 10, kShift 2
  check_block_all<21>(rng);  // kOff 6
  check_block_all<3>(rng);
}

}  // namespace
}  // namespace pixflow::test
