// SIMD morph_pass (dilate / erode with a kw x kh rectangle, anchor (ax, ay)) for the cpu
// backend: the rule of src/ref/morphology.cpp, column extreme over the window rows first,
// then the row extreme along x, with vectors along x (samples of interleaved channels;
// the horizontal neighbour of a sample is `ch` samples away).
//
// Vertical pass, B = block_rows(kh) output rows at a time (2, 4, 8 or 16, B <= kh; van Herk /
// Gil-Werman within the block): per vector column the rows B-1 .. kh-1 that all B windows
// share are picked once (the core), then suffixes over rows t .. B-2 and prefixes over rows
// kh .. t + kh - 1 finish each output, in registers: (kh + B - 1) / B loads and about
// (kh + 3B) / B Max/Min per output sample, one store (pick_rows_block). kh = 1 copies the row.
// Horizontal pass on the padded column-extreme row (border rule in x; constant: the value):
// kw <= 6 directly from kw shifted loads; larger kw by doubling in place (at most 256-bit
// vectors), M_2m(j) = pick(M_m(j), M_m(j + m)), up to the largest power of two L <= kw,
// then pick(M_L(j), M_L(j + kw - L)): floor(log2 kw) + 1 Max/Min per sample; u8 on CPUs
// with AVX-512 VBMI does the same levels in registers, one load and one store per vector
// (horizontal_vbmi).
// Max/Min is exact and order-free, so any grouping equals the reference. f32 runs on the
// signed totalOrder keys of detail::order_key (integer Max/Min; NaN and -0 have a place, so
// the result does not depend on the grouping): source rows are turned into keys once, in a
// ring of kh + B - 1 rows, and each finished output row back to floats in place. The
// constant border's subtlety (a window row outside the image contributes the value) holds
// because rows outside read a row of the value.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/morphology.cpp"
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
#include "src/base/passes.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

#include "src/backends/cpu/simd/order_keys-inl.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
namespace {

// Windows up to kDirectCols wide take their columns directly (k - 1 Max/Min per sample),
// wider ones doubling passes along x. Rows: block_rows(kh) output rows per pass over their
// rows (pick_rows_block; 1: a copy of the one row).
constexpr int kDirectCols = 6, kMaxBlock = 16;
inline int block_rows(int kh) {
  int b = 1;
  while (2 * b <= kh && 2 * b <= kMaxBlock) b *= 2;
  return b;
}

template <bool kMax, class V>
HWY_INLINE V pick(V a, V b) {
  if constexpr (kMax)
    return hn::Max(a, b);
  else
    return hn::Min(a, b);
}
template <bool kMax, class T>
HWY_INLINE T pick1(T a, T b) {
  if constexpr (kMax)
    return std::max(a, b);
  else
    return std::min(a, b);
}

// Vertical extremes of kBlock consecutive output rows at once (kh >= kBlock): rows r[0 ..
// kh + kBlock - 1) of the window of output rows 0 .. kBlock-1, out[t][i] = pick over j < kh
// of r[t + j][i]. Per vector column the rows kBlock-1 .. kh-1 that every output shares are
// picked once (the core), then suffixes over rows t .. kBlock-2 and prefixes over rows kh ..
// t + kh - 1 finish each output, all in registers: kh + kBlock - 1 loads and about
// kh + 3 kBlock comparisons per kBlock outputs, one store each (van Herk / Gil-Werman within
// a block, with no intermediate rows in memory). Only the first `nout` outputs are stored.
template <int kBlock, bool kMax, class T>
void pick_rows_block(const T* const* r, int kh, T* const* out, int nout, std::int64_t n) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    for (int t = kh - 1; t < kh + kBlock - 1; ++t) prefetch_ahead(r[t] + i);  // new rows
    auto core = hn::LoadU(d, r[kBlock - 1] + i);
    for (int j = kBlock; j < kh; ++j) core = pick<kMax>(core, hn::LoadU(d, r[j] + i));
    hn::Vec<decltype(d)> o[kBlock];
    o[kBlock - 1] = core;
    for (int t = kBlock - 2; t >= 0; --t) o[t] = pick<kMax>(o[t + 1], hn::LoadU(d, r[t] + i));
    auto pre = hn::LoadU(d, r[kh] + i);
    o[1] = pick<kMax>(o[1], pre);
    for (int t = 2; t < kBlock; ++t) {
      pre = pick<kMax>(pre, hn::LoadU(d, r[kh + t - 1] + i));
      o[t] = pick<kMax>(o[t], pre);
    }
    for (int t = 0; t < nout; ++t) hn::StoreU(o[t], d, out[t] + i);
  }
  for (; i < n; ++i)
    for (int t = 0; t < nout; ++t) {
      T v = r[t][i];
      for (int j = 1; j < kh; ++j) v = pick1<kMax>(v, r[t + j][i]);
      out[t][i] = v;
    }
}

