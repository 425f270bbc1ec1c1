// pixflow._pixflow: the native half of the Python package (nanobind).
//
// It is the C++ library, not a second implementation: an op call binds the op's schema
// (src/schema) from KEY=VALUE text exactly as a pipeline stage does, then runs the op's public
// C++ function on views of the caller's arrays (DLPack or the buffer protocol, no copy). The
// Python half (python/pixflow/__init__.py) turns keyword arguments into that text, allocates
// outputs in the caller's array framework and picks the stream.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "pixflow/device.hpp"
#include "pixflow/error.hpp"
#include "pixflow/io.hpp"
#include "pixflow/pipeline.hpp"
#include "src/base/error.hpp"
#include "src/core/check.hpp"
#include "src/schema/schema.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace pixflow::python {
namespace {

using detail::cat;

[[noreturn]] void bad(const std::string& op, const std::string& msg) {
  throw Error(Status::invalid_argument, op + ": " + msg);
}

// ---- arrays <-> views ------------------------------------------------------------------

Depth depth_of(nb::dlpack::dtype t, const std::string& op, const char* arg) {
  using nb::dlpack::dtype_code;
  const auto code = dtype_code(t.code);
  if (t.lanes == 1) {
    if (code == dtype_code::UInt && t.bits == 8) return Depth::u8;
    if (code == dtype_code::UInt && t.bits == 16) return Depth::u16;
    if (code == dtype_code::Int && t.bits == 16) return Depth::s16;
    if (code == dtype_code::Int && t.bits == 32) return Depth::s32;
    if (code == dtype_code::Float && t.bits == 32) return Depth::f32;
  }
  const char* kind = code == dtype_code::UInt    ? "uint"
                     : code == dtype_code::Int   ? "int"
                     : code == dtype_code::Float ? "float"
                     : code == dtype_code::Bool  ? "bool"
                                                 : "other";
  throw Error(Status::unsupported, cat(op, ": ", arg, " has dtype ", kind, int(t.bits),
                                       "; expected uint8, uint16, int16, int32 or float32"));
}

template <class Array>
Location location_of(const Array& a, const std::string& op, const char* arg) {
  switch (a.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value:
      return Location::host();
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value:
      return Location::cuda(int(a.device_id()));
    default:
      throw Error(Status::unsupported,
                  cat(op, ": ", arg, " lives on a device of DLPack type ", a.device_type(),
                      "; expected host (CPU) or CUDA memory"));
  }
}

/// An array as its parts: dims, shape, strides in elements, depth, location.
struct ArrayDesc {
  const void* data = nullptr;
  std::size_t ndim = 0;
  std::int64_t shape[3] = {0, 0, 0}, strides[3] = {0, 0, 0};
  Depth depth = Depth::u8;
  Location where;
};

// An array as an image view: H x W (1 channel) or H x W x C (C in 1..4), pixels and channels
// packed within a row (a row stride of any size >= the row's bytes: slices of rows and
// columns are fine), the rows in increasing order.
ImageView view_of(const ArrayDesc& a, const std::string& op, const char* arg) {
  const std::size_t item = depth_bytes(a.depth);
  if (a.ndim != 2 && a.ndim != 3)
    bad(op, cat(arg, " must be an H x W or H x W x C array (got ", a.ndim, " dimensions)"));
  const std::int64_t h = a.shape[0], w = a.shape[1];
  const int c = a.ndim == 3 ? int(a.shape[2]) : 1;
  if (c < 1 || c > 4) bad(op, cat(arg, " must have 1 to 4 channels (got ", c, ")"));
  if (h < 1 || w < 1) bad(op, cat(arg, " is empty (", h, "x", w, ")"));
  const std::int64_t sc = a.ndim == 3 ? a.strides[2] : 1;
  const std::int64_t sx = a.strides[1], sy = a.strides[0];
  if ((c > 1 && sc != 1) || (w > 1 && sx != c) || (h > 1 && sy < w * c))
    bad(op, cat(arg,
                " must have its channels and pixels packed within each row, rows in order "
                "(element strides: row ",
                sy, ", pixel ", sx, ", channel ", sc, "; expected ", w * c, " or more, ", c,
                ", 1); pass a copy (numpy.ascontiguousarray)"));
  const std::int64_t stride = h > 1 ? sy * std::int64_t(item) : w * c * std::int64_t(item);
  return ImageView(const_cast<void*>(a.data), w, h, stride, Format{a.depth, c}, a.where);
}

template <class Array>
ArrayDesc desc_of(const Array& a, const std::string& op, const char* arg) {
  ArrayDesc d;
  d.data = a.data();
  d.ndim = a.ndim();
  d.depth = depth_of(a.dtype(), op, arg);
  d.where = location_of(a, op, arg);
  for (std::size_t i = 0; i < d.ndim && i < 3; ++i) {
    d.shape[i] = std::int64_t(a.shape(i));
    d.strides[i] = std::int64_t(a.stride(i));  // DLPack strides are in elements
  }
  return d;
}

/// A CuPy array or PyTorch tensor as the package describes it (python/pixflow/__init__.py,
/// _cupy_desc / _torch_desc): (data pointer, shape, strides, depth name, CUDA device or -1,
/// whether the strides are in bytes (CuPy) or elements (PyTorch)). Reading these attributes
/// costs less than a DLPack export, which both frameworks implement in Python or Cython.
bool desc_of_tuple(nb::handle obj, ArrayDesc& d, const std::string& op, const char* arg) {
  if (!nb::isinstance<nb::tuple>(obj)) return false;
  const auto t = nb::borrow<nb::tuple>(obj);
  if (t.size() != 6) return false;
  d.data = reinterpret_cast<const void*>(nb::cast<std::uintptr_t>(t[0]));
  const auto shape = nb::cast<std::vector<std::int64_t>>(t[1]);
  const auto strides = nb::cast<std::vector<std::int64_t>>(t[2]);
  d.depth = parse_depth(nb::cast<std::string>(t[3]), op + ": " + arg + " dtype");
  const int device = nb::cast<int>(t[4]);
  const bool in_bytes = nb::cast<bool>(t[5]);
  const auto item = std::int64_t(depth_bytes(d.depth));
  d.ndim = shape.size();
  for (std::size_t i = 0; i < d.ndim && i < 3; ++i) {
    d.shape[i] = shape[i];
    std::int64_t st = i < strides.size() ? strides[i] : 0;
    // A byte stride that is not a whole number of samples can be no view of ours: make it
    // one that view_of refuses with its message.
    if (in_bytes) st = st % item == 0 ? st / item : -1;
    d.strides[i] = st;
  }
  d.where = device < 0 ? Location::host() : Location::cuda(device);
  return true;
}

[[noreturn]] void not_an_array(nb::handle obj, const std::string& op, const char* arg) {
  throw Error(Status::invalid_argument,
              cat(op, ": ", arg,
                  " must be an array (DLPack or the buffer protocol: NumPy, CuPy, "
                  "PyTorch, ...); got ",
                  nb::inst_name(obj).c_str()));
}

/// A source array (only read: read-only arrays are fine).
ArrayDesc source_array(nb::handle obj, const std::string& op, const char* arg) {
  ArrayDesc d;
  if (desc_of_tuple(obj, d, op, arg)) return d;
  nb::ndarray<nb::ro> a;
  if (!nb::try_cast(obj, a, false)) not_an_array(obj, op, arg);
  return desc_of(a, op, arg);
}

/// A destination array: writable.
ArrayDesc dest_array(nb::handle obj, const std::string& op, const char* arg) {
  ArrayDesc d;
  if (desc_of_tuple(obj, d, op, arg)) return d;
  nb::ndarray<> a;
  if (nb::try_cast(obj, a, false)) return desc_of(a, op, arg);
  nb::ndarray<nb::ro> ro;
  if (nb::try_cast(obj, ro, false)) bad(op, cat(arg, " is read-only; expected a writable array"));
  not_an_array(obj, op, arg);
}

Context make_context(const std::string& op, const std::string& backend, std::uintptr_t stream,
                     int threads, Location where) {
  Context ctx;
  if (backend.empty() || backend == "auto")
    ctx.backend = Backend::automatic;
  else if (backend == "ref")
    ctx.backend = Backend::ref;
  else if (backend == "cpu")
    ctx.backend = Backend::cpu;
  else if (backend == "cuda")
    ctx.backend = Backend::cuda;
  else
    bad(op, cat("backend must be auto, ref, cpu or cuda (got '", backend, "')"));
  if (threads < 0) bad(op, cat("threads must be >= 0 (got ", threads, ")"));
  ctx.threads = threads;
  if (stream != 0) {
    if (where.kind != Location::Kind::cuda)
      bad(op, cat("stream is for CUDA arrays; the arrays live on ", to_string(where)));
    ctx.queue = Queue::cuda(reinterpret_cast<void*>(stream));
  }
  return ctx;
}

const char* dtype_name(Depth d) {
  switch (d) {
    case Depth::u8:
      return "uint8";
    case Depth::u16:
      return "uint16";
    case Depth::s16:
      return "int16";
    case Depth::s32:
      return "int32";
    case Depth::f32:
      return "float32";
  }
  return "?";
}

/// The result's array shape: H x W for one channel, unless the source was H x W x 1 (the
/// caller's layout is kept); H x W x C otherwise.
nb::tuple out_shape(std::int64_t h, std::int64_t w, int c, std::size_t src_ndim, int src_c) {
  if (c == 1 && (src_ndim == 2 || src_c != 1)) return nb::make_tuple(h, w);
  return nb::make_tuple(h, w, c);
}

std::string shape_text(std::int64_t h, std::int64_t w, int c) {
  return c == 1 ? cat("(", h, ", ", w, ")") : cat("(", h, ", ", w, ", ", c, ")");
}

/// `out` must hold the result: its size and format, where the source lives.
void check_out(const std::string& op, const ImageView& out, std::int64_t h, std::int64_t w,
               Format f, Location where) {
  if (out.width() != w || out.height() != h || out.format() != f)
    bad(op, cat("out must be a ", dtype_name(f.depth), " array of shape ",
                shape_text(h, w, f.channels), " (got ", dtype_name(out.depth()), " ",
                shape_text(out.height(), out.width(), out.channels()), ")"));
  if (out.location() != where)
    bad(op, cat("out must live where src lives (", to_string(where), "; got ",
                to_string(out.location()), ")"));
}

// ---- the call: NumPy, CuPy and PyTorch arrays read in C++ -------------------------------

enum class Framework { numpy, cupy, torch, other };

/// What the call looks up in the frameworks, once: interned attribute names, the type and dtype
/// of every array seen, the frameworks' allocators and stream getters. Leaked on purpose (it
/// holds Python objects; destroying it after the interpreter would be wrong).
struct Frameworks {
  nb::object s_data = nb::steal(PyUnicode_InternFromString("data"));
  nb::object s_ptr = nb::steal(PyUnicode_InternFromString("ptr"));
  nb::object s_device_id = nb::steal(PyUnicode_InternFromString("device_id"));
  nb::object s_shape = nb::steal(PyUnicode_InternFromString("shape"));
  nb::object s_strides = nb::steal(PyUnicode_InternFromString("strides"));
  nb::object s_dtype = nb::steal(PyUnicode_InternFromString("dtype"));
  nb::object s_data_ptr = nb::steal(PyUnicode_InternFromString("data_ptr"));
  nb::object s_stride = nb::steal(PyUnicode_InternFromString("stride"));
  nb::object s_get_device = nb::steal(PyUnicode_InternFromString("get_device"));
  nb::object s_device = nb::steal(PyUnicode_InternFromString("device"));
  nb::object s_cuda_stream = nb::steal(PyUnicode_InternFromString("cuda_stream"));

