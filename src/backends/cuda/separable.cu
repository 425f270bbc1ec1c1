// Separable linear filters on CUDA: box (this file), gaussian and sobel/scharr, all through
// the fused separable kernel of common/separable.cuh.
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/box_warp_u8.cuh"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/f32_3x3.cuh"
#include "src/backends/cuda/gaussian_u8_dp.cuh"
#include "src/backends/cuda/u8_3x3.cuh"
#include "src/base/backend.hpp"
#include "src/base/deriv_taps.hpp"
#include "src/base/gaussian_taps.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

// The packed 3x3 path (u8_3x3.cuh) for u8 x 1 and u8 x 3; false when it does not apply.
// (u8x3 took the byte-tile kernels: box 26.9, Gaussian 30.6 us at 1920x1080.)
bool try_linear3_u8(const ConstImageView& s, const ImageView& d, const Border& border,
                    const u8_3x3::Linear3& k, cudaStream_t st) {
  return u8_3x3::launch_3x3(
             u8_3x3::linear3_rows8_kernel<1>, u8_3x3::linear3_u8_kernel<u8_3x3::kRowsTall>,
             u8_3x3::linear3_u8_kernel<u8_3x3::kRowsShort>, s, d, border, "linear3", st, k) ||
         u8_3x3::launch_3x3_cn<3>(
             u8_3x3::linear3_rows8_kernel<3>, u8_3x3::linear3_u8_kernel<u8_3x3::kRowsTall, 3>,
             u8_3x3::linear3_u8_kernel<u8_3x3::kRowsShort, 3>, s, d, border, "linear3", st, k);
}

// ---- box -------------------------------------------------------------------------------
// Integers: exact window sums (u8 in 32 bits, u16 in 64), then round-half-even division by
// n or saturation. f32: double sums, float(sum / n) — the reference's rule.
template <class T>
struct BoxAcc {
  using type = long long;
};
template <>
struct BoxAcc<std::uint8_t> {
  using type = int;
};
template <>
struct BoxAcc<float> {
  using type = double;
};

template <class T>
struct BoxPolicy {
  using Acc = typename BoxAcc<T>::type;
  // The reference sums each column over kh rows first, then across kw columns; the f32
  // double sums must run in that order to round identically.
  static constexpr bool kVerticalFirst = true;
  long long n;
  bool normalize;
  __device__ Acc h_init() const { return Acc(0); }
  __device__ Acc h(Acc a, T v, int) const { return a + Acc(v); }
  __device__ Acc v_init() const { return Acc(0); }
  __device__ Acc v(Acc a, Acc v, int) const { return a + v; }
  __device__ T out(Acc a) const {
    if constexpr (std::is_same_v<T, float>) {
      return normalize ? float(a / double(n)) : float(a);
    } else {
      return normalize ? T(detail::div_round_half_even((long long)a, n))
                       : detail::saturate_cast<T>((std::int64_t)a);
    }
  }
};

// u8, any window, 1-4 channels: byte tiles (common/byte_tile.cuh). Vertical pass: running
// column sums, two bytes per 32-bit word (16-bit lanes: a column sum is <= 255 * 255); one
// thread per tile column word and row segment. Horizontal pass: each thread a run of
// kBoxRun samples of one row, running window sums per channel (S(e + cn) = S(e) +
// C(e + kw cn) - C(e)) in 32 bits, then the exact division (detail::RecipU32). A warp's 32
// threads take 32 rows of the same run; the column-sum rows have an odd pitch in words, so
// their reads fall in 32 different banks.
constexpr int kBoxRun = 32;

struct BoxU8 {
  int kw, kh, ax, ay;
  detail::RecipU32 recip;        // any n
  detail::RecipOddU8 recip_odd;  // odd n < 32768: three float operations
  bool normalize, odd;
};

// Column-sum row pitch in u16: tw + 2 (tw is a multiple of 16, so tw / 2 + 1 words: odd).
__host__ __device__ inline int box_col_pitch(int tw) {
  return tw + 2;
}
inline std::size_t box_u8_smem(int kw, int kh, int cn, int bh) {
  const int tw = byte_tile_width(kw, cn);
  return (std::size_t(tw) * (bh + kh - 1) + 15) / 16 * 16 +
         std::size_t(bh) * box_col_pitch(tw) * sizeof(std::uint16_t);
}

