// bilateral (docs/ops/bilateral.md; the rule is src/ref/bilateral.cpp): `bilateral`, one
// work-item per output pixel, walking the circular window in the reference's row-major order
// (u8 x 1 with radius <= 4: bilateral_u8c1_tile below, the default schedule). Built per
// depth (-DT=uchar -DT_U8=1 or -DT=float -DT_F32=1) and channel count (-DCH=1..4).
// The host computes what the reference computes once per call (bilateral.cpp): the taps
// (dx, dy and the float space weight's bits, three ints a tap) and the colour table: u8 the
// 256 * CH floats of exp(delta^2 * coeff), f32 the interpolated table of
// src/base/bilateral_f32.hpp (T[i] at 2i, D[i] at 2i + 1).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PX_FP64 1
// The f32 colour weight per tap (px_bilateral_f32_weight_global: rules/bilateral.h, the
// reference's bilateral_f32::weight) and the u8 output's saturation (rules/saturate.h).
#include "src/base/rules/bilateral.h"
#include "src/base/rules/saturate.h"

// The output sum / wsum, rounded once to float: the reference's float division, taken here
// in double and rounded once (the same bits, 53 >= 2 * 24 + 2), because OpenCL's float
// division need not be correctly rounded (rules/rounded.h px_div_rn says why).
inline float bil_div(float sum, float wsum) {
  return (float)((double)sum / (double)wsum);
}

// The tile kernels' source rows t = 0 .. 15 one after the other, t a literal in each: the
// row loop written out (why: clang 15 left `#pragma unroll` of that loop rolled, with the
// window's selections at run time, as nvcc did for CUDA's; bench/NOTES.md, branch ocl-bil),
// the loops inside it (output rows, dx) unrolled with t known. Within a row the samples are
// read from the tile once; for every output the rows come in ascending dy and dx ascends
// within a row: the reference's summation order.
#define BP_ROWS(ROW)                                                                    \
  ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5) ROW(6) ROW(7) ROW(8) ROW(9) ROW(10) ROW(11) \
  ROW(12) ROW(13) ROW(14) ROW(15)
#if defined(BIL_RW) && BIL_RW + 2 * BIL_R > 16
#error "BP_ROWS covers 16 source rows (RW 8, R 4)"
#endif
// After the taps of one source row for output row r, on NVIDIA: empty volatile asm that take
// the row's sums as operands, so that those taps are computed there and then. Without them the
// unrolled body is one basic block in which the compiler is free to issue every table lookup
// first and the sums at the end (clang 15's PTX: a lookup's result used ~5800 instructions
// later; ptxas: 255 registers and 4-10 KB of spills for either kernel; with them 80 (u8 x 3)
// and 48 (f32), no spill). CUDA's f32 kernel puts a memory-clobbering asm between source rows
// for the same reason; here that did not help (the lookups' uses, arithmetic, still sank). The
// values are unchanged. Elsewhere nothing.
#ifdef PIXFLOW_NV_PTX
#define BP_PIN(x) __asm__ volatile("" : "+f"(x));
#else
#define BP_PIN(x) ;
#endif

