// Parameters of the internal passes that core composes public ops from; backends implement
// them like any op (registered under the names below).
#pragma once

#include "pixflow/ops.hpp"

namespace pixflow::detail {

/// "morph_pass": one dilate or erode (op) with a kw x kh rectangle anchored at (ax, ay);
/// iterations and the composites (open, close, ...) are built from it by core.
struct MorphPass {
  MorphOp op = MorphOp::dilate;
  int kw = 3, kh = 3, ax = 1, ay = 1;
  Border border;
};

}  // namespace pixflow::detail
