// remap on CUDA: one thread per output pixel; the exact float expression of the reference
// with explicitly rounded operations (no FMA), each tap through the border rule.
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

template <class T>
__global__ void remap_kernel(DevView<T> src, DevView<float> mx, DevView<float> my, DevView<T> dst,
                             DevBorder<T> b, bool linear, float const_value) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int cn = src.cn;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    float fx = mx.row(y)[x], fy = my.row(y)[x];
    T* out = dst.row(y) + x * cn;
    if (!isfinite(fx) || !isfinite(fy)) {
      const T v = b.type == BorderType::constant ? b.value : T(0);
      for (int c = 0; c < cn; ++c) out[c] = v;
      continue;
    }
    constexpr float kLim = 1073741824.0f;  // 2^30
    fx = fminf(fmaxf(fx, -kLim), kLim);
    fy = fminf(fmaxf(fy, -kLim), kLim);
    if (!linear) {
      const long long ix =
          (long long)floor(double(fx) + 0.5);  // in double: 0.49999997f + 0.5f rounds up
      const long long iy = (long long)floor(double(fy) + 0.5);
      for (int c = 0; c < cn; ++c) out[c] = fetch(src, ix, iy, c, b);
      continue;
    }
    const float x0f = floorf(fx), y0f = floorf(fy);
    const long long x0 = (long long)x0f, y0 = (long long)y0f;
    const float ax = __fsub_rn(fx, x0f), ay = __fsub_rn(fy, y0f);
    const float bx = __fsub_rn(1.0f, ax), by = __fsub_rn(1.0f, ay);
    for (int c = 0; c < cn; ++c) {
      const float p00 = float(fetch(src, x0, y0, c, b));
      const float p10 = float(fetch(src, x0 + 1, y0, c, b));
      const float p01 = float(fetch(src, x0, y0 + 1, c, b));
      const float p11 = float(fetch(src, x0 + 1, y0 + 1, c, b));
      const float top = __fadd_rn(__fmul_rn(bx, p00), __fmul_rn(ax, p10));
      const float bot = __fadd_rn(__fmul_rn(bx, p01), __fmul_rn(ax, p11));
      const float v = __fadd_rn(__fmul_rn(by, top), __fmul_rn(ay, bot));
      if constexpr (std::is_same_v<T, float>) {
        out[c] = v;
      } else {
        out[c] = detail::saturate_cast<T>(double(v));
      }
    }
  }
  (void)const_value;
}

template <class T>
void launch_remap(const ConstImageView& s, const ConstImageView& mx, const ConstImageView& my,
                  const ImageView& d, const RemapParams& p, cudaStream_t st) {
  remap_kernel<T>
      <<<grid_2d(d.width(), d.height(), kRemapBX, kRemapBY), dim3(kRemapBX, kRemapBY), 0, st>>>(
          dev_view<T>(s), dev_view<float>(mx), dev_view<float>(my), dev_view<T>(d),
          dev_border<T>(p.border), p.interp == Interp::linear, float(p.border.value));
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
  // Any channel count (one loop over channels); core validates 1, 3 or 4. Maps are f32 x 1.
  cuda::add<&cuda::remap>(table, "remap", cuda::depths({Depth::u8, Depth::u16, Depth::f32}));
}
