// The CUDA bilateral's u8 bodies (src/backends/cuda/bilateral_u8_packed.hpp: sample words, the
// per-lane colour table addressed by one VABSDIFF (u8 x 1) or VABSDIFF4 + LEA (u8 x 3), bytes
// to floats through the mantissa, the compile-time tap order) run on the CPU: no GPU is needed,
// so CI checks the kernel's arithmetic everywhere. Each test builds the shared tile and the
// per-lane table exactly as bilateral.cu's bilateral_u8c1/c3_kernel do, runs
// bilateral_rows(_c3) for every thread of every block and compares every output byte with the
// reference (src/ref/bilateral.cpp).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "src/backends/cuda/bilateral_f32_lookup.hpp"
#include "src/backends/cuda/bilateral_u8_packed.hpp"
#include "src/base/bilateral_f32.hpp"
#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace bu = pixflow::cuda::bilateral_u8;
using bu::u32;

// The reference's tables (make_window / colour LUT of src/ref/bilateral.cpp), expression for
// expression, as bilateral.cu's make_tables.
struct Tables {
  std::vector<float> space, lut, lut3;  // lut: 256 colours; lut3: the u8 x 3 kernel's (766 deltas)
};
Tables make_tables(int radius, double sigma_color, double sigma_space) {
  Tables t;
  const double sc = sigma_color <= 0 ? 1.0 : sigma_color;
  const double ss = sigma_space <= 0 ? 1.0 : sigma_space;
  const double color_coeff = -0.5 / (sc * sc), space_coeff = -0.5 / (ss * ss);
  for (int i = -radius; i <= radius; ++i)
    for (int j = -radius; j <= radius; ++j) {
      const double r = std::sqrt(double(i) * i + double(j) * j);
      if (r > radius) continue;
      t.space.push_back(float(std::exp(r * r * space_coeff)));
    }
  // The colour table (256 deltas); check_image lays it out per lane as the kernel does.
  for (int d = 0; d < 256; ++d) t.lut.push_back(float(std::exp(double(d) * d * color_coeff)));
  t.lut3.resize(bu::kLut3Floats);
  for (int d = 0; d < bu::kLut3Deltas; ++d)
    for (int l = 0; l < bu::kTX; ++l)
      t.lut3[std::size_t(d * bu::kTX + l)] = float(std::exp(double(d) * d * color_coeff));
  return t;
}

std::uint8_t bordered(const ConstImageView& v, long long x, long long y, int c, const Border& b) {
  const long long xi = detail::border_index(x, v.width(), b.type);
  const long long yi = detail::border_index(y, v.height(), b.type);
  if (xi < 0 || yi < 0) return detail::saturate_cast<std::uint8_t>(b.value);
  return v.row<std::uint8_t>(yi)[xi * v.channels() + c];
}

