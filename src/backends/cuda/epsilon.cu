// epsilon filter on CUDA: the generic window kernel. u8: integer sum and count,
// (2*sum + n) / (2*n); f32: double sum in window row-major order, float(sum / n) — the
// reference's rule and order.
#include <cstdint>

#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/window.cuh"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

template <class T>
struct EpsilonPolicy {
  int k;
  double t;
  template <class Win>
  __device__ T compute(const Win& w, int) const {
    const T c = w.center();
    if constexpr (std::is_same_v<T, float>) {
      double s = 0;
      int n = 0;
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < k; ++i) {
          const float p = w(i, j);
          if (fabs(double(p) - double(c)) <= t) {
            s += double(p);
            ++n;
          }
        }
      return float(s / n);
    } else {
      long long s = 0, n = 0;
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < k; ++i) {
          const int p = w(i, j);
          const int d = p > int(c) ? p - int(c) : int(c) - p;
          if (double(d) <= t) {
            s += p;
            ++n;
          }
        }
      return T((2 * s + n) / (2 * n));
    }
  }
};

template <class T>
void launch_epsilon(const ConstImageView& s, const ImageView& d, const EpsilonParams& p,
                    cudaStream_t st) {
  const int k = 2 * p.r + 1;
  launch_window(dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border), k, k, p.r, p.r,
                EpsilonPolicy<T>{k, p.t}, st);
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_epsilon) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::f32>(
      table, "epsilon", [](auto t) { return &cuda::launch_epsilon<decltype(t)>; });
}
