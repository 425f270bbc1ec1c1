// OpenCL median (kernels/median.cl): u8, u16, f32, any channel count, any odd kw x kh up to
// 255 x 255, every border. Exact: both kernels select the reference's sample (integers by
// value, f32 by totalOrder keys).
// Square 3x3, 5x5, 7x7: median_net (sorted runs shared between output rows, min/max networks
// on vectors of VW neighbouring samples, RY output rows a work-item). Other windows, and every
// window with PIXFLOW_OCL_MEDIAN=count: median, selection by counting (8 / 16 / 32 passes over
// the window), the general fallback.
//
// Tuning, read once per process from PIXFLOW_OCL_MEDIAN (for A/B runs on the GPU):
//   count           the counting kernel for every window;
//   net             median_net with the defaults below (also when unset);
//   net,VW,RY       median_net with VW lanes (1, 2, 4, 8, 16) and RY rows (even; 0: the
//                   default) for every window, u8 / u16 in int lanes (-DWIDE_KEYS,
//                   common.cl), or uchar / ushort lanes with a trailing ",narrow".
// Defaults (timed on the H100, see median() below): 3x3 VW 4 in uchar / ushort lanes; 5x5 and
// 7x7 VW 1 in int lanes; RY 8, halved down to 2 while the image gives fewer than 2048
// work-items a compute unit (rows_per_item.hpp).
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

struct MedianTuning {
  bool count = false;        // the counting kernel for every window
  int vw = 0, ry = 0;        // 0: the per-window default
  bool lanes_given = false;  // "net,...": wide below for every window
  bool wide = true;          // u8 / u16 as int lanes (-DWIDE_KEYS)
};

const MedianTuning& tuning() {
  static const MedianTuning t = [] {
    MedianTuning r;
    const char* e = std::getenv("PIXFLOW_OCL_MEDIAN");
    if (e == nullptr) return r;
    const std::string v(e);
    if (v == "count") {
      r.count = true;
    } else if (v.rfind("net,", 0) == 0) {
      int vw = 0, ry = 0;
      r.lanes_given = true;
      r.wide = v.find(",narrow") == std::string::npos;
      if (std::sscanf(v.c_str() + 4, "%d,%d", &vw, &ry) == 2 &&
          (vw == 1 || vw == 2 || vw == 4 || vw == 8 || vw == 16) && ry >= 0 && ry <= 64 &&
          ry % 2 == 0) {
        r.vw = vw;
        r.ry = ry;
      }
    }
    return r;
  }();
  return t;
}

template <class F>
void with_cval(const ConstImageView& s, const Border& b, F&& f) {
  // The constant border's value as the reference takes it: saturated to the depth.
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      s.depth(), [&](auto t) { f(detail::saturate_cast<decltype(t)>(b.value)); });
}

void median(const ConstImageView& s, const ImageView& d, const MedianParams& p, const Launch& l) {
  const int ch = s.channels(), n = int(d.width()) * ch, rows = int(d.height());
  const MedianTuning& t = tuning();
  if (!t.count && p.kw == p.kh && (p.kw == 3 || p.kw == 5 || p.kw == 7)) {
    const int k = p.kw;
    // Defaults measured on the H100 at 8192^2 u8x1 (bench/NOTES.md, session 22, measurement
    // 2): 3x3 uchar lanes, 4 a work-item (224 us; int lanes 574); 5x5 and 7x7 int lanes, one
    // a work-item (532 / 1329 us; 2 lanes 591, 4 uchar lanes 1012 / 2340).
    const int vw = t.vw ? t.vw : k == 3 ? 4 : 1;
    const bool wide = t.lanes_given ? t.wide : k != 3;
    const int ry =
        t.ry ? t.ry : rows_per_item((std::size_t(n) + vw - 1) / vw, std::size_t(rows), l.device, 8);
    const std::string options = depth_options(s.depth()) + " -DK=" + std::to_string(k) +
                                " -DVW=" + std::to_string(vw) + " -DRY=" + std::to_string(ry) +
                                (wide ? " -DWIDE_KEYS=1" : "");
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
