// The channel arithmetic of the packed 3x3 kernels on u8 x 3 (u8_3x3.cuh with CN = 3), as
// host + device code so that tests/u8_3x3_cn_test.cpp runs it on the CPU: which pixel and
// channel a row byte belongs to (the tile loader's edge bytes), and the six packed words a
// thread's four output bytes need (columns3). The kernels treat a u8 x 3 row as bytes: output
// byte e takes bytes e - 3, e, e + 3 of three rows (one channel, three pixels).
#pragma once

#include <cstdint>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::u8_3x3_cn {

using u32 = std::uint32_t;

/// Pixel (floor(e / cn)) and channel of row byte e, e of any sign.
PIXFLOW_HD void pixel_of_byte(long long e, int cn, long long& px, int& ch) {
  const long long in = e < 0 ? -1 - e : e;  // e < 0: mirror onto 0.. so the division floors
  const long long q = in / cn;
  const int r = int(in - q * cn);
  px = e < 0 ? -1 - q : q;
  ch = e < 0 ? cn - 1 - r : r;
}

/// The packed 16-bit-lane words of one tile row for a thread whose first output byte is x0,
/// from the tile words a, b, c = row bytes x0-4 .. x0-1, x0 .. x0+3, x0+4 .. x0+7: output
/// lanes (x0, x0+1) take l0, c0, r0 = lanes (x0-3, x0-2), (x0, x0+1), (x0+3, x0+4); lanes
/// (x0+2, x0+3) take l1, c1, r1 = (x0-1, x0), (x0+2, x0+3), (x0+5, x0+6). 8 PRMT (selector
/// nibble 4 of the zero word gives each lane's zero high byte).
struct Cols3 {
  u32 l0, c0, r0, l1, c1, r1;
};
PIXFLOW_HD Cols3 columns3(u32 a, u32 b, u32 c) {
  Cols3 k;
  k.l0 = px::byte_perm(a, 0, 0x4241);                            // a1, a2
  k.c0 = px::byte_perm(b, 0, 0x4140);                            // b0, b1
  k.r0 = px::byte_perm(px::byte_perm(b, c, 0x0043), 0, 0x5140);  // b3, c0
  k.l1 = px::byte_perm(px::byte_perm(a, b, 0x0043), 0, 0x5140);  // a3, b0
  k.c1 = px::byte_perm(b, 0, 0x4342);                            // b2, b3
  k.r1 = px::byte_perm(c, 0, 0x4241);                            // c1, c2
  return k;
}

}  // namespace pixflow::cuda::u8_3x3_cn
