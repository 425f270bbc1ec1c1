// "morph_pass" (one dilate or erode) on CUDA. u8: 3x3 centred on one channel through the
// packed kernel (u8_3x3.cuh); 5x5 and 7x7 centred on one channel in registers, in the rows8 shape
// where the source and destination rows are 4-byte aligned (morphk_rows8_kernel), else in tiles
// (morphk_u8_kernel; both morph_k_u8_packed.hpp's arithmetic); 15x15 centred on one channel where
// the tall grid fills the GPU by van Herk on items of 16 outputs, vertical then horizontal
// (morphv_u8.cuh, morphv_u8_kernel; same arithmetic header); other windows on one channel by van
// Herk over 16-bit lanes (morph_u8c1_kernel), on 2-4 channels by doubling levels over byte tiles
// (morph_u8_kernel); f32 3x3 centred on one channel through f32_3x3.cuh; u16, other f32 (and
// windows whose tile does not fit): the fused separable kernel with max / min (any size and
// anchor). Iterations and the composites (open, close, ...) are built by core from this pass and
// "sub", except "morph_composite": 3x3 on one u8 channel in one kernel (comp3_u8.cuh).
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/comp3_u8.cuh"
#include "src/backends/cuda/f32_3x3.cuh"
#include "src/backends/cuda/morph_k_u8_packed.hpp"
#include "src/backends/cuda/morphk_rows8.cuh"
#include "src/backends/cuda/morphv_u8.cuh"
#include "src/backends/cuda/u8_3x3.cuh"
#include "src/base/backend.hpp"
#include "src/base/numeric.hpp"
#include "src/base/passes.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

template <class T>
__device__ __forceinline__ T lowest();
template <>
__device__ __forceinline__ std::uint8_t lowest() {
  return 0;
}
template <>
__device__ __forceinline__ std::uint16_t lowest() {
  return 0;
}
template <class T>
__device__ __forceinline__ T highest();
template <>
__device__ __forceinline__ std::uint8_t highest() {
  return 255;
}
template <>
__device__ __forceinline__ std::uint16_t highest() {
  return 65535;
}

template <class T, bool kMax>
struct MorphPolicy {
  using Acc = T;
  static constexpr bool kVerticalFirst = false;
  __device__ T h_init() const { return kMax ? lowest<T>() : highest<T>(); }
  __device__ T h(T a, T v, int) const { return kMax ? (v > a ? v : a) : (v < a ? v : a); }
  __device__ T v_init() const { return h_init(); }
  __device__ T v(T a, T v, int k) const { return h(a, v, k); }
  __device__ T out(T a) const { return a; }
};

// f32 in totalOrder (detail::order_key, as the reference): each sample becomes its signed
// key once, in the horizontal pass; the extremes are integer max / min (one IMNMX), the
// vertical pass works on keys, and the output turns the key back into the float's bits.
template <bool kMax>
struct MorphPolicy<float, kMax> {
  using Acc = std::int32_t;
  static constexpr bool kVerticalFirst = false;
  __device__ Acc h_init() const { return kMax ? INT32_MIN : INT32_MAX; }
  __device__ Acc h(Acc a, float v, int) const {
    const Acc k = detail::order_key(v);
    return kMax ? max(a, k) : min(a, k);
  }
  __device__ Acc v_init() const { return h_init(); }
  __device__ Acc v(Acc a, Acc b, int) const { return kMax ? max(a, b) : min(a, b); }
  __device__ float out(Acc a) const { return detail::from_order_key(a); }
};

// u8, any window and anchor, 1-4 channels: byte tiles (common/byte_tile.cuh) and doubling.
// Vertical: X_1 = the tile, X_2m(r) = op(X_m(r), X_m(r + m)) up to the largest power of two
// `top` <= kh, then R(r) = op(X_top(r), X_top(r + kh - top)) (the two cover rows r .. r +
// kh - 1); horizontally the same along the bytes of a row with steps of m*cn bytes. Every
// level is one pass of all threads over 4-byte words (min/max of four bytes at once)
// between two shared buffers, so a window costs about 2 log2(k) + 2 word operations per
// four samples, whatever the channel count; the byte-shifted word of a horizontal step is a
// funnel shift of two neighbours.
__host__ __device__ inline std::size_t morph_u8_buffer(int kw, int kh, int cn, int bh) {
  return (std::size_t(byte_tile_width(kw, cn)) * (bh + kh - 1) + 16 + 15) / 16 * 16;
}
inline std::size_t morph_u8_smem(int kw, int kh, int cn, int bh) {
  return 2 * morph_u8_buffer(kw, kh, cn, bh);
}

template <bool kMax>
__device__ __forceinline__ unsigned op4(unsigned a, unsigned b) {
  return kMax ? __vmaxu4(a, b) : __vminu4(a, b);
}
// The 4 bytes of a word array starting at byte b.
__device__ __forceinline__ unsigned word_at(const unsigned* w, int b) {
  return __funnelshift_r(w[b >> 2], w[(b >> 2) + 1], (b & 3) * 8);
}

struct MorphU8 {
  int kw, kh, ax, ay;
};

