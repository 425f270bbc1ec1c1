// Reference for resize (docs/ops/resize.md): every destination sample from the taps of
// src/base/rules/resize.h, which the CUDA and OpenCL kernels evaluate too. The per-axis taps
// are tabulated once a call (they depend on the axis only); the arithmetic is the rule's.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "src/base/rules/resize.h"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

struct Taps {  // one destination index of an axis: two taps, the rule's weight / fraction
  std::int64_t i0 = 0, i1 = 0;
  std::int64_t q = 0;  // fixed-point weight of i1 (linear) or of i0 (area linear, u8)
  std::int64_t q1 = 0;
  float f = 0;  // float fraction (f32 linear, area linear)
};

template <class T>
constexpr int linear_bits() {
  return std::is_same_v<T, std::uint8_t> ? 8 : 16;
}

template <class T>
T store_float(float v) {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return px_sat_u8_f32(v);
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return px_sat_u16_f32(v);
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return px_sat_s16_f32(v);
  else
    return v;
}

template <class T>
T store_int(std::int64_t v) {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return px_sat_u8_s64(v);
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return px_sat_u16_s64(v);
  else
    return px_sat_s16_s64(v);
}

template <class T>
void nearest(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const int ch = src.channels();
  const std::int64_t sx = px_resize_nearest_step(src.width(), dst.width());
  const std::int64_t sy = px_resize_nearest_step(src.height(), dst.height());
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* in = src.row<T>(px_resize_nearest_index(y, src.height(), sy));
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const std::int64_t xs = px_resize_nearest_index(x, src.width(), sx);
      for (int c = 0; c < ch; ++c) out[x * ch + c] = in[xs * ch + c];
    }
  }
}

Taps linear_taps(std::int64_t d, std::int64_t n, std::int64_t m, int bits) {
  Taps t;
  const double scale = px_resize_linear_scale(n, m);
  t.q = px_resize_linear_tap(d, n, scale, bits, &t.i0, &t.i1);
  std::int64_t a, b;
  t.f = float(px_resize_linear_frac(d, n, scale, &a, &b));
  return t;
}

template <class T>
void linear(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const int ch = src.channels();
  std::vector<Taps> xt(std::size_t(dst.width()));
  for (std::int64_t x = 0; x < dst.width(); ++x)
    xt[std::size_t(x)] = linear_taps(x, src.width(), dst.width(), linear_bits<T>());
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const Taps ty = linear_taps(y, src.height(), dst.height(), linear_bits<T>());
    const T* r0 = src.row<T>(ty.i0);
    const T* r1 = src.row<T>(ty.i1);
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const Taps& tx = xt[std::size_t(x)];
      for (int c = 0; c < ch; ++c) {
        const T a = r0[tx.i0 * ch + c], b = r0[tx.i1 * ch + c];
        const T e = r1[tx.i0 * ch + c], g = r1[tx.i1 * ch + c];
        T& o = out[x * ch + c];
        if constexpr (std::is_same_v<T, std::uint8_t>)
          o = px_resize_linear_u8(a, b, e, g, px_s32(tx.q), px_s32(ty.q));
        else if constexpr (std::is_same_v<T, float>)
          o = px_resize_linear_f32(a, b, e, g, tx.f, ty.f);
        else
          o = store_int<T>(px_resize_linear_q16(a, b, e, g, tx.q, ty.q));
      }
    }
  }
}

// area, integer factors: the kx x ky block of every destination pixel.
template <class T>
void area_fast(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const int ch = src.channels();
  const std::int64_t kx = px_resize_area_factor(src.width(), dst.width());
  const std::int64_t ky = px_resize_area_factor(src.height(), dst.height());
  const float inv = px_resize_area_fast_scale(kx, ky);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        if constexpr (std::is_same_v<T, float>) {
          float sum = 0;  // row-major, left to right
          for (std::int64_t j = 0; j < ky; ++j) {
            const float* in = src.row<float>(y * ky + j);
            for (std::int64_t i = 0; i < kx; ++i) sum = px_add_rn(sum, in[(x * kx + i) * ch + c]);
          }
          out[x * ch + c] = px_mul_rn(sum, inv);
        } else {
          std::int64_t sum = 0;
          for (std::int64_t j = 0; j < ky; ++j) {
            const T* in = src.row<T>(y * ky + j);
            for (std::int64_t i = 0; i < kx; ++i) sum += in[(x * kx + i) * ch + c];
          }
          out[x * ch + c] = kx == 2 && ky == 2 ? store_int<T>((sum + 2) >> 2)
                                               : store_float<T>(px_mul_rn(float(sum), inv));
        }
      }
  }
}

