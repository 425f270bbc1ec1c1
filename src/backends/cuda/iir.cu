// gaussian_iir on CUDA: the double-precision recursion, one thread per line (-fmad=false): rows
// first into an f32 intermediate, then columns.
// NOT the reference's rule any more: this kernel runs the sequential recursion that
// src/base/iir.hpp had before its block rule (blocks of kIirBlock positions corrected by
// carries), so it differs from the reference by rounding (f32 by an ulp on ~1e-5 of samples)
// and fails the backends-match-ref tests until it is rewritten to the block rule.
//
// The recursion is a chain of dependent double ops per line (4 per step: b1 * w[i-1], then three
// adds), so the floor is steps x that chain; the kernel keeps memory off the chain:
// - a block owns 32 adjacent rows (row pass) or pixel columns (column pass), all channels, and
//   stages kIirChunk steps of its lines at a time through shared memory with coalesced loads,
//   the next chunk's loads in flight (in registers) while the current chunk is filtered; rows
//   are read along the row (no transposed copies);
// - the causal output w never goes to global memory: the causal pass keeps the last two chunks
//   of w in shared memory and writes only a checkpoint (the three w before each chunk) per
//   chunk; the anti-causal pass, walking chunk j backwards, recomputes chunk j - 1's w from its
//   checkpoint and its input (the same causal steps on the same inputs: the same doubles) as a
//   second, independent chain beside its own, so it costs issue slots, not latency;
// - outputs go through shared memory and are stored (coalesced) while the next chunk runs.
// The checkpoints come from cudaMallocAsync on the op's stream (cuda_ops.hpp's stream_alloc: no
// host synchronisation; graph capture records memory nodes).
#include <algorithm>
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/launch.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/cuda_ops.hpp"
#include "src/base/backend.hpp"
#include "src/base/iir.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kC = kIirChunk;

// iir_filter_line's two recursion steps, the same expressions (evaluated left to right):
// causal w[i] from x[i] and w[i-1], w[i-2], w[i-3]; anti-causal y[i] from w[i] and y[i+1..3].
__device__ __forceinline__ double causal(const detail::IirCoeffs& k, double x, double w1, double w2,
                                         double w3) {
  return k.B * x + k.b1 * w1 + k.b2 * w2 + k.b3 * w3;
}
__device__ __forceinline__ double anticausal(const detail::IirCoeffs& k, double w, double y1,
                                             double y2, double y3) {
  return k.B * w + k.b1 * y1 + k.b2 * y2 + k.b3 * y3;
}

/// Shared memory of a block of 32 x cn lines: w of two chunks [2][kC][T] (each thread its own
/// column), inputs and outputs of two chunks [2][kC][P] as float (exact for u8 and f32; P pads a
/// row by cn so that the loaders' stores do not conflict), the positions of the 2e extension
/// steps.
inline std::size_t iir_smem(int cn, long long e) {
  const std::size_t t = std::size_t(kIirLines) * cn, p = std::size_t(kIirLines + 1) * cn;
  return 2 * kC * t * sizeof(double) + 2 * 2 * kC * p * sizeof(float) +
         std::size_t(2 * e) * sizeof(int);
}

// Chunks of kC steps a line of n steps has, and the checkpoints it writes (chunks 0 .. J-3: the
// anti-causal pass recomputes those; the last two stay in shared memory).
__host__ __device__ inline long long iir_chunks(long long n) {
  return (n + kC - 1) / kC;
}

/// The sample positions of a line's 2e extension steps (border_index; -1: the constant), 0 .. e-1
/// before the line, e .. 2e-1 after, computed apart: border_index's 64-bit remainders are calls,
/// whose register saving spills in the filter kernel. e <= 1032 (sigma <= 256).
__global__ void iir_extension_kernel(int* ext, long long len, long long e, BorderType bt) {
  for (long long i = threadIdx.x; i < 2 * e; i += blockDim.x)
    ext[i] = int(detail::border_index(i < e ? i - e : len + (i - e), len, bt));
}

