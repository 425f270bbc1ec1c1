// dot and matmul (docs/ops/linalg.md, src/ref/linalg.cpp): the sums in the reference's order
// with separately rounded float operations (FP_CONTRACT OFF). dot and the simple matmul: one
// work-item per output; matmul_tile: local-memory tiles, a register block of outputs a
// work-item (built only with -DTM=..., see below).

// dot (the kernel is not named "dot": that is an OpenCL C built-in, clCreateKernel misses it).
// dst(x, y) = ((a0 b0 + a1 b1) + a2 b2) + a3 b3 over the 4 f32 channels.
__kernel void dot_f32x4(CIMG(a), CIMG(b), IMG(d), int w, int h) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  __global const float *u = CROW(float, a, y) + 4 * x;
  __global const float *v = CROW(float, b, y) + 4 * x;
  const float s01 = u[0] * v[0] + u[1] * v[1];
  const float s012 = s01 + u[2] * v[2];
  ROW(float, d, y)[x] = s012 + u[3] * v[3];
}

// c(i, j) = sum over k of a(i, k) b(k, j), k in order, for a M x K and b K x N (image width =
// columns). f32 (T_F32): float sum from +0. s32 (T_S32): the exact sum in 128 bits (a
// wrapping low half and a high half, as the reference's __int128), saturated to int.
__kernel void matmul(CIMG(a), CIMG(b), IMG(c), int M, int K, int N) {
  const int j = get_global_id(0), i = get_global_id(1);
  if (j >= N || i >= M) return;
  __global const T *ai = CROW(T, a, i);
  __global const uchar *bb = b + b_off;
#ifdef T_F32
  float s = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float p = ai[k] * ((__global const float *)(bb + (long)k * b_stride))[j];
    s = s + p;
  }
  ROW(float, c, i)[j] = s;
#else
  ulong lo = 0;
  long hi = 0;
  for (int k = 0; k < K; ++k) {
    const long p = (long)ai[k] * (long)((__global const int *)(bb + (long)k * b_stride))[j];
    const ulong old = lo;
    lo += (ulong)p;
    hi += (p < 0 ? -1 : 0) + (lo < old ? 1 : 0);
  }
  // value = hi 2^64 + lo (lo unsigned)
  int r;
  if (hi > 0 || (hi == 0 && (long)lo < 0))
    r = INT_MAX;
  else if (hi < -1 || (hi == -1 && (long)lo >= 0))
    r = INT_MIN;
  else {
    const long v = (long)lo;
    r = v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
  }
  ROW(int, c, i)[j] = r;
#endif
}

#ifdef TM
// matmul_tile: the CUDA backend's scheme (src/backends/cuda/gemm.cu). A work-group computes a
// TM x TN tile of c with (TN / RN) x (TM / RM) work-items, each an RM x RN register block; K
// goes by slices of TK, a's slice (TM x TK) and b's (TK x TN) staged in local memory. Every
// output still sums its K products one at a time in index order from +0, so the result is
// the reference's bit for bit whatever the tile sizes (no split-K, no reassociation). A
// partial last slice's loop stops at the last real k rather than adding its zero padding:
// (+0) x (+0) added to a sum that starts at +0 would change no bits, but it is work, and
// the sum stays the reference's by construction rather than by that argument.
//
// Layout: as_[k][m] (a's slice transposed, rows padded by 4 floats: the transposed stores
// from a's rows then hit 2-way bank conflicts instead of 16-way; 4 keeps the rows 16-byte
// aligned for the vector loads), bs[k][n]. A work-item's RM rows are RM / 4 runs of 4 at
// m = r * (TM / (RM / 4)) + 4 ty (likewise its columns): one 16-byte local load per run, and
// neighbouring work-items read neighbouring 16 bytes (no bank conflicts for 128-bit loads,
// which 8 consecutive work-items of 8-float blocks at a 32-byte stride would have).
//
// A whole slice's k loop is unrolled KU times (4 or all TK; the pragma's count is written
// out, not a macro, for drivers' front ends): fully unrolled, the compiler hoists every
// local load of the slice ahead of the arithmetic (ptxas for sm_90 on clang's PTX of this
// file: 126 registers a work-item at 64 x 64 / 4 x 4, 251 at 128 x 128 / 8 x 8); by 4, 72 and
// 171 (CUDA's gemm_kernel: 48). Registers bound the work-groups an SM holds (64K each).
//
// The next slice is read from global memory into registers before the current one is
// computed (its latency hidden behind the arithmetic), then stored to local memory. The
// loops have constant trip counts (fully unrolled by the compilers; #pragma unroll where
// the loop is not inside a macro: _Pragma is left out for drivers' older front ends).
#define WX (TN / RN)
#define WY (TM / RM)
#define NT (WX * WY)
#define LDA (TM + 4)
#define PA (TM * TK / NT)  // a's samples a work-item loads per slice
#define PB (TK * TN / NT)
#define T4 CAT(T, 4)
#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b

#ifdef T_F32
#define ACC float
#define ACC_ZERO 0.0f
#define ACC_ADD(s, x, y) s = s + (x) * (y)
#define ACC_OUT(s) (s)
#else
// s32: the exact sum in 128 bits as in the simple kernel, kept as two 64-bit halves.
typedef struct {
  ulong lo;
  long hi;
} Acc128;
#define ACC Acc128
#define ACC_ZERO ((Acc128){0, 0})
#define ACC_ADD(s, x, y)                                                                           \
  do {                                                                                             \
    const long p_ = (long)(x) * (long)(y);                                                         \
    const ulong old_ = s.lo;                                                                       \
    s.lo += (ulong)p_;                                                                             \
    s.hi += (p_ < 0 ? -1 : 0) + (s.lo < old_ ? 1 : 0);                                             \
  } while (0)
