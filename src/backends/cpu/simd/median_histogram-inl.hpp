// Constant-time median of u8 images for large windows: Perreault & Hebert, "Median Filtering
// in Constant Time" (IEEE TIP 2007). Highway's per-target include idiom: include after
// <hwy/highway.h>, outside any namespace.
//
// Every padded column (one per sample: a channel's horizontal neighbour is `ch` samples away)
// keeps the histogram of its kh samples in the window rows; moving the output row down
// removes the row leaving the window and adds the row entering (scalar increments, for all
// the strip's columns before the row's sweep). The kernel histogram of an output (the sum of its kw
// columns' histograms) moves right by adding the column entering and subtracting the one leaving.
// Two tiers: 16 coarse bins (the high nibble, one 256-bit vector of u16) kept exact at every pixel,
// and 256 fine bins updated lazily, only the 16-bin segment of the coarse bin holding the median,
// from the pixel its "last updated" stamp says (or rebuilt from the kw columns when that is
// cheaper). The median's coarse bin is found by a scalar scan, its fine bin by vector
// prefix sums and compares. Counts are u16: kw * kh <= 255 * 255 fits. The image is cut into
// vertical strips whose column histograms (544 bytes a column) take about half the L2 cache; each
// strip slides down the whole band of rows. The result is element kw*kh/2 of the sorted window, as
// src/ref/median.cpp, bit-identical.
#if defined(PIXFLOW_SIMD_MEDIAN_HISTOGRAM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PIXFLOW_SIMD_MEDIAN_HISTOGRAM_INL_H_
#undef PIXFLOW_SIMD_MEDIAN_HISTOGRAM_INL_H_
#else
#define PIXFLOW_SIMD_MEDIAN_HISTOGRAM_INL_H_
#endif

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "pixflow/image.hpp"
#include "pixflow/ops.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/numeric.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Whether median_rows takes the histogram kernel: u8 windows other than the 3x3, 5x5, 7x7
/// sorting networks, of at least 169 samples. Below, the bit-by-bit selection of median.cpp
/// costs less: 4096 x 1024 u8x1 at one thread on Zen 5, selection 11x11 7.1 ns/px, 13x13
/// 9.5, 15x15 14.0; this kernel 9.0 / 8.4 / 8.3 ns/px, and 7-8 ns/px for any larger window.
constexpr bool median_uses_histogram(int kw, int kh) {
  return !(kw == kh && (kw == 3 || kw == 5 || kw == 7)) && kw * kh >= 169;
}

