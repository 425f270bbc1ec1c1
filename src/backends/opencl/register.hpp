// OpenCL registrations in one line: opencl::add<&f>(table, "op", support) registers
// `void f(args..., const Launch&)` as the op's implementation, called with the device and
// queue of the call's Exec (src/backends/adapt.hpp).
#pragma once

#include <CL/cl.h>

#include "src/backends/adapt.hpp"
#include "src/backends/opencl/runtime.hpp"

namespace pixflow::opencl {

/// The tail the OpenCL entry points take: the images' device and the call's queue (the
/// device's default queue when the call names none).
struct LaunchTail {
  template <class F, class... A>
  static void call(const detail::Exec& e, F&& f, const A&...) {
    const int device = e.location.device;
    f(Launch{device, e.queue ? static_cast<cl_command_queue>(e.queue) : default_queue(device)});
  }
};

template <auto F>
void add(detail::ImplTable& t, const char* op, detail::Support s) {
  detail::add_impl<F, LaunchTail>(t, op, Backend::opencl, s);
}

/// Formats of the kernels that take any channel count 1..4.
inline detail::Support depths(std::initializer_list<Depth> ds) {
  return detail::Support::of(ds, {1, 2, 3, 4});
}

}  // namespace pixflow::opencl
