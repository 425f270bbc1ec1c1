// Host execution: the reference runs serially; the CPU backend runs the same row-band
// function over a thread pool. Row bands are [begin, end) of destination rows.
#pragma once

#include <cstdint>
#include <functional>

#include "pixflow/ops.hpp"

namespace pixflow::detail {

struct Rows {
  std::int64_t begin = 0, end = 0;
};

/// Splits [0, n) into bands and calls f(Rows) on the CPU backend's pool (ctx.threads caps
/// the thread count; 0 = all cores), or once over [0, n) for Backend::ref.
void run_host(Backend b, const Context& ctx, std::int64_t n, const std::function<void(Rows)>& f);

/// Number of worker threads the CPU backend uses by default.
int cpu_threads();

}  // namespace pixflow::detail
