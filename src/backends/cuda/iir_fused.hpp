// The fused CUDA gaussian_iir pass (iir.cu's iir_fused_kernel), written as host + device code
// so that the CPU test (tests/iir_fused_test.cpp) runs exactly this code, thread by thread
// between barriers, and compares it with the reference bit for bit.
//
// One pass filters a set of lines (a line is one channel of one row, or of one pixel column)
// by the block rule of src/base/iir.hpp. A thread block owns kLines = 32 whole lines (a warp's
// lanes are the 32 lines: adjacent samples of a row in the column pass) and walks them in
// tiles of kTile = 256 positions (kSlots = 8 blocks of 32 a line, one warp per block slot):
//  1. left to right: tile into shared memory (coalesced, border rule at load time), each thread
//     the causal zero state of one block (its last three values), then warp 0 (a lane a line)
//     the carries of the tile's blocks in order, each stored to global scratch (3 doubles a
//     block; L2-friendly, read back by the same thread block in step 2); after the last tile,
//     Triggs–Sdika's start of the anti-causal pass;
//  2. right to left: the tile again, each thread its causal block (zero state + carry) kept in
//     registers, the anti-causal zero state over it in place, warp 0 the anti-causal carries
//     of the tile's blocks right to left (through shared memory), then each thread its outputs
//     into the shared tile, stored coalesced.
// So x is read twice (the 5-kernel version: three times, uncoalesced in the row pass), the
// double scratch is 3 doubles a block written once and read once, and a sample costs 33
// double ops (7 + 13 + 7 + 6) against the rule's 26 (the 5-kernel version: 46). Every value
// is the rule's expression on the same operands (the same iir_step / iir_fix, the same
// next_carry), so the result is the reference's bit for bit.
//
// Cost per sample, not arithmetic (session 16, branch iir3; ncu of session 15: the row pass
// at 0.49 issued per scheduler, ~145 instructions a sample, latency-bound): the row pass is
// compiled per channel count (tile steps and pitches are constants: immediate LDS offsets,
// no division), u8 tile rows sit on distinct banks, whole blocks run without a test a
// position (the zero state, the outputs), tiles inside the line load and store through one
// pointer a thread with no border rule (f32 by cp.async: every element in flight, no
// register), the next tile is prefetched into L2 while this one is computed, u8 samples
// become doubles without I2F.F64 and u8 outputs round in float (both exact: host tests).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/base/iir.hpp"
#include "src/base/numeric.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::iir_fused {

inline constexpr int kB = detail::kIirBlock;
// Launch shape (why: a warp = 32 lines, so column loads are coalesced and every thread of a
// warp runs the same block index, i.e. the same partial-block branch; 8 block slots give 256
// threads and a 256-position tile, ~37 KB of shared tile at most (f32 x 3 rows), so two
// blocks fit an SM by registers (~100 a thread: 32 doubles of block in registers)).
inline constexpr int kLines = 32, kSlots = 8;
inline constexpr int kThreads = kLines * kSlots;
inline constexpr int kTile = kSlots * kB;
inline constexpr int kMaxCn = 4;

/// Rows of the image a group of kLines row-lines spans, at most (cn > 1: partial first/last).
PIXFLOW_HD constexpr int tile_rows(int cn) {
  return kLines % cn == 0 ? kLines / cn : (kLines - 1) / cn + 2;
}
/// Row-pass pitch of the shared tile in elements of T: a row's kTile * cn elements plus a pad
/// that puts the rows of a warp's lanes (a lane a line, 32 / cn rows) on distinct banks. f32:
/// (kTile + 1) * cn words (cn modulo 32: rows on banks cn apart). u8: whole 32-bit words, an
/// odd count (cn 1, 2, 4: a row's cn bytes of a lane sit in one word; 260 B at cn = 1 instead
/// of 257, whose rows fell on 8 banks, 4-way conflicts), 194 words at cn = 3 (2 modulo 32: a
/// lane's 3 bytes may straddle two words, the next row starts 2 banks on).
template <class T>
PIXFLOW_HD constexpr int row_pitch(int cn) {
  return sizeof(T) == 1 ? kTile * cn + (cn == 3 ? 8 : 4) : (kTile + 1) * cn;
}
/// Shared tile bytes: row pass rows x row_pitch (the input S and the f32 output D share it),
/// column pass kTile x kLines.
PIXFLOW_HD constexpr int max_tile_bytes() {
  int m = kTile * kLines * 4;
  for (int cn = 1; cn <= kMaxCn; ++cn) {
    const int f = tile_rows(cn) * row_pitch<float>(cn) * 4, b = tile_rows(cn) * row_pitch<char>(cn);
    m = f > m ? f : m;
    m = b > m ? b : m;
  }
  return m;
}

