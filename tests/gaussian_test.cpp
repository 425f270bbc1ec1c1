#include "tests/common.hpp"

#include <cmath>
#include <utility>

#include "src/backends/cuda/gaussian_u8_dp.hpp"
#include "src/base/gaussian_taps.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kDepths[] = {Depth::u8, Depth::u16, Depth::f32};

struct GCase {
  double sigma, sigma_y;
  int kw, kh;
};
// From sigma (k = 0), from k (sigma = 0; OpenCV's tables for k <= 7), both, anisotropic,
// and windows larger than the small images.
const GCase kCases[] = {{1.0, 0, 0, 0}, {2.5, 0, 0, 0}, {0, 0, 3, 3},     {0, 0, 5, 5},
                        {0, 0, 7, 7},   {0, 0, 9, 9},   {1.2, 0.7, 5, 3}, {0.8, 3.0, 0, 0},
                        {4.0, 0, 0, 0}, {1.5, 0, 1, 11}};

// Tolerance vs cv::GaussianBlur. The contract (docs/contract.md §3) allows ±1 for u8/u16, but the
// fixed-point rule is OpenCV 4.x's own (same taps, Q8/Q16, same rounding): measured
// bit-exact against OpenCV 4.6 on every case below, so integers are asserted exact (a ±1
// here would hide a changed tap rule). f32: 1e-4 absolute + relative, as the contract.
[[maybe_unused]] double cv_abs_tol(Depth d) {
  return d == Depth::f32 ? 1e-4 : 0.0;
}
[[maybe_unused]] double cv_rel_tol(Depth d) {
  return d == Depth::f32 ? 1e-4 : 0.0;
}

std::string case_name(Depth d, int ch, Size s, const GCase& g, const Border& b) {
  std::ostringstream o;
  o << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h << " sigma=" << g.sigma << ","
    << g.sigma_y << " k=" << g.kw << "x" << g.kh << " " << describe(b);
  return o.str();
}

GaussianParams params(const GCase& g, const Border& b) {
  GaussianParams p;
  p.sigma = g.sigma;
  p.sigma_y = g.sigma_y;
  p.kw = g.kw;
  p.kh = g.kh;
  p.border = b;
  return p;
}

#if PIXFLOW_HAVE_OPENCV
// cv::GaussianBlur with the border type itself, except constant (OpenCV uses 0) and any
// type it refuses: those pad with copyMakeBorder, filter, crop.
cv::Mat cv_gaussian(const cv::Mat& src, const GCase& g, const Border& b) {
  cv::Mat out;
  if (b.type != BorderType::constant) {
    try {
      cv::GaussianBlur(src, out, cv::Size(g.kw, g.kh), g.sigma, g.sigma_y, cv_border(b));
      return out;
    } catch (const cv::Exception&) {
    }
  }
  // The window OpenCV will use (resolved the same way as pixflow does, checked by the
  // direct cases above).
  const bool u8 = src.depth() == CV_8U;
  const double sy = g.sigma_y > 0 ? g.sigma_y : g.sigma;
  const int kw = g.kw > 0 ? g.kw : int(std::lrint(g.sigma * (u8 ? 3 : 4) * 2 + 1)) | 1;
  const int kh = g.kh > 0 ? g.kh : int(std::lrint(sy * (u8 ? 3 : 4) * 2 + 1)) | 1;
  cv::Mat padded;
  cv::copyMakeBorder(src, padded, kh / 2, kh / 2, kw / 2, kw / 2, cv_border(b),
                     cv::Scalar::all(b.value));
  cv::GaussianBlur(padded, out, cv::Size(kw, kh), g.sigma, g.sigma_y, cv::BORDER_REPLICATE);
  return out(cv::Rect(kw / 2, kh / 2, src.cols, src.rows)).clone();
}

