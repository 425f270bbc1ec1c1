// Packed arithmetic of the CUDA 3x3 u8 -> s16 derivative kernel (u8_3x3.cuh,
// deriv3_u8_kernel: sobel k = 3 and k = 1 with 3x3 taps, scharr; scale 1, delta 0), written
// for host and device so that tests/deriv3_packed_test.cpp runs the same code on the CPU.
//
// Two adjacent output samples share a 32-bit word, one 16-bit lane each. The taps are compile
// time constants, so a row sum is one or two integer instructions on the packed words and the
// column sum two or three, plus the PRMTs that spread the tile bytes into lanes.
//
// Why no lane bias is needed in between: the whole 3x3 sum is a linear form with integer
// coefficients in the packed words, and 32-bit arithmetic is exact modulo 2^32, so the final
// word equals v_hi * 2^16 + v_lo modulo 2^32 whatever the intermediate lanes did (negative
// lanes, borrows across lanes). Only the end is careful: adding 0x8000 makes the low lane
// v_lo + 0x8000, in [0, 65535] because |v| <= 255 * sum|tx| * sum|ty| <= 8160, so nothing
// carries into the high lane, which is then v_hi mod 2^16 (its two's complement s16); XOR
// 0x8000 turns the low lane back into v_lo mod 2^16. The reference saturates to s16, which
// for |v| <= 32767 is the identity (static_assert below), so the result is bit-identical.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"

namespace pixflow::cuda::deriv3_u8 {

using u32 = std::uint32_t;

/// One axis' three taps as a type (the kernels are templates on them).
template <int T0, int T1, int T2>
struct Taps {
  static constexpr int t0 = T0, t1 = T1, t2 = T2;
  static constexpr int abs_sum = (T0 < 0 ? -T0 : T0) + (T1 < 0 ? -T1 : T1) + (T2 < 0 ? -T2 : T2);
};
using Smooth121 = Taps<1, 2, 1>;    // sobel order 0
using Diff101 = Taps<-1, 0, 1>;     // sobel / scharr order 1
using Diff121 = Taps<1, -2, 1>;     // sobel order 2
using Smooth3103 = Taps<3, 10, 3>;  // scharr order 0

/// Bytes I and I + 1 of the 12 bytes (c:b:a) (a's byte 0 first) as the low and high 16-bit
/// lanes of a word: one PRMT inside a word, two across words.
template <int I>
PIXFLOW_HD u32 pair(u32 a, u32 b, u32 c) {
  static_assert(I >= 0 && I <= 10, "a pair inside the 12 bytes");
  constexpr int w = I / 4, j = I % 4;
  const u32 lo = w == 0 ? a : w == 1 ? b : c;
  if constexpr (j < 3) {
    return px::byte_perm(lo, 0, 0x4040u | u32(j) | u32(j + 1) << 8);
  } else {
    const u32 hi = w == 0 ? b : c;
    return px::byte_perm(px::byte_perm(lo, hi, 0x0043u), 0, 0x4140u);
  }
}

/// T::t0 * l + T::t1 * m + T::t2 * r + bias on packed words, modulo 2^32 (see the top
/// comment). Symmetric and antisymmetric taps factor: (1,2,1) is an add and a shifted add,
/// (-1,0,1) one subtraction; the bias rides in a three-input IADD3.
template <class T>
PIXFLOW_HD u32 dot3(u32 l, u32 m, u32 r, u32 bias = 0) {
  if constexpr (T::t0 == T::t2) {
    return u32(T::t0) * (l + r) + u32(T::t1) * m + bias;
  } else if constexpr (T::t0 == -T::t2) {
    return u32(T::t2) * (r - l) + u32(T::t1) * m + bias;
  } else {
    return u32(T::t0) * l + u32(T::t1) * m + u32(T::t2) * r + bias;
  }
}

/// column_out's 0x8000, moved into the row sums where Y's taps sum to s != 0 (smoothing:
/// 4 for (1,2,1), 16 for (3,10,3)): each row sum carries 0x8000 / s, so the column sum
/// carries s * 0x8000 / s = 0x8000 (the linearity of the top comment, modulo 2^32), and the
/// add costs nothing there (the row sums' IADD3 has a free input; ptxas spent a VIADD a word
/// on it in the column sum: 16 of ~330 instructions a thread's 32 outputs). 0 where s = 0.
template <class Y>
inline constexpr u32 kRowBias = Y::t0 + Y::t1 + Y::t2 != 0 && 0x8000 % (Y::t0 + Y::t1 + Y::t2) == 0
                                    ? u32(0x8000 / (Y::t0 + Y::t1 + Y::t2))
                                    : 0u;
/// What column_out adds itself: 0x8000 less what the row sums brought.
template <class Y>
inline constexpr u32 kColumnBias = 0x8000u - u32(Y::t0 + Y::t1 + Y::t2) * kRowBias<Y>;

/// The packed row sums of one tile row for a thread's four output samples e0 .. e0 + 3 of
/// CN interleaved channels (a horizontal neighbour is CN bytes away, CN <= 4): a = tile bytes
/// e0 - 4 .. e0 - 1, b = e0 .. e0 + 3, c = e0 + 4 .. e0 + 7. h0: samples (e0, e0 + 1), h1:
/// (e0 + 2, e0 + 3); each with kRowBias<Y> added, for column_out<X, Y>.
template <int CN, class X, class Y>
PIXFLOW_HD void row_sums(u32 a, u32 b, u32 c, u32& h0, u32& h1) {
  static_assert(CN >= 1 && CN <= 4, "the tile's 4-byte margins reach 4 bytes");
  h0 = dot3<X>(pair<4 - CN>(a, b, c), pair<4>(a, b, c), pair<4 + CN>(a, b, c), kRowBias<Y>);
  h1 = dot3<X>(pair<6 - CN>(a, b, c), pair<6>(a, b, c), pair<6 + CN>(a, b, c), kRowBias<Y>);
}

/// Two adjacent outputs (lanes of the s16 results, low lane first) from the packed row sums
/// (row_sums<CN, X, Y>) of the window's rows above, at and below them.
template <class X, class Y>
PIXFLOW_HD u32 column_out(u32 h0, u32 h1, u32 h2) {
  static_assert(255 * X::abs_sum * Y::abs_sum <= 32767, "results fit s16: no saturation");
  return dot3<Y>(h0, h1, h2, kColumnBias<Y>) ^ 0x8000u;
}

}  // namespace pixflow::cuda::deriv3_u8
