#include "src/core/check.hpp"

#include <cmath>

#include "src/core/memory.hpp"

namespace pixflow::detail {

void check_view(std::string_view op, std::string_view name, const ConstImageView& v) {
  require(v.width() > 0 && v.height() > 0, Status::invalid_argument, op, name,
          " must not be empty (got ", v.width(), "x", v.height(), ")");
  require(v.data() != nullptr, Status::invalid_argument, op, name, " has no data");
  require(v.channels() >= 1 && v.channels() <= 4, Status::invalid_argument, op, name,
          " must have 1..4 channels (got ", v.channels(), ")");
  require(v.stride() >= v.row_bytes(), Status::invalid_argument, op, name, " stride ",
          v.stride(), " is smaller than a row (", v.row_bytes(), " bytes)");
}

static std::string list_depths(std::initializer_list<Depth> allowed) {
  std::string s;
  for (Depth d : allowed) s += (s.empty() ? "" : ", ") + std::string(depth_name(d));
  return s;
}

void check_depth(std::string_view op, std::string_view name, const ConstImageView& v,
                 std::initializer_list<Depth> allowed) {
  for (Depth d : allowed)
    if (v.depth() == d) return;
  fail(Status::unsupported, op, name, " depth must be one of ", list_depths(allowed), " (got ",
       depth_name(v.depth()), ")");
}

void check_channels(std::string_view op, std::string_view name, const ConstImageView& v,
                    std::initializer_list<int> allowed) {
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
  require(std::isfinite(b.value), Status::invalid_argument, op,
          "border value must be finite (got ", b.value, ")");
}

Backend select_backend(std::string_view op, const Context& ctx, const ConstImageView& img) {
  const Location loc = img.location();
  switch (ctx.backend) {
    case Backend::automatic:
      if (loc.is_host()) return Backend::cpu;
      if (loc.kind == Location::Kind::cuda) return Backend::cuda;
      return Backend::opencl;
    case Backend::ref:
    case Backend::cpu:
      require(loc.is_host(), Status::invalid_argument, op, "backend ", backend_name(ctx.backend),
              " needs host images (got ", to_string(loc), "); copy them explicitly");
      return ctx.backend;
    case Backend::cuda:
      require(loc.kind == Location::Kind::cuda, Status::invalid_argument, op,
              "backend cuda needs cuda images (got ", to_string(loc), "); copy them explicitly");
      return Backend::cuda;
    case Backend::opencl:
      fail(Status::backend_unavailable, op, "the OpenCL backend is not built yet");
  }
  fail(Status::internal, op, "unknown backend");
}

}  // namespace pixflow::detail