template <int CN, bool kMax>
__global__ void __launch_bounds__(kByteTileThreads)
    morph_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                    DevBorder<std::uint8_t> border, MorphU8 p, int bh, int rows_of_blocks,
                    bool src_aligned, bool dst_aligned) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tw = byte_tile_width(p.kw, CN), th = bh + p.kh - 1, nw = tw / 4;
  const std::size_t buf = morph_u8_buffer(p.kw, p.kh, CN, bh);
  unsigned* const A = reinterpret_cast<unsigned*>(smem_raw);
  unsigned* const B = reinterpret_cast<unsigned*>(smem_raw + buf);
  const long long wc = (long long)dst.w * CN;
  const long long e0 = (long long)blockIdx.x * kByteTileBW;
  int topy = 1, topx = 1;
  while (2 * topy <= p.kh) topy *= 2;
  while (2 * topx <= p.kw) topx *= 2;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * bh;
    const ByteTile t = byte_tile(e0, y0, p.kw, p.kh, p.ax, p.ay, CN, bh);
    load_byte_tile(reinterpret_cast<unsigned char*>(A), t, p.ay, src, border, src_aligned);
    const int rows = int(min((long long)bh, (long long)dst.h - y0));
    unsigned *cur = A, *oth = B;
    // Vertical levels: X_m has `valid` rows.
    int valid = th;
    for (int m = 1; m < topy; m *= 2) {
      const int nv = valid - m;
      const int d = m * nw;
#pragma unroll 4
      for (int it = threadIdx.x; it < nv * nw; it += blockDim.x)
        oth[it] = op4<kMax>(cur[it], cur[it + d]);
      __syncthreads();
      unsigned* x = cur;
      cur = oth;
      oth = x;
      valid = nv;
    }
    {
      const int d = (p.kh - topy) * nw;
      for (int it = threadIdx.x; it < rows * nw; it += blockDim.x)
        oth[it] = op4<kMax>(cur[it], cur[it + d]);
      __syncthreads();
      unsigned* x = cur;
      cur = oth;
      oth = x;
    }
    // Horizontal levels on the `rows` rows of R: X_m has `vb` valid bytes per row.
    int vb = tw;
    for (int m = 1; m < topx; m *= 2) {
      const int sh = m * CN, nvb = vb - sh, nwv = (nvb + 3) / 4;
      for (Walk2D i(nwv); i.r < rows; i.next()) {
        const unsigned* row = cur + i.r * nw;
        oth[i.r * nw + i.w] = op4<kMax>(row[i.w], word_at(row, 4 * i.w + sh));
      }
      __syncthreads();
      unsigned* x = cur;
      cur = oth;
      oth = x;
      vb = nvb;
    }
    // Outputs: 16 bytes per thread, op(X_top(off + e), X_top(off + e + (kw - topx) cn)).
    constexpr int kChunks = kByteTileBW / 16;
    const int d = (p.kw - topx) * CN;
    for (int it = threadIdx.x; it < rows * kChunks; it += blockDim.x) {
      const int r = it / kChunks, c = it - r * kChunks;
      const long long eb = e0 + 16LL * c;
      if (eb >= wc) continue;
      const unsigned* row = cur + r * nw;
      unsigned o[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int b = t.off + 16 * c + 4 * i;
        o[i] = op4<kMax>(word_at(row, b), word_at(row, b + d));
      }
      std::uint8_t* out = dst.row(y0 + r) + eb;
      if (dst_aligned && eb + 16 <= wc) {
        *reinterpret_cast<uint4*>(out) = make_uint4(o[0], o[1], o[2], o[3]);
      } else {
#pragma unroll
        for (int e = 0; e < 16; ++e)  // unrolled: o[] stays in registers
          if (eb + e < wc) out[e] = std::uint8_t(o[e / 4] >> (8 * (e % 4)));
      }
    }
    __syncthreads();  // the next tile overwrites A
  }
}

// u8, one channel: van Herk / Gil-Werman on blocks of kVhR outputs, in registers, over
// 16-bit lanes (two samples per word: one VIMNMX(3).U16x2 per pair, where a byte-lane
// min/max of four is emulated in many instructions). A block: 256 columns x 64 rows.
// - Vertical: a thread takes two neighbouring columns (one u16x2 word per row) and kVhR
//   output rows; `sliding` gives the kVhR windows from kVhR + kh - 1 rows: for kh >= kVhR,
//   op(suffixes of the first kVhR - 1 rows, the kh - kVhR + 1 rows every window shares,
//   prefixes of the last rows), about kh + 2 kVhR operations for kVhR outputs; for kh <
//   kVhR directly. The results go to shared memory transposed: word (column s, row pair
//   rp) = (row 2rp, row 2rp + 1), so that
// - Horizontal is the same `sliding` down the columns of the transposed rows: a warp's
//   lanes are the 32 row pairs of a block (32 banks), a thread kVhR neighbouring outputs of
//   two rows, stored as two 8-byte runs.
// The transposed rows have 33 words (odd): a warp's stores for 32 column pairs fall in 16
// banks (2-way), its loads (32 row pairs of one column) in 32.
constexpr int kVhR = 8;
constexpr int kVhBH = 64;  // 32 row pairs
// Small images (launch.cuh, tall_blocks_fill) take blocks of 32 rows (16 row pairs: a
// warp's lanes then cover two runs of outputs), half the items a thread of the 64-row
// block's passes: 1920x1080 has 8 x 34 blocks instead of 8 x 17 (~1 a SM).
constexpr int kVhBHShort = 32;
constexpr int kVtPitch = kVhBH / 2 + 1;  // both heights

template <bool kMax>
__device__ __forceinline__ unsigned op2(unsigned a, unsigned b) {
  return kMax ? __vmaxu2(a, b) : __vminu2(a, b);
}
template <bool kMax>
__device__ __forceinline__ unsigned op3(unsigned a, unsigned b, unsigned c) {
  return kMax ? __vimax3_u16x2(a, b, c) : __vimin3_u16x2(a, b, c);
}

