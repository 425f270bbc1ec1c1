// The CUDA u8 epsilon kernel's arithmetic (src/backends/cuda/epsilon_u8_packed.hpp) on the
// CPU: the per-byte compare against |p - c| <= t in double for every byte pair and every
// integer threshold (and fractional / huge ones), the mean by multiply-high against the
// integer quotient for every sum of every count the kernel reaches, the byte shuffles, and
// whole blocks: planes and quad words built as the kernel's loader defines them (plane column
// 0 = pixel bx0 - r, row 0 = row by0 - r, the border rule outside), item_u8 for every item,
// every output byte against the reference. The GPU runs the same functions (epsilon.cu).
#include <cmath>
#include <cstring>
#include <vector>

#include "src/backends/cuda/epsilon_u8_packed.hpp"
#include "src/base/numeric.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace eu = pixflow::cuda::eps_u8;
using eu::u32;

u32 lanes4(int a, int b, int c, int d) {
  return u32(a) | u32(b) << 8 | u32(c) << 16 | u32(d) << 24;
}

// "" when in_flags gives 0x80 exactly in the lanes of `lanes` whose |p - c| <= t.
template <int kMode>
std::string check_flags(double t, u32 p, int c, u32 lanes) {
  const int T = eu::u8_threshold(t);
  const u32 f = eu::in_flags<kMode>(p, u32(c) * 0x01010101u, eu::u8_compare_k(T), lanes);
  for (int i = 0; i < 4; ++i) {
    const int v = int((p >> (8 * i)) & 0xff);
    const bool want = ((lanes >> (8 * i)) & 0x80) != 0 && std::fabs(double(v) - double(c)) <= t;
    if (((f >> (8 * i)) & 0xff) != (want ? 0x80u : 0u))
      return "t=" + std::to_string(t) + " c=" + std::to_string(c) + " p=" + std::to_string(v) +
             " lane " + std::to_string(i);
  }
  return "";
}

std::string check_flags_any(double t, u32 p, int c, u32 lanes) {
  switch (eu::u8_compare_mode(eu::u8_threshold(t))) {
    case 0:
      return check_flags<0>(t, p, c, lanes);
    case 1:
      return check_flags<1>(t, p, c, lanes);
    default:
      return check_flags<2>(t, p, c, lanes);
  }
}

TEST(EpsilonPacked, FlagsMatchTheRuleForEveryBytePairAndThreshold) {
  std::vector<double> ts;
  for (int T = 0; T <= 255; ++T) ts.push_back(T);
  for (double t : {0.5, 12.5, 19.999, 127.5, 128.25, 254.99, 255.0, 255.5, 300.0, 1e300})
    ts.push_back(t);
  for (double t : ts)
    for (int c = 0; c < 256; ++c)
      for (int p = 0; p < 256; p += 4) {
        const std::string e = check_flags_any(t, lanes4(p, p + 1, p + 2, p + 3), c, 0x80808080u);
        ASSERT_EQ(e, "");
      }
}

TEST(EpsilonPacked, FlagsKeepLanesIndependentAndMasked) {
  auto rng = make_rng(0xe5a1);
  for (int i = 0; i < 200000; ++i) {
    const u32 p = u32(rng());
    const int c = int(rng() % 256);
    const double t = std::vector<double>{0, 1, 7, 20, 127, 128, 200, 254, 255, 1000}[rng() % 10];
    const u32 lanes = eu::low_lanes(1 + int(rng() % 4));
    ASSERT_EQ(check_flags_any(t, p, c, lanes), "");
  }
  EXPECT_EQ(eu::low_lanes(1), 0x80u);
  EXPECT_EQ(eu::low_lanes(3), 0x808080u);
  EXPECT_EQ(eu::low_lanes(4), 0x80808080u);
}

TEST(EpsilonPacked, MeanIsTheIntegerQuotientForEverySumOfEveryCount) {
  for (u32 n = 1; n <= 225; ++n) {  // every count of r <= 7
    const u32 m = eu::mean_recip(n);
    for (u32 s = 0; s <= 255 * n; ++s)
      ASSERT_EQ(eu::mean_u8(s, n, m), (2 * s + n) / (2 * n)) << "n=" << n << " sum=" << s;
  }
  auto rng = make_rng(0xe5a2);
  for (u32 n = 226; n <= 1024; ++n) {
    const u32 m = eu::mean_recip(n);
    for (int i = 0; i < 300; ++i) {
      const u32 s = i < 2 ? (i == 0 ? 0 : 255 * n) : u32(rng() % (255 * n + 1));
      ASSERT_EQ(eu::mean_u8(s, n, m), (2 * s + n) / (2 * n)) << "n=" << n << " sum=" << s;
    }
  }
}

TEST(EpsilonPacked, ShufflesMoveTheRightBytes) {
  auto rng = make_rng(0xe5a3);
  for (int i = 0; i < 1000; ++i) {
    u32 r[4], q[4];
    for (u32& v : r) v = u32(rng());
    eu::transpose4(r[0], r[1], r[2], r[3], q);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) ASSERT_EQ((q[a] >> (8 * b)) & 0xff, (r[b] >> (8 * a)) & 0xff);
    for (int s = 0; s < 4; ++s) {
      const std::uint64_t both = std::uint64_t(r[1]) << 32 | r[0];
      ASSERT_EQ(eu::bytes_at(r[0], r[1], s), u32(both >> (8 * s)));
    }
  }
}

// Block shape of the emulation: any multiple of kJ wide works for the item; these are the
// kernel's (launch.cuh) so that the items run exactly as on the device.
constexpr int kPx = 64, kRows = 32;