// Row extreme: out[j] = pick over i < kw of pad[j + i*ch], j < wc. pad holds
// (w + kw - 1) * ch valid samples and 3 spare vectors (the doubling passes run whole
// vectors past the valid length; what they write there is never read back as valid).
template <bool kMax, class T>
void horizontal(T* pad, T* out, std::int64_t wc, std::int64_t valid, int kw, int ch, bool stream) {
  // At most 256-bit vectors: the passes' loads at j + L ch cross a cache line on every
  // 512-bit load (Zen 4, 4096^2 1T: 15x15 u8x3 9.6 -> 9.2 ms, 9x9 8.4 -> 8.1).
  const hn::CappedTag<T, 32 / sizeof(T)> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  if (kw == 1) {
    std::memcpy(out, pad, std::size_t(wc) * sizeof(T));
    return;
  }
  int L = kw;  // kw <= kDirectCols: direct with L = kw shifted loads
  if (kw > kDirectCols) {
    L = 1;
    while (2 * L <= kw) {
      // M_2L(j) = pick(M_L(j), M_L(j + L)), in place forwards: loads precede the store
      // and only positions below j were overwritten.
      const std::int64_t off = std::int64_t(L) * ch, len = valid - off;
      for (std::int64_t j = 0; j < len; j += N)
        hn::StoreU(pick<kMax>(hn::LoadU(d, pad + j), hn::LoadU(d, pad + j + off)), d, pad + j);
      valid = len;
      L *= 2;
    }
    const std::int64_t off = std::int64_t(kw - L) * ch;
    std::int64_t j = 0;
    for (; j + N <= wc; j += N)
      StoreOut(pick<kMax>(hn::LoadU(d, pad + j), hn::LoadU(d, pad + j + off)), d, out + j, stream);
    for (; j < wc; ++j) out[j] = pick1<kMax>(pad[j], pad[j + off]);
    return;
  }
  std::int64_t j = 0;
  for (; j + N <= wc; j += N) {
    auto v = hn::LoadU(d, pad + j);
    for (int i = 1; i < L; ++i) v = pick<kMax>(v, hn::LoadU(d, pad + j + std::int64_t(i) * ch));
    StoreOut(v, d, out + j, stream);
  }
  for (; j < wc; ++j) {
    T v = pad[j];
    for (int i = 1; i < L; ++i) v = pick1<kMax>(v, pad[j + std::int64_t(i) * ch]);
    out[j] = v;
  }
}

#if HWY_TARGET == HWY_AVX3
bool has_vbmi() {
  static const bool yes = __builtin_cpu_supports("avx512vbmi");
  return yes;
}

