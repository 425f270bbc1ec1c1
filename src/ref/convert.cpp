// Reference for convert: dst = saturate(round_half_even(abs?(x * scale + offset))) in
// double. The rule is docs/ops/convert.md.
#include <cmath>
#include <cstdint>

#include "src/base/pointwise.hpp"
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
  switch (dst.depth()) {
    case Depth::u8:
      return convert_rows<S, std::uint8_t>(src, dst, p, rows);
    case Depth::u16:
      return convert_rows<S, std::uint16_t>(src, dst, p, rows);
    case Depth::s16:
      return convert_rows<S, std::int16_t>(src, dst, p, rows);
    case Depth::s32:
      return convert_rows<S, std::int32_t>(src, dst, p, rows);
    case Depth::f32:
      return convert_rows<S, float>(src, dst, p, rows);
  }
}

}  // namespace

void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p, Rows rows) {
  switch (src.depth()) {
    case Depth::u8:
      return convert_from<std::uint8_t>(src, dst, p, rows);
    case Depth::u16:
      return convert_from<std::uint16_t>(src, dst, p, rows);
    case Depth::s16:
      return convert_from<std::int16_t>(src, dst, p, rows);
    case Depth::s32:
      return convert_from<std::int32_t>(src, dst, p, rows);
    case Depth::f32:
      return convert_from<float>(src, dst, p, rows);
  }
}

}  // namespace pixflow::ref
