// Every op of the reference as a host implementation, registered by the `ref` backend
// (serial: the oracle) and by the `cpu` backend (the same functions over row bands on the
// thread pool) with their Runner. The reference takes every format that validation lets
// through, so the entries carry no Support restriction.
#pragma once

#include "src/backends/adapt.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::detail {

template <class Runner>
void register_reference_ops(ImplTable& t, Backend b) {
  using Tail = RowBands<Runner>;
  using ArithImage =
      void (*)(const ConstImageView&, const ConstImageView&, const ImageView&, ArithOp, Rows);
  using ArithScalar = void (*)(const ConstImageView&, double, const ImageView&, ArithOp, Rows);
  add_impl<&ref::median, Tail>(t, "median", b);
  add_impl<&ref::morph_pass, Tail>(t, "morph_pass", b);
  add_impl<&ref::box, Tail>(t, "box", b);
  add_impl<&ref::gaussian, Tail>(t, "gaussian", b);
  add_impl<&ref::sobel, Tail>(t, "sobel", b);
  add_impl<&ref::scharr, Tail>(t, "scharr", b);
  add_impl<&ref::filter2d, Tail>(t, "filter2d", b);
  add_impl<&ref::epsilon, Tail>(t, "epsilon", b);
  add_impl<&ref::bilateral, Tail>(t, "bilateral", b);
  add_impl<&ref::remap, Tail>(t, "remap", b);
  add_impl<&ref::transpose, Tail>(t, "transpose", b);
  add_impl<&ref::gray, Tail>(t, "gray", b);
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    add_impl<static_cast<ArithImage>(&ref::arith), Tail>(t, op, b);
    add_impl<static_cast<ArithScalar>(&ref::arith), Tail>(t, op, b);
  }
  add_impl<&ref::convert, Tail>(t, "convert", b);
  add_impl<&ref::threshold, Tail>(t, "threshold", b);
  add_impl<&ref::dot, Tail>(t, "dot", b);
  add_impl<&ref::matmul, Tail>(t, "matmul", b);
  // The recursive Gaussian: rows into an f32 image, then bands of columns.
  t.add(
      "gaussian_iir", b,
      +[](const Exec& e, const ConstImageView& src, const ImageView& dst,
          const GaussianIirParams& p) {
        Image tmp(src.width(), src.height(), {Depth::f32, src.channels()}, src.location());
        const ImageView tv = tmp.view();
        Runner::run(e, src.height(), [&](Rows r) { ref::gaussian_iir_h(src, tv, p, r); });
        Runner::run(e, src.width(), [&](Rows c) { ref::gaussian_iir_v(tv, dst, p, c); });
      });
}

}  // namespace pixflow::detail
