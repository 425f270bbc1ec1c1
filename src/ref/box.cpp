#include <type_traits>
#include <vector>

#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Window: columns x - kw/2 .. x - kw/2 + kw - 1, rows y - kh/2 .. (anchor as cv::blur),
// outside samples by the border rule (constant: border.value saturated to the depth).
// Integers: exact int64 window sum S; normalize -> div_round_half_even(S, kw*kh), else
// saturate(S). f32: the sum accumulated in double (column sums over the kh rows in row
// order, then the kw column sums in column order), stored as float(S / n) or float(S).
template <class T>
void box_t(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, std::int64_t>;
  const int ch = src.channels();
  const std::int64_t w = src.width(), h = src.height();
  const int ax = p.kw / 2, ay = p.kh / 2;
  const Acc cval = Acc(detail::saturate_cast<T>(p.border.value));
  const std::int64_t n = std::int64_t(p.kw) * p.kh;
  std::vector<Acc> col(std::size_t(w) * std::size_t(ch));
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    std::fill(col.begin(), col.end(), Acc(0));
    for (int j = 0; j < p.kh; ++j) {
      const std::int64_t sy = detail::border_index(y - ay + j, h, p.border.type);
      for (std::int64_t i = 0; i < w * ch; ++i)
        col[std::size_t(i)] += sy < 0 ? cval : Acc(src.row<T>(sy)[i]);
    }
    T* out = dst.row<T>(y);
    for (std::int64_t x = 0; x < w; ++x)
      for (int c = 0; c < ch; ++c) {
        Acc s = 0;
        for (int i = 0; i < p.kw; ++i) {
          const std::int64_t sx = detail::border_index(x - ax + i, w, p.border.type);
          s += sx < 0 ? cval * Acc(p.kh) : col[std::size_t(sx * ch + c)];
        }
        if constexpr (std::is_same_v<T, float>) {
          out[x * ch + c] = p.normalize ? float(s / double(n)) : float(s);
        } else {
          out[x * ch + c] = detail::saturate_cast<T>(p.normalize ? detail::div_round_half_even(s, n)
                                                                 : std::int64_t(s));
        }
      }
  }
}

}  // namespace

void box(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) { box_t<decltype(t)>(src, dst, p, rows); });
}

}  // namespace pixflow::ref
