// SIMD median for the cpu backend, square windows k = 3, 5, 7 (u8, u16, f32; any channels):
// the rule of src/ref/median.cpp (element k*k/2 of the sorted window; f32 in totalOrder, run
// here on detail::order_key's int32 keys), bit-identical.
//
// Per output row: the k window rows, padded in x by the border rule (pad_row, once per source
// row into a ring), are sorted column by column with a sorting network on vectors of
// neighbouring samples and stored as k rank rows; each column sort serves the k outputs whose
// windows contain the column. An output vector then loads its k columns' k ranks (shifted
// loads: the horizontal neighbour of a sample is `ch` samples away) and runs the pruned
// odd-even merge network of median_networks-inl.hpp (generated and checked exhaustively by
// scripts/gen_median_networks.py): 20 / 140 / 362 Min/Max per vector for k = 3 / 5 / 7,
// against ~2x that for a selection network that does not know the columns are sorted.
// u8 windows of 11 x 11 samples or more: the constant-time histogram median of
// median_histogram-inl.hpp. Other windows go to the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/median.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

#include "src/backends/cpu/simd/median_histogram-inl.hpp"
#include "src/backends/cpu/simd/median_networks-inl.hpp"
#include "src/backends/cpu/simd/order_keys-inl.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

// S: the sample type in memory; T: the lane type (S, or int32 keys for f32).
template <int K, class S, class T>
void median_t(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows) {
  constexpr bool kKeys = std::is_same_v<S, float>;
  constexpr int R = K / 2;
  // k = 3 uses at most 256-bit vectors: its window is 9 shifted loads for 12 Min/Max, and a
  // shifted 512-bit load crosses a cache line every time (a 256-bit one half the time); on
  // Zen 4 the 256-bit kernel is 15-23 % faster in cache, while k = 5 is 10 % slower with it
  // (bench/NOTES.md).
  using D = std::conditional_t<K == 3, hn::CappedTag<T, 32 / sizeof(T)>, hn::ScalableTag<T>>;
  const D d;
  using V = hn::Vec<decltype(d)>;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height(), wc = w * ch;
  const std::int64_t pw = (w + 2 * R) * ch;  // padded row
  const std::int64_t stride = pw + 2 * N;    // spare vectors: the last chunk may read past pw
  // The row is done in chunks of C samples: the chunk's column sorts, then its outputs, so
  // that the K rank rows of a chunk (about 16 KB) stay in L1 between the two; the 2R
  // columns a chunk shares with the next are sorted twice.
  const bool stream = stream_output(dst);
  const std::int64_t halo = (2 * R * ch + N - 1) / N * N;
  const std::int64_t C = std::max<std::int64_t>(N, 16384 / std::int64_t(K * sizeof(T)) / N * N);
  const std::int64_t cstride = C + halo + N;
  T cval;
  if constexpr (kKeys) {
    cval = detail::order_key(detail::saturate_cast<float>(p.border.value));
  } else {
    cval = detail::saturate_cast<T>(p.border.value);
  }
  Scratch<T> ring{std::size_t(K * stride)}, ranks{std::size_t(K * cstride)};
  std::fill(ring.data(), ring.data() + K * stride, T(0));
  std::fill(ranks.data(), ranks.data() + K * cstride, T(0));
  std::vector<std::int64_t> tag(K, INT64_MIN);
  auto row = [&](std::int64_t a) -> const T* {
    const std::int64_t slot = ((a % K) + K) % K;
    T* r = ring.data() + slot * stride;
    if (tag[std::size_t(slot)] != a) {
      const std::int64_t sy = detail::border_index(a, h, p.border.type);
      if constexpr (kKeys) {
        // Pad the float bits, then key the whole padded row (cval is keyed already: pad with
        // its float bits so that keying it gives cval back).
        const float fv = detail::from_order_key(cval);
        std::int32_t fb;
        std::memcpy(&fb, &fv, sizeof fb);
        pad_row<std::int32_t>(src, sy, R, R, p.border, fb, r);
        order_keys(r, r, pw);
      } else {
        pad_row<T>(src, sy, R, R, p.border, cval, r);
      }
      tag[std::size_t(slot)] = a;
    }
    return r;
  };
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* in[K];
    for (int i = 0; i < K; ++i) in[i] = row(y - R + i);
    T* out = dst.row<T>(y);
    for (std::int64_t c0 = 0; c0 < wc; c0 += C) {
      const std::int64_t c1 = std::min(wc, c0 + C);
      // Column sorts of padded columns [c0, c1 + 2R ch) rounded up to vectors: rank r of
      // column c0 + j at ranks[r * cstride + j].
      for (std::int64_t j = 0; j < c1 - c0 + 2 * R * ch; j += N) {
        V c[K];
        for (int i = 0; i < K; ++i) c[i] = hn::LoadU(d, in[i] + c0 + j);
        MedianNet<K>::sort_column(c);
        for (int r = 0; r < K; ++r) hn::StoreU(c[r], d, ranks.data() + r * cstride + j);
      }
      for (std::int64_t j = 0; j < c1 - c0; j += N) {
        V v[K * K];
        for (int c = 0; c < K; ++c)
          for (int r = 0; r < K; ++r)
            v[c * K + r] = hn::LoadU(d, ranks.data() + r * cstride + j + std::int64_t(c) * ch);
        V m = MedianNet<K>::window(v);
        if constexpr (kKeys) m = order_key_lanes(d, m);
        StoreOutN(m, d, out + c0 + j, wc - c0 - j, stream);
      }
    }
  }
}

template <class S, class T>
void median_k(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows) {
  switch (p.kw) {
    case 3:
      return median_t<3, S, T>(src, dst, p, rows);
    case 5:
      return median_t<5, S, T>(src, dst, p, rows);
    default:
      return median_t<7, S, T>(src, dst, p, rows);
  }
}

}  // namespace
#endif

void median_rows(const ConstImageView& src, const ImageView& dst, const MedianParams& p,
                 Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::median(src, dst, p, rows);
#else
  if (src.depth() == Depth::u8 && median_uses_histogram(p.kw, p.kh))
    return median_histogram_u8(src, dst, p, rows);
  if (p.kw != p.kh || (p.kw != 3 && p.kw != 5 && p.kw != 7)) return ref::median(src, dst, p, rows);
  switch (src.depth()) {
    case Depth::u8:
      return median_k<std::uint8_t, std::uint8_t>(src, dst, p, rows);
    case Depth::u16:
      return median_k<std::uint16_t, std::uint16_t>(src, dst, p, rows);
    case Depth::f32:
      return median_k<float, std::int32_t>(src, dst, p, rows);
    default:
      return ref::median(src, dst, p, rows);
  }
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(median_rows);

void median(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(median_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_median) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::median>(
      table, "median", pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}));
}
#endif