TEST(Gaussian, RefMatchesOpenCVGaussianBlurWithinContractTolerance) {
  auto rng = make_rng(0x6a01);
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (const GCase& g : kCases)
          for (const Border& b : all_borders()) {
            PIXFLOW_TRACE(case_name(d, ch, s, g, b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            auto got = make_dst(s.w, s.h, {d, ch}, rng);
            gaussian(src, got, params(g, b), {Backend::ref});
            cv::Mat want = cv_gaussian(to_mat(src), g, b);
            ASSERT_EQ(compare(got, view_of(want), cv_abs_tol(d), cv_rel_tol(d)), "");
          }
}

TEST(Gaussian, RefMatchesOpenCVOnFullHd) {
  auto rng = make_rng(0x6a02);
  for (Depth d : kDepths) {
    PIXFLOW_TRACE(depth_name(d));
    auto src = random_image(1920, 1080, {d, 1}, rng);
    auto got = make_dst(1920, 1080, {d, 1}, rng);
    const GCase g{1.5, 0, 0, 0};
    gaussian(src, got, params(g, Border::reflect101()), {Backend::ref});
    cv::Mat want = cv_gaussian(to_mat(src), g, Border::reflect101());
    ASSERT_EQ(compare(got, view_of(want), cv_abs_tol(d), cv_rel_tol(d)), "");
  }
}
#else
TEST(Gaussian, RefMatchesOpenCVGaussianBlurWithinContractTolerance) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
TEST(Gaussian, RefMatchesOpenCVOnFullHd) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
#endif

// Integer taps written out here from the documented rule (docs/ops/gaussian.md): the
// sampled, normalised Gaussian (OpenCV's tables for sigma <= 0 and k <= 9) times 2^bits,
// quantised with error diffusion over the left half, mirrored, centre = 2^bits - rest.
std::vector<std::int64_t> test_taps(int n, double sigma, int bits) {
  std::vector<double> g(static_cast<std::size_t>(n), 0.0);
  if (sigma <= 0 && n <= 9) {
    const std::vector<std::vector<double>> tab{
        {1.0},
        {0.25, 0.5, 0.25},
        {0.0625, 0.25, 0.375, 0.25, 0.0625},
        {0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125},
        {4 / 256.0, 13 / 256.0, 30 / 256.0, 51 / 256.0, 60 / 256.0, 51 / 256.0, 30 / 256.0,
         13 / 256.0, 4 / 256.0}};
    g = tab[std::size_t(n / 2)];
  } else {
    const double s = sigma > 0 ? sigma : 0.3 * ((n - 1) * 0.5 - 1) + 0.8;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const double x = i - (n - 1) * 0.5;
      g[std::size_t(i)] = std::exp(-x * x / (2 * s * s));
      sum += g[std::size_t(i)];
    }
    for (double& v : g) v /= sum;
  }
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  double err = 0;
  std::int64_t total = 0;
  for (int i = 0; i < n / 2; ++i) {
    const double adj = g[std::size_t(i)] * double(1 << bits) + err;
    const std::int64_t v = std::llrint(adj);
    err = adj - double(v);
    t[std::size_t(i)] = t[std::size_t(n - 1 - i)] = v;
    total += 2 * v;
  }
  t[std::size_t(n / 2)] = (std::int64_t(1) << bits) - total;
  return t;
}

TEST(Gaussian, IntegerSeparableEqualsTwoDimensionalOuterProductCorrelation) {
  auto rng = make_rng(0x6a03);
  for (Depth d : {Depth::u8, Depth::u16})
    for (const GCase& g : {GCase{1.0, 0, 0, 0}, GCase{0, 0, 5, 5}, GCase{1.2, 0.7, 5, 3},
                           GCase{2.0, 0, 9, 1}, GCase{0.9, 0, 0, 0}})
      for (const Border& b : all_borders()) {
        const Size s{17, 13};
        PIXFLOW_TRACE(case_name(d, 2, s, g, b));
        const bool u8 = d == Depth::u8;
        const int bits = u8 ? 8 : 16;
        const double sy = g.sigma_y > 0 ? g.sigma_y : g.sigma;
        const int kw = g.kw > 0 ? g.kw : int(std::lrint(g.sigma * (u8 ? 3 : 4) * 2 + 1)) | 1;
        const int kh = g.kh > 0 ? g.kh : int(std::lrint(sy * (u8 ? 3 : 4) * 2 + 1)) | 1;
        const auto tx = test_taps(kw, g.sigma, bits), ty = test_taps(kh, sy, bits);
        auto src = random_image(s.w, s.h, {d, 2}, rng);
        auto got = make_dst(s.w, s.h, {d, 2}, rng);
        gaussian(src, got, params(g, b), {Backend::ref});
        const double cval = u8 ? std::min(255.0, b.value) : b.value;
        for (std::int64_t y = 0; y < s.h; ++y)
          for (std::int64_t x = 0; x < s.w; ++x)
            for (int c = 0; c < 2; ++c) {
              std::int64_t acc = 0;
              for (int j = 0; j < kh; ++j)
                for (int i = 0; i < kw; ++i) {
                  const std::int64_t sy2 = detail::border_index(y - kh / 2 + j, s.h, b.type);
                  const std::int64_t sx2 = detail::border_index(x - kw / 2 + i, s.w, b.type);
                  const double v = (sy2 < 0 || sx2 < 0) ? cval : sample(src, sx2, sy2, c);
                  acc += std::int64_t(v) * tx[std::size_t(i)] * ty[std::size_t(j)];
                }
              const int shift = 2 * bits;
              const std::int64_t want = (acc + (std::int64_t(1) << (shift - 1))) >> shift;
              ASSERT_EQ(sample(got, x, y, c), double(want)) << "at " << x << "," << y << "," << c;
            }
      }
}

TEST(Gaussian, WindowOneIsCopyAndConstantImageStaysConstant) {
  auto rng = make_rng(0x6a04);
  for (Depth d : kDepths)
    for (const Border& b : all_borders()) {
      PIXFLOW_TRACE(std::string(depth_name(d)) + " " + describe(b));
      auto src = random_image(13, 9, {d, 3}, rng);
      auto got = make_dst(13, 9, {d, 3}, rng);
      gaussian(src, got, params({2.0, 0, 1, 1}, b), {Backend::ref});
      ASSERT_EQ(compare(got, src), "");
      fill_constant(src, 77);  // the constant border's value too
      gaussian(src, got, params({1.7, 0, 0, 0}, b), {Backend::ref});
      // Integer taps sum to exactly 2^bits; float taps to 1 within rounding.
      ASSERT_EQ(compare(got, src, d == Depth::f32 ? 77 * 1e-6 : 0), "");
    }
}

// Windows, sigmas and sizes beyond the schema's examples (tests/schema_test.cpp sweeps
// those) and the CPU backend's row bands at 1920x1080.
TEST(Gaussian, EveryBackendMatchesRef) {
  auto rng = make_rng(0x6a05);
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {64, 3}})
        for (const GCase& g :
             {GCase{1.0, 0, 0, 0}, GCase{0, 0, 5, 5}, GCase{1.2, 0.7, 5, 3}, GCase{4.0, 0, 0, 0}})
          for (const Border& b : all_borders()) {
            std::ostringstream p;
            p << "sigma=" << g.sigma << " sigma_y=" << g.sigma_y << " kw=" << g.kw << " kh=" << g.kh
              << " " << border_params(b);
            ASSERT_TRUE(backends_match_ref("gaussian", p.str(), {d, ch}, s, rng));
          }
  ASSERT_TRUE(backends_match_ref("gaussian", "sigma=1 border=reflect101", {Depth::u8, 3},
                                 {1920, 1080}, rng));
}