/// One pass: lines [0, lines) of `len` samples, extended by e a side (n = len + 2e), J blocks.
/// kRows: line l = channel l % cn of row l / cn; else element l of every row.
struct Pass {
  const unsigned char* in;
  long long in_stride;
  unsigned char* out;
  long long out_stride;
  long long lines, len, e, n, J;
  int cn;
  BorderType bt;
  double cval;  // the constant border's value (exact in both the source and the f32 type)
  double* cw;   // [J + 1][3][lines]: causal carry of every block, then Triggs–Sdika's values
};

PIXFLOW_HD Pass make_pass(const unsigned char* in, long long in_stride, unsigned char* out,
                          long long out_stride, long long lines, long long len, long long e, int cn,
                          BorderType bt, double cval, double* cw) {
  const long long n = len + 2 * e;
  return {in, in_stride, out, out_stride, lines, len, e, n, (n + kB - 1) / kB, cn, bt, cval, cw};
}

/// Scratch doubles of one pass.
inline std::int64_t scratch_doubles(std::int64_t lines, std::int64_t len, std::int64_t e) {
  const std::int64_t J = (len + 2 * e + kB - 1) / kB;
  return 3 * lines * (J + 1);
}

/// Shared memory of a thread block.
struct Smem {
  alignas(16) unsigned char tile[max_tile_bytes()];  // S in, then D out (<= 4 bytes)
  // The zero-state tails of the tile's blocks; in step 2 the scan replaces them by the blocks'
  // anti-causal carries (one array: 48 KB of static shared memory hold it with the tile).
  double zt[kSlots][3][kLines];
  double H[kB][3];  // k.H, for a partial block's dynamic t
};

/// A thread's values that live across barriers (registers on the device).
struct ThreadState {
  double z[kB];  // the causal block, then the anti-causal zero state over it (in place)
  double s[3];   // warp 0: the running carry of its line
};

PIXFLOW_HD double& at(double* p, long long lines, long long j, int r, long long l) {
  return p[(j * 3 + r) * lines + l];
}
PIXFLOW_HD int block_len(const Pass& ps, long long j) {
  const long long m = ps.n - j * kB;
  return int(m < kB ? m : kB);
}
/// The first anti-causal block the rule runs (blocks wholly left of the line are skipped).
PIXFLOW_HD long long first_block(const Pass& ps) {
  return ps.e >= kB ? (ps.e - kB) / kB + 1 : 0;
}

/// x(l, i) from global memory (the scan's x(0) and x(n - 1)). kCn: the row pass's channels.
template <class S, bool kRows, int kCn>
PIXFLOW_HD double x_global(const Pass& ps, long long l, long long i) {
  const long long s = detail::border_index(i - ps.e, ps.len, ps.bt);
  if (s < 0) return ps.cval;
  if (kRows) {
    const S* row = reinterpret_cast<const S*>(ps.in + (l / kCn) * ps.in_stride);
    return double(row[s * kCn + l % kCn]);
  }
  return double(reinterpret_cast<const S*>(ps.in + s * ps.in_stride)[l]);
}

/// double(v) of a tile sample. u8: 2^52 + v built from its bits, minus 2^52 (exact: both are
/// doubles and so is the difference; why: one integer move and one DADD instead of an
/// I2F.F64, a conversion at a quarter of the FP64 add rate on the H100, twice a sample).
PIXFLOW_HD double to_double(unsigned char v) {
  const std::uint64_t bits = (std::uint64_t(0x43300000) << 32) | v;
#ifdef __CUDA_ARCH__
  const double d = __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof d);
#endif
  return d - 4503599627370496.0;
}
PIXFLOW_HD double to_double(float v) {
  return double(v);
}

