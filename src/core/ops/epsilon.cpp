// epsilon: validation, dispatch, registry entry. Rules: docs/ops/epsilon.md.
#include <cmath>
#include <limits>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {
namespace {

constexpr int kMaxRadius = 32;

void check_params(const EpsilonParams& p) {
  constexpr const char* op = "epsilon";
  detail::require(p.r >= 0 && p.r <= kMaxRadius, Status::invalid_argument, op, "r must be in [0, ",
                  kMaxRadius, "] (got ", p.r, ")");
  detail::require(std::isfinite(p.t) && p.t >= 0, Status::invalid_argument, op,
                  "t must be finite and >= 0 (got ", p.t, ")");
  detail::check_border(op, p.border);
}

}  // namespace

void epsilon(ConstImageView src, ImageView dst, const EpsilonParams& p, const Context& ctx) {
  constexpr const char* op = "epsilon";
  check_params(p);
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::f32});
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(), [&](detail::Rows r) { ref::epsilon(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::epsilon(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_epsilon(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{{"r", "2", "window radius in [0, 32] (window 2r+1 square)"},
                                {"t", "20", "threshold >= 0: pixels with |p - centre| <= t count"}};
  auto b = border_params("reflect101");
  params.insert(params.end(), b.begin(), b.end());
  r.push_back({"epsilon", "mean of the window pixels within t of the centre (u8, f32)", params,
               [](const OpArgs& a) -> StageFn {
                 EpsilonParams p;
                 p.r = a.get_int("r", 2, 0, kMaxRadius);
                 p.t = a.get_double("t", 20.0, 0.0, std::numeric_limits<double>::max());
                 p.border = a.get_border(Border::reflect101());
                 check_params(p);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   epsilon(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
