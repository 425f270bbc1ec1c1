// Every op of the reference as a host implementation, registered by the `ref` backend
// (serial: the oracle) and by the `cpu` backend (the same functions over row bands on the
// thread pool) with their Runner. The reference takes every format that validation lets
// through, so the entries carry no Support restriction.
#pragma once

#include "src/backends/host_rows.hpp"
#include "src/ref/ref.hpp"

namespace pixflow::detail {

template <class Runner>
void register_reference_ops(ImplTable& t, Backend b) {
  auto add = [&]<auto F>(const char* op) {
    t.add(op, b, RowsImpl<F, Runner>::fn);
  };
  add.template operator()<&ref::median>("median");
  add.template operator()<&ref::morph_pass>("morph_pass");
  add.template operator()<&ref::box>("box");
  add.template operator()<&ref::gaussian>("gaussian");
  add.template operator()<&ref::sobel>("sobel");
  add.template operator()<&ref::scharr>("scharr");
  add.template operator()<&ref::filter2d>("filter2d");
  add.template operator()<&ref::epsilon>("epsilon");
  add.template operator()<&ref::bilateral>("bilateral");
  add.template operator()<&ref::remap>("remap");
  add.template operator()<&ref::transpose>("transpose");
  add.template operator()<&ref::gray>("gray");
  using ArithImage =
      void (*)(const ConstImageView&, const ConstImageView&, const ImageView&, ArithOp, Rows);
  using ArithScalar = void (*)(const ConstImageView&, double, const ImageView&, ArithOp, Rows);
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    add.template operator()<static_cast<ArithImage>(&ref::arith)>(op);
    add.template operator()<static_cast<ArithScalar>(&ref::arith)>(op);
  }
  add.template operator()<&ref::convert>("convert");
  add.template operator()<&ref::threshold>("threshold");
  add.template operator()<&ref::dot>("dot");
  add.template operator()<&ref::matmul>("matmul");
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
