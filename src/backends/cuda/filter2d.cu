// filter2d on CUDA. The float sum runs from 0 in kernel row-major order with explicitly
// rounded multiply and add (no FMA), exactly the reference's rule, so the floor is two FP32
// instructions per tap and output (50 a sample at 5x5): the kernel is built to spend as few
// instructions as possible outside that chain.
//
// 5x5 on 1-4 channels takes the float-tile kernel (filter2d_ftile.hpp, below): the block's
// input tile converted to float once into shared memory, each thread 8 outputs of a row from 5
// rows of 16-byte loads, a rolled row loop of ~450 instructions at 64 registers (the strip
// kernel's 5x-unrolled groups were ~40 KB of code at 158-167 registers, ~0.45 IPC per
// scheduler on the H100: 300 us at 8192^2 u8x1). Images whose tall grid is under two waves
// take its small shape (try_filter2d_ftile): whole waves of blocks, 4 outputs a thread at one
// channel, the tile in one load round trip.
//
// Square windows 3x3 and 7x7 on 1-4 channels take the strip tile kernel: the block's input tile
// (with the halo) in shared memory, loaded in 16-byte chunks (per sample through the border
// rule only at the image edges); each thread C consecutive output samples of a strip of R
// rows, every input row converted to float once per thread and fed to the KH output rows
// that use it (filter2d_strip.hpp, run on the CPU by tests/filter2d_test.cpp); taps are
// compile-time-indexed kernel parameters (no load per output: ptxas keeps them in uniform
// registers or reloads two at a time with LDC.64, ~1.5 instructions per output at 5x5). Other
// windows take the generic window kernel.
//
// Instructions per u8 output at 5x5 (sm_90 SASS, one row of an unguarded group: 462 for 8
// outputs): 25 FMUL + 24 FADD + 1 FADD (delta) + 1 F2IP (round, saturate, NaN -> 0) + 0.75
// PRMT (packing) + 3 (byte -> float: PRMT + FADD on 12 samples / 8 outputs) + 1.5 LDC (taps)
// + 0.4 LDS; with the strip's 4 extra rows (R = 32), the guarded end groups, the store and
// the tile load: ~60 per output.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/common/window.cuh"
#include "src/backends/cuda/filter2d_ftile.hpp"
#include "src/backends/cuda/filter2d_strip.hpp"
#include "src/base/backend.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

// ---- launch shape of the tile kernel --------------------------------------------------------
// 128 threads: 16 along a row (each C samples) x 8 strips of R rows. R is 32 on large images
// (a strip's KH - 1 extra input rows cost (R + KH - 1) / R conversions per input sample, and
// its first and last groups of KH rows run the guarded code) and is halved until the grid has
// kF2dMinBlocks blocks (1080p: a few rows a strip, so that the 132 SMs all get work) and the
// tile fits kF2dSmemTarget (several blocks per SM).
constexpr int kF2dTX = 16, kF2dTY = 8, kF2dThreads = kF2dTX * kF2dTY;
constexpr int kF2dMaxRows = 32;
constexpr int kF2dMinBlocks = 4 * 132;
constexpr std::size_t kF2dSmemTarget = 74 * 1024;
// Blocks per SM the registers must allow (ptxas then caps a thread at 65536 / (128 x this)).
// ptxas keeps many products and converted rows in flight (unbounded: 128-148 registers at
// 3x3, 166-224 at 5x5, 194-242 at 7x7); these are the largest counts without spills:
// 16 warps per SM at 3x3, 12 at 5x5, 8 at 7x7.
template <int K>
constexpr int f2d_min_blocks_per_sm() {
  return K <= 3 ? 4 : K <= 5 ? 3 : 2;
}

/// Output samples per thread: 8 up to 5x5 (a thread's W = C + (K-1)*CN converted samples
/// serve C outputs; 16 would save 0.5 conversions per u8 output at 5x5, but took 170-182
/// registers), 4 at 7x7 (7 x 8 accumulators spilled at 128 registers).
template <class T, int K>
constexpr int f2d_samples_per_thread() {
  return K <= 5 ? 8 : 4;
}

/// The tile of a block: kBW output samples per row; input sample xs + j of a row is tile
/// column j, with xs = e0 - ax*CN - kOff rounded down to a 16-byte boundary (kOff static since
/// e0 is a multiple of kVec); the window of output sample e0 + s starts at column kOff + s.
template <class T, int CN, int K, int C>
struct F2dGeom {
  static constexpr int kVec = 16 / int(sizeof(T));  // samples per 16-byte chunk
  static constexpr int kBW = kF2dTX * C;
  static constexpr int kAx = K / 2;
  static constexpr int kOff = (kVec - (kAx * CN) % kVec) % kVec;
  static constexpr int kW = C + (K - 1) * CN;  // window samples of one thread's row
  static constexpr int kPitch = (kOff + kBW + (K - 1) * CN + kVec - 1) / kVec * kVec;
  static_assert(kBW % kVec == 0, "block starts must be 16-byte aligned in the row");
};

template <int N>
struct F2dTaps {
  float k[N];
  float delta;
  __device__ __forceinline__ float operator[](int i) const { return k[i]; }
};