/// The reference's output rounding, saturate_cast<D>(double(float(y))). u8 in float (why: no
/// F2F.F64 and double compares a sample): rint of the float f is a float (an integer of
/// magnitude < 2^24, or f itself) equal to rint of the exact double(f); the clamp is written
/// as compares, false for NaN, so NaN gives 0 as saturate_cast (fmax / fmin would too on the
/// device, but not for a signalling NaN on the host, so host and device share this form).
/// tests/iir_fused_test.cpp compares the two over the floats.
template <class D>
PIXFLOW_HD D out_cast(double y) {
  if constexpr (std::is_same_v<D, float>) {
    return float(y);
  } else {
    static_assert(std::is_same_v<D, std::uint8_t>);
#ifdef __CUDA_ARCH__
    const float r = rintf(float(y));
#else
    const float r = std::rint(float(y));
#endif
    return D(r >= 255.0f ? 255.0f : r > 0.0f ? r : 0.0f);
  }
}

/// Index in the shared tile of line L0 + ll at tile position q (S: the tile's element type).
template <class S, bool kRows, int kCn>
PIXFLOW_HD int tile_index(long long L0, int ll, int q) {
  if (kRows) {
    const long long L = L0 + ll;
    const int r = int(L / kCn - L0 / kCn);
    return r * row_pitch<S>(kCn) + q * kCn + int(L % kCn);
  }
  return q * kLines + ll;
}

/// threadIdx.x read afresh (device; the host passes tid through): a volatile asm is not
/// hoisted, so the addresses a load or store phase derives from it are computed in the phase
/// instead of held in registers across the compute phases (which then spilled, ptxas -v).
PIXFLOW_HD int fresh_tid(int tid) {
#ifdef __CUDA_ARCH__
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
#endif
  return tid;
}

/// A 4-byte global-to-shared copy that bypasses registers (cp.async on sm_80+; why: a load
/// phase's elements all in flight at once without holding them in registers, which the
/// compute phases need), and the wait for this thread's copies before the phase's barrier.
/// The host (and the compute_75 PTX) copy directly.
PIXFLOW_HD void copy4(void* dst_shared, const void* src_global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(dst_shared))),
               "l"(src_global)
               : "memory");
#else
  std::memcpy(dst_shared, src_global, 4);
#endif
}
PIXFLOW_HD void copy4_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

/// The L2 prefetch of tile positions [a0, a0 + kTile) of this group's lines, a thread a row
/// (row pass) or a position (column pass), issued after a tile's loads so that the next tile's
/// loads (the next phase of the same walk) find their lines in L2 instead of DRAM (why: a tile
/// load phase is one round trip with nothing else in flight; ncu session 15). Tiles that reach
/// past the line are not prefetched. A hint: nothing on the host.
template <class S, bool kRows, int kCn>
PIXFLOW_HD void tile_prefetch(const Pass& ps, long long L0, long long a0, int tid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (a0 < ps.e || a0 + kTile - ps.e > ps.len) return;
  const long long Lend = std::min(L0 + kLines, ps.lines);
  const unsigned char* p;
  long long bytes;
  if (kRows) {
    const long long row0 = L0 / kCn;
    if (tid > int((Lend - 1) / kCn - row0)) return;
    p = ps.in + (row0 + tid) * ps.in_stride + (a0 - ps.e) * kCn * long(sizeof(S));
    bytes = kTile * kCn * long(sizeof(S));
  } else {
    p = ps.in + (a0 - ps.e + tid) * ps.in_stride + L0 * long(sizeof(S));
    bytes = (Lend - L0) * long(sizeof(S));
  }
  // 16-byte aligned start and size, inside the 16 bytes around the row's own bytes.
  const unsigned long long lo = reinterpret_cast<unsigned long long>(p) & ~15ull;
  const unsigned long long hi = (reinterpret_cast<unsigned long long>(p) + bytes + 15) & ~15ull;
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(lo), "r"(unsigned(hi - lo))
               : "memory");
#else
  (void)ps, (void)L0, (void)a0, (void)tid;
#endif
}

