// The CUDA 3x3 composites' thread body (src/backends/cuda/comp3_u8_packed.hpp, run by
// morphology.cu's morph3_comp_u8_kernel and morph3_grad_u8_kernel) on the CPU: no GPU needed.
// Each "thread" (x0 = 0, 4, 8, ..; y0 = 0, R, 2R, ..) of an emulated grid reads a tile built by
// the border rule, as the kernel's loader builds it, runs comp3_rows / gradient_rows and stores
// its outputs clipped; the image must equal the two passes of the reference rule (each pass
// applying the border to its own input: the intermediate's border is the intermediate's), over
// sizes from 1x1 up (every edge case of the fixes: w, h < 4, a thread holding both edges),
// every border but wrap (constant 0, 77, 255; the kernel gets the value saturated), R = 8 (the
// tall shape) and 2 (the short one), random and sparse images. The interior threads also run the
// kEdge = false body (the kernel's interior tiles) and must give the same bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "src/backends/cuda/comp3_u8_packed.hpp"

namespace pixflow::test {
namespace {

namespace c3 = pixflow::cuda::comp3_u8;
using u32 = std::uint32_t;

struct Img {
  long long w, h;
  std::vector<std::uint8_t> px;
  std::uint8_t at(long long x, long long y) const { return px[std::size_t(y * w + x)]; }
};

// A sample by the rule (x, y any distance outside): the value for constant.
std::uint8_t sample(const Img& im, long long x, long long y, BorderType t, std::uint8_t v) {
  const long long xs = detail::border_index(x, im.w, t), ys = detail::border_index(y, im.h, t);
  return xs < 0 || ys < 0 ? v : im.at(xs, ys);
}

Img pass(const Img& in, bool is_max, BorderType t, std::uint8_t v) {
  Img out{in.w, in.h, in.px};
  for (long long y = 0; y < in.h; ++y)
    for (long long x = 0; x < in.w; ++x) {
      int acc = is_max ? 0 : 255;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int s = sample(in, x + dx, y + dy, t, v);
          acc = is_max ? std::max(acc, s) : std::min(acc, s);
        }
      out.px[std::size_t(y * in.w + x)] = std::uint8_t(acc);
    }
  return out;
}

// kind: 0..3 = c3::Kind, 4 = gradient.
Img reference(const Img& src, int kind, BorderType t, std::uint8_t v) {
  Img out{src.w, src.h, src.px};
  if (kind == 4) {
    const Img hi = pass(src, true, t, v), lo = pass(src, false, t, v);
    for (std::size_t i = 0; i < out.px.size(); ++i) out.px[i] = std::uint8_t(hi.px[i] - lo.px[i]);
    return out;
  }
  const bool first_max = kind == c3::kClose || kind == c3::kBlackhat;
  const Img mid = pass(src, first_max, t, v), two = pass(mid, !first_max, t, v);
  for (std::size_t i = 0; i < out.px.size(); ++i) {
    const int s = src.px[i], o = two.px[i];
    out.px[i] = std::uint8_t(kind == c3::kTophat     ? std::max(s - o, 0)
                             : kind == c3::kBlackhat ? std::max(o - s, 0)
                                                     : o);
  }
  return out;
}

template <int K, int R, bool kEdge>
void run_thread(const std::vector<u32>& tile, long long tw, long long x0, long long y0, int halo,
                const c3::Fix& f, const c3::Adder& ad, Img& out) {
  // Tile word (r, j) = bytes -16 + 4 j .. of row r - halo.
  auto words = [&](int k, u32& a, u32& b, u32& c) {
    const u32* p = &tile[std::size_t((y0 + k) * tw + (x0 + 16 - 4) / 4)];
    a = p[0], b = p[1], c = p[2];
  };
  auto put = [&](int i, u32 v) {
    const long long y = y0 + i;
    for (int j = 0; j < 4; ++j)
      if (y < out.h && x0 + j < out.w)
        out.px[std::size_t(y * out.w + x0 + j)] = std::uint8_t(v >> (8 * j));
  };
  if constexpr (K == 4)
    c3::gradient_rows<R>(words, ad, put);
  else
    c3::comp3_rows<K, R, kEdge>(words, f, ad, put);
  (void)halo;
}

template <int K, int R>
void check(const Img& src, BorderType t, std::uint8_t v, const char* what) {
  const int halo = K == 4 ? 1 : 2;
  // The tile: bytes -16 .. w + 16 (rounded to words) of rows -halo .. h + R + halo.
  const long long tw = (src.w + 4 + 32 + 3) / 4 + 1, th = src.h + R + 2 * halo + 1;
  std::vector<u32> tile(std::size_t(tw * th));
  for (long long r = 0; r < th; ++r)
    for (long long j = 0; j < tw; ++j) {
      u32 word = 0;
      for (int b = 0; b < 4; ++b)
        word |= u32(sample(src, -16 + 4 * j + b, r - halo, t, v)) << (8 * b);
      tile[std::size_t(r * tw + j)] = word;
    }
  const Img want = reference(src, K, t, v);
  Img got{src.w, src.h, std::vector<std::uint8_t>(src.px.size(), 0xa5)};
  Img interior{src.w, src.h, want.px};
  const c3::Adder ad;
  bool any_interior = false;
  for (long long y0 = 0; y0 < src.h; y0 += R)
    for (long long x0 = 0; x0 < src.w; x0 += 4) {
      const c3::Fix f = c3::make_fix(x0, y0, src.w, src.h, t, v, R);
      run_thread<K, R, true>(tile, tw, x0, y0, halo, f, ad, got);
      if (K != 4 && x0 >= 1 && x0 + 4 < src.w && y0 >= 1 && y0 + R < src.h) {
        run_thread<K, R, false>(tile, tw, x0, y0, halo, f, ad, interior);
        any_interior = true;
      }
    }
  for (long long y = 0; y < src.h; ++y)
    for (long long x = 0; x < src.w; ++x) {
      ASSERT_EQ(int(got.at(x, y)), int(want.at(x, y)))
          << what << " kind " << K << " R " << R << " " << src.w << "x" << src.h << " border "
          << int(t) << " value " << int(v) << " at (" << x << ", " << y << ")";
      if (any_interior) {
        ASSERT_EQ(int(interior.at(x, y)), int(want.at(x, y)))
            << what << " interior body, kind " << K << " R " << R << " at (" << x << ", " << y
            << ")";
      }
    }
}

Img random_img(long long w, long long h, std::mt19937_64& rng, bool sparse) {
  Img im{w, h, std::vector<std::uint8_t>(std::size_t(w * h))};
  const std::uint8_t ext[] = {0, 1, 127, 128, 254, 255};
  for (auto& p : im.px) {
    if (sparse)
      p = (rng() % 7 == 0) ? std::uint8_t(rng() % 2 ? 255 : 200) : std::uint8_t(40 + rng() % 3);
    else
      p = rng() % 2 ? ext[rng() % 6] : std::uint8_t(rng());
  }
  return im;
}

template <int R>
void check_all(const Img& src, BorderType t, std::uint8_t v, const char* what) {
  check<c3::kOpen, R>(src, t, v, what);
  check<c3::kClose, R>(src, t, v, what);
  check<c3::kTophat, R>(src, t, v, what);
  check<c3::kBlackhat, R>(src, t, v, what);
  check<4, R>(src, t, v, what);
}

TEST(Comp3Packed, ThreadBodiesEqualTwoReferencePassesAtEveryEdge) {
  std::mt19937_64 rng(0xc03);
  struct B {
    BorderType t;
    std::uint8_t v;
  };
  const B borders[] = {{BorderType::replicate, 0},  {BorderType::reflect, 0},
                       {BorderType::reflect101, 0}, {BorderType::constant, 0},
                       {BorderType::constant, 77},  {BorderType::constant, 255}};
  std::vector<std::pair<int, int>> sizes;
  for (int w = 1; w <= 10; ++w)
    for (int h = 1; h <= 10; ++h) sizes.push_back({w, h});
  for (auto s : std::vector<std::pair<int, int>>{{13, 17}, {37, 19}, {31, 33}, {17, 70}})
    sizes.push_back(s);
  for (auto [w, h] : sizes)
    for (const B& b : borders)
      for (bool sparse : {false, true}) {
        const Img src = random_img(w, h, rng, sparse);
        const char* what = sparse ? "sparse" : "random";
        check_all<8>(src, b.t, b.v, what);
        check_all<2>(src, b.t, b.v, what);
        if (HasFatalFailure()) return;
      }
}

// A uniform image stays uniform under open/close and gives 0 for the others, except where the
// constant border differs from it: then the intermediate's ring decides (a ring taken from the
// source's border instead would differ here).
TEST(Comp3Packed, UniformImageWithConstantBorder) {
  for (int w : {1, 2, 3, 5, 9})
    for (int h : {1, 2, 4, 11}) {
      Img src{w, h, std::vector<std::uint8_t>(std::size_t(w * h), 100)};
      for (std::uint8_t v : {0, 100, 255}) {
        check_all<8>(src, BorderType::constant, v, "uniform");
        check_all<2>(src, BorderType::constant, v, "uniform");
        if (HasFatalFailure()) return;
      }
    }
}

}  // namespace
}  // namespace pixflow::test