/// Sample e (channels interleaved) of row sy by the border rule in x; sy >= 0.
template <class T, int CN>
__device__ __forceinline__ T f2d_edge_sample(const DevView<T>& v, long long sy, long long e,
                                             long long wc, const DevBorder<T>& b) {
  if (e >= 0 && e < wc) return v.row(sy)[e];
  // Pixel and channel of sample e, outside the row by d samples (d < 2^31: the window's reach
  // plus a chunk), in 32-bit arithmetic (as load_byte_tile).
  long long px;
  int ch;
  if (e < 0) {
    const int d = int(-e), q = (d + CN - 1) / CN;
    px = -q;
    ch = q * CN - d;
  } else {
    const int d = int(e - wc), q = d / CN;
    px = v.w + q;
    ch = d - q * CN;
  }
  const long long sx = near_border_index(px, v.w, b.type);
  return sx >= 0 ? v.row(sy)[sx * CN + ch] : b.value;
}

/// One 16-byte chunk of the tile at the image edges, sample by sample (out of line: the
/// interior never runs it, and inlined into the loader's unrolled batch it multiplied the
/// code by the 16 samples and four chunks).
template <class T, int CN>
__device__ __noinline__ void f2d_edge_chunk(T* out, const DevView<T> v, long long sy, long long g,
                                            long long wc, const DevBorder<T> b) {
  constexpr int kVec = 16 / int(sizeof(T));
#pragma unroll 1
  for (int i = 0; i < kVec; ++i)
    out[i] = sy >= 0 ? f2d_edge_sample<T, CN>(v, sy, g + i, wc, b) : b.value;
}

/// Loads th rows of G::kPitch samples: tile (r, j) = input (xs + j, ys + r) by the border rule.
/// A thread keeps one 16-byte chunk column (so the x test is made once) and walks the rows,
/// four in flight; chunks inside the row of 16-byte aligned rows are one vector load, the
/// others go sample by sample through the border rule. Syncs at the end: one __syncthreads
/// that every thread of the block reaches, the threads without a chunk column (r0 >=
/// kRowStep) by skipping the loop. (They once took `__syncthreads(); return;`, a second
/// barrier instruction in the same warp as the loading threads: bar.sync is .aligned, every
/// thread of the CTA must execute the same one, and ptxas compiled each site as WARPSYNC.ALL
/// + BAR.SYNC, so one warp of every block waited at two sites; the suspected cause of the
/// tile kernel hanging on the H100. bench/notes-filter2d-hang.md.)
template <class T, int CN, class G>
__device__ __forceinline__ void f2d_load_tile(T* tile, int th, long long xs, long long ys,
                                              const DevView<T>& v, const DevBorder<T>& b,
                                              bool aligned) {
  constexpr int kChunks = G::kPitch / G::kVec;
  constexpr int kRowStep = kF2dThreads / kChunks;  // rows a pass of the block covers
  static_assert(kRowStep >= 1, "a tile row must have at most one chunk per thread");
  constexpr int kBatch = 4;
  const int c = int(threadIdx.x) % kChunks, r0 = int(threadIdx.x) / kChunks;
  const int r_first = r0 < kRowStep ? r0 : th;  // no chunk column: skip the loop, not the sync
  const long long wc = (long long)v.w * CN;
  const long long g = xs + (long long)G::kVec * c;
  const bool x_inside = aligned && g >= 0 && g + G::kVec <= wc;
  T* out0 = tile + G::kVec * c;
  for (int rb = r_first; rb < th; rb += kBatch * kRowStep) {
    uint4 val[kBatch];
    bool fast[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const long long y = ys + rb + j * kRowStep;
      fast[j] = x_inside && rb + j * kRowStep < th && y >= 0 && y < v.h;
      if (fast[j]) val[j] = *reinterpret_cast<const uint4*>(v.row(y) + g);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int r = rb + j * kRowStep;
      if (r >= th) break;
      T* out = out0 + r * G::kPitch;
      if (fast[j])
        *reinterpret_cast<uint4*>(out) = val[j];
      else
        f2d_edge_chunk<T, CN>(out, v, near_border_index(ys + r, v.h, b.type), g, wc, b);
    }
  }
  __syncthreads();
}

/// The aligned vector a thread reads its window with: C samples apart between threads, so
/// min(16, C * sizeof(T)) bytes.
template <int kBytes>
struct F2dVec;
template <>
struct F2dVec<16> {
  using type = uint4;
  __device__ __forceinline__ static std::uint32_t word(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
  }
};
template <>
struct F2dVec<4> {
  using type = std::uint32_t;
  __device__ __forceinline__ static std::uint32_t word(std::uint32_t v, int) { return v; }
};
template <>
struct F2dVec<8> {
  using type = uint2;
  __device__ __forceinline__ static std::uint32_t word(const uint2& v, int i) {
    return i == 0 ? v.x : v.y;
  }
};

/// u8 result of a sum: round half to even, saturate, NaN -> 0 (detail::saturate_cast<u8>):
/// one F2IP.U8 on sm_90.
__device__ __forceinline__ std::uint32_t f2d_u8(float s) {
  std::uint32_t r;
  asm("cvt.rni.sat.u8.f32 %0, %1;" : "=r"(r) : "f"(s));
  return r;
}