/// Filters lines of `in` into `out`. kRows: the lines are rows (a block owns rows u0 .. u0+31,
/// all channels; step i of line (row, c) is sample i - e of that row); else pixel columns (a
/// block owns columns u0 .. u0+31; step i is row i - e). Thread t computes line t of the block,
/// whose samples sit in column t of the shared tiles: line (unit u0 + t / cn, channel t % cn).
/// Thread t also moves, for each q < kC, one element of each chunk between global memory and
/// the tiles, chosen so that a warp's accesses are contiguous in memory: rows: unit u0 + q,
/// step t / cn, channel t % cn; columns: step q, unit u0 + t / cn, channel t % cn.
template <class S, class D, bool kRows>
__global__ void __launch_bounds__(kIirLines * 4)
    iir_lines_kernel(DevView<S> in, DevView<D> out, detail::IirCoeffs k, long long e,
                     const int* gext, S cval, double* ck) {
  extern __shared__ double smem[];
  const int cn = in.cn, T = kIirLines * cn, P = (kIirLines + 1) * cn;
  double* const wb = smem;                                        // [2][kC][T]
  float* const xt = reinterpret_cast<float*>(smem + 2 * kC * T);  // [2][kC][P]
  float* const ot = xt + 2 * kC * P;                              // [2][kC][P]
  int* const ext = reinterpret_cast<int*>(ot + 2 * kC * P);       // [2e]
  const int t = threadIdx.x;
  const long long units = kRows ? in.h : in.w, len = kRows ? in.w : in.h;
  const long long u0 = (long long)blockIdx.x * kIirLines;
  const long long n = len + 2 * e, J = iir_chunks(n);
  const long long ltot = (long long)gridDim.x * T;
  double* const myck = ck + (long long)blockIdx.x * T + t;

  // Element q of this thread's share of a chunk: its tile slot (step s, line l), and whether
  // its unit exists.
  auto slot_s = [&](int q) { return kRows ? t / cn : q; };
  auto slot_l = [&](int q) { return kRows ? q * cn + t % cn : t; };
  auto unit_ok = [&](int q) { return kRows ? u0 + q < units : u0 * cn + t < units * cn; };
  // Global element (row, sample index in the row) of (unit slot q, line position p).
  auto row_of = [&](int q, long long p) { return kRows ? u0 + q : p; };
  auto col_of = [&](long long p) { return kRows ? p * cn + t % cn : u0 * cn + t; };

  for (long long i = t; i < 2 * e; i += T) ext[i] = gext[i];
  __syncthreads();

  // Loads chunk j's inputs into registers (step i = position i - e through the border rule;
  // cval outside a constant border). The values are used only after the chunk in flight. Each
  // thread maps one step (rows: its own, t / cn; columns: step `lane`, which the warp shares).
  auto load = [&](long long j, S(&v)[kC]) {
    const long long i = j * kC + (kRows ? t / cn : t % 32);
    const long long p = i - e;
    const int pm = i >= n ? -1 : p < 0 ? ext[i] : p >= len ? ext[i - len] : int(p);
#pragma unroll
    for (int q = 0; q < kC; ++q) {
      const int pq = kRows ? pm : __shfl_sync(0xffffffffu, pm, q);
      v[q] = cval;
      if (pq >= 0 && unit_ok(q)) v[q] = in.row(row_of(q, pq))[col_of(pq)];
    }
  };
  auto stash = [&](long long j, const S(&v)[kC]) {
    float* x = xt + (j & 1) * kC * P;
#pragma unroll
    for (int q = 0; q < kC; ++q) x[slot_s(q) * P + slot_l(q)] = float(v[q]);
  };
  // Stores element q of chunk j's outputs (positions 0 .. len-1 only), the reference's
  // rounding: saturate_cast<D>(double(float(y))).
  auto store = [&](long long j, int q) {
    const long long p = j * kC + slot_s(q) - e;
    if (p >= 0 && p < len && unit_ok(q))
      out.row(row_of(q, p))[col_of(p)] =
          detail::saturate_cast<D>(double(ot[(j & 1) * kC * P + slot_s(q) * P + slot_l(q)]));
  };

  // Causal pass, chunk by chunk. w0, w1, w2: w[i-3], w[i-2], w[i-1] (iir_filter_line starts
  // them all at x(0)).
  S v[kC];
  load(0, v);
  stash(0, v);
  __syncthreads();
  double w0 = xt[t], w1 = w0, w2 = w0, up = 0;
  for (long long j = 0; j < J; ++j) {
    if (j < J - 2) {  // recomputed by the anti-causal pass
      myck[(3 * j) * ltot] = w0;
      myck[(3 * j + 1) * ltot] = w1;
      myck[(3 * j + 2) * ltot] = w2;
    }
    const bool more = j + 1 < J;
    if (more) load(j + 1, v);
    const float* x = xt + (j & 1) * kC * P + t;
    double* wj = wb + (j & 1) * kC * T + t;
    const int cnt = int(std::min<long long>(kC, n - j * kC));
    auto step = [&](int s) {
      const double w = causal(k, double(x[s * P]), w2, w1, w0);
      w0 = w1;
      w1 = w2;
      w2 = w;
      wj[s * T] = w;
    };
    if (cnt == kC) {
#pragma unroll
      for (int s = 0; s < kC; ++s) step(s);
    } else {
      for (int s = 0; s < cnt; ++s) step(s);
    }
    if (!more) up = double(x[(cnt - 1) * P]);  // x(n-1), read before the tile is reused
    if (more) stash(j + 1, v);
    __syncthreads();
  }

  // Triggs-Sdika end conditions, as in iir_filter_line (w[n-1], w[n-2], w[n-3] = w2, w1, w0).
  const double u[3] = {w2 - up, w1 - up, w0 - up};
  double vv[3];
  for (int r = 0; r < 3; ++r) vv[r] = k.M[r][0] * u[0] + k.M[r][1] * u[1] + k.M[r][2] * u[2] + up;
  double y1 = vv[0], y2 = vv[1], y3 = vv[2];

  // Anti-causal pass, chunk j from J-1 down to 0. Chunks J-1 and J-2 have their w in shared
  // memory from the causal pass; iteration j (1 <= j <= J-2) recomputes chunk j-1's w (a full
  // chunk: only the last one is partial) from checkpoint j-1 into the other w buffer. Iteration j
  // also loads the inputs of chunk j-2 (for the next iteration's recompute) into the tile chunk j
  // used, the checkpoint of chunk j-2, and stores chunk j+1's outputs.
  double c0 = 0, c1 = 0, c2 = 0;
  for (long long j = J - 1; j >= 0; --j) {
    const bool recompute = j >= 1 && j <= J - 2, fetch = j >= 2, flush = j + 1 < J;
    double r0 = c0, r1 = c1, r2 = c2;
    if (fetch) load(j - 2, v);
    if (fetch) {  // the checkpoint of chunk j-2, recomputed in iteration j-1
      c0 = myck[(3 * (j - 2)) * ltot];
      c1 = myck[(3 * (j - 2) + 1) * ltot];
      c2 = myck[(3 * (j - 2) + 2) * ltot];
    }
    const double* wj = wb + (j & 1) * kC * T + t;
    float* oj = ot + (j & 1) * kC * P + t;
    const float* xr = xt + ((j - 1) & 1) * kC * P + t;
    double* wr = wb + ((j - 1) & 1) * kC * T + t;
    const int cnt = int(std::min<long long>(kC, n - j * kC));
    auto back = [&](int a) {
      const double y = anticausal(k, wj[a * T], y1, y2, y3);
      y3 = y2;
      y2 = y1;
      y1 = y;
      oj[a * P] = float(y);
    };
    auto redo = [&](int s) {
      const double w = causal(k, double(xr[s * P]), r2, r1, r0);
      r0 = r1;
      r1 = r2;
      r2 = w;
      wr[s * T] = w;
    };
    if (recompute) {  // two independent chains per step, plus the previous chunk's stores
#pragma unroll
      for (int s = 0; s < kC; ++s) {
        back(kC - 1 - s);
        redo(s);
        store(j + 1, s);
      }
    } else if (cnt == kC && flush) {
#pragma unroll
      for (int s = 0; s < kC; ++s) {
        back(kC - 1 - s);
        store(j + 1, s);
      }
    } else {  // chunk J-1 (nothing to store before it)
      for (int a = cnt - 1; a >= 0; --a) back(a);
    }
    if (fetch) stash(j - 2, v);
    __syncthreads();
  }
#pragma unroll
  for (int q = 0; q < kC; ++q) store(0, q);
}

