// Point-wise ops on CUDA: add/sub/absdiff/mul (image and scalar), convert, threshold.
// The element rules are src/base/pointwise.hpp, shared with the reference. Each thread
// handles 16 bytes of a row; rows are looped so any height fits the grid.
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kBX = kPointBX, kBY = kPointBY;  // launch.cuh
// Each thread handles 16 bytes of a row (N samples): all N loads are issued before the
// first store, so a thread keeps 16 bytes in flight instead of one sample (one sample per
// thread left the u8 kernels latency-bound at ~5x the copy time; bench/NOTES.md).
template <class T>
constexpr int kVec = 16 / int(sizeof(T)) > 0 ? 16 / int(sizeof(T)) : 1;

// N samples at p, as 16-byte vector accesses when `vec` (every row start and stride of the
// call's views is 16-byte aligned), else one by one. Views with odd offsets take the scalar
// path and stay correct.
template <class T, int N>
__device__ __forceinline__ void load_n(const T* p, bool vec, T (&v)[N]) {
  if constexpr ((N * sizeof(T)) % 16 == 0) {
    if (vec) {
      _Pragma("unroll") for (int k = 0; k < int(N * sizeof(T) / 16); ++k) {
        const uint4 u = reinterpret_cast<const uint4*>(p)[k];
        memcpy(&v[k * 16 / sizeof(T)], &u, 16);
      }
      return;
    }
  }
  _Pragma("unroll") for (int k = 0; k < N; ++k) v[k] = p[k];
}
template <class T, int N>
__device__ __forceinline__ void store_n(T* p, bool vec, const T (&v)[N]) {
  if constexpr ((N * sizeof(T)) % 16 == 0) {
    if (vec) {
      _Pragma("unroll") for (int k = 0; k < int(N * sizeof(T) / 16); ++k) {
        uint4 u;
        memcpy(&u, &v[k * 16 / sizeof(T)], 16);
        reinterpret_cast<uint4*>(p)[k] = u;
      }
      return;
    }
  }
  _Pragma("unroll") for (int k = 0; k < N; ++k) p[k] = v[k];
}

// Row y, samples [i0, i0 + N) clipped to n: load all, then compute and store all.
#define PIXFLOW_FOR_CHUNKS(T, N, n, h, ...)                                      \
  const long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * (N); \
  if (i0 >= (n)) return;                                                         \
  const int cnt = (n)-i0 >= (N) ? (N) : int((n)-i0);                             \
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < (h);  \
       y += (long long)gridDim.y * blockDim.y) {                                 \
    __VA_ARGS__                                                                  \
  }

template <class T>
__global__ void arith_kernel(DevView<T> a, DevView<T> b, DevView<T> d, ArithOp op, bool vec) {
  constexpr int N = kVec<T>;
  PIXFLOW_FOR_CHUNKS(T, N, (long long)d.w * d.cn, d.h, {
    const T* pa = a.row(y) + i0;
    const T* pb = b.row(y) + i0;
    T* pd = d.row(y) + i0;
    T va[N], vb[N], vd[N];
    if (cnt == N) {
      load_n(pa, vec, va);
      load_n(pb, vec, vb);
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::arith_apply<T>(va[k], vb[k], op);
      store_n(pd, vec, vd);
    } else {
      for (int k = 0; k < cnt; ++k) pd[k] = detail::arith_apply<T>(pa[k], pb[k], op);
    }
  })
}

template <class T>
__global__ void arith_scalar_kernel(DevView<T> a, double v, DevView<T> d, ArithOp op, bool vec) {
  constexpr int N = kVec<T>;
  PIXFLOW_FOR_CHUNKS(T, N, (long long)d.w * d.cn, d.h, {
    const T* pa = a.row(y) + i0;
    T* pd = d.row(y) + i0;
    T va[N], vd[N];
    if (cnt == N) {
      load_n(pa, vec, va);
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::arith_apply_scalar<T>(va[k], v, op);
      store_n(pd, vec, vd);
    } else {
      for (int k = 0; k < cnt; ++k) pd[k] = detail::arith_apply_scalar<T>(pa[k], v, op);
    }
  })
}

template <class S, class D>
__global__ void convert_kernel(DevView<S> s, DevView<D> d, double scale, double offset, bool abs,
                               bool vec) {
  constexpr int N = kVec<S> < kVec<D> ? kVec<S> : kVec<D>;
  PIXFLOW_FOR_CHUNKS(S, N, (long long)d.w * d.cn, d.h, {
    const S* ps = s.row(y) + i0;
    D* pd = d.row(y) + i0;
    S vs[N];
    D vd[N];
    if (cnt == N) {
      load_n(ps, vec, vs);
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::convert_apply<S, D>(vs[k], scale, offset, abs);
      store_n(pd, vec, vd);
    } else {
      for (int k = 0; k < cnt; ++k) pd[k] = detail::convert_apply<S, D>(ps[k], scale, offset, abs);
    }
  })
}

