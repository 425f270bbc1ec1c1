// The duplicated-lane column words of the CUDA packed 3x3 dilate/erode and median kernels
// (src/backends/cuda/u8_3x3_dup.hpp, used by u8_3x3.cuh's morph3_u8_kernel and
// median3_u8_kernel) run on the CPU: no GPU is needed. A lane holds its byte v as v * 257, built
// by one PRMT of two tile words; the kernels compare such lanes (min, max, min3, max3) and take
// medians of three as a + b + c - max - min over the whole word, whose lane sums (up to
// 3 * 65535) carry into the next lane. Checked here: every lane of columns() / columns3() holds
// the byte the kernel's window needs, times 257; and the kernels' row computations on those
// words (morph3_row, median3_row for one channel; u8_3x3_cn's sort_pair + median3_row and the
// max/min of the six words for three) give the window's max, min and median of every output
// byte, against a brute force over the 9 bytes, on random rows whose bytes are drawn half the
// time from the extremes (0, 1, 127, 128, 254, 255: the lanes' carries and equal values).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/u8_3x3_cn.hpp"
#include "src/backends/cuda/u8_3x3_dup.hpp"

namespace pixflow::test {
namespace {

namespace dup = pixflow::cuda::u8_3x3_dup;
namespace cn3 = pixflow::cuda::u8_3x3_cn;
namespace px = pixflow::cuda::px;
using u32 = std::uint32_t;

// One tile row of a thread: the words a, b, c = row bytes x0-4 .. x0+7 (bytes[4] = x0).
struct Row {
  std::array<std::uint8_t, 12> bytes;
  u32 word(int w) const {
    return u32(bytes[4 * w]) | u32(bytes[4 * w + 1]) << 8 | u32(bytes[4 * w + 2]) << 16 |
           u32(bytes[4 * w + 3]) << 24;
  }
};

Row random_row(std::mt19937_64& rng) {
  static constexpr std::uint8_t kEdges[] = {0, 1, 127, 128, 254, 255};
  Row r;
  for (auto& b : r.bytes) b = rng() % 2 ? kEdges[rng() % 6] : std::uint8_t(rng() % 256);
  return r;
}

u32 lane(u32 w, int k) {
  return k == 0 ? w & 0xffffu : w >> 16;
}

// Output byte j of a word (the kernels' results: byte j = output x0 + j).
int out_byte(u32 w, int j) {
  return int((w >> (8 * j)) & 0xffu);
}

// The 9 window bytes of output x0 + j over rows r0..r2, the horizontal neighbours `step` apart.
std::array<int, 9> window(const Row* rows, int j, int step) {
  std::array<int, 9> v{};
  int n = 0;
  for (int r = 0; r < 3; ++r)
    for (int d : {-step, 0, step}) v[n++] = rows[r].bytes[4 + j + d];
  return v;
}

TEST(U8Packed3x3Dup, ColumnsHoldTheWindowBytesTimes257) {
  std::mt19937_64 rng(0xd0b1);
  for (int it = 0; it < 20000; ++it) {
    const Row r = random_row(rng);
    u32 p[3];
    dup::columns(r.word(0), r.word(1), r.word(2), p[0], p[1], p[2]);
    // Word q lane k holds byte x0 - 1 + 2q + k.
    for (int q = 0; q < 3; ++q)
      for (int k = 0; k < 2; ++k)
        ASSERT_EQ(lane(p[q], k), 257u * r.bytes[3 + 2 * q + k]) << "columns word " << q;
    const cn3::Cols3 c = dup::columns3(r.word(0), r.word(1), r.word(2));
    // (word, first byte of its lane pair relative to x0): l0 -3, c0 0, r0 +3, l1 -1, c1 +2, r1 +5.
    const std::pair<u32, int> words[] = {{c.l0, -3}, {c.c0, 0}, {c.r0, 3},
                                         {c.l1, -1}, {c.c1, 2}, {c.r1, 5}};
    for (const auto& [w, first] : words)
      for (int k = 0; k < 2; ++k)
        ASSERT_EQ(lane(w, k), 257u * r.bytes[4 + first + k]) << "columns3 lane at " << first;
  }
}

TEST(U8Packed3x3Dup, DilateErodeRowsMatchTheWindow) {
  std::mt19937_64 rng(0xd0b2);
  for (int it = 0; it < 20000; ++it) {
    const Row rows[3] = {random_row(rng), random_row(rng), random_row(rng)};
    u32 p[3][3];  // [row][word]
    for (int r = 0; r < 3; ++r)
      dup::columns(rows[r].word(0), rows[r].word(1), rows[r].word(2), p[r][0], p[r][1], p[r][2]);
    // As morph3_u8_kernel (CN = 1): the vertical op of each column word, then morph3_row.
    const u32 hi = dup::morph3_row<true>(px::vmax3(p[0][0], p[1][0], p[2][0]),
                                         px::vmax3(p[0][1], p[1][1], p[2][1]),
                                         px::vmax3(p[0][2], p[1][2], p[2][2]));
    const u32 lo = dup::morph3_row<false>(px::vmin3(p[0][0], p[1][0], p[2][0]),
                                          px::vmin3(p[0][1], p[1][1], p[2][1]),
                                          px::vmin3(p[0][2], p[1][2], p[2][2]));
    // CN = 3 (morph3_u8_kernel's other branch): the vertical op of each of the six words,
    // then the horizontal op of (l, c, r).
    cn3::Cols3 k[3];
    for (int r = 0; r < 3; ++r)
      k[r] = dup::columns3(rows[r].word(0), rows[r].word(1), rows[r].word(2));
    auto op3 = [](bool mx, u32 a, u32 b, u32 c) {
      return mx ? px::vmax3(a, b, c) : px::vmin3(a, b, c);
    };
    auto morph_cn3 = [&](bool mx) {
      const u32 o0 = op3(mx, op3(mx, k[0].l0, k[1].l0, k[2].l0), op3(mx, k[0].c0, k[1].c0, k[2].c0),
                         op3(mx, k[0].r0, k[1].r0, k[2].r0));
      const u32 o1 = op3(mx, op3(mx, k[0].l1, k[1].l1, k[2].l1), op3(mx, k[0].c1, k[1].c1, k[2].c1),
                         op3(mx, k[0].r1, k[1].r1, k[2].r1));
      return px::byte_perm(o0, o1, 0x6420);
    };
    const u32 hi3 = morph_cn3(true), lo3 = morph_cn3(false);
    for (int j = 0; j < 4; ++j) {
      const std::array<int, 9> w1 = window(rows, j, 1), w3 = window(rows, j, 3);
      ASSERT_EQ(out_byte(hi, j), *std::max_element(w1.begin(), w1.end())) << "dilate byte " << j;
      ASSERT_EQ(out_byte(lo, j), *std::min_element(w1.begin(), w1.end())) << "erode byte " << j;
      ASSERT_EQ(out_byte(hi3, j), *std::max_element(w3.begin(), w3.end())) << "dilate u8x3 " << j;
      ASSERT_EQ(out_byte(lo3, j), *std::min_element(w3.begin(), w3.end())) << "erode u8x3 " << j;
    }
  }
}

TEST(U8Packed3x3Dup, MedianRowsMatchTheSortedWindow) {
  std::mt19937_64 rng(0xd0b3);
  for (int it = 0; it < 20000; ++it) {
    // Four rows: output a = rows 0..2, output b = rows 1..3 (the kernels' shared middle pair).
    const Row rows[4] = {random_row(rng), random_row(rng), random_row(rng), random_row(rng)};
    u32 p[4][3];
    cn3::Cols3 k[4];
    for (int r = 0; r < 4; ++r) {
      dup::columns(rows[r].word(0), rows[r].word(1), rows[r].word(2), p[r][0], p[r][1], p[r][2]);
      k[r] = dup::columns3(rows[r].word(0), rows[r].word(1), rows[r].word(2));
    }
    // CN = 1, as median3_u8_kernel: the middle pair sorted per word, then each third row.
    u32 a[3], b[3];
    for (int q = 0; q < 3; ++q) {
      a[q] = px::vmin(p[1][q], p[2][q]);
      b[q] = px::vmax(p[1][q], p[2][q]);
    }
    const u32 out1[2] = {
        dup::median3_row(a[0], b[0], a[1], b[1], a[2], b[2], p[0][0], p[0][1], p[0][2]),
        dup::median3_row(a[0], b[0], a[1], b[1], a[2], b[2], p[3][0], p[3][1], p[3][2])};
    // CN = 3: sort_pair of the middle rows, median3_row with each third row.
    cn3::Cols3 lo, hi;
    cn3::sort_pair(k[1], k[2], lo, hi);
    const u32 out3[2] = {cn3::median3_row(lo, hi, k[0]), cn3::median3_row(lo, hi, k[3])};
    for (int o = 0; o < 2; ++o)
      for (int j = 0; j < 4; ++j) {
        std::array<int, 9> w1 = window(rows + o, j, 1), w3 = window(rows + o, j, 3);
        std::nth_element(w1.begin(), w1.begin() + 4, w1.end());
        std::nth_element(w3.begin(), w3.begin() + 4, w3.end());
        ASSERT_EQ(out_byte(out1[o], j), w1[4]) << "median row " << o << " byte " << j;
        ASSERT_EQ(out_byte(out3[o], j), w3[4]) << "median u8x3 row " << o << " byte " << j;
      }
  }
}

// The wide median (median3_wide_u8_kernel, CN = 1 and 3): columns_wide's words W(k) = lanes
// (x0 + k, x0 + 4 + k), k = -CN .. 3 + CN, of the tile words a, b, c, d = row bytes x0 - 4 ..
// x0 + 11; each row's sort3 of three rows and median8_row's 8 output bytes, against a brute force
// over the 9 bytes (horizontal neighbours CN bytes apart). The Adder as the kernel builds it
// (one and neg in registers; here their values 1 and 2^32 - 1).
struct Row16 {
  std::array<std::uint8_t, 16> bytes;  // bytes[4] = x0
  u32 word(int w) const {
    return u32(bytes[4 * w]) | u32(bytes[4 * w + 1]) << 8 | u32(bytes[4 * w + 2]) << 16 |
           u32(bytes[4 * w + 3]) << 24;
  }
};

Row16 random_row16(std::mt19937_64& rng, bool tiny) {
  static constexpr std::uint8_t kEdges[] = {0, 1, 127, 128, 254, 255};
  Row16 r;
  for (auto& b : r.bytes)
    b = tiny ? kEdges[rng() % 6] : rng() % 2 ? kEdges[rng() % 6] : std::uint8_t(rng() % 256);
  return r;
}

template <int CN>
void check_wide_median(std::uint64_t seed) {
  constexpr int W = dup::kWideCols<CN>;
  std::mt19937_64 rng(seed);
  dup::Adder f;
  f.one = 1u;
  f.neg = 0u - f.one;
  for (int it = 0; it < 40000; ++it) {
    // Half the rows from the six extremes only: many equal values in a window.
    const bool tiny = it % 2 == 1;
    const Row16 rows[3] = {random_row16(rng, tiny), random_row16(rng, tiny),
                           random_row16(rng, tiny)};
    u32 w[3][W];
    for (int r = 0; r < 3; ++r) {
      dup::columns_wide<CN>(rows[r].word(0), rows[r].word(1), rows[r].word(2), rows[r].word(3),
                            w[r]);
      for (int m = 0; m < W; ++m) {
        const int k = m - CN;  // W(k): bytes x0 + k, x0 + 4 + k
        ASSERT_EQ(lane(w[r][m], 0), 257u * rows[r].bytes[4 + k]) << "CN " << CN << " word " << m;
        ASSERT_EQ(lane(w[r][m], 1), 257u * rows[r].bytes[8 + k]) << "CN " << CN << " word " << m;
      }
    }
    dup::Sorted3 s[W];
    for (int m = 0; m < W; ++m) s[m] = dup::sort3(w[0][m], w[1][m], w[2][m], f);
    const dup::Out8 o = dup::median8_row<CN>(s, f);
    for (int j = 0; j < 8; ++j) {
      std::array<int, 9> v{};
      int n = 0;
      for (int r = 0; r < 3; ++r)
        for (int d : {-CN, 0, CN}) v[n++] = rows[r].bytes[4 + j + d];
      std::nth_element(v.begin(), v.begin() + 4, v.end());
      ASSERT_EQ(out_byte(j < 4 ? o.lo : o.hi, j % 4), v[4]) << "CN " << CN << " byte " << j;
    }
  }
}

TEST(U8Packed3x3Dup, WideMedianRowsMatchTheSortedWindow) {
  check_wide_median<1>(0xd0b4);
  check_wide_median<3>(0xd0b5);
}

}  // namespace
}  // namespace pixflow::test
