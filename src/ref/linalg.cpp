// Reference for dot (per-pixel 4-vector dot product) and matmul. The rules are
// docs/ops/linalg.md.
#include <cstdint>

#include "src/base/numeric.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::ref {
namespace {

// A 128-bit accumulator makes the s32 sum exact for any K (K * 2^62 can overflow int64):
// the result is the saturated exact sum, which equals an int64 accumulation whenever that
// one does not overflow.
__extension__ typedef __int128 Acc128;

void matmul_f32(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
  const std::int64_t K = a.width(), N = b.width();
  for (std::int64_t i = rows.begin; i < rows.end; ++i) {
    const float* ai = a.row<float>(i);
    float* ci = c.row<float>(i);
    for (std::int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (std::int64_t k = 0; k < K; ++k) s += ai[k] * b.row<float>(k)[j];  // no FMA
      ci[j] = s;
    }
  }
}

void matmul_s32(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
  const std::int64_t K = a.width(), N = b.width();
  constexpr Acc128 kLo = INT32_MIN, kHi = INT32_MAX;
  for (std::int64_t i = rows.begin; i < rows.end; ++i) {
    const std::int32_t* ai = a.row<std::int32_t>(i);
    std::int32_t* ci = c.row<std::int32_t>(i);
    for (std::int64_t j = 0; j < N; ++j) {
      Acc128 s = 0;
      for (std::int64_t k = 0; k < K; ++k)
        s += Acc128(std::int64_t(ai[k]) * std::int64_t(b.row<std::int32_t>(k)[j]));
      ci[j] = static_cast<std::int32_t>(s < kLo ? kLo : s > kHi ? kHi : s);
    }
  }
}

}  // namespace

void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, Rows rows) {
  for (std::int64_t y = rows.begin; y < rows.end; ++y) {
    const float* pa = a.row<float>(y);
    const float* pb = b.row<float>(y);
    float* d = dst.row<float>(y);
    for (std::int64_t x = 0; x < dst.width(); ++x) {
      const float* u = pa + 4 * x;
      const float* v = pb + 4 * x;
      d[x] = ((u[0] * v[0] + u[1] * v[1]) + u[2] * v[2]) + u[3] * v[3];  // no FMA
    }
  }
}

void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows) {
  if (a.depth() == Depth::f32)
    matmul_f32(a, b, c, rows);
  else
    matmul_s32(a, b, c, rows);
}

}  // namespace pixflow::ref
