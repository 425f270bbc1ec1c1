// The CUDA remap's schedule (src/backends/cuda/remap_ring.hpp) run on the CPU: a thread's walk
// over its rows against a model of cp.async commit groups in which a copy lands at the latest
// moment the wait allows (at the wait that completes its group) and may land at any moment
// after it is issued, so that:
// - a row's slot is read only after its own copy has landed (no read of a slot whose copy
//   may still be in flight, no read of an older row's maps);
// - no copy is issued into a slot whose landed maps have not been read yet, nor into one with
//   a copy still in flight (the ring's reuse without a barrier);
// - the thread computes exactly its rows y, y + step, ... < h, each once and in order, and no
//   copy is in flight when it returns;
// - the first row's maps are waited for alone (no other copy issued before them), and once a
//   row's use has called ahead() every row up to kRing - 1 rows ahead of it has been copied
//   (the look-ahead the kernel relies on for bandwidth), none further.
// And the grids the host launches (blocks_y): one row a thread where one wave would give at most
// kMaxRows, that wave up to kOneWaveRows, else at most kMaxRows rows a thread; the documented
// shapes of the bench's sizes.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include "src/backends/cuda/remap_ring.hpp"

namespace pixflow::test {
namespace {

namespace rr = cuda::remap_ring;

struct RingModel {
  struct Slot {
    long long landed = -1;   // the row whose maps the slot holds
    long long pending = -1;  // the row of a copy in flight into the slot
    bool read = true;        // landed maps read (a fresh slot holds nothing to read)
  };
  std::array<Slot, rr::kRing> slots;
  std::vector<std::vector<std::pair<int, int>>> groups;  // committed: (slot, row)
  std::vector<std::pair<int, int>> open;
  std::size_t completed = 0;  // groups [0, completed) have landed
  std::vector<long long> used;
  long long last_copied = -1;  // the highest row copied so far
  std::string error;

