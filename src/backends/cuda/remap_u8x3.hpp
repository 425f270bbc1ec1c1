// The u8 x 3 bilinear pixel of the CUDA remap's fast kernel (remap.cu) read from aligned
// 32-bit words, written as host + device code so that the CPU test
// (tests/remap_u8x3_test.cpp) runs exactly this code against the reference's expression.
//
// Why words: with one byte load per tap and channel, an interior u8x3 pixel takes 12 loads,
// and each warp-wide byte load touches ~3-4 cache lines (32 threads x 4 pixels x 3 bytes =
// 384 bytes of a source row), so the L1 spends ~1.3 wavefronts a pixel: ~380 us of L1 time
// at 8192^2, above the 313 us DRAM floor (H100 session 11: 627 us). The two taps of one
// source row (x0 and x0 + 1) are the 6 bytes [a, a + 6) with a = y0 * stride + 3 * x0, which
// lie in the three aligned words q, q + 1, q + 2 (q = a / 4, the third one only when
// a % 4 == 3): 3 loads a row (the third predicated), 6 a pixel instead of 12. Two funnel
// shifts put the 6 bytes at the bottom of two words; each sample becomes a float with one
// PRMT (the byte under the exponent of 2^23) and one FADD, as many instructions as the byte
// loads' LOP + FADD.
//
// Bounds: every word loaded holds at least one of the 6 bytes, so it lies inside the row's
// first round_up(3 * w, 4) bytes when the source's start and stride are multiples of 4 (the
// host checks this; otherwise the kernel keeps byte loads): inside the stride, so inside
// any allocation that holds the image (the last row's padding included).
#pragma once

#include <cmath>
#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/remap_pack.hpp"
#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::remap_u8x3 {

using u32 = std::uint32_t;

constexpr float kTwo23 = 8388608.0f;  // 2^23: floats in [2^23, 2^24) are the integers
constexpr u32 kTwo23Bits = 0x4B000000u;

/// __funnelshift_r: the low 32 bits of (hi:lo) >> (sh & 31).
PIXFLOW_HD u32 funnel_r(u32 lo, u32 hi, u32 sh) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo, hi, sh);
#else
  return u32(((std::uint64_t(hi) << 32) | lo) >> (sh & 31u));
#endif
}

/// The 6 bytes of two horizontally adjacent u8x3 taps: bytes 0..3 in lo, 4..5 in hi's low half.
struct Pair {
  u32 lo, hi;
};

/// The bytes [a, a + 6) from the aligned words w0, w1, w2 at bytes 4q, 4q + 4, 4q + 8, where
/// s = a - 4q in [0, 3]. Byte 5 is byte s + 1 of (w2:w1), so w2 matters only when s == 3 (the
/// kernel loads it only then; any value otherwise).
PIXFLOW_HD Pair pair_of_words(u32 w0, u32 w1, u32 w2, u32 s) {
  const u32 sh = 8u * s;
  Pair p;
  p.lo = funnel_r(w0, w1, sh);
  p.hi = funnel_r(w1, w2, sh);
  return p;
}

/// Byte k (a constant 0..3) of w as a float, exactly and without a conversion instruction:
/// the word 0x4B0000bb is 2^23 + b (PRMT builds it), minus 2^23.
template <int K>
PIXFLOW_HD float byte_float(u32 w) {
  return sub_rn(bits_float(px::byte_perm(w, kTwo23Bits, 0x7540u | u32(K))), kTwo23);
}

/// The reference's bilinear expression for one channel, rounded half to even and saturated
/// as saturate_cast<u8>(double(v)), as the bits of a word whose low byte is the result
/// (remap_pack::round_bits: v never rounds past 255, so no clamp; the store packs the low
/// bytes with PRMT).
PIXFLOW_HD u32 lerp_bits(float p00, float p10, float p01, float p11, float ax, float ay, float bx,
                         float by) {
  const float top = add_rn(mul_rn(bx, p00), mul_rn(ax, p10));
  const float bot = add_rn(mul_rn(bx, p01), mul_rn(ax, p11));
  return remap_pack::round_bits(add_rn(mul_rn(by, top), mul_rn(ay, bot)));
}

