// The per-thread body of the CUDA bilateral filter for u8 x 1 and windows of radius 1..4
// (d = 3, 5, 7, 9; bilateral.cu's bilateral_u8c1_kernel), written as host + device code so
// that the CPU test (tests/bilateral_packed_test.cpp) runs exactly this code on tiles and
// tables it builds itself.
//
// The rule is the reference's (src/ref/bilateral.cpp): for each output pixel and each window
// offset k in row-major order, delta = |v - c|, w = space[k] * colour[delta] (float),
// sum += float(v) * w, wsum += w (float, separately rounded, no FMA); out = sum / wsum rounded.
// Only the data movement and the instruction count per tap differ from a plain loop:
// - A thread computes 4 adjacent pixels (x0 .. x0 + 3) of kRows output rows. Per source row
//   of its window it reads three shared words (pixels x0 - 4 .. x0 + 7) and turns each of the
//   4 + 2R samples it needs into a "sample word" 0x4700vv00 (one PRMT): the byte v in bits
//   8..15 under the exponent of 2^15, so that the word is the float 2^15 + v (v as a float is
//   one exact subtraction) and, against the centre's word, the integer difference is
//   256 (v - c). Each sample serves every output row whose window contains that source row.
// - The colour table is read at data-dependent indices. With one copy, a warp's 32 random
//   deltas collide in the 32 shared-memory banks (~3.5 wavefronts per load on random input);
//   here every lane has its own copy in its own bank: entry (delta, lane) at byte
//   delta * 256 + lane * 4. That address is one VABSDIFF.U32 with accumulation per tap and
//   output: |sample word - centre word| + lane * 4 (__usad), conflict-free whatever the image.
//   (Session 11's body made the deltas of 4 outputs with one VABSDIFF4 and each address with a
//   PRMT: 1.25 integer instructions per tap and output, and 2R - 2 shifted words per row.)
// - The centre tap's delta is 0 for every pixel: its weight space[centre] * colour[0] is one
//   product per thread (the same float as the reference's), no lookup.
// - The weight space[k] * colour is the reference's separately rounded product; a product
//   table per tap (or per class of equal space weights: 9 at d = 9) cannot be replicated per
//   lane (32 KB each), but the colour table's rows had room for one: the class with the most
//   taps reads its product (see kLutPitch), no FMUL.
// Per tap and output pixel: 1 VABSDIFF + 1 LDS + 2 FMUL + 2 FADD = 6 instructions, 5 for the
// product class's taps.
// Per source row and thread: 3 LDS, (4 + 2R) x (PRMT + FADD) for the sample words and floats.
// d = 9 (49 taps), kRows = 4: 40 x 6 + 8 x 5 + 3 = 283 per pixel, + the rows' samples (the
// outer rows need fewer: 112 PRMT + 112 FADD + 36 LDS a thread) 16, + centre words, division,
// rounding ~ 25: SASS (sm_90, R = 4) 5188 instructions a thread from the tile barrier to the
// stores, 324 a pixel (session 11's body: 5627, 352).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/packed_u16x2.hpp"
#include "src/backends/cuda/rounded_f32.hpp"

