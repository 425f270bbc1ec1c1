// Point-wise ops (docs/ops/arith.md, convert.md, threshold.md, color.md) and transpose.
// Built per depth: T is the sample type (-DT=uchar ...), T_U8 .. T_F32 tell which; convert
// also gets D / D_* for the destination. The per-sample rules are src/base/rules/pointwise.h's
// (the C functions the reference's and CUDA's templates in src/base/pointwise.hpp call).
//
// Point-wise schedule (the CUDA round's, bench/NOTES.md "point-wise, 16 bytes per thread" and
// branch pw5): a flat 1-D range, one chunk of VEC samples (16 bytes of the widest type) a
// work-item in row-major chunk order, so a warp reads 512 contiguous bytes with 16-byte loads.
// VEC comes from the host. ALIGNED (host: every view's offset and stride a multiple of 16)
// loads and stores whole vectors through vector pointers; otherwise vloadN / vstoreN, which
// need only the sample's alignment (ROIs at any sample offset). A row's last chunk, when the
// row is not a multiple of VEC, goes sample by sample. Per sample the arithmetic is the
// scalar rule on the vector's lanes (the compiler keeps the union in registers).
#ifdef NEED_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1  // the double rules of src/base/rules (px_arith_f64, px_convert_value)
#endif
#include "src/base/rules/pointwise.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define CAT3(a, b, c) CAT(CAT(a, b), c)

// The depth's suffix of the rule functions (px_arith_u8, px_sat_u8_f64, ...).
#if defined(T_F32)
#define TS f32
#elif defined(T_U8)
#define TS u8
#elif defined(T_U16)
#define TS u16
#elif defined(T_S16)
#define TS s16
#else
#define TS s32
#endif

#ifdef VEC
#ifdef ALIGNED
#define LOADV(TT, p) (*(__global const CAT(TT, VEC) *)(p))
#define STOREV(TT, v, p) (*(__global CAT(TT, VEC) *)(p) = (v))
#else
#define LOADV(TT, p) CAT(vload, VEC)(0, p)
#define STOREV(TT, v, p) CAT(vstore, VEC)(v, 0, p)
#endif
typedef union {
  CAT(T, VEC) v;
  T s[VEC];
} VecT;

// The chunk of this work-item: row y (row0 + chunk / cpr), first sample x0; returns when
// past the last row. cpr: chunks a row (ceil(n / VEC)); the host keeps a launch's chunk
// count below 2^31 so the index and division stay 32-bit.
#define CHUNK(rows)                                \
  const uint g_ = get_global_id(0), r_ = g_ / cpr; \
  const int y = row0 + (int)r_;                    \
  if (y >= rows) return;                           \
  const int x0 = (int)(g_ - r_ * cpr) * VEC;
#endif

// a (op) b: float arithmetic for f32; exact in 64 bits then saturated for integers.
// OP: 0 add, 1 sub, 2 absdiff, 3 mul (ArithOp's order), a compile-time define.
#ifdef OP
inline T arith1(T va, T vb) {
  return CAT(px_arith_, TS)(va, vb, OP);
}

__kernel void arith_image(CIMG(a), CIMG(b), IMG(d), int n, int rows, uint cpr, int row0) {
  CHUNK(rows)
  __global const T *pa = CROW(T, a, y) + x0, *pb = CROW(T, b, y) + x0;
  __global T *pd = ROW(T, d, y) + x0;
  if (x0 + VEC <= n) {
    VecT va, vb, vd;
    va.v = LOADV(T, pa);
    vb.v = LOADV(T, pb);
#pragma unroll
    for (int k = 0; k < VEC; ++k) vd.s[k] = arith1(va.s[k], vb.s[k]);
    STOREV(T, vd.v, pd);
  } else {
    for (int k = 0; k < n - x0; ++k) pd[k] = arith1(pa[k], pb[k]);
  }
}

#ifdef NEED_FP64
// a (op) v in double, rounded half to even and saturated (f32: rounded to float).
inline T arith_scalar1(T va, double v) {
  const double r = px_arith_f64((double)va, v, OP);
#ifdef T_F32
  return (float)r;
#else
  return CAT3(px_sat_, TS, _f64)(r);
#endif
}