// out[i] = op over in(i) .. in(i + k - 1), i < kVhR, where in(j) = ld(j), j < kVhR + k - 1.
// K > 0: k = K at compile time (every loop unrolled, loads at constant offsets); 0: run time.
template <bool kMax, int K, class Ld>
__device__ __forceinline__ void sliding(const Ld& ld, int k_rt, unsigned (&out)[kVhR]) {
  const int k = K > 0 ? K : k_rt;
  if constexpr (K > 0 && K < kVhR) {
    // Directly, three-input operations.
    unsigned a[kVhR + K - 1];
#pragma unroll
    for (int j = 0; j < kVhR + K - 1; ++j) a[j] = ld(j);
#pragma unroll
    for (int i = 0; i < kVhR; ++i) {
      unsigned m = a[i];
      int j = 1;
#pragma unroll
      for (; j + 1 < K; j += 2) m = op3<kMax>(m, a[i + j], a[i + j + 1]);
      if (j < K) m = op2<kMax>(m, a[i + j]);
      out[i] = m;
    }
  } else if (k >= kVhR) {
    unsigned c = ld(kVhR - 1);  // rows kVhR - 1 .. k - 1: in every window
#pragma unroll(K > 0 ? 1 : 4)
    for (int j = kVhR; j < k; ++j) c = op2<kMax>(c, ld(j));
    unsigned suf[kVhR - 1];  // suf[i] = op over in(i .. kVhR - 2)
    suf[kVhR - 2] = ld(kVhR - 2);
#pragma unroll
    for (int i = kVhR - 3; i >= 0; --i) suf[i] = op2<kMax>(ld(i), suf[i + 1]);
    unsigned pre = ld(k);  // op over in(k .. k + i - 1), for i = 1, 2, ...
    out[0] = op2<kMax>(suf[0], c);
#pragma unroll
    for (int i = 1; i < kVhR - 1; ++i) {
      out[i] = op3<kMax>(suf[i], c, pre);
      pre = op2<kMax>(pre, ld(k + i));
    }
    out[kVhR - 1] = op2<kMax>(c, pre);
  } else {  // run-time k < kVhR (uncommon windows): guarded
    unsigned a[2 * kVhR - 1];
#pragma unroll
    for (int j = 0; j < 2 * kVhR - 1; ++j) a[j] = j < kVhR + k - 1 ? ld(j) : 0u;
#pragma unroll
    for (int i = 0; i < kVhR; ++i) {
      unsigned m = a[i];
#pragma unroll
      for (int j = 1; j < kVhR; ++j)
        if (j < k) m = op2<kMax>(m, a[i + j]);
      out[i] = m;
    }
  }
}

__host__ __device__ inline std::size_t vh_tile_bytes(int kw, int kh, int bh) {
  return (std::size_t(byte_tile_width(kw, 1)) * (bh + kh - 1) + 15) / 16 * 16;
}
inline std::size_t vh_smem(int kw, int kh, int bh) {
  return vh_tile_bytes(kw, kh, bh) + std::size_t(byte_tile_width(kw, 1)) * kVtPitch * 4;
}

// The van Herk kernel's interior tiles and blocks (all but the image's edge blocks): the
// tile's 16-byte chunks with 32-bit offsets from its first byte (load_byte_tile runs the border
// index and 64-bit address arithmetic for every chunk: ~55 instructions a chunk in the SASS of
// the 5x5 kernel, 2.4-2.7 chunks a thread), all chunks of a thread in flight at once. Returns
// false, having loaded nothing, for tiles that reach outside the image (the test is the
// block's: every thread takes the same branch). Syncs at the end when it loads.
__device__ __forceinline__ bool vh_load_interior(unsigned char* tile, const ByteTile& t, int ay,
                                                 const DevView<std::uint8_t>& v, bool aligned) {
  // t.th <= 64 + 255 - 1 < 512 rows and t.tw <= 544 bytes: offsets below 2^31 for this stride
  // (a constant: a run-time division here cost ~25 instructions a tile).
  constexpr long long kMaxStride = (0x7fffffffLL - 1024) / 512;
  const long long y0 = t.y0 - ay;
  if (!aligned || t.xs < 0 || t.xs + t.tw > v.w || y0 < 0 || y0 + t.th > v.h ||
      v.stride > kMaxStride)
    return false;
  const unsigned char* base = v.data + y0 * v.stride + t.xs;
  const int stride = int(v.stride), chunks = t.tw / 16, total = chunks * t.th;
  // cp.async (16 bytes, through L2): every chunk of the thread in flight at once, no
  // registers; a loop of loads and stores put each store (waiting for its load) ahead of the
  // next load in the SASS, one round trip a chunk.
  for (int it = threadIdx.x; it < total; it += blockDim.x) {
    const int r = it / chunks, q = it - r * chunks;
    cp_async16(tile + r * t.tw + 16 * q, base + (r * stride + 16 * q));
  }
  cp_async_wait_all();
  __syncthreads();
  return true;
}

// The stage's rows to the image for a block whose bh x 256 outputs all lie inside it (16-byte
// aligned destination rows): store_staged's loop without its per-chunk 64-bit row address and
// clipping tests (~40 instructions a chunk in the SASS), 32-bit offsets from the block's first
// output byte, evict-first stores as the packed kernels' (kPackedEvictFirst). Returns false for
// the other blocks.
__device__ __forceinline__ bool vh_store_interior(const unsigned* stage, int rows, int bh,
                                                  const DevView<std::uint8_t>& dst, long long e0,
                                                  long long y0, bool aligned) {
  if (!aligned || rows != bh || e0 + kByteTileBW > dst.w ||
      dst.stride > (0x7fffffffLL - kByteTileBW) / bh)
    return false;
  constexpr int kChunks = kByteTileBW / 16;
  unsigned char* base = dst.data + y0 * dst.stride + e0;
  const int stride = int(dst.stride);
  for (int it = threadIdx.x; it < bh * kChunks; it += blockDim.x) {
    const int r = it / kChunks, c = it % kChunks;
    const unsigned* s = stage + r * kStageWords + 4 * c;
    uint4* out = reinterpret_cast<uint4*>(base + (r * stride + 16 * c));
    const uint4 v = make_uint4(s[0], s[1], s[2], s[3]);
    if constexpr (u8_3x3::kPackedEvictFirst)
      __stcs(out, v);
    else
      *out = v;
  }
  return true;
}

