// OpenCL morph_pass (kernels/morphology.cl), the one pass core runs for dilate, erode and the
// composites open, close, gradient, tophat, blackhat (src/core/ops/morphology.cpp; their
// "sub" is pointwise.cpp's). u8, u16, f32, any channel count, any window and anchor (the
// iterations' enlarged rectangles included), every border. Two kernels: the extreme over the
// window's rows into an intermediate image, then over its columns. No morph_composite: core
// runs the passes.
#include <cstdint>
#include <memory>
#include <string>

#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/numeric.hpp"
#include "src/base/passes.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kLx = 64, kLy = 4;

void morph_pass(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                const Launch& l) {
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  const cl_int is_max = m.op == MorphOp::dilate ? 1 : 0;
  const cl_int btype = cl_int(m.border.type);
  const std::string options = depth_options(s.depth());
  // The column extremes: an image of the source's format, rows packed.
  const std::int64_t stride = s.row_bytes();
  const std::shared_ptr<std::byte> buf = allocate(l.device, std::size_t(stride) * std::size_t(h));
  const ImageView t(buf.get(), w, h, stride, s.format(), Location::opencl(l.device));
  Kernel cols(l, "morphology", options, "morph_cols", "morph_pass");
  Kernel rows(l, "morphology", options, "morph_rows", "morph_pass");
  cols.image(s)
      .image(t)
      .arg(cl_int(n))
      .arg(cl_int(h))
      .arg(cl_int(m.kh))
      .arg(cl_int(m.ay))
      .arg(btype);
  rows.image(t)
      .image(d)
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(cl_int(ch))
      .arg(cl_int(m.kw))
      .arg(cl_int(m.ax))
      .arg(btype);
  // The constant border's value as the reference takes it: saturated to the depth.
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(s.depth(), [&](auto t0) {
    const auto cval = detail::saturate_cast<decltype(t0)>(m.border.value);
    cols.arg(cval);
    rows.arg(cval);
  });
  cols.arg(is_max).run(std::size_t(n), std::size_t(h), kLx, kLy);
  // The in-order queue runs the row pass after the column pass; the intermediate's buffer is
  // freed by the driver once both have finished (allocate's deleter).
  rows.arg(is_max).run(std::size_t(n), std::size_t(h), kLx, kLy);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_morphology) {
  using namespace pixflow;
  opencl::add<&opencl::morph_pass>(table, "morph_pass",
                                   opencl::depths({Depth::u8, Depth::u16, Depth::f32}));
}
