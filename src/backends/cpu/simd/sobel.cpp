// SIMD sobel and scharr for the cpu backend: the separable integer taps of
// src/base/deriv_taps.hpp with the rules of src/ref/sobel.cpp. Each band keeps a ring of
// ny horizontally filtered rows (one per source row, computed once from a pad_row'ed row),
// and every destination row is the vertical pass over the ring, vectors along x.
//   u8 source: h = sum(tx * p) is exact in int16 (|h| <= 255 * 64); v = sum(ty * h) in
//   int16 lanes when 255 * sum|tx| * sum|ty| < 2^15 (exact: every k <= 5 and Scharr), else
//   in int32 lanes. s16 with scale 1, delta 0: v saturated; otherwise
//   double(v) * scale + delta in double lanes (then rint + saturate, or float).
//   f32 source: h and v float sums from 0 in tap order (zero taps included, no FMA), then
//   v * float(scale) + float(delta), as the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/backends/cpu/simd/sobel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/backends/cpu/simd/store_out-inl.hpp"
#include "src/base/deriv_taps.hpp"
#include "src/ref/ref.hpp"

HWY_BEFORE_NAMESPACE();
namespace pixflow::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

struct DerivTaps {
  int x[detail::kMaxDerivTaps], y[detail::kMaxDerivTaps];
  int nx, ny;
};

#if HWY_TARGET != HWY_SCALAR

// Ring rows `pitch` elements apart: a whole number of 64-byte lines, odd, so that the
// same x of successive rows falls in different L1 sets (rows 4 KiB apart would all share
// one set and evict each other in the vertical pass).
template <class H>
std::int64_t ring_pitch(std::int64_t lp) {
  std::int64_t lines = (lp * std::int64_t(sizeof(H)) + 63) / 64;
  if (lines % 2 == 0) ++lines;
  return lines * 64 / std::int64_t(sizeof(H));
}

// Ring of ny filtered rows of `lp` H each; hpass(padded source row, ring row),
// vpass(window rows, destination row index).
template <class T, class H, class HPass, class VPass>
void deriv_band(const ConstImageView& src, const DerivTaps& t, const Border& border, Rows rows,
                std::int64_t step, HPass hpass, VPass vpass) {
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height(), len = w * ch;
  const int rx = t.nx / 2, ry = t.ny / 2, ny = t.ny;
  const std::int64_t lp = (len + step - 1) / step * step;
  const T cval = detail::saturate_cast<T>(border.value);
  const std::size_t prn = std::size_t(len + 2 * std::int64_t(rx) * ch + step);
  Scratch<T> pr(prn);
  std::memset(pr.data(), 0, prn * sizeof(T));
  const std::int64_t pitch = ring_pitch<H>(lp);
  Scratch<H> ring(std::size_t(ny) * std::size_t(pitch));
  const H* win[detail::kMaxDerivTaps] = {};
  auto slot = [&](std::int64_t v) { return ring.data() + ((v % ny + ny) % ny) * pitch; };
  std::int64_t next = rows.begin - ry;
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    for (; next <= y + ry; ++next) {
      pad_row(src, detail::border_index(next, h, border.type), rx, rx, border, cval, pr.data());
      hpass(pr.data(), slot(next));
    }
    for (int j = 0; j < ny; ++j) win[j] = slot(y - ry + j);
    vpass(win, y);
  }
}

// acc += t * v for a small integer tap (0: nothing, +-1: add / sub).
template <class D, class V>
V tap_acc(D d, V acc, V v, int t) {
  if (t == 1) return hn::Add(acc, v);
  if (t == -1) return hn::Sub(acc, v);
  return hn::Add(acc, hn::Mul(v, hn::Set(d, hn::TFromD<D>(t))));
}