// Per tap k: delta = the L1 distance of the tap's samples to the centre's (u8 in integers,
// f32 in float, channels in order), colour weight from the table, wk = space * colour,
// sum_c += v_c * wk, wsum += wk (float). Output sum_c / wsum, divided in double and rounded
// once to float: the correctly rounded float quotient (53 >= 2 * 24 + 2), which OpenCL's
// float division does not promise; u8 then rounded half to even and saturated (NaN -> 0).
__kernel void bilateral(CIMG(s), IMG(d), int width, int height, int border, T cval,
                        __global const int* taps, int ntaps, __global const float* table, int bins,
                        float scale) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  __global const T* centre = CROW(T, s, y) + x * CH;
  T c0[CH];
  for (int c = 0; c < CH; ++c) c0[c] = centre[c];
  float sum[CH];
  for (int c = 0; c < CH; ++c) sum[c] = 0.0f;
  float wsum = 0.0f;
  for (int k = 0; k < ntaps; ++k) {
    const int yy = border_index(y + taps[3 * k + 1], height, border);
    const int xx = border_index(x + taps[3 * k], width, border);
    T v[CH];
    if (xx < 0 || yy < 0) {
      for (int c = 0; c < CH; ++c) v[c] = cval;
    } else {
      __global const T* p = CROW(T, s, yy) + xx * CH;
      for (int c = 0; c < CH; ++c) v[c] = p[c];
    }
#ifdef T_F32
    float delta = 0.0f;
    for (int c = 0; c < CH; ++c) delta += fabs(v[c] - c0[c]);
    const float cw = px_bilateral_f32_weight_global(table, bins, scale, delta);
#else
    int delta = 0;
    for (int c = 0; c < CH; ++c) delta += (int)abs((int)v[c] - (int)c0[c]);
    const float cw = table[delta];
#endif
    const float wk = as_float(taps[3 * k + 2]) * cw;
    for (int c = 0; c < CH; ++c) sum[c] += (float)v[c] * wk;
    wsum += wk;
  }
  __global T* out = ROW(T, d, y) + x * CH;
  for (int c = 0; c < CH; ++c) {
    const float r = bil_div(sum[c], wsum);
#ifdef T_F32
    out[c] = r;
#else
    out[c] = px_sat_u8_f32(r);
#endif
  }
}

#if defined(T_U8) && CH == 1 && defined(BIL_R)
// ---------------------------------------------------------------------------------------------
// bilateral_u8c1_tile: u8 x 1, window radius BIL_R = 1..4 (d = 3..9), CUDA's
// bilateral_u8c1_kernel (src/backends/cuda/bilateral.cu, bilateral_u8_packed.hpp) in OpenCL C.
// Why: the per-pixel kernel runs two border_index calls, a global tap and a global table
// read per tap. A work-group of 32 x 8 computes 128 x 32 outputs, a work-item 4 adjacent
// pixels of BIL_ROWS rows, from a tile of the input with its halo in local memory (the
// border rule at load time). Each source row's 4 + 2R samples are read once (three words) and
// serve every output row whose window holds that row. The colour table is replicated per lane
// (entry d of lane l at d * 32 + l, 32 KB): a sub-group's 32 data-dependent lookups hit 32
// distinct banks whatever the image (one copy: ~3.5 wavefronts a lookup on random input,
// CUDA's measurement). The sums are the reference's: taps in row-major order (source rows
// ascending, dx ascending), w = space * colour, sum += v * w, wsum += w, each rounded once.
#define BIL_TX 32
#define BIL_TY 8
#define BIL_ROWS 4
#define BIL_M 4                      // the tile's left margin (any R <= 4)
#define BIL_BW (BIL_TX * 4)          // 128 output columns a work-group
#define BIL_BH (BIL_TY * BIL_ROWS)   // 32 output rows
#define BIL_TW (BIL_BW + 2 * BIL_M)  // 136 tile bytes a row
#define BIL_TWORDS (BIL_TW / 4)      // 34
#define BIL_TH (BIL_BH + 2 * BIL_R)  // tile rows
#define BIL_K (2 * BIL_R + 1)

// Source row T (tile row row0 + T): pixels x0 - 4 .. x0 + 7 (x0 = 4 lx + M in the tile), then
// every tap of every output row whose window holds the row. The samples as ints (the deltas)
// and as floats (the sums), each converted once a row (why: a conversion issues at a fraction
// of the float rate; a tap would need one a pixel). -DBIL_TAPCONV=1 converts at each tap
// instead (PIXFLOW_OCL_BILATERAL=tile-tapconv, kept to time the two on the H100: measured 1680
// against 1871 us in session 22, once).
#if BIL_TAPCONV
#define BIL_SAMPLE_F(i) ((float)v[i])
#else
#define BIL_SAMPLE_F(i) fv[i]
#endif
#if BIL_UNROLL_ROWS
#define BIL_C1_GUARD(T) if ((T) < BIL_ROWS + 2 * BIL_R)
#define BIL_C1_PIN(r)                                          \
  _Pragma("unroll") for (int j = 0; j < 4; ++j) {              \
    BP_PIN(sum[r][j])                                          \
    BP_PIN(wsum[r][j])                                         \
  }