template <bool kMax, int KW, int KH>
__global__ void __launch_bounds__(kByteTileThreads)
    morph_u8c1_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                      DevBorder<std::uint8_t> border, MorphU8 p, int bh, int rows_of_blocks,
                      bool src_aligned, bool dst_aligned) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  // bh: kVhBH or kVhBHShort rows, so bh / 2 row pairs = 1 << pair_bits.
  const int pair_bits = bh == kVhBH ? 5 : 4, pairs = 1 << pair_bits;
  if constexpr (KW > 0) p.kw = KW;  // constant tile geometry
  if constexpr (KH > 0) p.kh = KH;
  const int tw = byte_tile_width(p.kw, 1);
  unsigned char* const tile = smem_raw;
  unsigned* const stage = reinterpret_cast<unsigned*>(smem_raw);  // bh rows <= the tile
  unsigned* const vt = reinterpret_cast<unsigned*>(smem_raw + vh_tile_bytes(p.kw, p.kh, bh));
  const long long w = dst.w;
  const long long e0 = (long long)blockIdx.x * kByteTileBW;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * bh;
    const ByteTile t = byte_tile(e0, y0, p.kw, p.kh, p.ax, p.ay, 1, bh);
    if (!vh_load_interior(tile, t, p.ay, src, src_aligned))
      load_byte_tile(tile, t, p.ay, src, border, src_aligned);

    // Vertical: column pair cp (tile columns 2cp, 2cp + 1), output rows 8g .. 8g + 7.
    for (Walk2D i(tw / 2); i.r < bh / kVhR; i.next()) {
      const unsigned char* col = tile + i.r * kVhR * tw + 2 * i.w;
      auto ld = [&](int j) {
        const unsigned x = *reinterpret_cast<const unsigned short*>(col + j * tw);
        return __byte_perm(x, 0, 0x4140);  // bytes b0, b1 -> 16-bit lanes
      };
      unsigned out[kVhR];
      sliding<kMax, KH>(ld, p.kh, out);
      unsigned* v = vt + 2 * i.w * kVtPitch + i.r * (kVhR / 2);
#pragma unroll
      for (int q = 0; q < kVhR / 2; ++q) {
        v[q] = __byte_perm(out[2 * q], out[2 * q + 1], 0x5410);
        v[kVtPitch + q] = __byte_perm(out[2 * q], out[2 * q + 1], 0x7632);
      }
    }
    __syncthreads();

    // Horizontal: row pair rp (a warp's lanes), outputs e0 + 8q .. e0 + 8q + 7.
    for (int it = threadIdx.x; it < pairs * (kByteTileBW / kVhR); it += blockDim.x) {
      const int rp = it & (pairs - 1), q = it >> pair_bits;
      if (e0 + (long long)q * kVhR >= w) continue;
      const unsigned* v = vt + (t.off + q * kVhR) * kVtPitch + rp;
      auto ld = [&](int j) { return v[j * kVtPitch]; };
      unsigned out[kVhR];
      sliding<kMax, KW>(ld, p.kw, out);
      // Word i = (row 2rp, row 2rp + 1) of output eb + i: bytes of each row, in order, into
      // the stage (the tile's space: the tile is no longer read).
      const unsigned t0 = __byte_perm(out[0], out[1], 0x6240),
                     t1 = __byte_perm(out[2], out[3], 0x6240);
      const unsigned t2 = __byte_perm(out[4], out[5], 0x6240),
                     t3 = __byte_perm(out[6], out[7], 0x6240);
      unsigned* st = stage + 2 * rp * kStageWords + 2 * q;
      st[0] = __byte_perm(t0, t1, 0x5410);
      st[1] = __byte_perm(t2, t3, 0x5410);
      st[kStageWords] = __byte_perm(t0, t1, 0x7632);
      st[kStageWords + 1] = __byte_perm(t2, t3, 0x7632);
    }
    __syncthreads();
    const int out_rows = int(min((long long)bh, (long long)dst.h - y0));
    if (!vh_store_interior(stage, out_rows, bh, dst, e0, y0, dst_aligned))
      store_staged(stage, out_rows, dst, e0, y0, dst_aligned);
    __syncthreads();  // the next tile overwrites both buffers
  }
}

template <bool kMax>
bool try_morph_u8c1(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                    const Border& border, cudaStream_t st) {
  if (s.channels() != 1) return false;
  // Block height by the rule of launch.cuh (8192^2: 32 x 128 = 4096 blocks of 64 rows).
  const long long bx = (s.width() + kByteTileBW - 1) / kByteTileBW;
  const int bh = tall_blocks_fill(bx, s.height(), kVhBH) ? kVhBH : kVhBHShort;
  const std::size_t smem = vh_smem(w.kw, w.kh, bh);
  if (smem > kMaxSmem) return false;
  const dim3 grid = grid_2d(s.width(), s.height(), kByteTileBW, bh);
  const int rows = blocks_y(s.height(), bh);
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      PIXFLOW_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    kernel<<<grid, kByteTileThreads, smem, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border),
        MorphU8{w.kw, w.kh, w.ax, w.ay}, bh, rows, rows_aligned(s, 16), rows_aligned(d, 16));
  };
  // The benchmarked square window with every loop unrolled; the rest at run time (5x5 and 7x7
  // centred, the other benchmarked ones, take morphk_u8_kernel: its compiled instances here
  // were dead code).
  if (w.kw == 15 && w.kh == 15)
    launch(morph_u8c1_kernel<kMax, 15, 15>);
  else
    launch(morph_u8c1_kernel<kMax, 0, 0>);
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

