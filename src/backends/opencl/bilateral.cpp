// OpenCL bilateral (kernels/bilateral.cl), schedules that give the same bits
// (PIXFLOW_OCL_BILATERAL picks, for A/B timing):
//  - auto (default): packed where it applies (u8 with 2..4 channels, f32 x 1; radius 1..4),
//    else tile-tapconv (u8 x 1) or the per-pixel kernel: tile-tapconv measured 1602 against
//    1759 us for tile at 8192^2 u8x1 and 90.5 against 106.5 at 1080p (H100, session 24);
//  - tile: u8 x 1 with a window radius of 1..4 (d = 3..9) runs bilateral_u8c1_tile,
//    CUDA's tile kernel (a work-group per 128 x 32 outputs, the input tile and a per-lane
//    colour table in local memory); every other case runs the per-pixel kernel;
//  - tile-tapconv: the same, each tap converting its sample to float;
//  - tile-rows: the same, its source-row loop written out and, on NVIDIA, the sums pinned
//    after each row (kernels/bilateral.cl BIL_UNROLL_ROWS: the `packed` kernels' fix for a
//    loop clang 15 left rolled);
//  - packed[,RW[,COPIES]]: u8 x 1 as `tile`; radius 1..4 u8 with 2..4 channels runs
//    bilateral_u8cn_tile (CUDA's bilateral_u8c3_kernel: pixel words, one sum of absolute byte
//    differences a tap, the colour table COPIES times in local memory) and f32 x 1
//    bilateral_f32c1_tile (CUDA's bilateral_f32c1_kernel: a float tile, the interpolated
//    table in local memory, read without conversions); RW output rows a work-item (2, 4 or
//    8; default 4; CUDA's kRows3 / kF32Rows is 8), COPIES of the u8 table (1, 2, 4, 8 or 16;
//    default the most that fit the device's local memory, at most 16); others per pixel;
//  - pixel: the per-pixel kernel everywhere, one work-item per output pixel.
// The window (taps
// and space weights) and the colour table are the reference's (src/ref/bilateral.cpp), built
// here on the host expression for expression and uploaded per call; the f32 table is
// src/base/bilateral_f32.hpp's.
#include <CL/cl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/backends/opencl/variant.hpp"
#include "src/base/bilateral_f32.hpp"
#include "src/base/error.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kLx = 16, kLy = 8;
// bilateral_u8c1_tile's shape (kernels/bilateral.cl BIL_*): 32 x 8 work-items, 4 x 4 pixels
// each, windows of radius <= 4.
constexpr std::size_t kTileLx = 32, kTileLy = 8;
constexpr std::int64_t kTileW = 128, kTileH = 32;
constexpr int kTileMaxRadius = 4;

// The reference's window (src/ref/bilateral.cpp make_window), expression for expression:
// radius = d > 0 ? d/2 : round(1.5 sigma_s), at least 1; offsets with sqrt(i^2 + j^2) <=
// radius, rows outer; three ints a tap: dx, dy and the bits of float(exp(r*r * coeff)).
std::vector<std::int32_t> make_taps(const BilateralParams& p) {
  const double ss = p.sigma_space <= 0 ? 1.0 : p.sigma_space;
  const double space_coeff = -0.5 / (ss * ss);
  int radius = p.d > 0 ? p.d / 2 : int(detail::round_half_even(ss * 1.5));
  if (radius < 1) radius = 1;
  std::vector<std::int32_t> taps;
  for (int i = -radius; i <= radius; ++i)
    for (int j = -radius; j <= radius; ++j) {
      const double r = std::sqrt(double(i) * i + double(j) * j);
      if (r > radius) continue;
      const float w = float(std::exp(r * r * space_coeff));
      std::int32_t bits;
      std::memcpy(&bits, &w, sizeof bits);
      taps.insert(taps.end(), {j, i, bits});
    }
  return taps;
}

// The `packed` schedule's shape (kernels/bilateral.cl BP_*): 32 x 8 work-items, one pixel of
// rw rows each, one tile a work-group.
constexpr std::size_t kPackedLx = 32, kPackedLy = 8;

struct Schedule {
  enum Kind { automatic, tile, pixel, tile_tapconv, packed, tile_rows } kind = automatic;
  // packed: output rows a work-item. 4 by default: on the H100 (session 24) 8 rows took 3001 us
  // for u8x3 8192^2 against 2536 at 4 (f32x1 2901 / 2829; 1080p even).
  int rw = 4;
  int copies = 0;  // packed u8: copies of the colour table (0: the most that fit, <= 16)
};