template <int CN>
__global__ void __launch_bounds__(kByteTileThreads)
    box_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                  DevBorder<std::uint8_t> border, BoxU8 p, int bh, int rows_of_blocks,
                  bool src_aligned, bool dst_aligned) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tw = byte_tile_width(p.kw, CN), th = bh + p.kh - 1, nw = tw / 4;
  const int cp = box_col_pitch(tw);
  unsigned char* tile = smem_raw;
  unsigned* stage = reinterpret_cast<unsigned*>(smem_raw);  // after the vertical pass
  std::uint16_t* col =
      reinterpret_cast<std::uint16_t*>(smem_raw + (std::size_t(tw) * th + 15) / 16 * 16);
  const long long wc = (long long)dst.w * CN;
  const long long e0 = (long long)blockIdx.x * kByteTileBW;
  // Row segments: as many as the threads allow, each at least 16 rows (a segment first sums
  // its kh rows).
  const int nseg = max(1, min(kByteTileThreads / nw, bh / 16));
  constexpr int kRuns = kByteTileBW / kBoxRun;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * bh;
    const ByteTile t = byte_tile(e0, y0, p.kw, p.kh, p.ax, p.ay, CN, bh);
    load_byte_tile(tile, t, p.ay, src, border, src_aligned);
    const int rows = int(min((long long)bh, (long long)dst.h - y0));

    // Vertical: column sums of tile rows r .. r + kh - 1, bytes 0, 2 of a word in `ev`,
    // 1, 3 in `od` (modular 32-bit adds are exact: every lane ends in [0, 2^16)).
    const int seg_rows = (rows + nseg - 1) / nseg;
    for (int it = threadIdx.x; it < nw * nseg; it += blockDim.x) {
      const int w = it % nw, sg = it / nw;
      const int r0 = sg * seg_rows, r1 = min(rows, r0 + seg_rows);
      if (r0 >= r1) continue;
      const unsigned* tc = reinterpret_cast<const unsigned*>(tile) + w;
      unsigned ev = 0, od = 0;
      for (int j = 0; j < p.kh; ++j) {
        const unsigned x = tc[(r0 + j) * nw];
        ev += __byte_perm(x, 0, 0x4240);
        od += __byte_perm(x, 0, 0x4341);
      }
      for (int r = r0;;) {
        unsigned* c = reinterpret_cast<unsigned*>(col + r * cp) + 2 * w;
        c[0] = __byte_perm(ev, od, 0x5410);
        c[1] = __byte_perm(ev, od, 0x7632);
        if (++r >= r1) break;
        const unsigned xi = tc[(r + p.kh - 1) * nw], xo = tc[(r - 1) * nw];
        ev = ev + __byte_perm(xi, 0, 0x4240) - __byte_perm(xo, 0, 0x4240);
        od = od + __byte_perm(xi, 0, 0x4341) - __byte_perm(xo, 0, 0x4341);
      }
    }
    __syncthreads();

    // Horizontal: outputs e0 + run*kBoxRun + e of row r.
    for (int it = threadIdx.x; it < bh * kRuns; it += blockDim.x) {
      const int r = it % bh, run = it / bh;
      const long long eb = e0 + (long long)run * kBoxRun;
      if (r >= rows || eb >= wc) continue;
      const std::uint16_t* v = col + r * cp + t.off + run * kBoxRun;
      const std::uint16_t* vk = v + (p.kw - 1) * CN;  // the entering column sum
      unsigned s[CN];
#pragma unroll
      for (int c = 0; c < CN; ++c) {
        unsigned a = 0;
        for (int i = 0; i < p.kw; ++i) a += v[c + i * CN];
        s[c] = a;
      }
      unsigned packed[kBoxRun / 4];
#pragma unroll
      for (int e = 0; e < kBoxRun; ++e) {
        if (e >= CN) s[e % CN] += unsigned(vk[e]) - unsigned(v[e - CN]);
        const unsigned sum = s[e % CN];
        const unsigned q = !p.normalize ? min(sum, 255u) : p.odd ? p.recip_odd(sum) : p.recip(sum);
        if (e % 4 == 0)
          packed[e / 4] = q;
        else
          packed[e / 4] |= q << (8 * (e % 4));
      }
      unsigned* st = stage + r * kStageWords + run * (kBoxRun / 4);
#pragma unroll
      for (int i = 0; i < kBoxRun / 4; ++i) st[i] = packed[i];
    }
    __syncthreads();
    store_staged(stage, rows, dst, e0, y0, dst_aligned);
    __syncthreads();  // the next tile overwrites what this one read
  }
}

