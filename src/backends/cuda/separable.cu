// Separable linear filters on CUDA: box (this file), gaussian and sobel/scharr, all through
// the fused separable kernel of common/separable.cuh.
#include <cstdint>
#include <type_traits>

#include "src/backends/cuda/box_warp_u8.hpp"
#include "src/backends/cuda/common/byte_tile.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/common/separable.cuh"
#include "src/backends/cuda/f32_3x3.cuh"
#include "src/backends/cuda/gaussian_u8_dp.hpp"
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

// ---- box u8 x 1: warp strips (box_warp_u8.hpp) ----------------------------------------------
// Odd windows 5..31 wide (kh <= 255, odd when normalised), rows 8-byte aligned: a warp a strip of
// 256 columns and a segment of rows, the column sums in registers, the horizontal window by a
// warp scan and shuffles: no shared memory on the interior path and no block barrier (warps
// are independent). The byte-tile kernel stays the fallback.
namespace bw = box_warp;

template <int KW, bool kSum>
__global__ void __launch_bounds__(bw::kThreads, bw::min_blocks(KW, kSum))
    box_warp_u8_kernel(bw::Img src, bw::Img dst, bw::Params p) {
  // Source columns of the lanes that gather (border columns): each thread writes and reads
  // only its own 8 (no barrier); shared memory rather than 8 registers a thread.
  __shared__ int sources[bw::kThreads][bw::kLaneCols];
  const int lane = int(threadIdx.x) % bw::kLanes;
  const int strip = int(blockIdx.x) * bw::kWarps + int(threadIdx.x) / bw::kLanes;
  const int xb = bw::lane_col(strip, lane, KW);
  const bool direct = bw::lane_direct(xb, src.w);
  int* my = sources[threadIdx.x];
  if (!direct) bw::lane_sources(xb, src.w, p.border, my);
  if (strip >= p.strips) return;  // the whole warp: strips are warp-uniform
  const bool all_direct = __all_sync(0xffffffffu, direct);
  // Edge warps (not all_direct) by words where every lane's bytes allow (box_warp_u8.hpp,
  // plan_pick); the others gather (BorderRows).
  bw::Pick pk;
  const bool pick = __all_sync(0xffffffffu, bw::plan_pick(xb, lane, src.w, p.border, KW, pk));
  const unsigned cw = p.value * 0x01010101u;
  const bool out_lane = lane >= bw::first_out_lane(KW) && lane < bw::end_out_lane(KW) && xb < dst.w;
  const int ay = p.kh / 2;
  // A segment's rows: ys - ay - 1 (the first step takes it off) to ye - 1 - ay + kh - 1.
  // rows: a cursor (box_warp_u8.hpp) at row ys - ay - 1, the first the segment reads.
  auto segment = [&](long long ys, int n, auto rows) {
    // A used row: the pick path's select from the lane's and its partner's words of the row.
    auto use = [&](bw::Row8 r) {
      if constexpr (decltype(rows)::kPick) {
        const bw::Row8 o{__shfl_sync(0xffffffffu, r.lo, pk.partner),
                         __shfl_sync(0xffffffffu, r.hi, pk.partner)};
        return bw::select8(r, o, pk);
      } else {
        return r;
      }
    };
    // Rows ys - ay - 1 .. ys - ay + kh - 2 (row ys's window and the row before it), kAhead
    // loads in flight.
    bw::Cols c{0, 0, 0, 0};
    auto in = rows;
    int i = 0;
    for (; i + bw::kAhead <= p.kh; i += bw::kAhead) {
      bw::Row8 r[bw::kAhead];
#pragma unroll
      for (int k = 0; k < bw::kAhead; ++k) {
        r[k] = in.load(xb, direct, my, p.value);
        in.next();
      }
#pragma unroll
      for (int k = 0; k < bw::kAhead; ++k) bw::enter(c, use(r[k]));
    }
    for (; i < p.kh; ++i) {
      bw::enter(c, use(in.load(xb, direct, my, p.value)));
      in.next();
    }
    // Output row ys + r: row ys + r - ay + kh - 1 enters (`in` is there for r = 0), row ys +
    // r - ay - 1 leaves (`rows`). qi/qo[k] hold those of rows r with r % kAhead = k (a ring,
    // indices constant after unrolling). The cursors move on every row; only rows the segment
    // reads are loaded.
    auto refill = [&](bw::Row8& q, auto& cur, bool want) {
      if (want) q = cur.load(xb, direct, my, p.value);
      cur.next();
    };
    bw::Row8 qi[bw::kAhead] = {}, qo[bw::kAhead] = {};
#pragma unroll
    for (int k = 0; k < bw::kAhead; ++k) {
      refill(qi[k], in, k < n);
      refill(qo[k], rows, k < n);
    }
    // The horizontal chain of one row: local prefixes, the other lanes' values by independent
    // shuffles (the shuffles return the lane's own value off the warp's ends: only non-output
    // lanes read those), the window sums, the finish.
    auto horizontal = [&](const bw::Cols& cs) {
      unsigned q[bw::kLaneCols];
      bw::local_prefix(cs, q);
      unsigned sum[bw::kLaneCols];
      bw::window_sums<KW>(
          [&](int dl, int k2) -> unsigned {
            const unsigned x = q[k2];
            if (dl == 0) return x;
            return dl > 0 ? __shfl_down_sync(0xffffffffu, x, dl)
                          : __shfl_up_sync(0xffffffffu, x, -dl);
          },
          sum);
      return bw::finish<kSum>(sum, p.rcp);
    };
    unsigned char* out = dst.data + ys * dst.stride + xb;  // row ys + r's column xb
    // Rows r = rb + k, rb + k + 1 (ring slots k, k + 1): both vertical steps, the refills of
    // their slots, both horizontal chains (independent: the scheduler interleaves them), both
    // stores last so that no store splits the chains' basic block.
    auto pair = [&](int rb, int k) {
      bw::Cols c0 = c;
      bw::step(c0, use(qi[k]), use(qo[k]));
      c = c0;
      bw::step(c, use(qi[k + 1]), use(qo[k + 1]));
      refill(qi[k], in, rb + k + bw::kAhead < n);
      refill(qo[k], rows, rb + k + bw::kAhead < n);
      refill(qi[k + 1], in, rb + k + 1 + bw::kAhead < n);
      refill(qo[k + 1], rows, rb + k + 1 + bw::kAhead < n);
      const bw::Row8 o0 = horizontal(c0), o1 = horizontal(c);
      if (out_lane) {
        bw::store8(out, xb, dst.w, o0);
        bw::store8(out + dst.stride, xb, dst.w, o1);
      }
      out += 2 * dst.stride;
    };
    static_assert(bw::kAhead == 4, "the row loop takes the ring as two pairs");
    int rb = 0;
    for (; rb + bw::kAhead <= n; rb += bw::kAhead) {
      pair(rb, 0);
      pair(rb, 2);
    }
    // The last n % 4 rows (slots 0, 1, 2; already loaded: nothing more to refill).
    if (rb + 2 <= n) pair(rb, 0);
    auto single = [&](int k) {
      bw::step(c, use(qi[k]), use(qo[k]));
      const bw::Row8 o = horizontal(c);
      if (out_lane) bw::store8(out, xb, dst.w, o);
    };
    if (n - rb == 1) single(0);  // ring slots by constants (a runtime index: local memory)
    if (n - rb == 3) single(2);
  };
  for (long long sg = blockIdx.y; sg < p.segs; sg += gridDim.y) {
    const long long ys = sg * p.seg_rows;
    const int n = int(min((long long)dst.h - ys, (long long)p.seg_rows));
    const long long y0 = ys - ay - 1;  // the first row the segment reads
    // Segments whose rows all lie inside the image (all but the first and last one or two)
    // skip the border rule's tests and the constant's row.
    // Edge warps (pick) load one word a lane a row like the others; warps whose lanes' bytes
    // are not in whole words (w % 8 != 0, tiny images) gather on every segment.
    const bool inside = bw::segment_inside(ys, n, p.kh, src.h);
    if (inside && all_direct)
      segment(ys, n, bw::InsideRows<true>{src.data + y0 * src.stride + xb, src.stride});
    else if (inside && pick)
      segment(ys, n,
              bw::PickRows<true>{src.data + y0 * src.stride + pk.off, src.stride, pk.ld, cw});
    else if (pick && !all_direct)
      segment(ys, n, bw::PickRows<false>{&src, y0, p.border, pk.off, pk.ld, cw});
    else
      segment(ys, n, bw::BorderRows{&src, y0, p.border});
  }
}

