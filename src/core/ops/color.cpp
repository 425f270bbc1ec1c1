// gray: validation, dispatch, registry entry. Rule: docs/ops/color.md.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

void gray(ConstImageView src, ImageView dst, const GrayParams& p, const Context& ctx) {
  constexpr const char* op = "gray";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::f32});
  detail::check_channels(op, "src", src, {3, 4});
  detail::check_dst(op, dst, src.width(), src.height(), {src.depth(), 1});
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::gray(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::gray(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_color(std::vector<OpInfo>& r) {
  r.push_back({"gray",
               "RGB(A) to 1-channel luma, 0.299R + 0.587G + 0.114B (u8, u16, f32; = cv::cvtColor)",
               {{"from", "rgb", "channel order of the input: rgb or bgr (alpha is ignored)"}},
               [](const OpArgs& a) -> StageFn {
                 GrayParams p;
                 p.from_bgr = a.get_choice("from", "rgb", {"rgb", "bgr"}) == "bgr";
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), {src.depth(), 1}, src.location());
                   gray(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
