#include "tests/common.hpp"

#include <cstring>

#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kDepths[] = {Depth::u8, Depth::u16, Depth::f32};

std::string case_name(Depth d, int ch, Size s, int kw, int kh, const Border& b) {
  return testing::PrintToString(std::string(depth_name(d)) + "x" + std::to_string(ch) + " " +
                                std::to_string(s.w) + "x" + std::to_string(s.h) + " k=" +
                                std::to_string(kw) + "x" + std::to_string(kh) + " " + describe(b));
}

// Sets every sample of a view (u8, u16, f32) to v.
#if PIXFLOW_HAVE_OPENCV
// cv::medianBlur always uses replicate; other borders: pad with copyMakeBorder, filter, crop.
cv::Mat cv_median(const cv::Mat& src, int k, const Border& b) {
  cv::Mat out;
  if (b.type == BorderType::replicate) {
    cv::medianBlur(src, out, k);
    return out;
  }
  const int r = k / 2;
  cv::Mat padded, filtered;
  cv::copyMakeBorder(src, padded, r, r, r, r, cv_border(b), cv::Scalar::all(b.value));
  cv::medianBlur(padded, filtered, k);
  return filtered(cv::Rect(r, r, src.cols, src.rows)).clone();
}

TEST(Median, RefMatchesOpenCVMedianBlurAllBordersDepthsChannels) {
  auto rng = make_rng(0x3ed1);
  for (Depth d : kDepths) {
    // OpenCV takes u16/f32 only for k = 3, 5; u8 for any odd k (k = 1 copies).
    const std::vector<int> ks =
        d == Depth::u8 ? std::vector<int>{1, 3, 5, 7, 9, 15, 25} : std::vector<int>{3, 5};
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (int k : ks)
          for (const Border& b : all_borders()) {
            PIXFLOW_TRACE(case_name(d, ch, s, k, k, b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            auto got = make_dst(s.w, s.h, {d, ch}, rng);
            median(src, got, {k, k, b}, {Backend::ref});
            cv::Mat want = cv_median(to_mat(src), k, b);
            ASSERT_EQ(compare(got, view_of(want)), "");
          }
  }
}

TEST(Median, RefMatchesOpenCVOnFullHd) {
  auto rng = make_rng(0x3ed2);
  for (Depth d : kDepths) {
    PIXFLOW_TRACE(depth_name(d));
    auto src = random_image(1920, 1080, {d, 1}, rng);
    auto got = make_dst(1920, 1080, {d, 1}, rng);
    median(src, got, {5, 5, Border::replicate()}, {Backend::ref});
    cv::Mat want;
    cv::medianBlur(to_mat(src), want, 5);
    ASSERT_EQ(compare(got, view_of(want)), "");
  }
}
#else
TEST(Median, RefMatchesOpenCVMedianBlurAllBordersDepthsChannels) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
TEST(Median, RefMatchesOpenCVOnFullHd) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
#endif

// Windows and sizes beyond the schema's examples (tests/schema_test.cpp sweeps those) and
// one large image per depth (the CPU backend's row bands). The cpu backend's kernels: sorting
// networks (3x3), bit-by-bit selection (5x3, 1x7, 9x9, 31x5; 13x15 on u16/f32) and the u8
// histogram (13x15); this test also runs under the sanitizers (make test-asan).
TEST(Median, EveryBackendMatchesRefAllBordersRectWindows) {
  auto rng = make_rng(0x3ed3);
  const std::vector<std::pair<int, int>> windows{{1, 1}, {3, 3},  {5, 3},  {1, 7},
                                                 {9, 9}, {31, 5}, {13, 15}};
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {64, 3}})
        for (auto [kw, kh] : windows)
          for (const Border& b : all_borders())
            ASSERT_TRUE(backends_match_ref(
                "median",
                "kw=" + std::to_string(kw) + " kh=" + std::to_string(kh) + " " + border_params(b),
                {d, ch}, s, rng));
  for (Depth d : kDepths)
    ASSERT_TRUE(backends_match_ref("median", "k=3 border=reflect101", {d, 3}, {1920, 1080}, rng));
}

