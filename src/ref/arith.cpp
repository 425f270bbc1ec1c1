// Reference for add, sub, absdiff, mul (image-image and image-scalar). The rule is
// docs/ops/arith.md.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Image (op) image. Integers: the exact result in int64 (|a*b| < 2^62 for s32), then
// saturated. f32: one float operation.
template <class T>
void rows_ab(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
             Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* pa = a.row<T>(y);
    const T* pb = b.row<T>(y);
    T* d = dst.row<T>(y);
    // Element by element, read before write: safe when dst is identical to a or b.
    for (std::int64_t i = 0; i < n; ++i) d[i] = detail::arith_apply<T>(pa[i], pb[i], op);
  }
}

template <class T>
void rows_av(const ConstImageView& a, double v, const ImageView& dst, ArithOp op, Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* pa = a.row<T>(y);
    T* d = dst.row<T>(y);
    for (std::int64_t i = 0; i < n; ++i) d[i] = detail::arith_apply_scalar<T>(pa[i], v, op);
  }
}

}  // namespace

void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           Rows rows) {
  detail::visit_depth(a.depth(), [&](auto t) { rows_ab<decltype(t)>(a, b, dst, op, rows); });
}

void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op, Rows rows) {
  detail::visit_depth(a.depth(), [&](auto t) { rows_av<decltype(t)>(a, value, dst, op, rows); });
}

}  // namespace pixflow::ref
