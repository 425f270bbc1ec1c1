// SIMD median for the cpu backend, any window (u8, u16, f32; any channels):
// the rule of src/ref/median.cpp (element k*k/2 of the sorted window; f32 in totalOrder, run
// here on detail::order_key's int32 keys), bit-identical.
//
// 3x3 (median_t): the 3 window rows, padded in x by the border rule (pad_row, once per source
// row into a ring), are sorted column by column with a sorting network on vectors of
// neighbouring samples and stored as 3 rank rows; each column sort serves the 3 outputs whose
// windows contain the column. An output vector then loads its 3 columns' ranks (shifted loads:
// the horizontal neighbour of a sample is `ch` samples away) and runs a 12 Min/Max network.
// u8 with AVX-512 VBMI (median3_u8_vbmi): the same per 64 samples in registers, the
// neighbouring columns' ranks by byte permutes of the column sorts (no rank rows), output
// rows in pairs sharing the sort of their two common rows.
// 5x5, 7x7 (median_pairs_t): each padded source row's runs of k samples sorted once, output
// rows in pairs that merge their k - 1 shared runs once (pruned to the k + 1 ranks that can
// still be the median), then one small merge per row with its own run: 54 / 168 Min/Max per
// output vector against 140 / 362 for the window network over column sorts. The networks are
// generated and checked exhaustively by scripts/gen_median_networks.py
// (median_networks-inl.hpp).
// Other windows: u8 windows of at least kMinHistogramWindow samples run the constant-time
// histogram median of median_histogram-inl.hpp (Perreault and Hebert); the rest (non-square,
// k >= 9 on any depth) a bit-by-bit selection on the lanes (median_radix_t), whose cost grows
// with kw * kh: 4096x1024 u8x1 at one thread (Zen 5), 9x9 19.5 ms, 15x15 58.8 ms (OpenCV's
// constant-time histogram: 116 / 102 ms); u16 9x9 69 ms, f32 9x9 323 ms (the reference:
// 3.2 s / 4.1 s).
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

// The window's source rows, padded in x by the border rule (rx pixels each side) and, for
// f32, turned into totalOrder keys, in a ring of `count` rows: each source row is padded
// once per band however many output rows use it. Rows hold `stride` samples (zeros past
// the padded width, so a kernel may load a whole vector that starts inside it).
template <class S, class T>
class PaddedRows {
 public:
  PaddedRows(const ConstImageView& src, const MedianParams& p, int rx, int count,
             std::int64_t stride)
      : src_(src),
        border_(p.border),
        rx_(rx),
        count_(count),
        stride_(stride),
        pw_((src.width() + 2 * rx) * src.channels()),
        rows_(std::size_t(count * stride)),
        tag_(std::size_t(count), INT64_MIN) {
    if constexpr (std::is_same_v<S, float>) {
      cval_ = detail::order_key(detail::saturate_cast<float>(p.border.value));
    } else {
      cval_ = detail::saturate_cast<T>(p.border.value);
    }
    std::fill(rows_.data(), rows_.data() + count * stride, T(0));
  }

  /// Padded row a (any integer: rows outside the image by the border rule).
  const T* row(std::int64_t a) {
    const std::int64_t slot = ((a % count_) + count_) % count_;
    T* r = rows_.data() + slot * stride_;
    if (tag_[std::size_t(slot)] != a) {
      const std::int64_t sy = detail::border_index(a, src_.height(), border_.type);
      if constexpr (std::is_same_v<S, float>) {
        // Pad the float bits, then key the whole padded row (cval is keyed already: pad with
        // its float bits so that keying it gives cval back).
        const float fv = detail::from_order_key(cval_);
        std::int32_t fb;
        std::memcpy(&fb, &fv, sizeof fb);
        pad_row<std::int32_t>(src_, sy, rx_, rx_, border_, fb, r);
        order_keys(r, r, pw_);
      } else {
        pad_row<T>(src_, sy, rx_, rx_, border_, cval_, r);
      }
      tag_[std::size_t(slot)] = a;
    }
    return r;
  }

 private:
  const ConstImageView& src_;
  Border border_;
  int rx_, count_;
  std::int64_t stride_, pw_;
  Scratch<T> rows_;
  std::vector<std::int64_t> tag_;
  T cval_{};
};

