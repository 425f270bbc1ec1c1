// Point-wise ops on CUDA: add/sub/absdiff/mul (image and scalar), convert, threshold.
// The element rules are src/base/pointwise.hpp, shared with the reference; u8 image-image
// arithmetic runs them four bytes a word (pointwise_u8_packed.hpp, exhaustively tested on the
// host). Image and scalar arithmetic: one 16-byte chunk a thread, the image's chunks taken flat
// in row-major order (launch.cuh, PointGrid); convert and threshold: one or two chunks of a row
// a thread, rows looped (the flat grid made them 1-8 % slower, bench/NOTES.md session 17).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/pointwise_u8_packed.hpp"
#include "src/base/backend.hpp"
#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

// Chunks a thread of convert and threshold (launch.cuh): kPointVecs for 1-byte samples, whose
// 1920x1080 rows are short (120 chunks u8x1); 1 for wider samples, which keep 32 registers (with 2:
// 55-64, 4 blocks a SM) and whose rows already have 2-4x the chunks.
template <class T>
constexpr int kVecs = sizeof(T) == 1 ? kPointVecs : 1;
// A chunk is 16 bytes of a row (N samples): all of a thread's chunk loads are issued before
// the first store, so a thread keeps kVecs x 16 bytes in flight instead of one sample (one
// sample per thread left the u8 kernels latency-bound at ~5x the copy time; bench/NOTES.md).
template <class T>
constexpr int kVec = 16 / int(sizeof(T)) > 0 ? 16 / int(sizeof(T)) : 1;

// N samples at p, as 16-byte vector accesses when `vec` (every row start and stride of the
// call's views is 16-byte aligned), else one by one. Views with odd offsets take the scalar
// path and stay correct.
template <bool Vec, class T, int N>
__device__ __forceinline__ void load_n(const T* p, T (&v)[N]) {
  if constexpr (Vec && (N * sizeof(T)) % 16 == 0) {
    _Pragma("unroll") for (int k = 0; k < int(N * sizeof(T) / 16); ++k) {
      const uint4 u = reinterpret_cast<const uint4*>(p)[k];
      memcpy(&v[k * 16 / sizeof(T)], &u, 16);
    }
  } else {
    _Pragma("unroll") for (int k = 0; k < N; ++k) v[k] = p[k];
  }
}
template <bool Vec, class T, int N>
__device__ __forceinline__ void store_n(T* p, const T (&v)[N]) {
  if constexpr (Vec && (N * sizeof(T)) % 16 == 0) {
    _Pragma("unroll") for (int k = 0; k < int(N * sizeof(T) / 16); ++k) {
      uint4 u;
      memcpy(&u, &v[k * 16 / sizeof(T)], 16);
      reinterpret_cast<uint4*>(p)[k] = u;
    }
  } else {
    _Pragma("unroll") for (int k = 0; k < N; ++k) p[k] = v[k];
  }
}

// The row's last chunk when it is partial (cnt = n - i < N samples): the samples one by one
// into the same registers as a full chunk (zeros past the end), so one code path computes both
// (a separate scalar tail loop kept its own 64-bit state live: 55 registers against 48).
template <class T, int N>
__device__ __forceinline__ void load_part(const T* p, long long cnt, T (&v)[N]) {
  _Pragma("unroll") for (int k = 0; k < N; ++k) v[k] = k < cnt ? p[k] : T(0);
}
template <class T, int N>
__device__ __forceinline__ void store_part(T* p, long long cnt, const T (&v)[N]) {
  _Pragma("unroll") for (int k = 0; k < N; ++k) if (k < cnt) p[k] = v[k];
}

// The grid: block (bx, by) spans V * blockDim.x chunks of a row from chunk
// bx * V * blockDim.x; thread tx takes chunks tx, tx + blockDim.x, ... of that span (so each
// warp access is contiguous) in row by * blockDim.y + ty, then every gridDim.y * blockDim.y-th
// row. `first` is the thread's first sample index, `step` the samples between its chunks.
// Each kernel body loads every chunk of its row (full: i + N <= n; the row's last, partial
// one: i < n), then computes and stores them: in-place calls (dst identical to a source) stay
// exact because every sample is read before it is written and threads never share a sample.
#define PIXFLOW_FOR_ROWS(N, V, n, h, ...)                                                 \
  const long long first = ((long long)blockIdx.x * blockDim.x * (V) + threadIdx.x) * (N); \
  const long long step = (long long)blockDim.x * (N);                                     \
  if (first >= (n)) return;                                                               \
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < (h);           \
       y += (long long)gridDim.y * blockDim.y) {                                          \
    __VA_ARGS__                                                                           \
  }