#if HWY_TARGET != HWY_SCALAR
namespace median_hist {

/// Bytes of column histograms per strip: half the L2 cache (read once; 512 KiB if unknown),
/// within [128 KiB, 1 MiB].
inline std::int64_t strip_bytes() {
  static const std::int64_t bytes = [] {
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (l2 <= 0) l2 = 1 << 20;
    return std::clamp<std::int64_t>(l2 / 2, 128 << 10, 1 << 20);
  }();
  return bytes;
}

// a[0..16) += plus[0..16) - minus[0..16).
template <class D>
HWY_INLINE void add_sub16(D d, std::uint16_t* HWY_RESTRICT a, const std::uint16_t* plus,
                          const std::uint16_t* minus) {
  for (std::size_t i = 0; i < 16; i += hn::Lanes(d))
    hn::Store(hn::Sub(hn::Add(hn::Load(d, a + i), hn::Load(d, plus + i)), hn::Load(d, minus + i)),
              d, a + i);
}
// a[0..16) = sum of col[k * stride ..][0..16), k < n (in a register, not through memory).
template <class D>
HWY_INLINE void sum16(D d, std::uint16_t* HWY_RESTRICT a, const std::uint16_t* HWY_RESTRICT col,
                      std::int64_t stride, std::int64_t n) {
  for (std::size_t i = 0; i < 16; i += hn::Lanes(d)) {
    auto acc = hn::Zero(d);
    for (std::int64_t k = 0; k < n; ++k) acc = hn::Add(acc, hn::Load(d, col + k * stride + i));
    hn::Store(acc, d, a + i);
  }
}
// a[0..16) += sum over k < n of plus[k * stride ..] - minus[k * stride ..].
template <class D>
HWY_INLINE void slide16(D d, std::uint16_t* HWY_RESTRICT a, const std::uint16_t* plus,
                        const std::uint16_t* minus, std::int64_t stride, std::int64_t n) {
  for (std::size_t i = 0; i < 16; i += hn::Lanes(d)) {
    auto acc = hn::Load(d, a + i);
    for (std::int64_t k = 0; k < n; ++k)
      acc = hn::Sub(hn::Add(acc, hn::Load(d, plus + k * stride + i)),
                    hn::Load(d, minus + k * stride + i));
    hn::Store(acc, d, a + i);
  }
}

// The bin of h[0..16) that holds element r of the sorted samples (sum(h) > r): the number of
// bins whose count up to and including them is <= r; *below = the count before that bin.
// x86: prefix sums in vectors, no branch (a scan's exit mispredicts about once a pixel on
// noisy images).
template <class D>
HWY_INLINE int select_bin(D d, const std::uint16_t* HWY_RESTRICT h, int r, int* below) {
#if HWY_ARCH_X86
  constexpr std::size_t kN = hn::MaxLanes(D());
  static_assert(kN == 8 || kN == 16, "CappedTag<uint16_t, 16> on x86: 128 or 256 bits");
  // pre[i + 1] = h[0] + ... + h[i]; pre[0] = 0.
  HWY_ALIGN std::uint16_t pre[32];
  pre[0] = 0;
  const auto lim = hn::Set(d, std::uint16_t(r + 1));  // r <= 255 * 255 / 2
  auto prefix = [&](hn::Vec<D> v) {                   // within 128-bit blocks
    v = hn::Add(v, hn::ShiftLeftLanes<1>(d, v));
    v = hn::Add(v, hn::ShiftLeftLanes<2>(d, v));
    return hn::Add(v, hn::ShiftLeftLanes<4>(d, v));
  };
  int b;
  if constexpr (kN == 16) {
    auto v = prefix(hn::Load(d, h));
    v = hn::Add(v, hn::ConcatLowerLower(d, hn::Broadcast<7>(v), hn::Zero(d)));
    hn::StoreU(v, d, pre + 1);
    b = int(hn::CountTrue(d, hn::Lt(v, lim)));
  } else {
    const auto v0 = prefix(hn::Load(d, h));
    const auto v1 = hn::Add(prefix(hn::Load(d, h + 8)), hn::Broadcast<7>(v0));
    hn::StoreU(v0, d, pre + 1);
    hn::StoreU(v1, d, pre + 9);
    b = int(hn::CountTrue(d, hn::Lt(v0, lim)) + hn::CountTrue(d, hn::Lt(v1, lim)));
  }
  *below = pre[b];
  return b;
#else
  (void)d;
  int b = 0, n = 0;
  while (n + h[b] <= r) n += h[b++];
  *below = n;
  return b;
#endif
}

}  // namespace median_hist

