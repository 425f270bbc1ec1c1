// gray: ref vs OpenCV, backends vs ref, bad input, metamorphic checks, CLI stage.
#include "tests/common.hpp"

#include <algorithm>
#include <cstring>

#include <cmath>

#if PIXFLOW_HAVE_OPENCV
#include <opencv2/imgproc.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kGrayDepths[] = {Depth::u8, Depth::u16, Depth::f32};

// f32 inputs are drawn from [0, 1000] (image-like, no cancellation) so that the contract's
// relative tolerance is meaningful.
TestImage gray_input(std::int64_t w, std::int64_t h, Depth d, int ch, std::mt19937_64& rng) {
  return d == Depth::f32 ? random_image(w, h, {d, ch}, rng, false, 0, 1000)
                         : random_image(w, h, {d, ch}, rng);
}

#if PIXFLOW_HAVE_OPENCV
TEST(Gray, RefMatchesOpenCVCvtColorExactForU8U16AndWithin1e5RelForF32) {
  auto rng = make_rng(0xC0101);
  auto sizes = awkward_sizes();
  sizes.push_back({1920, 1080});
  for (Depth d : kGrayDepths)
    for (int ch : {3, 4})
      for (bool bgr : {false, true})
        for (Size s : sizes) {
          // 1920x1080 once per depth (rgb, 3 channels) to keep the runtime small.
          if (s.w == 1920 && (ch != 3 || bgr)) continue;
          PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch
                                           << (bgr ? " bgr " : " rgb ") << s.w << "x" << s.h);
          auto src = gray_input(s.w, s.h, d, ch, rng);
          auto got = make_dst(s.w, s.h, {d, 1}, rng);
          gray(src, got, {bgr}, {Backend::ref});
          const int code = ch == 3 ? (bgr ? cv::COLOR_BGR2GRAY : cv::COLOR_RGB2GRAY)
                                   : (bgr ? cv::COLOR_BGRA2GRAY : cv::COLOR_RGBA2GRAY);
          cv::Mat want;
          cv::cvtColor(to_mat(src), want, code);
          const double rel = d == Depth::f32 ? 1e-5 : 0;
          ASSERT_EQ(compare(got, view_of(want), 0, rel), "");
        }
}
#else
TEST(Gray, RefMatchesOpenCVCvtColorExactForU8U16AndWithin1e5RelForF32) {
  GTEST_SKIP() << "built without OpenCV (C++): ref vs cv::cvtColor not checked";
}
#endif

TEST(Gray, RefMatchesTheFixedPointFormulaOnExtremes) {
  // All-max and mixed extremes: u16 must not overflow (65535 * 32768 + 16384 < 2^31).
  for (Depth d : {Depth::u8, Depth::u16}) {
    const std::uint32_t mx = d == Depth::u8 ? 255 : 65535;
    const std::uint32_t rgb[][3] = {{mx, mx, mx}, {mx, 0, 0}, {0, mx, 0}, {0, 0, mx}, {1, 0, 1}};
    for (const auto& p : rgb) {
      PIXFLOW_TRACE(testing::Message()
                    << depth_name(d) << " " << p[0] << "," << p[1] << "," << p[2]);
      Image src(1, 1, {d, 3}), dst(1, 1, {d, 1});
      for (int c = 0; c < 3; ++c) {
        if (d == Depth::u8)
          src.row<std::uint8_t>(0)[c] = std::uint8_t(p[c]);
        else
          src.row<std::uint16_t>(0)[c] = std::uint16_t(p[c]);
      }
      gray(src, dst, {}, {Backend::ref});
      const std::uint64_t want = (9798ull * p[0] + 19235ull * p[1] + 3735ull * p[2] + 16384) >> 15;
      EXPECT_EQ(sample(dst.view(), 0, 0, 0), double(want));
    }
  }
}

// Non-negative f32 inputs and 1920x1080 (tests/schema_test.cpp sweeps the schema's
// examples on the awkward sizes with inputs over the whole f32 test range).
TEST(Gray, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0xC0102);
  for (Depth d : kGrayDepths)
    for (int ch : {3, 4})
      for (bool bgr : {false, true})
        for (Size s : {Size{17, 13}, Size{1920, 1080}}) {
          if (s.w == 1920 && (ch != 4 || bgr)) continue;
          auto src = gray_input(s.w, s.h, d, ch, rng);
          ASSERT_TRUE(backends_match_ref("gray", bgr ? "from=bgr" : "from=rgb", src, rng));
        }
}

