// The arithmetic of the CUDA filter2d tile kernel (filter2d.cu), as __host__ __device__ code so
// that tests/filter2d_test.cpp runs the same schedule on the CPU against the plain rule.
//
// A thread owns C consecutive output samples of a row (channels interleaved: a horizontal
// neighbour is CN samples away) and walks down a strip of n output rows. Each input row is
// read and converted to float once per thread (W = C + (KW-1)*CN samples) and feeds the KH
// output rows whose window holds it: output row o takes input rows o .. o + KH - 1, which
// arrive in that order, so each output's float sum still runs over the kernel rows in order,
// and within a row over the columns in order — the reference's row-major order — with one
// rounding per multiply and per add. KH accumulator rows rotate; the rotation is unrolled
// KH times so every register index is a compile-time constant.
#pragma once

#include <cstdint>
#include <cstring>

#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/qualifiers.hpp"

#if defined(__CUDA_ARCH__)
#define PIXFLOW_F2D_NO_UNROLL _Pragma("unroll 1")
#else
#define PIXFLOW_F2D_NO_UNROLL
#endif

namespace pixflow::cuda::f2d {

/// Byte `i` (0..3) of `word` as a float, exactly: the float with bits 0x4B0000bb is 2^23 + b,
/// so subtracting 2^23 leaves b (a PRMT and an FADD on the GPU).
PIXFLOW_HD float byte_to_float(std::uint32_t word, int i) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(__byte_perm(word, 0x4B000000u, 0x7650u | unsigned(i))) - 8388608.0f;
#else
  const std::uint32_t bits = 0x4B000000u | ((word >> (8 * i)) & 0xFFu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 8388608.0f;
#endif
}

/// Input rows base .. base + KH - 1 (base a multiple of KH, so the accumulator row of output
/// o is o % KH, a constant per unrolled (u, r)). kGuard: check that row i exists and that
/// output o = i - r lies in the strip; groups away from the strip's ends skip the checks
/// (their branches cost ~3 instructions an output at C = 8).
template <int KW, int KH, int CN, int C, bool kZeroStart, bool kGuard, class Taps, class LoadRow,
          class StoreRow>
PIXFLOW_HD void strip_group(float (&acc)[KH][C], const Taps& k, int base, int n, LoadRow& load_row,
                            StoreRow& store_row) {
  constexpr int W = C + (KW - 1) * CN;
  float win[W] =
      {};  // filled by load_row; zeroed for gcc's -Wmaybe-uninitialized (host test build)
  PIXFLOW_UNROLL
  for (int u = 0; u < KH; ++u) {
    const int i = base + u;
    if (kGuard && i >= n + KH - 1) break;
    load_row(i, win);
    PIXFLOW_UNROLL
    for (int r = 0; r < KH; ++r) {
      const int o = i - r;  // the output row that takes kernel row r from this input row
      if (kGuard && (o < 0 || o >= n)) continue;
      float* a = acc[(u - r + KH) % KH];
      PIXFLOW_UNROLL
      for (int q = 0; q < KW; ++q) {
        const float kq = k[r * KW + q];
        PIXFLOW_UNROLL
        for (int c = 0; c < C; ++c) {
          const float p = mul_rn(kq, win[c + q * CN]);
          if (r == 0 && q == 0)
            a[c] = kZeroStart ? add_rn(0.0f, p) : p;
          else
            a[c] = add_rn(a[c], p);
        }
      }
      if (r == KH - 1) store_row(o, a);
    }
  }
}

/// One strip: n output rows of C samples. `k` holds the KW*KH taps row-major (k[j]: any
/// indexable). `load_row(i, win)` fills win[0 .. W) with input row i of the strip as floats
/// (output row o reads input rows o .. o + KH - 1; sample c + q*CN of a row is tap column q
/// of output sample c); `store_row(o, sums)` receives the C finished sums of output row o
/// (delta not yet added). kZeroStart: start each sum as 0 + k*v (the reference's first add,
/// which turns a -0 product into +0: needed for f32 output); u8 output starts from the
/// product itself, since the sign of a zero sum cannot change a rounded byte.
template <int KW, int KH, int CN, int C, bool kZeroStart, class Taps, class LoadRow, class StoreRow>
PIXFLOW_HD void strip(const Taps& k, int n, LoadRow&& load_row, StoreRow&& store_row) {
  if (n <= 0) return;
  float acc[KH][C];
  const int rows = n + KH - 1;
  PIXFLOW_F2D_NO_UNROLL
  for (int base = 0; base < rows; base += KH) {
    // Every (u, r) of the group valid: base - (KH - 1) >= 0 and base + KH - 1 <= n - 1.
    if (base >= KH - 1 && base + KH <= n)
      strip_group<KW, KH, CN, C, kZeroStart, false>(acc, k, base, n, load_row, store_row);
    else
      strip_group<KW, KH, CN, C, kZeroStart, true>(acc, k, base, n, load_row, store_row);
  }
}

}  // namespace pixflow::cuda::f2d