template <class S, class D, bool kRows>
void launch_lines(const ConstImageView& in, const ImageView& out, const detail::IirCoeffs& k,
                  long long e, BorderType bt, double cval, double* ck, int* ext, cudaStream_t st) {
  const long long units = kRows ? in.height() : in.width();
  const int cn = in.channels();
  const std::size_t smem = iir_smem(cn, e);
  auto kernel = iir_lines_kernel<S, D, kRows>;
  if (smem > 48 * 1024)  // 2 or more channels, or sigma > 128 with 1
    PIXFLOW_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const long long len = kRows ? in.width() : in.height();
  if (e > 0) {
    iir_extension_kernel<<<1, 256, 0, st>>>(ext, len, e, bt);
    PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
  }
  kernel<<<unsigned((units + kIirLines - 1) / kIirLines), unsigned(kIirLines * cn), smem, st>>>(
      dev_view<S>(in), dev_view<D>(out), k, e, ext, S(cval), ck);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
}

// Checkpoint doubles of one pass: 3 per line per recomputed chunk, lines padded to blocks.
std::size_t iir_checkpoints(long long units, long long len, long long e, int cn) {
  const long long lines = (units + kIirLines - 1) / kIirLines * kIirLines * cn;
  return std::size_t(std::max<long long>(iir_chunks(len + 2 * e) - 2, 0) * 3 * lines);
}

