// The float-tile schedule of the CUDA filter2d 5x5 kernel (filter2d.cu), as __host__ __device__
// code so that tests/filter2d_test.cpp runs the same tile layout and arithmetic on the CPU
// against the plain rule.
//
// Why a float tile: the strip kernel (filter2d_strip.hpp) keeps a window of converted input
// rows in registers and rotates KH accumulator rows; the rotation is unrolled KH times, so at
// 5x5 with 8 outputs a thread its hot loop is ~2500 straight-line instructions (~40 KB of SASS,
// twice: guarded and unguarded groups) at 158-167 registers (3 blocks, 12 warps an SM). It ran
// at ~0.45 instructions per scheduler and clock (300 us at 8192^2 u8x1 for ~60 instructions an
// output): three warps a scheduler streaming 80 KB of code do not stay in the instruction
// caches, and 12 warps hide little. Here the block converts its input tile to float once, into
// shared memory; a thread then computes its C outputs of one row from KH rows of C + (KW-1)*CN
// floats read with 16-byte loads. Nothing rotates, so the row loop is rolled (~450
// instructions, ~7 KB at C = 8) and needs ~60 registers.
//
// Tile layout: logical column L of tile row t holds input sample xs0 + L of input row
// y0 - KH/2 + t, xs0 = e0 - kHalo (e0 = the block's first output sample, kHalo = (K/2)*CN);
// it is stored at float F = L + kLead of the row, with 16-byte chunks permuted by
// ftile_swizzle. The loader reads the input in 4-sample groups aligned in the image row
// (group m = samples xs0 - kSh + 4m .. +3, one 4-byte load for u8, 16-byte for f32); the
// group lands at F = 4m - kSh + kLead, i.e. two 8-byte halves when kSh = 2 (5x5: kHalo = 2*CN).
// Thread tx's window (samples e0 + C*tx - kHalo ..) starts at F = kLead + C*tx: chunk-aligned.
//
// Swizzle: thread windows are C floats (kS = C/4 chunks) apart, so the 8 lanes of a 16-byte
// load phase would hit 8/kS distinct bank groups (2- or 4-way conflicts); chunk p is stored at
// p ^ ((p >> 3) & (kS - 1)), which spreads them over all 8 (tests check it under the
// quarter-warp model), permutes chunks only inside aligned groups of 8 (the row pitch is a
// multiple of 32 floats), and leaves chunks p and p + 32k with the same XOR (the loader's
// groups m and m + 32k are one immediate offset apart).
#pragma once

#include <cstdint>

#include "src/backends/cuda/filter2d_strip.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::f2d {

// Launch shape of the float-tile kernel: 32 x 8 threads; a warp computes C outputs a lane of
// one output row at a time (rows ty, ty + 8, ...), so its 16-byte loads cover whole rows.
constexpr int kFtileTX = 32, kFtileTY = 8, kFtileThreads = kFtileTX * kFtileTY;

template <int CN, int K, int C>
struct FtileGeom {
  static constexpr int kAx = K / 2;
  static constexpr int kHalo = kAx * CN;    // samples of the window left and right of an output
  static constexpr int kBW = kFtileTX * C;  // output samples per block row
  static constexpr int kS = C / 4;          // chunks between neighbouring threads' windows
  static constexpr int kSh = (4 - kHalo % 4) % 4;  // xs0 - (xs0 rounded down to 4)
  static constexpr int kLead = kSh == 0 ? 0 : 4;   // F = L + kLead: group 0 starts at F >= 0
  static constexpr int kW = C + 2 * kHalo;         // window samples of one thread's row
  static constexpr int kWC = (kW + 3) / 4;         // 16-byte chunks a thread reads per row
  static constexpr int kGroups = (kSh + kBW + 2 * kHalo + 3) / 4;  // 4-sample groups a row
  static constexpr int kFull = kGroups / kFtileTX;  // groups every lane loads per row
  static constexpr int kRest = kGroups - kFull * kFtileTX;
  static constexpr int kUsed1 = kLead - kSh + 4 * kGroups;  // floats the loader writes
  static constexpr int kUsed2 = kLead + 4 * (kS * (kFtileTX - 1) + kWC);  // floats read
  static constexpr int kPitch = ((kUsed1 > kUsed2 ? kUsed1 : kUsed2) + 31) / 32 * 32;
  static_assert(kS == 1 || kS == 2 || kS == 4, "C must be 4, 8 or 16");
  static_assert(kSh % 2 == 0, "group halves must land on 8-byte boundaries (even kHalo)");
};

/// Position (in floats from the row start) of row float F after the chunk swizzle.
template <class G>
PIXFLOW_HD int ftile_swizzle(int f) {
  const int p = f >> 2;
  return ((p ^ ((p >> 3) & (G::kS - 1))) << 2) | (f & 3);
}