// Rows per block: 64, or 32 where 64 would not fill the GPU (launch.cuh, tall_blocks_fill)
// or the tile does not fit.
int byte_tile_rows(long long wc, long long h, std::size_t (*smem)(int, int, int, int), int kw,
                   int kh, int cn) {
  const long long bx = (wc + kByteTileBW - 1) / kByteTileBW;
  int bh = 64;
  if (!tall_blocks_fill(bx, h, 64) || smem(kw, kh, cn, 64) > kMaxSmem) bh = 32;
  return smem(kw, kh, cn, bh) <= kMaxSmem ? bh : 0;
}

bool try_box_u8_tiles(const ConstImageView& s, const ImageView& d, const BoxParams& p,
                      cudaStream_t st) {
  const int cn = s.channels();
  const long long wc = (long long)s.width() * cn;
  const int bh = byte_tile_rows(wc, s.height(), box_u8_smem, p.kw, p.kh, cn);
  if (bh == 0) return false;
  const std::size_t smem = box_u8_smem(p.kw, p.kh, cn, bh);
  const std::uint32_t n = std::uint32_t(p.kw) * std::uint32_t(p.kh);
  const BoxU8 k{p.kw,
                p.kh,
                p.kw / 2,
                p.kh / 2,
                detail::RecipU32(n),
                detail::RecipOddU8(n),
                p.normalize,
                detail::RecipOddU8::applies(n)};
  const dim3 grid = grid_2d(wc, s.height(), kByteTileBW, bh);
  const int rows = blocks_y(s.height(), bh);
  const bool sa = rows_aligned(s, 16), da = rows_aligned(d, 16);
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      PIXFLOW_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    kernel<<<grid, kByteTileThreads, smem, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(p.border), k,
        bh, rows, sa, da);
  };
  switch (cn) {
    case 1:
      launch(box_u8_kernel<1>);
      break;
    case 2:
      launch(box_u8_kernel<2>);
      break;
    case 3:
      launch(box_u8_kernel<3>);
      break;
    default:
      launch(box_u8_kernel<4>);
      break;
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("box");
  return true;
}

// box u8 x 1: the warp strips (box_warp_u8.cuh, try_box_u8_warp) come first in launch_box.

template <class T>
void launch_box(const ConstImageView& s, const ImageView& d, const BoxParams& p, cudaStream_t st) {
  if (std::is_same_v<T, std::uint8_t> && try_box_u8_warp(s, d, p, st)) return;
  if (std::is_same_v<T, std::uint8_t> && p.kw == 3 && p.kh == 3 &&
      try_linear3_u8(s, d, p.border, u8_3x3::Linear3{1, 1, 1, 1, p.normalize ? 0 : 1}, st))
    return;
  if (std::is_same_v<T, std::uint8_t> && try_box_u8_tiles(s, d, p, st)) return;
  // 3x3 on one f32 channel: f32_3x3.cuh (the same double sums in the same order).
  if (std::is_same_v<T, float> && p.kw == 3 && p.kh == 3 &&
      f32_3x3::launch_f32_3x3(f32_3x3::Box3{p.normalize}, s, d, p.border, "box", st))
    return;
  launch_separable(dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border),
                   SepWindow{p.kw, p.kh, p.kw / 2, p.kh / 2},
                   BoxPolicy<T>{(long long)p.kw * p.kh, p.normalize}, st);
}

// ---- sobel / scharr ----------------------------------------------------------------------
// The reference's order: per window row j, h_j = sum_i tx[i] * p (in i order), then
// v = sum_j ty[j] * h_j (in j order); integers exact in 32 bits (|taps| <= 20, 7 taps).
// f32 uses explicitly rounded float operations (no FMA), then v * scale + delta in float.
struct DerivTaps {
  int x[detail::kMaxDerivTaps], y[detail::kMaxDerivTaps];
  int nx, ny;
};