namespace pixflow::cuda::bilateral_u8 {

using px::u32;

// Launch shape: 32 x kTY threads, each 4 pixels (one word) of kRows rows: 128 x 32 outputs
// per block. The colour table takes 64 KB of shared memory per block, so three blocks of
// 256 threads fit an SM (228 KB): registers <= 80 per thread (__launch_bounds__(256, 3)).
constexpr int kTX = 32, kTY = 8, kPX = 4, kRows = 4;
constexpr int kMaxRadius = 4;
constexpr int kBW = kTX * kPX;                // 128 output columns per block
constexpr int kBH = kTY * kRows;              // 32 output rows per block
constexpr int kTileW = kBW + 2 * kMaxRadius;  // tile bytes per row: 4 left, 4 right
constexpr int kTileWords = kTileW / 4;        // 34
template <int R>
constexpr int kTileH = kBH + 2 * R;
// Colour table: entry (delta, lane) at float index delta * kLutPitch + lane (the address is
// delta * 256 + lane * 4 bytes: floats 0..31 of each 64-float row). Floats 32..63 of the row
// (bytes 128..255: the same banks, lane l's in bank l) hold the product table: lane l's copy
// of space * colour[delta] for the taps of the class (same dx^2 + dy^2, so the same space
// weight) with the most taps, read at the colour entry's offset + kProductOffset (an LDS
// immediate): those taps skip their FMUL (d = 9: 8 of 48; the half was unused before).
constexpr int kLutPitch = 64;
constexpr int kLutFloats = 256 * kLutPitch;
constexpr int kProductOffset = kTX * 4;  // bytes from entry (delta, lane) to its product

// The tile: byte (r, i) (row pitch kTileW) is image pixel (bx0 - 4 + i, by0 - R + r) for the
// block whose first output is (bx0, by0), by the border rule. Thread (tx, ty) computes pixels
// bx0 + 4 tx .. + 3 of rows by0 + ty * kRows .. + kRows - 1.

/// The reference's saturate_cast<u8>(double(q)) for a float quotient: NaN -> 0 (a NaN weight:
/// a sigma so small that 0 x coefficient is NaN), else rounded half to even and clamped.
/// Clamping first gives the same byte; fmax / fmin (IEEE maxNum / minNum) map NaN to 0.
PIXFLOW_HD u32 round_u8(float q) {
#if defined(__CUDA_ARCH__)
  return u32(__float2int_rn(fminf(fmaxf(q, 0.0f), 255.0f)));
#else
  return u32(std::nearbyint(std::fmin(std::fmax(q, 0.0f), 255.0f)));
#endif
}

/// Byte i of w as a float: the byte in the low mantissa of 2^23 (0x4B0000bb), minus 2^23.
PIXFLOW_HD float byte_float(u32 w, int i) {
  return add_rn(bits_float(px::byte_perm(w, 0x4B000000u, 0x7440u | u32(i))), -8388608.0f);
}

/// The sample word of byte i of w: 0x47 00 bb 00, the float 2^15 + b (2^15's ulp is 2^-8, so
/// bits 8..15 of the mantissa weigh 1 .. 128). PRMT: byte 0 and 2 from 0x47000000's zero
/// byte 4, byte 1 the sample, byte 3 the exponent byte 7.
PIXFLOW_HD u32 sample_word(u32 w, int i) {
  return px::byte_perm(w, 0x47000000u, 0x7404u | (u32(i) << 4));
}

/// The sample word's byte as a float: (2^15 + b) - 2^15, exact.
PIXFLOW_HD float sample_float(u32 s) {
  return add_rn(bits_float(s), -32768.0f);
}

/// |a - b| + c in 32 bits (one VABSDIFF.U32 with accumulation on the device).
PIXFLOW_HD u32 usad(u32 a, u32 b, u32 c) {
#if defined(__CUDA_ARCH__)
  return __usad(a, b, c);
#else
  return (a > b ? a - b : b - a) + c;
#endif
}

/// Byte offset of colour-table entry (|v - c|, lane) from two sample words: their difference
/// is 256 (v - c) (the other bytes are equal), so |s - centre| + lane4 = delta * 256 + lane * 4.
PIXFLOW_HD u32 lut_offset_words(u32 s, u32 centre, u32 lane4) {
  return usad(s, centre, lane4);
}

PIXFLOW_HD float lut_at(const float* lut, u32 byte_offset) {
  return *reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(lut) + byte_offset);
}

/// Index of window offset (dy, dx) in the reference's order (rows outer, columns inner, the
/// offsets with dy^2 + dx^2 <= R^2). Constant-folded in the unrolled loops below.
PIXFLOW_HD constexpr int tap_index(int r, int dy, int dx) {
  int k = 0;
  for (int i = -r; i <= r; ++i)
    for (int j = -r; j <= r; ++j) {
      if (i * i + j * j > r * r) continue;
      if (i == dy && j == dx) return k;
      ++k;
    }
  return -1;
}

/// Taps of a radius-r window at squared distance r2.
PIXFLOW_HD constexpr int taps_at(int r, int r2) {
  int n = 0;
  for (int i = -r; i <= r; ++i)
    for (int j = -r; j <= r; ++j) n += i * i + j * j == r2;
  return n;
}

/// The product table's class for radius R: the squared distance in 1 .. R^2 with the most
/// taps, the smallest of equals (R = 1, 2: 1; R = 3, 4: 5, 8 taps: (+-1, +-2), (+-2, +-1)).
template <int R>
constexpr int kProductR2 = [] {
  int best = 1;
  for (int r2 = 2; r2 <= R * R; ++r2)
    if (taps_at(R, r2) > taps_at(R, best)) best = r2;
  return best;
}();

/// The reference's table index of a tap of the product class (any: they share the weight).
template <int R>
constexpr int kProductTap = [] {
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx)
      if (dx * dx + dy * dy == kProductR2<R>) return tap_index(R, dy, dx);
  return -1;
}();