template <class T>
void launch_iir(const ConstImageView& s, const ImageView& d, const GaussianIirParams& p,
                cudaStream_t st) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const long long e = detail::iir_extension(p);
  // The constant border's value in T (both passes, as in the reference); a u8 value is exact in
  // the f32 intermediate.
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  const int cn = s.channels();
  const long long w = s.width(), h = s.height();
  const Format ft{Depth::f32, cn};
  const std::int64_t tmp_stride = std::int64_t(ft.pixel_bytes()) * w;
  // The f32 intermediate (tight rows), the checkpoints of the larger pass and the extension
  // positions, freed on the stream when this function returns (after the launches).
  const auto tmp = stream_alloc(std::size_t(tmp_stride * h), st);
  const std::size_t ck_elems = std::max(iir_checkpoints(h, w, e, cn), iir_checkpoints(w, h, e, cn));
  const auto ck = stream_alloc((ck_elems + std::size_t(e)) * sizeof(double) + 1, st);
  ImageView vtmp(tmp.get(), w, h, tmp_stride, ft, s.location());
  auto* c = reinterpret_cast<double*>(ck.get());
  auto* ext = reinterpret_cast<int*>(c + ck_elems);  // 2e ints after the checkpoints
  launch_lines<T, float, true>(s, vtmp, k, e, p.border.type, cval, c, ext, st);   // rows
  launch_lines<float, T, false>(vtmp, d, k, e, p.border.type, cval, c, ext, st);  // columns
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_iir) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::f32>(table, "gaussian_iir",
                                          [](auto t) { return &cuda::launch_iir<decltype(t)>; });
}