template <class T, class D>
struct DerivPolicy {
  using Acc = std::conditional_t<std::is_same_v<T, float>, float, int>;
  static constexpr bool kVerticalFirst = false;
  DerivTaps t;
  double scale, delta;
  bool plain;
  __device__ Acc h_init() const { return Acc(0); }
  __device__ Acc h(Acc a, T v, int i) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(a, __fmul_rn(float(t.x[i]), v));
    } else {
      return a + t.x[i] * int(v);
    }
  }
  __device__ Acc v_init() const { return Acc(0); }
  __device__ Acc v(Acc a, Acc hv, int j) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(a, __fmul_rn(float(t.y[j]), hv));
    } else {
      return a + t.y[j] * hv;
    }
  }
  __device__ D out(Acc a) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(__fmul_rn(a, float(scale)), float(delta));
    } else if constexpr (std::is_same_v<D, float>) {
      return float(__dadd_rn(__dmul_rn(double(a), scale), delta));
    } else {
      return plain ? detail::saturate_cast<D>(std::int64_t(a))
                   : detail::saturate_cast<D>(__dadd_rn(__dmul_rn(double(a), scale), delta));
    }
  }
};

template <class T, class D>
void launch_deriv(const ConstImageView& s, const ImageView& d, const DerivTaps& t, double scale,
                  double delta, const Border& border, const char* op, cudaStream_t st) {
  DerivPolicy<T, D> pol{t, scale, delta, scale == 1.0 && delta == 0.0};
  launch_separable(dev_view<T>(s), dev_view<D>(d), dev_border<T>(border),
                   SepWindow{t.nx, t.ny, t.nx / 2, t.ny / 2}, pol, st);
  (void)op;
}

// The packed 3x3 u8 -> s16 kernel for taps X (rows), Y (columns) on u8 x CN.
template <int CN, class X, class Y>
bool try_deriv3_u8(const ConstImageView& s, const ImageView& d, const Border& border,
                   const char* op, cudaStream_t st) {
  return u8_3x3::launch_3x3_cn<CN>(u8_3x3::deriv3_rows8_kernel<CN, X, Y>,
                                   u8_3x3::deriv3_u8_kernel<u8_3x3::kRowsTall, CN, X, Y>,
                                   u8_3x3::deriv3_u8_kernel<u8_3x3::kRowsShort, CN, X, Y>, s, d,
                                   border, op, st, rows_aligned(s, 16));
}

// Which of deriv3_u8_packed.hpp's tap sets `taps` (3 taps) is: 0 (1,2,1), 1 (-1,0,1),
// 2 (1,-2,1), 3 (3,10,3), else -1.
int deriv3_tap_set(const int* taps) {
  using namespace deriv3_u8;
  auto is = [&](auto t) { return taps[0] == t.t0 && taps[1] == t.t1 && taps[2] == t.t2; };
  return is(Smooth121{}) ? 0 : is(Diff101{}) ? 1 : is(Diff121{}) ? 2 : is(Smooth3103{}) ? 3 : -1;
}

// Every 3x3 tap pair sobel (k = 3, or k = 1 with both orders > 0) and scharr make, on u8 x CN.
template <int CN>
bool try_deriv3_u8_taps(int sx, int sy, const ConstImageView& s, const ImageView& d,
                        const Border& border, const char* op, cudaStream_t st) {
  using namespace deriv3_u8;
  switch (sx * 4 + sy) {
    case 0 * 4 + 1:
      return try_deriv3_u8<CN, Smooth121, Diff101>(s, d, border, op, st);
    case 0 * 4 + 2:
      return try_deriv3_u8<CN, Smooth121, Diff121>(s, d, border, op, st);
    case 1 * 4 + 0:
      return try_deriv3_u8<CN, Diff101, Smooth121>(s, d, border, op, st);
    case 1 * 4 + 1:
      return try_deriv3_u8<CN, Diff101, Diff101>(s, d, border, op, st);
    case 1 * 4 + 2:
      return try_deriv3_u8<CN, Diff101, Diff121>(s, d, border, op, st);
    case 2 * 4 + 0:
      return try_deriv3_u8<CN, Diff121, Smooth121>(s, d, border, op, st);
    case 2 * 4 + 1:
      return try_deriv3_u8<CN, Diff121, Diff101>(s, d, border, op, st);
    case 2 * 4 + 2:
      return try_deriv3_u8<CN, Diff121, Diff121>(s, d, border, op, st);
    case 1 * 4 + 3:
      return try_deriv3_u8<CN, Diff101, Smooth3103>(s, d, border, op, st);
    case 3 * 4 + 1:
      return try_deriv3_u8<CN, Smooth3103, Diff101>(s, d, border, op, st);
    default:
      return false;
  }
}