/// Stores a thread's C consecutive output samples of one row from their sums: sum + delta by
/// the rule (f32 as is; u8 by f2d_u8, four to a word), vector stores when the group is whole
/// and aligned (`full`), else sample by sample up to the row's end (e: the group's first
/// sample, wc: the row's samples). Both tile kernels end each output row here.
template <class T, int C>
__device__ __forceinline__ void f2d_store_group(T* out, const float* sums, float delta, bool full,
                                                long long e, long long wc) {
  if constexpr (std::is_same_v<T, float>) {
    float r[C];
#pragma unroll
    for (int c = 0; c < C; ++c) r[c] = add_rn(sums[c], delta);
    if (full) {
#pragma unroll
      for (int c = 0; c < C; c += 4)
        *reinterpret_cast<float4*>(out + c) = make_float4(r[c], r[c + 1], r[c + 2], r[c + 3]);
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c)
        if (e + c < wc) out[c] = r[c];
    }
  } else {
    std::uint32_t w[C / 4];
#pragma unroll
    for (int c = 0; c < C; c += 4) {
      const std::uint32_t lo =
          __byte_perm(f2d_u8(add_rn(sums[c], delta)), f2d_u8(add_rn(sums[c + 1], delta)), 0x0040);
      const std::uint32_t hi = __byte_perm(f2d_u8(add_rn(sums[c + 2], delta)),
                                           f2d_u8(add_rn(sums[c + 3], delta)), 0x0040);
      w[c / 4] = __byte_perm(lo, hi, 0x5410);
    }
    if (full) {
      if constexpr (C == 16)
        *reinterpret_cast<uint4*>(out) = make_uint4(w[0], w[1], w[2], w[3]);
      else if constexpr (C == 8)
        *reinterpret_cast<uint2*>(out) = make_uint2(w[0], w[1]);
      else
        *reinterpret_cast<std::uint32_t*>(out) = w[0];
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c)
        if (e + c < wc) out[c] = std::uint8_t(w[c / 4] >> (8 * (c % 4)));
    }
  }
}

template <class T, int CN, int K, int C>
__global__ void __launch_bounds__(kF2dThreads, f2d_min_blocks_per_sm<K>())
    filter2d_tile_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> border, F2dTaps<K * K> taps,
                         int strip_rows, int rows_of_blocks, bool src_aligned, bool dst_aligned) {
  using G = F2dGeom<T, CN, K, C>;
  constexpr int kVecBytes = C * int(sizeof(T)) >= 16 ? 16 : C * int(sizeof(T));
  static_assert(C * int(sizeof(T)) % kVecBytes == 0, "thread windows start vector-aligned");
  using V = F2dVec<kVecBytes>;
  using Vec = typename V::type;
  constexpr int kWordsPerVec = kVecBytes / 4;
  constexpr int kSamplesPerVec = kVecBytes / int(sizeof(T));
  // The vectors covering tile columns [kOff, kOff + kW) from the thread's first column.
  constexpr int kFirstVec = G::kOff / kSamplesPerVec;
  constexpr int kNumVec = (G::kOff + G::kW + kSamplesPerVec - 1) / kSamplesPerVec - kFirstVec;
  constexpr int kSkip = G::kOff - kFirstVec * kSamplesPerVec;  // samples before the window

  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  const int tx = int(threadIdx.x) % kF2dTX, ty = int(threadIdx.x) / kF2dTX;
  const int bh = kF2dTY * strip_rows;
  const long long e0 = (long long)blockIdx.x * G::kBW;
  const long long wc = (long long)dst.w * CN;
  const long long e = e0 + (long long)C * tx;  // the thread's first output sample
  const bool full = dst_aligned && e + C <= wc;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * bh;
    f2d_load_tile<T, CN, G>(tile, bh + K - 1, e0 - G::kAx * CN - G::kOff, y0 - K / 2, src, border,
                            src_aligned);
    const long long ys = y0 + (long long)ty * strip_rows;  // the strip's first output row
    const int n = e < wc ? int(min((long long)strip_rows, max(0LL, dst.h - ys))) : 0;
    const Vec* rows =
        reinterpret_cast<const Vec*>(tile + ty * strip_rows * G::kPitch + C * tx) + kFirstVec;
    constexpr int kVecPitch = G::kPitch * int(sizeof(T)) / kVecBytes;
    auto load_row = [&](int i, float* win) {
      Vec v[kNumVec];
#pragma unroll
      for (int j = 0; j < kNumVec; ++j) v[j] = rows[i * kVecPitch + j];
#pragma unroll
      for (int s = 0; s < G::kW; ++s) {
        const int at = kSkip + s;  // sample index from the first vector's start
        if constexpr (std::is_same_v<T, float>) {
          const int w = at;
          win[s] = __uint_as_float(V::word(v[w / kWordsPerVec], w % kWordsPerVec));
        } else {
          const int w = at / 4;
          win[s] = f2d::byte_to_float(V::word(v[w / kWordsPerVec], w % kWordsPerVec), at % 4);
        }
      }
    };
    unsigned char* const out0 = dst.data + ys * dst.stride + e * (long long)sizeof(T);
    auto store_row = [&](int o, const float* sums) {
      f2d_store_group<T, C>(reinterpret_cast<T*>(out0 + o * dst.stride), sums, taps.delta, full, e,
                            wc);
    };
    f2d::strip<K, K, CN, C, std::is_same_v<T, float>>(taps, n, load_row, store_row);
    __syncthreads();  // the next tile overwrites what this one read
  }
}

template <class T, int CN, int K>
bool try_filter2d_tile(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
                       cudaStream_t st) {
  constexpr int C = f2d_samples_per_thread<T, K>();
  using G = F2dGeom<T, CN, K, C>;
  const long long wc = (long long)s.width() * CN, h = s.height();
  const long long bx = (wc + G::kBW - 1) / G::kBW;
  auto smem = [](int r) { return std::size_t(kF2dTY * r + K - 1) * G::kPitch * sizeof(T); };
  int r = kF2dMaxRows;
  while (r > 1 && (bx * blocks_y(h, kF2dTY * r) < kF2dMinBlocks || smem(r) > kF2dSmemTarget))
    r /= 2;
  if (smem(r) > kMaxSmem) return false;
  F2dTaps<K * K> taps{};
  std::memcpy(taps.k, p.kernel.data(), sizeof(taps.k));
  taps.delta = float(p.delta);
  auto kernel = filter2d_tile_kernel<T, CN, K, C>;
  if (smem(r) > 48 * 1024)
    PIXFLOW_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem(r))));
  kernel<<<grid_2d(wc, h, G::kBW, kF2dTY * r), kF2dThreads, smem(r), st>>>(
      dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border), taps, r, blocks_y(h, kF2dTY * r),
      rows_aligned(s, 16), rows_aligned(d, 16));
  PIXFLOW_CUDA_CHECK_LAUNCH("filter2d");
  return true;
}

