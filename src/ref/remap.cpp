// Reference for remap: dst(x, y) = src(map_x(x, y), map_y(x, y)).
#include <cmath>
#include <cstdint>

#include "src/base/numeric.hpp"
#include "src/base/rules/remap.h"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

constexpr float kMaxCoord = PX_REMAP_MAX_COORD;  // 2^30: finite map values are clamped to +-2^30

// Source sample through the border, each tap independently (constant -> the border value).
template <class T>
float tap(const ConstImageView& src, std::int64_t x, std::int64_t y, int c, const Border& b) {
  const std::int64_t xx = detail::border_index(x, src.width(), b.type);
  const std::int64_t yy = detail::border_index(y, src.height(), b.type);
  if (xx < 0 || yy < 0) return float(detail::saturate_cast<T>(b.value));
  return float(src.row<T>(yy)[xx * src.channels() + c]);
}

// nearest: (floor(mx + 0.5), floor(my + 0.5)), the sum taken in double (exact).
// linear: x0 = floor(mx), fx = mx - x0 (float, exact), same for y;
//   (1-fy)*((1-fx)*p00 + fx*p10) + fy*((1-fx)*p01 + fx*p11) in float, in this order, no FMA
//   (px_remap_linear, src/base/rules/remap.h, which CUDA and OpenCL call too);
//   integers round half to even and saturate.
// A non-finite map value gives the constant border's value (constant) or 0 (other borders).
template <class T>
void run(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
         const ImageView& dst, const RemapParams& p, Rows rows) {
  const int ch = src.channels();
  const T invalid =
      p.border.type == BorderType::constant ? detail::saturate_cast<T>(p.border.value) : T(0);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    T* out = dst.row<T>(y);
    const float* mxr = map_x.row<float>(y);
    const float* myr = map_y.row<float>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      float mx = mxr[x], my = myr[x];
      if (!std::isfinite(mx) || !std::isfinite(my)) {
        for (int c = 0; c < ch; ++c) out[x * ch + c] = invalid;
        continue;
      }
      mx = std::fmin(std::fmax(mx, -kMaxCoord), kMaxCoord);
      my = std::fmin(std::fmax(my, -kMaxCoord), kMaxCoord);
      if (p.interp == Interp::nearest) {
        const auto xi = std::int64_t(std::floor(double(mx) + 0.5));
        const auto yi = std::int64_t(std::floor(double(my) + 0.5));
        for (int c = 0; c < ch; ++c)
          out[x * ch + c] = detail::saturate_cast<T>(double(tap<T>(src, xi, yi, c, p.border)));
        continue;
      }
      const float x0f = std::floor(mx), y0f = std::floor(my);
      const float fx = mx - x0f, fy = my - y0f;
      const auto x0 = std::int64_t(x0f), y0 = std::int64_t(y0f);
      const float bx = 1.0f - fx, by = 1.0f - fy;
      for (int c = 0; c < ch; ++c) {
        const float p00 = tap<T>(src, x0, y0, c, p.border);
        const float p10 = tap<T>(src, x0 + 1, y0, c, p.border);
        const float p01 = tap<T>(src, x0, y0 + 1, c, p.border);
        const float p11 = tap<T>(src, x0 + 1, y0 + 1, c, p.border);
        const float v = px_remap_linear(p00, p10, p01, p11, fx, bx, fy, by);
        out[x * ch + c] = detail::saturate_cast<T>(double(v));
      }
    }
  }
}

}  // namespace

void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, Rows rows) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) { run<decltype(t)>(src, map_x, map_y, dst, p, rows); });
}

}  // namespace pixflow::ref