/// Where float F of tile row t lives.
template <class G>
PIXFLOW_HD int ftile_at(int t, int f) {
  return t * G::kPitch + ftile_swizzle<G>(f);
}

PIXFLOW_HD void ftile_store2(float* p, float a, float b) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<float2*>(p) = make_float2(a, b);
#else
  p[0] = a;
  p[1] = b;
#endif
}

/// Where group m (the 4 samples xs0 - kSh + 4m .. +3) lives in a tile row: its first float
/// at lo, and, when the group is not chunk-aligned (kSh = 2), its last two at hi (lo + 2 before
/// the swizzle); when kSh = 0, lo holds all four (hi = lo + 2). Groups m and m + 32k are 128k
/// floats apart (their chunks 32k apart keep the same XOR), which the kernel's loader relies on.
template <class G>
PIXFLOW_HD void ftile_group_at(int m, int& lo, int& hi) {
  const int f = 4 * m - G::kSh + G::kLead;
  lo = ftile_swizzle<G>(f);
  hi = ftile_swizzle<G>(f + 2);
}

/// Stores the 4 floats of a group at row offsets lo / hi (ftile_group_at) from `row`: one
/// 16-byte store when the group is chunk-aligned (kSh = 0), else two 8-byte halves.
template <class G>
PIXFLOW_HD void ftile_put_group(float* row, int lo, int hi, float v0, float v1, float v2,
                                float v3) {
  if constexpr (G::kSh == 0) {
    (void)hi;
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<float4*>(row + lo) = make_float4(v0, v1, v2, v3);
#else
    row[lo] = v0;
    row[lo + 1] = v1;
    row[lo + 2] = v2;
    row[lo + 3] = v3;
#endif
  } else {
    ftile_store2(row + lo, v0, v1);
    ftile_store2(row + hi, v2, v3);
  }
}

// ---- the small-image shape (filter2d.cu, ftile_load_once) -------------------------------------
// Below two waves of tall blocks the kernel takes C = 4 at one channel (C = 8 at 2-4: at C = 4
// a 3-channel thread reads 4 chunks a kernel row for 4 outputs, more than the shared memory
// can serve at the issue rate) and loads its tile as items: item `it` of a block is group
// it % kGroups of tile row it / kGroups, thread i takes items i + kFtileThreads * j, all of
// them issued before the first is converted (one load round trip, the image edges included).

/// Tile row t and group m of item `it`.
template <class G>
PIXFLOW_HD void ftile_item(int it, int& t, int& m) {
  t = it / G::kGroups;
  m = it - t * G::kGroups;
}

/// Items of a tile of th rows a thread takes at most (th <= max_rows).
template <class G>
constexpr int ftile_items(int max_rows) {
  return (max_rows * G::kGroups + kFtileThreads - 1) / kFtileThreads;
}

/// The end (exclusive, in samples from the row start) of what the block at output sample e0
/// reads of a row of wc samples: the window of its last thread with an output inside the row
/// (that thread's C sums are all computed, those past wc not stored). Groups at or past it are
/// not loaded (the old loader sent every group of a half-empty block at the image's right end
/// through the border path, one dependent round trip a row).
template <class G>
PIXFLOW_HD long long ftile_x_end(long long e0, long long wc) {
  constexpr int C = G::kBW / kFtileTX;
  long long last = (wc - 1 - e0) / C;
  if (last > kFtileTX - 1) last = kFtileTX - 1;
  return e0 + C * last + C + G::kHalo;
}

/// The C sums of one output row of thread tx: `chunk(r, j, out)` writes the 4 floats of chunk
/// j (j < kWC) of the thread's window in kernel row r (tile row o + r) to out[0..3]; window
/// float s is input sample e - kHalo + s of output sample e (the thread's first). Kernel rows
/// in order, columns in order, one rounding per multiply and add: the reference's rule.
/// kZeroStart as in strip(): f32 output starts each sum as 0 + k*v (the sign of a zero sum).
template <int K, int CN, int C, bool kZeroStart, class Taps, class Chunk>
PIXFLOW_HD void ftile_sums(float (&acc)[C], const Taps& k, Chunk&& chunk) {
  constexpr int kWC = (C + 2 * (K / 2) * CN + 3) / 4;
  PIXFLOW_UNROLL
  for (int r = 0; r < K; ++r) {
    float win[4 * kWC];
    PIXFLOW_UNROLL
    for (int j = 0; j < kWC; ++j) chunk(r, j, win + 4 * j);
    PIXFLOW_UNROLL
    for (int q = 0; q < K; ++q) {
      const float kq = k[r * K + q];
      PIXFLOW_UNROLL
      for (int c = 0; c < C; ++c) {
        const float p = mul_rn(kq, win[c + q * CN]);
        if (r == 0 && q == 0)
          acc[c] = kZeroStart ? add_rn(0.0f, p) : p;
        else
          acc[c] = add_rn(acc[c], p);
      }
    }
  }
}

}  // namespace pixflow::cuda::f2d
