// bilateral: ref vs cv::bilateralFilter (u8 +-1, f32 measured tolerance), every backend vs
// ref, metamorphic checks, bad input.
#include "tests/common.hpp"

#include <sstream>

#include <cmath>

#include "src/ref/ref.hpp"
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

// The SIMD kernel's paths (u8, 1 and 3 channels; f32 goes to the reference, checked above):
// sizes around and
// beyond the vector widths, every border, small to the largest windows (d=31; d=0 with radius
// 30 from sigma_space), narrow and wide colour sigmas.
TEST(Bilateral, EveryBackendMatchesRefOnEveryKernelPath) {
  auto rng = make_rng(0xb105);
  const Case cases[] = {{1, 30, 5},   {3, 75, 75},  {9, 75, 75}, {9, 5, 3},
                        {15, 200, 4}, {31, 40, 10}, {0, 25, 20}};
  for (Depth d : {Depth::u8})
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
