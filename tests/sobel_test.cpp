// sobel and scharr: ref vs cv::Sobel / cv::Scharr, every backend vs ref, bad input, and
// metamorphic checks (separable derivative == the 2-D correlation with the outer product).
#include "tests/common.hpp"

#include "src/base/deriv_taps.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

struct Order {
  int dx, dy;
};

// Valid (dx, dy) pairs for aperture k (OpenCV: the factor length must exceed the order).
std::vector<Order> orders_for(int k) {
  std::vector<Order> o{{1, 0}, {0, 1}, {1, 1}, {2, 0}, {0, 2}};
  if (k >= 5) o.push_back({3, 1});
  if (k >= 7) o.push_back({0, 5});
  return o;
}

#if PIXFLOW_HAVE_OPENCV
std::string describe_params(const SobelParams& p) {
  std::ostringstream s;
  s << "dx=" << p.dx << " dy=" << p.dy << " k=" << p.k << " scale=" << p.scale
    << " delta=" << p.delta << " to=" << depth_name(p.to) << " border=" << describe(p.border);
  return s.str();
}
// cv::Sobel (ksize = -1: cv::Scharr) with any border. OpenCV's filter engine rejects
// BORDER_WRAP and pads constant borders with 0, so for wrap and constant(v) the source is
// padded by cv::copyMakeBorder (which takes both), filtered, and cropped.
cv::Mat cv_deriv(const ConstImageView& src, int dx, int dy, int k, double scale, double delta,
                 Depth to, const Border& b) {
  cv::Mat in = to_mat(src), out;
  const int ddepth = cv_depth(to);
  auto filter = [&](const cv::Mat& m, cv::Mat& o, int border) {
    if (k < 0)
      cv::Scharr(m, o, ddepth, dx, dy, scale, delta, border);
    else
      cv::Sobel(m, o, ddepth, dx, dy, k, scale, delta, border);
  };
  if (b.type != BorderType::constant && b.type != BorderType::wrap) {
    filter(in, out, cv_border(b));
    return out;
  }
  const int r = k < 0 ? 1 : std::max(k, 3) / 2;
  cv::Mat padded, full;
  cv::copyMakeBorder(in, padded, r, r, r, r, cv_border(b), cv::Scalar::all(b.value));
  filter(padded, full, cv::BORDER_REPLICATE);
  return full(cv::Rect(r, r, in.cols, in.rows)).clone();
}

TEST(Sobel, RefMatchesOpenCVExactlyU8ToS16AllKernelsOrdersBordersSizes) {
  auto rng = make_rng(0x50b1);
  for (int ch : {1, 3, 4})
    for (Size s : awkward_sizes())
      for (int k : {1, 3, 5, 7})
        for (Order o : orders_for(k))
          for (const Border& b : all_borders()) {
            if (k == 1 && (o.dx > 2 || o.dy > 2)) continue;
            SobelParams p{o.dx, o.dy, k, 1.0, 0.0, Depth::s16, b};
            PIXFLOW_TRACE(testing::Message()
                          << "u8x" << ch << " " << s.w << "x" << s.h << " " << describe_params(p));
            auto src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
            auto got = make_dst(s.w, s.h, {Depth::s16, ch}, rng);
            sobel(src, got, p, {Backend::ref});
            const cv::Mat want = cv_deriv(src, o.dx, o.dy, k, 1.0, 0.0, Depth::s16, b);
            ASSERT_EQ(compare(got, view_of(want)), "");
          }
}

TEST(Sobel, RefMatchesOpenCVExactlyWithIntegerScaleAndDelta) {
  auto rng = make_rng(0x50b2);
  for (int ch : {1, 3})
    for (Size s : awkward_sizes())
      for (int k : {1, 3, 5, 7})
        for (const Border& b : all_borders()) {
          SobelParams p{1, 1, k, 2.0, -7.0, Depth::s16, b};
          PIXFLOW_TRACE(testing::Message()
                        << "u8x" << ch << " " << s.w << "x" << s.h << " " << describe_params(p));
          auto src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
          auto got = make_dst(s.w, s.h, {Depth::s16, ch}, rng);
          sobel(src, got, p, {Backend::ref});
          const cv::Mat want = cv_deriv(src, 1, 1, k, 2.0, -7.0, Depth::s16, b);
          ASSERT_EQ(compare(got, view_of(want)), "");
        }
}

