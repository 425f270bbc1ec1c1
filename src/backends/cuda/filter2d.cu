// filter2d on CUDA: the generic window kernel; the float sum runs from 0 in kernel row-major
// order with explicitly rounded multiply and add (no FMA), exactly the reference's rule.
#include <cstdint>
#include <cstring>

#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/window.cuh"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

struct Taps {
  float k[15 * 15];
  int kw, kh;
  float delta;
};

template <class T>
struct Filter2dPolicy {
  Taps t;
  template <class Win>
  __device__ T compute(const Win& w, int) const {
    float s = 0.0f;
    for (int j = 0; j < t.kh; ++j)
      for (int i = 0; i < t.kw; ++i) s = __fadd_rn(s, __fmul_rn(t.k[j * t.kw + i], float(w(i, j))));
    s = __fadd_rn(s, t.delta);
    if constexpr (std::is_same_v<T, float>) {
      return s;
    } else {
      return detail::saturate_cast<T>(double(s));
    }
  }
};

template <class T>
void launch_filter2d(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
                     cudaStream_t st) {
  Filter2dPolicy<T> pol{};
  std::memcpy(pol.t.k, p.kernel.data(), p.kernel.size() * sizeof(float));
  pol.t.kw = p.kw;
  pol.t.kh = p.kh;
  pol.t.delta = float(p.delta);
  launch_window(dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border), p.kw, p.kh, p.kw / 2,
                p.kh / 2, pol, st);
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_filter2d) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::f32>(
      table, "filter2d", [](auto t) { return &cuda::launch_filter2d<decltype(t)>; });
}
