// add, sub, absdiff, mul: ref vs OpenCV, backends vs ref, saturation rules, bad input, CLI.
#include "tests/common.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

namespace pixflow::test {
namespace {

const Depth kAll[] = {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32};
const ArithOp kOps[] = {ArithOp::add, ArithOp::sub, ArithOp::absdiff, ArithOp::mul};

// Input ranges for the OpenCV comparison. OpenCV wraps s32 add/sub/absdiff/mul on int32
// overflow and its scalar tail of u16 mul overflows int (docs/ops/arith.md), so those
// inputs are kept where OpenCV is well defined; saturation is tested separately.
[[maybe_unused]] void range_for(Depth d, ArithOp op, double& lo, double& hi) {
  lo = hi = 0;  // depth default
  if (d == Depth::s32)
    lo = op == ArithOp::mul ? -40000 : -1000000000, hi = op == ArithOp::mul ? 40000 : 1000000000;
  if (d == Depth::u16 && op == ArithOp::mul) lo = 0, hi = 46340;   // 46340^2 < 2^31
  if (d == Depth::s16 && op == ArithOp::mul) lo = -400, hi = 400;  // also saturates often
  if (d == Depth::u8 && op == ArithOp::mul) lo = 0, hi = 40;
}

#if PIXFLOW_HAVE_OPENCV
void cv_op(ArithOp op, const cv::Mat& a, const cv::_InputArray& b, cv::Mat& out) {
  switch (op) {
    case ArithOp::add:
      cv::add(a, b, out);
      break;
    case ArithOp::sub:
      cv::subtract(a, b, out);
      break;
    case ArithOp::absdiff:
      cv::absdiff(a, b, out);
      break;
    case ArithOp::mul:
      cv::multiply(a, b, out);
      break;
  }
}

TEST(Arith, ImageImageRefMatchesOpenCVExactlyForEveryDepthAndChannelCount) {
  auto rng = make_rng(0xA0201);
  auto sizes = awkward_sizes();
  sizes.push_back({1920, 1080});
  for (ArithOp op : kOps)
    for (Depth d : kAll)
      for (int ch : {1, 2, 3, 4})
        for (Size s : sizes) {
          if (s.w == 1920 && (d != Depth::u8 || ch != 3)) continue;
          PIXFLOW_TRACE(testing::Message() << arith_op_name(op) << " " << depth_name(d) << "x" << ch
                                           << " " << s.w << "x" << s.h);
          double lo, hi;
          range_for(d, op, lo, hi);
          auto a = random_image(s.w, s.h, {d, ch}, rng, false, lo, hi);
          auto b = random_image(s.w, s.h, {d, ch}, rng, false, lo, hi);
          auto got = make_dst(s.w, s.h, {d, ch}, rng);
          arith(a, b, got, op, {Backend::ref});
          cv::Mat want;
          cv_op(op, to_mat(a), to_mat(b), want);
          ASSERT_EQ(compare(got, view_of(want)), "");
        }
}

TEST(Arith, ImageScalarRefMatchesOpenCVExactlyForIntegerValues) {
  auto rng = make_rng(0xA0202);
  for (ArithOp op : kOps)
    for (Depth d : kAll)
      for (int ch : {1, 3, 4})
        for (double v : {0.0, 7.0, -13.0, 300.0, 70000.0})
          for (Size s : std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {101, 67}}) {
            PIXFLOW_TRACE(testing::Message() << arith_op_name(op) << " " << depth_name(d) << "x"
                                             << ch << " value=" << v << " " << s.w << "x" << s.h);
            double lo = 0, hi = 0;
            if (d == Depth::s32) lo = -1000000, hi = 1000000;
            // OpenCV's scalar multiply goes through int and overflows once |a * v| >= 2^31
            // (u16 * 70000 gives 0 there): keep |a * v| below that; saturation of the product
            // itself is still exercised (u8, s16, u16 * 300).
            if (op == ArithOp::mul && v != 0 && d != Depth::f32) {
              const double bound = std::floor(2147483647.0 / std::fabs(v));
              const double dlo = d == Depth::u8 || d == Depth::u16 ? 0
                                 : d == Depth::s16                 ? -32768
                                                                   : -1000000;
              const double dhi = d == Depth::u8    ? 255
                                 : d == Depth::u16 ? 65535
                                 : d == Depth::s16 ? 32767
                                                   : 1000000;
              lo = std::max(dlo, -bound), hi = std::min(dhi, bound);
            }
            auto a = random_image(s.w, s.h, {d, ch}, rng, false, lo, hi);
            auto got = make_dst(s.w, s.h, {d, ch}, rng);
            arith(a, v, got, op, {Backend::ref});
            cv::Mat want;
            cv_op(op, to_mat(a), cv::Scalar::all(v), want);
            ASSERT_EQ(compare(got, view_of(want)), "");
          }
}
#else
TEST(Arith, ImageImageRefMatchesOpenCVExactlyForEveryDepthAndChannelCount) {
  GTEST_SKIP() << "built without OpenCV (C++): ref vs cv::add etc. not checked";
}
TEST(Arith, ImageScalarRefMatchesOpenCVExactlyForIntegerValues) {
  GTEST_SKIP() << "built without OpenCV (C++): ref vs cv::add etc. not checked";
}
#endif

// One sample through the reference.
double one(Depth d, double a, double b, ArithOp op, bool scalar) {
  Image ia(1, 1, {d, 1}), ib(1, 1, {d, 1}), out(1, 1, {d, 1});
  auto put = [&](Image& im, double v) {
    switch (d) {
      case Depth::u8:
        im.row<std::uint8_t>(0)[0] = std::uint8_t(v);
        break;
      case Depth::u16:
        im.row<std::uint16_t>(0)[0] = std::uint16_t(v);
        break;
      case Depth::s16:
        im.row<std::int16_t>(0)[0] = std::int16_t(v);
        break;
      case Depth::s32:
        im.row<std::int32_t>(0)[0] = std::int32_t(v);
        break;
      case Depth::f32:
        im.row<float>(0)[0] = float(v);
        break;
    }
  };
  put(ia, a);
  if (scalar) {
    arith(ia, b, out, op, {Backend::ref});
  } else {
    put(ib, b);
    arith(ia, ib, out, op, {Backend::ref});
  }
  return sample(out.view(), 0, 0, 0);
}

TEST(Arith, IntegersSaturateInsteadOfWrappingAndScalarsRoundHalfToEven) {
  const double i32max = 2147483647.0, i32min = -2147483648.0;
  struct Case {
    Depth d;
    ArithOp op;
    double a, b;
    bool scalar;
    double want;
  };
  const Case cases[] = {
      // OpenCV 4.6 wraps these (s32 add/sub/absdiff/mul, u16 mul tail): we saturate.
      {Depth::s32, ArithOp::add, 2e9, 2e9, false, i32max},
      {Depth::s32, ArithOp::sub, -2e9, 2e9, false, i32min},
      {Depth::s32, ArithOp::absdiff, 2e9, -2e9, false, i32max},
      {Depth::s32, ArithOp::mul, 2e9, 2e9, false, i32max},
      {Depth::s32, ArithOp::mul, -2147483648.0, -2147483648.0, false, i32max},
      {Depth::s32, ArithOp::mul, -2e9, 3, false, i32min},
      {Depth::u16, ArithOp::mul, 60000, 60000, false, 65535},
      {Depth::u16, ArithOp::sub, 0, 1, false, 0},
      {Depth::s16, ArithOp::add, 32767, 1, false, 32767},
      {Depth::s16, ArithOp::absdiff, -32768, 32767, false, 32767},
      {Depth::u8, ArithOp::mul, 16, 16, false, 255},
      {Depth::u8, ArithOp::absdiff, 3, 250, false, 247},
      // Scalars: double result, round half to even (OpenCV rounds the scalar first for
      // add/sub/absdiff: 101 + 2.5 -> 103 there).
      {Depth::u8, ArithOp::add, 101, 2.5, true, 104},
      {Depth::u8, ArithOp::add, 100, 2.5, true, 102},
      {Depth::u8, ArithOp::sub, 101, 0.5, true, 100},
      {Depth::u8, ArithOp::absdiff, 101, 2.5, true, 98},
      {Depth::u8, ArithOp::mul, 3, 0.5, true, 2},
      {Depth::u8, ArithOp::mul, 5, 0.5, true, 2},
      {Depth::u8, ArithOp::mul, 101, 1.5, true, 152},
      {Depth::u8, ArithOp::add, 10, -20.5, true, 0},
      {Depth::s16, ArithOp::mul, -3, 0.5, true, -2},
      {Depth::s32, ArithOp::add, 2147483647.0, 1, true, i32max},
      {Depth::s32, ArithOp::mul, 3, -1e12, true, i32min},
      {Depth::f32, ArithOp::add, 1, 0.1, true, double(float(1.0 + 0.1))},
      {Depth::f32, ArithOp::absdiff, -1, 0.5, false, 1.5},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << depth_name(c.d) << " " << arith_op_name(c.op) << " " << c.a
                                    << (c.scalar ? " value " : " image ") << c.b);
    EXPECT_EQ(one(c.d, c.a, c.b, c.op, c.scalar), c.want);
  }
}

