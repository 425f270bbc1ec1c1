// The schedule of the CUDA remap's fast kernel (remap.cu, remap_ring_kernel), written as host +
// device code so that the CPU test (tests/remap_ring_test.cpp) runs exactly this walk against a
// model of cp.async groups, and plans the grids the host launches.
//
// Each thread of the kernel owns kRing slots of a ring in shared memory, one row's maps a slot,
// and walks rows y, y + step, y + 2 step, ... (step = gridDim.y x block rows), one commit group
// of cp.async copies (no registers held for them) a row. The maps of its next kRing - 1 rows are
// in flight while it computes a row: before each row after the first, the row kRing - 1 ahead
// is copied into the slot the previous row was read from (after that row's use, which needed
// the values read), then `cp.async.wait_group kRing - 1` completes exactly the row's own group.
// Every thread reads only its own slots (no barrier).
//
// The first row is different (session 17, branch rmp5): its maps are copied alone and waited
// for (wait_group 0), and rows 1 .. kRing - 1 are copied from inside its use, once its tap loads
// are issued (`ahead`). At 1920x1080 a thread has 3-4 rows, and the walk before issued all of
// them at the start, 16.6 MB of maps GPU-wide before the first tap load: a row 0 arrived after
// ~half of it on average (~2.7 us at ~3 TB/s) and nothing could run until then (ncu, session
// 16: 14.4 % of the u8x3 1080p stall samples on the instruction after the ring's wait). Now
// every thread's row 0 comes first (4.2 MB GPU-wide) and its taps leave before the next rows'
// maps instead of queueing behind them. From the second row on the walk is the one before.
//
// Measured on the H100 (session 16, bench/NOTES.md, the walk before): 8192^2 u8x1
// 321 -> 269 us, 1080p 12.9 -> 10.4 against the two kernels it replaced. Tuning: 3 rows ahead
// (kRing 4) is 3 x 32 B of maps in flight a thread (P = 4 outputs), 96 KB a SM at 1024 threads,
// ~3x what 3 TB/s needs over ~1.5 us of loaded DRAM latency (34 KB a SM). The ring takes 32 KB a
// block (P = 4: 4 slots x 2 maps x 256 threads x 16 B), 128 KB at 4 blocks a SM.
#pragma once

#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::remap_ring {

// Slots a thread: the row being read and kRing - 1 rows in flight.
constexpr int kRing = 4;
// Resident blocks a SM (__launch_bounds__): 4 = a 64-register bound (ptxas, sm_90: 56 registers
// u8x1/f32x1 linear, 64 u8x3 linear, no spills; the streaming kernel it replaced held the next
// row's maps in registers: 80 registers, 3 blocks a SM).
constexpr int kMinBlocks = 4;
// Rows a thread (blocks_y), by the rows one wave of blocks (kMinBlocks a SM) would give each
// thread: at most kMaxRows -> one row a thread in several waves for u8 (1920x1080: 15 x 135
// blocks); at most kOneWaveRows -> that one wave (1920x1080 f32x1: 15 x 34 blocks of 4 rows);
// more -> whole waves of at most kMaxRows rows (8192^2: 64 x 256 blocks of 4 rows), so that a
// lens map's slower edge columns are spread over many blocks. Measured
// (bench/micro/remap_shapes.cu, session 20, H100; rows a thread 1 / 2 / 4 / 8 / 16): 8192^2 u8x1
// 332.2 / 262.1 / 259.9 / 263.7 / 270.8 us, u8x3 392.2 / 361.5 / 359.4 / 366.3 / 378.7;
// 1920x1080 u8x3 13.85 / 14.55 / 15.7 (one wave) / 18.9, u8x1 9.29 / 9.40 / 10.0 (one wave) /
// 12.6; in the bench, 1920x1080 f32x1 took 11.7 at one row a thread against 10.6 in its one
// wave of 4 rows, so one row a thread is for u8 only (u16 is not measured: the one wave).
// (The rule before: one wave up to 16 rows, whole waves of 16 above.)
constexpr int kMaxRows = 4, kOneWaveRows = 16;
// Samples (registers) of the border path's loads in flight at once (remap.cu,
// remap_border_group): 16 keeps every instance under the 64-register bound without spills.
constexpr int kBorderSamples = 16;
// Samples of a thread's interior taps up to which they are loaded before the next rows' copies
// are issued (remap.cu, remap_taps_first; 24: u8x1/u16x1/f32x1 linear's 16 and f32x3's 24
// without spills, u8x3 linear's 24 words always; 32 and more spilled 2-8 bytes).
constexpr int kTapsFirstSamples = 24;