template <class T, int K>
bool try_filter2d_tile_k(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
                         cudaStream_t st) {
  switch (s.channels()) {
    case 1:
      return try_filter2d_tile<T, 1, K>(s, d, p, st);
    case 2:
      return try_filter2d_tile<T, 2, K>(s, d, p, st);
    case 3:
      return try_filter2d_tile<T, 3, K>(s, d, p, st);
    case 4:
      return try_filter2d_tile<T, 4, K>(s, d, p, st);
    default:
      return false;
  }
}

// ---- the float-tile kernel: 5x5 on 1-4 channels (filter2d_ftile.hpp) -------------------------

// Rows per thread R (a block computes kFtileTY * R rows, the tile holds 8R + 4): 4 on large
// images (the 4 halo rows cost 1.125 conversions per output), halved until the grid has
// kF2dMinBlocks blocks and the tile fits kFtileSmemTarget (4 blocks of 48 KB an SM; at R = 4
// every channel count's tile is 36 rows of 288 floats, 41.5 KB). Below two waves of R = 4
// blocks (tall_blocks_fill) the small shape takes over (ftile_small_rows). It was added
// because halving R left 1080p between waves: u8x1 / f32 at R = 2 were 8 x 68 = 544 blocks
// (4 a SM: 528 at once, 16 after), the 8th block column half idle and its lanes' groups past
// the row's end loaded through the border path one dependent round trip a row; u8x3 at R = 4
// 23 x 34 = 782 (1.48 waves), likewise at its right end. 12.1 / 12.5 / 23.7 us against NPP's
// 11.7 / 9.1 / 20.0 (bench/RESULTS.md, 2026-11-25).
// 5x5 takes the float-tile kernel; false routes it to the strip tile kernel again (the A/B
// switch for the first H100 run: the float tile is predicted, not yet measured).
constexpr bool kF2dFloatTile5x5 = true;
constexpr int kFtileMaxRows = 4;
constexpr int kFtileTY = f2d::kFtileTY;
constexpr std::size_t kFtileSmemTarget = 48 * 1024;
// Blocks of 256 threads per SM the registers must allow: 4 caps a thread at 64 registers (32
// warps an SM; the shared memory allows 5 blocks of 41.5 KB). Without the cap ptxas took
// 78-88 (it hoists a whole kernel row's loads), i.e. 2-3 blocks; at 64 nothing spills.
constexpr int kFtileMinBlocksPerSm = 4;

/// Output samples per thread: 8 (window 12 / 16 / 20 / 24 floats at 1-4 channels: 3-6 16-byte
/// loads per kernel row for 8 outputs). 16 would halve the loads per output at 3-4 channels
/// (at 8, u8x3 needs ~85 % of the shared-memory bandwidth at the issue rate) but took 105-128
/// registers (2 blocks, 16 warps an SM); at 8 every format fits 64 registers.
constexpr int kFtileC = 8;
/// Output samples per thread of the small shape (images whose tall grid is under two waves,
/// tall_blocks_fill): 4 at one channel, so that 1920 samples are 15 whole block columns of 128
/// (at 8: 7.5 columns of 256, the last half idle) and the grid fills whole waves; 8 at 2-4
/// channels (f2d::ftile_item).
template <int CN>
constexpr int ftile_small_c() {
  return CN == 1 ? 4 : 8;
}

