// gaussian_iir (docs/ops/gaussian.md): the block-rule line filter of src/base/iir.hpp
// (iir_filter_line) in double, the same expressions in the same order, on two schedules:
// iir_pass, one work-item per line (a line is one channel of a row or of a column), and
// iir_fused (below, the default), a work-group per 32 lines with their blocks in parallel. A pass
// reads S samples and writes D samples (-DS=... -DS_U8=1 / -DS_F32=1, the same for D): rows T ->
// float, then columns float -> T. The coefficients come from the host's iir_coeffs (see IIR_*
// below).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1
// The rule's per-step expressions (px_iir_step, px_iir_fix, px_iir_end: src/base/rules/iir.h,
// which src/base/iir.hpp's iir_step / iir_fix / iir_end call for the reference and CUDA) and
// the output's saturation (rules/saturate.h).
#include "src/base/rules/iir.h"
#include "src/base/rules/saturate.h"

#define IIR_BLOCK 32  // detail::kIirBlock: a constant of the rule
// The coefficient buffer: B, b1, b2, b3, M[3][3] row-major, H[IIR_BLOCK][3] row-major.
#define IIR_B 0
#define IIR_B1 1
#define IIR_B2 2
#define IIR_B3 3
#define IIR_M(r, c) (4 + 3 * (r) + (c))
#define IIR_H(t, c) (13 + 3 * (t) + (c))

// iir_step: the newest output added last.
inline double iir_step(__constant const double* k, double x, double s1, double s2, double s3) {
  return px_iir_step(k[IIR_B], k[IIR_B1], k[IIR_B2], k[IIR_B3], x, s1, s2, s3);
}

// iir_fix: step t's zero-state value corrected by the carry (s0 the nearest output).
inline double iir_fix(__constant const double* k, int t, double z, double s0, double s1,
                      double s2) {
  return px_iir_fix(k[IIR_H(t, 0)], k[IIR_H(t, 1)], k[IIR_H(t, 2)], z, s0, s1, s2);
}

// iir_end: Triggs-Sdika's anti-causal start r.
inline double iir_end(__constant const double* k, int r, double u0, double u1, double u2,
                      double up) {
  return px_iir_end(k[IIR_M(r, 0)], k[IIR_M(r, 1)], k[IIR_M(r, 2)], u0, u1, u2, up);
}

#if defined(D_F32)
#define PUT_D(v) ((float)(v))
#else
// saturate_cast<uchar>(double(float(v))): the float result rounded half to even, saturated.
#define PUT_D(v) px_sat_u8_f32((float)(v))
#endif

