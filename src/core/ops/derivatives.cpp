// sobel, scharr: validation, dispatch, registry entries. Rules: docs/ops/derivatives.md.
#include <cmath>

#include "src/base/deriv_taps.hpp"
#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {
namespace {

// Checks what does not depend on the images (shared by the op and the CLI's bind).
void check_sobel_params(const SobelParams& p) {
  constexpr const char* op = "sobel";
  detail::require(p.k == 1 || p.k == 3 || p.k == 5 || p.k == 7, Status::invalid_argument, op,
                  "k must be 1, 3, 5 or 7 (got ", p.k, ")");
  detail::require(p.dx >= 0 && p.dy >= 0 && p.dx + p.dy >= 1, Status::invalid_argument, op,
                  "dx and dy must be >= 0 with dx + dy >= 1 (got dx=", p.dx, ", dy=", p.dy, ")");
  const int max_order = p.k == 1 ? 2 : p.k - 1;
  detail::require(p.dx <= max_order, Status::invalid_argument, op, "dx must be in [0, ", max_order,
                  "] for k=", p.k, " (got ", p.dx, ")");
  detail::require(p.dy <= max_order, Status::invalid_argument, op, "dy must be in [0, ", max_order,
                  "] for k=", p.k, " (got ", p.dy, ")");
  detail::require(std::isfinite(p.scale), Status::invalid_argument, op,
                  "scale must be finite (got ", p.scale, ")");
  detail::require(std::isfinite(p.delta), Status::invalid_argument, op,
                  "delta must be finite (got ", p.delta, ")");
  detail::require(p.to == Depth::s16 || p.to == Depth::f32, Status::unsupported, op,
                  "to must be s16 or f32 (got ", depth_name(p.to), ")");
  detail::check_border(op, p.border);
}

void check_scharr_params(const ScharrParams& p) {
  constexpr const char* op = "scharr";
  detail::require(p.dx >= 0 && p.dy >= 0 && p.dx + p.dy == 1, Status::invalid_argument, op,
                  "dx and dy must be 0 or 1 with dx + dy == 1 (got dx=", p.dx, ", dy=", p.dy, ")");
  detail::require(std::isfinite(p.scale), Status::invalid_argument, op,
                  "scale must be finite (got ", p.scale, ")");
  detail::require(std::isfinite(p.delta), Status::invalid_argument, op,
                  "delta must be finite (got ", p.delta, ")");
  detail::require(p.to == Depth::s16 || p.to == Depth::f32, Status::unsupported, op,
                  "to must be s16 or f32 (got ", depth_name(p.to), ")");
  detail::check_border(op, p.border);
}

// Image checks common to both: u8 -> s16/f32, f32 -> f32.
void check_images(const char* op, const ConstImageView& src, const ImageView& dst, Depth to) {
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::f32});
  detail::require(src.depth() == Depth::u8 || to == Depth::f32, Status::unsupported, op,
                  "to must be f32 for an f32 source (got ", depth_name(to), ")");
  detail::check_dst(op, dst, src.width(), src.height(), Format{to, src.channels()});
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
}

// The CLI's `to`: the source's natural derivative depth unless given (s16 for u8, f32 for
// f32), so that "sobel" works on both without a key.
Depth stage_to(Depth src_depth, bool given, Depth to) {
  if (given) return to;
  return src_depth == Depth::f32 ? Depth::f32 : Depth::s16;
}

}  // namespace

void sobel(ConstImageView src, ImageView dst, const SobelParams& p, const Context& ctx) {
  constexpr const char* op = "sobel";
  check_sobel_params(p);
  check_images(op, src, dst, p.to);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::sobel(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::sobel(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

void scharr(ConstImageView src, ImageView dst, const ScharrParams& p, const Context& ctx) {
  constexpr const char* op = "scharr";
  check_scharr_params(p);
  check_images(op, src, dst, p.to);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::scharr(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::scharr(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_derivatives(std::vector<OpInfo>& r) {
  auto params = [](bool with_k) {
    std::vector<ParamInfo> v{{"dx", "1", "derivative order in x"},
                             {"dy", "0", "derivative order in y"}};
    if (with_k) v.push_back({"k", "3", "aperture: 1, 3, 5 or 7"});
    v.push_back({"scale", "1", "factor applied to the derivative"});
    v.push_back({"delta", "0", "added after scaling"});
    v.push_back({"to", "s16 (u8 source) / f32", "destination depth: s16 or f32"});
    auto b = border_params("reflect101");
    v.insert(v.end(), b.begin(), b.end());
    return v;
  };
  r.push_back({"sobel", "Sobel derivative (u8 -> s16 or f32, f32 -> f32)", params(true),
               [](const OpArgs& a) -> StageFn {
                 SobelParams p;
                 p.dx = a.get_int("dx", 1, 0, 6);
                 p.dy = a.get_int("dy", 0, 0, 6);
                 p.k = a.get_int("k", 3, 1, 7);
                 p.scale = a.get_double("scale", 1.0);
                 p.delta = a.get_double("delta", 0.0);
                 const bool given = a.has("to");
                 p.to = a.get_depth("to", Depth::s16);
                 p.border = a.get_border(Border::reflect101());
                 check_sobel_params(p);
                 return [p, given](ConstImageView src, const Context& ctx) {
                   SobelParams q = p;
                   q.to = stage_to(src.depth(), given, p.to);
                   Image dst(src.width(), src.height(), {q.to, src.channels()}, src.location());
                   sobel(src, dst, q, ctx);
                   return dst;
                 };
               }});
  r.push_back({"scharr", "Scharr 3x3 derivative, dx + dy == 1 (u8 -> s16 or f32, f32 -> f32)",
               params(false), [](const OpArgs& a) -> StageFn {
                 ScharrParams p;
                 p.dx = a.get_int("dx", 1, 0, 1);
                 p.dy = a.get_int("dy", 0, 0, 1);
                 p.scale = a.get_double("scale", 1.0);
                 p.delta = a.get_double("delta", 0.0);
                 const bool given = a.has("to");
                 p.to = a.get_depth("to", Depth::s16);
                 p.border = a.get_border(Border::reflect101());
                 check_scharr_params(p);
                 return [p, given](ConstImageView src, const Context& ctx) {
                   ScharrParams q = p;
                   q.to = stage_to(src.depth(), given, p.to);
                   Image dst(src.width(), src.height(), {q.to, src.channels()}, src.location());
                   scharr(src, dst, q, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