  std::map<PyObject*, Framework> by_type;  // type -> framework (types kept alive in `kept`)
  std::map<PyObject*, int> depth_of;       // dtype object -> Depth, or -1: not one of ours
  std::vector<nb::object> kept;

  nb::object np_empty, cp_empty, cp_stream, cp_device, torch_empty, torch_raw_stream;
  nb::object torch_dtype[5];
  bool cp_stream_by_device = true;  // cupy.cuda.get_current_stream(device_id) is available
};

Frameworks& frameworks() {
  static Frameworks* f = new Frameworks;
  return *f;
}

Framework framework_of(nb::handle obj) {
  Frameworks& f = frameworks();
  nb::handle type = nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())));
  if (auto it = f.by_type.find(type.ptr()); it != f.by_type.end()) return it->second;
  Framework fw = Framework::other;
  nb::object mod = nb::getattr(type, "__module__", nb::none());
  if (nb::isinstance<nb::str>(mod)) {
    const std::string m = nb::cast<std::string>(mod);
    fw = m == "numpy"               ? Framework::numpy
         : m.rfind("cupy", 0) == 0  ? Framework::cupy
         : m.rfind("torch", 0) == 0 ? Framework::torch
                                    : Framework::other;
  }
  if (f.by_type.size() < 256) {
    f.kept.push_back(nb::borrow(type));
    f.by_type[type.ptr()] = fw;
  }
  return fw;
}

