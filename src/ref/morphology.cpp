#include <algorithm>
#include <vector>

#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// dst(x, y) = max (dilate) or min (erode) of src over columns x - ax .. x - ax + kw - 1
// and rows y - ay .. y - ay + kh - 1, outside samples by the border rule (constant: the
// border value saturated to the depth). A rect window is separable for max/min, so the
// reference takes the column extreme over the kh rows first, then the row extreme.
template <class T>
void morph_t(const ConstImageView& src, const ImageView& dst, bool is_max, int kw, int kh, int ax,
             int ay, const Border& border, Rows rows) {
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const T cval = detail::saturate_cast<T>(border.value);
  // f32 in totalOrder (detail::order_less): NaN and the sign of zero do not depend on the
  // order the window is visited in.
  auto pick = [is_max](T a, T b) {
    return is_max ? (detail::order_less(a, b) ? b : a) : (detail::order_less(b, a) ? b : a);
  };
  std::vector<T> col(std::size_t(w) * std::size_t(ch));
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    bool row_outside = false;  // some window row is outside (constant border only)
    bool first = true;         // no window row inside the image yet
    for (int j = 0; j < kh; ++j) {
      const std::int64_t sy = detail::border_index(y - ay + j, h, border.type);
      if (sy < 0) {
        row_outside = true;
        continue;
      }
      const T* in = src.row<T>(sy);
      for (std::int64_t i = 0; i < w * ch; ++i)
        col[std::size_t(i)] = first ? in[i] : pick(col[std::size_t(i)], in[i]);
      first = false;
    }
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        // A window row outside the image (constant border) contributes the value.
        bool have = row_outside;
        T acc = cval;
        if (!first) {  // at least one window row inside the image
          for (int i = 0; i < kw; ++i) {
            const std::int64_t sx = detail::border_index(x - ax + i, w, border.type);
            const T v = sx < 0 ? cval : col[std::size_t(sx * ch + c)];
            acc = have ? pick(acc, v) : v;
            have = true;
          }
        }
        out[x * ch + c] = acc;
      }
  }
}

}  // namespace

void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                Rows rows) {
  const bool is_max = m.op == MorphOp::dilate;
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) {
    morph_t<decltype(t)>(src, dst, is_max, m.kw, m.kh, m.ax, m.ay, m.border, rows);
  });
}

}  // namespace pixflow::ref