TEST(Arith, EveryBackendMatchesRefExactlyImageAndScalarFormsAndInPlace) {
  auto rng = make_rng(0xA0203);
  auto sizes = std::vector<Size>{{1, 1}, {1, 9}, {9, 1}, {17, 13}, {101, 67}, {1920, 1080}};
  for (Backend be : test_backends_for("add"))
    for (ArithOp op : kOps)
      for (Depth d : kAll)
        for (int ch : {1, 3, 4})
          for (Size s : sizes) {
            if (s.w == 1920 && (ch != 4 || d != Depth::u8)) continue;
            PIXFLOW_TRACE(testing::Message()
                          << backend_name(be) << " " << arith_op_name(op) << " " << depth_name(d)
                          << "x" << ch << " " << s.w << "x" << s.h);
            auto a = random_image(s.w, s.h, {d, ch}, rng);
            auto b = random_image(s.w, s.h, {d, ch}, rng);
            const double v = d == Depth::f32 ? 3.25 : 37.5;
            auto want = make_dst(s.w, s.h, {d, ch}, rng), want_v = make_dst(s.w, s.h, {d, ch}, rng);
            arith(a, b, want, op, {Backend::ref});
            arith(a, v, want_v, op, {Backend::ref});
            auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
            auto got = make_dst_on(be, s.w, s.h, {d, ch}, rng);
            arith(da, db, got, op, {be});
            ASSERT_EQ(compare(to_host(got), want), "");
            auto got_v = make_dst_on(be, s.w, s.h, {d, ch}, rng);
            arith(da, v, got_v, op, {be});
            ASSERT_EQ(compare(to_host(got_v), want_v), "");
            // In place: dst identical to a, then to b.
            arith(da, db, da.view, op, {be});
            ASSERT_EQ(compare(to_host(da), want), "");
            auto da2 = to_backend(be, a, rng);
            arith(da2, db, db.view, op, {be});
            ASSERT_EQ(compare(to_host(db), want), "");
          }
}

