#include "tests/common.hpp"

#include <cmath>
#include <cstdio>

#include "src/base/iir.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::test {
namespace {

// The exact Gaussian this op approximates: f64 correlation with the sampled Gaussian of
// radius ceil(4 sigma), normalised to sum 1, with the same border (constant: the value),
// rows then columns (exact in f64 up to rounding). 1-channel images.
std::vector<double> brute_force(const ConstImageView& src, double sigma, const Border& b) {
  const std::int64_t w = src.width(), h = src.height();
  const int r = int(std::ceil(4 * sigma));
  std::vector<double> g(std::size_t(2 * r + 1));
  double sum = 0;
  for (int i = -r; i <= r; ++i)
    sum += g[std::size_t(i + r)] = std::exp(-i * i / (2 * sigma * sigma));
  for (double& v : g) v /= sum;
  const double cval = src.depth() == Depth::u8 ? std::min(255.0, std::max(0.0, b.value)) : b.value;
  std::vector<double> tmp(std::size_t(w * h)), out(std::size_t(w * h));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      double acc = 0;
      for (int i = -r; i <= r; ++i) {
        const std::int64_t sx = detail::border_index(x + i, w, b.type);
        acc += g[std::size_t(i + r)] * (sx < 0 ? cval : sample(src, sx, y, 0));
      }
      tmp[std::size_t(y * w + x)] = acc;
    }
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      double acc = 0;
      for (int i = -r; i <= r; ++i) {
        const std::int64_t sy = detail::border_index(y + i, h, b.type);
        acc += g[std::size_t(i + r)] * (sy < 0 ? cval : tmp[std::size_t(sy * w + x)]);
      }
      out[std::size_t(y * w + x)] = acc;
    }
  return out;
}

// Max |error| as a fraction of the value range, for the interior (at least ceil(4 sigma)
// from every edge) and for the rest (the edges).
struct Err {
  double interior = 0, edge = 0;
};
Err measure(const ConstImageView& got, const std::vector<double>& want, double sigma,
            double range) {
  Err e;
  const std::int64_t m = std::int64_t(std::ceil(4 * sigma));
  for (std::int64_t y = 0; y < got.height(); ++y)
    for (std::int64_t x = 0; x < got.width(); ++x) {
      const double d =
          std::fabs(sample(got, x, y, 0) - want[std::size_t(y * got.width() + x)]) / range;
      const bool inside = x >= m && y >= m && x < got.width() - m && y < got.height() - m;
      double& slot = inside ? e.interior : e.edge;
      slot = std::max(slot, d);
    }
  return e;
}

// Bounds on the f32 error (fraction of the value range) vs the exact Gaussian, on uniform
// noise in [0, 1]: 1.5x the worst measured over 25 seeds x every border (the max of a
// random sample grows slowly with more seeds; docs/ops/gaussian.md lists the measurements).
// The deterministic worst case over all inputs is checked separately through the impulse
// response (WorstCaseErrorFromImpulseResponse). Young-van Vliet is least accurate at small
// sigma. Re-measured with the block rule of src/base/iir.hpp (rounding only): the same at the
// printed digits, so the constants did not change.
struct Bound {
  double sigma, interior, edge, worst;
};
const Bound kBounds[] = {{1, 0.090, 0.100, 0.127},
                         {2, 0.030, 0.031, 0.069},
                         {5, 0.006, 0.011, 0.0445},
                         {8, 0.0033, 0.0070, 0.0353},
                         {20, 0.0025, 0.0031, 0.0183}};

std::int64_t side_for(double sigma) {
  return std::max<std::int64_t>(48, std::int64_t(std::ceil(4 * sigma)) * 2 + 40);
}

TEST(GaussianIir, F32MatchesExactGaussianWithinMeasuredBounds) {
  auto rng = make_rng(0x11a1);
  for (const Bound& bd : kBounds)
    for (const Border& b : all_borders()) {
      const Border bb = b.type == BorderType::constant ? Border::constant(0.3) : b;
      const std::int64_t n = side_for(bd.sigma);
      PIXFLOW_TRACE(testing::Message()
                    << "sigma=" << bd.sigma << " " << describe(bb) << " " << n << "x" << n - 3);
      auto src = random_image(n, n - 3, {Depth::f32, 1}, rng, false, 0, 1);
      auto got = make_dst(n, n - 3, {Depth::f32, 1}, rng);
      gaussian_iir(src, got, {bd.sigma, bb}, {Backend::ref});
      const Err e = measure(got, brute_force(src, bd.sigma, bb), bd.sigma, 1.0);
      std::printf("[gaussian_iir] f32 sigma=%g %-12s interior %.2e edge %.2e\n", bd.sigma,
                  describe(bb).c_str(), e.interior, e.edge);
      EXPECT_LE(e.interior, bd.interior);
      EXPECT_LE(e.edge, bd.edge);
    }
}

