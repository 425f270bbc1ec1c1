// dot and matmul (API only): ref vs double sums, exact order, s32 saturation, backends, bad input.
#include "tests/common.hpp"

#include <cmath>
#include <limits>

#if PIXFLOW_HAVE_SIMD
#include "src/backends/cpu/simd/rows.hpp"
#endif

namespace pixflow::test {
namespace {

TEST(Dot, RefWithinFourUlpOfDoubleAndSumsInTheDocumentedOrder) {
  auto rng = make_rng(0xD0301);
  for (Size s : awkward_sizes()) {
    PIXFLOW_TRACE(testing::Message() << s.w << "x" << s.h);
    auto a = random_image(s.w, s.h, {Depth::f32, 4}, rng),
         b = random_image(s.w, s.h, {Depth::f32, 4}, rng);
    auto d = make_dst(s.w, s.h, {Depth::f32, 1}, rng);
    dot(a, b, d, {Backend::ref});
    for (std::int64_t y = 0; y < s.h; ++y)
      for (std::int64_t x = 0; x < s.w; ++x) {
        double exact = 0, mag = 0;
        for (int c = 0; c < 4; ++c) {
          exact += sample(a, x, y, c) * sample(b, x, y, c);
          mag += std::fabs(sample(a, x, y, c) * sample(b, x, y, c));
        }
        // 4 products + 3 sums in float: |err| <= 4u * sum|a_i b_i| (u = 2^-24), rounded up.
        ASSERT_LE(std::fabs(sample(d, x, y, 0) - exact), 4 * 0x1p-24 * mag) << x << "," << y;
      }
  }
  // ((1e8*1 + 1*1) + -1e8*1) + 1*1 = 1 in float (the 1 is lost at 1e8); any other order of
  // the sum gives 2 or 0.
  Image a(1, 1, {Depth::f32, 4}), b(1, 1, {Depth::f32, 4}), d(1, 1, {Depth::f32, 1});
  const float av[] = {1e8f, 1, -1e8f, 1};
  for (int c = 0; c < 4; ++c) a.row<float>(0)[c] = av[c], b.row<float>(0)[c] = 1;
  dot(a, b, d, {Backend::ref});
  EXPECT_EQ(sample(d.view(), 0, 0, 0), 1.0);
}

TEST(Dot, EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0xD0302);
  for (Backend be : test_backends_for("dot"))
    for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {1920, 1080}}) {
      PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << s.w << "x" << s.h);
      auto a = random_image(s.w, s.h, {Depth::f32, 4}, rng),
           b = random_image(s.w, s.h, {Depth::f32, 4}, rng);
      auto want = make_dst(s.w, s.h, {Depth::f32, 1}, rng);
      dot(a, b, want, {Backend::ref});
      auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
      auto got = make_dst_on(be, s.w, s.h, {Depth::f32, 1}, rng);
      dot(da, db, got, {be});
      ASSERT_EQ(compare(to_host(got), want), "");
    }
}

// |C - C_double| per element, relative to sum_k |a_ik b_kj| (the scale of the rounding
// errors; relative to |C| itself is meaningless under cancellation).
double matmul_f32_error(const ConstImageView& a, const ConstImageView& b, const ConstImageView& c) {
  double worst = 0;
  for (std::int64_t i = 0; i < a.height(); ++i)
    for (std::int64_t j = 0; j < b.width(); ++j) {
      double s = 0, mag = 0;
      for (std::int64_t k = 0; k < a.width(); ++k) {
        const double p = sample(a, k, i, 0) * sample(b, j, k, 0);
        s += p, mag += std::fabs(p);
      }
      const double e =
          mag > 0 ? std::fabs(sample(c, j, i, 0) - s) / mag : std::fabs(sample(c, j, i, 0));
      worst = std::max(worst, e);
    }
  return worst;
}

struct Mkn {
  std::int64_t m, k, n;
};
const Mkn kShapes[] = {{1, 1, 1}, {1, 97, 1}, {1, 1, 13}, {5, 1, 3}, {17, 13, 29}, {64, 300, 31}};

TEST(Matmul, F32RefWithinOneE5TimesKOfDoubleSumOnEveryBackend) {
  auto rng = make_rng(0xD0303);
  std::vector<Backend> backends = test_backends_for("matmul");
  backends.insert(backends.begin(), Backend::ref);
  for (Backend be : backends)
    for (Mkn s : kShapes) {
      PIXFLOW_TRACE(testing::Message()
                    << backend_name(be) << " M=" << s.m << " K=" << s.k << " N=" << s.n);
      auto a = random_image(s.k, s.m, {Depth::f32, 1}, rng, false, -1, 1);
      auto b = random_image(s.n, s.k, {Depth::f32, 1}, rng, false, -1, 1);
      auto da = to_backend(be == Backend::ref ? Backend::cpu : be, a, rng);
      auto db = to_backend(be == Backend::ref ? Backend::cpu : be, b, rng);
      auto c = make_dst_on(be == Backend::ref ? Backend::cpu : be, s.n, s.m, {Depth::f32, 1}, rng);
      matmul(da, db, c, {be});
      Image hc = to_host(c);
      const double err = matmul_f32_error(a, b, hc);
      EXPECT_LE(err, 1e-5 * double(s.k));
      // The serial float sum's classical bound: K * 2^-24 relative to sum |a b|.
      EXPECT_LE(err, double(s.k) * 0x1p-24);
    }
}

