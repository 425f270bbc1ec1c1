// dilate, erode and the composites open, close, gradient, tophat, blackhat. Backends
// implement one pass ("morph_pass"); the composites are sequences of passes (and a
// saturating "sub", exactly arith's) through intermediates at the images' location, each
// pass applying the border to its own input, as cv::morphologyEx does. A backend may also
// register "morph_composite", the same sequence in one call (MorphPass::op = the composite).
#include "src/base/passes.hpp"
#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"
#include "src/schema/ops.hpp"

namespace pixflow {

void morphology(ConstImageView src, ImageView dst, MorphOp mop, const MorphParams& p,
                const Context& ctx) {
  detail::check_op(schema::morph_op(mop), src, dst, p);
  const detail::Exec exec = detail::select_exec(morph_op_name(mop), ctx, src.location());
  // n iterations of a rect kw x kh == one pass of the enlarged rect with the anchor
  // scaled by n (OpenCV morphOp, imgproc/src/morph.dispatch.cpp).
  const int n = p.iterations;
  detail::MorphPass m{mop,
                      p.kw + (n - 1) * (p.kw - 1),
                      p.kh + (n - 1) * (p.kh - 1),
                      (p.kw / 2) * n,
                      (p.kh / 2) * n,
                      p.border};
  const Format f = src.format();
  auto pass = [&](ConstImageView in, ImageView out, MorphOp which) {
    m.op = which;
    detail::run_on("morph_pass", exec, f, in, out, m);
  };
  auto sub = [&](ConstImageView a, ConstImageView b, ImageView out) {
    detail::run_on("sub", exec, f, a, b, out, ArithOp::sub);
  };
  // A backend may run a composite in one call ("morph_composite": the cpu backend does it
  // over cache-sized strips, with no whole intermediate image); else the passes below.
  if (mop != MorphOp::dilate && mop != MorphOp::erode &&
      detail::has_impl<ConstImageView, ImageView, detail::MorphPass>("morph_composite", exec, f)) {
    m.op = mop;
    return detail::run_on("morph_composite", exec, f, src, dst, m);
  }
  // Intermediates come from the device's stream-ordered workspace (no host sync, capturable).
  auto temp = [&] { return detail::scratch_image(exec, src.width(), src.height(), f); };
  switch (mop) {
    case MorphOp::dilate:
    case MorphOp::erode:
      return pass(src, dst, mop);
    case MorphOp::open: {
      Image t = temp();
      pass(src, t, MorphOp::erode);
      return pass(t, dst, MorphOp::dilate);
    }
    case MorphOp::close: {
      Image t = temp();
      pass(src, t, MorphOp::dilate);
      return pass(t, dst, MorphOp::erode);
    }
    case MorphOp::gradient: {
      Image e = temp(), d = temp();
      pass(src, e, MorphOp::erode);
      pass(src, d, MorphOp::dilate);
      return sub(d, e, dst);
    }
    case MorphOp::tophat: {
      Image t = temp(), o = temp();
      pass(src, t, MorphOp::erode);
      pass(t, o, MorphOp::dilate);
      return sub(src, o, dst);
    }
    case MorphOp::blackhat: {
      Image t = temp(), c = temp();
      pass(src, t, MorphOp::dilate);
      pass(t, c, MorphOp::erode);
      return sub(c, src, dst);
    }
  }
}

}  // namespace pixflow