void run_deriv(const ConstImageView& s, const ImageView& d, const DerivTaps& t, double scale,
               double delta, const Border& border, const char* op, cudaStream_t st) {
  // 3x3 u8 -> s16 with scale 1 and delta 0 (sobel k=3 and k=1 with both orders, scharr) on 1
  // or 3 channels (4 spilled in the short shape's 40 registers and is not benchmarked): the packed
  // kernel with the taps compiled in, which stores four s16 at a time (8-byte aligned destination
  // rows). Other taps, scales or alignments: the engine.
  if (s.depth() == Depth::u8 && d.depth() == Depth::s16 && t.nx == 3 && t.ny == 3 && scale == 1.0 &&
      delta == 0.0) {
    const int sx = deriv3_tap_set(t.x), sy = deriv3_tap_set(t.y);
    const int cn = s.channels();
    if (sx >= 0 && sy >= 0 &&
        (cn == 1   ? try_deriv3_u8_taps<1>(sx, sy, s, d, border, op, st)
         : cn == 3 ? try_deriv3_u8_taps<3>(sx, sy, s, d, border, op, st)
                   : false))
      return;
  }
  // 3x3 f32 -> f32: f32_3x3.cuh (the same rounded float operations in the same order).
  if (s.depth() == Depth::f32 && t.nx == 3 && t.ny == 3) {
    f32_3x3::Linear3 k{};
    for (int i = 0; i < 3; ++i) {
      k.tx[i] = float(t.x[i]);
      k.ty[i] = float(t.y[i]);
    }
    k.scale = float(scale);
    k.delta = float(delta);
    k.deriv = true;
    if (f32_3x3::launch_f32_3x3(k, s, d, border, op, st)) return;
  }
  if (s.depth() == Depth::f32)
    launch_deriv<float, float>(s, d, t, scale, delta, border, op, st);
  else if (d.depth() == Depth::s16)
    launch_deriv<std::uint8_t, std::int16_t>(s, d, t, scale, delta, border, op, st);
  else
    launch_deriv<std::uint8_t, float>(s, d, t, scale, delta, border, op, st);
}

// ---- gaussian ------------------------------------------------------------------------
// The reference's fixed-point rule (src/ref/gaussian.cpp, docs/ops/gaussian.md): u8 — Q8
// taps, 32-bit sums, (s + 2^15) >> 16; u16 — Q16 taps, 64-bit sums, (s + 2^31) >> 32; f32 —
// float taps, rounded float multiply-adds in index order. Taps come from the shared header.
template <class T>
struct GaussAcc {
  using type = int;
};
template <>
struct GaussAcc<std::uint16_t> {
  using type = long long;
};
template <>
struct GaussAcc<float> {
  using type = float;
};

template <class T>
struct GaussPolicy {
  using Acc = typename GaussAcc<T>::type;
  static constexpr bool kVerticalFirst = false;
  using Tap = std::conditional_t<std::is_same_v<T, float>, float, std::int32_t>;
  Tap tx[detail::kGaussianMaxK], ty[detail::kGaussianMaxK];
  int shift;
  __device__ Acc h_init() const { return Acc(0); }
  __device__ Acc h(Acc a, T v, int i) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(a, __fmul_rn(v, tx[i]));
    } else {
      return a + Acc(v) * Acc(tx[i]);
    }
  }
  __device__ Acc v_init() const { return Acc(0); }
  __device__ Acc v(Acc a, Acc hv, int j) const {
    if constexpr (std::is_same_v<T, float>) {
      return __fadd_rn(a, __fmul_rn(hv, ty[j]));
    } else {
      return a + hv * Acc(ty[j]);
    }
  }
  __device__ T out(Acc a) const {
    if constexpr (std::is_same_v<T, float>) {
      return a;
    } else {
      return detail::saturate_cast<T>(px_round_shift_s64(std::int64_t(a), shift));
    }
  }
};

// u8, any odd window, 1-4 channels: byte tiles of kGaussBH rows. The rule's sums are
// integers (Q8 taps >= 0 summing to 256): a first-pass sum is <= 255 * 256 = 65280 and a
// second-pass sum <= 65280 * 256 < 2^24, so the passes may run in either order and the
// second may run in float (every partial sum an integer < 2^24: exact).
// - Vertical, two samples per 32-bit word: bytes 0, 2 and 1, 3 of a tile word in 16-bit
//   lanes, acc += tap * lanes with one IMAD (a lane's product and sum stay < 2^16, so no
//   lane carries into the next); a thread a tile column word and kGaussR output rows.
//   The sums go to shared memory as floats (from their bits: 2^23 + v - 2^23, exact).
// - Horizontal, in float: a thread kGaussRun samples of one row (a warp's lanes on 32
//   rows, an odd row pitch: 32 banks), sum_i tap_i * V(e + i cn) by fused multiply-adds in
//   tap order, then (sum + 2^15) >> 16 on the integer; outputs staged and stored along rows.
// KW, KH > 0: the window at compile time (loads and taps at constant offsets); 0: run time.
constexpr int kGaussBH = 32, kGaussR = 8, kGaussRun = 16;

