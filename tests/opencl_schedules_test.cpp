// The OpenCL schedules an environment variable selects (src/backends/opencl/variant.hpp,
// PIXFLOW_OCL_*): every schedule of an op against the reference, bit for bit, on the edges
// of its own tiling (block and tile boundaries, partial work-groups, lines shorter than the
// border extension, 1-pixel images), every border, ROI views at odd offsets
// (backends_match_ref). The family tests run the default schedule; these run each.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "src/base/bilateral_f32.hpp"
#include "src/core/dispatch.hpp"
#include "src/ref/ref.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

bool have_opencl(const char* op) {
  for (Backend b : test_backends_for(op))
    if (b == Backend::opencl) return true;
  return false;
}

std::vector<Border> borders_and_outside_constant() {
  std::vector<Border> b = all_borders();
  b.push_back(Border::constant(300));
  return b;
}

// gaussian_iir (PIXFLOW_OCL_IIR): the fused kernel's work-groups of 32 lines and tiles of 256
// positions (8 blocks of 32): lines of 1..3 positions, a last block shorter than three, n
// across one and several tiles, partial line groups, e past a whole tile (sigma 70: e = 288,
// anti-causal tiles left of the line skipped), 1-4 channels interleaved in rows.
TEST(OpenclSchedules, GaussianIirEveryScheduleMatchesRef) {
  if (!have_opencl("gaussian_iir")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c1);
  const std::vector<Border> borders = borders_and_outside_constant();
  const std::vector<Size> sizes = {{1, 1},   {1, 40},  {40, 1},   {2, 3},   {33, 31},
                                   {257, 5}, {5, 257}, {290, 70}, {70, 290}};
  for (const char* schedule : {"fused", "fused-free", "line"}) {
    const EnvScope env({{"PIXFLOW_OCL_IIR", schedule}});
    std::size_t turn = 0;
    for (Depth d : {Depth::u8, Depth::f32})
      for (int ch : {1, 2, 3, 4})
        for (Size s : sizes) {
          const Border& b = borders[turn % borders.size()];
          const double sigma = turn % 3 == 0 ? 0.5 : turn % 3 == 1 ? 3.0 : 70.0;
          ++turn;
          PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_IIR=" << schedule);
          ASSERT_TRUE(backends_match_ref("gaussian_iir",
                                         "sigma=" + std::to_string(sigma) + " " + border_params(b),
                                         {d, ch}, s, rng));
        }
    for (const Border& b : borders) {
      PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_IIR=" << schedule);
      ASSERT_TRUE(backends_match_ref("gaussian_iir", "sigma=8 " + border_params(b), {Depth::u8, 1},
                                     {517, 67}, rng));
    }
  }
}

// bilateral (PIXFLOW_OCL_BILATERAL): the u8 x 1 tile kernel's work-groups of 128 x 32 outputs
// (4 pixels a work-item: widths not a multiple of 4 or 128, heights not of 32), radius 1..4
// (d = 3..9, and d = 0 from sigma_space), narrow and wide colour sigmas (a saturated table),
// every border with constants outside u8; the other formats pass through to the per-pixel
// kernel on these schedules (tile-rows: the same kernel, its source rows written out).
TEST(OpenclSchedules, BilateralEveryScheduleMatchesRef) {
  if (!have_opencl("bilateral")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c2);
  std::vector<Border> borders = borders_and_outside_constant();
  borders.push_back(Border::constant(-7));
  struct Case {
    int d;
    double sc, ss;
  };
  const Case cases[] = {{3, 30, 5}, {5, 40, 2}, {7, 200, 4}, {9, 75, 75}, {9, 3, 3}, {0, 25, 2}};
  const std::vector<Size> sizes = {{1, 1},    {1, 40},   {40, 1},   {3, 5},
                                   {127, 33}, {129, 31}, {261, 70}, {130, 97}};
  for (const char* schedule : {"tile", "pixel", "tile-tapconv", "tile-rows"}) {
    const EnvScope env({{"PIXFLOW_OCL_BILATERAL", schedule}});
    std::size_t turn = 0;
    for (Size s : sizes)
      for (const Border& b : borders) {
        const Case& k = cases[turn++ % std::size(cases)];
        std::ostringstream p;
        p << "d=" << k.d << " sigma_color=" << k.sc << " sigma_space=" << k.ss << " "
          << border_params(b);
        PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_BILATERAL=" << schedule << " " << s.w
                                         << "x" << s.h << " " << p.str());
        ASSERT_TRUE(backends_match_ref("bilateral", p.str(), {Depth::u8, 1}, s, rng));
      }
    for (Depth d : {Depth::u8, Depth::f32})
      for (int ch : {1, 3}) {
        if (d == Depth::u8 && ch == 1) continue;
        PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_BILATERAL=" << schedule);
        ASSERT_TRUE(backends_match_ref("bilateral",
                                       "d=9 sigma_color=75 sigma_space=75 border=reflect101",
                                       {d, ch}, {131, 35}, rng));
      }
  }
}