// The stores of a thread's R output rows of 8 bytes (row bytes x0 .. x0 + 7 of rows y0 ..),
// clipped to the image: body(put) calls put(i, v) for i = 0 .. R - 1 in order, instantiated
// twice as u8_3x3.cuh's store_rows4: threads whose 8 x R outputs lie inside the image with
// 8-byte aligned destination rows store one uint2 a row (evict-first, kPackedEvictFirst), the
// rest bytes under predicates (so any destination view takes this kernel).
template <int R, class Body>
__device__ __forceinline__ void store_rows8(const DevView<std::uint8_t>& dst, int x0, long long y0,
                                            bool dst_aligned8, Body&& body) {
  unsigned char* d = dst.data + y0 * dst.stride + x0;
  const int rows = int(dst.h - y0);  // y0 < dst.h + R: no overflow
  if (dst_aligned8 && x0 + 7 < dst.w && rows >= R) {
    body([&](int, uint2 v) {
      if constexpr (u8_3x3::kPackedEvictFirst)
        __stcs(reinterpret_cast<uint2*>(d), v);
      else
        *reinterpret_cast<uint2*>(d) = v;
      d += dst.stride;
    });
  } else {
    const int n = dst.w - x0;  // bytes of the 8 inside the row (<= 0: none)
    body([&](int i, uint2 v) {
      if (i < rows) {
#pragma unroll
        for (int e = 0; e < 8; ++e)
          if (e < n) d[e] = std::uint8_t((e < 4 ? v.x : v.y) >> (8 * (e & 3)));
      }
      d += dst.stride;
    });
  }
}

// u8, one channel, small centred square windows (5x5, 7x7): morphk_u8_kernel. The van Herk
// kernel above spends ~630 instructions a thread on 32 outputs at 5x5 (SASS, interior block:
// a tile load with a border index a 16-byte chunk, ~55 instructions each; a vertical pass
// through LDS.U16 + PRMT a sample into a transposed buffer; a horizontal pass; staged stores;
// four barriers a tile) and issues at ~40 % with its 58 KB blocks. This one works in the
// packed 3x3 kernels' manner (u8_3x3.cuh): one tile of 16-byte chunks, one barrier pair a
// tile, everything else in registers. A thread takes 8 adjacent outputs of R rows; for each
// of its R + K - 1 tile rows it reads four words (bytes x0 - 4 .. x0 + 11: LDS, LDS.64, LDS),
// does the horizontal K-window of its 8 outputs (morph_k::hrow: 4 words of two outputs in
// v * 257 lanes), and each pair of output rows takes the vertical window of those words
// (morph_k::vpair) as soon as its last row is there, so only about K + 1 rows of 4 words are
// live; the outputs go out as one 8-byte store a row. Counted from the SASS (5x5, R = 16):
// see bench/NOTES.md, "Branch vh-issue".
// The tile, its constants and its loader (morphk_load_tile): morphv_u8.cuh.
template <bool kMax, int K, int R>
__global__ void __launch_bounds__(kMkThreads, kMorphKMinBlocks)
    morphk_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                     DevBorder<std::uint8_t> border, bool src_aligned, bool dst_aligned8,
                     int rows_of_blocks) {
  static_assert(R % 2 == 0, "morphk_u8_kernel: output rows in pairs");
  __shared__ __align__(16) unsigned tile[kMkTileH<R, K>][kMkTileWords];
  const long long bx0 = (long long)blockIdx.x * kMkBW;
  const bool aligned16 = src_aligned && u8_3x3::rows_aligned16(src);
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kMkBH<R>;
    morphk_load_tile<R, K>(&tile[0][0], src, border, bx0, by0, src_aligned, aligned16);
    const int tx = u8_3x3::tid_x_again(), ty = threadIdx.y;
    store_rows8<R>(dst, int(bx0) + tx * kMorphKPX, by0 + ty * R, dst_aligned8, [&](auto&& put) {
      // Tile rows ty R .. ty R + R + K - 2, words 2tx + 3 .. 2tx + 6 (bytes x0 - 4 .. x0 + 11).
      const unsigned* row0 = &tile[ty * R][2 * tx + kMkOff];
      unsigned hw[R + K - 1][4];  // horizontal results; each row dies after its last pair
#pragma unroll
      for (int r = 0; r < R + K - 1; ++r) {
        const unsigned* row = row0 + r * kMkTileWords;
        const uint2 bc = *reinterpret_cast<const uint2*>(row + 1);  // 8-byte aligned word
        morph_k::hrow<K, kMax>(row[0], bc.x, bc.y, row[3], hw[r]);
        if (r >= K && (r - K) % 2 == 0) {  // output rows i, i + 1 have all their rows
          const int i = r - K;
          unsigned r0[2], r1[2];
          morph_k::vpair_rows<K, kMax>(hw, i, r0, r1);
          put(i, make_uint2(r0[0], r0[1]));
          put(i + 1, make_uint2(r1[0], r1[1]));
        }
      }
    });
    __syncthreads();  // the next tile overwrites this one
  }
}