struct GaussU8 {
  int kw, kh;
  std::int32_t ty[detail::kGaussianMaxK];  // vertical Q8 taps
  float tx[detail::kGaussianMaxK];         // horizontal Q8 taps as floats (exact)
};

__host__ __device__ inline int gauss_v_pitch(int tw) {
  return tw + 1;  // floats; odd
}
inline std::size_t gauss_u8_smem(int kw, int kh, int cn) {
  const int tw = byte_tile_width(kw, cn);
  return (std::size_t(tw) * (kGaussBH + kh - 1) + 15) / 16 * 16 +
         std::size_t(kGaussBH) * gauss_v_pitch(tw) * sizeof(float);
}

template <int CN, int KW, int KH>
__global__ void __launch_bounds__(kByteTileThreads)
    gaussian_u8_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                       DevBorder<std::uint8_t> border, GaussU8 p, int rows_of_blocks,
                       bool src_aligned, bool dst_aligned) {
  if constexpr (KW > 0) p.kw = KW;
  if constexpr (KH > 0) p.kh = KH;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int tw = byte_tile_width(p.kw, CN), th = kGaussBH + p.kh - 1, nw = tw / 4;
  const int vp = gauss_v_pitch(tw);
  unsigned char* tile = smem_raw;
  unsigned* stage = reinterpret_cast<unsigned*>(smem_raw);  // after the vertical pass
  float* V = reinterpret_cast<float*>(smem_raw + (std::size_t(tw) * th + 15) / 16 * 16);
  const long long wc = (long long)dst.w * CN;
  const long long e0 = (long long)blockIdx.x * kByteTileBW;
  constexpr int kRuns = kByteTileBW / kGaussRun;
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * kGaussBH;
    // The window's anchor is its centre (odd sizes).
    const ByteTile tt = byte_tile(e0, y0, p.kw, p.kh, p.kw / 2, p.kh / 2, CN, kGaussBH);
    load_byte_tile(tile, tt, p.kh / 2, src, border, src_aligned);
    const int rows = int(min((long long)kGaussBH, (long long)dst.h - y0));

    // Vertical: word column w, output rows 8g .. 8g + 7.
    for (Walk2D i(nw); i.r < kGaussBH / kGaussR; i.next()) {
      const unsigned* tc = reinterpret_cast<const unsigned*>(tile) + i.r * kGaussR * nw + i.w;
      unsigned ev[kGaussR], od[kGaussR];
#pragma unroll
      for (int o = 0; o < kGaussR; ++o) ev[o] = od[o] = 0;
      if constexpr (KH > 0) {
#pragma unroll
        for (int j = 0; j < kGaussR + KH - 1; ++j) {
          const unsigned x = tc[j * nw];
          const unsigned xe = __byte_perm(x, 0, 0x4240), xo = __byte_perm(x, 0, 0x4341);
#pragma unroll
          for (int o = 0; o < kGaussR; ++o)
            if (j - o >= 0 && j - o < KH) {
              ev[o] += unsigned(p.ty[j - o]) * xe;
              od[o] += unsigned(p.ty[j - o]) * xo;
            }
        }
      } else {
        for (int j = 0; j < kGaussR + p.kh - 1; ++j) {
          const unsigned x = tc[j * nw];
          const unsigned xe = __byte_perm(x, 0, 0x4240), xo = __byte_perm(x, 0, 0x4341);
#pragma unroll
          for (int o = 0; o < kGaussR; ++o)
            if (j - o >= 0 && j - o < p.kh) {
              ev[o] += unsigned(p.ty[j - o]) * xe;
              od[o] += unsigned(p.ty[j - o]) * xo;
            }
        }
      }
#pragma unroll
      for (int o = 0; o < kGaussR; ++o) {
        float* v = V + (i.r * kGaussR + o) * vp + 4 * i.w;
        v[0] = __int_as_float(int(0x4B000000u | (ev[o] & 0xffffu))) - 8388608.0f;
        v[1] = __int_as_float(int(0x4B000000u | (od[o] & 0xffffu))) - 8388608.0f;
        v[2] = __int_as_float(int(0x4B000000u | (ev[o] >> 16))) - 8388608.0f;
        v[3] = __int_as_float(int(0x4B000000u | (od[o] >> 16))) - 8388608.0f;
      }
    }
    __syncthreads();

    // Horizontal: row r (lane), outputs e0 + run * kGaussRun + e.
    for (int it = threadIdx.x; it < kGaussBH * kRuns; it += blockDim.x) {
      const int r = it % kGaussBH, run = it / kGaussBH;
      if (r >= rows || e0 + (long long)run * kGaussRun >= wc) continue;
      const float* v = V + r * vp + tt.off + run * kGaussRun;
      float acc[kGaussRun];
#pragma unroll
      for (int e = 0; e < kGaussRun; ++e) acc[e] = 0.0f;
      if constexpr (KW > 0) {
#pragma unroll
        for (int k = 0; k < KW; ++k)
#pragma unroll
          for (int e = 0; e < kGaussRun; ++e) acc[e] = __fmaf_rn(v[e + k * CN], p.tx[k], acc[e]);
      } else {
        for (int k = 0; k < p.kw; ++k)
#pragma unroll
          for (int e = 0; e < kGaussRun; ++e) acc[e] = __fmaf_rn(v[e + k * CN], p.tx[k], acc[e]);
      }
      unsigned packed[kGaussRun / 4];
#pragma unroll
      for (int e = 0; e < kGaussRun; ++e) {
        const unsigned q = (__float2uint_rz(acc[e]) + 32768u) >> 16;
        if (e % 4 == 0)
          packed[e / 4] = q;
        else
          packed[e / 4] |= q << (8 * (e % 4));
      }
      unsigned* st = stage + r * kStageWords + run * (kGaussRun / 4);
#pragma unroll
      for (int q = 0; q < kGaussRun / 4; ++q) st[q] = packed[q];
    }
    __syncthreads();
    store_staged(stage, rows, dst, e0, y0, dst_aligned);
    __syncthreads();  // the next tile overwrites the stage and V
  }
}

