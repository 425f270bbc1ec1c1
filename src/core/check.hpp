// Validation helpers: every op validates on the host, before dispatch, and throws one
// Error whose message starts with the op's name.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "pixflow/error.hpp"
#include "pixflow/image.hpp"
#include "pixflow/ops.hpp"

namespace pixflow::detail {

template <class... A> std::string cat(const A&... a) {
  std::ostringstream s;
  (s << ... << a);
  return s.str();
}

/// Throws Error(status, "<op>: <message...>") unless cond holds.
template <class... A>
void require(bool cond, Status status, std::string_view op, const A&... msg) {
  if (!cond) throw Error(status, cat(op, ": ", msg...));
}
template <class... A> [[noreturn]] void fail(Status status, std::string_view op, const A&... msg) {
  throw Error(status, cat(op, ": ", msg...));
}

/// Checks a view: non-empty, stride >= row bytes, channels 1..4.
void check_view(std::string_view op, std::string_view name, const ConstImageView& v);
/// Checks that `v` has one of the listed depths.
void check_depth(std::string_view op, std::string_view name, const ConstImageView& v,
                 std::initializer_list<Depth> allowed);
void check_channels(std::string_view op, std::string_view name, const ConstImageView& v,
                    std::initializer_list<int> allowed);
/// dst must have the given size and format.
void check_dst(std::string_view op, const ConstImageView& dst, std::int64_t w, std::int64_t h,
               Format fmt);
/// Same location for all images of a call.
void check_same_location(std::string_view op, const ConstImageView& a, const ConstImageView& b);
/// Throws unless the byte ranges of a and b are disjoint (`allow_identical`: the same view
/// is fine, for point-wise ops that may run in place).
void check_no_overlap(std::string_view op, const ConstImageView& src, const ConstImageView& dst,
                      bool allow_identical = false);
/// Odd window size in [1, max].
void check_odd(std::string_view op, std::string_view name, int k, int max);
void check_range(std::string_view op, std::string_view name, double v, double lo, double hi);
void check_border(std::string_view op, const Border& b);

/// The backend an op runs on, from the images' location and ctx.backend. Throws
/// invalid_argument for a mismatch (e.g. Backend::cpu with cuda images) and
/// backend_unavailable for a backend compiled out.
Backend select_backend(std::string_view op, const Context& ctx, const ConstImageView& img);

}  // namespace pixflow::detail