TEST(GaussianIir, WorstCaseErrorFromImpulseResponseWithinMeasuredBound) {
  // The largest error over all inputs in [0, 1] of a linear filter with unit DC gain is
  // half the L1 norm of (its impulse response - the exact Gaussian's). Deterministic:
  // catches any change of coefficients or boundary handling. Bounds ~2% above measured.
  for (const Bound& bd : kBounds) {
    const int r = int(std::ceil(8 * bd.sigma)) + 10, n = 2 * r + 1;
    const int R = int(std::ceil(4 * bd.sigma));
    PIXFLOW_TRACE(testing::Message() << "sigma=" << bd.sigma);
    Image imp(n, n, {Depth::f32, 1}), out(n, n, {Depth::f32, 1});
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) imp.row<float>(y)[x] = (x == r && y == r) ? 1.f : 0.f;
    gaussian_iir(imp, out, {bd.sigma, Border::constant(0)}, {Backend::ref});
    std::vector<double> g(std::size_t(2 * R + 1));
    double s = 0;
    for (int i = -R; i <= R; ++i)
      s += g[std::size_t(i + R)] = std::exp(-i * i / (2 * bd.sigma * bd.sigma));
    double l1 = 0;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const int dx = x - r, dy = y - r;
        const double gv = (std::abs(dx) <= R && std::abs(dy) <= R)
                              ? g[std::size_t(dx + R)] * g[std::size_t(dy + R)] / (s * s)
                              : 0.0;
        l1 += std::fabs(double(out.row<float>(y)[x]) - gv);
      }
    std::printf("[gaussian_iir] worst case over inputs in [0,1], sigma=%g: %.4e\n", bd.sigma,
                l1 / 2);
    EXPECT_LE(l1 / 2, bd.worst);
  }
}

TEST(GaussianIir, U8MatchesExactGaussianWithinBoundPlusRounding) {
  auto rng = make_rng(0x11a2);
  for (const Bound& bd : {kBounds[1], kBounds[2]})
    for (const Border& b : all_borders()) {
      const std::int64_t n = side_for(bd.sigma);
      PIXFLOW_TRACE(testing::Message() << "sigma=" << bd.sigma << " " << describe(b));
      auto src = random_image(n, n + 5, {Depth::u8, 1}, rng);
      auto got = make_dst(n, n + 5, {Depth::u8, 1}, rng);
      gaussian_iir(src, got, {bd.sigma, b}, {Backend::ref});
      const Err e = measure(got, brute_force(src, bd.sigma, b), bd.sigma, 255.0);
      // The f32 bound plus half a step of rounding to u8.
      EXPECT_LE(e.interior, bd.interior + 0.5 / 255 + 1e-6);
      EXPECT_LE(e.edge, bd.edge + 0.5 / 255 + 1e-6);
    }
}

TEST(GaussianIir, RowColumnExtremesAndTinyImagesMatchExactGaussian) {
  // 1x1, 1xN, Nx1 and 2x2 images (every window far larger than the image), within the
  // worst case over all inputs.
  auto rng = make_rng(0x11a3);
  for (Size s : awkward_sizes())
    for (const Border& b : all_borders()) {
      PIXFLOW_TRACE(testing::Message() << s.w << "x" << s.h << " " << describe(b));
      const Border bb = b.type == BorderType::constant ? Border::constant(0.3) : b;
      auto src = random_image(s.w, s.h, {Depth::f32, 1}, rng, false, 0, 1);
      auto got = make_dst(s.w, s.h, {Depth::f32, 1}, rng);
      gaussian_iir(src, got, {2.0, bb}, {Backend::ref});
      const Err e = measure(got, brute_force(src, 2.0, bb), 2.0, 1.0);
      EXPECT_LE(std::max(e.interior, e.edge), kBounds[1].worst);
    }
}