// The packed u8 3x3 kernel (u8_3x3.cuh) in its block shapes: for u8 x 1 the wide tall one
// (128 x 128 outputs, 16 x 16 threads of 8 bytes x 8 rows) where its grid fills the GPU
// (launch.cuh, tall_blocks_fill: >= 1056 blocks; 4100x4200 = 33 x 33, the last column 4 bytes
// wide: the byte-store path, the last row 104 rows high: threads with 0..8 rows inside), else
// the narrow tall one (128 x 64) where that fills it (4100x2200 = 33 x 35; 33 x 18 wide), else
// the short one (128 x 16 outputs a block: 517x70, 600x150, 300x97, 4100x1100; more in
// tests/packed3x3_test.cpp); blocks on every edge
// (partial in x and y), every border including constants out of range; other depths and
// channel counts take the generic kernel.
TEST(Median, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0x3ed9);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}})
    for (const Border& b : borders)
      ASSERT_TRUE(backends_match_ref("median", "k=3 " + border_params(b), {Depth::u8, 1}, s, rng));
  for (const char* b : {"border=reflect101", "border=constant value=300", "border=wrap"}) {
    ASSERT_TRUE(
        backends_match_ref("median", std::string("k=3 ") + b, {Depth::u8, 1}, {4100, 1100}, rng));
    ASSERT_TRUE(
        backends_match_ref("median", std::string("k=3 ") + b, {Depth::u8, 1}, {4100, 2200}, rng));
  }
  // The wide shape (17 M pixels a case: two borders; wrap and the rest on the others).
  for (const char* b : {"border=reflect101", "border=constant value=300"})
    ASSERT_TRUE(
        backends_match_ref("median", std::string("k=3 ") + b, {Depth::u8, 1}, {4100, 4200}, rng));
  for (Depth d : kDepths)
    ASSERT_TRUE(backends_match_ref("median", "k=3 border=replicate", {d, 3}, {517, 70}, rng));
}

// The wide tall 3x3 kernel (u8_3x3.cuh, median3_wide_u8_kernel: 8-byte output rows) on views of
// chosen byte offsets and strides, u8 x 1 at 2100x8300 (17 x 65 = 1105 blocks of 128 x 128: the
// wide rule) and u8 x 3 at 1400x4200 (4200 row bytes: 33 x 33): sources 16-byte aligned (the
// chunk tile), 4-byte aligned (word loads) and at offset 1 (bytes); destinations 8-byte aligned
// (one 8-byte store a row), 4-byte aligned only (two 4-byte stores: offset 4, or a stride of
// 8k + 4) and at offset 3 (the generic kernel). Every backend, against the reference.
TEST(Median, EveryBackendMatchesRefWideAlignedAndUnaligned) {
  auto rng = make_rng(0x3edd);
  for (int ch : {1, 3}) {
    const std::int64_t w = ch == 1 ? 2100 : 1400, h = ch == 1 ? 8300 : 4200;
    const std::int64_t row = (w * ch + 15) / 16 * 16;  // row bytes rounded up to 16
    TestImage src = random_image(w, h, {Depth::u8, ch}, rng);
    for (const Border& b : {Border::replicate(), Border::constant(-7)}) {
      Image want(w, h, {Depth::u8, ch});
      median(src, want, {3, 3, b}, {Backend::ref});
      struct Case {
        std::int64_t so, sstride, dof, dstride;
      };
      const Case cases[] = {
          {0, row, 0, row}, {4, row + 4, 4, row}, {1, row, 0, row + 4}, {0, row, 3, row}};
      for (Backend be : test_backends_for("median"))
        for (const Case& c : cases) {
          PIXFLOW_TRACE(std::string(backend_name(be)) + " u8x" + std::to_string(ch) + " " +
                        describe(b) + " src offset " + std::to_string(c.so) + " stride " +
                        std::to_string(c.sstride) + " dst offset " + std::to_string(c.dof) +
                        " stride " + std::to_string(c.dstride));
          const Location loc = backend_location(be);
          Image sb(c.sstride * h + 16, 1, {Depth::u8, 1}, loc);
          Image db(c.dstride * h + 16, 1, {Depth::u8, 1}, loc);
          ImageView sv(sb.data() + c.so, w, h, c.sstride, {Depth::u8, ch}, loc);
          ImageView dv(db.data() + c.dof, w, h, c.dstride, {Depth::u8, ch}, loc);
          copy(src, sv);
          poison(dv);
          median(sv, dv, {3, 3, b}, {be});
          ASSERT_EQ(compare(to_host(dv), want), "");
        }
    }
  }
}