/// Tile rows a warp loads per block (tile rows t = warp + 8i), all loads in flight at once.
template <int K>
constexpr int ftile_row_iters() {
  return (kFtileTY * kFtileMaxRows + K - 1 + kFtileTY - 1) / kFtileTY;
}
/// 4 samples from global memory in one load: u8 a 4-byte word, f32 a 16-byte vector.
__device__ __forceinline__ std::uint32_t ftile_ld(const std::uint8_t* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}
__device__ __forceinline__ float4 ftile_ld(const float* p) {
  return *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ float4 ftile_cvt(std::uint32_t w) {
  return make_float4(f2d::byte_to_float(w, 0), f2d::byte_to_float(w, 1), f2d::byte_to_float(w, 2),
                     f2d::byte_to_float(w, 3));
}
__device__ __forceinline__ float4 ftile_cvt(const float4& v) {
  return v;
}

/// Samples g .. g + 3 of input row y (both by the border rule) as floats; out of line: only
/// groups at the image edges (or of unaligned rows) take it.
template <class T, int CN>
__device__ __noinline__ float4 ftile_edge_group(const DevView<T> v, long long y, long long g,
                                                long long wc, const DevBorder<T> b) {
  const long long sy = near_border_index(y, v.h, b.type);
  float f[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    f[i] = float(sy >= 0 ? f2d_edge_sample<T, CN>(v, sy, g + i, wc, b) : b.value);
  return make_float4(f[0], f[1], f[2], f[3]);
}

/// Loads th tile rows as floats: tile row t = input row ys + t, group m = input samples
/// xg + 4m .. +3 (xg = xs0 - kSh, a multiple of 4), both by the border rule. Lane l of warp w
/// takes groups l + 32k (k < kFull) of rows w + 8i (i < kIters, unrolled: global addresses
/// advance by 8 rows, shared ones are immediates), loading two rows before converting them;
/// groups outside the image or of unaligned rows take the border path. The kRest groups at the
/// right end of every row are one item per thread. Every thread reaches the one __syncthreads.
template <class T, int CN, class G, int kIters>
__device__ __forceinline__ void ftile_load(float* tile, int th, long long xg, long long ys,
                                           const DevView<T>& v, const DevBorder<T>& b,
                                           bool aligned) {
  using Raw = decltype(ftile_ld(static_cast<const T*>(nullptr)));
  // Rows in flight: 2 for u8 (2 * kFull 4-byte words), 1 for f32 (kFull 16-byte vectors): more
  // pushed the kernel past 64 registers.
  constexpr int kBatch = sizeof(Raw) == 4 ? 2 : 1;
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32;
  const long long wc = (long long)v.w * CN;
  // Tile rows inside the image: t_lo <= t < t_hi (32-bit from here on; th <= 40).
  const int t_lo = int(min((long long)th, max(0LL, -ys)));
  const int t_hi = int(max((long long)t_lo, min((long long)th, v.h - ys)));
  bool x_in[G::kFull];
#pragma unroll
  for (int k = 0; k < G::kFull; ++k) {
    const long long g = xg + 4LL * (lane + 32 * k);
    x_in[k] = aligned && g >= 0 && g + 4 <= wc;
  }
  // Row warp's group `lane` (pointer arithmetic only: dereferenced where the group is inside),
  // and where it lands in the tile (group lane + 32k: + 128k floats).
  const unsigned char* src_row =
      v.data + (ys + warp) * v.stride + (xg + 4 * lane) * (long long)sizeof(T);
  const long long step = kFtileTY * v.stride;
  int lo, hi;
  f2d::ftile_group_at<G>(lane, lo, hi);
  float* const dst_row = tile + warp * G::kPitch;
  // Groups for the border path (outside the image, or rows not aligned): bit i * kFull + k,
  // done after the others at one call site (per-site argument set-up and saved registers
  // around each call pushed the loader past 64 registers).
  static_assert(kIters * G::kFull <= 32, "edge mask bits");
  unsigned edge = 0;
#pragma unroll
  for (int i0 = 0; i0 < kIters; i0 += kBatch) {
    Raw raw[kBatch][G::kFull];
    bool fast[kBatch][G::kFull];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int t = warp + kFtileTY * (i0 + i);
      const bool y_in = i0 + i < kIters && unsigned(t - t_lo) < unsigned(t_hi - t_lo);
#pragma unroll
      for (int k = 0; k < G::kFull; ++k) {
        fast[i][k] = y_in && x_in[k];
        raw[i][k] =
            fast[i][k] ? ftile_ld(reinterpret_cast<const T*>(src_row + i * step) + 128 * k) : Raw{};
      }
    }
    src_row += kBatch * step;
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int t = warp + kFtileTY * (i0 + i);
      if (i0 + i >= kIters || t >= th) break;
#pragma unroll
      for (int k = 0; k < G::kFull; ++k) {
        // Branch-free: a group for the border path stores zeros here (its load did not run)
        // and is overwritten by the same thread below.
        if (!fast[i][k]) edge |= 1u << ((i0 + i) * G::kFull + k);
        const float4 f = ftile_cvt(raw[i][k]);
        f2d::ftile_put_group<G>(dst_row + (i0 + i) * kFtileTY * G::kPitch + 128 * k, lo, hi, f.x,
                                f.y, f.z, f.w);
      }
    }
  }
  while (edge != 0) {
    const int bit = __ffs(edge) - 1, i = bit / G::kFull, k = bit - i * G::kFull;
    edge &= edge - 1;
    const int t = warp + kFtileTY * i;
    const float4 f = ftile_edge_group<T, CN>(v, ys + t, xg + 4LL * (lane + 32 * k), wc, b);
    f2d::ftile_put_group<G>(dst_row + i * kFtileTY * G::kPitch + 128 * k, lo, hi, f.x, f.y, f.z,
                            f.w);
  }
  if constexpr (G::kRest > 0) {
    // th * kRest <= (8 * kFtileMaxRows + K - 1) * 3 items: one per thread at most.
    static_assert((kFtileTY * kIters) * G::kRest <= f2d::kFtileThreads, "one rest item a thread");
    const int it = int(threadIdx.x);
    if (it < th * G::kRest) {
      const int t = it / G::kRest, m = 32 * G::kFull + (it - t * G::kRest);
      const long long y = ys + t, g = xg + 4LL * m;
      const float4 f = aligned && y >= 0 && y < v.h && g >= 0 && g + 4 <= wc
                           ? ftile_cvt(ftile_ld(v.row(y) + g))
                           : ftile_edge_group<T, CN>(v, y, g, wc, b);
      int rlo, rhi;
      f2d::ftile_group_at<G>(m, rlo, rhi);
      f2d::ftile_put_group<G>(tile + t * G::kPitch, rlo, rhi, f.x, f.y, f.z, f.w);
    }
  }
  __syncthreads();
}

/// Where sample e of a row of wc samples (channels interleaved, w pixels) comes from by the
/// border rule in x: its index in the row, or -1 where the border is constant (as
/// f2d_edge_sample; 32-bit: the small shape's rows are under 2^20 samples).
template <int CN>
__device__ __forceinline__ int ftile_src_sample(int e, int wc, int w, BorderType type) {
  if (e >= 0 && e < wc) return e;
  int px, ch;
  if (e < 0) {
    const int d = -e, q = (d + CN - 1) / CN;
    px = -q;
    ch = q * CN - d;
  } else {
    const int d = e - wc, q = d / CN;
    px = w + q;
    ch = d - q * CN;
  }
  const int sx = int(near_border_index(px, w, type));
  return sx >= 0 ? sx * CN + ch : -1;
}

