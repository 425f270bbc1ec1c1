// CUDA registrations in one line: cuda::add<&median>(table, "median", support) registers
// `void median(args..., cudaStream_t)` as the implementation of "median", called with the
// stream of the call's Exec (src/backends/adapt.hpp).
#pragma once

#include <cuda_runtime.h>

#include "src/backends/adapt.hpp"
#include "src/base/visit_depth.hpp"

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

/// One entry per depth: `make(T{})` gives the implementation for samples of type T (a
/// captureless lambda returning e.g. &launch_median<T>), registered for that depth and the
/// channel counts `channels`. The table then picks the kernel by the source's format.
template <Depth... Ds, class Make>
void add_depths(detail::ImplTable& t, const char* op, Make,
                std::initializer_list<int> channels = {1, 2, 3, 4}) {
  (add<Make{}(detail::sample_t<Ds>{})>(t, op, detail::Support::of({Ds}, channels)), ...);
}

/// Formats of the kernels that take any channel count 1..4.
inline detail::Support depths(std::initializer_list<Depth> ds) {
  return detail::Support::of(ds, {1, 2, 3, 4});
}

}  // namespace pixflow::cuda
