// Numeric rules shared by every backend: rounding, saturation, border indexing.
// Compiled by the host compiler and by nvcc (PIXFLOW_HD, src/base/qualifiers.hpp), so that
// the reference, the CPU backend and the CUDA kernels use one definition of each rule. The
// per-sample rules are the C subset of src/base/rules (border.h, saturate.h), which the OpenCL
// kernels include too; the templates here are thin wrappers over those functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pixflow/border.hpp"
#include "src/base/qualifiers.hpp"
#include "src/base/rules/border.h"
#include "src/base/rules/saturate.h"

namespace pixflow::detail {

/// Round half to even (the IEEE default rounding mode), as cvRound does.
PIXFLOW_HD double round_half_even(double v) {
  return rint(v);
}
PIXFLOW_HD float round_half_even(float v) {
  return rintf(v);
}

/// num / den rounded half to even; den > 0 (rules/saturate.h).
PIXFLOW_HD std::int64_t div_round_half_even(std::int64_t num, std::int64_t den) {
  return px_div_round_half_even(num, den);
}

/// round-half-even(s / n) for s < 2^32 and 1 <= n < 2^32 without a division: `Recip{n}` is
/// made once per call, `r(s)` per sample (what div_round_half_even(s, n) gives; CUDA kernels
/// use it where a 64-bit division costs ~100 instructions). With m = floor(2^32 / n),
/// s/n - 1 < s/n - s/2^32 <= s*m/2^32 <= s/n, so q0 = floor(s*m / 2^32) is floor(s/n) or one
/// less and r = s - q0*n lies in [0, 2n): one correction step gives floor and remainder, then
/// the tie rule. n = 1 (m would be 2^32) is s itself.
struct RecipU32 {
  std::uint32_t n, m;
  PIXFLOW_HD explicit RecipU32(std::uint32_t den)
      : n(den), m(den > 1 ? std::uint32_t((std::uint64_t(1) << 32) / den) : 0u) {}
  PIXFLOW_HD std::uint32_t operator()(std::uint32_t s) const {
    if (n == 1) return s;
    std::uint32_t q = std::uint32_t((std::uint64_t(s) * m) >> 32);
    std::uint32_t r = s - q * n;
    if (r >= n) {
      q += 1;
      r -= n;
    }
    const std::uint64_t r2 = 2 * std::uint64_t(r);
    return q + ((r2 > n || (r2 == n && (q & 1u))) ? 1u : 0u);
  }
};

/// round-half-even(s / n) for a window sum of u8 samples (s <= 255 n) with n odd and
/// n < 32768, in three float operations: float(s) from its bits (s < 2^23), then one fused
/// multiply-add s * rcp + 2^23 whose single rounding to the integer grid of [2^23, 2^24)
/// rounds s * rcp to the nearest integer. rcp = float(1/n) is within 2^-24 relative of 1/n,
/// so |s * rcp - s/n| <= 255 * 2^-24 < 1/(2n) (n < 32896), while s/n lies at least 1/(2n)
/// from every half-integer (2s is even, (2k + 1) n is odd): s * rcp rounds to the integer
/// nearest s/n, which is div_round_half_even(s, n) (no ties with n odd).
struct RecipOddU8 {
  float rcp;
  PIXFLOW_HD explicit RecipOddU8(std::uint32_t n) : rcp(1.0f / float(n)) {}
  PIXFLOW_HD static bool applies(std::uint32_t n) { return (n & 1u) && n < 32768u; }
  PIXFLOW_HD std::uint32_t operator()(std::uint32_t s) const {
#if defined(__CUDA_ARCH__)
    const float f = __int_as_float(int(0x4B000000u | s)) - 8388608.0f;
    return std::uint32_t(__float_as_int(__fmaf_rn(f, rcp, 8388608.0f))) - 0x4B000000u;
#else
    const std::uint32_t bits = 0x4B000000u | s;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    f -= 8388608.0f;
    const float y = std::fma(f, rcp, 8388608.0f);
    std::uint32_t out;
    std::memcpy(&out, &y, sizeof out);
    return out - 0x4B000000u;
#endif
  }
};

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
/// float keeps the value (rounded to float). The integer rules are rules/saturate.h's.
template <class T>
PIXFLOW_HD T saturate_cast(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return px_sat_u8_f64(v);
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return px_sat_u16_f64(v);
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return px_sat_s16_f64(v);
  } else {
    static_assert(std::is_same_v<T, std::int32_t>, "saturate_cast: a depth's sample type");
    return px_sat_s32_f64(v);
  }
}
template <class T>
PIXFLOW_HD T saturate_cast(std::int64_t v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return px_sat_u8_s64(v);
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return px_sat_u16_s64(v);
  } else if constexpr (std::is_same_v<T, std::int16_t>) {
    return px_sat_s16_s64(v);
  } else {
    static_assert(std::is_same_v<T, std::int32_t>, "saturate_cast: a depth's sample type");
    return px_sat_s32_s64(v);
  }
}

/// The order of the ordering ops (median, dilate, erode) on f32: IEEE 754 totalOrder,
/// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, as signed 32-bit keys. Keys are equal only
/// for identical bits, so the extreme or median of a window is the same bits whatever order
/// its samples are visited in (a plain `<` makes NaN and the sign of zero depend on it). The
/// map is its own inverse on the bits.
PIXFLOW_HD std::int32_t order_key(float v) {
  return px_order_key(v);
}
PIXFLOW_HD float from_order_key(std::int32_t k) {
  return px_from_order_key(k);
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
/// len >= 1. The rule is rules/border.h's (px_border_index_i64).
PIXFLOW_HD std::int64_t border_index(std::int64_t p, std::int64_t len, BorderType t) {
  return px_border_index_i64(p, len, static_cast<int>(t));
}
static_assert(int(BorderType::replicate) == PX_BORDER_REPLICATE &&
                  int(BorderType::reflect) == PX_BORDER_REFLECT &&
                  int(BorderType::reflect101) == PX_BORDER_REFLECT101 &&
                  int(BorderType::wrap) == PX_BORDER_WRAP &&
                  int(BorderType::constant) == PX_BORDER_CONSTANT,
              "rules/border.h numbers the border modes as BorderType does");

}  // namespace pixflow::detail