/// One u8x3 output pixel from the pairs of its two source rows (t: row y0, b: row y0 + 1) and
/// its fractions: channel c in the low byte of out[c] (lerp_bits). Tap x0 channel c is byte c
/// of the pair, tap x0 + 1 channel c byte 3 + c.
PIXFLOW_HD void pixel(const Pair& t, const Pair& b, float ax, float ay, u32 out[3]) {
  const float bx = sub_rn(1.0f, ax), by = sub_rn(1.0f, ay);
  out[0] = lerp_bits(byte_float<0>(t.lo), byte_float<3>(t.lo), byte_float<0>(b.lo),
                     byte_float<3>(b.lo), ax, ay, bx, by);
  out[1] = lerp_bits(byte_float<1>(t.lo), byte_float<0>(t.hi), byte_float<1>(b.lo),
                     byte_float<0>(b.hi), ax, ay, bx, by);
  out[2] = lerp_bits(byte_float<2>(t.lo), byte_float<1>(t.hi), byte_float<2>(b.lo),
                     byte_float<1>(b.hi), ax, ay, bx, by);
}

/// floor(m) and m - floor(m) for an interior coordinate m in [0, 2^23). On the device without
/// a conversion instruction: m + 2^23 rounded toward zero is 2^23 + floor(m) (ulp 1 there),
/// and m - floor(m) is exact. (m = -0 gives the fraction -0, which changes no u8 result.)
PIXFLOW_HD void floor_frac(float m, int& i, float& f) {
#if defined(__CUDA_ARCH__)
  const float t = __fadd_rz(m, kTwo23);
  i = __float_as_int(t) - int(kTwo23Bits);
  f = __fsub_rn(m, __fsub_rn(t, kTwo23));
#else
  const float t = std::floor(m);
  i = int(t);
  f = m - t;
#endif
}

/// An interior pixel's source words: words q, q + 1 and (only where s == 3) q + 2 of rows y0
/// and y0 + 1, where 4q + s is the byte offset of (x0, y0) from the source's start.
struct Words {
  u32 w[2][3];
  u32 s;
  float ax, ay;
};

/// The loads of an interior pixel (mx in [0, w - 1), my in [0, h - 1)): `word(q)` reads word
/// q counted from the source's start (a multiple of 4, as is `stride`). The 4 or 6 loads do
/// not depend on each other; the kernel issues those of all its pixels before finishing any.
template <class Word>
PIXFLOW_HD Words load_words(float mx, float my, int stride, const Word& word) {
  Words t;
  int x0, y0;
  floor_frac(mx, x0, t.ax);
  floor_frac(my, y0, t.ay);
  const int o = y0 * stride + x0 * 3;
  const int q0 = o >> 2, q1 = q0 + (stride >> 2);
  t.s = u32(o) & 3u;
  t.w[0][0] = word(q0);
  t.w[0][1] = word(q0 + 1);
  t.w[1][0] = word(q1);
  t.w[1][1] = word(q1 + 1);
  // Predicated loads (no use before the finish): the third word holds a needed byte only here.
  t.w[0][2] = t.w[1][2] = 0u;
  if (t.s == 3u) {
    t.w[0][2] = word(q0 + 2);
    t.w[1][2] = word(q1 + 2);
  }
  return t;
}

/// The output pixel of loaded words: channel c in the low byte of out[c].
PIXFLOW_HD void finish_words(const Words& t, u32 out[3]) {
  pixel(pair_of_words(t.w[0][0], t.w[0][1], t.w[0][2], t.s),
        pair_of_words(t.w[1][0], t.w[1][1], t.w[1][2], t.s), t.ax, t.ay, out);
}

}  // namespace pixflow::cuda::remap_u8x3
