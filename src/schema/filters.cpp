// Schema of the neighbourhood filters: median, the morphology family, box, gaussian,
// gaussian_iir, sobel, scharr, filter2d, epsilon, bilateral.
#include <charconv>
#include <cmath>

#include "src/base/error.hpp"
#include "src/base/gaussian_taps.hpp"
#include "src/schema/ops.hpp"

namespace pixflow::schema {

using detail::fail;
using detail::require;

namespace {
constexpr int kMaxWindow = 255;
const std::vector<Depth> kU8U16F32{Depth::u8, Depth::u16, Depth::f32};
const std::vector<Depth> kU8F32{Depth::u8, Depth::f32};

template <class P>
Halo window_halo(const P& p, Format) {
  return {p.kw / 2, p.kh / 2};
}
Halo whole_image(Format) {
  return {-1, -1};
}
}  // namespace

const OpDef<MedianParams>& median_op() {
  static const auto def =
      OpDef<MedianParams>("median", "median of the kw x kh window (u8, u16, f32; exact)")
          .depths(kU8U16F32)
          .shorthand("k", {"kw", "kh"}, "odd window size in [1, 255]; sets kw and kh")
          .integer("kw", &MedianParams::kw, 1, kMaxWindow, "odd window width in [1, 255]", Odd::yes)
          .integer("kh", &MedianParams::kh, 1, kMaxWindow, "odd window height in [1, 255]",
                   Odd::yes)
          .border(&MedianParams::border)
          .halo(window_halo<MedianParams>)
          .examples({"k=3", "k=5", "kw=7 kh=3", "k=9 border=constant value=17"})
          .bench({{"k=3", "60", "3x3"}, {"k=5", "150", "5x5"}, {"k=7", "400", "7x7"}})
          .run(&median);
  return def;
}

namespace {
OpDef<MorphParams> make_morph(MorphOp mop, const char* doc) {
  const int passes = (mop == MorphOp::dilate || mop == MorphOp::erode) ? 1 : 2;
  auto def = OpDef<MorphParams>(morph_op_name(mop), doc);
  def.depths(kU8U16F32)
      .shorthand("k", {"kw", "kh"},
                 "rectangle size in [1, 255]; sets kw and kh (anchor k/2, as OpenCV)")
      .integer("kw", &MorphParams::kw, 1, kMaxWindow, "rectangle width in [1, 255]")
      .integer("kh", &MorphParams::kh, 1, kMaxWindow, "rectangle height in [1, 255]")
      .integer("iterations", &MorphParams::iterations, 1, 100,
               "passes in [1, 100] (one pass of the enlarged rectangle)")
      .border(&MorphParams::border)
      .halo([passes](const MorphParams& p, Format) {
        // n iterations: one pass of the rect enlarged to kw + (n-1)(kw-1), anchor n*(kw/2).
        const int n = p.iterations;
        return Halo{passes * n * std::max(p.kw / 2, p.kw - 1 - p.kw / 2),
                    passes * n * std::max(p.kh / 2, p.kh - 1 - p.kh / 2)};
      })
      .examples({"k=3", "k=5 iterations=2", "kw=4 kh=3", "k=3 border=constant value=200"})
      .run([mop](const ConstImageView& s, const ImageView& d, const MorphParams& p,
                 const Context& c) { morphology(s, d, mop, p, c); })
      .workspace([mop](const ConstImageView& s, const MorphParams& p, const Context& c) {
        return morphology_workspace_bytes(s, mop, p, c);
      });
  if (passes == 1)
    def.bench({{"k=3", "55", "3x3"}, {"k=5", "55", "5x5"}, {"k=15", "65", "15x15"}});
  else  // issue 10: one fused pass, open/close <= 60 us, gradient/tophat/blackhat <= 65
    def.bench({{"k=3", mop == MorphOp::open || mop == MorphOp::close ? "60" : "65", "3x3"}});
  return def;
}
}  // namespace

const OpDef<MorphParams>& morph_op(MorphOp op) {
  static const OpDef<MorphParams> defs[] = {
      make_morph(MorphOp::dilate, "maximum over a kw x kh rectangle (u8, u16, f32; exact)"),
      make_morph(MorphOp::erode, "minimum over a kw x kh rectangle (u8, u16, f32; exact)"),
      make_morph(MorphOp::open, "dilate(erode(src)) (u8, u16, f32; exact)"),
      make_morph(MorphOp::close, "erode(dilate(src)) (u8, u16, f32; exact)"),
      make_morph(MorphOp::gradient, "dilate(src) - erode(src) (u8, u16, f32; exact)"),
      make_morph(MorphOp::tophat, "src - open(src), saturating (u8, u16, f32; exact)"),
      make_morph(MorphOp::blackhat, "close(src) - src, saturating (u8, u16, f32; exact)"),
  };
  const auto i = std::size_t(op);
  require(i < std::size(defs), Status::invalid_argument, "morphology",
          "op must be dilate, erode, open, close, gradient, tophat or blackhat (got ", int(op),
          ")");
  return defs[i];
}

const OpDef<BoxParams>& box_op() {
  static const auto def =
      OpDef<BoxParams>("box", "mean (or sum) of the kw x kh window (u8, u16, f32)")
          .depths(kU8U16F32)
          .shorthand("k", {"kw", "kh"},
                     "window size in [1, 255]; sets kw and kh (anchor k/2, as cv::blur)")
          .integer("kw", &BoxParams::kw, 1, kMaxWindow, "window width in [1, 255]")
          .integer("kh", &BoxParams::kh, 1, kMaxWindow, "window height in [1, 255]")
          .boolean("normalize", &BoxParams::normalize,
                   "1: mean (integers round half to even); 0: saturated sum")
          .border(&BoxParams::border)
          .halo(window_halo<BoxParams>)
          .examples({"k=3", "k=9", "kw=4 kh=7 normalize=0", "k=31 border=wrap"})
          .bench({{"k=3", "60", "3x3"}, {"k=9", "60", "9x9"}, {"k=31", "60", "31x31"}})
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-5, 1e-5} : Tolerance{};
          })
          .run(&box);
  return def;
}