TEST(Sobel, RefWithinOneOfOpenCVWithFractionalScale) {
  auto rng = make_rng(0x50b3);
  for (Size s : awkward_sizes())
    for (int k : {3, 5})
      for (const Border& b : all_borders()) {
        SobelParams p{1, 0, k, 0.37, 1.25, Depth::s16, b};
        PIXFLOW_TRACE(testing::Message() << s.w << "x" << s.h << " " << describe_params(p));
        auto src = random_image(s.w, s.h, {Depth::u8, 3}, rng);
        auto got = make_dst(s.w, s.h, {Depth::s16, 3}, rng);
        sobel(src, got, p, {Backend::ref});
        const cv::Mat want = cv_deriv(src, 1, 0, k, 0.37, 1.25, Depth::s16, b);
        ASSERT_EQ(compare(got, view_of(want), 1.0), "");
      }
}

// f32 tolerance: 1e-3 absolute plus 1e-4 relative to the magnitude of the sum, M = sum of
// |tap| * |pixel| * |scale| over the window (not to the result: with cancellation no float
// implementation can be within 1e-4 of a small result of large terms; docs/ops/derivatives.md).
// M comes from filter2d on |src| with the |outer product| kernel.
std::string compare_f32(const ConstImageView& got, const ConstImageView& want,
                        const ConstImageView& src, const int* tx, int nx, const int* ty, int ny,
                        double scale, const Border& b) {
  const int ch = src.channels();
  Image absf(src.width(), src.height(), {Depth::f32, ch});
  for (std::int64_t y = 0; y < src.height(); ++y)
    for (std::int64_t x = 0; x < src.width(); ++x)
      for (int c = 0; c < ch; ++c)
        absf.row<float>(y)[x * ch + c] = float(std::fabs(sample(src, x, y, c)));
  Filter2dParams f;
  f.kw = nx;
  f.kh = ny;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) f.kernel.push_back(float(std::abs(tx[i] * ty[j])));
  f.border = Border{b.type, std::fabs(b.value)};
  Image mag(src.width(), src.height(), {Depth::f32, ch});
  filter2d(absf, mag, f, {Backend::ref});
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::int64_t y = 0; y < got.height(); ++y)
    for (std::int64_t x = 0; x < got.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        const double g = sample(got, x, y, c), w = sample(want, x, y, c);
        const double m = sample(mag, x, y, c) * std::fabs(scale);
        if (!(std::fabs(g - w) <= 1e-3 + 1e-4 * m)) {
          if (bad++ < 3)
            first << " (" << x << "," << y << ",c" << c << "): got " << g << " want " << w
                  << " magnitude " << m << ";";
        }
      }
  if (bad == 0) return "";
  return std::to_string(bad) + " samples outside 1e-3 + 1e-4*magnitude:" + first.str();
}

TEST(Sobel, RefMatchesOpenCVForF32OutputWithinTolerance) {
  auto rng = make_rng(0x50b4);
  for (Depth in : {Depth::u8, Depth::f32})
    for (int ch : {1, 3})
      for (Size s : awkward_sizes())
        for (int k : {1, 3, 7})
          for (const Border& b : all_borders()) {
            SobelParams p{1, 1, k, 0.5, 3.0, Depth::f32, b};
            PIXFLOW_TRACE(testing::Message() << depth_name(in) << "x" << ch << " " << s.w << "x"
                                             << s.h << " " << describe_params(p));
            auto src = random_image(s.w, s.h, {in, ch}, rng);
            auto got = make_dst(s.w, s.h, {Depth::f32, ch}, rng);
            sobel(src, got, p, {Backend::ref});
            const cv::Mat want = cv_deriv(src, 1, 1, k, 0.5, 3.0, Depth::f32, b);
            int t[7];
            const int n = detail::sobel_taps_len(k, 1);
            detail::sobel_taps(k, 1, t);
            ASSERT_EQ(compare_f32(got, view_of(want), src, t, n, t, n, 0.5, b), "");
          }
}

