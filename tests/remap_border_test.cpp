// The CUDA remap's 32-bit border rule (src/backends/cuda/remap_border.hpp) run on the CPU:
// border_index32<rule> against the reference's detail::border_index for every rule, every
// coordinate within a few periods of the source, the far ones the kernel meets (map values
// are clamped to +-2^30, so taps reach 2^30 + 1) and lengths from 1 (reflect101's special
// case) to the fast kernel's 2^23 - 1.
#include <cstdint>
#include <vector>

#include "src/backends/cuda/remap_border.hpp"
#include "src/base/numeric.hpp"
#include "tests/common.hpp"

namespace pixflow::test {
namespace {

template <BorderType kT>
void check_rule(std::mt19937_64& rng) {
  constexpr int kFar = 1 << 30;
  const int lens[] = {1, 2, 3, 4, 5, 7, 16, 17, 300, 1920, 8191, (1 << 23) - 1};
  for (int len : lens) {
    std::vector<int> ps;
    // Every coordinate within three periods (two lengths each for reflect) of the source.
    const int reach = len < 100 ? 6 * len + 8 : 0;
    for (int p = -reach; p <= reach; ++p) ps.push_back(p);
    // Around the ends of one, two and three periods, and the far limits.
    for (int k = -3; k <= 3; ++k)
      for (int d = -2; d <= 2; ++d) {
        const long long base = (long long)k * len;
        for (long long v : {base + d, 2 * base + d, 2 * base - 2 * k + d})
          if (v >= -kFar - 1 && v <= kFar + 1) ps.push_back(int(v));
      }
    for (int v : {kFar, kFar + 1, kFar - 1, -kFar, -kFar + 1, -kFar - 1, -kFar + 2})
      ps.push_back(v);
    std::uniform_int_distribution<int> any(-kFar - 1, kFar + 1);
    for (int i = 0; i < 2000; ++i) ps.push_back(any(rng));
    for (int p : ps)
      ASSERT_EQ(cuda::border_index32<kT>(p, len), detail::border_index(p, len, kT))
          << border_name(kT) << " p " << p << " len " << len;
  }
}

TEST(RemapBorder, Index32MatchesTheReferenceRuleForEveryRule) {
  auto rng = make_rng(0x7e41);
  check_rule<BorderType::replicate>(rng);
  check_rule<BorderType::reflect>(rng);
  check_rule<BorderType::reflect101>(rng);
  check_rule<BorderType::wrap>(rng);
  check_rule<BorderType::constant>(rng);
}

}  // namespace
}  // namespace pixflow::test