// The OpenCL backend's bilateral on src through core's dispatch without the schema's checks
// (which take 1 or 3 channels, cv::bilateralFilter's set), so that the kernels' 2- and 4-channel
// paths can be checked too; "" when every sample equals the reference's.
std::string bilateral_unchecked_vs_ref(const TestImage& src, const BilateralParams& p,
                                       std::mt19937_64& rng) {
  const ConstImageView sv = src.view;
  auto want = make_dst(sv.width(), sv.height(), sv.format(), rng);
  ref::bilateral(sv, want.view, p, detail::Rows{0, sv.height()});
  auto dsrc = to_backend(Backend::opencl, sv, rng);
  auto got = make_dst_on(Backend::opencl, sv.width(), sv.height(), sv.format(), rng);
  detail::dispatch("bilateral", Context{Backend::opencl}, dsrc.view, ConstImageView(dsrc.view),
                   ImageView(got.view), p);
  const Image g = to_host(got.view);
  return compare(g.view(), want.view);
}

// bilateral's `packed` schedule (PIXFLOW_OCL_BILATERAL=packed[,RW[,COPIES]]):
// bilateral_u8cn_tile (u8 x 2..4) and bilateral_f32c1_tile (f32 x 1), work-groups of 32 x
// 8 RW outputs (RW = 8, 4, 2: tiles of 64, 32, 16 rows; widths and heights just under, at
// and over a tile, 1-pixel and 1-row images, images shorter than the window), radius 1..4
// (d = 3..9 and d = 0 from sigma_space) and d = 11 (the per-pixel kernel behind it), 1, 8
// and the default copies of the u8 colour table, every border with constants outside u8,
// narrow and wide colour sigmas (f32: over its [0, 1) image and the [-1000, 1000] one), ROI
// views at odd offsets (backends_match_ref); u8 x 2 and x 4 through the dispatch without
// the schema's channel check; f32 samples at the colour table's bin edges and non-finite
// ones (NaN where the reference is NaN, the same bits elsewhere).
TEST(OpenclSchedules, BilateralPackedMatchesRef) {
  if (!have_opencl("bilateral")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c7);
  std::vector<Border> borders = borders_and_outside_constant();
  borders.push_back(Border::constant(-7));
  struct Case {
    int d;
    double sc, ss;
  };
  const Case u8_cases[] = {{9, 75, 75}, {3, 30, 5}, {5, 40, 2}, {7, 200, 4}, {0, 25, 2}, {9, 3, 3}};
  const Case f32_cases[] = {{9, 0.3, 75}, {3, 0.05, 5}, {5, 2, 2}, {7, 300, 4}, {0, 0.5, 2}};
  const std::vector<Size> sizes = {{1, 1},   {1, 40},  {40, 1},  {3, 5},   {31, 63},
                                   {33, 65}, {32, 64}, {65, 17}, {97, 130}};
  auto params = [](const Case& k, const Border& b) {
    std::ostringstream p;
    p << "d=" << k.d << " sigma_color=" << k.sc << " sigma_space=" << k.ss << " "
      << border_params(b);
    return p.str();
  };
  for (const char* schedule : {"packed", "packed,8", "packed,4,1", "packed,2,8"}) {
    const EnvScope env({{"PIXFLOW_OCL_BILATERAL", schedule}});
    std::size_t turn = 0;
    for (Size s : sizes)
      for (const Border& b : borders) {
        const Case& k = u8_cases[turn % std::size(u8_cases)];
        const Case& f = f32_cases[turn % std::size(f32_cases)];
        ++turn;
        PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_BILATERAL=" << schedule << " " << s.w
                                         << "x" << s.h << " " << params(k, b));
        ASSERT_TRUE(backends_match_ref("bilateral", params(k, b), {Depth::u8, 3}, s, rng));
        PIXFLOW_TRACE(testing::Message() << "f32x1 " << params(f, b));
        auto unit = random_image(s.w, s.h, {Depth::f32, 1}, rng, false, 0.0, 1.0);
        ASSERT_TRUE(backends_match_ref("bilateral", params(f, b), unit.view, rng));
      }
    // The [-1000, 1000] f32 image, and a window past the tile kernels (radius 5).
    for (const Border& b : borders) {
      PIXFLOW_TRACE(testing::Message()
                    << "PIXFLOW_OCL_BILATERAL=" << schedule << " " << border_params(b));
      ASSERT_TRUE(
          backends_match_ref("bilateral", params({9, 500, 3}, b), {Depth::f32, 1}, {45, 70}, rng));
      ASSERT_TRUE(
          backends_match_ref("bilateral", params({11, 75, 5}, b), {Depth::u8, 3}, {37, 21}, rng));
    }
    // 2 and 4 channels (the schema takes 1 or 3: core's dispatch directly).
    turn = 0;
    for (int ch : {2, 4})
      for (Size s : {Size{1, 1}, Size{33, 65}, Size{97, 20}, Size{5, 130}})
        for (const Border& b : borders) {
          const Case& k = u8_cases[turn++ % std::size(u8_cases)];
          const BilateralParams p{k.d, k.sc, k.ss, b};
          auto src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
          PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_BILATERAL=" << schedule << " u8x" << ch
                                           << " " << s.w << "x" << s.h << " " << params(k, b));
          const std::string diff = bilateral_unchecked_vs_ref(src, p, rng);
          ASSERT_TRUE(diff.empty()) << diff;
        }
    // f32 at the table's bin edges (alpha = i exactly, or an ulp either side): the index and
    // fraction without a conversion (bilateral.cl bil_f32_weight).
    namespace bf = detail::bilateral_f32;
    for (double sigma : {0.01, 2.0, 1e4}) {
      const float scale = bf::scale(sigma, 1);
      const Size s{67, 70};
      auto src = random_image(s.w, s.h, {Depth::f32, 1}, rng);
      std::uniform_int_distribution<int> bin(0, bf::bins(1));
      for (std::int64_t y = 0; y < s.h; ++y)
        for (std::int64_t x = 0; x < s.w; ++x) {
          float v = float(double(bin(rng)) / double(scale));
          if (rng() % 3 == 0) v = std::nextafter(v, rng() % 2 ? 0.0f : FLT_MAX);
          src.view.row<float>(y)[x] = (x + y) % 4 == 0 ? 0.0f : (rng() % 2 ? v : -v);
        }
      std::ostringstream p;
      p << "d=7 sigma_color=" << sigma << " sigma_space=3";
      PIXFLOW_TRACE(testing::Message()
                    << "PIXFLOW_OCL_BILATERAL=" << schedule << " bin edges " << p.str());
      ASSERT_TRUE(backends_match_ref("bilateral", p.str(), src.view, rng));
    }
    for (const Border& b : borders) {
      const Size s{41, 70};
      const BilateralParams p{9, 3.0, 2.0, b};
      PIXFLOW_TRACE(testing::Message()
                    << "PIXFLOW_OCL_BILATERAL=" << schedule << " special " << describe(b));
      TestImage src = special_f32_image(s.w, s.h, 1, rng);
      auto want = make_dst(s.w, s.h, {Depth::f32, 1}, rng);
      bilateral(src, want, p, {Backend::ref});
      auto dsrc = to_backend(Backend::opencl, src.view, rng);
      auto got = make_dst_on(Backend::opencl, s.w, s.h, {Depth::f32, 1}, rng);
      bilateral(dsrc, got, p, {Backend::opencl});
      const Image g = to_host(got.view);
      for (std::int64_t y = 0; y < s.h; ++y)
        for (std::int64_t x = 0; x < s.w; ++x) {
          const float gv = g.view().row<float>(y)[x], wv = want.view.row<float>(y)[x];
          if (std::isnan(wv)) {
            ASSERT_TRUE(std::isnan(gv)) << "x=" << x << " y=" << y << " got " << gv;
          } else {
            std::uint32_t gb, wb;
            std::memcpy(&gb, &gv, 4);
            std::memcpy(&wb, &wv, 4);
            ASSERT_EQ(gb, wb) << "x=" << x << " y=" << y << " got " << gv << " want " << wv;
          }
        }
    }
  }
}