// int32 sums (n of them) -> destination row: double(v) * scale + delta, then float, or
// rint + saturate to int16.
void finish_scaled(const std::int32_t* acc, void* out, std::int64_t n, bool to_f32, double scale,
                   double delta, bool stream) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<std::int32_t, decltype(dd)> di32;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<std::int16_t, decltype(dd)> di16;
  const std::int64_t nd = std::int64_t(hn::Lanes(dd));
  const auto vs = hn::Set(dd, scale), vd = hn::Set(dd, delta);
  const auto lo = hn::Set(dd, -32768.0), hi = hn::Set(dd, 32767.0);
  for (std::int64_t x = 0; x < n; x += nd) {
    const auto v = hn::Add(hn::Mul(hn::PromoteTo(dd, hn::LoadU(di32, acc + x)), vs), vd);
    if (to_f32) {
      StoreOutN(hn::DemoteTo(df, v), df, static_cast<float*>(out) + x, n - x, stream);
    } else {
      const auto r = hn::Min(hn::Max(hn::Round(v), lo), hi);  // rint, then saturate
      StoreOutN(hn::DemoteTo(di16, hn::DemoteTo(di32, r)), di16,
                static_cast<std::int16_t*>(out) + x, n - x, stream);
    }
  }
}

void deriv_u8(const ConstImageView& src, const ImageView& dst, const DerivTaps& t, double scale,
              double delta, const Border& border, Rows rows) {
  const bool stream = stream_output(dst);
  const hn::ScalableTag<std::int16_t> di16;
  const hn::Rebind<std::uint8_t, decltype(di16)> du8;
  const hn::ScalableTag<std::int32_t> di32;
  const hn::Rebind<std::int16_t, decltype(di32)> di16h;
  const std::int64_t n = std::int64_t(hn::Lanes(di16));
  const int ch = src.channels();
  const std::int64_t len = src.width() * ch;
  const bool plain = scale == 1.0 && delta == 0.0 && dst.depth() == Depth::s16;
  int sx = 0, sy = 0;
  for (int i = 0; i < t.nx; ++i) sx += std::abs(t.x[i]);
  for (int j = 0; j < t.ny; ++j) sy += std::abs(t.y[j]);
  const bool narrow = 255 * sx * sy <= 32767;
  Scratch<std::int32_t> acc(std::size_t(len + n));
  auto hpass = [&](const std::uint8_t* pr, std::int16_t* out) {
    for (std::int64_t x = 0; x < len; x += n) {
      auto a = hn::Zero(di16);
      for (int i = 0; i < t.nx; ++i)
        if (t.x[i] != 0)
          a = tap_acc(di16, a, hn::PromoteTo(di16, hn::LoadU(du8, pr + x + i * ch)), t.x[i]);
      hn::Store(a, di16, out + x);
    }
  };
  auto vpass = [&](const std::int16_t* const* win, std::int64_t y) {
    if (narrow) {
      for (std::int64_t x = 0; x < len; x += n) {
        auto a = hn::Zero(di16);
        for (int j = 0; j < t.ny; ++j)
          if (t.y[j] != 0) a = tap_acc(di16, a, hn::Load(di16, win[j] + x), t.y[j]);
        if (plain) {
          StoreOutN(a, di16, dst.row<std::int16_t>(y) + x, len - x, stream);
        } else {
          const std::int64_t h = std::int64_t(hn::Lanes(di32));
          hn::StoreU(hn::PromoteTo(di32, hn::LowerHalf(a)), di32, acc.data() + x);
          hn::StoreU(hn::PromoteTo(di32, hn::UpperHalf(hn::Half<decltype(di16)>(), a)), di32,
                     acc.data() + x + h);
        }
      }
    } else {
      const std::int64_t n32 = std::int64_t(hn::Lanes(di32));
      for (std::int64_t x = 0; x < len; x += n32) {
        auto a = hn::Zero(di32);
        for (int j = 0; j < t.ny; ++j)
          if (t.y[j] != 0)
            a = tap_acc(di32, a, hn::PromoteTo(di32, hn::LoadU(di16h, win[j] + x)), t.y[j]);
        if (plain)
          StoreOutN(hn::DemoteTo(di16h, a), di16h, dst.row<std::int16_t>(y) + x, len - x, stream);
        else
          hn::StoreU(a, di32, acc.data() + x);
      }
    }
    if (!plain)
      finish_scaled(acc.data(),
                    dst.depth() == Depth::f32 ? static_cast<void*>(dst.row<float>(y))
                                              : dst.row<std::int16_t>(y),
                    len, dst.depth() == Depth::f32, scale, delta, stream);
  };
  deriv_band<std::uint8_t, std::int16_t>(src, t, border, rows, n, hpass, vpass);
}