template <int KW>
void launch_box_warp(int kw, const dim3& grid, const bw::Img& si, const bw::Img& di,
                     const bw::Params& k, bool sum, cudaStream_t st) {
  if constexpr (KW <= bw::kMaxKw) {
    if (kw != KW) return launch_box_warp<KW + 2>(kw, grid, si, di, k, sum, st);
    if (sum)
      box_warp_u8_kernel<KW, true><<<grid, bw::kThreads, 0, st>>>(si, di, k);
    else
      box_warp_u8_kernel<KW, false><<<grid, bw::kThreads, 0, st>>>(si, di, k);
  }
}

bool try_box_u8_warp(const ConstImageView& s, const ImageView& d, const BoxParams& p,
                     cudaStream_t st) {
  // Widths under 2^30 (int columns), heights under 2^23 (border_index32's range).
  if (s.channels() != 1 || !bw::takes(p.kw, p.kh, p.normalize) || !rows_aligned(s, 8) ||
      !rows_aligned(d, 8) || s.width() >= (1 << 30) || s.height() >= (1 << 23))
    return false;
  const bw::Plan pl =
      bw::plan(s.width(), s.height(), p.kw, kSmCount, bw::min_blocks(p.kw, !p.normalize));
  const bw::Params k = bw::params_of(p.kw, p.kh, p.border, pl);
  const dim3 grid(unsigned((pl.strips + bw::kWarps - 1) / bw::kWarps),
                  unsigned(pl.segs < 65535 ? pl.segs : 65535));
  const bw::Img si{const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(s.data())),
                   s.stride(), int(s.width()), int(s.height())};
  const bw::Img di{reinterpret_cast<unsigned char*>(d.data()), d.stride(), int(d.width()),
                   int(d.height())};
  launch_box_warp<bw::kMinKw>(p.kw, grid, si, di, k, !p.normalize, st);
  PIXFLOW_CUDA_CHECK_LAUNCH("box");
  return true;
}

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
      const long long r = ((long long)a + (1ll << (shift - 1))) >> shift;
      return detail::saturate_cast<T>(std::int64_t(r));
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

