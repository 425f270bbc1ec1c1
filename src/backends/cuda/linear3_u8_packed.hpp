// The output arithmetic of the packed 3x3 box and Gaussian kernel on u8 (u8_3x3.cuh,
// linear3_u8_kernel), as host + device code so that tests/linear3_packed_test.cpp runs it on
// the CPU. The kernel holds its horizontal sums packed two a word (16-bit lanes, zero-extended
// bytes times Q8 taps that sum to 256: every lane <= 255 * 256); these functions turn a row's
// lanes into its 4 output bytes, each result built in byte 2 of a 32-bit value and the four
// gathered by 3 PRMT (bytes2), where lane_out (the rule) took a division, a compare and shifts
// and ORs to assemble. Exactness is argued at each function and checked exhaustively (box
// sums) or over random lanes and every tap pair (Gaussian) by the test.
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::linear3_u8 {

using u32 = std::uint32_t;

/// Bytes 2 of r0 .. r3 as bytes 0 .. 3 of one word.
PIXFLOW_HD u32 bytes2(u32 r0, u32 r1, u32 r2, u32 r3) {
  return px::byte_perm(px::byte_perm(r0, r1, 0x0062), px::byte_perm(r2, r3, 0x0062), 0x5410);
}

/// Multiplier of box_mean_row: ceil(2^16 / 9).
constexpr u32 kDiv9 = 7282;

/// The box mean (box normalize=1, lane_out kind 0) of a row: s0, s1 = the packed 3x3 sums,
/// lanes (x0, x0+1), (x0+2, x0+3), each <= 9 * 255. Per lane s / 9 rounded half to even,
/// which is floor((s + 4) / 9) (9 is odd: no exact halves; q + 1 exactly when the remainder
/// is >= 5). With x = s + 4 <= 2299: x * 7282 / 2^16 = x / 9 + x / (9 * 2^15), whose excess
/// over x / 9 is below 0.008 while x / 9's fraction is at most 8 / 9: the floor is x / 9's. The
/// product is below 2^24, so the quotient is byte 2 and byte 3 is 0.
PIXFLOW_HD u32 box_mean_row(u32 s0, u32 s1) {
  constexpr u32 kAdd = 4 * kDiv9;
  return bytes2((s0 & 0xffffu) * kDiv9 + kAdd, (s0 >> 16) * kDiv9 + kAdd,
                (s1 & 0xffffu) * kDiv9 + kAdd, (s1 >> 16) * kDiv9 + kAdd);
}

/// The box sum saturated to u8 (box normalize=0, kind 1): min(s, 255) per lane (one packed
/// min a word), then the lanes' low bytes.
PIXFLOW_HD u32 box_sum_row(u32 s0, u32 s1) {
  return px::byte_perm(px::vmin(s0, 0x00ff00ffu), px::vmin(s1, 0x00ff00ffu), 0x6420);
}

/// One Gaussian output (kind 2) in byte 2: (vy0 a + vy1 b + vy0 c + 2^15) >> 16 for the
/// vertical Q8 taps vy0, vy1, vy0 (2 vy0 + vy1 = 256) and horizontal sums a, b, c <= 255 * 256:
/// the same integer as vy0 (a + c) + (vy1 b + 2^15), at most 255 * 2^16 + 2^15 < 2^24.
PIXFLOW_HD u32 gauss_lane(u32 a, u32 b, u32 c, u32 vy0, u32 vy1) {
  return (a + c) * vy0 + (b * vy1 + 32768u);
}

/// The Gaussian outputs x0 .. x0+3 of a row from the packed horizontal sums of its three
/// window rows: a0, b0, c0 lanes (x0, x0+1), a1, b1, c1 lanes (x0+2, x0+3).
PIXFLOW_HD u32 gauss_row(u32 a0, u32 b0, u32 c0, u32 a1, u32 b1, u32 c1, u32 vy0, u32 vy1) {
  constexpr u32 m = 0xffffu;
  return bytes2(gauss_lane(a0 & m, b0 & m, c0 & m, vy0, vy1),
                gauss_lane(a0 >> 16, b0 >> 16, c0 >> 16, vy0, vy1),
                gauss_lane(a1 & m, b1 & m, c1 & m, vy0, vy1),
                gauss_lane(a1 >> 16, b1 >> 16, c1 >> 16, vy0, vy1));
}

}  // namespace pixflow::cuda::linear3_u8