TEST(Sobel, RefMatchesOpenCVExactlyOn1920x1080) {
  auto rng = make_rng(0x50b5);
  auto src = random_image(1920, 1080, {Depth::u8, 1}, rng);
  auto got = make_dst(1920, 1080, {Depth::s16, 1}, rng);
  SobelParams p{1, 0, 3, 1.0, 0.0, Depth::s16, Border::reflect101()};
  PIXFLOW_TRACE(describe_params(p));
  sobel(src, got, p, {Backend::ref});
  ASSERT_EQ(compare(got, view_of(cv_deriv(src, 1, 0, 3, 1, 0, Depth::s16, p.border))), "");
}

TEST(Scharr, RefMatchesOpenCVExactlyU8ToS16AndF32WithinTolerance) {
  auto rng = make_rng(0x5c01);
  for (Depth in : {Depth::u8, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (Order o : std::vector<Order>{{1, 0}, {0, 1}})
          for (const Border& b : all_borders()) {
            const Depth to = in == Depth::u8 ? Depth::s16 : Depth::f32;
            ScharrParams p{o.dx, o.dy, 1.0, 0.0, to, b};
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(in) << "x" << ch << " " << s.w << "x" << s.h
                          << " dx=" << o.dx << " dy=" << o.dy << " " << describe(b));
            auto src = random_image(s.w, s.h, {in, ch}, rng);
            auto got = make_dst(s.w, s.h, {to, ch}, rng);
            scharr(src, got, p, {Backend::ref});
            const cv::Mat want = cv_deriv(src, o.dx, o.dy, -1, 1.0, 0.0, to, b);
            if (in == Depth::u8)
              ASSERT_EQ(compare(got, view_of(want)), "");
            else {
              int tx[3], ty[3];
              detail::scharr_taps(o.dx, tx);
              detail::scharr_taps(o.dy, ty);
              ASSERT_EQ(compare_f32(got, view_of(want), src, tx, 3, ty, 3, 1.0, b), "");
            }
          }
}
#else
TEST(Sobel, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++): ref not checked against cv::Sobel";
}
TEST(Scharr, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++): ref not checked against cv::Scharr";
}
#endif

// Random apertures and orders, explicit depths, scale and delta, and sizes beyond the
// schema's examples (tests/schema_test.cpp sweeps those); Scharr on the same cases.
TEST(Sobel, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0x50b6);
  for (Depth in : {Depth::u8, Depth::f32})
    for (Depth to : {Depth::s16, Depth::f32})
      for (int ch : {1, 3, 4})
        for (Size s : std::vector<Size>{{1, 1}, {1, 40}, {40, 1}, {17, 13}, {203, 101}})
          for (const Border& b : all_borders()) {
            if (in == Depth::f32 && to == Depth::s16) continue;
            const int k = int(rng() % 4) * 2 + 1, dy = int(rng() % 2);
            const std::string common = std::string(in == to ? " scale=1" : " scale=0.75") +
                                       " delta=2 to=" + depth_name(to) + " " + border_params(b);
            auto src = random_image(s.w, s.h, {in, ch}, rng);
            ASSERT_TRUE(backends_match_ref(
                "sobel", "dx=1 dy=" + std::to_string(dy) + " k=" + std::to_string(k) + common, src,
                rng));
            ASSERT_TRUE(backends_match_ref(
                "scharr", "dx=" + std::to_string(1 - dy) + " dy=" + std::to_string(dy) + common,
                src, rng));
          }
}