// The windows morphk_u8_kernel takes: u8 x 1, square K = 5 or 7, centred (other windows, anchors
// and channel counts: the van Herk and doubling kernels above). The rows8 kernel
// (morphk_rows8.cuh) where it applies, else the tiles.
template <bool kMax>
bool try_morphk_u8c1(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                     const Border& border, cudaStream_t st) {
  const int k = w.kw;
  if (s.channels() != 1 || w.kh != k || (k != 5 && k != 7) || w.ax != k / 2 || w.ay != k / 2 ||
      d.width() > 0x7fffff00LL)
    return false;
  if (morphk_r8::launch_morphk_rows8<kMax>(s, d, k, border, st)) return true;
  const long long bx = (d.width() + kMkBW - 1) / kMkBW;
  const bool tall = tall_blocks_fill(bx, d.height(), kMkBH<kMorphKRows>);
  const int bh = tall ? kMkBH<kMorphKRows> : kMkBH<kMorphKRowsShort>;
  auto launch = [&](auto kernel) {
    kernel<<<grid_2d(d.width(), d.height(), kMkBW, bh), dim3(kMorphKTX, kMorphKTY), 0, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border),
        rows_aligned(s, 4), rows_aligned(d, 8), blocks_y(d.height(), bh));
  };
  if (k == 5)
    launch(tall ? morphk_u8_kernel<kMax, 5, kMorphKRows>
                : morphk_u8_kernel<kMax, 5, kMorphKRowsShort>);
  else
    launch(tall ? morphk_u8_kernel<kMax, 7, kMorphKRows>
                : morphk_u8_kernel<kMax, 7, kMorphKRowsShort>);
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

template <bool kMax>
bool try_morph_u8_tiles(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                        const Border& border, cudaStream_t st) {
  const int cn = s.channels();
  const long long wc = (long long)s.width() * cn;
  const long long bx = (wc + kByteTileBW - 1) / kByteTileBW;
  int bh = 64;  // 32 where 64 would not fill the GPU (launch.cuh) or the tile does not fit
  if (!tall_blocks_fill(bx, s.height(), 64) || morph_u8_smem(w.kw, w.kh, cn, 64) > kMaxSmem)
    bh = 32;
  const std::size_t smem = morph_u8_smem(w.kw, w.kh, cn, bh);
  if (smem > kMaxSmem) return false;
  const dim3 grid = grid_2d(wc, s.height(), kByteTileBW, bh);
  const int rows = blocks_y(s.height(), bh);
  const bool sa = rows_aligned(s, 16), da = rows_aligned(d, 16);
  const MorphU8 k{w.kw, w.kh, w.ax, w.ay};
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      PIXFLOW_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    kernel<<<grid, kByteTileThreads, smem, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(border), k,
        bh, rows, sa, da);
  };
  switch (cn) {
    case 1:
      launch(morph_u8_kernel<1, kMax>);
      break;
    case 2:
      launch(morph_u8_kernel<2, kMax>);
      break;
    case 3:
      launch(morph_u8_kernel<3, kMax>);
      break;
    default:
      launch(morph_u8_kernel<4, kMax>);
      break;
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
  return true;
}

template <class T, bool kMax>
void launch_morph(const ConstImageView& s, const ImageView& d, const SepWindow& w,
                  const Border& border, cudaStream_t st) {
  // 3x3 centred on u8 x 1 or x 3: the packed kernel (16x2 lanes, Hopper 3-input min/max)
  // when the destination allows it (8192^2 u8x1: 90 us against 110 for the van Herk kernel;
  // u8x3 took the byte-tile kernel: 26.1 us at 1920x1080 against NPP's 12.4).
  if (std::is_same_v<T, std::uint8_t> && w.kw == 3 && w.kh == 3 && w.ax == 1 && w.ay == 1 &&
      (u8_3x3::launch_3x3(
           u8_3x3::morph3_rows8_kernel<kMax>, u8_3x3::morph3_u8_kernel<kMax, u8_3x3::kRowsTall>,
           u8_3x3::morph3_u8_kernel<kMax, u8_3x3::kRowsShort>, s, d, border, "morphology", st) ||
       u8_3x3::launch_3x3_cn<3>(u8_3x3::morph3_rows8_kernel<kMax, 3>,
                                u8_3x3::morph3_u8_kernel<kMax, u8_3x3::kRowsTall, 3>,
                                u8_3x3::morph3_u8_kernel<kMax, u8_3x3::kRowsShort, 3>, s, d, border,
                                "morphology", st)))
    return;
  // 3x3 centred on one f32 channel: f32_3x3.cuh (keys in the tile, 4 x 8 outputs a thread).
  if (std::is_same_v<T, float> && w.kw == 3 && w.kh == 3 && w.ax == 1 && w.ay == 1 &&
      f32_3x3::launch_f32_3x3(f32_3x3::Morph3<kMax>{}, s, d, border, "morphology", st))
    return;
  if constexpr (std::is_same_v<T, std::uint8_t>)
    if (try_morphk_u8c1<kMax>(s, d, w, border, st) || try_morphv_u8c1<kMax>(s, d, w, border, st) ||
        try_morph_u8c1<kMax>(s, d, w, border, st) || try_morph_u8_tiles<kMax>(s, d, w, border, st))
      return;
  launch_separable(dev_view<T>(s), dev_view<T>(d), dev_border<T>(border), w, MorphPolicy<T, kMax>{},
                   st);
}

// ---- 3x3 composites on one u8 channel in one kernel ("morph_composite") ---------------------
// open, close, tophat, blackhat: the block's source tile (halo 2) in shared memory, the first
// pass into a second shared tile (the block's outputs plus a ring of one: the intermediate
// never leaves the chip), the second pass and the difference with the source from there;
// gradient: dilate and erode of the same tile. The packed arithmetic of u8_3x3.cuh (two
// pixels a word in 16-bit lanes, 3-input min/max). Each pass applies the border rule to its
// own input, as core's passes do: the first pass reads the source tile (loaded through the
// rule at the image's edges), and the intermediate's ring outside the image is then filled by
// the same rule from the intermediate's own samples, which lie in the block's tile for every
// rule but wrap (wrap reaches the far side of the image: core runs it as passes).
// 32 x 8 threads, each 4 adjacent outputs of 4 rows: 128 x 32 outputs a block.
constexpr int kC3TX = 32, kC3TY = 8, kC3Rows = 4;
constexpr int kC3BW = kC3TX * 4, kC3BH = kC3TY * kC3Rows;
constexpr int kC3Words = (kC3BW + 8) / 4;  // a tile row: bytes x0 - 4 .. x0 + kC3BW + 3
constexpr int kC3TileH = kC3BH + 4;        // source rows y0 - 2 .. y0 + kC3BH + 1
constexpr int kC3MidH = kC3BH + 2;         // intermediate rows y0 - 1 .. y0 + kC3BH

