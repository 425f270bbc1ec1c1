// morphology (dilate, erode, open, close, gradient, tophat, blackhat): validation,
// dispatch, registry entries. The composites run as sequences of ref::morph_pass through
// temporary images at src's location, each pass applying the border to its own input, as
// cv::morphologyEx does.
#include <algorithm>
#include <type_traits>

#include "src/base/numeric.hpp"
#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

namespace {
constexpr int kMaxKernel = 255;
constexpr int kMaxIterations = 100;

// dst = a - b: saturating for integers, plain for f32 (a point-wise step of the composites).
template <class T>
void diff_rows(const ConstImageView& a, const ConstImageView& b, const ImageView& dst,
               detail::Rows rows) {
  const std::int64_t n = a.width() * a.channels();
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const T* pa = a.row<T>(y);
    const T* pb = b.row<T>(y);
    T* out = dst.row<T>(y);
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, float>)
        out[i] = pa[i] - pb[i];
      else
        out[i] = detail::saturate_cast<T>(std::int64_t(pa[i]) - std::int64_t(pb[i]));
    }
  }
}

void diff(const ConstImageView& a, const ConstImageView& b, const ImageView& dst,
          detail::Rows rows) {
  switch (a.depth()) {
    case Depth::u8:
      return diff_rows<std::uint8_t>(a, b, dst, rows);
    case Depth::u16:
      return diff_rows<std::uint16_t>(a, b, dst, rows);
    case Depth::f32:
      return diff_rows<float>(a, b, dst, rows);
    default:
      return;
  }
}
}  // namespace

void morphology(ConstImageView src, ImageView dst, MorphOp mop, const MorphParams& p,
                const Context& ctx) {
  const char* op = morph_op_name(mop);
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::f32});
  detail::check_range(op, "kw", p.kw, 1, kMaxKernel);
  detail::check_range(op, "kh", p.kh, 1, kMaxKernel);
  detail::check_range(op, "iterations", p.iterations, 1, kMaxIterations);
  detail::check_border(op, p.border);
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  if (b != Backend::ref && b != Backend::cpu && b != Backend::cuda)
    detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");

  // n iterations of a rect kw x kh == one pass of the enlarged rect with the anchor
  // scaled by n (OpenCV morphOp, imgproc/src/morph.dispatch.cpp).
  const int n = p.iterations;
  const int kw = p.kw + (n - 1) * (p.kw - 1), kh = p.kh + (n - 1) * (p.kh - 1);
  const int ax = (p.kw / 2) * n, ay = (p.kh / 2) * n;
  // Composites on a device take their temporaries from the stream-ordered allocator (no
  // host sync; capturable); dilate and erode allocate nothing.
  auto pass = [&](ConstImageView in, ImageView out, MorphOp which) {
#if PIXFLOW_HAVE_CUDA
    if (b == Backend::cuda)
      return cuda::morph_pass(in, out, which, kw, kh, ax, ay, p.border, ctx.stream);
#endif
    detail::run_host(b, ctx, out.height(), [&](detail::Rows r) {
      ref::morph_pass(in, out, which, kw, kh, p.border, r, ax, ay);
    });
  };
  auto sub = [&](ConstImageView a, ConstImageView c, ImageView out) {
#if PIXFLOW_HAVE_CUDA
    // Saturating for integers, plain for f32: exactly arith's sub.
    if (b == Backend::cuda) return cuda::arith(a, c, out, ArithOp::sub, ctx.stream);
#endif
    detail::run_host(b, ctx, out.height(), [&](detail::Rows r) { diff(a, c, out, r); });
  };
  auto temp = [&] {
#if PIXFLOW_HAVE_CUDA
    if (b == Backend::cuda)
      return cuda::scratch_image(src.width(), src.height(), src.format(), src.location(),
                                 ctx.stream);
#endif
    return Image(src.width(), src.height(), src.format(), src.location());
  };
  switch (mop) {
    case MorphOp::dilate:
    case MorphOp::erode:
      pass(src, dst, mop);
      return;
    case MorphOp::open: {
      Image t = temp();
      pass(src, t, MorphOp::erode);
      pass(t, dst, MorphOp::dilate);
      return;
    }
    case MorphOp::close: {
      Image t = temp();
      pass(src, t, MorphOp::dilate);
      pass(t, dst, MorphOp::erode);
      return;
    }
    case MorphOp::gradient: {
      Image e = temp(), d = temp();
      pass(src, e, MorphOp::erode);
      pass(src, d, MorphOp::dilate);
      sub(d, e, dst);
      return;
    }
    case MorphOp::tophat: {
      Image t = temp(), o = temp();
      pass(src, t, MorphOp::erode);
      pass(t, o, MorphOp::dilate);
      sub(src, o, dst);
      return;
    }
    case MorphOp::blackhat: {
      Image t = temp(), c = temp();
      pass(src, t, MorphOp::dilate);
      pass(t, c, MorphOp::erode);
      sub(c, src, dst);
      return;
    }
  }
  detail::fail(Status::internal, op, "unknown morphology op");
}

namespace detail {
void register_morphology(std::vector<OpInfo>& r) {
  struct Entry {
    MorphOp op;
    const char* doc;
  };
  const Entry entries[] = {
      {MorphOp::dilate, "maximum over a kw x kh rectangle (u8, u16, f32; exact)"},
      {MorphOp::erode, "minimum over a kw x kh rectangle (u8, u16, f32; exact)"},
      {MorphOp::open, "dilate(erode(src)) (u8, u16, f32; exact)"},
      {MorphOp::close, "erode(dilate(src)) (u8, u16, f32; exact)"},
      {MorphOp::gradient, "dilate(src) - erode(src) (u8, u16, f32; exact)"},
      {MorphOp::tophat, "src - open(src), saturating (u8, u16, f32; exact)"},
      {MorphOp::blackhat, "close(src) - src, saturating (u8, u16, f32; exact)"},
  };
  for (const Entry& e : entries) {
    std::vector<ParamInfo> params{
        {"k", "3", "rectangle size in [1, 255]; sets kw and kh (anchor k/2, as OpenCV)"},
        {"kw", "k", "rectangle width in [1, 255]"},
        {"kh", "k", "rectangle height in [1, 255]"},
        {"iterations", "1", "passes in [1, 100] (one pass of the enlarged rectangle)"}};
    for (auto& b : border_params("reflect101")) params.push_back(b);
    const MorphOp mop = e.op;
    r.push_back({morph_op_name(mop), e.doc, params, [mop](const OpArgs& a) -> StageFn {
                   const int k = a.get_int("k", 3, 1, kMaxKernel);
                   MorphParams p;
                   p.kw = a.get_int("kw", k, 1, kMaxKernel);
                   p.kh = a.get_int("kh", k, 1, kMaxKernel);
                   p.iterations = a.get_int("iterations", 1, 1, kMaxIterations);
                   p.border = a.get_border(Border::reflect101());
                   check_border(morph_op_name(mop), p.border);
                   return [p, mop](ConstImageView src, const Context& ctx) {
                     Image dst(src.width(), src.height(), src.format(), src.location());
                     morphology(src, dst, mop, p, ctx);
                     return dst;
                   };
                 }});
  }
}
}  // namespace detail

}  // namespace pixflow
