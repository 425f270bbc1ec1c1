// epsilon: ref vs an independent brute-force definition (double math, its own border code),
// every backend vs ref, metamorphic checks, bad input. OpenCV has no epsilon filter.
#include "tests/common.hpp"

#include <cmath>

#include "src/ref/ref.hpp"

namespace pixflow::test {
namespace {

// Border written independently of detail::border_index (iterative reflection).
std::int64_t fold(std::int64_t p, std::int64_t n, BorderType t) {
  switch (t) {
    case BorderType::replicate:
      return std::min(std::max(p, std::int64_t(0)), n - 1);
    case BorderType::wrap:
      return ((p % n) + n) % n;
    case BorderType::reflect:
      while (p < 0 || p >= n) p = p < 0 ? -p - 1 : 2 * n - 1 - p;
      return p;
    case BorderType::reflect101:
      if (n == 1) return 0;
      while (p < 0 || p >= n) p = p < 0 ? -p : 2 * n - 2 - p;
      return p;
    case BorderType::constant:
      return (p < 0 || p >= n) ? -1 : p;
  }
  return -1;
}

// The definition: mean (double) of window values v with |v - centre| <= t; u8 rounds half
// up (floor(mean + 0.5)), f32 rounds the double mean to float.
Image brute_force(const ConstImageView& src, const EpsilonParams& p) {
  Image out(src.width(), src.height(), src.format());
  const int ch = src.channels();
  const bool u8 = src.depth() == Depth::u8;
  const double cval = u8 ? std::min(255.0, std::max(0.0, std::rint(p.border.value)))
                         : double(float(p.border.value));
  for (std::int64_t y = 0; y < src.height(); ++y)
    for (std::int64_t x = 0; x < src.width(); ++x)
      for (int c = 0; c < ch; ++c) {
        const double centre = sample(src, x, y, c);
        double sum = 0;
        int n = 0;
        for (int dy = -p.r; dy <= p.r; ++dy)
          for (int dx = -p.r; dx <= p.r; ++dx) {
            const auto xx = fold(x + dx, src.width(), p.border.type);
            const auto yy = fold(y + dy, src.height(), p.border.type);
            const double v = (xx < 0 || yy < 0) ? cval : sample(src, xx, yy, c);
            if (std::fabs(v - centre) <= p.t) sum += v, ++n;
          }
        if (u8)
          out.row<std::uint8_t>(y)[x * ch + c] = std::uint8_t(std::floor(sum / n + 0.5));
        else
          out.row<float>(y)[x * ch + c] = float(sum / n);
      }
  return out;
}

TEST(Epsilon, RefMatchesBruteForceDefinitionExactly) {
  auto rng = make_rng(0xe501);
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : awkward_sizes())
        for (int r : {0, 1, 2, 5})
          for (const Border& b : all_borders()) {
            const double t = d == Depth::u8 ? double(rng() % 60) : double(rng() % 800);
            EpsilonParams p{r, t, b};
            PIXFLOW_TRACE(testing::Message()
                          << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h << " r=" << r
                          << " t=" << t << " " << describe(b));
            auto src = random_image(s.w, s.h, {d, ch}, rng);
            auto got = make_dst(s.w, s.h, {d, ch}, rng);
            epsilon(src, got, p, {Backend::ref});
            ASSERT_EQ(compare(got, brute_force(src, p)), "");
          }
}

TEST(Epsilon, RefMatchesBruteForceOnLargeRadiusAnd1920x1080) {
  auto rng = make_rng(0xe502);
  {
    EpsilonParams p{32, 40, Border::reflect()};
    PIXFLOW_TRACE("u8x1 23x9 r=32 reflect (window larger than the image)");
    auto src = random_image(23, 9, {Depth::u8, 1}, rng);
    auto got = make_dst(23, 9, {Depth::u8, 1}, rng);
    epsilon(src, got, p, {Backend::ref});
    ASSERT_EQ(compare(got, brute_force(src, p)), "");
  }
  EpsilonParams p{1, 25, Border::reflect101()};
  PIXFLOW_TRACE("u8x1 1920x1080 r=1 t=25");
  auto src = random_image(1920, 1080, {Depth::u8, 1}, rng);
  auto got = make_dst(1920, 1080, {Depth::u8, 1}, rng);
  epsilon(src, got, p, {Backend::ref});
  ASSERT_EQ(compare(got, brute_force(src, p)), "");
}

// Random radii and sizes beyond the schema's examples (tests/schema_test.cpp sweeps those).
TEST(Epsilon, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0xe503);
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 3, 4})
      for (Size s : std::vector<Size>{{1, 1}, {1, 40}, {40, 1}, {17, 13}, {203, 101}})
        for (const Border& b : all_borders()) {
          const std::string p = "r=" + std::to_string(rng() % 4) +
                                (d == Depth::u8 ? " t=30 " : " t=400 ") + border_params(b);
          ASSERT_TRUE(backends_match_ref("epsilon", p, {d, ch}, s, rng));
        }
}