// The OpenCL kernel's chunks (kernels/pointwise.cl: 16 bytes of output a work-item from CN
// vectors of source, vector pointers where both views are 16-byte aligned, vloadN otherwise,
// the row's partial last chunk pixel by pixel): tight views (aligned at width 64) and padded
// ones, widths around the chunk.
TEST(Gray, EveryBackendMatchesRefOnAlignedAndPaddedViews) {
  auto rng = make_rng(0xC0103);
  for (Backend be : test_backends_for("gray"))
    for (Depth d : kGrayDepths)
      for (int ch : {3, 4})
        for (Size s : {Size{64, 5}, Size{67, 3}, Size{2, 2}})
          for (bool tight : {true, false}) {
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " " << depth_name(d) << "x" << ch << " " << s.w
                          << "x" << s.h << (tight ? " tight" : " padded"));
            auto src = gray_input(s.w, s.h, d, ch, rng);
            auto want = make_dst(s.w, s.h, {d, 1}, rng);
            gray(src, want, {true}, {Backend::ref});
            auto in = to_backend(be, src, rng, tight);
            auto got = make_dst_on(be, s.w, s.h, {d, 1}, rng, tight);
            gray(in, got, {true}, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
          }
}

TEST(Gray, GrayInputStaysTheSameAndBgrOfSwappedInputEqualsRgb) {
  auto rng = make_rng(0xC0103);
  for (Depth d : kGrayDepths)
    for (int ch : {3, 4}) {
      PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch);
      // R = G = B = v gives v (u8/u16 exactly: the coefficients sum to 2^15; f32 within
      // rounding of three products and two sums).
      auto one = gray_input(23, 11, d, 1, rng);
      Image rgb(23, 11, {d, ch});
      for (std::int64_t y = 0; y < 11; ++y)
        for (std::int64_t x = 0; x < 23; ++x)
          for (int c = 0; c < ch; ++c) {
            const std::size_t bs = depth_bytes(d);
            std::memcpy(rgb.view().row_ptr(y) + (x * ch + c) * bs, one.view.row_ptr(y) + x * bs,
                        bs);
          }
      auto g = make_dst(23, 11, {d, 1}, rng);
      gray(rgb, g, {}, {Backend::ref});
      EXPECT_EQ(compare(g, one, 0, d == Depth::f32 ? 4e-7 : 0), "");

      // Swapping channels 0 and 2 and reading as BGR gives the RGB result.
      auto src = gray_input(19, 7, d, ch, rng);
      Image swapped = clone(src);
      const std::size_t bs = depth_bytes(d);
      std::vector<std::byte> tmp(bs);
      for (std::int64_t y = 0; y < 7; ++y)
        for (std::int64_t x = 0; x < 19; ++x) {
          std::byte* p = swapped.view().row_ptr(y) + x * ch * bs;
          std::memcpy(tmp.data(), p, bs);
          std::memcpy(p, p + 2 * bs, bs);
          std::memcpy(p + 2 * bs, tmp.data(), bs);
        }
      auto a = make_dst(19, 7, {d, 1}, rng), b = make_dst(19, 7, {d, 1}, rng);
      gray(src, a, {false}, {Backend::ref});
      gray(swapped, b, {true}, {Backend::ref});
      EXPECT_EQ(compare(b, a), "");
    }
}

TEST(Gray, CliStageParsesFrom) {
  auto rng = make_rng(0xC0104);
  auto src = random_image(9, 4, {Depth::u8, 3}, rng);
  Image out = Pipeline::parse("gray from=bgr").run(src);
  auto want = make_dst(9, 4, {Depth::u8, 1}, rng);
  gray(src, want, {true}, {Backend::ref});
  EXPECT_EQ(compare(out, want), "");
  Image def = Pipeline::parse("gray").run(src);
  gray(src, want, {false}, {Backend::ref});
  EXPECT_EQ(compare(def, want), "");
}

// ---- channels ----------------------------------------------------------------------------------