// The doubling passes of `horizontal` for u8 in registers (AVX-512 VBMI, checked at run time
// inside Highway's AVX3 target): per 64 samples one aligned load, NL + 1 two-register byte
// shifts (vpermt2b: M_2L(j) = pick(M_L(j), M_L(j + L ch)) with M_L(j + L ch) from this
// vector and the next) and Max/Min, one store, instead of NL + 1 passes of two loads and a
// store each. Level l runs l vectors behind the loads (it needs level l - 1 of the next
// vector); the output vector u is written at step u + NL + 1. Needs L/2 * ch <= 64 and
// (kw - L) * ch <= 64, L = 2^NL <= kw < 2L; reads pad up to 64 (NL + 2) samples past wc
// (the caller's spare vectors). Same Max/Min of the same samples as the passes.
template <bool kMax, int NL>
__attribute__((target(HWY_TARGET_STR ",avx512vbmi"))) void horizontal_vbmi(const std::uint8_t* pad,
                                                                           std::uint8_t* out,
                                                                           std::int64_t wc, int kw,
                                                                           int ch, bool stream) {
  __m512i idx[NL + 1];
  alignas(64) std::uint8_t b[64];
  for (int l = 0; l <= NL; ++l) {
    const int shift = l < NL ? ch << l : (kw - (1 << NL)) * ch;
    for (int i = 0; i < 64; ++i) b[i] = std::uint8_t(i + shift);
    idx[l] = _mm512_load_si512(b);
  }
  auto pk = [](__m512i x, __m512i y) {
    if constexpr (kMax)
      return _mm512_max_epu8(x, y);
    else
      return _mm512_min_epu8(x, y);
  };
  __m512i prev[NL + 1];
  for (int l = 0; l <= NL; ++l) prev[l] = _mm512_setzero_si512();
  const std::int64_t nv = (wc + 63) / 64;
  for (std::int64_t v = 0; v <= nv + NL; ++v) {
    __m512i cur = _mm512_loadu_si512(pad + 64 * v);  // M_1 of vector v
    for (int l = 0; l <= NL; ++l) {  // M_(2^(l+1)) of vector v - l - 1 (l = NL: the window)
      const __m512i next = pk(prev[l], _mm512_permutex2var_epi8(prev[l], idx[l], cur));
      prev[l] = cur;
      cur = next;
    }
    const std::int64_t u = v - NL - 1;
    if (u < 0) continue;
    const hn::Full512<std::uint8_t> d;
    const hn::Vec<decltype(d)> o{cur};
    StoreOutN(o, d, out + 64 * u, wc - 64 * u, stream);
  }
}
#endif

