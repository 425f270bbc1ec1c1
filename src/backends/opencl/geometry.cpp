// OpenCL simple geometry: flip, rotate, crop, pad (kernels/geometry.cl). Pixels are opaque
// groups of bytes, so the programs are built per unit type and pixel size, not per depth.
//   crop, flip v          geom_rows: rows in the widest vector unit the views allow
//   flip h / both, rot180 geom_map with the column direction -1
//   rotate 90 / 270       rot90: transpose_pix's tiles, mirrored on the way out
//   pad                   geom_rows into the interior, geom_map over the top and bottom rows
//                         and over the left and right strips (at most 3 launches)
// Coordinates are 32-bit (the schema bounds every side below 2^31).
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/geometry.hpp"

namespace pixflow::opencl {
namespace {

bool aligned(const ConstImageView& v, std::size_t a, int device, std::string_view op) {
  const BufferRef r = resolve(v.data(), device, op);
  return r.offset % a == 0 && std::size_t(v.stride()) % a == 0;
}

// The widest unit (4, 2 or 1 bytes) dividing the pixel and both views' offsets and strides.
std::size_t pixel_unit(const ConstImageView& s, const ConstImageView& d, const Launch& l,
                       std::string_view op) {
  const std::size_t ps = s.format().pixel_bytes();
  std::size_t unit = 4;
  while (unit > 1 &&
         (ps % unit != 0 || !aligned(s, unit, l.device, op) || !aligned(d, unit, l.device, op)))
    unit /= 2;
  return unit;
}

const char* unit_type(std::size_t unit) {
  switch (unit) {
    case 16:
      return "uint4";
    case 8:
      return "uint2";
    case 4:
      return "uint";
    case 2:
      return "ushort";
    default:
      return "uchar";
  }
}

// Rows of `d` from rows sy0 + sydir * y of `s` (same width and format), in the widest unit.
void copy_rows(const ConstImageView& s, const ImageView& d, int sy0, int sydir, const Launch& l,
               std::string_view op) {
  const std::size_t bytes = std::size_t(d.width()) * d.format().pixel_bytes();
  std::size_t unit = 16;
  while (unit > 1 &&
         (bytes % unit != 0 || !aligned(s, unit, l.device, op) || !aligned(d, unit, l.device, op)))
    unit /= 2;
  const std::string opts = std::string("-DROWS=1 -DV=") + unit_type(unit);
  const int nv = int(bytes / unit), rows = int(d.height());
  Kernel(l, "geometry", opts, "geom_rows", op)
      .image(s)
      .image(d)
      .arg(cl_int(nv))
      .arg(cl_int(rows))
      .arg(cl_int(sy0))
      .arg(cl_int(sydir))
      .run(std::size_t(nv), std::size_t(rows), 64, 4);
}

// One axis of geom_map: launched count n, output o = o0 + i + (i >= split ? gap : 0), source
// border_index(s0 + dir * o, len, type).
struct Axis {
  int n = 0, o0 = 0, split = 0, gap = 0, s0 = 0, dir = 1, len = 1;
};

void map_pixels(const ConstImageView& s, const ImageView& d, const Axis& ax, const Axis& ay,
                BorderType type, const std::array<unsigned char, 16>& cval, const Launch& l,
                std::string_view op) {
  if (ax.n == 0 || ay.n == 0) return;
  const std::size_t unit = pixel_unit(s, d, l, op);
  const std::string opts = std::string("-DMAP=1 -DU=") + unit_type(unit) +
                           " -DPN=" + std::to_string(s.format().pixel_bytes() / unit);
  cl_uint4 cv;
  std::memcpy(&cv, cval.data(), sizeof cv);
  Kernel(l, "geometry", opts, "geom_map", op)
      .image(s)
      .image(d)
      .arg(cl_int(ax.n))
      .arg(cl_int(ay.n))
      .arg(cl_int(ax.o0))
      .arg(cl_int(ax.split))
      .arg(cl_int(ax.gap))
      .arg(cl_int(ax.s0))
      .arg(cl_int(ax.dir))
      .arg(cl_int(ax.len))
      .arg(cl_int(ay.o0))
      .arg(cl_int(ay.split))
      .arg(cl_int(ay.gap))
      .arg(cl_int(ay.s0))
      .arg(cl_int(ay.dir))
      .arg(cl_int(ay.len))
      .arg(cl_int(int(type)))
      .arg(cv)
      .run(std::size_t(ax.n), std::size_t(ay.n), 64, 4);
}

// A straight axis over all of [0, n): source o (dir 1) or len - 1 - o (dir -1).
Axis whole(int n, bool mirrored) {
  return mirrored ? Axis{n, 0, n, 0, n - 1, -1, n} : Axis{n, 0, n, 0, 0, 1, n};
}

void flip(const ConstImageView& s, const ImageView& d, const FlipParams& p, const Launch& l) {
  const int w = int(s.width()), h = int(s.height());
  if (p.mode == FlipMode::v) return copy_rows(s, d, h - 1, -1, l, "flip");
  map_pixels(s, d, whole(w, true), whole(h, p.mode == FlipMode::both), BorderType::replicate, {}, l,
             "flip");
}

void rotate(const ConstImageView& s, const ImageView& d, const RotateParams& p, const Launch& l) {
  const int w = int(s.width()), h = int(s.height());
  if (p.angle == 180)
    return map_pixels(s, d, whole(w, true), whole(h, true), BorderType::replicate, {}, l, "rotate");
  const std::size_t unit = pixel_unit(s, d, l, "rotate");
  const std::string opts = std::string("-DROT90=1 -DU=") + unit_type(unit) +
                           " -DPN=" + std::to_string(s.format().pixel_bytes() / unit);
  const int tx = (w + 31) / 32, ty = (h + 31) / 32;
  Kernel(l, "geometry", opts, "rot90", "rotate")
      .image(s)
      .image(d)
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(cl_int(tx))
      .arg(cl_int(p.angle == 90 ? 1 : 0))
      .run(std::size_t(tx) * std::size_t(ty) * 256, 1, 256, 1);
}

void crop(const ConstImageView& s, const ImageView& d, const CropParams& p, const Launch& l) {
  copy_rows(s.roi(p.x, p.y, p.w, p.h), d, 0, 1, l, "crop");
}

void pad(const ConstImageView& s, const ImageView& d, const PadParams& p, const Launch& l) {
  const int w = int(s.width()), h = int(s.height());
  const int ow = int(d.width());
  const auto cval = detail::constant_pixel(s.format(), p.border.value);
  copy_rows(s, d.roi(p.left, p.top, w, h), 0, 1, l, "pad");
  // Columns and rows of the output through the border rule: source o - left, o - top.
  const Axis all_x{ow, 0, ow, 0, -p.left, 1, w};
  const Axis sides_x{p.left + p.right, 0, p.left, w, -p.left, 1, w};
  const Axis ends_y{p.top + p.bottom, 0, p.top, h, -p.top, 1, h};
  const Axis middle_y{h, p.top, h, 0, -p.top, 1, h};
  map_pixels(s, d, all_x, ends_y, p.border.type, cval, l, "pad");
  map_pixels(s, d, sides_x, middle_y, p.border.type, cval, l, "pad");
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_geometry) {
  using namespace pixflow;
  // Pixels move as opaque groups of 1..16 bytes: every depth and channel count.
  const auto any = opencl::depths({Depth::u8, Depth::u16, Depth::s16, Depth::s32, Depth::f32});
  opencl::add<&opencl::flip>(table, "flip", any);
  opencl::add<&opencl::rotate>(table, "rotate", any);
  opencl::add<&opencl::crop>(table, "crop", any);
  opencl::add<&opencl::pad>(table, "pad", any);
}
