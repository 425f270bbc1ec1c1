// Reference for sobel and scharr: a separable derivative written as the 2-D sum it is.
#include <cstdint>

#include "src/base/deriv_taps.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

struct Taps {
  int x[detail::kMaxDerivTaps], y[detail::kMaxDerivTaps];
  int nx, ny;
};

// Source sample (x, y, c) through the border (constant: the border value saturated to T).
template <class T>
T fetch(const ConstImageView& src, std::int64_t x, std::int64_t y, int c, const Border& b) {
  const std::int64_t xx = detail::border_index(x, src.width(), b.type);
  const std::int64_t yy = detail::border_index(y, src.height(), b.type);
  if (xx < 0 || yy < 0) return detail::saturate_cast<T>(b.value);
  return src.row<T>(yy)[xx * src.channels() + c];
}

// u8 source: exact integer sum sum_j ky[j] * sum_i kx[i] * p, then
//   s16: scale == 1 && delta == 0 -> saturate(sum); else saturate(rint(sum * scale + delta))
//   f32: float(double(sum) * scale + delta)
// f32 source: per vertical tap j a float row sum h_j = sum_i kx[i] * p (from 0.0f, tap
// order, no FMA), then v = sum_j ky[j] * h_j likewise, then v * float(scale) + float(delta).
template <class T, class D>
void deriv(const ConstImageView& src, const ImageView& dst, const Taps& t, double scale,
           double delta, const Border& b, Rows rows) {
  const int ch = src.channels();
  const int rx = t.nx / 2, ry = t.ny / 2;
  const bool plain = scale == 1.0 && delta == 0.0;
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    D* out = dst.row<D>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        if constexpr (std::is_same_v<T, float>) {
          float v = 0.0f;
          for (int j = 0; j < t.ny; ++j) {
            float h = 0.0f;
            for (int i = 0; i < t.nx; ++i)
              h += float(t.x[i]) * fetch<float>(src, x + i - rx, y + j - ry, c, b);
            v += float(t.y[j]) * h;
          }
          out[x * ch + c] = v * float(scale) + float(delta);
        } else {
          std::int64_t sum = 0;
          for (int j = 0; j < t.ny; ++j) {
            std::int64_t h = 0;
            for (int i = 0; i < t.nx; ++i)
              h += t.x[i] * std::int64_t(fetch<T>(src, x + i - rx, y + j - ry, c, b));
            sum += t.y[j] * h;
          }
          if constexpr (std::is_same_v<D, float>) {
            out[x * ch + c] = float(double(sum) * scale + delta);
          } else {
            out[x * ch + c] = plain ? detail::saturate_cast<D>(sum)
                                    : detail::saturate_cast<D>(double(sum) * scale + delta);
          }
        }
      }
  }
}

void run(const ConstImageView& src, const ImageView& dst, const Taps& t, double scale, double delta,
         const Border& b, Rows rows) {
  if (src.depth() == Depth::f32)
    deriv<float, float>(src, dst, t, scale, delta, b, rows);
  else if (dst.depth() == Depth::s16)
    deriv<std::uint8_t, std::int16_t>(src, dst, t, scale, delta, b, rows);
  else
    deriv<std::uint8_t, float>(src, dst, t, scale, delta, b, rows);
}

}  // namespace

void sobel(const ConstImageView& src, const ImageView& dst, const SobelParams& p, Rows rows) {
  Taps t{};
  t.nx = detail::sobel_taps_len(p.k, p.dx);
  t.ny = detail::sobel_taps_len(p.k, p.dy);
  detail::sobel_taps(p.k, p.dx, t.x);
  detail::sobel_taps(p.k, p.dy, t.y);
  run(src, dst, t, p.scale, p.delta, p.border, rows);
}

void scharr(const ConstImageView& src, const ImageView& dst, const ScharrParams& p, Rows rows) {
  Taps t{};
  t.nx = t.ny = 3;
  detail::scharr_taps(p.dx, t.x);
  detail::scharr_taps(p.dy, t.y);
  run(src, dst, t, p.scale, p.delta, p.border, rows);
}

}  // namespace pixflow::ref
