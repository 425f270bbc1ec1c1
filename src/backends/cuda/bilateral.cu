// bilateral on CUDA. The weight tables are computed on the host by exactly the reference's
// expressions and passed by value as a kernel parameter (no device allocation, capturable);
// sums use explicitly rounded float operations in the reference's order, so results equal
// the reference bit for bit.
// - u8 x 1, radius 1..4 (d = 3..9): bilateral_u8c1_kernel, a shared tile, 4 x kRows outputs
//   per thread, table addresses by one VABSDIFF per tap from "sample words" and a per-lane
//   colour table (bilateral_u8_packed.hpp).
// - u8 x 3, radius 1..4: bilateral_u8c3_kernel, a tile of pixel words, kRows3 outputs per
//   thread, one VABSDIFF4 per delta, the per-lane colour table (same header).
// - f32 x 1, radius 1..4: bilateral_f32c1_kernel, a tile of floats, kF32Rows outputs per
//   thread, the colour weight interpolated from the table of src/base/bilateral_f32.hpp,
//   built by each block in shared memory (bilateral_f32_table).
// - f32, every other window or channel count: bilateral_f32_kernel, one thread per pixel
//   through the border rule, the same table; u8 likewise: bilateral_kernel.
#include <cmath>
#include <cstdint>

#include "src/backends/cuda/bilateral_f32_lookup.hpp"
#include "src/backends/cuda/bilateral_u8_packed.hpp"
#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/base/backend.hpp"
#include "src/base/bilateral_f32.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kMaxWindowRadius = 31;  // the generic kernel's limit; the tile kernels take R <= 4
constexpr int kMaxTaps = (2 * kMaxWindowRadius + 1) * (2 * kMaxWindowRadius + 1);

struct BilateralTables {  // ~28 KB: within the 32 KB kernel-parameter limit of CUDA 12.1+
  float space[kMaxTaps];
  signed char dx[kMaxTaps], dy[kMaxTaps];
  float color[256 * 4];  // u8: exp(i^2 * coeff) for i < 256 * channels
  int n;
  float scale;  // f32: the colour table's scale (src/base/bilateral_f32.hpp)
};

// u8, windows and channel counts without a tile kernel: one thread per pixel.
__global__ void bilateral_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                                 DevBorder<std::uint8_t> b,
                                 const __grid_constant__ BilateralTables tab) {
  // The colour table is read at data-dependent indices: from the kernel-parameter
  // (constant) bank a warp's different indices serialise, from shared memory they do not.
  __shared__ float lut[256 * 4];
  const int cn = src.cn;
  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < 256 * cn; i += blockDim.x * blockDim.y)
    lut[i] = tab.color[i];
  __syncthreads();
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    const std::uint8_t* centre = src.row(y) + x * cn;
    std::uint8_t cv[4];
    for (int c = 0; c < cn; ++c) cv[c] = centre[c];
    float sum[4] = {0.f, 0.f, 0.f, 0.f};
    float wsum = 0.f;
    for (int k = 0; k < tab.n; ++k) {
      std::uint8_t v[4];
      int delta = 0;
      for (int c = 0; c < cn; ++c) {
        v[c] = fetch(src, x + tab.dx[k], y + tab.dy[k], c, b);
        delta += abs(int(v[c]) - int(cv[c]));
      }
      const float wk = __fmul_rn(tab.space[k], lut[delta]);
      for (int c = 0; c < cn; ++c) sum[c] = __fadd_rn(sum[c], __fmul_rn(float(v[c]), wk));
      wsum = __fadd_rn(wsum, wk);
    }
    std::uint8_t* out = dst.row(y) + x * cn;
    for (int c = 0; c < cn; ++c)
      out[c] = detail::saturate_cast<std::uint8_t>(double(__fdiv_rn(sum[c], wsum)));
  }
}

// ---- f32: the interpolated colour table (src/base/bilateral_f32.hpp) ----------------------
// The table in shared memory as pairs {T[i], D[i] = T[i + 1] - T[i]}, i = 0..N (N = 4096 cn;
// T[N] = D[N] = 0): one 8-byte load a tap, and the difference made once, not per tap (the same
// float). Built by every block from the shared rule (exp_nonpositive in double, each operation
// rounded once: the host's floats), so no device memory, copy or workspace is needed and the
// op stays capturable. Why not the host's table as a kernel parameter: 4097 floats fit the
// 32 KB parameter space for cn = 1 only, and a warp's 32 different parameter addresses
// serialise (4097 constant loads a block, slower than building it: ~4097 x 34 double
// operations / 64 lanes = ~2.2k cycles of the FP64 pipe a block, overlapped with the other
// resident blocks' taps); blocks of large grids walk several block rows so that it is built
// once for several tiles (kF32BlockRows).
constexpr int kF32TableEntriesC1 = detail::bilateral_f32::kBinsPerChannel + 1;

