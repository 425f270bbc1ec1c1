// The f32 bilateral's colour weight, float(exp(x)) for the reference's x = delta^2 * coeff
// (src/ref/bilateral.cpp: exp in double, then rounded to float), with a cheap exact path for
// small |x|. Host + device code: tests/bilateral_packed_test.cpp runs it on the CPU against
// float(std::exp(x)).
//
// Why: exp() in double costs ~18 double-precision instructions per tap (range reduction, a
// degree-11 polynomial, scaling, range checks), which bounds the f32 kernel (~4 ms at
// 8192^2, d = 9). For |x| < 2^-10 (colour distances small against sigma_color, e.g. images
// in [0, 1] with sigma_color >= ~0.05 on most taps) a degree-5 Taylor polynomial in double
// (5 DFMA) is within 1 ulp (double) of exp(x): truncation x^6/720 < 2^-69, each Horner step's
// rounding scaled by |x| <= 2^-10 except the last (0.5 ulp). The float rounding of that value
// is the float rounding of exp(x) unless the value lies within a few double ulps of a
// rounding midpoint between two floats: the 29 mantissa bits a double-to-float conversion
// drops are then near 2^28. Those (about 2^-25 of the values) and every larger |x| take
// exp() as before. An accepted value's float is therefore that of the exact exp(x), and so
// that of the reference's std::exp(x) (whose error, ~0.5 ulp, is far inside the margin).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::bilateral_f32 {

// |x| below this takes the polynomial.
constexpr double kSmallX = 0x1p-10;
// Distance, in double ulps, from a float rounding midpoint under which the polynomial's value
// is not trusted (its error is below 1.01 ulp).
constexpr std::uint32_t kMarginUlps = 8;

PIXFLOW_HD double dfma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// The low 32 bits of a double's representation.
PIXFLOW_HD std::uint32_t low_word(double v) {
#if defined(__CUDA_ARCH__)
  return std::uint32_t(__double2loint(v));
#else
  std::uint64_t u;
  std::memcpy(&u, &v, 8);
  return std::uint32_t(u);
#endif
}

/// The polynomial's value of exp(x) when it decides float(exp(x)), with `ok` true; else `ok`
/// false (|x| >= kSmallX, NaN, or too near a float rounding midpoint).
PIXFLOW_HD double small_exp(double x, bool& ok) {
  // Evaluated for every x (no branch: the one branch is the fallback's, taken rarely); for
  // |x| >= kSmallX the value is unused.
  double p = 1.0 / 120;
  p = dfma(p, x, 1.0 / 24);
  p = dfma(p, x, 1.0 / 6);
  p = dfma(p, x, 0.5);
  p = dfma(p, x, 1.0);
  p = dfma(p, x, 1.0);
  // p in (0.999, 1.001): a normal double and a normal float; the conversion drops the low 29
  // mantissa bits, and rounds half-way at 2^28.
  const std::uint32_t dropped = low_word(p) & 0x1fffffffu;
  ok = (x > -kSmallX && x < kSmallX) & (dropped - (0x10000000u - kMarginUlps) > 2 * kMarginUlps);
  return p;
}

/// float(exp(x)), as the reference computes it (std::exp on the host, exp on the device:
/// the fallback is the kernel's previous, unconditional expression).
PIXFLOW_HD float colour_weight(double x) {
  bool ok;
  const double p = small_exp(x, ok);
  if (ok) return float(p);
  return float(exp(x));
}

}  // namespace pixflow::cuda::bilateral_f32
