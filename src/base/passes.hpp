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

/// "morph_composite.covers": a backend whose "morph_composite" takes only some windows and
/// borders registers this too, (src, MorphPass, MorphCovers), and sets `yes` for the calls
/// its composite takes; core runs the others as passes. A backend registering no such
/// answer takes every composite of the formats it registered.
struct MorphCovers {
  mutable bool yes = false;
};

}  // namespace pixflow::detail