/// Fills tab[0..N] for cn channels with the block's `threads` threads (thread `tid`); ends
/// with a barrier.
__device__ void bilateral_f32_table(float2* tab, int cn, int tid, int threads) {
  namespace bf = detail::bilateral_f32;
  const int n = bf::bins(cn);
  const double per_bin2 = bf::exponent_per_bin2(cn);
  for (int i = tid; i <= n; i += threads) tab[i].x = bf::table_entry(i, per_bin2);
  __syncthreads();
  for (int i = tid; i <= n; i += threads)
    tab[i].y = __fsub_rn(i < n ? tab[i + 1].x : 0.0f, tab[i].x);
  __syncthreads();
}

/// The colour weight of detail::bilateral_f32::weight from the pair table
/// (bilateral_f32_lookup.hpp).
__device__ __forceinline__ float bilateral_f32_weight(const float2* tab, float nbins, float scale,
                                                      float delta) {
  return bilateral_f32::lookup(reinterpret_cast<const float*>(tab), nbins, scale, delta);
}

// f32, any window (radius <= 31) and 1..4 channels: one thread per pixel through the border
// rule, the table of cn channels in dynamic shared memory ((4096 cn + 1) x 8 bytes); the
// grid is capped (kF32PixelBlocks a SM) and each block walks its column strip, so the table is
// built once for many pixels.
__global__ void bilateral_f32_kernel(DevView<float> src, DevView<float> dst, DevBorder<float> b,
                                     const __grid_constant__ BilateralTables tab) {
  extern __shared__ float2 f32_table[];
  const int cn = src.cn;
  bilateral_f32_table(f32_table, cn, threadIdx.y * blockDim.x + threadIdx.x,
                      blockDim.x * blockDim.y);
  const float nbins = float(detail::bilateral_f32::bins(cn));
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < dst.h;
       y += (long long)gridDim.y * blockDim.y) {
    if (x >= dst.w) continue;
    const float* centre = src.row(y) + x * cn;
    float cv[4];
    for (int c = 0; c < cn; ++c) cv[c] = centre[c];
    float sum[4] = {0.f, 0.f, 0.f, 0.f};
    float wsum = 0.f;
    for (int k = 0; k < tab.n; ++k) {
      float v[4];
      float delta = 0.f;
      for (int c = 0; c < cn; ++c) {
        v[c] = fetch(src, x + tab.dx[k], y + tab.dy[k], c, b);
        delta = __fadd_rn(delta, fabsf(__fsub_rn(v[c], cv[c])));
      }
      const float wk =
          __fmul_rn(tab.space[k], bilateral_f32_weight(f32_table, nbins, tab.scale, delta));
      for (int c = 0; c < cn; ++c) sum[c] = __fadd_rn(sum[c], __fmul_rn(v[c], wk));
      wsum = __fadd_rn(wsum, wk);
    }
    float* out = dst.row(y) + x * cn;
    for (int c = 0; c < cn; ++c) out[c] = __fdiv_rn(sum[c], wsum);
  }
}