// The SIMD kernel's paths (src/backends/cpu/simd/gaussian.cpp): short windows (2 output
// rows per vertical step) and long ones (4), kw != kh both ways, large sigma, rows
// shorter than a vector and longer than several, odd row counts against the row groups.
TEST(Gaussian, SimdPathsMatchRefOnEveryDepthBorderAndShape) {
  auto rng = make_rng(0x6a08);
  const char* cases[] = {
      "kw=3 kh=3",           "kw=5 kh=9",          "kw=11 kh=3",         "sigma=2",  "sigma=8",
      "sigma=1.5 sigma_y=5", "kw=1 kh=15 sigma=3", "kw=21 kh=1 sigma=3", "kw=7 kh=7"};
  for (Depth d : kDepths)
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{263, 37}, {1000, 5}, {5, 1000}, {33, 17}})
        for (const char* c : cases)
          for (const Border& b : all_borders()) {
            if ((s.w == 1000 || s.h == 1000) && ch == 3 && d != Depth::u8) continue;
            ASSERT_TRUE(backends_match_ref("gaussian", std::string(c) + " " + border_params(b),
                                           {d, ch}, s, rng));
          }
}

// The packed 3x3 kernel on u8 x 3 (u8_3x3.cuh linear3, CN = 3, Q8 taps): aligned
// destinations (the packed path), aligned and padded sources, streaming and tall blocks, every
// border, sigma_y equal to sigma and not.
TEST(Gaussian, EveryBackendMatchesRefOnManyTilesU8x3Packed3x3) {
  auto rng = make_rng(0x6a0c);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes = {{1, 1},     {2, 3},    {43, 5},     {517, 70},
                                   {600, 150}, {300, 97}, {4100, 1100}};
  std::size_t turn = 0;
  for (Backend be : test_backends_for("gaussian"))
    for (Size s : sizes)
      for (std::pair<double, double> sig : {std::pair{0.8, 0.0}, std::pair{1.1, 0.6}})
        for (std::size_t bi = 0; bi < (s.w == 4100 ? 2 : borders.size()); ++bi)
          for (bool tight_src : {true, false}) {
            const Border b = borders[(bi + turn++) % borders.size()];
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " u8x3 " << s.w << "x" << s.h << " " << describe(b)
                          << " sigma=" << sig.first << "/" << sig.second
                          << (tight_src ? " aligned src" : " padded src"));
            auto src = random_image(s.w, s.h, {Depth::u8, 3}, rng, tight_src);
            auto want = make_dst(s.w, s.h, {Depth::u8, 3}, rng);
            gaussian(src, want, GaussianParams{sig.first, sig.second, 3, 3, b}, {Backend::ref});
            auto in = to_backend(be, src, rng, tight_src);
            auto got = make_dst_on(be, s.w, s.h, {Depth::u8, 3}, rng, /*tight=*/true);
            gaussian(in, got, GaussianParams{sig.first, sig.second, 3, 3, b}, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

// Images of many tiles for the CUDA u8 kernel (src/backends/cuda/separable.cu,
// gaussian_u8_kernel: 256-sample tiles of 32 rows, vertical sums two samples per word,
// horizontal sums in float; windows 13 and 49 compiled, the rest at run time), 1-4
// channels, sigma from the window and the window from sigma, kw != kh; the borders taken
// in turn. The last image is the benchmark's kind (many tiles in both directions). (13 and 49
// taps on 1 and 3 channels now mostly take the dot-product kernel: the test below.)
TEST(Gaussian, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0x6a07);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  const std::vector<std::pair<Size, int>> images = {
      {{600, 150}, 1}, {{517, 70}, 3}, {{300, 97}, 4}, {{389, 40}, 2}};
  const char* cases[] = {"sigma=2",    "sigma=8",           "kw=13 kh=13 sigma=0",
                         "kw=5 kh=9",  "kw=3 kh=3 sigma=1", "kw=49 kh=7 sigma=3",
                         "kw=1 kh=13", "kw=25 kh=1 sigma=0"};
  std::size_t turn = 0;
  for (const auto& [s, ch] : images)
    for (const char* c : cases)
      ASSERT_TRUE(backends_match_ref(
          "gaussian", std::string(c) + " " + border_params(borders[turn++ % borders.size()]),
          {Depth::u8, ch}, s, rng));
  for (const char* c : {"sigma=2 border=reflect101", "sigma=8 border=constant value=9"})
    ASSERT_TRUE(backends_match_ref("gaussian", c, {Depth::u8, 1}, {2100, 300}, rng));
  // The packed 3x3 kernel in both block shapes (launch.cuh, tall_blocks_fill): the streaming
  // one at 4100x1100 (and every size above), the tall one at 4100x2200 (33 x 35 blocks).
  for (Size s : std::vector<Size>{{4100, 1100}, {4100, 2200}})
    for (const char* c : {"kw=3 kh=3 sigma=1 border=reflect101",
                          "kw=3 kh=3 sigma=0.8 sigma_y=2 border=constant value=300"})
      ASSERT_TRUE(backends_match_ref("gaussian", c, {Depth::u8, 1}, s, rng));
}

// The CUDA dot-product kernel (separable.cu, gaussian_u8_dp_kernel: 13 taps on u8 x 1 and
// u8 x 3, 49 on u8 x 1; taps <= 255) in both block shapes (32 rows, and 64 where the grid
// fills the GPU: 4100x4100 u8x1 = 17 x 65 blocks >= 1056), every border in turn (constant 300
// and -7 too), sigma from the window and the window from sigma, sigma_y != sigma; beside it
// the cases that fall back to gaussian_u8_kernel: 2 and 4 channels, kw != kh, 49 taps on u8x3,
// a centre tap of 256 (sigma 0.1).
TEST(Gaussian, EveryBackendMatchesRefOnManyTilesDotProducts) {
  auto rng = make_rng(0x6a0d);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  auto check = [&](const char* c, int ch, Size s) {
    ASSERT_TRUE(backends_match_ref(
        "gaussian", std::string(c) + " " + border_params(borders[turn++ % borders.size()]),
        {Depth::u8, ch}, s, rng));
  };
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {4100, 1100}, {1, 1}, {7, 5}})
    for (int ch : {1, 3})
      for (const char* c : {"sigma=2", "kw=13 kh=13 sigma=0", "kw=13 kh=13 sigma=1.3 sigma_y=2.5"})
        check(c, ch, s);
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {1100, 90}})
    for (const char* c : {"sigma=8", "kw=49 kh=49 sigma=5 sigma_y=9"}) check(c, 1, s);
  check("sigma=2", 1, {4100, 4100});
  for (const char* c : {"sigma=2", "kw=13 kh=13 sigma=0.1", "kw=13 kh=15 sigma=2"}) {
    for (int ch : {1, 2, 3, 4}) check(c, ch, {517, 70});
  }
  check("sigma=8", 3, {300, 97});
}

