// transpose: validation, dispatch, registry entry.
#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

void transpose(ConstImageView src, ImageView dst, const Context& ctx) {
  constexpr const char* op = "transpose";
  detail::check_view(op, "src", src);
  detail::check_dst(op, dst, src.height(), src.width(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::transpose(src, dst, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::transpose(src, dst, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_transpose(std::vector<OpInfo>& r) {
  r.push_back({"transpose",
               "swap rows and columns (any depth and channels)",
               {},
               [](const OpArgs&) -> StageFn {
                 return [](ConstImageView src, const Context& ctx) {
                   Image dst(src.height(), src.width(), src.format(), src.location());
                   transpose(src, dst, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