// u8 x 1, radius R <= 4: block (bx0, by0) computes 128 x 32 outputs from a tile of the input
// with its halo (interior: 4-byte word loads; at the image's edges every byte through the
// border rule), with the colour table replicated per lane in shared memory (see
// bilateral_u8_packed.hpp for the layout, the per-thread body and its instruction count).
template <int R>
__global__ void __launch_bounds__(bilateral_u8::kTX* bilateral_u8::kTY, 3)
    bilateral_u8c1_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                          DevBorder<std::uint8_t> border, bool src_aligned, bool dst_aligned,
                          int rows_of_blocks, const __grid_constant__ BilateralTables tab) {
  using namespace bilateral_u8;
  constexpr int TH = kTileH<R>;
  constexpr int kHalo = bilateral_u8::kMaxRadius;  // the tile's left margin, any R <= 4
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* lut = reinterpret_cast<float*>(smem_raw);
  unsigned* tile = reinterpret_cast<unsigned*>(smem_raw + sizeof(float) * kLutFloats);
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTX + tx;
  // The table as lut_value<R> defines it (lane l's colour entry d at d * kLutPitch + l, its
  // product with the product class's space weight kTX floats further), four copies per
  // 16-byte store, 16 stores a thread: thread tid stores floats 4 i .. 4 i + 3 for
  // i = tid + step * 256, so row d = i / 16 and the half (colour or product) is fixed per
  // thread (i % 16 = tid % 16): one parameter load and one store per step, no index
  // arithmetic. (Session 11's scalar fill, one float per store, was ~350 instructions a
  // thread, ~6 % of the block's work.) Made visible by the first tile's __syncthreads.
  constexpr int kVecsPerRow = kLutPitch / 4, kThreads = kTX * kTY;
  constexpr int kFillSteps = kLutFloats / 4 / kThreads;
  static_assert(kLutPitch == 2 * kTX && kTX % 4 == 0 && kThreads % kVecsPerRow == 0 &&
                kLutFloats % (4 * kThreads) == 0);
  const int d0 = tid / kVecsPerRow;
  const bool product = tid % kVecsPerRow >= kTX / 4;
  const float space_product = tab.space[kProductTap<R>];
#pragma unroll
  for (int step = 0; step < kFillSteps; ++step) {
    const float colour = tab.color[d0 + step * (kThreads / kVecsPerRow)];
    const float c = product ? __fmul_rn(space_product, colour) : colour;
    reinterpret_cast<float4*>(lut)[tid + step * kThreads] = make_float4(c, c, c, c);
  }
  const long long bx0 = (long long)blockIdx.x * kBW;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH;
    const bool inside = src_aligned && bx0 - kHalo >= 0 && bx0 - kHalo + kTileW <= src.w &&
                        by0 - R >= 0 && by0 - R + TH <= src.h;
    if (inside) {
      // Warp ty loads rows ty, ty + kTY, ..: words tx and tx + 32 (the last two), a fixed
      // number of steps with the row pointer advanced by kTY rows (no index division: i / 34
      // per word cost ~12 instructions of ~6 words a thread).
      static_assert(kTileWords > kTX && kTileWords <= 2 * kTX);
      const auto* s = src.row(by0 - R + ty) + (bx0 - kHalo) + 4 * tx;
#pragma unroll
      for (int k = 0; k < (TH + kTY - 1) / kTY; ++k, s += kTY * src.stride) {
        const int r = ty + k * kTY;
        if (r >= TH) break;
        tile[r * kTileWords + tx] = *reinterpret_cast<const unsigned*>(s);
        if (tx < kTileWords - kTX)
          tile[r * kTileWords + kTX + tx] = reinterpret_cast<const unsigned*>(s)[kTX];
      }
    } else {
      auto* bytes = reinterpret_cast<unsigned char*>(tile);
      for (int i = tid; i < TH * kTileW; i += kTX * kTY) {
        const int r = i / kTileW, c = i - r * kTileW;
        bytes[i] = fetch(src, bx0 - kHalo + c, by0 - R + r, 0, border);
      }
    }
    __syncthreads();
    unsigned out[kRows];
    bilateral_rows<R>(tile, lut, tab.space, tx, ty * kRows, unsigned(tx) * 4u, out);
    const long long x0 = bx0 + tx * kPX;
    const bool full = dst_aligned && x0 + kPX <= dst.w;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const long long y = by0 + ty * kRows + r;
      if (x0 >= dst.w || y >= dst.h) break;
      std::uint8_t* d = dst.row(y) + x0;
      if (full) {
        *reinterpret_cast<unsigned*>(d) = out[r];
      } else {
        for (int j = 0; j < kPX && x0 + j < dst.w; ++j) d[j] = std::uint8_t(out[r] >> (8 * j));
      }
    }
    __syncthreads();  // the tile is reloaded
  }
}

// u8 x 3, radius R <= 4: block (bx0, by0) computes 32 x 64 outputs from a tile of pixel words
// (c0, c1, c2, 0) with its halo (interior: three byte loads per pixel; at the image's edges
// through the border rule), with the 766-entry colour table replicated per lane (98 KB), so
// that two blocks fit an SM. Each block walks kC3BlockRows block rows to spread the table's
// fill (766 x 128 bytes) over more work.
constexpr int kC3BlockRows = 2;