// The packed u8 3x3 kernel on u8 x 3 (u8_3x3.cuh, median3_u8_kernel with CN = 3: the row's
// bytes, channels interleaved, 128 bytes = 42.7 pixels a block column). Its block grid counts
// row bytes, so 4100x1500 (97 x 12 = 1164 >= 1056 blocks of 128 x 128, launch.cuh
// tall_blocks_fill) takes the wide tall shape (median3_wide_u8_kernel), 4100x1100 (97 x 18 =
// 1746 blocks of 128 x 64; 97 x 9 wide) the narrow tall shape and 517x70, 600x150, 300x97,
// 2100x1100 (50 x 18) the streaming one (2100x1100: 3..6 tiles of 128 x 16 a block); every border
// (constants 300 and -7 outside the u8 range); a block column edge falls inside a pixel (128 = 42 x
// 3 + 2), so edge tiles map bytes of split pixels through the border rule. 5x5 takes the generic
// kernel (the fallback) beside it.
TEST(Median, EveryBackendMatchesRefOnManyTilesU8x3) {
  auto rng = make_rng(0x3edb);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}})
    for (const Border& b : borders)
      ASSERT_TRUE(backends_match_ref("median", "k=3 " + border_params(b), {Depth::u8, 3}, s, rng));
  for (const char* b : {"border=reflect101", "border=constant value=300"}) {
    ASSERT_TRUE(
        backends_match_ref("median", std::string("k=3 ") + b, {Depth::u8, 3}, {4100, 1100}, rng));
    // The wide shape: 97 x 12 = 1164 blocks of 128 x 128 row bytes.
    ASSERT_TRUE(
        backends_match_ref("median", std::string("k=3 ") + b, {Depth::u8, 3}, {4100, 1500}, rng));
  }
  ASSERT_TRUE(backends_match_ref("median", "k=3 border=wrap", {Depth::u8, 3}, {2100, 1100}, rng));
  for (Size s : std::vector<Size>{{1, 1}, {2, 3}, {1, 130}, {130, 1}, {43, 5}})
    for (const char* b : {"border=replicate", "border=constant value=-7", "border=reflect"})
      ASSERT_TRUE(backends_match_ref("median", std::string("k=3 ") + b, {Depth::u8, 3}, s, rng));
  ASSERT_TRUE(
      backends_match_ref("median", "k=5 border=reflect101", {Depth::u8, 3}, {517, 70}, rng));
}