// "" when the body matches the reference on every pixel, else the first mismatch.
template <int R>
std::string check_image(const TestImage& src, const BilateralParams& p) {
  const ConstImageView v = src.view;
  const int w = int(v.width()), h = int(v.height());
  auto rng = make_rng(1);
  auto want = make_dst(w, h, {Depth::u8, 1}, rng);
  ref::bilateral(v, want.view, p, detail::Rows{0, h});
  const Tables tab = make_tables(R, p.sigma_color, p.sigma_space);
  // The kernel's per-lane colour and product table (bilateral_u8c1_kernel fills it from
  // lut_value<R>, four floats per store).
  std::vector<float> lut(bu::kLutFloats);
  for (int f = 0; f < bu::kLutFloats; ++f)
    lut[std::size_t(f)] = bu::lut_value<R>(tab.lut.data(), tab.space.data(), f);
  constexpr int TH = bu::kTileH<R>;
  std::vector<u32> tile(std::size_t(TH) * bu::kTileWords);
  std::vector<std::uint8_t> bytes(std::size_t(TH) * bu::kTileW);
  for (long long by0 = 0; by0 < h; by0 += bu::kBH)
    for (long long bx0 = 0; bx0 < w; bx0 += bu::kBW) {
      for (int r = 0; r < TH; ++r)
        for (int i = 0; i < bu::kTileW; ++i)
          bytes[std::size_t(r * bu::kTileW + i)] =
              bordered(v, bx0 - bu::kMaxRadius + i, by0 - R + r, 0, p.border);
      std::memcpy(tile.data(), bytes.data(), bytes.size());  // little-endian words, as on the GPU
      for (int ty = 0; ty < bu::kTY; ++ty)
        for (int tx = 0; tx < bu::kTX; ++tx) {
          u32 out[bu::kRows];
          bu::bilateral_rows<R>(tile.data(), lut.data(), tab.space.data(), tx, ty * bu::kRows,
                                u32(tx) * 4u, out);
          for (int i = 0; i < bu::kRows; ++i)
            for (int j = 0; j < bu::kPX; ++j) {
              const long long x = bx0 + bu::kPX * tx + j, y = by0 + ty * bu::kRows + i;
              if (x >= w || y >= h) continue;
              const int got = int((out[i] >> (8 * j)) & 0xffu);
              const int ref = want.view.row<std::uint8_t>(y)[x];
              if (got != ref)
                return "d=" + std::to_string(p.d) + " " + describe(p.border) + " size " +
                       std::to_string(w) + "x" + std::to_string(h) + " at (" + std::to_string(x) +
                       ", " + std::to_string(y) + "): got " + std::to_string(got) + ", want " +
                       std::to_string(ref);
            }
        }
    }
  return "";
}

// The same for u8 x 3 (bilateral_rows_c3: tile of pixel words (c0, c1, c2, 0)).
template <int R>
std::string check_image_c3(const TestImage& src, const BilateralParams& p) {
  const ConstImageView v = src.view;
  const int w = int(v.width()), h = int(v.height());
  auto rng = make_rng(1);
  auto want = make_dst(w, h, {Depth::u8, 3}, rng);
  ref::bilateral(v, want.view, p, detail::Rows{0, h});
  const Tables tab = make_tables(R, p.sigma_color, p.sigma_space);
  constexpr int TH = bu::kTileH3<R>;
  std::vector<u32> tile(std::size_t(TH) * bu::kTileW3);
  for (long long by0 = 0; by0 < h; by0 += bu::kBH3)
    for (long long bx0 = 0; bx0 < w; bx0 += bu::kBW3) {
      for (int r = 0; r < TH; ++r)
        for (int i = 0; i < bu::kTileW3; ++i) {
          u32 word = 0;
          for (int c = 0; c < 3; ++c)
            word |= u32(bordered(v, bx0 - bu::kMaxRadius + i, by0 - R + r, c, p.border)) << (8 * c);
          tile[std::size_t(r * bu::kTileW3 + i)] = word;
        }
      for (int ty = 0; ty < bu::kTY3; ++ty)
        for (int tx = 0; tx < bu::kTX; ++tx) {
          u32 out[bu::kRows3];
          bu::bilateral_rows_c3<R>(tile.data(), tab.lut3.data(), tab.space.data(), tx,
                                   ty * bu::kRows3, u32(tx) * 4u, out);
          for (int i = 0; i < bu::kRows3; ++i)
            for (int c = 0; c < 3; ++c) {
              const long long x = bx0 + tx, y = by0 + ty * bu::kRows3 + i;
              if (x >= w || y >= h) continue;
              const int got = int((out[i] >> (8 * c)) & 0xffu);
              const int ref = want.view.row<std::uint8_t>(y)[3 * x + c];
              if (got != ref)
                return "u8x3 d=" + std::to_string(p.d) + " " + describe(p.border) + " size " +
                       std::to_string(w) + "x" + std::to_string(h) + " at (" + std::to_string(x) +
                       ", " + std::to_string(y) + ") channel " + std::to_string(c) + ": got " +
                       std::to_string(got) + ", want " + std::to_string(ref);
            }
        }
    }
  return "";
}

std::string check(const TestImage& src, const BilateralParams& p) {
  const bool c3 = src.view.channels() == 3;
  switch (p.d / 2 < 1 ? 1 : p.d / 2) {
    case 1:
      return c3 ? check_image_c3<1>(src, p) : check_image<1>(src, p);
    case 2:
      return c3 ? check_image_c3<2>(src, p) : check_image<2>(src, p);
    case 3:
      return c3 ? check_image_c3<3>(src, p) : check_image<3>(src, p);
    default:
      return c3 ? check_image_c3<4>(src, p) : check_image<4>(src, p);
  }
}

