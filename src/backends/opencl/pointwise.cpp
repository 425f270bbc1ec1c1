// OpenCL point-wise ops: arith (image and scalar), convert, threshold, gray, channels, transpose
// (kernels/pointwise.cl). Each program is built per sample type (and destination type for
// convert), per op / threshold type and per alignment of the views; the rules are
// src/base/pointwise.hpp's, the integer threshold constants come from the same int_threshold
// the reference uses.
//
// Schedule (kernels/pointwise.cl): a flat range of 16-byte chunks, 256 work-items a group
// (the CUDA round's pw5 shape: flat grid, 256 threads, one chunk a thread; bench/NOTES.md,
// 1080p threshold 2.20 -> 1.86 us on the H100). Variants for the H100 A/B, read once:
//   PIXFLOW_OCL_VLOAD=1            vloadN / vstoreN even where every view is 16-byte aligned
//   PIXFLOW_OCL_TRANSPOSE=diagonal diagonal work-group -> tile order (default: row-major; the
//                                  diagonal order measured 8 % slower on the H100 at 8192^2
//                                  u8x1, 55.5 against 51.4 us: bench/NOTES.md, session 22)
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/error.hpp"
#include "src/base/pointwise.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kGroup = 256;

bool env_is(const char* name, std::string_view value) {
  const char* e = std::getenv(name);
  return e != nullptr && std::string_view(e) == value;
}

bool force_vload() {
  static const bool v = env_is("PIXFLOW_OCL_VLOAD", "1");
  return v;
}

bool transpose_diag() {
  static const bool v = env_is("PIXFLOW_OCL_TRANSPOSE", "diagonal");
  return v;
}

// Whether the view's first sample and stride are multiples of `a` bytes (the buffers' bases
// are aligned far beyond: CL_DEVICE_MEM_BASE_ADDR_ALIGN is >= 128 bytes on every device).
bool aligned(const ConstImageView& v, std::size_t a, int device, std::string_view op) {
  const BufferRef r = resolve(v.data(), device, op);
  return r.offset % a == 0 && std::size_t(v.stride()) % a == 0;
}

// One point-wise launch over `rows` rows of `n` samples in chunks of `vec` samples.
struct Flat {
  int n = 0, rows = 0, vec = 1;

  // -DVEC and -DALIGNED (every view 16-byte aligned, unless PIXFLOW_OCL_VLOAD=1).
  std::string options(const Launch& l, std::string_view op,
                      std::initializer_list<ConstImageView> views) const {
    bool al = !force_vload();
    for (const ConstImageView& v : views) al = al && aligned(v, 16, l.device, op);
    return " -DVEC=" + std::to_string(vec) + (al ? " -DALIGNED=1 " : " ");
  }

  // Enqueues kernel `name`: `head` sets the arguments before the chunk ones (n, rows, cpr,
  // row0), `tail` those after. Rows go in launches of < 2^31 chunks (32-bit chunk indices).
  template <class Head, class Tail>
  void run(const Launch& l, const std::string& opts, const char* name, std::string_view op,
           Head&& head, Tail&& tail) const {
    if (n == 0 || rows == 0) return;
    const std::size_t cpr = (std::size_t(n) + std::size_t(vec) - 1) / std::size_t(vec);
    const std::size_t per = std::max<std::size_t>(1, ((std::size_t(1) << 31) - kGroup) / cpr);
    for (std::size_t r0 = 0; r0 < std::size_t(rows); r0 += per) {
      const std::size_t nr = std::min(per, std::size_t(rows) - r0);
      Kernel k(l, "pointwise", opts, name, op);
      head(k);
      k.arg(cl_int(n)).arg(cl_int(rows)).arg(cl_uint(cpr)).arg(cl_int(r0));
      tail(k);
      k.run(cpr * nr, 1, kGroup, 1);
    }
  }
};

// Samples in a 16-byte chunk of depth d.
int vec_of(Depth d) {
  return int(16 / depth_bytes(d));
}

void no_args(Kernel&) {}

void arith_image(const ConstImageView& a, const ConstImageView& b, const ImageView& d, ArithOp op,
                 const Launch& l) {
  const Flat f{int(d.width() * d.channels()), int(d.height()), vec_of(a.depth())};
  const std::string opts = depth_options(a.depth()) + f.options(l, arith_op_name(op), {a, b, d}) +
                           "-DOP=" + std::to_string(int(op));
  f.run(
      l, opts, "arith_image", arith_op_name(op), [&](Kernel& k) { k.image(a).image(b).image(d); },
      no_args);
}

void arith_scalar(const ConstImageView& a, double v, const ImageView& d, ArithOp op,
                  const Launch& l) {
  require_fp64(l, arith_op_name(op));
  const Flat f{int(d.width() * d.channels()), int(d.height()), vec_of(a.depth())};
  const std::string opts = depth_options(a.depth()) + f.options(l, arith_op_name(op), {a, d}) +
                           "-DNEED_FP64=1 -DOP=" + std::to_string(int(op));
  f.run(
      l, opts, "arith_scalar", arith_op_name(op),
      [&](Kernel& k) { k.image(a).arg(cl_double(v)).image(d); }, no_args);
}

void convert(const ConstImageView& s, const ImageView& d, const ConvertParams& p, const Launch& l) {
  require_fp64(l, "convert");
  // 16 bytes of the wider type a chunk (u8 -> f32: 4 samples, a 4-byte load, a 16-byte store).
  const Flat f{int(d.width() * d.channels()), int(d.height()),
               std::min(vec_of(s.depth()), vec_of(d.depth()))};
  const std::string opts = depth_options(s.depth()) + depth_options(d.depth(), "D") +
                           f.options(l, "convert", {s, d}) + "-DNEED_FP64=1";
  f.run(
      l, opts, "convert", "convert", [&](Kernel& k) { k.image(s).image(d); },
      [&](Kernel& k) {
        k.arg(cl_double(p.scale)).arg(cl_double(p.offset)).arg(cl_int(p.abs ? 1 : 0));
      });
}

