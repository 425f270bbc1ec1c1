#include "src/core/check.hpp"

#include <cmath>

namespace pixflow::detail {

void check_view(std::string_view op, std::string_view name, const ConstImageView& v) {
  require(v.width() > 0 && v.height() > 0, Status::invalid_argument, op, name,
          " must not be empty (got ", v.width(), "x", v.height(), ")");
  require(v.data() != nullptr, Status::invalid_argument, op, name, " has no data");
  require(v.channels() >= 1 && v.channels() <= 4, Status::invalid_argument, op, name,
          " must have 1..4 channels (got ", v.channels(), ")");
  require(v.stride() >= v.row_bytes(), Status::invalid_argument, op, name, " stride ", v.stride(),
          " is smaller than a row (", v.row_bytes(), " bytes)");
}

static std::string list_depths(std::span<const Depth> allowed) {
  std::string s;
  for (Depth d : allowed) s += (s.empty() ? "" : ", ") + std::string(depth_name(d));
  return s;
}

void check_depth(std::string_view op, std::string_view name, const ConstImageView& v,
                 std::span<const Depth> allowed) {
  for (Depth d : allowed)
    if (v.depth() == d) return;
  fail(Status::unsupported, op, name, " depth must be one of ", list_depths(allowed), " (got ",
       depth_name(v.depth()), ")");
}

void check_channels(std::string_view op, std::string_view name, const ConstImageView& v,
                    std::span<const int> allowed) {
  if (allowed.size() == 4) return;  // 1..4: check_view's rule
  std::string s;
  for (int c : allowed) {
    if (v.channels() == c) return;
    s += (s.empty() ? "" : ", ") + std::to_string(c);
  }
  fail(Status::unsupported, op, name, " must have ", s, " channels (got ", v.channels(), ")");
}

void check_dst(std::string_view op, const ConstImageView& dst, std::int64_t w, std::int64_t h,
               Format fmt) {
  check_view(op, "dst", dst);
  require(dst.width() == w && dst.height() == h && dst.format() == fmt, Status::invalid_argument,
          op, "dst must be ", w, "x", h, " ", to_string(fmt), " (got ", dst.width(), "x",
          dst.height(), " ", to_string(dst.format()), ")");
}

void check_same_location(std::string_view op, const ConstImageView& a, const ConstImageView& b) {
  require(a.location() == b.location(), Status::invalid_argument, op,
          "all images must be in one location (got ", to_string(a.location()), " and ",
          to_string(b.location()), "); copy them explicitly");
}

void check_no_overlap(std::string_view op, const ConstImageView& src, const ConstImageView& dst,
                      bool allow_identical) {
  if (!(src.location() == dst.location())) return;
  const auto* s0 = src.data();
  const auto* s1 = src.row_ptr(src.height() - 1) + src.row_bytes();
  const auto* d0 = dst.data();
  const auto* d1 = dst.row_ptr(dst.height() - 1) + dst.row_bytes();
  if (s1 <= d0 || d1 <= s0) return;
  if (allow_identical && s0 == d0 && src.stride() == dst.stride() &&
      src.row_bytes() == dst.row_bytes())
    return;
  fail(Status::invalid_argument, op, "dst overlaps src; this op cannot run in place");
}

void check_odd(std::string_view op, std::string_view name, int k, int max) {
  require(k >= 1 && k <= max && (k & 1), Status::invalid_argument, op, name,
          " must be odd and in [1, ", max, "] (got ", k, ")");
}

void check_range(std::string_view op, std::string_view name, double v, double lo, double hi) {
  require(std::isfinite(v) && v >= lo && v <= hi, Status::invalid_argument, op, name,
          " must be in [", lo, ", ", hi, "] (got ", v, ")");
}

void check_border(std::string_view op, const Border& b) {
  require(std::isfinite(b.value), Status::invalid_argument, op, "border value must be finite (got ",
          b.value, ")");
}

}  // namespace pixflow::detail
