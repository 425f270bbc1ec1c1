// The CUDA f32 x 1 3x3 kernels' per-thread body (src/backends/cuda/f32_3x3_math.hpp: dilate,
// erode, median, box, Gaussian, sobel/scharr) run on the CPU: no GPU is needed, so CI checks
// the kernels' arithmetic everywhere. Each case builds the shared tiles exactly as the kernel's
// loader defines them (word (r, i) = sample (bx0 - 4 + i, by0 - 1 + r) by the border rule, as
// float bits or totalOrder keys), runs rows_of for every thread of every block in both block
// shapes (8 and 2 rows a thread), and compares every output with the reference's (src/ref,
// through Backend::ref): bit for bit for the ops that order; for the linear ops too, except
// that any NaN matches any NaN (x86 and the compiler pick NaN payloads their own way; the
// GPU's are canonical anyway). The sources hold random values with ties, and NaN of both
// signs, +-inf, +-0, +-FLT_MAX and denormals (special_f32_image).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "src/backends/cuda/f32_3x3_math.hpp"
#include "src/base/deriv_taps.hpp"
#include "src/base/gaussian_taps.hpp"
#include "src/base/numeric.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace fk = pixflow::cuda::f32_3x3;
using fk::u32;

Context ref_ctx() {
  Context c;
  c.backend = Backend::ref;
  return c;
}

// Sample bits (x, y) of a 1-channel f32 host view by the border rule.
u32 bordered(const ConstImageView& v, long long x, long long y, const Border& b) {
  const long long xi = detail::border_index(x, v.width(), b.type);
  const long long yi = detail::border_index(y, v.height(), b.type);
  const float f = xi < 0 || yi < 0 ? detail::saturate_cast<float>(b.value) : v.row<float>(yi)[xi];
  return cuda::float_bits(f);
}

// The kernel's output for every pixel of src (w x h, 1 channel), R rows a thread: the bits,
// or kUnset where no thread stored.
constexpr std::uint64_t kUnset = std::uint64_t(1) << 32;

template <int R, class Op>
std::vector<std::uint64_t> emulate(const Op& op, const ConstImageView& src, const Border& b) {
  constexpr int kTY = 8, TH = R * kTY + 2;
  const long long w = src.width(), h = src.height();
  std::vector<std::uint64_t> out(std::size_t(w * h), kUnset);
  std::vector<u32> tile(std::size_t(TH) * fk::kTileW);
  for (long long by0 = 0; by0 < h; by0 += R * kTY)
    for (long long bx0 = 0; bx0 < w; bx0 += fk::kBW) {
      for (int r = 0; r < TH; ++r)
        for (int i = 0; i < fk::kTileW; ++i) {
          const u32 bits = bordered(src, bx0 - 4 + i, by0 - 1 + r, b);
          tile[std::size_t(r * fk::kTileW + i)] =
              Op::kKey ? u32(detail::order_key(cuda::bits_float(bits))) : bits;
        }
      for (int ty = 0; ty < kTY; ++ty)
        for (int tx = 0; tx < fk::kTX; ++tx)
          fk::rows_of<R>(op, tile.data(), tx, ty * R, [&](int i, const u32(&o)[4]) {
            const long long y = by0 + ty * R + i, x0 = bx0 + tx * fk::kPX;
            for (int j = 0; j < 4; ++j)
              if (y < h && x0 + j < w) out[std::size_t(y * w + x0 + j)] = o[j];
          });
    }
  return out;
}

// "" when the emulated output equals the reference's `want` (bits; with nan_any, any NaN
// matches any NaN), else the first mismatch.
std::string check(const std::vector<std::uint64_t>& got, const ConstImageView& want, bool nan_any) {
  const long long w = want.width(), h = want.height();
  for (long long y = 0; y < h; ++y)
    for (long long x = 0; x < w; ++x) {
      const float wf = want.row<float>(y)[x];
      const std::uint64_t g = got[std::size_t(y * w + x)];
      const u32 e = cuda::float_bits(wf);
      if (g == e ||
          (g != kUnset && nan_any && std::isnan(wf) && std::isnan(cuda::bits_float(u32(g)))))
        continue;
      char buf[160];
      std::snprintf(buf, sizeof buf, "(%lld, %lld) of %lldx%lld: got 0x%09llx, want 0x%08x", x, y,
                    w, h, (unsigned long long)g, unsigned(e));
      return buf;
    }
  return "";
}