GaussianParams resolve_gaussian(const GaussianParams& p, Depth depth) {
  constexpr const char* op = "gaussian";
  GaussianParams r = p;
  if (r.sigma_y <= 0) r.sigma_y = r.sigma;
  const bool u8 = depth == Depth::u8;
  if (r.kw == 0) {
    require(r.sigma > 0, Status::invalid_argument, op,
            "sigma must be > 0 when kw is 0 (from sigma)");
    r.kw = detail::gaussian_ksize_from_sigma(r.sigma, u8);
    require(r.kw <= detail::kGaussianMaxK, Status::invalid_argument, op, "sigma ", r.sigma,
            " gives a window of ", r.kw, " > ", detail::kGaussianMaxK, "; lower sigma");
  }
  if (r.kh == 0) {
    require(r.sigma_y > 0, Status::invalid_argument, op,
            "sigma_y must be > 0 when kh is 0 (from sigma)");
    r.kh = detail::gaussian_ksize_from_sigma(r.sigma_y, u8);
    require(r.kh <= detail::kGaussianMaxK, Status::invalid_argument, op, "sigma_y ", r.sigma_y,
            " gives a window of ", r.kh, " > ", detail::kGaussianMaxK, "; lower sigma_y");
  }
  return r;
}

const OpDef<GaussianParams>& gaussian_op() {
  static const auto def =
      OpDef<GaussianParams>("gaussian", "separable Gaussian blur (u8, u16 fixed point; f32)")
          .depths(kU8U16F32)
          // The sigma range is the one whose window fits on every depth (one range for the
          // docs, the CLI and the C++ API; larger blurs are gaussian_iir's).
          .number("sigma", &GaussianParams::sigma, 0, detail::kGaussianMaxSigma,
                  "standard deviation in x, in [0, 31.75] (0: from the window size; window "
                  "<= 255 on every depth; larger: gaussian_iir)")
          .number("sigma_y", &GaussianParams::sigma_y, 0, detail::kGaussianMaxSigma,
                  "standard deviation in y, in [0, 31.75] (0: sigma)")
          .shorthand("k", {"kw", "kh"},
                     "window size, 0 (from sigma, as OpenCV) or odd in [1, 255]; sets kw and kh")
          .integer("kw", &GaussianParams::kw, 0, detail::kGaussianMaxK,
                   "window width, 0 or odd in [1, 255]", Odd::or_zero, "from sigma")
          .integer("kh", &GaussianParams::kh, 0, detail::kGaussianMaxK,
                   "window height, 0 or odd in [1, 255]", Odd::or_zero, "from sigma")
          .border(&GaussianParams::border)
          .check([](const GaussianParams& p) {
            // A window from sigma is smallest for u8 (3 sigma): check that one here; the op
            // checks the source's own depth when it runs.
            (void)resolve_gaussian(p, Depth::u8);
          })
          .halo([](const GaussianParams& p, Format f) {
            const GaussianParams r = resolve_gaussian(p, f.depth);
            return Halo{r.kw / 2, r.kh / 2};
          })
          .examples({"k=3", "sigma=2", "sigma=1.5 sigma_y=3 border=replicate", "k=5 sigma=0"})
          .bench({{"k=3 sigma=0", "55", "3x3"},
                  {"sigma=2", "65", "sigma=2"},
                  {"sigma=8", "120", "sigma=8"}})
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-5, 1e-5} : Tolerance{};
          })
          .run(&gaussian);
  return def;
}

