// gaussian_iir on CUDA: the reference's double-precision recursion (src/common/iir.hpp) with
// one thread per line — rows first into an f32 intermediate, then columns — so the result
// equals the reference bit for bit. Scratch comes from cudaMallocAsync on the op's stream
// (no host synchronisation; graph capture records it as memory nodes). The scratch of all
// lines is interleaved (element i of line l at i * lines + l) so that its accesses are
// coalesced. This is the correct, slow first version: in the row pass each thread walks its
// own row; see bench/NOTES.md.
#include <cstdint>

#include "src/common/iir.hpp"
#include "src/core/check.hpp"
#include "src/cuda/check.cuh"
#include "src/cuda/common/image.cuh"
#include "src/cuda/cuda_ops.hpp"

namespace pixflow::cuda {
namespace {

struct Interleaved {
  double* p;
  long long lines;
  __device__ __forceinline__ double& operator[](long long i) const { return p[i * lines]; }
};

template <class T>
__global__ void iir_rows_kernel(DevView<T> src, DevView<float> tmp, detail::IirCoeffs k,
                                std::int64_t e, BorderType bt, double cval, double* scratch) {
  const long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int cn = src.cn;
  const long long lines = (long long)src.h * cn;
  if (line >= lines) return;
  const long long y = line / cn;
  const int c = int(line - y * cn);
  const T* in = src.row(y);
  float* out = tmp.row(y);
  detail::iir_filter_line(
      src.w, e, bt, cval, k, Interleaved{scratch + line, lines},
      [&](std::int64_t i) { return double(in[i * cn + c]); },
      [&](std::int64_t i, double v) { out[i * cn + c] = float(v); });
}

template <class T>
__global__ void iir_cols_kernel(DevView<float> tmp, DevView<T> dst, detail::IirCoeffs k,
                                std::int64_t e, BorderType bt, double cval, double* scratch) {
  // Adjacent threads take adjacent columns: every step of the recursion is coalesced.
  const long long line = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int cn = tmp.cn;
  const long long lines = (long long)tmp.w * cn;
  if (line >= lines) return;
  const long long x = line / cn;
  const int c = int(line - x * cn);
  detail::iir_filter_line(
      tmp.h, e, bt, cval, k, Interleaved{scratch + line, lines},
      [&](std::int64_t i) { return double(tmp.row(i)[x * cn + c]); },
      [&](std::int64_t i, double v) {
        dst.row(i)[x * cn + c] = detail::saturate_cast<T>(double(float(v)));
      });
}

template <class T>
void launch_iir(const ConstImageView& s, const ImageView& d, const GaussianIirParams& p,
                cudaStream_t st) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const std::int64_t e = detail::iir_extension(p);
  const double cval = double(detail::saturate_cast<T>(p.border.value));
  const int cn = s.channels();
  const std::int64_t w = s.width(), h = s.height();
  const std::size_t tmp_stride = std::size_t(w * cn) * sizeof(float);
  const std::size_t tmp_bytes = tmp_stride * std::size_t(h);
  const std::size_t rows_scratch = std::size_t(w + 2 * e + 3) * std::size_t(h * cn);
  const std::size_t cols_scratch = std::size_t(h + 2 * e + 3) * std::size_t(w * cn);
  const std::size_t scratch_bytes = std::max(rows_scratch, cols_scratch) * sizeof(double);
  void* tmp = nullptr;
  void* scratch = nullptr;
  PIXFLOW_CUDA_CHECK(cudaMallocAsync(&tmp, tmp_bytes, st));
  try {
    PIXFLOW_CUDA_CHECK(cudaMallocAsync(&scratch, scratch_bytes, st));
  } catch (...) {
    (void)cudaFreeAsync(tmp, st);
    throw;
  }
  ImageView tv(tmp, w, h, std::int64_t(tmp_stride), {Depth::f32, cn}, s.location());
  const int bs = 128;
  iir_rows_kernel<T><<<unsigned((h * cn + bs - 1) / bs), bs, 0, st>>>(
      dev_view<T>(s), dev_view<float>(tv), k, e, p.border.type, cval,
      static_cast<double*>(scratch));
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) {
    iir_cols_kernel<T><<<unsigned((w * cn + bs - 1) / bs), bs, 0, st>>>(
        dev_view<float>(ConstImageView(tv)), dev_view<T>(d), k, e, p.border.type, cval,
        static_cast<double*>(scratch));
    err = cudaGetLastError();
  }
  (void)cudaFreeAsync(scratch, st);
  (void)cudaFreeAsync(tmp, st);
  if (err != cudaSuccess) throw_cuda_error(err, "gaussian_iir kernel launch", __FILE__, __LINE__);
  PIXFLOW_CUDA_CHECK_LAUNCH("gaussian_iir");
}

}  // namespace

void gaussian_iir(const ConstImageView& src, const ImageView& dst, const GaussianIirParams& p,
                  void* stream) {
  switch (src.depth()) {
    case Depth::u8:
      return launch_iir<std::uint8_t>(src, dst, p, to_stream(stream));
    case Depth::f32:
      return launch_iir<float>(src, dst, p, to_stream(stream));
    default:
      detail::fail(Status::unsupported, "gaussian_iir", "depth ", depth_name(src.depth()));
  }
}

}  // namespace pixflow::cuda
