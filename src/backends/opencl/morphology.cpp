// OpenCL morph_pass (kernels/morphology.cl), the one pass core runs for dilate, erode and the
// composites open, close, gradient, tophat, blackhat (src/core/ops/morphology.cpp; their
// "sub" is pointwise.cpp's). u8, u16, f32, any channel count, any window and anchor (the
// iterations' enlarged rectangles included), every border. Windows up to KMAX x KMAX:
// morph_small, the whole window in one launch (VW samples x RY rows a work-item, no
// intermediate image). Larger ones: two passes, the extreme over the window's rows into an
// intermediate image, then over its columns: van Herk / Gil-Werman (morph_cols_vh,
// morph_rows_vh; about 3 min / max a sample) for sides up to kMaxVanHerk, else morph_cols /
// morph_rows (K - 1 a sample, loops bounded by the image). Core runs the composites as these
// passes, except those of small odd windows on one channel: morph_composite (morph_comp), the
// whole sequence in one launch through local memory.
//
// Tuning, read once per process from PIXFLOW_OCL_MORPH (for A/B runs on the GPU):
//   passes              no fused composites (core's passes, through morph_small or van Herk);
//   sep                 the two separable passes for every window (van Herk where it applies);
//   run                 sep with morph_cols / morph_rows for every window (the kernels of
//                       before this tuning round: the baseline);
//   small               morph_small with the defaults below (also when unset);
//   small,VW,RY,KMAX    morph_small with VW lanes (1, 2, 4, 8, 16), RY rows (0: the default),
//                       windows up to KMAX x KMAX (1..15; also morph_composite's bound);
//                       a trailing ",narrow" keeps u8 / u16 in uchar / ushort lanes instead
//                       of int lanes (-DWIDE_KEYS, common.cl; the default is a guess).
// Defaults (not yet timed on the H100): VW 4, RY 8 (halved down to 2 while the image gives
// fewer than 2048 work-items a compute unit, rows_per_item.hpp), KMAX 7 (a 7-wide window is 7
// vector loads and 6 min/max a source row, and 6 more an output: about the separable passes' work
// in one pass over memory instead of three).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/rows_per_item.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/base/error.hpp"
#include "src/base/numeric.hpp"
#include "src/base/passes.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kLx = 64, kLy = 4;
// The largest window side of the van Herk passes (compile-time K: K registers of suffix
// extremes a work-item; iterations enlarge windows to thousands, which take morph_cols /
// morph_rows, whose loops window_run bounds by the image).
constexpr int kMaxVanHerk = 63;

struct MorphTuning {
  bool sep = false;  // the separable passes for every window (van Herk where it applies)
  bool run = false;  // sep, and morph_cols / morph_rows (the kernels before van Herk)
  bool fuse = true;  // composites of small windows in one kernel (morph_comp)
  bool wide = true;  // morph_small: u8 / u16 as int lanes (-DWIDE_KEYS)
  int vw = 4, ry = 0, kmax = 7;  // morph_small's shape (ry 0: rows_per_item) and largest side
};