const OpDef<GaussianIirParams>& gaussian_iir_op() {
  static const auto def =
      OpDef<GaussianIirParams>(
          "gaussian_iir",
          "recursive Gaussian (Young-van Vliet), cost independent of sigma (u8, f32)")
          .depths(kU8F32)
          .number("sigma", &GaussianIirParams::sigma, 0.5, 256, "standard deviation in [0.5, 256]")
          .border(&GaussianIirParams::border)
          .halo([](const GaussianIirParams&, Format f) { return whole_image(f); })
          .examples({"sigma=2", "sigma=8 border=reflect101", "sigma=0.5"})
          .bench({{"sigma=8", "150", "sigma=8"}})
          // Float recursion in a free order: +-1 on u8, 1e-4 relative on f32
          // (docs/ops/gaussian.md).
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-4, 1e-4} : Tolerance{1, 0};
          })
          .run(&gaussian_iir)
          .workspace(&gaussian_iir_workspace_bytes);
  return def;
}

namespace {
// The C++ API's `to` (a Depth field: any value reaches it); the pipeline's choice parser
// already limits it to these two.
void check_derivative_to(const char* op, Depth to) {
  require(to == Depth::s16 || to == Depth::f32, Status::unsupported, op,
          "to must be s16 or f32 (got ", depth_name(to), ")");
}

// The stage's `to`: the source's natural derivative depth unless given (s16 for u8, f32
// for f32), so that "sobel" works on both without a key.
template <class P>
void natural_to(P& p, const ConstImageView& src, const std::set<std::string>& given) {
  if (!given.count("to")) p.to = src.depth() == Depth::f32 ? Depth::f32 : Depth::s16;
}
template <class P>
Shape derivative_shape(const ConstImageView& src, const P& p) {
  // Only a source depth the op takes is checked here: the shape is asked for before the
  // op's own checks (a pipeline allocates the destination first), which name a bad depth.
  require(src.depth() != Depth::f32 || p.to == Depth::f32, Status::unsupported,
          std::is_same_v<P, SobelParams> ? "sobel" : "scharr",
          "to must be f32 for an f32 source (got ", depth_name(p.to), ")");
  return {src.width(), src.height(), {p.to, src.channels()}};
}
const std::vector<std::pair<std::string, Depth>> kDerivDepths{{"s16", Depth::s16},
                                                              {"f32", Depth::f32}};
Tolerance derivative_tolerance(Depth d) {
  return d == Depth::f32 ? Tolerance{1e-5, 1e-5} : Tolerance{};
}

// What sobel and scharr share after their order (and aperture) parameters.
template <class P>
OpDef<P>& derivative_tail(OpDef<P>& d) {
  return d.number("scale", &P::scale, -kUnbounded, kUnbounded, "factor applied to the derivative")
      .number("delta", &P::delta, -kUnbounded, kUnbounded, "added after scaling")
      .choice("to", &P::to, kDerivDepths,
              "destination depth: s16 or f32 (default: s16 for u8, f32 for f32)")
      .border(&P::border)
      .adapt(natural_to<P>)
      .output(derivative_shape<P>)
      .bench_tolerance(derivative_tolerance);
}
}  // namespace