// PIXFLOW_OCL_BILATERAL: auto (default), tile, pixel, tile-tapconv, packed[,RW[,COPIES]],
// tile-rows.
Schedule schedule() {
  Schedule r;
  const char* e = std::getenv("PIXFLOW_OCL_BILATERAL");
  if (e != nullptr && std::strncmp(e, "packed,", 7) == 0) {
    r.kind = Schedule::packed;
    int rw = 0, copies = 0;
    const int n = std::sscanf(e + 7, "%d,%d", &rw, &copies);
    const std::string again =
        "packed," + std::to_string(rw) + (n == 2 ? "," + std::to_string(copies) : "");
    const bool ok =
        n >= 1 && again == e && (rw == 2 || rw == 4 || rw == 8) &&
        (n == 1 || copies == 1 || copies == 2 || copies == 4 || copies == 8 || copies == 16);
    if (!ok)
      detail::fail(Status::invalid_argument, "bilateral", "PIXFLOW_OCL_BILATERAL=", e,
                   " is not packed,RW[,COPIES] with RW 2, 4 or 8 and COPIES 1, 2, 4, 8 or 16");
    r.rw = rw;
    r.copies = n == 2 ? copies : 0;
    return r;
  }
  r.kind = Schedule::Kind(variant("PIXFLOW_OCL_BILATERAL",
                                  {"auto", "tile", "pixel", "tile-tapconv", "packed", "tile-rows"},
                                  "bilateral"));
  return r;
}

// The space weights by squared distance dx^2 + dy^2 = 0 .. R^2, as the `packed` kernels read
// them (every tap at one distance has the same weight: r = sqrt(i^2 + j^2) is the same double).
std::vector<std::int32_t> space_by_r2(const std::vector<std::int32_t>& taps, int radius) {
  std::vector<std::int32_t> w(std::size_t(radius * radius + 1), 0);
  for (std::size_t t = 0; t < taps.size(); t += 3)
    w[std::size_t(taps[t] * taps[t] + taps[t + 1] * taps[t + 1])] = taps[t + 2];
  return w;
}

// The space weights as the (2R+1)^2 square the tile kernels index by (dy, dx) (0 outside the
// window, never read).
std::vector<std::int32_t> space_square(const std::vector<std::int32_t>& taps, int radius) {
  const int k = 2 * radius + 1;
  std::vector<std::int32_t> square(std::size_t(k * k), 0);
  for (std::size_t t = 0; t < taps.size(); t += 3)
    square[std::size_t((taps[t + 1] + radius) * k + taps[t] + radius)] = taps[t + 2];
  return square;
}

// The `packed` kernels (u8 x 2..4: bilateral_u8cn_tile; f32 x 1: bilateral_f32c1_tile) for
// radius <= 4; false where they do not apply or the device's local memory is too small.
bool run_packed(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
                const Launch& l, const Schedule& sch, const std::vector<std::int32_t>& taps,
                int radius, const float* table, std::size_t table_floats, float scale) {
  const int ch = s.channels();
  const bool f32 = s.depth() == Depth::f32;
  if (radius > kTileMaxRadius || (f32 ? ch != 1 : ch < 2)) return false;
  const DeviceInfo& dev = devices()[std::size_t(l.device)];
  const std::int64_t bh = std::int64_t(kPackedLy) * sch.rw;
  std::string opts = depth_options(s.depth()) +
                     detail::cat("-DCH=", ch, " -DBIL_R=", radius, " -DBIL_RW=", sch.rw);
  if (!f32) {
    int copies = sch.copies;
    if (copies == 0) {  // the most copies (<= 16) that fit with the tile
      const std::uint64_t tile = std::uint64_t(bh + 2 * radius) * (kPackedLx + 2 * radius) * 4;
      const std::uint64_t lut = std::uint64_t(255 * ch + 1) * 4;
      copies = 16;
      while (copies > 1 && tile + lut * std::uint64_t(copies) > dev.local_mem) copies /= 2;
    }
    opts += detail::cat(" -DBIL_COPIES=", copies);
  }
  // NVIDIA: PTX vabsdiff4 (u8) and the asm pins of the sums (bilateral.cl BP_PIN).
  if (dev.nv_cc_major >= 3) opts += " -DPIXFLOW_NV_PTX=1";
  const char* name = f32 ? "bilateral_f32c1_tile" : "bilateral_u8cn_tile";
  if (!fits_local_memory(l, "bilateral", opts, name, "bilateral")) return false;
  const std::vector<std::int32_t> space = space_by_r2(taps, radius);
  const DeviceBuffer space_buf =
      device_buffer(l, space.size() * sizeof(std::int32_t), "bilateral", space.data());
  const DeviceBuffer table_buf = device_buffer(l, table_floats * sizeof(float), "bilateral", table);
  const std::int64_t rows = (d.height() + bh - 1) / bh;
  const std::int64_t blocks_x = (d.width() + std::int64_t(kPackedLx) - 1) / std::int64_t(kPackedLx);
  Kernel k(l, "bilateral", opts, name, "bilateral");
  k.image(s).image(d).arg(cl_int(d.width())).arg(cl_int(d.height())).arg(cl_int(p.border.type));
  if (f32)
    k.arg(cl_float(detail::saturate_cast<float>(p.border.value)));
  else
    k.arg(cl_uchar(detail::saturate_cast<std::uint8_t>(p.border.value)));
  k.arg(space_buf.mem).arg(table_buf.mem);
  if (f32) k.arg(cl_float(scale));
  k.run(std::size_t(blocks_x) * kPackedLx, std::size_t(rows) * kPackedLy, kPackedLx, kPackedLy);
  return true;
}

