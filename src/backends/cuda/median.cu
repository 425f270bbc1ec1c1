// median on CUDA.
// u8 x 1 and u8 x 3 at 3x3: the packed kernel of u8_3x3.cuh (u8 x 3 over the row's bytes; on
// large images its wide shape, 8 output bytes x 8 rows a thread).
// u8 x 1 at 7x7, u8 x 3 at 5x5: median_u8_packed_kernel below (separable sorting networks on
// pixels packed two per word, median_u8_packed.hpp; u8 x 3 over the row's bytes; 7x7 passes
// each thread's sorted shared window columns from its first output word to its second through
// shared memory). u8 x 1 at 5x5: median5_u8_kernel (median5_u8.cuh), the same body, its tiles
// copied by cp.async, one block a tile.
// f32 x 1 at 3x3: f32_3x3.cuh (sorted window columns on totalOrder keys).
// Other square 3x3, 5x5, 7x7: a shared-memory tile with halo; each thread gathers its window into
// registers and runs a forgetful selection (keep n/2+2 values, drop the min and max, take
// the next value, ...; ends with the median of three), fully unrolled.
// Other windows: u8 through a per-thread 256-bin histogram, u16/f32 through a radix select
// on order-preserving integer keys (16 or 32 passes over the window). Both are exact.
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/tile.cuh"
#include "src/backends/cuda/f32_3x3.cuh"
#include "src/backends/cuda/median5_u8.cuh"
#include "src/backends/cuda/median_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3.cuh"
#include "src/base/backend.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

// The small windows run on the tile engine's shape (launch.cuh).
constexpr int kBX = kTileBX, kBY = kTileBY, kTY = kTileTY;

// Compare-exchange (f32 runs on detail::order_key's int keys: totalOrder, one IMNMX each).
template <class T>
__device__ __forceinline__ void cx(T& a, T& b) {
  const T lo = a < b ? a : b;
  const T hi = a < b ? b : a;
  a = lo;
  b = hi;
}

template <int N, class T>
__device__ __forceinline__ T forgetful_median(T (&w)[N]) {
  if constexpr (N == 1) {
    return w[0];
  } else {
    constexpr int M = N / 2 + 2 < N ? N / 2 + 2 : N;
#pragma unroll
    for (int step = 0; step < N - M; ++step) {
      const int lo = step;  // active window [lo, M-1]
#pragma unroll
      for (int i = lo + 1; i < M; ++i) cx(w[lo], w[i]);  // min -> w[lo]
#pragma unroll
      for (int i = lo + 1; i < M - 1; ++i) cx(w[i], w[M - 1]);  // max -> w[M-1]
      w[M - 1] = w[M + step];                                   // drop both, take the next value
    }
    // Three values remain in w[N-M .. M-1].
    constexpr int a = N - M;
    cx(w[a], w[a + 1]);
    cx(w[a + 1], w[a + 2]);
    cx(w[a], w[a + 1]);
    return w[a + 1];
  }
}

template <class T, int K>
__global__ void median_small_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> border,
                                    int rows_of_blocks) {
  extern __shared__ unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  constexpr int R = K / 2;
  constexpr int TW = kBX + 2 * R, TH = kBY + 2 * R;
  const int cn = src.cn;
  const long long x = (long long)blockIdx.x * kBX + threadIdx.x;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kBY;
    load_tile(tile, TW, TH, src, (long long)blockIdx.x * kBX - R, y0 - R, border);
    for (int ty = threadIdx.y; ty < kBY; ty += kTY) {
      const long long y = y0 + ty;
      if (x >= dst.w || y >= dst.h) break;
      for (int c = 0; c < cn; ++c) {
        // f32 selects on totalOrder keys (as the reference), the other depths on values.
        constexpr bool kKeys = std::is_same_v<T, float>;
        using W = std::conditional_t<kKeys, std::int32_t, T>;
        W w[K * K];
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
          for (int i = 0; i < K; ++i) {
            const T v = tile[((ty + j) * TW + threadIdx.x + i) * cn + c];
            if constexpr (kKeys)
              w[j * K + i] = detail::order_key(v);
            else
              w[j * K + i] = v;
          }
        const W m = forgetful_median<K * K>(w);
        if constexpr (kKeys)
          dst.row(y)[x * cn + c] = detail::from_order_key(m);
        else
          dst.row(y)[x * cn + c] = m;
      }
    }
    __syncthreads();
  }
}

