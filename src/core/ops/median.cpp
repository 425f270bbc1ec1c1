// median: validation, dispatch, registry entry.
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
}

void median(ConstImageView src, ImageView dst, const MedianParams& p, const Context& ctx) {
  constexpr const char* op = "median";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::f32});
  detail::check_odd(op, "kw", p.kw, kMaxKernel);
  detail::check_odd(op, "kh", p.kh, kMaxKernel);
  detail::check_border(op, p.border);
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::median(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::median(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_median(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{{"k", "3", "odd window size in [1, 255]; sets kw and kh"},
                                {"kw", "k", "odd window width in [1, 255]"},
                                {"kh", "k", "odd window height in [1, 255]"}};
  for (auto& b : border_params("replicate")) params.push_back(b);
  r.push_back({"median", "median of the kw x kh window (u8, u16, f32; exact)", params,
               [](const OpArgs& a) -> StageFn {
                 constexpr const char* op = "median";
                 const int k = a.get_int("k", 3, 1, kMaxKernel);
                 if (a.has("k")) check_odd(op, "k", k, kMaxKernel);
                 MedianParams p;
                 p.kw = a.get_int("kw", k, 1, kMaxKernel);
                 p.kh = a.get_int("kh", k, 1, kMaxKernel);
                 check_odd(op, "kw", p.kw, kMaxKernel);
                 check_odd(op, "kh", p.kh, kMaxKernel);
                 p.border = a.get_border(Border::replicate());
                 check_border(op, p.border);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   median(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
