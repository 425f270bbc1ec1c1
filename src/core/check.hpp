// Validation helpers: every op validates on the host, before dispatch, and throws one
// Error whose message starts with the op's name.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "pixflow/error.hpp"
#include "pixflow/image.hpp"
#include "pixflow/ops.hpp"
#include "src/base/error.hpp"
#include "src/schema/schema.hpp"

namespace pixflow::detail {

/// Checks a view: non-empty, stride >= row bytes, channels 1..4.
void check_view(std::string_view op, std::string_view name, const ConstImageView& v);
/// Checks that `v` has one of the listed depths.
void check_depth(std::string_view op, std::string_view name, const ConstImageView& v,
                 std::span<const Depth> allowed);
void check_channels(std::string_view op, std::string_view name, const ConstImageView& v,
                    std::span<const int> allowed);
inline void check_depth(std::string_view op, std::string_view name, const ConstImageView& v,
                        std::initializer_list<Depth> allowed) {
  check_depth(op, name, v, std::span<const Depth>(allowed.begin(), allowed.size()));
}
inline void check_channels(std::string_view op, std::string_view name, const ConstImageView& v,
                           std::initializer_list<int> allowed) {
  check_channels(op, name, v, std::span<const int>(allowed.begin(), allowed.size()));
}
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

/// The checks of a one-source op from its schema: src (view, depths, channels), the
/// parameters, dst (view, the schema's output shape), one location, no overlap
/// (`in_place`: dst may be src itself).
template <class P>
void check_op(const schema::OpDef<P>& s, const ConstImageView& src, const ImageView& dst,
              const P& p, bool in_place = false) {
  const std::string& op = s.name();
  check_view(op, "src", src);
  check_depth(op, "src", src, s.depths());
  check_channels(op, "src", src, s.channels());
  s.validate(p);
  const schema::Shape out = s.shape(src, p);
  check_dst(op, dst, out.width, out.height, out.format);
  check_same_location(op, src, dst);
  check_no_overlap(op, src, dst, in_place);
}

/// The checks of check_op that a query needs (the *_workspace_bytes functions): src's size,
/// depths and channels and the parameters, but no pixels (src may be a view without data,
/// standing for the source) and no dst.
template <class P>
void check_source_shape(const schema::OpDef<P>& s, const ConstImageView& src, const P& p) {
  const std::string& op = s.name();
  require(src.width() > 0 && src.height() > 0, Status::invalid_argument, op,
          "src must not be empty (got ", src.width(), "x", src.height(), ")");
  require(src.channels() >= 1 && src.channels() <= 4, Status::invalid_argument, op,
          "src must have 1..4 channels (got ", src.channels(), ")");
  check_depth(op, "src", src, s.depths());
  check_channels(op, "src", src, s.channels());
  s.validate(p);
}

}  // namespace pixflow::detail
