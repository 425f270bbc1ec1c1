// The u8 x 3 form of the CUDA packed 3x3 kernels (src/backends/cuda/u8_3x3.cuh with CN = 3;
// its channel arithmetic in u8_3x3_cn.hpp) run on the CPU: no GPU is needed. The test builds
// each block's word tile as the kernel's loader does (row bytes bx0 - 4 .. bx0 + 131 of rows
// by0 - 1 .., an edge byte's pixel through the border rule by pixel_of_byte, its channel kept),
// takes every thread's columns3 words, and checks per output byte that the three packed words
// of its lane hold exactly the bytes of its 3x3 window of one channel: the window's max and
// min (dilate/erode, as the kernel combines them) and sum (box/Gaussian's lane sums) against
// a brute-force window through detail::border_index; and the 3x3 median (median3_u8_kernel,
// CN = 3: sort_pair and median3_row in both of the kernel's row orders) against a sorted
// window. Every border, image sizes from 1x1 (every byte an edge byte) to several blocks.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/u8_3x3_cn.hpp"
#include "src/base/numeric.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace cn3 = pixflow::cuda::u8_3x3_cn;
namespace px = pixflow::cuda::px;
using u32 = std::uint32_t;
constexpr int kCN = 3;
constexpr int kBW = 128, kTileWords = 34;  // u8_3x3.cuh: bytes a block row, words a tile row

struct Img {
  long long w = 0, h = 0;  // pixels
  std::vector<std::uint8_t> b;
  std::uint8_t at(long long e, long long y) const { return b[std::size_t(y * w * kCN + e)]; }
};

// The loader's byte (load_word_tile_u8, CN = 3, edge path): row byte e of row y.
std::uint8_t loaded(const Img& im, long long e, long long y, const Border& bd) {
  const std::uint8_t value = detail::saturate_cast<std::uint8_t>(bd.value);
  const long long sy = detail::border_index(y, im.h, bd.type);
  if (sy < 0) return value;
  if (e >= 0 && e < im.w * kCN) return im.at(e, sy);
  long long p;
  int ch;
  cn3::pixel_of_byte(e, kCN, p, ch);
  const long long sp = detail::border_index(p, im.w, bd.type);
  return sp < 0 ? value : im.at(sp * kCN + ch, sy);
}

// Brute force: channel c of pixel (x + dx, y + dy) by the border rule.
int window_sample(const Img& im, long long x, long long y, int c, const Border& bd) {
  const long long sx = detail::border_index(x, im.w, bd.type);
  const long long sy = detail::border_index(y, im.h, bd.type);
  if (sx < 0 || sy < 0) return detail::saturate_cast<std::uint8_t>(bd.value);
  return im.at(sx * kCN + c, sy);
}

u32 lane(u32 w, int k) {
  return k == 0 ? w & 0xffffu : w >> 16;
}

