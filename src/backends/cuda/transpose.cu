// transpose: 32x32 pixel tiles through padded shared memory; pixels move as opaque
// byte groups of the format's pixel size, so one kernel serves every depth x channels; u8 x 1
// with 4-byte aligned rows: 64 x 64-byte word tiles (transpose_u8.cuh).
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/cuda_ops.hpp"
#include "src/backends/cuda/transpose_u8.cuh"
#include "src/base/backend.hpp"
#include "src/base/error.hpp"

namespace pixflow::cuda {
namespace {

// A pixel as PB opaque bytes, aligned to AL (the sample size when the views allow it).
template <int PB, int AL>
struct alignas(AL) Px {
  unsigned char b[PB];
};

constexpr int kTile = kTransposeTile, kRows = kTransposeRows;  // launch.cuh

template <int PB, int AL>
__global__ void transpose_kernel(const unsigned char* src, long long sstride, unsigned char* dst,
                                 long long dstride, int w, int h, int rows_of_tiles) {
  __shared__ Px<PB, AL> tile[kTile][kTile + 1];  // +1: no bank conflicts on the column read
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * kTile;
  for (int by = blockIdx.y; by < rows_of_tiles; by += gridDim.y) {
    const int y0 = by * kTile;
    for (int j = ty; j < kTile; j += kRows) {
      const int x = x0 + tx, y = y0 + j;
      if (x < w && y < h)
        tile[j][tx] = reinterpret_cast<const Px<PB, AL>*>(src + (long long)y * sstride)[x];
    }
    __syncthreads();
    for (int j = ty; j < kTile; j += kRows) {
      const int ox = y0 + tx, oy = x0 + j;  // dst is h wide, w tall
      if (ox < h && oy < w)
        reinterpret_cast<Px<PB, AL>*>(dst + (long long)oy * dstride)[ox] = tile[tx][j];
    }
    __syncthreads();
  }
}

template <int PB, int AL>
void launch_transpose(const ConstImageView& s, const ImageView& d, cudaStream_t st) {
  const dim3 block(kTile, kRows);
  const dim3 grid = grid_2d(s.width(), s.height(), kTile, kTile);
  transpose_kernel<PB, AL>
      <<<grid, block, 0, st>>>(reinterpret_cast<const unsigned char*>(s.data()), s.stride(),
                               reinterpret_cast<unsigned char*>(d.data()), d.stride(),
                               int(s.width()), int(s.height()), blocks_y(s.height(), kTile));
  PIXFLOW_CUDA_CHECK_LAUNCH("transpose");
}

// PB-byte pixels with the widest access both views allow (AL: 1, or the sample size `al`).
template <int PB>
void launch_pixels(const ConstImageView& s, const ImageView& d, int al, cudaStream_t st) {
  if constexpr (PB % 4 == 0)
    if (al == 4) return launch_transpose<PB, 4>(s, d, st);
  if constexpr (PB % 2 == 0)
    if (al == 2) return launch_transpose<PB, 2>(s, d, st);
  launch_transpose<PB, 1>(s, d, st);
}

// launch_pixels<PB> for the PB among PBs equal to pb; false when none is.
template <int... PBs>
bool launch_sizes(int pb, const ConstImageView& s, const ImageView& d, int al, cudaStream_t st) {
  return ((pb == PBs ? (launch_pixels<PBs>(s, d, al, st), true) : false) || ...);
}

}  // namespace

void transpose(const ConstImageView& src, const ImageView& dst, cudaStream_t st) {
  const int pb = int(src.format().pixel_bytes());
  const int es = int(depth_bytes(src.depth()));
  if (pb == 1 && rows_aligned(src, 4) && rows_aligned(dst, 4)) {
    constexpr int T8 = kTransposeU8Tile, TH = kTransposeU8Threads;
    transpose_u8_kernel<U8Tiles::transpose>
        <<<grid_2d(src.width(), src.height(), T8, T8), dim3(TH, TH), 0, st>>>(
            reinterpret_cast<const unsigned char*>(src.data()), src.stride(),
            reinterpret_cast<unsigned char*>(dst.data()), dst.stride(), int(src.width()),
            int(src.height()), blocks_y(src.height(), T8));
    PIXFLOW_CUDA_CHECK_LAUNCH("transpose");
    return;
  }
  // Views may start at any byte and have any stride: use sample-aligned access only when
  // both views allow it, byte access otherwise (slower, never a misaligned read).
  const int al = rows_aligned(src, es) && rows_aligned(dst, es) ? es : 1;
  if (!launch_sizes<1, 2, 3, 4, 6, 8, 12, 16>(pb, src, dst, al, st))
    detail::fail(Status::unsupported, "transpose", "pixel size ", pb, " bytes on CUDA");
}

}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_transpose) {
  using namespace pixflow;
  // Pixels move as opaque groups of 1..16 bytes: every depth and channel count.
  cuda::add<&cuda::transpose>(
      table, "transpose",
      cuda::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}));
}
