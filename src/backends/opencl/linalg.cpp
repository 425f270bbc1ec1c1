// OpenCL dot and matmul (kernels/linalg.cl), the API-only two-input ops (core calls
// dispatch(op, ctx, a, a, b, dst)). One work-item per output, the reference's sums in its
// order: the results are bit-identical to it (f32 included, within the documented bound by
// being the reference's own float sum; s32 exact in 128 bits, saturated).
#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"

namespace pixflow::opencl {
namespace {

void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  Kernel(l, "linalg", depth_options(Depth::f32), "dot_f32x4", "dot")
      .image(a)
      .image(b)
      .image(dst)
      .arg(cl_int(dst.width()))
      .arg(cl_int(dst.height()))
      .run(std::size_t(dst.width()), std::size_t(dst.height()), 64, 4);
}

// a is M x K (height M, width K), b is K x N, c is M x N.
void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, const Launch& l) {
  const int M = int(a.height()), K = int(a.width()), N = int(b.width());
  if (M == 0 || N == 0) return;
  Kernel(l, "linalg", depth_options(a.depth()), "matmul", "matmul")
      .image(a)
      .image(b)
      .image(c)
      .arg(cl_int(M))
      .arg(cl_int(K))
      .arg(cl_int(N))
      .run(std::size_t(N), std::size_t(M), 16, 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_linalg) {
  using namespace pixflow;
  // dot: f32 x 4 vectors per pixel -> f32 x 1.
  opencl::add<&opencl::dot>(table, "dot", detail::Support::of({Depth::f32}, {4}));
  // matmul: one-channel f32 or s32 matrices (a and b of the same depth, validated by core).
  opencl::add<&opencl::matmul>(table, "matmul", detail::Support::of({Depth::f32, Depth::s32}, {1}));
}