// The cpu backend's f32 kernel (src/backends/cpu/simd/linalg.cpp) is the reference's sums in
// the reference's order: bit-identical under every SIMD target, on shapes that cross its
// blocks (k blocks of 256, column blocks of 48 vectors, 4-row and 3-vector tiles) and leave
// tails of rows, vectors and columns; dot likewise on widths around every vector size.
TEST(Matmul, F32EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0xD0306);
  const Mkn shapes[] = {{1, 1, 16},   {3, 5, 17},  {4, 256, 48},  {5, 257, 47},
                        {7, 520, 50}, {2, 9, 800}, {9, 300, 1541}};
  for (Mkn s : shapes) {
    PIXFLOW_TRACE(testing::Message() << "M=" << s.m << " K=" << s.k << " N=" << s.n);
    auto a = random_image(s.k, s.m, {Depth::f32, 1}, rng, false, -1, 1);
    auto b = random_image(s.n, s.k, {Depth::f32, 1}, rng, false, -1, 1);
    a.view.row<float>(0)[0] = -0.0f;  // a first term of -0: 0 + (-0) is +0 on every path
    auto want = make_dst(s.n, s.m, {Depth::f32, 1}, rng);
    matmul(a, b, want, {Backend::ref});
    for (Backend be : test_backends_for("matmul"))
      for (const std::string& target : cpu_targets_for(be))
        for (int split : {0, 1}) {  // AVX-512 on full-width or on split (Zen 4) units
          PIXFLOW_TRACE(testing::Message()
                        << backend_name(be) << " " << target << " split " << split);
          SimdTargetScope forced(target);
#if PIXFLOW_HAVE_SIMD
          cpu::set_splits_512bit_for_test(split);
#endif
          auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
          auto got = make_dst_on(be, s.n, s.m, {Depth::f32, 1}, rng);
          matmul(da, db, got, {be});
#if PIXFLOW_HAVE_SIMD
          cpu::set_splits_512bit_for_test(-1);
#endif
          ASSERT_EQ(compare_bits(to_host(got), want), "");
        }
  }
  for (std::int64_t w : {3, 4, 5, 8, 15, 16, 17, 33, 67}) {
    PIXFLOW_TRACE(testing::Message() << "dot " << w << "x3");
    auto a = random_image(w, 3, {Depth::f32, 4}, rng), b = random_image(w, 3, {Depth::f32, 4}, rng);
    auto want = make_dst(w, 3, {Depth::f32, 1}, rng);
    dot(a, b, want, {Backend::ref});
    for (Backend be : test_backends_for("dot"))
      for (const std::string& target : cpu_targets_for(be)) {
        PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << target);
        SimdTargetScope forced(target);
        auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
        auto got = make_dst_on(be, w, 3, {Depth::f32, 1}, rng);
        dot(da, db, got, {be});
        ASSERT_EQ(compare_bits(to_host(got), want), "");
      }
  }
}