bool try_gaussian_u8_tiles(const ConstImageView& s, const ImageView& d, const GaussianParams& p,
                           cudaStream_t st) {
  if (p.kw % 2 == 0 || p.kh % 2 == 0) return false;
  const int cn = s.channels();
  const std::size_t smem = gauss_u8_smem(p.kw, p.kh, cn);
  if (smem > kMaxSmem) return false;
  GaussU8 k{};
  k.kw = p.kw;
  k.kh = p.kh;
  std::int32_t tx[detail::kGaussianMaxK];
  detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU8, tx);
  detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU8, k.ty);
  for (int i = 0; i < p.kw; ++i) {
    if (tx[i] < 0) return false;  // the float pass needs non-negative partial sums
    k.tx[i] = float(tx[i]);
  }
  for (int j = 0; j < p.kh; ++j)
    if (k.ty[j] < 0) return false;
  const long long wc = (long long)s.width() * cn;
  const dim3 grid = grid_2d(wc, s.height(), kByteTileBW, kGaussBH);
  const int rows = blocks_y(s.height(), kGaussBH);
  const bool sa = rows_aligned(s, 16), da = rows_aligned(d, 16);
  auto launch = [&](auto kernel) {
    if (smem > 48 * 1024)
      PIXFLOW_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    kernel<<<grid, kByteTileThreads, smem, st>>>(
        dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(p.border), k,
        rows, sa, da);
  };
  // The benchmarked windows (sigma 2 and 8 on u8: 13 and 49) with every loop unrolled.
  const int kk = p.kw == p.kh ? p.kw : 0;
  auto by_window = [&](auto cn_tag) {
    constexpr int C = decltype(cn_tag)::value;
    if (kk == 13)
      launch(gaussian_u8_kernel<C, 13, 13>);
    else if (kk == 49)
      launch(gaussian_u8_kernel<C, 49, 49>);
    else
      launch(gaussian_u8_kernel<C, 0, 0>);
  };
  switch (cn) {
    case 1:
      by_window(std::integral_constant<int, 1>{});
      break;
    case 2:
      by_window(std::integral_constant<int, 2>{});
      break;
    case 3:
      by_window(std::integral_constant<int, 3>{});
      break;
    default:
      by_window(std::integral_constant<int, 4>{});
      break;
  }
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian");
  return true;
}

