// "morph_pass" (one dilate or erode) on CUDA: the fused separable kernel with max / min (any
// size and anchor); 3x3 centred on one u8 channel through the packed kernel. Iterations and
// the composites (open, close, ...) are built by core from this pass and "sub".
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/u8_3x3.cuh"
#include "src/base/backend.hpp"
#include "src/base/numeric.hpp"
#include "src/base/passes.hpp"
#include "src/base/visit_depth.hpp"

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

// f32 in totalOrder (detail::order_key, as the reference): each sample becomes its signed
// key once, in the horizontal pass; the extremes are integer max / min (one IMNMX), the
// vertical pass works on keys, and the output turns the key back into the float's bits.
template <bool kMax>
struct MorphPolicy<float, kMax> {
  using Acc = std::int32_t;
  static constexpr bool kVerticalFirst = false;
  __device__ Acc h_init() const { return kMax ? INT32_MIN : INT32_MAX; }
  __device__ Acc h(Acc a, float v, int) const {
    const Acc k = detail::order_key(v);
    return kMax ? max(a, k) : min(a, k);
  }
  __device__ Acc v_init() const { return h_init(); }
  __device__ Acc v(Acc a, Acc b, int) const { return kMax ? max(a, b) : min(a, b); }
  __device__ float out(Acc a) const { return detail::from_order_key(a); }
};

template <class T, bool kMax>
void launch_morph(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                  const Border& border, cudaStream_t st) {
  // 3x3 centred on one u8 channel: the packed kernel (16x2 lanes, Hopper 3-input min/max)
  // when the destination allows it.
  if (std::is_same_v<T, std::uint8_t> && w.kw == 3 && w.kh == 3 && w.ax == 1 && w.ay == 1 &&
      u8_3x3::launch_3x3(u8_3x3::morph3_u8_kernel<kMax>, s, d, border, "morphology", st))
    return;
  launch_separable(dev_view<T>(s), dev_view<T>(d), dev_border<T>(border), w, MorphPolicy<T, kMax>{},
                   st);
}

void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                cudaStream_t st) {
  const SepWindow w{m.kw, m.kh, m.ax, m.ay};
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) -> void {
    using T = decltype(t);
    if (m.op == MorphOp::dilate)
      launch_morph<T, true>(src, dst, w, m.border, st);
    else
      launch_morph<T, false>(src, dst, w, m.border, st);
  });
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_morphology) {
  using namespace pixflow;
  cuda::add<&cuda::morph_pass>(table, "morph_pass",
                               cuda::depths({Depth::u8, Depth::u16, Depth::f32}));
}