// The u8 x 1 body's sample words, exhaustively: every byte of every position of a word gives
// the float of the byte, and every (sample, centre, lane) the table entry (|v - c|, lane)'s
// byte offset delta * 256 + lane * 4 (the image tests below cannot see a wrong lane: every
// lane's copy holds the same values, and a wrong lane only costs bank conflicts).
TEST(BilateralPacked, SampleWordsGiveFloatsAndTableOffsets) {
  for (u32 v = 0; v < 256; ++v)
    for (int i = 0; i < 4; ++i) {
      const u32 word = (v << (8 * i)) | (0xA5u << (8 * ((i + 1) % 4)));  // other bytes set
      const u32 s = bu::sample_word(word, i);
      ASSERT_EQ(s, 0x47000000u | (v << 8)) << v << " " << i;
      ASSERT_EQ(bu::sample_float(s), float(v)) << v;
    }
  for (u32 v = 0; v < 256; ++v)
    for (u32 c = 0; c < 256; ++c)
      for (u32 lane = 0; lane < u32(bu::kTX); ++lane) {
        const u32 got =
            bu::lut_offset_words(bu::sample_word(v, 0), bu::sample_word(c << 16, 2), lane * 4u);
        ASSERT_EQ(got, (v > c ? v - c : c - v) * 256u + lane * 4u) << v << " " << c << " " << lane;
      }
}

// The product table serves every tap of its class: all of them have the reference's space
// weight bit for bit (same dx^2 + dy^2, so the same double distance), for any sigma_space; and
// the class is the largest (d = 9: 8 taps of 48).
template <int R>
void expect_product_class(double sigma_space) {
  const Tables t = make_tables(R, 75, sigma_space);
  int n = 0;
  for (int dy = -R; dy <= R; ++dy)
    for (int dx = -R; dx <= R; ++dx)
      if (dx * dx + dy * dy == bu::kProductR2<R>) {
        ++n;
        const float a = t.space[std::size_t(bu::tap_index(R, dy, dx))];
        const float b = t.space[std::size_t(bu::kProductTap<R>)];
        EXPECT_EQ(std::memcmp(&a, &b, 4), 0) << R << " " << dy << " " << dx << " " << sigma_space;
      }
  EXPECT_EQ(n, bu::taps_at(R, bu::kProductR2<R>));
  for (int r2 = 1; r2 <= R * R; ++r2) EXPECT_LE(bu::taps_at(R, r2), n) << R << " " << r2;
}

TEST(BilateralPacked, ProductClassSharesOneSpaceWeight) {
  static_assert(bu::kProductR2<4> == 5 && bu::taps_at(4, 5) == 8);
  for (double ss : {75.0, 3.0, 0.7, 1e-3, -1.0, 1e200}) {
    expect_product_class<1>(ss);
    expect_product_class<2>(ss);
    expect_product_class<3>(ss);
    expect_product_class<4>(ss);
  }
}

// Windows d = 1..9 (radius 1..4), narrow to wide colour sigmas and the degenerate ones (NaN
// weights: the reference writes 0), sizes below one word up to several blocks both ways
// (blocks are 128 x 32 outputs), every border (constant with 300 and -7: saturated to 255, 0).
TEST(BilateralPacked, U8BodiesMatchRefEveryLane) {
  auto rng = make_rng(0xb1a7);
  struct Case {
    int d;
    double sc, ss;
  };
  const Case cases[] = {{9, 75, 75}, {9, 10, 3},     {7, 30, 5},    {5, 40, 2},       {3, 75, 75},
                        {1, 30, 5},  {9, 1e-200, 3}, {9, 1e200, 3}, {5, 0.5, 1e-200}, {9, -1, -1}};
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  for (int ch : {1, 3})
    for (Size s : std::vector<Size>{{1, 1}, {3, 2}, {5, 9}, {129, 33}, {300, 97}, {131, 70}})
      for (const Border& b : borders)
        for (const Case& c : cases) {
          const BilateralParams p{c.d, c.sc, c.ss, b};
          const TestImage src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
          ASSERT_EQ(check(src, p), "");
        }
}