// One u8 -> s16 derivative (sobel when k > 0, else scharr) on every backend against the
// reference, with 8-byte aligned destination rows (tight images): the packed CUDA kernel needs
// them, and backends_match_ref's destinations at random odd offsets get them one time in
// three. The source is tight (the tile's word loads) and at an odd offset (its byte loads).
::testing::AssertionResult deriv_aligned_matches_ref(int dx, int dy, int k, double scale,
                                                     const Border& b, int cn, Size s,
                                                     std::mt19937_64& rng) {
  const std::string what = std::string(k > 0 ? "sobel k=" + std::to_string(k) : "scharr") +
                           " dx=" + std::to_string(dx) + " dy=" + std::to_string(dy) +
                           " scale=" + std::to_string(scale) + " " + border_params(b) + " on " +
                           std::to_string(s.w) + "x" + std::to_string(s.h) + " u8x" +
                           std::to_string(cn) + " seed=" + std::to_string(run_seed());
  auto run = [&](const ConstImageView& src, const ImageView& dst, Backend be) {
    if (k > 0)
      sobel(src, dst, SobelParams{dx, dy, k, scale, 0.0, Depth::s16, b}, Context{be});
    else
      scharr(src, dst, ScharrParams{dx, dy, scale, 0.0, Depth::s16, b}, Context{be});
  };
  for (bool src_tight : {true, false}) {
    TestImage src = random_image(s.w, s.h, {Depth::u8, cn}, rng, src_tight);
    TestImage want = make_dst(s.w, s.h, {Depth::s16, cn}, rng, true);
    run(src.view, want.view, Backend::ref);
    for (Backend be : test_backends_for(k > 0 ? "sobel" : "scharr")) {
      TestImage dsrc = to_backend(be, src.view, rng, src_tight);
      TestImage got = make_dst_on(be, s.w, s.h, {Depth::s16, cn}, rng, true);
      run(dsrc.view, got.view, be);
      const std::string diff = compare(to_host(got.view), want.view);
      if (!diff.empty())
        return ::testing::AssertionFailure()
               << what << (src_tight ? "" : " (source at an odd offset)") << ": "
               << backend_name(be) << " differs from ref: " << diff;
    }
  }
  return ::testing::AssertionSuccess();
}

// The packed u8 -> s16 3x3 CUDA kernel (u8_3x3.cuh, deriv3_u8_packed.hpp: scale 1, delta 0,
// taps compiled in, 1 or 3 channels) in both block shapes (launch.cuh, tall_blocks_fill): the
// streaming one (tiles of 128 x 16 samples) for grids of tall blocks (128 x 64) under 1056 —
// 517x70 .. 4100x1100 u8x1 — the tall one at 4100x2200 u8x1 and 4100x1100 u8x3; every tap
// pair it is compiled for (sobel k=3 dx, dy in 0..2, k=1 dx=dy=1 and dx=dy=2, scharr both),
// every border (constants out of range too), samples through the right edge of a block (517,
// 300 x 3 = 900: partial words and stores). The generic kernel takes scale 2, k=1 dx=1 dy=0
// (3x1 taps) and u8x4, each on the same images.
TEST(Sobel, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0x50ba);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  struct Case {
    int dx, dy, k;  // k = 0: scharr
  };
  const Case cases[] = {{1, 0, 3}, {0, 1, 3}, {1, 1, 3}, {2, 0, 3}, {0, 2, 3}, {2, 1, 3},
                        {1, 2, 3}, {2, 2, 3}, {1, 1, 1}, {2, 2, 1}, {1, 0, 0}, {0, 1, 0}};
  std::size_t turn = 0;
  for (int cn : {1, 3})
    for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}})
      for (const Case& c : cases) {
        const Border& b = borders[turn++ % borders.size()];
        ASSERT_TRUE(deriv_aligned_matches_ref(c.dx, c.dy, c.k, 1.0, b, cn, s, rng));
      }
  // Every border on both shapes for the benchmarked cases.
  for (const Border& b : borders) {
    ASSERT_TRUE(deriv_aligned_matches_ref(1, 0, 3, 1.0, b, 1, {4100, 2200}, rng));
    ASSERT_TRUE(deriv_aligned_matches_ref(0, 1, 0, 1.0, b, 1, {4100, 1100}, rng));
    ASSERT_TRUE(deriv_aligned_matches_ref(1, 0, 3, 1.0, b, 3, {4100, 1100}, rng));
  }
  // Tiny images: one partial block, tiles mostly border.
  for (Size s : std::vector<Size>{{1, 1}, {2, 3}, {5, 1}, {1, 9}, {7, 5}})
    for (int cn : {1, 3}) {
      const Border& b = borders[turn++ % borders.size()];
      ASSERT_TRUE(deriv_aligned_matches_ref(1, 1, 3, 1.0, b, cn, s, rng));
      ASSERT_TRUE(deriv_aligned_matches_ref(1, 0, 0, 1.0, b, cn, s, rng));
    }
  // The generic kernel beside it.
  ASSERT_TRUE(deriv_aligned_matches_ref(1, 0, 3, 2.0, Border::replicate(), 1, {517, 70}, rng));
  ASSERT_TRUE(deriv_aligned_matches_ref(1, 0, 1, 1.0, Border::wrap(), 1, {517, 70}, rng));
  ASSERT_TRUE(deriv_aligned_matches_ref(1, 0, 3, 1.0, Border::reflect(), 4, {517, 70}, rng));
  // backends_match_ref's random offsets (unaligned destinations: the generic kernel, or the
  // packed one one time in three).
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}})
    for (const char* o : {"dx=1 dy=0", "dx=0 dy=1"}) {
      const std::string b = border_params(borders[turn++ % borders.size()]);
      ASSERT_TRUE(
          backends_match_ref("sobel", std::string(o) + " k=3 to=s16 " + b, {Depth::u8, 1}, s, rng));
      ASSERT_TRUE(
          backends_match_ref("scharr", std::string(o) + " to=s16 " + b, {Depth::u8, 3}, s, rng));
    }
}

