// box: validation, dispatch, registry entry.
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

void box(ConstImageView src, ImageView dst, const BoxParams& p, const Context& ctx) {
  constexpr const char* op = "box";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::f32});
  detail::check_range(op, "kw", p.kw, 1, kMaxKernel);
  detail::check_range(op, "kh", p.kh, 1, kMaxKernel);
  detail::check_border(op, p.border);
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::box(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::box(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_box(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{
      {"k", "3", "window size in [1, 255]; sets kw and kh (anchor k/2, as cv::blur)"},
      {"kw", "k", "window width in [1, 255]"},
      {"kh", "k", "window height in [1, 255]"},
      {"normalize", "1", "1: mean (integers round half to even); 0: saturated sum"}};
  for (auto& b : border_params("reflect101")) params.push_back(b);
  r.push_back({"box", "mean (or sum) of the kw x kh window (u8, u16, f32)", params,
               [](const OpArgs& a) -> StageFn {
                 const int k = a.get_int("k", 3, 1, kMaxKernel);
                 BoxParams p;
                 p.kw = a.get_int("kw", k, 1, kMaxKernel);
                 p.kh = a.get_int("kh", k, 1, kMaxKernel);
                 p.normalize = a.get_bool("normalize", true);
                 p.border = a.get_border(Border::reflect101());
                 check_border("box", p.border);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   box(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