__kernel void arith_scalar(CIMG(a), double v, IMG(d), int n, int rows, uint cpr, int row0) {
  CHUNK(rows)
  __global const T *pa = CROW(T, a, y) + x0;
  __global T *pd = ROW(T, d, y) + x0;
  if (x0 + VEC <= n) {
    VecT va, vd;
    va.v = LOADV(T, pa);
#pragma unroll
    for (int k = 0; k < VEC; ++k) vd.s[k] = arith_scalar1(va.s[k], v);
    STOREV(T, vd.v, pd);
  } else {
    for (int k = 0; k < n - x0; ++k) pd[k] = arith_scalar1(pa[k], v);
  }
}
#endif
#endif

#if defined(NEED_FP64) && defined(D)
#if defined(D_F32)
#define SAT_D(v) ((float)(v))
#elif defined(D_U8)
#define SAT_D(v) px_sat_u8_f64(v)
#elif defined(D_U16)
#define SAT_D(v) px_sat_u16_f64(v)
#elif defined(D_S16)
#define SAT_D(v) px_sat_s16_f64(v)
#elif defined(D_S32)
#define SAT_D(v) px_sat_s32_f64(v)
#endif

// saturate(round_half_even(abs?(x * scale + offset))) in double. VEC follows the wider of
// T and D (16 bytes of it), so the narrower side moves fewer than 16 bytes a work-item.
inline D convert1(T x, double scale, double offset, int absval) {
  return SAT_D(px_convert_value((double)x, scale, offset, absval));
}

__kernel void convert(CIMG(s), IMG(d), int n, int rows, uint cpr, int row0, double scale,
                      double offset, int absval) {
  CHUNK(rows)
  __global const T *ps = CROW(T, s, y) + x0;
  __global D *pd = ROW(D, d, y) + x0;
  if (x0 + VEC <= n) {
    VecT vs;
    union {
      CAT(D, VEC) v;
      D s[VEC];
    } vd;
    vs.v = LOADV(T, ps);
#pragma unroll
    for (int k = 0; k < VEC; ++k) vd.s[k] = convert1(vs.s[k], scale, offset, absval);
    STOREV(D, vd.v, pd);
  } else {
    for (int k = 0; k < n - x0; ++k) pd[k] = convert1(ps[k], scale, offset, absval);
  }
}
#endif

// cv::threshold's choice once "above" is known (px_threshold_pick_*). type: binary,
// binary_inv, trunc, tozero, tozero_inv (ThresholdType's order).
#define PICK(type, above, x, t, mv) CAT(px_threshold_pick_, TS)(type, above, x, t, mv)

// Integer depths compare against it = floor(t) clamped (src/base/pointwise.hpp
// int_threshold, computed on the host); f32 compares in float. TTYPE: the type, a define.
#ifdef TTYPE
#ifdef T_F32
#define THR_ARGS float t, float tv, float mv
#define ABOVE(v) ((v) > t)
#else
#define THR_ARGS long t, T tv, T mv
#define ABOVE(v) ((long)(v) > t)
#endif

__kernel void threshold(CIMG(s), IMG(d), int n, int rows, uint cpr, int row0, THR_ARGS) {
  CHUNK(rows)
  __global const T *ps = CROW(T, s, y) + x0;
  __global T *pd = ROW(T, d, y) + x0;
  if (x0 + VEC <= n) {
    VecT vs, vd;
    vs.v = LOADV(T, ps);
#pragma unroll
    for (int k = 0; k < VEC; ++k) vd.s[k] = PICK(TTYPE, ABOVE(vs.s[k]), vs.s[k], tv, mv);
    STOREV(T, vd.v, pd);
  } else {
    for (int k = 0; k < n - x0; ++k) pd[k] = PICK(TTYPE, ABOVE(ps[k]), ps[k], tv, mv);
  }
}
#endif

// RGB(A) -> luma: BT.601 in Q15 for integers, (0.299R + 0.587G) + 0.114B in float for f32
// (px_gray_q15 / px_gray_f32, src/base/rules/pointwise.h). RI / BI: the red and blue channel (RGB or BGR); CN: 3 or 4. A chunk is
// VEC output pixels from CN vectors of source samples.
#ifdef CN
inline T gray1(T r, T g, T b) {
#ifdef T_F32
  return px_gray_f32(r, g, b);
#else
  return (T)px_gray_q15(r, g, b);
#endif
}