// The packed u8 -> s16 kernel's three tile loaders (u8_3x3.cuh load_tile_chunks): 16-byte
// chunks where the source rows are 16-byte aligned and the tile lies inside the image, word
// loads where they are 4-byte aligned only, the border rule on the edge tiles and for other
// alignments. The sources are ROIs starting `off` samples into a wider image (64-byte aligned
// rows): u8x1 at bytes 4, 8, 12 (words), 16 (chunks, with image bytes left of the ROI that the
// tile must not read: the border rule applies at the ROI's edge), 1 (bytes); u8x3 at 4 and 16
// pixels (12 and 48 bytes). Destinations tight (8-byte aligned rows: the packed kernel). Both
// shapes (4100x2200 and 1400x2200 u8x3 tall, 600x150 short: the 40-word tile), borders in turn,
// constant 300 among them.
TEST(Sobel, PackedKernelMatchesRefAtEverySourceAlignment) {
  auto rng = make_rng(0x50bc);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  struct Case {
    int cn, off;
    Size s;
    int dx, dy, k;  // k = 0: scharr
  };
  const Case cases[] = {{1, 4, {600, 150}, 1, 0, 3},   {1, 8, {600, 150}, 0, 1, 0},
                        {1, 12, {600, 150}, 2, 1, 3},  {1, 16, {600, 150}, 1, 1, 3},
                        {1, 1, {600, 150}, 1, 0, 0},   {3, 4, {600, 150}, 1, 0, 3},
                        {3, 16, {600, 150}, 0, 1, 0},  {1, 0, {600, 150}, 0, 2, 3},
                        {1, 4, {4100, 2200}, 1, 0, 3}, {1, 16, {4100, 2200}, 1, 0, 0},
                        {1, 0, {4100, 2200}, 0, 1, 3}, {3, 16, {1400, 2200}, 1, 0, 3}};
  for (const Case& c : cases) {
    const Border& b = borders[turn++ % borders.size()];
    const std::string what = std::string(c.k > 0 ? "sobel k=" + std::to_string(c.k) : "scharr") +
                             " dx=" + std::to_string(c.dx) + " dy=" + std::to_string(c.dy) + " " +
                             border_params(b) + " on " + std::to_string(c.s.w) + "x" +
                             std::to_string(c.s.h) + " u8x" + std::to_string(c.cn) +
                             " source at sample " + std::to_string(c.off) +
                             " seed=" + std::to_string(run_seed());
    auto run = [&](const ConstImageView& src, const ImageView& dst, Backend be) {
      if (c.k > 0)
        sobel(src, dst, SobelParams{c.dx, c.dy, c.k, 1.0, 0.0, Depth::s16, b}, Context{be});
      else
        scharr(src, dst, ScharrParams{c.dx, c.dy, 1.0, 0.0, Depth::s16, b}, Context{be});
    };
    TestImage wide = random_image(c.s.w + c.off, c.s.h, {Depth::u8, c.cn}, rng, true);
    const ConstImageView src = ConstImageView(wide.view).roi(c.off, 0, c.s.w, c.s.h);
    TestImage want = make_dst(c.s.w, c.s.h, {Depth::s16, c.cn}, rng, true);
    run(src, want.view, Backend::ref);
    for (Backend be : test_backends_for(c.k > 0 ? "sobel" : "scharr")) {
      TestImage dwide = to_backend(be, wide.view, rng, true);
      TestImage got = make_dst_on(be, c.s.w, c.s.h, {Depth::s16, c.cn}, rng, true);
      run(ConstImageView(dwide.view).roi(c.off, 0, c.s.w, c.s.h), got.view, be);
      const std::string diff = compare(to_host(got.view), want.view);
      ASSERT_TRUE(diff.empty()) << what << ": " << backend_name(be)
                                << " differs from ref: " << diff;
    }
  }
}

