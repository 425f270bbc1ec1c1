// OpenCL median (kernels/median.cl): u8, u16, f32, any channel count, any odd kw x kh up to
// 255 x 255, every border. Exact: both kernels select the reference's sample (integers by
// value, f32 by totalOrder keys).
// Square 3x3, 5x5, 7x7: median_net (sorted runs shared between output rows, min/max networks
// on vectors of VW neighbouring samples, RY output rows a work-item). Other windows, and every
// window with PIXFLOW_OCL_MEDIAN=count: median, selection by counting (8 / 16 / 32 passes over
// the window), the general fallback.
//
// Tuning, read from PIXFLOW_OCL_MEDIAN at every call (for A/B runs on the GPU; the tests
// switch it with setenv):
//   count           the counting kernel for every window;
//   net             median_net with the defaults below (also when unset);
//   net,VW,RY[,L]   median_net with VW lanes (1, 2, 4, 8, 16) and RY rows (even; 0: the
//                   default) for every window, in lanes L:
//                     (none)  u8 / u16 as int keys (-DWIDE_KEYS, common.cl);
//                     narrow  uchar / ushort keys;
//                     u16     u8 as ushort keys (-DKEY16; u16 and f32 as narrow);
//                     u16x2   u16's ushort keys (u8, u16), min / max two lanes at a time by
//                             PTX min.u16x2 / max.u16x2 on NVIDIA devices of compute
//                             capability 9 and later (-DPIXFLOW_PTX_U16X2), else as u16;
//                     words   u8 with one channel: the word kernel (-DWORDS, median.cl), VW 4
//                             or 8 samples a work-item (others: 4), min / max as u16x2; any
//                             other depth or channel count takes the defaults below.
// Defaults (timed on the H100, see median() below): u8 x 1 the word kernel (VW 4; 5x5 and 7x7
// only where 4 rows a work-item fill the device, with RY 4); otherwise 3x3 VW 4 in uchar /
// ushort lanes, 5x5 and 7x7 VW 1 in int lanes; RY 8, halved down to 2 while the image gives
// fewer than 2048 work-items a compute unit (rows_per_item.hpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/rows_per_item.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

enum class Lanes { wide, narrow, u16, u16x2, words };

struct MedianTuning {
  bool count = false;        // the counting kernel for every window
  int vw = 0, ry = 0;        // 0: the per-window default
  bool lanes_given = false;  // "net,...": `lanes` for every window
  Lanes lanes = Lanes::wide;
};

MedianTuning tuning() {
  MedianTuning r;
  const char* e = std::getenv("PIXFLOW_OCL_MEDIAN");
  if (e == nullptr) return r;
  const std::string v(e);
  if (v == "count") {
    r.count = true;
  } else if (v.rfind("net,", 0) == 0) {
    int vw = 0, ry = 0;
    r.lanes_given = true;
    const std::size_t c = v.rfind(',');
    const std::string last = v.substr(c + 1);
    r.lanes = last == "narrow"  ? Lanes::narrow
              : last == "u16"   ? Lanes::u16
              : last == "u16x2" ? Lanes::u16x2
              : last == "words" ? Lanes::words
                                : Lanes::wide;
    if (std::sscanf(v.c_str() + 4, "%d,%d", &vw, &ry) == 2 &&
        (vw == 1 || vw == 2 || vw == 4 || vw == 8 || vw == 16) && ry >= 0 && ry <= 64 &&
        ry % 2 == 0) {
      r.vw = vw;
      r.ry = ry;
    }
  }
  return r;
}

// Whether the device takes PTX min.u16x2 (NVIDIA, compute capability 9.0 and later).
bool has_u16x2(int device) {
  return devices()[std::size_t(device)].nv_cc_major >= 9;
}

bool little_endian(int device) {
  return devices()[std::size_t(device)].little_endian;
}

// Whether the view's first sample and stride are multiples of 4 bytes (the buffers' bases are
// aligned far beyond, as pointwise.cpp's aligned()).
bool aligned4(const ConstImageView& v, int device) {
  const BufferRef r = resolve(v.data(), device, "median");
  return r.offset % 4 == 0 && std::size_t(v.stride()) % 4 == 0;
}

template <class F>
void with_cval(const ConstImageView& s, const Border& b, F&& f) {
  // The constant border's value as the reference takes it: saturated to the depth.
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      s.depth(), [&](auto t) { f(detail::saturate_cast<decltype(t)>(b.value)); });
}

