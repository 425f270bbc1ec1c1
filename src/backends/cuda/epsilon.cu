// epsilon filter on CUDA. u8 with r in 1..7: the packed kernel below (four taps a word, the
// arithmetic and its proofs in epsilon_u8_packed.hpp); f32 with r in 1..7: several outputs a
// thread, each window row widened to double once. The rest (r = 0, r > 7):
// the generic window kernel with the reference's rule and order: u8 integer sum and count,
// (2*sum + n) / (2*n); f32 double sum in window row-major order, float(sum / n).
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/window.cuh"
#include "src/backends/cuda/epsilon_u8_packed.hpp"
#include "src/base/backend.hpp"
#include "src/base/rules/epsilon.h"
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
      return px_epsilon_mean_f64(s, n);
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
      return T(px_epsilon_mean_i64(s, n));
    }
  }
};

// ---- u8, r in 1..7: packed taps ----------------------------------------------------------
// A block computes kEpsU8Px pixels x kEpsU8Rows rows (all channels, one after the other):
// 1. the byte tile of the block's input (rows and samples of every channel, 16-byte loads
//    inside the image, the border rule outside: load_byte_tile);
// 2. per channel: the channel's plane (pixel bx0 - r at column 0), then the quad words (four
//    rows of one column in a word);
// 3. each thread runs items of eps_u8::kJ pixels of one row (eps_u8::item_u8) and stores the
//    bytes.
namespace eu = eps_u8;

/// Tile sizes of radius R: rows of the byte tile and plane, rows of quad words, plane pitch.
template <int R>
struct EpsU8Shape {
  static constexpr int W = 2 * R + 1, NQ = W / 4;
  static constexpr int TH = kEpsU8Rows + 2 * R;
  static constexpr int QH = NQ > 0 ? kEpsU8Rows + 4 * NQ - 4 : 0;
  static constexpr int pitch = eu::plane_pitch(kEpsU8Px, R);
  static constexpr int recip_bytes = ((W * W + 1) * 4 + 15) / 16 * 16;
  /// Bytes of a byte-tile row: every plane column of every channel, after a start of up
  /// to 15 bytes before the first sample (the 16-byte rounding of load_byte_tile), plus the
  /// word past the last one that the 1-channel plane build's funnel shift reads.
  __host__ __device__ static int tile_w(int cn) { return (15 + pitch * cn + 4 + 15) / 16 * 16; }
  static std::size_t smem(int cn) {
    return std::size_t(QH) * pitch * 4 + recip_bytes + std::size_t(TH) * pitch +
           std::size_t(TH) * tile_w(cn);
  }
};

template <int R, int kMode>
__global__ void __launch_bounds__(kEpsU8Threads)
    epsilon_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                      DevBorder<std::uint8_t> border, eu::u32 k, bool src_aligned, bool dst_aligned,
                      int rows_of_blocks) {
  using S = EpsU8Shape<R>;
  constexpr int pitch = S::pitch, words = pitch / 4;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int cn = src.cn;
  const int tw = S::tile_w(cn);
  eu::u32* quad = reinterpret_cast<eu::u32*>(smem_raw);
  eu::u32* recip = quad + S::QH * pitch;
  unsigned char* plane = smem_raw + S::QH * pitch * 4 + S::recip_bytes;
  unsigned char* tile = plane + S::TH * pitch;
  for (int i = threadIdx.x; i <= S::W * S::W; i += blockDim.x)
    recip[i] = i == 0 ? 0u : eu::mean_recip(eu::u32(i));

  const long long px0 = (long long)blockIdx.x * kEpsU8Px;
  const long long e0 = px0 * cn;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kEpsU8Rows;
    ByteTile t;
    t.e0 = e0;
    t.y0 = y0;
    t.xs = floor16(e0 - (long long)R * cn);
    t.tw = tw;
    t.th = S::TH;
    t.off = int(e0 - (long long)R * cn - t.xs);
    load_byte_tile(tile, t, R, src, border, src_aligned);
    for (int ch = 0; ch < cn; ++ch) {
      // The plane: byte (row, v) = tile byte (row, off + v*cn + ch).
      for (int it = threadIdx.x; it < S::TH * words; it += blockDim.x) {
        const int row = it / words, v4 = it - row * words;
        const unsigned char* tr = tile + row * tw;
        eu::u32 w;
        if (cn == 1) {
          const int b = t.off + 4 * v4;
          const eu::u32* tr32 = reinterpret_cast<const eu::u32*>(tr) + (b >> 2);
          w = __funnelshift_r(tr32[0], tr32[1], 8 * (b & 3));
        } else {
          const int b = t.off + 4 * v4 * cn + ch;
          w = eu::u32(tr[b]) | eu::u32(tr[b + cn]) << 8 | eu::u32(tr[b + 2 * cn]) << 16 |
              eu::u32(tr[b + 3 * cn]) << 24;
        }
        reinterpret_cast<eu::u32*>(plane + row * pitch)[v4] = w;
      }
      __syncthreads();
      // The quad words: word (row, v) = plane bytes (row .. row + 3, v), four columns a step.
      for (int it = threadIdx.x; it < S::QH * words; it += blockDim.x) {
        const int row = it / words, v4 = it - row * words;
        const eu::u32* p32 = reinterpret_cast<const eu::u32*>(plane + row * pitch) + v4;
        eu::Word4 q;
        eu::transpose4(p32[0], p32[words], p32[2 * words], p32[3 * words], q.w);
        reinterpret_cast<eu::Word4*>(quad + row * pitch)[v4] = q;
      }
      __syncthreads();
      constexpr int groups = kEpsU8Px / eu::kJ;
      for (int it = threadIdx.x; it < kEpsU8Rows * groups; it += blockDim.x) {
        const int h = it / groups, g = it - h * groups;
        const long long y = y0 + h;
        if (y >= dst.h) break;  // items run row by row: the rest are below the image too
        const long long x = px0 + g * eu::kJ;
        if (x >= dst.w) continue;
        eu::u32 packed = 0;
        eu::item_u8<R, kMode>(quad + h * pitch, plane + h * pitch, pitch, g, k, recip,
                              [&](int j, eu::u32 v) { packed |= v << (8 * j); });
        std::uint8_t* out = dst.row(y);
        if (cn == 1 && dst_aligned && x + eu::kJ <= dst.w) {
          *reinterpret_cast<eu::u32*>(out + x) = packed;
        } else {
#pragma unroll
          for (int j = 0; j < eu::kJ; ++j)
            if (x + j < dst.w) out[(x + j) * cn + ch] = std::uint8_t(packed >> (8 * j));
        }
      }
      __syncthreads();  // the plane and quad words are rebuilt for the next channel / rows
    }
  }
}