#if HWY_TARGET <= HWY_AVX3
bool has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512vbmi");
  return yes;
}

// The 3x3 median at each of 64 outputs from the column sorts (lo, mid, hi) c0 of this
// vector's padded columns and c1 of the next; idx1, idx2: byte shifts by ch, 2 ch.
__attribute__((target(HWY_TARGET_STR ",avx512vbmi"))) HWY_INLINE __m512i
median3_window(const __m512i* c0, const __m512i* c1, __m512i idx1, __m512i idx2) {
  auto med3 = [](__m512i x, __m512i y, __m512i z) {
    return _mm512_max_epu8(_mm512_min_epu8(x, y), _mm512_min_epu8(_mm512_max_epu8(x, y), z));
  };
  const __m512i mxlo =
      _mm512_max_epu8(c0[0], _mm512_max_epu8(_mm512_permutex2var_epi8(c0[0], idx1, c1[0]),
                                             _mm512_permutex2var_epi8(c0[0], idx2, c1[0])));
  const __m512i mnhi =
      _mm512_min_epu8(c0[2], _mm512_min_epu8(_mm512_permutex2var_epi8(c0[2], idx1, c1[2]),
                                             _mm512_permutex2var_epi8(c0[2], idx2, c1[2])));
  const __m512i mdmi = med3(c0[1], _mm512_permutex2var_epi8(c0[1], idx1, c1[1]),
                            _mm512_permutex2var_epi8(c0[1], idx2, c1[1]));
  return med3(mxlo, mdmi, mnhi);
}

// 3x3 u8 on AVX-512 VBMI (checked at run time inside Highway's AVX3 target), one output row
// in registers: per 64 outputs one aligned load of each of the 3 padded rows (64-byte
// aligned, 64-byte multiple stride, 128 zero bytes of spare past the row), the column sort
// of 3, the neighbouring columns' ranks by two-register byte shifts (vpermt2b: ch and 2 ch
// bytes) instead of 9 shifted loads of 3 stored rank rows, then the median of the window as
// the median of (max of the lows, median of the middles, min of the highs).
// kTwo: output rows y and y + 1 (o0, o1) from the padded rows r[0..3] (y - 1 .. y + 2): the
// shared middle pair sorted once, then each row's third sample inserted (10 Min/Max for the
// two column sorts instead of 12, 4 row loads instead of 6); else row y (o0) from r[0..2].
// next (next2 with kTwo): the source rows pad_row copies for the next call, prefetched a
// line per 64 outputs so that the copy finds them in cache.
template <bool kTwo>
__attribute__((target(HWY_TARGET_STR ",avx512vbmi"))) void median3_u8_vbmi(
    const std::uint8_t* const* r, std::uint8_t* o0, std::uint8_t* o1, std::int64_t wc, int ch,
    bool stream, const std::uint8_t* next, const std::uint8_t* next2) {
  alignas(64) std::uint8_t b[64];
  for (int i = 0; i < 64; ++i) b[i] = std::uint8_t(i + ch);
  const __m512i idx1 = _mm512_load_si512(b);
  for (int i = 0; i < 64; ++i) b[i] = std::uint8_t(i + 2 * ch);
  const __m512i idx2 = _mm512_load_si512(b);
  // Column sorts (lo, mid, hi) of 64 padded columns at j: c[0..2] row y, c[3..5] row y + 1.
  auto sorts = [&](std::int64_t j, __m512i* c) {
    const __m512i x = _mm512_load_si512(r[1] + j), y = _mm512_load_si512(r[2] + j);
    const __m512i lo = _mm512_min_epu8(x, y), hi = _mm512_max_epu8(x, y);
    auto insert = [&](__m512i a, __m512i* o) {
      const __m512i t = _mm512_max_epu8(a, lo);
      o[0] = _mm512_min_epu8(a, lo);
      o[1] = _mm512_min_epu8(t, hi);
      o[2] = _mm512_max_epu8(t, hi);
    };
    insert(_mm512_load_si512(r[0] + j), c);
    if constexpr (kTwo) insert(_mm512_load_si512(r[3] + j), c + 3);
  };
  constexpr int kC = kTwo ? 6 : 3;
  __m512i cur[kC], nxt[kC];
  sorts(0, cur);
  const hn::Full512<std::uint8_t> d;
  for (std::int64_t j = 0; j < wc; j += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(next + j), _MM_HINT_T0);
    if constexpr (kTwo) _mm_prefetch(reinterpret_cast<const char*>(next2 + j), _MM_HINT_T0);
    sorts(j + 64, nxt);
    StoreOutN(hn::Vec<decltype(d)>{median3_window(cur, nxt, idx1, idx2)}, d, o0 + j, wc - j,
              stream);
    if constexpr (kTwo)
      StoreOutN(hn::Vec<decltype(d)>{median3_window(cur + 3, nxt + 3, idx1, idx2)}, d, o1 + j,
                wc - j, stream);
    for (int i = 0; i < kC; ++i) cur[i] = nxt[i];
  }
}
#endif

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
  const std::int64_t w = src.width(), wc = w * ch;
  const std::int64_t pw = (w + 2 * R) * ch;  // padded row
  // Spare vectors: the last chunk may read past pw; median3_u8_vbmi reads up to 128 bytes
  // past the row's last 64 and wants 64-byte aligned rows.
  const std::int64_t stride = (pw + 2 * N + 128 + 63) / 64 * 64;
  // The row is done in chunks of C samples: the chunk's column sorts, then its outputs, so
  // that the K rank rows of a chunk (about 16 KB) stay in L1 between the two; the 2R
  // columns a chunk shares with the next are sorted twice.
  const bool stream = stream_output(dst);
  const std::int64_t halo = (2 * R * ch + N - 1) / N * N;
  const std::int64_t C = std::max<std::int64_t>(N, 16384 / std::int64_t(K * sizeof(T)) / N * N);
  const std::int64_t cstride = C + halo + N;
  Scratch<T> ranks{std::size_t(K * cstride)};
  std::fill(ranks.data(), ranks.data() + K * cstride, T(0));
  PaddedRows<S, T> ring(src, p, R, K + 1, stride);  // K + 1: median3_u8_vbmi's pairs