// T: the sample type, or std::int32_t keys for f32 (kKeyed).
// Output row y (src's coordinates) is dst row y - dy: the fused composites write rows
// into strips of scratch.
template <class T, bool kMax, bool kKeyed = false>
void morph_t(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m, Rows rows,
             std::int64_t dy = 0) {
  auto out = [&](std::int64_t y) { return dst.row<T>(y - dy); };
  const hn::ScalableTag<T> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  const int ch = src.channels(), kw = m.kw, kh = m.kh, ax = m.ax, ay = m.ay;
  const std::int64_t w = src.width(), h = src.height(), wc = w * ch;
  const BorderType bt = m.border.type;
  T cval;
  if constexpr (kKeyed)
    cval = detail::order_key(detail::saturate_cast<float>(m.border.value));
  else
    cval = detail::saturate_cast<T>(m.border.value);

  // Streaming stores only where dst rows are written once (keyed rows are turned back into
  // floats right after).
  const bool stream = !kKeyed && stream_output(dst);
  // Padded column-extreme rows (one per output row of a block): ax pixels, the w columns,
  // kw - 1 - ax pixels, 8 spare vectors (horizontal_vbmi reads ahead), rows 64-byte aligned
  // (its loads: 15x15 u8x3 1T 7.7 -> 7.25 ms).
  const int nbuf = block_rows(kh);
  const std::int64_t valid = (w + kw - 1) * ch, pitch = (valid + 8 * N + 63) / 64 * 64;
  Scratch<T> pads(static_cast<std::size_t>(pitch * nbuf));
  std::fill(pads.data(), pads.data() + pitch * nbuf, cval);
  auto colrow = [&](int t) { return pads.data() + pitch * t + std::int64_t(ax) * ch; };
  // Border map in x for the pads (-1: the constant value).
  std::vector<std::int64_t> lmap(static_cast<std::size_t>(ax)),
      rmap(static_cast<std::size_t>(kw - 1 - ax));
  for (int i = 0; i < ax; ++i) lmap[std::size_t(i)] = detail::border_index(i - ax, w, bt);
  for (int i = 0; i < kw - 1 - ax; ++i) rmap[std::size_t(i)] = detail::border_index(w + i, w, bt);
    // Pads of padded row t from its columns, then the row extreme into dst row y.
#if HWY_TARGET == HWY_AVX3
  // u8 doubling widths (kw > kDirectCols) whose shifts fit a vector: horizontal_vbmi.
  int vbmi_nl = 0;
  if (std::is_same_v<T, std::uint8_t> && kw > kDirectCols && has_vbmi()) {
    int nl = 0;
    while ((2 << nl) <= kw) ++nl;
    if ((1 << nl) / 2 * ch <= 64 && (kw - (1 << nl)) * ch <= 64 && nl >= 2 && nl <= 4) vbmi_nl = nl;
  }
  (void)vbmi_nl;  // read only where T is u8
#endif
  auto finish_row = [&](std::int64_t y, int t = 0) {
    T* p = pads.data() + pitch * t;
    const T* col = colrow(t);
    for (int i = 0; i < ax; ++i) {
      const std::int64_t sx = lmap[std::size_t(i)];
      for (int c = 0; c < ch; ++c) p[i * ch + c] = sx < 0 ? cval : col[sx * ch + c];
    }
    T* r = p + std::int64_t(ax) * ch + wc;
    for (std::size_t i = 0; i < rmap.size(); ++i) {
      const std::int64_t sx = rmap[i];
      for (int c = 0; c < ch; ++c) r[std::int64_t(i) * ch + c] = sx < 0 ? cval : col[sx * ch + c];
    }
#if HWY_TARGET == HWY_AVX3
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      if (vbmi_nl == 2) return horizontal_vbmi<kMax, 2>(p, out(y), wc, kw, ch, stream);
      if (vbmi_nl == 3) return horizontal_vbmi<kMax, 3>(p, out(y), wc, kw, ch, stream);
      if (vbmi_nl == 4) return horizontal_vbmi<kMax, 4>(p, out(y), wc, kw, ch, stream);
    }
#endif
    horizontal<kMax>(p, out(y), wc, valid, kw, ch, stream);
    if constexpr (kKeyed) order_keys(out(y), out(y), wc);
  };

  // Source rows by the border rule in y; outside (constant) a row of the value.
  Scratch<T> crow;
  if (bt == BorderType::constant) {
    crow.reset(std::size_t(wc));
    std::fill(crow.data(), crow.data() + wc, cval);
  }
  // kKeyed: window row a as keys in ring slot a mod nring (the rows one output row or one
  // block of rows needs at once are consecutive, at most nring of them).
  const int nring = kh + nbuf - 1;
  Scratch<T> ring;
  std::vector<std::int64_t> tag;
  if constexpr (kKeyed) {
    ring.reset(std::size_t(wc) * std::size_t(nring));
    tag.assign(std::size_t(nring), -1);
  }
  auto row = [&](std::int64_t a) -> const T* {
    const std::int64_t sy = detail::border_index(a, h, bt);
    if (sy < 0) return crow.data();
    if constexpr (kKeyed) {
      const std::size_t slot = std::size_t(((a % nring) + nring) % nring);
      T* r = ring.data() + slot * std::size_t(wc);
      if (tag[slot] != sy) {
        order_keys(src.row<float>(sy), r, wc);
        tag[slot] = sy;
      }
      return r;
    } else {
      return src.row<T>(sy);
    }
  };

  std::vector<const T*> r(static_cast<std::size_t>(kh + nbuf - 1));
  T* cols[kMaxBlock];
  for (int t = 0; t < nbuf; ++t) cols[t] = colrow(t);
  auto blocks = [&](auto block) {
    constexpr int B = decltype(block)::value;
    for (std::int64_t y0 = rows.begin; y0 < rows.end; y0 += B) {
      const int nout = int(std::min<std::int64_t>(B, rows.end - y0));
      for (int j = 0; j < kh + B - 1; ++j) r[std::size_t(j)] = row(y0 - ay + j);
      if constexpr (B == 1)
        std::memcpy(cols[0], r[0], std::size_t(wc) * sizeof(T));
      else
        pick_rows_block<B, kMax>(r.data(), kh, cols, nout, wc);
      for (int t = 0; t < nout; ++t) finish_row(y0 + t, t);
    }
  };
  switch (nbuf) {
    case 1:
      return blocks(std::integral_constant<int, 1>());
    case 2:
      return blocks(std::integral_constant<int, 2>());
    case 4:
      return blocks(std::integral_constant<int, 4>());
    case 8:
      return blocks(std::integral_constant<int, 8>());
    default:
      return blocks(std::integral_constant<int, 16>());
  }
}