// u8 x 3 3x3 and 5x5 on views of chosen byte offsets and strides on every backend. Both packed
// kernels load tile words only from 4-byte aligned source rows (else bytes); the 3x3 one runs
// only where the destination rows are 4-byte aligned (else the generic kernel), the 5x5 one
// stores bytes there. Sources at byte offsets 0, 1, 3 with strides of 4k and 4k + 3 bytes,
// destinations at 0 and 3.
TEST(Median, EveryBackendMatchesRefU8x3AlignedAndUnaligned) {
  auto rng = make_rng(0x3edc);
  for (Size s : std::vector<Size>{{389, 203}, {3, 70}})
    for (int k : {3, 5})
      for (const Border& b : {Border::reflect101(), Border::constant(300)}) {
        const std::int64_t w = s.w, h = s.h, row = w * 3;
        TestImage src = random_image(w, h, {Depth::u8, 3}, rng);
        Image want(w, h, {Depth::u8, 3});
        median(src, want, {k, k, b}, {Backend::ref});
        for (Backend be : test_backends_for("median"))
          for (std::int64_t so : {0, 1, 3})
            for (std::int64_t spad : {4, 7})
              for (std::int64_t dof : {0, 3}) {
                PIXFLOW_TRACE(std::string(backend_name(be)) + " " + std::to_string(w) + "x" +
                              std::to_string(h) + " k=" + std::to_string(k) + " " + describe(b) +
                              " src offset " + std::to_string(so) + " pad " + std::to_string(spad) +
                              " dst offset " + std::to_string(dof));
                const Location loc = backend_location(be);
                // Strides: 4k (row rounded up to 4, plus 4) or that plus 3 (odd rows).
                const std::int64_t sstride = (row + 3) / 4 * 4 + spad;
                const std::int64_t dstride = (row + 3) / 4 * 4 + 4;
                Image sb(sstride * h + 8, 1, {Depth::u8, 1}, loc);
                Image db(dstride * h + 8, 1, {Depth::u8, 1}, loc);
                ImageView sv(sb.data() + so, w, h, sstride, {Depth::u8, 3}, loc);
                ImageView dv(db.data() + dof, w, h, dstride, {Depth::u8, 3}, loc);
                copy(src, sv);
                poison(dv);
                median(sv, dv, {k, k, b}, {be});
                ASSERT_EQ(compare(to_host(dv), want), "");
              }
      }
}

// The CUDA f32 x 1 3x3 kernel (src/backends/cuda/f32_3x3.cuh, sorted columns on totalOrder keys)
// at 517x70, 600x150, 300x97 and 4100x1100 its short shape (128 x 16 outputs a block), at
// 4100x2200 (33 x 35 blocks of 128 x 64 >= 1056, launch.cuh tall_blocks_fill) its tall one;
// every border in turn (constant 300 and -7 too). The sources sit at random offsets and
// strides (mostly the tile loader's per-chunk path; F32Kernel3x3.CudaMatchesRefOnAlignedImages
// in tests/f32_3x3_test.cpp takes the 16-byte path for sure).
// Special values (NaN of both signs, -0, inf, ties) compared bit for bit in both shapes; the
// generic path's cases beside it (5x5, 3 channels).
TEST(Median, EveryBackendMatchesRefOnManyTilesF32x1) {
  auto rng = make_rng(0x3eda);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  std::size_t turn = 0;
  for (Size s : std::vector<Size>{{517, 70}, {600, 150}, {300, 97}})
    for (int rep = 0; rep < 2; ++rep)
      ASSERT_TRUE(backends_match_ref("median",
                                     "k=3 " + border_params(borders[turn++ % borders.size()]),
                                     {Depth::f32, 1}, s, rng));
  for (Size s : std::vector<Size>{{4100, 1100}, {4100, 2200}})
    ASSERT_TRUE(backends_match_ref("median",
                                   "k=3 " + border_params(borders[turn++ % borders.size()]),
                                   {Depth::f32, 1}, s, rng));
  for (Size s : std::vector<Size>{{517, 70}, {4100, 2200}, {1, 1}, {3, 130}, {130, 2}})
    for (const char* b : {"border=replicate", "border=constant value=-0.5", "border=reflect"})
      ASSERT_TRUE(backends_match_ref_bits("median", std::string("k=3 ") + b, 1, s, rng));
  ASSERT_TRUE(
      backends_match_ref("median", "k=5 border=replicate", {Depth::f32, 1}, {517, 70}, rng));
  ASSERT_TRUE(backends_match_ref("median", "k=3 border=constant value=-7", {Depth::f32, 3},
                                 {300, 97}, rng));
}