/// Float f of the table as the kernel fills it: row d = f / kLutPitch, float q = f % kLutPitch
/// of the row: colour[d] for q < kTX, space[kProductTap<R>] * colour[d] (the reference's
/// product, rounded once) for q >= kTX. `colour` and `space` are the reference's tables.
template <int R>
PIXFLOW_HD float lut_value(const float* colour, const float* space, int f) {
  const float c = colour[f / kLutPitch];
  return f % kLutPitch < kTX ? c : mul_rn(space[kProductTap<R>], c);
}

/// Calls f(std::integral_constant<int, i>) for i = I .. N - 1: loops whose indices must be
/// compile-time constants (register arrays, the tap's table index, which rows a source row
/// serves). `#pragma unroll` left the 12-row loop rolled, with the selections at run time.
template <int I, int N, class F>
PIXFLOW_HD void static_for(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    static_for<I + 1, N>(f);
  }
}

/// The thread's kRows output words. `tile` as above (words, pitch kTileWords), `lut` the
/// per-lane colour and product table (lut_value<R>), `space` the reference's space weights in tap
/// order, tx the thread's word column, row0 its first output row in the block, lane4 = 4 * (lane of
/// the warp).
template <int R>
PIXFLOW_HD void bilateral_rows(const u32* tile, const float* lut, const float* space, int tx,
                               int row0, u32 lane4, u32 (&out)[kRows]) {
  static_assert(R >= 1 && R <= kMaxRadius);
  // Sample words of the centres: pixels x0 .. x0 + 3 (word tx + 1 of tile row row0 + R + r).
  u32 centre[kRows][4];
  float sum[kRows][4], wsum[kRows][4];
  static_for<0, kRows>([&](auto r) {
    const u32 word = tile[(row0 + R + r) * kTileWords + tx + 1];
    static_for<0, 4>([&](auto j) {
      centre[r][j] = sample_word(word, j);
      sum[r][j] = wsum[r][j] = 0.0f;
    });
  });
  // The centre tap: delta 0 (lane's entry 0), the reference's product space[k] * colour[0].
  const float w_centre = mul_rn(space[tap_index(R, 0, 0)], lut_at(lut, lane4));

  // Source rows in order, and within a row the samples left to right: for every output its
  // window rows come in ascending dy and within a row dx = i - R - j ascends with i: the
  // reference's summation order. Each sample word and float is live only while its taps run.
  static_for<0, kRows + 2 * R>([&](auto t) {
    const u32* row = tile + (row0 + t) * kTileWords + tx;
    const u32 a = row[0], b = row[1], c = row[2];  // pixels x0 - 4 .. x0 + 7
    // Sample i: pixel x0 - R + i, i < 4 + 2R.
    static_for<0, 4 + 2 * R>([&](auto i) {
      constexpr int e = 4 - R + i;  // byte of (a, b, c)
      const u32 s = sample_word(e < 4 ? a : e < 8 ? b : c, e % 4);
      const float v = sample_float(s);
      static_for<0, kRows>([&](auto r) {
        constexpr int dy = t - R - r;
        if constexpr (dy >= -R && dy <= R) {
          static_for<0, 4>([&](auto j) {
            constexpr int dx = i - R - j;
            if constexpr (dx >= -R && dx <= R && dx * dx + dy * dy <= R * R) {
              float w;
              if constexpr (dx == 0 && dy == 0) {
                w = w_centre;
              } else {
                const u32 off = lut_offset_words(s, centre[r][j], lane4);
                if constexpr (dx * dx + dy * dy == kProductR2<R>) {
                  w = lut_at(lut, off + kProductOffset);
                } else {
                  w = mul_rn(space[tap_index(R, dy, dx)], lut_at(lut, off));
                }
              }
              sum[r][j] = add_rn(sum[r][j], mul_rn(v, w));
              wsum[r][j] = add_rn(wsum[r][j], w);
            }
          });
        }
      });
    });
  });
  static_for<0, kRows>([&](auto r) {
    u32 o = 0;
    static_for<0, 4>([&](auto j) { o |= round_u8(div_rn(sum[r][j], wsum[r][j])) << (8 * j); });
    out[r] = o;
  });
}