// The flat grid of arith (launch.cuh): chunk c = blockIdx.x * blockDim.x + threadIdx.x of row group
// g (blockIdx.y, then every gridDim.y-th) is row g * rows_per + c / cpr, samples i = (c % cpr) * N
// ... of it; the row's last chunk is partial when n % N != 0 (i + N > n). Each kernel body loads
// its chunk, then computes and stores it: in-place calls (dst identical to a source) stay exact
// because every sample is read before it is written and threads never share a sample.
#define PIXFLOW_FOR_CHUNK(N, n, pg, ...)                             \
  const unsigned c = blockIdx.x * blockDim.x + threadIdx.x;          \
  const unsigned q = c / unsigned((pg).cpr);                         \
  if (q >= unsigned((pg).rows_per)) return;                          \
  const long long i = (long long)(c - q * unsigned((pg).cpr)) * (N); \
  for (long long g = blockIdx.y;; g += gridDim.y) {                  \
    const long long y = g * (pg).rows_per + q;                       \
    if (y >= (pg).h) return;                                         \
    const bool full = i + (N) <= (n);                                \
    __VA_ARGS__                                                      \
  }

// One chunk of N samples from p: whole (16-byte vectors when Vec) or the row's partial last.
template <bool Vec, class T, int N>
__device__ __forceinline__ void load_chunk(const T* p, bool full, long long cnt, T (&v)[N]) {
  if (full)
    load_n<Vec>(p, v);
  else
    load_part(p, cnt, v);
}
template <bool Vec, class T, int N>
__device__ __forceinline__ void store_chunk(T* p, bool full, long long cnt, const T (&v)[N]) {
  if (full)
    store_n<Vec>(p, v);
  else
    store_part(p, cnt, v);
}

// d = a (Op) b on N samples; u8 four bytes a word (the same rule, pointwise_u8_packed.hpp).
template <class T, ArithOp Op, int N>
__device__ __forceinline__ void arith_n(const T (&a)[N], const T (&b)[N], T (&d)[N]) {
  if constexpr (std::is_same_v<T, std::uint8_t> && N % 4 == 0) {
    _Pragma("unroll") for (int k = 0; k < N; k += 4) {
      pw_u8::u32 wa, wb;
      memcpy(&wa, &a[k], 4);
      memcpy(&wb, &b[k], 4);
      const pw_u8::u32 wd = pw_u8::apply<Op>(wa, wb);
      memcpy(&d[k], &wd, 4);
    }
  } else {
    _Pragma("unroll") for (int k = 0; k < N; ++k) d[k] = detail::arith_apply<T>(a[k], b[k], Op);
  }
}

// The op is a template argument: the rule's switch folds away (with a runtime op the u8
// kernel kept every op's int64 code live: 40 registers, absdiff 88.8 us at 8192^2 u8x1).
// Blocks a SM each kernel is built for (__launch_bounds__): 6 for u8 add/sub/absdiff and 5
// for mul (their own choice was 48 and 64 registers with two chunks a thread), 4 for the
// wider depths.
template <class T, ArithOp Op>
constexpr int kArithMinBlocks = std::is_same_v<T, std::uint8_t> ? (Op != ArithOp::mul ? 6 : 5) : 4;

template <class T, ArithOp Op, bool Vec>
__global__ void __launch_bounds__(kPointThreads, (kArithMinBlocks<T, Op>))
    arith_kernel(DevView<T> a, DevView<T> b, DevView<T> d, PointGrid pg) {
  constexpr int N = kVec<T>;
  const long long n = (long long)d.w * d.cn;
  PIXFLOW_FOR_CHUNK(N, n, pg, {
    T va[N], vb[N], vd[N];
    load_chunk<Vec>(a.row(y) + i, full, n - i, va);
    load_chunk<Vec>(b.row(y) + i, full, n - i, vb);
    arith_n<T, Op>(va, vb, vd);
    store_chunk<Vec>(d.row(y) + i, full, n - i, vd);
  })
}

template <class T, ArithOp Op, bool Vec>
__global__ void arith_scalar_kernel(DevView<T> a, double s, DevView<T> d, PointGrid pg) {
  constexpr int N = kVec<T>;
  const long long n = (long long)d.w * d.cn;
  PIXFLOW_FOR_CHUNK(N, n, pg, {
    T va[N], vd[N];
    load_chunk<Vec>(a.row(y) + i, full, n - i, va);
    _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
        detail::arith_apply_scalar<T>(va[k], s, Op);
    store_chunk<Vec>(d.row(y) + i, full, n - i, vd);
  })
}