/// Thread tid's share of loading tile positions [a0, a0 + kTile) of lines [L0, L0 + kLines):
/// consecutive threads on consecutive addresses; the border rule only on tiles that reach past
/// the line (positions past n are loaded too, harmlessly, through the same rule). All of a
/// thread's loads are issued before its first store (≤ 36 values: one global round trip a
/// tile, not one a batch of 8 rows). Then the L2 prefetch of tile a_next (< 0: none).
template <class S, bool kRows, int kCn>
PIXFLOW_HD void tile_load(const Pass& ps, S* buf, long long L0, long long a0, long long a_next,
                          int tid) {
  tid = fresh_tid(tid);
  if (a_next >= 0) tile_prefetch<S, kRows, kCn>(ps, L0, a_next, tid);
  const long long Lend = std::min(L0 + kLines, ps.lines);
  const bool inside = a0 >= ps.e && a0 + kTile - ps.e <= ps.len;
  const S cv = S(ps.cval);
  if constexpr (kRows) {
    // Element k = tid + i * kThreads of every row's tile span (kTile * kCn = kThreads * kCn
    // elements: kCn a thread a row); the border rule once a k, not once a load.
    static_assert(kTile == kThreads);
    constexpr int pitch = row_pitch<S>(kCn);
    const long long row0 = L0 / kCn;
    const int rows = int((Lend - 1) / kCn - row0 + 1);
    const unsigned char* in0 = ps.in + row0 * ps.in_stride;
    // u8 rows loaded before their stores: 16 values a thread at every kCn (12 at 3), the most
    // that compiled with the fewest spills beside the compute phases' registers (ptxas -v);
    // f32 rows of a tile inside the line go by copy4, so their batch (edge tiles only) is small.
    constexpr int kBatch = sizeof(S) == 4 ? 4 : kCn == 1 ? 16 : kCn == 2 ? 8 : 4;
    if (inside) {
      // Every position is the line's: one pointer stepped a row, no border rule and no select
      // a load (why: 16 instructions an element before, SASS).
      const long long st = ps.in_stride;
      const unsigned char* p = in0 + ((a0 - ps.e) * kCn + tid) * static_cast<long long>(sizeof(S));
      if constexpr (sizeof(S) == 4) {
        // f32: every element of every row in flight at once, through no register.
        S* const b = buf + tid;
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
        for (int r = 0; r < rows; ++r, p += st) PIXFLOW_UNROLL
        for (int i = 0; i < kCn; ++i) copy4(b + r * pitch + i * kThreads, p + i * kThreads * 4);
        copy4_wait();
      } else {
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
        for (int r0 = 0; r0 < rows; r0 += kBatch) {
          S v[kCn][kBatch] = {};
          PIXFLOW_UNROLL
          for (int u = 0; u < kBatch; ++u, p += st)  // a pointer add a row, no multiply
            if (r0 + u < rows) PIXFLOW_UNROLL
          for (int i = 0; i < kCn; ++i) v[i][u] = reinterpret_cast<const S*>(p)[i * kThreads];
          S* const b = buf + r0 * pitch + tid;
          PIXFLOW_UNROLL
          for (int u = 0; u < kBatch; ++u)
            if (r0 + u < rows) PIXFLOW_UNROLL
          for (int i = 0; i < kCn; ++i) b[u * pitch + i * kThreads] = v[i][u];
        }
      }
      return;
    }
    long long s[kCn];  // the element of a row to load; < 0: the constant
    PIXFLOW_UNROLL
    for (int i = 0; i < kCn; ++i) {
      const int k = tid + i * kThreads;
      s[i] = (a0 - ps.e) * kCn + k;
      if (!inside) {
        const long long p = detail::border_index(a0 + k / kCn - ps.e, ps.len, ps.bt);
        s[i] = p < 0 ? -1 : p * kCn + k % kCn;
      }
    }
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int r0 = 0; r0 < rows; r0 += kBatch) {
      S v[kCn][kBatch] = {};  // (only the loaded ones are stored)
      PIXFLOW_UNROLL
      for (int i = 0; i < kCn; ++i) PIXFLOW_UNROLL
      for (int u = 0; u < kBatch; ++u)
        if (r0 + u < rows)
          v[i][u] = s[i] < 0 ? cv : reinterpret_cast<const S*>(in0 + (r0 + u) * ps.in_stride)[s[i]];
      PIXFLOW_UNROLL
      for (int i = 0; i < kCn; ++i) PIXFLOW_UNROLL
      for (int u = 0; u < kBatch; ++u)
        if (r0 + u < rows) buf[(r0 + u) * pitch + tid + i * kThreads] = v[i][u];
    }
  } else {
    // Flat index k = q * kLines + ll: position q, line L0 + ll (lines past the image: the
    // constant, unused).
    const int lanes = int(Lend - L0);
    const int ll = tid % kLines;
    const S* in0 = reinterpret_cast<const S*>(ps.in + L0 * static_cast<long long>(sizeof(S))) + ll;
    constexpr int kPer = kTile * kLines / kThreads, kQStep = kThreads / kLines;
    const int q0 = tid / kLines;
    constexpr int kBatch = 8;  // loads before their stores (16 spilled beside the compute)
    if (inside && lanes == kLines) {
      // Every position is the line's and every lane a line: one pointer stepped kQStep
      // positions a load.
      const long long st = ps.in_stride * kQStep;
      const unsigned char* p =
          reinterpret_cast<const unsigned char*>(in0) + (a0 - ps.e + q0) * ps.in_stride;
      static_assert(sizeof(S) == 4);  // the column pass reads the f32 intermediate
                                      // Every element in flight at once, through no register.
#if defined(__CUDA_ARCH__)
#pragma unroll 8
#endif
      for (int u = 0; u < kPer; ++u, p += st) copy4(buf + tid + u * kThreads, p);
      copy4_wait();
      return;
    }
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int u0 = 0; u0 < kPer; u0 += kBatch) {
      S v[kBatch];
      PIXFLOW_UNROLL
      for (int u = 0; u < kBatch; ++u) {
        const int q = q0 + (u0 + u) * kQStep;
        const long long s =
            inside ? a0 + q - ps.e : detail::border_index(a0 + q - ps.e, ps.len, ps.bt);
        v[u] = ll >= lanes || s < 0
                   ? cv
                   : *reinterpret_cast<const S*>(reinterpret_cast<const unsigned char*>(in0) +
                                                 s * ps.in_stride);
      }
      PIXFLOW_UNROLL
      for (int u = 0; u < kBatch; ++u) buf[tid + (u0 + u) * kThreads] = v[u];
    }
  }
}