/// Row y by the border rule (-1: the constant), the inside test in 32 bits.
__device__ __forceinline__ int ftile_src_row(int y, int h, BorderType type) {
  return y >= 0 && y < h ? y : int(near_border_index(y, h, type));
}

/// Samples g .. g + 3 of source row sy (-1: a constant border's row) by the border rule in x,
/// in the form ftile_ld gives (u8: one word, f32: a vector); inline, so that its loads are in
/// flight with the tile's other loads.
template <class T, int CN>
__device__ __forceinline__ auto ftile_edge_raw(const DevView<T>& v, int sy, int g, int wc,
                                               const DevBorder<T>& b) {
  T s[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const int o = ftile_src_sample<CN>(g + q, wc, v.w, b.type);
    s[q] = sy >= 0 && o >= 0 ? v.row(sy)[o] : b.value;
  }
  if constexpr (std::is_same_v<T, float>)
    return make_float4(s[0], s[1], s[2], s[3]);
  else
    return std::uint32_t(s[0]) | std::uint32_t(s[1]) << 8 | std::uint32_t(s[2]) << 16 |
           std::uint32_t(s[3]) << 24;
}

/// Four samples of value v in the form ftile_ld gives.
__device__ __forceinline__ std::uint32_t ftile_splat(std::uint8_t v) {
  return std::uint32_t(v) * 0x01010101u;
}
__device__ __forceinline__ float4 ftile_splat(float v) {
  return make_float4(v, v, v, v);
}

/// The small shape's loader (f2d::ftile_item): th tile rows as floats, tile row t = input row
/// ys + t, group m = samples xg + 4m .. +3, both by the border rule; groups at or past x_end
/// (f2d::ftile_x_end) are not read by any computed output and are skipped. Rows go through the
/// border rule before the load (a row outside the image is another row's vector load, or the
/// constant), so only groups across the image's left or right side (and every group of rows
/// not 4-sample aligned) take the sample-by-sample path: a thread's first such item inline,
/// its loads in flight with the vector loads (at one channel a thread has at most one: its
/// items are 256 apart, 18 mod the 34 groups of a row, unless one block spans the row), any
/// others after, one at a time (unaligned rows). So a block waits for one load round trip
/// where the tall loader waited for one a row at the image's sides. f32 items (4 registers
/// each) go 5 at a time (at 2-4 channels: 10 items, two round trips).
template <class T, int CN, class G, int kMaxRows>
__device__ __forceinline__ void ftile_load_once(float* tile, int th, int xg, int ys, int x_end,
                                                const DevView<T>& v, const DevBorder<T>& b,
                                                bool aligned) {
  using Raw = decltype(ftile_ld(static_cast<const T*>(nullptr)));
  constexpr int kItems = f2d::ftile_items<G>(kMaxRows);
  constexpr int kBatch = sizeof(Raw) == 4 ? kItems : 5;
  static_assert(kItems <= 32, "edge mask bits");
  const int wc = v.w * CN;
  const int n_items = th * G::kGroups;
  unsigned edge = 0;  // items for the sample-by-sample path: bit j
#pragma unroll
  for (int j0 = 0; j0 < kItems; j0 += kBatch) {
    Raw raw[kBatch];
    unsigned vec = 0;  // items of this batch loaded as a vector (or the constant): bit j - j0
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int it = int(threadIdx.x) + f2d::kFtileThreads * (j0 + j);
      int t, m;
      f2d::ftile_item<G>(it, t, m);
      const int g = xg + 4 * m;
      raw[j] = Raw{};
      if (j0 + j < kItems && it < n_items && g < x_end) {
        if (aligned && g >= 0 && g + 4 <= wc) {
          const int sy = ftile_src_row(ys + t, v.h, b.type);
          raw[j] = sy >= 0 ? ftile_ld(v.row(sy) + g) : ftile_splat(b.value);
          vec |= 1u << j;
        } else {
          edge |= 1u << (j0 + j);
        }
      }
    }
    // The first item of the border path, inline (loads in flight with the batch's).
    int je = -1;
    Raw eraw{};
    if (edge != 0 && j0 == 0) {
      je = __ffs(edge) - 1;
      edge &= edge - 1;
      int t, m;
      f2d::ftile_item<G>(int(threadIdx.x) + f2d::kFtileThreads * je, t, m);
      eraw = ftile_edge_raw<T, CN>(v, ftile_src_row(ys + t, v.h, b.type), xg + 4 * m, wc, b);
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      if (!(vec >> j & 1u)) continue;
      int t, m, lo, hi;
      f2d::ftile_item<G>(int(threadIdx.x) + f2d::kFtileThreads * (j0 + j), t, m);
      f2d::ftile_group_at<G>(m, lo, hi);
      const float4 f = ftile_cvt(raw[j]);
      f2d::ftile_put_group<G>(tile + t * G::kPitch, lo, hi, f.x, f.y, f.z, f.w);
    }
    if (je >= 0) {
      int t, m, lo, hi;
      f2d::ftile_item<G>(int(threadIdx.x) + f2d::kFtileThreads * je, t, m);
      f2d::ftile_group_at<G>(m, lo, hi);
      const float4 f = ftile_cvt(eraw);
      f2d::ftile_put_group<G>(tile + t * G::kPitch, lo, hi, f.x, f.y, f.z, f.w);
    }
  }
  while (edge != 0) {
    const int j = __ffs(edge) - 1;
    edge &= edge - 1;
    int t, m, lo, hi;
    f2d::ftile_item<G>(int(threadIdx.x) + f2d::kFtileThreads * j, t, m);
    f2d::ftile_group_at<G>(m, lo, hi);
    const float4 f =
        ftile_cvt(ftile_edge_raw<T, CN>(v, ftile_src_row(ys + t, v.h, b.type), xg + 4 * m, wc, b));
    f2d::ftile_put_group<G>(tile + t * G::kPitch, lo, hi, f.x, f.y, f.z, f.w);
  }
  __syncthreads();
}

