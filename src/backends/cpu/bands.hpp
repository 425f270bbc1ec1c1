// How the `cpu` backend runs a row function: bands of destination rows on the process-wide
// thread pool (Exec::threads caps the workers; 0 = all hardware threads). Used by the
// threaded reference (the fallback) and by every SIMD kernel of src/backends/cpu/simd.
#pragma once

#include <cstdint>

#include "src/backends/adapt.hpp"
#include "src/backends/cpu/thread_pool.hpp"

namespace pixflow::cpu {

struct Bands {
  template <class F>
  static void run(const detail::Exec& e, std::int64_t n, F&& f) {
    ThreadPool::global().parallel_for(n, e.threads, [&](std::int64_t b, std::int64_t end) {
      f(detail::Rows{b, end});
#if defined(__x86_64__) || defined(__i386__)
      // A kernel may have written its band with streaming stores (StoreOut), which are
      // weakly ordered: make them visible before the band counts as done.
      __builtin_ia32_sfence();
#endif
    });
  }
};

/// Registers `void F(args..., Rows)` as op's `cpu` implementation for the formats `s`
/// takes, run over bands of destination rows. Formats it does not take (and ops without a
/// SIMD kernel) go to the threaded reference.
template <auto F>
void add_banded(detail::ImplTable& t, const char* op, detail::Support s) {
  detail::add_impl<F, detail::RowBands<Bands>>(t, op, Backend::cpu, s);
}

}  // namespace pixflow::cpu
