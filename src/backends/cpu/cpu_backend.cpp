// The `cpu` backend: SIMD kernels (src/backends/cpu/simd, Highway with run-time dispatch)
// where they exist, registered by their own files, and behind them the reference's row
// functions over bands of rows on the thread pool, bit-identical to `ref` by construction.
#include <string>

#include "src/backends/cpu/bands.hpp"
#include "src/backends/cpu/simd/rows.hpp"
#include "src/backends/host_ops.hpp"

PIXFLOW_REGISTER_IMPLS(cpu) {
  pixflow::detail::register_reference_ops<pixflow::cpu::Bands>(table, pixflow::Backend::cpu,
                                                               pixflow::detail::Rank::fallback);
#if PIXFLOW_HAVE_SIMD
  std::string targets;
  for (const std::string& t : pixflow::cpu::simd_targets())
    targets += (targets.empty() ? "" : ", ") + t;
  table.set_note(pixflow::Backend::cpu, std::string("SIMD ") + pixflow::cpu::simd_target() +
                                            " (Highway run-time dispatch; this CPU: " + targets +
                                            "), threaded reference for the rest");
#else
  table.set_note(pixflow::Backend::cpu, "threaded reference (built without Highway)");
#endif
}