// One pass over `nlines` lines of `len` samples each. rows = 1: line L is channel L % ch of
// row L / ch (sample i at x = i); rows = 0: channel L % ch of column L / ch (sample i at
// y = i). e: the border extension (iir_extension), cval: the constant border's value (the
// op's depth, as a double). w: scratch of (len + 2e + 6) doubles a line, interleaved
// (position j of line L at j * nlines + L): iir_filter_line's w.
__kernel void iir_pass(CIMG(s), IMG(d), int nlines, int len, int ch, int rows, int e, int border,
                       double cval, __constant const double* k, __global double* w) {
  const int L = get_global_id(0);
  if (L >= nlines) return;
  const int line = L / ch, c = L % ch;
  const int n = len + 2 * e;
#define W(j) w[(long)(j)*nlines + L]
// x(i): position i of the extended line through the border rule.
#define X(i, out)                                           \
  do {                                                      \
    const int src_i = border_index((i)-e, len, border);     \
    if (src_i < 0)                                          \
      out = cval;                                           \
    else if (rows)                                          \
      out = (double)CROW(S, s, line)[(long)src_i * ch + c]; \
    else                                                    \
      out = (double)CROW(S, s, src_i)[(long)line * ch + c]; \
  } while (0)
  double x0;
  X(0, x0);
  W(0) = x0;
  W(1) = x0;
  W(2) = x0;
  // Causal, blocks left to right; block a's carry is w at a-1, a-2, a-3.
  for (int a = 0; a < n; a += IIR_BLOCK) {
    const int m = min(IIR_BLOCK, n - a);
    const double s0 = W(a + 2), s1 = W(a + 1), s2 = W(a);
    double z1 = 0, z2 = 0, z3 = 0;
    for (int t = 0; t < m; ++t) {
      double xv;
      X(a + t, xv);
      const double z = iir_step(k, xv, z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      W(a + t + 3) = iir_fix(k, t, z, s0, s1, s2);
    }
  }
  // Triggs-Sdika: y at n, n+1, n+2 from w at n-1, n-2, n-3 and up = x(n - 1).
  double up;
  X(n - 1, up);
  const double u0 = W(n + 2) - up, u1 = W(n + 1) - up, u2 = W(n) - up;
  for (int r = 0; r < 3; ++r)
    W(n + 3 + r) = iir_end(k, r, u0, u1, u2, up);
  // Anti-causal, blocks right to left; block [a, b)'s carry is y at b, b+1, b+2. Blocks left
  // of the line's first sample are skipped (they only feed blocks further left).
  for (int a = (n - 1) / IIR_BLOCK * IIR_BLOCK; a >= 0 && a + IIR_BLOCK > e; a -= IIR_BLOCK) {
    const int b = min(n, a + IIR_BLOCK);
    const double s0 = W(b + 3), s1 = W(b + 4), s2 = W(b + 5);
    double z1 = 0, z2 = 0, z3 = 0;
    for (int t = 0; t < b - a; ++t) {
      const int i = b - 1 - t;
      const double z = iir_step(k, W(i + 3), z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      W(i + 3) = iir_fix(k, t, z, s0, s1, s2);
    }
  }
  for (int i = 0; i < len; ++i) {
    const double v = W(i + e + 3);
    if (rows)
      ROW(D, d, line)[(long)i * ch + c] = PUT_D(v);
    else
      ROW(D, d, i)[(long)line * ch + c] = PUT_D(v);
  }
#undef X
#undef W
}

// ---------------------------------------------------------------------------------------------
// iir_fused: the CUDA fused pass (src/backends/cuda/iir_fused.hpp, run_group) in OpenCL C, the
// default schedule. Why: iir_pass gives a line to one work-item (8192 work-items on an 8192^2
// image, the H100 holds ~270k), walking it with its scratch in global memory. Here a
// work-group of 256 owns IIR_LINES = 32 whole lines (a sub-group of 32 work-items = the 32
// lines: adjacent columns in the column pass, coalesced) and walks them in tiles of IIR_TILE =
// 256 positions (8 blocks of 32 a line, one block a work-item):
//  1. left to right: the tile into local memory (border rule at load time), each work-item the
//     causal zero state of its block (last three values, zt), then work-items 0..31 (a line
//     each) the carries of the tile's blocks in order, stored to cw (3 doubles a block); after
//     the last tile, Triggs-Sdika's start of the anti-causal pass (cw block J);
//  2. right to left: the tile again, each work-item its causal block (zero state + carry from
//     cw) in private registers, the anti-causal zero state over it in place, work-items 0..31
//     the anti-causal carries right to left (through zt), each work-item its outputs into the
//     tile (as float), then the tile stored.
// Every value is the rule's expression on the same operands (iir_step, iir_fix, the carry of a
// block shorter than three passing through: CUDA's next_carry), so iir_pass's bits. The tile
// holds floats: u8 and the f32 intermediate are exact in float, and the output is rounded to
// float before its depth anyway (PUT_D). Built with -DIIR_ROWS=1 -DCH=cn (row pass: line L is
// channel L % CH of row L / CH) or -DIIR_ROWS=0 (column pass: element L of every row).
#define IIR_LINES 32
#define IIR_SLOTS 8
#define IIR_TILE (IIR_SLOTS * IIR_BLOCK)
// Tile pitch in floats: position q of line ll at q * IIR_PITCH + ll. 33: the row pass stores
// one line's consecutive positions from consecutive work-items, which a pitch of 32 would put
// on one bank; the compute phases read 32 lines of one position (consecutive banks).
#define IIR_PITCH 33

// Sample i of the extended line L (iir_pass's X): the border rule, the constant outside.
inline double iir_x(__global const uchar* s, ulong s_off, long s_stride, int L, int i, int len,
                    int e, int border, double cval) {
  const int si = border_index(i - e, len, border);
  if (si < 0) return cval;
#if IIR_ROWS
  return (double)CROW(S, s, L / CH)[(long)si * CH + L % CH];
#else
  return (double)CROW(S, s, si)[L];
#endif
}

// The carry of the next block from a block of m positions (CUDA's next_carry): its last three
// outputs iir_fix(t, zt_r, s) for t = m-1-r, or the block's own carry where m < 3.
inline void iir_next_carry(__constant const double* k, int m, double z0, double z1, double z2,
                           double* s0, double* s1, double* s2) {
  const double c0 = *s0, c1 = *s1, c2 = *s2;
  const double zz[3] = {z0, z1, z2};
  double nx[3];
  for (int r = 0; r < 3; ++r) {
    const int t = m - 1 - r;
    nx[r] = t >= 0 ? iir_fix(k, t, zz[r], c0, c1, c2) : t == -1 ? c0 : t == -2 ? c1 : c2;
  }
  *s0 = nx[0];
  *s1 = nx[1];
  *s2 = nx[2];
}

// Loads tile positions [a0, a0 + IIR_TILE) of lines [L0, L0 + IIR_LINES) as floats. Positions
// past n load harmlessly through the same rule; lines past the image load the constant.
inline void iir_tile_load(__local float* tile, __global const uchar* s, ulong s_off, long s_stride,
                          int lines, int len, int e, int border, float cval, int L0, int a0,
                          int lid) {
  const bool inside = a0 >= e && a0 + IIR_TILE - e <= len;
#if IIR_ROWS
  // Work-item lid takes position lid of every line (a line's positions are one row's samples,
  // CH apart). Loads in batches of 8 before their stores: several in flight.
  const int q = lid;
  const int si0 = inside ? a0 + q - e : border_index(a0 + q - e, len, border);
  for (int l0 = 0; l0 < IIR_LINES; l0 += 8) {
    float v[8];
    for (int u = 0; u < 8; ++u) {
      const int L = L0 + l0 + u;
      v[u] = L < lines && si0 >= 0 ? (float)CROW(S, s, L / CH)[(long)si0 * CH + L % CH] : cval;
    }
    for (int u = 0; u < 8; ++u) tile[q * IIR_PITCH + l0 + u] = v[u];
  }
#else
  // Work-item lid takes line lid % 32 at positions lid / 32 + 8u: a sub-group reads 32
  // adjacent samples of one row.
  const int ll = lid % IIR_LINES, q0 = lid / IIR_LINES;
  const int L = L0 + ll;
  const bool live = L < lines;
  for (int u0 = 0; u0 < IIR_TILE / IIR_SLOTS; u0 += 8) {
    float v[8];
    for (int u = 0; u < 8; ++u) {
      const int q = q0 + (u0 + u) * IIR_SLOTS;
      const int si = inside ? a0 + q - e : border_index(a0 + q - e, len, border);
      v[u] = live && si >= 0 ? (float)CROW(S, s, si)[L] : cval;
    }
    for (int u = 0; u < 8; ++u) tile[(q0 + (u0 + u) * IIR_SLOTS) * IIR_PITCH + ll] = v[u];
  }
#endif
}

// Stores the output tile (floats, rounded to D by PUT_D): positions a0 - e + q of the line
// only, lines of the image only.
inline void iir_tile_store(__local const float* tile, __global uchar* d, ulong d_off, long d_stride,
                           int lines, int len, int e, int L0, int a0, int lid) {
  const int p0 = a0 - e;
#if IIR_ROWS
  const int q = lid, p = p0 + q;
  if (p < 0 || p >= len) return;
  for (int ll = 0; ll < IIR_LINES; ++ll) {
    const int L = L0 + ll;
    if (L >= lines) break;
    ROW(D, d, L / CH)[(long)p * CH + L % CH] = PUT_D(tile[q * IIR_PITCH + ll]);
  }
#else
  const int ll = lid % IIR_LINES, L = L0 + ll;
  if (L >= lines) return;
  for (int q = lid / IIR_LINES; q < IIR_TILE; q += IIR_SLOTS) {
    const int p = p0 + q;
    if (p >= 0 && p < len) ROW(D, d, p)[L] = PUT_D(tile[q * IIR_PITCH + ll]);
  }
#endif
}

// One pass over `lines` lines of `len` samples (border extension e, n = len + 2e, J blocks of
// IIR_BLOCK), a work-group per IIR_LINES lines. k: the coefficient buffer (IIR_* above); cw:
// [J + 1][3][lines] doubles, the causal carry of every block, then Triggs-Sdika's values.
__kernel __attribute__((reqd_work_group_size(IIR_LINES * IIR_SLOTS, 1, 1))) void iir_fused(
    CIMG(s), IMG(d), int lines, int len, int e, int border, double cval, __constant const double* k,
    __global double* cw) {
  __local float tile[IIR_TILE * IIR_PITCH];
  __local double zt[IIR_SLOTS * 3 * IIR_LINES];  // [slot][r][line]
  const int lid = get_local_id(0);
  const int L0 = get_group_id(0) * IIR_LINES;
  const int n = len + 2 * e;
  const int J = (n + IIR_BLOCK - 1) / IIR_BLOCK;
  const int T = (J + IIR_SLOTS - 1) / IIR_SLOTS;
  // The first anti-causal block the rule runs (blocks wholly left of the line are skipped).
  const int jmin = e >= IIR_BLOCK ? (e - IIR_BLOCK) / IIR_BLOCK + 1 : 0;
  const int tmin = jmin / IIR_SLOTS;
  const int ll = lid % IIR_LINES, slot = lid / IIR_LINES;
  const int L = L0 + ll;
  const bool live = L < lines;
  const float fcval = (float)cval;  // exact: the value in the op's depth
#define ZT(b, r, l) zt[((b)*3 + (r)) * IIR_LINES + (l)]
#define CW(j, r) cw[((long)(j)*3 + (r)) * lines + L]
  // Work-items 0..31: the running carry of line L.
  double s0 = 0, s1 = 0, s2 = 0;
  // 1. Causal, left to right. Tile t - 1's carries are scanned while tile t loads (zt is
  // not touched by the load).
  for (int t = 0; t < T; ++t) {
    if (lid < IIR_LINES && live) {
      if (t == 0)
        s0 = s1 = s2 = iir_x(s, s_off, s_stride, L, 0, len, e, border, cval);
      else
        for (int b = 0; b < IIR_SLOTS; ++b) {
          const int j = (t - 1) * IIR_SLOTS + b;
          if (j >= J) break;
          CW(j, 0) = s0;
          CW(j, 1) = s1;
          CW(j, 2) = s2;
          iir_next_carry(k, min(IIR_BLOCK, n - j * IIR_BLOCK), ZT(b, 0, ll), ZT(b, 1, ll),
                         ZT(b, 2, ll), &s0, &s1, &s2);
        }
    }
    iir_tile_load(tile, s, s_off, s_stride, lines, len, e, border, fcval, L0, t * IIR_TILE, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int j = t * IIR_SLOTS + slot;
    if (j < J && live) {
      const int m = min(IIR_BLOCK, n - j * IIR_BLOCK);
      __local const float* x = tile + slot * IIR_BLOCK * IIR_PITCH + ll;
      double z1 = 0, z2 = 0, z3 = 0;
#pragma unroll
      for (int i = 0; i < IIR_BLOCK; ++i)
        if (i < m) {
          const double z = iir_step(k, (double)x[i * IIR_PITCH], z1, z2, z3);
          z3 = z2;
          z2 = z1;
          z1 = z;
        }
      ZT(slot, 0, ll) = z1;  // positions a+m-1, a+m-2, a+m-3 (0 where m < 3: unused)
      ZT(slot, 1, ll) = z2;
      ZT(slot, 2, ll) = z3;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid < IIR_LINES && live) {
    for (int b = 0; b < IIR_SLOTS; ++b) {
      const int j = (T - 1) * IIR_SLOTS + b;
      if (j >= J) break;
      CW(j, 0) = s0;
      CW(j, 1) = s1;
      CW(j, 2) = s2;
      iir_next_carry(k, min(IIR_BLOCK, n - j * IIR_BLOCK), ZT(b, 0, ll), ZT(b, 1, ll), ZT(b, 2, ll),
                     &s0, &s1, &s2);
    }
    // s: w at n-1, n-2, n-3; Triggs-Sdika as iir_pass.
    const double up = iir_x(s, s_off, s_stride, L, n - 1, len, e, border, cval);
    const double u0 = s0 - up, u1 = s1 - up, u2 = s2 - up;
    CW(J, 0) = iir_end(k, 0, u0, u1, u2, up);
    CW(J, 1) = iir_end(k, 1, u0, u1, u2, up);
    CW(J, 2) = iir_end(k, 2, u0, u1, u2, up);
    s0 = CW(J, 0);
    s1 = CW(J, 1);
    s2 = CW(J, 2);
  }
  // The carries cw were written by the first IIR_LINES work-items (one a line) and are read
  // below by the work-item of every slot: a barrier with a global fence orders them (OpenCL's
  // memory model; NVIDIA's bar.sync orders global memory too, which is why the H100 never
  // showed it: oclgrind's race detector did, once the pass gave its device 48 KiB).
  barrier(CLK_GLOBAL_MEM_FENCE);
  // 2. Anti-causal, right to left, down to the first block the rule runs.
  for (int t = T - 1; t >= tmin; --t) {
    iir_tile_load(tile, s, s_off, s_stride, lines, len, e, border, fcval, L0, t * IIR_TILE, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int j = t * IIR_SLOTS + slot;
    const bool mine = j < J && j >= jmin && live;
    const int m = mine ? min(IIR_BLOCK, n - j * IIR_BLOCK) : 0;
    double w[IIR_BLOCK];
    if (mine) {
      __local const float* x = tile + slot * IIR_BLOCK * IIR_PITCH + ll;
      const double c0 = CW(j, 0), c1 = CW(j, 1), c2 = CW(j, 2);
      double z1 = 0, z2 = 0, z3 = 0;
#pragma unroll
      for (int i = 0; i < IIR_BLOCK; ++i)
        if (i < m) {
          const double z = iir_step(k, (double)x[i * IIR_PITCH], z1, z2, z3);
          z3 = z2;
          z2 = z1;
          z1 = z;
          w[i] = iir_fix(k, i, z, c0, c1, c2);
        }
      z1 = z2 = z3 = 0;
#pragma unroll
      for (int i = IIR_BLOCK - 1; i >= 0; --i)
        if (i < m) {
          const double z = iir_step(k, w[i], z1, z2, z3);
          z3 = z2;
          z2 = z1;
          z1 = z;
          w[i] = z;
        }
      ZT(slot, 0, ll) = w[0];
      ZT(slot, 1, ll) = m > 1 ? w[1] : 0.0;
      ZT(slot, 2, ll) = m > 2 ? w[2] : 0.0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < IIR_LINES && live) {
      for (int b = IIR_SLOTS - 1; b >= 0; --b) {
        const int jb = t * IIR_SLOTS + b;
        if (jb >= J) continue;
        if (jb < jmin) break;
        const double z0 = ZT(b, 0, ll), z1 = ZT(b, 1, ll), z2 = ZT(b, 2, ll);
        ZT(b, 0, ll) = s0;  // the block's carry, over its tails
        ZT(b, 1, ll) = s1;
        ZT(b, 2, ll) = s2;
        iir_next_carry(k, min(IIR_BLOCK, n - jb * IIR_BLOCK), z0, z1, z2, &s0, &s1, &s2);
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mine) {
      const double c0 = ZT(slot, 0, ll), c1 = ZT(slot, 1, ll), c2 = ZT(slot, 2, ll);
      __local float* y = tile + slot * IIR_BLOCK * IIR_PITCH + ll;
#pragma unroll
      for (int i = 0; i < IIR_BLOCK; ++i)
        if (i < m) y[i * IIR_PITCH] = (float)iir_fix(k, m - 1 - i, w[i], c0, c1, c2);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    iir_tile_store(tile, d, d_off, d_stride, lines, len, e, L0, t * IIR_TILE, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#undef CW
#undef ZT
}