template <class Op>
std::string check_both_shapes(const Op& op, const ConstImageView& src, const Border& b,
                              const ConstImageView& want, bool nan_any) {
  std::string e = check(emulate<8>(op, src, b), want, nan_any);
  if (!e.empty()) return "8 rows a thread: " + e;
  e = check(emulate<2>(op, src, b), want, nan_any);
  return e.empty() ? e : "2 rows a thread: " + e;
}

std::vector<Border> borders_f32() {
  std::vector<Border> bs = all_borders();
  bs.push_back(Border::constant(300));
  bs.push_back(Border::constant(-7));
  bs.push_back(Border::constant(-0.0));
  return bs;
}

// Sizes: single pixels and lines, a block and one more in x (128 + 1) and in both shapes'
// block heights (16 + 1, 64 + 1), several blocks each way.
std::vector<Size> emulated_sizes() {
  return {{1, 1}, {1, 9}, {9, 1}, {5, 3}, {129, 17}, {130, 65}, {300, 97}, {517, 70}};
}

enum class Source { random, special, zeros };

// Every op on one source, every border. random: values in [-4, 4], about one in four a
// small integer (ties); special: special_f32_image; zeros: +0 and -0 with a few +-1 and
// +-0.5 (windows of -0 alone, and x + -x, are where the sign of a zero sum shows).
void run_all(Size s, Source kind, std::mt19937_64& rng) {
  const bool special = kind == Source::special;
  const TestImage src = special ? special_f32_image(s.w, s.h, 1, rng)
                                : random_image(s.w, s.h, {Depth::f32, 1}, rng, false, -4, 4);
  std::uniform_int_distribution<int> pick(0, 7);
  if (kind == Source::random) {
    for (long long y = 0; y < s.h; ++y)
      for (long long x = 0; x < s.w; ++x)
        if (pick(rng) < 2) src.view.row<float>(y)[x] = float(pick(rng) - 3);
  } else if (kind == Source::zeros) {
    const float vals[] = {-0.0f, -0.0f, -0.0f, 0.0f, 1.0f, -1.0f, 0.5f, -0.5f};
    for (long long y = 0; y < s.h; ++y)
      for (long long x = 0; x < s.w; ++x)
        src.view.row<float>(y)[x] = pick(rng) < 6 ? vals[pick(rng) % 4] : vals[pick(rng)];
  }
  Image want(s.w, s.h, {Depth::f32, 1});
  for (const Border& b : borders_f32()) {
    PIXFLOW_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h) + " " + describe(b) + " source " +
                  std::to_string(int(kind)));
    dilate(src, want, MorphParams{3, 3, 1, b}, ref_ctx());
    ASSERT_EQ(check_both_shapes(fk::Morph3<true>{}, src, b, want, false), "") << "dilate";
    erode(src, want, MorphParams{3, 3, 1, b}, ref_ctx());
    ASSERT_EQ(check_both_shapes(fk::Morph3<false>{}, src, b, want, false), "") << "erode";
    median(src, want, MedianParams{3, 3, b}, ref_ctx());
    ASSERT_EQ(check_both_shapes(fk::Median3{}, src, b, want, false), "") << "median";
    for (bool norm : {true, false}) {
      box(src, want, BoxParams{3, 3, norm, b}, ref_ctx());
      ASSERT_EQ(check_both_shapes(fk::Box3{norm}, src, b, want, true), "")
          << "box normalize=" << norm;
    }
    for (double sigma : {0.0, 0.8, 1.7}) {
      // sigma 0: OpenCV's table for k = 3; sigma_y differs from sigma (other taps).
      const double sy = sigma == 0.0 ? 0.0 : sigma + 0.45;
      gaussian(src, want, GaussianParams{sigma, sy, 3, 3, b}, ref_ctx());
      fk::Linear3 k{};
      detail::gaussian_taps_float(3, sigma, k.tx);
      detail::gaussian_taps_float(3, sy == 0.0 ? sigma : sy, k.ty);
      k.deriv = false;
      ASSERT_EQ(check_both_shapes(k, src, b, want, true), "") << "gaussian sigma=" << sigma;
    }
    struct Deriv {
      int dx, dy;
      double scale, delta;
      bool scharr;
    };
    for (const Deriv& d :
         {Deriv{1, 0, 1, 0, false}, Deriv{0, 1, 1, 0, false}, Deriv{1, 1, 1, 0, false},
          Deriv{2, 0, 0.25, -3, false}, Deriv{1, 0, 1, 0, true}, Deriv{0, 1, 0.5, 7.5, true}}) {
      int tx[detail::kMaxDerivTaps], ty[detail::kMaxDerivTaps];
      if (d.scharr) {
        detail::scharr_taps(d.dx, tx);
        detail::scharr_taps(d.dy, ty);
        scharr(src, want, ScharrParams{d.dx, d.dy, d.scale, d.delta, Depth::f32, b}, ref_ctx());
      } else {
        ASSERT_EQ(detail::sobel_taps_len(3, d.dx), 3);
        ASSERT_EQ(detail::sobel_taps_len(3, d.dy), 3);
        detail::sobel_taps(3, d.dx, tx);
        detail::sobel_taps(3, d.dy, ty);
        sobel(src, want, SobelParams{d.dx, d.dy, 3, d.scale, d.delta, Depth::f32, b}, ref_ctx());
      }
      fk::Linear3 k{};
      for (int i = 0; i < 3; ++i) {
        k.tx[i] = float(tx[i]);
        k.ty[i] = float(ty[i]);
      }
      k.scale = float(d.scale);
      k.delta = float(d.delta);
      k.deriv = true;
      ASSERT_EQ(check_both_shapes(k, src, b, want, true), "")
          << (d.scharr ? "scharr" : "sobel") << " dx=" << d.dx << " dy=" << d.dy;
    }
  }
}

