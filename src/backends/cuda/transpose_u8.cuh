// transpose of u8 x 1 images with 4-byte aligned rows: transpose_u8_kernel, run by transpose.cu
// and by bench/micro/transpose_shapes.cu; with its words stored mirrored, rotate 90 / 270 of
// geometry.cu.
#pragma once

#include <cstdint>

#include "src/backends/cuda/common/launch.cuh"

namespace pixflow::cuda {
namespace {

// u8 x 1 fast path: 64x64-byte tiles; each thread loads a 4x4 byte block as four words,
// transposes it in registers with byte permutes, and the block writes whole words back
// through shared memory (4 bytes per thread per access instead of 1). Needs 4-byte
// aligned rows in both views. Tiles whose 64 columns lie inside the image take words even
// where rows run out (the last tile row, a branch of its own: rows past the image load
// nothing, and an output word whose 4 bytes are not all inside its row is stored by bytes);
// only tiles past the right edge go byte by byte. Why: at 1920x1080 the 30 tiles of the last tile
// row (56 rows) went byte by byte, one scattered byte store a thread an iteration, and in the one
// wave of 510 blocks they set the time (7.0 us against the copy's 2.0; NPP 6.9; 2.2 with words).
// With the partial rows' code ptxas took 44 registers (5 blocks a SM), and 8192^2 measured 56.2
// us (one branch for every tile) and 54.9 (whole tiles in a branch of their own) against 49.2 at
// the 32 registers of the kernel before: 8 blocks a SM (__launch_bounds__, a 32-register bound,
// all 2048 threads; no spills).
__device__ __forceinline__ void transpose4x4(unsigned r0, unsigned r1, unsigned r2, unsigned r3,
                                             unsigned (&c)[4]) {
  const unsigned t0 = __byte_perm(r0, r1, 0x5140), t1 = __byte_perm(r2, r3, 0x5140);
  const unsigned t2 = __byte_perm(r0, r1, 0x7362), t3 = __byte_perm(r2, r3, 0x7362);
  c[0] = __byte_perm(t0, t1, 0x5410);
  c[1] = __byte_perm(t0, t1, 0x7632);
  c[2] = __byte_perm(t2, t3, 0x5410);
  c[3] = __byte_perm(t2, t3, 0x7632);
}

static_assert(kTransposeU8Tile == 64 && kTransposeU8Threads == 16,
              "transpose_u8_kernel is written for these");

/// Where the tiles' output goes: transpose (dst row x, column y); rotate_cw (rotate 90
/// clockwise, geometry.cu: dst row x, column h-1-y, so a word of 4 source rows is stored
/// byte-reversed at column h-4-y, 4-byte aligned only where h is a multiple of 4: the
/// launcher's condition); rotate_ccw (rotate 270: dst row w-1-x, column y).
enum class U8Tiles { transpose, rotate_cw, rotate_ccw };

template <U8Tiles M>
__device__ __forceinline__ long long u8_out_row(int x, int w) {
  return M == U8Tiles::rotate_ccw ? w - 1 - x : x;
}
template <U8Tiles M>
__device__ __forceinline__ int u8_out_col(int y, int h) {
  return M == U8Tiles::rotate_cw ? h - 1 - y : y;
}
// The word of source rows y .. y+3 (byte b = row y+b) of output row `row`.
template <U8Tiles M>
__device__ __forceinline__ void u8_store_word(unsigned char* dst, long long dstride, long long row,
                                              int y, int h, unsigned v) {
  if (M == U8Tiles::rotate_cw)
    *reinterpret_cast<unsigned*>(dst + row * dstride + (h - 4 - y)) = __byte_perm(v, 0, 0x0123);
  else
    *reinterpret_cast<unsigned*>(dst + row * dstride + y) = v;
}

template <U8Tiles M = U8Tiles::transpose>
__global__ void __launch_bounds__(kTransposeU8Threads* kTransposeU8Threads, 8)
    transpose_u8_kernel(const unsigned char* src, long long sstride, unsigned char* dst,
                        long long dstride, int w, int h, int rows_of_tiles) {
  __shared__ unsigned out[64][17];  // 64 output rows x 16 words (+1 against bank conflicts)
  const int tx = threadIdx.x, ty = threadIdx.y;  // 16 x 16
  const int x0 = blockIdx.x * 64;
  for (int by = blockIdx.y; by < rows_of_tiles; by += gridDim.y) {
    const int y0 = by * 64;
    if (x0 + 64 <= w && y0 + 64 <= h) {
      unsigned r[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        r[i] = reinterpret_cast<const unsigned*>(src + (long long)(y0 + 4 * ty + i) * sstride +
                                                 x0)[tx];
      unsigned c[4];
      transpose4x4(r[0], r[1], r[2], r[3], c);
#pragma unroll
      for (int j = 0; j < 4; ++j) out[4 * tx + j][ty] = c[j];  // output row x0+4tx+j, word ty
      __syncthreads();
#pragma unroll
      for (int i = 0; i < 4; ++i)
        u8_store_word<M>(dst, dstride, u8_out_row<M>(x0 + 4 * ty + i, w), y0 + 4 * tx, h,
                         out[4 * ty + i][tx]);
      __syncthreads();
    } else if (x0 + 64 <= w) {
      // The last tile row (rows run out): the same by words, rows past the image skipped.
      const int rows = h - y0;  // source rows of the tile (1 .. 63)
      unsigned r[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int yy = 4 * ty + i;
        r[i] =
            yy < rows
                ? reinterpret_cast<const unsigned*>(src + (long long)(y0 + yy) * sstride + x0)[tx]
                : 0u;
      }
      unsigned c[4];
      transpose4x4(r[0], r[1], r[2], r[3], c);
#pragma unroll
      for (int j = 0; j < 4; ++j) out[4 * tx + j][ty] = c[j];
      __syncthreads();
      // Output row x0 + 4ty + i, bytes y0 + 4tx .. + 3 (source rows): a word where all 4 exist.
      const int n = rows - 4 * tx;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const long long row = u8_out_row<M>(x0 + 4 * ty + i, w);
        const unsigned v = out[4 * ty + i][tx];
        if (n >= 4) {
          u8_store_word<M>(dst, dstride, row, y0 + 4 * tx, h, v);
        } else {
          for (int b = 0; b < n; ++b)
            dst[row * dstride + u8_out_col<M>(y0 + 4 * tx + b, h)] = std::uint8_t(v >> (8 * b));
        }
      }
      __syncthreads();
    } else {
      const int tid = ty * 16 + tx;
      for (int i = tid; i < 64 * 64; i += 256) {
        const int yy = y0 + i / 64, xx = x0 + i % 64;
        if (xx < w && yy < h)
          dst[u8_out_row<M>(xx, w) * dstride + u8_out_col<M>(yy, h)] =
              src[(long long)yy * sstride + xx];
      }
    }
  }
}

}  // namespace
}  // namespace pixflow::cuda
