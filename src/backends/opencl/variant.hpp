// Schedule switches of the OpenCL op families: an environment variable names which of an op's
// kernels runs (e.g. PIXFLOW_OCL_IIR=line|fused), so that one GPU run can time every
// schedule against the others, and the tests can run each on PoCL. All schedules of an op
// give the same bits (each is tested against src/ref).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "src/base/error.hpp"

namespace pixflow::opencl {

/// The index in `names` of the value of environment variable `var`; names[0] (the default)
/// when it is unset or empty. Read at every call (why: a test switches schedules with setenv;
/// a getenv is nothing beside a launch). An unknown value throws invalid_argument naming `op`
/// and the variable: a misspelt A/B must not silently time the default.
inline int variant(const char* var, std::initializer_list<const char*> names, std::string_view op) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return 0;
  int i = 0;
  std::string known;
  for (const char* n : names) {
    if (std::string_view(v) == n) return i;
    known += (i++ ? "|" : "") + std::string(n);
  }
  detail::fail(Status::invalid_argument, op, var, "=", v, " is not one of ", known);
}

}  // namespace pixflow::opencl