// ---- the dot-product kernel's arithmetic on the host (gaussian_u8_dp.hpp) ------------------
namespace gd = pixflow::cuda::gauss_dp;

std::uint32_t word_at(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

// h_run for window start A against the plain sum; then the vertical dot products of pair
// words against the plain sum and the packed bytes against (v + 2^15) >> 16.
template <int KW, int KH, int CN, int A>
void check_packed_sums(const std::vector<std::int32_t>& tx, const std::vector<std::int32_t>& ty,
                       std::mt19937_64& rng, bool saturated) {
  constexpr int kR = 8, kRW = gd::run_words(KW, CN, kR, A), kVW = gd::v_words(KH);
  constexpr int kRows = KH + 1 + 4;  // pair rows for 3 output row pairs, plus one
  gd::Taps t;
  ASSERT_TRUE(gd::make_taps(tx.data(), KW, ty.data(), KH, CN, t));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> rows(std::size_t(kRows) * 4 * kRW);
  for (auto& v : rows) v = std::uint8_t(saturated ? 255 : byte(rng));
  std::vector<std::int64_t> plain_h(std::size_t(kRows) * kR);
  std::vector<std::uint32_t> hw(std::size_t(kRows) * kR);
  for (int r = 0; r < kRows; ++r) {
    const std::uint8_t* row = rows.data() + std::size_t(r) * 4 * kRW;
    std::uint32_t w[kRW], h[kR];
    for (int k = 0; k < kRW; ++k) w[k] = word_at(row + 4 * k);
    gd::h_run<KW, CN, kR, A>(w, t, h);
    for (int j = 0; j < kR; ++j) {
      std::int64_t want = 0;
      for (int i = 0; i < KW; ++i) want += std::int64_t(row[A + j + i * CN]) * tx[std::size_t(i)];
      ASSERT_EQ(std::int64_t(h[j]), want)
          << "KW " << KW << " CN " << CN << " A " << A << " j " << j;
      plain_h[std::size_t(r) * kR + j] = want;
      hw[std::size_t(r) * kR + j] = h[j];
    }
  }
  for (int s = 0; 2 * s + KH + 1 <= kRows; ++s)
    for (int j0 = 0; j0 < kR; j0 += 4) {
      std::uint32_t ev[4], od[4];
      for (int q = 0; q < 4; ++q) {
        ev[q] = od[q] = gd::kRound;
        for (int m = 0; m < kVW; ++m) {
          const std::size_t lo = std::size_t(2 * (s + m)) * kR + std::size_t(j0 + q);
          gd::v_add(gd::pair(hw[lo], hw[lo + kR]), t.v[m], ev[q], od[q]);
        }
      }
      const std::uint32_t pe = gd::pack4(ev[0], ev[1], ev[2], ev[3]);
      const std::uint32_t po = gd::pack4(od[0], od[1], od[2], od[3]);
      for (int q = 0; q < 4; ++q)
        for (int odd = 0; odd < 2; ++odd) {
          std::int64_t v = 0;
          for (int j = 0; j < KH; ++j)
            v += plain_h[std::size_t(2 * s + odd + j) * kR + std::size_t(j0 + q)] *
                 ty[std::size_t(j)];
          ASSERT_EQ(std::int64_t((odd ? od : ev)[q]), v + 32768) << "s " << s << " odd " << odd;
          ASSERT_EQ(((odd ? po : pe) >> (8 * q)) & 0xffu, std::uint32_t((v + 32768) >> 16));
        }
    }
}

template <int KW, int KH, int CN, int... A>
void check_packed_sums_all(std::integer_sequence<int, A...>, const std::vector<std::int32_t>& tx,
                           const std::vector<std::int32_t>& ty, std::mt19937_64& rng,
                           bool saturated) {
  (check_packed_sums<KW, KH, CN, A>(tx, ty, rng, saturated), ...);
}

// n taps in [0, 255] summing to 256 (the bound the kernel relies on), random otherwise;
// `peaked`: one tap 255 and one 1 (the extremes).
std::vector<std::int32_t> random_taps(int n, std::mt19937_64& rng, bool peaked) {
  std::vector<std::int32_t> t(std::size_t(n), 0);
  if (peaked) {
    t[std::size_t(n / 2)] = 255;
    t[0] = 1;
    return t;
  }
  std::uniform_int_distribution<int> pick(0, n - 1);
  for (int left = 256; left > 0;) {
    auto& v = t[std::size_t(pick(rng))];
    if (v < 255) ++v, --left;
  }
  return t;
}

TEST(GaussianDp, PackedSumsEqualThePlainRuleOnEveryAlignment) {
  auto rng = make_rng(0x6a0e);
  for (int rep = 0; rep < 6; ++rep) {
    const bool peaked = rep == 0, saturated = rep < 2;
    const auto t13 = random_taps(13, rng, peaked), u13 = random_taps(13, rng, peaked);
    const auto t49 = random_taps(49, rng, peaked), u49 = random_taps(49, rng, peaked);
    const auto a8 = std::make_integer_sequence<int, 8>{};
    check_packed_sums_all<13, 13, 1>(a8, t13, u13, rng, saturated);
    check_packed_sums_all<13, 13, 2>(a8, t13, u13, rng, saturated);
    check_packed_sums_all<13, 13, 3>(a8, t13, u13, rng, saturated);
    check_packed_sums_all<13, 13, 4>(a8, t13, u13, rng, saturated);
    check_packed_sums_all<49, 49, 1>(a8, t49, u49, rng, saturated);
    check_packed_sums_all<13, 49, 1>(a8, t13, u49, rng, saturated);
    check_packed_sums_all<3, 5, 1>(a8, std::vector<std::int32_t>{64, 128, 64},
                                   std::vector<std::int32_t>{16, 64, 96, 64, 16}, rng, saturated);
  }
}

// Taps the kernel cannot take: 256 (a centre tap of a tiny sigma) and even windows.
TEST(GaussianDp, TapWordsRefuseTapsAbove255AndEvenWindows) {
  std::int32_t tx[13], ty[13];
  detail::gaussian_taps_fixed(13, 0.1, detail::kGaussianBitsU8, tx);
  detail::gaussian_taps_fixed(13, 2.0, detail::kGaussianBitsU8, ty);
  gd::Taps t;
  EXPECT_EQ(tx[6], 256);
  EXPECT_FALSE(gd::make_taps(tx, 13, ty, 13, 1, t));
  EXPECT_FALSE(gd::make_taps(ty, 13, tx, 13, 1, t));
  EXPECT_TRUE(gd::make_taps(ty, 13, ty, 13, 1, t));
  EXPECT_FALSE(gd::make_taps(ty, 12, ty, 13, 1, t));
}

// The whole kernel on the host: the byte tile as load_byte_tile defines it, the horizontal
// runs (word base, alignment, 8-byte word pairs) and vertical pair sums exactly as
// gaussian_u8_dp_kernel indexes them, every block of the image; against the reference.
template <int CN, int KW, int KH, int BH>
void emulate_dp_kernel(const ConstImageView& src, const Border& b, const gd::Taps& t,
                       std::vector<std::uint8_t>& out) {
  constexpr int kBW = 256, kTw = (kBW + (KW - 1) * CN + 30) / 16 * 16, kTh = BH + KH - 1;
  constexpr int kW0 = gd::run_w0(KW, CN), kA = gd::run_a(KW, CN), kR = 8;
  constexpr int kRW2 = (gd::run_words(KW, CN, kR, kA) + 1) / 2, kVW = gd::v_words(KH);
  static_assert(4 * (kW0 + (kBW / kR - 1) * (kR / 4) + 2 * kRW2) <= kTw);
  constexpr int kThreads = 256, kRV = BH / 4, kPairs = kRV / 2;
  constexpr int kVP = gd::v_group_pairs(kPairs, KH);
  static_assert(kVP <= 4 && kRV % 2 == 0);
  int interior_tiles = 0;
  const long long w = src.width(), h = src.height(), wc = w * CN;
  const std::uint8_t cval = detail::saturate_cast<std::uint8_t>(b.value);
  auto floor_div = [](long long a, long long d) { return a >= 0 ? a / d : -((-a + d - 1) / d); };
  out.assign(std::size_t(wc * h), 0);
  std::vector<std::uint8_t> tile(std::size_t(kTw) * kTh);
  std::vector<std::uint32_t> h2(std::size_t(kTh / 2) * kBW);
  for (long long e0 = 0; e0 < wc; e0 += kBW)
    for (long long y0 = 0; y0 < h; y0 += BH) {
      const long long xs = floor_div(e0 - (KW / 2) * CN, 16) * 16;
      ASSERT_EQ(e0 - (KW / 2) * CN - xs, gd::tile_off(KW, CN));
      for (int r = 0; r < kTh; ++r)
        for (int i = 0; i < kTw; ++i) {
          const long long e = xs + i, px = floor_div(e, CN);
          const long long sy = detail::border_index(y0 - KH / 2 + r, h, b.type);
          const long long sx = detail::border_index(px, w, b.type);
          tile[std::size_t(r) * kTw + std::size_t(i)] =
              sy < 0 || sx < 0 ? cval : src.row<std::uint8_t>(sy)[sx * CN + (e - px * CN)];
        }
      // The interior walk (gauss_dp_tile_issue: one channel, every chunk of every row inside
      // the image, rows unmapped): each thread's chunks by gauss_dp::chunk_walk from tile row
      // 0's first byte, into a fresh tile that must equal the border rule's.
      const long long ys = y0 - KH / 2;
      if (CN == 1 && xs >= 0 && (wc - xs) / 16 >= kTw / 16 && ys >= 0 && ys + kTh <= h) {
        ++interior_tiles;
        std::vector<std::uint8_t> walked(tile.size(), 0);
        std::vector<int> hits(tile.size() / 16, 0);
        const std::uint8_t* g = src.row<std::uint8_t>(ys) + xs;
        for (int tid = 0; tid < kThreads; ++tid)
          for (gd::ChunkWalk cw = gd::chunk_walk_start(tid, kTw / 16, src.stride());
               cw.i < kTw / 16 * kTh; gd::chunk_walk_next(cw, kThreads, kTw / 16, src.stride())) {
            ++hits[std::size_t(cw.i)];
            std::copy(g + cw.off, g + cw.off + 16, walked.begin() + 16 * cw.i);
          }
        for (int hit : hits) ASSERT_EQ(hit, 1) << "a chunk loaded " << hit << " times";
        ASSERT_TRUE(walked == tile) << "interior walk, tile at sample " << e0 << " row " << y0;
      }
      for (int pr = 0; pr < kTh / 2; ++pr)
        for (int c = 0; c < kBW / kR; ++c) {
          std::uint32_t hh[2][kR];
          for (int half = 0; half < 2; ++half) {
            const std::uint8_t* row =
                tile.data() + std::size_t(2 * pr + half) * kTw + 4 * (kW0 + c * (kR / 4));
            std::uint32_t wd[2 * kRW2];
            for (int k = 0; k < 2 * kRW2; ++k) wd[k] = word_at(row + 4 * k);
            gd::h_run<KW, CN, kR, kA>(wd, t, hh[half]);
          }
          for (int j = 0; j < kR; ++j)
            h2[std::size_t(pr) * kBW + std::size_t(4 * gd::h2_quad((c * kR + j) / 4) + j % 4)] =
                gd::pair(hh[0][j], hh[1][j]);
        }
      // Vertical by the kernel's threads: samples 4 cq .., rows r0 .. r0 + kRV - 1 in groups
      // of v_group_pairs pairs and a tail, pair word m of a group added to its pair s where
      // 0 <= m - s < kVW; every output row once.
      std::vector<int> written(static_cast<std::size_t>(BH), 0);
      for (int tid = 0; tid < kThreads; ++tid) {
        const int cq = tid % (kBW / 4), r0 = tid / (kBW / 4) * kRV;
        auto group = [&](int g, int s0) {
          std::uint32_t ev[4][4], od[4][4];
          for (int sp = 0; sp < g; ++sp)
            for (int q = 0; q < 4; ++q) ev[sp][q] = od[sp][q] = gd::kRound;
          for (int m = 0; m < g + kVW - 1; ++m)
            for (int sp = 0; sp < g; ++sp)
              if (m - sp >= 0 && m - sp < kVW)
                for (int q = 0; q < 4; ++q)
                  gd::v_add(
                      h2[std::size_t(r0 / 2 + s0 + m) * kBW + std::size_t(4 * gd::h2_quad(cq) + q)],
                      t.v[m - sp], ev[sp][q], od[sp][q]);
          for (int sp = 0; sp < g; ++sp) {
            const std::uint32_t pk[2] = {gd::pack4(ev[sp][0], ev[sp][1], ev[sp][2], ev[sp][3]),
                                         gd::pack4(od[sp][0], od[sp][1], od[sp][2], od[sp][3])};
            for (int odd = 0; odd < 2; ++odd) {
              const int r = r0 + 2 * (s0 + sp) + odd;
              if (cq == 0) ++written[std::size_t(r)];
              for (int q = 0; q < 4; ++q) {
                const long long y = y0 + r, e = e0 + 4 * cq + q;
                if (y < h && e < wc)
                  out[std::size_t(y * wc + e)] = std::uint8_t(pk[odd] >> (8 * q));
              }
            }
          }
        };
        int s0 = 0;
        for (; s0 + kVP <= kPairs; s0 += kVP) group(kVP, s0);
        if (kPairs % kVP > 0) group(kPairs % kVP, kPairs - kPairs % kVP);
      }
      for (int r = 0; r < BH; ++r) ASSERT_EQ(written[std::size_t(r)], 1) << "output row " << r;
    }
  if (h >= 3 * BH && wc >= 3 * kBW && CN == 1) {
    EXPECT_GT(interior_tiles, 0) << "the interior walk was not exercised";
  }
}

template <int CN, int KW, int KH, int BH>
void check_emulated_kernel(double sigma, double sigma_y, Size s, const Border& b,
                           std::mt19937_64& rng) {
  PIXFLOW_TRACE(testing::Message()
                << "u8x" << CN << " " << KW << "x" << KH << " rows " << BH << " sigma " << sigma
                << "/" << sigma_y << " " << s.w << "x" << s.h << " " << describe(b));
  std::int32_t tx[KW], ty[KH];
  detail::gaussian_taps_fixed(KW, sigma, detail::kGaussianBitsU8, tx);
  detail::gaussian_taps_fixed(KH, sigma_y, detail::kGaussianBitsU8, ty);
  gd::Taps t;
  ASSERT_TRUE(gd::make_taps(tx, KW, ty, KH, CN, t));
  auto src = random_image(s.w, s.h, {Depth::u8, CN}, rng);
  auto want = make_dst(s.w, s.h, {Depth::u8, CN}, rng);
  gaussian(src, want, GaussianParams{sigma, sigma_y, KW, KH, b}, {Backend::ref});
  std::vector<std::uint8_t> got;
  emulate_dp_kernel<CN, KW, KH, BH>(src, b, t, got);
  for (std::int64_t y = 0; y < s.h; ++y)
    for (std::int64_t e = 0; e < s.w * CN; ++e)
      ASSERT_EQ(int(got[std::size_t(y * s.w * CN + e)]), int(want.view.row<std::uint8_t>(y)[e]))
          << "at sample " << e << " row " << y;
}

TEST(GaussianDp, EmulatedKernelMatchesRef) {
  auto rng = make_rng(0x6a0f);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  auto b = [&] { return borders[turn++ % borders.size()]; };
  // 800 x 230: interior tiles (the loader's walk without the border rule) for every shape.
  for (Size s : std::vector<Size>{{517, 70}, {300, 97}, {1, 1}, {7, 5}, {800, 230}}) {
    check_emulated_kernel<1, 13, 13, 56>(2.0, 2.0, s, b(), rng);
    check_emulated_kernel<1, 13, 13, 32>(1.3, 2.6, s, b(), rng);
    check_emulated_kernel<3, 13, 13, 48>(2.0, 2.0, s, b(), rng);
    check_emulated_kernel<3, 13, 13, 32>(2.6, 1.1, s, b(), rng);
    check_emulated_kernel<1, 49, 49, 64>(8.0, 8.0, s, b(), rng);
    check_emulated_kernel<1, 49, 49, 32>(5.0, 9.0, s, b(), rng);
  }
}

// The CUDA f32 x 1 3x3 kernel (src/backends/cuda/f32_3x3.cuh: rounded float products and sums
// in the reference's order, any taps)
// at 517x70, 600x150, 300x97 and 4100x1100 its short shape (128 x 16 outputs a block), at
// 4100x2200 (33 x 35 blocks of 128 x 64 >= 1056, launch.cuh tall_blocks_fill) its tall one;
// every border in turn (constant 300 and -7 too). The sources sit at random offsets and
// strides (mostly the tile loader's per-chunk path; F32Kernel3x3.CudaMatchesRefOnAlignedImages
// in tests/f32_3x3_test.cpp takes the 16-byte path for sure).
// The generic path's cases beside it (5x5, 3 channels).
TEST(Gaussian, EveryBackendMatchesRefOnManyTilesF32x1) {
  auto rng = make_rng(0x6a08);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}, {4100, 1100}, {4100, 2200}})
    for (const char* c : {"kw=3 kh=3 sigma=0", "kw=3 kh=3 sigma=0.8 sigma_y=1.7"})
      ASSERT_TRUE(backends_match_ref(
          "gaussian", std::string(c) + " " + border_params(borders[turn++ % borders.size()]),
          {Depth::f32, 1}, s, rng));
  for (Size s : std::vector<Size>{{1, 1}, {3, 130}, {130, 2}})
    ASSERT_TRUE(
        backends_match_ref("gaussian", "kw=3 kh=3 sigma=1 border=wrap", {Depth::f32, 1}, s, rng));
  ASSERT_TRUE(backends_match_ref("gaussian", "kw=5 kh=5 sigma=1 border=reflect101", {Depth::f32, 1},
                                 {517, 70}, rng));
  ASSERT_TRUE(backends_match_ref("gaussian", "kw=3 kh=3 sigma=1 border=constant value=-7",
                                 {Depth::f32, 3}, {300, 97}, rng));
}

