// dilate / erode passes: the fused separable kernel with max / min; windows too large for
// shared memory go through a brute-force 2-D kernel (exact, slow: kw*kh reads per pixel).
#include <cfloat>
#include <cstdint>

#include "src/core/check.hpp"
#include "src/cuda/common/separable.cuh"
#include "src/cuda/cuda_ops.hpp"

namespace pixflow::cuda {
namespace {

template <class T> __device__ __forceinline__ T lowest();
template <> __device__ __forceinline__ std::uint8_t lowest() { return 0; }
template <> __device__ __forceinline__ std::uint16_t lowest() { return 0; }
template <> __device__ __forceinline__ float lowest() { return -FLT_MAX; }
template <class T> __device__ __forceinline__ T highest();
template <> __device__ __forceinline__ std::uint8_t highest() { return 255; }
template <> __device__ __forceinline__ std::uint16_t highest() { return 65535; }
template <> __device__ __forceinline__ float highest() { return FLT_MAX; }

template <class T, bool kMax> struct MorphPolicy {
  using Acc = T;
  __device__ T h_init() const { return kMax ? lowest<T>() : highest<T>(); }
  __device__ T h(T a, T v, int) const { return kMax ? (v > a ? v : a) : (v < a ? v : a); }
  __device__ T v_init() const { return h_init(); }
  __device__ T v(T a, T v, int k) const { return h(a, v, k); }
  __device__ T out(T a) const { return a; }
};

template <class T, bool kMax>
__global__ void morph_brute_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> b, int kw, int kh) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int rx = kw / 2, ry = kh / 2;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    for (int c = 0; c < src.cn; ++c) {
      T a = kMax ? lowest<T>() : highest<T>();
      for (int j = 0; j < kh; ++j)
        for (int i = 0; i < kw; ++i) {
          const T v = fetch(src, x + i - rx, y + j - ry, c, b);
          a = kMax ? (v > a ? v : a) : (v < a ? v : a);
        }
      dst.row(y)[x * src.cn + c] = a;
    }
  }
}

template <class T, bool kMax>
void launch_morph(const ConstImageView& s, const ImageView& d, int kw, int kh, const Border& border,
                  cudaStream_t st) {
  auto sv = dev_view<T>(s);
  auto dv = dev_view<T>(d);
  auto b = dev_border<T>(border);
  // The window's anchor is (kw/2, kh/2): left reach kw/2, right reach kw-1-kw/2. For even
  // sizes the separable kernel's symmetric radius does not fit: use the 2-D kernel.
  if (kw % 2 == 1 && kh % 2 == 1 &&
      launch_separable(sv, dv, b, kw / 2, kh / 2, MorphPolicy<T, kMax>{}, st))
    return;
  morph_brute_kernel<T, kMax><<<grid_2d(d.width(), d.height(), 32, 4), dim3(32, 4), 0, st>>>(
      sv, dv, b, kw, kh);
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
}

}  // namespace

void morph_pass(const ConstImageView& src, const ImageView& dst, MorphOp op, int kw, int kh,
                const Border& border, void* stream) {
  const bool mx = op == MorphOp::dilate;
  const auto st = to_stream(stream);
  switch (src.depth()) {
    case Depth::u8:
      return mx ? launch_morph<std::uint8_t, true>(src, dst, kw, kh, border, st)
                : launch_morph<std::uint8_t, false>(src, dst, kw, kh, border, st);
    case Depth::u16:
      return mx ? launch_morph<std::uint16_t, true>(src, dst, kw, kh, border, st)
                : launch_morph<std::uint16_t, false>(src, dst, kw, kh, border, st);
    case Depth::f32:
      return mx ? launch_morph<float, true>(src, dst, kw, kh, border, st)
                : launch_morph<float, false>(src, dst, kw, kh, border, st);
    default: detail::fail(Status::unsupported, morph_op_name(op), "depth ", depth_name(src.depth()));
  }
}

}  // namespace pixflow::cuda