const OpDef<SobelParams>& sobel_op() {
  static const auto def =
      derivative_tail(OpDef<SobelParams>("sobel", "Sobel derivative (u8 -> s16 or f32, f32 -> f32)")
                          .depths(kU8F32)
                          .integer("dx", &SobelParams::dx, 0, 6, "derivative order in x")
                          .integer("dy", &SobelParams::dy, 0, 6, "derivative order in y")
                          .integer("k", &SobelParams::k, 1, 7, "aperture: 1, 3, 5 or 7"))
          .check([](const SobelParams& p) {
            constexpr const char* op = "sobel";
            require(p.k == 1 || p.k == 3 || p.k == 5 || p.k == 7, Status::invalid_argument, op,
                    "k must be 1, 3, 5 or 7 (got ", p.k, ")");
            require(p.dx >= 0 && p.dy >= 0 && p.dx + p.dy >= 1, Status::invalid_argument, op,
                    "dx and dy must be >= 0 with dx + dy >= 1 (got dx=", p.dx, ", dy=", p.dy, ")");
            const int max_order = p.k == 1 ? 2 : p.k - 1;
            require(p.dx <= max_order, Status::invalid_argument, op, "dx must be in [0, ",
                    max_order, "] for k=", p.k, " (got ", p.dx, ")");
            require(p.dy <= max_order, Status::invalid_argument, op, "dy must be in [0, ",
                    max_order, "] for k=", p.k, " (got ", p.dy, ")");
            check_derivative_to(op, p.to);
          })
          .halo([](const SobelParams& p, Format) {
            return Halo{std::max(1, p.k / 2), std::max(1, p.k / 2)};
          })
          .examples({"dx=1 dy=0", "dx=0 dy=1 k=5", "dx=1 dy=1 k=7 scale=0.5 delta=3",
                     "dx=2 dy=0 k=1", "dx=1 dy=0 to=f32"})
          .bench({{"dx=1 dy=0 k=3", "75", "dx=1 k=3"}})
          .run(&sobel);
  return def;
}

const OpDef<ScharrParams>& scharr_op() {
  static const auto def =
      derivative_tail(
          OpDef<ScharrParams>("scharr",
                              "Scharr 3x3 derivative, dx + dy == 1 (u8 -> s16 or f32, f32 -> f32)")
              .depths(kU8F32)
              .integer("dx", &ScharrParams::dx, 0, 1, "derivative order in x")
              .integer("dy", &ScharrParams::dy, 0, 1, "derivative order in y"))
          .check([](const ScharrParams& p) {
            require(p.dx >= 0 && p.dy >= 0 && p.dx + p.dy == 1, Status::invalid_argument, "scharr",
                    "dx and dy must be 0 or 1 with dx + dy == 1 (got dx=", p.dx, ", dy=", p.dy,
                    ")");
            check_derivative_to("scharr", p.to);
          })
          .halo([](const ScharrParams&, Format) {
            return Halo{1, 1};
          })
          .examples({"dx=1 dy=0", "dx=0 dy=1 scale=2 delta=-1"})
          .bench({{"dx=1 dy=0", "75", "dx=1"}})
          .bench_formats({{Depth::u8, 1}, {Depth::f32, 1}})
          .run(&scharr);
  return def;
}

namespace {
constexpr int kMaxFilter2d = 15;

// "1,2,1;2,4,2;1,2,1": rows separated by ';', values by ','; all rows of equal length.
void parse_kernel(Filter2dParams& p, const std::string& s) {
  constexpr const char* op = "filter2d";
  auto bad = [&](const std::string& why) {
    fail(Status::invalid_argument, op, "kernel ", why, " (got '", s, "'; expected rows ",
         "separated by ';' and values by ',', e.g. kernel=1,2,1;2,4,2;1,2,1)");
  };
  if (s.empty()) fail(Status::invalid_argument, op, "kernel=ROWS is required");
  p.kernel.clear();
  p.kw = p.kh = 0;
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
    if (p.kw > kMaxFilter2d || p.kh > kMaxFilter2d)
      bad(detail::cat("is larger than ", kMaxFilter2d, "x", kMaxFilter2d));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
}
}  // namespace

