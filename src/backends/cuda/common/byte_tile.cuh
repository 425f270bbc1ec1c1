// Byte tiles for the u8 window kernels (box and gaussian in separable.cu, dilate/erode in
// morphology.cu): a block computes kByteTileBW output samples (bytes, channels interleaved,
// so the same code serves 1-4 channels: a horizontal neighbour is `cn` bytes away) of `bh`
// output rows, from a tile of the input in shared memory whose rows start on a 16-byte
// boundary of the image row, so the interior loads are 16-byte vector loads; edges go
// through the border rule per byte. Every kernel runs its vertical pass first (the window's
// results do not depend on the order: integer sums, min/max), so the horizontal pass reads
// bh rows only, and writes its outputs through the stage (store_staged) along rows.
// The launch shape of these kernels lives here (kByteTileThreads, kByteTileBW) and in each
// kernel's row count (box/morphology 32 or 64, gaussian kGaussBH, van Herk kVhBH).
#pragma once

#include <cstdint>

#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/u8_3x3_cn.hpp"

namespace pixflow::cuda {

// Threads per block and output samples per block row (launch shape, see launch.cuh's rule:
// changing one changes speed only).
constexpr int kByteTileThreads = 512;
constexpr int kByteTileBW = 256;

/// Where a block's tile lies: output samples [e0, e0 + kByteTileBW) of rows [y0, y0 + bh);
/// input samples [xs, xs + tw) of rows [y0 - ay, y0 - ay + th), xs a multiple of 16.
struct ByteTile {
  long long e0, y0;
  long long xs;  // first input sample of a tile row (may be negative)
  int tw, th;    // bytes per tile row (a multiple of 16), rows
  int off;       // tile column of the first window sample of output e0: e0 - ax*cn - xs
};

/// Bytes per tile row for a window of kw (anchor ax) on cn channels: the widest over every
/// block position (the start rounds down to 16, the end up).
__host__ __device__ inline int byte_tile_width(int kw, int cn) {
  return (kByteTileBW + (kw - 1) * cn + 15 + 15) / 16 * 16;
}

__device__ __forceinline__ long long floor16(long long v) {
  return v >= 0 ? v / 16 * 16 : -((-v + 15) / 16 * 16);
}

__device__ __forceinline__ ByteTile byte_tile(long long e0, long long y0, int kw, int kh, int ax,
                                              int ay, int cn, int bh) {
  ByteTile t;
  t.e0 = e0;
  t.y0 = y0;
  t.xs = floor16(e0 - (long long)ax * cn);
  t.tw = byte_tile_width(kw, cn);
  t.th = bh + kh - 1;
  t.off = int(e0 - (long long)ax * cn - t.xs);
  (void)ay;
  return t;
}

/// The items (r, w), r < rows, w < n, of a block-wide pass, thread by thread in steps of
/// blockDim.x without a division per item: `for (Walk2D i(n); i.r < rows; i.next()) ...`.
struct Walk2D {
  int r, w, n, dr, dw;
  __device__ __forceinline__ explicit Walk2D(int cols) : n(cols) {
    r = int(threadIdx.x) / cols;
    w = int(threadIdx.x) - r * cols;
    dr = int(blockDim.x) / cols;
    dw = int(blockDim.x) - dr * cols;
  }
  __device__ __forceinline__ void next() {
    r += dr;
    w += dw;
    if (w >= n) {
      w -= n;
      ++r;
    }
  }
};

/// detail::border_index without its 64-bit remainders where p is less than one image length
/// outside (every tile sample of a window narrower than the image): one reflection or shift,
/// checked, else the general rule.
__device__ __forceinline__ long long near_border_index(long long p, long long len, BorderType t) {
  if (p >= 0 && p < len) return p;
  long long q = -1;
  switch (t) {
    case BorderType::replicate:
      return p < 0 ? 0 : len - 1;
    case BorderType::reflect:
      q = p < 0 ? -p - 1 : 2 * len - 1 - p;
      break;
    case BorderType::reflect101:
      q = len == 1 ? 0 : p < 0 ? -p : 2 * len - 2 - p;
      break;
    case BorderType::wrap:
      q = p < 0 ? p + len : p - len;
      break;
    case BorderType::constant:
      return -1;
  }
  return q >= 0 && q < len ? q : detail::border_index(p, len, t);
}

/// Loads the tile (t.th rows of t.tw bytes, pitch t.tw) into `tile`: input row y0 - ay + r,
/// samples xs + i, by the border rule (x and y independently). 16-byte loads for chunks
/// inside the row when `aligned` (image start and stride multiples of 16). Every thread of
/// the block calls it; syncs at the end.
__device__ __forceinline__ void load_byte_tile(unsigned char* tile, const ByteTile& t, int ay,
                                               const DevView<std::uint8_t>& v,
                                               const DevBorder<std::uint8_t>& b, bool aligned) {
  const int chunks = t.tw / 16;
  const long long wc = (long long)v.w * v.cn;
  for (int it = threadIdx.x; it < chunks * t.th; it += blockDim.x) {
    const int r = it / chunks, c = it - r * chunks;
    const long long sy = near_border_index(t.y0 - ay + r, v.h, b.type);
    const long long g = t.xs + 16LL * c;
    unsigned char* out = tile + r * t.tw + 16 * c;
    if (sy >= 0 && aligned && g >= 0 && g + 16 <= wc) {
      *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(v.row(sy) + g);
      continue;
    }
    for (int i = 0; i < 16; ++i) {
      const long long e = g + i;
      unsigned char val = b.value;
      if (sy >= 0) {
        if (e >= 0 && e < wc) {
          val = v.row(sy)[e];
        } else {
          // Pixel and channel of sample e, outside the row by d samples (d < 2^31: the
          // window's reach plus a 16-byte chunk), in 32-bit arithmetic.
          long long px;
          int ch;
          if (e < 0) {
            const int d = int(-e), q = (d + v.cn - 1) / v.cn;  // px = -q
            px = -q;
            ch = q * v.cn - d;
          } else {
            const int d = int(e - wc), q = d / v.cn;
            px = v.w + q;
            ch = d - q * v.cn;
          }
          const long long sx = near_border_index(px, v.w, b.type);
          if (sx >= 0) val = v.row(sy)[sx * v.cn + ch];
        }
      }
      out[i] = val;
    }
  }
  __syncthreads();
}

/// Row byte e of source row sy (sy < 0: the constant border's row) by the border rule applied
/// to the byte's pixel (its channel stays): the edge words of load_word_tile_u8.
template <int CN>
__device__ __forceinline__ unsigned char border_row_byte(const DevView<std::uint8_t>& v,
                                                         const DevBorder<std::uint8_t>& b,
                                                         long long sy, long long e) {
  long long sx;
  if constexpr (CN == 1) {
    sx = near_border_index(e, v.w, b.type);
  } else {
    long long px;
    int ch;
    u8_3x3_cn::pixel_of_byte(e, CN, px, ch);
    const long long sp = near_border_index(px, v.w, b.type);
    sx = sp < 0 ? -1 : sp * CN + ch;
  }
  return sy >= 0 && sx >= 0 ? v.row(sy)[sx] : b.value;
}

/// Loads a u8 x CN word tile: `rows` rows (kRows when that is not 0) of kWords 32-bit words
/// (pitch kPitch >= kWords words: u8_3x3.cuh loads the 34 words its windows read into rows
/// of its 40-word chunk tile), word (r, wd) = row bytes x0 + 4 wd .. + 3 (channels interleaved) of
/// row y0 + r by the border rule applied to the pixel of each byte (x0 a multiple of 4), by
/// kThreads threads (flat thread index `tid`). Word loads when the whole tile lies inside an
/// image with 4-byte aligned rows (`aligned`): one flat loop, all loads independent (a 2-D
/// loop gave two threads of each warp twice the loads: median 3x3 117 -> 164 us at 8K).
/// Otherwise (the tiles on the image's edges) still a word load for each word inside the
/// image in x, on its row mapped by the border rule, and 4 independent byte loads for the
/// words that straddle or leave the row (a byte at a time through a shared store made one
/// load round a byte: ~35 serial rounds a thread on the edge tiles, which at 1920x1080 are a
/// quarter of the blocks and set the time). Syncs at the end.
template <int kWords, int kThreads, int CN = 1, int kRows = 0, int kPitch = kWords>
__device__ __forceinline__ void load_word_tile_u8(unsigned* tile, int rows, int tid,
                                                  const DevView<std::uint8_t>& v,
                                                  const DevBorder<std::uint8_t>& b, long long x0,
                                                  long long y0, bool aligned) {
  const long long wc = (long long)v.w * CN;  // bytes a row
  const bool inside = aligned && x0 >= 0 && x0 + 4 * kWords <= wc && y0 >= 0 && y0 + rows <= v.h;
  if constexpr (kRows > 0) {
    if (inside) {
      // kRows (= rows) known at compile time: every word of the thread loaded before the first
      // is stored, so a tile costs one load round trip (the loop below, unrolled by 4, made
      // three for the 66 x 34-word tiles of the tall 3x3 shape: 8.8 words a thread).
      // tid < kThreads: the first kFull words of every thread exist, the last only for some.
      constexpr int kTotal = kRows * kWords, kFull = kTotal / kThreads;
      constexpr bool kTail = kTotal % kThreads != 0;
      const unsigned char* base = v.data + y0 * v.stride + x0;
      unsigned w[kFull + 1];
#pragma unroll
      for (int k = 0; k < kFull + int(kTail); ++k) {
        const int i = tid + k * kThreads, r = i / kWords, wd = i - r * kWords;
        if (k < kFull || i < kTotal)
          w[k] = reinterpret_cast<const unsigned*>(base + (long long)r * v.stride)[wd];
      }
#pragma unroll
      for (int k = 0; k < kFull + int(kTail); ++k) {
        const int i = tid + k * kThreads, r = i / kWords, wd = i - r * kWords;
        if (k < kFull || i < kTotal) tile[kPitch == kWords ? i : r * kPitch + wd] = w[k];
      }
      __syncthreads();  // the block agrees on `inside`
      return;
    }
  }
  if (inside) {
    // kWords is a constant: the division is a multiply.
    for (int i = tid; i < rows * kWords; i += kThreads) {
      const int r = i / kWords, wd = i - r * kWords;
      tile[kPitch == kWords ? i : r * kPitch + wd] =
          reinterpret_cast<const unsigned*>(v.row(y0 + r) + x0)[wd];
    }
  } else {
    // One word an iteration, its word load or 4 byte loads in flight together: a few load
    // rounds a thread (<= 3 words in the short 3x3 shape, <= 9 in the tall one) where bytes
    // stored to shared memory one by one made ~35. Not unrolled: the edge path stays small.
#pragma unroll 1
    for (int i = tid; i < rows * kWords; i += kThreads) {
      const int r = i / kWords, wd = i - r * kWords;
      const long long sy = near_border_index(y0 + r, v.h, b.type);
      const long long x = x0 + 4 * wd;
      unsigned w;
      if (sy >= 0 && aligned && x >= 0 && x + 4 <= wc) {
        w = *reinterpret_cast<const unsigned*>(v.row(sy) + x);
      } else {
        unsigned char by[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) by[j] = border_row_byte<CN>(v, b, sy, x + j);
        w = unsigned(by[0]) | unsigned(by[1]) << 8 | unsigned(by[2]) << 16 | unsigned(by[3]) << 24;
      }
      tile[kPitch == kWords ? i : r * kPitch + wd] = w;
    }
  }
  __syncthreads();
}

/// 16 bytes global -> shared without registers (.cg: through L2 only; both addresses 16-byte
/// aligned), completed by cp_async_wait_all: a whole tile's loads in flight at once.
__device__ __forceinline__ void cp_async16(void* shared_dst, const void* global_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   unsigned(__cvta_generic_to_shared(shared_dst))),
               "l"(global_src)
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/// Output staging: a block's output rows are written to shared memory (rows of kStageWords
/// words: an odd pitch, so that threads on different rows hit different banks) and then to
/// the image by consecutive threads along each row, 16 bytes each: whole 32-byte sectors per
/// warp instead of pieces of many rows (which cost twice the L2 traffic in stores).
constexpr int kStageWords = kByteTileBW / 4 + 1;

/// Writes staged rows 0 .. rows - 1 to output rows y0 + r, samples e0 .. (clipped to the
/// row). The caller syncs the block before (the stage is complete) and after (before
/// reusing it).
__device__ __forceinline__ void store_staged(const unsigned* stage, int rows,
                                             const DevView<std::uint8_t>& dst, long long e0,
                                             long long y0, bool aligned) {
  constexpr int kChunks = kByteTileBW / 16;
  const long long wc = (long long)dst.w * dst.cn;
  for (int it = threadIdx.x; it < rows * kChunks; it += blockDim.x) {
    const int r = it / kChunks, c = it % kChunks;
    const long long eb = e0 + 16LL * c;
    if (eb >= wc) continue;
    const unsigned* s = stage + r * kStageWords + 4 * c;
    const uint4 v = make_uint4(s[0], s[1], s[2], s[3]);
    std::uint8_t* out = dst.row(y0 + r) + eb;
    if (aligned && eb + 16 <= wc) {
      *reinterpret_cast<uint4*>(out) = v;
    } else {
      const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int e = 0; e < 16; ++e)
        if (eb + e < wc) out[e] = std::uint8_t(w[e / 4] >> (8 * (e % 4)));
    }
  }
}

}  // namespace pixflow::cuda
