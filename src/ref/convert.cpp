// Reference for convert: dst = saturate(round_half_even(abs?(x * scale + offset))) in
// double. The rule is docs/ops/convert.md.
#include <cmath>
#include <cstdint>

#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

template <class S, class D>
void convert_rows(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
                  Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const S* s = src.row<S>(y);
    D* d = dst.row<D>(y);
    // Element by element, read before write: safe in place (same depth, identical views).
    for (std::int64_t i = 0; i < n; ++i) {
      d[i] = detail::convert_apply<S, D>(s[i], p.scale, p.offset, p.abs);
    }
  }
}

template <class S>
void convert_from(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
                  Rows rows) {
  detail::visit_depth(dst.depth(),
                      [&](auto t) { convert_rows<S, decltype(t)>(src, dst, p, rows); });
}

}  // namespace

void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p, Rows rows) {
  detail::visit_depth(src.depth(), [&](auto t) { convert_from<decltype(t)>(src, dst, p, rows); });
}

}  // namespace pixflow::ref
