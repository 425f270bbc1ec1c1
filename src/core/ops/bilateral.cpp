// bilateral: validation, dispatch, registry entry. Rules: docs/ops/bilateral.md.
#include <cmath>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {
namespace {

constexpr int kMaxD = 31;
constexpr int kMaxRadius = 31;

void check_params(const BilateralParams& p) {
  constexpr const char* op = "bilateral";
  detail::require(p.d >= 0 && p.d <= kMaxD, Status::invalid_argument, op, "d must be in [0, ",
                  kMaxD, "] (got ", p.d, ")");
  detail::require(std::isfinite(p.sigma_color), Status::invalid_argument, op,
                  "sigma_color must be finite (got ", p.sigma_color, ")");
  detail::require(std::isfinite(p.sigma_space), Status::invalid_argument, op,
                  "sigma_space must be finite (got ", p.sigma_space, ")");
  if (p.d == 0) {
    const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
    detail::require(std::rint(ss * 1.5) <= kMaxRadius, Status::invalid_argument, op,
                    "sigma_space must be < 21 when d=0 (the radius round(1.5*sigma_space) ",
                    "must be <= ", kMaxRadius, "; got sigma_space=", p.sigma_space, ")");
  }
  detail::check_border(op, p.border);
}

}  // namespace

void bilateral(ConstImageView src, ImageView dst, const BilateralParams& p, const Context& ctx) {
  constexpr const char* op = "bilateral";
  check_params(p);
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::f32});
  detail::check_channels(op, "src", src, {1, 3});
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(),
                       [&](detail::Rows r) { ref::bilateral(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::bilateral(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_bilateral(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{
      {"d", "9", "window diameter in [0, 31]; 0: radius round(1.5*sigma_space)"},
      {"sigma_color", "75", "colour sigma (<= 0 means 1)"},
      {"sigma_space", "75", "space sigma (<= 0 means 1)"}};
  auto b = border_params("reflect101");
  params.insert(params.end(), b.begin(), b.end());
  r.push_back({"bilateral",
               "edge-preserving bilateral filter as cv::bilateralFilter (u8, f32; 1 or 3 channels)",
               params, [](const OpArgs& a) -> StageFn {
                 BilateralParams p;
                 p.d = a.get_int("d", 9, 0, kMaxD);
                 p.sigma_color = a.get_double("sigma_color", 75.0);
                 p.sigma_space = a.get_double("sigma_space", 75.0);
                 p.border = a.get_border(Border::reflect101());
                 check_params(p);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   bilateral(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