TEST(F32Kernel3x3, BodyMatchesRefOnRandomValues) {
  auto rng = make_rng(0xf33a);
  for (Size s : emulated_sizes()) {
    run_all(s, Source::random, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(F32Kernel3x3, BodyMatchesRefOnSpecialValues) {
  auto rng = make_rng(0xf33b);
  for (Size s : emulated_sizes()) {
    run_all(s, Source::special, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(F32Kernel3x3, BodyMatchesRefOnSignedZeros) {
  auto rng = make_rng(0xf33d);
  for (Size s : emulated_sizes()) {
    run_all(s, Source::zeros, rng);
    if (HasFatalFailure()) return;
  }
}

// The box rule's double sums where rounding and the sign of zero matter: samples of very
// different magnitudes (sums that are not exact in double), x and -x pairs (zero sums) and
// -0 (the column sums skip the reference's 0.0 start, which only the sign of a zero sum can
// show, and the row sum from +0 must absorb it).
TEST(F32Kernel3x3, BoxDoubleSumsOnCancellingAndWideRangedSamples) {
  auto rng = make_rng(0xf33c);
  const float vals[] = {-0.0f,      0.0f,        1.0f,         -1.0f, 1e30f,
                        -1e30f,     1e-30f,      -1e-30f,      3.0f,  0x1p-149f,
                        -0x1p-149f, 16777217.0f, -16777216.0f, 0.1f,  -0.1f};
  std::uniform_int_distribution<int> pick(0, int(std::size(vals)) - 1);
  for (Size s : std::vector<Size>{{9, 7}, {131, 19}}) {
    Image src(s.w, s.h, {Depth::f32, 1}), want(s.w, s.h, {Depth::f32, 1});
    for (int trial = 0; trial < 20; ++trial) {
      for (long long y = 0; y < s.h; ++y)
        for (long long x = 0; x < s.w; ++x) src.view().row<float>(y)[x] = vals[pick(rng)];
      for (const Border& b : borders_f32())
        for (bool norm : {true, false}) {
          PIXFLOW_TRACE(describe(b) + " normalize=" + std::to_string(norm));
          box(src, want, BoxParams{3, 3, norm, b}, ref_ctx());
          ASSERT_EQ(check_both_shapes(fk::Box3{norm}, src.view(), b, want.view(), false), "");
        }
    }
  }
}

// The kernels themselves on the CUDA backend (skipped without a GPU), on images whose rows
// are 16-byte aligned: whole images and ROIs 4 samples in from each side of a larger image,
// so that the tile loader's flat float4 path (interior tiles) and the 16-byte stores run for
// sure (the backend-versus-reference tests place their images at random offsets: mostly the
// per-chunk path). Both block shapes (4100x2200: the tall one; the others the short one);
// results bit for bit, special values for the ops that order.
TEST(F32Kernel3x3, CudaMatchesRefOnAlignedImages) {
  bool has_cuda = false;
  for (Backend be : test_backends()) has_cuda = has_cuda || be == Backend::cuda;
  if (!has_cuda) GTEST_SKIP() << "no CUDA device: the f32 3x3 kernels are not run";
  auto rng = make_rng(0xf33e);
  using Run = std::function<void(ConstImageView, ImageView, const Border&, const Context&)>;
  struct Case {
    const char* name;
    Run run;
    bool special;  // special_f32_image (NaN, -0, inf) instead of random values
  };
  const std::vector<Case> cases = {
      {"dilate",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         dilate(s, d, MorphParams{3, 3, 1, b}, c);
       },
       true},
      {"erode",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         erode(s, d, MorphParams{3, 3, 1, b}, c);
       },
       true},
      {"median",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         median(s, d, MedianParams{3, 3, b}, c);
       },
       true},
      {"box",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         box(s, d, BoxParams{3, 3, true, b}, c);
       },
       false},
      {"gaussian",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         gaussian(s, d, GaussianParams{0.8, 1.3, 3, 3, b}, c);
       },
       false},
      {"sobel",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         sobel(s, d, SobelParams{1, 0, 3, 1.0, 0.0, Depth::f32, b}, c);
       },
       false},
      {"scharr",
       [](ConstImageView s, ImageView d, const Border& b, const Context& c) {
         scharr(s, d, ScharrParams{0, 1, 0.5, -2.0, Depth::f32, b}, c);
       },
       false},
  };
  const Format fmt{Depth::f32, 1};
  const Location loc = backend_location(Backend::cuda);
  Context cuda;
  cuda.backend = Backend::cuda;
  for (Size s : std::vector<Size>{{516, 68}, {4100, 2200}, {128, 16}, {4, 1}})
    for (const Case& k : cases)
      for (const Border& b : {Border::reflect101(), Border::constant(-7)}) {
        PIXFLOW_TRACE(std::string(k.name) + " " + std::to_string(s.w) + "x" + std::to_string(s.h) +
                      " " + describe(b));
        const TestImage src = k.special ? special_f32_image(s.w, s.h, 1, rng)
                                        : random_image(s.w, s.h, fmt, rng, true, -1000, 1000);
        Image want(s.w, s.h, fmt), poisoned(s.w, s.h, fmt);
        k.run(src, want, b, ref_ctx());
        poison(poisoned.view());
        for (int off : {0, 4}) {
          Image sb(s.w + 2 * off, s.h + 2 * off, fmt, loc),
              db(s.w + 2 * off, s.h + 2 * off, fmt, loc);
          const ImageView ds = sb.view().roi(off, off, s.w, s.h);
          const ImageView dd = db.view().roi(off, off, s.w, s.h);
          for (const ImageView& v : {ds, dd})
            ASSERT_TRUE(reinterpret_cast<std::uintptr_t>(v.data()) % 16 == 0 &&
                        v.stride() % 16 == 0)
                << "the test's views are meant to be 16-byte aligned";
          copy(src, ds);
          copy(poisoned, dd);
          k.run(ds, dd, b, cuda);
          ASSERT_EQ(compare_bits(to_host(dd), want), "") << "ROI offset " << off;
        }
      }
}

}  // namespace
}  // namespace pixflow::test