void threshold(const ConstImageView& s, const ImageView& d, const ThresholdParams& p,
               const Launch& l) {
  const Flat f{int(d.width() * d.channels()), int(d.height()), vec_of(s.depth())};
  const std::string opts = depth_options(s.depth()) + f.options(l, "threshold", {s, d}) +
                           "-DTTYPE=" + std::to_string(int(p.type));
  f.run(
      l, opts, "threshold", "threshold", [&](Kernel& k) { k.image(s).image(d); },
      [&](Kernel& k) {
        detail::visit_depth(s.depth(), [&](auto t) {
          using T = decltype(t);
          if constexpr (std::is_same_v<T, float>) {
            k.arg(cl_float(detail::to_float_clamped(p.t)))
                .arg(cl_float(detail::to_float_clamped(p.t)))
                .arg(cl_float(detail::to_float_clamped(p.maxval)));
          } else {
            const auto c = detail::int_threshold<T>(p.t, p.maxval);
            k.arg(cl_long(c.it)).arg(c.tv).arg(c.mv);
          }
        });
      });
}

void gray(const ConstImageView& s, const ImageView& d, const GrayParams& p, const Launch& l) {
  const Flat f{int(d.width()), int(d.height()), vec_of(s.depth())};
  const std::string opts = depth_options(s.depth()) + f.options(l, "gray", {s, d}) +
                           "-DCN=" + std::to_string(s.channels()) +
                           " -DRI=" + std::to_string(p.from_bgr ? 2 : 0) +
                           " -DBI=" + std::to_string(p.from_bgr ? 0 : 2);
  f.run(
      l, opts, "gray", "gray", [&](Kernel& k) { k.image(s).image(d); }, no_args);
}

void channels(const ConstImageView& s, const ImageView& d, const ChannelsParams& p,
              const Launch& l) {
  // Samples are only moved: one program per sample size (u8, u16, s32 for 4-byte samples).
  const std::size_t b = depth_bytes(s.depth());
  const Depth as = b == 1 ? Depth::u8 : b == 2 ? Depth::u16 : Depth::s32;
  const Flat f{int(d.width()), int(d.height()), vec_of(as)};
  const std::string opts = depth_options(as) + f.options(l, "channels", {s, d}) +
                           "-DCHANNELS=1 -DCI=" + std::to_string(s.channels()) +
                           " -DCO=" + std::to_string(d.channels());
  cl_int4 pick{};
  for (std::size_t c = 0; c < 4; ++c) pick.s[c] = c < p.pick.size() ? p.pick[c] : 0;
  f.run(
      l, opts, "channels", "channels", [&](Kernel& k) { k.image(s).image(d); },
      [&](Kernel& k) { k.arg(pick); });
}

void transpose(const ConstImageView& s, const ImageView& d, const Launch& l) {
  const int w = int(s.width()), h = int(s.height());
  if (w == 0 || h == 0) return;
  const std::size_t ps = s.format().pixel_bytes();
  std::string opts = "-DTRANSPOSE=1 ";
  if (transpose_diag()) opts += "-DDIAG=1 ";
  if (ps == 1) {
    // u8 x 1: 64x64-byte tiles of 4x4-byte blocks.
    if (aligned(s, 4, l.device, "transpose") && aligned(d, 4, l.device, "transpose"))
      opts += "-DALIGNED4=1 ";
    const int tx = (w + 63) / 64, ty = (h + 63) / 64;
    Kernel(l, "pointwise", opts + "-DTRANSPOSE_U8=1", "transpose_u8", "transpose")
        .image(s)
        .image(d)
        .arg(cl_int(w))
        .arg(cl_int(h))
        .arg(cl_int(tx))
        .arg(cl_int(ty))
        .run(std::size_t(tx) * std::size_t(ty) * kGroup, 1, kGroup, 1);
    return;
  }
  // The widest unit (4, 2 or 1 bytes) dividing the pixel and both views' offsets and strides.
  std::size_t unit = 4;
  while (unit > 1 && (ps % unit != 0 || !aligned(s, unit, l.device, "transpose") ||
                      !aligned(d, unit, l.device, "transpose")))
    unit /= 2;
  opts += std::string("-DTRANSPOSE_PIX=1 -DU=") +
          (unit == 4   ? "uint"
           : unit == 2 ? "ushort"
                       : "uchar") +
          " -DPN=" + std::to_string(ps / unit);
  const int tx = (w + 31) / 32, ty = (h + 31) / 32;
  Kernel(l, "pointwise", opts, "transpose_pix", "transpose")
      .image(s)
      .image(d)
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(cl_int(tx))
      .arg(cl_int(ty))
      .run(std::size_t(tx) * std::size_t(ty) * kGroup, 1, kGroup, 1);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_pointwise) {
  using namespace pixflow;
  const auto any = opencl::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  for (const char* op : {"add", "sub", "absdiff", "mul"}) {
    opencl::add<&opencl::arith_image>(table, op, any);
    opencl::add<&opencl::arith_scalar>(table, op, any);
  }
  opencl::add<&opencl::convert>(table, "convert", any);
  opencl::add<&opencl::threshold>(table, "threshold", any);
  opencl::add<&opencl::gray>(table, "gray",
                             detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {3, 4}));
  opencl::add<&opencl::channels>(table, "channels", any);
  opencl::add<&opencl::transpose>(table, "transpose", any);
}
