// gray on CUDA: 16-byte vectors per thread on aligned rows, else 8 pixels per thread; integer rule
// (R*9798 + G*19235 + B*3735 + 16384) >> 15 for u8/u16 (= cv::cvtColor, measured), 0.299R + 0.587G
// + 0.114B with rounded float ops (no FMA) for f32.
// channels: samples moved, by sample size (1, 2 or 4 bytes): 16-byte vectors per thread on
// aligned rows, else one pixel a thread.
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/rules/pointwise.h"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

// Each thread converts kPx consecutive pixels, loading all of them before computing, so that
// enough bytes are in flight (one pixel per thread was latency-bound; launch.cuh).
constexpr int kPx = kGrayPx;

template <class T>
__device__ __forceinline__ T gray_of(const T* q, bool bgr) {
  const T r = bgr ? q[2] : q[0], g = q[1], b = bgr ? q[0] : q[2];
  if constexpr (std::is_same_v<T, float>) {
    return px_gray_f32(r, g, b);  // the reference's rule (src/base/rules/pointwise.h)
  } else {
    return T(px_gray_q15(r, g, b));  // OpenCV's Q15 coefficients, exact in 32 bits
  }
}

template <class T, int CN>
__global__ void gray_kernel(DevView<T> src, DevView<T> dst, bool bgr) {
  const long long x0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * kPx;
  if (x0 >= dst.w) return;
  const bool full = dst.w - x0 >= kPx;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    const T* p = src.row(y) + x0 * CN;
    T* out = dst.row(y) + x0;
    if (full) {
      T v[kPx * CN];
#pragma unroll
      for (int k = 0; k < kPx * CN; ++k) v[k] = p[k];
#pragma unroll
      for (int k = 0; k < kPx; ++k) out[k] = gray_of(v + k * CN, bgr);
    } else {
      for (long long k = 0; x0 + k < dst.w; ++k) out[k] = gray_of(p + k * CN, bgr);
    }
  }
}

// 16-byte vectors: each thread converts the 16 / sizeof(T) pixels of one 16-byte output vector
// from CN 16-byte input vectors (rows 16-byte aligned, checked by the launcher), so every
// access is a full-width load or store (8 pixels of scalar loads per thread reached 69 % of
// DRAM bandwidth at 8K; bench/NOTES.md). Pixels past the row's last full vector take the
// scalar path.
template <class T, int CN>
__global__ void gray_vec_kernel(DevView<T> src, DevView<T> dst, bool bgr) {
  constexpr int kVecPx = 16 / int(sizeof(T));
  const long long x0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * kVecPx;
  if (x0 >= dst.w) return;
  const bool full = dst.w - x0 >= kVecPx;
  for (long long y = blockIdx.y; y < dst.h; y += gridDim.y) {
    const T* p = src.row(y) + x0 * CN;
    T* out = dst.row(y) + x0;
    if (full) {
      union {
        uint4 v[CN];
        T s[kVecPx * CN];
      } in;
      union {
        uint4 v;
        T s[kVecPx];
      } o;
#pragma unroll
      for (int k = 0; k < CN; ++k) in.v[k] = __ldg(reinterpret_cast<const uint4*>(p) + k);
#pragma unroll
      for (int k = 0; k < kVecPx; ++k) o.s[k] = gray_of(in.s + k * CN, bgr);
      *reinterpret_cast<uint4*>(out) = o.v;
    } else {
      for (long long k = 0; x0 + k < dst.w; ++k) out[k] = gray_of(p + k * CN, bgr);
    }
  }
}

template <class T>
void launch_gray(const ConstImageView& s, const ImageView& d, const GrayParams& p,
                 cudaStream_t st) {
  if (rows_aligned(s, 16) && rows_aligned(d, 16)) {
    const dim3 grid = grid_2d(d.width(), d.height(), kGrayVecBX * (16 / int(sizeof(T))), 1);
    if (s.channels() == 3)
      gray_vec_kernel<T, 3>
          <<<grid, kGrayVecBX, 0, st>>>(dev_view<T>(s), dev_view<T>(d), p.from_bgr);
    else
      gray_vec_kernel<T, 4>
          <<<grid, kGrayVecBX, 0, st>>>(dev_view<T>(s), dev_view<T>(d), p.from_bgr);
    PIXFLOW_CUDA_CHECK_LAUNCH("gray");
    return;
  }
  const dim3 grid = grid_2d(d.width(), d.height(), kGrayBX * kPx, 1), block(kGrayBX, 1);
  if (s.channels() == 3)
    gray_kernel<T, 3><<<grid, block, 0, st>>>(dev_view<T>(s), dev_view<T>(d), p.from_bgr);
  else
    gray_kernel<T, 4><<<grid, block, 0, st>>>(dev_view<T>(s), dev_view<T>(d), p.from_bgr);
  PIXFLOW_CUDA_CHECK_LAUNCH("gray");
}

// ---- channels ----------------------------------------------------------------------------------

struct Pick {
  int c[4];
};

// Sample k of a pixel whose CI samples are in q: a select chain over the unrolled samples, so
// that the pixel stays in registers (an index known only at run time would put it in local
// memory).
template <class U, int CI>
__device__ __forceinline__ U sample_at(const U* q, int k) {
  U v = q[0];
#pragma unroll
  for (int i = 1; i < CI; ++i) v = k == i ? q[i] : v;
  return v;
}

