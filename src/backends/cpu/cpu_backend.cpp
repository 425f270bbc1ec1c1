// The `cpu` backend: the reference's row functions over bands of rows on the thread pool
// (Exec::threads caps the workers; 0 = all cores). Bit-identical to `ref` by construction.
#include "src/backends/cpu/thread_pool.hpp"
#include "src/backends/host_ops.hpp"

namespace {
struct Bands {
  template <class F>
  static void run(const pixflow::detail::Exec& e, std::int64_t n, F&& f) {
    pixflow::cpu::ThreadPool::global().parallel_for(n, e.threads,
                                                    [&](std::int64_t b, std::int64_t end) {
                                                      f(pixflow::detail::Rows{b, end});
                                                    });
  }
};
}  // namespace

PIXFLOW_REGISTER_IMPLS(cpu) {
  pixflow::detail::register_reference_ops<Bands>(table, pixflow::Backend::cpu);
}
