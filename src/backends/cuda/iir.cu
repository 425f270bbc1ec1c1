// gaussian_iir on CUDA: the reference's double-precision recursion (src/base/iir.hpp) with
// one thread per line — rows first into an f32 intermediate, then columns — so the result
// equals the reference bit for bit. Scratch comes from cudaMallocAsync on the op's stream
// (cuda_ops.hpp's stream_alloc: no host synchronisation; graph capture records memory nodes). The
// scratch of all lines is interleaved (element i of line l at i * lines + l) so that its accesses
// are coalesced, and rows are filtered as columns of a transposed copy. Parallelism is one thread
// per line, so this is latency-bound (bench/NOTES.md): block-parallel recursions (Nehab et al.) are
// the way to the target.
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

struct Interleaved {
  double* p;
  long long lines;
  __device__ __forceinline__ double& operator[](long long i) const { return p[i * lines]; }
};

// One thread per column line (adjacent threads, adjacent columns: every step coalesced).
// Rows are filtered as the columns of a transposed copy, which gives the same lines in the
// same order as the reference's row pass.
template <class S, class D>
__global__ void iir_cols_kernel(DevView<S> in, DevView<D> out, detail::IirCoeffs k, std::int64_t e,
                                BorderType bt, double cval, double* scratch) {
  const long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int cn = in.cn;
  const long long lines = (long long)in.w * cn;
  if (line >= lines) return;
  const long long x = line / cn;
  const int c = int(line - x * cn);
  detail::iir_filter_line(
      in.h, e, bt, cval, k, Interleaved{scratch + line, lines},
      [&](std::int64_t i) { return double(in.row(i)[x * cn + c]); },
      [&](std::int64_t i, double v) {
        out.row(i)[x * cn + c] = detail::saturate_cast<D>(double(float(v)));
      });
}

template <class S, class D>
void launch_cols(const ConstImageView& in, const ImageView& out, const detail::IirCoeffs& k,
                 std::int64_t e, const GaussianIirParams& p, double cval, double* scratch,
                 cudaStream_t st) {
  const long long lines = in.width() * in.channels();
  iir_cols_kernel<S, D><<<unsigned((lines + kIirThreads - 1) / kIirThreads), kIirThreads, 0, st>>>(
      dev_view<S>(in), dev_view<D>(out), k, e, p.border.type, cval, scratch);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
}

template <class T>
void launch_iir(const ConstImageView& s, const ImageView& d, const GaussianIirParams& p,
                cudaStream_t st) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const std::int64_t e = detail::iir_extension(p);
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  const int cn = s.channels();
  const std::int64_t w = s.width(), h = s.height();
  const Location loc = s.location();
  auto tight = [](std::int64_t width, Format f) { return std::int64_t(f.pixel_bytes()) * width; };
  const Format ft{Depth::f32, cn};
  // srcT (h x w transposed, T), tmpT (f32, transposed), tmp (f32), and the recursion scratch,
  // with tight rows; freed on the stream when this function returns (after the launches).
  const auto src_t = stream_alloc(std::size_t(tight(h, s.format()) * w), st);
  const auto tmp_t = stream_alloc(std::size_t(tight(h, ft) * w), st);
  const auto tmp = stream_alloc(std::size_t(tight(w, ft) * h), st);
  const std::size_t scratch_elems = std::max(std::size_t(w + 2 * e + 3) * std::size_t(h * cn),
                                             std::size_t(h + 2 * e + 3) * std::size_t(w * cn));
  const auto scratch = stream_alloc(scratch_elems * sizeof(double), st);
  ImageView vs_t(src_t.get(), h, w, tight(h, s.format()), s.format(), loc);
  ImageView vtmp_t(tmp_t.get(), h, w, tight(h, ft), ft, loc);
  ImageView vtmp(tmp.get(), w, h, tight(w, ft), ft, loc);
  auto* sc = reinterpret_cast<double*>(scratch.get());
  transpose(s, vs_t, st);
  launch_cols<T, float>(vs_t, vtmp_t, k, e, p, cval, sc, st);  // the rows of src
  transpose(vtmp_t, vtmp, st);
  launch_cols<float, T>(vtmp, d, k, e, p, cval, sc, st);  // the columns
}

}  // namespace
}  // namespace pixflow::cuda

PIXFLOW_REGISTER_IMPLS(cuda_iir) {
  using namespace pixflow;
  cuda::add_depths<Depth::u8, Depth::f32>(table, "gaussian_iir",
                                          [](auto t) { return &cuda::launch_iir<decltype(t)>; });
}