// dst = a - b per sample, as arith's sub (saturating integers; f32 a plain difference).
template <class T>
void sub_rows(const T* a, const T* b, T* out, std::int64_t n) {
  const hn::ScalableTag<T> d;
  const std::int64_t N = std::int64_t(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, a + i), y = hn::LoadU(d, b + i);
    if constexpr (std::is_same_v<T, float>)
      hn::StoreU(hn::Sub(x, y), d, out + i);
    else
      hn::StoreU(hn::SaturatedSub(x, y), d, out + i);
  }
  for (; i < n; ++i) {
    if constexpr (std::is_same_v<T, float>)
      out[i] = a[i] - b[i];
    else
      out[i] = a[i] > b[i] ? T(a[i] - b[i]) : T(0);
  }
}

// One band of a composite (open, close, gradient, tophat, blackhat) in one call: strips of
// destination rows whose intermediates stay in L2, instead of whole intermediate images
// (docs/ops/morphology.md: the same passes, the same results). For the two-pass composites
// the strip holds the first pass's rows y0 - ay .. y1 - ay + kh - 2 in the second pass's
// coordinates, each computed at its row by the border rule (outside the image: the constant
// value, or the row it reflects/wraps to), so the second pass over the strip (anchor 0)
// never reaches a border in y. S: the sample type (T: S, or int32 keys for f32).
template <class S, class T, bool kKeyed>
void composite_t(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                 Rows rows) {
  const std::int64_t w = src.width(), h = src.height(), wc = w * src.channels();
  const std::int64_t row_bytes = std::max<std::int64_t>(1, wc * std::int64_t(sizeof(S)));
  const std::int64_t strip =
      std::max<std::int64_t>(16, (std::int64_t(512) << 10) / row_bytes - m.kh + 1);
  const std::int64_t pitch = (wc * std::int64_t(sizeof(S)) + 63) / 64 * 64 + 64;  // bytes
  const MorphOp op = m.op;
  const bool two_pass = op != MorphOp::gradient;
  const MorphOp first =
      op == MorphOp::open || op == MorphOp::tophat ? MorphOp::erode : MorphOp::dilate;
  const std::int64_t trows = two_pass ? strip + m.kh - 1 : strip;
  Scratch<std::uint8_t> tbuf(std::size_t(trows * pitch)), obuf(std::size_t(strip * pitch));
  const ImageView tview(tbuf.data(), w, trows, pitch, src.format(), src.location());
  const ImageView oview(obuf.data(), w, strip, pitch, src.format(), src.location());
  auto pass = [&](MorphOp which, const ConstImageView& in, const ImageView& out,
                  const detail::MorphPass& mp, Rows r, std::int64_t dy) {
    if (which == MorphOp::dilate)
      morph_t<T, true, kKeyed>(in, out, mp, r, dy);
    else
      morph_t<T, false, kKeyed>(in, out, mp, r, dy);
  };
  const S cval = detail::saturate_cast<S>(m.border.value);
  for (std::int64_t y0 = rows.begin; y0 < rows.end; y0 += strip) {
    const std::int64_t n = std::min(strip, rows.end - y0);
    if (!two_pass) {  // gradient: dilate - erode, both from src
      pass(MorphOp::dilate, src, tview, m, Rows{y0, y0 + n}, y0);
      pass(MorphOp::erode, src, oview, m, Rows{y0, y0 + n}, y0);
      for (std::int64_t i = 0; i < n; ++i)
        sub_rows<S>(tview.row<S>(i), oview.row<S>(i), dst.row<S>(y0 + i), wc);
      continue;
    }
    // First pass: strip row i is row a = y0 - ay + i of the intermediate image.
    const std::int64_t a0 = y0 - m.ay, a1 = y0 + n - m.ay + m.kh - 1;
    const std::int64_t lo = std::max<std::int64_t>(a0, 0), hi = std::min(a1, h);
    if (lo < hi) pass(first, src, tview, m, Rows{lo, hi}, a0);
    for (std::int64_t a = a0; a < a1; ++a) {
      if (a >= 0 && a < h) continue;
      const std::int64_t g = detail::border_index(a, h, m.border.type);
      if (g < 0)
        std::fill(tview.row<S>(a - a0), tview.row<S>(a - a0) + wc, cval);
      else
        pass(first, src, tview, m, Rows{g, g + 1}, g - (a - a0));
    }
    // Second pass over the strip; open/close straight into dst.
    detail::MorphPass m2 = m;
    m2.ay = 0;
    const ConstImageView tin(tview.data(), w, a1 - a0, pitch, src.format(), src.location());
    const MorphOp second = first == MorphOp::erode ? MorphOp::dilate : MorphOp::erode;
    if (op == MorphOp::open || op == MorphOp::close) {
      pass(second, tin, dst, m2, Rows{0, n}, -y0);
      continue;
    }
    pass(second, tin, oview, m2, Rows{0, n}, 0);
    for (std::int64_t i = 0; i < n; ++i) {
      if (op == MorphOp::tophat)  // src - open
        sub_rows<S>(src.row<S>(y0 + i), oview.row<S>(i), dst.row<S>(y0 + i), wc);
      else  // blackhat: close - src
        sub_rows<S>(oview.row<S>(i), src.row<S>(y0 + i), dst.row<S>(y0 + i), wc);
    }
  }
}

}  // namespace
#endif