// u8, 13 or 49 taps both ways, 1 or 3 channels, every tap in [0, 255]: the dot-product kernel
// (arithmetic and its bounds in gaussian_u8_dp.hpp, tested on the host there). A block:
// kByteTileBW samples x BH rows a tile, kGaussDpThreads threads, walking tiles down its
// column (by, by + gridDim.y, ..: gauss_dp_blocks_y) with the next tile's loads in flight
// during this tile's vertical pass.
// - Tile (the byte tile of common/byte_tile.cuh: rows start on a 16-byte boundary of the
//   image row): gauss_dp_tile_issue. The chunks inside the image row go by cp.async (every
//   chunk of a thread in flight at once, no registers); the edge chunks byte by byte, one
//   byte a thread (the per-chunk loop of load_byte_tile ran a chunk's 16 bytes in one lane
//   while the warp's other 31 waited: on the edge columns' blocks that was a third of the
//   kernel's instructions, at 1-2 active lanes, the s13 ncu's 24 active threads a warp).
// - Horizontal pass over all BH + KH - 1 tile rows: a thread kGaussDpRun adjacent samples of
//   two rows (a pair row), its run's data words loaded once per row (8-byte loads: a warp
//   reads 256 contiguous bytes), 4 IDP.4A a sample at 13 taps, the two rows' h packed in
//   16-bit lanes (one PRMT) and stored as pair words (H2: pair row x kByteTileBW words, quads
//   placed by gauss_dp::h2_quad so the 16-byte stores are free of bank conflicts).
// - Vertical pass: a thread 4 adjacent samples (16-byte loads of H2) x BH / 4 output rows, in
//   groups of gauss_dp::v_group_pairs row pairs (gauss_dp_v_group; scatter form: each pair
//   word of a group is loaded once and added to the rows of the group whose window holds it;
//   8 sums a pair live), each output word (4 samples) stored straight to the image: a warp's
//   32 lanes write 128 contiguous bytes of a row (whole sectors; no stage, no barrier before
//   the stores).
constexpr int kGaussDpThreads = 256, kGaussDpRun = 8;

