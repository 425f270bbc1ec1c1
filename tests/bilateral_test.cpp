// bilateral: ref vs cv::bilateralFilter (u8 +-1, f32 measured tolerance), the f32 colour
// table rule (src/base/bilateral_f32.hpp) against exp, every backend vs ref, metamorphic
// checks, bad input.
#include "tests/common.hpp"

#include <sstream>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "src/base/bilateral_f32.hpp"
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

// OpenCV's f32 path interpolates a 4096-bin-per-channel exp LUT over [0, (max - min) * cn] of
// the image; pixflow's over [0, sigma_color * sqrt(208)] (src/base/bilateral_f32.hpp), whose
// weights are within 1.6e-6 of exp (cn = 1), OpenCV's closer where sigma_color is large
// against the range (here 2000 against 750: bins 0.49 wide against 2.6). An output moves by
// about the weight error times sum |v_k - out| / wsum: up to ~3e-3 for values 2000 apart.
// Measured on inputs in [-1000, 1000] over this sweep (docs/ops/bilateral.md): max |diff|
// 7.3e-4 with the previous direct exp (3 seeds); with the table 1.56e-3 to 1.89e-3 over 23
// seeds (the largest at d=3, sigma_color=750, 1 channel: five taps, so wsum is small and
// each neighbour's weight error counts). The test allows 4e-3 absolute (was 2e-3).
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
          ASSERT_EQ(compare(got, view_of(want), 4e-3), "");
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
// +-FLT_MAX, denormals); colour sigmas from 1e-200 (the table's scale clamped to FLT_MAX) and
// 0.01 (most weights 0) to 1e200 (scale 0: every finite delta in bin 0).
TEST(Bilateral, F32BitIdenticalToRefOnEveryTarget) {
  auto rng = make_rng(0xb106);
  const Case cases[] = {{9, 0.1, 75},   {3, 75, 75},   {9, 75, 75}, {5, 0.01, 3},
                        {15, 1e4, 4},   {31, 0.5, 10}, {0, 2, 20},  {1, 30, 5},
                        {3, 1e-200, 2}, {3, 1e200, 2}, {7, 3, 1}};
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
}

