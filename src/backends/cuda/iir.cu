// gaussian_iir on CUDA: the block rule of src/base/iir.hpp (the reference's formulation) in
// double, through the shared detail::iir_step / iir_fix with -fmad=false, so that the result
// equals the reference bit for bit: rows first into an f32 intermediate, then columns.
//
// Two schedules, bit-identical to each other and to the reference (GaussianIir tests and
// memcheck on the H100). The first: one kernel per phase of a pass over a set of lines (a line is
// one channel of one row, or of one pixel column), the lines fastest in the thread index so that a
// warp holds 32 adjacent lines (coalesced in the column pass; the row pass reads along rows with 32
// rows per warp):
//  1. iir_zero_kernel, a thread per (line, block): the causal block from zero state; its last
//     three values;
//  2. iir_carry_kernel, a thread per line: the causal carries, block by block, by iir_fix on
//     those three values (the same expressions the blocks use, so the same doubles), then
//     Triggs–Sdika's start of the anti-causal pass;
//  3. iir_mid_kernel, a thread per (line, block): the causal block (zero state + carry), then
//     the anti-causal block from zero state on it; its first three values;
//  4. iir_acarry_kernel, a thread per line: the anti-causal carries, right to left;
//  5. iir_out_kernel, a thread per (line, block): both blocks again, the output stored.
// So x is read three times and a block's causal zero state computed three times: ≈ 46 double
// ops per sample for a pass pair against the rule's 26 (7 per zero-state step + 6 per
// correction, each way). FP64 issue bounds it: the H100 does ≈ 17 T double mul/add per second
// (no FMA by rule), so 8192² u8 (4 passes over 67 M samples) needs ≥ 210 µs at the rule's 26
// and ≈ 370 µs as written. Next, on the GPU: check, then fuse 1, 3 and 5 (a thread block
// owning whole lines, blocks in registers, carries through shared memory).
// Measured on the H100 (main at 3633096, sigma 8): 8192^2 u8x1 5643 us, u8x3 10748, f32x1
// 5838: the row pass put 32 rows in a warp (every load and every f32 store of a warp touched
// 32 lines) and every kernel re-read x. So channel counts 1-4 (all the op registers) now run
// the fused pass of iir_fused.hpp: a thread block per 32 lines, x read twice, coalesced tiles
// in shared memory, 3 doubles of scratch a block; the five kernels above remain for passes
// over fewer than kFusedMinLines lines (they fill the GPU where the fused kernel cannot) and
// state the schedule the fused kernel reorganises. Measured after: 8192^2 u8x1 2826 us
// (ncu: 25 % occupancy at 128 registers, 0.34 issued per scheduler, 10 % of DRAM bandwidth:
// latency-bound with two 256-thread blocks an SM).
// The f32 intermediate and the passes' double scratch are the call's scratch, one block laid
// out by iir_scratch (the same function answers gaussian_iir_workspace_bytes through
// "gaussian_iir.workspace"): the caller's Context::workspace when given (no allocation), else
// cudaMallocAsync on the op's stream (DeviceApi::workspace).
#include <algorithm>
#include <cstdint>

#include "src/backends/cuda/check.cuh"
#include "src/backends/cuda/common/image.cuh"
#include "src/backends/cuda/common/register.cuh"
#include "src/backends/cuda/cuda_ops.hpp"
#include "src/backends/cuda/iir_fused.hpp"
#include "src/base/backend.hpp"
#include "src/base/iir.hpp"
#include "src/base/scratch.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::cuda {
namespace {

constexpr int kB = detail::kIirBlock;
constexpr int kThreads = 256;

/// The lines of one pass. kRows: line l is channel l % cn of row l / cn; else element l of
/// every row (pixel column l / cn, channel l % cn). x(l, i) is position i of line l extended
/// by e samples per side through the border rule (iir_filter_line's x).
template <class S, bool kRows>
struct Lines {
  DevView<S> in;
  long long lines, len, e;
  BorderType bt;
  double cval;  // the constant border's value in the image's depth (as the reference)

