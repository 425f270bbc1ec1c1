// Element rules of the point-wise ops (arith, convert, threshold), shared by the reference
// and the CUDA kernels so that every backend computes the same expression. Host code is
// built with -ffp-contract=off and device code with -fmad=false: no FMA contraction. The
// per-sample rules are the C functions of src/base/rules/pointwise.h (which the OpenCL kernels
// include); the templates here pick the depth's function.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "pixflow/ops.hpp"
#include "src/base/numeric.hpp"
#include "src/base/rules/pointwise.h"

namespace pixflow::detail {

static_assert(int(ArithOp::add) == PX_ARITH_ADD && int(ArithOp::sub) == PX_ARITH_SUB &&
                  int(ArithOp::absdiff) == PX_ARITH_ABSDIFF && int(ArithOp::mul) == PX_ARITH_MUL,
              "rules/pointwise.h numbers the arith ops as ArithOp does");
static_assert(int(ThresholdType::binary) == PX_THRESH_BINARY &&
                  int(ThresholdType::binary_inv) == PX_THRESH_BINARY_INV &&
                  int(ThresholdType::trunc) == PX_THRESH_TRUNC &&
                  int(ThresholdType::tozero) == PX_THRESH_TOZERO &&
                  int(ThresholdType::tozero_inv) == PX_THRESH_TOZERO_INV,
              "rules/pointwise.h numbers the threshold types as ThresholdType does");

/// a (op) b: float arithmetic for f32; exact in 64 bits then saturated for integers.
template <class T>
PIXFLOW_HD T arith_apply(T a, T b, ArithOp op) {
  const int o = static_cast<int>(op);
  if constexpr (std::is_same_v<T, float>)
    return px_arith_f32(a, b, o);
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return px_arith_u8(a, b, o);
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return px_arith_u16(a, b, o);
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return px_arith_s16(a, b, o);
  else
    return px_arith_s32(a, b, o);
}

/// a (op) v computed in double, rounded half to even and saturated (f32: rounded to float).
template <class T>
PIXFLOW_HD T arith_apply_scalar(T a, double v, ArithOp op) {
  return saturate_cast<T>(px_arith_f64(static_cast<double>(a), v, static_cast<int>(op)));
}

/// saturate(round_half_even(abs?(x * scale + offset))) in double.
template <class S, class D>
PIXFLOW_HD D convert_apply(S s, double scale, double offset, bool abs) {
  return saturate_cast<D>(px_convert_value(static_cast<double>(s), scale, offset, abs ? 1 : 0));
}

/// The cv::threshold choice once "above" (x > t) is known.
template <class T>
PIXFLOW_HD T threshold_pick(ThresholdType type, bool above, T x, T t, T maxval) {
  const int k = static_cast<int>(type), u = above ? 1 : 0;
  if constexpr (std::is_same_v<T, float>)
    return px_threshold_pick_f32(k, u, x, t, maxval);
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return px_threshold_pick_u8(k, u, x, t, maxval);
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return px_threshold_pick_u16(k, u, x, t, maxval);
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return px_threshold_pick_s16(k, u, x, t, maxval);
  else
    return px_threshold_pick_s32(k, u, x, t, maxval);
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