template <class S, class D, bool Vec>
__global__ void convert_kernel(DevView<S> s, DevView<D> d, double scale, double offset, bool abs) {
  constexpr int N = kVec<S> < kVec<D> ? kVec<S> : kVec<D>, V = 1;
  const long long n = (long long)d.w * d.cn;
  PIXFLOW_FOR_ROWS(N, V, n, d.h, {
    const S* ps = s.row(y);
    D* pd = d.row(y);
    S vs[V][N];
    _Pragma("unroll") for (int v = 0; v < V; ++v) {
      const long long i = first + v * step;
      if (i + N <= n)
        load_n<Vec>(ps + i, vs[v]);
      else if (i < n)
        load_part(ps + i, n - i, vs[v]);
    }
    _Pragma("unroll") for (int v = 0; v < V; ++v) {
      const long long i = first + v * step;
      D vd[N];
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::convert_apply<S, D>(vs[v][k], scale, offset, abs);
      if (i + N <= n)
        store_n<Vec>(pd + i, vd);
      else if (i < n)
        store_part(pd + i, n - i, vd);
    }
  })
}

// Threshold on integers: `above` is x > it with it in [lo - 1, hi] of T (int_threshold), so
// for u8/u16/s16 the comparison fits int (the u8 kernel compared in 64 bits).
template <class T>
using ThrInt = std::conditional_t<(sizeof(T) < 4), int, long long>;

// u8 aligned: 48 registers unbounded (5 blocks a SM), 40 bounded to 6 blocks without
// spilling (the unaligned form spills 456 bytes at 40 and keeps 64).
template <class T, bool Vec>
__global__ void __launch_bounds__(kPointThreads, (sizeof(T) == 1 && Vec ? 6 : 4))
    threshold_int_kernel(DevView<T> s, DevView<T> d, ThresholdType type, long long it, T tv, T mv) {
  constexpr int N = kVec<T>, V = kVecs<T>;
  const long long n = (long long)d.w * d.cn;
  const ThrInt<T> t = ThrInt<T>(it);
  PIXFLOW_FOR_ROWS(N, V, n, d.h, {
    const T* ps = s.row(y);
    T* pd = d.row(y);
    T vs[V][N];
    _Pragma("unroll") for (int v = 0; v < V; ++v) {
      const long long i = first + v * step;
      if (i + N <= n)
        load_n<Vec>(ps + i, vs[v]);
      else if (i < n)
        load_part(ps + i, n - i, vs[v]);
    }
    _Pragma("unroll") for (int v = 0; v < V; ++v) {
      const long long i = first + v * step;
      T vd[N];
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::threshold_pick<T>(type, ThrInt<T>(vs[v][k]) > t, vs[v][k], tv, mv);
      if (i + N <= n)
        store_n<Vec>(pd + i, vd);
      else if (i < n)
        store_part(pd + i, n - i, vd);
    }
  })
}

template <bool Vec>
__global__ void threshold_f32_kernel(DevView<float> s, DevView<float> d, ThresholdType type,
                                     float t, float mv) {
  constexpr int N = 4, V = 1;
  const long long n = (long long)d.w * d.cn;
  PIXFLOW_FOR_ROWS(N, V, n, d.h, {
    const float* ps = s.row(y);
    float* pd = d.row(y);
    float vs[V][N];
    _Pragma("unroll") for (int v = 0; v < V; ++v) {
      const long long i = first + v * step;
      if (i + N <= n)
        load_n<Vec>(ps + i, vs[v]);
      else if (i < n)
        load_part(ps + i, n - i, vs[v]);
    }
    _Pragma("unroll") for (int v = 0; v < V; ++v) {
      const long long i = first + v * step;
      float vd[N];
      _Pragma("unroll") for (int k = 0; k < N; ++k) vd[k] =
          detail::threshold_pick<float>(type, vs[v][k] > t, vs[v][k], t, mv);
      if (i + N <= n)
        store_n<Vec>(pd + i, vd);
      else if (i < n)
        store_part(pd + i, n - i, vd);
    }
  })
}

// True when every view's start and stride are 16-byte aligned (vector path).
bool aligned16(std::initializer_list<ConstImageView> views) {
  for (const auto& v : views)
    if (reinterpret_cast<std::uintptr_t>(v.data()) % 16 != 0 || v.stride() % 16 != 0) return false;
  return true;
}

