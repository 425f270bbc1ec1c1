// dilate / erode on one u8 channel in 256-byte-wide tiles: the tile loader that morphology.cu's
// morphk_u8_kernel (5x5, 7x7 on sources whose rows are not 4-byte aligned) shares with the 15x15
// kernel of the tall grid (morphv_u8_kernel, here with its launch, run by morphology.cu's
// "morph_pass" and by bench/micro/morphv_shapes.cu).
#pragma once

#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/morph_k_u8_packed.hpp"
#include "src/backends/cuda/u8_3x3.cuh"

namespace pixflow::cuda {
namespace {

constexpr int kMkBW = kMorphKTX * kMorphKPX;       // 256 output bytes a block row
constexpr int kMkTileWords = (kMkBW + 32) / 4;     // 72: row bytes bx0 - 16 .. bx0 + 271
constexpr int kMkChunks = kMkTileWords / 4;        // 18 chunks of 16 bytes
constexpr int kMkOff = 3;                          // word 3 = row bytes bx0 - 4 .. bx0 - 1
constexpr int kMkThreads = kMorphKTX * kMorphKTY;  // 256
template <int R>
constexpr int kMkBH = R* kMorphKTY;
template <int R, int K>
constexpr int kMkTileH = kMkBH<R> + K - 1;

// Tile word (r, w) = row bytes bx0 - 16 + 4w .. + 3 of row by0 - K / 2 + r by the border
// rule. Interior tiles of 16-byte aligned sources (morphk_tile_chunked): 16-byte chunks, chunk
// i = tile row i / kMkChunks, 16 bytes at (i % kMkChunks) * 16, addresses as 32-bit offsets.
// Other tiles: load_word_tile_u8 over the words the windows read (word loads inside the image,
// the border rule per byte on the edges).
template <int R, int K>
__device__ __forceinline__ bool morphk_tile_chunked(const DevView<std::uint8_t>& src, long long bx0,
                                                    long long by0, bool aligned16) {
  constexpr int kTH = kMkTileH<R, K>;
  constexpr long long kMaxStride = (0x7fffffffLL - 4 * kMkTileWords) / kTH;
  const long long x0 = bx0 - 16, y0 = by0 - K / 2;
  return aligned16 && x0 >= 0 && x0 + 4 * kMkTileWords <= src.w && y0 >= 0 && y0 + kTH <= src.h &&
         src.stride <= kMaxStride;
}
// The chunks of thread `tid` of a chunked tile: copy(k, i, off) for its k-th chunk, flat chunk
// index i, at byte offset `off` from the tile's first source byte.
template <int R, int K, class Copy>
__device__ __forceinline__ void morphk_tile_chunks(int tid, int stride, Copy&& copy) {
  constexpr int kTotal = kMkTileH<R, K> * kMkChunks, kFull = kTotal / kMkThreads;
  constexpr bool kTail = kTotal % kMkThreads != 0;
#pragma unroll
  for (int k = 0; k < kFull + int(kTail); ++k) {
    const int i = tid + k * kMkThreads, r = i / kMkChunks, q = i - r * kMkChunks;
    if (k < kFull || i < kTotal) copy(k, i, r * stride + 16 * q);
  }
}
template <int R, int K>
__device__ __forceinline__ const unsigned char* morphk_tile_base(const DevView<std::uint8_t>& src,
                                                                 long long bx0, long long by0) {
  return src.data + (by0 - K / 2) * src.stride + (bx0 - 16);
}

// The whole tile (r, w) above, by this thread's share of the block; syncs at the end. Chunked
// tiles by cp.async (every chunk of the thread in flight at once, no registers, no shared store
// instructions): measured at 15x15 (bench/micro/morphv_shapes.cu, session 20), 8192^2 86 ->
// 71.8 us against the chunks loaded into registers and then stored.
template <int R, int K>
__device__ __forceinline__ void morphk_load_tile(unsigned* tile, const DevView<std::uint8_t>& src,
                                                 const DevBorder<std::uint8_t>& border,
                                                 long long bx0, long long by0, bool src_aligned,
                                                 bool aligned16) {
  constexpr int kTH = kMkTileH<R, K>;
  const int tid = u8_3x3::tid_again();  // 32 threads a row, as this kernel's
  if (morphk_tile_chunked<R, K>(src, bx0, by0, aligned16)) {
    const unsigned char* base = morphk_tile_base<R, K>(src, bx0, by0);
    uint4* t = reinterpret_cast<uint4*>(tile);
    morphk_tile_chunks<R, K>(tid, int(src.stride),
                             [&](int, int i, int off) { cp_async16(t + i, base + off); });
    cp_async_wait_all();
    __syncthreads();  // the block agrees on the test above
    return;
  }
  // The words the windows read: 1 a side for K <= 9 (bytes x0 - 4 ..), 2 for K <= 17.
  constexpr int kSide = K <= 9 ? 1 : 2;
  static_assert(K <= 17, "morphk_load_tile: the window reaches at most 8 bytes a side");
  load_word_tile_u8<kMkBW / 4 + 2 * kSide, kMkThreads, 1, 0, kMkTileWords>(
      tile + 4 - kSide, kTH, tid, src, border, bx0 - 4 * kSide, by0 - K / 2, src_aligned);
}

// u8, one channel, centred 15x15 windows on the tall grid: morphv_u8_kernel. The van Herk kernel
// (morphology.cu, morph_u8c1_kernel<kMax, 15, 15>) was measured issue-bound (ncu, session 16: 113
// us at 8192^2, 0.77 warp instructions issued a scheduler a cycle, 4 barriers a tile, a vertical
// pass of LDS.U16 + PRMT a sample pair on items of 8 outputs, the horizontal one through a
// transposed buffer and a stage). This one: morphk's tile (288 bytes x (64 + K - 1) rows, 16-byte
// chunks with every load of a thread in flight, the border rule on edge tiles), then two passes of
// van Herk on items of 16 outputs (morph_k::vh16: one suffix and one prefix block, no boundary
// inside an item) and two barriers a tile:
// - vertical: 68 column quads (bytes bx0 - 8 .. bx0 + 263) x 4 groups of 16 rows = 272 items; an
//   item reads its quad's word in 30 rows (LDS, conflict-free: a warp's lanes are consecutive
//   quads), splits each into two lane streams by LOP3 (morph_k::vquad) and writes its 16 output
//   words into `mid` (the vertical result, rows of 68 words);
// - horizontal: 64 rows x 8 segment pairs = 512 items, two a thread; an item reads 2 x 32 bytes of
//   a mid row (4 LDS.128; a quarter-warp's 8 lanes are 8 rows of one segment: rows 68 words
//   apart, 4 banks, conflict-free), outputs x0 .. x0 + 15 in lane 0 and x0 + 128 .. x0 + 143 in
//   lane 1 (morph_k::hseg), and stores each 16-byte half straight to the image (evict-first; a
//   warp's first store covers 64 bytes of each of 8 rows). Blocks not wholly inside the image or
//   with destinations not 16-byte aligned store bytes under predicates.
// The next tile's loads only overwrite `tile`, which no thread reads after the barrier between
// the passes, and its barrier orders this tile's horizontal reads of `mid` before the next
// vertical writes: no trailing barrier. One tile a block: blocks that walk tiles (a wave of
// kSmCount x kMorphVMinBlocks, the next tile copied by cp.async during the horizontal pass)
// measured slower (bench/micro/morphv_shapes.cu, session 20: 8192^2 78.8 us against 71.8).
constexpr int kMvBH = kMkBH<kMorphVRows>;  // 64 output rows a block
static_assert(kMvBH == morph_k::kVBH && kMkBW == morph_k::kVBW, "morphv: the schedule's block");
static_assert(morph_k::kHItems == 2 * kMkThreads, "morphv: two horizontal items a thread");
static_assert(kMkTileWords >= morph_k::kVQuadWord + morph_k::kVQuads, "morphv: quads in the tile");

template <bool kMax, int K>
__global__ void __launch_bounds__(kMkThreads, kMorphVMinBlocks)
    morphv_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                     DevBorder<std::uint8_t> border, bool src_aligned, bool dst_aligned16,
                     int rows_of_blocks) {
  __shared__ __align__(16) unsigned tile[kMkTileH<kMorphVRows, K>][kMkTileWords];
  __shared__ __align__(16) unsigned mid[kMvBH][morph_k::kVQuads];
  const long long bx0 = (long long)blockIdx.x * kMkBW;
  const bool aligned16 = src_aligned && u8_3x3::rows_aligned16(src);
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kMvBH;
    morphk_load_tile<kMorphVRows, K>(&tile[0][0], src, border, bx0, by0, src_aligned, aligned16);
    const int tid = u8_3x3::tid_again();
    // Vertical: quad q, output rows 16 g .. 16 g + 15 (tile rows from 16 g).
    for (int it = tid; it < morph_k::kVItems; it += kMkThreads) {
      int g, q;
      morph_k::v_item(it, g, q);
      const unsigned* col = &tile[16 * g][q + morph_k::kVQuadWord];
      unsigned* out = &mid[16 * g][q];
      morph_k::vquad<K, kMax>([&](int j) { return col[j * kMkTileWords]; },
                              [&](int i, unsigned w) { out[i * morph_k::kVQuads] = w; });
    }
    __syncthreads();
    // Horizontal: row r, segment pair s (outputs bx0 + 16 s .., bx0 + 128 + 16 s ..).
    const bool inside = dst_aligned16 && bx0 + kMkBW <= dst.w && by0 + kMvBH <= dst.h;
#pragma unroll 1
    for (int k = 0; k < 2; ++k) {
      int r, s;
      morph_k::h_item(tid + k * kMkThreads, r, s);
      const uint4* m = reinterpret_cast<const uint4*>(&mid[r][4 * s]);
      const uint4 a0 = m[0], a1 = m[1], b0 = m[8], b1 = m[9];
      const unsigned a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const unsigned b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      unsigned oa[4], ob[4];
      morph_k::hseg<K, kMax>(a, b, oa, ob);
      const long long y = by0 + r, x = bx0 + 16 * s;
      unsigned char* d = dst.data + y * dst.stride + x;
      if (inside) {
        if constexpr (u8_3x3::kPackedEvictFirst) {
          __stcs(reinterpret_cast<uint4*>(d), make_uint4(oa[0], oa[1], oa[2], oa[3]));
          __stcs(reinterpret_cast<uint4*>(d + 128), make_uint4(ob[0], ob[1], ob[2], ob[3]));
        } else {
          *reinterpret_cast<uint4*>(d) = make_uint4(oa[0], oa[1], oa[2], oa[3]);
          *reinterpret_cast<uint4*>(d + 128) = make_uint4(ob[0], ob[1], ob[2], ob[3]);
        }
      } else if (y < dst.h) {
        const long long n = dst.w - x;  // bytes of the row from x (the b half: n - 128)
#pragma unroll
        for (int e = 0; e < 16; ++e) {
          if (e < n) d[e] = std::uint8_t(oa[e / 4] >> (8 * (e % 4)));
          if (e + 128 < n) d[e + 128] = std::uint8_t(ob[e / 4] >> (8 * (e % 4)));
        }
      }
    }
  }
}

// The windows morphv_u8_kernel takes: u8 x 1, 15x15 centred, where the tall grid fills the GPU
// (launch.cuh, tall_blocks_fill); the rest: the van Herk kernel (morphology.cu).
template <bool kMax>
bool try_morphv_u8c1(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                     const Border& border, cudaStream_t st) {
  if (s.channels() != 1 || w.kw != 15 || w.kh != 15 || w.ax != 7 || w.ay != 7 ||
      d.width() > 0x7fffff00LL)
    return false;
  const long long bx = (d.width() + kMkBW - 1) / kMkBW;
  if (!tall_blocks_fill(bx, d.height(), kMvBH)) return false;
  morphv_u8_kernel<kMax, 15>
      <<<grid_2d(d.width(), d.height(), kMkBW, kMvBH), dim3(kMorphKTX, kMorphKTY), 0, st>>>(
          dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border),
          rows_aligned(s, 4), rows_aligned(d, 16), blocks_y(d.height(), kMvBH));
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

}  // namespace
}  // namespace pixflow::cuda