void morph_rows(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::morph_pass(src, dst, m, rows);
#else
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) {
      if (m.op == MorphOp::dilate)
        morph_t<std::int32_t, true, true>(src, dst, m, rows);
      else
        morph_t<std::int32_t, false, true>(src, dst, m, rows);
    } else if (m.op == MorphOp::dilate) {
      morph_t<T, true>(src, dst, m, rows);
    } else {
      morph_t<T, false>(src, dst, m, rows);
    }
  });
#endif
}

void composite_rows(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                    Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  // The reference's passes through whole-size intermediates, computing only the rows this
  // band's outputs read (and the sub of arith).
  const MorphOp op = m.op;
  const Format f = src.format();
  Image t(src.width(), src.height(), f), o(src.width(), src.height(), f);
  detail::MorphPass mp = m;
  auto sub = [&](const ConstImageView& a, const ConstImageView& b) {
    ref::arith(a, b, dst, ArithOp::sub, rows);
  };
  if (op == MorphOp::gradient) {
    mp.op = MorphOp::dilate;
    ref::morph_pass(src, t, mp, rows);
    mp.op = MorphOp::erode;
    ref::morph_pass(src, o, mp, rows);
    return sub(t, o);
  }
  const bool opening = op == MorphOp::open || op == MorphOp::tophat;
  mp.op = opening ? MorphOp::erode : MorphOp::dilate;
  for (std::int64_t a = rows.begin - m.ay; a < rows.end - m.ay + m.kh - 1; ++a) {
    const std::int64_t g = detail::border_index(a, src.height(), m.border.type);
    if (g >= 0) ref::morph_pass(src, t, mp, Rows{g, g + 1});
  }
  mp.op = opening ? MorphOp::dilate : MorphOp::erode;
  if (op == MorphOp::open || op == MorphOp::close) return ref::morph_pass(t, dst, mp, rows);
  ref::morph_pass(t, o, mp, rows);
  if (op == MorphOp::tophat) return sub(src, o);
  sub(o, src);
#else
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) {
    using S = decltype(t);
    if constexpr (std::is_same_v<S, float>)
      composite_t<float, std::int32_t, true>(src, dst, m, rows);
    else
      composite_t<S, S, false>(src, dst, m, rows);
  });
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(morph_rows);
HWY_EXPORT(composite_rows);

void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                Rows rows) {
  HWY_DYNAMIC_DISPATCH(morph_rows)(src, dst, m, rows);
}
void morph_composite(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                     Rows rows) {
  HWY_DYNAMIC_DISPATCH(composite_rows)(src, dst, m, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_morphology) {
  using pixflow::Depth;
  pixflow::cpu::add_banded<&pixflow::cpu::morph_pass>(
      table, "morph_pass",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {1, 2, 3, 4}));
  pixflow::cpu::add_banded<&pixflow::cpu::morph_composite>(
      table, "morph_composite",
      pixflow::detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {1, 2, 3, 4}));
}
#endif
