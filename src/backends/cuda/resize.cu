// resize on CUDA (docs/ops/resize.md): the rules of src/base/rules/resize.h, evaluated per
// output by each thread (taps from (d, n, m) with the same explicitly rounded double
// operations as the reference: no table to upload, nothing allocated, no host sync).
//
// Schedule: a block of 32 x 8 threads; a thread owns one output column x (its x taps are
// computed once) and walks output rows y, y + 8 gridDim.y, ... (one row's y taps per step):
// the double arithmetic of the taps is a few operations a row, not a pixel. Channels are a
// template (1..4) so a pixel's samples are one unrolled loop.
//
// Traffic (8192^2 -> 4096^2 u8x1 linear): every source row pair is read once (64 MiB) and the
// output written once (16 MiB): the copy floor of that traffic is ~25 us on the H100;
// bench/NOTES.md "Issue 13: resize" has the prediction and what the lead measured.
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/rules/resize.h"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kBX = 32, kBY = 8;

template <class T>
__device__ __forceinline__ T store_float(float v) {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return px_sat_u8_f32(v);
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return px_sat_u16_f32(v);
  else if constexpr (std::is_same_v<T, std::int16_t>)
    return px_sat_s16_f32(v);
  else
    return v;
}
template <class T>
__device__ __forceinline__ T store_int(long long v) {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return px_sat_u8_s64(v);
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return px_sat_u16_s64(v);
  else
    return px_sat_s16_s64(v);
}

template <class T, int CN>
__global__ void resize_nearest_kernel(DevView<T> s, DevView<T> d, long long stx, long long sty) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= d.w) return;
  const long long xs = px_resize_nearest_index(x, s.w, stx) * CN;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < d.h;
       y += (long long)gridDim.y * blockDim.y) {
    const T* in = s.row(px_resize_nearest_index(y, s.h, sty)) + xs;
    T* out = d.row(y) + x * CN;
#pragma unroll
    for (int c = 0; c < CN; ++c) out[c] = in[c];
  }
}

template <class T, int CN>
__global__ void resize_linear_kernel(DevView<T> s, DevView<T> d, double scx, double scy) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= d.w) return;
  constexpr int bits = std::is_same_v<T, std::uint8_t> ? 8 : 16;
  px_s64 x0, x1;
  const long long wx = px_resize_linear_tap(x, s.w, scx, bits, &x0, &x1);
  const float fx = (float)px_resize_linear_frac(x, s.w, scx, &x0, &x1);
  x0 *= CN;
  x1 *= CN;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < d.h;
       y += (long long)gridDim.y * blockDim.y) {
    px_s64 y0, y1;
    const long long wy = px_resize_linear_tap(y, s.h, scy, bits, &y0, &y1);
    const float fy = (float)px_resize_linear_frac(y, s.h, scy, &y0, &y1);
    const T* r0 = s.row(y0);
    const T* r1 = s.row(y1);
    T* out = d.row(y) + x * CN;
#pragma unroll
    for (int c = 0; c < CN; ++c) {
      const T a = r0[x0 + c], b = r0[x1 + c], e = r1[x0 + c], g = r1[x1 + c];
      if constexpr (std::is_same_v<T, std::uint8_t>)
        out[c] = px_resize_linear_u8(a, b, e, g, (px_s32)wx, (px_s32)wy);
      else if constexpr (std::is_same_v<T, float>)
        out[c] = px_resize_linear_f32(a, b, e, g, fx, fy);
      else
        out[c] = store_int<T>(px_resize_linear_q16(a, b, e, g, wx, wy));
    }
  }
}

template <class T, int CN>
__global__ void resize_area_fast_kernel(DevView<T> s, DevView<T> d, long long kx, long long ky,
                                        float inv) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= d.w) return;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < d.h;
       y += (long long)gridDim.y * blockDim.y) {
    T* out = d.row(y) + x * CN;
#pragma unroll
    for (int c = 0; c < CN; ++c) {
      if constexpr (std::is_same_v<T, float>) {
        float sum = 0.0f;  // row-major, left to right (the reference's order)
        for (long long j = 0; j < ky; ++j) {
          const float* in = s.row(y * ky + j) + x * kx * CN + c;
          for (long long i = 0; i < kx; ++i) sum = px_add_rn(sum, in[i * CN]);
        }
        out[c] = px_mul_rn(sum, inv);
      } else {
        long long sum = 0;
        for (long long j = 0; j < ky; ++j) {
          const T* in = s.row(y * ky + j) + x * kx * CN + c;
          for (long long i = 0; i < kx; ++i) sum += in[i * CN];
        }
        out[c] = kx == 2 && ky == 2 ? store_int<T>((sum + 2) >> 2)
                                    : store_float<T>(px_mul_rn((float)sum, inv));
      }
    }
  }
}

