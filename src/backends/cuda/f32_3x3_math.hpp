// The per-thread body of the CUDA f32 x 1 3x3 kernels (f32_3x3.cuh: dilate/erode, median,
// box, Gaussian and sobel/scharr), written as host + device code so that the CPU test
// (tests/f32_3x3_test.cpp) runs exactly this code on tiles it builds itself and compares it
// bit for bit with the reference.
//
// Tile: rows of kTileW 32-bit words; word (r, i) = image sample (bx0 - 4 + i, by0 - 1 + r)
// by the border rule (as float bits, or as detail::order_key for the ops that order), where
// (bx0, by0) is the block's first output. Thread tx computes outputs x0 .. x0 + 3, x0 = bx0 +
// 4 tx, of rows r0 .. r0 + R - 1 (tile rows r0 .. r0 + R + 1): it reads the 6 words 4 tx + 3
// .. 4 tx + 8 of each of its R + 2 tile rows once (the window columns x0 - 1 .. x0 + 4) and
// every row's work is shared by the (up to) three output rows whose windows contain it.
//
// Bit-exactness with src/ref (every f32 rule there, every input incl. NaN, inf, -0):
// - dilate/erode and median work on totalOrder keys (detail::order_key, an int whose order is
//   the reference's order_less), so the result is one input's bits.
// - Gaussian and sobel/scharr: the reference's float operations in its order, each rounded
//   (fadd/fmul: __fadd_rn/__fmul_rn on the device, no FMA). The reference starts every row
//   sum at 0.0f; the row sums here do not, which changes only the sign of a zero row sum,
//   and that sign never reaches the output: the vertical sum starts at +0 (kept here), a
//   running sum started at +0 is never -0 in round-to-nearest (x + -x = +0, float sums do
//   not underflow to 0), and t + (+-0) = t for t != 0.
// - box: the reference's double sums (column sums over the rows in row order, then the
//   columns in column order from 0.0) and float(s / 9.0) or float(s). The column sums skip the
//   0.0 start for the same reason as above (only a zero's sign changes, and the row sum from
//   +0 absorbs it).
#pragma once

#include <cstdint>

#include "src/backends/cuda/rounded_f32.hpp"
#include "src/base/numeric.hpp"
#include "src/base/qualifiers.hpp"

// Every loop of the bodies is unrolled on the device (PIXFLOW_UNROLL): the arrays live in
// registers.

