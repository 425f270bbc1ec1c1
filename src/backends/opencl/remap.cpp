// OpenCL remap (kernels/remap.cl): one work-item per destination pixel, built per sample type
// (u8, u16, f32; any channel count 1..4, as CUDA registers). The constant border's value is
// saturated to T here with the reference's saturate_cast (src/base/numeric.hpp) and passed
// as float (exact for u8 / u16).
#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, const Launch& l) {
  if (dst.width() == 0 || dst.height() == 0) return;
  const float cval = detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      src.depth(),
      [&](auto t) { return float(detail::saturate_cast<decltype(t)>(p.border.value)); });
  const float invalid = p.border.type == BorderType::constant ? cval : 0.0f;
  Kernel(l, "remap", depth_options(src.depth()), "remap", "remap")
      .image(src)
      .image(map_x)
      .image(map_y)
      .image(dst)
      .arg(cl_int(src.width()))
      .arg(cl_int(src.height()))
      .arg(cl_int(src.channels()))
      .arg(cl_int(dst.width()))
      .arg(cl_int(dst.height()))
      .arg(cl_int(p.interp == Interp::linear ? 1 : 0))
      .arg(cl_int(p.border.type))
      .arg(cl_float(cval))
      .arg(cl_float(invalid))
      .run(std::size_t(dst.width()), std::size_t(dst.height()), 16, 16);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_remap) {
  using namespace pixflow;
  // Any channel count 1..4 (core validates 1, 3 or 4); maps are f32 x 1.
  opencl::add<&opencl::remap>(table, "remap", opencl::depths({Depth::u8, Depth::u16, Depth::f32}));
}