template <int R>
__global__ void __launch_bounds__(bilateral_u8::kTX* bilateral_u8::kTY3, 2)
    bilateral_u8c3_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                          DevBorder<std::uint8_t> border, int rows_of_blocks,
                          const __grid_constant__ BilateralTables tab) {
  using namespace bilateral_u8;
  constexpr int TH = kTileH3<R>;
  constexpr int kHalo = bilateral_u8::kMaxRadius;  // the tile's left margin, any R <= 4
  extern __shared__ __align__(16) unsigned char smem_raw[];
  float* lut = reinterpret_cast<float*>(smem_raw);
  unsigned* tile = reinterpret_cast<unsigned*>(smem_raw + sizeof(float) * kLut3Floats);
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTX + tx;
  // Lane l's copy of entry d at d * kTX + l, four copies per 16-byte store: thread tid stores
  // float4 i = tid + step * 256 of row d = i / 8 = tid / 8 + 32 step, 24 stores a thread
  // (the scalar fill, 96 stores with a division and a dynamic parameter index each, was
  // a rolled loop of ~870 instructions a thread, ~6 % of a block's two rows).
  constexpr int kVecs3 = kLut3Floats / 4, kThreads3 = kTX * kTY3, kVecsPerDelta = kTX / 4;
  static_assert(kTX % 4 == 0 && kThreads3 % kVecsPerDelta == 0);
#pragma unroll
  for (int step = 0; step < (kVecs3 + kThreads3 - 1) / kThreads3; ++step) {
    const int i = tid + step * kThreads3;
    if (i < kVecs3) {
      const float c = tab.color[tid / kVecsPerDelta + step * (kThreads3 / kVecsPerDelta)];
      reinterpret_cast<float4*>(lut)[i] = make_float4(c, c, c, c);
    }
  }
  const long long bx0 = (long long)blockIdx.x * kBW3;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kBH3;
    const bool inside =
        bx0 - kHalo >= 0 && bx0 - kHalo + kTileW3 <= src.w && by0 - R >= 0 && by0 - R + TH <= src.h;
    for (int i = tid; i < TH * kTileW3; i += kTX * kTY3) {
      const int r = i / kTileW3, c = i - r * kTileW3;
      const long long x = bx0 - kHalo + c, y = by0 - R + r;
      unsigned w = 0;
      if (inside) {
        const std::uint8_t* px = src.row(y) + 3 * x;
        w = unsigned(px[0]) | unsigned(px[1]) << 8 | unsigned(px[2]) << 16;
      } else {
        for (int ch = 0; ch < 3; ++ch) w |= unsigned(fetch(src, x, y, ch, border)) << (8 * ch);
      }
      tile[i] = w;
    }
    __syncthreads();
    unsigned out[kRows3];
    bilateral_rows_c3<R>(tile, lut, tab.space, tx, ty * kRows3, unsigned(tx) * 4u, out);
    const long long x = bx0 + tx;
    if (x < dst.w) {
#pragma unroll
      for (int r = 0; r < kRows3; ++r) {
        const long long y = by0 + ty * kRows3 + r;
        if (y >= dst.h) break;
        std::uint8_t* d = dst.row(y) + 3 * x;
        d[0] = std::uint8_t(out[r]);
        d[1] = std::uint8_t(out[r] >> 8);
        d[2] = std::uint8_t(out[r] >> 16);
      }
    }
    __syncthreads();  // the tile is reloaded
  }
}

// f32 x 1, radius R <= 4: a tile of floats with the halo (32 x 64 outputs per block, 40 x
// (64 + 2R) floats), one pixel of kF32Rows rows per thread, each source row's 2R + 1 samples
// read once from shared memory for every output row whose window holds them; the colour
// weight from the block's pair table (bilateral_f32_weight). Per tap: FSUB, FMUL (|d| *
// scale), FMNMX, 3 FADD (the index and fraction), one LDS.64 and an address, FMUL + FADD (the
// interpolation), FMUL (space), FMUL + 2 FADD (sum, wsum): 12 FP32 instructions, 1 integer,
// 1 shared load (bench/NOTES.md, "bilateral f32 table": the prediction). Blocks of grids with
// at least kTallGridBlocks tiles walk kF32BlockRows block rows (the table built once for them).
constexpr int kF32TY = 8, kF32Rows = 8;
constexpr int kF32BW = 32, kF32BH = kF32TY * kF32Rows;
constexpr int kF32BlockRows = 8;
// Resident blocks a SM the per-pixel f32 kernel's grid is sized for (its table: 32.8 KB for
// cn = 1, 98.3 KB for cn = 3).
constexpr int kF32PixelBlocks = 4;
constexpr int kF32TileW = kF32BW + 2 * bilateral_u8::kMaxRadius;