// The SIMD kernel's paths: every channel count, sizes around and beyond the vector widths,
// thresholds 0 / fractional / >= 255 (every sample counts), u8 radii with the 16-bit sum
// (r <= 7) and with the per-row flush (r >= 8), the largest radius.
TEST(Epsilon, EveryBackendMatchesRefOnEveryKernelPath) {
  auto rng = make_rng(0xe505);
  for (Depth d : {Depth::u8, Depth::f32})
    for (int ch : {1, 2, 3, 4})
      for (Size s : std::vector<Size>{{263, 37}, {1000, 5}, {33, 4}, {7, 9}})
        for (const Border& b : all_borders()) {
          const int r = std::vector<int>{1, 2, 7, 8}[rng() % 4];
          const std::string t = std::vector<std::string>{"0", "12.5", "30", "300"}[rng() % 4];
          const std::string p = "r=" + std::to_string(r) + " t=" + t + " " + border_params(b);
          PIXFLOW_TRACE(testing::Message()
                        << depth_name(d) << "x" << ch << " " << s.w << "x" << s.h << " " << p);
          ASSERT_TRUE(backends_match_ref("epsilon", p, {d, ch}, s, rng));
        }
  for (Depth d : {Depth::u8, Depth::f32})
    for (const std::string t : {"40", "1000"}) {
      const std::string p = "r=32 t=" + t + " border=reflect";
      PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x3 90x70 " << p);
      ASSERT_TRUE(backends_match_ref("epsilon", p, {d, 3}, {90, 70}, rng));
    }
}

// Images spanning several blocks of the CUDA u8 packed kernel (64 pixels x 32 rows a block)
// in x and y with partial blocks at the right and bottom, every border (constant 77, 300 and
// -7: saturated to 255 / 0), every channel count, radii of the packed kernel (1..7, both
// compare forms: t < 128 and t >= 128) and of the fallbacks (r = 0, r = 8, f32).
TEST(Epsilon, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0xe506);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  const std::vector<Size> sizes{{517, 70}, {600, 150}, {300, 97}, {65, 33}, {63, 31}};
  for (int ch : {1, 2, 3, 4})
    for (Size s : sizes)
      for (const Border& b : borders) {
        const int r = std::vector<int>{1, 2, 3, 4, 4, 5, 6, 7, 0, 8}[rng() % 10];
        const std::string t =
            std::vector<std::string>{"0", "5", "12.5", "20", "127", "128", "200", "255"}[rng() % 8];
        const std::string p = "r=" + std::to_string(r) + " t=" + t + " " + border_params(b);
        PIXFLOW_TRACE(testing::Message() << "u8x" << ch << " " << s.w << "x" << s.h << " " << p);
        ASSERT_TRUE(backends_match_ref("epsilon", p, {Depth::u8, ch}, s, rng));
      }
  // One large image: many blocks in both directions, the r = 4 case of the benchmark.
  for (int ch : {1, 3}) {
    const std::string p = "r=4 t=20 border=reflect101";
    PIXFLOW_TRACE(testing::Message() << "u8x" << ch << " 4100x1100 " << p);
    ASSERT_TRUE(backends_match_ref("epsilon", p, {Depth::u8, ch}, {4100, 1100}, rng));
  }
  // Every radius of the packed kernel (and r = 8, the generic one) with a threshold at each
  // side of 128.
  for (int r = 1; r <= 8; ++r)
    for (const std::string t : {"31", "150.5"}) {
      const std::string p = "r=" + std::to_string(r) + " t=" + t + " border=wrap";
      PIXFLOW_TRACE(testing::Message() << "u8x1 333x77 " << p);
      ASSERT_TRUE(backends_match_ref("epsilon", p, {Depth::u8, 1}, {333, 77}, rng));
    }
  // f32 (its own kernel for r 1..7, the generic one for r = 8): every channel count, blocks
  // of 128 x 32 outputs with partial ones, a random border of the list above.
  for (int ch : {1, 2, 3, 4})
    for (Size s : std::vector<Size>{{300, 97}, {517, 70}})
      for (int r : {1, 4, 7, 8}) {
        const std::string p = "r=" + std::to_string(r) + (r % 2 ? " t=300 " : " t=45.5 ") +
                              border_params(borders[rng() % borders.size()]);
        PIXFLOW_TRACE(testing::Message() << "f32x" << ch << " " << s.w << "x" << s.h << " " << p);
        ASSERT_TRUE(backends_match_ref("epsilon", p, {Depth::f32, ch}, s, rng));
      }
}

TEST(Epsilon, RadiusZeroIsCopyThresholdZeroOnConstantImageIsCopy) {
  auto rng = make_rng(0xe504);
  for (Depth d : {Depth::u8, Depth::f32}) {
    PIXFLOW_TRACE(depth_name(d));
    auto src = random_image(21, 14, {d, 3}, rng);
    auto got = make_dst(21, 14, {d, 3}, rng);
    epsilon(src, got, EpsilonParams{0, 1000, Border::constant(5)}, {Backend::ref});
    ASSERT_EQ(compare(got, src), "");
    // t = 0 keeps only values equal to the centre: their mean is the centre itself.
    epsilon(src, got, EpsilonParams{3, 0, Border::reflect()}, {Backend::ref});
    ASSERT_EQ(compare(got, src), "");
    // A constant image stays constant under any radius and threshold (non-constant border).
    auto flat = make_dst(21, 14, {d, 3}, rng);
    for (std::int64_t y = 0; y < 14; ++y)
      for (std::int64_t x = 0; x < 21 * 3; ++x) {
        if (d == Depth::u8)
          flat.view.row<std::uint8_t>(y)[x] = 99;
        else
          flat.view.row<float>(y)[x] = 99.25f;
      }
    epsilon(flat, got, EpsilonParams{4, 7, Border::wrap()}, {Backend::ref});
    ASSERT_EQ(compare(got, flat), "");
  }
}

}  // namespace
}  // namespace pixflow::test