inline void median_histogram_u8(const ConstImageView& src, const ImageView& dst,
                                const MedianParams& p, Rows rows) {
  namespace mh = median_hist;
  const hn::CappedTag<std::uint16_t, 16> d;
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const int kw = p.kw, rx = p.kw / 2, ry = p.kh / 2;
  const int rank = p.kw * p.kh / 2;
  const BorderType bt = p.border.type;
  const std::uint8_t cval = detail::saturate_cast<std::uint8_t>(p.border.value);
  if (rows.begin >= rows.end || w <= 0) return;

  // Strip width S (outputs): its (S + 2 rx) * ch columns take strip_bytes(); at least kw
  // outputs, so that the 2 rx columns a strip shares with the next cost at most as much as
  // its own; strips of equal width.
  constexpr std::int64_t kColBytes = 17 * 16 * sizeof(std::uint16_t);
  std::int64_t S =
      std::max<std::int64_t>(mh::strip_bytes() / kColBytes / ch - 2 * rx, std::max(kw, 64));
  const std::int64_t nstrips = (w + S - 1) / S;
  S = (w + nstrips - 1) / nstrips;
  const std::int64_t maxcols = (S + 2 * rx) * ch;

  Scratch<std::uint16_t> colc{std::size_t(maxcols * 16)}, colf{std::size_t(maxcols * 256)};
  Scratch<std::uint16_t> kfine{256};
  Scratch<std::uint8_t> add_buf{std::size_t(maxcols)}, rem_buf{std::size_t(maxcols)},
      const_row{std::size_t(maxcols)};
  std::memset(const_row.data(), cval, std::size_t(maxcols));
  HWY_ALIGN std::uint16_t kc[16];

  for (std::int64_t x0 = 0; x0 < w; x0 += S) {
    const std::int64_t sw = std::min(S, w - x0);  // outputs of this strip
    const std::int64_t npx = sw + 2 * rx;         // padded pixels it reads
    const std::int64_t ncols = npx * ch;
    // Padded pixel i of the strip is source pixel x0 - rx + i (by the border rule outside
    // [0, w)): [left, right) of them lie inside the image.
    const std::int64_t left = std::clamp<std::int64_t>(rx - x0, 0, npx);
    const std::int64_t right = std::clamp<std::int64_t>(w - x0 + rx, left, npx);
    // The strip's padded samples of window row a (a buffer's, or the source row's own).
    auto strip_row = [&](std::int64_t a, std::uint8_t* buf) -> const std::uint8_t* {
      const std::int64_t sy = detail::border_index(a, h, bt);
      if (sy < 0) return const_row.data();
      const std::uint8_t* in = src.row<std::uint8_t>(sy);
      if (left == 0 && right == npx) return in + (x0 - rx) * ch;
      for (std::int64_t i = 0; i < npx; ++i) {
        if (i == left && right > left) {
          std::memcpy(buf + i * ch, in + (x0 - rx + i) * ch, std::size_t((right - left) * ch));
          i = right - 1;
          continue;
        }
        const std::int64_t sx = detail::border_index(x0 - rx + i, w, bt);
        for (int c = 0; c < ch; ++c) buf[i * ch + c] = sx < 0 ? cval : in[sx * ch + c];
      }
      return buf;
    };

    // Column histograms of the window rows of the band's first output row but its last.
    std::uint16_t* HWY_RESTRICT cc = colc.data();
    std::uint16_t* HWY_RESTRICT cf = colf.data();
    std::memset(cc, 0, std::size_t(ncols * 16) * sizeof(std::uint16_t));
    std::memset(cf, 0, std::size_t(ncols * 256) * sizeof(std::uint16_t));
    for (std::int64_t a = rows.begin - ry; a < rows.begin + ry; ++a) {
      const std::uint8_t* r = strip_row(a, add_buf.data());
      for (std::int64_t j = 0; j < ncols; ++j) {
        ++cc[j * 16 + (r[j] >> 4)];
        ++cf[j * 256 + r[j]];
      }
    }

    for (std::int64_t y = rows.begin; y < rows.end; ++y) {
      const std::uint8_t* add = strip_row(y + ry, add_buf.data());
      const std::uint8_t* rem = y > rows.begin ? strip_row(y - 1 - ry, rem_buf.data()) : nullptr;
      std::uint8_t* out = dst.row<std::uint8_t>(y) + x0 * ch;
      // Every column moves down a row first: add the new row's sample, remove the old row's.
      // (Done column by column inside the sweep, the kernel's vector loads of a column just
      // written by scalar stores wait for the stores: ~3x slower.)
      if (rem) {
        for (std::int64_t j = 0; j < ncols; ++j) {
          const int v = add[j], u = rem[j];
          ++cc[j * 16 + (v >> 4)];
          ++cf[j * 256 + v];
          --cc[j * 16 + (u >> 4)];
          --cf[j * 256 + u];
        }
      } else {
        for (std::int64_t j = 0; j < ncols; ++j) {
          const int v = add[j];
          ++cc[j * 16 + (v >> 4)];
          ++cf[j * 256 + v];
        }
      }
      for (int c = 0; c < ch; ++c) {
        // Column of padded pixel i, this channel.
        auto ccol = [&](std::int64_t i) { return cc + (i * ch + c) * 16; };
        auto fcol = [&](std::int64_t i) { return cf + (i * ch + c) * 256; };
        const std::int64_t fstride = std::int64_t(ch) * 256;
        mh::sum16(d, kc, ccol(0), std::int64_t(ch) * 16, kw);
        // stamp[b]: the output whose window fine segment b holds (stale at the row start).
        std::int64_t stamp[16];
        std::fill(stamp, stamp + 16, std::int64_t(-(std::int64_t(1) << 40)));
        std::uint16_t* HWY_RESTRICT kf = kfine.data();
        for (std::int64_t x = 0; x < sw; ++x) {
          if (x > 0) mh::add_sub16(d, kc, ccol(x + 2 * rx), ccol(x - 1));
          // The coarse bin by a scalar scan: the median's coarse bin changes slowly, so its
          // exit predicts well, and the fine segment's loads can start early (select_bin
          // here: ~20 % slower).
          int b = 0, below = 0;
          while (below + kc[b] <= rank) below += kc[b++];
          std::uint16_t* seg = kf + b * 16;
          const std::int64_t dt = x - stamp[b];
          if (dt > 0) {
            if (2 * dt > kw) {
              mh::sum16(d, seg, fcol(x) + b * 16, fstride, kw);
            } else {
              mh::slide16(d, seg, fcol(stamp[b] + 1 + 2 * rx) + b * 16, fcol(stamp[b]) + b * 16,
                          fstride, dt);
            }
            stamp[b] = x;
          }
          // The fine bin by vector compares (a scan's exit mispredicts here: 2x slower).
          int below_f;
          const int f = mh::select_bin(d, seg, rank - below, &below_f);
          out[x * ch + c] = std::uint8_t(b * 16 + f);
        }
      }
    }
  }
}
#endif

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
