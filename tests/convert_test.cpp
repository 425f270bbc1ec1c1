// convert: ref vs cv::Mat::convertTo / cv::convertScaleAbs, backends vs ref, bad input, CLI.
#include "tests/common.hpp"

#include <cmath>

#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kAll[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};
struct ScaleOffset {
  double scale, offset;
};
// "Nice" parameters: OpenCV's float arithmetic is exact on them for our inputs.
const ScaleOffset kNice[] = {{1, 0}, {2, 0}, {0.5, 0}, {0.25, 3}, {-1, 0}, {1, -7}, {2, 100}};

// f32 inputs are multiples of 1/16 in [-1000, 1000]: every nice scale/offset is then exact
// in float too, and many results sit exactly on .5 (testing round half to even).
[[maybe_unused]] TestImage convert_input(std::int64_t w, std::int64_t h, Depth d, int ch,
                                         std::mt19937_64& rng) {
  if (d != Depth::f32) return random_image(w, h, {d, ch}, rng);
  auto t = random_image(w, h, {d, ch}, rng, false, -16000, 16000);
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t i = 0; i < w * ch; ++i) {
      float& v = t.view.row<float>(y)[i];
      v = std::round(v) / 16.0f;
    }
  return t;
}

#if PIXFLOW_HAVE_OPENCV
TEST(Convert, RefMatchesOpenCVConvertToExactlyForNiceScalesEveryDepthPair) {
  auto rng = make_rng(0xC0201);
  for (Depth from : kAll)
    for (Depth to : kAll)
      for (int ch : {1, 3, 4})
        for (ScaleOffset so : kNice)
          for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {101, 67}}) {
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(from) << "->" << depth_name(to) << " x" << ch << " scale="
                          << so.scale << " offset=" << so.offset << " " << s.w << "x" << s.h);
            auto src = convert_input(s.w, s.h, from, ch, rng);
            auto got = make_dst(s.w, s.h, {to, ch}, rng);
            convert(src, got, {to, so.scale, so.offset, false}, {Backend::ref});
            cv::Mat want;
            to_mat(src).convertTo(want, cv_depth(to), so.scale, so.offset);
            ASSERT_EQ(compare(got, view_of(want)), "");
          }
  // 1920x1080 once.
  auto src = convert_input(1920, 1080, Depth::f32, 3, rng);
  auto got = make_dst(1920, 1080, {Depth::u8, 3}, rng);
  convert(src, got, {Depth::u8, 0.5, 3, false}, {Backend::ref});
  cv::Mat want;
  to_mat(src).convertTo(want, CV_8U, 0.5, 3);
  ASSERT_EQ(compare(got, view_of(want)), "");
}

TEST(Convert, RefWithAbsMatchesOpenCVConvertScaleAbsExactlyForNiceScales) {
  auto rng = make_rng(0xC0202);
  for (Depth from : kAll)
    for (int ch : {1, 3, 4})
      for (ScaleOffset so : kNice)
        for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {101, 67}}) {
          PIXFLOW_TRACE(testing::Message()
                        << depth_name(from) << "->u8 abs x" << ch << " scale=" << so.scale
                        << " offset=" << so.offset << " " << s.w << "x" << s.h);
          auto src = convert_input(s.w, s.h, from, ch, rng);
          auto got = make_dst(s.w, s.h, {Depth::u8, ch}, rng);
          convert(src, got, {Depth::u8, so.scale, so.offset, true}, {Backend::ref});
          cv::Mat want;
          cv::convertScaleAbs(to_mat(src), want, so.scale, so.offset);
          ASSERT_EQ(compare(got, view_of(want)), "");
        }
}

