// gaussian, gaussian_iir: validation, dispatch, registry entries.
#include <cmath>

#include "src/base/gaussian_taps.hpp"
#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

namespace {
constexpr int kMaxKernel = detail::kGaussianMaxK;
constexpr double kMaxSigma = 100.0;
constexpr double kIirMinSigma = 0.5, kIirMaxSigma = 256.0;

void check_ksize(const char* op, const char* name, int k) {
  detail::require(k == 0 || (k >= 1 && k <= kMaxKernel && (k & 1)), Status::invalid_argument, op,
                  name, " must be 0 (from sigma) or odd and in [1, ", kMaxKernel, "] (got ", k,
                  ")");
}

// Validates p and resolves it as cv::GaussianBlur does: sigma_y <= 0 -> sigma; a window
// size of 0 comes from its sigma; a sigma <= 0 leaves the taps to come from the size.
GaussianParams resolve(const GaussianParams& p, Depth depth) {
  constexpr const char* op = "gaussian";
  detail::check_range(op, "sigma", p.sigma, 0, kMaxSigma);
  detail::check_range(op, "sigma_y", p.sigma_y, 0, kMaxSigma);
  check_ksize(op, "kw", p.kw);
  check_ksize(op, "kh", p.kh);
  GaussianParams r = p;
  if (r.sigma_y <= 0) r.sigma_y = r.sigma;
  const bool u8 = depth == Depth::u8;
  if (r.kw == 0) {
    detail::require(r.sigma > 0, Status::invalid_argument, op,
                    "sigma must be > 0 when kw is 0 (from sigma)");
    r.kw = detail::gaussian_ksize_from_sigma(r.sigma, u8);
    detail::require(r.kw <= kMaxKernel, Status::invalid_argument, op, "sigma ", r.sigma,
                    " gives a window of ", r.kw, " > ", kMaxKernel, "; lower sigma");
  }
  if (r.kh == 0) {
    detail::require(r.sigma_y > 0, Status::invalid_argument, op,
                    "sigma_y must be > 0 when kh is 0 (from sigma)");
    r.kh = detail::gaussian_ksize_from_sigma(r.sigma_y, u8);
    detail::require(r.kh <= kMaxKernel, Status::invalid_argument, op, "sigma_y ", r.sigma_y,
                    " gives a window of ", r.kh, " > ", kMaxKernel, "; lower sigma_y");
  }
  return r;
}
}  // namespace

void gaussian(ConstImageView src, ImageView dst, const GaussianParams& p, const Context& ctx) {
  constexpr const char* op = "gaussian";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::u16, Depth::f32});
  const GaussianParams r = resolve(p, src.depth());
  detail::check_border(op, p.border);
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(b, ctx, dst.height(),
                       [&](detail::Rows rows) { ref::gaussian(src, dst, r, rows); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::gaussian(src, dst, r, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

void gaussian_iir(ConstImageView src, ImageView dst, const GaussianIirParams& p,
                  const Context& ctx) {
  constexpr const char* op = "gaussian_iir";
  detail::check_view(op, "src", src);
  detail::check_depth(op, "src", src, {Depth::u8, Depth::f32});
  detail::check_range(op, "sigma", p.sigma, kIirMinSigma, kIirMaxSigma);
  detail::check_border(op, p.border);
  detail::check_dst(op, dst, src.width(), src.height(), src.format());
  detail::check_same_location(op, src, dst);
  detail::check_no_overlap(op, src, dst);
  const Backend b = detail::select_backend(op, ctx, src);
  switch (b) {
    case Backend::ref:
    case Backend::cpu: {
      // Rows first into an f32 image, then columns (bands of columns).
      Image tmp(src.width(), src.height(), {Depth::f32, src.channels()}, src.location());
      ImageView t = tmp.view();
      detail::run_host(b, ctx, src.height(),
                       [&](detail::Rows rows) { ref::gaussian_iir_h(src, t, p, rows); });
      detail::run_host(b, ctx, src.width(),
                       [&](detail::Rows cols) { ref::gaussian_iir_v(t, dst, p, cols); });
      return;
    }
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::gaussian_iir(src, dst, p, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(b), " implementation yet");
  }
}

namespace detail {
void register_gaussian(std::vector<OpInfo>& r) {
  std::vector<ParamInfo> params{
      {"sigma", "1", "standard deviation in x, in [0, 100] (0: from the window size)"},
      {"sigma_y", "0", "standard deviation in y (0: sigma)"},
      {"k", "0", "window size, 0 (from sigma, as OpenCV) or odd in [1, 255]; sets kw and kh"},
      {"kw", "k", "window width, 0 or odd in [1, 255]"},
      {"kh", "k", "window height, 0 or odd in [1, 255]"}};
  for (auto& b : border_params("reflect101")) params.push_back(b);
  r.push_back({"gaussian", "separable Gaussian blur (u8, u16 fixed point; f32)", params,
               [](const OpArgs& a) -> StageFn {
                 GaussianParams p;
                 p.sigma = a.get_double("sigma", 1.0);
                 p.sigma_y = a.get_double("sigma_y", 0.0);
                 const int k = a.get_int("k", 0, 0, kMaxKernel);
                 if (a.has("k")) check_ksize("gaussian", "k", k);
                 p.kw = a.get_int("kw", k, 0, kMaxKernel);
                 p.kh = a.get_int("kh", k, 0, kMaxKernel);
                 p.border = a.get_border(Border::reflect101());
                 check_border("gaussian", p.border);
                 // Validate now. A window from sigma is smaller for u8 (3 sigma) than for other
                 // depths (4 sigma): check the u8 one here; the op checks the other at run time.
                 (void)resolve(p, Depth::u8);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   gaussian(src, dst, p, ctx);
                   return dst;
                 };
               }});
  std::vector<ParamInfo> iparams{{"sigma", "2", "standard deviation in [0.5, 256]"}};
  for (auto& b : border_params("replicate")) iparams.push_back(b);
  r.push_back({"gaussian_iir",
               "recursive Gaussian (Young-van Vliet), cost independent of sigma (u8, f32)", iparams,
               [](const OpArgs& a) -> StageFn {
                 GaussianIirParams p;
                 p.sigma = a.get_double("sigma", 2.0);
                 check_range("gaussian_iir", "sigma", p.sigma, kIirMinSigma, kIirMaxSigma);
                 p.border = a.get_border(Border::replicate());
                 check_border("gaussian_iir", p.border);
                 return [p](ConstImageView src, const Context& ctx) {
                   Image dst(src.width(), src.height(), src.format(), src.location());
                   gaussian_iir(src, dst, p, ctx);
                   return dst;
                 };
               }});
}
}  // namespace detail

}  // namespace pixflow