template <int R>
void launch_epsilon_u8_r(const DevView<std::uint8_t>& s, const DevView<std::uint8_t>& d,
                         const DevBorder<std::uint8_t>& b, int T, bool src_aligned,
                         bool dst_aligned, cudaStream_t st) {
  const std::size_t smem = EpsU8Shape<R>::smem(s.cn);
  const dim3 grid = grid_2d(d.w, d.h, kEpsU8Px, kEpsU8Rows);
  const int rows = blocks_y(d.h, kEpsU8Rows);
  const eu::u32 k = eu::u8_compare_k(T);
  auto launch = [&](auto kernel) {
    kernel<<<grid, kEpsU8Threads, smem, st>>>(s, d, b, k, src_aligned, dst_aligned, rows);
  };
  switch (eu::u8_compare_mode(T)) {
    case 0:
      launch(epsilon_u8_kernel<R, 0>);
      break;
    case 1:
      launch(epsilon_u8_kernel<R, 1>);
      break;
    default:
      launch(epsilon_u8_kernel<R, 2>);
      break;
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("epsilon u8");
}

/// The packed kernel when it applies (u8, r in 1..kMaxR, t >= 0); false otherwise.
bool launch_epsilon_u8_packed(const ConstImageView& s, const ImageView& d, const EpsilonParams& p,
                              cudaStream_t st) {
  if (p.r < 1 || p.r > eu::kMaxR || !(p.t >= 0)) return false;
  const int T = eu::u8_threshold(p.t);
  const auto sv = dev_view<std::uint8_t>(s);
  const auto dv = dev_view<std::uint8_t>(d);
  const auto b = dev_border<std::uint8_t>(p.border);
  const bool sa = rows_aligned(s, 16), da = rows_aligned(ConstImageView(d), 4);
  switch (p.r) {
    case 1:
      launch_epsilon_u8_r<1>(sv, dv, b, T, sa, da, st);
      break;
    case 2:
      launch_epsilon_u8_r<2>(sv, dv, b, T, sa, da, st);
      break;
    case 3:
      launch_epsilon_u8_r<3>(sv, dv, b, T, sa, da, st);
      break;
    case 4:
      launch_epsilon_u8_r<4>(sv, dv, b, T, sa, da, st);
      break;
    case 5:
      launch_epsilon_u8_r<5>(sv, dv, b, T, sa, da, st);
      break;
    case 6:
      launch_epsilon_u8_r<6>(sv, dv, b, T, sa, da, st);
      break;
    default:
      launch_epsilon_u8_r<7>(sv, dv, b, T, sa, da, st);
      break;
  }
  return true;
}

// ---- f32, r in 1..7: several outputs a thread -----------------------------------------
// The generic kernel widens every tap to double (81 conversions an output at r = 4, a
// quarter-rate instruction). Here a thread computes kEpsF32J consecutive pixels of one row:
// each window row's kEpsF32J + 2r samples are widened once, then every tap is the
// reference's own arithmetic: |double(p) - double(c)| <= t, the double sum in window
// row-major order, float(sum / n).
template <int R>
__global__ void __launch_bounds__(kEpsF32BX* kEpsF32TY)
    epsilon_f32_kernel(DevView<float> src, DevView<float> dst, DevBorder<float> border, double t,
                       int rows_of_blocks) {
  constexpr int J = kEpsF32J, W = 2 * R + 1, NV = J + 2 * R;
  constexpr int BX = kEpsF32BX * J, TW = BX + 2 * R, TH = kEpsF32BY + 2 * R;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* tile = reinterpret_cast<float*>(smem_raw);
  const int cn = src.cn;
  const long long bx0 = (long long)blockIdx.x * BX;
  const long long x = bx0 + threadIdx.x * J;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kEpsF32BY;
    load_tile(tile, TW, TH, src, bx0 - R, y0 - R, border);
    for (int ty = threadIdx.y; ty < kEpsF32BY; ty += kEpsF32TY) {
      const long long y = y0 + ty;
      if (x >= dst.w || y >= dst.h) break;
      for (int c = 0; c < cn; ++c) {
        // Window top-left of output j = 0; sample m of window row dy at (dy*TW + m)*cn.
        const float* base = tile + (std::size_t(ty) * TW + threadIdx.x * J) * cn + c;
        double cd[J], s[J];
        int n[J];
#pragma unroll
        for (int j = 0; j < J; ++j) {
          cd[j] = double(base[(R * TW + j + R) * cn]);
          s[j] = 0;
          n[j] = 0;
        }
        // Window rows in a loop (its body is J * W taps): fully unrolled, r = 7 spilled.
#pragma unroll 1
        for (int dy = 0; dy < W; ++dy) {
          double v[NV];
#pragma unroll
          for (int m = 0; m < NV; ++m) v[m] = double(base[(dy * TW + m) * cn]);
            // k outside j: sample m is live only while k runs over m - J + 1 .. m; each
            // output's taps still add in k order.
#pragma unroll
          for (int k = 0; k < W; ++k)
#pragma unroll
            for (int j = 0; j < J; ++j) {
              // Adding +0.0 for a tap out of range leaves s as it was: s starts at +0.0 and a
              // round-to-nearest sum is -0.0 only from two -0.0 operands.
              const bool in = fabs(v[j + k] - cd[j]) <= t;
              s[j] += in ? v[j + k] : 0.0;
              n[j] += in;
            }
        }
        float* out = dst.row(y);
#pragma unroll
        for (int j = 0; j < J; ++j)
          if (x + j < dst.w) out[(x + j) * cn + c] = px_epsilon_mean_f64(s[j], n[j]);
      }
    }
    __syncthreads();
  }
}

