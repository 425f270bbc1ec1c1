#include "src/core/run.hpp"

#include "src/backends/cpu/thread_pool.hpp"

namespace pixflow::detail {

int cpu_threads() { return cpu::ThreadPool::global().size(); }

void run_host(Backend b, const Context& ctx, std::int64_t n, const std::function<void(Rows)>& f) {
  if (b == Backend::ref) {
    f(Rows{0, n});
    return;
  }
  cpu::ThreadPool::global().parallel_for(
      n, ctx.threads, [&](std::int64_t b0, std::int64_t e0) { f(Rows{b0, e0}); });
}

}  // namespace pixflow::detail
