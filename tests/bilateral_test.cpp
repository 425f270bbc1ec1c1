// bilateral: ref vs cv::bilateralFilter (u8 +-1, f32 measured tolerance), every backend vs
// ref, metamorphic checks, bad input.
#include "tests/common.hpp"

#include <sstream>

#include <cmath>
#include <cstring>
#include <limits>

#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_SIMD
#include "src/backends/cpu/simd/bilateral.hpp"
#endif
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

// OpenCV pads constant borders with 0: constant is compared with value 0.
[[maybe_unused]] std::vector<Border> cv_borders() {
  return {Border::replicate(), Border::reflect(), Border::reflect101(), Border::wrap(),
          Border::constant(0)};
}

struct Case {
  int d;
  double sc, ss;
};
const Case kCases[] = {{1, 30, 5}, {3, 75, 75}, {5, 10, 3}, {9, 40, 2}, {0, 25, 2.0}, {15, 200, 4}};

#if PIXFLOW_HAVE_OPENCV
TEST(Bilateral, RefWithinOneOfOpenCVForU8) {
  auto rng = make_rng(0xb101);
  for (int ch : {1, 3})
    for (Size s : awkward_sizes())
      for (Case k : kCases)
        for (const Border& b : cv_borders()) {
          BilateralParams p{k.d, k.sc, k.ss, b};
          PIXFLOW_TRACE(testing::Message()
                        << "u8x" << ch << " " << s.w << "x" << s.h << " d=" << k.d << " sc=" << k.sc
                        << " ss=" << k.ss << " " << describe(b));
          auto src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
          auto got = make_dst(s.w, s.h, {Depth::u8, ch}, rng);
          bilateral(src, got, p, {Backend::ref});
          cv::Mat want;
          cv::bilateralFilter(to_mat(src), want, k.d, k.sc, k.ss, cv_border(b));
          ASSERT_EQ(compare(got, view_of(want), 1.0), "");
        }
}

// OpenCV's f32 path interpolates a 4096-bin-per-channel exp LUT over the image's value range;
// pixflow evaluates exp directly. Measured on inputs in [-1000, 1000] over this sweep (3 seeds):
// max |diff| 7.3e-4 (docs/ops/bilateral.md); the test allows 2e-3 absolute.
TEST(Bilateral, RefWithinMeasuredToleranceOfOpenCVForF32) {
  auto rng = make_rng(0xb102);
  for (int ch : {1, 3})
    for (Size s : awkward_sizes())
      for (Case k : kCases)
        for (const Border& b : cv_borders()) {
          BilateralParams p{k.d, k.sc * 10, k.ss, b};
          PIXFLOW_TRACE(testing::Message()
                        << "f32x" << ch << " " << s.w << "x" << s.h << " d=" << k.d
                        << " sc=" << p.sigma_color << " ss=" << k.ss << " " << describe(b));
          // OpenCV copies an image with max - min < FLT_EPSILON unchanged (border ignored), and
          // its LUT only covers [min, max] of the image (a constant-0 border outside it reads
          // past the table): pin the range to [-1000, 1000]; a 1x1 image cannot be pinned.
          if (s.w * s.h * ch < 2) continue;
          auto src = random_image(s.w, s.h, {Depth::f32, ch}, rng);
          src.view.row<float>(0)[0] = -1000.0f;
          src.view.row<float>(s.h - 1)[s.w * ch - 1] = 1000.0f;
          auto got = make_dst(s.w, s.h, {Depth::f32, ch}, rng);
          bilateral(src, got, p, {Backend::ref});
          cv::Mat want;
          cv::bilateralFilter(to_mat(src), want, k.d, p.sigma_color, k.ss, cv_border(b));
          ASSERT_EQ(compare(got, view_of(want), 2e-3), "");
        }
}

TEST(Bilateral, RefWithinOneOfOpenCVOn1920x1080) {
  auto rng = make_rng(0xb103);
  PIXFLOW_TRACE("u8x3 1920x1080 d=3 sc=50 ss=10 reflect101");
  auto src = random_image(1920, 1080, {Depth::u8, 3}, rng);
  auto got = make_dst(1920, 1080, {Depth::u8, 3}, rng);
  bilateral(src, got, BilateralParams{3, 50, 10, Border::reflect101()}, {Backend::ref});
  cv::Mat want;
  cv::bilateralFilter(to_mat(src), want, 3, 50, 10, cv::BORDER_REFLECT_101);
  ASSERT_EQ(compare(got, view_of(want), 1.0), "");
}
#else
TEST(Bilateral, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++): ref not checked against cv::bilateralFilter";
}
#endif

