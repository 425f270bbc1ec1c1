// Reference for filter2d: 2-D correlation (kernel not flipped, as cv::filter2D).
#include <cstdint>

#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// dst = (sum over kernel rows r, columns c in row-major order of k[r][c] * src(x + c - kw/2,
// y + r - kh/2), accumulated in float from 0.0f without FMA) + float(delta); u8 rounds
// half to even and saturates.
template <class T>
void run(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p, Rows rows) {
  const int ch = src.channels();
  const int ax = p.kw / 2, ay = p.kh / 2;
  const T cval = detail::saturate_cast<T>(p.border.value);
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        float sum = 0.0f;
        for (int r = 0; r < p.kh; ++r) {
          const std::int64_t yy = detail::border_index(y + r - ay, src.height(), p.border.type);
          for (int q = 0; q < p.kw; ++q) {
            const std::int64_t xx = detail::border_index(x + q - ax, src.width(), p.border.type);
            const T v = (xx < 0 || yy < 0) ? cval : src.row<T>(yy)[xx * ch + c];
            sum += p.kernel[std::size_t(r * p.kw + q)] * float(v);
          }
        }
        sum += float(p.delta);
        out[x * ch + c] = detail::saturate_cast<T>(double(sum));
      }
  }
}

}  // namespace

void filter2d(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p, Rows rows) {
  if (src.depth() == Depth::u8)
    run<std::uint8_t>(src, dst, p, rows);
  else
    run<float>(src, dst, p, rows);
}

}  // namespace pixflow::ref