// A malformed packed value is an error naming the variable, not the default schedule.
TEST(OpenclSchedules, BilateralPackedBadValueIsAnError) {
  if (!have_opencl("bilateral")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c8);
  auto src = random_image(8, 8, {Depth::u8, 3}, rng);
  auto dsrc = to_backend(Backend::opencl, src.view, rng);
  auto got = make_dst_on(Backend::opencl, 8, 8, {Depth::u8, 3}, rng);
  for (const char* bad : {"packed,3", "packed,8,3", "packed,", "packed,8,8,1", "packed,8x"}) {
    const EnvScope env({{"PIXFLOW_OCL_BILATERAL", bad}});
    try {
      bilateral(dsrc, got, BilateralParams{}, {Backend::opencl});
      FAIL() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find("PIXFLOW_OCL_BILATERAL"), std::string::npos) << e.what();
    }
  }
}

// remap (PIXFLOW_OCL_REMAP): remap_px's 4 pixels a work-item (widths 1..5 and not a
// multiple of 4: the row's tail), its interior formula and the border rule beside it (maps
// over [-3, w + 3]: taps inside, across every edge and outside), 1, 3 and 4 channels (core's
// set), every depth,
// both interpolations, every border.
TEST(OpenclSchedules, RemapEveryScheduleMatchesRef) {
  if (!have_opencl("remap")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c3);
  const std::vector<Border> borders = borders_and_outside_constant();
  const std::vector<Size> sizes = {{1, 1}, {2, 3}, {4, 1}, {5, 2}, {1, 9}, {131, 37}};
  for (const char* schedule : {"px4", "pixel"}) {
    const EnvScope env({{"PIXFLOW_OCL_REMAP", schedule}});
    std::size_t turn = 0;
    for (Depth d : {Depth::u8, Depth::u16, Depth::f32})
      for (int ch : {1, 3, 4})
        for (Size s : sizes)
          for (const char* interp : {"linear", "nearest"}) {
            const Border& b = borders[turn++ % borders.size()];
            PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_REMAP=" << schedule);
            ASSERT_TRUE(backends_match_ref("remap",
                                           std::string("interp=") + interp + " " + border_params(b),
                                           {d, ch}, s, rng));
          }
  }
}

