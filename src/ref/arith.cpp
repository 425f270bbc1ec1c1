// Reference for add, sub, absdiff, mul (image-image and image-scalar). The rule is
// docs/ops/arith.md.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/common/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// Image (op) image. Integers: the exact result in int64 (|a*b| < 2^62 for s32), then
// saturated. f32: one float operation.
template <class T>
T apply(T a, T b, ArithOp op) {
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
      case ArithOp::add:
        return a + b;
      case ArithOp::sub:
        return a - b;
      case ArithOp::absdiff:
        return std::fabs(a - b);
      case ArithOp::mul:
        return a * b;
    }
    return 0;
  } else {
    const std::int64_t x = a, y = b;
    std::int64_t r = 0;
    switch (op) {
      case ArithOp::add:
        r = x + y;
        break;
      case ArithOp::sub:
        r = x - y;
        break;
      case ArithOp::absdiff:
        r = x > y ? x - y : y - x;
        break;
      case ArithOp::mul:
        r = x * y;
        break;
    }
    return detail::saturate_cast<T>(r);
  }
}

// Image (op) scalar: computed in double, then saturate_cast (round half to even and
// saturate for integers; float(...) for f32).
template <class T>
T apply_scalar(T a, double v, ArithOp op) {
  const double x = static_cast<double>(a);
  double r = 0;
  switch (op) {
    case ArithOp::add:
      r = x + v;
      break;
    case ArithOp::sub:
      r = x - v;
      break;
    case ArithOp::absdiff:
      r = std::fabs(x - v);
      break;
    case ArithOp::mul:
      r = x * v;
      break;
  }
  return detail::saturate_cast<T>(r);
}

template <class T>
void rows_ab(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
             Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* pa = a.row<T>(y);
    const T* pb = b.row<T>(y);
    T* d = dst.row<T>(y);
    // Element by element, read before write: safe when dst is identical to a or b.
    for (std::int64_t i = 0; i < n; ++i) d[i] = apply<T>(pa[i], pb[i], op);
  }
}

template <class T>
void rows_av(const ConstImageView& a, double v, const ImageView& dst, ArithOp op, Rows rows) {
  const std::int64_t n = dst.width() * dst.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* pa = a.row<T>(y);
    T* d = dst.row<T>(y);
    for (std::int64_t i = 0; i < n; ++i) d[i] = apply_scalar<T>(pa[i], v, op);
  }
}

}  // namespace

void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           Rows rows) {
  switch (a.depth()) {
    case Depth::u8:
      return rows_ab<std::uint8_t>(a, b, dst, op, rows);
    case Depth::u16:
      return rows_ab<std::uint16_t>(a, b, dst, op, rows);
    case Depth::s16:
      return rows_ab<std::int16_t>(a, b, dst, op, rows);
    case Depth::s32:
      return rows_ab<std::int32_t>(a, b, dst, op, rows);
    case Depth::f32:
      return rows_ab<float>(a, b, dst, op, rows);
  }
}

void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op, Rows rows) {
  switch (a.depth()) {
    case Depth::u8:
      return rows_av<std::uint8_t>(a, value, dst, op, rows);
    case Depth::u16:
      return rows_av<std::uint16_t>(a, value, dst, op, rows);
    case Depth::s16:
      return rows_av<std::int16_t>(a, value, dst, op, rows);
    case Depth::s32:
      return rows_av<std::int32_t>(a, value, dst, op, rows);
    case Depth::f32:
      return rows_av<float>(a, value, dst, op, rows);
  }
}

}  // namespace pixflow::ref