const OpDef<Filter2dParams>& filter2d_op() {
  Param kernel{"kernel", Kind::text, "", "rows separated by ';', values by ',' (at most 15x15)"};
  kernel.required = true;
  static const auto def =
      OpDef<Filter2dParams>("filter2d", "2-D correlation with a kernel of up to 15x15 (u8, f32)")
          .depths(kU8F32)
          .custom(kernel, [](Filter2dParams& p, const std::string& text,
                             const ImageSource&) { parse_kernel(p, text); })
          .number("delta", &Filter2dParams::delta, -kUnbounded, kUnbounded, "added to the sum")
          .border(&Filter2dParams::border)
          .check([](const Filter2dParams& p) {
            constexpr const char* op = "filter2d";
            require(p.kw >= 1 && p.kw <= kMaxFilter2d, Status::invalid_argument, op,
                    "kw must be in [1, ", kMaxFilter2d, "] (got ", p.kw, ")");
            require(p.kh >= 1 && p.kh <= kMaxFilter2d, Status::invalid_argument, op,
                    "kh must be in [1, ", kMaxFilter2d, "] (got ", p.kh, ")");
            require(p.kernel.size() == std::size_t(p.kw) * std::size_t(p.kh),
                    Status::invalid_argument, op, "kernel must hold kw*kh = ", p.kw * p.kh,
                    " values (got ", p.kernel.size(), ")");
            for (std::size_t i = 0; i < p.kernel.size(); ++i)
              require(std::isfinite(p.kernel[i]), Status::invalid_argument, op,
                      "kernel values must be finite (value ", i, " is ", p.kernel[i], ")");
          })
          .halo(window_halo<Filter2dParams>)
          .examples({"kernel=1,2,1;2,4,2;1,2,1", "kernel=0,-1,0;-1,5,-1;0,-1,0 delta=3",
                     "kernel=1,2,3,4 border=wrap", "kernel=0.5;0.25;0.25 border=constant value=9"})
          .bench({{"kernel=-0.02,-0.02,-0.02,-0.02,-0.02;-0.02,-0.02,-0.02,-0.02,-0.02;-0.02,-0.02,"
                   "1.48,-0.02,-0.02;-0.02,-0.02,-0.02,-0.02,-0.02;-0.02,-0.02,-0.02,-0.02,-0.02",
                   "120", "5x5"}})
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-5, 1e-5} : Tolerance{1, 0};
          })
          .run(&filter2d);
  return def;
}

const OpDef<EpsilonParams>& epsilon_op() {
  static const auto def =
      OpDef<EpsilonParams>("epsilon", "mean of the window pixels within t of the centre (u8, f32)")
          .depths(kU8F32)
          .integer("r", &EpsilonParams::r, 0, 32, "window radius in [0, 32] (window 2r+1 square)")
          .number("t", &EpsilonParams::t, 0, kUnbounded,
                  "threshold >= 0: pixels with |p - centre| <= t count")
          .border(&EpsilonParams::border)
          .halo([](const EpsilonParams& p, Format) {
            return Halo{p.r, p.r};
          })
          .examples({"r=2 t=20", "r=4 t=10", "r=1 t=0 border=replicate", "r=3 t=1000"})
          .bench({{"r=4 t=20", "150", "r=4"}})
          .bench_f32_params("t=0.0784313725490196")  // 20/255
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-5, 1e-5} : Tolerance{};
          })
          .run(&epsilon);
  return def;
}

namespace {
constexpr int kBilateralMaxRadius = 31;
int bilateral_radius(const BilateralParams& p) {
  if (p.d > 0) return p.d / 2;
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  // Compared in double: a huge sigma_space would overflow the conversion to int (undefined;
  // INT_MIN on x86, which passed the limit below).
  const double r = std::rint(ss * 1.5);
  return r > kBilateralMaxRadius ? kBilateralMaxRadius + 1 : int(r);
}
}  // namespace

const OpDef<BilateralParams>& bilateral_op() {
  static const auto def =
      OpDef<BilateralParams>(
          "bilateral",
          "edge-preserving bilateral filter as cv::bilateralFilter (u8, f32; 1 or 3 channels)")
          .depths(kU8F32)
          .channels({1, 3})
          .integer("d", &BilateralParams::d, 0, 31,
                   "window diameter in [0, 31]; 0: radius round(1.5*sigma_space)")
          .number("sigma_color", &BilateralParams::sigma_color, -kUnbounded, kUnbounded,
                  "colour sigma (<= 0 means 1)")
          .number("sigma_space", &BilateralParams::sigma_space, -kUnbounded, kUnbounded,
                  "space sigma (<= 0 means 1)")
          .border(&BilateralParams::border)
          .check([](const BilateralParams& p) {
            if (p.d == 0)
              require(bilateral_radius(p) <= kBilateralMaxRadius, Status::invalid_argument,
                      "bilateral",
                      "sigma_space must be < 21 when d=0 (the radius round(1.5*sigma_space) ",
                      "must be <= ", kBilateralMaxRadius, "; got sigma_space=", p.sigma_space, ")");
          })
          .halo([](const BilateralParams& p, Format) {
            const int r = bilateral_radius(p);
            return Halo{r, r};
          })
          .examples({"d=5 sigma_color=30 sigma_space=5", "d=9", "d=0 sigma_space=2 border=wrap"})
          .bench({{"d=9 sigma_color=75 sigma_space=75", "1000", "d=9"}})
          .bench_f32_params("sigma_color=0.3")
          .bench_tolerance([](Depth d) {
            return d == Depth::f32 ? Tolerance{1e-4, 1e-4} : Tolerance{1, 0};
          })
          .run(&bilateral);
  return def;
}

}  // namespace pixflow::schema