__kernel void gray(CIMG(s), IMG(d), int n, int rows, uint cpr, int row0) {
  CHUNK(rows)
  __global const T *ps = CROW(T, s, y) + x0 * CN;
  __global T *pd = ROW(T, d, y) + x0;
  if (x0 + VEC <= n) {
    union {
      CAT(T, VEC) v[CN];
      T s[VEC * CN];
    } vs;
    VecT vd;
#pragma unroll
    for (int c = 0; c < CN; ++c) vs.v[c] = LOADV(T, ps + c * VEC);
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      vd.s[k] = gray1(vs.s[k * CN + RI], vs.s[k * CN + 1], vs.s[k * CN + BI]);
    STOREV(T, vd.v, pd);
  } else {
    for (int k = 0; k < n - x0; ++k)
      pd[k] = gray1(ps[k * CN + RI], ps[k * CN + 1], ps[k * CN + BI]);
  }
}
#endif

// ---- channels -------------------------------------------------------------------------------
// dst channel c = src channel pick.s<c> (docs/ops/color.md). Built per sample size (T is
// uchar, ushort or int: samples are only moved), CI / CO (the channel counts); the picks are an
// argument (one program serves every pick), read through a select chain over the unrolled
// samples so that the pixel stays in registers. A chunk is VEC output pixels from CI source
// vectors into CO destination vectors.
#ifdef CHANNELS
inline T ch_sample(const T *q, int k) {
  T v = q[0];
#pragma unroll
  for (int i = 1; i < CI; ++i) v = k == i ? q[i] : v;
  return v;
}

__kernel void channels(CIMG(s), IMG(d), int n, int rows, uint cpr, int row0, int4 pick) {
  const int pk[4] = {pick.s0, pick.s1, pick.s2, pick.s3};
  CHUNK(rows)
  __global const T *ps = CROW(T, s, y) + x0 * CI;
  __global T *pd = ROW(T, d, y) + x0 * CO;
  if (x0 + VEC <= n) {
    union {
      CAT(T, VEC) v[CI];
      T s[VEC * CI];
    } vs;
    union {
      CAT(T, VEC) v[CO];
      T s[VEC * CO];
    } vd;
#pragma unroll
    for (int c = 0; c < CI; ++c) vs.v[c] = LOADV(T, ps + c * VEC);
#pragma unroll
    for (int k = 0; k < VEC; ++k)
#pragma unroll
      for (int c = 0; c < CO; ++c) vd.s[k * CO + c] = ch_sample(vs.s + k * CI, pk[c]);
#pragma unroll
    for (int c = 0; c < CO; ++c) STOREV(T, vd.v[c], pd + c * VEC);
  } else {
    for (int k = 0; k < n - x0; ++k)
      for (int c = 0; c < CO; ++c) pd[k * CO + c] = ps[k * CI + pk[c]];
  }
}
#endif

// ---- transpose ------------------------------------------------------------------------------
// dst(x, y) = src(y, x). Both kernels go through a local tile so that reads and writes are
// along rows; DIAG maps work-groups to tiles diagonally (tile column = (group x + group y)
// mod tiles across), so that consecutive groups touch different DRAM partitions on both sides
// (the classic partition-camping remedy; an env switch so the H100 run can A/B it).
#ifdef TRANSPOSE
inline void tile_of_group(int *tx0, int *ty0, int tiles_x, int tiles_y, int tile) {
#ifdef DIAG
  // Diagonal order over the linear group id (the grid is tiles_x * tiles_y groups in x).
  const int id = get_group_id(0);
  const int by = id % tiles_y, bx = (id / tiles_y + by) % tiles_x;
#else
  const int id = get_group_id(0);
  const int bx = id % tiles_x, by = id / tiles_x;
#endif
  *tx0 = bx * tile;
  *ty0 = by * tile;
}