// epsilon (PIXFLOW_OCL_EPSILON): the tile kernels (u8 and f32, 1..4 interleaved channels; quad:
// the u8 quad-word kernel, here its OpenCL C arithmetic, not the PTX the H100 runs)
// and their work-groups of 32 samples (not pixels: widths whose w * cn is 32k - 1, 32k, 32k + 1)
// x 64 rows (heights 63..65, 129, 130; partial groups right and bottom), lines shorter than the
// halo, radius 1..7 (the u8 packed sum and count at its largest: t >= 255 counts all 225 samples
// of 255), thresholds 0 / fractional / 255 / beyond, every border with constants outside the
// range, ROI views (backends_match_ref's padded images); f32 sums whose value depends on the
// order of the taps (the reference's row-major double sum, kept exactly); r = 0 and r = 8 pass
// through to the per-pixel kernel on both schedules.
TEST(OpenclSchedules, EpsilonEveryScheduleMatchesRef) {
  if (!have_opencl("epsilon")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c4);
  std::vector<Border> borders = borders_and_outside_constant();
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes = {{1, 1},  {1, 40},   {40, 1},   {3, 5},   {8, 65},
                                   {9, 63}, {11, 64},  {16, 129}, {17, 31}, {21, 66},
                                   {22, 2}, {31, 130}, {33, 97},  {65, 7}};
  // u8 thresholds: 0, fractional, each of the quad kernel's three compare modes at its ends.
  const char* const thresholds[] = {"0", "12.5", "30", "127", "128", "254.5", "255", "1000"};
  for (const char* schedule : {"tile", "pixel", "quad"}) {
    const EnvScope env({{"PIXFLOW_OCL_EPSILON", schedule}});
    std::size_t turn = 0;
    for (Depth d : {Depth::u8, Depth::f32})
      for (int ch : {1, 2, 3, 4})
        for (Size s : sizes) {
          const Border& b = borders[turn % borders.size()];
          const int r = 1 + int(turn % 7);
          // f32 samples are in [-1000, 1000]: the thresholds scaled to select some taps.
          const std::string t = d == Depth::u8 ? thresholds[turn % std::size(thresholds)]
                                               : std::to_string(8 * (turn % 60));
          const std::string p = "r=" + std::to_string(r) + " t=" + t + " " + border_params(b);
          ++turn;
          PIXFLOW_TRACE(testing::Message()
                        << "PIXFLOW_OCL_EPSILON=" << schedule << " " << s.w << "x" << s.h << " "
                        << to_string(Format{d, ch}) << " " << p);
          ASSERT_TRUE(backends_match_ref("epsilon", p, {d, ch}, s, rng));
        }
    // Every sample 255 and counted (the packed sum at its largest), each channel count.
    for (int ch : {1, 2, 3, 4}) {
      TestImage white = random_image(70, 70, {Depth::u8, ch}, rng);
      fill_constant(white, 255);
      PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_EPSILON=" << schedule << " all 255 x" << ch);
      ASSERT_TRUE(
          backends_match_ref("epsilon", "r=7 t=1000 border=constant value=255", white.view, rng));
    }
    // f32 samples of very different magnitudes (+-1e30, +-FLT_MAX, 1, 2^-20, denormals, +-0):
    // with every tap selected, the double sum rounds differently in any other order.
    const float values[] = {1e30f,    -1e30f, 3.4028235e38f, -3.4028235e38f, 1.0f, -1.0f,
                            0x1p-20f, 0.0f,   -0.0f,         1e-45f,         7.25f};
    for (int ch : {1, 3})
      for (const char* p : {"r=4 t=1e39 border=reflect101", "r=7 t=1e39 border=constant value=-0.5",
                            "r=2 t=1 border=wrap"}) {
        TestImage src = random_image(45, 70, {Depth::f32, ch}, rng);
        std::uniform_int_distribution<int> pick(0, int(std::size(values)) - 1);
        for (std::int64_t y = 0; y < src.view.height(); ++y)
          for (std::int64_t i = 0; i < src.view.width() * ch; ++i)
            src.view.row<float>(y)[i] = values[pick(rng)];
        PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_EPSILON=" << schedule << " f32x" << ch
                                         << " magnitudes " << p);
        ASSERT_TRUE(backends_match_ref("epsilon", p, src.view, rng));
      }
    // Work-groups whose tile lies inside the image (the loads without the border rule): only
    // the small radii have them in the sizes above.
    for (const char* p : {"r=4 t=20", "r=7 t=200 border=wrap"})
      for (Format f : {Format{Depth::u8, 1}, Format{Depth::u8, 3}, Format{Depth::f32, 2}}) {
        PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_EPSILON=" << schedule << " 150x211 " << p);
        ASSERT_TRUE(backends_match_ref("epsilon", p, f, {150, 211}, rng));
      }
    for (const char* p : {"r=0 t=5", "r=8 t=30", "r=4 t=20"})
      for (Format f : {Format{Depth::u8, 1}, Format{Depth::u8, 3}, Format{Depth::f32, 1}}) {
        PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_EPSILON=" << schedule << " " << p);
        ASSERT_TRUE(backends_match_ref("epsilon", p, f, {45, 70}, rng));
      }
  }
}

