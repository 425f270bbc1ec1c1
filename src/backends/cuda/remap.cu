// remap on CUDA. The exact float expression of the reference (src/ref/remap.cpp) with
// explicitly rounded operations (no FMA), in two kernels (remap_kernels.cuh):
//
// - the fast kernels (every source below 2^23 pixels a side and 2^31 bytes, the usual case),
//   one kernel at every size (remap_ring_kernel): each thread kRemapPx (or kRemapPxWide)
//   adjacent outputs of up to remap_ring::kMaxRows rows gridDim.y * 8 apart (remap_ring.hpp,
//   blocks_y: one row a thread at 1920x1080, whole waves of 4 rows at 8192^2), the maps of its next
//   3 rows always in flight by cp.async into its own slots of a shared ring (no registers:
//   56-64 registers, 4 blocks a SM), so that the maps stream continuously and a thread waits
//   on its taps only; its first row's maps are fetched alone, and rows 1-3 are copied after
//   the first row's tap loads left (remap_ring::walk). 16-byte copies of both
//   maps and packed stores where rows are aligned (decided on the host), scalar otherwise and in
//   the row's tail. A pixel whose taps all lie inside the source (the interior of any warp that is
//   not a lens's edge) takes the fast formula: no border code, 32-bit offsets, read-only loads, and
//   no conversion instructions (16 a clock per SM on sm_90 against 128 FP32): floor and the int
//   come from one add rounded toward zero onto the 2^23 grid, u8/u16 samples become floats as 2^23
//   + s - 2^23, results round half to even as v + 2^23. A thread whose pixels are all interior runs
//   them as one straight block, so all its loads are in flight together; u8x3 linear reads each
//   source row's two taps as aligned 32-bit words (remap_u8x3.hpp: 6 loads a pixel instead of 12
//   byte loads) where the source's start and stride are multiples of 4. A thread with any other
//   pixel (taps across an edge, non-finite or far-away map values, the row's tail), and every
//   thread of its warp (one path a warp: no interior pass followed by a border pass), takes
//   the reference's rule for all its pixels in three phases: every tap's offset through the border
//   rule (ALU only), then every load (predicated, one block), then the arithmetic; never a
//   load whose value is needed before the next one is issued (the edge warps of a lens map
//   were the 1080p bottleneck when each tap's load waited on the previous one).
// - remap_kernel (any size): one pixel per thread, every tap through the border rule with
//   64-bit indices; only for sources too large for the 32-bit offsets above.
//
// Bytes and instructions (8192^2 u8x1 linear, the bench's smooth maps): 8 B of maps + ~1 B
// of source + 1 B out = 10 B/px = 671 MB, 224 us at the measured copy rate (the floor);
// ~45 instructions a pixel = 3.0e9 thread-instructions / (132 SMs x 4 x 32 x 1.755 GHz)
// = ~100 us of issue, so memory-bound. u8x3: 14 B/px (313 us floor), ~90 instr/px (~200 us);
// its 6 word loads a pixel touch ~3.5 L1 lines each per warp: ~0.66 wavefronts a pixel,
// ~190 us of L1 time (the byte loads took ~1.3, ~380 us: above the DRAM floor).
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/remap_kernels.cuh"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

template <class T>
void launch_remap(const ConstImageView& s, const ConstImageView& mx, const ConstImageView& my,
                  const ImageView& d, const RemapParams& p, cudaStream_t st) {
  if (d.width() == 0 || d.height() == 0) return;
  if (fast_applies(s, d)) {
    switch (s.channels()) {
      case 1:
        return launch_fast_cn<T, 1>(s, mx, my, d, p, st);
      case 2:
        return launch_fast_cn<T, 2>(s, mx, my, d, p, st);
      case 3:
        return launch_fast_cn<T, 3>(s, mx, my, d, p, st);
      case 4:
        return launch_fast_cn<T, 4>(s, mx, my, d, p, st);
      default:
        break;
    }
  }
  remap_kernel<T>
      <<<grid_2d(d.width(), d.height(), kRemapBX, kRemapBY), dim3(kRemapBX, kRemapBY), 0, st>>>(
          dev_view<T>(s), dev_view<float>(mx), dev_view<float>(my), dev_view<T>(d),
          dev_border<T>(p.border), p.interp == Interp::linear);
  PIXFLOW_CUDA_CHECK_LAUNCH("remap");
}

void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, cudaStream_t st) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) -> void {
    launch_remap<decltype(t)>(src, map_x, map_y, dst, p, st);
  });
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_remap) {
  using namespace pixflow;
  // Any channel count 1..4 (fast kernels per count, the general one loops); core validates
  // 1, 3 or 4. Maps are f32 x 1.
  cuda::add<&cuda::remap>(table, "remap", cuda::depths({Depth::u8, Depth::u16, Depth::f32}));
}
