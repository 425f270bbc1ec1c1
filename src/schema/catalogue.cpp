// The catalogue: every op reachable from a pipeline, in the order `pixflow info` lists them.
// dot and matmul (two-input, API only) are validated in src/core/ops/linalg.cpp.
#include "src/schema/ops.hpp"

namespace pixflow::schema {

const std::vector<const Op*>& catalogue() {
  static const std::vector<const Op*> ops = [] {
    std::vector<const Op*> v{&median_op()};
    for (MorphOp m : {MorphOp::dilate, MorphOp::erode, MorphOp::open, MorphOp::close,
                      MorphOp::gradient, MorphOp::tophat, MorphOp::blackhat})
      v.push_back(&morph_op(m));
    v.insert(v.end(), {&box_op(), &gaussian_op(), &gaussian_iir_op(), &sobel_op(), &scharr_op(),
                       &filter2d_op(), &epsilon_op(), &bilateral_op(), &remap_op(), &transpose_op(),
                       &gray_op(), &channels_op()});
    v.insert(v.end(), {&resize_op(), &flip_op(), &rotate_op(), &crop_op(), &pad_op()});  // geometry
    for (ArithOp a : {ArithOp::add, ArithOp::sub, ArithOp::absdiff, ArithOp::mul})
      v.push_back(&arith_op(a));
    v.insert(v.end(), {&convert_op(), &threshold_op()});
    return v;
  }();
  return ops;
}

const Op* find(std::string_view name) {
  for (const Op* op : catalogue())
    if (op->name() == name) return op;
  return nullptr;
}

}  // namespace pixflow::schema