template <class T>
__global__ void threshold_int_kernel(DevView<T> s, DevView<T> d, ThresholdType type, long long it,
                                     T tv, T mv, bool vec) {
  constexpr int N = kVec<T>;
  PIXFLOW_FOR_CHUNKS(T, N, (long long)d.w * d.cn, d.h, {
    const T* ps = s.row(y) + i0;
    T* pd = d.row(y) + i0;
    T vs[N], vd[N];
    if (cnt == N) {
      load_n(ps, vec, vs);
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::threshold_pick<T>(type, (long long)vs[k] > it, vs[k], tv, mv);
      store_n(pd, vec, vd);
    } else {
      for (int k = 0; k < cnt; ++k)
        pd[k] = detail::threshold_pick<T>(type, (long long)ps[k] > it, ps[k], tv, mv);
    }
  })
}

__global__ void threshold_f32_kernel(DevView<float> s, DevView<float> d, ThresholdType type,
                                     float t, float mv, bool vec) {
  constexpr int N = 4;
  PIXFLOW_FOR_CHUNKS(float, N, (long long)d.w* d.cn, d.h, {
    const float* ps = s.row(y) + i0;
    float* pd = d.row(y) + i0;
    float vs[N], vd[N];
    if (cnt == N) {
      load_n(ps, vec, vs);
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::threshold_pick<float>(type, vs[k] > t, vs[k], t, mv);
      store_n(pd, vec, vd);
    } else {
      for (int k = 0; k < cnt; ++k)
        pd[k] = detail::threshold_pick<float>(type, ps[k] > t, ps[k], t, mv);
    }
  })
}

// True when every view's start and stride are 16-byte aligned (vector path).
bool aligned16(std::initializer_list<ConstImageView> views) {
  for (const auto& v : views)
    if (reinterpret_cast<std::uintptr_t>(v.data()) % 16 != 0 || v.stride() % 16 != 0) return false;
  return true;
}

dim3 grid_for(const ImageView& d, int per_thread) {
  return grid_2d((long long)d.width() * d.channels(), d.height(), kBX * per_thread, kBY);
}

void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           cudaStream_t stream) {
  detail::visit_depth(a.depth(), [&](auto t) -> void {
    using T = decltype(t);
    arith_kernel<T><<<grid_for(dst, kVec<T>), dim3(kBX, kBY), 0, stream>>>(
        dev_view<T>(a), dev_view<T>(b), dev_view<T>(dst), op, aligned16({a, b, dst}));
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("arith");
}

void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op,
           cudaStream_t stream) {
  detail::visit_depth(a.depth(), [&](auto t) -> void {
    using T = decltype(t);
    arith_scalar_kernel<T><<<grid_for(dst, kVec<T>), dim3(kBX, kBY), 0, stream>>>(
        dev_view<T>(a), value, dev_view<T>(dst), op, aligned16({a, dst}));
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("arith");
}

void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
             cudaStream_t stream) {
  detail::visit_depth(src.depth(), [&](auto s) -> void {
    using S = decltype(s);
    detail::visit_depth(dst.depth(), [&](auto d) -> void {
      using D = decltype(d);
      convert_kernel<S, D>
          <<<grid_for(dst, kVec<S> < kVec<D> ? kVec<S> : kVec<D>), dim3(kBX, kBY), 0, stream>>>(
              dev_view<S>(src), dev_view<D>(dst), p.scale, p.offset, p.abs, aligned16({src, dst}));
    });
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("convert");
}

void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               cudaStream_t stream) {
  detail::visit_depth(src.depth(), [&](auto t) -> void {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) {
      threshold_f32_kernel<<<grid_for(dst, 4), dim3(kBX, kBY), 0, stream>>>(
          dev_view<float>(src), dev_view<float>(dst), p.type, detail::to_float_clamped(p.t),
          detail::to_float_clamped(p.maxval), aligned16({src, dst}));
    } else {
      const auto k = detail::int_threshold<T>(p.t, p.maxval);
      threshold_int_kernel<T><<<grid_for(dst, kVec<T>), dim3(kBX, kBY), 0, stream>>>(
          dev_view<T>(src), dev_view<T>(dst), p.type, k.it, k.tv, k.mv, aligned16({src, dst}));
    }
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("threshold");
}

// The two call shapes of arith as named pointers (template arguments for the registration).
constexpr void (*arith_image)(const ConstImageView&, const ConstImageView&, const ImageView&,
                              ArithOp, cudaStream_t) = &arith;
constexpr void (*arith_scalar)(const ConstImageView&, double, const ImageView&, ArithOp,
                               cudaStream_t) = &arith;

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_arith) {
  using namespace pixflow;
  const auto any = cuda::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  // Every op key takes an image or a scalar second operand; the ArithOp argument names the op.
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    cuda::add<cuda::arith_image>(table, op, any);
    cuda::add<cuda::arith_scalar>(table, op, any);
  }
  // Any source depth to any destination depth (`p.to`, validated by core).
  cuda::add<&cuda::convert>(table, "convert", any);
  cuda::add<&cuda::threshold>(table, "threshold", any);
}
