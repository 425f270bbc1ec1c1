// Numeric rules shared by every backend: rounding, saturation, border indexing.
// Compiled by the host compiler and by nvcc (PIXFLOW_HD, src/base/qualifiers.hpp), so that
// the reference, the CPU backend and the CUDA kernels use one definition of each rule.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pixflow/border.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::detail {

/// Round half to even (the IEEE default rounding mode), as cvRound does.
PIXFLOW_HD double round_half_even(double v) {
  return rint(v);
}
PIXFLOW_HD float round_half_even(float v) {
  return rintf(v);
}

/// num / den rounded half to even; den > 0.
PIXFLOW_HD std::int64_t div_round_half_even(std::int64_t num, std::int64_t den) {
  std::int64_t q = num / den, r = num % den;
  if (r < 0) {  // floor division
    q -= 1;
    r += den;
  }
  if (2 * r > den || (2 * r == den && (q & 1))) q += 1;
  return q;
}

template <class T>
struct Limits;
template <>
struct Limits<std::uint8_t> {
  static constexpr double lo = 0, hi = 255;
};
template <>
struct Limits<std::uint16_t> {
  static constexpr double lo = 0, hi = 65535;
};
template <>
struct Limits<std::int16_t> {
  static constexpr double lo = -32768, hi = 32767;
};
template <>
struct Limits<std::int32_t> {
  static constexpr double lo = -2147483648.0, hi = 2147483647.0;
};

/// Converts with the library's rule: integers round half to even and saturate (NaN -> 0);
/// float keeps the value (rounded to float).
template <class T>
PIXFLOW_HD T saturate_cast(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    if (!(v == v)) return T(0);
    double r = rint(v);
    if (r < Limits<T>::lo) return static_cast<T>(Limits<T>::lo);
    if (r > Limits<T>::hi) return static_cast<T>(Limits<T>::hi);
    return static_cast<T>(r);
  }
}
template <class T>
PIXFLOW_HD T saturate_cast(std::int64_t v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    if (v < std::int64_t(Limits<T>::lo)) return static_cast<T>(Limits<T>::lo);
    if (v > std::int64_t(Limits<T>::hi)) return static_cast<T>(Limits<T>::hi);
    return static_cast<T>(v);
  }
}

/// The order of the ordering ops (median, dilate, erode) on f32: IEEE 754 totalOrder,
/// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, as signed 32-bit keys. Keys are equal only
/// for identical bits, so the extreme or median of a window is the same bits whatever order
/// its samples are visited in (a plain `<` makes NaN and the sign of zero depend on it). The
/// map is its own inverse on the bits.
PIXFLOW_HD std::int32_t order_key(float v) {
#if defined(__CUDA_ARCH__)
  const std::int32_t i = __float_as_int(v);
#else
  std::int32_t i;
  std::memcpy(&i, &v, sizeof i);
#endif
  return i ^ ((i >> 31) & 0x7fffffff);
}
PIXFLOW_HD float from_order_key(std::int32_t k) {
  const std::int32_t i = k ^ ((k >> 31) & 0x7fffffff);
#if defined(__CUDA_ARCH__)
  return __int_as_float(i);
#else
  float v;
  std::memcpy(&v, &i, sizeof v);
  return v;
#endif
}
/// a before b in the ordering ops' order: `<` for integers, totalOrder for f32.
template <class T>
PIXFLOW_HD bool order_less(T a, T b) {
  if constexpr (std::is_same_v<T, float>)
    return order_key(a) < order_key(b);
  else
    return a < b;
}

/// Maps a coordinate outside [0, len) into it by the border rule, for any distance (the
/// rule repeats, as OpenCV's borderInterpolate). Returns -1 for `constant` outside.
/// len >= 1.
PIXFLOW_HD std::int64_t border_index(std::int64_t p, std::int64_t len, BorderType t) {
  if (p >= 0 && p < len) return p;
  switch (t) {
    case BorderType::replicate:
      return p < 0 ? 0 : len - 1;
    case BorderType::reflect: {
      const std::int64_t period = 2 * len;
      std::int64_t q = p % period;
      if (q < 0) q += period;
      return q < len ? q : period - 1 - q;
    }
    case BorderType::reflect101: {
      if (len == 1) return 0;
      const std::int64_t period = 2 * len - 2;
      std::int64_t q = p % period;
      if (q < 0) q += period;
      return q < len ? q : period - q;
    }
    case BorderType::wrap: {
      std::int64_t q = p % len;
      return q < 0 ? q + len : q;
    }
    case BorderType::constant:
      return -1;
  }
  return -1;
}

}  // namespace pixflow::detail
