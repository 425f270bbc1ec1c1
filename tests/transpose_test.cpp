#include "tests/common.hpp"

#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kDepths[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};

TEST(Transpose, RefMatchesDefinition) {
  auto rng = make_rng(0x7001);
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes()) {
        PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h);
        auto src = random_image(s.w, s.h, {d, ch}, rng);
        auto dst = make_dst(s.h, s.w, {d, ch}, rng);
        transpose(src, dst, {Backend::ref});
        for (std::int64_t y = 0; y < s.h; ++y)
          for (std::int64_t x = 0; x < s.w; ++x)
            for (int c = 0; c < ch; ++c)
              ASSERT_EQ(sample(dst.view, y, x, c), sample(src.view, x, y, c));
      }
}

// Long rows and columns and 1920x1080 (tests/schema_test.cpp sweeps the awkward sizes).
TEST(Transpose, EveryBackendMatchesRef) {
  auto rng = make_rng(0x7002);
  for (Depth d : kDepths)
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 40}, {40, 1}, {1920, 1080}})
        ASSERT_TRUE(backends_match_ref("transpose", "", {d, ch}, s, rng));
}

// u8 x 1 with 4-byte aligned rows both ways (tight views: the CUDA word-tile kernel,
// src/backends/cuda/transpose.cu): heights that leave the last tile row partial (56 rows at
// 1080; 53 at 1077, whose last output word holds one byte; a single row), widths that leave
// the last tile column partial (byte by byte) and whole tiles.
TEST(Transpose, EveryBackendMatchesRefU8WordTilesWithPartialTiles) {
  auto rng = make_rng(0x7004);
  const Format f{Depth::u8, 1};
  for (Size s : std::vector<Size>{{1920, 1080},
                                  {128, 1077},
                                  {64, 1},
                                  {64, 65},
                                  {256, 130},
                                  {192, 3},
                                  {100, 70},
                                  {64, 64}}) {
    const TestImage src = random_image(s.w, s.h, f, rng, true);
    TestImage want = make_dst(s.h, s.w, f, rng, true);
    transpose(src.view, want.view, {Backend::ref});
    for (Backend be : test_backends_for("transpose")) {
      PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << s.w << "x" << s.h);
      const TestImage on = to_backend(be, src.view, rng, true);
      TestImage got = make_dst_on(be, s.h, s.w, f, rng, true);
      Context ctx;
      ctx.backend = be;
      transpose(on.view, got.view, ctx);
      ASSERT_EQ(compare(to_host(got.view), want.view), "");
    }
  }
}

#if PIXFLOW_HAVE_OPENCV
TEST(Transpose, RefMatchesOpenCV) {
  auto rng = make_rng(0x7003);
  for (Depth d : {Depth::u8, Depth::u16, Depth::s16, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {1920, 1080}}) {
        PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h);
        auto src = random_image(s.w, s.h, {d, ch}, rng);
        auto got = make_dst(s.h, s.w, {d, ch}, rng);
        transpose(src, got, {Backend::ref});
        cv::Mat want;
        cv::transpose(to_mat(src), want);
        ASSERT_EQ(compare(got, view_of(want)), "");
      }
}
#else
TEST(Transpose, RefMatchesOpenCV) {
  GTEST_SKIP() << "built without OpenCV (C++)";
}
#endif

// The SIMD kernel (src/backends/cpu/simd/transpose.cpp) once per SIMD target: every pixel
// size (1, 2, 3, 4, 6, 8, 12, 16 bytes), sizes that are and are not multiples of the block
// (16, 8, 4, 2 pixels) and of the 128-row tile, bands starting inside a block.
TEST(Transpose, EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0x7a05);
  const Depth all[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};
  const std::vector<Size> sizes = {{263, 37}, {37, 263}, {16, 16},  {17, 33},
                                   {1, 100},  {100, 1},  {130, 129}};
  for (Depth d : all)
    for (int ch : {1, 2, 3, 4})
      for (Size s : sizes) ASSERT_TRUE(backends_match_ref("transpose", "", {d, ch}, s, rng));
}

}  // namespace
}  // namespace pixflow::test
