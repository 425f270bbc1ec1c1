// Separable linear filters on CUDA: box (this file), gaussian and sobel/scharr, all through
// the fused separable kernel of common/separable.cuh.
#include <cstdint>

#include "src/core/check.hpp"
#include "src/cuda/common/separable.cuh"
#include "src/cuda/cuda_ops.hpp"

namespace pixflow::cuda {
namespace {

// ---- box -------------------------------------------------------------------------------
// Integers: exact window sums (u8 in 32 bits, u16 in 64), then round-half-even division by
// n or saturation. f32: double sums, float(sum / n) — the reference's rule.
template <class T> struct BoxAcc { using type = long long; };
template <> struct BoxAcc<std::uint8_t> { using type = int; };
template <> struct BoxAcc<float> { using type = double; };

template <class T> struct BoxPolicy {
  using Acc = typename BoxAcc<T>::type;
  long long n;
  bool normalize;
  __device__ Acc h_init() const { return Acc(0); }
  __device__ Acc h(Acc a, T v, int) const { return a + Acc(v); }
  __device__ Acc v_init() const { return Acc(0); }
  __device__ Acc v(Acc a, Acc v, int) const { return a + v; }
  __device__ T out(Acc a) const {
    if constexpr (std::is_same_v<T, float>) {
      return normalize ? float(a / double(n)) : float(a);
    } else {
      return normalize ? T(detail::div_round_half_even((long long)a, n))
                       : detail::saturate_cast<T>((std::int64_t)a);
    }
  }
};

template <class T, class Acc>
__global__ void box_brute_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> b, int kw, int kh,
                                 bool normalize) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int rx = kw / 2, ry = kh / 2;
  BoxPolicy<T> pol{(long long)kw * kh, normalize};
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    for (int c = 0; c < src.cn; ++c) {
      Acc s = 0;
      for (int j = 0; j < kh; ++j) {
        Acc r = 0;
        for (int i = 0; i < kw; ++i) r += Acc(fetch(src, x + i - rx, y + j - ry, c, b));
        s += r;
      }
      dst.row(y)[x * src.cn + c] = pol.out(s);
    }
  }
}

template <class T>
void launch_box(const ConstImageView& s, const ImageView& d, const BoxParams& p, cudaStream_t st) {
  auto sv = dev_view<T>(s);
  auto dv = dev_view<T>(d);
  auto b = dev_border<T>(p.border);
  BoxPolicy<T> pol{(long long)p.kw * p.kh, p.normalize};
  if (p.kw % 2 == 1 && p.kh % 2 == 1 && launch_separable(sv, dv, b, p.kw / 2, p.kh / 2, pol, st))
    return;
  box_brute_kernel<T, typename BoxAcc<T>::type>
      <<<grid_2d(d.width(), d.height(), 32, 4), dim3(32, 4), 0, st>>>(sv, dv, b, p.kw, p.kh,
                                                                      p.normalize);
  PIXFLOW_CUDA_CHECK_LAUNCH("box");
}

}  // namespace

void box(const ConstImageView& src, const ImageView& dst, const BoxParams& p, void* stream) {
  const auto st = to_stream(stream);
  switch (src.depth()) {
    case Depth::u8: return launch_box<std::uint8_t>(src, dst, p, st);
    case Depth::u16: return launch_box<std::uint16_t>(src, dst, p, st);
    case Depth::f32: return launch_box<float>(src, dst, p, st);
    default: detail::fail(Status::unsupported, "box", "depth ", depth_name(src.depth()));
  }
}

}  // namespace pixflow::cuda
