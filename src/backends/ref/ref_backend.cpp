// The `ref` backend: the reference, run once over all rows on the calling thread. It is
// the oracle of every test and `--backend ref` in the CLI.
#include "src/backends/host_ops.hpp"

namespace {
struct Serial {
  template <class F>
  static void run(const pixflow::detail::Exec&, std::int64_t n, F&& f) {
    f(pixflow::detail::Rows{0, n});
  }
};
}  // namespace

PIXFLOW_REGISTER_IMPLS(ref) {
  pixflow::detail::register_reference_ops<Serial>(table, pixflow::Backend::ref,
                                                  pixflow::detail::Rank::primary);
}