#else
#define BIL_C1_GUARD(T)
#define BIL_C1_PIN(r)
#endif
#define BIL_C1_ROW(T)                                                                     \
  BIL_C1_GUARD(T) {                                                                        \
    const uint w0 = tile[(row0 + (T)) * BIL_TWORDS + lx];                                  \
    const uint w1 = tile[(row0 + (T)) * BIL_TWORDS + lx + 1];                              \
    const uint w2 = tile[(row0 + (T)) * BIL_TWORDS + lx + 2];                              \
    int v[12];                                                                             \
    float fv[12];                                                                          \
    _Pragma("unroll") for (int j = 0; j < 4; ++j) {                                        \
      v[j] = (int)((w0 >> (8 * j)) & 0xffu);                                               \
      v[4 + j] = (int)((w1 >> (8 * j)) & 0xffu);                                           \
      v[8 + j] = (int)((w2 >> (8 * j)) & 0xffu);                                           \
    }                                                                                      \
    _Pragma("unroll") for (int i = 0; i < 12; ++i) fv[i] = (float)v[i];                    \
    _Pragma("unroll") for (int r = 0; r < BIL_ROWS; ++r) {                                 \
      const int dy = (T) - BIL_R - r;                                                      \
      if (dy >= -BIL_R && dy <= BIL_R) {                                                   \
        _Pragma("unroll") for (int dx = -BIL_R; dx <= BIL_R; ++dx) {                       \
          if (dx * dx + dy * dy <= BIL_R * BIL_R) {                                        \
            const float sw = space[(dy + BIL_R) * BIL_K + dx + BIL_R];                     \
            _Pragma("unroll") for (int j = 0; j < 4; ++j) {                                \
              const float wk = sw * lane_lut[abs(v[4 + j + dx] - centre[r][j]) * BIL_TX];  \
              sum[r][j] += BIL_SAMPLE_F(4 + j + dx) * wk;                                  \
              wsum[r][j] += wk;                                                            \
            }                                                                              \
          }                                                                                \
        }                                                                                  \
        BIL_C1_PIN(r)                                                                      \
      }                                                                                    \
    }                                                                                      \
  }

// space: the (2R+1)^2 square of space weights, (dy + R) * (2R+1) + (dx + R) (the window's
// taps only are read). color: the 256 colour weights.
__kernel __attribute__((reqd_work_group_size(BIL_TX, BIL_TY, 1))) void bilateral_u8c1_tile(
    CIMG(s), IMG(d), int width, int height, int border, uchar cval, __constant float* space,
    __global const float* color) {
  __local float lut[256 * BIL_TX];
  __local uint tile[BIL_TH * BIL_TWORDS];
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * BIL_TX + lx;
  for (int i = lid; i < 256 * BIL_TX; i += BIL_TX * BIL_TY) lut[i] = color[i / BIL_TX];
  const int bx0 = get_group_id(0) * BIL_BW, by0 = get_group_id(1) * BIL_BH;
  // The tile: byte (r, c) is pixel (bx0 - M + c, by0 - R + r) by the border rule.
  __local uchar* bytes = (__local uchar*)tile;
  const bool inside = bx0 - BIL_M >= 0 && bx0 - BIL_M + BIL_TW <= width && by0 - BIL_R >= 0 &&
                      by0 - BIL_R + BIL_TH <= height;
  for (int i = lid; i < BIL_TH * BIL_TW; i += BIL_TX * BIL_TY) {
    const int r = i / BIL_TW, c = i - r * BIL_TW;
    const int x = bx0 - BIL_M + c, y = by0 - BIL_R + r;
    uchar v;
    if (inside) {
      v = CROW(uchar, s, y)[x];
    } else {
      const int xx = border_index(x, width, border), yy = border_index(y, height, border);
      v = xx < 0 || yy < 0 ? cval : CROW(uchar, s, yy)[xx];
    }
    bytes[i] = v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int row0 = ly * BIL_ROWS;
  int centre[BIL_ROWS][4];
  float sum[BIL_ROWS][4], wsum[BIL_ROWS][4];
#pragma unroll
  for (int r = 0; r < BIL_ROWS; ++r) {
    const uint w = tile[(row0 + BIL_R + r) * BIL_TWORDS + lx + 1];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      centre[r][j] = (int)((w >> (8 * j)) & 0xffu);
      sum[r][j] = 0.0f;
      wsum[r][j] = 0.0f;
    }
  }
  __local const float* lane_lut = lut + lx;
#if BIL_UNROLL_ROWS
  // PIXFLOW_OCL_BILATERAL=tile-rows: the source rows written out, t a literal in each, the
  // output rows' sums pinned after each row on NVIDIA (BP_ROWS, BP_PIN below: the `packed`
  // kernels' fix; clang 15 left this loop rolled, 480 of the 784 taps' lookups in its PTX with
  // the window's selections at run time; written out and pinned: 72 registers, no spill).
  BP_ROWS(BIL_C1_ROW)
#else
#pragma unroll
  for (int t = 0; t < BIL_ROWS + 2 * BIL_R; ++t) BIL_C1_ROW(t)
#endif
  const int x0 = bx0 + 4 * lx;
#pragma unroll
  for (int r = 0; r < BIL_ROWS; ++r) {
    const int y = by0 + row0 + r;
    if (y >= height) break;
    __global uchar* out = ROW(uchar, d, y);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (x0 + j < width)
        out[x0 + j] = px_sat_u8_f32(bil_div(sum[r][j], wsum[r][j]));
  }
}
#endif

