// The CUDA gaussian_iir's fused pass (src/backends/cuda/iir_fused.hpp, iir.cu's
// iir_fused_kernel) run on the CPU: no GPU is needed. The emulation runs run_group for every
// line group with every phase executed for all 256 threads before the next (the kernel's
// barriers), each thread with its own ThreadState, one Smem per group, and compares the row
// pass with the reference's gaussian_iir_h and the column pass (on the reference's
// intermediate) with gaussian_iir_v, bit for bit. Cases: several tiles and line groups in both
// directions, partial last blocks, tiles that reach past the line on both sides, extensions
// wider than a tile (sigma 256), partial line groups, 1-4 channels, u8 and f32, every border
// with constants in and outside the depth, ROI views.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/backends/cuda/iir_fused.hpp"
#include "src/ref/ref.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace fz = pixflow::cuda::iir_fused;

template <class S, class D, bool kRows, int kCn>
void emulate_cn(const ConstImageView& in, const ImageView& out, const GaussianIirParams& p,
                double cval) {
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const std::int64_t e = detail::iir_extension(p);
  const int cn = in.channels();
  const std::int64_t lines = (kRows ? in.height() : in.width()) * cn;
  const std::int64_t len = kRows ? in.width() : in.height();
  std::vector<double> cw(std::size_t(fz::scratch_doubles(lines, len, e)));
  const fz::Pass ps = fz::make_pass(reinterpret_cast<const unsigned char*>(in.data()), in.stride(),
                                    reinterpret_cast<unsigned char*>(out.data()), out.stride(),
                                    lines, len, e, cn, p.border.type, cval, cw.data());
  auto sm = std::make_unique<fz::Smem>();
  for (int t = 0; t < fz::kB; ++t)
    for (int c = 0; c < 3; ++c) sm->H[t][c] = k.H[t][c];
  std::vector<fz::ThreadState> st(fz::kThreads);
  auto par = [&](auto&& f) {
    for (int tid = 0; tid < fz::kThreads; ++tid) f(tid);
  };
  auto state = [&](int tid) -> fz::ThreadState& { return st[std::size_t(tid)]; };
  for (std::int64_t g = 0; g * fz::kLines < lines; ++g)
    fz::run_group<S, D, kRows, kCn>(ps, k, *sm, g, par, state);
}

// The kernel's dispatch (iir.cu's launch_fused_pass): the row pass per channel count.
template <class S, class D, bool kRows>
void emulate(const ConstImageView& in, const ImageView& out, const GaussianIirParams& p,
             double cval) {
  switch (kRows ? in.channels() : 1) {
    case 1:
      return emulate_cn<S, D, kRows, 1>(in, out, p, cval);
    case 2:
      return emulate_cn<S, D, kRows, 2>(in, out, p, cval);
    case 3:
      return emulate_cn<S, D, kRows, 3>(in, out, p, cval);
    default:
      return emulate_cn<S, D, kRows, 4>(in, out, p, cval);
  }
}

template <class T>
void check(std::int64_t w, std::int64_t h, int cn, double sigma, const Border& b,
           std::mt19937_64& rng) {
  const Depth d = std::is_same_v<T, float> ? Depth::f32 : Depth::u8;
  const GaussianIirParams p{sigma, b};
  const double cval = double(detail::saturate_cast<T>(b.value));
  auto src = random_image(w, h, {d, cn}, rng);
  auto tmp_want = make_dst(w, h, {Depth::f32, cn}, rng);
  auto tmp_got = make_dst(w, h, {Depth::f32, cn}, rng);
  auto dst_want = make_dst(w, h, {d, cn}, rng);
  auto dst_got = make_dst(w, h, {d, cn}, rng);
  ref::gaussian_iir_h(src, tmp_want, p, {0, h});
  ref::gaussian_iir_v(tmp_want, dst_want, p, {0, w});
  emulate<T, float, true>(src, tmp_got, p, cval);
  emulate<float, T, false>(tmp_want, dst_got, p, cval);
  EXPECT_EQ(compare_bits(tmp_got, tmp_want), "") << "row pass";
  if (d == Depth::f32)
    EXPECT_EQ(compare_bits(dst_got, dst_want), "") << "column pass";
  else
    EXPECT_EQ(compare(dst_got, dst_want), "") << "column pass";
}

