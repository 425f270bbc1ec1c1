// Element rules of the point-wise ops (arith, convert, threshold), shared by the reference
// and the CUDA kernels so that every backend computes the same expression. Host code is
// built with -ffp-contract=off and device code with -fmad=false: no FMA contraction.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "pixflow/ops.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::detail {

/// a (op) b: float arithmetic for f32; exact in 64 bits then saturated for integers.
template <class T>
PIXFLOW_HD T arith_apply(T a, T b, ArithOp op) {
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
      case ArithOp::add:
        return a + b;
      case ArithOp::sub:
        return a - b;
      case ArithOp::absdiff:
        return fabsf(a - b);
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
    return saturate_cast<T>(r);
  }
}

/// a (op) v computed in double, rounded half to even and saturated (f32: rounded to float).
template <class T>
PIXFLOW_HD T arith_apply_scalar(T a, double v, ArithOp op) {
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
      r = fabs(x - v);
      break;
    case ArithOp::mul:
      r = x * v;
      break;
  }
  return saturate_cast<T>(r);
}

/// saturate(round_half_even(abs?(x * scale + offset))) in double.
template <class S, class D>
PIXFLOW_HD D convert_apply(S s, double scale, double offset, bool abs) {
  double v = static_cast<double>(s) * scale + offset;
  if (abs) v = fabs(v);
  return saturate_cast<D>(v);
}

/// The cv::threshold choice once "above" (x > t) is known.
template <class T>
PIXFLOW_HD T threshold_pick(ThresholdType type, bool above, T x, T t, T maxval) {
  switch (type) {
    case ThresholdType::binary:
      return above ? maxval : T(0);
    case ThresholdType::binary_inv:
      return above ? T(0) : maxval;
    case ThresholdType::trunc:
      return above ? t : x;
    case ThresholdType::tozero:
      return above ? x : T(0);
    case ThresholdType::tozero_inv:
      return above ? T(0) : x;
  }
  return x;
}

/// Threshold constants for integer depths: x > it decides; tv is the trunc value, mv maxval.
template <class T>
struct IntThreshold {
  std::int64_t it;
  T tv, mv;
};
template <class T>
inline IntThreshold<T> int_threshold(double t, double maxval) {
  const double lo = Limits<T>::lo, hi = Limits<T>::hi;
  const double ft = std::fmin(std::fmax(std::floor(t), lo - 1), hi);
  const auto it = static_cast<std::int64_t>(ft);
  return {it, saturate_cast<T>(it), saturate_cast<T>(maxval)};
}

/// double -> float without undefined behaviour beyond float's range (±inf there).
inline float to_float_clamped(double v) {
  if (v >= 0x1.ffffffp127) return INFINITY;
  if (v <= -0x1.ffffffp127) return -INFINITY;
  return static_cast<float>(v);
}

}  // namespace pixflow::detail