template <class T, int CN>
__global__ void resize_area_cover_kernel(DevView<T> s, DevView<T> d, double scx, double scy) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= d.w) return;
  const px_resize_span sx = px_resize_area_span(x, s.w, scx);
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < d.h;
       y += (long long)gridDim.y * blockDim.y) {
    const px_resize_span sy = px_resize_area_span(y, s.h, scy);
    float acc[CN];
    for (int j = 0; j < sy.count; ++j) {
      const T* in = s.row(sy.first + j) + sx.first * CN;
      float r[CN];
#pragma unroll
      for (int c = 0; c < CN; ++c) r[c] = 0.0f;
      for (int k = 0; k < sx.count; ++k) {
        const float w = px_resize_span_weight(sx, k);
#pragma unroll
        for (int c = 0; c < CN; ++c) r[c] = px_add_rn(r[c], px_mul_rn((float)in[k * CN + c], w));
      }
      const float wy = px_resize_span_weight(sy, j);
#pragma unroll
      for (int c = 0; c < CN; ++c) {
        const float t = px_mul_rn(wy, r[c]);
        acc[c] = j == 0 ? t : px_add_rn(acc[c], t);
      }
    }
    T* out = d.row(y) + x * CN;
#pragma unroll
    for (int c = 0; c < CN; ++c) out[c] = store_float<T>(acc[c]);
  }
}

template <class T, int CN>
__global__ void resize_area_linear_kernel(DevView<T> s, DevView<T> d) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= d.w) return;
  px_s64 x0, x1;
  const float fx = px_resize_area_linear_frac(x, s.w, d.w, 1, &x0, &x1);
  const px_s32 a0 = px_resize_area_q11(px_sub_rn(1.0f, fx)), a1 = px_resize_area_q11(fx);
  x0 *= CN;
  x1 *= CN;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < d.h;
       y += (long long)gridDim.y * blockDim.y) {
    px_s64 y0, y1;
    const float fy = px_resize_area_linear_frac(y, s.h, d.h, 0, &y0, &y1);
    const px_s32 b0 = px_resize_area_q11(px_sub_rn(1.0f, fy)), b1 = px_resize_area_q11(fy);
    const T* r0 = s.row(y0);
    const T* r1 = s.row(y1);
    T* out = d.row(y) + x * CN;
#pragma unroll
    for (int c = 0; c < CN; ++c) {
      const T a = r0[x0 + c], b = r0[x1 + c], e = r1[x0 + c], g = r1[x1 + c];
      if constexpr (std::is_same_v<T, std::uint8_t>)
        out[c] = px_resize_area_linear_u8(a, b, e, g, a0, a1, b0, b1);
      else
        out[c] = store_float<T>(
            px_resize_area_linear_f32((float)a, (float)b, (float)e, (float)g, fx, fy));
    }
  }
}

template <class T, int CN>
void launch_cn(const ConstImageView& src, const ImageView& dst, const ResizeParams& p,
               cudaStream_t st) {
  const DevView<T> s = dev_view<T>(src), d = dev_view<T>(dst);
  const dim3 grid = grid_2d(dst.width(), dst.height(), kBX, kBY), block(kBX, kBY);
  const std::int64_t sw = src.width(), sh = src.height(), dw = dst.width(), dh = dst.height();
  switch (p.interp) {
    case ResizeInterp::nearest:
      resize_nearest_kernel<T, CN><<<grid, block, 0, st>>>(s, d, px_resize_nearest_step(sw, dw),
                                                           px_resize_nearest_step(sh, dh));
      break;
    case ResizeInterp::linear:
      resize_linear_kernel<T, CN><<<grid, block, 0, st>>>(s, d, px_resize_linear_scale(sw, dw),
                                                          px_resize_linear_scale(sh, dh));
      break;
    case ResizeInterp::area:
      switch (px_resize_area_mode(sw, dw, sh, dh)) {
        case PX_RESIZE_AREA_COPY:
          PIXFLOW_CUDA_CHECK(cudaMemcpy2DAsync(dst.data(), dst.stride(), src.data(), src.stride(),
                                               std::size_t(dw) * CN * sizeof(T), std::size_t(dh),
                                               cudaMemcpyDeviceToDevice, st));
          return;
        case PX_RESIZE_AREA_FAST: {
          const std::int64_t kx = px_resize_area_factor(sw, dw), ky = px_resize_area_factor(sh, dh);
          resize_area_fast_kernel<T, CN>
              <<<grid, block, 0, st>>>(s, d, kx, ky, px_resize_area_fast_scale(kx, ky));
          break;
        }
        case PX_RESIZE_AREA_COVER:
          resize_area_cover_kernel<T, CN><<<grid, block, 0, st>>>(
              s, d, px_resize_linear_scale(sw, dw), px_resize_linear_scale(sh, dh));
          break;
        default:
          resize_area_linear_kernel<T, CN><<<grid, block, 0, st>>>(s, d);
          break;
      }
      break;
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("resize");
}

void resize(const ConstImageView& src, const ImageView& dst, const ResizeParams& p,
            cudaStream_t st) {
  if (dst.width() == 0 || dst.height() == 0) return;
  detail::visit_depth<Depth::u8, Depth::u16, Depth::s16, Depth::f32>(
      src.depth(), [&](auto t) -> void {
        using T = decltype(t);
        switch (src.channels()) {
          case 1:
            return launch_cn<T, 1>(src, dst, p, st);
          case 2:
            return launch_cn<T, 2>(src, dst, p, st);
          case 3:
            return launch_cn<T, 3>(src, dst, p, st);
          default:
            return launch_cn<T, 4>(src, dst, p, st);
        }
      });
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_resize) {
  using namespace pixflow;
  cuda::add<&cuda::resize>(table, "resize",
                           cuda::depths({Depth::u8, Depth::u16, Depth::s16, Depth::f32}));
}
