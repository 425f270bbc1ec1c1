// gray on CUDA: one thread per pixel; integer rule (R*9798 + G*19235 + B*3735 + 16384) >> 15
// for u8/u16 (= cv::cvtColor, measured), 0.299R + 0.587G + 0.114B with rounded float ops (no FMA)
// for f32.
#include <cstdint>

#include "src/core/check.hpp"
#include "src/cuda/check.cuh"
#include "src/cuda/common/image.cuh"
#include "src/cuda/cuda_ops.hpp"

namespace pixflow::cuda {
namespace {

template <class T>
__global__ void gray_kernel(DevView<T> src, DevView<T> dst, int ri, int bi) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    const T* p = src.row(y) + x * src.cn;
    if constexpr (std::is_same_v<T, float>) {
      const float v = __fadd_rn(__fadd_rn(__fmul_rn(0.299f, p[ri]), __fmul_rn(0.587f, p[1])),
                                __fmul_rn(0.114f, p[bi]));
      dst.row(y)[x] = v;
    } else {
      // The reference's rule (src/ref/color.cpp): OpenCV's Q15 coefficients; at most
      // 65535 * 32768 + 16384 < 2^31, so 32 bits suffice.
      const unsigned v =
          9798u * unsigned(p[ri]) + 19235u * unsigned(p[1]) + 3735u * unsigned(p[bi]) + 16384u;
      dst.row(y)[x] = T(v >> 15);
    }
  }
}

template <class T>
void launch_gray(const ConstImageView& s, const ImageView& d, const GrayParams& p,
                 cudaStream_t st) {
  gray_kernel<T><<<grid_2d(d.width(), d.height(), 128, 2), dim3(128, 2), 0, st>>>(
      dev_view<T>(s), dev_view<T>(d), p.from_bgr ? 2 : 0, p.from_bgr ? 0 : 2);
  PIXFLOW_CUDA_CHECK_LAUNCH("gray");
}

}  // namespace

void gray(const ConstImageView& src, const ImageView& dst, const GrayParams& p, void* stream) {
  switch (src.depth()) {
    case Depth::u8:
      return launch_gray<std::uint8_t>(src, dst, p, to_stream(stream));
    case Depth::u16:
      return launch_gray<std::uint16_t>(src, dst, p, to_stream(stream));
    case Depth::f32:
      return launch_gray<float>(src, dst, p, to_stream(stream));
    default:
      detail::fail(Status::unsupported, "gray", "depth ", depth_name(src.depth()));
  }
}

}  // namespace pixflow::cuda