/// The Depth of a NumPy/CuPy or PyTorch dtype object, or -1.
int depth_of_dtype(nb::handle dtype, Framework fw) {
  Frameworks& f = frameworks();
  if (auto it = f.depth_of.find(dtype.ptr()); it != f.depth_of.end()) return it->second;
  int depth = -1;
  std::string name;
  if (fw == Framework::torch) {
    name = nb::cast<std::string>(nb::str(dtype));  // "torch.uint8"
    if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  } else if (nb::hasattr(dtype, "name") && nb::hasattr(dtype, "isnative") &&
             nb::cast<bool>(dtype.attr("isnative"))) {
    name = nb::cast<std::string>(dtype.attr("name"));
  }
  const std::pair<const char*, Depth> names[] = {{"uint8", Depth::u8},
                                                 {"uint16", Depth::u16},
                                                 {"int16", Depth::s16},
                                                 {"int32", Depth::s32},
                                                 {"float32", Depth::f32}};
  for (const auto& [n, d] : names)
    if (name == n) depth = int(d);
  if (f.depth_of.size() < 256) {
    f.kept.push_back(nb::borrow(dtype));
    f.depth_of[dtype.ptr()] = depth;
  }
  return depth;
}

void read_dims(nb::handle shape, nb::handle strides, bool in_bytes, ArrayDesc& d) {
  const auto sh = nb::borrow<nb::tuple>(shape);
  const auto st = nb::borrow<nb::tuple>(strides);
  const auto item = std::int64_t(depth_bytes(d.depth));
  d.ndim = sh.size();
  for (std::size_t i = 0; i < d.ndim && i < 3; ++i) {
    d.shape[i] = nb::cast<std::int64_t>(sh[i]);
    std::int64_t s = i < st.size() ? nb::cast<std::int64_t>(st[i]) : 0;
    // A byte stride that is not a whole number of samples can be no view of ours: make it one
    // that view_of refuses with its message.
    if (in_bytes) s = s % item == 0 ? s / item : -1;
    d.strides[i] = s;
  }
}