void deriv_f32(const ConstImageView& src, const ImageView& dst, const DerivTaps& t, double scale,
               double delta, const Border& border, Rows rows) {
  const bool stream = stream_output(dst);
  const hn::ScalableTag<float> df;
  const std::int64_t n = std::int64_t(hn::Lanes(df));
  const int ch = src.channels();
  const std::int64_t len = src.width() * ch;
  auto hpass = [&](const float* pr, float* out) {
    for (std::int64_t x = 0; x < len; x += n) {
      auto a = hn::Zero(df);
      for (int i = 0; i < t.nx; ++i)
        a = hn::Add(a, hn::Mul(hn::Set(df, float(t.x[i])), hn::LoadU(df, pr + x + i * ch)));
      hn::Store(a, df, out + x);
    }
  };
  const auto vs = hn::Set(df, float(scale)), vd = hn::Set(df, float(delta));
  auto vpass = [&](const float* const* win, std::int64_t y) {
    float* out = dst.row<float>(y);
    for (std::int64_t x = 0; x < len; x += n) {
      auto a = hn::Zero(df);
      for (int j = 0; j < t.ny; ++j)
        a = hn::Add(a, hn::Mul(hn::Set(df, float(t.y[j])), hn::Load(df, win[j] + x)));
      StoreOutN(hn::Add(hn::Mul(a, vs), vd), df, out + x, len - x, stream);
    }
  };
  deriv_band<float, float>(src, t, border, rows, n, hpass, vpass);
}

#endif

void deriv_rows(const ConstImageView& src, const ImageView& dst, const DerivTaps& t, double scale,
                double delta, const Border& border, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  (void)src, (void)dst, (void)t, (void)scale, (void)delta, (void)border, (void)rows;
#else
  if (src.depth() == Depth::f32)
    deriv_f32(src, dst, t, scale, delta, border, rows);
  else
    deriv_u8(src, dst, t, scale, delta, border, rows);
#endif
}

void sobel_rows(const ConstImageView& src, const ImageView& dst, const SobelParams& p, Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::sobel(src, dst, p, rows);
#else
  DerivTaps t{};
  t.nx = detail::sobel_taps_len(p.k, p.dx);
  t.ny = detail::sobel_taps_len(p.k, p.dy);
  detail::sobel_taps(p.k, p.dx, t.x);
  detail::sobel_taps(p.k, p.dy, t.y);
  deriv_rows(src, dst, t, p.scale, p.delta, p.border, rows);
#endif
}

void scharr_rows(const ConstImageView& src, const ImageView& dst, const ScharrParams& p,
                 Rows rows) {
#if HWY_TARGET == HWY_SCALAR
  ref::scharr(src, dst, p, rows);
#else
  DerivTaps t{};
  t.nx = t.ny = 3;
  detail::scharr_taps(p.dx, t.x);
  detail::scharr_taps(p.dy, t.y);
  deriv_rows(src, dst, t, p.scale, p.delta, p.border, rows);
#endif
}

}  // namespace pixflow::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pixflow::cpu {
HWY_EXPORT(sobel_rows);
HWY_EXPORT(scharr_rows);

void sobel(const ConstImageView& src, const ImageView& dst, const SobelParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(sobel_rows)(src, dst, p, rows);
}
void scharr(const ConstImageView& src, const ImageView& dst, const ScharrParams& p, Rows rows) {
  HWY_DYNAMIC_DISPATCH(scharr_rows)(src, dst, p, rows);
}
}  // namespace pixflow::cpu

PIXFLOW_REGISTER_IMPLS(cpu_sobel) {
  using pixflow::Depth;
  const auto s = pixflow::detail::Support::of({Depth::u8, Depth::f32}, {1, 2, 3, 4});
  pixflow::cpu::add_banded<&pixflow::cpu::sobel>(table, "sobel", s);
  pixflow::cpu::add_banded<&pixflow::cpu::scharr>(table, "scharr", s);
}
#endif
