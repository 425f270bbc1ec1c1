// convert: validation, dispatch, registry entry. Rule: docs/ops/convert.md.
#include <cmath>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

void convert(ConstImageView src, ImageView dst, const ConvertParams& p, const Context& ctx) {
  constexpr const char* op = "convert";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  switch (p.to) {
    case Depth::u8:
    case Depth::u16:
    case Depth::s16:
    case Depth::s32:
    case Depth::f32:
      break;
    default:
      detail::fail(Status::invalid_argument, op, "to must be u8, u16, s16, s32 or f32 (got ",
                   int(p.to), ")");
  }
  detail::require(std::isfinite(p.scale), Status::invalid_argument, op,
                  "scale must be a finite number (got ", p.scale, ")");
  detail::require(std::isfinite(p.offset), Status::invalid_argument, op,
                  "offset must be a finite number (got ", p.offset, ")");
  detail::check_dst(op, dst, src.width(), src.height(), {p.to, src.channels()});
  detail::check_same_location(op, src, dst);
  // In place only on identical views of the same depth (element i is read before it is
  // written); a depth change moves the samples, so any overlap is refused.
  detail::check_no_overlap(op, src, dst, /*allow_identical=*/p.to == src.depth());
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::convert(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::convert(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_convert(std::vector<OpInfo>& r) {
  r.push_back({"convert",
               "depth conversion: saturate(round_half_even(abs?(x*scale + offset))), in double",
               {{"to", "u8", "destination depth: u8, u16, s16, s32 or f32"},
                {"scale", "1", "multiplier"},
                {"offset", "0", "added after scaling"},
                {"abs", "0", "1: take the absolute value before rounding (cv::convertScaleAbs)"}},
               [](const OpArgs& a) -> StageFn {
                 ConvertParams p;
                 p.to = a.get_depth("to", Depth::u8);
                 p.scale = a.get_double("scale", 1.0);
                 p.offset = a.get_double("offset", 0.0);
                 p.abs = a.get_bool("abs", false);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), {p.to, src.channels()}, src.location());
                   convert(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