// The CUDA kernels' grid (src/backends/cuda/arith.cu: one 16-byte chunk a thread, the chunks
// flat in row-major order, so blocks span row ends): images of many blocks, the row's partial
// last chunk (widths not a multiple of 16 bytes) and a row of whole chunks (512 x 33), views
// that are 16-byte aligned (tight: the vector path and, for u8 image-image, the packed words)
// and not (padded: the byte-wise path), image and scalar forms, in place. Every depth; the
// 4100 x 1100 case (u8x1, u8x3, f32x1) also spans several row groups (groups of <= 2^18
// chunks: 2, 4 and 5 of them).
TEST(Arith, EveryBackendMatchesRefOnManyTiles) {
  auto rng = make_rng(0xA0209);
  const std::vector<Size> sizes = {{517, 70}, {600, 150}, {300, 97}, {512, 33}, {4100, 1100}};
  for (Backend be : test_backends_for("add"))
    for (ArithOp op : kOps)
      for (Depth d : kAll)
        for (int ch : {1, 3, 4})
          for (Size s : sizes)
            for (bool tight : {true, false}) {
              if (s.w == 4100 && !((d == Depth::u8 && ch != 4) || (d == Depth::f32 && ch == 1)))
                continue;
              PIXFLOW_TRACE(testing::Message() << backend_name(be) << " " << arith_op_name(op)
                                               << " " << depth_name(d) << "x" << ch << " " << s.w
                                               << "x" << s.h << (tight ? " aligned" : " padded"));
              auto a = random_image(s.w, s.h, {d, ch}, rng);
              auto b = random_image(s.w, s.h, {d, ch}, rng);
              const double v = d == Depth::f32 ? -3.25 : 37.5;
              auto want = make_dst(s.w, s.h, {d, ch}, rng);
              auto want_v = make_dst(s.w, s.h, {d, ch}, rng);
              arith(a, b, want, op, {Backend::ref});
              arith(a, v, want_v, op, {Backend::ref});
              auto da = to_backend(be, a, rng, tight), db = to_backend(be, b, rng, tight);
              auto got = make_dst_on(be, s.w, s.h, {d, ch}, rng, tight);
              arith(da, db, got, op, {be});
              ASSERT_EQ(compare(to_host(got), want), "");
              auto got_v = make_dst_on(be, s.w, s.h, {d, ch}, rng, tight);
              arith(da, v, got_v, op, {be});
              ASSERT_EQ(compare(to_host(got_v), want_v), "");
              arith(da, db, da.view, op, {be});  // in place: dst identical to a
              ASSERT_EQ(compare(to_host(da), want), "");
            }
}