// Order-preserving unsigned keys.
__device__ __forceinline__ unsigned key_of(std::uint16_t v) {
  return v;
}
__device__ __forceinline__ unsigned key_of(float v) {
  const unsigned u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float from_key(unsigned k, float) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
__device__ __forceinline__ std::uint16_t from_key(unsigned k, std::uint16_t) {
  return std::uint16_t(k);
}

__global__ void median_hist_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                                      DevBorder<std::uint8_t> border, int kw, int kh) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int rx = kw / 2, ry = kh / 2;
  const int rank = (kw * kh) / 2;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    for (int c = 0; c < src.cn; ++c) {
      unsigned hist[256];
      for (int i = 0; i < 256; ++i) hist[i] = 0;
      for (int j = -ry; j <= ry; ++j)
        for (int i = -rx; i <= rx; ++i) ++hist[fetch(src, x + i, y + j, c, border)];
      int acc = 0, v = 0;
      for (; v < 255; ++v) {
        acc += int(hist[v]);
        if (acc > rank) break;
      }
      dst.row(y)[x * src.cn + c] = std::uint8_t(v);
    }
  }
}

template <class T, int BITS>
__global__ void median_radix_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> border, int kw,
                                    int kh) {
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int rx = kw / 2, ry = kh / 2;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    for (int c = 0; c < src.cn; ++c) {
      int rank = (kw * kh) / 2;  // 0-based rank of the median
      unsigned prefix = 0;       // the key's bits decided so far
      for (int b = BITS - 1; b >= 0; --b) {
        // Count window keys whose bits above b equal prefix and whose bit b is 0.
        int count = 0;
        for (int j = -ry; j <= ry; ++j)
          for (int i = -rx; i <= rx; ++i) {
            const unsigned k = key_of(fetch(src, x + i, y + j, c, border));
            const unsigned hi = (b + 1 >= 32) ? 0u : (k >> (b + 1));
            count += (hi == prefix && !((k >> b) & 1u)) ? 1 : 0;
          }
        if (rank < count) {
          prefix = prefix << 1;
        } else {
          rank -= count;
          prefix = (prefix << 1) | 1u;
        }
      }
      dst.row(y)[x * src.cn + c] = from_key(prefix, T{});
    }
  }
}

// u8 x 1, K = 7 (5 takes median5_u8_kernel below), u8 x 3, K = 5: a 128 x kTY*H output block per 32
// x kTY threads (H = kRows<K>, or kRowsShort<K> for small images); the tile (kTileW x kTileH bytes,
// median_u8_packed.hpp) by load_word_tile_u8 (word loads; on the image's edges through the border
// rule; 7x7 too since its 108 registers leave room for the edge path, which spilled at its former
// 168); then each thread runs median_rows and stores 4 bytes per row (one word where the
// destination rows are 4-byte aligned, else byte by byte: ROIs at any offset and stride take this
// kernel too). CN = 3 (u8 x 3, 5x5 only): the same over the row's bytes (dst.w = row bytes, as
// u8_3x3.cuh's launch_3x3_cn), a tile with 8-byte margins (median_u8_packed.hpp, kMargin).
template <int K, int H, int CN = 1>
__global__ void __launch_bounds__(median_u8::kTX* median_u8::kTY<K>, median_u8::kMinBlocksFor<K, H>)
    median_u8_packed_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                            DevBorder<std::uint8_t> border, bool src_aligned, bool dst_aligned,
                            int rows_of_blocks) {
  using namespace median_u8;
  constexpr int R = K / 2, TH = kTileH<K, H>, TY = median_u8::kTY<K>;
  static_assert(CN == 1 || (CN == 3 && K == 5), "u8 x 3 runs 5x5 only");
  __shared__ unsigned tile[TH * kTileWordsCn<CN>];
  // 7x7: each thread's sorted shared window columns, word 0 to word 1 (median7_rows_shared),
  // word k of a thread at k * kCoreStride + its index (consecutive threads, consecutive banks).
  constexpr int kCoreStride = kTX * TY;
  __shared__ unsigned cores[K == 7 ? kCoreWords7<H> * kCoreStride : 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<K, H>;
    load_word_tile_u8<kTileWordsCn<CN>, kTX * TY, CN>(tile, TH, ty * kTX + tx, src, border,
                                                      bx0 - kMargin<CN>, by0 - R, src_aligned);
    const long long x0 = bx0 + tx * kPX;
    const bool full = dst_aligned && x0 + 3 < dst.w;
    median_rows<K, H, CN>(tile, tx, ty * H, cores + ty * kTX + tx, kCoreStride,
                          [&](int i, unsigned o) {
                            const long long y = by0 + ty * H + i;
                            if (x0 >= dst.w || y >= dst.h) return;
                            std::uint8_t* d = dst.row(y) + x0;
                            if (full) {
                              *reinterpret_cast<unsigned*>(d) = o;
                            } else {
                              for (int j = 0; j < 4 && x0 + j < dst.w; ++j)
                                d[j] = std::uint8_t(o >> (8 * j));
                            }
                          });
    __syncthreads();
  }
}

