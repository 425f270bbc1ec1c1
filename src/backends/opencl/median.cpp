// OpenCL median (kernels/median.cl): u8, u16, f32, any channel count, any odd kw x kh up to
// 255 x 255, every border. Exact: selection by counting on order keys (the reference's order:
// integers by value, f32 by totalOrder), so the result is the reference's sample.
#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

void median(const ConstImageView& s, const ImageView& d, const MedianParams& p, const Launch& l) {
  const int ch = s.channels(), n = int(d.width()) * ch, rows = int(d.height());
  Kernel k(l, "median", depth_options(s.depth()), "median", "median");
  k.image(s)
      .image(d)
      .arg(cl_int(s.width()))
      .arg(cl_int(s.height()))
      .arg(cl_int(ch))
      .arg(cl_int(p.kw))
      .arg(cl_int(p.kh))
      .arg(cl_int(p.border.type));
  // The constant border's value as the reference takes it: saturated to the depth.
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      s.depth(), [&](auto t) { k.arg(detail::saturate_cast<decltype(t)>(p.border.value)); });
  k.run(std::size_t(n), std::size_t(rows), 64, 4);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_median) {
  using namespace pixflow;
  opencl::add<&opencl::median>(table, "median",
                               opencl::depths({Depth::u8, Depth::u16, Depth::f32}));
}