const MorphTuning& tuning() {
  static const MorphTuning t = [] {
    MorphTuning r;
    const char* e = std::getenv("PIXFLOW_OCL_MORPH");
    if (e == nullptr) return r;
    const std::string v(e);
    int vw = 0, ry = 0, kmax = 0;
    r.wide = v.find(",narrow") == std::string::npos;
    if (v == "sep") {
      r.sep = true;
      r.fuse = false;
    } else if (v == "run") {
      r.sep = r.run = true;
      r.fuse = false;
    } else if (v == "passes") {
      r.fuse = false;
    } else if (v.rfind("small,", 0) == 0 &&
               std::sscanf(v.c_str() + 6, "%d,%d,%d", &vw, &ry, &kmax) == 3 &&
               (vw == 1 || vw == 2 || vw == 4 || vw == 8 || vw == 16) && ry >= 0 && ry <= 64 &&
               kmax >= 1 && kmax <= 15) {
      r.vw = vw;
      r.ry = ry;
      r.kmax = kmax;
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

// morph_small for a window of at most kmax x kmax.
void morph_small(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                 const MorphTuning& t, const Launch& l) {
  const int ch = s.channels(), n = int(s.width()) * ch, h = int(s.height());
  const int ry =
      t.ry ? t.ry : rows_per_item((std::size_t(n) + t.vw - 1) / t.vw, std::size_t(h), l.device, 8);
  const std::string options =
      depth_options(s.depth()) +
      detail::cat(" -DKW=", m.kw, " -DKH=", m.kh, " -DVW=", t.vw, " -DRY=", ry,
                  " -DIS_MAX=", m.op == MorphOp::dilate ? 1 : 0, t.wide ? " -DWIDE_KEYS=1" : "");
  Kernel k(l, "morphology", options, "morph_small", "morph_pass");
  k.image(s)
      .image(d)
      .arg(cl_int(s.width()))
      .arg(cl_int(h))
      .arg(cl_int(ch))
      .arg(cl_int(m.ax))
      .arg(cl_int(m.ay))
      .arg(cl_int(m.border.type));
  with_cval(s, m.border, [&](auto c) { k.arg(c); });
  // 32 x 4 work-items: a warp spans 32 * VW samples of a row, the group 4 * RY rows.
  k.run((std::size_t(n) + t.vw - 1) / t.vw, (std::size_t(h) + ry - 1) / ry, 32, 4);
}

void morph_pass(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                const Launch& l) {
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  const MorphTuning& tune = tuning();
  if (!tune.sep && m.kw <= tune.kmax && m.kh <= tune.kmax) return morph_small(s, d, m, tune, l);
  const cl_int is_max = m.op == MorphOp::dilate ? 1 : 0;
  const cl_int btype = cl_int(m.border.type);
  // The column extremes: an image of the source's format, rows packed. The in-order queue
  // runs the row pass after the column pass; the intermediate's buffer is freed by the driver
  // once both have finished (allocate's deleter).
  const std::int64_t stride = s.row_bytes();
  const std::shared_ptr<std::byte> buf = allocate(l.device, std::size_t(stride) * std::size_t(h));
  const ImageView t(buf.get(), w, h, stride, s.format(), Location::opencl(l.device));
  if (!tune.run && m.kw <= kMaxVanHerk && m.kh <= kMaxVanHerk) {
    // van Herk passes: VW lanes along the row for the columns where the suffix array (KH
    // vectors) stays small, one sample a work-item otherwise and for the rows.
    const int vw = m.kh <= 16 ? 4 : 1;
    const std::string dep = depth_options(s.depth());
    Kernel cols(l, "morphology",
                dep + detail::cat(" -DKH=", m.kh, " -DVW=", vw, " -DIS_MAX=", is_max),
                "morph_cols_vh", "morph_pass");
    Kernel rows(l, "morphology", dep + detail::cat(" -DKW=", m.kw, " -DVW=1 -DIS_MAX=", is_max),
                "morph_rows_vh", "morph_pass");
    cols.image(s).image(t).arg(cl_int(n)).arg(cl_int(h)).arg(cl_int(m.ay)).arg(btype);
    rows.image(t)
        .image(d)
        .arg(cl_int(w))
        .arg(cl_int(h))
        .arg(cl_int(ch))
        .arg(cl_int(m.ax))
        .arg(btype);
    with_cval(s, m.border, [&](auto c) {
      cols.arg(c);
      rows.arg(c);
    });
    cols.run((std::size_t(n) + vw - 1) / vw, (std::size_t(h) + m.kh - 1) / m.kh, kLx, kLy);
    rows.run(std::size_t((w + m.kw - 1) / m.kw) * std::size_t(ch), std::size_t(h), kLx, kLy);
    return;
  }
  const std::string options = depth_options(s.depth());
  Kernel cols(l, "morphology", options, "morph_cols", "morph_pass");
  Kernel rows(l, "morphology", options, "morph_rows", "morph_pass");
  cols.image(s)
      .image(t)
      .arg(cl_int(n))
      .arg(cl_int(h))
      .arg(cl_int(m.kh))
      .arg(cl_int(m.ay))
      .arg(btype);
  rows.image(t)
      .image(d)
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(cl_int(ch))
      .arg(cl_int(m.kw))
      .arg(cl_int(m.ax))
      .arg(btype);
  with_cval(s, m.border, [&](auto c) {
    cols.arg(c);
    rows.arg(c);
  });
  cols.arg(is_max).run(std::size_t(n), std::size_t(h), kLx, kLy);
  rows.arg(is_max).run(std::size_t(n), std::size_t(h), kLx, kLy);
}

// The composites morph_comp takes: one channel, odd windows of at most KMAX x KMAX with the
// centred anchor (what the public ops give for odd sides, iterations included), every
// border but wrap (whose second pass reads E from the image's far side; gradient reads only
// the source and takes wrap too).
bool comp_covers(const ConstImageView& s, const detail::MorphPass& m, int device) {
  const MorphTuning& t = tuning();
  if (!(t.fuse && s.channels() == 1 && m.kw % 2 == 1 && m.kh % 2 == 1 && m.kw <= t.kmax &&
        m.kh <= t.kmax && m.ax == m.kw / 2 && m.ay == m.kh / 2 &&
        (m.op == MorphOp::gradient || m.border.type != BorderType::wrap) &&
        m.op != MorphOp::dilate && m.op != MorphOp::erode))
    return false;
  // morph_comp's local arrays (kernels/morphology.cl: SH x SW and SH x EW keys, two of the
  // latter for gradient) must fit the device's local memory (KMAX up to 15 on f32 need not).
  const std::size_t ew = 64 + std::size_t(m.kw - 1), sw = ew + std::size_t(m.kw - 1);
  const std::size_t sh = 32 + 2 * std::size_t(m.kh - 1);
  const std::size_t key = s.depth() == Depth::f32 ? 4 : s.depth() == Depth::u16 ? 2 : 1;
  const std::size_t bytes = (sh * sw + sh * ew * (m.op == MorphOp::gradient ? 2 : 1)) * key;
  return bytes <= devices()[std::size_t(device)].local_mem;
}

void morph_composite_covers(const ConstImageView& s, const detail::MorphPass& m,
                            const detail::MorphCovers& covers, const Launch& l) {
  covers.yes = comp_covers(s, m, l.device);
}

void morph_composite(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                     const Launch& l) {
  detail::require(comp_covers(s, m, l.device), Status::internal, morph_op_name(m.op),
                  "the fused OpenCL composite was called for a window or border it does not take");
  const int w = int(s.width()), h = int(s.height());
  if (w == 0 || h == 0) return;
  const std::string options = depth_options(s.depth()) + detail::cat(" -DKW=", m.kw, " -DKH=", m.kh,
                                                                     " -DVW=1 -DOP=", int(m.op));
  Kernel k(l, "morphology", options, "morph_comp", morph_op_name(m.op));
  k.image(s).image(d).arg(cl_int(w)).arg(cl_int(h)).arg(cl_int(m.border.type));
  with_cval(s, m.border, [&](auto c) { k.arg(c); });
  // A 64 x 32 output tile a group of 64 x 4 (kernels/morphology.cl, CTX / CTY).
  k.run(std::size_t((w + 63) / 64) * 64, std::size_t((h + 31) / 32) * 4, 64, 4);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_morphology) {
  using namespace pixflow;
  opencl::add<&opencl::morph_pass>(table, "morph_pass",
                                   opencl::depths({Depth::u8, Depth::u16, Depth::f32}));
  const auto c1 = detail::Support::of({Depth::u8, Depth::u16, Depth::f32}, {1});
  opencl::add<&opencl::morph_composite>(table, "morph_composite", c1);
  opencl::add<&opencl::morph_composite_covers>(table, "morph_composite.covers", c1);
}