// u8 x 1 (TRANSPOSE_U8): 64x64-byte tiles, 16x16 work-items; each loads a 4x4 byte block as
// four words (ALIGNED4: both views' offsets and strides multiples of 4; else vload4),
// transposes it in registers (uchar4 swizzles: byte permutes) and the group writes whole words
// back through the local tile (4 bytes per access instead of 1; bench/NOTES.md history item 5:
// 118 -> 49.5 us on the H100 in CUDA). Tiles cut by the image's edge go byte by byte.
#ifdef TRANSPOSE_U8
#ifdef ALIGNED4
#define LD4(p) (*(__global const uchar4 *)(p))
#define ST4(v, p) (*(__global uchar4 *)(p) = (v))
#else
#define LD4(p) vload4(0, p)
#define ST4(v, p) vstore4(v, 0, p)
#endif
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void transpose_u8(CIMG(s), IMG(d), int w,
                                                                            int h, int tiles_x,
                                                                            int tiles_y) {
  // w, h: the source's size.
  __local uint tile[64][17];  // 64 output rows x 16 words (+1 against bank conflicts)
  int x0, y0;
  tile_of_group(&x0, &y0, tiles_x, tiles_y, 64);
  const int lid = get_local_id(0), tx = lid & 15, ty = lid >> 4;
  if (x0 + 64 <= w && y0 + 64 <= h) {
    uchar4 r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) r[i] = LD4(CROW(uchar, s, y0 + 4 * ty + i) + x0 + 4 * tx);
    // Column j of the block: byte j of each row word.
    tile[4 * tx + 0][ty] = as_uint((uchar4)(r[0].s0, r[1].s0, r[2].s0, r[3].s0));
    tile[4 * tx + 1][ty] = as_uint((uchar4)(r[0].s1, r[1].s1, r[2].s1, r[3].s1));
    tile[4 * tx + 2][ty] = as_uint((uchar4)(r[0].s2, r[1].s2, r[2].s2, r[3].s2));
    tile[4 * tx + 3][ty] = as_uint((uchar4)(r[0].s3, r[1].s3, r[2].s3, r[3].s3));
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      ST4(as_uchar4(tile[4 * ty + i][tx]), ROW(uchar, d, x0 + 4 * ty + i) + y0 + 4 * tx);
  } else {
    // Edge tile: byte per work-item through the same local tile (as bytes).
    __local uchar *tb = (__local uchar *)tile;  // [64][68]
    for (int i = lid; i < 64 * 64; i += 256) {
      const int yy = i >> 6, xx = i & 63;
      if (x0 + xx < w && y0 + yy < h) tb[xx * 68 + yy] = CROW(uchar, s, y0 + yy)[x0 + xx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < 64 * 64; i += 256) {
      const int xx = i >> 6, yy = i & 63;  // output row x0 + xx, column y0 + yy
      if (x0 + xx < w && y0 + yy < h) ROW(uchar, d, x0 + xx)[y0 + yy] = tb[xx * 68 + yy];
    }
  }
}
#endif

// Any pixel (TRANSPOSE_PIX): pixels of PN units of type U (the pixel's bytes: U = uint for
// pixels a multiple of 4 bytes, ushort of 2, uchar otherwise), 32x32-pixel tiles, 32x8
// work-items, 4 rows each.
#ifdef TRANSPOSE_PIX
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void transpose_pix(CIMG(s), IMG(d), int w,
                                                                             int h, int tiles_x,
                                                                             int tiles_y) {
  __local U tile[32][33 * PN];
  int x0, y0;
  tile_of_group(&x0, &y0, tiles_x, tiles_y, 32);
  const int lid = get_local_id(0), tx = lid & 31, ty = lid >> 5;
  for (int i = 0; i < 4; ++i) {
    const int yy = ty + 8 * i;
    if (x0 + tx < w && y0 + yy < h) {
      __global const U *p = CROW(U, s, y0 + yy) + (x0 + tx) * PN;
      for (int c = 0; c < PN; ++c) tile[tx][yy * PN + c] = p[c];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < 4; ++i) {
    const int xx = ty + 8 * i;  // output row x0 + xx, output column y0 + tx
    if (x0 + xx < w && y0 + tx < h) {
      __global U *p = ROW(U, d, x0 + xx) + (y0 + tx) * PN;
      for (int c = 0; c < PN; ++c) p[c] = tile[xx][tx * PN + c];
    }
  }
}
#endif
#endif
