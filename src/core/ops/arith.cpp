// add, sub, absdiff, mul: validation, dispatch, registry entries. Rule: docs/ops/arith.md.
#include <cmath>
#include <memory>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"
#include "src/core/run.hpp"
#include "src/ref/ref.hpp"
#if PIXFLOW_HAVE_CUDA
#include "src/backends/cuda/cuda_ops.hpp"
#endif

namespace pixflow {

namespace {

const char* checked_name(ArithOp op) {
  switch (op) {
    case ArithOp::add:
    case ArithOp::sub:
    case ArithOp::absdiff:
    case ArithOp::mul:
      return arith_op_name(op);
  }
  detail::fail(Status::invalid_argument, "arith", "op must be add, sub, absdiff or mul (got ",
               int(op), ")");
}

void check_a_dst(const char* op, const ConstImageView& a, const ImageView& dst) {
  detail::check_view(op, "a", a);
  detail::check_depth(op, "a", a, {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  detail::check_dst(op, dst, a.width(), a.height(), a.format());
  detail::check_same_location(op, a, dst);
  detail::check_no_overlap(op, a, dst, /*allow_identical=*/true);
}

}  // namespace

void arith(ConstImageView a, ConstImageView b, ImageView dst, ArithOp aop, const Context& ctx) {
  const char* op = checked_name(aop);
  check_a_dst(op, a, dst);
  detail::check_view(op, "b", b);
  detail::require(b.width() == a.width() && b.height() == a.height() && b.format() == a.format(),
                  Status::invalid_argument, op, "b must have a's size and format ", a.width(), "x",
                  a.height(), " ", to_string(a.format()), " (got ", b.width(), "x", b.height(), " ",
                  to_string(b.format()), ")");
  detail::check_same_location(op, b, dst);
  detail::check_no_overlap(op, b, dst, /*allow_identical=*/true);
  const Backend be = detail::select_backend(op, ctx, a);
  switch (be) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(be, ctx, dst.height(),
                       [&](detail::Rows r) { ref::arith(a, b, dst, aop, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::arith(a, b, dst, aop, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(be), " implementation yet");
  }
}

void arith(ConstImageView a, double value, ImageView dst, ArithOp aop, const Context& ctx) {
  const char* op = checked_name(aop);
  check_a_dst(op, a, dst);
  detail::require(std::isfinite(value), Status::invalid_argument, op,
                  "value must be a finite number (got ", value, ")");
  const Backend be = detail::select_backend(op, ctx, a);
  switch (be) {
    case Backend::ref:
    case Backend::cpu:
      detail::run_host(be, ctx, dst.height(),
                       [&](detail::Rows r) { ref::arith(a, value, dst, aop, r); });
      return;
#if PIXFLOW_HAVE_CUDA
    case Backend::cuda:
      cuda::arith(a, value, dst, aop, ctx.stream);
      return;
#endif
    default:
      detail::fail(Status::unsupported, op, "no ", backend_name(be), " implementation yet");
  }
}

namespace detail {

namespace {

OpInfo arith_entry(ArithOp aop, const char* doc) {
  const std::string name = arith_op_name(aop);
  return {name,
          doc,
          {{"with", "", "a second image file of the input's size and format"},
           {"value", "", "a scalar (exactly one of with and value)"}},
          [aop, name](const OpArgs& a) -> StageFn {
            const bool has_with = a.has("with"), has_value = a.has("value");
            require(has_with != has_value, Status::invalid_argument, name,
                    "exactly one of with=FILE and value=V is required (got ",
                    has_with ? "both" : "neither", ")");
            if (has_value) {
              const double v = a.get_double("value", 0.0);
              return [aop, v](ConstImageView src, const Context& ctx) {
                Image dst(src.width(), src.height(), src.format(), src.location());
                arith(src, v, dst, aop, ctx);
                return dst;
              };
            }
            // Read once at bind time, so that a missing or corrupt file fails before any
            // input is read. Shared (StageFn must be copyable; the image is read-only).
            auto other = std::make_shared<const Image>(a.get_image("with"));
            const std::string file = a.get_string("with");
            return [aop, other, file, name](ConstImageView src, const Context& ctx) {
              const Image& w = *other;
              require(w.width() == src.width() && w.height() == src.height() &&
                          w.format() == src.format(),
                      Status::invalid_argument, name, "with image '", file, "' is ", w.width(), "x",
                      w.height(), " ", to_string(w.format()), " but the input is ", src.width(),
                      "x", src.height(), " ", to_string(src.format()));
              Image dst(src.width(), src.height(), src.format(), src.location());
              if (src.location() == w.location()) {
                arith(src, w.view(), dst, aop, ctx);
              } else {
                // The operand comes from a file (host); the stage uploads it explicitly to
                // where the pipeline's image lives.
                Image moved(w.width(), w.height(), w.format(), src.location());
                copy(w.view(), moved);
                arith(src, moved.view(), dst, aop, ctx);
              }
              return dst;
            };
          }};
}

}  // namespace

void register_arith(std::vector<OpInfo>& r) {
  r.push_back(arith_entry(ArithOp::add, "a + b (or a + value), saturating; any depth"));
  r.push_back(arith_entry(ArithOp::sub, "a - b (or a - value), saturating; any depth"));
  r.push_back(arith_entry(ArithOp::absdiff, "|a - b| (or |a - value|), saturating; any depth"));
  r.push_back(arith_entry(ArithOp::mul,
                          "a * b (or a * value, rounded half to even), saturating; any depth"));
}

}  // namespace detail

}  // namespace pixflow