// Rows a block (tall grid / short grid, launch.cuh tall_blocks_fill) and the blocks a SM the
// tall shape's shared memory allows (__launch_bounds__: registers <= 64 at 4). Tall: 13 taps
// u8x1 56 rows = 19.1 KB tile + 34 KB H2 (53.1 KB: 4 blocks a SM, 32 warps; 64 rows, 60.8 KB,
// gave 3); u8x3 48 rows, 48.8 KB; 49 taps 64 rows, 91 KB (2; the 48-row halo makes fewer rows
// dearer).
template <int CN, int KW>
struct GaussDpShape;
template <>
struct GaussDpShape<1, 13> {
  static constexpr int kTall = 56, kShort = 32, kMinBlocks = 4;
};
template <>
struct GaussDpShape<3, 13> {
  static constexpr int kTall = 48, kShort = 32, kMinBlocks = 4;
};
template <>
struct GaussDpShape<1, 49> {
  static constexpr int kTall = 64, kShort = 32, kMinBlocks = 2;
};

template <int CN, int KW>
struct GaussDpKey {
  static constexpr int kCn = CN, kKw = KW;
};

template <int KW, int CN>
constexpr int gauss_dp_tile_width() {
  return (kByteTileBW + (KW - 1) * CN + 15 + 15) / 16 * 16;  // byte_tile_width
}
inline std::size_t gauss_dp_smem(int kw, int kh, int cn, int bh) {
  const int tw = byte_tile_width(kw, cn), th = bh + kh - 1;
  return (std::size_t(tw) * th + 15) / 16 * 16 + std::size_t(th / 2) * kByteTileBW * 4;
}

// Block rows of the walking grid (bx blocks wide, `rows` tiles a column, min_blocks resident a
// SM): t tiles a block, t <= 8, for the fewest waves x t (the time in tile periods), the
// largest such t (each tile after a block's first has its loads hidden). 8192^2 u8x1 13 taps
// (32 x 147 tiles, 528 slots): t = 3, 1568 blocks, 3 waves (t = 1: 8.9 waves); 1920x1080 (8 x
// 34): t = 1, 272 blocks, one wave.
inline long long gauss_dp_blocks_y(long long bx, long long rows, int min_blocks) {
  const long long slots = kSmCount * min_blocks;
  long long best_t = 1, best_cost = -1;
  for (long long t = 1; t <= 8; ++t) {
    const long long gy = (rows + t - 1) / t, cost = (bx * gy + slots - 1) / slots * t;
    if (best_cost < 0 || cost <= best_cost) best_cost = cost, best_t = t;
  }
  const long long gy = (rows + best_t - 1) / best_t;
  return gy < 65535 ? gy : 65535;
}

// detail::border_index in 32-bit arithmetic, for a coordinate p at most a tile (a few hundred
// samples) outside [0, len): one reflection or shift, checked, else the general rule with a
// 32-bit remainder (len is then below a tile, so 2 len does not overflow). The 64-bit rule
// of near_border_index is a called division: unrolled in the tile loader, its calls made
// ptxas spill the kernel's registers.
__device__ __forceinline__ int gauss_dp_border(int p, int len, BorderType t) {
  if (p >= 0 && p < len) return p;
  int q = -1;
  switch (t) {
    case BorderType::replicate:
      return p < 0 ? 0 : len - 1;
    case BorderType::reflect:
      q = p < 0 ? -p - 1 : len - 1 - (p - len);
      if (q >= 0 && q < len) return q;
      q = p % (2 * len);
      if (q < 0) q += 2 * len;
      return q < len ? q : 2 * len - 1 - q;
    case BorderType::reflect101:
      if (len == 1) return 0;
      q = p < 0 ? -p : len - 2 - (p - len);
      if (q >= 0 && q < len) return q;
      q = p % (2 * len - 2);
      if (q < 0) q += 2 * len - 2;
      return q < len ? q : 2 * len - 2 - q;
    case BorderType::wrap:
      q = p < 0 ? p + len : p - len;
      if (q >= 0 && q < len) return q;
      q = p % len;
      return q < 0 ? q + len : q;
    case BorderType::constant:
      return -1;
  }
  return -1;
}

// Byte e of source row sy (sy < 0: a constant-border row) by the border rule applied to the
// byte's pixel (its channel stays): border_row_byte in 32-bit border arithmetic.
template <int CN>
__device__ __forceinline__ unsigned char gauss_dp_edge_byte(const DevView<std::uint8_t>& v,
                                                            const DevBorder<std::uint8_t>& b,
                                                            int sy, long long e) {
  if (sy < 0) return b.value;
  long long px;
  int ch;
  u8_3x3_cn::pixel_of_byte(e, CN, px, ch);
  const int sx = gauss_dp_border(int(px), v.w, b.type);
  return sx < 0 ? b.value : v.row(sy)[(long long)sx * CN + ch];
}