/// A CuPy array or a PyTorch tensor read through its attributes (cheaper than the DLPack
/// export both implement in Python or Cython); false for a dtype that is not ours.
bool describe(nb::handle a, Framework fw, ArrayDesc& d, int& device) {
  Frameworks& f = frameworks();
  const int depth = depth_of_dtype(a.attr(f.s_dtype), fw);
  if (depth < 0) return false;
  d.depth = Depth(depth);
  if (fw == Framework::cupy) {
    nb::object data = a.attr(f.s_data);
    d.data = reinterpret_cast<const void*>(nb::cast<std::uintptr_t>(data.attr(f.s_ptr)));
    device = nb::cast<int>(data.attr(f.s_device_id));
    read_dims(a.attr(f.s_shape), a.attr(f.s_strides), true, d);
  } else {
    d.data = reinterpret_cast<const void*>(nb::cast<std::uintptr_t>(a.attr(f.s_data_ptr)()));
    device = nb::cast<int>(a.attr(f.s_get_device)());
    read_dims(a.attr(f.s_shape), a.attr(f.s_stride)(), false, d);
  }
  d.where = device < 0 ? Location::host() : Location::cuda(device);
  return true;
}

/// The raw cudaStream_t of `stream`, or the current stream of src's framework on its device;
/// nothing where the Python half must ask (an old CuPy, an array on another device).
std::optional<std::uintptr_t> stream_of(nb::handle stream, Framework fw, int device) {
  Frameworks& f = frameworks();
  if (stream.is_none()) {
    if (device < 0) return 0;
    if (fw == Framework::cupy) {
      if (!f.cp_stream) {
        nb::object cuda = nb::module_::import_("cupy.cuda");
        f.cp_stream = cuda.attr("get_current_stream");
        f.cp_device = cuda.attr("runtime").attr("getDevice");
      }
      if (f.cp_stream_by_device) {
        try {
          return nb::cast<std::uintptr_t>(f.cp_stream(device).attr(f.s_ptr));
        } catch (const nb::python_error&) {  // an older CuPy: no device argument
          f.cp_stream_by_device = false;
        }
      }
      if (nb::cast<int>(f.cp_device()) != device) return std::nullopt;
      return nb::cast<std::uintptr_t>(f.cp_stream().attr(f.s_ptr));
    }
    if (!f.torch_raw_stream)
      f.torch_raw_stream = nb::module_::import_("torch._C").attr("_cuda_getCurrentRawStream");
    return nb::cast<std::uintptr_t>(f.torch_raw_stream(device));
  }
  if (PyLong_Check(stream.ptr())) return nb::cast<std::uintptr_t>(stream);
  if (nb::hasattr(stream, f.s_ptr)) return nb::cast<std::uintptr_t>(stream.attr(f.s_ptr));
  if (nb::hasattr(stream, f.s_cuda_stream))
    return nb::cast<std::uintptr_t>(stream.attr(f.s_cuda_stream));
  throw Error(Status::invalid_argument,
              cat("stream must be a CuPy or PyTorch stream or a raw cudaStream_t (got ",
                  nb::inst_name(stream).c_str(), ")"));
}