namespace pixflow::cuda::f32_3x3 {

using u32 = std::uint32_t;

// Tile words per row: 4 left of the block's first output (1 used), 128 outputs, 4 right (1
// used), so that tile rows start on the image's 16-byte chunks and load as float4.
constexpr int kPX = 4;                   // outputs per thread along a row
constexpr int kTX = 32;                  // threads per block along a row
constexpr int kBW = kTX * kPX;           // 128 output columns per block
constexpr int kTileW = kBW + 8;          // 136 words
constexpr int kTileChunks = kTileW / 4;  // 34 16-byte chunks

// ---- rounded arithmetic: dadd_rn / ddiv_rn from rounded_f32.hpp, and the double -> float
// rounding (the device's explicitly rounded intrinsic; the host's IEEE conversion) ----------
PIXFLOW_HD float to_float(double a) {
#if defined(__CUDA_ARCH__)
  return __double2float_rn(a);
#else
  return float(a);
#endif
}
// ---- integer min / max on keys (sm_90: IMNMX, and the 3-input VIMNMX3 of DPX) ---------------
PIXFLOW_HD int imin(int a, int b) {
  return a < b ? a : b;
}
PIXFLOW_HD int imax(int a, int b) {
  return a < b ? b : a;
}
PIXFLOW_HD int imin3(int a, int b, int c) {
#if defined(__CUDA_ARCH__)
  return __vimin3_s32(a, b, c);
#else
  return imin(imin(a, b), c);
#endif
}
PIXFLOW_HD int imax3(int a, int b, int c) {
#if defined(__CUDA_ARCH__)
  return __vimax3_s32(a, b, c);
#else
  return imax(imax(a, b), c);
#endif
}
PIXFLOW_HD int imed3(int a, int b, int c) {
  return imax(imin(a, b), imin(imax(a, b), c));
}

/// The float whose totalOrder key is k, as bits.
PIXFLOW_HD u32 key_bits(int k) {
  return float_bits(detail::from_order_key(k));
}

/// The 6 tile words of row `row` that thread tx reads: columns x0 - 1 .. x0 + 4.
PIXFLOW_HD void load6(const u32* row, int tx, u32 (&v)[6]) {
#if defined(__CUDA_ARCH__)
  // One 16-byte shared load for x0 .. x0 + 3 (a warp's 512 contiguous bytes: 4 wavefronts,
  // no conflict), one word on either side.
  const uint4 m = reinterpret_cast<const uint4*>(row)[tx + 1];
  v[0] = row[4 * tx + 3];
  v[1] = m.x;
  v[2] = m.y;
  v[3] = m.z;
  v[4] = m.w;
  v[5] = row[4 * tx + 8];
#else
  for (int i = 0; i < 6; ++i) v[i] = row[4 * tx + 3 + i];
#endif
}

// Each op: kKey (the tile holds order keys, not float bits); Row, the state one tile row
// leaves for the outputs; row(w) makes it from the row's 6 words; pair(a, b, c, d, o0, o1)
// gives the 4 output words (float bits) of the output rows whose windows are rows a, b, c
// (o0) and b, c, d (o1).
//
// rows_of<R>(op, tile, tx, r0, store) runs an op over a thread's R output rows (R even):
// store(i, o) for i = 0 .. R - 1, output row r0 + i. Rows roll through registers, two a step
// (the loop is not unrolled on the device: unrolled, ptxas hoisted every row's loads and
// the R + 2 rows of state spilled at 64 registers).
template <int R, class Op, class Store>
PIXFLOW_HD void rows_of(const Op& op, const u32* tile, int tx, int r0, Store&& store) {
  static_assert(R % 2 == 0, "pairs of output rows");
  auto row = [&](int r) {
    u32 w[6];
    load6(tile + (r0 + r) * kTileW, tx, w);
    return op.row(w);
  };
  typename Op::Row a = row(0), b = row(1);
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
  for (int i = 0; i < R; i += 2) {
    const typename Op::Row c = row(i + 2), d = row(i + 3);
    u32 o0[4], o1[4];
    op.pair(a, b, c, d, o0, o1);
    store(i, o0);
    store(i + 1, o1);
    a = c;
    b = d;
  }
}

/// dilate (kMax) / erode 3x3: the column extreme of three rows, then of three columns.
template <bool kMax>
struct Morph3 {
  static constexpr bool kKey = true;
  struct Row {
    int k[6];
  };
  PIXFLOW_HD Row row(const u32 (&w)[6]) const {
    Row r;
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) r.k[j] = int(w[j]);
    return r;
  }
  PIXFLOW_HD static int op3(int a, int b, int c) { return kMax ? imax3(a, b, c) : imin3(a, b, c); }
  PIXFLOW_HD void out(const Row& a, const Row& b, const Row& c, u32 (&o)[4]) const {
    int m[6];
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) m[j] = op3(a.k[j], b.k[j], c.k[j]);
    PIXFLOW_UNROLL
    for (int j = 0; j < 4; ++j) o[j] = key_bits(op3(m[j], m[j + 1], m[j + 2]));
  }
  PIXFLOW_HD void pair(const Row& a, const Row& b, const Row& c, const Row& d, u32 (&o0)[4],
                       u32 (&o1)[4]) const {
    out(a, b, c, o0);
    out(b, c, d, o1);
  }
};