// Issues the loads of the byte tile of block (e0, y0): BH + KH - 1 rows of the tile width,
// rows y0 - KH / 2 + r by the border rule, bytes xs + i (xs = floor16(e0 - (KW / 2) CN)).
// Chunks [lo, hi) lie inside the image row: cp.async from row sy (a constant-border row
// outside the image: the value); chunks [0, lo) and [hi, need) byte by byte by the border rule
// (all chunks when the source is not 16-byte aligned); chunks from `need` on hold no byte an
// output reads (past the last sample's window) and are left as they are (their h feed only
// outputs past the row, never stored). The caller waits (cp_async_wait_all) and syncs.
template <int CN, int KW, int KH, int BH>
__device__ __forceinline__ void gauss_dp_tile_issue(unsigned char* tile, long long e0, long long y0,
                                                    const DevView<std::uint8_t>& src,
                                                    const DevBorder<std::uint8_t>& border,
                                                    bool aligned) {
  constexpr int kTw = gauss_dp_tile_width<KW, CN>(), kTh = BH + KH - 1, kChunks = kTw / 16;
  constexpr int kAx = (KW / 2) * CN, kTotal = kTh * kChunks;
  const int tid = int(threadIdx.x);
  const long long wc = (long long)src.w * CN, xs = floor16(e0 - kAx);
  const int ys = int(y0) - KH / 2;  // rows are ints (DevView::h)
  const long long rel = wc - xs;    // > 0: xs <= e0 < wc
  int lo = xs >= 0 ? 0 : int(min((long long)kChunks, -xs / 16));
  int hi = int(min((long long)kChunks, rel / 16));
  int need = int(min((long long)kChunks, (rel + kAx + 15) / 16));
  if (!aligned) lo = hi = 0;
  hi = max(hi, lo);
  need = max(need, hi);
  if (CN == 1 && lo == 0 && hi == kChunks && ys >= 0 && ys + kTh <= src.h) {
    // Interior tile (every chunk of every row inside the image, rows unmapped: all but the
    // first and last block columns and tile rows): chunk i from tile row 0's pointer, no
    // border rule. The general loop below ran the border switch for every chunk, ~50
    // instructions a chunk (s16 SASS): ~4 an output at 13 taps u8x1. One channel only: u8x3
    // at 48 rows spilled 4 bytes with it.
    // Chunk i of the tile is shared byte 16 i (kTw = 16 kChunks): gauss_dp::chunk_walk.
    static_assert(kTw == 16 * kChunks);
    const unsigned char* g = src.row(ys) + xs;
    gauss_dp::ChunkWalk w = gauss_dp::chunk_walk_start(tid, kChunks, src.stride);
#pragma unroll 1
    for (; w.i < kTotal; gauss_dp::chunk_walk_next(w, kGaussDpThreads, kChunks, src.stride))
      cp_async16(tile + 16 * w.i, g + w.off);
    return;
  }
  const unsigned splat = 0x01010101u * border.value;
  // Not unrolled: a cp.async needs no register, so a rolled loop has every copy of the thread
  // in flight as well; unrolled, the compiler kept each step's indices across the tile loop
  // (loop-invariant in the walk) and spilled them.
#pragma unroll 1
  for (int i = tid; i < kTotal; i += kGaussDpThreads) {
    const int r = i / kChunks, c = i - r * kChunks;
    if (c >= lo && c < hi) {
      const int sy = gauss_dp_border(ys + r, src.h, border.type);
      unsigned char* out = tile + r * kTw + 16 * c;
      if (sy >= 0)
        cp_async16(out, src.row(sy) + xs + 16 * c);
      else
        *reinterpret_cast<uint4*>(out) = make_uint4(splat, splat, splat, splat);
    }
  }
  const int n_edge = lo + need - hi;
  if (n_edge == 0) return;
  // Edge bytes, 16 consecutive threads a chunk, 4 loads of a thread in flight together.
  const int total = kTh * n_edge * 16;
#pragma unroll 1
  for (int i0 = tid; i0 < total; i0 += 4 * kGaussDpThreads) {
    unsigned char val[4];
    int at[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int i = i0 + k * kGaussDpThreads;
      at[k] = -1;
      val[k] = 0;
      if (i < total) {
        const int b = i % 16, q = i / 16, r = q / n_edge, j = q - r * n_edge;
        const int c = j < lo ? j : hi + (j - lo);
        val[k] = gauss_dp_edge_byte<CN>(src, border, gauss_dp_border(ys + r, src.h, border.type),
                                        xs + 16 * c + b);
        at[k] = r * kTw + 16 * c + b;
      }
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (at[k] >= 0) tile[at[k]] = val[k];
  }
}

// The vertical pass of one group of G output row pairs of a thread (pairs s0 .. s0 + G - 1 of
// its column, output rows 2 s0 .. 2 (s0 + G) - 1 from `o` on; pair word m of the group is word
// m - s of pair s's window), G and the store rule compile-time: the runtime group size of the
// s16 kernel put a branch around every pair word's load and dot products (~4 instructions an
// output). kFull: the tile's rows and 256 samples all exist and rows take 4-byte stores.
// Advances o by 2 G rows.
template <int G, int KVW, bool kFull>
__device__ __forceinline__ void gauss_dp_v_group(const uint4* col, const gauss_dp::Taps& p, int s0,
                                                 int r, int rows, bool full_x, long long e,
                                                 long long wc, long long stride, std::uint8_t*& o) {
  using gauss_dp::u32;
  constexpr int kQuads = kByteTileBW / 4;
  u32 ev[G][4], od[G][4];
#pragma unroll
  for (int s = 0; s < G; ++s)
#pragma unroll
    for (int q = 0; q < 4; ++q) ev[s][q] = od[s][q] = gauss_dp::kRound;
  // Pair word m + 1 is loaded while word m is summed, and no later load moves above the
  // empty asm (a compiler barrier, no instruction): with every load of a group hoisted to
  // its top (straight-line code: 9 words = 36 registers beside the 24 sums) ptxas spilled at
  // the 64 registers of 4 blocks a SM.
  uint4 cur = col[s0 * kQuads];
#pragma unroll
  for (int m = 0; m < G + KVW - 1; ++m) {
    uint4 next = cur;
    if (m + 1 < G + KVW - 1) next = col[(s0 + m + 1) * kQuads];
    asm volatile("" ::: "memory");
    const u32 pw[4] = {cur.x, cur.y, cur.z, cur.w};
#pragma unroll
    for (int s = 0; s < G; ++s)
      if (m - s >= 0 && m - s < KVW)
#pragma unroll
        for (int q = 0; q < 4; ++q) gauss_dp::v_add(pw[q], p.v[m - s], ev[s][q], od[s][q]);
    cur = next;
  }
#pragma unroll
  for (int s = 0; s < G; ++s)
#pragma unroll
    for (int odd = 0; odd < 2; ++odd) {
      const u32 word = odd ? gauss_dp::pack4(od[s][0], od[s][1], od[s][2], od[s][3])
                           : gauss_dp::pack4(ev[s][0], ev[s][1], ev[s][2], ev[s][3]);
      if (kFull) {
        *reinterpret_cast<u32*>(o) = word;
      } else if (r + 2 * (s0 + s) + odd < rows) {
        if (full_x) {
          *reinterpret_cast<u32*>(o) = word;
        } else {
#pragma unroll
          for (int b = 0; b < 4; ++b)
            if (e + b < wc) o[b] = std::uint8_t(word >> (8 * b));
        }
      }
      o += stride;
    }
}

template <int CN, int KW, int KH, int BH, int kMinBlocks>
__global__ void __launch_bounds__(kGaussDpThreads, kMinBlocks)
    gaussian_u8_dp_kernel(DevView<std::uint8_t> src, DevView<std::uint8_t> dst,
                          DevBorder<std::uint8_t> border, gauss_dp::Taps p, int rows_of_blocks,
                          bool src_aligned, bool dst_aligned) {
  using gauss_dp::u32;
  constexpr int kTw = gauss_dp_tile_width<KW, CN>(), kTh = BH + KH - 1, kPairRows = kTh / 2;
  static_assert(kTh % 2 == 0, "odd KH and even BH: whole pair rows");
  // The first window byte of output e0 in the tile (e0 is a multiple of 16, see byte_tile):
  // a compile-time constant, so a run's word base and every byte alignment are too. A run
  // starts its words on an even word (8-byte loads), kA bytes before its first window.
  constexpr int kW0 = gauss_dp::run_w0(KW, CN), kA = gauss_dp::run_a(KW, CN);
  constexpr int kR = kGaussDpRun, kRuns = kByteTileBW / kR;
  constexpr int kRW = gauss_dp::run_words(KW, CN, kR, kA), kRW2 = (kRW + 1) / 2;
  static_assert(4 * (kW0 + (kRuns - 1) * (kR / 4) + 2 * kRW2) <= kTw, "run inside the tile row");
  static_assert(kR == 8 && kRuns == 32, "a warp's lanes are the runs of one pair row");
  constexpr int kQuads = kByteTileBW / 4, kRV = BH * kQuads / kGaussDpThreads;
  static_assert(kRV % 2 == 0 && kRV * kGaussDpThreads == BH * kQuads, "one item a thread");
  // Row pairs a vertical group and the tail group (gauss_dp::v_group_pairs).
  constexpr int kPairs = kRV / 2, kVW = gauss_dp::v_words(KH);
  constexpr int kVP = gauss_dp::v_group_pairs(kPairs, KH);
  constexpr int kVTail = kPairs % kVP;

  extern __shared__ __align__(16) unsigned char smem_raw[];
  unsigned char* tile = smem_raw;
  u32* h2 = reinterpret_cast<u32*>(smem_raw + (std::size_t(kTw) * kTh + 15) / 16 * 16);
  const long long e0 = (long long)blockIdx.x * kByteTileBW, wc = (long long)dst.w * CN;
  const bool full_x = dst_aligned && e0 + kByteTileBW <= wc;  // 4-byte stores, no clipping
  const int c = int(threadIdx.x) % kRuns;                     // horizontal: the thread's run
  const int cq = int(threadIdx.x) % kQuads, r0 = int(threadIdx.x) / kQuads * kRV;  // vertical
  const uint4* col = reinterpret_cast<const uint4*>(h2) + gauss_dp::h2_quad(cq) + r0 / 2 * kQuads;
  if (int(blockIdx.y) < rows_of_blocks)
    gauss_dp_tile_issue<CN, KW, KH, BH>(tile, e0, (long long)blockIdx.y * BH, src, border,
                                        src_aligned);
  for (int by = blockIdx.y; by < rows_of_blocks; by += gridDim.y) {
    const long long y0 = (long long)by * BH;
    cp_async_wait_all();
    __syncthreads();  // the tile is in; every thread is past the previous vertical pass (H2)

    // Horizontal: pair row pr (tile rows 2 pr, 2 pr + 1), samples c kR .. c kR + kR - 1.
    for (int pr = int(threadIdx.x) / kRuns; pr < kPairRows; pr += kGaussDpThreads / kRuns) {
      u32 h[2][kR];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const uint2* src2 =
            reinterpret_cast<const uint2*>(tile + (2 * pr + half) * kTw) + kW0 / 2 + c * (kR / 8);
        u32 w[2 * kRW2];
#pragma unroll
        for (int k = 0; k < kRW2; ++k) {
          const uint2 v = src2[k];
          w[2 * k] = v.x;
          w[2 * k + 1] = v.y;
        }
        gauss_dp::h_run<KW, CN, kR, kA>(w, p, h[half]);
      }
      uint4* out = reinterpret_cast<uint4*>(h2 + pr * kByteTileBW);
#pragma unroll
      for (int q = 0; q < kR / 4; ++q)
        out[gauss_dp::h2_quad(c * (kR / 4) + q)] =
            make_uint4(gauss_dp::pair(h[0][4 * q], h[1][4 * q]),
                       gauss_dp::pair(h[0][4 * q + 1], h[1][4 * q + 1]),
                       gauss_dp::pair(h[0][4 * q + 2], h[1][4 * q + 2]),
                       gauss_dp::pair(h[0][4 * q + 3], h[1][4 * q + 3]));
    }
    __syncthreads();  // H2 complete; the tile is free for the next one
    if (by + int(gridDim.y) < rows_of_blocks)
      gauss_dp_tile_issue<CN, KW, KH, BH>(tile, e0, (long long)(by + gridDim.y) * BH, src, border,
                                          src_aligned);

    // Vertical: samples 4 cq .. 4 cq + 3 of output rows r0 .. r0 + kRV - 1, in groups of kVP
    // row pairs and a tail group (gauss_dp_v_group).
    const int rows = int(min((long long)BH, (long long)dst.h - y0));
    // The output pointer walks down a row at a time (offsets r * stride precomputed for every
    // row are invariant in the tile walk: the compiler kept them all and spilled).
    std::uint8_t* o = dst.row(y0 + r0) + e0 + 4 * cq;
    const long long e = e0 + 4 * cq;
    // Groups not unrolled: unrolled, the scheduler overlapped them and spilled (64 registers).
    // Whole tiles (every row and sample exists, 4-byte stores) store without checks.
    if (full_x && rows == BH) {
#pragma unroll 1
      for (int s0 = 0; s0 + kVP <= kPairs; s0 += kVP)
        gauss_dp_v_group<kVP, kVW, true>(col, p, s0, r0, rows, full_x, e, wc, dst.stride, o);
      if constexpr (kVTail > 0)
        gauss_dp_v_group<kVTail, kVW, true>(col, p, kPairs - kVTail, r0, rows, full_x, e, wc,
                                            dst.stride, o);
    } else {
#pragma unroll 1
      for (int s0 = 0; s0 + kVP <= kPairs; s0 += kVP)
        gauss_dp_v_group<kVP, kVW, false>(col, p, s0, r0, rows, full_x, e, wc, dst.stride, o);
      if constexpr (kVTail > 0)
        gauss_dp_v_group<kVTail, kVW, false>(col, p, kPairs - kVTail, r0, rows, full_x, e, wc,
                                             dst.stride, o);
    }
  }
}