// The SIMD kernels (src/backends/cpu/simd/arith.cpp) once per SIMD target: widths around
// the vector lengths (whole vectors, tails), saturation at both ends, scalars with halves
// (round half to even), negative and huge scalars, every depth.
TEST(Arith, EveryBackendMatchesRefOnEverySimdPath) {
  auto rng = make_rng(0xA0207);
  const std::vector<Size> sizes = {{263, 37}, {64, 3}, {31, 2}, {1, 1}};
  for (const char* op : {"add", "sub", "absdiff", "mul"})
    for (Depth d : kAll)
      for (int ch : {1, 3})
        for (Size s : sizes) {
          ASSERT_TRUE(backends_match_ref(op, "with=random", {d, ch}, s, rng));
          for (const char* v : {"0.5", "-2.5", "37.5", "-1000.25", "3e9", "1.0000001"})
            ASSERT_TRUE(backends_match_ref(op, std::string("value=") + v, {d, ch}, s, rng));
        }
}

// s32 image-image on every SIMD target: every pair of values at and around the points
// where the int64 result leaves the s32 range (the kernel's overflow test by signs, the
// unsigned absdiff, the product in double lanes near 2^31 and 2^53), at positions that
// fill whole vectors and a tail.
TEST(Arith, S32SaturatesExactlyAtTheRangeEdgesOnEverySimdTarget) {
  auto rng = make_rng(0xA0208);
  const std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  const std::int32_t hi = std::numeric_limits<std::int32_t>::max();
  const std::int32_t e[] = {lo, lo + 1, -1073741824, -94906267, -46341,   -46340,  -2,     -1, 0, 1,
                            2,  46340,  46341,       65536,     94906266, 1 << 30, hi - 1, hi};
  const std::int64_t n = std::size(e);
  auto a = random_image(n * n, 2, {Depth::s32, 1}, rng);
  auto b = random_image(n * n, 2, {Depth::s32, 1}, rng);
  for (std::int64_t i = 0; i < n * n; ++i) {  // row 0: (e[i % n], e[i / n]); row 1: swapped
    a.view.row<std::int32_t>(0)[i] = b.view.row<std::int32_t>(1)[i] = e[i % n];
    b.view.row<std::int32_t>(0)[i] = a.view.row<std::int32_t>(1)[i] = e[i / n];
  }
  for (ArithOp op : kOps) {
    auto want = make_dst(n * n, 2, {Depth::s32, 1}, rng);
    arith(a, b, want, op, {Backend::ref});
    const std::int64_t x = e[1], y = e[0];  // lo + 1 (op) lo, by the rule's own int64
    if (op == ArithOp::sub) {
      ASSERT_EQ(want.view.row<std::int32_t>(0)[1], x - y);  // = 1
    }
    if (op == ArithOp::add) {
      ASSERT_EQ(want.view.row<std::int32_t>(0)[1], lo);  // saturated
    }
    for (Backend be : test_backends_for("add"))
      for (const std::string& target : cpu_targets_for(be)) {
        PIXFLOW_TRACE(testing::Message()
                      << backend_name(be) << " " << target << " " << arith_op_name(op));
        SimdTargetScope forced(target);
        auto da = to_backend(be, a, rng), db = to_backend(be, b, rng);
        auto got = make_dst_on(be, n * n, 2, {Depth::s32, 1}, rng);
        arith(da, db, got, op, {be});
        ASSERT_EQ(compare(to_host(got), want), "");
      }
  }
}

TEST(Arith, MetamorphicIdentitiesHold) {
  auto rng = make_rng(0xA0204);
  for (Depth d : kAll)
    for (int ch : {1, 3}) {
      PIXFLOW_TRACE(testing::Message() << depth_name(d) << "x" << ch);
      auto a = random_image(23, 9, {d, ch}, rng), b = random_image(23, 9, {d, ch}, rng);
      auto x = make_dst(23, 9, {d, ch}, rng), y = make_dst(23, 9, {d, ch}, rng);
      arith(a, 0.0, x, ArithOp::add, {Backend::ref});  // a + 0 == a
      EXPECT_EQ(compare(x, a), "");
      arith(a, 1.0, x, ArithOp::mul, {Backend::ref});  // a * 1 == a
      EXPECT_EQ(compare(x, a), "");
      arith(a, a, x, ArithOp::absdiff, {Backend::ref});  // |a - a| == 0
      arith(a, a, y, ArithOp::sub, {Backend::ref});      // a - a == 0
      EXPECT_EQ(compare(x, y), "");
      for (std::int64_t yy = 0; yy < 9; ++yy) EXPECT_EQ(sample(x, 0, yy, 0), 0.0);
      arith(a, b, x, ArithOp::absdiff, {Backend::ref});  // symmetric
      arith(b, a, y, ArithOp::absdiff, {Backend::ref});
      EXPECT_EQ(compare(x, y), "");
      arith(a, b, x, ArithOp::add, {Backend::ref});  // commutative
      arith(b, a, y, ArithOp::add, {Backend::ref});
      EXPECT_EQ(compare(x, y), "");
    }
}