// Launch shape for rows of d.width() * channels samples, `per_chunk` samples a chunk and
// `vecs` chunks a thread.
struct PointLaunch {
  dim3 grid, block;
};
PointLaunch launch_for(const ImageView& d, int per_chunk, int vecs) {
  const long long chunks = (d.width() * d.channels() + per_chunk - 1) / per_chunk;
  const int bx = point_block_x(chunks, vecs), by = kPointThreads / bx;
  return {grid_2d(chunks, d.height(), bx * vecs, by), dim3(unsigned(bx), unsigned(by))};
}

// The flat grid of arith for d's rows, `per_chunk` samples a chunk.
struct FlatLaunch {
  dim3 grid, block;
  PointGrid pg;
};
FlatLaunch flat_launch_for(const ImageView& d, int per_chunk) {
  const long long chunks = (d.width() * d.channels() + per_chunk - 1) / per_chunk;
  const PointGrid pg = point_grid(chunks, d.height());
  return {point_blocks(pg), dim3(unsigned(kPointThreads)), pg};
}

// Alignment -> template argument: a kernel with both paths kept the unaligned path's 16-64
// byte loads live beside the vector path (72 registers for u8 arith; 3 blocks a SM).
template <class F>
void dispatch_vec(bool vec, F&& f) {
  if (vec)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// Runtime op -> template argument.
template <class F>
void dispatch_op(ArithOp op, F&& f) {
  switch (op) {
    case ArithOp::add:
      return f(std::integral_constant<ArithOp, ArithOp::add>{});
    case ArithOp::sub:
      return f(std::integral_constant<ArithOp, ArithOp::sub>{});
    case ArithOp::absdiff:
      return f(std::integral_constant<ArithOp, ArithOp::absdiff>{});
    case ArithOp::mul:
      return f(std::integral_constant<ArithOp, ArithOp::mul>{});
  }
}

void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           cudaStream_t stream) {
  detail::visit_depth(a.depth(), [&](auto t) -> void {
    using T = decltype(t);
    const FlatLaunch l = flat_launch_for(dst, kVec<T>);
    dispatch_op(op, [&](auto o) {
      dispatch_vec(aligned16({a, b, dst}), [&](auto v) {
        arith_kernel<T, decltype(o)::value, decltype(v)::value><<<l.grid, l.block, 0, stream>>>(
            dev_view<T>(a), dev_view<T>(b), dev_view<T>(dst), l.pg);
      });
    });
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("arith");
}

void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op,
           cudaStream_t stream) {
  detail::visit_depth(a.depth(), [&](auto t) -> void {
    using T = decltype(t);
    const FlatLaunch l = flat_launch_for(dst, kVec<T>);
    dispatch_op(op, [&](auto o) {
      dispatch_vec(aligned16({a, dst}), [&](auto v) {
        arith_scalar_kernel<T, decltype(o)::value, decltype(v)::value>
            <<<l.grid, l.block, 0, stream>>>(dev_view<T>(a), value, dev_view<T>(dst), l.pg);
      });
    });
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("arith");
}

void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
             cudaStream_t stream) {
  detail::visit_depth(src.depth(), [&](auto s) -> void {
    using S = decltype(s);
    detail::visit_depth(dst.depth(), [&](auto d) -> void {
      using D = decltype(d);
      const PointLaunch l = launch_for(dst, kVec<S> < kVec<D> ? kVec<S> : kVec<D>, 1);
      dispatch_vec(aligned16({src, dst}), [&](auto v) {
        convert_kernel<S, D, decltype(v)::value><<<l.grid, l.block, 0, stream>>>(
            dev_view<S>(src), dev_view<D>(dst), p.scale, p.offset, p.abs);
      });
    });
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("convert");
}

void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               cudaStream_t stream) {
  detail::visit_depth(src.depth(), [&](auto t) -> void {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>) {
      const PointLaunch l = launch_for(dst, 4, 1);
      dispatch_vec(aligned16({src, dst}), [&](auto v) {
        threshold_f32_kernel<decltype(v)::value><<<l.grid, l.block, 0, stream>>>(
            dev_view<float>(src), dev_view<float>(dst), p.type, detail::to_float_clamped(p.t),
            detail::to_float_clamped(p.maxval));
      });
    } else {
      const auto k = detail::int_threshold<T>(p.t, p.maxval);
      const PointLaunch l = launch_for(dst, kVec<T>, kVecs<T>);
      dispatch_vec(aligned16({src, dst}), [&](auto v) {
        threshold_int_kernel<T, decltype(v)::value><<<l.grid, l.block, 0, stream>>>(
            dev_view<T>(src), dev_view<T>(dst), p.type, k.it, k.tv, k.mv);
      });
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