std::uint8_t bordered(const ConstImageView& v, long long x, long long y, int c, const Border& b) {
  const long long xi = detail::border_index(x, v.width(), b.type);
  const long long yi = detail::border_index(y, v.height(), b.type);
  if (xi < 0 || yi < 0) return detail::saturate_cast<std::uint8_t>(b.value);
  return v.row<std::uint8_t>(yi)[xi * v.channels() + c];
}

template <int R, int kMode>
std::string check_blocks_k(const ConstImageView& src, const ConstImageView& want, int T,
                           const Border& b) {
  constexpr int W = 2 * R + 1, TH = kRows + 2 * R, pitch = eu::plane_pitch(kPx, R);
  constexpr int QH = W / 4 > 0 ? kRows + 4 * (W / 4) - 4 : 0;
  const u32 k = eu::u8_compare_k(T);
  std::vector<u32> recip(W * W + 1);
  for (int n = 1; n <= W * W; ++n) recip[std::size_t(n)] = eu::mean_recip(u32(n));
  std::vector<unsigned char> plane(std::size_t(TH) * pitch);
  // Quad words 16-byte aligned (the item reads them as Word4), one spare row for QH = 0.
  std::vector<eu::Word4> quad_store(std::size_t(QH + 1) * pitch / 4);
  u32* quad = quad_store[0].w;
  const int cn = src.channels();
  for (long long y0 = 0; y0 < src.height(); y0 += kRows)
    for (long long px0 = 0; px0 < src.width(); px0 += kPx)
      for (int ch = 0; ch < cn; ++ch) {
        for (int row = 0; row < TH; ++row)
          for (int v = 0; v < pitch; ++v)
            plane[std::size_t(row * pitch + v)] = bordered(src, px0 - R + v, y0 - R + row, ch, b);
        for (int row = 0; row < QH; ++row)
          for (int v4 = 0; v4 < pitch / 4; ++v4) {
            u32 r[4];
            for (int i = 0; i < 4; ++i)
              std::memcpy(&r[i], &plane[std::size_t((row + i) * pitch + 4 * v4)], 4);
            eu::transpose4(r[0], r[1], r[2], r[3], &quad[row * pitch + 4 * v4]);
          }
        for (int h = 0; h < kRows && y0 + h < src.height(); ++h)
          for (int g = 0; g < kPx / eu::kJ; ++g) {
            const long long x = px0 + g * eu::kJ;
            if (x >= src.width()) continue;
            std::string err;
            eu::item_u8<R, kMode>(
                quad + h * pitch, plane.data() + h * pitch, pitch, g, k, recip.data(),
                [&](int j, u32 v) {
                  if (x + j >= src.width() || !err.empty()) return;
                  const auto w = want.row<std::uint8_t>(y0 + h)[(x + j) * cn + ch];
                  if (v != w)
                    err = "pixel (" + std::to_string(x + j) + ", " + std::to_string(y0 + h) +
                          ") ch " + std::to_string(ch) + ": got " + std::to_string(v) + ", ref " +
                          std::to_string(int(w));
                });
            if (!err.empty()) return err;
          }
      }
  return "";
}

template <int R>
std::string check_blocks(const ConstImageView& src, const ConstImageView& want, double t,
                         const Border& b) {
  const int T = eu::u8_threshold(t);
  switch (eu::u8_compare_mode(T)) {
    case 0:
      return check_blocks_k<R, 0>(src, want, T, b);
    case 1:
      return check_blocks_k<R, 1>(src, want, T, b);
    default:
      return check_blocks_k<R, 2>(src, want, T, b);
  }
}

std::string check_blocks_r(int r, const ConstImageView& src, const ConstImageView& want, double t,
                           const Border& b) {
  switch (r) {
    case 1:
      return check_blocks<1>(src, want, t, b);
    case 2:
      return check_blocks<2>(src, want, t, b);
    case 3:
      return check_blocks<3>(src, want, t, b);
    case 4:
      return check_blocks<4>(src, want, t, b);
    case 5:
      return check_blocks<5>(src, want, t, b);
    case 6:
      return check_blocks<6>(src, want, t, b);
    default:
      return check_blocks<7>(src, want, t, b);
  }
}

// Every radius of the packed kernel, the three compare forms (T <= 127, 128..254, 255), thresholds
// 0 and fractional, 1 and 3 channels, every border, images of partial blocks in x and y (and
// smaller than the window), against the reference.
TEST(EpsilonPacked, BlocksMatchTheReference) {
  auto rng = make_rng(0xe5a4);
  for (int r = 1; r <= eu::kMaxR; ++r)
    for (int ch : {1, 3})
      for (Size s : std::vector<Size>{{131, 70}, {5, 3}, {64, 33}})
        for (const Border& b : all_borders()) {
          const double t = std::vector<double>{0, 12.5, 40, 127, 128, 200.5, 255}[rng() % 7];
          PIXFLOW_TRACE(testing::Message() << "u8x" << ch << " " << s.w << "x" << s.h << " r=" << r
                                           << " t=" << t << " " << describe(b));
          auto src = random_image(s.w, s.h, {Depth::u8, ch}, rng);
          auto want = make_dst(s.w, s.h, {Depth::u8, ch}, rng);
          Context ref;
          ref.backend = Backend::ref;
          epsilon(src, want, EpsilonParams{r, t, b}, ref);
          ASSERT_EQ(check_blocks_r(r, src, want, t, b), "");
        }
}

}  // namespace
}  // namespace pixflow::test
