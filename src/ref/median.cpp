#include <algorithm>
#include <vector>

#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// dst(x, y, c) = the median (element kw*kh/2 in ascending order) of the kw x kh window
// centred on (x, y), samples outside the image taken by the border rule; f32 in totalOrder
// (detail::order_less: NaN and -0 have a place, so the median is one sample's bits).
template <class T>
void median_t(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows) {
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const int rx = p.kw / 2, ry = p.kh / 2;
  const T cval = detail::saturate_cast<T>(p.border.value);
  std::vector<T> win(std::size_t(p.kw) * std::size_t(p.kh));
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        std::size_t n = 0;
        for (int dy = -ry; dy <= ry; ++dy) {
          const std::int64_t sy = detail::border_index(y + dy, h, p.border.type);
          for (int dx = -rx; dx <= rx; ++dx) {
            const std::int64_t sx = detail::border_index(x + dx, w, p.border.type);
            win[n++] = (sy < 0 || sx < 0) ? cval : src.row<T>(sy)[sx * ch + c];
          }
        }
        std::nth_element(win.begin(), win.begin() + std::ptrdiff_t(n / 2), win.end(),
                         [](T a, T b) { return detail::order_less(a, b); });
        out[x * ch + c] = win[n / 2];
      }
  }
}

}  // namespace

void median(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) { median_t<decltype(t)>(src, dst, p, rows); });
}

}  // namespace pixflow::ref
