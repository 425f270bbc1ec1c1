// dilate / erode passes: the fused separable kernel with max / min (any size and anchor).
#include <cfloat>
#include <cstdint>

#include "src/core/check.hpp"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/cuda_ops.hpp"
#include "src/backends/cuda/u8_3x3.cuh"

namespace pixflow::cuda {
namespace {

template <class T>
__device__ __forceinline__ T lowest();
template <>
__device__ __forceinline__ std::uint8_t lowest() {
  return 0;
}
template <>
__device__ __forceinline__ std::uint16_t lowest() {
  return 0;
}
template <>
__device__ __forceinline__ float lowest() {
  return -FLT_MAX;
}
template <class T>
__device__ __forceinline__ T highest();
template <>
__device__ __forceinline__ std::uint8_t highest() {
  return 255;
}
template <>
__device__ __forceinline__ std::uint16_t highest() {
  return 65535;
}
template <>
__device__ __forceinline__ float highest() {
  return FLT_MAX;
}

template <class T, bool kMax>
struct MorphPolicy {
  using Acc = T;
  static constexpr bool kVerticalFirst = false;
  __device__ T h_init() const { return kMax ? lowest<T>() : highest<T>(); }
  __device__ T h(T a, T v, int) const { return kMax ? (v > a ? v : a) : (v < a ? v : a); }
  __device__ T v_init() const { return h_init(); }
  __device__ T v(T a, T v, int k) const { return h(a, v, k); }
  __device__ T out(T a) const { return a; }
};

template <class T, bool kMax>
void launch_morph(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                  const Border& border, cudaStream_t st) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    // 3x3 on one u8 channel: the packed kernel (16x2 lanes, Hopper 3-input min/max), which
    // needs 4-byte aligned destination rows for its word stores.
    const bool dst_aligned =
        reinterpret_cast<std::uintptr_t>(d.data()) % 4 == 0 && d.stride() % 4 == 0;
    if (w.kw == 3 && w.kh == 3 && w.ax == 1 && w.ay == 1 && s.channels() == 1 && dst_aligned) {
      namespace k = u8_3x3;
      const bool src_aligned =
          reinterpret_cast<std::uintptr_t>(s.data()) % 4 == 0 && s.stride() % 4 == 0;
      k::morph3_u8_kernel<kMax>
          <<<grid_2d(d.width(), d.height(), k::kBW, k::kBH), dim3(k::kTX, k::kTY), 0, st>>>(
              dev_view<T>(s), dev_view<T>(d), dev_border<T>(border), src_aligned,
              blocks_y(d.height(), k::kBH));
      PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
      return;
    }
  }
  launch_separable(dev_view<T>(s), dev_view<T>(d), dev_border<T>(border), w, MorphPolicy<T, kMax>{},
                   st);
}

}  // namespace

void morph_pass(const ConstImageView& src, const ImageView& dst, MorphOp op, int kw, int kh, int ax,
                int ay, const Border& border, void* stream) {
  const bool mx = op == MorphOp::dilate;
  const SepWindow w{kw, kh, ax, ay};
  const auto st = to_stream(stream);
  switch (src.depth()) {
    case Depth::u8:
      return mx ? launch_morph<std::uint8_t, true>(src, dst, w, border, st)
                : launch_morph<std::uint8_t, false>(src, dst, w, border, st);
    case Depth::u16:
      return mx ? launch_morph<std::uint16_t, true>(src, dst, w, border, st)
                : launch_morph<std::uint16_t, false>(src, dst, w, border, st);
    case Depth::f32:
      return mx ? launch_morph<float, true>(src, dst, w, border, st)
                : launch_morph<float, false>(src, dst, w, border, st);
    default:
      detail::fail(Status::unsupported, morph_op_name(op), "depth ", depth_name(src.depth()));
  }
}

}  // namespace pixflow::cuda