/// The float-tile kernel's body. kOnce: the small shape (ftile_load_once, any C), else the tall
/// loader (ftile_load). One body for both kernels, so that the tall kernels' code is what it
/// was before the small shape existed.
template <class T, int CN, int K, int C, bool kOnce>
__device__ __forceinline__ void ftile_body(DevView<T> src, DevView<T> dst, DevBorder<T> border,
                                           F2dTaps<K * K> taps, int rows, int rows_of_blocks,
                                           bool src_aligned, bool dst_aligned) {
  using G = f2d::FtileGeom<CN, K, C>;
  constexpr bool kF32 = std::is_same_v<T, float>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* tile = reinterpret_cast<float*>(smem_raw);
  const int tx = int(threadIdx.x) % f2d::kFtileTX, ty = int(threadIdx.x) / f2d::kFtileTX;
  const int bh = kFtileTY * rows;
  const long long e0 = (long long)blockIdx.x * G::kBW;
  const long long wc = (long long)dst.w * CN;
  const long long e = e0 + (long long)C * tx;  // the thread's first output sample
  const bool full = dst_aligned && e + C <= wc;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * bh;
    if constexpr (kOnce)
      ftile_load_once<T, CN, G, kFtileTY * kFtileMaxRows + K - 1>(
          tile, bh + K - 1, int(e0) - G::kHalo - G::kSh, int(y0) - K / 2,
          int(f2d::ftile_x_end<G>(e0, wc)), src, border, src_aligned);
    else
      ftile_load<T, CN, G, ftile_row_iters<K>()>(tile, bh + K - 1, e0 - G::kHalo - G::kSh,
                                                 y0 - K / 2, src, border, src_aligned);
    // The thread's window chunks in tile row ty (the swizzle moves each on its own), advanced
    // by kFtileTY rows per output row: one add per chunk and row, kernel rows as immediates.
    // (Computed here, not once before the loop: live across the loader they cost registers.)
    const float* win[G::kWC];
#pragma unroll
    for (int j = 0; j < G::kWC; ++j)
      win[j] = tile + ty * G::kPitch + f2d::ftile_swizzle<G>(G::kLead + C * tx + 4 * j);
    // Output rows y0 + ty + 8i, i < n (tile rows ty + 8i .. + K - 1): the checks made once.
    const long long y1 = y0 + ty;
    const int n = e < wc && y1 < dst.h ? int(min((long long)rows, (dst.h - y1 + 7) / 8)) : 0;
    unsigned char* row_out = dst.data + y1 * dst.stride + e * (long long)sizeof(T);
#pragma unroll 1
    for (int i = 0; i < n; ++i) {
      float acc[C];
      f2d::ftile_sums<K, CN, C, kF32>(acc, taps, [&](int r, int j, float* out) {
        const float4 q = *reinterpret_cast<const float4*>(win[j] + r * G::kPitch);
        out[0] = q.x;
        out[1] = q.y;
        out[2] = q.z;
        out[3] = q.w;
      });
#pragma unroll
      for (int j = 0; j < G::kWC; ++j) win[j] += kFtileTY * G::kPitch;
      T* out = reinterpret_cast<T*>(row_out);
      row_out += kFtileTY * dst.stride;
      f2d_store_group<T, C>(out, acc, taps.delta, full, e, wc);
    }
    // The small shape's grid has a block for every block row (under 65535 of them): one
    // iteration, so nothing of the loader's stays live across the row loop, and no barrier.
    if constexpr (kOnce) break;
    __syncthreads();  // the next block row's tile overwrites what this one read
  }
}

template <class T, int CN, int K, int C>
__global__ void __launch_bounds__(f2d::kFtileThreads, kFtileMinBlocksPerSm)
    filter2d_ftile_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> border, F2dTaps<K * K> taps,
                          int rows, int rows_of_blocks, bool src_aligned, bool dst_aligned) {
  ftile_body<T, CN, K, C, false>(src, dst, border, taps, rows, rows_of_blocks, src_aligned,
                                 dst_aligned);
}

/// The small shape (try_filter2d_ftile): one load round trip a tile.
template <class T, int CN, int K, int C>
__global__ void __launch_bounds__(f2d::kFtileThreads, kFtileMinBlocksPerSm)
    filter2d_ftile_once_kernel(DevView<T> src, DevView<T> dst, DevBorder<T> border,
                               F2dTaps<K * K> taps, int rows, int rows_of_blocks, bool src_aligned,
                               bool dst_aligned) {
  ftile_body<T, CN, K, C, true>(src, dst, border, taps, rows, rows_of_blocks, src_aligned,
                                dst_aligned);
}