template <int R>
__device__ __forceinline__ void bilateral_f32c1_rows(const float* tile, const float2* table,
                                                     const BilateralTables& tab, int tx, int row0,
                                                     float (&out)[kF32Rows]) {
  using bilateral_u8::static_for;
  using bilateral_u8::tap_index;
  constexpr int M = bilateral_u8::kMaxRadius;
  const float nbins = float(detail::bilateral_f32::kBinsPerChannel);
  float centre[kF32Rows], sum[kF32Rows], wsum[kF32Rows];
  static_for<0, kF32Rows>([&](auto r) {
    centre[r] = tile[(row0 + R + r) * kF32TileW + M + tx];
    sum[r] = wsum[r] = 0.0f;
  });
  // Source rows ascending, dx ascending within a row: the reference's order.
  static_for<0, kF32Rows + 2 * R>([&](auto t) {
    float v[2 * R + 1];
    static_for<-R, R + 1>([&](auto dx) { v[dx + R] = tile[(row0 + t) * kF32TileW + M + tx + dx]; });
    static_for<0, kF32Rows>([&](auto r) {
      constexpr int dy = t - R - r;
      if constexpr (dy >= -R && dy <= R) {
        static_for<-R, R + 1>([&](auto dx) {
          if constexpr (dx * dx + dy * dy <= R * R) {
            // The reference: delta = 0 + |v - c| (= |v - c|), then the table.
            const float delta = fabsf(__fsub_rn(v[dx + R], centre[r]));
            const float cw = bilateral_f32_weight(table, nbins, tab.scale, delta);
            const float w = __fmul_rn(tab.space[tap_index(R, dy, dx)], cw);
            sum[r] = __fadd_rn(sum[r], __fmul_rn(v[dx + R], w));
            wsum[r] = __fadd_rn(wsum[r], w);
          }
        });
      }
    });
    // One source row at a time: without this the scheduler of the fully unrolled body
    // hoists table loads of later rows (no exp call splits the body any more) until it
    // spills (R = 4: 128 registers and 2.7 KB of spills, R = 3: 255 registers).
    asm volatile("" ::: "memory");
  });
  static_for<0, kF32Rows>([&](auto r) { out[r] = __fdiv_rn(sum[r], wsum[r]); });
}

template <int R>
__global__ void __launch_bounds__(kF32BW* kF32TY)
    bilateral_f32c1_kernel(DevView<float> src, DevView<float> dst, DevBorder<float> border,
                           int rows_of_blocks, const __grid_constant__ BilateralTables tab) {
  constexpr int M = bilateral_u8::kMaxRadius, TH = kF32BH + 2 * R;
  __shared__ float tile[TH * kF32TileW];
  __shared__ float2 table[kF32TableEntriesC1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kF32BW + tx;
  bilateral_f32_table(table, 1, tid, kF32BW * kF32TY);
  const long long bx0 = (long long)blockIdx.x * kF32BW;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long by0 = (long long)by * kF32BH;
    const bool inside =
        bx0 - M >= 0 && bx0 - M + kF32TileW <= src.w && by0 - R >= 0 && by0 - R + TH <= src.h;
    for (int i = tid; i < TH * kF32TileW; i += kF32BW * kF32TY) {
      const int r = i / kF32TileW, c = i - r * kF32TileW;
      const long long x = bx0 - M + c, y = by0 - R + r;
      tile[i] = inside ? src.row(y)[x] : fetch(src, x, y, 0, border);
    }
    __syncthreads();
    float out[kF32Rows];
    bilateral_f32c1_rows<R>(tile, table, tab, tx, ty * kF32Rows, out);
    const long long x = bx0 + tx;
    if (x < dst.w) {
#pragma unroll
      for (int r = 0; r < kF32Rows; ++r) {
        const long long y = by0 + ty * kF32Rows + r;
        if (y >= dst.h) break;
        dst.row(y)[x] = out[r];
      }
    }
    __syncthreads();  // the tile is reloaded
  }
}