#define ACC_OUT(s) saturate128(s)
inline int saturate128(Acc128 s) {
  if (s.hi > 0 || (s.hi == 0 && (long)s.lo < 0)) return INT_MAX;
  if (s.hi < -1 || (s.hi == -1 && (long)s.lo >= 0)) return INT_MIN;
  const long v = (long)s.lo;
  return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
}
#endif

// Loads slice k0 of a and b (zeros outside them) into registers: work-item t loads a's
// samples (m, k) = ((t + p NT) / TK, (t + p NT) % TK), TK consecutive work-items a row's
// slice (coalesced), and b's (k, n) = ((t + p NT) / TN, (t + p NT) % TN).
inline void load_slice(__global const uchar *a, ulong a_off, long a_stride,
                       __global const uchar *b, ulong b_off, long b_stride, int M, int K, int N,
                       int m0, int n0, int k0, int t, T *ra, T *rb) {
#pragma unroll
  for (int p = 0; p < PA; ++p) {
    const int e = t + p * NT, gm = m0 + e / TK, gk = k0 + e % TK;
    ra[p] = (gm < M && gk < K) ? CROW(T, a, gm)[gk] : (T)0;
  }
#pragma unroll
  for (int p = 0; p < PB; ++p) {
    const int e = t + p * NT, gk = k0 + e / TN, gn = n0 + e % TN;
    rb[p] = (gk < K && gn < N) ? CROW(T, b, gk)[gn] : (T)0;
  }
}

// One k of the work-item's block: RM / 4 + RN / 4 vector loads, RM x RN products added.
inline void gemm_step(__local const T4 *as4, __local const T4 *bs4, int kk, int tx, int ty,
                      ACC acc[RM][RN]) {
  T av[RM], bv[RN];
#pragma unroll
  for (int r = 0; r < RM / 4; ++r) {
    const T4 v = as4[(kk * LDA + r * (TM / (RM / 4)) + 4 * ty) / 4];
    av[4 * r] = v.s0, av[4 * r + 1] = v.s1, av[4 * r + 2] = v.s2, av[4 * r + 3] = v.s3;
  }
#pragma unroll
  for (int r = 0; r < RN / 4; ++r) {
    const T4 v = bs4[(kk * TN + r * (TN / (RN / 4)) + 4 * tx) / 4];
    bv[4 * r] = v.s0, bv[4 * r + 1] = v.s1, bv[4 * r + 2] = v.s2, bv[4 * r + 3] = v.s3;
  }
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j) ACC_ADD(acc[i][j], av[i], bv[j]);
}

__kernel __attribute__((reqd_work_group_size(WX, WY, 1))) void matmul_tile(CIMG(a), CIMG(b),
                                                                           IMG(c), int M, int K,
                                                                           int N) {
  // Declared as vectors: 16-byte aligned for the vector loads.
  __local T4 as4[TK * LDA / 4], bs4[TK * TN / 4];
  __local T *as_ = (__local T *)as4, *bs = (__local T *)bs4;
  const int tx = get_local_id(0), ty = get_local_id(1), t = ty * WX + tx;
  const int n0 = get_group_id(0) * TN, m0 = get_group_id(1) * TM;

  ACC acc[RM][RN];
#pragma unroll
  for (int i = 0; i < RM; ++i)
#pragma unroll
    for (int j = 0; j < RN; ++j) acc[i][j] = ACC_ZERO;

  T ra[PA], rb[PB];
  load_slice(a, a_off, a_stride, b, b_off, b_stride, M, K, N, m0, n0, 0, t, ra, rb);
  for (int k0 = 0; k0 < K; k0 += TK) {
    barrier(CLK_LOCAL_MEM_FENCE);  // the previous slice's reads are done
#pragma unroll
    for (int p = 0; p < PA; ++p) {
      const int e = t + p * NT;
      as_[(e % TK) * LDA + e / TK] = ra[p];
    }
#pragma unroll
    for (int p = 0; p < PB; ++p) bs[t + p * NT] = rb[p];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (k0 + TK < K)
      load_slice(a, a_off, a_stride, b, b_off, b_stride, M, K, N, m0, n0, k0 + TK, t, ra, rb);

    // A partial last slice stops at K (its padding is not added, see above).
    if (K - k0 >= TK) {
#if KU == TK
#pragma unroll
#elif KU == 4
#pragma unroll 4
#else
#error "KU (the unrolling of a slice's k loop) is 4 or TK"
#endif
      for (int kk = 0; kk < TK; ++kk) gemm_step(as4, bs4, kk, tx, ty, acc);
    } else {
      for (int kk = 0; kk < K - k0; ++kk) gemm_step(as4, bs4, kk, tx, ty, acc);
    }
  }

#pragma unroll
  for (int i = 0; i < RM; ++i) {
    const int gm = m0 + (i / 4) * (TM / (RM / 4)) + 4 * ty + i % 4;
    if (gm >= M) continue;
    __global T *ci = ROW(T, c, gm);
#pragma unroll
    for (int j = 0; j < RN; ++j) {
      const int gn = n0 + (j / 4) * (TN / (RN / 4)) + 4 * tx + j % 4;
      if (gn < N) ci[gn] = ACC_OUT(acc[i][j]);
    }
  }
}
#endif
