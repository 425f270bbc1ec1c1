// transpose: 32x32 pixel tiles through padded shared memory; pixels move as opaque
// byte groups of the format's pixel size, so one kernel serves every depth x channels.
#include "src/core/check.hpp"
#include "src/cuda/check.cuh"
#include "src/cuda/common/image.cuh"
#include "src/cuda/cuda_ops.hpp"

namespace pixflow::cuda {
namespace {

// A pixel as PB opaque bytes, aligned to AL (the sample size when the views allow it).
template <int PB, int AL>
struct alignas(AL) Px {
  unsigned char b[PB];
};

constexpr int kTile = 32, kRows = 8;

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

}  // namespace

void transpose(const ConstImageView& src, const ImageView& dst, void* stream) {
  const int pb = int(src.format().pixel_bytes());
  const int es = int(depth_bytes(src.depth()));
  const auto st = to_stream(stream);
  // Views may start at any byte and have any stride: use sample-aligned access only when
  // both views allow it, byte access otherwise (slower, never a misaligned read).
  const bool aligned = reinterpret_cast<std::uintptr_t>(src.data()) % es == 0 &&
                       reinterpret_cast<std::uintptr_t>(dst.data()) % es == 0 &&
                       src.stride() % es == 0 && dst.stride() % es == 0;
  if (!aligned) {
    switch (pb) {
      case 1:
        return launch_transpose<1, 1>(src, dst, st);
      case 2:
        return launch_transpose<2, 1>(src, dst, st);
      case 3:
        return launch_transpose<3, 1>(src, dst, st);
      case 4:
        return launch_transpose<4, 1>(src, dst, st);
      case 6:
        return launch_transpose<6, 1>(src, dst, st);
      case 8:
        return launch_transpose<8, 1>(src, dst, st);
      case 12:
        return launch_transpose<12, 1>(src, dst, st);
      case 16:
        return launch_transpose<16, 1>(src, dst, st);
    }
  } else if (es == 1) {
    switch (pb) {
      case 1:
        return launch_transpose<1, 1>(src, dst, st);
      case 3:
        return launch_transpose<3, 1>(src, dst, st);
      case 4:
        return launch_transpose<4, 1>(src, dst, st);
    }
  } else if (es == 2) {
    switch (pb) {
      case 2:
        return launch_transpose<2, 2>(src, dst, st);
      case 6:
        return launch_transpose<6, 2>(src, dst, st);
      case 8:
        return launch_transpose<8, 2>(src, dst, st);
    }
  } else {
    switch (pb) {
      case 4:
        return launch_transpose<4, 4>(src, dst, st);
      case 12:
        return launch_transpose<12, 4>(src, dst, st);
      case 16:
        return launch_transpose<16, 4>(src, dst, st);
    }
  }
  detail::fail(Status::unsupported, "transpose", "pixel size ", pb, " bytes on CUDA");
}

}  // namespace pixflow::cuda