// Depths, dst, empty and overlapping images of the scalar form, value parsing: SchemaBadInput
// (tests/schema_test.cpp). Here: the second operand, the scalar, the op and the image form's
// overlaps.
TEST(Arith, BadInputTableGivesStatusAndNamesOpAndParameter) {
  Image a(8, 5, {Depth::u8, 3}), b(8, 5, {Depth::u8, 3}), d(8, 5, {Depth::u8, 3});
  Image b_small(7, 5, {Depth::u8, 3}), b_fmt(8, 5, {Depth::u16, 3});
  Image big(9, 5, {Depth::u8, 3});
  const ImageView shifted = big.view().roi(1, 0, 8, 5);  // overlaps big's first 8 columns
  const ImageView first = big.view().roi(0, 0, 8, 5);
  const BadCase cases[] = {
      {"b size",
       [&] { arith(a, b_small, d, ArithOp::add); },
       Status::invalid_argument,
       {"add:", "b must"}},
      {"b format",
       [&] { arith(a, b_fmt, d, ArithOp::sub); },
       Status::invalid_argument,
       {"sub:", "b must", "u16x3"}},
      {"nan value",
       [&] { arith(a, std::nan(""), d, ArithOp::absdiff); },
       Status::invalid_argument,
       {"absdiff:", "value"}},
      {"inf value",
       [&] { arith(a, INFINITY, d, ArithOp::add); },
       Status::invalid_argument,
       {"add:", "value"}},
      {"bad op", [&] { arith(a, b, d, ArithOp(42)); }, Status::invalid_argument, {"arith:", "op"}},
      {"partial overlap a",
       [&] { arith(first, b, shifted, ArithOp::add); },
       Status::invalid_argument,
       {"add:", "overlap"}},
      {"partial overlap b",
       [&] { arith(a, first, shifted, ArithOp::add); },
       Status::invalid_argument,
       {"add:", "overlap"}},
  };
  expect_errors(cases);
}

TEST(Arith, CliStageNeedsExactlyOneOfWithAndValue) {
  auto rng = make_rng(0xA0205);
  auto src = random_image(9, 4, {Depth::s16, 3}, rng);
  Image out = Pipeline::parse("mul value=-2.5").run(src);
  auto want = make_dst(9, 4, {Depth::s16, 3}, rng);
  arith(src, -2.5, want, ArithOp::mul, {Backend::ref});
  EXPECT_EQ(compare(out, want), "");
  expect_error([] { Pipeline::parse("add"); }, Status::invalid_argument,
               {"add:", "with", "value", "neither"});
  expect_error([] { Pipeline::parse("sub with=x.png value=3"); }, Status::invalid_argument,
               {"sub:", "both"});
}

TEST(Arith, CliWithFileMustMatchTheInputAtRunTime) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pixflow_arith_" + std::to_string(run_seed()) + ".png"))
                               .string();
  Image other(5, 4, {Depth::u8, 1});
  for (std::int64_t y = 0; y < 4; ++y)
    for (std::int64_t x = 0; x < 5; ++x) other.row<std::uint8_t>(y)[x] = std::uint8_t(10 * x + y);
  try {
    write_image(path, other);
    (void)read_image(path);
  } catch (const Error& e) {
    std::remove(path.c_str());
    GTEST_SKIP() << "PNG codec not available in this build (" << e.what() << ")";
  }
  auto rng = make_rng(0xA0206);
  auto src = random_image(5, 4, {Depth::u8, 1}, rng);
  Image out = Pipeline::parse("add with=" + path).run(src);
  auto want = make_dst(5, 4, {Depth::u8, 1}, rng);
  arith(src, other, want, ArithOp::add, {Backend::ref});
  EXPECT_EQ(compare(out, want), "");
  auto wrong = random_image(6, 4, {Depth::u8, 1}, rng);
  const auto p = Pipeline::parse("add with=" + path);
  expect_error([&] { p.run(wrong); }, Status::invalid_argument,
               {"add:", "with image", "5x4 u8x1", "6x4 u8x1"});
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pixflow::test
