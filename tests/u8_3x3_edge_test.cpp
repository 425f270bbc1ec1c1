// The 32-bit border rule of the packed 3x3 short shape's edge tiles (u8_3x3_edge.hpp, used by
// load_edge_tile_short in src/backends/cuda/u8_3x3.cuh) run on the CPU: no GPU is needed.
// border_index32 against detail::border_index for every border, lengths 1.. (the periodic
// cases of tiny images) and large ones near 2^30, coordinates several periods outside;
// row_byte_index32 against the pixel rule (floor(e / CN), channel kept) for CN = 1, 3, 4; and
// the loader emulated tile by tile as the kernel runs it (256 threads, <= 3 words a thread,
// the uniform x-inside branch by word, the others by edge_byte_offset's bytes, offsets into
// an image of padded rows) over images of awkward widths and heights, every word of every
// short tile checked against the brute-force byte of its position and written exactly once.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "src/backends/cuda/u8_3x3_edge.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::test {
namespace {

namespace edge = pixflow::cuda::u8_3x3_edge;

constexpr BorderType kBorders[] = {BorderType::replicate, BorderType::reflect,
                                   BorderType::reflect101, BorderType::wrap, BorderType::constant};

TEST(BorderIndex32, MatchesReferenceRuleForEveryBorder) {
  for (const BorderType t : kBorders) {
    for (int len = 1; len <= 70; ++len) {
      for (int p = -5 * len - 300; p <= 6 * len + 300; ++p)
        ASSERT_EQ(edge::border_index32(p, len, t), detail::border_index(p, len, t))
            << "p " << p << " len " << len << " border " << int(t);
    }
    for (const int len : {1000, 65535, 1 << 20, (1 << 29) + 3, (1 << 30) - 1}) {
      for (int d = -300; d <= 300; ++d) {
        for (const long long base : {0LL, (long long)len}) {
          const long long p = base + d;
          ASSERT_EQ(edge::border_index32(int(p), len, t), detail::border_index(p, len, t))
              << "p " << p << " len " << len << " border " << int(t);
        }
      }
    }
  }
}

// The reference: the pixel of byte e (floor division), mapped by detail::border_index, the
// channel kept.
long long ref_byte_index(long long e, long long w, int cn, BorderType t) {
  const long long px = e >= 0 ? e / cn : -((-e + cn - 1) / cn);
  const long long ch = e - px * cn;
  const long long sp = detail::border_index(px, w, t);
  return sp < 0 ? -1 : sp * cn + ch;
}

template <int CN>
void check_row_bytes() {
  for (const BorderType t : kBorders) {
    for (int w = 1; w <= 60; ++w) {
      for (int e = -40; e <= w * CN + 300; ++e)
        ASSERT_EQ(edge::row_byte_index32<CN>(e, w, t), ref_byte_index(e, w, CN, t))
            << "CN " << CN << " e " << e << " w " << w << " border " << int(t);
    }
  }
}

// The closed form of the indices just outside a line (the rows8 shape's edges).
TEST(BorderIndex32, AdjacentIndicesMatchReferenceRule) {
  for (const BorderType t : kBorders) {
    for (const int len : {1, 2, 3, 4, 5, 17, 1920, (1 << 30) - 1}) {
      ASSERT_EQ(edge::border_adjacent32(false, len, t), detail::border_index(-1, len, t))
          << "len " << len << " border " << int(t);
      ASSERT_EQ(edge::border_adjacent32(true, len, t), detail::border_index(len, len, t))
          << "len " << len << " border " << int(t);
    }
  }
}

TEST(BorderIndex32, RowByteIndexMatchesPixelRule) {
  check_row_bytes<1>();
  check_row_bytes<3>();
  check_row_bytes<4>();
}

// u8_3x3.cuh's short shape: 32 x 8 threads, 128 output bytes x 16 rows a block; the tile rows
// hold 34 words (bytes bx0 - 4 .. bx0 + 131) of rows by0 - kHalo .. by0 + 15 + kHalo.
constexpr int kThreads = 256, kBW = 128, kBH = 16, kTileWords = 34;

struct Img {
  int w = 0, h = 0, cn = 1;  // pixels
  std::vector<std::uint8_t> b;
  std::uint8_t at(long long e, long long y) const {
    return b[std::size_t(y * (long long)w * cn + e)];
  }
};

// A random w x h image of CN channels, and the same image in memory with padded, 4-byte
// aligned rows (stride > row bytes, as a view of a larger image; 0xa5 past each row).
template <int CN>
Img random_img(int w, int h, std::mt19937& rng) {
  Img im;
  im.w = w;
  im.h = h;
  im.cn = CN;
  im.b.resize(std::size_t(w) * h * CN);
  for (auto& v : im.b) v = std::uint8_t(rng());
  return im;
}
int padded_stride(const Img& im) {
  return (im.w * im.cn + 3) / 4 * 4 + 8;
}
std::vector<std::uint8_t> padded_mem(const Img& im) {
  const int wc = im.w * im.cn, stride = padded_stride(im);
  std::vector<std::uint8_t> mem(std::size_t(stride) * im.h + 4, 0xa5);
  for (int y = 0; y < im.h; ++y)
    for (int e = 0; e < wc; ++e) mem[std::size_t(y) * stride + e] = im.at(e, y);
  return mem;
}

// load_edge_tile_short's words for the tile at (x0, y0) (x0 = bx0 - 4, y0 = by0 - kHalo), as
// the kernel computes them: thread tid's words i = tid + 256 k, k < kN; the offsets first
// (edge_row_offset, edge_byte_offset), then the reads (edge_byte, or a word at the offset
// with offset 0 read for -1 in the x-inside branch) from the image's bytes `mem` (rows
// `stride` bytes apart).
template <int CN>
std::vector<std::uint32_t> emulate_tile(const std::vector<std::uint8_t>& mem, int w, int h,
                                        int stride, int x0, int y0, int kH, bool aligned,
                                        BorderType t, std::uint8_t value,
                                        std::vector<int>& writes) {
  const int total = kH * kTileWords, full = total / kThreads;
  const int n = full + int(total % kThreads != 0);
  const int wc = w * CN;
  std::vector<std::uint32_t> tile(std::size_t(total), 0);
  writes.assign(std::size_t(total), 0);
  auto byte = [&](int o) { return mem.at(std::size_t(o)); };
  const bool xin = aligned && x0 >= 0 && x0 + 4 * kTileWords <= wc;
  for (int tid = 0; tid < kThreads; ++tid) {
    for (int k = 0; k < n; ++k) {
      const int i = tid + k * kThreads, r = i / kTileWords, wd = i - r * kTileWords;
      const int ro = edge::edge_row_offset(y0 + r, h, stride, t);
      std::uint32_t v = 0;
      if (xin) {
        const int off = ro < 0 || !(k < full || i < total) ? -1 : ro + x0 + 4 * wd;
        for (int j = 0; j < 4; ++j) v |= std::uint32_t(byte((off < 0 ? 0 : off) + j)) << (8 * j);
        if (off < 0) v = value * 0x01010101u;
      } else {
        for (int j = 0; j < 4; ++j)
          v |= edge::edge_byte(byte, edge::edge_byte_offset<CN>(ro, x0 + 4 * wd + j, w, t), value)
               << (8 * j);
      }
      if (!(k < full || i < total)) continue;
      tile[std::size_t(r * kTileWords + wd)] = v;
      ++writes[std::size_t(r * kTileWords + wd)];
    }
  }
  return tile;
}

template <int CN>
void check_tiles(int w, int h, int halo, std::mt19937& rng) {
  const Img im = random_img<CN>(w, h, rng);
  const std::uint8_t value = std::uint8_t(rng());
  const int wc = w * CN, kH = kBH + 2 * halo;
  const int stride = padded_stride(im);
  const std::vector<std::uint8_t> mem = padded_mem(im);
  for (const BorderType t : kBorders) {
    for (const bool aligned : {true, false}) {
      for (int bx0 = 0; bx0 < wc; bx0 += kBW) {
        for (int by0 = 0; by0 < h; by0 += kBH) {
          std::vector<int> writes;
          const auto tile = emulate_tile<CN>(mem, w, h, stride, bx0 - 4, by0 - halo, kH, aligned, t,
                                             value, writes);
          for (int r = 0; r < kH; ++r) {
            const long long sy = detail::border_index(by0 - halo + r, h, t);
            for (int wd = 0; wd < kTileWords; ++wd) {
              const std::size_t at = std::size_t(r * kTileWords + wd);
              ASSERT_EQ(writes[at], 1) << "word " << wd << " row " << r;
              for (int j = 0; j < 4; ++j) {
                const long long e = bx0 - 4 + 4LL * wd + j;
                const long long sx = ref_byte_index(e, w, CN, t);
                const std::uint8_t want = sy < 0 || sx < 0 ? value : im.at(sx, sy);
                ASSERT_EQ(std::uint8_t(tile[at] >> (8 * j)), want)
                    << "CN " << CN << " " << w << "x" << h << " border " << int(t) << " aligned "
                    << aligned << " block (" << bx0 << ", " << by0 << ") tile row " << r << " byte "
                    << e;
              }
            }
          }
        }
      }
    }
  }
}

TEST(BorderIndex32, ShortEdgeTilesMatchBruteForce) {
  std::mt19937 rng(12345);
  // Widths: 1 pixel, under a word, under a block, a block +- a byte, several blocks, odd.
  for (const int w : {1, 2, 3, 5, 7, 31, 127, 128, 129, 133, 257, 300})
    for (const int h : {1, 2, 3, 15, 17, 33})
      for (const int halo : {1, 2}) check_tiles<1>(w, h, halo, rng);
  for (const int w : {1, 2, 3, 5, 42, 43, 44, 86, 101})
    for (const int h : {1, 2, 17, 33}) check_tiles<3>(w, h, 1, rng);
}

// The rows path of the short shape (u8_3x3.cuh, load_rows_words and for_each_rows_tile),
// emulated warp by warp as the kernel runs it: 8 warps of 32 lanes a block, 2 output rows a
// warp (window rows y .. y + 3, y = by0 + 2 ty - 1), a word a lane a row (row byte
// bx0 + 4 lane) and lanes 0 / 31's second word (rows_extra_x), the shuffles (up: lane - 1's
// word, lane 0 its own; down: lane + 1's, lane 31 its own) and rows_left / rows_right. Every
// block column that rows_x_inside admits, every block row, both forms: rows-inside (offsets
// by the stride; run wherever rows_y_inside admits the block, as the kernel) and the general
// one (edge_row_offset, rows_word_offset, rows_word; run for every block row). Each lane's
// a, b, c against the brute-force bytes x0 - 4 .. x0 + 7 of its rows by the rule.
constexpr int kLanes = 32, kWarps = 8, kRowsR = 2, kWinRows = kRowsR + 2;

struct Words3 {
  std::uint32_t a, b, c;
};

std::uint32_t word_at(const std::vector<std::uint8_t>& mem, long long off) {
  std::uint32_t v = 0;
  for (int j = 0; j < 4; ++j) v |= std::uint32_t(mem.at(std::size_t(off + j))) << (8 * j);
  return v;
}

// One warp's words of window row r: [lane] = {a, b, c}.
std::vector<Words3> emulate_rows_warp(const std::vector<std::uint8_t>& mem, int h, int stride,
                                      int bx0, int y, int r, bool rows_in, BorderType t,
                                      std::uint8_t value) {
  std::uint32_t b[kLanes], e[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    const int xb = bx0 + 4 * lane, xe = edge::rows_extra_x(bx0, lane);
    if (rows_in) {
      const long long p = (long long)y * stride + xb + (long long)r * stride;
      b[lane] = word_at(mem, p);
      e[lane] = xe - xb != 0 ? word_at(mem, p + (xe - xb)) : 0u;
    } else {
      const int ro = edge::edge_row_offset(y + r, h, stride, t);
      b[lane] = edge::rows_word(word_at(mem, edge::rows_word_offset(ro, xb)), ro, value);
      e[lane] = edge::rows_word(word_at(mem, edge::rows_word_offset(ro, xe)), ro, value);
    }
  }
  std::vector<Words3> out(kLanes);
  for (int lane = 0; lane < kLanes; ++lane) {
    const std::uint32_t up = b[lane == 0 ? 0 : lane - 1];
    const std::uint32_t down = b[lane == kLanes - 1 ? lane : lane + 1];
    out[std::size_t(lane)] = {edge::rows_left(up, e[lane], lane), b[lane],
                              edge::rows_right(down, e[lane], lane)};
  }
  return out;
}

template <int CN>
void check_rows_path(int w, int h, std::mt19937& rng, int& blocks_in, int& blocks_rows_in) {
  const Img im = random_img<CN>(w, h, rng);
  const std::uint8_t value = std::uint8_t(rng());
  const int wc = w * CN;
  const int stride = padded_stride(im);
  const std::vector<std::uint8_t> mem = padded_mem(im);
  for (const BorderType t : kBorders) {
    for (int bx0 = 0; bx0 < wc; bx0 += kBW) {
      ASSERT_FALSE(edge::rows_x_inside(bx0, wc, false)) << "unaligned rows take the tile";
      if (!edge::rows_x_inside(bx0, wc, true)) continue;
      ++blocks_in;
      for (int by0 = 0; by0 < h; by0 += kBH) {
        const bool fast = edge::rows_y_inside(by0, kBH, h);
        blocks_rows_in += fast;
        for (const bool rows_in : {false, true}) {
          if (rows_in && !fast) continue;
          for (int ty = 0; ty < kWarps; ++ty) {
            const int y = by0 + ty * kRowsR - 1;
            for (int r = 0; r < kWinRows; ++r) {
              const auto words = emulate_rows_warp(mem, h, stride, bx0, y, r, rows_in, t, value);
              const long long sy = detail::border_index(y + r, h, t);
              for (int lane = 0; lane < kLanes; ++lane) {
                const Words3& v = words[std::size_t(lane)];
                const std::uint32_t got[3] = {v.a, v.b, v.c};
                for (int k = 0; k < 12; ++k) {
                  const long long e = bx0 + 4LL * lane - 4 + k;
                  const long long sx = ref_byte_index(e, w, CN, t);
                  const std::uint8_t want = sy < 0 || sx < 0 ? value : im.at(sx, sy);
                  ASSERT_EQ(std::uint8_t(got[k / 4] >> (8 * (k % 4))), want)
                      << "CN " << CN << " " << w << "x" << h << " border " << int(t) << " rows_in "
                      << rows_in << " block (" << bx0 << ", " << by0 << ") warp " << ty << " lane "
                      << lane << " window row " << r << " byte " << e;
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(BorderIndex32, RowsPathWordsMatchBruteForce) {
  std::mt19937 rng(777);
  int blocks_in = 0, blocks_rows_in = 0;
  // Widths around the first and last admitted block columns (bx0 = 128 needs 260 row bytes);
  // heights of 1 .. 3 rows, around a block row (16) and its halo, several block rows.
  for (const int w : {255, 259, 260, 261, 263, 300, 388, 389, 392, 520, 647})
    for (const int h : {1, 2, 3, 15, 16, 17, 18, 19, 32, 33, 34, 48, 50})
      check_rows_path<1>(w, h, rng, blocks_in, blocks_rows_in);
  for (const int w : {86, 87, 88, 100, 130, 173})
    for (const int h : {1, 2, 17, 18, 35}) check_rows_path<3>(w, h, rng, blocks_in, blocks_rows_in);
  // Both forms ran (the test cannot pass vacuously).
  EXPECT_GT(blocks_in, 100);
  EXPECT_GT(blocks_rows_in, 100);
}

// rows_x_inside admits exactly the block columns whose words bx0 - 4 .. bx0 + 131 lie in the
// row; rows_y_inside exactly the block rows whose rows by0 - 1 .. by0 + 16 do.
TEST(BorderIndex32, RowsPathAdmitsExactlyTheInsideBlocks) {
  for (int wc = 1; wc <= 1200; ++wc)
    for (int bx0 = 0; bx0 < wc; bx0 += kBW)
      ASSERT_EQ(edge::rows_x_inside(bx0, wc, true), bx0 - 4 >= 0 && bx0 + 132 <= wc)
          << "wc " << wc << " bx0 " << bx0;
  for (int h = 1; h <= 200; ++h)
    for (int by0 = 0; by0 < h; by0 += kBH)
      ASSERT_EQ(edge::rows_y_inside(by0, kBH, h), by0 - 1 >= 0 && by0 + kBH < h)
          << "h " << h << " by0 " << by0;
}

}  // namespace
}  // namespace pixflow::test