TEST(Convert, RefIsWithinOneOfOpenCVForArbitraryScales) {
  // OpenCV computes x*scale + offset in float (sometimes FMA); the reference in double. The
  // integer results may differ by 1 where the float value lands on the other side of a
  // rounding boundary; f32 results by float rounding. Counts are printed for the docs.
  auto rng = make_rng(0xC0203);
  const ScaleOffset odd[] = {{0.3, 0}, {1.0 / 3, 0.1}, {1.7, -2.2}, {-0.77, 5.5}};
  for (Depth from : {Depth::u8, Depth::u16, Depth::s16, Depth::f32})
    for (Depth to : {Depth::u8, Depth::s16, Depth::f32})
      for (ScaleOffset so : odd) {
        PIXFLOW_TRACE(testing::Message() << depth_name(from) << "->" << depth_name(to)
                                         << " scale=" << so.scale << " offset=" << so.offset);
        auto src = random_image(256, 64, {from, 1}, rng);
        auto got = make_dst(256, 64, {to, 1}, rng);
        convert(src, got, {to, so.scale, so.offset, false}, {Backend::ref});
        cv::Mat want;
        to_mat(src).convertTo(want, cv_depth(to), so.scale, so.offset);
        if (to == Depth::f32)
          ASSERT_EQ(compare(got, view_of(want), 1e-4, 2e-7), "");
        else
          ASSERT_EQ(compare(got, view_of(want), 1), "");
      }
}
#else
TEST(Convert, RefMatchesOpenCVConvertToExactlyForNiceScalesEveryDepthPair) {
  GTEST_SKIP() << "built without OpenCV (C++): ref vs cv::Mat::convertTo not checked";
}
TEST(Convert, RefWithAbsMatchesOpenCVConvertScaleAbsExactlyForNiceScales) {
  GTEST_SKIP() << "built without OpenCV (C++): ref vs cv::convertScaleAbs not checked";
}
TEST(Convert, RefIsWithinOneOfOpenCVForArbitraryScales) {
  GTEST_SKIP() << "built without OpenCV (C++): ref vs cv::Mat::convertTo not checked";
}
#endif

TEST(Convert, RoundsHalfToEvenInDoubleAndSaturates) {
  struct Case {
    Depth from, to;
    double x, scale, offset;
    bool abs;
    double want;
  };
  const Case cases[] = {
      {Depth::u8, Depth::u8, 5, 0.5, 0, false, 2},      // 2.5 -> 2
      {Depth::u8, Depth::u8, 7, 0.5, 0, false, 4},      // 3.5 -> 4
      {Depth::u8, Depth::u8, 200, 2, 0, false, 255},    // saturate
      {Depth::u8, Depth::u8, 10, -1, 0, false, 0},      // saturate low
      {Depth::u8, Depth::u8, 10, -1, 0, true, 10},      // abs
      {Depth::s16, Depth::u8, -300, 1, 0, true, 255},   // abs then saturate
      {Depth::f32, Depth::s16, -2.5, 1, 0, false, -2},  // half to even, negative
      {Depth::f32, Depth::s32, 3e9, 1, 0, false, 2147483647},
      {Depth::s32, Depth::f32, 16777217, 1, 0.5, false, 16777218},  // double, then float
      {Depth::s32, Depth::u16, -5, 1, 0, false, 0},
      {Depth::u16, Depth::s16, 65535, 1, 0, false, 32767},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << depth_name(c.from) << "->" << depth_name(c.to) << " x="
                                    << c.x << " scale=" << c.scale << " offset=" << c.offset);
    Image in(1, 1, {c.from, 1}), out(1, 1, {c.to, 1});
    switch (c.from) {
      case Depth::u8:
        in.row<std::uint8_t>(0)[0] = std::uint8_t(c.x);
        break;
      case Depth::u16:
        in.row<std::uint16_t>(0)[0] = std::uint16_t(c.x);
        break;
      case Depth::s16:
        in.row<std::int16_t>(0)[0] = std::int16_t(c.x);
        break;
      case Depth::s32:
        in.row<std::int32_t>(0)[0] = std::int32_t(c.x);
        break;
      case Depth::f32:
        in.row<float>(0)[0] = float(c.x);
        break;
    }
    convert(in, out, {c.to, c.scale, c.offset, c.abs}, {Backend::ref});
    EXPECT_EQ(sample(out.view(), 0, 0, 0), c.want);
  }
}

TEST(Convert, EveryBackendMatchesRefExactlyIncludingInPlace) {
  auto rng = make_rng(0xC0204);
  for (Backend be : test_backends_for("convert"))
    for (Depth from : kAll)
      for (Depth to : kAll)
        for (int ch : {1, 3, 4})
          for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {1920, 1080}}) {
            if (s.w == 1920 && (from != Depth::u8 || to != Depth::f32 || ch != 4)) continue;
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " " << depth_name(from) << "->" << depth_name(to)
                          << " x" << ch << " " << s.w << "x" << s.h);
            const ConvertParams p{to, 0.37, -1.5, (s.w + ch) % 2 == 0};
            auto src = random_image(s.w, s.h, {from, ch}, rng);
            auto want = make_dst(s.w, s.h, {to, ch}, rng);
            convert(src, want, p, {Backend::ref});
            auto in = to_backend(be, src, rng);
            auto got = make_dst_on(be, s.w, s.h, {to, ch}, rng);
            convert(in, got, p, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
            if (from == to) {
              convert(in, in.view, p, {be});
              ASSERT_EQ(compare(to_host(in), want), "");
            }
          }
}

