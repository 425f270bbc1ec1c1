// CUDA registrations in one line: cuda::add<&median>(table, "median", support) registers
// `void median(args..., cudaStream_t)` as the implementation of "median", called with the
// stream of the call's Exec (src/backends/adapt.hpp).
#pragma once

#include <cuda_runtime.h>

#include "src/backends/adapt.hpp"

namespace pixflow::cuda {

/// The tail the CUDA entry points take: the call's stream (null = the default stream).
struct StreamTail {
  template <class F, class... A>
  static void call(const detail::Exec& e, F&& f, const A&...) {
    f(static_cast<cudaStream_t>(e.queue));
  }
};

template <auto F>
void add(detail::ImplTable& t, const char* op, detail::Support s) {
  detail::add_impl<F, StreamTail>(t, op, Backend::cuda, s);
}

/// Formats of the kernels that take any channel count 1..4.
inline detail::Support depths(std::initializer_list<Depth> ds) {
  return detail::Support::of(ds, {1, 2, 3, 4});
}

}  // namespace pixflow::cuda
