// OpenCL epsilon filter (kernels/epsilon.cl): one work-item per pixel, the window through
// border_index. u8 compares and sums in integers (the threshold floor(t), capped at 255, is
// made here: the sample distances are integers, so it is the reference's double comparison);
// f32 compares and sums in double as the reference does, so it needs cl_khr_fp64. The constant
// border's value is saturated to T here with the reference's saturate_cast.
#include <cmath>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/error.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::opencl {
namespace {

void epsilon(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p,
             const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  const bool f32 = src.depth() == Depth::f32;
  if (f32) require_fp64(l, "epsilon");
  Kernel k(l, "epsilon", depth_options(src.depth()), "epsilon", "epsilon");
  k.image(src)
      .image(dst)
      .arg(cl_int(dst.width()))
      .arg(cl_int(dst.height()))
      .arg(cl_int(src.channels()))
      .arg(cl_int(p.r))
      .arg(cl_int(p.border.type));
  if (f32) {
    k.arg(cl_double(p.t)).arg(cl_float(detail::saturate_cast<float>(p.border.value)));
  } else {
    // t >= 0 (the schema); |v - centre| is an integer in [0, 255].
    const int t = p.t >= 255.0 ? 255 : int(std::floor(p.t));
    k.arg(cl_int(t)).arg(cl_int(detail::saturate_cast<std::uint8_t>(p.border.value)));
  }
  k.run(std::size_t(dst.width()), std::size_t(dst.height()), 16, 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_epsilon) {
  using namespace pixflow;
  opencl::add<&opencl::epsilon>(table, "epsilon", opencl::depths({Depth::u8, Depth::f32}));
}