#if defined(BIL_R) && defined(BIL_RW) && ((defined(T_U8) && CH > 1) || (defined(T_F32) && CH == 1))
// ---------------------------------------------------------------------------------------------
// The `packed` schedule (PIXFLOW_OCL_BILATERAL=packed[,RW[,COPIES]]): CUDA's
// bilateral_u8c3_kernel and bilateral_f32c1_kernel (src/backends/cuda/bilateral.cu,
// bilateral_u8_packed.hpp, bilateral_f32_lookup.hpp) in OpenCL C, for u8 with 2..4 channels and
// f32 with one, window radius BIL_R = 1..4. A work-group of 32 x 8 work-items computes 32 x
// (8 BIL_RW) outputs, a work-item one pixel of BIL_RW rows, from a tile of the input with its
// halo in local memory (the border rule applied at load time). Each source row's 2R + 1
// samples are read from the tile once and serve every output row whose window holds that
// row. One tile a work-group: CUDA's blocks walk several block rows to spread the table's
// construction (FP64 exp for f32); here the tables come from the host and a fill is 16 (f32)
// or 24 (u8 x 3, 8 copies) loads and stores a work-item against ~5000-7000 instructions of
// taps.
// The sums are the reference's: per output, taps in row-major order (source rows ascending,
// dx ascending), w = space * colour, sum_c += v_c * w, wsum += w, each rounded once.
#define BP_TX 32
#define BP_TY 8
#define BP_BH (BP_TY * BIL_RW)        // output rows a tile
#define BP_TW (BP_TX + 2 * BIL_R)     // tile columns
#define BP_TH (BP_BH + 2 * BIL_R)     // tile rows
#define BP_K (2 * BIL_R + 1)
// The space weight of tap (dy, dx): sp[dy^2 + dx^2], the kernel's registers (a weight depends on
// the squared distance only: R = 4 has 10 distinct weights for its 49 taps). Why not the
// (2R+1)^2 square in __constant memory as bilateral_u8c1_tile: each of the 49 would be a load
// into a register of its own (CUDA reads them as kernel-parameter operands, no register),
// held across the unrolled body (clang 15 + ptxas: 127 registers without the table lookups).
#define BP_SPACE(dy, dx) sp[(dy) * (dy) + (dx) * (dx)]
#define BP_LOAD_SPACE()                                            \
  float sp[BIL_R * BIL_R + 1];                                     \
  _Pragma("unroll") for (int i = 0; i <= BIL_R * BIL_R; ++i) sp[i] = space[i];
