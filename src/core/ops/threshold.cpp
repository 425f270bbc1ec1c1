// threshold: validation, dispatch, registry entry. Rule: docs/ops/threshold.md.
#include <cmath>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

void threshold(ConstImageView src, ImageView dst, const ThresholdParams& p, const Context& ctx) {
  constexpr const char* op = "threshold";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  switch (p.type) {
    case ThresholdType::binary:
    case ThresholdType::binary_inv:
    case ThresholdType::trunc:
    case ThresholdType::tozero:
    case ThresholdType::tozero_inv:
      break;
    default:
      detail::fail(Status::invalid_argument, op,
                   "type must be binary, binary_inv, trunc, tozero or tozero_inv (got ",
                   int(p.type), ")");
  }
  detail::require(std::isfinite(p.t), Status::invalid_argument, op,
                  "t must be a finite number (got ", p.t, ")");
  detail::require(std::isfinite(p.maxval), Status::invalid_argument, op,
                  "maxval must be a finite number (got ", p.maxval, ")");
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst, /*allow_identical=*/true);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(),
                       [&](detail::Rows r) { ref::threshold(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::threshold(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_threshold(std::vector<OpInfo>& r) {
  r.push_back({"threshold",
               "cv::threshold: compare each sample with t (integers: floor(t)); any depth",
               {{"t", "127", "threshold"},
                {"maxval", "255", "value written by binary and binary_inv"},
                {"type", "binary", "binary, binary_inv, trunc, tozero or tozero_inv"}},
               [](const OpArgs& a) -> StageFn {
                 ThresholdParams p;
                 p.t = a.get_double("t", 127.0);
                 p.maxval = a.get_double("maxval", 255.0);
                 const std::string type = a.get_choice(
                     "type", "binary", {"binary", "binary_inv", "trunc", "tozero", "tozero_inv"});
                 p.type = type == "binary"       ? ThresholdType::binary
                          : type == "binary_inv" ? ThresholdType::binary_inv
                          : type == "trunc"      ? ThresholdType::trunc
                          : type == "tozero"     ? ThresholdType::tozero
                                                 : ThresholdType::tozero_inv;
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   threshold(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