// The dot-product kernel where it applies (see above); false otherwise.
bool try_gaussian_u8_dp(const ConstImageView& s, const ImageView& d, const GaussianParams& p,
                        cudaStream_t st) {
  const int cn = s.channels();
  // u8x3 at 49 taps (37 words a sample, 38 a run row) spilled 108 bytes at 80 registers.
  if (p.kw != p.kh || !((p.kw == 13 && (cn == 1 || cn == 3)) || (p.kw == 49 && cn == 1)))
    return false;
  std::int32_t tx[detail::kGaussianMaxK], ty[detail::kGaussianMaxK];
  detail::gaussian_taps_fixed(p.kw, p.sigma, detail::kGaussianBitsU8, tx);
  detail::gaussian_taps_fixed(p.kh, p.sigma_y, detail::kGaussianBitsU8, ty);
  gauss_dp::Taps k;
  if (!gauss_dp::make_taps(tx, p.kw, ty, p.kh, cn, k)) return false;
  const long long wc = (long long)s.width() * cn, bx = (wc + kByteTileBW - 1) / kByteTileBW;
  const bool sa = rows_aligned(s, 16), da = rows_aligned(d, 16);
  auto run = [&](auto shape_tag) {
    using Shape = typename decltype(shape_tag)::type;
    constexpr int C = Shape::kCn, KW = Shape::kKw;
    using S = GaussDpShape<C, KW>;
    // Rows a block by the tall-grid rule (launch.cuh).
    const bool tall = tall_blocks_fill(bx, s.height(), S::kTall);
    const int bh = tall ? S::kTall : S::kShort;
    const std::size_t smem = gauss_dp_smem(KW, KW, C, bh);
    const int rows = blocks_y(s.height(), bh);
    const dim3 grid(unsigned(bx), unsigned(gauss_dp_blocks_y(bx, rows, S::kMinBlocks)));
    auto launch = [&](auto kernel) {
      if (smem > 48 * 1024)
        PIXFLOW_CUDA_CHECK(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
      kernel<<<grid, kGaussDpThreads, smem, st>>>(
          dev_view<std::uint8_t>(s), dev_view<std::uint8_t>(d), dev_border<std::uint8_t>(p.border),
          k, rows, sa, da);
    };
    if (tall)
      launch(gaussian_u8_dp_kernel<C, KW, KW, S::kTall, S::kMinBlocks>);
    else
      launch(gaussian_u8_dp_kernel<C, KW, KW, S::kShort, S::kMinBlocks>);
  };
  if (cn == 1 && p.kw == 13)
    run(std::type_identity<GaussDpKey<1, 13>>{});
  else if (cn == 1)
    run(std::type_identity<GaussDpKey<1, 49>>{});
  else
    run(std::type_identity<GaussDpKey<3, 13>>{});
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian");
  return true;
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