// The sequential recursion the block rule of src/base/iir.hpp restates (one chain per line from
// x(0), Triggs–Sdika at the end; the formulation before the block rule): rows into f32, then
// columns, in f64. 1-channel f32 images.
std::vector<double> sequential(const ConstImageView& src, double sigma, const Border& b) {
  const detail::IirCoeffs k = detail::iir_coeffs(sigma);
  const std::int64_t e = detail::iir_extension({sigma, b});
  const double cval = double(float(b.value));
  auto line = [&](std::int64_t len, auto get, auto put) {
    const std::int64_t n = len + 2 * e;
    auto x = [&](std::int64_t i) {
      const std::int64_t s = detail::border_index(i - e, len, b.type);
      return s < 0 ? cval : get(s);
    };
    std::vector<double> w(std::size_t(n + 3), x(0));  // w[i + 3] is position i
    for (std::int64_t i = 0; i < n; ++i)
      w[std::size_t(i + 3)] = k.B * x(i) + k.b1 * w[std::size_t(i + 2)] +
                              k.b2 * w[std::size_t(i + 1)] + k.b3 * w[std::size_t(i)];
    const double up = x(n - 1);
    const double u[3] = {w[std::size_t(n + 2)] - up, w[std::size_t(n + 1)] - up,
                         w[std::size_t(n)] - up};
    double v[3];
    for (int r = 0; r < 3; ++r) v[r] = k.M[r][0] * u[0] + k.M[r][1] * u[1] + k.M[r][2] * u[2] + up;
    double y1 = v[0], y2 = v[1], y3 = v[2];
    for (std::int64_t i = n; i-- > 0;) {
      const double y = k.B * w[std::size_t(i + 3)] + k.b1 * y1 + k.b2 * y2 + k.b3 * y3;
      y3 = y2;
      y2 = y1;
      y1 = y;
      if (i >= e && i < e + len) put(i - e, y);
    }
  };
  const std::int64_t wd = src.width(), ht = src.height();
  std::vector<double> tmp(std::size_t(wd * ht)), out(std::size_t(wd * ht));
  for (std::int64_t y = 0; y < ht; ++y)
    line(
        wd, [&](std::int64_t i) { return sample(src, i, y, 0); },
        [&](std::int64_t i, double v) { tmp[std::size_t(y * wd + i)] = double(float(v)); });
  for (std::int64_t x = 0; x < wd; ++x)
    line(
        ht, [&](std::int64_t i) { return tmp[std::size_t(i * wd + x)]; },
        [&](std::int64_t i, double v) { out[std::size_t(i * wd + x)] = v; });
  return out;
}

// The block rule is the sequential recursion up to rounding (not a different filter): the
// reference within a few f32 steps of it, on lines whose extended length n sits around block
// boundaries (n = 1, 2, 3, 31 .. 33, 63 .. 65, ...: blocks of 1 and 2 positions, exact
// multiples, a carry read across a partial block), every border, both sides of sigma 2.5. A
// wrong carry or table is off by ~1e-2; rounding is ~1e-7.
TEST(GaussianIir, BlockRuleEqualsSequentialRecursionUpToRounding) {
  auto rng = make_rng(0x11a9);
  const std::int64_t B = detail::kIirBlock;
  for (const Border& b : all_borders())
    for (double sigma : {0.5, 2.0, 9.0}) {
      const Border bb = b.type == BorderType::constant ? Border::constant(0.3) : b;
      const std::int64_t e = detail::iir_extension({sigma, bb});
      for (std::int64_t n : {std::int64_t(1), std::int64_t(2), std::int64_t(3), B - 1, B, B + 1,
                             2 * B - 1, 2 * B, 2 * B + 1, 3 * B + 2}) {
        const std::int64_t len = n - 2 * e;
        if (len < 1) continue;
        const std::int64_t other = std::max<std::int64_t>(1, 3 * B + 7 - 2 * e);
        for (Size s : {Size{len, other}, Size{other, len}}) {
          PIXFLOW_TRACE(testing::Message() << "sigma=" << sigma << " " << describe(bb) << " " << s.w
                                           << "x" << s.h << " (n=" << n << ")");
          auto src = random_image(s.w, s.h, {Depth::f32, 1}, rng, false, 0, 1);
          auto got = make_dst(s.w, s.h, {Depth::f32, 1}, rng);
          gaussian_iir(src, got, {sigma, bb}, {Backend::ref});
          const std::vector<double> want = sequential(src, sigma, bb);
          double worst = 0;
          for (std::int64_t y = 0; y < s.h; ++y)
            for (std::int64_t x = 0; x < s.w; ++x)
              worst = std::max(worst, std::fabs(sample(got, x, y, 0) -
                                                double(float(want[std::size_t(y * s.w + x)]))));
          EXPECT_LE(worst, 1e-6);
        }
      }
    }
}

TEST(GaussianIir, ConstantImageStaysConstant) {
  auto rng = make_rng(0x11a4);
  for (Depth d : {Depth::u8, Depth::f32})
    for (const Border& b : all_borders())
      for (double sigma : {0.5, 3.0, 256.0}) {
        PIXFLOW_TRACE(testing::Message()
                      << depth_name(d) << " sigma=" << sigma << " " << describe(b));
        auto src = random_image(37, 21, {d, 3}, rng);
        fill_constant(src, 77);  // the constant border's value too
        auto got = make_dst(37, 21, {d, 3}, rng);
        gaussian_iir(src, got, {sigma, b}, {Backend::ref});
        ASSERT_EQ(compare(got, src, d == Depth::u8 ? 0 : 77 * 1e-5), "");
      }
}