PIXFLOW_HD constexpr int next_slot(int s) {
  return s == kRing - 1 ? 0 : s + 1;
}
PIXFLOW_HD constexpr int prev_slot(int s) {
  return s == 0 ? kRing - 1 : s - 1;
}

/// A thread's walk over rows y, y + step, ... < h. copy(slot, row) issues the copies of a row's
/// maps into a slot, commit() closes the row's group (also when no row is copied: group k is
/// always row k's), wait_all() completes every group, wait() all but the newest kRing - 1,
/// use(slot, row, ahead) reads the slot, issues the row's loads, calls ahead() exactly once
/// (after every value read from the slot has been consumed) and computes the row; ahead()
/// copies rows 1 .. kRing - 1 at the first row and nothing afterwards. When it returns no
/// copy is pending (rows past h issue none).
/// 64-bit row sums: y + (kRing - 1) * step may pass 2^31 for tall images.
template <class Copy, class Commit, class WaitAll, class Wait, class Use>
PIXFLOW_HD void walk(int y, long long h, long long step, Copy&& copy, Commit&& commit,
                     WaitAll&& wait_all, Wait&& wait, Use&& use) {
  copy(0, y);
  commit();
  wait_all();
  int slot = 0;
  // One use call site (the kernel inlines the whole row body there): the first row's ahead
  // is a branch on `first`.
  for (bool first = true;; first = false) {
    use(slot, y, [&] {
      if (!first) return;
        // Rows 1 .. kRing - 1 into slots 1 .. kRing - 1, after row 0's tap loads (once a
        // thread: a loop, not unrolled, so that its code is not live beside the taps).
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
      for (int s = 1; s < kRing; ++s) {
        const long long ys = y + s * step;
        if (ys < h) copy(s, int(ys));
        commit();
      }
    });
    if (y + step >= h) return;
    // The row kRing - 1 ahead of the next one goes into the slot this row was read from.
    const long long yn = y + kRing * step;
    if (yn < h) copy(slot, int(yn));
    commit();
    y += int(step);
    slot = next_slot(slot);
    wait();
  }
}

/// Blocks in y of the kernel's grid, blocks_x wide, for h rows of blocks of block_rows thread
/// rows on sms SMs (the rule above; one_row: u8 samples): one row a thread, or one wave, or
/// block rows in multiples of one wave with at most kMaxRows rows a thread; every thread the
/// same number of rows give or take one (at most 65535 block rows, the grid's limit: then more
/// rows a thread).
constexpr long long blocks_y(long long blocks_x, long long h, int block_rows, long long sms,
                             bool one_row) {
  const long long thread_rows = (h + block_rows - 1) / block_rows;
  long long wave = sms * kMinBlocks / blocks_x;
  if (wave < 1) wave = 1;
  if (one_row && thread_rows <= wave * kMaxRows) return thread_rows < 65535 ? thread_rows : 65535;
  const long long waves = thread_rows <= wave * kOneWaveRows
                              ? 1
                              : (thread_rows + wave * kMaxRows - 1) / (wave * kMaxRows);
  const long long rows_each = (thread_rows + wave * waves - 1) / (wave * waves);
  const long long gy = (thread_rows + rows_each - 1) / rows_each;
  return gy < 65535 ? gy : 65535;
}

}  // namespace pixflow::cuda::remap_ring