/// Thread tid's share of storing the output tile: line positions a0 - e + q inside the line,
/// lines of this group only (a row pass's first and last rows may hold other groups' lines).
/// A tile inside the line (every tile but the first and last of a line) stores without a test
/// a position, and a row whose lines are all the group's without a test a line.
template <class D, bool kRows, int kCn>
PIXFLOW_HD void tile_store(const Pass& ps, const D* buf, long long L0, long long a0, int tid) {
  tid = fresh_tid(tid);
  const long long Lend = std::min(L0 + kLines, ps.lines);
  const long long p0 = a0 - ps.e;  // line position of tile position 0
  const int qlo = int(p0 < 0 ? -p0 : 0);
  const int qhi = int(std::min<long long>(kTile, ps.len - p0));
  if (qhi <= qlo) return;
  const bool inside = qlo == 0 && qhi == kTile;
  if (kRows) {
    constexpr int pitch = row_pitch<D>(kCn);
    const long long row0 = L0 / kCn;
    const int rows = int((Lend - 1) / kCn - row0 + 1);
    if (inside && L0 % kCn == 0 && Lend % kCn == 0) {
      // Whole rows of positions of the line: one pointer stepped a row, no test.
      unsigned char* d =
          ps.out + row0 * ps.out_stride + (p0 * kCn + tid) * static_cast<long long>(sizeof(D));
      const D* src = buf + tid;
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
      for (int r = 0; r < rows; ++r, d += ps.out_stride) PIXFLOW_UNROLL
      for (int i = 0; i < kCn; ++i)
        reinterpret_cast<D*>(d)[i * kThreads] = src[r * pitch + i * kThreads];
      return;
    }
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int r = 0; r < rows; ++r) {
      D* dst = reinterpret_cast<D*>(ps.out + (row0 + r) * ps.out_stride) + p0 * kCn;
      const D* src = buf + r * pitch;
      const long long l0 = (row0 + r) * kCn;
      const bool whole = l0 >= L0 && l0 + kCn <= Lend;
      if (inside && whole) {
        PIXFLOW_UNROLL
        for (int i = 0; i < kCn; ++i) dst[tid + i * kThreads] = src[tid + i * kThreads];
        continue;
      }
      for (int k = tid + qlo * kCn; k < qhi * kCn; k += kThreads) {
        if (!whole) {
          const long long L = l0 + k % kCn;
          if (L < L0 || L >= Lend) continue;
        }
        dst[k] = src[k];
      }
    }
  } else {
    const int lanes = int(Lend - L0), ll = tid % kLines;
    if (ll >= lanes) return;
    constexpr int kQStep = kThreads / kLines;
    if (inside) {
      // Every position is the line's: one pointer stepped kQStep positions a store.
      unsigned char* d = ps.out + (p0 + tid / kLines) * ps.out_stride +
                         (L0 + ll) * static_cast<long long>(sizeof(D));
      const long long st = ps.out_stride * kQStep;
#if defined(__CUDA_ARCH__)
#pragma unroll 8
#endif
      for (int q = tid / kLines; q < kTile; q += kQStep, d += st)
        *reinterpret_cast<D*>(d) = buf[q * kLines + ll];
      return;
    }
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
    for (int q = tid / kLines; q < kTile; q += kQStep)
      if (q >= qlo && q < qhi)
        reinterpret_cast<D*>(ps.out + (p0 + q) * ps.out_stride)[L0 + ll] = buf[q * kLines + ll];
  }
}