/// A new array of src's framework on src's device; none where that needs the Python half (a
/// CuPy array on a device other than the current one).
nb::object allocate(Framework fw, nb::handle src, int device, nb::handle shape, Depth depth) {
  Frameworks& f = frameworks();
  const char* dtype = dtype_name(depth);
  switch (fw) {
    case Framework::numpy:
      if (!f.np_empty) f.np_empty = nb::module_::import_("numpy").attr("empty");
      return f.np_empty(shape, dtype);
    case Framework::cupy: {
      if (!f.cp_empty) {
        nb::object cupy = nb::module_::import_("cupy");
        f.cp_empty = cupy.attr("empty");
        f.cp_device = cupy.attr("cuda").attr("runtime").attr("getDevice");
      }
      if (nb::cast<int>(f.cp_device()) != device) return nb::object();
      return f.cp_empty(shape, dtype);
    }
    case Framework::torch: {
      if (!f.torch_empty) {
        nb::object torch = nb::module_::import_("torch");
        f.torch_empty = torch.attr("empty");
        const char* names[] = {"uint8", "uint16", "int16", "int32", "float32"};
        for (int i = 0; i < 5; ++i) f.torch_dtype[i] = nb::getattr(torch, names[i], nb::none());
      }
      const nb::object& dt = f.torch_dtype[int(depth)];
      if (dt.is_none()) return nb::object();
      return f.torch_empty(shape, "dtype"_a = dt, "device"_a = src.attr(f.s_device));
    }
    case Framework::other:
      break;
  }
  return nb::object();
}

/// One call of an op or a pipeline from Python: the arrays read here, the output allocated in
/// src's framework unless given, the stream picked, the work run without the GIL. Returns
/// NotImplemented where the Python half must do it (a source of another framework, adopted
/// there; a CuPy output to allocate on another device than the current one).
/// `shape_of(view)` is the result's schema::Shape, `run(s, d, ctx)` the work.
template <class ShapeOf, class Run>
nb::object call(const std::string& op, nb::handle src, nb::handle out, nb::handle stream,
                nb::handle backend, nb::handle threads, const ShapeOf& shape_of, const Run& run) {
  const Framework fw = framework_of(src);
  if (fw == Framework::other) return nb::borrow(Py_NotImplemented);
  ArrayDesc a;
  int device = -1;
  if (fw == Framework::numpy || !describe(src, fw, a, device)) a = source_array(src, op, "src");
  const ImageView s = view_of(a, op, "src");
  const schema::Shape want = shape_of(s);
  const std::string be = backend.is_none() ? std::string() : nb::cast<std::string>(backend);
  const int nthreads = threads.is_none() ? 0 : nb::cast<int>(threads);
  const std::optional<std::uintptr_t> q = stream_of(stream, fw, device);
  if (!q) return nb::borrow(Py_NotImplemented);
  nb::object result = nb::borrow(out);
  if (out.is_none()) {
    result =
        allocate(fw, src, device,
                 out_shape(want.height, want.width, want.format.channels, a.ndim, s.channels()),
                 want.format.depth);
    if (!result.is_valid()) return nb::borrow(Py_NotImplemented);
  }
  ArrayDesc o;
  int out_device = -1;
  const Framework ofw = framework_of(result);
  if (ofw == Framework::numpy || ofw == Framework::other || !describe(result, ofw, o, out_device))
    o = dest_array(result, op, "out");
  const ImageView d = view_of(o, op, "out");
  check_out(op, d, want.height, want.width, want.format, s.location());
  const Context ctx = make_context(op, be, *q, nthreads, s.location());
  {
    nb::gil_scoped_release unlocked;
    run(s, d, ctx);
  }
  return result;
}

// ---- one op ----------------------------------------------------------------------------

/// An op bound to its parameters (schema::Op::bind), with the arrays of its image parameters.
class BoundOp {
 public:
  BoundOp(const std::string& name, const std::map<std::string, std::string>& kv,
          const std::map<std::string, nb::object>& images)
      : name_(name) {
    const schema::Op* op = schema::find(name);
    if (!op) bad("pixflow", cat("unknown op '", name, "'"));
    op_ = op;
    std::map<std::string, std::string> text = kv;
    for (const auto& [key, obj] : images) {
      schema::check_known_key(name, op->params(), key);
      text[key] = key;  // the resolver below looks the array up by key
    }
    const schema::ImageSource resolve = [&](const schema::Param& p, const std::string& key) {
      auto it = images.find(key);
      if (it == images.end()) bad(name, cat(p.name, " must be an array (got text '", key, "')"));
      const ImageView v =
          view_of(source_array(it->second, name, p.name.c_str()), name, p.name.c_str());
      keep_.push_back(it->second);
      // The array owns the pixels; keep_ keeps it alive as long as this binding.
      return std::make_shared<const Image>(Image::wrap(nullptr, v));
    };
    bound_ = op->bind(text, resolve);
  }

  /// (height, width, channels, depth name) of the output for a source of that shape.
  std::tuple<std::int64_t, std::int64_t, int, std::string> plan(std::int64_t h, std::int64_t w,
                                                                int c,
                                                                const std::string& depth) const {
    const Format f{parse_depth(depth, name_ + ": src dtype"), c};
    const ConstImageView v(nullptr, w, h, w * std::int64_t(f.pixel_bytes()), f);
    detail::check_depth(name_, "src", v, op_->depths());
    detail::check_channels(name_, "src", v, op_->channels());
    const schema::Shape s = bound_->output(v);
    return {s.height, s.width, s.format.channels, depth_name(s.format.depth)};
  }

