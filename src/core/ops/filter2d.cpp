// filter2d: validation, dispatch, registry entry (with the kernel-string parser). Rules:
// docs/ops/filter2d.md.
#include <charconv>
#include <cmath>
#include <string>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {
namespace {

constexpr int kMaxKernel = 15;

void check_params(const Filter2dParams& p) {
  constexpr const char* op = "filter2d";
  detail::require(p.kw >= 1 && p.kw <= kMaxKernel, Status::invalid_argument, op,
                  "kw must be in [1, ", kMaxKernel, "] (got ", p.kw, ")");
  detail::require(p.kh >= 1 && p.kh <= kMaxKernel, Status::invalid_argument, op,
                  "kh must be in [1, ", kMaxKernel, "] (got ", p.kh, ")");
  detail::require(p.kernel.size() == std::size_t(p.kw) * std::size_t(p.kh),
                  Status::invalid_argument, op, "kernel must hold kw*kh = ", p.kw * p.kh,
                  " values (got ", p.kernel.size(), ")");
  for (std::size_t i = 0; i < p.kernel.size(); ++i)
    detail::require(std::isfinite(p.kernel[i]), Status::invalid_argument, op,
                    "kernel values must be finite (value ", i, " is ", p.kernel[i], ")");
  detail::require(std::isfinite(p.delta), Status::invalid_argument, op,
                  "delta must be finite (got ", p.delta, ")");
  detail::check_border(op, p.border);
}

// "1,2,1;2,4,2;1,2,1": rows separated by ';', values by ','; all rows of equal length.
Filter2dParams parse_kernel(const std::string& s) {
  constexpr const char* op = "filter2d";
  Filter2dParams p;
  auto bad = [&](const std::string& why) {
    detail::fail(Status::invalid_argument, op, "kernel ", why, " (got '", s, "'; expected rows ",
                 "separated by ';' and values by ',', e.g. kernel=1,2,1;2,4,2;1,2,1)");
  };
  if (s.empty()) bad("is empty");
  std::size_t start = 0;
  for (;;) {
    const std::size_t semi = s.find(';', start);
    const std::string row = s.substr(start, semi == std::string::npos ? semi : semi - start);
    if (row.empty()) bad(detail::cat("row ", p.kh + 1, " is empty"));
    int n = 0;
    std::size_t vs = 0;
    for (;;) {
      const std::size_t comma = row.find(',', vs);
      std::string v = row.substr(vs, comma == std::string::npos ? comma : comma - vs);
      if (!v.empty() && v[0] == '+') v.erase(0, 1);
      double d = 0;
      const char* b = v.data();
      const char* e = b + v.size();
      auto [ptr, ec] = std::from_chars(b, e, d);
      if (v.empty() || ec != std::errc() || ptr != e || !std::isfinite(float(d)))
        bad(detail::cat("value ", n + 1, " of row ", p.kh + 1, " is not a finite number"));
      p.kernel.push_back(float(d));
      ++n;
      if (comma == std::string::npos) break;
      vs = comma + 1;
    }
    if (p.kh == 0) p.kw = n;
    if (n != p.kw)
      bad(detail::cat("rows must have equal length (row 1 has ", p.kw, " values, row ", p.kh + 1,
                      " has ", n, ")"));
    ++p.kh;
    if (p.kw > kMaxKernel || p.kh > kMaxKernel)
      bad(detail::cat("must be at most ", kMaxKernel, "x", kMaxKernel));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return p;
}

}  // namespace

void filter2d(ConstImageView src, ImageView dst, const Filter2dParams& p, const Context& ctx) {
  constexpr const char* op = "filter2d";
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
      detail::run_host(b, ctx, dst.height(),
                       [&](detail::Rows r) { ref::filter2d(src, dst, p, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::filter2d(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_filter2d(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{
      {"kernel", "(required)", "rows separated by ';', values by ',' (at most 15x15)"},
      {"delta", "0", "added to the sum"}};
  auto b = border_params("reflect101");
  params.insert(params.end(), b.begin(), b.end());
  r.push_back({"filter2d", "2-D correlation with a kernel of up to 15x15 (u8, f32)", params,
               [](const OpArgs& a) -> StageFn {
                 Filter2dParams p = parse_kernel(a.get_string("kernel"));
                 p.delta = a.get_double("delta", 0.0);
                 p.border = a.get_border(Border::reflect101());
                 check_params(p);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   filter2d(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