void bilateral(const ConstImageView& s, const ImageView& d, const BilateralParams& p,
               const Launch& l) {
  require_fp64(l, "bilateral");  // the quotient in double (the kernel's comment says why)
  const int ch = s.channels();
  const bool f32 = s.depth() == Depth::f32;
  const std::vector<std::int32_t> taps = make_taps(p);
  const double sc = p.sigma_color <= 0 ? 1.0 : p.sigma_color;
  std::vector<float> lut;
  const float* table = nullptr;
  std::size_t table_floats = 0;
  float scale = 0;
  if (f32) {
    table = detail::bilateral_f32::table(ch).data();
    table_floats = detail::bilateral_f32::table(ch).size();
    scale = detail::bilateral_f32::scale(sc, ch);
  } else {
    const double color_coeff = -0.5 / (sc * sc);
    lut.resize(std::size_t(256 * ch));
    for (int i = 0; i < 256 * ch; ++i)
      lut[std::size_t(i)] = float(std::exp(double(i) * i * color_coeff));
    table = lut.data();
    table_floats = lut.size();
  }
  const int radius = taps[taps.size() - 2];  // the last tap is (radius, 0)
  const Schedule sch = schedule();
  if ((sch.kind == Schedule::packed || sch.kind == Schedule::automatic) &&
      run_packed(s, d, p, l, sch, taps, radius, table, table_floats, scale))
    return;
  const bool tile = sch.kind != Schedule::pixel;
  std::string tile_opts = depth_options(s.depth()) + detail::cat("-DCH=1 -DBIL_R=", radius);
  if (sch.kind == Schedule::tile_tapconv || sch.kind == Schedule::automatic)
    tile_opts += " -DBIL_TAPCONV=1";
  if (sch.kind == Schedule::tile_rows) {
    tile_opts += " -DBIL_UNROLL_ROWS=1";
    // NVIDIA: the asm pins of the sums (bilateral.cl BP_PIN).
    if (devices()[std::size_t(l.device)].nv_cc_major >= 3) tile_opts += " -DPIXFLOW_NV_PTX=1";
  }
  // The tile kernel's local colour tables and tile need more than some devices have (oclgrind:
  // 32 KiB): the per-pixel kernel there (the same bits).
  if (tile && !f32 && ch == 1 && radius <= kTileMaxRadius &&
      fits_local_memory(l, "bilateral", tile_opts, "bilateral_u8c1_tile", "bilateral")) {
    const std::vector<std::int32_t> square = space_square(taps, radius);
    const DeviceBuffer space_buf =
        device_buffer(l, square.size() * sizeof(std::int32_t), "bilateral", square.data());
    const DeviceBuffer color_buf =
        device_buffer(l, table_floats * sizeof(float), "bilateral", table);
    Kernel(l, "bilateral", tile_opts, "bilateral_u8c1_tile", "bilateral")
        .image(s)
        .image(d)
        .arg(cl_int(d.width()))
        .arg(cl_int(d.height()))
        .arg(cl_int(p.border.type))
        .arg(cl_uchar(detail::saturate_cast<std::uint8_t>(p.border.value)))
        .arg(space_buf.mem)
        .arg(color_buf.mem)
        .run(std::size_t((d.width() + kTileW - 1) / kTileW) * kTileLx,
             std::size_t((d.height() + kTileH - 1) / kTileH) * kTileLy, kTileLx, kTileLy);
    return;
  }
  const DeviceBuffer taps_buf =
      device_buffer(l, taps.size() * sizeof(std::int32_t), "bilateral", taps.data());
  const DeviceBuffer table_buf = device_buffer(l, table_floats * sizeof(float), "bilateral", table);
  Kernel k(l, "bilateral", depth_options(s.depth()) + detail::cat("-DCH=", ch), "bilateral",
           "bilateral");
  k.image(s).image(d).arg(cl_int(d.width())).arg(cl_int(d.height())).arg(cl_int(p.border.type));
  if (f32)
    k.arg(cl_float(detail::saturate_cast<float>(p.border.value)));
  else
    k.arg(cl_uchar(detail::saturate_cast<std::uint8_t>(p.border.value)));
  k.arg(taps_buf.mem)
      .arg(cl_int(taps.size() / 3))
      .arg(table_buf.mem)
      .arg(cl_int(detail::bilateral_f32::bins(ch)))
      .arg(cl_float(scale))
      .run(std::size_t(d.width()), std::size_t(d.height()), kLx, kLy);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_bilateral) {
  using namespace pixflow;
  // Channels 1..4 as CUDA (core validates 1 or 3, cv::bilateralFilter's set).
  opencl::add<&opencl::bilateral>(table, "bilateral", opencl::depths({Depth::u8, Depth::f32}));
}