TEST(Matmul, S32IsExactAndSaturatesEvenBeyondInt64) {
  auto rng = make_rng(0xD0304);
  for (Mkn s : kShapes) {
    PIXFLOW_TRACE(testing::Message() << "M=" << s.m << " K=" << s.k << " N=" << s.n);
    auto a = random_image(s.k, s.m, {Depth::s32, 1}, rng, false, -100000, 100000);
    auto b = random_image(s.n, s.k, {Depth::s32, 1}, rng, false, -100000, 100000);
    auto c = make_dst(s.n, s.m, {Depth::s32, 1}, rng);
    matmul(a, b, c, {Backend::ref});
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        std::int64_t sum = 0;  // |a b| <= 1e10, K <= 300: no int64 overflow
        for (std::int64_t k = 0; k < s.k; ++k)
          sum += std::int64_t(sample(a, k, i, 0)) * std::int64_t(sample(b, j, k, 0));
        const double want = double(std::clamp<std::int64_t>(sum, INT32_MIN, INT32_MAX));
        ASSERT_EQ(sample(c, j, i, 0), want) << i << "," << j;
      }
  }
  // K = 2 with (-2^31)^2 twice: the true sum 2^63 overflows int64 (a wrapping int64 sum
  // would give INT32_MIN); the exact sum saturates to INT32_MAX.
  Image a(2, 1, {Depth::s32, 1}), b(1, 2, {Depth::s32, 1}), c(1, 1, {Depth::s32, 1});
  a.row<std::int32_t>(0)[0] = a.row<std::int32_t>(0)[1] = INT32_MIN;
  b.row<std::int32_t>(0)[0] = b.row<std::int32_t>(1)[0] = INT32_MIN;
  matmul(a, b, c, {Backend::ref});
  EXPECT_EQ(sample(c.view(), 0, 0, 0), double(INT32_MAX));
  b.row<std::int32_t>(1)[0] = INT32_MAX;  // 2^62 - 2^62 + 2^31 = 2^31 -> saturates
  matmul(a, b, c, {Backend::ref});
  EXPECT_EQ(sample(c.view(), 0, 0, 0), double(INT32_MAX));
  a.row<std::int32_t>(0)[1] = 1;                                  // 2^62 - 2^31 + ... : far above
  b.row<std::int32_t>(0)[0] = 1, b.row<std::int32_t>(1)[0] = -5;  // -> INT32_MIN
  matmul(a, b, c, {Backend::ref});
  EXPECT_EQ(sample(c.view(), 0, 0, 0), double(INT32_MIN));
}

TEST(Matmul, S32EveryBackendMatchesRefExactly) {
  auto rng = make_rng(0xD0305);
  for (Backend be : test_backends_for("matmul"))
    for (Mkn s : kShapes) {
      PIXFLOW_TRACE(testing::Message()
                    << backend_name(be) << " M=" << s.m << " K=" << s.k << " N=" << s.n);
      auto a = random_image(s.k, s.m, {Depth::s32, 1}, rng, false, INT32_MIN, INT32_MAX);
      auto b = random_image(s.n, s.k, {Depth::s32, 1}, rng, false, INT32_MIN, INT32_MAX);
      auto want = make_dst(s.n, s.m, {Depth::s32, 1}, rng);
      matmul(a, b, want, {Backend::ref});
      auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
      auto got = make_dst_on(be, s.n, s.m, {Depth::s32, 1}, rng);
      matmul(da, db, got, {be});
      ASSERT_EQ(compare(to_host(got), want), "");
    }
}

// Fills a (M x K) and b (K x N) for the s32 cases: 0 uniform over int32; 1 samples from the
// extremes {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX} and uniform (sums
// beyond int64 either way, most saturating; (-2^31)^2 = 2^62 twice is 2^63); 2 every sum
// out past int64 and back to an exact, unsaturated value: for k < 2h a_ik = +-(2^31 - 1)
// (sign by row) and b_kj = +-(2^31 - 1) for k < h, the opposite for h <= k < 2h (sign by
// column), so the partial sums climb to +-h (2^31 - 1)^2 (beyond 2^63 for h >= 3, beyond
// 2^64 and more for large K) and return to 0; the terms past 2h are small (|a b| <= 2^22).
void fill_s32_case(const ImageView& a, const ImageView& b, int mode, std::mt19937_64& rng) {
  const std::int64_t M = a.height(), K = a.width(), N = b.width();
  const std::int32_t extremes[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX};
  std::uniform_int_distribution<std::int32_t> any(INT32_MIN, INT32_MAX), small(-2048, 2048);
  std::uniform_int_distribution<int> pick(0, 7);
  auto extreme = [&] {
    const int e = pick(rng);
    return e < 7 ? extremes[e] : any(rng);
  };
  const std::int64_t h = K / 3;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t k = 0; k < K; ++k)
      a.row<std::int32_t>(i)[k] = mode == 0   ? any(rng)
                                  : mode == 1 ? extreme()
                                  : k < 2 * h ? (i % 2 ? INT32_MAX : -INT32_MAX)
                                              : small(rng);
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t j = 0; j < N; ++j)
      b.row<std::int32_t>(k)[j] = mode == 0   ? any(rng)
                                  : mode == 1 ? extreme()
                                  : k < 2 * h ? ((j % 3 == 1) != (k < h) ? INT32_MAX : -INT32_MAX)
                                              : small(rng);
}

