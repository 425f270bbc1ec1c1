// dilate, erode and the composites open, close, gradient, tophat, blackhat. Backends
// implement one pass ("morph_pass"); the composites are sequences of passes (and a
// saturating "sub", exactly arith's) through intermediates at the images' location, each
// pass applying the border to its own input, as cv::morphologyEx does. A backend may also
// register "morph_composite", the same sequence in one call (MorphPass::op = the composite),
// for all calls of its formats or, with "morph_composite.covers", for those it says.
// The intermediates are the call's scratch: the caller's Context::workspace when given, else
// stream-ordered (src/base/scratch.hpp); morphology_workspace_bytes measures the same takes.
#include "src/base/passes.hpp"
#include "src/core/check.hpp"
#include "src/core/dispatch.hpp"
#include "src/schema/ops.hpp"

namespace pixflow {

namespace {

bool is_composite(MorphOp mop) {
  return mop != MorphOp::dilate && mop != MorphOp::erode;
}

// The single pass core runs for `p` (n iterations of a rect kw x kh == one pass of the
// enlarged rect with the anchor scaled by n: OpenCV morphOp, imgproc/src/morph.dispatch.cpp).
detail::MorphPass pass_of(MorphOp mop, const MorphParams& p) {
  const int n = p.iterations;
  return {mop,
          p.kw + (n - 1) * (p.kw - 1),
          p.kh + (n - 1) * (p.kh - 1),
          (p.kw / 2) * n,
          (p.kh / 2) * n,
          p.border};
}

bool runs_fused(const detail::Exec& exec, const ConstImageView& src, const detail::MorphPass& m) {
  using detail::MorphCovers;
  using detail::MorphPass;
  const Format f = src.format();
  if (!is_composite(m.op) ||
      !detail::has_impl<ConstImageView, ImageView, MorphPass>("morph_composite", exec, f))
    return false;
  if (!detail::has_impl<ConstImageView, MorphPass, MorphCovers>("morph_composite.covers", exec, f))
    return true;
  const MorphCovers covers;
  detail::run_on("morph_composite.covers", exec, f, src, m, covers);
  return covers.yes;
}

// The intermediate images core runs `m` through on exec's backend, taken from the call's
// arena in one block: the call and morphology_workspace_bytes both get them from here.
std::array<Image, 2> intermediates(const detail::MorphPass& m, const detail::Exec& exec,
                                   const ConstImageView& src) {
  const bool one = m.op == MorphOp::open || m.op == MorphOp::close;
  const int n = runs_fused(exec, src, m) || !is_composite(m.op) ? 0 : one ? 1 : 2;
  return detail::scratch_images(exec, n, src.width(), src.height(), src.format());
}

}  // namespace

std::size_t morphology_workspace_bytes(ConstImageView src, MorphOp mop, const MorphParams& p,
                                       const Context& ctx) {
  const auto& s = schema::morph_op(mop);
  detail::check_source_shape(s, src, p);
  return detail::measure_scratch(s.name(), ctx, src.location(), [&](const detail::Exec& e) {
    intermediates(pass_of(mop, p), e, src);
  });
}

void morphology(ConstImageView src, ImageView dst, MorphOp mop, const MorphParams& p,
                const Context& ctx) {
  detail::check_op(schema::morph_op(mop), src, dst, p);
  detail::Exec exec = detail::select_exec(morph_op_name(mop), ctx, src.location());
  detail::ScratchArena scratch(morph_op_name(mop), ctx.workspace);
  exec.scratch = &scratch;
  detail::MorphPass m = pass_of(mop, p);
  const Format f = src.format();
  auto pass = [&](ConstImageView in, ImageView out, MorphOp which) {
    m.op = which;
    detail::run_on("morph_pass", exec, f, in, out, m);
  };
  auto sub = [&](ConstImageView a, ConstImageView b, ImageView out) {
    detail::run_on("sub", exec, f, a, b, out, ArithOp::sub);
  };
  // A backend may run a composite in one call ("morph_composite": the cpu backend does it
  // over cache-sized strips, with no whole intermediate image; the cuda backend 3x3 on one
  // u8 channel in one kernel, the intermediate in shared memory); else the passes below.
  if (runs_fused(exec, src, m)) return detail::run_on("morph_composite", exec, f, src, dst, m);
  // Intermediates: the caller's workspace, else the device's stream-ordered workspace (no
  // host sync, capturable). Taken before any pass is queued: a too-small workspace fails
  // with dst untouched.
  auto [t, u] = intermediates(m, exec, src);
  switch (mop) {
    case MorphOp::dilate:
    case MorphOp::erode:
      return pass(src, dst, mop);
    case MorphOp::open:
      pass(src, t, MorphOp::erode);
      return pass(t, dst, MorphOp::dilate);
    case MorphOp::close:
      pass(src, t, MorphOp::dilate);
      return pass(t, dst, MorphOp::erode);
    case MorphOp::gradient:  // t = erode, u = dilate
      pass(src, t, MorphOp::erode);
      pass(src, u, MorphOp::dilate);
      return sub(u, t, dst);
    case MorphOp::tophat:  // t = erode, u = open
      pass(src, t, MorphOp::erode);
      pass(t, u, MorphOp::dilate);
      return sub(src, u, dst);
    case MorphOp::blackhat:  // t = dilate, u = close
      pass(src, t, MorphOp::dilate);
      pass(t, u, MorphOp::erode);
      return sub(u, src, dst);
  }
}

}  // namespace pixflow
