// Fast 3x3 paths for 1-channel f32: dilate/erode (morphology.cu), median (median.cu), box,
// Gaussian and sobel/scharr (separable.cu); all launched by launch_f32_3x3. The arithmetic
// (one thread's outputs from the shared tile) is f32_3x3_math.hpp, host + device, tested on
// the CPU by tests/f32_3x3_test.cpp; this file holds the tile loader, the kernel and the
// launcher.
//
// A block of 32 x 8 threads computes 128 x 8R outputs (R = 8 rows a thread, or 2 for images
// too small to fill the GPU with 8: launch.cuh's tall_blocks_fill); each thread 4 adjacent
// outputs of R consecutive rows, stored as one 16-byte vector per row. The tile (136 words x
// (8R + 2) rows: 35.9 KB tall, 9.8 KB short) is loaded as 16-byte chunks of the image: one
// flat loop of independent float4 loads when the whole tile lies inside an image with
// 16-byte aligned rows, else chunk by chunk (float4 or four scalar loads for chunks inside
// the image, the border rule per sample outside). The ops that order (dilate, erode, median)
// get totalOrder keys in the tile, converted once per sample at load time.
#pragma once

#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/f32_3x3_math.hpp"

namespace pixflow::cuda::f32_3x3 {
// Internal linkage: this header is included by median.cu, morphology.cu and separable.cu.
namespace {

static_assert(kTX == kF32TX && kPX == kF32PX, "launch.cuh and f32_3x3_math.hpp agree");
constexpr int kTY = kF32TY;
constexpr int kThreads = kTX * kTY;
constexpr int kRowsTall = kF32Rows, kRowsShort = kF32RowsShort;
template <int R>
constexpr int kBH = R* kTY;
template <int R>
constexpr int kTileH = kBH<R> + 2;

// Stores one word of the tile: the sample's key for the ordering ops, else its bits.
template <bool kKey>
__device__ __forceinline__ u32 tile_word(u32 bits) {
  if constexpr (kKey)
    return u32(detail::order_key(__uint_as_float(bits)));
  else
    return bits;
}

// Tile word (r, i) = sample (x0 + i, y0 + r) by the border rule (x0 = bx0 - 4, a multiple of
// 4; y0 = by0 - 1). Syncs at the end.
template <int kRows, bool kKey>
__device__ __forceinline__ void load_tile_f32(u32* tile, const DevView<float>& v,
                                              const DevBorder<float>& b, long long x0, long long y0,
                                              bool aligned) {
  const int tid = int(threadIdx.y) * kTX + int(threadIdx.x);
  const bool inside = aligned && x0 >= 0 && x0 + kTileW <= v.w && y0 >= 0 && y0 + kRows <= v.h;
  if (inside) {
    // kTileChunks is a constant: the division is a multiply. Unrolled by 5: up to 5 float4
    // loads of a thread in flight before its first shared store (the tall shape has 9 a
    // thread, the short one 3; the full 9 took 8 more registers and spilled box).
    constexpr int kAll = kRows * kTileChunks, kIters = (kAll + kThreads - 1) / kThreads;
#pragma unroll 5
    for (int k = 0; k < kIters; ++k) {
      const int i = tid + k * kThreads;
      if (kAll % kThreads != 0 && i >= kAll) break;
      const int r = i / kTileChunks, c = i - r * kTileChunks;
      uint4 q = reinterpret_cast<const uint4*>(v.row(y0 + r) + x0)[c];
      q = make_uint4(tile_word<kKey>(q.x), tile_word<kKey>(q.y), tile_word<kKey>(q.z),
                     tile_word<kKey>(q.w));
      reinterpret_cast<uint4*>(tile)[i] = q;
    }
  } else {
    // Edge tiles: a chunk inside the image in x is one float4 (or 4 scalar loads on rows not
    // 16-byte aligned) of its row mapped by the border rule; a chunk that straddles or leaves
    // the row takes the rule per sample. Not unrolled: the edge path stays small.
    const u32 cval = __float_as_uint(b.value);
#pragma unroll 1
    for (int i = tid; i < kRows * kTileChunks; i += kThreads) {
      const int r = i / kTileChunks, c = i - r * kTileChunks;
      const long long sy = near_border_index(y0 + r, v.h, b.type);
      const long long x = x0 + 4 * c;
      u32 w[4];
      if (sy >= 0 && x >= 0 && x + 4 <= v.w) {
        const float* s = v.row(sy) + x;
        if (aligned) {
          const uint4 q = *reinterpret_cast<const uint4*>(s);
          w[0] = q.x;
          w[1] = q.y;
          w[2] = q.z;
          w[3] = q.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) w[j] = __float_as_uint(s[j]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const long long sx = near_border_index(x + j, v.w, b.type);
          w[j] = sy >= 0 && sx >= 0 ? __float_as_uint(v.row(sy)[sx]) : cval;
        }
      }
      reinterpret_cast<uint4*>(tile)[i] = make_uint4(tile_word<kKey>(w[0]), tile_word<kKey>(w[1]),
                                                     tile_word<kKey>(w[2]), tile_word<kKey>(w[3]));
    }
  }
  __syncthreads();
}

// Resident blocks a SM (__launch_bounds__: registers <= 65536 / (256 x blocks)); ptxas -v
// for sm_90 (CUDA 13.0), tall / short shape:
//   dilate/erode 56 / 48 registers: 4 / 5 blocks (6 spilled 4 bytes in the short shape);
//   median 61 / 48: 4 / 5 (6 spilled 4 bytes);
//   Gaussian and sobel/scharr 42 / 40: 4 / 6 (the tall one could take 6: to measure);
//   box 76 / 64 (four rows of six doubles a thread): 3 / 4 (4 / 6 spilled 4 / 88 bytes).
// The tiles (35.9 KB tall, 9.8 KB short) allow 6 tall blocks a SM.
template <class Op>
constexpr int kTallBlocks = 4;
template <class Op>
constexpr int kShortBlocks = 5;
template <>
constexpr int kShortBlocks<Linear3> = 6;
template <>
constexpr int kTallBlocks<Box3> = 3;
template <>
constexpr int kShortBlocks<Box3> = 4;
template <class Op, int R>
constexpr int kMinBlocks = R == kRowsShort ? kShortBlocks<Op> : kTallBlocks<Op>;

template <class Op, int R>
__global__ void __launch_bounds__(kThreads, kMinBlocks<Op, R>)
    f32_3x3_kernel(DevView<float> src, DevView<float> dst, DevBorder<float> border,
                   bool src_aligned, bool dst_aligned, int rows_of_blocks, Op op) {
  __shared__ __align__(16) u32 tile[kTileH<R> * kTileW];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long bx0 = (long long)blockIdx.x * kBW;
  const long long x0 = bx0 + tx * kPX;
  // A whole 16-byte store, or the samples inside the row one by one (right edge, or rows
  // not 16-byte aligned).
  const bool full = dst_aligned && x0 + 3 < dst.w;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH<R>;
    load_tile_f32<kTileH<R>, Op::kKey>(tile, src, border, bx0 - 4, by0 - 1, src_aligned);
    rows_of<R>(op, tile, tx, ty * R, [&](int i, const u32(&o)[4]) {
      const long long y = by0 + ty * R + i;
      if (y >= dst.h || x0 >= dst.w) return;
      float* d = dst.row(y) + x0;
      if (full) {
        *reinterpret_cast<uint4*>(d) = make_uint4(o[0], o[1], o[2], o[3]);
      } else {
        // Unrolled with a guard, not a bounded loop: o[] stays in registers.
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (x0 + j < dst.w) d[j] = __uint_as_float(o[j]);
      }
    });
    __syncthreads();  // the next tile overwrites this one
  }
}

// Launches f32_3x3_kernel<Op, R> over one f32 channel, R by the rule of launch.cuh
// (tall_blocks_fill), or returns false when the path does not apply (not f32 x 1). Any
// alignment, ROI and size: alignment only selects vector loads and stores.
template <class Op>
bool launch_f32_3x3(const Op& op, const ConstImageView& s, const ImageView& d, const Border& border,
                    const char* what, cudaStream_t st) {
  if (s.depth() != Depth::f32 || s.channels() != 1) return false;
  const long long bx = (d.width() + kBW - 1) / kBW;
  const bool tall = tall_blocks_fill(bx, d.height(), kBH<kRowsTall>);
  const int bh = tall ? kBH<kRowsTall> : kBH<kRowsShort>;
  const auto kernel = tall ? f32_3x3_kernel<Op, kRowsTall> : f32_3x3_kernel<Op, kRowsShort>;
  kernel<<<grid_2d(d.width(), d.height(), kBW, bh), dim3(kTX, kTY), 0, st>>>(
      dev_view<float>(s), dev_view<float>(d), dev_border<float>(border), rows_aligned(s, 16),
      rows_aligned(d, 16), blocks_y(d.height(), bh), op);
  PIXFLOW_CUDA_CHECK_LAUNCH(what);
  (void)what;
  return true;
}

}  // namespace
}  // namespace pixflow::cuda::f32_3x3