  /// (halo_y, halo_x): rows and columns of the source one output pixel reads beyond itself.
  std::tuple<int, int> halo(const std::string& depth, int channels) const {
    const schema::Halo hl = bound_->halo(Format{parse_depth(depth, name_ + ": dtype"), channels});
    return {hl.y, hl.x};
  }

  void run(nb::handle src, nb::handle dst, const std::string& backend, std::uintptr_t stream,
           int threads) const {
    const ImageView s = view_of(source_array(src, name_, "src"), name_, "src");
    const ImageView d = view_of(dest_array(dst, name_, "out"), name_, "out");
    const schema::Shape want = output(s);
    check_out(name_, d, want.height, want.width, want.format, s.location());
    const Context ctx = make_context(name_, backend, stream, threads, s.location());
    nb::gil_scoped_release unlocked;
    bound_->run(s, d, ctx);
  }

  /// The whole call (python/pixflow/__init__.py's generated functions): see call() above.
  nb::object call(nb::handle src, nb::handle out, nb::handle stream, nb::handle backend,
                  nb::handle threads) const {
    return python::call(
        name_, src, out, stream, backend, threads,
        [this](const ConstImageView& s) { return output(s); },
        [this](const ConstImageView& s, const ImageView& d, const Context& ctx) {
          bound_->run(s, d, ctx);
        });
  }

  /// (shape, dtype name) of the result for the source array `src`.
  std::tuple<nb::tuple, const char*> result(nb::handle src) const {
    const auto a = source_array(src, name_, "src");
    const ImageView s = view_of(a, name_, "src");
    const schema::Shape r = output(s);
    return {out_shape(r.height, r.width, r.format.channels, a.ndim, s.channels()),
            dtype_name(r.format.depth)};
  }

  /// Seconds per call of the op's C++ function in a C++ loop of n calls (after one warm-up),
  /// the device synchronised at the end: the C++ API's own per-call cost, for
  /// bench/python_overhead.py to set the Python call against.
  double time_loop(nb::handle src, nb::handle dst, std::uintptr_t stream, int n) const {
    const ImageView s = view_of(source_array(src, name_, "src"), name_, "src");
    const ImageView d = view_of(dest_array(dst, name_, "out"), name_, "out");
    const Context ctx = make_context(name_, "", stream, 0, s.location());
    if (n < 1) bad(name_, cat("n must be >= 1 (got ", n, ")"));
    nb::gil_scoped_release unlocked;
    bound_->run(s, d, ctx);
    synchronize(s.location(), ctx.queue);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) bound_->run(s, d, ctx);
    synchronize(s.location(), ctx.queue);
    const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
    return dt.count() / n;
  }

  const std::string& name() const { return name_; }

 private:
  /// The output rule, after the op's depth and channel checks (as the op itself checks first).
  schema::Shape output(const ConstImageView& s) const {
    detail::check_depth(name_, "src", s, op_->depths());
    detail::check_channels(name_, "src", s, op_->channels());
    return bound_->output(s);
  }

  std::string name_;
  const schema::Op* op_ = nullptr;
  std::unique_ptr<schema::Bound> bound_;
  std::vector<nb::object> keep_;
};

// ---- pipelines -------------------------------------------------------------------------

class PyPipeline {
 public:
  explicit PyPipeline(const std::string& text) : text_(text), p_(Pipeline::parse(text)) {}

  std::tuple<std::int64_t, std::int64_t, int, std::string> plan(std::int64_t h, std::int64_t w,
                                                                int c,
                                                                const std::string& depth) const {
    const ImageShape s = p_.plan({w, h, Format{parse_depth(depth, "pipeline: src dtype"), c}});
    return {s.height, s.width, s.format.channels, depth_name(s.format.depth)};
  }

  void run(nb::handle src, nb::handle dst, const std::string& backend, std::uintptr_t stream,
           int threads) const {
    const ImageView s = view_of(source_array(src, "pipeline", "src"), "pipeline", "src");
    const ImageView d = view_of(dest_array(dst, "pipeline", "out"), "pipeline", "out");
    const ImageShape want = p_.plan({s.width(), s.height(), s.format()});
    check_out("pipeline", d, want.height, want.width, want.format, s.location());
    const Context ctx = make_context("pipeline", backend, stream, threads, s.location());
    nb::gil_scoped_release unlocked;
    p_.run(s, d, ctx);
  }