#if HWY_TARGET <= HWY_AVX3
  const bool vbmi = K == 3 && std::is_same_v<T, std::uint8_t> && has_vbmi() && ch <= 32;
#endif
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* in[K];
    for (int i = 0; i < K; ++i) in[i] = ring.row(y - R + i);
    T* out = dst.row<T>(y);
#if HWY_TARGET <= HWY_AVX3
    if constexpr (K == 3 && std::is_same_v<T, std::uint8_t>) {
      if (vbmi) {
        // Pairs of rows; the next source row (pad_row copies it next) prefetched line by line.
        const bool two = y + 1 < rows.end;
        auto source = [&](std::int64_t a) {
          const std::int64_t sy = detail::border_index(a, src.height(), p.border.type);
          return sy < 0 ? in[0] : src.row<std::uint8_t>(sy);
        };
        const T* rr[4] = {in[0], in[1], in[2], two ? ring.row(y + 2) : in[2]};
        if (two) {
          median3_u8_vbmi<true>(rr, out, dst.row<T>(y + 1), wc, ch, stream, source(y + 3),
                                source(y + 4));
          ++y;
        } else {
          median3_u8_vbmi<false>(rr, out, out, wc, ch, stream, source(y + 2), nullptr);
        }
        continue;
      }
    }
#endif
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