// ---- the f32 colour table (src/base/bilateral_f32.hpp) ----------------------------------

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The table of every channel count: T[0] = 1, T[N] = 0 (the span reaches where the float of
// exp is 0), T non-increasing, D[i] = T[i + 1] - T[i] with T[N + 1] = 0, and every entry the
// float of exp at its abscissa within one float ulp (exp_nonpositive against std::exp: they
// differ only where exp is within ~2^-48 of a float rounding midpoint).
TEST(Bilateral, F32TableEntriesAreFloatsOfExp) {
  namespace bf = detail::bilateral_f32;
  for (int cn = 1; cn <= 4; ++cn) {
    PIXFLOW_TRACE(testing::Message() << "cn=" << cn);
    const int n = bf::bins(cn);
    const std::vector<float>& t = bf::table(cn);
    ASSERT_EQ(t.size(), std::size_t(2 * n + 2));
    EXPECT_EQ(t[0], 1.0f);
    EXPECT_EQ(bits_of(t[std::size_t(2 * n)]), 0u);
    EXPECT_GT(t[std::size_t(n)], 0.0f);  // T[N / 2]
    const double per_bin2 = bf::exponent_per_bin2(cn);
    int off = 0;
    for (int i = 0; i <= n; ++i) {
      const float ti = t[std::size_t(2 * i)];
      const float next = i < n ? t[std::size_t(2 * i + 2)] : 0.0f;
      ASSERT_LE(next, ti) << i;
      ASSERT_EQ(bits_of(t[std::size_t(2 * i + 1)]), bits_of(next - ti)) << i;
      const float want = float(std::exp(double(std::int64_t(i) * i) * per_bin2));
      if (ti != want) {
        ++off;
        ASSERT_TRUE(ti == std::nextafter(want, 0.0f) || ti == std::nextafter(want, 2.0f))
            << "i=" << i << " T=" << ti << " exp=" << want;
      }
    }
    EXPECT_LT(off, 4) << "entries one ulp from float(std::exp)";
  }
}

// The rule is a faithful approximation: |weight(delta) - exp(-delta^2 / (2 sigma^2))| <= 2e-6
// for every delta (cn = 1: linear interpolation's h^2 / 8 * max|w''| = 1.55e-6 with h = 1/4096
// of the span in units where w = exp(-104 q^2), max|w''| = 208; plus the float roundings of
// scale, alpha, T and the lerp, ~1.5e-7), on random deltas over 1.2 spans, the bin edges
// (delta = i / scale and its float neighbours), and beyond the span (0). cn = 3 has 3x the
// bins: its bound is 4e-7. The maxima must also come near the interpolation bound (else the
// comparison is not looking at the interpolated values).
TEST(Bilateral, F32TableWeightIsWithinBoundOfExp) {
  namespace bf = detail::bilateral_f32;
  auto rng = make_rng(0xb109);
  for (int cn : {1, 3})
    for (double sigma : {0.01, 0.3, 1.0, 30.0, 75.0, 1e4}) {
      PIXFLOW_TRACE(testing::Message() << "cn=" << cn << " sigma_color=" << sigma);
      const int n = bf::bins(cn);
      const float scale = bf::scale(sigma, cn);
      const float* t = bf::table(cn).data();
      const double coeff = -0.5 / (sigma * sigma), span = sigma * bf::kSqrt208;
      std::vector<float> deltas;
      std::uniform_real_distribution<double> any(0.0, 1.2 * span);
      for (int i = 0; i < 200000; ++i) deltas.push_back(float(any(rng)));
      for (int i = 0; i <= n + 2; i += (i < 64 ? 1 : 37)) {
        const float edge = float(double(i) / double(scale));
        deltas.push_back(edge);
        deltas.push_back(std::nextafter(edge, 0.0f));
        deltas.push_back(std::nextafter(edge, FLT_MAX));
      }
      double worst = 0;
      for (float d : deltas) {
        const float w = bf::weight(t, n, scale, d);
        const double want = std::exp(double(d) * double(d) * coeff);
        const double err = std::fabs(double(w) - want);
        worst = std::max(worst, err);
        ASSERT_LE(err, cn == 1 ? 2e-6 : 4e-7) << "delta=" << d << " w=" << w << " exp=" << want;
        ASSERT_GE(w, 0.0f);
        ASSERT_LE(w, 1.0f);
      }
      std::printf("[ info     ] cn=%d sigma_color=%g: max |weight - exp| = %.3g\n", cn, sigma,
                  worst);
      EXPECT_GT(worst, cn == 1 ? 1e-6 : 1e-7);
    }
}

// Special deltas and sigmas: delta 0 -> 1 (the centre); NaN, inf and beyond the span -> 0;
// sigma_color tiny -> scale FLT_MAX (never inf, so the centre's 0 * scale is 0), huge -> scale
// 0 (every finite delta weighs 1), NaN -> scale NaN (every weight 0: outputs NaN).
TEST(Bilateral, F32TableWeightOfSpecialValues) {
  namespace bf = detail::bilateral_f32;
  for (int cn : {1, 3}) {
    const int n = bf::bins(cn);
    const float* t = bf::table(cn).data();
    const float s = bf::scale(2.0, cn);
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(bf::weight(t, n, s, 0.0f), 1.0f);
    EXPECT_EQ(bits_of(bf::weight(t, n, s, nan)), 0u);
    EXPECT_EQ(bits_of(bf::weight(t, n, s, inf)), 0u);
    EXPECT_EQ(bits_of(bf::weight(t, n, s, FLT_MAX)), 0u);
    EXPECT_EQ(bits_of(bf::weight(t, n, s, float(2.0 * bf::kSqrt208))), 0u);
    EXPECT_GT(bf::weight(t, n, s, float(2.0 * bf::kSqrt208 * 0.99)), 0.0f);
    EXPECT_EQ(bf::scale(1e-200, cn), FLT_MAX);
    EXPECT_EQ(bf::weight(t, n, bf::scale(1e-200, cn), 0.0f), 1.0f);
    EXPECT_EQ(bf::scale(1e200, cn), 0.0f);
    EXPECT_EQ(bf::weight(t, n, 0.0f, 1e30f), 1.0f);
    EXPECT_EQ(bits_of(bf::weight(t, n, 0.0f, inf)), 0u);  // inf * 0 = NaN
    EXPECT_TRUE(std::isnan(bf::scale(std::numeric_limits<double>::quiet_NaN(), cn)));
    EXPECT_EQ(bits_of(bf::weight(t, n, nan, 0.0f)), 0u);
  }
}

// Deltas on the bin edges: a centre of 0 with neighbours at +-i / scale and their float
// neighbours (alpha = i exactly, or an ulp either side), f32x1 and f32x3, every backend bit for
// bit against the reference, and non-finite samples (NaN, +-inf, FLT_MAX) on every backend:
// NaN where the reference is NaN (payloads are not compared: the GPU's is canonical), the same
// bits elsewhere.
TEST(Bilateral, F32BinEdgesAndNonFiniteMatchRefOnEveryBackend) {
  namespace bf = detail::bilateral_f32;
  auto rng = make_rng(0xb10a);
  for (int ch : {1, 3})
    for (double sigma : {0.01, 2.0, 1e4}) {
      const float scale = bf::scale(sigma, ch);
      const Size s{67, 23};
      auto src = random_image(s.w, s.h, {Depth::f32, ch}, rng);
      std::uniform_int_distribution<int> bin(0, bf::bins(ch));
      for (std::int64_t y = 0; y < s.h; ++y)
        for (std::int64_t x = 0; x < s.w * ch; ++x) {
          float v = float(double(bin(rng)) / double(scale));
          if (rng() % 3 == 0) v = std::nextafter(v, rng() % 2 ? 0.0f : FLT_MAX);
          src.view.row<float>(y)[x] = (x + y) % 4 == 0 ? 0.0f : (rng() % 2 ? v : -v);
        }
      std::ostringstream p;
      p << "d=5 sigma_color=" << sigma << " sigma_space=3";
      PIXFLOW_TRACE(testing::Message() << "bin edges f32x" << ch << " " << p.str());
      ASSERT_TRUE(backends_match_ref("bilateral", p.str(), src, rng));
    }
  for (int ch : {1, 3})
    for (const Border& b : all_borders()) {
      const Size s{41, 19};
      const BilateralParams p{ch == 1 ? 9 : 5, 3.0, 2.0, b};
      PIXFLOW_TRACE(testing::Message() << "special f32x" << ch << " " << describe(b));
      TestImage src = special_f32_image(s.w, s.h, ch, rng);
      auto want = make_dst(s.w, s.h, {Depth::f32, ch}, rng);
      bilateral(src, want, p, {Backend::ref});
      for (Backend be : test_backends_for("bilateral")) {
        PIXFLOW_TRACE(backend_name(be));
        auto dsrc = to_backend(be, src.view, rng);
        auto got = make_dst_on(be, s.w, s.h, {Depth::f32, ch}, rng);
        bilateral(dsrc, got, p, {be});
        const Image g = to_host(got.view);
        for (std::int64_t y = 0; y < s.h; ++y)
          for (std::int64_t x = 0; x < s.w * ch; ++x) {
            const float gv = g.view().row<float>(y)[x], wv = want.view.row<float>(y)[x];
            if (std::isnan(wv)) {
              ASSERT_TRUE(std::isnan(gv)) << "x=" << x / ch << " y=" << y << " got " << gv;
            } else {
              ASSERT_EQ(bits_of(gv), bits_of(wv))
                  << "x=" << x / ch << " y=" << y << " got " << gv << " want " << wv;
            }
          }
      }
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