// The CUDA f32 x 1 3x3 kernel (src/backends/cuda/f32_3x3.cuh: rounded float products and sums
// in the reference's order, then v * scale + delta) for sobel k=3 (dx, dy in 0..2) and scharr
// at 517x70, 600x150, 300x97 and 4100x1100 its short shape (128 x 16 outputs a block), at
// 4100x2200 (33 x 35 blocks of 128 x 64 >= 1056, launch.cuh tall_blocks_fill) its tall one;
// every border in turn (constant 300 and -7 too). The sources sit at random offsets and
// strides (mostly the tile loader's per-chunk path; F32Kernel3x3.CudaMatchesRefOnAlignedImages
// in tests/f32_3x3_test.cpp takes the 16-byte path for sure).
// The generic path's cases beside it (k=5, k=1, 3 channels).
TEST(Sobel, EveryBackendMatchesRefOnManyTilesF32x1) {
  auto rng = make_rng(0x50bb);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}})
    for (const char* o : {"dx=1 dy=0", "dx=0 dy=1", "dx=1 dy=1 scale=0.25 delta=-3", "dx=2 dy=0"}) {
      const std::string b = border_params(borders[turn++ % borders.size()]);
      ASSERT_TRUE(backends_match_ref("sobel", std::string(o) + " k=3 to=f32 " + b, {Depth::f32, 1},
                                     s, rng));
    }
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}})
    for (const char* o : {"dx=1 dy=0", "dx=0 dy=1 scale=2 delta=1.5"}) {
      const std::string b = border_params(borders[turn++ % borders.size()]);
      ASSERT_TRUE(
          backends_match_ref("scharr", std::string(o) + " to=f32 " + b, {Depth::f32, 1}, s, rng));
    }
  for (Size s : std::vector<Size>{{4100, 1100}, {4100, 2200}}) {
    ASSERT_TRUE(backends_match_ref("sobel", "dx=1 dy=0 k=3 to=f32 border=reflect101",
                                   {Depth::f32, 1}, s, rng));
    ASSERT_TRUE(backends_match_ref("scharr", "dx=0 dy=1 to=f32 border=constant value=300",
                                   {Depth::f32, 1}, s, rng));
  }
  for (Size s : std::vector<Size>{{1, 1}, {3, 130}, {130, 2}})
    ASSERT_TRUE(backends_match_ref("sobel", "dx=1 dy=0 k=3 to=f32 border=constant value=-7",
                                   {Depth::f32, 1}, s, rng));
  for (const char* params :
       {"dx=1 dy=0 k=5 to=f32 border=reflect101", "dx=1 dy=0 k=1 to=f32 border=replicate"})
    ASSERT_TRUE(backends_match_ref("sobel", params, {Depth::f32, 1}, {517, 70}, rng));
  ASSERT_TRUE(backends_match_ref("sobel", "dx=0 dy=1 k=3 to=f32 border=wrap", {Depth::f32, 3},
                                 {300, 97}, rng));
}