/// Launches the float-tile kernel (kOnce: the small shape's) at r rows a thread.
template <class T, int CN, int C, bool kOnce>
void launch_ftile(const ConstImageView& s, const ImageView& d, const Filter2dParams& p, int r,
                  cudaStream_t st) {
  constexpr int K = 5;
  using G = f2d::FtileGeom<CN, K, C>;
  const long long wc = (long long)s.width() * CN, h = s.height();
  const std::size_t smem = std::size_t(kFtileTY * r + K - 1) * G::kPitch * sizeof(float);
  F2dTaps<K * K> taps{};
  std::memcpy(taps.k, p.kernel.data(), sizeof(taps.k));
  taps.delta = float(p.delta);
  auto kernel = [] {
    if constexpr (kOnce)
      return filter2d_ftile_once_kernel<T, CN, K, C>;
    else
      return filter2d_ftile_kernel<T, CN, K, C>;
  }();
  if (smem > 48 * 1024)
    PIXFLOW_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  kernel<<<grid_2d(wc, h, G::kBW, kFtileTY * r), f2d::kFtileThreads, smem, st>>>(
      dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border), taps, r, blocks_y(h, kFtileTY * r),
      rows_aligned(s, 4 * std::int64_t(sizeof(T))), rows_aligned(d, 16));
  PIXFLOW_CUDA_CHECK_LAUNCH("filter2d");
}

/// Rows a thread of the small shape for blocks_x block columns and h rows: the fewest whole
/// waves of kFtileMinBlocksPerSm x kSmCount blocks in which every warp gets the same number of
/// rows give or take one, at most kFtileMaxRows (the tile's limit). 1920x1080 u8x1 / f32x1 (15
/// block columns of 128 samples, 135 warp rows): one wave, at most 35 block rows -> 4 rows ->
/// 34 block rows, 510 blocks; u8x3 (23 columns of 256): one wave would need 7 rows, two waves
/// (45 block rows) give 3 -> 45 block rows, 1035 blocks.
inline int ftile_small_rows(long long blocks_x, long long h) {
  const long long warp_rows = (h + kFtileTY - 1) / kFtileTY;
  for (long long waves = 1;; ++waves) {
    const long long cap = waves * kFtileMinBlocksPerSm * kSmCount / blocks_x;
    if (cap < 1) continue;
    const long long r = (warp_rows + cap - 1) / cap;
    if (r <= kFtileMaxRows) return int(r);
  }
}

template <class T, int CN>
bool try_filter2d_ftile(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
                        cudaStream_t st) {
  constexpr int K = 5, C = kFtileC;
  using G = f2d::FtileGeom<CN, K, C>;
  const long long wc = (long long)s.width() * CN, h = s.height();
  const long long bx = (wc + G::kBW - 1) / G::kBW;
  if (!tall_blocks_fill(bx, h, kFtileTY * kFtileMaxRows)) {
    constexpr int kC = ftile_small_c<CN>();
    using GS = f2d::FtileGeom<CN, K, kC>;
    // One block row a block (ftile_body): blocks_x x blocks_y < 2 x kTallGridBlocks here, so
    // blocks_y < 65535 (the grid's limit).
    launch_ftile<T, CN, kC, true>(s, d, p, ftile_small_rows((wc + GS::kBW - 1) / GS::kBW, h), st);
    return true;
  }
  auto smem = [](int r) { return std::size_t(kFtileTY * r + K - 1) * G::kPitch * sizeof(float); };
  int r = kFtileMaxRows;
  while (r > 1 && (bx * blocks_y(h, kFtileTY * r) < kF2dMinBlocks || smem(r) > kFtileSmemTarget))
    r /= 2;
  if (smem(r) > kMaxSmem) return false;
  launch_ftile<T, CN, C, false>(s, d, p, r, st);
  return true;
}

template <class T>
bool try_filter2d_ftile_5x5(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
                            cudaStream_t st) {
  switch (s.channels()) {
    case 1:
      return try_filter2d_ftile<T, 1>(s, d, p, st);
    case 2:
      return try_filter2d_ftile<T, 2>(s, d, p, st);
    case 3:
      return try_filter2d_ftile<T, 3>(s, d, p, st);
    case 4:
      return try_filter2d_ftile<T, 4>(s, d, p, st);
    default:
      return false;
  }
}

// ---- the generic window kernel: other window shapes ------------------------------------------

struct Taps {
  float k[15 * 15];
  int kw, kh;
  float delta;
};

template <class T>
struct Filter2dPolicy {
  Taps t;
  template <class Win>
  __device__ T compute(const Win& w, int) const {
    float s = 0.0f;
    for (int j = 0; j < t.kh; ++j)
      for (int i = 0; i < t.kw; ++i) s = __fadd_rn(s, __fmul_rn(t.k[j * t.kw + i], float(w(i, j))));
    s = __fadd_rn(s, t.delta);
    if constexpr (std::is_same_v<T, float>) {
      return s;
    } else {
      return detail::saturate_cast<T>(double(s));
    }
  }
};

template <class T>
void launch_filter2d(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
                     cudaStream_t st) {
  if (p.kw == p.kh) {
    if (p.kw == 3 && try_filter2d_tile_k<T, 3>(s, d, p, st)) return;
    if (p.kw == 5 && kF2dFloatTile5x5 && try_filter2d_ftile_5x5<T>(s, d, p, st)) return;
    if (p.kw == 5 && !kF2dFloatTile5x5 && try_filter2d_tile_k<T, 5>(s, d, p, st)) return;
    if (p.kw == 7 && try_filter2d_tile_k<T, 7>(s, d, p, st)) return;
  }
  Filter2dPolicy<T> pol{};
  std::memcpy(pol.t.k, p.kernel.data(), p.kernel.size() * sizeof(float));
  pol.t.kw = p.kw;
  pol.t.kh = p.kh;
  pol.t.delta = float(p.delta);
  launch_window(dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border), p.kw, p.kh, p.kw / 2,
                p.kh / 2, pol, st);
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_filter2d) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::f32>(
      table, "filter2d", [](auto t) { return &cuda::launch_filter2d<decltype(t)>; });
}
