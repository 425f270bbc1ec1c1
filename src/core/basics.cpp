// Names and parsers of the small public enums.
#include <string>

#include "pixflow/border.hpp"
#include "pixflow/error.hpp"
#include "pixflow/format.hpp"
#include "pixflow/image.hpp"
#include "pixflow/ops.hpp"

namespace pixflow {

const char* status_name(Status s) noexcept {
  switch (s) {
    case Status::invalid_argument:
      return "invalid_argument";
    case Status::unsupported:
      return "unsupported";
    case Status::backend_unavailable:
      return "backend_unavailable";
    case Status::out_of_memory:
      return "out_of_memory";
    case Status::backend_error:
      return "backend_error";
    case Status::io_error:
      return "io_error";
    case Status::limit_exceeded:
      return "limit_exceeded";
    case Status::internal:
      return "internal";
  }
  return "?";
}

const char* depth_name(Depth d) noexcept {
  switch (d) {
    case Depth::u8:
      return "u8";
    case Depth::u16:
      return "u16";
    case Depth::s16:
      return "s16";
    case Depth::s32:
      return "s32";
    case Depth::f32:
      return "f32";
  }
  return "?";
}

Depth parse_depth(std::string_view s, std::string_view what) {
  for (Depth d : {Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32})
    if (s == depth_name(d)) return d;
  throw Error(Status::invalid_argument, std::string(what) + " must be one of u8, u16, s16, s32, " +
                                            "f32 (got '" + std::string(s) + "')");
}

std::string to_string(Format f) {
  return std::string(depth_name(f.depth)) + "x" + std::to_string(f.channels);
}

const char* border_name(BorderType t) noexcept {
  switch (t) {
    case BorderType::replicate:
      return "replicate";
    case BorderType::reflect:
      return "reflect";
    case BorderType::reflect101:
      return "reflect101";
    case BorderType::wrap:
      return "wrap";
    case BorderType::constant:
      return "constant";
  }
  return "?";
}

BorderType parse_border(std::string_view s, std::string_view what) {
  for (BorderType t : {BorderType::replicate, BorderType::reflect, BorderType::reflect101,
                       BorderType::wrap, BorderType::constant})
    if (s == border_name(t)) return t;
  throw Error(Status::invalid_argument,
              std::string(what) + " must be one of replicate, reflect, reflect101, wrap, " +
                  "constant (got '" + std::string(s) + "')");
}

std::string to_string(Location l) {
  switch (l.kind) {
    case Location::Kind::host:
      return "host";
    case Location::Kind::cuda:
      return "cuda:" + std::to_string(l.device);
    case Location::Kind::opencl:
      return "opencl:" + std::to_string(l.device);
  }
  return "?";
}

const char* backend_name(Backend b) noexcept {
  switch (b) {
    case Backend::automatic:
      return "auto";
    case Backend::ref:
      return "ref";
    case Backend::cpu:
      return "cpu";
    case Backend::cuda:
      return "cuda";
    case Backend::opencl:
      return "opencl";
  }
  return "?";
}

const char* morph_op_name(MorphOp op) noexcept {
  switch (op) {
    case MorphOp::dilate:
      return "dilate";
    case MorphOp::erode:
      return "erode";
    case MorphOp::open:
      return "open";
    case MorphOp::close:
      return "close";
    case MorphOp::gradient:
      return "gradient";
    case MorphOp::tophat:
      return "tophat";
    case MorphOp::blackhat:
      return "blackhat";
  }
  return "?";
}

const char* arith_op_name(ArithOp op) noexcept {
  switch (op) {
    case ArithOp::add:
      return "add";
    case ArithOp::sub:
      return "sub";
    case ArithOp::absdiff:
      return "absdiff";
    case ArithOp::mul:
      return "mul";
  }
  return "?";
}

}  // namespace pixflow
