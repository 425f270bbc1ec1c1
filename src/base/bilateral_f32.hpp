// The f32 bilateral's colour weight (docs/ops/bilateral.md, "f32 colour weight"): OpenCV's
// bilateralFilter_32f scheme — a float table of exp over the colour distance, linearly
// interpolated — with the table's span fixed by sigma_color and the channel count instead of
// the image's min/max (OpenCV's minMaxLoc), so that an output depends on its window only and
// a tile of an image filters bit for bit as the whole image does. One definition for the
// reference, the CPU SIMD backend and CUDA: the table is built by exp_nonpositive below, whose
// double operations are each rounded once on every compiler (host: -ffp-contract=off; device:
// explicit __dmul_rn / __dadd_rn), so the device builds the same floats as the host.
//
// Why a table: the previous rule, float(exp(double(delta)^2 * coeff)) per tap, costs ~30
// double-precision instructions a tap, and the FP64 pipe bounded the CUDA kernel (8192^2
// f32x1 d=9: 11.2 ms against CV-CUDA's 3.1).
//
// The rule. N = kBinsPerChannel * cn bins (OpenCV's kExpNumBinsPerChannel); the span is
// delta_max = sigma_color * sqrt(208), where exp(-delta^2 / (2 sigma_color^2)) = exp(-104) =
// 0.97 * 2^-150: the float of the weight is +0 from there on (half the least denormal, 2^-150,
// rounds to even, 0), so the table reaches exactly as far as the weight is non-zero in float.
//   scale  = float(N / (sigma_color * sqrt(208)))   (double, rounded once; at most FLT_MAX,
//            so that the centre tap's alpha = 0 * scale is 0, never 0 * inf = NaN)
//   T[i]   = float(E(i^2 * (-104 / N^2)))  for i = 0..N   (E = exp_nonpositive; double)
//   D[i]   = T[i + 1] - T[i] (float), with T[N + 1] = 0: D[N] = -T[N] = 0
// T[i] is the weight at delta = i / scale_exact, scale_exact = N / delta_max in real numbers:
// (i / scale_exact)^2 * (-0.5 / sigma^2) = -104 i^2 / N^2. Written this way the table depends
// on cn only (built once per process on the host, per block on the device) and has no 0 * inf
// for extreme sigmas. T[0] = 1, T[N] = 0 (tests/bilateral_test.cpp checks both for cn = 1..4).
// Per tap (weight() below): alpha = delta * scale (float); !(alpha < N) (also NaN) -> 0; else
// i = int(alpha) (alpha >= 0: truncation = floor), f = alpha - float(i) (exact), weight =
// T[i] + f * D[i], each operation rounded once. |weight - exp(-delta^2 / (2 sigma^2))| <=
// 2e-6 for every delta (cn = 1; interpolation error h^2/8 * max|w''| = 208 / 8 / 4096^2 =
// 1.55e-6, plus the roundings of scale, alpha and T; tests/bilateral_test.cpp measures it).
#pragma once

#include <cstdint>
#include <cstring>

#include "src/base/qualifiers.hpp"
#include "src/base/rounded.hpp"
#include "src/base/rules/bilateral.h"

#if !PIXFLOW_OPENCL
#include <cfloat>
#include <vector>
#endif

