// Packed min/max on two 16-bit lanes of a 32-bit word (and the byte permute and byte dot
// product the packed kernels share), for code that runs both in CUDA
// kernels and on the host (the median's packed networks, median_networks.hpp, are tested on
// the CPU in CI, where no GPU exists). On the device each call is one Hopper instruction
// (VIMNMX.U16x2, VIMNMX3.U16x2, PRMT); on the host a plain per-lane emulation with the same
// results.
#pragma once

#include <cstdint>

#include "src/base/qualifiers.hpp"

// PIXFLOW_UNROLL (qualifiers.hpp) fully unrolls the constant loops in device code: their
// arrays must live in registers.

namespace pixflow::cuda::px {

using u32 = std::uint32_t;

#if !defined(__CUDA_ARCH__)
namespace host {
inline u32 lane_min(u32 a, u32 b) {
  return a < b ? a : b;
}
inline u32 lane_max(u32 a, u32 b) {
  return a < b ? b : a;
}
inline u32 join(u32 lo, u32 hi) {
  return lo | (hi << 16);
}
}  // namespace host
#endif

PIXFLOW_HD u32 vmin(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __vminu2(a, b);
#else
  return host::join(host::lane_min(a & 0xffffu, b & 0xffffu), host::lane_min(a >> 16, b >> 16));
#endif
}

PIXFLOW_HD u32 vmax(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __vmaxu2(a, b);
#else
  return host::join(host::lane_max(a & 0xffffu, b & 0xffffu), host::lane_max(a >> 16, b >> 16));
#endif
}

PIXFLOW_HD u32 vmin3(u32 a, u32 b, u32 c) {
#if defined(__CUDA_ARCH__)
  return __vimin3_u16x2(a, b, c);
#else
  return vmin(vmin(a, b), c);
#endif
}

PIXFLOW_HD u32 vmax3(u32 a, u32 b, u32 c) {
#if defined(__CUDA_ARCH__)
  return __vimax3_u16x2(a, b, c);
#else
  return vmax(vmax(a, b), c);
#endif
}

/// __byte_perm: byte i of the result is byte (s >> 4i) & 7 of the 8 bytes (y:x).
PIXFLOW_HD u32 byte_perm(u32 x, u32 y, u32 s) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(x, y, s);
#else
  const std::uint64_t v = (std::uint64_t(y) << 32) | x;
  u32 r = 0;
  for (int i = 0; i < 4; ++i) r |= u32((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
#endif
}

/// __dp4a: the sum of the four unsigned byte products of a and b, plus c (IDP.4A).
PIXFLOW_HD u32 dp4a(u32 a, u32 b, u32 c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(a, b, c);
#else
  for (int i = 0; i < 32; i += 8) c += ((a >> i) & 0xffu) * ((b >> i) & 0xffu);
  return c;
#endif
}

}  // namespace pixflow::cuda::px