// The SIMD kernel's paths (src/backends/cpu/simd/sobel.cpp): every aperture and order
// (int16 vertical sums up to k = 5, int32 for k = 7), s16 saturated or scaled (rint in
// double), f32 from u8 and from f32, every border, rows shorter and longer than a vector.
TEST(Sobel, SimdPathsMatchRefForEveryApertureOrderAndOutput) {
  auto rng = make_rng(0x50b9);
  for (Size s : std::vector<Size>{{263, 37}, {1000, 5}, {5, 1000}})
    for (int ch : {1, 3})
      for (const Border& b : all_borders()) {
        auto u8 = random_image(s.w, s.h, {Depth::u8, ch}, rng);
        auto f32 = random_image(s.w, s.h, {Depth::f32, ch}, rng);
        for (int k : {1, 3, 5, 7})
          for (int dx = 0; dx <= 2; ++dx)
            for (int dy = 0; dy <= 2; ++dy) {
              if (dx + dy == 0 || dx >= std::max(k, 3) || dy >= std::max(k, 3)) continue;
              const std::string o = "dx=" + std::to_string(dx) + " dy=" + std::to_string(dy) +
                                    " k=" + std::to_string(k) + " " + border_params(b);
              ASSERT_TRUE(backends_match_ref("sobel", o + " to=s16", u8, rng));
              ASSERT_TRUE(
                  backends_match_ref("sobel", o + " to=s16 scale=0.37 delta=-3.5", u8, rng));
              ASSERT_TRUE(backends_match_ref("sobel", o + " to=f32 scale=1.5 delta=0.25", u8, rng));
              ASSERT_TRUE(backends_match_ref("sobel", o + " to=f32 scale=0.5 delta=2", f32, rng));
            }
        for (int dx = 0; dx <= 1; ++dx) {
          const std::string o =
              "dx=" + std::to_string(dx) + " dy=" + std::to_string(1 - dx) + " " + border_params(b);
          ASSERT_TRUE(backends_match_ref("scharr", o + " to=s16", u8, rng));
          ASSERT_TRUE(backends_match_ref("scharr", o + " to=s16 scale=3 delta=1", u8, rng));
          ASSERT_TRUE(backends_match_ref("scharr", o + " to=f32", u8, rng));
          ASSERT_TRUE(backends_match_ref("scharr", o + " to=f32 scale=2 delta=-1", f32, rng));
        }
      }
}

// Separable == 2-D: the u8 Sobel (to f32) equals filter2d of the outer-product kernel on an
// f32 copy; every partial sum is an integer below 2^24, so both are exact.
TEST(Sobel, SeparableEqualsFilter2dWithOuterProductKernel) {
  auto rng = make_rng(0x50b7);
  for (int k : {1, 3, 5, 7})
    for (Order o : orders_for(k))
      for (const Border& b : all_borders()) {
        if (k == 1 && (o.dx > 2 || o.dy > 2)) continue;
        PIXFLOW_TRACE(testing::Message()
                      << "k=" << k << " dx=" << o.dx << " dy=" << o.dy << " " << describe(b));
        auto src = random_image(23, 19, {Depth::u8, 1}, rng);
        Image srcf(23, 19, {Depth::f32, 1});
        for (std::int64_t y = 0; y < 19; ++y)
          for (std::int64_t x = 0; x < 23; ++x) srcf.row<float>(y)[x] = float(sample(src, x, y, 0));
        int tx[7], ty[7];
        const int nx = detail::sobel_taps_len(k, o.dx), ny = detail::sobel_taps_len(k, o.dy);
        detail::sobel_taps(k, o.dx, tx);
        detail::sobel_taps(k, o.dy, ty);
        Filter2dParams f;
        f.kw = nx;
        f.kh = ny;
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i) f.kernel.push_back(float(tx[i] * ty[j]));
        f.border = b;
        auto got = make_dst(23, 19, {Depth::f32, 1}, rng);
        auto want = make_dst(23, 19, {Depth::f32, 1}, rng);
        sobel(src, got, SobelParams{o.dx, o.dy, k, 1.0, 0.0, Depth::f32, b}, {Backend::ref});
        filter2d(srcf, want, f, {Backend::ref});
        ASSERT_EQ(compare(got, want), "");
      }
}

TEST(Sobel, ConstantImageHasZeroDerivativeAndTapsSumAsExpected) {
  auto rng = make_rng(0x50b8);
  for (int k : {1, 3, 5, 7}) {
    PIXFLOW_TRACE(testing::Message() << "k=" << k);
    auto src = make_dst(9, 8, {Depth::u8, 1}, rng);
    for (std::int64_t y = 0; y < 8; ++y)
      for (std::int64_t x = 0; x < 9; ++x) src.view.row<std::uint8_t>(y)[x] = 77;
    auto got = make_dst(9, 8, {Depth::s16, 1}, rng);
    sobel(src, got, SobelParams{1, 1, k, 1, 0, Depth::s16, Border::replicate()}, {Backend::ref});
    for (std::int64_t y = 0; y < 8; ++y)
      for (std::int64_t x = 0; x < 9; ++x) ASSERT_EQ(sample(got, x, y, 0), 0);
    // Smoothing taps sum to 2^(n-1); derivative taps sum to 0.
    int t[7];
    detail::sobel_taps(k, 0, t);
    int sum = 0;
    for (int i = 0; i < detail::sobel_taps_len(k, 0); ++i) sum += t[i];
    EXPECT_EQ(sum, 1 << (detail::sobel_taps_len(k, 0) - 1));
  }
}