/// median 3x3: each window column sorted (lo <= mid <= hi), the median of the window is
/// med3(max3 of the lows, med3 of the mids, min3 of the highs). The two output rows of a
/// pair share window rows b, c: their sorted pair per column is computed once, then the
/// extra row (a, or d) is inserted.
struct Median3 {
  static constexpr bool kKey = true;
  struct Row {
    int k[6];
  };
  PIXFLOW_HD Row row(const u32 (&w)[6]) const {
    Row r;
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) r.k[j] = int(w[j]);
    return r;
  }
  // x inserted into the sorted column pairs (p <= q): the window's median.
  PIXFLOW_HD static void out(const int (&p)[6], const int (&q)[6], const Row& x, u32 (&o)[4]) {
    int lo[6], mid[6], hi[6];
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) {
      lo[j] = imin(p[j], x.k[j]);
      mid[j] = imax(p[j], imin(x.k[j], q[j]));
      hi[j] = imax(q[j], x.k[j]);
    }
    PIXFLOW_UNROLL
    for (int j = 0; j < 4; ++j)
      o[j] =
          key_bits(imed3(imax3(lo[j], lo[j + 1], lo[j + 2]), imed3(mid[j], mid[j + 1], mid[j + 2]),
                         imin3(hi[j], hi[j + 1], hi[j + 2])));
  }
  PIXFLOW_HD void pair(const Row& a, const Row& b, const Row& c, const Row& d, u32 (&o0)[4],
                       u32 (&o1)[4]) const {
    int p[6], q[6];
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) {
      p[j] = imin(b.k[j], c.k[j]);
      q[j] = imax(b.k[j], c.k[j]);
    }
    out(p, q, a, o0);
    out(p, q, d, o1);
  }
};

/// Gaussian and sobel/scharr 3x3 on f32: row sums h = p0 tx0 + p1 tx1 + p2 tx2 (products and
/// sums rounded, in tap order), then v = ((0 + h0 ty0) + h1 ty1) + h2 ty2; sobel/scharr
/// (`deriv`) then v * scale + delta, the reference's rule for f32 (applied even for scale 1,
/// delta 0, as the reference does).
struct Linear3 {
  static constexpr bool kKey = false;
  float tx[3], ty[3];
  float scale, delta;
  bool deriv;
  struct Row {
    float h[4];
  };
  PIXFLOW_HD Row row(const u32 (&w)[6]) const {
    float p[6];
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) p[j] = bits_float(w[j]);
    Row r;
    PIXFLOW_UNROLL
    for (int j = 0; j < 4; ++j)
      r.h[j] =
          add_rn(add_rn(mul_rn(p[j], tx[0]), mul_rn(p[j + 1], tx[1])), mul_rn(p[j + 2], tx[2]));
    return r;
  }
  PIXFLOW_HD void out(const Row& a, const Row& b, const Row& c, u32 (&o)[4]) const {
    PIXFLOW_UNROLL
    for (int j = 0; j < 4; ++j) {
      float v = add_rn(0.0f, mul_rn(a.h[j], ty[0]));
      v = add_rn(v, mul_rn(b.h[j], ty[1]));
      v = add_rn(v, mul_rn(c.h[j], ty[2]));
      if (deriv) v = add_rn(mul_rn(v, scale), delta);
      o[j] = float_bits(v);
    }
  }
  PIXFLOW_HD void pair(const Row& a, const Row& b, const Row& c, const Row& d, u32 (&o0)[4],
                       u32 (&o1)[4]) const {
    out(a, b, c, o0);
    out(b, c, d, o1);
  }
};

/// box 3x3 on f32: double column sums (rows in order), then ((0 + c0) + c1) + c2 in double,
/// then float(s / 9) (normalize) or float(s).
struct Box3 {
  static constexpr bool kKey = false;
  bool normalize;
  struct Row {
    double d[6];
  };
  PIXFLOW_HD Row row(const u32 (&w)[6]) const {
    Row r;
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) r.d[j] = double(bits_float(w[j]));
    return r;
  }
  PIXFLOW_HD void out(const Row& a, const Row& b, const Row& c, u32 (&o)[4]) const {
    double col[6];
    PIXFLOW_UNROLL
    for (int j = 0; j < 6; ++j) col[j] = dadd_rn(dadd_rn(a.d[j], b.d[j]), c.d[j]);
    PIXFLOW_UNROLL
    for (int j = 0; j < 4; ++j) {
      const double s = dadd_rn(dadd_rn(dadd_rn(0.0, col[j]), col[j + 1]), col[j + 2]);
      o[j] = float_bits(normalize ? to_float(ddiv_rn(s, 9.0)) : to_float(s));
    }
  }
  PIXFLOW_HD void pair(const Row& a, const Row& b, const Row& c, const Row& d, u32 (&o0)[4],
                       u32 (&o1)[4]) const {
    out(a, b, c, o0);
    out(b, c, d, o1);
  }
};

}  // namespace pixflow::cuda::f32_3x3