// The OpenCL kernel's chunks (kernels/pointwise.cl: 16 bytes of the wider depth a work-item,
// vector pointers where every view is 16-byte aligned, vloadN otherwise, the row's partial
// last chunk sample by sample): tight views (aligned where the row is a multiple of 16 bytes:
// the 64-wide cases) and padded ones (odd offsets), widths around the chunk, every depth pair.
TEST(Convert, EveryBackendMatchesRefOnAlignedAndPaddedViews) {
  auto rng = make_rng(0xC020A);
  for (Backend be : test_backends_for("convert"))
    for (Depth from : kAll)
      for (Depth to : kAll)
        for (Size s : std::vector<Size>{{64, 5}, {67, 4}, {3, 2}})
          for (bool tight : {true, false}) {
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " " << depth_name(from) << "->" << depth_name(to)
                          << " " << s.w << "x" << s.h << (tight ? " tight" : " padded"));
            const ConvertParams p{to, -0.75, 3.5, false};
            auto src = random_image(s.w, s.h, {from, 1}, rng);
            auto want = make_dst(s.w, s.h, {to, 1}, rng);
            convert(src, want, p, {Backend::ref});
            auto in = to_backend(be, src, rng, tight);
            auto got = make_dst_on(be, s.w, s.h, {to, 1}, rng, tight);
            convert(in, got, p, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

// The SIMD kernel (src/backends/cpu/simd/convert.cpp, double lanes) once per SIMD target:
// every depth pair, scales with halves (ties), negative offsets, abs, saturation both ways,
// widths around the vector lengths.
TEST(Convert, EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0xC0209);
  const Depth all[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};
  const char* params[] = {"", "scale=0.5", "scale=-3.25 offset=0.5 abs=1", "scale=1e6 offset=-7",
                          "scale=0.0039215686 offset=-0.5"};
  for (Depth from : all)
    for (Depth to : all)
      for (const char* q : params)
        for (Size s : std::vector<Size>{{263, 37}, {31, 2}, {1, 1}})
          ASSERT_TRUE(backends_match_ref("convert", std::string("to=") + depth_name(to) + " " + q,
                                         {from, s.w == 31 ? 3 : 1}, s, rng));
}

TEST(Convert, IdentityAndRoundTripThroughF32AreLossless) {
  auto rng = make_rng(0xC0205);
  for (Depth d : kAll) {
    PIXFLOW_TRACE(depth_name(d));
    auto src = random_image(31, 7, {d, 3}, rng);
    auto same = make_dst(31, 7, {d, 3}, rng);
    convert(src, same, {d, 1, 0, false}, {Backend::ref});
    EXPECT_EQ(compare(same, src), "");
    auto f = make_dst(31, 7, {Depth::f32, 3}, rng);
    auto back = make_dst(31, 7, {d, 3}, rng);
    convert(src, f, {Depth::f32, 1, 0, false}, {Backend::ref});  // |s32| <= 1e6 < 2^24: exact
    convert(f, back, {d, 1, 0, false}, {Backend::ref});
    EXPECT_EQ(compare(back, src), "");
  }
}

// Scale, offset, dst and overlap: SchemaBadInput (tests/schema_test.cpp). Here: `to` out of
// the enum, and a depth change over src's own memory.
TEST(Convert, BadToAndInPlaceDepthChangeAreRefused) {
  Image u8(8, 4, {Depth::u8, 3}), f32(8, 4, {Depth::f32, 3});
  Image big(8, 4, {Depth::u16, 3});
  // A u8 dst inside the u16 image's memory: a depth change cannot run in place.
  const ImageView alias(big.data(), 8, 4, big.stride(), {Depth::u8, 3});
  const BadCase cases[] = {
      {"bad to",
       [&] {
         convert(u8, f32, {Depth(9), 1, 0, false});
       },
       Status::invalid_argument,
       {"convert:", "to must be"}},
      {"in place depth change",
       [&] {
         convert(big, alias, {Depth::u8, 1, 0, false});
       },
       Status::invalid_argument,
       {"convert:", "overlap"}},
  };
  expect_errors(cases);
}

TEST(Convert, CliStageParsesToScaleOffsetAbs) {
  auto rng = make_rng(0xC0206);
  auto src = random_image(9, 4, {Depth::s16, 1}, rng);
  Image out = Pipeline::parse("convert to=u8 abs=1 scale=0.25 offset=1").run(src);
  auto want = make_dst(9, 4, {Depth::u8, 1}, rng);
  convert(src, want, {Depth::u8, 0.25, 1, true}, {Backend::ref});
  EXPECT_EQ(compare(out, want), "");
}

// scale=auto: the scale maps the top of one depth's range onto the other's (u8 255, u16 65535,
// f32 1), and only between those three depths.
TEST(Convert, AutoScaleMapsRangeTopsBetweenU8U16AndF32) {
  struct Pair {
    Depth from, to;
    double scale;
  };
  const Pair pairs[] = {{Depth::u8, Depth::u16, 257.0},        {Depth::u16, Depth::u8, 1.0 / 257},
                        {Depth::u8, Depth::f32, 1.0 / 255},    {Depth::f32, Depth::u8, 255.0},
                        {Depth::u16, Depth::f32, 1.0 / 65535}, {Depth::f32, Depth::u16, 65535.0},
                        {Depth::u8, Depth::u8, 1.0},           {Depth::f32, Depth::f32, 1.0}};
  auto rng = make_rng(0xC0207);
  for (const Pair& q : pairs) {
    PIXFLOW_TRACE(std::string(depth_name(q.from)) + "->" + depth_name(q.to));
    EXPECT_EQ(auto_scale(q.from, q.to), q.scale);
    auto src = q.from == Depth::f32 ? random_image(13, 5, {q.from, 3}, rng, false, 0, 1)
                                    : random_image(13, 5, {q.from, 3}, rng);
    auto want = make_dst(13, 5, {q.to, 3}, rng);
    convert(src, want, {q.to, q.scale, 0, false}, {Backend::ref});
    for (Backend b : test_backends_for("convert")) {
      PIXFLOW_TRACE(backend_name(b));
      auto in = to_backend(b, src, rng);
      auto got = make_dst_on(b, 13, 5, {q.to, 3}, rng);
      ConvertParams a{q.to};
      a.auto_scale = true;
      convert(in, got, a, {b});
      EXPECT_EQ(compare(to_host(got), want), "");
    }
  }
  // The obvious values: the tops map onto each other, u16 257 k -> u8 k exactly.
  Image u16(3, 1, {Depth::u16, 1}), u8(3, 1, {Depth::u8, 1});
  const std::uint16_t in[] = {65535, 257 * 100, 128};
  for (int i = 0; i < 3; ++i) u16.view().row<std::uint16_t>(0)[i] = in[i];
  Pipeline::parse("convert to=u8 scale=auto").run(u16.view(), u8.view());
  EXPECT_EQ(u8.view().row<std::uint8_t>(0)[0], 255);
  EXPECT_EQ(u8.view().row<std::uint8_t>(0)[1], 100);
  EXPECT_EQ(u8.view().row<std::uint8_t>(0)[2], 0);  // 128 / 257 = 0.498
  // s16 and s32 have no range top it could use: a clear error, at plan time in a pipeline.
  Image s16(4, 2, {Depth::s16, 1});
  const BadCase cases[] = {
      {"s16 source",
       [&] {
         ConvertParams a{Depth::u8};
         a.auto_scale = true;
         convert(s16, u8, a);
       },
       Status::invalid_argument,
       {"convert:", "scale=auto is defined between u8, u16 and f32 (got s16 to u8)"}},
      {"s32 target in a plan",
       [&] {
         Pipeline::parse("convert to=s32 scale=auto").plan({4, 2, {Depth::u8, 1}});
       },
       Status::invalid_argument,
       {"convert:", "(got u8 to s32)"}},
      {"a word that is not auto",
       [&] { Pipeline::parse("convert to=u8 scale=half"); },
       Status::invalid_argument,
       {"convert:", "scale must be a number"}},
  };
  expect_errors(cases);
}

}  // namespace
}  // namespace pixflow::test