// Ranges, depths, dst and overlap: SchemaBadInput (tests/schema_test.cpp). Here: the
// aperture and order rules, and the destination depth.
TEST(Sobel, BadInputGivesStatusAndNamesOpAndParameter) {
  Image u8(8, 8, {Depth::u8, 1}), s16(8, 8, {Depth::s16, 1}), f32(8, 8, {Depth::f32, 1});
  Image u16(8, 8, {Depth::u16, 1});
  const BadCase cases[] = {
      {"k even",
       [&] {
         sobel(u8, s16, SobelParams{1, 0, 4});
       },
       Status::invalid_argument,
       {"sobel: ", "k must be 1, 3, 5 or 7", "got 4"}},
      {"dx+dy 0",
       [&] {
         sobel(u8, s16, SobelParams{0, 0, 3});
       },
       Status::invalid_argument,
       {"sobel: ", "dx and dy"}},
      {"dx 3 with k 3",
       [&] {
         sobel(u8, s16, SobelParams{3, 0, 3});
       },
       Status::invalid_argument,
       {"sobel: ", "dx must be in [0, 2]"}},
      {"dy 3 with k 1",
       [&] {
         sobel(u8, s16, SobelParams{0, 3, 1});
       },
       Status::invalid_argument,
       {"sobel: ", "dy must be in [0, 2]"}},
      {"to u8",
       [&] {
         sobel(u8, u8, SobelParams{1, 0, 3, 1, 0, Depth::u8});
       },
       Status::unsupported,
       {"sobel: ", "to must be s16 or f32"}},
      {"f32 to s16",
       [&] { sobel(f32, s16, SobelParams{}); },
       Status::unsupported,
       {"sobel: ", "to must be f32"}},
      {"scharr dx+dy 2",
       [&] {
         scharr(u8, s16, ScharrParams{1, 1});
       },
       Status::invalid_argument,
       {"scharr: ", "dx + dy == 1"}},
      {"scharr to u16",
       [&] {
         scharr(u8, u16, ScharrParams{1, 0, 1, 0, Depth::u16});
       },
       Status::unsupported,
       {"scharr: ", "to must be s16 or f32"}},
      {"cli k=4",
       [&] { Pipeline::parse("sobel k=4"); },
       Status::invalid_argument,
       {"sobel: ", "k must be"}},
      {"cli dx=3 k=3",
       [&] { Pipeline::parse("sobel dx=3 k=3"); },
       Status::invalid_argument,
       {"sobel: ", "dx must be in [0, 2]"}},
      {"cli scharr dx=1 dy=1",
       [&] { Pipeline::parse("scharr dx=1 dy=1"); },
       Status::invalid_argument,
       {"scharr: ", "dx + dy == 1"}},
  };
  expect_errors(cases);
}

TEST(Sobel, PipelineStageDefaultsToS16ForU8AndF32ForF32) {
  auto rng = make_rng(0x50b9);
  const Pipeline pl = Pipeline::parse("sobel dx=0 dy=1 k=5 scale=2 delta=1 border=wrap");
  for (Depth in : {Depth::u8, Depth::f32}) {
    PIXFLOW_TRACE(depth_name(in));
    auto src = random_image(31, 17, {in, 3}, rng);
    const Image got = pl.run(src, {Backend::cpu});
    const Depth to = in == Depth::u8 ? Depth::s16 : Depth::f32;
    auto want = make_dst(31, 17, {to, 3}, rng);
    sobel(src, want, SobelParams{0, 1, 5, 2.0, 1.0, to, Border::wrap()}, {Backend::ref});
    ASSERT_EQ(compare(got, want), "");
  }
}

}  // namespace
}  // namespace pixflow::test