// The reference's table construction (src/ref/bilateral.cpp), expression for expression.
BilateralTables make_tables(const BilateralParams& p, int cn) {
  BilateralTables t{};
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  const double color_coeff = -0.5 / (sc * sc);
  t.scale = detail::bilateral_f32::scale(sc, cn);
  const double space_coeff = -0.5 / (ss * ss);
  int radius = p.d > 0 ? p.d / 2 : int(detail::round_half_even(ss * 1.5));
  if (radius < 1) radius = 1;
  detail::require(radius <= kMaxWindowRadius, Status::invalid_argument, "bilateral",
                  "window radius must be <= ", kMaxWindowRadius, " (got ", radius, ")");
  for (int i = -radius; i <= radius; ++i)
    for (int j = -radius; j <= radius; ++j) {
      const double r = std::sqrt(double(i) * i + double(j) * j);
      if (r > radius) continue;
      t.dy[t.n] = static_cast<signed char>(i);
      t.dx[t.n] = static_cast<signed char>(j);
      t.space[t.n] = float(std::exp(r * r * space_coeff));
      ++t.n;
    }
  for (int i = 0; i < 256 * cn; ++i) t.color[i] = float(std::exp(double(i) * i * color_coeff));
  return t;
}

// The radius make_tables derived: the window's last offset is (radius, 0).
int window_radius(const BilateralTables& t) {
  return t.dy[t.n - 1];
}

// Launches bilateral_u8c1_kernel<R> for R = 1..4, or returns false (larger windows).
// Block rows each u8 x 1 block walks when the grid has at least kTallGridBlocks blocks (8 a
// SM): the table fill (~125 instructions a thread) is spread over twice the outputs (8192^2:
// 64 x 128 blocks, 20.7 waves of 3 a SM, as evenly filled as 41.4). Smaller grids (1920x1080:
// 510 blocks) keep one row a block to fill the GPU. Tests: 4100x1100 (1155 blocks) walks.
constexpr int kC1BlockRows = 2;

bool launch_bilateral_u8c1(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                           const BilateralTables& tab, cudaStream_t st) {
  using namespace bilateral_u8;
  const int radius = window_radius(tab);
  const int rows = blocks_y(d.height(), kBH);
  const long long blocks_x = (d.width() + kBW - 1) / kBW;
  const int walk = blocks_x * rows >= kTallGridBlocks ? kC1BlockRows : 1;
  const dim3 grid = grid_2d(d.width(), (long long)(rows + walk - 1) / walk, kBW, 1);
  auto launch = [&](auto kernel, int r) {
    const int smem = int(sizeof(float) * kLutFloats) + (kBH + 2 * r) * kTileW;
    PIXFLOW_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernel<<<grid, dim3(kTX, kTY), smem, st>>>(dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d),
                                               dev_border<std::uint8_t>(p.border),
                                               rows_aligned(s, 4), rows_aligned(d, 4), rows, tab);
    PIXFLOW_CUDA_CHECK_LAUNCH("bilateral");
  };
  switch (radius) {
    case 1:
      launch(bilateral_u8c1_kernel<1>, 1);
      return true;
    case 2:
      launch(bilateral_u8c1_kernel<2>, 2);
      return true;
    case 3:
      launch(bilateral_u8c1_kernel<3>, 3);
      return true;
    case 4:
      launch(bilateral_u8c1_kernel<4>, 4);
      return true;
    default:
      return false;
  }
}

// Launches bilateral_u8c3_kernel<R> for R = 1..4, or returns false (larger windows).
bool launch_bilateral_u8c3(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                           const BilateralTables& tab, cudaStream_t st) {
  using namespace bilateral_u8;
  const int radius = window_radius(tab);
  const int rows = blocks_y(d.height(), kBH3);
  dim3 grid = grid_2d(d.width(), (long long)(rows + kC3BlockRows - 1) / kC3BlockRows, kBW3, 1);
  auto launch = [&](auto kernel, int r) {
    const int smem = int(sizeof(float) * kLut3Floats) + (kBH3 + 2 * r) * kTileW3 * 4;
    PIXFLOW_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernel<<<grid, dim3(kTX, kTY3), smem, st>>>(dev_view<std::uint8_t>(s),
                                                dev_view<std::uint8_t>(d),
                                                dev_border<std::uint8_t>(p.border), rows, tab);
    PIXFLOW_CUDA_CHECK_LAUNCH("bilateral");
  };
  switch (radius) {
    case 1:
      launch(bilateral_u8c3_kernel<1>, 1);
      return true;
    case 2:
      launch(bilateral_u8c3_kernel<2>, 2);
      return true;
    case 3:
      launch(bilateral_u8c3_kernel<3>, 3);
      return true;
    case 4:
      launch(bilateral_u8c3_kernel<4>, 4);
      return true;
    default:
      return false;
  }
}