  __device__ double x(long long l, long long i) const {
    const long long s = detail::border_index(i - e, len, bt);
    if (s < 0) return cval;
    return double(kRows ? in.row(l / in.cn)[s * in.cn + l % in.cn] : in.row(s)[l]);
  }
  __device__ long long n() const { return len + 2 * e; }
};

// Three doubles per (line, block): value r of block j of line l.
__device__ __forceinline__ double& at(double* p, long long lines, long long j, int r, long long l) {
  return p[(j * 3 + r) * lines + l];
}

/// Line and block of this thread in a (line, block) grid; false past the end.
__device__ __forceinline__ bool line_block(long long lines, long long J, long long& l,
                                           long long& j) {
  const long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  l = g % lines;
  j = g / lines;
  return j < J;
}

/// The causal block j of line l (m positions from a) into w: zero state, corrected by the
/// carry of cw, as iir_filter_line.
template <class L>
__device__ void causal_block(const L& ln, const detail::IirCoeffs& k, long long l, long long j,
                             int m, double* cw, double (&w)[kB]) {
  const long long a = j * kB;
  const double s0 = at(cw, ln.lines, j, 0, l), s1 = at(cw, ln.lines, j, 1, l),
               s2 = at(cw, ln.lines, j, 2, l);
  double z1 = 0, z2 = 0, z3 = 0;
  for (int t = 0; t < m; ++t) {
    const double z = detail::iir_step(k, ln.x(l, a + t), z1, z2, z3);
    z3 = z2;
    z2 = z1;
    z1 = z;
    w[t] = detail::iir_fix(k, t, z, s0, s1, s2);
  }
}

// The next block's carry from a block of m positions: its last three outputs (r = 0 the
// nearest to the next block), iir_fix of the three zero-state values zt, or the block's own
// carry s where the block is shorter than three (only a line's last causal block can be).
__device__ __forceinline__ void next_carry(const detail::IirCoeffs& k, int m, const double (&zt)[3],
                                           double (&s)[3]) {
  double nx[3];
  for (int r = 0; r < 3; ++r) {
    const int t = m - 1 - r;
    nx[r] = t >= 0 ? detail::iir_fix(k, t, zt[r], s[0], s[1], s[2]) : s[-t - 1];
  }
  for (int r = 0; r < 3; ++r) s[r] = nx[r];
}

template <class S, bool kRows>
__global__ void __launch_bounds__(kThreads)
    iir_zero_kernel(Lines<S, kRows> ln, detail::IirCoeffs k, long long J, double* zt) {
  long long l, j;
  if (!line_block(ln.lines, J, l, j)) return;
  const long long a = j * kB;
  const int m = int(std::min<long long>(kB, ln.n() - a));
  double z1 = 0, z2 = 0, z3 = 0;
  for (int t = 0; t < m; ++t) {
    const double z = detail::iir_step(k, ln.x(l, a + t), z1, z2, z3);
    z3 = z2;
    z2 = z1;
    z1 = z;
  }
  at(zt, ln.lines, j, 0, l) = z1;  // positions a+m-1, a+m-2, a+m-3 (0 where m < 3: unused)
  at(zt, ln.lines, j, 1, l) = z2;
  at(zt, ln.lines, j, 2, l) = z3;
}

/// cw: the carry of every causal block, then at block J Triggs–Sdika's y at n, n+1, n+2.
template <class S, bool kRows>
__global__ void __launch_bounds__(kThreads)
    iir_carry_kernel(Lines<S, kRows> ln, detail::IirCoeffs k, long long J, double* zt, double* cw) {
  const long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (l >= ln.lines) return;
  const long long n = ln.n();
  const double x0 = ln.x(l, 0);
  double s[3] = {x0, x0, x0};
  for (long long j = 0; j < J; ++j) {
    for (int r = 0; r < 3; ++r) at(cw, ln.lines, j, r, l) = s[r];
    const double z[3] = {at(zt, ln.lines, j, 0, l), at(zt, ln.lines, j, 1, l),
                         at(zt, ln.lines, j, 2, l)};
    next_carry(k, int(std::min<long long>(kB, n - j * kB)), z, s);
  }
  // s: w at n-1, n-2, n-3.
  const double up = ln.x(l, n - 1);
  const double u[3] = {s[0] - up, s[1] - up, s[2] - up};
  for (int r = 0; r < 3; ++r)
    at(cw, ln.lines, J, r, l) = detail::iir_end(k, r, u[0], u[1], u[2], up);
}

/// zt: the anti-causal zero-state values at each block's positions a, a+1, a+2.
template <class S, bool kRows>
__global__ void __launch_bounds__(kThreads)
    iir_mid_kernel(Lines<S, kRows> ln, detail::IirCoeffs k, long long J, double* cw, double* zt) {
  long long l, j;
  if (!line_block(ln.lines, J, l, j)) return;
  const int m = int(std::min<long long>(kB, ln.n() - j * kB));
  double w[kB];
  causal_block(ln, k, l, j, m, cw, w);
  double z1 = 0, z2 = 0, z3 = 0;
  for (int t = 0; t < m; ++t) {
    const double z = detail::iir_step(k, w[m - 1 - t], z1, z2, z3);
    z3 = z2;
    z2 = z1;
    z1 = z;
  }
  at(zt, ln.lines, j, 0, l) = z1;
  at(zt, ln.lines, j, 1, l) = z2;
  at(zt, ln.lines, j, 2, l) = z3;
}

/// Overwrites zt with the anti-causal carry of every block that has outputs' blocks to its
/// left, right to left from Triggs–Sdika's values (cw block J); blocks wholly inside the left
/// extension are not needed (the rule skips them).
template <class S, bool kRows>
__global__ void __launch_bounds__(kThreads)
    iir_acarry_kernel(Lines<S, kRows> ln, detail::IirCoeffs k, long long J, double* cw,
                      double* zt) {
  const long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (l >= ln.lines) return;
  double s[3] = {at(cw, ln.lines, J, 0, l), at(cw, ln.lines, J, 1, l), at(cw, ln.lines, J, 2, l)};
  for (long long j = J - 1; j >= 0 && j * kB + kB > ln.e; --j) {
    const double z[3] = {at(zt, ln.lines, j, 0, l), at(zt, ln.lines, j, 1, l),
                         at(zt, ln.lines, j, 2, l)};
    for (int r = 0; r < 3; ++r) at(zt, ln.lines, j, r, l) = s[r];
    next_carry(k, int(std::min<long long>(kB, ln.n() - j * kB)), z, s);
  }
}

/// The output of block j: causal block, anti-causal block from zero state corrected by its
/// carry (ca), positions of the line itself stored with the reference's rounding,
/// saturate_cast<D>(double(float(y))).
template <class S, class D, bool kRows>
__global__ void __launch_bounds__(kThreads)
    iir_out_kernel(Lines<S, kRows> ln, DevView<D> out, detail::IirCoeffs k, long long J, double* cw,
                   double* ca) {
  long long l, j;
  if (!line_block(ln.lines, J, l, j)) return;
  const long long a = j * kB;
  if (a + kB <= ln.e || a >= ln.e + ln.len) return;  // no position of the line
  const int m = int(std::min<long long>(kB, ln.n() - a));
  double w[kB];
  causal_block(ln, k, l, j, m, cw, w);
  const double s0 = at(ca, ln.lines, j, 0, l), s1 = at(ca, ln.lines, j, 1, l),
               s2 = at(ca, ln.lines, j, 2, l);
  double z1 = 0, z2 = 0, z3 = 0;
  for (int t = 0; t < m; ++t) {
    const int i = m - 1 - t;
    const double z = detail::iir_step(k, w[i], z1, z2, z3);
    z3 = z2;
    z2 = z1;
    z1 = z;
    const long long p = a + i - ln.e;
    if (p >= 0 && p < ln.len) {
      const D v = detail::saturate_cast<D>(double(float(detail::iir_fix(k, t, z, s0, s1, s2))));
      if (kRows)
        out.row(l / out.cn)[p * out.cn + l % out.cn] = v;
      else
        out.row(p)[l] = v;
    }
  }
}

// Scratch doubles of one pass: zero-state values / anti-causal carries (3 per block) and the
// causal carries (3 per block, plus Triggs–Sdika's 3).
std::size_t iir_pass_doubles(long long lines, long long len, long long e) {
  const long long J = (len + 2 * e + kB - 1) / kB;
  return std::size_t(3 * lines * (2 * J + 1));
}

unsigned grid_for(long long threads) {
  return unsigned((threads + kThreads - 1) / kThreads);
}

template <class S, class D, bool kRows>
void launch_pass(const ConstImageView& in, const ImageView& out, const detail::IirCoeffs& k,
                 long long e, BorderType bt, double cval, double* scratch, cudaStream_t st) {
  const int cn = in.channels();
  const long long lines = (kRows ? in.height() : in.width()) * cn;
  const long long len = kRows ? in.width() : in.height();
  const long long J = (len + 2 * e + kB - 1) / kB;
  const Lines<S, kRows> ln{dev_view<S>(in), lines, len, e, bt, cval};
  double* const zt = scratch;             // [J][3][lines]
  double* const cw = zt + 3 * J * lines;  // [J + 1][3][lines]
  iir_zero_kernel<S, kRows><<<grid_for(lines * J), kThreads, 0, st>>>(ln, k, J, zt);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
  iir_carry_kernel<S, kRows><<<grid_for(lines), kThreads, 0, st>>>(ln, k, J, zt, cw);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
  iir_mid_kernel<S, kRows><<<grid_for(lines * J), kThreads, 0, st>>>(ln, k, J, cw, zt);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
  iir_acarry_kernel<S, kRows><<<grid_for(lines), kThreads, 0, st>>>(ln, k, J, cw, zt);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
  iir_out_kernel<S, D, kRows>
      <<<grid_for(lines * J), kThreads, 0, st>>>(ln, dev_view<D>(out), k, J, cw, zt);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
}

// The fused pass (iir_fused.hpp): a thread block per 32 lines, two walks over them. Two blocks
// an SM (~37 KB of tile + 7 KB of tails, <= 128 registers a thread).
template <class S, class D, bool kRows, int kCn>
__global__ void __launch_bounds__(iir_fused::kThreads, 2)
    iir_fused_kernel(iir_fused::Pass ps, detail::IirCoeffs k) {
  __shared__ iir_fused::Smem sm;
  for (int i = int(threadIdx.x); i < kB * 3; i += blockDim.x)
    sm.H[i / 3][i % 3] = k.H[i / 3][i % 3];
  __syncthreads();
  iir_fused::ThreadState ts;
  auto par = [&](auto&& f) {
    if constexpr (kRows && kCn > 1) {
      // tid read afresh each phase (a volatile asm is not hoisted): what derives from it is
      // recomputed in the phase instead of held in registers across the compute phases. At
      // kCn 2..4 this took the row pass from 8-64 bytes of spills to none; at kCn 1 and in the
      // column pass it made spills, so those keep threadIdx.x.
      int tid;
      asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
      f(tid);
    } else {
      f(int(threadIdx.x));
    }
    __syncthreads();
  };
  iir_fused::ThreadState* const mine = &ts;  // every thread's own registers (after inlining)
  auto state = [mine](int) -> iir_fused::ThreadState& { return *mine; };
  iir_fused::run_group<S, D, kRows, kCn>(ps, k, sm, (long long)blockIdx.x, par, state);
}

template <class S, class D, bool kRows>
void launch_fused_pass(const ConstImageView& in, const ImageView& out, const detail::IirCoeffs& k,
                       long long e, BorderType bt, double cval, double* scratch, cudaStream_t st) {
  const int cn = in.channels();
  const long long lines = (kRows ? in.height() : in.width()) * cn;
  const long long len = kRows ? in.width() : in.height();
  const iir_fused::Pass ps =
      iir_fused::make_pass(reinterpret_cast<const unsigned char*>(in.data()), in.stride(),
                           reinterpret_cast<unsigned char*>(out.data()), out.stride(), lines, len,
                           e, cn, bt, cval, scratch);
  const long long groups = (lines + iir_fused::kLines - 1) / iir_fused::kLines;
  const unsigned grid = unsigned(groups);
  // The row pass per channel count (constant tile steps and pitches: no runtime division or
  // multiply a sample); the column pass does not depend on it.
  if constexpr (!kRows)
    iir_fused_kernel<S, D, kRows, 1><<<grid, iir_fused::kThreads, 0, st>>>(ps, k);
  else if (cn == 1)
    iir_fused_kernel<S, D, kRows, 1><<<grid, iir_fused::kThreads, 0, st>>>(ps, k);
  else if (cn == 2)
    iir_fused_kernel<S, D, kRows, 2><<<grid, iir_fused::kThreads, 0, st>>>(ps, k);
  else if (cn == 3)
    iir_fused_kernel<S, D, kRows, 3><<<grid, iir_fused::kThreads, 0, st>>>(ps, k);
  else
    iir_fused_kernel<S, D, kRows, 4><<<grid, iir_fused::kThreads, 0, st>>>(ps, k);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
}

/// Which schedule a pass over `lines` lines of cn channels runs. The fused kernel takes
/// 1..kMaxCn channels (every count the op registers) but one thread block per 32 lines, two
/// blocks an SM: with fewer than kFusedMinLines lines it leaves most of the 132 SMs idle and
/// the five kernels, parallel over (line, block), are faster. Measured on the H100 (sigma 8,
/// both passes): 1920x1080 u8x1 (1080 and 1920 lines) five kernels 203 us, fused 364; u8x3
/// (3240, 5760 lines) 422 against 356; 8192^2 u8x1 5643 against 2826.
constexpr long long kFusedMinLines = 2048;
bool fused(int cn, long long lines) {
  return cn <= iir_fused::kMaxCn && lines >= kFusedMinLines;
}

/// Doubles of scratch a pass over `lines` lines of `len` positions takes, on its schedule.
std::size_t pass_doubles(int cn, long long lines, long long len, long long e) {
  return fused(cn, lines) ? std::size_t(iir_fused::scratch_doubles(lines, len, e))
                          : std::size_t(iir_pass_doubles(lines, len, e));
}

// The call's scratch, taken from exec.scratch in one block: the f32 intermediate (tight rows),
// the checkpoints of the larger pass and the 2e extension positions after them. Null pointers
// when the arena measures (gaussian_iir_workspace_bytes).
struct IirScratch {
  std::shared_ptr<std::byte> block;  ///< keeps an allocated block until the launches are queued
  ImageView tmp;
  double* c = nullptr;
};

IirScratch iir_scratch(const detail::Exec& exec, const ConstImageView& s,
                       const GaussianIirParams& p) {
  const long long e = detail::iir_extension(p);
  const int cn = s.channels();
  const long long w = s.width(), h = s.height();
  const Format ft{Depth::f32, cn};
  const std::int64_t tmp_stride = std::int64_t(ft.pixel_bytes()) * w;
  const std::size_t tmp_bytes = detail::align_scratch(std::size_t(tmp_stride * h));
  const std::size_t elems =
      std::max(pass_doubles(cn, h * cn, w, e), pass_doubles(cn, w * cn, h, e));
  IirScratch out;
  out.block = exec.scratch->take(exec, tmp_bytes + elems * sizeof(double));
  if (!out.block) return out;  // measuring
  out.tmp = ImageView(out.block.get(), w, h, tmp_stride, ft, s.location());
  out.c = reinterpret_cast<double*>(out.block.get() + tmp_bytes);  // 256-aligned
  return out;
}

// "gaussian_iir.workspace": the scratch layout alone, for the query.
void iir_layout(const detail::Exec& exec, const ConstImageView& s, const GaussianIirParams& p) {
  (void)iir_scratch(exec, s, p);
}

template <class T>
void launch_iir(const detail::Exec& exec, const ConstImageView& s, const ImageView& d,
                const GaussianIirParams& p) {
  const cudaStream_t st = static_cast<cudaStream_t>(exec.queue);
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const long long e = detail::iir_extension(p);
  // The constant border's value in T (both passes, as in the reference); a u8 value is exact in
  // the f32 intermediate.
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  // Taken before anything is queued (a too-small workspace throws with dst untouched); an
  // allocated block is freed on the stream when this function returns (after the launches).
  const IirScratch sc = iir_scratch(exec, s, p);
  const int cn = s.channels();
  if (fused(cn, s.height() * cn))  // rows
    launch_fused_pass<T, float, true>(s, sc.tmp, k, e, p.border.type, cval, sc.c, st);
  else
    launch_pass<T, float, true>(s, sc.tmp, k, e, p.border.type, cval, sc.c, st);
  if (fused(cn, s.width() * cn))  // columns
    launch_fused_pass<float, T, false>(sc.tmp, d, k, e, p.border.type, cval, sc.c, st);
  else
    launch_pass<float, T, false>(sc.tmp, d, k, e, p.border.type, cval, sc.c, st);
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_iir) {
  using namespace pixflow;
  // Registered with the Exec itself (not the stream tail of register.cuh): the entry point
  // takes its scratch from exec.scratch.
  using detail::Support;
  const Support u8 = cuda::depths({Depth::u8}), f32 = cuda::depths({Depth::f32});
  table.add<const ConstImageView&, const ImageView&, const GaussianIirParams&>(
      "gaussian_iir", Backend::cuda, &cuda::launch_iir<std::uint8_t>, u8);
  table.add<const ConstImageView&, const ImageView&, const GaussianIirParams&>(
      "gaussian_iir", Backend::cuda, &cuda::launch_iir<float>, f32);
  table.add<const ConstImageView&, const GaussianIirParams&>(detail::scratch_op("gaussian_iir"),
                                                             Backend::cuda, &cuda::iir_layout,
                                                             cuda::depths({Depth::u8, Depth::f32}));
}