// The cases of the OpenCV tests and sizes beyond the schema's examples (tests/schema_test.cpp
// sweeps those).
TEST(Bilateral, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0xb104);
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{1, 1}, {1, 40}, {40, 1}, {17, 13}, {203, 101}})
        for (const Border& b : all_borders()) {
          const Case k = kCases[rng() % std::size(kCases)];
          std::ostringstream p;
          p << "d=" << k.d << " sigma_color=" << k.sc << " sigma_space=" << k.ss << " "
            << border_params(b);
          ASSERT_TRUE(backends_match_ref("bilateral", p.str(), {d, ch}, s, rng));
        }
}

// The SIMD kernel's paths (u8 and f32, 1 and 3 channels; f32 bit for bit below): sizes around
// and beyond the vector widths, every border, small to the largest windows (d=31; d=0 with radius
// 30 from sigma_space), narrow and wide colour sigmas.
TEST(Bilateral, EveryBackendMatchesRefOnEveryKernelPath) {
  auto rng = make_rng(0xb105);
  const Case cases[] = {{1, 30, 5},   {3, 75, 75},  {9, 75, 75}, {9, 5, 3},
                        {15, 200, 4}, {31, 40, 10}, {0, 25, 20}};
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{263, 37}, {1000, 5}, {33, 4}, {7, 9}})
        for (const Border& b : all_borders()) {
          const Case k = cases[rng() % std::size(cases)];
          std::ostringstream p;
          p << "d=" << k.d << " sigma_color=" << k.sc << " sigma_space=" << k.ss << " "
            << border_params(b);
          PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h
                                           << " " << p.str());
          ASSERT_TRUE(backends_match_ref("bilateral", p.str(), {d, ch}, s, rng));
        }
}

// The CUDA tile kernels (bilateral.cu: u8 x 1 128 x 32 outputs per block, u8 x 3 and f32 x 1
// 32 x 64; radius <= 4 on the tile paths, larger windows on the per-pixel fallback): images
// spanning several blocks both ways with partial blocks at the right and bottom edges, every
// border (constant also with values that saturate), both depths and channel counts. 4100x1100
// u8 x 1 is a grid of >= kTallGridBlocks blocks: each block walks two block rows (the table
// filled once for both).
TEST(Bilateral, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0xb108);
  const Case fast[] = {{9, 75, 75}, {9, 10, 3}, {5, 40, 2}, {3, 30, 5}, {7, 200, 4}, {0, 25, 2.0}};
  const Case fallback[] = {{11, 50, 4}, {15, 30, 6}};
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {4100, 1100}})
        for (const Border& b : borders) {
          // The large image once per border with d=9 (the benchmarked window), the others
          // with a random fast-path window and a random fallback window.
          const bool large = s.w > 1000;
          std::vector<Case> cases{large ? fast[0] : fast[rng() % std::size(fast)]};
          if (!large) cases.push_back(fallback[rng() % std::size(fallback)]);
          if (large && (d == Depth::f32 || ch == 3) && b.type != BorderType::reflect101) continue;
          for (const Case& k : cases) {
            std::ostringstream p;
            p << "d=" << k.d << " sigma_color=" << k.sc << " sigma_space=" << k.ss << " "
              << border_params(b);
            PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x"
                                             << s.h << " " << p.str());
            ASSERT_TRUE(backends_match_ref("bilateral", p.str(), {d, ch}, s, rng));
          }
        }
}

