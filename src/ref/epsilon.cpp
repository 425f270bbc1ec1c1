// Reference for epsilon: mean of the window pixels close to the centre.
#include <cmath>
#include <cstdint>

#include "src/base/numeric.hpp"
#include "src/base/rules/epsilon.h"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Window (2r+1)^2 through the border (constant: the value, saturated to T, is a pixel like
// any other). A pixel p counts when |p - c| <= t (compared in double; the centre always
// counts). u8: (2*sum + n) / (2*n) in integers (round half up); f32: float(sum / n) with the
// sum in double.
template <class T>
void run(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p, Rows rows) {
  const int ch = src.channels();
  const T cval = detail::saturate_cast<T>(p.border.value);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        const double centre = double(src.row<T>(y)[x * ch + c]);
        double sum = 0;
        std::int64_t isum = 0, n = 0;
        for (int dy = -p.r; dy <= p.r; ++dy) {
          const std::int64_t yy = detail::border_index(y + dy, src.height(), p.border.type);
          for (int dx = -p.r; dx <= p.r; ++dx) {
            const std::int64_t xx = detail::border_index(x + dx, src.width(), p.border.type);
            const T v = (xx < 0 || yy < 0) ? cval : src.row<T>(yy)[xx * ch + c];
            if (std::fabs(double(v) - centre) <= p.t) {
              ++n;
              if constexpr (std::is_same_v<T, float>)
                sum += double(v);
              else
                isum += std::int64_t(v);
            }
          }
        }
        // n >= 1: the centre is in the window (distance 0).
        if constexpr (std::is_same_v<T, float>)
          out[x * ch + c] = px_epsilon_mean_f64(sum, n);
        else
          out[x * ch + c] = T(px_epsilon_mean_i64(isum, n));
      }
  }
}

}  // namespace

void epsilon(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p, Rows rows) {
  if (src.depth() == Depth::u8)
    run<std::uint8_t>(src, dst, p, rows);
  else
    run<float>(src, dst, p, rows);
}

}  // namespace pixflow::ref
