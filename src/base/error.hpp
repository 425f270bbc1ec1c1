// Errors of every layer: one exception type (pixflow::Error, include/pixflow/error.hpp) and
// the helpers that build its message. Messages start with the op (or the component) that
// detected the problem: "median: kw must be odd and in [1, 255] (got 4)".
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "pixflow/error.hpp"

namespace pixflow::detail {

/// Concatenates anything streamable into one string.
template <class... A>
std::string cat(const A&... a) {
  std::ostringstream s;
  (s << ... << a);
  return s.str();
}

/// Throws Error(status, "<op>: <message...>").
template <class... A>
[[noreturn]] void fail(Status status, std::string_view op, const A&... msg) {
  throw Error(status, cat(op, ": ", msg...));
}

/// Throws Error(status, "<op>: <message...>") unless cond holds.
template <class... A>
void require(bool cond, Status status, std::string_view op, const A&... msg) {
  if (!cond) fail(status, op, msg...);
}

}  // namespace pixflow::detail
