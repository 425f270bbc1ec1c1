// box on one u8 channel by warp strips: box_warp_u8_kernel (its per-lane arithmetic in
// box_warp_u8.hpp) and its launch, run by separable.cu's "box" and by
// bench/micro/box_warp_shapes.cu.
#pragma once

#include <cstdint>

#include "pixflow/ops.hpp"
#include "src/backends/cuda/box_warp_u8.hpp"
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"

namespace pixflow::cuda {
namespace {

// Odd windows 5..31 wide (kh <= 255, odd when normalised), rows 8-byte aligned: a warp a strip of
// 256 columns and a segment of rows, the column sums in registers, the horizontal window by a
// warp scan and shuffles: no shared memory on the interior path and no block barrier (warps
// are independent). The byte-tile kernel stays the fallback.
namespace bw = box_warp;

template <int KW, bool kSum>
__global__ void __launch_bounds__(bw::kThreads, bw::min_blocks(KW, kSum))
    box_warp_u8_kernel(bw::Img src, bw::Img dst, bw::Params p) {
  // Source columns of the lanes that gather (border columns): each thread writes and reads
  // only its own 8 (no barrier); shared memory rather than 8 registers a thread.
  __shared__ int sources[bw::kThreads][bw::kLaneCols];
  const int lane = int(threadIdx.x) % bw::kLanes;
  const int strip = int(blockIdx.x) * bw::kWarps + int(threadIdx.x) / bw::kLanes;
  const int xb = bw::lane_col(strip, lane, KW);
  const bool direct = bw::lane_direct(xb, src.w);
  int* my = sources[threadIdx.x];
  if (!direct) bw::lane_sources(xb, src.w, p.border, my);
  if (strip >= p.strips) return;  // the whole warp: strips are warp-uniform
  const bool all_direct = __all_sync(0xffffffffu, direct);
  // Edge warps (not all_direct) by words where every lane's bytes allow (box_warp_u8.hpp,
  // plan_pick); the others gather (BorderRows).
  bw::Pick pk;
  const bool pick = __all_sync(0xffffffffu, bw::plan_pick(xb, lane, src.w, p.border, KW, pk));
  const unsigned cw = p.value * 0x01010101u;
  const bool out_lane = lane >= bw::first_out_lane(KW) && lane < bw::end_out_lane(KW) && xb < dst.w;
  const int ay = p.kh / 2;
  // A segment's rows: ys - ay - 1 (the first step takes it off) to ye - 1 - ay + kh - 1.
  // rows: a cursor (box_warp_u8.hpp) at row ys - ay - 1, the first the segment reads.
  auto segment = [&](long long ys, int n, auto rows) {
    // A used row: the pick path's select from the lane's and its partner's words of the row.
    auto use = [&](bw::Row8 r) {
      if constexpr (decltype(rows)::kPick) {
        const bw::Row8 o{__shfl_sync(0xffffffffu, r.lo, pk.partner),
                         __shfl_sync(0xffffffffu, r.hi, pk.partner)};
        return bw::select8(r, o, pk);
      } else {
        return r;
      }
    };
    // Rows ys - ay - 1 .. ys - ay + kh - 2 (row ys's window and the row before it), kAhead
    // loads in flight.
    bw::Cols c{0, 0, 0, 0};
    auto in = rows;
    int i = 0;
    for (; i + bw::kAhead <= p.kh; i += bw::kAhead) {
      bw::Row8 r[bw::kAhead];
#pragma unroll
      for (int k = 0; k < bw::kAhead; ++k) {
        r[k] = in.load(xb, direct, my, p.value);
        in.next();
      }
#pragma unroll
      for (int k = 0; k < bw::kAhead; ++k) bw::enter(c, use(r[k]));
    }
    for (; i < p.kh; ++i) {
      bw::enter(c, use(in.load(xb, direct, my, p.value)));
      in.next();
    }
    // Output row ys + r: row ys + r - ay + kh - 1 enters (`in` is there for r = 0), row ys +
    // r - ay - 1 leaves (`rows`). qi/qo[k] hold those of rows r with r % kAhead = k (a ring,
    // indices constant after unrolling). The cursors move on every row; only rows the segment
    // reads are loaded.
    auto refill = [&](bw::Row8& q, auto& cur, bool want) {
      if (want) q = cur.load(xb, direct, my, p.value);
      cur.next();
    };
    bw::Row8 qi[bw::kAhead] = {}, qo[bw::kAhead] = {};
#pragma unroll
    for (int k = 0; k < bw::kAhead; ++k) {
      refill(qi[k], in, k < n);
      refill(qo[k], rows, k < n);
    }
    // The horizontal chain of one row: local prefixes, the other lanes' values by independent
    // shuffles (the shuffles return the lane's own value off the warp's ends: only non-output
    // lanes read those), the window sums, the finish.
    auto horizontal = [&](const bw::Cols& cs) {
      unsigned q[bw::kLaneCols];
      bw::local_prefix(cs, q);
      unsigned sum[bw::kLaneCols];
      bw::window_sums<KW>(
          [&](int dl, int k2) -> unsigned {
            const unsigned x = q[k2];
            if (dl == 0) return x;
            return dl > 0 ? __shfl_down_sync(0xffffffffu, x, dl)
                          : __shfl_up_sync(0xffffffffu, x, -dl);
          },
          sum);
      return bw::finish<kSum>(sum, p.rcp);
    };
    unsigned char* out = dst.data + ys * dst.stride + xb;  // row ys + r's column xb
    // Rows r = rb + k, rb + k + 1 (ring slots k, k + 1): both vertical steps, the refills of
    // their slots, both horizontal chains (independent: the scheduler interleaves them), both
    // stores last so that no store splits the chains' basic block.
    auto pair = [&](int rb, int k) {
      bw::Cols c0 = c;
      bw::step(c0, use(qi[k]), use(qo[k]));
      c = c0;
      bw::step(c, use(qi[k + 1]), use(qo[k + 1]));
      refill(qi[k], in, rb + k + bw::kAhead < n);
      refill(qo[k], rows, rb + k + bw::kAhead < n);
      refill(qi[k + 1], in, rb + k + 1 + bw::kAhead < n);
      refill(qo[k + 1], rows, rb + k + 1 + bw::kAhead < n);
      const bw::Row8 o0 = horizontal(c0), o1 = horizontal(c);
      if (out_lane) {
        bw::store8(out, xb, dst.w, o0);
        bw::store8(out + dst.stride, xb, dst.w, o1);
      }
      out += 2 * dst.stride;
    };
    static_assert(bw::kAhead == 4, "the row loop takes the ring as two pairs");
    int rb = 0;
    for (; rb + bw::kAhead <= n; rb += bw::kAhead) {
      pair(rb, 0);
      pair(rb, 2);
    }
    // The last n % 4 rows (slots 0, 1, 2; already loaded: nothing more to refill).
    if (rb + 2 <= n) pair(rb, 0);
    auto single = [&](int k) {
      bw::step(c, use(qi[k]), use(qo[k]));
      const bw::Row8 o = horizontal(c);
      if (out_lane) bw::store8(out, xb, dst.w, o);
    };
    if (n - rb == 1) single(0);  // ring slots by constants (a runtime index: local memory)
    if (n - rb == 3) single(2);
  };
  for (long long sg = blockIdx.y; sg < p.segs; sg += gridDim.y) {
    const long long ys = sg * p.seg_rows;
    const int n = int(min((long long)dst.h - ys, (long long)p.seg_rows));
    const long long y0 = ys - ay - 1;  // the first row the segment reads
    // Segments whose rows all lie inside the image (all but the first and last one or two)
    // skip the border rule's tests and the constant's row.
    // Edge warps (pick) load one word a lane a row like the others; warps whose lanes' bytes
    // are not in whole words (w % 8 != 0, tiny images) gather on every segment.
    const bool inside = bw::segment_inside(ys, n, p.kh, src.h);
    if (inside && all_direct)
      segment(ys, n, bw::InsideRows<true>{src.data + y0 * src.stride + xb, src.stride});
    else if (inside && pick)
      segment(ys, n,
              bw::PickRows<true>{src.data + y0 * src.stride + pk.off, src.stride, pk.ld, cw});
    else if (pick && !all_direct)
      segment(ys, n, bw::PickRows<false>{&src, y0, p.border, pk.off, pk.ld, cw});
    else
      segment(ys, n, bw::BorderRows{&src, y0, p.border});
  }
}

template <int KW>
void launch_box_warp(int kw, const dim3& grid, const bw::Img& si, const bw::Img& di,
                     const bw::Params& k, bool sum, cudaStream_t st) {
  if constexpr (KW <= bw::kMaxKw) {
    if (kw != KW) return launch_box_warp<KW + 2>(kw, grid, si, di, k, sum, st);
    if (sum)
      box_warp_u8_kernel<KW, true><<<grid, bw::kThreads, 0, st>>>(si, di, k);
    else
      box_warp_u8_kernel<KW, false><<<grid, bw::kThreads, 0, st>>>(si, di, k);
  }
}

bool try_box_u8_warp(const ConstImageView& s, const ImageView& d, const BoxParams& p,
                     cudaStream_t st) {
  // Widths under 2^30 (int columns), heights under 2^23 (border_index32's range).
  if (s.channels() != 1 || !bw::takes(p.kw, p.kh, p.normalize) || !rows_aligned(s, 8) ||
      !rows_aligned(d, 8) || s.width() >= (1 << 30) || s.height() >= (1 << 23))
    return false;
  const bw::Plan pl =
      bw::plan(s.width(), s.height(), p.kw, kSmCount, bw::min_blocks(p.kw, !p.normalize));
  const bw::Params k = bw::params_of(p.kw, p.kh, p.border, pl);
  const dim3 grid(unsigned((pl.strips + bw::kWarps - 1) / bw::kWarps),
                  unsigned(pl.segs < 65535 ? pl.segs : 65535));
  const bw::Img si{const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(s.data())),
                   s.stride(), int(s.width()), int(s.height())};
  const bw::Img di{reinterpret_cast<unsigned char*>(d.data()), d.stride(), int(d.width()),
                   int(d.height())};
  launch_box_warp<bw::kMinKw>(p.kw, grid, si, di, k, !p.normalize, st);
  PIXFLOW_CUDA_CHECK_LAUNCH("box");
  return true;
}

}  // namespace
}  // namespace pixflow::cuda