// matmul (PIXFLOW_OCL_MATMUL): matmul_tile's tiles (64 and 128, K slices of 16) and the
// simple kernel. f32 sums are bit-identical to the reference (only NaN payloads may differ:
// devices make their own quiet NaNs); s32 exactly equal.

// The f32 fills, cycled over the shapes: 0 uniform [-1, 1]; 1 wide exponents (+-[1, 2) 2^e,
// e in [-24, 24]: products span 2^96, so nearly every reordering of a sum rounds
// differently); 2 the IEEE specials in a few rows of a and columns of b (NaN, +-inf,
// +-0, +-1e30 whose products overflow) and one row of a all -0 (+0 + -0 = +0 at every step:
// a sum started from -0 would give -0 where the other factor is positive).
void fill_matmul_f32(const ImageView& a, const ImageView& b, int mode, std::mt19937_64& rng) {
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {std::nanf(""), inf, -inf, -0.0f, 0.0f, 1e30f, -1e30f};
  std::uniform_real_distribution<float> unit(-1, 1), mant(1, 2);
  std::uniform_int_distribution<int> expo(-24, 24), pick(0, 7);
  auto value = [&](bool special_line) -> float {
    if (mode == 0) return unit(rng);
    if (mode == 1) return std::ldexp(pick(rng) < 4 ? mant(rng) : -mant(rng), expo(rng));
    const int e = pick(rng);
    return special_line && e < 7 ? specials[e] : unit(rng);
  };
  for (std::int64_t i = 0; i < a.height(); ++i)
    for (std::int64_t k = 0; k < a.width(); ++k)
      a.row<float>(i)[k] = mode == 2 && i == a.height() / 2 ? -0.0f : value(i % 7 == 3);
  for (std::int64_t k = 0; k < b.height(); ++k)
    for (std::int64_t j = 0; j < b.width(); ++j) b.row<float>(k)[j] = value(j % 5 == 1);
}

// Bit-equal f32 (sign of zero included), any NaN for a NaN; "" on a match.
std::string compare_f32_bits_any_nan(const ConstImageView& got, const ConstImageView& want) {
  for (std::int64_t y = 0; y < want.height(); ++y)
    for (std::int64_t x = 0; x < want.width(); ++x) {
      const float g = got.row<float>(y)[x], w = want.row<float>(y)[x];
      std::uint32_t gb, wb;
      std::memcpy(&gb, &g, 4), std::memcpy(&wb, &w, 4);
      if (std::isnan(g) && std::isnan(w)) continue;
      if (gb != wb) {
        std::ostringstream o;
        o << "(" << x << "," << y << ") got " << g << " (0x" << std::hex << gb << ") want " << w
          << " (0x" << wb << ")";
        return o.str();
      }
    }
  return "";
}

