// Point-wise ops on CUDA: add/sub/absdiff/mul (image and scalar), convert, threshold.
// The element rules are src/common/pointwise.hpp, shared with the reference. Each thread
// handles one sample; rows are looped so any height fits the grid.
#include <cstdint>

#include "src/common/pointwise.hpp"
#include "src/core/check.hpp"
#include "src/cuda/check.cuh"
#include "src/cuda/common/image.cuh"
#include "src/cuda/cuda_ops.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kBX = 256, kBY = 1;

// Calls f(y, i) for every sample i < n of every row y < h.
template <class F>
__device__ __forceinline__ void for_each_sample(long long n, long long h, F f) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < h;
       y += (long long)gridDim.y * blockDim.y)
    f(y, i);
}

template <class T>
__global__ void arith_kernel(DevView<T> a, DevView<T> b, DevView<T> d, ArithOp op) {
  for_each_sample((long long)d.w * d.cn, d.h, [&](long long y, long long i) {
    d.row(y)[i] = detail::arith_apply<T>(a.row(y)[i], b.row(y)[i], op);
  });
}

template <class T>
__global__ void arith_scalar_kernel(DevView<T> a, double v, DevView<T> d, ArithOp op) {
  for_each_sample((long long)d.w * d.cn, d.h, [&](long long y, long long i) {
    d.row(y)[i] = detail::arith_apply_scalar<T>(a.row(y)[i], v, op);
  });
}

template <class S, class D>
__global__ void convert_kernel(DevView<S> s, DevView<D> d, double scale, double offset, bool abs) {
  for_each_sample((long long)d.w * d.cn, d.h, [&](long long y, long long i) {
    d.row(y)[i] = detail::convert_apply<S, D>(s.row(y)[i], scale, offset, abs);
  });
}

template <class T>
__global__ void threshold_int_kernel(DevView<T> s, DevView<T> d, ThresholdType type, long long it,
                                     T tv, T mv) {
  for_each_sample((long long)d.w * d.cn, d.h, [&](long long y, long long i) {
    const T x = s.row(y)[i];
    d.row(y)[i] = detail::threshold_pick<T>(type, (long long)x > it, x, tv, mv);
  });
}

__global__ void threshold_f32_kernel(DevView<float> s, DevView<float> d, ThresholdType type,
                                     float t, float mv) {
  for_each_sample((long long)d.w * d.cn, d.h, [&](long long y, long long i) {
    const float x = s.row(y)[i];
    d.row(y)[i] = detail::threshold_pick<float>(type, x > t, x, t, mv);
  });
}

dim3 grid_for(const ImageView& d) {
  return grid_2d((long long)d.width() * d.channels(), d.height(), kBX, kBY);
}

template <class F>
void for_depth(Depth d, const char* op, F f) {
  switch (d) {
    case Depth::u8:
      return f(std::uint8_t{});
    case Depth::u16:
      return f(std::uint16_t{});
    case Depth::s16:
      return f(std::int16_t{});
    case Depth::s32:
      return f(std::int32_t{});
    case Depth::f32:
      return f(float{});
  }
  detail::fail(Status::unsupported, op, "depth");
}

}  // namespace

void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           void* stream) {
  for_depth(a.depth(), arith_op_name(op), [&](auto t) {
    using T = decltype(t);
    arith_kernel<T><<<grid_for(dst), dim3(kBX, kBY), 0, to_stream(stream)>>>(
        dev_view<T>(a), dev_view<T>(b), dev_view<T>(dst), op);
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("arith");
}

void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op, void* stream) {
  for_depth(a.depth(), arith_op_name(op), [&](auto t) {
    using T = decltype(t);
    arith_scalar_kernel<T><<<grid_for(dst), dim3(kBX, kBY), 0, to_stream(stream)>>>(
        dev_view<T>(a), value, dev_view<T>(dst), op);
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("arith");
}

void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
             void* stream) {
  for_depth(src.depth(), "convert", [&](auto s) {
    using S = decltype(s);
    for_depth(dst.depth(), "convert", [&](auto d) {
      using D = decltype(d);
      convert_kernel<S, D><<<grid_for(dst), dim3(kBX, kBY), 0, to_stream(stream)>>>(
          dev_view<S>(src), dev_view<D>(dst), p.scale, p.offset, p.abs);
    });
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("convert");
}

void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               void* stream) {
  for_depth(src.depth(), "threshold", [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) {
      threshold_f32_kernel<<<grid_for(dst), dim3(kBX, kBY), 0, to_stream(stream)>>>(
          dev_view<float>(src), dev_view<float>(dst), p.type, detail::to_float_clamped(p.t),
          detail::to_float_clamped(p.maxval));
    } else {
      const auto k = detail::int_threshold<T>(p.t, p.maxval);
      threshold_int_kernel<T><<<grid_for(dst), dim3(kBX, kBY), 0, to_stream(stream)>>>(
          dev_view<T>(src), dev_view<T>(dst), p.type, k.it, k.tv, k.mv);
    }
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("threshold");
}

}  // namespace pixflow::cuda