namespace pixflow::detail::bilateral_f32 {

using rounded::dadd_rn;
using rounded::dmul_rn;

/// Bins per channel: OpenCV's kExpNumBinsPerChannel (1 << 12).
constexpr int kBinsPerChannel = 1 << 12;
/// The exponent at the table's end: x = -104, exp(x) < 2^-150 (see the file comment).
constexpr double kEndX = -104.0;
/// sqrt(-2 * kEndX) = sqrt(208), correctly rounded (Python: float.hex(math.sqrt(208))).
constexpr double kSqrt208 = 0x1.cd82b446159f3p+3;

/// N: the table's bins for cn channels (its entries are T[0..N]).
PIXFLOW_HD int bins(int cn) {
  return kBinsPerChannel * cn;
}

/// exp(x) for x in [-110, 0], in double: x = k ln2 + r with k = nearest(x / ln2) (by the
/// 1.5 * 2^52 rounding constant: exact round-half-even for |x / ln2| < 2^51), r = (x - k
/// ln2_hi) - k ln2_lo (ln2_hi has 33 significant bits: k ln2_hi and x - k ln2_hi are exact
/// for |k| <= 2^8), exp(r) by its Taylor polynomial of degree 13 (|r| <= 0.347: truncation
/// < 2^-57 relative; Horner, a multiply and an add a step), times 2^k (a normal double: k >=
/// -159) built in the exponent bits. Relative error well under 2^-48: its float is the float
/// of exp(x) but within 2^-48 of a float rounding midpoint (about 2^-24 of the entries; the
/// rule is this function, not std::exp). The coefficients are 1/n! rounded once (hex
/// literals: no compiler evaluates a division here).
PIXFLOW_HD double exp_nonpositive(double x) {
  constexpr double kInvLn2 = 0x1.71547652b82fep+0;
  constexpr double kLn2Hi = 0x1.62e42fefp-1;
  constexpr double kLn2Lo = 0x1.473de6af278edp-34;
  constexpr double kRound = 0x1.8p+52;
  constexpr double kInvFact[14] = {
      0x1.0000000000000p+0,  0x1.0000000000000p+0,  0x1.0000000000000p-1,  0x1.5555555555555p-3,
      0x1.5555555555555p-5,  0x1.1111111111111p-7,  0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
      0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
      0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33};
  const double kd = dadd_rn(dadd_rn(dmul_rn(x, kInvLn2), kRound), -kRound);
  const double r = dadd_rn(dadd_rn(x, -dmul_rn(kd, kLn2Hi)), -dmul_rn(kd, kLn2Lo));
  double p = kInvFact[13];
  PIXFLOW_UNROLL
  for (int n = 12; n >= 0; --n) p = dadd_rn(dmul_rn(p, r), kInvFact[n]);
  const std::uint64_t bits = std::uint64_t(1023 + int(kd)) << 52;
#if defined(__CUDA_ARCH__)
  const double two_k = __longlong_as_double((long long)bits);
#else
  double two_k;
  std::memcpy(&two_k, &bits, sizeof two_k);
#endif
  return dmul_rn(p, two_k);
}

/// -104 / N^2 (double, rounded once): the exponent per squared bin.
PIXFLOW_HD double exponent_per_bin2(int cn) {
  const double n = double(bins(cn));
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(kEndX, dmul_rn(n, n));
#else
  return kEndX / (n * n);
#endif
}

/// T[i] = float(E(i^2 * exponent_per_bin2(cn))), i in [0, N] (i^2 exact in double).
PIXFLOW_HD float table_entry(int i, double per_bin2) {
  return float(exp_nonpositive(dmul_rn(double(std::int64_t(i) * i), per_bin2)));
}

#if !PIXFLOW_OPENCL
/// scale = float(N / (sigma_color * sqrt(208))), at most FLT_MAX (sigma_color below ~1e-36:
/// the bins then resolve delta down to 1 / FLT_MAX only). `sc` is sigma_color after the
/// "<= 0 means 1" rule; NaN stays NaN (every weight 0, every output NaN).
inline float scale(double sc, int cn) {
  const double s = double(bins(cn)) / (sc * kSqrt208);
  return s > double(FLT_MAX) ? FLT_MAX : float(s);
}

/// The weight table of cn channels (1..4) as pairs: T[i] at 2i, D[i] at 2i + 1, i = 0..N
/// (2N + 2 floats; one 8-byte load a tap, the layout of the CUDA kernels' shared table), built
/// once per process.
inline const std::vector<float>& table(int cn) {
  struct Tables {
    std::vector<float> t[4];
    Tables() {
      for (int c = 1; c <= 4; ++c) {
        const int n = bins(c);
        const double per_bin2 = exponent_per_bin2(c);
        std::vector<float>& v = t[c - 1];
        v.resize(std::size_t(2 * n + 2));
        for (int i = 0; i <= n; ++i) v[std::size_t(2 * i)] = table_entry(i, per_bin2);
        for (int i = 0; i <= n; ++i)
          v[std::size_t(2 * i + 1)] =
              (i < n ? v[std::size_t(2 * i + 2)] : 0.0f) - v[std::size_t(2 * i)];
      }
    }
  };
  static const Tables all;
  return all.t[cn - 1];
}

/// The colour weight of one tap (the rule of the file comment): `t` = table(cn).data(), n = N.
/// The per-tap rule is rules/bilateral.h's, which the OpenCL kernel calls too.
inline float weight(const float* t, int n, float scale, float delta) {
  return px_bilateral_f32_weight(t, n, scale, delta);
}
#endif

}  // namespace pixflow::detail::bilateral_f32