// k = 5, 7 by pairs of output rows: each padded source row's runs (the k samples x, x + ch,
// .. x + (k-1) ch around every x) sorted once into k rank rows (a ring of k + 1 source
// rows); output rows y and y + 1 share the runs of rows y - k/2 + 1 .. y + k/2, merged once
// per pair (MedianNet::pair_core: the k + 1 ranks that can still be the median), then each
// row's median with its own extra run (pair_final). Per output vector (k = 5): 88 / 2 + 10
// Min/Max and 15 loads, against 140 and 25 for the window network over shared column sorts.
template <int K, class S, class T>
void median_pairs_t(const ConstImageView& src, const ImageView& dst, const MedianParams& p,
                    Rows rows) {
  constexpr bool kKeys = std::is_same_v<S, float>;
  constexpr int R = K / 2;
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const int ch = src.channels();
  const std::int64_t wc = src.width() * ch;
  const std::int64_t stride = (src.width() + 2 * R) * ch + 2 * N;  // padded row + spare
  const std::int64_t rstride = (wc + N - 1) / N * N + N;           // a rank row + spare
  const bool stream = stream_output(dst);
  PaddedRows<S, T> padded(src, p, R, 1, stride);
  Scratch<T> sorted{std::size_t((K + 1) * K * rstride)};
  std::fill(sorted.data(), sorted.data() + (K + 1) * K * rstride, T(0));
  std::int64_t tag[K + 1];
  std::fill(tag, tag + K + 1, INT64_MIN);
  // Rank i of the run at x of source row a: runs(a)[i * rstride + x].
  auto runs = [&](std::int64_t a) -> const T* {
    const std::int64_t slot = ((a % (K + 1)) + (K + 1)) % (K + 1);
    T* o = sorted.data() + slot * K * rstride;
    if (tag[slot] != a) {
      const T* pr = padded.row(a);
      for (std::int64_t x = 0; x < wc; x += N) {
        V c[K];
        for (int i = 0; i < K; ++i) c[i] = hn::LoadU(d, pr + x + std::int64_t(i) * ch);
        MedianNet<K>::sort_column(c);
        for (int i = 0; i < K; ++i) hn::StoreU(c[i], d, o + std::int64_t(i) * rstride + x);
      }
      tag[slot] = a;
    }
    return o;
  };
  for (std::int64_t y = rows.begin; y < rows.end; y += 2) {
    const bool two = y + 1 < rows.end;
    const T* r[K + 1];  // rows y - R .. y + R + 1
    for (int i = 0; i < K + 1; ++i) r[i] = runs(y - R + i);
    T* out0 = dst.row<T>(y);
    T* out1 = two ? dst.row<T>(y + 1) : nullptr;
    for (std::int64_t x = 0; x < wc; x += N) {
      V v[(K - 1) * K];
      for (int j = 0; j < K - 1; ++j)
        for (int i = 0; i < K; ++i)
          v[j * K + i] = hn::LoadU(d, r[1 + j] + std::int64_t(i) * rstride + x);
      V q[K + 1];
      MedianNet<K>::pair_core(v, q);
      V c[K];
      for (int i = 0; i < K; ++i) c[i] = hn::LoadU(d, r[0] + std::int64_t(i) * rstride + x);
      V m = MedianNet<K>::pair_final(q, c);
      if constexpr (kKeys) m = order_key_lanes(d, m);
      StoreOutN(m, d, out0 + x, wc - x, stream);
      if (two) {
        for (int i = 0; i < K; ++i) c[i] = hn::LoadU(d, r[K] + std::int64_t(i) * rstride + x);
        m = MedianNet<K>::pair_final(q, c);
        if constexpr (kKeys) m = order_key_lanes(d, m);
        StoreOutN(m, d, out1 + x, wc - x, stream);
      }
    }
  }
}

// Any window, by bit-by-bit selection on the lanes: the median m of a window of n samples is
// sample n/2 in order, so m >= c exactly when fewer than n/2 + 1 samples are below c. Each
// lane builds its m from the top bit down: with the bits found so far in `prefix`, it counts
// the window's samples below prefix | bit and keeps the bit where that count is <= n/2. One
// compare and one subtract per sample and bit: 8 / 16 / 32 passes over the window for u8 /
// u16 / f32 keys, so the cost grows with kw * kh; the networks above are cheaper for the
// squares they exist for and the histogram (median_histogram-inl.hpp) for large u8 windows.
// Counts share the lanes' type: u8 takes windows of at most 255 samples here. f32 keys are
// signed: a lane's bits are built in the biased (unsigned) order, the compare unbiases them.
// n + 1 in the lanes where s < c.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V count_below(D d, V n, V s, V c) {
#if HWY_TARGET <= HWY_AVX3
  // Mask registers: one masked add (a blend and a subtract of the mask on other targets).
  return hn::IfThenElse(hn::Lt(s, c), hn::Add(n, hn::Set(d, hn::TFromD<D>(1))), n);
#else
  return hn::Sub(n, hn::VecFromMask(d, hn::Lt(s, c)));
#endif
}