// The tiles' edges: M and N at 1, 63, 65, 127, 129 (partial tiles of both shapes, one and
// two tiles), K cycling over 1, 15, 16, 17, 63, 65, 129 (partial and whole slices, one
// slice and many) and two shapes of several tiles each way; the operands are ROI views at
// odd offsets (to_backend), c too.
TEST(OpenclSchedules, MatmulEveryScheduleMatchesRef) {
  if (!have_opencl("matmul")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c5);
  struct Mkn {
    std::int64_t m, k, n;
  };
  std::vector<Mkn> shapes;
  const std::int64_t edges[] = {1, 63, 65, 127, 129}, ks[] = {1, 15, 16, 17, 63, 65, 129};
  std::size_t turn = 0;
  for (std::int64_t m : edges)
    for (std::int64_t n : edges) shapes.push_back({m, ks[turn++ % std::size(ks)], n});
  shapes.push_back({129, 1, 129});
  shapes.push_back({200, 300, 260});
  const Backend be = Backend::opencl;
  for (const char* schedule : {"tile", "tile-full", "tile64x128", "tile128", "simple", "auto"}) {
    const EnvScope env({{"PIXFLOW_OCL_MATMUL", schedule}});
    int mode = 0;
    for (const Mkn& s : shapes) {
      PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_MATMUL=" << schedule << " M=" << s.m
                                       << " K=" << s.k << " N=" << s.n << " f32 mode " << mode);
      auto a = random_image(s.k, s.m, {Depth::f32, 1}, rng);
      auto b = random_image(s.n, s.k, {Depth::f32, 1}, rng);
      fill_matmul_f32(a.view, b.view, mode, rng);
      mode = (mode + 1) % 3;
      auto want = make_dst(s.n, s.m, {Depth::f32, 1}, rng);
      matmul(a, b, want, {Backend::ref});
      auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
      auto got = make_dst_on(be, s.n, s.m, {Depth::f32, 1}, rng);
      matmul(da, db, got, {be});
      ASSERT_EQ(compare_f32_bits_any_nan(to_host(got), want), "");
    }
    for (const Mkn& s : shapes) {
      PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_MATMUL=" << schedule << " M=" << s.m
                                       << " K=" << s.k << " N=" << s.n << " s32");
      auto a = random_image(s.k, s.m, {Depth::s32, 1}, rng, false, INT32_MIN, INT32_MAX);
      auto b = random_image(s.n, s.k, {Depth::s32, 1}, rng, false, INT32_MIN, INT32_MAX);
      // Every other row of a at the extremes: sums past int64 both ways, most saturating.
      for (std::int64_t i = 0; i < s.m; i += 2)
        for (std::int64_t k = 0; k < s.k; ++k)
          a.view.row<std::int32_t>(i)[k] = k % 2 ? INT32_MIN : INT32_MAX;
      auto want = make_dst(s.n, s.m, {Depth::s32, 1}, rng);
      matmul(a, b, want, {Backend::ref});
      auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
      auto got = make_dst_on(be, s.n, s.m, {Depth::s32, 1}, rng);
      matmul(da, db, got, {be});
      ASSERT_EQ(compare_bits(to_host(got), want), "");
    }
  }
}

// The k order is what the tests pin: on wide-exponent data (fill mode 1) the reference's
// serial sum differs from the same products summed in reverse, or as per-slice partial
// sums of 16 then added (split-K), in many outputs; every schedule still matches the
// reference bit for bit, so a tile kernel that reordered its sums would fail here.
TEST(OpenclSchedules, MatmulKeepsTheReferenceSumOrder) {
  if (!have_opencl("matmul")) GTEST_SKIP() << "no OpenCL device";
  auto rng = make_rng(0x5c6);
  const std::int64_t M = 65, K = 129, N = 67;
  auto a = random_image(K, M, {Depth::f32, 1}, rng);
  auto b = random_image(N, K, {Depth::f32, 1}, rng);
  fill_matmul_f32(a.view, b.view, 1, rng);
  auto want = make_dst(N, M, {Depth::f32, 1}, rng);
  matmul(a, b, want, {Backend::ref});
  int reversed_differs = 0, split_differs = 0;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      auto product = [&](std::int64_t k) {
        const float p = a.view.row<float>(i)[k] * b.view.row<float>(k)[j];
        return p;
      };
      float rev = 0.0f, split = 0.0f;
      for (std::int64_t k = K - 1; k >= 0; --k) rev = rev + product(k);
      for (std::int64_t k0 = 0; k0 < K; k0 += 16) {
        float part = 0.0f;
        for (std::int64_t k = k0; k < std::min(K, k0 + 16); ++k) part = part + product(k);
        split = split + part;
      }
      const float ref = want.view.row<float>(i)[j];
      reversed_differs += rev != ref, split_differs += split != ref;
    }
  // The data must tell the orders apart, else this test could not fail.
  EXPECT_GT(reversed_differs, M * N / 4);
  EXPECT_GT(split_differs, M * N / 4);
  for (const char* schedule : {"tile", "tile-full", "tile64x128", "tile128", "simple", "auto"}) {
    const EnvScope env({{"PIXFLOW_OCL_MATMUL", schedule}});
    PIXFLOW_TRACE(testing::Message() << "PIXFLOW_OCL_MATMUL=" << schedule);
    auto da = to_backend(Backend::opencl, a, rng), db = to_backend(Backend::opencl, b, rng);
    auto got = make_dst_on(Backend::opencl, N, M, {Depth::f32, 1}, rng);
    matmul(da, db, got, {Backend::opencl});
    ASSERT_EQ(compare_bits(to_host(got), want), "");
  }
}