// One pixel a thread: a warp's loads and stores of one channel cover 32 consecutive pixels (a
// run of pixels a thread, 8 of 3-byte pixels, measured 10x the copy floor at 8K u8x3: each store
// instruction of a warp touched 24 sectors).
template <class U, int CI, int CO>
__global__ void channels_kernel(DevView<U> src, DevView<U> dst, Pick pick) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= dst.w) return;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    const U* p = src.row(y) + x * CI;
    U* out = dst.row(y) + x * CO;
    U v[CI];
#pragma unroll
    for (int k = 0; k < CI; ++k) v[k] = p[k];
#pragma unroll
    for (int c = 0; c < CO; ++c) out[c] = sample_at<U, CI>(v, pick.c[c]);
  }
}

// 16-byte vectors (rows 16-byte aligned, checked by the launcher): a thread moves the
// 16 / sizeof(U) pixels of CO output vectors from CI input vectors, so that every access is a
// full-width load or store (gray_vec_kernel's schedule). Pixels past the row's last full
// vector go one by one.
template <class U, int CI, int CO>
__global__ void channels_vec_kernel(DevView<U> src, DevView<U> dst, Pick pick) {
  constexpr int kVecPx = 16 / int(sizeof(U));
  const long long x0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * kVecPx;
  if (x0 >= dst.w) return;
  const bool full = dst.w - x0 >= kVecPx;
  for (long long y = blockIdx.y; y < dst.h; y += gridDim.y) {
    const U* p = src.row(y) + x0 * CI;
    U* out = dst.row(y) + x0 * CO;
    if (full) {
      union {
        uint4 v[CI];
        U s[kVecPx * CI];
      } in;
      union {
        uint4 v[CO];
        U s[kVecPx * CO];
      } o;
#pragma unroll
      for (int k = 0; k < CI; ++k) in.v[k] = __ldg(reinterpret_cast<const uint4*>(p) + k);
#pragma unroll
      for (int k = 0; k < kVecPx; ++k)
#pragma unroll
        for (int c = 0; c < CO; ++c) o.s[k * CO + c] = sample_at<U, CI>(in.s + k * CI, pick.c[c]);
#pragma unroll
      for (int c = 0; c < CO; ++c) reinterpret_cast<uint4*>(out)[c] = o.v[c];
    } else {
      for (long long k = 0; x0 + k < dst.w; ++k)
        for (int c = 0; c < CO; ++c) out[k * CO + c] = p[k * CI + pick.c[c]];
    }
  }
}

template <class U, int CI, int CO>
void launch_channels_co(const ConstImageView& s, const ImageView& d, const Pick& pick,
                        cudaStream_t st) {
  const DevView<U> sv = dev_view<U>(s);
  const DevView<U> dv = dev_view<U>(d);
  if (rows_aligned(s, 16) && rows_aligned(d, 16)) {
    const dim3 grid = grid_2d(d.width(), d.height(), kGrayVecBX * (16 / int(sizeof(U))), 1);
    channels_vec_kernel<U, CI, CO><<<grid, kGrayVecBX, 0, st>>>(sv, dv, pick);
  } else {
    const dim3 grid = grid_2d(d.width(), d.height(), kGrayBX, 1), block(kGrayBX, 1);
    channels_kernel<U, CI, CO><<<grid, block, 0, st>>>(sv, dv, pick);
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("channels");
}

template <class U, int CI>
void launch_channels_ci(const ConstImageView& s, const ImageView& d, const Pick& pick,
                        cudaStream_t st) {
  switch (d.channels()) {
    case 1:
      return launch_channels_co<U, CI, 1>(s, d, pick, st);
    case 2:
      return launch_channels_co<U, CI, 2>(s, d, pick, st);
    case 3:
      return launch_channels_co<U, CI, 3>(s, d, pick, st);
    default:
      return launch_channels_co<U, CI, 4>(s, d, pick, st);
  }
}

template <class U>
void launch_channels_u(const ConstImageView& s, const ImageView& d, const Pick& pick,
                       cudaStream_t st) {
  switch (s.channels()) {
    case 1:
      return launch_channels_ci<U, 1>(s, d, pick, st);
    case 2:
      return launch_channels_ci<U, 2>(s, d, pick, st);
    case 3:
      return launch_channels_ci<U, 3>(s, d, pick, st);
    default:
      return launch_channels_ci<U, 4>(s, d, pick, st);
  }
}

// Samples are only moved: one kernel per sample size serves every depth of that size.
void launch_channels(const ConstImageView& s, const ImageView& d, const ChannelsParams& p,
                     cudaStream_t st) {
  Pick pick{{0, 0, 0, 0}};
  for (std::size_t i = 0; i < p.pick.size() && i < 4; ++i) pick.c[i] = p.pick[i];
  switch (depth_bytes(s.depth())) {
    case 1:
      return launch_channels_u<std::uint8_t>(s, d, pick, st);
    case 2:
      return launch_channels_u<std::uint16_t>(s, d, pick, st);
    default:
      return launch_channels_u<std::uint32_t>(s, d, pick, st);
  }
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_color) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::u16, Depth::f32>(
      table, "gray", [](auto t) { return &cuda::launch_gray<decltype(t)>; }, {3, 4});
  cuda::add<&cuda::launch_channels>(
      table, "channels", cuda::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32}));
}
