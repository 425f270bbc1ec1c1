// The CUDA u8 image-image arithmetic four bytes a word (src/backends/cuda/pointwise_u8_packed.hpp)
// run on the CPU: every pair of bytes, in every byte position of the word, next to neighbours
// that carry or borrow (0x00, 0xff, 0x80, 0x7f, random), against the element rule of the
// reference (src/base/pointwise.hpp). No GPU is needed, so CI checks the kernel's arithmetic.
#include <array>
#include <cstdint>

#include "src/backends/cuda/pointwise_u8_packed.hpp"
#include "src/base/pointwise.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

namespace pw = pixflow::cuda::pw_u8;

std::uint8_t byte_of(pw::u32 w, int k) {
  return std::uint8_t(w >> (8 * k));
}

template <ArithOp Op>
void check_every_pair(std::mt19937_64& rng) {
  // Neighbour bytes: the extremes where a carry or borrow would cross a byte boundary if the
  // top bit were not kept apart, and one random word per pair.
  const std::array<pw::u32, 4> fills = {0x00000000u, 0xffffffffu, 0x80808080u, 0x7f7f7f7fu};
  long long bad = 0;
  for (int x = 0; x < 256; ++x)
    for (int y = 0; y < 256; ++y)
      for (int pos = 0; pos < 4; ++pos)
        for (int f = 0; f <= int(fills.size()); ++f) {
          const pw::u32 fa = f < int(fills.size()) ? fills[f] : pw::u32(rng());
          const pw::u32 fb = f < int(fills.size()) ? ~fills[f] : pw::u32(rng());
          const pw::u32 mask = 0xffu << (8 * pos);
          const pw::u32 a = (fa & ~mask) | (pw::u32(x) << (8 * pos));
          const pw::u32 b = (fb & ~mask) | (pw::u32(y) << (8 * pos));
          const pw::u32 got = pw::apply<Op>(a, b);
          for (int k = 0; k < 4; ++k) {
            const std::uint8_t want =
                detail::arith_apply<std::uint8_t>(byte_of(a, k), byte_of(b, k), Op);
            if (byte_of(got, k) != want && ++bad <= 5)
              ADD_FAILURE() << arith_op_name(Op) << " a=0x" << std::hex << a << " b=0x" << b
                            << " byte " << k << ": got " << std::dec << int(byte_of(got, k))
                            << ", want " << int(want);
          }
        }
  EXPECT_EQ(bad, 0) << arith_op_name(Op) << ": wrong bytes";
}

TEST(ArithPacked, U8AddMatchesTheRuleForEveryPairOfBytes) {
  auto rng = make_rng(0xA0301);
  check_every_pair<ArithOp::add>(rng);
}
TEST(ArithPacked, U8SubMatchesTheRuleForEveryPairOfBytes) {
  auto rng = make_rng(0xA0302);
  check_every_pair<ArithOp::sub>(rng);
}
TEST(ArithPacked, U8AbsdiffMatchesTheRuleForEveryPairOfBytes) {
  auto rng = make_rng(0xA0303);
  check_every_pair<ArithOp::absdiff>(rng);
}
TEST(ArithPacked, U8MulMatchesTheRuleForEveryPairOfBytes) {
  auto rng = make_rng(0xA0304);
  check_every_pair<ArithOp::mul>(rng);
}

}  // namespace
}  // namespace pixflow::test