template <int R>
void launch_epsilon_f32_r(const DevView<float>& s, const DevView<float>& d,
                          const DevBorder<float>& b, double t, cudaStream_t st) {
  constexpr int TW = kEpsF32BX * kEpsF32J + 2 * R, TH = kEpsF32BY + 2 * R;
  const std::size_t smem = std::size_t(TW) * TH * s.cn * sizeof(float);
  if (smem > 48 * 1024)
    PIXFLOW_CUDA_CHECK(cudaFuncSetAttribute(
        epsilon_f32_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  epsilon_f32_kernel<R>
      <<<grid_2d(d.w, d.h, kEpsF32BX * kEpsF32J, kEpsF32BY), dim3(kEpsF32BX, kEpsF32TY), smem,
         st>>>(s, d, b, t, blocks_y(d.h, kEpsF32BY));
  PIXFLOW_CUDA_CHECK_LAUNCH("epsilon f32");
}

/// The f32 kernel when it applies (r in 1..7; at most 104 KB of tile at r = 7, 4 channels).
bool launch_epsilon_f32_fast(const ConstImageView& s, const ImageView& d, const EpsilonParams& p,
                             cudaStream_t st) {
  if (p.r < 1 || p.r > 7) return false;
  const auto sv = dev_view<float>(s);
  const auto dv = dev_view<float>(d);
  const auto b = dev_border<float>(p.border);
  switch (p.r) {
    case 1:
      launch_epsilon_f32_r<1>(sv, dv, b, p.t, st);
      break;
    case 2:
      launch_epsilon_f32_r<2>(sv, dv, b, p.t, st);
      break;
    case 3:
      launch_epsilon_f32_r<3>(sv, dv, b, p.t, st);
      break;
    case 4:
      launch_epsilon_f32_r<4>(sv, dv, b, p.t, st);
      break;
    case 5:
      launch_epsilon_f32_r<5>(sv, dv, b, p.t, st);
      break;
    case 6:
      launch_epsilon_f32_r<6>(sv, dv, b, p.t, st);
      break;
    default:
      launch_epsilon_f32_r<7>(sv, dv, b, p.t, st);
      break;
  }
  return true;
}

template <class T>
void launch_epsilon(const ConstImageView& s, const ImageView& d, const EpsilonParams& p,
                    cudaStream_t st) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    if (launch_epsilon_u8_packed(s, d, p, st)) return;
  } else {
    if (launch_epsilon_f32_fast(s, d, p, st)) return;
  }
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