// The packed columns (u8_3x3::columns) of the thread's pixels x0 .. x0 + 3 in N + 2
// consecutive rows of a tile of kC3Words-word rows, from `first`: extracted once for the N
// output rows whose windows share them; win3x3 then gives the packed 3x3 max (kMax) or min
// of one output row from its three rows' columns.
struct Cols {
  unsigned p0, p1, p2;  // lanes (x0-1, x0), (x0+1, x0+2), (x0+3, x0+4)
};

template <int N>
__device__ __forceinline__ void tile_columns(const unsigned (*rows)[kC3Words], int first, int tx,
                                             Cols (&c)[N + 2]) {
#pragma unroll
  for (int k = 0; k < N + 2; ++k) u8_3x3::columns(rows[first + k], tx, c[k].p0, c[k].p1, c[k].p2);
}

template <bool kMax>
__device__ __forceinline__ unsigned win3x3(const Cols& a, const Cols& b, const Cols& c) {
  auto op3 = [](unsigned x, unsigned y, unsigned z) {
    return kMax ? u8_3x3::vmax3(x, y, z) : u8_3x3::vmin3(x, y, z);
  };
  const unsigned c0 = op3(a.p0, b.p0, c.p0);
  const unsigned c1 = op3(a.p1, b.p1, c.p1);
  const unsigned c2 = op3(a.p2, b.p2, c.p2);
  const unsigned o0 = op3(c0, u8_3x3::between(c0, c1), c1);  // pixels x0, x0 + 1
  const unsigned o1 = op3(c1, u8_3x3::between(c1, c2), c2);  // pixels x0 + 2, x0 + 3
  return __byte_perm(o0, o1, 0x6420);
}

template <MorphOp kOp>
__global__ void __launch_bounds__(kC3TX* kC3TY)
    morph3_composite_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                               DevBorder<std::uint8_t> border, bool src_aligned, bool dst_aligned,
                               int rows_of_blocks) {
  // The first pass: erode for open and tophat, dilate for close and blackhat.
  constexpr bool kFirstMax = kOp == MorphOp::close || kOp == MorphOp::blackhat;
  constexpr bool kMid = kOp != MorphOp::gradient;
  __shared__ unsigned tile[kC3TileH][kC3Words];
  __shared__ unsigned mid[kMid ? kC3MidH : 1][kC3Words];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kC3TX + tx;
  const long long bx0 = (long long)blockIdx.x * kC3BW;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kC3BH;
    // Tile byte (r, i) is source pixel (bx0 - 4 + i, by0 - 2 + r).
    const bool inside = src_aligned && bx0 - 4 >= 0 && bx0 - 4 + 4 * kC3Words <= src.w &&
                        by0 - 2 >= 0 && by0 - 2 + kC3TileH <= src.h;
    if (inside) {
      for (int i = tid; i < kC3TileH * kC3Words; i += kC3TX * kC3TY) {
        const int r = i / kC3Words, wd = i - r * kC3Words;
        tile[r][wd] = reinterpret_cast<const unsigned*>(src.row(by0 - 2 + r) + bx0 - 4)[wd];
      }
    } else {
      auto* bytes = reinterpret_cast<unsigned char*>(&tile[0][0]);
      for (int i = tid; i < kC3TileH * kC3Words * 4; i += kC3TX * kC3TY) {
        const int r = i / (kC3Words * 4), c = i - r * (kC3Words * 4);
        bytes[i] = fetch(src, bx0 - 4 + c, by0 - 2 + r, 0, border);
      }
    }
    __syncthreads();
    if constexpr (kMid) {
      // Intermediate byte (r, i) is pixel (bx0 - 4 + i, by0 - 1 + r); words 1 .. kC3Words - 2
      // by the threads (word tx + 1), rows ty * kC3Rows + k and the last two by ty 0 and 1.
      {
        Cols c[kC3Rows + 2];
        tile_columns<kC3Rows>(tile, ty * kC3Rows, tx, c);
#pragma unroll
        for (int k = 0; k < kC3Rows; ++k)
          mid[ty * kC3Rows + k][tx + 1] = win3x3<kFirstMax>(c[k], c[k + 1], c[k + 2]);
      }
      if (ty < kC3MidH - kC3BH) {
        Cols c[3];
        tile_columns<1>(tile, kC3BH + ty, tx, c);
        mid[kC3BH + ty][tx + 1] = win3x3<kFirstMax>(c[0], c[1], c[2]);
      }
      // The ring's left and right columns (bytes 3 and kC3BW + 4), one byte each.
      auto* mb = reinterpret_cast<unsigned char*>(&mid[0][0]);
      const auto* tb = reinterpret_cast<const unsigned char*>(&tile[0][0]);
      for (int i = tid; i < 2 * kC3MidH; i += kC3TX * kC3TY) {
        const int r = i >> 1, c = (i & 1) ? kC3BW + 4 : 3;
        unsigned v = kFirstMax ? 0u : 255u;
        for (int dy = 0; dy < 3; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const unsigned t = tb[(r + dy) * kC3Words * 4 + c + dx];
            v = kFirstMax ? max(v, t) : min(v, t);
          }
        mb[r * kC3Words * 4 + c] = static_cast<unsigned char>(v);
      }
      __syncthreads();
      // The ring outside the image: the border rule on the intermediate. Only cells one
      // step outside are read by in-image outputs; they map to cells inside the image and
      // inside this block's range (x0 - 1 .. x0 + kC3BW, y0 - 1 .. y0 + kC3BH), which the
      // loop does not write.
      if (bx0 == 0 || bx0 + kC3BW >= src.w || by0 == 0 || by0 + kC3BH >= src.h) {
        for (int i = tid; i < kC3MidH * (kC3BW + 2); i += kC3TX * kC3TY) {
          const int r = i / (kC3BW + 2), j = i - r * (kC3BW + 2);
          const long long x = bx0 - 1 + j, y = by0 - 1 + r;
          const bool xin = x >= 0 && x < src.w, yin = y >= 0 && y < src.h;
          if ((xin && yin) || x < -1 || x > src.w || y < -1 || y > src.h) continue;
          unsigned char v = border.value;
          if (border.type != BorderType::constant) {
            const long long xi = xin ? x : detail::border_index(x, src.w, border.type);
            const long long yi = yin ? y : detail::border_index(y, src.h, border.type);
            v = mb[(yi - (by0 - 1)) * kC3Words * 4 + (xi - (bx0 - 4))];
          }
          mb[r * kC3Words * 4 + j + 3] = v;
        }
        __syncthreads();
      }
    }
    const long long x0 = bx0 + tx * 4;
    // Output row by0 + r (r = ty * kC3Rows + k) is tile row r + 2 and mid row r + 1.
    Cols c[kC3Rows + 2];
    if constexpr (kOp == MorphOp::gradient)
      tile_columns<kC3Rows>(tile, ty * kC3Rows + 1, tx, c);
    else
      tile_columns<kC3Rows>(mid, ty * kC3Rows, tx, c);
#pragma unroll
    for (int k = 0; k < kC3Rows; ++k) {
      const int r = ty * kC3Rows + k;
      unsigned out;
      if constexpr (kOp == MorphOp::gradient) {
        out = __vsubus4(win3x3<true>(c[k], c[k + 1], c[k + 2]),
                        win3x3<false>(c[k], c[k + 1], c[k + 2]));
      } else {
        const unsigned second = win3x3<!kFirstMax>(c[k], c[k + 1], c[k + 2]);
        const unsigned self = tile[r + 2][tx + 1];  // source pixels x0 .. x0 + 3
        if constexpr (kOp == MorphOp::tophat)
          out = __vsubus4(self, second);
        else if constexpr (kOp == MorphOp::blackhat)
          out = __vsubus4(second, self);
        else
          out = second;
      }
      const long long y = by0 + r;
      if (y >= dst.h || x0 >= dst.w) continue;
      std::uint8_t* d = dst.row(y) + x0;
      if (dst_aligned && x0 + 3 < dst.w) {
        *reinterpret_cast<unsigned*>(d) = out;
      } else {
        for (int j = 0; j < 4 && x0 + j < dst.w; ++j) d[j] = std::uint8_t(out >> (8 * j));
      }
    }
    __syncthreads();  // the tiles are reloaded
  }
}