// Launches median_u8_packed_kernel<K, H, CN>, or returns false where it does not apply (not u8
// x CN, or a row too long for int). H: the tall shape when its grid fills the GPU (launch.cuh,
// tall_blocks_fill, on blocks of row bytes), else the short one (the same for 7x7). CN = 3 sees
// the destination as rows of bytes (one channel) like launch_3x3_cn.
template <int K, int CN = 1>
bool launch_median_u8_packed(const ConstImageView& s, const ImageView& d, const Border& border,
                             cudaStream_t st) {
  using namespace median_u8;
  const long long wc = d.width() * CN;
  if (s.depth() != Depth::u8 || s.channels() != CN || wc > 0x7fffffffLL) return false;
  const long long bx = (wc + kBW - 1) / kBW;
  DevView<std::uint8_t> dv = dev_view<std::uint8_t>(d);
  dv.w = int(wc);
  dv.cn = 1;
  auto launch = [&](auto kernel, int bh) {
    kernel<<<grid_2d(wc, d.height(), kBW, bh), dim3(kTX, median_u8::kTY<K>), 0, st>>>(
        dev_view<std::uint8_t>(s), dv, dev_border<std::uint8_t>(border), rows_aligned(s, 4),
        rows_aligned(d, 4), blocks_y(d.height(), bh));
  };
  if (kRowsShort<K> == kRows<K> || tall_blocks_fill(bx, d.height(), kBH<K>))
    launch(median_u8_packed_kernel<K, kRows<K>, CN>, kBH<K>);
  else
    launch(median_u8_packed_kernel<K, kRowsShort<K>, CN>, kBH<K, kRowsShort<K>>);
  PIXFLOW_CUDA_CHECK_LAUNCH("median");
  return true;
}