// Ranges, depths, dst and overlap: SchemaBadInput (tests/schema_test.cpp). Here: the window
// derived from sigma.
TEST(Gaussian, WindowFromSigmaNeedsAPositiveSigmaAndAWindowOfAtMost255) {
  Image u8(8, 6, {Depth::u8, 1}), d8(8, 6, {Depth::u8, 1}), f32(8, 6, {Depth::f32, 1}),
      df32(8, 6, {Depth::f32, 1});
  const BadCase cases[] = {
      {"kw 0 sigma 0",
       [&] {
         gaussian(u8, d8, params({0, 0, 0, 3}, {}));
       },
       Status::invalid_argument,
       {"gaussian: sigma must be > 0 when kw is 0"}},
      {"f32 sigma 42",
       [&] {
         gaussian(f32, df32, params({42, 0, 0, 0}, {}));
       },
       Status::invalid_argument,
       {"gaussian: sigma must be in [0, 31.75] (got 42)"}},
      {"u8 sigma 31.76",
       [&] {
         gaussian(u8, d8, params({31.76, 0, 0, 0}, {}));
       },
       Status::invalid_argument,
       {"gaussian: sigma must be in [0, 31.75] (got 31.76)"}},
      {"cli sigma=0",
       [&] { Pipeline::parse("gaussian sigma=0"); },
       Status::invalid_argument,
       {"gaussian: sigma must be > 0 when kw is 0"}},
      {"cli sigma=60",
       [&] { Pipeline::parse("gaussian sigma=60"); },
       Status::invalid_argument,
       {"gaussian: sigma must be a number, in [0, 31.75] (got '60')"}},
  };
  expect_errors(cases);
}

// The documented range holds on every depth: its top gives the largest window (255 for u16
// and f32, 8 sigma + 1) and runs, matching the reference on every backend.
TEST(Gaussian, TopOfTheSigmaRangeRunsOnEveryDepth) {
  auto rng = make_rng(0x6a07);
  for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
    for (const char* b : {"border=reflect101", "border=constant value=3"})
      ASSERT_TRUE(
          backends_match_ref("gaussian", std::string("sigma=31.75 ") + b, {d, 1}, {300, 7}, rng))
          << depth_name(d);
}

TEST(Gaussian, PipelineStageMatchesDirectCall) {
  auto rng = make_rng(0x6a06);
  auto src = random_image(30, 20, {Depth::u16, 3}, rng);
  Image want(30, 20, {Depth::u16, 3});
  gaussian(src, want, params({1.3, 0.6, 0, 5}, Border::constant(9)));
  Image got =
      Pipeline::parse("gaussian sigma=1.3 sigma_y=0.6 kh=5 border=constant value=9").run(src);
  EXPECT_EQ(compare(got, want), "");
}

}  // namespace
}  // namespace pixflow::test