  /// One image: see call() above.
  nb::object call(nb::handle src, nb::handle out, nb::handle stream, nb::handle backend,
                  nb::handle threads) const {
    return python::call(
        "pipeline", src, out, stream, backend, threads,
        [this](const ConstImageView& s) {
          const ImageShape r = p_.plan({s.width(), s.height(), s.format()});
          return schema::Shape{r.width, r.height, r.format};
        },
        [this](const ConstImageView& s, const ImageView& d, const Context& ctx) {
          p_.run(s, d, ctx);
        });
  }

  /// (shape, dtype name) of the result for the source array `src`.
  std::tuple<nb::tuple, const char*> result(nb::handle src) const {
    const auto a = source_array(src, "pipeline", "src");
    const ImageView s = view_of(a, "pipeline", "src");
    const ImageShape r = p_.plan({s.width(), s.height(), s.format()});
    return {out_shape(r.height, r.width, r.format.channels, a.ndim, s.channels()),
            dtype_name(r.format.depth)};
  }

  const std::string& text() const { return text_; }
  std::vector<std::string> names() const { return p_.names(); }

 private:
  std::string text_;
  Pipeline p_;
};

// ---- the schema as Python data ---------------------------------------------------------

const char* kind_name(schema::Kind k) {
  switch (k) {
    case schema::Kind::integer:
      return "integer";
    case schema::Kind::number:
      return "number";
    case schema::Kind::boolean:
      return "boolean";
    case schema::Kind::choice:
      return "choice";
    case schema::Kind::depth:
      return "depth";
    case schema::Kind::border:
      return "border";
    case schema::Kind::image:
      return "image";
    case schema::Kind::text:
      return "text";
  }
  return "text";
}

nb::list schema_list() {
  nb::list ops;
  for (const schema::Op* op : schema::catalogue()) {
    nb::list params;
    for (const schema::Param& p : op->params()) {
      nb::dict d;
      d["name"] = p.name;
      d["kind"] = kind_name(p.kind);
      d["default"] = p.default_text;
      d["doc"] = p.doc;
      d["lo"] = p.lo;
      d["hi"] = p.hi;
      d["odd"] = p.odd;
      d["zero_ok"] = p.zero_ok;
      d["required"] = p.required;
      d["choices"] = p.choices;
      d["sets"] = p.sets;
      params.append(d);
    }
    std::vector<std::string> depths;
    for (Depth dp : op->depths()) depths.push_back(depth_name(dp));
    nb::dict o;
    o["name"] = op->name();
    o["doc"] = op->doc();
    o["params"] = params;
    o["depths"] = depths;
    o["channels"] = op->channels();
    o["examples"] = op->examples();
    o["has_border"] = op->has_border();
    ops.append(o);
  }
  return ops;
}

// ---- I/O -------------------------------------------------------------------------------

/// A host image as a NumPy array that owns it (H x W, or H x W x C for C > 1).
nb::ndarray<nb::numpy> numpy_of(Image img) {
  auto* owned = new Image(std::move(img));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Image*>(p); });
  const std::size_t item = depth_bytes(owned->depth());
  const int c = owned->channels();
  const std::size_t shape[3] = {std::size_t(owned->height()), std::size_t(owned->width()),
                                std::size_t(c)};
  const std::int64_t strides[3] = {owned->stride() / std::int64_t(item), c, 1};
  nb::dlpack::dtype t{};
  t.lanes = 1;
  t.bits = std::uint8_t(8 * item);
  switch (owned->depth()) {
    case Depth::u8:
    case Depth::u16:
      t.code = std::uint8_t(nb::dlpack::dtype_code::UInt);
      break;
    case Depth::s16:
    case Depth::s32:
      t.code = std::uint8_t(nb::dlpack::dtype_code::Int);
      break;
    case Depth::f32:
      t.code = std::uint8_t(nb::dlpack::dtype_code::Float);
      break;
  }
  return nb::ndarray<nb::numpy>(owned->data(), c > 1 ? 3 : 2, shape, owner, strides, t);
}

nb::ndarray<nb::numpy> read_file(const std::string& path) {
  Image img;
  {
    nb::gil_scoped_release unlocked;
    const Image decoded = read_image(path);
    // Tight rows (the decoder's rows are padded to 64 bytes): a C-contiguous array.
    const std::int64_t row = decoded.view().row_bytes();
    std::shared_ptr<std::byte> pixels(new std::byte[std::size_t(row * decoded.height())],
                                      std::default_delete<std::byte[]>());
    img = Image::wrap(
        pixels, ImageView(pixels.get(), decoded.width(), decoded.height(), row, decoded.format()));
    copy(decoded.view(), img.view());
  }
  return numpy_of(std::move(img));
}

void write_file(const std::string& path, nb::handle img, int quality, int compression) {
  const ImageView v = view_of(source_array(img, "write_image", "image"), "write_image", "image");
  WriteOptions opt;
  opt.jpeg_quality = quality;
  opt.compression = compression;
  nb::gil_scoped_release unlocked;
  write_image(path, v, opt);
}