template <class S, class T>
void median_radix_t(const ConstImageView& src, const ImageView& dst, const MedianParams& p,
                    Rows rows) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const int ch = src.channels(), kw = p.kw, kh = p.kh, rx = kw / 2, ry = kh / 2;
  const std::int64_t wc = src.width() * ch;
  const std::int64_t stride = (src.width() + 2 * rx) * ch + 2 * N;
  const bool stream = stream_output(dst);
  PaddedRows<S, T> ring(src, p, rx, kh, stride);
  constexpr int kBits = int(sizeof(T) * 8);
  using B = hwy::MakeUnsigned<T>;
  const V bias = hn::BitCast(d, hn::Set(hn::RebindToUnsigned<decltype(d)>(),
                                        B(B(1) << (kBits - 1)) * B(std::is_signed_v<T>)));
  const V half = hn::Set(d, T(kw * kh / 2));
  std::vector<const T*> in(static_cast<std::size_t>(kh), nullptr);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (int i = 0; i < kh; ++i) in[std::size_t(i)] = ring.row(y - ry + i);
    T* out = dst.row<T>(y);
    for (std::int64_t j = 0; j < wc; j += N) {
      V prefix = hn::Zero(d);
      for (int b = kBits - 1; b >= 0; --b) {
        const V with_bit = hn::Or(
            prefix, hn::BitCast(d, hn::Set(hn::RebindToUnsigned<decltype(d)>(), B(B(1) << b))));
        const V c = hn::Xor(with_bit, bias);
        // Four counts in flight (each add waits on the previous one of its chain).
        V n0 = hn::Zero(d), n1 = n0, n2 = n0, n3 = n0;
        for (int i = 0; i < kh; ++i) {
          const T* r = in[std::size_t(i)] + j;
          int x = 0;
          for (; x + 4 <= kw; x += 4, r += 4 * ch) {
            n0 = count_below(d, n0, hn::LoadU(d, r), c);
            n1 = count_below(d, n1, hn::LoadU(d, r + ch), c);
            n2 = count_below(d, n2, hn::LoadU(d, r + 2 * ch), c);
            n3 = count_below(d, n3, hn::LoadU(d, r + 3 * ch), c);
          }
          for (; x < kw; ++x, r += ch) n0 = count_below(d, n0, hn::LoadU(d, r), c);
        }
        const V below = hn::Add(hn::Add(n0, n1), hn::Add(n2, n3));
        prefix = hn::IfThenElse(hn::Lt(half, below), prefix, with_bit);
      }
      V m = hn::Xor(prefix, bias);
      if constexpr (std::is_same_v<S, float>) m = order_key_lanes(d, m);
      StoreOutN(m, d, out + j, wc - j, stream);
    }
  }
}

template <class S, class T>
void median_k(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows) {
  switch (p.kw) {
    case 3:
      return median_t<3, S, T>(src, dst, p, rows);
    case 5:
      return median_pairs_t<5, S, T>(src, dst, p, rows);
    default:
      return median_pairs_t<7, S, T>(src, dst, p, rows);
  }
}

}  // namespace
#endif

void median_rows(const ConstImageView& src, const ImageView& dst, const MedianParams& p,
                 Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::median(src, dst, p, rows);
#else
  const bool network = p.kw == p.kh && (p.kw == 3 || p.kw == 5 || p.kw == 7);
  switch (src.depth()) {
    case Depth::u8:
      if (network) return median_k<std::uint8_t, std::uint8_t>(src, dst, p, rows);
      if (median_uses_histogram(p.kw, p.kh)) return median_histogram_u8(src, dst, p, rows);
      // Windows over 255 samples take the histogram, so the selection's 8-bit counts hold.
      static_assert(median_uses_histogram(1, 256));
      return median_radix_t<std::uint8_t, std::uint8_t>(src, dst, p, rows);
    case Depth::u16:
      if (network) return median_k<std::uint16_t, std::uint16_t>(src, dst, p, rows);
      return median_radix_t<std::uint16_t, std::uint16_t>(src, dst, p, rows);
    case Depth::f32:
      if (network) return median_k<float, std::int32_t>(src, dst, p, rows);
      return median_radix_t<float, std::int32_t>(src, dst, p, rows);
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