// area, non-integer shrink: the float-weighted cover of every destination pixel.
template <class T>
void area_cover(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const int ch = src.channels();
  const double sx = px_resize_linear_scale(src.width(), dst.width());
  const double sy = px_resize_linear_scale(src.height(), dst.height());
  std::vector<px_resize_span> xs(std::size_t(dst.width()));
  for (std::int64_t x = 0; x < dst.width(); ++x)
    xs[std::size_t(x)] = px_resize_area_span(x, src.width(), sx);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const px_resize_span ys = px_resize_area_span(y, src.height(), sy);
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const px_resize_span& s = xs[std::size_t(x)];
      for (int c = 0; c < ch; ++c) {
        float acc = 0;
        for (int j = 0; j < ys.count; ++j) {
          const T* in = src.row<T>(ys.first + j);
          float r = 0;
          for (int k = 0; k < s.count; ++k)
            r = px_add_rn(
                r, px_mul_rn(float(in[(s.first + k) * ch + c]), px_resize_span_weight(s, k)));
          const float t = px_mul_rn(px_resize_span_weight(ys, j), r);
          acc = j == 0 ? t : px_add_rn(acc, t);
        }
        out[x * ch + c] = store_float<T>(acc);
      }
    }
  }
}

// area with an enlarged axis: linear with area coordinates.
template <class T>
void area_linear(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const int ch = src.channels();
  auto taps = [](std::int64_t d, std::int64_t n, std::int64_t m, int clamp) {
    Taps t;
    t.f = px_resize_area_linear_frac(d, n, m, clamp, &t.i0, &t.i1);
    t.q = px_resize_area_q11(px_sub_rn(1.0f, t.f));
    t.q1 = px_resize_area_q11(t.f);
    return t;
  };
  std::vector<Taps> xt(std::size_t(dst.width()));
  for (std::int64_t x = 0; x < dst.width(); ++x)
    xt[std::size_t(x)] = taps(x, src.width(), dst.width(), 1);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const Taps ty = taps(y, src.height(), dst.height(), 0);
    const T* r0 = src.row<T>(ty.i0);
    const T* r1 = src.row<T>(ty.i1);
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const Taps& tx = xt[std::size_t(x)];
      for (int c = 0; c < ch; ++c) {
        const T a = r0[tx.i0 * ch + c], b = r0[tx.i1 * ch + c];
        const T e = r1[tx.i0 * ch + c], g = r1[tx.i1 * ch + c];
        if constexpr (std::is_same_v<T, std::uint8_t>)
          out[x * ch + c] = px_resize_area_linear_u8(a, b, e, g, px_s32(tx.q), px_s32(tx.q1),
                                                     px_s32(ty.q), px_s32(ty.q1));
        else
          out[x * ch + c] = store_float<T>(
              px_resize_area_linear_f32(float(a), float(b), float(e), float(g), tx.f, ty.f));
      }
    }
  }
}

template <class T>
void copy_rows(const ConstImageView& src, const ImageView& dst, Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* in = src.row<T>(y);
    T* out = dst.row<T>(y);
    for (std::int64_t i = 0; i < n; ++i) out[i] = in[i];
  }
}

}  // namespace

void resize(const ConstImageView& src, const ImageView& dst, const ResizeParams& p, Rows rows) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::s16, Depth::f32>(src.depth(), [&](auto t) {
    using T = decltype(t);
    switch (p.interp) {
      case ResizeInterp::nearest:
        nearest<T>(src, dst, rows);
        return;
      case ResizeInterp::linear:
        linear<T>(src, dst, rows);
        return;
      case ResizeInterp::area:
        switch (px_resize_area_mode(src.width(), dst.width(), src.height(), dst.height())) {
          case PX_RESIZE_AREA_COPY:
            copy_rows<T>(src, dst, rows);
            return;
          case PX_RESIZE_AREA_FAST:
            area_fast<T>(src, dst, rows);
            return;
          case PX_RESIZE_AREA_COVER:
            area_cover<T>(src, dst, rows);
            return;
          default:
            area_linear<T>(src, dst, rows);
            return;
        }
    }
  });
}

}  // namespace pixflow::ref