// Exact, like every backend (tests/schema_test.cpp sweeps the schema's examples): sizes and
// a sigma beyond those, and the CPU backend's row bands at 1920x1080.
TEST(GaussianIir, EveryBackendMatchesRef) {
  auto rng = make_rng(0x11a5);
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {64, 3}, {1920, 1080}})
        for (const Border& b : all_borders()) {
          if (s.w == 1920 && (ch != 3 || b.type != BorderType::replicate)) continue;
          ASSERT_TRUE(
              backends_match_ref("gaussian_iir", "sigma=3.5 " + border_params(b), {d, ch}, s, rng));
        }
}

// The SIMD kernel's paths (src/backends/cpu/simd/gaussian_iir.cpp): groups of 8/16 lines
// with a partial last group (rows and interleaved column samples), lines shorter than the
// border extension, sigmas on both sides of the q formula's switch at 2.5, constant borders
// with values outside the depth, 2 channels.
TEST(GaussianIir, EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0x11a7);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 2, 3})
      for (Size s : std::vector<Size>{{263, 37}, {37, 263}, {5, 70}, {16, 16}})
        for (double sigma : {0.5, 2.5, 7.0})
          for (const Border& b : borders)
            ASSERT_TRUE(backends_match_ref(
                "gaussian_iir", "sigma=" + std::to_string(sigma) + " " + border_params(b), {d, ch},
                s, rng));
}

// The CUDA kernels' paths (src/backends/cuda/iir.cu, the block rule): lines of 1, 2, 3
// positions (a last block shorter than three: its carry passes through), of one, two and many
// blocks of 32, the last partial, e spanning several blocks (anti-causal blocks left of the line
// skipped), 1-4 channels (lines interleaved in rows and columns), u8 and f32, every border (a
// constant outside the depth), sigma up to 256 (e = 1032). backends_match_ref runs on ROI views.
TEST(GaussianIir, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0x11a8);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  const std::vector<Size> sizes = {{1, 2},   {2, 1},   {3, 3},   {2, 33},  {33, 2},  {31, 65},
                                   {65, 31}, {64, 64}, {97, 96}, {130, 7}, {7, 130}, {200, 161}};
  std::size_t turn = 0;
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 2, 3, 4})
      for (Size s : sizes) {
        const Border& b = borders[turn++ % borders.size()];
        const double sigma = turn % 3 == 0 ? 0.5 : turn % 3 == 1 ? 3.0 : 9.0;
        ASSERT_TRUE(backends_match_ref("gaussian_iir",
                                       "sigma=" + std::to_string(sigma) + " " + border_params(b),
                                       {d, ch}, s, rng));
      }
  for (const Border& b : borders)
    ASSERT_TRUE(backends_match_ref("gaussian_iir", "sigma=256 " + border_params(b), {Depth::u8, 1},
                                   {300, 45}, rng));
  ASSERT_TRUE(backends_match_ref("gaussian_iir", "sigma=8 border=reflect101", {Depth::u8, 1},
                                 {2100, 300}, rng));
  // The fused kernel (src/backends/cuda/iir_fused.hpp), which takes passes over >= 2048 lines
  // (kFusedMinLines; a line is one channel of a row or of a column): several line groups of 32
  // and tiles of 256 positions, partial groups and tiles, every border (constants 300 / -7
  // outside u8), 1-4 channels, u8 and f32; the first images run one pass on each schedule
  // (4 channels: columns fused), the second both passes fused, and one large image.
  borders.push_back(Border::constant(-7));
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 2, 3, 4}) {
      for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}}) {
        const Border& b = borders[turn++ % borders.size()];
        ASSERT_TRUE(
            backends_match_ref("gaussian_iir", "sigma=8 " + border_params(b), {d, ch}, s, rng));
      }
      const Size both{2050 / ch + 3 * ch, 2050 / ch + 11};
      const Border& b = borders[turn++ % borders.size()];
      ASSERT_TRUE(
          backends_match_ref("gaussian_iir", "sigma=8 " + border_params(b), {d, ch}, both, rng));
    }
  for (const Border& b : {Border::reflect101(), Border::constant(300)})
    ASSERT_TRUE(backends_match_ref("gaussian_iir", "sigma=8 " + border_params(b), {Depth::u8, 1},
                                   {4100, 1100}, rng));
}

TEST(GaussianIir, PipelineStageMatchesDirectCall) {
  auto rng = make_rng(0x11a6);
  auto src = random_image(30, 20, {Depth::u8, 3}, rng);
  Image want(30, 20, {Depth::u8, 3});
  gaussian_iir(src, want, {4.5, Border::reflect()});
  Image got = Pipeline::parse("gaussian_iir sigma=4.5 border=reflect").run(src);
  EXPECT_EQ(compare(got, want), "");
}

}  // namespace
}  // namespace pixflow::test