/// The next block's carry from a block of m positions (iir.cu's next_carry, the rule's
/// expressions): H through the shared table (m, so t, is not a constant here).
PIXFLOW_HD void next_carry(const double (*H)[3], int m, const double (&zt)[3], double (&s)[3]) {
  double nx[3];
  for (int r = 0; r < 3; ++r) {
    const int t = m - 1 - r;
    // s[-t - 1] written as selects: a dynamic index would put s (and the thread's state) in
    // local memory.
    nx[r] = t >= 0    ? zt[r] + ((H[t][0] * s[0] + H[t][1] * s[1]) + H[t][2] * s[2])
            : t == -1 ? s[0]
            : t == -2 ? s[1]
                      : s[2];
  }
  for (int r = 0; r < 3; ++r) s[r] = nx[r];
}

/// iir_fix with the table row t: k.H (a kernel parameter: constant-bank operands) when t is a
/// constant after unrolling (kFull), else the shared copy.
template <bool kFull>
PIXFLOW_HD double fix(const detail::IirCoeffs& k, const double (*H)[3], int t, double z, double s0,
                      double s1, double s2) {
  if (kFull) return detail::iir_fix(k, t, z, s0, s1, s2);
  return px_iir_fix(H[t][0], H[t][1], H[t][2], z, s0, s1, s2);
}