// box and gaussian u8 by sep_packed (kernels/linear.cl; PIXFLOW_OCL_BOX=packed,
// PIXFLOW_OCL_GAUSS=packed / packed-imm): tiles of 128 samples by NB * RY rows (linear.cpp
// SepPacked::plan: 77 rows for 13 taps on one channel, 60 for 49, 84 for box 9x9, 72 for
// 31x31; 55 to 104 for the others), so widths and heights one below, at and one above a tile,
// several tiles both ways, 1-pixel and 1-row images, rows shorter than the window (the border
// repeating), 1 to 4 channels (the window's start inside a word of column sums: FIRST = 0..3),
// odd, even and 1-wide windows (the even box area's exact halves), saturated sums, every border
// with an outside constant, sources and destinations at odd offsets and strides (vload4 and
// byte stores). Extreme samples often: the 16-bit lanes' largest sums.
TEST(OpenclSchedules, SepPackedBoxMatchesRef) {
  if (!have_opencl("box")) GTEST_SKIP() << "no OpenCL device";
  const EnvScope env({{"PIXFLOW_OCL_BOX", "packed"}});
  struct Win {
    int kw, kh;
    std::vector<int> chs;
  };
  const Win wins[] = {{9, 9, {1, 2, 3, 4}}, {31, 31, {1}},  {4, 6, {1, 3}},
                      {1, 5, {1, 4}},       {7, 1, {1, 2}}, {2, 40, {3}}};
  const std::vector<Size> sizes = {{1, 1},    {1, 90},  {129, 1}, {127, 71}, {128, 72},
                                   {129, 85}, {300, 3}, {3, 150}, {260, 170}};
  auto rng = make_rng(0x5e99);
  for (const Win& k : wins)
    for (bool norm : {true, false})
      for (int ch : k.chs)
        for (Size s : sizes)
          for (const Border& b : borders_and_outside_constant())
            for (bool tight : {true, false}) {
              if (!tight && s.w * s.h > 2000) continue;
              PIXFLOW_TRACE(testing::Message()
                            << "u8x" << ch << " " << s.w << "x" << s.h << " k=" << k.kw << "x"
                            << k.kh << " normalize=" << norm << " " << describe(b)
                            << (tight ? "" : " odd offset/stride"));
              auto src =
                  random_image(s.w, s.h, {Depth::u8, ch}, rng, tight, rng() % 2 ? 240 : 0, 255);
              auto want = make_dst(s.w, s.h, {Depth::u8, ch}, rng);
              box(src, want, {k.kw, k.kh, norm, b}, {Backend::ref});
              auto in = to_backend(Backend::opencl, src, rng, tight);
              auto got = make_dst_on(Backend::opencl, s.w, s.h, {Depth::u8, ch}, rng, tight);
              box(in, got, {k.kw, k.kh, norm, b}, {Backend::opencl});
              ASSERT_EQ(compare(to_host(got), want), "");
            }
}