// The composites morph3_composite_u8_kernel takes: 3x3 centred (one iteration), any border
// but wrap (core runs the others as passes; the format, u8 x 1, is the registration's).
bool composite3_covers(const detail::MorphPass& m) {
  return m.kw == 3 && m.kh == 3 && m.ax == 1 && m.ay == 1 && m.border.type != BorderType::wrap;
}

void morph_composite_covers(const ConstImageView& src, const detail::MorphPass& m,
                            const detail::MorphCovers& covers, cudaStream_t) {
  covers.yes = src.depth() == Depth::u8 && src.channels() == 1 && composite3_covers(m);
}

void morph_composite(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                     cudaStream_t st) {
  detail::require(composite3_covers(m), Status::internal, morph_op_name(m.op),
                  "the fused CUDA composite was called for a window or border it does not take");
  if (comp3::try_comp3_packed(s, d, m, st)) return;
  // Destinations whose rows are not 4-byte aligned: the shared-tile kernel.
  const dim3 grid = grid_2d(d.width(), d.height(), kC3BW, kC3BH);
  auto launch = [&](auto kernel) {
    kernel<<<grid, dim3(kC3TX, kC3TY), 0, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(m.border),
        rows_aligned(s, 4), rows_aligned(d, 4), blocks_y(d.height(), kC3BH));
  };
  switch (m.op) {
    case MorphOp::open:
      launch(morph3_composite_u8_kernel<MorphOp::open>);
      break;
    case MorphOp::close:
      launch(morph3_composite_u8_kernel<MorphOp::close>);
      break;
    case MorphOp::gradient:
      launch(morph3_composite_u8_kernel<MorphOp::gradient>);
      break;
    case MorphOp::tophat:
      launch(morph3_composite_u8_kernel<MorphOp::tophat>);
      break;
    case MorphOp::blackhat:
      launch(morph3_composite_u8_kernel<MorphOp::blackhat>);
      break;
    default:
      detail::require(false, Status::internal, morph_op_name(m.op), "not a composite");
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("morphology");
}

void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                cudaStream_t st) {
  const SepWindow w{m.kw, m.kh, m.ax, m.ay};
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(src.depth(), [&](auto t) -> void {
    using T = decltype(t);
    if (m.op == MorphOp::dilate)
      launch_morph<T, true>(src, dst, w, m.border, st);
    else
      launch_morph<T, false>(src, dst, w, m.border, st);
  });
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_morphology) {
  using namespace pixflow;
  cuda::add<&cuda::morph_pass>(table, "morph_pass",
                               cuda::depths({Depth::u8, Depth::u16, Depth::f32}));
  const auto u8c1 = detail::Support::of({Depth::u8}, {1});
  cuda::add<&cuda::morph_composite>(table, "morph_composite", u8c1);
  cuda::add<&cuda::morph_composite_covers>(table, "morph_composite.covers", u8c1);
}