// ---- info ------------------------------------------------------------------------------

nb::dict info() {
  nb::dict d;
  nb::list backends;
  for (Backend b : compiled_backends()) backends.append(backend_name(b));
  d["backends"] = backends;
  nb::dict notes;
  for (Backend b : compiled_backends()) notes[backend_name(b)] = backend_note(b);
  d["backend_notes"] = notes;
  nb::list devices;
  for (auto kind : {Location::Kind::cuda, Location::Kind::opencl})
    for (int i = 0; i < device_count(kind); ++i) {
      const Location l{kind, i};
      nb::dict dev;
      dev["location"] = to_string(l);
      dev["description"] = describe_device(l);
      devices.append(dev);
    }
  d["devices"] = devices;
  d["cuda_compiled"] = cuda_compiled();
  d["tiff"] = have_tiff();
  d["webp"] = have_webp();
  return d;
}

}  // namespace
}  // namespace pixflow::python

NB_MODULE(_pixflow, m) {
  using namespace pixflow;
  using namespace pixflow::python;
  m.doc() = "pixflow's native module; use the `pixflow` package.";

  // pixflow::Error -> one Python class per status, all subclasses of pixflow.Error; bad
  // parameters are also ValueError, I/O failures OSError, allocation failures MemoryError.
  static nb::object error =
      nb::steal(PyErr_NewException("pixflow.Error", PyExc_Exception, nullptr));
  m.attr("Error") = error;
  struct Sub {
    Status status;
    const char* name;
    PyObject* base;
  };
  const Sub subs[] = {
      {Status::invalid_argument, "InvalidArgumentError", PyExc_ValueError},
      {Status::unsupported, "UnsupportedError", PyExc_TypeError},
      {Status::backend_unavailable, "BackendUnavailableError", PyExc_RuntimeError},
      {Status::out_of_memory, "OutOfMemoryError", PyExc_MemoryError},
      {Status::backend_error, "BackendError", PyExc_RuntimeError},
      {Status::io_error, "IoError", PyExc_OSError},
      {Status::limit_exceeded, "LimitExceededError", PyExc_ValueError},
      {Status::internal, "InternalError", PyExc_RuntimeError},
  };
  static std::map<Status, nb::object> classes;
  for (const Sub& s : subs) {
    nb::object bases = nb::make_tuple(error, nb::handle(s.base));
    nb::object cls =
        nb::steal(PyErr_NewException(cat("pixflow.", s.name).c_str(), bases.ptr(), nullptr));
    m.attr(s.name) = cls;
    classes[s.status] = cls;
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      auto it = classes.find(e.status());
      PyErr_SetString(it == classes.end() ? error.ptr() : it->second.ptr(), e.what());
    }
  });

  nb::class_<BoundOp>(m, "BoundOp")
      .def(nb::init<const std::string&, const std::map<std::string, std::string>&,
                    const std::map<std::string, nb::object>&>(),
           "op"_a, "params"_a, "images"_a)
      .def("plan", &BoundOp::plan, "height"_a, "width"_a, "channels"_a, "depth"_a)
      .def("halo", &BoundOp::halo, "depth"_a, "channels"_a)
      .def("run", &BoundOp::run, "src"_a, "out"_a, "backend"_a, "stream"_a, "threads"_a)
      .def("call", &BoundOp::call, "src"_a, "out"_a.none(), "stream"_a.none(), "backend"_a.none(),
           "threads"_a.none())
      .def("result", &BoundOp::result, "src"_a)
      .def("time_loop", &BoundOp::time_loop, "src"_a, "out"_a, "stream"_a, "n"_a)
      .def_prop_ro("name", &BoundOp::name);

  nb::class_<PyPipeline>(m, "Pipeline")
      .def(nb::init<const std::string&>(), "text"_a)
      .def("plan", &PyPipeline::plan, "height"_a, "width"_a, "channels"_a, "depth"_a)
      .def("run", &PyPipeline::run, "src"_a, "out"_a, "backend"_a, "stream"_a, "threads"_a)
      .def("call", &PyPipeline::call, "src"_a, "out"_a.none(), "stream"_a.none(),
           "backend"_a.none(), "threads"_a.none())
      .def("result", &PyPipeline::result, "src"_a)
      .def_prop_ro("text", &PyPipeline::text)
      .def_prop_ro("names", &PyPipeline::names);

  m.def("schema", &schema_list, "Every op of the catalogue with its parameters (the op schema).");
  m.def("read_image", &read_file, "path"_a);
  m.def("write_image", &write_file, "path"_a, "image"_a, "quality"_a = 95, "compression"_a = -1);
  m.def("info", &info);
  m.attr("__version__") = PIXFLOW_VERSION;
}