#if defined(T_U8)
// u8 x CH (2..4): the tile holds one 32-bit word a pixel (c0, c1, .., 0), so a tap's delta
// |c0 - c0'| + |c1 - c1'| + .. (the reference's integer L1 sum; the zero bytes add 0) is one
// sum of absolute byte differences: PTX vabsdiff4 with accumulation on NVIDIA
// (-DPIXFLOW_NV_PTX, CUDA's __vsadu4: one VABSDIFF4), abs_diff on uchar4 elsewhere. The
// colour table (255 CH + 1 floats) is replicated BIL_COPIES times, entry d of copy c at
// d * COPIES + c, work-item lx reading copy lx % COPIES: a sub-group's 32 data-dependent
// lookups fall in COPIES groups of banks (CUDA replicates it 32 times, one copy a lane,
// 98 KB for CH = 3: more than OpenCL's 48 KiB a work-group; COPIES = 8 takes 24 KB).
#define BP_DELTAS (255 * CH + 1)

inline uint bil_sad(uint a, uint b) {
#ifdef PIXFLOW_NV_PTX
  uint r;
  __asm__("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(0u));
  return r;
#else
  const uchar4 d = abs_diff(as_uchar4(a), as_uchar4(b));
  return (uint)d.s0 + (uint)d.s1 + (uint)d.s2 + (uint)d.s3;
#endif
}

// Byte c of w as a float without a conversion instruction: the byte in the low mantissa of
// 2^23 (0x4B0000bb), minus 2^23 (exact).
inline float bil_byte_float(uint w, int c) {
  return as_float(0x4B000000u | ((w >> (8 * c)) & 0xffu)) - 8388608.0f;
}

// Source row T of the work-item's window rows (tile row row0 + T): pixels x - R .. x + R as
// words and their channels as floats, then every tap of every output row whose window holds
// it.
#define BP_U8_ROW(T)                                                                      \
  if ((T) < BIL_RW + 2 * BIL_R) {                                                          \
    __local const uint* row = tile + (row0 + (T)) * BP_TW + lx;                            \
    uint p[BP_K];                                                                          \
    float v[BP_K][CH];                                                                     \
    _Pragma("unroll") for (int k = 0; k < BP_K; ++k) {                                     \
      p[k] = row[k];                                                                       \
      _Pragma("unroll") for (int c = 0; c < CH; ++c) v[k][c] = bil_byte_float(p[k], c);   \
    }                                                                                      \
    _Pragma("unroll") for (int r = 0; r < BIL_RW; ++r) {                                   \
      const int dy = (T) - BIL_R - r;                                                      \
      if (dy >= -BIL_R && dy <= BIL_R) {                                                   \
        _Pragma("unroll") for (int dx = -BIL_R; dx <= BIL_R; ++dx) {                       \
          if (dx * dx + dy * dy <= BIL_R * BIL_R) {                                        \
            const float w =                                                                \
                BP_SPACE(dy, dx) * lane_lut[bil_sad(p[dx + BIL_R], centre[r]) * BIL_COPIES]; \
            _Pragma("unroll") for (int c = 0; c < CH; ++c) sum[r][c] += v[dx + BIL_R][c] * w; \
            wsum[r] += w;                                                                  \
          }                                                                                \
        }                                                                                  \
        _Pragma("unroll") for (int c = 0; c < CH; ++c) BP_PIN(sum[r][c])                   \
        BP_PIN(wsum[r])                                                                    \
      }                                                                                    \
    }                                                                                      \
  }

// space: the space weight of each squared distance 0 .. R^2 (those of the window's taps are
// read). color: the 255 CH + 1 colour weights.
__kernel __attribute__((reqd_work_group_size(BP_TX, BP_TY, 1))) void bilateral_u8cn_tile(
    CIMG(s), IMG(d), int width, int height, int border, uchar cval, __constant float* space,
    __global const float* color) {
  __local float lut[BP_DELTAS * BIL_COPIES];
  __local uint tile[BP_TH * BP_TW];
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * BP_TX + lx;
  for (int i = lid; i < BP_DELTAS * BIL_COPIES; i += BP_TX * BP_TY) lut[i] = color[i / BIL_COPIES];
  __local const float* lane_lut = lut + (lx & (BIL_COPIES - 1));
  uint cword = 0;  // the constant border's pixel word
  for (int c = 0; c < CH; ++c) cword |= (uint)cval << (8 * c);
  const int bx0 = get_group_id(0) * BP_TX, row0 = ly * BIL_RW;
  BP_LOAD_SPACE()
  {
    const int by0 = get_group_id(1) * BP_BH;
    // The tile: word (r, c) is pixel (bx0 - R + c, by0 - R + r) by the border rule.
    const bool inside = bx0 - BIL_R >= 0 && bx0 - BIL_R + BP_TW <= width && by0 - BIL_R >= 0 &&
                        by0 - BIL_R + BP_TH <= height;
    for (int r = ly; r < BP_TH; r += BP_TY) {
      const int y = by0 - BIL_R + r;
      for (int c = lx; c < BP_TW; c += BP_TX) {
        const int x = bx0 - BIL_R + c;
        uint w = 0;
        if (inside) {
          __global const uchar* p = CROW(uchar, s, y) + x * CH;
          for (int ch = 0; ch < CH; ++ch) w |= (uint)p[ch] << (8 * ch);
        } else {
          const int xx = border_index(x, width, border), yy = border_index(y, height, border);
          if (xx < 0 || yy < 0) {
            w = cword;
          } else {
            __global const uchar* p = CROW(uchar, s, yy) + xx * CH;
            for (int ch = 0; ch < CH; ++ch) w |= (uint)p[ch] << (8 * ch);
          }
        }
        tile[r * BP_TW + c] = w;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint centre[BIL_RW];
    float sum[BIL_RW][CH], wsum[BIL_RW];
#pragma unroll
    for (int r = 0; r < BIL_RW; ++r) {
      centre[r] = tile[(row0 + BIL_R + r) * BP_TW + BIL_R + lx];
      wsum[r] = 0.0f;
#pragma unroll
      for (int c = 0; c < CH; ++c) sum[r][c] = 0.0f;
    }
    BP_ROWS(BP_U8_ROW)
    const int x = bx0 + lx;
    if (x < width) {
#pragma unroll
      for (int r = 0; r < BIL_RW; ++r) {
        const int y = by0 + row0 + r;
        if (y >= height) break;
        __global uchar* out = ROW(uchar, d, y) + x * CH;
#pragma unroll
        for (int c = 0; c < CH; ++c) out[c] = px_sat_u8_f32(bil_div(sum[r][c], wsum[r]));
      }
    }
  }
}

#else  // T_F32, CH == 1
// f32 x 1: a tile of floats; the colour weight from the interpolated pair table of
// src/base/bilateral_f32.hpp (T[i] at 2i, D[i] at 2i + 1, i = 0..4096: 32.8 KB), copied into
// local memory by each work-group, read by bil_f32_weight: the rule of rules/bilateral.h
// without a float <-> int conversion (they issue at a fraction of the float rate: two a tap
// would cost more than the rest of the tap), as CUDA's bilateral_f32_lookup.hpp:
//   a = fmin(alpha, N), alpha = delta * scale: fmin gives N for a NaN alpha, and inf or
//       alpha >= N become N, whose pair {T[N], D[N]} = {0, 0} gives the rule's 0 (0 + 0 * 0);
//   t = 2^23 + a rounded to nearest = 2^23 + nearest(a) exactly (0 <= a <= N < 2^22: floats in
//       [2^23, 2^24) are spaced 1); r = t - 2^23 = nearest(a), exact; floor(a) = r - 1 where
//       r > a, else r; i = bits(t) - bits(2^23) minus that 1; f = a - floor(a), exact;
//   weight = T[i] + f * D[i], each rounded once, as the rule (i = int(alpha) = floor(alpha)).
#define BP_BINS 4096  // bilateral_f32::bins(1)

inline float bil_f32_weight(__local const float2* tab, float scale, float delta) {
  const float a = fmin(delta * scale, (float)BP_BINS);
  const float t = a + 0x1p23f;
  const float r = t - 0x1p23f;
  const int up = r > a;
  const float fl = up ? r - 1.0f : r;
  const float2 e = tab[(as_int(t) - 0x4B000000) - up];
  return e.x + (a - fl) * e.y;
}

// Source row T (tile row row0 + T): its 2R + 1 samples, then every tap of every output row
// whose window holds it. The reference: delta = 0 + |v - c| (= |v - c|), then the table.
#define BP_F32_ROW(T)                                                                     \
  if ((T) < BIL_RW + 2 * BIL_R) {                                                          \
    __local const float* row = tile + (row0 + (T)) * BP_TW + lx;                           \
    float v[BP_K];                                                                         \
    _Pragma("unroll") for (int k = 0; k < BP_K; ++k) v[k] = row[k];                        \
    _Pragma("unroll") for (int r = 0; r < BIL_RW; ++r) {                                   \
      const int dy = (T) - BIL_R - r;                                                      \
      if (dy >= -BIL_R && dy <= BIL_R) {                                                   \
        _Pragma("unroll") for (int dx = -BIL_R; dx <= BIL_R; ++dx) {                       \
          if (dx * dx + dy * dy <= BIL_R * BIL_R) {                                        \
            const float cw = bil_f32_weight(tab, scale, fabs(v[dx + BIL_R] - centre[r]));  \
            const float w = BP_SPACE(dy, dx) * cw;                                         \
            sum[r] += v[dx + BIL_R] * w;                                                   \
            wsum[r] += w;                                                                  \
          }                                                                                \
        }                                                                                  \
        BP_PIN(sum[r])                                                                     \
        BP_PIN(wsum[r])                                                                    \
      }                                                                                    \
    }                                                                                      \
  }

__kernel __attribute__((reqd_work_group_size(BP_TX, BP_TY, 1))) void bilateral_f32c1_tile(
    CIMG(s), IMG(d), int width, int height, int border, float cval, __constant float* space,
    __global const float2* table, float scale) {
  __local float2 tab[BP_BINS + 1];
  __local float tile[BP_TH * BP_TW];
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * BP_TX + lx;
  for (int i = lid; i <= BP_BINS; i += BP_TX * BP_TY) tab[i] = table[i];
  const int bx0 = get_group_id(0) * BP_TX, row0 = ly * BIL_RW;
  BP_LOAD_SPACE()
  {
    const int by0 = get_group_id(1) * BP_BH;
    const bool inside = bx0 - BIL_R >= 0 && bx0 - BIL_R + BP_TW <= width && by0 - BIL_R >= 0 &&
                        by0 - BIL_R + BP_TH <= height;
    for (int r = ly; r < BP_TH; r += BP_TY) {
      const int y = by0 - BIL_R + r;
      for (int c = lx; c < BP_TW; c += BP_TX) {
        const int x = bx0 - BIL_R + c;
        float v;
        if (inside) {
          v = CROW(float, s, y)[x];
        } else {
          const int xx = border_index(x, width, border), yy = border_index(y, height, border);
          v = xx < 0 || yy < 0 ? cval : CROW(float, s, yy)[xx];
        }
        tile[r * BP_TW + c] = v;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float centre[BIL_RW], sum[BIL_RW], wsum[BIL_RW];
#pragma unroll
    for (int r = 0; r < BIL_RW; ++r) {
      centre[r] = tile[(row0 + BIL_R + r) * BP_TW + BIL_R + lx];
      sum[r] = 0.0f;
      wsum[r] = 0.0f;
    }
    BP_ROWS(BP_F32_ROW)
    const int x = bx0 + lx;
    if (x < width) {
#pragma unroll
      for (int r = 0; r < BIL_RW; ++r) {
        const int y = by0 + row0 + r;
        if (y >= height) break;
        ROW(float, d, y)[x] = bil_div(sum[r], wsum[r]);
      }
    }
  }
}
#endif
#endif