/// Step 1b: the causal zero state of block j of line L0 + ll (positions a = j * kB ...), its
/// values at t = m-1, m-2, m-3 into zt[slot] (0 where m < 3: unused by next_carry). kFull:
/// m = kB, no test a position.
template <bool kFull, class S, bool kRows, int kCn>
PIXFLOW_HD void zero_tails(const detail::IirCoeffs& k, Smem& sm, const S* buf, long long L0, int ll,
                           int slot, int m) {
  // The block's first sample; the next position is a constant step on (immediate offsets).
  const S* const x = buf + tile_index<S, kRows, kCn>(L0, ll, slot * kB);
  constexpr int step = kRows ? kCn : kLines;
  double z1 = 0, z2 = 0, z3 = 0;
  PIXFLOW_UNROLL
  for (int t = 0; t < kB; ++t)
    if (kFull || t < m) {
      const double z = detail::iir_step(k, to_double(x[t * step]), z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
    }
  sm.zt[slot][0][ll] = z1;
  sm.zt[slot][1][ll] = z2;
  sm.zt[slot][2][ll] = z3;
}

/// Step 2b: the causal block j with its carry (w, into z), then the anti-causal zero state over
/// it right to left, in place; its values at positions a, a+1, a+2 into zt[slot].
template <bool kFull, class S, bool kRows, int kCn>
PIXFLOW_HD void mid_block(const Pass& ps, const detail::IirCoeffs& k, Smem& sm, const S* buf,
                          long long L0, int ll, int slot, long long j, int m, double (&w)[kB]) {
  const S* const x = buf + tile_index<S, kRows, kCn>(L0, ll, slot * kB);
  constexpr int step = kRows ? kCn : kLines;
  const long long L = L0 + ll;
  const double s0 = at(ps.cw, ps.lines, j, 0, L), s1 = at(ps.cw, ps.lines, j, 1, L),
               s2 = at(ps.cw, ps.lines, j, 2, L);
  double z1 = 0, z2 = 0, z3 = 0;
  PIXFLOW_UNROLL
  for (int t = 0; t < kB; ++t)
    if (kFull || t < m) {
      const double z = detail::iir_step(k, to_double(x[t * step]), z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      w[t] = fix<true>(k, sm.H, t, z, s0, s1, s2);  // t is a constant here either way
    }
  z1 = z2 = z3 = 0;
  PIXFLOW_UNROLL
  for (int i = kB - 1; i >= 0; --i)
    if (kFull || i < m) {
      const double z = detail::iir_step(k, w[i], z1, z2, z3);
      z3 = z2;
      z2 = z1;
      z1 = z;
      w[i] = z;
    }
  sm.zt[slot][0][ll] = w[0];
  sm.zt[slot][1][ll] = m > 1 ? w[1] : 0.0;
  sm.zt[slot][2][ll] = m > 2 ? w[2] : 0.0;
}

/// Step 2d: block j's outputs, y = iir_fix(t, z, carry) for t = m-1-i, stored into the tile
/// with the reference's rounding where position a + i is a position of the line. kInner: a
/// whole block (m = kB) of positions of the line: no test a position.
template <bool kFull, bool kInner, class D, bool kRows, int kCn>
PIXFLOW_HD void out_block(const Pass& ps, const detail::IirCoeffs& k, const Smem& sm, D* buf,
                          long long L0, int ll, int slot, long long j, int m,
                          const double (&w)[kB]) {
  static_assert(kFull || !kInner);
  D* const y = buf + tile_index<D, kRows, kCn>(L0, ll, slot * kB);
  constexpr int step = kRows ? kCn : kLines;
  const double s0 = sm.zt[slot][0][ll], s1 = sm.zt[slot][1][ll], s2 = sm.zt[slot][2][ll];
  // Positions a + i of the line: i in [lo, hi) (ints: fewer live registers than 64-bit).
  const long long p0 = j * kB - ps.e;
  const int lo = kInner ? 0 : int(p0 < 0 ? -p0 : 0);
  const int hi = kInner ? kB : int(ps.len - p0 < m ? ps.len - p0 : m);
  PIXFLOW_UNROLL
  for (int i = 0; i < kB; ++i)
    if (kFull || i < m) {
      if (kInner || (i >= lo && i < hi))
        y[i * step] =
            out_cast<D>(fix<kFull>(k, sm.H, kFull ? kB - 1 - i : m - 1 - i, w[i], s0, s1, s2));
    }
}

/// The whole pass of line group g. par(f) runs f(tid) for every thread of the block, then a
/// barrier; state(tid) is that thread's ThreadState (a register set on the device). kCn: the
/// row pass's channels (ps.cn; the column pass: 1, unused).
template <class S, class D, bool kRows, int kCn, class Par, class State>
PIXFLOW_HD void run_group(const Pass& ps, const detail::IirCoeffs& k, Smem& sm, long long g,
                          Par&& par, State&& state) {
  const long long L0 = g * kLines;
  const long long T = (ps.J + kSlots - 1) / kSlots;
  S* const in = reinterpret_cast<S*>(sm.tile);
  D* const out = reinterpret_cast<D*>(sm.tile);
  auto live = [&](int ll) { return L0 + ll < ps.lines; };
  // 1. Causal carries, left to right. Warp 0 scans tile t - 1 (zt, global cw) in the phase that
  // loads tile t (the tile buffer), so the scan hides behind the loads.
  auto scan = [&](int lane, long long t) {
    const long long L = L0 + lane;
    double(&s)[3] = state(lane).s;
    if (t == 0) s[0] = s[1] = s[2] = x_global<S, kRows, kCn>(ps, L, 0);
    for (int b = 0; b < kSlots; ++b) {
      const long long j = t * kSlots + b;
      if (j >= ps.J) break;
      for (int r = 0; r < 3; ++r) at(ps.cw, ps.lines, j, r, L) = s[r];
      const double z[3] = {sm.zt[b][0][lane], sm.zt[b][1][lane], sm.zt[b][2][lane]};
      next_carry(sm.H, block_len(ps, j), z, s);
    }
  };
  const long long jmin = first_block(ps);
  const long long tmin = jmin / kSlots;
  for (long long t = 0; t < T; ++t) {
    const long long a0 = t * kTile;
    // The next tile this thread block loads: t + 1, after the last the walk back's first.
    const long long a_next = (t + 1 < T ? t + 1 : T - 1) * kTile;
    par([&](int tid) {
      if (t > 0 && tid < kLines && live(tid)) scan(tid, t - 1);
      tile_load<S, kRows, kCn>(ps, in, L0, a0, a_next, tid);
    });
    par([&](int tid) {
      const int ll = tid % kLines, slot = tid / kLines;
      const long long j = t * kSlots + slot;
      if (j >= ps.J || !live(ll)) return;
      const int m = block_len(ps, j);
      if (m == kB)
        zero_tails<true, S, kRows, kCn>(k, sm, in, L0, ll, slot, m);
      else
        zero_tails<false, S, kRows, kCn>(k, sm, in, L0, ll, slot, m);
    });
  }
  par([&](int tid) {
    if (tid >= kLines || !live(tid)) return;
    scan(tid, T - 1);
    // s: w at n-1, n-2, n-3; Triggs–Sdika as iir.cu's iir_carry_kernel.
    const long long L = L0 + tid;
    const double(&s)[3] = state(tid).s;
    const double up = x_global<S, kRows, kCn>(ps, L, ps.n - 1);
    const double u[3] = {s[0] - up, s[1] - up, s[2] - up};
    for (int r = 0; r < 3; ++r)
      at(ps.cw, ps.lines, ps.J, r, L) = detail::iir_end(k, r, u[0], u[1], u[2], up);
  });
  // 2. Anti-causal carries and outputs, right to left, down to the first block the rule runs.
  for (long long t = T - 1; t >= tmin; --t) {
    const long long a0 = t * kTile;
    par([&](int tid) {
      tile_load<S, kRows, kCn>(ps, in, L0, a0, t > tmin ? a0 - kTile : -1, tid);
    });
    par([&](int tid) {
      const int ll = tid % kLines, slot = tid / kLines;
      const long long j = t * kSlots + slot;
      if (j >= ps.J || j < jmin || !live(ll)) return;
      const int m = block_len(ps, j);
      if (m == kB)
        mid_block<true, S, kRows, kCn>(ps, k, sm, in, L0, ll, slot, j, m, state(tid).z);
      else
        mid_block<false, S, kRows, kCn>(ps, k, sm, in, L0, ll, slot, j, m, state(tid).z);
    });
    par([&](int tid) {
      if (tid >= kLines || !live(tid)) return;
      const long long L = L0 + tid;
      double(&s)[3] = state(tid).s;
      if (t == T - 1)
        for (int r = 0; r < 3; ++r) s[r] = at(ps.cw, ps.lines, ps.J, r, L);
      for (int b = kSlots - 1; b >= 0; --b) {
        const long long j = t * kSlots + b;
        if (j >= ps.J) continue;
        if (j < jmin) break;
        const double z[3] = {sm.zt[b][0][tid], sm.zt[b][1][tid], sm.zt[b][2][tid]};
        for (int r = 0; r < 3; ++r) sm.zt[b][r][tid] = s[r];  // the block's carry, over its tails
        next_carry(sm.H, block_len(ps, j), z, s);
      }
    });
    par([&](int tid) {
      const int ll = tid % kLines, slot = tid / kLines;
      const long long j = t * kSlots + slot;
      if (j >= ps.J || j < jmin || !live(ll)) return;
      const int m = block_len(ps, j);
      const long long p0 = j * kB - ps.e;  // line position of the block's first position
      if (m == kB && p0 >= 0 && p0 + kB <= ps.len)
        out_block<true, true, D, kRows, kCn>(ps, k, sm, out, L0, ll, slot, j, m, state(tid).z);
      else if (m == kB)
        out_block<true, false, D, kRows, kCn>(ps, k, sm, out, L0, ll, slot, j, m, state(tid).z);
      else
        out_block<false, false, D, kRows, kCn>(ps, k, sm, out, L0, ll, slot, j, m, state(tid).z);
    });
    par([&](int tid) { tile_store<D, kRows, kCn>(ps, out, L0, a0, tid); });
  }
}

}  // namespace pixflow::cuda::iir_fused