// Launches bilateral_f32c1_kernel<R> for R = 1..4, or returns false (larger windows).
bool launch_bilateral_f32c1(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                            const BilateralTables& tab, cudaStream_t st) {
  const int rows = blocks_y(d.height(), kF32BH);
  const long long blocks_x = (d.width() + kF32BW - 1) / kF32BW;
  const int walk = blocks_x * rows >= kTallGridBlocks ? kF32BlockRows : 1;
  const dim3 grid = grid_2d(d.width(), (long long)(rows + walk - 1) / walk, kF32BW, 1),
             block(kF32BW, kF32TY);
  auto launch = [&](auto kernel) {
    kernel<<<grid, block, 0, st>>>(dev_view<float>(s), dev_view<float>(d),
                                   dev_border<float>(p.border), rows, tab);
    PIXFLOW_CUDA_CHECK_LAUNCH("bilateral");
  };
  switch (window_radius(tab)) {
    case 1:
      launch(bilateral_f32c1_kernel<1>);
      return true;
    case 2:
      launch(bilateral_f32c1_kernel<2>);
      return true;
    case 3:
      launch(bilateral_f32c1_kernel<3>);
      return true;
    case 4:
      launch(bilateral_f32c1_kernel<4>);
      return true;
    default:
      return false;
  }
}

// The per-pixel f32 kernel: (N + 1) table pairs of dynamic shared memory, a grid of at most
// kF32PixelBlocks blocks a SM (at least one block row), each block walking its column strip.
void launch_bilateral_f32(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                          const BilateralTables& tab, cudaStream_t st) {
  const int smem = int(sizeof(float2)) * (detail::bilateral_f32::bins(s.channels()) + 1);
  PIXFLOW_CUDA_CHECK(cudaFuncSetAttribute(bilateral_f32_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const long long blocks_x = (d.width() + kPixelBX - 1) / kPixelBX;
  long long cap = kSmCount * kF32PixelBlocks / blocks_x;
  if (cap < 1) cap = 1;
  const long long blocks_y = (d.height() + kPixelBY - 1) / kPixelBY;
  const long long gy = blocks_y < cap ? blocks_y : cap;
  bilateral_f32_kernel<<<grid_2d(d.width(), gy, kPixelBX, 1), dim3(kPixelBX, kPixelBY), smem, st>>>(
      dev_view<float>(s), dev_view<float>(d), dev_border<float>(p.border), tab);
  PIXFLOW_CUDA_CHECK_LAUNCH("bilateral");
}

template <class T>
void launch_bilateral(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                      cudaStream_t st) {
  const BilateralTables tab = make_tables(p, s.channels());
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    if (s.channels() == 1 && launch_bilateral_u8c1(s, d, p, tab, st)) return;
    if (s.channels() == 3 && launch_bilateral_u8c3(s, d, p, tab, st)) return;
    bilateral_kernel<<<grid_2d(d.width(), d.height(), kPixelBX, kPixelBY), dim3(kPixelBX, kPixelBY),
                       0, st>>>(dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d),
                                dev_border<std::uint8_t>(p.border), tab);
    PIXFLOW_CUDA_CHECK_LAUNCH("bilateral");
  } else {
    if (s.channels() == 1 && launch_bilateral_f32c1(s, d, p, tab, st)) return;
    launch_bilateral_f32(s, d, p, tab, st);
  }
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_bilateral) {
  using namespace pixflow;
  // The kernel takes 1 to 4 channels (sums and the u8 colour table are sized for 4); core
  // validates 1 or 3 (cv::bilateralFilter's set).
  cuda::add_depths<Depth::u8, Depth::f32>(
      table, "bilateral", [](auto t) { return &cuda::launch_bilateral<decltype(t)>; });
}