template <class T>
void launch_median(const ConstImageView& s, const ImageView& d, const MedianParams& p,
                   cudaStream_t st) {
  auto sv = dev_view<T>(s);
  auto dv = dev_view<T>(d);
  auto b = dev_border<T>(p.border);
  const int cn = s.channels();
  auto small = [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    const std::size_t smem = std::size_t(kBX + K - 1) * (kBY + K - 1) * cn * sizeof(T);
    const dim3 grid = grid_2d(d.width(), d.height(), kBX, kBY);
    median_small_kernel<T, K>
        <<<grid, dim3(kBX, kTY), smem, st>>>(sv, dv, b, blocks_y(d.height(), kBY));
    PIXFLOW_CUDA_CHECK_LAUNCH("median");
  };
  // 3x3 on one u8 channel: the packed kernel (u8_3x3.cuh) when the destination allows it: the
  // rows8 shape where the source rows are 4-byte aligned (launch_3x3_cn), else its wide tall
  // shape (128 x 128 outputs a block) where that grid fills the GPU (tall_blocks_fill on 128-row
  // blocks), else the narrow tall one (128 x 64) where that fills it, else the short.
  if (std::is_same_v<T, std::uint8_t> && p.kw == 3 && p.kh == 3) {
    const bool wide = tall_blocks_fill((d.width() + u8_3x3::kBW - 1) / u8_3x3::kBW, d.height(),
                                       u8_3x3::kBH<u8_3x3::kMedTallR>);
    if (wide ? u8_3x3::launch_3x3<u8_3x3::kMedTallR>(
                   u8_3x3::median3_rows8_kernel<1>,
                   u8_3x3::median3_wide_u8_kernel<u8_3x3::kMedTallR>,
                   u8_3x3::median3_u8_kernel<u8_3x3::kRowsShort>, s, d, p.border, "median", st)
             : u8_3x3::launch_3x3(
                   u8_3x3::median3_rows8_kernel<1>, u8_3x3::median3_u8_kernel<u8_3x3::kRowsTall>,
                   u8_3x3::median3_u8_kernel<u8_3x3::kRowsShort>, s, d, p.border, "median", st))
      return;
  }
  // 3x3 on u8 x 3: the same kernels over the row's bytes (CN = 3, channels interleaved), the
  // shapes chosen as for one channel on the row bytes.
  if (std::is_same_v<T, std::uint8_t> && p.kw == 3 && p.kh == 3) {
    const bool wide = tall_blocks_fill((d.width() * 3 + u8_3x3::kBW - 1) / u8_3x3::kBW, d.height(),
                                       u8_3x3::kBH<u8_3x3::kMedTallR>);
    // Large u8 x 3 images keep the wide tile kernel: in the rows8 shape 8192^2 took 211.4 us
    // against its 197.7 (bench/NOTES.md, session 18); smaller ones take the rows8 shape.
    if (wide ? u8_3x3::launch_3x3_cn<3, u8_3x3::kMedTallR>(
                   decltype (&u8_3x3::median3_rows8_kernel<3>)(nullptr),
                   u8_3x3::median3_wide_u8_kernel<u8_3x3::kMedTallR, 3>,
                   u8_3x3::median3_u8_kernel<u8_3x3::kRowsShort, 3>, s, d, p.border, "median", st)
             : u8_3x3::launch_3x3_cn<3>(
                   u8_3x3::median3_rows8_kernel<3>, u8_3x3::median3_u8_kernel<u8_3x3::kRowsTall, 3>,
                   u8_3x3::median3_u8_kernel<u8_3x3::kRowsShort, 3>, s, d, p.border, "median", st))
      return;
  }
  // 3x3 on one f32 channel: f32_3x3.cuh (sorted columns on totalOrder keys).
  if (std::is_same_v<T, float> && p.kw == 3 && p.kh == 3 &&
      f32_3x3::launch_f32_3x3(f32_3x3::Median3{}, s, d, p.border, "median", st))
    return;
  // 5x5, 7x7 on one u8 channel and 5x5 on u8 x 3: the packed separable-network kernel above.
  if (std::is_same_v<T, std::uint8_t> && p.kw == 5 && p.kh == 5 &&
      launch_median5_u8(s, d, p.border, st))
    return;
  if (std::is_same_v<T, std::uint8_t> && p.kw == 5 && p.kh == 5 &&
      launch_median_u8_packed<5, 3>(s, d, p.border, st))
    return;
  if (std::is_same_v<T, std::uint8_t> && p.kw == 7 && p.kh == 7 &&
      launch_median_u8_packed<7>(s, d, p.border, st))
    return;
  if (p.kw == p.kh && p.kw == 1) return small(std::integral_constant<int, 1>{});
  if (p.kw == p.kh && p.kw == 3) return small(std::integral_constant<int, 3>{});
  if (p.kw == p.kh && p.kw == 5) return small(std::integral_constant<int, 5>{});
  if (p.kw == p.kh && p.kw == 7) return small(std::integral_constant<int, 7>{});
  const dim3 block(kPixelBX, kPixelBY);
  const dim3 grid = grid_2d(d.width(), d.height(), kPixelBX, kPixelBY);
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    median_hist_u8_kernel<<<grid, block, 0, st>>>(sv, dv, b, p.kw, p.kh);
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    median_radix_kernel<T, 16><<<grid, block, 0, st>>>(sv, dv, b, p.kw, p.kh);
  } else {
    median_radix_kernel<T, 32><<<grid, block, 0, st>>>(sv, dv, b, p.kw, p.kh);
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("median");
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_median) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::u16, Depth::f32>(
      table, "median", [](auto t) { return &cuda::launch_median<decltype(t)>; });
}