// f32 on the cpu backend, once per SIMD target, compared bit for bit with the reference
// (NaN payloads and the sign of zero included): images in [0, 1] and [-1000, 1000], and
// images full of special values (NaN of both signs and several payloads, +-inf, +-0,
// +-FLT_MAX, denormals); colour sigmas from 1e-200 (color_coeff -inf) and 0.01 (most weights
// underflow to 0 or a denormal) to 1e200 (color_coeff -0: inf deltas make NaN exponents).
// The kernel's scalar exp fallback must have run (about 2^-15 of the weights).
TEST(Bilateral, F32BitIdenticalToRefOnEveryTarget) {
  auto rng = make_rng(0xb106);
  const Case cases[] = {{9, 0.1, 75},   {3, 75, 75},   {9, 75, 75}, {5, 0.01, 3},
                        {15, 1e4, 4},   {31, 0.5, 10}, {0, 2, 20},  {1, 30, 5},
                        {3, 1e-200, 2}, {3, 1e200, 2}, {7, 3, 1}};
#if PIXFLOW_HAVE_SIMD
  const std::uint64_t fallbacks0 = cpu::bilateral_exp_fallbacks();
#endif
  for (int image = 0; image < 3; ++image)
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{263, 37}, {1000, 3}, {33, 4}, {7, 9}, {17, 1}, {1, 1}})
        for (const Border& b : all_borders()) {
          const Case k = cases[rng() % std::size(cases)];
          const BilateralParams p{k.d, k.sc, k.ss, b};
          PIXFLOW_TRACE(testing::Message()
                        << "image " << image << " f32x" << ch << " " << s.w << "x" << s.h
                        << " d=" << k.d << " sc=" << k.sc << " ss=" << k.ss << " " << describe(b));
          TestImage src = image == 2   ? special_f32_image(s.w, s.h, ch, rng)
                          : image == 1 ? random_image(s.w, s.h, {Depth::f32, ch}, rng)
                                       : random_image(s.w, s.h, {Depth::f32, ch}, rng, false, 0, 1);
          auto want = make_dst(s.w, s.h, {Depth::f32, ch}, rng);
          bilateral(src, want, p, {Backend::ref});
          for (const std::string& target : cpu_targets_for(Backend::cpu)) {
            PIXFLOW_TRACE("SIMD " + target);
            SimdTargetScope forced(target);
            auto got = make_dst(s.w, s.h, {Depth::f32, ch}, rng);
            bilateral(src, got, p, {Backend::cpu});
            ASSERT_EQ(compare_bits(got, want), "");
          }
        }
#if PIXFLOW_HAVE_SIMD
  EXPECT_GT(cpu::bilateral_exp_fallbacks(), fallbacks0) << "the scalar exp fallback never ran";
#endif
}