TEST(GaussianIirFused, HostEmulationMatchesRefBitForBit) {
  auto rng = make_rng(0x11aa);
  std::vector<Border> borders = all_borders();
  borders.push_back(Border::constant(300));
  borders.push_back(Border::constant(-7));
  // (w, h): lines of 1..3 positions, one and several tiles of 256 (n = 256 exactly at
  // sigma 3 / reflect: e = 20, len 216), partial groups of 32 lines, > 32 lines; tiles wholly
  // inside the line (the loads and stores without the border rule, the blocks without a test
  // a position): rows at w = 517, columns at h = 530 (a full group of 32 lines and a partial).
  const std::vector<Size> sizes = {{1, 1},    {2, 3},    {33, 2},   {216, 40},
                                   {517, 70}, {70, 300}, {300, 97}, {40, 530}};
  std::size_t turn = 0;
  for (int cn : {1, 2, 3, 4})
    for (Size s : sizes) {
      const Border& b = borders[turn % borders.size()];
      const double sigma = turn % 3 == 0 ? 0.5 : turn % 3 == 1 ? 3.0 : 9.0;
      ++turn;
      PIXFLOW_TRACE(testing::Message()
                    << s.w << "x" << s.h << "x" << cn << " sigma=" << sigma << " " << describe(b));
      check<std::uint8_t>(s.w, s.h, cn, sigma, b, rng);
      check<float>(s.w, s.h, cn, sigma, b, rng);
    }
  for (const Border& b : borders) {
    PIXFLOW_TRACE(testing::Message() << "sigma=256 " << describe(b));
    check<std::uint8_t>(300, 45, 1, 256, b, rng);  // e = 1032: tiles wholly in the extension
  }
}

// to_double(u8) builds 2^52 + v from bits and subtracts 2^52: the same double as double(v).
TEST(GaussianIirFused, U8ToDoubleIsExact) {
  for (int v = 0; v < 256; ++v) {
    const double got = fz::to_double(static_cast<std::uint8_t>(v)), want = double(v);
    EXPECT_EQ(std::memcmp(&got, &want, sizeof got), 0) << v;
  }
}

// The u8 output rounding in float (fz::out_cast) against the reference's
// saturate_cast<u8>(double(float(y))). Both are functions of f = float(y), so the test runs f
// over the floats: every float of magnitude in [2^-3, 2^13) of both signs (every rounding
// decision near [0, 255] and the clamps), every 97th bit pattern of all 2^32 (zeros,
// denormals, large values, infinities, NaNs with many payloads), and the special values.
TEST(GaussianIirFused, U8RoundingInFloatEqualsRef) {
  std::uint64_t bad = 0, n = 0;
  std::uint32_t first_bad = 0;
  auto one = [&](std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    const std::uint8_t got = fz::out_cast<std::uint8_t>(double(f));
    const std::uint8_t want = detail::saturate_cast<std::uint8_t>(double(f));
    ++n;
    if (got != want && bad++ == 0) first_bad = bits;
  };
  for (std::uint32_t sign : {0u, 0x80000000u})
    for (std::uint32_t b = (124u << 23); b < (140u << 23); ++b) one(sign | b);
  for (std::uint64_t b = 0; b < (std::uint64_t(1) << 32); b += 97) one(std::uint32_t(b));
  for (std::uint32_t b :
       {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
        0x00000001u, 0x3f000000u, 0x437f8000u, 0x437f0000u, 0x43800000u, 0xbf000000u, 0xbf000001u})
    one(b);
  EXPECT_EQ(bad, 0u) << "of " << n << ", first bits 0x" << std::hex << first_bad;
  EXPECT_GT(n, std::uint64_t(300'000'000));
}

}  // namespace
}  // namespace pixflow::test