TEST(Median, WindowOneIsCopyAndConstantImageStaysConstant) {
  auto rng = make_rng(0x3ed4);
  for (Depth d : kDepths)
    for (const Border& b : all_borders()) {
      PIXFLOW_TRACE(std::string(depth_name(d)) + " " + describe(b));
      auto src = random_image(23, 11, {d, 3}, rng);
      auto got = make_dst(23, 11, {d, 3}, rng);
      median(src, got, {1, 1, b}, {Backend::ref});
      ASSERT_EQ(compare(got, src), "");
      // A constant image (value = the border's, so constant borders keep it too).
      auto flat = random_image(23, 11, {d, 3}, rng);
      fill_constant(flat, 77);
      median(flat, got, {7, 5, b}, {Backend::ref});
      ASSERT_EQ(compare(got, flat), "");
    }
}

TEST(Median, RectWindowEqualsTransposedRectWindow) {
  // median kw x kh of src == transpose(median kh x kw of transpose(src)): checks the
  // non-square windows that OpenCV cannot.
  auto rng = make_rng(0x3ed5);
  for (Depth d : kDepths)
    for (const Border& b : all_borders())
      for (auto [kw, kh] : std::vector<std::pair<int, int>>{{5, 1}, {3, 7}, {15, 3}}) {
        PIXFLOW_TRACE(case_name(d, 1, {19, 12}, kw, kh, b));
        auto src = random_image(19, 12, {d, 1}, rng);
        Image st(12, 19, {d, 1}), mt(12, 19, {d, 1}), back(19, 12, {d, 1});
        transpose(src, st, {Backend::ref});
        median(st, mt, {kh, kw, b}, {Backend::ref});
        transpose(mt, back, {Backend::ref});
        auto got = make_dst(19, 12, {d, 1}, rng);
        median(src, got, {kw, kh, b}, {Backend::ref});
        ASSERT_EQ(compare(got, back), "");
      }
}

TEST(Median, PipelineStageMatchesDirectCall) {
  auto rng = make_rng(0x3ed6);
  auto src = random_image(30, 20, {Depth::u8, 3}, rng);
  Image want(30, 20, {Depth::u8, 3});
  median(src, want, {5, 3, Border::wrap()});
  Image got = Pipeline::parse("median k=5 kh=3 border=wrap").run(src);
  EXPECT_EQ(compare(got, want), "");
}

}  // namespace

// The SIMD kernel (src/backends/cpu/simd/median.cpp) once per SIMD target: k = 3, 5, 7 on
// every depth, 1 and 3 channels, every border (constant inside and outside the depth's
// range), widths around the vector lengths, images smaller than the window, bands that start
// anywhere (the harness's thread counts).
TEST(Median, EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0x3ed5);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(-3));
  borders.push_back(Border::constant(300));
  const std::vector<Size> sizes = {{263, 37}, {70, 3}, {2, 9}, {33, 17}};
  for (Depth d : kDepths)
    for (int ch : {1, 2, 3, 4})
      for (int k : {3, 5, 7})
        for (Size s : sizes)
          for (const Border& b : borders)
            ASSERT_TRUE(backends_match_ref(
                "median", "k=" + std::to_string(k) + " " + border_params(b), {d, ch}, s, rng));
}

// The bit-by-bit selection (median_radix_t) that takes every window without a network or the
// u8 histogram: non-square and k >= 9 windows on every depth (u8 below 169 samples: 13x11
// is its largest here; 15x17 runs the selection on u16 and f32), once per SIMD target.
TEST(Median, RadixPathMatchesRefEverySimdPath) {
  auto rng = make_rng(0x3eda);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(-3));
  borders.push_back(Border::constant(300));
  const std::vector<std::pair<int, int>> windows{{3, 1}, {1, 5}, {9, 9}, {13, 11}, {15, 17}};
  const std::vector<Size> sizes = {{263, 37}, {70, 3}, {2, 9}, {33, 17}};
  for (Depth d : kDepths)
    for (int ch : {1, 3})
      for (auto [kw, kh] : windows)
        for (Size s : sizes)
          for (const Border& b : borders)
            ASSERT_TRUE(backends_match_ref(
                "median",
                "kw=" + std::to_string(kw) + " kh=" + std::to_string(kh) + " " + border_params(b),
                {d, ch}, s, rng));
  // Wider than a 512-bit vector of u8, windows past the image on both sides.
  for (Depth d : kDepths)
    ASSERT_TRUE(backends_match_ref("median", "kw=21 kh=13 border=wrap", {d, 4}, {150, 40}, rng));
}