// Smooth content (small deltas: the low table rows, many lanes on one address) and extremes
// (deltas 0 and 255 only).
TEST(BilateralPacked, U8BodyMatchesRefOnRampsAndExtremes) {
  auto rng = make_rng(0xb1a8);
  for (int pattern = 0; pattern < 2; ++pattern) {
    TestImage src = random_image(263, 41, {Depth::u8, 1}, rng);
    for (std::int64_t y = 0; y < 41; ++y)
      for (std::int64_t x = 0; x < 263; ++x)
        src.view.row<std::uint8_t>(y)[x] =
            pattern == 0 ? std::uint8_t((x + 2 * y) & 255) : std::uint8_t((rng() & 1) * 255);
    for (int d : {3, 5, 7, 9}) ASSERT_EQ(check(src, {d, 50, 5, Border::reflect101()}), "");
  }
}

// The f32 kernels' colour weight (bilateral_f32_lookup.hpp: fminf clamp, the 2^23 + floor
// by a round-toward-zero add, the index from the float's bits, the pair table built as
// bilateral.cu's bilateral_f32_table does) against the rule (detail::bilateral_f32::weight), bit
// for bit: random deltas over 1.5 spans, every bin edge i / scale and its float neighbours
// (alpha an integer or an ulp either side), the span's end, 0, NaN, +inf, FLT_MAX, and the
// extreme scales (FLT_MAX, 0, NaN).
TEST(BilateralPacked, F32LookupMatchesTheRule) {
  namespace bf = pixflow::detail::bilateral_f32;
  auto rng = make_rng(0xb1aa);
  for (int cn : {1, 3}) {
    const int n = bf::bins(cn);
    const std::vector<float>& t = bf::table(cn);
    // As bilateral.cu's bilateral_f32_table builds it: T[i] = table_entry(i), then D[i] =
    // T[i + 1] - T[i] (T[N + 1] = 0).
    const double per_bin2 = bf::exponent_per_bin2(cn);
    std::vector<float> pairs(std::size_t(2 * (n + 1)));
    for (int i = 0; i <= n; ++i) pairs[std::size_t(2 * i)] = bf::table_entry(i, per_bin2);
    for (int i = 0; i <= n; ++i)
      pairs[std::size_t(2 * i + 1)] =
          (i < n ? pairs[std::size_t(2 * i + 2)] : 0.0f) - pairs[std::size_t(2 * i)];
    ASSERT_EQ(pairs, t);
    for (double sigma : {0.01, 1.0, 75.0, 1e-200, 1e200, std::nan("")}) {
      PIXFLOW_TRACE(testing::Message() << "cn=" << cn << " sigma_color=" << sigma);
      const float scale = bf::scale(sigma, cn);
      const double span = sigma * bf::kSqrt208;
      std::vector<float> deltas = {0.0f,
                                   std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::max(),
                                   std::numeric_limits<float>::denorm_min(),
                                   float(span),
                                   std::nextafter(float(span), 0.0f)};
      if (std::isfinite(span)) {
        std::uniform_real_distribution<double> any(0.0, 1.5 * span);
        for (int i = 0; i < 100000; ++i) deltas.push_back(float(any(rng)));
      }
      for (int i = 0; i <= n + 1; ++i) {
        const float edge = float(double(i) / double(scale));
        deltas.push_back(edge);
        deltas.push_back(std::nextafter(edge, 0.0f));
        deltas.push_back(std::nextafter(edge, 2 * edge + 1));
      }
      for (float d : deltas) {
        const float want = bf::weight(t.data(), n, scale, d);
        const float got = cuda::bilateral_f32::lookup(pairs.data(), float(n), scale, d);
        ASSERT_EQ(std::memcmp(&got, &want, 4), 0)
            << std::hexfloat << "delta=" << d << " got " << got << " want " << want;
      }
    }
  }
}

}  // namespace
}  // namespace pixflow::test