  void fail(const std::string& what) {
    if (error.empty()) error = what;
  }
  void copy(int s, int row) {
    if (s < 0 || s >= rr::kRing) return fail("slot out of range " + std::to_string(s));
    Slot& sl = slots[std::size_t(s)];
    if (sl.pending >= 0)
      fail("copy of row " + std::to_string(row) + " into slot " + std::to_string(s) +
           " while row " + std::to_string(sl.pending) + "'s copy is in flight");
    if (!sl.read)
      fail("copy of row " + std::to_string(row) + " into slot " + std::to_string(s) +
           " before row " + std::to_string(sl.landed) + " was read");
    sl.pending = row;
    last_copied = row > last_copied ? row : last_copied;
    open.emplace_back(s, row);
  }
  void commit() {
    groups.push_back(open);
    open.clear();
  }
  // cp.async.wait_group 0: every group lands (the first row's, issued alone).
  void wait_all() {
    if (groups.size() != 1)
      fail("the first wait with " + std::to_string(groups.size()) + " groups");
    land(0);
  }
  // cp.async.wait_group kRing - 1: every group but the newest kRing - 1 lands.
  void wait() { land(rr::kRing - 1); }
  void land(std::size_t keep) {
    while (groups.size() > keep && completed < groups.size() - keep) {
      for (auto [s, row] : groups[completed]) {
        Slot& sl = slots[std::size_t(s)];
        sl.landed = row;
        sl.pending = -1;
        sl.read = false;
      }
      ++completed;
    }
  }
  template <class Ahead>
  void use(int s, int row, long long h, long long step, Ahead&& ahead) {
    if (s < 0 || s >= rr::kRing) return fail("slot out of range " + std::to_string(s));
    Slot& sl = slots[std::size_t(s)];
    if (sl.pending >= 0 || sl.landed != row || sl.read)
      fail("row " + std::to_string(row) + " read from slot " + std::to_string(s) + " holding row " +
           std::to_string(sl.landed) + (sl.read ? " (read)" : "") +
           (sl.pending >= 0 ? ", a copy in flight" : ""));
    sl.read = true;
    used.push_back(row);
    ahead();
    long long want = row;  // the last row < h at most kRing - 1 rows ahead
    for (int k = 1; k < rr::kRing && want + step < h; ++k) want += step;
    if (last_copied != want)
      fail("after row " + std::to_string(row) + "'s ahead() the last row copied is " +
           std::to_string(last_copied) + ", not " + std::to_string(want));
  }
};

std::string run_walk(int y, long long h, long long step) {
  RingModel m;
  rr::walk(
      y, h, step, [&](int s, int row) { m.copy(s, row); }, [&] { m.commit(); },
      [&] { m.wait_all(); }, [&] { m.wait(); },
      [&](int s, int row, auto&& ahead) { m.use(s, row, h, step, ahead); });
  if (!m.open.empty()) m.fail("copies issued after the last commit");
  for (const auto& sl : m.slots)
    if (sl.pending >= 0) m.fail("row " + std::to_string(sl.pending) + "'s copy still in flight");
  std::vector<long long> want;
  for (long long r = y; r < h; r += step) want.push_back(r);
  if (m.used != want) m.fail("rows computed differ from y, y + step, ... < h");
  return m.error;
}

TEST(RemapRing, WalkReadsEachRowAfterItsCopyAndReusesSlotsOnlyOnceRead) {
  // Rows a thread from 1 (only the ring's fill) through several turns of the ring.
  for (int y : {0, 1, 7, 100})
    for (long long step : {1, 8, 13, 272})
      for (long long rows = 1; rows <= 3 * rr::kRing + 2; ++rows)
        for (long long extra : {0LL, 1LL, step - 1}) {
          const long long h = y + (rows - 1) * step + 1 + (extra < step ? extra : 0);
          ASSERT_EQ(run_walk(y, h, step), "") << "y " << y << " h " << h << " step " << step;
        }
  // Rows near 2^31: y + (kRing - 1) * step passes the int range.
  const long long big = (1LL << 31) - 1;
  for (long long step : {1LL << 28, 1LL << 29, (1LL << 30) + 3, big - 5})
    for (int y : {0, 5, 1 << 27})
      ASSERT_EQ(run_walk(y, big, step), "") << "y " << y << " step " << step;
}

// Image rows of the thread at block row by, thread row ty.
long long rows_of(long long by, int ty, long long gy, long long h, int block_rows) {
  const long long r0 = by * block_rows + ty, step = gy * block_rows;
  return r0 < h ? (h - r0 + step - 1) / step : 0;
}

TEST(RemapRing, GridsByTheRowsOneWaveWouldGive) {
  constexpr int kBy = 8;
  constexpr long long kSms = 132;
  // The bench's sizes (launch shapes: remap_ring.hpp; bench/NOTES.md, branch `remap4`).
  // 1920x1080, 4 outputs a thread: u8 one row, f32 one wave of 4 rows; 8192^2: 4 rows.
  EXPECT_EQ(rr::blocks_y(15, 1080, kBy, kSms, true), 135);
  EXPECT_EQ(rr::blocks_y(15, 1080, kBy, kSms, false), 34);
  EXPECT_EQ(rr::blocks_y(64, 8192, kBy, kSms, true), 256);
  EXPECT_EQ(rr::blocks_y(64, 8192, kBy, kSms, false), 256);
  for (bool one_row : {true, false})
    for (long long bx : {1LL, 2LL, 5LL, 15LL, 30LL, 33LL, 64LL, 65LL, 128LL, 600LL})
      for (long long h : {1LL, 7LL, 8LL, 9LL, 70LL, 1080LL, 2160LL, 8192LL, 70000LL, 1LL << 22}) {
        const long long gy = rr::blocks_y(bx, h, kBy, kSms, one_row);
        ASSERT_GE(gy, 1);
        ASSERT_LE(gy, 65535);
        ASSERT_LE(gy, (h + kBy - 1) / kBy) << "empty block rows: bx " << bx << " h " << h;
        long long lo = h, hi = 0;
        for (long long by : {0LL, gy / 2, gy - 1})
          for (int ty = 0; ty < kBy; ++ty) {
            const long long r = rows_of(by, ty, gy, h, kBy);
            if (by * kBy + ty >= h) continue;
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
          }
        if (gy < 65535) {
          ASSERT_LE(hi, rr::kOneWaveRows) << "bx " << bx << " h " << h << " one_row " << one_row;
        }
        ASSERT_LE(hi - lo, 1) << "bx " << bx << " h " << h << " one_row " << one_row;
        // Where one wave's blocks would give every thread at most kMaxRows rows, one row a
        // thread (below the grid's limit); at most kOneWaveRows, one wave; else at most
        // kMaxRows rows a thread.
        const long long wave = kSms * rr::kMinBlocks / bx > 0 ? kSms * rr::kMinBlocks / bx : 1;
        const long long thread_rows = (h + kBy - 1) / kBy;
        if (one_row && thread_rows <= wave * rr::kMaxRows) {
          if (thread_rows < 65535) {
            ASSERT_EQ(gy, thread_rows) << "bx " << bx << " h " << h << " one_row " << one_row;
          }
        } else if (thread_rows <= wave * rr::kOneWaveRows) {
          ASSERT_LE(gy, wave) << "bx " << bx << " h " << h << " one_row " << one_row;
        } else if (gy < 65535) {
          ASSERT_LE(hi, rr::kMaxRows) << "bx " << bx << " h " << h << " one_row " << one_row;
        }
      }
}

}  // namespace
}  // namespace pixflow::test
