// bilateral on CUDA: one thread per pixel over the circular window. The weight tables are
// computed on the host by exactly the reference's expressions and passed by value as a
// kernel parameter (no device allocation, capturable); sums use explicitly rounded float
// operations in the reference's order, so results equal the reference bit for bit.
#include <cmath>
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kMaxRadius = 31;
constexpr int kMaxTaps = (2 * kMaxRadius + 1) * (2 * kMaxRadius + 1);

struct BilateralTables {  // ~28 KB: within the 32 KB kernel-parameter limit of CUDA 12.1+
  float space[kMaxTaps];
  signed char dx[kMaxTaps], dy[kMaxTaps];
  float color[256 * 4];  // u8: exp(i^2 * coeff) for i < 256 * channels
  int n;
  double color_coeff;
};

template <class T>
__global__ void bilateral_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> b,
                                 const __grid_constant__ BilateralTables tab) {
  // The colour table is read at data-dependent indices: from the kernel-parameter
  // (constant) bank a warp's different indices serialise, from shared memory they do not.
  __shared__ float lut[256 * 4];
  const int cn = src.cn;
  if constexpr (!std::is_same_v<T, float>) {
    for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < 256 * cn; i += blockDim.x * blockDim.y)
      lut[i] = tab.color[i];
    __syncthreads();
  }
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    const T* centre = src.row(y) + x * cn;
    T cv[4];
    for (int c = 0; c < cn; ++c) cv[c] = centre[c];
    float sum[4] = {0.f, 0.f, 0.f, 0.f};
    float wsum = 0.f;
    for (int k = 0; k < tab.n; ++k) {
      T v[4];
      for (int c = 0; c < cn; ++c) v[c] = fetch(src, x + tab.dx[k], y + tab.dy[k], c, b);
      float cw;
      if constexpr (std::is_same_v<T, float>) {
        float delta = 0.f;
        for (int c = 0; c < cn; ++c) delta = __fadd_rn(delta, fabsf(__fsub_rn(v[c], cv[c])));
        cw = float(exp(__dmul_rn(__dmul_rn(double(delta), double(delta)), tab.color_coeff)));
      } else {
        int delta = 0;
        for (int c = 0; c < cn; ++c) delta += abs(int(v[c]) - int(cv[c]));
        cw = lut[delta];
      }
      const float wk = __fmul_rn(tab.space[k], cw);
      for (int c = 0; c < cn; ++c) sum[c] = __fadd_rn(sum[c], __fmul_rn(float(v[c]), wk));
      wsum = __fadd_rn(wsum, wk);
    }
    T* out = dst.row(y) + x * cn;
    for (int c = 0; c < cn; ++c) {
      const float r = __fdiv_rn(sum[c], wsum);
      if constexpr (std::is_same_v<T, float>) {
        out[c] = r;
      } else {
        out[c] = detail::saturate_cast<T>(double(r));
      }
    }
  }
}

// The reference's table construction (src/ref/bilateral.cpp), expression for expression.
BilateralTables make_tables(const BilateralParams& p, int cn) {
  BilateralTables t{};
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  t.color_coeff = -0.5 / (sc * sc);
  const double space_coeff = -0.5 / (ss * ss);
  int radius = p.d > 0 ? p.d / 2 : int(detail::round_half_even(ss * 1.5));
  if (radius < 1) radius = 1;
  detail::require(radius <= kMaxRadius, Status::invalid_argument, "bilateral",
                  "window radius must be <= ", kMaxRadius, " (got ", radius, ")");
  for (int i = -radius; i <= radius; ++i)
    for (int j = -radius; j <= radius; ++j) {
      const double r = std::sqrt(double(i) * i + double(j) * j);
      if (r > radius) continue;
      t.dy[t.n] = static_cast<signed char>(i);
      t.dx[t.n] = static_cast<signed char>(j);
      t.space[t.n] = float(std::exp(r * r * space_coeff));
      ++t.n;
    }
  for (int i = 0; i < 256 * cn; ++i) t.color[i] = float(std::exp(double(i) * i * t.color_coeff));
  return t;
}

template <class T>
void launch_bilateral(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                      cudaStream_t st) {
  const BilateralTables tab = make_tables(p, s.channels());
  bilateral_kernel<T>
      <<<grid_2d(d.width(), d.height(), kPixelBX, kPixelBY), dim3(kPixelBX, kPixelBY), 0, st>>>(
          dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border), tab);
  PIXFLOW_CUDA_CHECK_LAUNCH("bilateral");
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_bilateral) {
  using namespace pixflow;
  // The kernel takes 1 to 4 channels (sums and the u8 colour table are sized for 4); core
  // validates 1 or 3 (cv::bilateralFilter's set).
  cuda::add_depths<Depth::u8, Depth::f32>(
      table, "bilateral", [](auto t) { return &cuda::launch_bilateral<decltype(t)>; });
}
