// matmul and dot on CUDA.
// matmul: a shared-memory tiled GEMM (64x64 output tile, 16-deep K slices, 4x4 outputs per
// thread, as in the seeds' tiling article). Each output still sums its K products in index
// order with rounded float ops (no FMA), so the result equals the reference bit for bit;
// s32 accumulates exactly in 128 bits (two 64-bit halves) and saturates.
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kTM = kGemmTM, kTN = kGemmTN, kTK = kGemmTK;  // launch.cuh
static_assert(kGemmThreads == 256 && kTM == 64 && kTN == 64,
              "the kernel maps 16 x 16 threads to 4 x 4 outputs each");

template <class T>
struct GemmAcc {
  using type = float;
};
// s32: exact 128-bit sums (two 64-bit halves; like the reference), then saturated.
struct Sum128 {
  unsigned long long lo = 0;
  long long hi = 0;
  __device__ __forceinline__ void add(long long p) {
    const unsigned long long old = lo;
    lo += (unsigned long long)p;
    hi += (p < 0 ? -1 : 0) + (lo < old ? 1 : 0);
  }
  __device__ __forceinline__ std::int32_t saturated() const {
    // value = hi * 2^64 + lo, lo unsigned
    if (hi > 0 || (hi == 0 && (long long)lo < 0)) return 2147483647;
    if (hi < -1 || (hi == -1 && (long long)lo >= 0)) return -2147483647 - 1;
    const long long v = (long long)lo;  // the value itself now
    return v > 2147483647LL ? 2147483647 : v < -2147483648LL ? -2147483647 - 1 : std::int32_t(v);
  }
};
template <>
struct GemmAcc<std::int32_t> {
  using type = Sum128;
};

template <class T>
__global__ void __launch_bounds__(kGemmThreads)
    gemm_kernel(DevView<T> a, DevView<T> b, DevView<T> c, int M, int N, int K, int rows_of_blocks) {
  using Acc = typename GemmAcc<T>::type;
  __shared__ T As[kTK][kTM + 1];
  __shared__ T Bs[kTK][kTN + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int n0 = blockIdx.x * kTN;
  for (int bm = blockIdx.y; bm < rows_of_blocks; bm += gridDim.y) {
    const int m0 = bm * kTM;
    Acc acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = Acc{};
    for (int k0 = 0; k0 < K; k0 += kTK) {
      for (int i = threadIdx.x; i < kTK * kTM; i += kGemmThreads) {
        const int kk = i % kTK, mm = i / kTK;
        const int gm = m0 + mm, gk = k0 + kk;
        As[kk][mm] = (gm < M && gk < K) ? a.row(gm)[gk] : T(0);
      }
      for (int i = threadIdx.x; i < kTK * kTN; i += kGemmThreads) {
        const int nn = i % kTN, kk = i / kTN;
        const int gn = n0 + nn, gk = k0 + kk;
        Bs[kk][nn] = (gn < N && gk < K) ? b.row(gk)[gn] : T(0);
      }
      __syncthreads();
      const int kend = min(kTK, K - k0);  // never add padding products: keeps the order exact
      for (int kk = 0; kk < kend; ++kk) {
        T av[4], bv[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) av[i] = As[kk][ty * 4 + i];
#pragma unroll
        for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][tx * 4 + j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if constexpr (std::is_same_v<T, float>) {
              acc[i][j] = __fadd_rn(acc[i][j], __fmul_rn(av[i], bv[j]));
            } else {
              acc[i][j].add((long long)av[i] * (long long)bv[j]);
            }
          }
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int gm = m0 + ty * 4 + i, gn = n0 + tx * 4 + j;
        if (gm < M && gn < N) {
          if constexpr (std::is_same_v<T, float>) {
            c.row(gm)[gn] = acc[i][j];
          } else {
            c.row(gm)[gn] = acc[i][j].saturated();
          }
        }
      }
  }
}

__global__ void dot_kernel(DevView<float> a, DevView<float> b, DevView<float> d) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < d.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= d.w) continue;
    const float* p = a.row(y) + x * 4;
    const float* q = b.row(y) + x * 4;
    float s = __fadd_rn(__fmul_rn(p[0], q[0]), __fmul_rn(p[1], q[1]));
    s = __fadd_rn(s, __fmul_rn(p[2], q[2]));
    s = __fadd_rn(s, __fmul_rn(p[3], q[3]));
    d.row(y)[x] = s;
  }
}

void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, cudaStream_t st) {
  const int M = int(a.height()), K = int(a.width()), N = int(b.width());
  const dim3 grid = grid_2d(N, M, kTN, kTM);
  detail::visit_depth<Depth::f32, Depth::s32>(a.depth(), [&](auto t) -> void {
    using T = decltype(t);
    gemm_kernel<T><<<grid, kGemmThreads, 0, st>>>(dev_view<T>(a), dev_view<T>(b), dev_view<T>(c), M,
                                                  N, K, blocks_y(M, kTM));
  });
  PIXFLOW_CUDA_CHECK_LAUNCH("matmul");
}

void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, cudaStream_t st) {
  dot_kernel<<<grid_2d(dst.width(), dst.height(), kDotBX, kDotBY), dim3(kDotBX, kDotBY), 0, st>>>(
      dev_view<float>(a), dev_view<float>(b), dev_view<float>(dst));
  PIXFLOW_CUDA_CHECK_LAUNCH("dot");
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_gemm) {
  using namespace pixflow;
  // dot: f32 x 4 vectors per pixel -> f32 x 1.
  cuda::add<&cuda::dot>(table, "dot", detail::Support::of({Depth::f32}, {4}));
  // matmul: one-channel f32 or s32 matrices (a and b of the same depth, validated by core).
  cuda::add<&cuda::matmul>(table, "matmul", detail::Support::of({Depth::f32, Depth::s32}, {1}));
}