template <class T>
void launch_gaussian(const ConstImageView& s, const ImageView& d, const GaussianParams& p,
                     cudaStream_t st) {
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    if (p.kw == 3 && p.kh == 3) {
      std::int32_t tx[3], ty[3];
      detail::gaussian_taps_fixed(3, p.sigma, detail::kGaussianBitsU8, tx);
      detail::gaussian_taps_fixed(3, p.sigma_y, detail::kGaussianBitsU8, ty);
      const u8_3x3::Linear3 k{unsigned(tx[0]), unsigned(tx[1]), unsigned(ty[0]), unsigned(ty[1]),
                              2};
      if (tx[0] == tx[2] && ty[0] == ty[2] && try_linear3_u8(s, d, p.border, k, st)) return;
    }
    if (try_gaussian_u8_dp(s, d, p, st) || try_gaussian_u8_tiles(s, d, p, st)) return;
  }
  GaussPolicy<T> pol{};
  if constexpr (std::is_same_v<T, float>) {
    // 3x3 on one f32 channel: f32_3x3.cuh (the same rounded float operations in the same
    // order; any taps).
    if (p.kw == 3 && p.kh == 3) {
      f32_3x3::Linear3 k{};
      detail::gaussian_taps_float(3, p.sigma, k.tx);
      detail::gaussian_taps_float(3, p.sigma_y, k.ty);
      k.deriv = false;
      if (f32_3x3::launch_f32_3x3(k, s, d, p.border, "gaussian", st)) return;
    }
    detail::gaussian_taps_float(p.kw, p.sigma, pol.tx);
    detail::gaussian_taps_float(p.kh, p.sigma_y, pol.ty);
    pol.shift = 0;
  } else {
    const int bits =
        std::is_same_v<T, std::uint8_t> ? detail::kGaussianBitsU8 : detail::kGaussianBitsU16;
    detail::gaussian_taps_fixed(p.kw, p.sigma, bits, pol.tx);
    detail::gaussian_taps_fixed(p.kh, p.sigma_y, bits, pol.ty);
    pol.shift = 2 * bits;
  }
  launch_separable(dev_view<T>(s), dev_view<T>(d), dev_border<T>(p.border),
                   SepWindow{p.kw, p.kh, p.kw / 2, p.kh / 2}, pol, st);
}

void gaussian(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
              cudaStream_t st) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) -> void { launch_gaussian<decltype(t)>(src, dst, p, st); });
}

void sobel(const ConstImageView& src, const ImageView& dst, const SobelParams& p, cudaStream_t st) {
  DerivTaps t{};
  t.nx = detail::sobel_taps_len(p.k, p.dx);
  t.ny = detail::sobel_taps_len(p.k, p.dy);
  detail::sobel_taps(p.k, p.dx, t.x);
  detail::sobel_taps(p.k, p.dy, t.y);
  run_deriv(src, dst, t, p.scale, p.delta, p.border, "sobel", st);
}

void scharr(const ConstImageView& src, const ImageView& dst, const ScharrParams& p,
            cudaStream_t st) {
  DerivTaps t{};
  t.nx = t.ny = 3;
  detail::scharr_taps(p.dx, t.x);
  detail::scharr_taps(p.dy, t.y);
  run_deriv(src, dst, t, p.scale, p.delta, p.border, "scharr", st);
}

void box(const ConstImageView& src, const ImageView& dst, const BoxParams& p, cudaStream_t st) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(), [&](auto t) -> void { launch_box<decltype(t)>(src, dst, p, st); });
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_separable) {
  using namespace pixflow;
  const auto u8_u16_f32 = cuda::depths({Depth::u8, Depth::u16, Depth::f32});
  cuda::add<&cuda::box>(table, "box", u8_u16_f32);
  // `p` arrives resolved (kw, kh, sigma, sigma_y all set) by core.
  cuda::add<&cuda::gaussian>(table, "gaussian", u8_u16_f32);
  // Derivatives: u8 -> s16 or f32, f32 -> f32 (the destination depth is validated by core).
  cuda::add<&cuda::sobel>(table, "sobel", cuda::depths({Depth::u8, Depth::f32}));
  cuda::add<&cuda::scharr>(table, "scharr", cuda::depths({Depth::u8, Depth::f32}));
}