// The cpu backend's s32 kernel (src/backends/cpu/simd/linalg.cpp: exact 128-bit sums kept
// as a wrapping sum and a sum of high halves) equals the reference under every SIMD target:
// M, K, N around the tiles (2 or 4 rows, 2 or 3 vectors of 2-8 lanes) and their tails, ROI
// views (padded, offset), sums beyond int64 in both directions that saturate or come back.
TEST(Matmul, S32EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0xD0307);
  std::vector<Mkn> shapes;
  for (std::int64_t m : {1, 2, 3, 5, 7, 17})
    for (std::int64_t k : {1, 2, 3, 7, 17, 33})
      for (std::int64_t n : {1, 2, 3, 7, 9, 17, 24, 25, 33, 49}) shapes.push_back({m, k, n});
  for (Mkn s : std::vector<Mkn>{{100, 130, 101}, {33, 257, 131}, {9, 1000, 77}, {130, 7, 3}})
    shapes.push_back(s);
  int mode = 0;
  for (Mkn s : shapes)
    for (int rep = 0; rep < 2; ++rep, mode = (mode + 1) % 3) {
      PIXFLOW_TRACE(testing::Message()
                    << "M=" << s.m << " K=" << s.k << " N=" << s.n << " mode " << mode);
      auto a = random_image(s.k, s.m, {Depth::s32, 1}, rng, false, INT32_MIN, INT32_MAX);
      auto b = random_image(s.n, s.k, {Depth::s32, 1}, rng, false, INT32_MIN, INT32_MAX);
      fill_s32_case(a.view, b.view, mode, rng);
      auto want = make_dst(s.n, s.m, {Depth::s32, 1}, rng);
      matmul(a, b, want, {Backend::ref});
      if (mode == 2 && s.k >= 9) {  // the case's claim: past int64 and back, unsaturated
        std::int64_t exact = 0;
        for (std::int64_t k = 2 * (s.k / 3); k < s.k; ++k)
          exact += std::int64_t(a.view.row<std::int32_t>(0)[k]) * b.view.row<std::int32_t>(k)[0];
        ASSERT_EQ(want.view.row<std::int32_t>(0)[0],
                  std::clamp<std::int64_t>(exact, INT32_MIN, INT32_MAX));
      }
      for (Backend be : test_backends_for("matmul"))
        for (const std::string& target : cpu_targets_for(be)) {  // (full width: no split path)
          PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << target);
          SimdTargetScope forced(target);
          auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
          auto got = make_dst_on(be, s.n, s.m, {Depth::s32, 1}, rng);
          matmul(da, db, got, {be});
          ASSERT_EQ(compare_bits(to_host(got), want), "");
        }
    }
}

TEST(Linalg, BadInputTableGivesStatusAndNamesOpAndParameter) {
  Image a4(6, 3, {Depth::f32, 4}), b4(6, 3, {Depth::f32, 4}), d1(6, 3, {Depth::f32, 1});
  Image a3(6, 3, {Depth::f32, 3}), u4(6, 3, {Depth::u8, 4}), b4s(5, 3, {Depth::f32, 4});
  Image ma(4, 3, {Depth::f32, 1}), mb(5, 4, {Depth::f32, 1}), mc(5, 3, {Depth::f32, 1});
  Image mb_bad(5, 5, {Depth::f32, 1}), mb_s32(5, 4, {Depth::s32, 1}), mc_bad(4, 3, {Depth::f32, 1});
  Image m8(4, 3, {Depth::u8, 1}), m8b(5, 4, {Depth::u8, 1}), m8c(5, 3, {Depth::u8, 1});
  Image big(5, 8, {Depth::f32, 1});
  const ImageView c_in_b = big.view().roi(0, 0, 5, 3);
  const ConstImageView b_over = big.view().roi(0, 2, 5, 4);
  const BadCase cases[] = {
      {"dot 3 channels", [&] { dot(a3, b4, d1); }, Status::unsupported, {"dot:", "a", "channels"}},
      {"dot u8", [&] { dot(u4, b4, d1); }, Status::unsupported, {"dot:", "a depth"}},
      {"dot size",
       [&] { dot(a4, b4s, d1); },
       Status::invalid_argument,
       {"dot:", "b must have a's size"}},
      {"dot dst",
       [&] { dot(a4, b4, b4); },
       Status::invalid_argument,
       {"dot:", "dst must be 6x3 f32x1"}},
      {"matmul K",
       [&] { matmul(ma, mb_bad, mc); },
       Status::invalid_argument,
       {"matmul:", "a is 3x4", "b is 5x5"}},
      {"matmul depths",
       [&] { matmul(ma, mb_s32, mc); },
       Status::unsupported,
       {"matmul:", "same depth"}},
      {"matmul u8", [&] { matmul(m8, m8b, m8c); }, Status::unsupported, {"matmul:", "a depth"}},
      {"matmul c shape",
       [&] { matmul(ma, mb, mc_bad); },
       Status::invalid_argument,
       {"matmul:", "dst must be 5x3 f32x1"}},
      {"matmul c overlaps b",
       [&] { matmul(ma, b_over, c_in_b); },
       Status::invalid_argument,
       {"matmul:", "overlap"}},
  };
  expect_errors(cases);
}

}  // namespace
}  // namespace pixflow::test