TEST(OpenclSchedules, SepPackedGaussianMatchesRef) {
  if (!have_opencl("gaussian")) GTEST_SKIP() << "no OpenCL device";
  struct P {
    GaussianParams p;
    std::vector<int> chs;
  };
  const P params[] = {{{2.0, 0.0, 0, 0, {}}, {1, 2, 3, 4}},
                      {{8.0, 0.0, 0, 0, {}}, {1}},
                      {{1.5, 4.0, 9, 0, {}}, {1, 3}},
                      {{1.2, 0.0, 7, 1, {}}, {2}},
                      {{0.0, 0.0, 1, 5, {}}, {1}}};
  const std::vector<Size> sizes = {{1, 1},    {1, 80},   {129, 1}, {127, 76}, {128, 77},
                                   {129, 78}, {130, 61}, {300, 3}, {4, 130},  {260, 160}};
  auto rng = make_rng(0x9a55);
  for (const char* schedule : {"packed", "packed-imm"}) {
    const EnvScope env({{"PIXFLOW_OCL_GAUSS", schedule}});
    for (const P& pc : params)
      for (int ch : pc.chs) {
        // packed-imm builds the same kernels with the taps inside: fewer cases.
        if (std::string(schedule) == "packed-imm" && ch != pc.chs.front()) continue;
        for (Size s : sizes)
          for (const Border& b : borders_and_outside_constant())
            for (bool tight : {true, false}) {
              if (!tight && s.w * s.h > 2000) continue;
              GaussianParams p = pc.p;
              p.border = b;
              PIXFLOW_TRACE(testing::Message()
                            << schedule << " u8x" << ch << " " << s.w << "x" << s.h
                            << " sigma=" << p.sigma << "/" << p.sigma_y << " k=" << p.kw << "x"
                            << p.kh << " " << describe(b) << (tight ? "" : " odd offset/stride"));
              auto src =
                  random_image(s.w, s.h, {Depth::u8, ch}, rng, tight, rng() % 2 ? 240 : 0, 255);
              auto want = make_dst(s.w, s.h, {Depth::u8, ch}, rng);
              gaussian(src, want, p, {Backend::ref});
              auto in = to_backend(Backend::opencl, src, rng, tight);
              auto got = make_dst_on(Backend::opencl, s.w, s.h, {Depth::u8, ch}, rng, tight);
              gaussian(in, got, p, {Backend::opencl});
              ASSERT_EQ(compare(to_host(got), want), "");
            }
      }
  }
}

// filter2d u8 by filter2d_rows (PIXFLOW_OCL_FILTER2D=rows): a work-item's 4 outputs on 8 rows
// and its work-group of 32 x 8 of them (128 samples by 64 rows), so widths and heights at and
// around 4, 8, 128 and 64; 1-pixel images and rows shorter than the window; 1 to 4 channels
// (the window's start inside a word); odd and even, square and flat windows; random float taps
// of mixed sign and size with a delta (the reference's float order and half-even rounding);
// every border with an outside constant; odd offsets and strides.
TEST(OpenclSchedules, Filter2dRowsMatchesRef) {
  if (!have_opencl("filter2d")) GTEST_SKIP() << "no OpenCL device";
  const EnvScope env({{"PIXFLOW_OCL_FILTER2D", "rows"}});
  struct Win {
    int kw, kh;
    std::vector<int> chs;
  };
  const Win wins[] = {{5, 5, {1, 2, 3, 4}}, {3, 7, {1}}, {4, 2, {3}}, {1, 1, {1}}, {9, 9, {1}}};
  const std::vector<Size> sizes = {{1, 1},    {3, 9},   {129, 1}, {128, 64},
                                   {131, 65}, {300, 7}, {5, 70},  {257, 130}};
  auto rng = make_rng(0xf2d8);
  std::uniform_real_distribution<float> tap(-0.6f, 0.9f);
  for (const Win& k : wins)
    for (int ch : k.chs)
      for (Size s : sizes)
        for (const Border& b : borders_and_outside_constant())
          for (bool tight : {true, false}) {
            if (!tight && s.w * s.h > 2000) continue;
            Filter2dParams p;
            p.kw = k.kw;
            p.kh = k.kh;
            p.kernel.resize(std::size_t(k.kw * k.kh));
            for (float& t : p.kernel) t = tap(rng) / float(k.kw * k.kh) * 4.0f;
            p.delta = double(tap(rng) * 10.0f);
            p.border = b;
            PIXFLOW_TRACE(testing::Message()
                          << "u8x" << ch << " " << s.w << "x" << s.h << " k=" << k.kw << "x" << k.kh
                          << " " << describe(b) << (tight ? "" : " odd offset/stride"));
            auto src = random_image(s.w, s.h, {Depth::u8, ch}, rng, tight);
            auto want = make_dst(s.w, s.h, {Depth::u8, ch}, rng);
            filter2d(src, want, p, {Backend::ref});
            auto in = to_backend(Backend::opencl, src, rng, tight);
            auto got = make_dst_on(Backend::opencl, s.w, s.h, {Depth::u8, ch}, rng, tight);
            filter2d(in, got, p, {Backend::opencl});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

TEST(OpenclSchedules, UnknownScheduleIsAnError) {
  if (!have_opencl("gaussian_iir")) GTEST_SKIP() << "no OpenCL device";
  const EnvScope env({{"PIXFLOW_OCL_IIR", "nope"}});
  const Location dev = Location::opencl(test_opencl_device());
  Image dev_src(8, 8, {Depth::u8, 1}, dev), dev_dst(8, 8, {Depth::u8, 1}, dev);
  try {
    gaussian_iir(dev_src, dev_dst, {2.0, Border::replicate()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("PIXFLOW_OCL_IIR=nope"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pixflow::test