#if PIXFLOW_HAVE_SIMD
// The f32 kernel's colour weight (vector exp, margin test, scalar fallback, the +0 cutoff
// below -104) against float(std::exp(x)) bit for bit on every target: a million x uniform in
// [-104, 0] (half), [-750, 0] and [-110, -80] (float denormals, the cutoff); x next to the cutoff,
// the normal/denormal boundary and 0; special values; and x = log(m) for m the midpoint of
// two adjacent floats, where exp(x) is within ~2^-45 of the float rounding boundary: every
// one of those must take the fallback (they exercise it), while the uniform ones rarely do.
TEST(Bilateral, F32ColourWeightIsFloatOfStdExpOnEveryTarget) {
  auto rng = make_rng(0xb107);
  std::vector<double> uniform(1 << 20), hard, edge;
  std::uniform_real_distribution<double> all(-750.0, 0.0), used(-104.0, 0.0), low(-110.0, -80.0);
  for (std::size_t i = 0; i < uniform.size(); ++i)
    uniform[i] = i % 4 == 3 ? low(rng) : i % 4 == 2 ? all(rng) : used(rng);
  // Found offline (Python decimal, 50 digits): x = the double nearest ln(m), m the midpoint
  // of the float with these bits and the next (0x3f7ffffe, 0x3f3504f3, 0x3e800001,
  // 0x1f000123, 0x03000456, 0x00800001 (least normal), 0x00012345, 0x00000003 (denormals));
  // |exp(x)/m - 1| < 2^-48 for each.
  const double offline[] = {-0x1.8000012000012p-24, -0x1.62e42e41952eap-2, -0x1.62e42cefa3a37p+0,
                            -0x1.686fae7776ec1p+5,  -0x1.4f7b929d1f32bp+6, -0x1.5d589f23e5109p+6,
                            -0x1.703cecb35314fp+6,  -0x1.981acb814727bp+6};
  hard.assign(std::begin(offline), std::end(offline));
  std::uniform_int_distribution<std::uint32_t> fbits(0x00000001u, 0x3f7ffffeu);
  while (hard.size() < 20000) {
    float f;
    const std::uint32_t b = fbits(rng);
    std::memcpy(&f, &b, 4);
    const double m = (double(f) + double(std::nextafter(f, 2.0f))) / 2;  // exact in double
    const double x = std::log(m);
    if (x > -103.0) hard.push_back(x);  // above the cutoff (x < -104: +0 either way)
  }
  for (double c : {-104.0, -103.97207708399179, -87.33654475055310898, -745.1332191019411, 0.0}) {
    double x = c, y = c;  // 64 doubles either side (none above 0)
    for (int i = 0; i < 64; ++i, x = std::nextafter(x, -1000.0), y = std::nextafter(y, 0.0)) {
      edge.push_back(x);
      if (y < 0) edge.push_back(y);
    }
  }
  for (double x :
       {-0.0, 0.0, -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
        -std::numeric_limits<double>::max(), -std::numeric_limits<double>::denorm_min(), -1e-300,
        -104.5, -103.5, -150.0, -709.0})
    edge.push_back(x);

  auto check = [](const std::vector<double>& xs) -> std::size_t {
    std::vector<float> got(xs.size());
    const std::size_t fb = cpu::bilateral_colour_weights(xs.data(), got.data(), xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const float want = float(std::exp(xs[i]));
      std::uint32_t g, w;
      std::memcpy(&g, &got[i], 4);
      std::memcpy(&w, &want, 4);
      if (g != w) {
        ADD_FAILURE() << "x = " << std::hexfloat << xs[i] << ": got " << got[i] << " want " << want;
        return fb;
      }
    }
    return fb;
  };
  for (const std::string& target : cpu_targets_for(Backend::cpu)) {
    PIXFLOW_TRACE("SIMD " + target);
    SimdTargetScope forced(target);
    const std::size_t fu = check(uniform);
    const std::size_t fh = check(hard);
    check(edge);
    std::printf("[ info     ] %s: fallback on %zu of %zu uniform x, %zu of %zu midpoint x\n",
                target.c_str(), fu, uniform.size(), fh, hard.size());
    if (target == "SCALAR" || target == "EMU128") continue;  // the reference's own exp
    EXPECT_LT(fu, uniform.size() >> 12);                     // expected ~2^-15 of them
    EXPECT_GT(fh, hard.size() * 99 / 100);  // within 2^-44 of a boundary: undecidable
  }
}
#endif

TEST(Bilateral, ConstantU8ImageStaysConstant) {
  auto rng = make_rng(0xb105);
  for (int ch : {1, 3}) {
    PIXFLOW_TRACE(testing::Message() << "u8x" << ch);
    auto flat = make_dst(19, 12, {Depth::u8, ch}, rng);
    for (std::int64_t y = 0; y < 12; ++y)
      for (std::int64_t x = 0; x < 19 * ch; ++x) flat.view.row<std::uint8_t>(y)[x] = 201;
    auto got = make_dst(19, 12, {Depth::u8, ch}, rng);
    bilateral(flat, got, BilateralParams{7, 30, 3, Border::reflect()}, {Backend::ref});
    ASSERT_EQ(compare(got, flat), "");
  }
}

// Ranges, depths, channels, dst and overlap: SchemaBadInput (tests/schema_test.cpp). Here:
// the radius derived from sigma_space when d=0.
TEST(Bilateral, RadiusFromSigmaSpaceMustBeAtMost31) {
  Image u8(8, 8, {Depth::u8, 1}), u8b(8, 8, {Depth::u8, 1});
  const BadCase cases[] = {
      {"radius from sigma > 31",
       [&] {
         bilateral(u8, u8b, BilateralParams{0, 10, 21});
       },
       Status::invalid_argument,
       {"bilateral: ", "sigma_space must be < 21"}},
      {"cli sigma from d=0",
       [&] { Pipeline::parse("bilateral d=0 sigma_space=30"); },
       Status::invalid_argument,
       {"bilateral: ", "sigma_space must be < 21"}},
  };
  expect_errors(cases);
}

}  // namespace
}  // namespace pixflow::test
