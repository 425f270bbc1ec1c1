// Every op of the reference as a host implementation, registered by the `ref` backend
// (serial: the oracle) and by the `cpu` backend (the same functions over row bands on the
// thread pool, as the fallback behind its SIMD kernels, src/backends/cpu/simd) with their
// Runner. The reference takes every format that validation lets through, so the entries
// carry no Support restriction.
#pragma once

#include "src/backends/adapt.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::detail {

enum class Rank { primary, fallback };

template <auto F, class Tail>
void add_ranked(ImplTable& t, const char* op, Backend b, Rank r) {
  if (r == Rank::fallback)
    add_fallback_impl<F, Tail>(t, op, b);
  else
    add_impl<F, Tail>(t, op, b);
}

template <class Runner>
void register_reference_ops(ImplTable& t, Backend b, Rank rank) {
  using Tail = RowBands<Runner>;
  using ArithImage =
      void (*)(const ConstImageView&, const ConstImageView&, const ImageView&, ArithOp, Rows);
  using ArithScalar = void (*)(const ConstImageView&, double, const ImageView&, ArithOp, Rows);
  add_ranked<&ref::median, Tail>(t, "median", b, rank);
  add_ranked<&ref::morph_pass, Tail>(t, "morph_pass", b, rank);
  add_ranked<&ref::box, Tail>(t, "box", b, rank);
  add_ranked<&ref::gaussian, Tail>(t, "gaussian", b, rank);
  add_ranked<&ref::sobel, Tail>(t, "sobel", b, rank);
  add_ranked<&ref::scharr, Tail>(t, "scharr", b, rank);
  add_ranked<&ref::filter2d, Tail>(t, "filter2d", b, rank);
  add_ranked<&ref::epsilon, Tail>(t, "epsilon", b, rank);
  add_ranked<&ref::bilateral, Tail>(t, "bilateral", b, rank);
  add_ranked<&ref::remap, Tail>(t, "remap", b, rank);
  add_ranked<&ref::transpose, Tail>(t, "transpose", b, rank);
  add_ranked<&ref::flip, Tail>(t, "flip", b, rank);
  add_ranked<&ref::rotate, Tail>(t, "rotate", b, rank);
  add_ranked<&ref::crop, Tail>(t, "crop", b, rank);
  add_ranked<&ref::pad, Tail>(t, "pad", b, rank);
  add_ranked<&ref::resize, Tail>(t, "resize", b, rank);
  add_ranked<&ref::gray, Tail>(t, "gray", b, rank);
  add_ranked<&ref::channels, Tail>(t, "channels", b, rank);
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    add_ranked<static_cast<ArithImage>(&ref::arith), Tail>(t, op, b, rank);
    add_ranked<static_cast<ArithScalar>(&ref::arith), Tail>(t, op, b, rank);
  }
  add_ranked<&ref::convert, Tail>(t, "convert", b, rank);
  add_ranked<&ref::threshold, Tail>(t, "threshold", b, rank);
  add_ranked<&ref::dot, Tail>(t, "dot", b, rank);
  add_ranked<&ref::matmul, Tail>(t, "matmul", b, rank);
  // The recursive Gaussian: rows into an f32 image, then bands of columns.
  auto iir = +[](const Exec& e, const ConstImageView& src, const ImageView& dst,
                 const GaussianIirParams& p) {
    Image tmp(src.width(), src.height(), {Depth::f32, src.channels()}, src.location());
    const ImageView tv = tmp.view();
    Runner::run(e, src.height(), [&](Rows r) { ref::gaussian_iir_h(src, tv, p, r); });
    Runner::run(e, src.width(), [&](Rows c) { ref::gaussian_iir_v(tv, dst, p, c); });
  };
  if (rank == Rank::fallback)
    t.add_fallback("gaussian_iir", b, iir);
  else
    t.add("gaussian_iir", b, iir);
}

}  // namespace pixflow::detail