// ---- u8 x 3 -------------------------------------------------------------------------------
// bilateral_u8c3_kernel: the same scheme for three channels. The tile holds one 32-bit word
// per pixel (c0, c1, c2, 0), so a tap's delta |c0 - c0'| + |c1 - c1'| + |c2 - c2'| (the
// reference's integer L1 sum) is one VABSDIFF4 with accumulation (the zero bytes add 0),
// and the address of entry (delta, lane) of the per-lane colour table (766 deltas x 32
// lanes, 98 KB) one LEA: delta * 128 + lane * 4. A thread computes one pixel of kRows3
// rows; per source row it reads its 2R + 1 pixel words (lanes on consecutive words: no
// bank conflicts) and makes their 3 (2R + 1) floats.
// Per tap and output: VABSDIFF4 + LEA + LDS + FMUL (space x colour) + 3 x (FMUL + FADD) +
// FADD = 11; d = 9: 539, + per source row (9 LDS + 54 for the floats) x 16 rows / 8
// outputs = 126, + centres, three divisions, roundings, stores ~ 25: ~690 per pixel.
constexpr int kTY3 = 8, kRows3 = 8;
constexpr int kBW3 = kTX;                       // 32 output pixels per block row
constexpr int kBH3 = kTY3 * kRows3;             // 64 output rows per block
constexpr int kTileW3 = kBW3 + 2 * kMaxRadius;  // 40 pixel words per tile row
template <int R>
constexpr int kTileH3 = kBH3 + 2 * R;
constexpr int kLut3Deltas = 3 * 255 + 1;        // deltas 0 .. 765
constexpr int kLut3Floats = kLut3Deltas * kTX;  // entry (delta, lane) at delta * 32 + lane

// The tile: word (r, i) (pitch kTileW3) is image pixel (bx0 - 4 + i, by0 - R + r) as
// (c0, c1, c2, 0), by the border rule. Thread (tx, ty) computes pixel bx0 + tx of rows
// by0 + ty * kRows3 .. + kRows3 - 1.

/// |a0 - b0| + |a1 - b1| + |a2 - b2| + |a3 - b3| (VABSDIFF4 accumulating).
PIXFLOW_HD u32 sad4(u32 a, u32 b) {
#if defined(__CUDA_ARCH__)
  return __vsadu4(a, b);
#else
  u32 r = 0;
  for (int i = 0; i < 4; ++i) {
    const int x = int((a >> (8 * i)) & 0xffu), y = int((b >> (8 * i)) & 0xffu);
    r += u32(x > y ? x - y : y - x);
  }
  return r;
#endif
}

/// The thread's kRows3 output pixels as words (c0, c1, c2, 0). `tile` as above, `lut` the
/// per-lane colour table (kLut3Floats), `space` the space weights in tap order.
template <int R>
PIXFLOW_HD void bilateral_rows_c3(const u32* tile, const float* lut, const float* space, int tx,
                                  int row0, u32 lane4, u32 (&out)[kRows3]) {
  static_assert(R >= 1 && R <= kMaxRadius);
  u32 centre[kRows3];
  float sum[kRows3][3], wsum[kRows3];
  static_for<0, kRows3>([&](auto r) {
    centre[r] = tile[(row0 + R + r) * kTileW3 + kMaxRadius + tx];
    wsum[r] = 0.0f;
    static_for<0, 3>([&](auto c) { sum[r][c] = 0.0f; });
  });
  // Source rows in ascending order, dx ascending within a row: the reference's order.
  static_for<0, kRows3 + 2 * R>([&](auto t) {
    const u32* row = tile + (row0 + t) * kTileW3 + kMaxRadius + tx;
    u32 p[2 * R + 1];
    float v[2 * R + 1][3];
    static_for<-R, R + 1>([&](auto dx) {
      p[dx + R] = row[dx];
      static_for<0, 3>([&](auto c) { v[dx + R][c] = byte_float(p[dx + R], c); });
    });
    static_for<0, kRows3>([&](auto r) {
      constexpr int dy = t - R - r;
      if constexpr (dy >= -R && dy <= R) {
        static_for<-R, R + 1>([&](auto dx) {
          if constexpr (dx * dx + dy * dy <= R * R) {
            const u32 d = sad4(p[dx + R], centre[r]);
            const float w = mul_rn(space[tap_index(R, dy, dx)], lut_at(lut, (d << 7) + lane4));
            static_for<0, 3>(
                [&](auto c) { sum[r][c] = add_rn(sum[r][c], mul_rn(v[dx + R][c], w)); });
            wsum[r] = add_rn(wsum[r], w);
          }
        });
      }
    });
  });
  static_for<0, kRows3>([&](auto r) {
    u32 o = 0;
    static_for<0, 3>([&](auto c) { o |= round_u8(div_rn(sum[r][c], wsum[r])) << (8 * c); });
    out[r] = o;
  });
}

}  // namespace pixflow::cuda::bilateral_u8