void median(const ConstImageView& s, const ImageView& d, const MedianParams& p, const Launch& l) {
  const int ch = s.channels(), n = int(d.width()) * ch, rows = int(d.height());
  const MedianTuning t = tuning();
  if (!t.count && p.kw == p.kh && (p.kw == 3 || p.kw == 5 || p.kw == 7)) {
    const int k = p.kw;
    // Other formats: defaults measured on the H100 at 8192^2 u8x1 (bench/NOTES.md, session 22,
    // measurement 2): 3x3 uchar lanes, 4 a work-item (224 us; int lanes 574); 5x5 and 7x7 int
    // lanes, one a work-item (532 / 1329 us; 2 lanes 591, 4 uchar lanes 1012 / 2340).
    Lanes lanes = t.lanes_given ? t.lanes : k == 3 ? Lanes::narrow : Lanes::wide;
    int vw = t.vw, ry_max = 8;
    // u8 x 1 defaults (bench/NOTES.md, session 23 A/B, 8192^2 / 1080p): the word kernel, 4
    // samples a work-item: 3x3 179 / 13.0 us (uchar lanes 226 / 16.9); 5x5 and 7x7 with 4 rows a
    // work-item 324 / 901 us (int lanes 532 / 1336), but only where the image fills the
    // device at 4 rows: at 1080p (2 rows) it lost, 25.8 / 78.4 against 23.4 / 52.7.
    if (!t.lanes_given && s.depth() == Depth::u8 && ch == 1 && little_endian(l.device) &&
        (k == 3 || rows_per_item((std::size_t(n) + 3) / 4, std::size_t(rows), l.device, 4) == 4)) {
      lanes = Lanes::words;
      if (k != 3) ry_max = 4;
    }
    if (lanes == Lanes::words) {
      if (s.depth() == Depth::u8 && ch == 1 && little_endian(l.device)) {
        if (vw != 8) vw = 4;
      } else {  // the per-window defaults
        lanes = k == 3 ? Lanes::narrow : Lanes::wide;
        vw = 0;
      }
    }
    if (vw == 0) vw = k == 3 ? 4 : 1;
    const int ry =
        t.ry ? t.ry
             : rows_per_item((std::size_t(n) + vw - 1) / vw, std::size_t(rows), l.device, ry_max);
    const bool pairs = (lanes == Lanes::u16x2 || lanes == Lanes::words) && has_u16x2(l.device);
    std::string options = depth_options(s.depth()) + " -DK=" + std::to_string(k) +
                          " -DVW=" + std::to_string(vw) + " -DRY=" + std::to_string(ry);
    if (lanes == Lanes::wide) options += " -DWIDE_KEYS=1";
    if (lanes == Lanes::u16 || lanes == Lanes::u16x2) options += " -DKEY16=1";
    if (lanes == Lanes::words) {
      options += " -DWORDS=1";
      if (aligned4(s, l.device) && aligned4(d, l.device)) options += " -DALIGNED4=1";
    }
    if (pairs) options += " -DPIXFLOW_PTX_U16X2=1";
    Kernel k2(l, "median", options, "median_net", "median");
    k2.image(s)
        .image(d)
        .arg(cl_int(s.width()))
        .arg(cl_int(s.height()))
        .arg(cl_int(ch))
        .arg(cl_int(p.border.type));
    with_cval(s, p.border, [&](auto c) { k2.arg(c); });
    // 32 x 4 work-items: a warp spans 32 * VW samples of a row, the group 4 * RY rows.
    k2.run((std::size_t(n) + vw - 1) / vw, (std::size_t(rows) + ry - 1) / ry, 32, 4);
    return;
  }
  Kernel k(l, "median", depth_options(s.depth()), "median", "median");
  k.image(s)
      .image(d)
      .arg(cl_int(s.width()))
      .arg(cl_int(s.height()))
      .arg(cl_int(ch))
      .arg(cl_int(p.kw))
      .arg(cl_int(p.kh))
      .arg(cl_int(p.border.type));
  with_cval(s, p.border, [&](auto c) { k.arg(c); });
  k.run(std::size_t(n), std::size_t(rows), 64, 4);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_median) {
  using namespace pixflow;
  opencl::add<&opencl::median>(table, "median",
                               opencl::depths({Depth::u8, Depth::u16, Depth::f32}));
}