TEST(Channels, RefMovesThePickedSamples) {
  Image rgba(2, 1, {Depth::u8, 4});
  const std::uint8_t px[] = {10, 20, 30, 40, 11, 21, 31, 41};
  std::memcpy(rgba.view().row_ptr(0), px, sizeof px);
  auto run = [&](const std::string& pick) {
    Image out = Pipeline::parse("channels pick=" + pick).run(rgba, {Backend::ref});
    std::vector<int> v;
    for (std::int64_t i = 0; i < out.width() * out.channels(); ++i)
      v.push_back(out.view().row<std::uint8_t>(0)[i]);
    return v;
  };
  EXPECT_EQ(run("2,1,0"), (std::vector<int>{30, 20, 10, 31, 21, 11}));
  EXPECT_EQ(run("0,1,2"), (std::vector<int>{10, 20, 30, 11, 21, 31}));
  EXPECT_EQ(run("3"), (std::vector<int>{40, 41}));
  EXPECT_EQ(run("1,1"), (std::vector<int>{20, 20, 21, 21}));
  EXPECT_EQ(run("3,2,1,0"), (std::vector<int>{40, 30, 20, 10, 41, 31, 21, 11}));
}

// Picks of every output channel count from sources of 1, 3 and 4 channels, reordering and
// repeating (the schema's examples only pick channel 0, which every source has), every depth, on
// tight views (16-byte aligned at width 64: the OpenCL kernel's vector path) and padded ones,
// widths around the 16-byte chunk.
TEST(Channels, EveryBackendMatchesRefOnEveryPickDepthAndAlignment) {
  auto rng = make_rng(0xC0105);
  const std::pair<int, std::vector<std::string>> picks[] = {
      {1, {"0,0,0,0"}}, {3, {"2,1,0", "0,1", "2,0,1,1"}}, {4, {"2,1,0", "3", "3,2,1,0", "1,1"}}};
  for (Backend be : test_backends_for("channels"))
    for (Depth d : {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32})
      for (const auto& [ci, list] : picks)
        for (const std::string& pick : list)
          for (Size s : {Size{64, 3}, Size{67, 2}, Size{5, 2}})
            for (bool tight : {true, false}) {
              PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << depth_name(d) << "x"
                                               << ci << " pick=" << pick << " " << s.w << "x" << s.h
                                               << (tight ? " tight" : " padded"));
              const int co = int(std::count(pick.begin(), pick.end(), ',')) + 1;
              ChannelsParams p;
              for (char c : pick)
                if (c != ',') p.pick.push_back(c - '0');
              auto src = random_image(s.w, s.h, {d, ci}, rng);
              auto want = make_dst(s.w, s.h, {d, co}, rng);
              channels(src, want, p, {Backend::ref});
              auto in = to_backend(be, src, rng, tight);
              auto got = make_dst_on(be, s.w, s.h, {d, co}, rng, tight);
              channels(in, got, p, {be});
              ASSERT_EQ(compare(to_host(got), want), "");
            }
}

TEST(Channels, SwappingTwiceIsTheIdentity) {
  auto rng = make_rng(0xC0106);
  auto src = random_image(31, 9, {Depth::f32, 3}, rng);
  Image out = Pipeline::parse("channels pick=2,1,0 | channels pick=2,1,0").run(src);
  EXPECT_EQ(compare(out, src), "");
}

TEST(Channels, BadPicksAreRefusedNamingTheParameter) {
  Image rgb(4, 2, {Depth::u8, 3});
  const BadCase cases[] = {
      {"no pick",
       [] { Pipeline::parse("channels"); },
       Status::invalid_argument,
       {"channels:", "pick"}},
      {"index 4",
       [] { Pipeline::parse("channels pick=4"); },
       Status::invalid_argument,
       {"channels:", "pick must be a comma-separated list of 1 to 4 channel indices 0..3"}},
      {"five",
       [] { Pipeline::parse("channels pick=0,1,2,3,0"); },
       Status::invalid_argument,
       {"channels:", "pick must name 1 to 4 channels (got 5)"}},
      {"empty item",
       [] { Pipeline::parse("channels pick=0,,1"); },
       Status::invalid_argument,
       {"channels:", "(got '0,,1')"}},
      {"a word",
       [] { Pipeline::parse("channels pick=rgb"); },
       Status::invalid_argument,
       {"channels:", "(got 'rgb')"}},
      {"alpha of RGB",
       [&] { Pipeline::parse("channels pick=3").run(rgb); },
       Status::invalid_argument,
       {"channels:", "pick index 3 is not a channel of the 3-channel source (indices 0..2)"}},
      {"dst channels",
       [&] {
         Image two(4, 2, {Depth::u8, 2});
         channels(rgb, two, {{2, 1, 0}});
       },
       Status::invalid_argument,
       {"channels:", "dst"}},
  };
  expect_errors(cases);
}

}  // namespace
}  // namespace pixflow::test