// Emulates every block and thread of the kernel over `im`; returns the number of wrong bytes.
long long check(const Img& im, const Border& bd) {
  const long long wc = im.w * kCN;
  long long bad = 0;
  for (long long bx0 = 0; bx0 < wc; bx0 += kBW)
    for (long long y = 0; y < im.h; ++y) {
      // Tile rows y - 1 .. y + 1 of this block: words of bytes bx0 - 4 + 4 wd ...
      u32 tile[3][kTileWords];
      for (int r = 0; r < 3; ++r)
        for (int wd = 0; wd < kTileWords; ++wd) {
          u32 word = 0;
          for (int j = 0; j < 4; ++j)
            word |= u32(loaded(im, bx0 - 4 + 4 * wd + j, y - 1 + r, bd)) << (8 * j);
          tile[r][wd] = word;
        }
      for (int tx = 0; tx < kBW / 4; ++tx) {
        const long long x0 = bx0 + 4 * tx;
        cn3::Cols3 k[3];
        for (int r = 0; r < 3; ++r)
          k[r] = cn3::columns3(tile[r][tx], tile[r][tx + 1], tile[r][tx + 2]);
        // The kernel's vertical then horizontal 3-input ops (morph3_u8_kernel, CN = 3).
        const u32 mx0 =
            px::vmax3(px::vmax3(k[0].l0, k[1].l0, k[2].l0), px::vmax3(k[0].c0, k[1].c0, k[2].c0),
                      px::vmax3(k[0].r0, k[1].r0, k[2].r0));
        const u32 mx1 =
            px::vmax3(px::vmax3(k[0].l1, k[1].l1, k[2].l1), px::vmax3(k[0].c1, k[1].c1, k[2].c1),
                      px::vmax3(k[0].r1, k[1].r1, k[2].r1));
        const u32 mn0 =
            px::vmin3(px::vmin3(k[0].l0, k[1].l0, k[2].l0), px::vmin3(k[0].c0, k[1].c0, k[2].c0),
                      px::vmin3(k[0].r0, k[1].r0, k[2].r0));
        const u32 mn1 =
            px::vmin3(px::vmin3(k[0].l1, k[1].l1, k[2].l1), px::vmin3(k[0].c1, k[1].c1, k[2].c1),
                      px::vmin3(k[0].r1, k[1].r1, k[2].r1));
        // median3_u8_kernel (CN = 3): output row i sorts its rows i+1, i+2 as a pair and adds
        // row i; output i+1 adds row i+3 to the same pair. Here: pair (y, y+1) + row y-1, and
        // pair (y-1, y) + row y+1.
        cn3::Cols3 lo, hi;
        cn3::sort_pair(k[1], k[2], lo, hi);
        const u32 med_top = cn3::median3_row(lo, hi, k[0]);
        cn3::sort_pair(k[0], k[1], lo, hi);
        const u32 med_bottom = cn3::median3_row(lo, hi, k[2]);
        // linear3's row sums (taps 1, 1, 1), then the three rows per lane.
        u32 s0 = 0, s1 = 0;
        for (int r = 0; r < 3; ++r) {
          s0 += k[r].l0 + k[r].c0 + k[r].r0;
          s1 += k[r].l1 + k[r].c1 + k[r].r1;
        }
        for (int j = 0; j < 4; ++j) {
          const long long e = x0 + j;
          if (e >= wc) continue;
          const long long p = e / kCN;
          const int c = int(e % kCN);
          int want_max = 0, want_min = 255, want_sum = 0;
          int win[9], n = 0;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int v = window_sample(im, p + dx, y + dy, c, bd);
              want_max = std::max(want_max, v);
              want_min = std::min(want_min, v);
              want_sum += v;
              win[n++] = v;
            }
          std::sort(win, win + 9);
          const int want_med = win[4];
          // Byte j of the median words (median3_row's byte_perm), not a lane.
          const u32 gmed_top = (med_top >> (8 * j)) & 0xffu;
          const u32 gmed_bottom = (med_bottom >> (8 * j)) & 0xffu;
          if ((gmed_top != u32(want_med) || gmed_bottom != u32(want_med)) && ++bad <= 5)
            ADD_FAILURE() << im.w << "x" << im.h << " " << describe(bd) << " byte " << e << " row "
                          << y << ": median " << gmed_top << "," << gmed_bottom << "/" << want_med;
          const u32 gmax = lane(j < 2 ? mx0 : mx1, j % 2), gmin = lane(j < 2 ? mn0 : mn1, j % 2);
          const u32 gsum = lane(j < 2 ? s0 : s1, j % 2);
          if ((gmax != u32(want_max) || gmin != u32(want_min) || gsum != u32(want_sum)) &&
              ++bad <= 5)
            ADD_FAILURE() << im.w << "x" << im.h << " " << describe(bd) << " byte " << e << " row "
                          << y << ": max " << gmax << "/" << want_max << " min " << gmin << "/"
                          << want_min << " sum " << gsum << "/" << want_sum;
        }
      }
    }
  return bad;
}

TEST(U8x3Packed3x3, PixelOfByteFloorsForEverySign) {
  for (long long e = -40; e < 40; ++e) {
    long long p;
    int ch;
    cn3::pixel_of_byte(e, kCN, p, ch);
    EXPECT_EQ(p * kCN + ch, e);
    EXPECT_TRUE(ch >= 0 && ch < kCN) << e;
  }
}

TEST(U8x3Packed3x3, EveryOutputByteSeesItsChannelsWindowUnderEveryBorder) {
  auto rng = make_rng(0x3c301);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<std::pair<long long, long long>> sizes = {
      {1, 1}, {2, 1}, {1, 3}, {2, 2}, {5, 7}, {42, 3}, {43, 2}, {44, 4}, {90, 5}, {131, 3}};
  for (const auto& [w, h] : sizes)
    for (const Border& bd : borders) {
      Img im;
      im.w = w;
      im.h = h;
      im.b.resize(std::size_t(w * h * kCN));
      for (auto& v : im.b) v = std::uint8_t(rng());
      EXPECT_EQ(check(im, bd), 0) << w << "x" << h << " " << describe(bd);
    }
}

}  // namespace
}  // namespace pixflow::test