// The u8 histogram median (src/backends/cpu/simd/median_histogram-inl.hpp, windows of 121+
// samples) once per SIMD target: square and non-square windows up to 255 on a side, 1, 3 and
// 4 channels, every border (constant inside and outside the u8 range), images smaller than
// the window, bands that start anywhere (the harness's thread counts) and images wide enough
// for several strips of column histograms (the strip width follows the L2 cache size, so
// 2100 pixels need 2+ strips even at 2 MiB of L2).
TEST(Median, HistogramPathMatchesRefEveryTarget) {
  auto rng = make_rng(0x3eda);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(-3));
  borders.push_back(Border::constant(300));
  auto check = [&](int kw, int kh, int ch, Size s, const Border& b) {
    return backends_match_ref(
        "median", "kw=" + std::to_string(kw) + " kh=" + std::to_string(kh) + " " + border_params(b),
        {Depth::u8, ch}, s, rng);
  };
  const std::vector<std::pair<int, int>> windows{{11, 11}, {13, 9},  {31, 31},
                                                 {255, 3}, {3, 255}, {41, 17}};
  for (auto [kw, kh] : windows)
    for (int ch : {1, 3, 4})
      // 263 wide: several bands of the harness's threads (2 strips for 255 x 3); fewer
      // rows for 3 and 4 channels (the reference's time).
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {263, ch == 1 ? 37 : 13}})
        for (const Border& b : borders) ASSERT_TRUE(check(kw, kh, ch, s, b));
  // Several strips (the reference is slow: nth_element per sample, so smaller windows here).
  for (auto [kw, kh] : std::vector<std::pair<int, int>>{{11, 11}, {25, 5}})
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{2100, 9}, {700, 5}})
        for (const Border& b : borders) ASSERT_TRUE(check(kw, kh, ch, s, b));
}

// f32 orders by totalOrder (docs/ops/median.md): NaN of either sign, infinities and -0 have a
// place, so every backend's median is the reference's sample, bit for bit.
TEST(Median, F32SpecialValuesOrderByTotalOrderOnEveryBackend) {
  auto rng = make_rng(0x3ed9);
  for (int k : {3, 5, 7, 9})
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{263, 37}, {17, 13}})
        ASSERT_TRUE(backends_match_ref_bits(
            "median", "k=" + std::to_string(k) + " border=reflect101", ch, s, rng));
  // The order itself: -NaN < -inf < -1 < -0 < +0 < 1 < +inf < +NaN.
  const std::uint32_t order[] = {0xffc00001u, 0xff800000u, 0xbf800000u, 0x80000000u,
                                 0x00000000u, 0x3f800000u, 0x7f800000u, 0x7fc00001u};
  for (int m = 0; m < 8; ++m) {
    // A 1x3 row {order[m-1], order[m], order[m+1]} in shuffled places: its median is order[m].
    if (m == 0 || m == 7) continue;
    for (int rot = 0; rot < 3; ++rot) {
      Image src(3, 1, {Depth::f32, 1}), dst(3, 1, {Depth::f32, 1});
      for (int i = 0; i < 3; ++i)
        std::memcpy(src.view().row<float>(0) + (i + rot) % 3, &order[m - 1 + i], 4);
      for (Backend be : {Backend::ref, Backend::cpu}) {
        median(src, dst, MedianParams{3, 1, Border::replicate()}, Context{be});
        std::uint32_t got;
        std::memcpy(&got, dst.view().row<float>(0) + 1, 4);
        EXPECT_EQ(got, order[m]) << "m=" << m << " rot=" << rot << " " << backend_name(be);
      }
    }
  }
}

}  // namespace pixflow::test
