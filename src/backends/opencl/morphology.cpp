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
// Tuning, read at every call from PIXFLOW_OCL_MORPH (for A/B runs on the GPU):
//   passes              no fused composites (core's passes, through morph_small or van Herk);
//   sep                 the two separable passes for every window (van Herk where it applies);
//   run                 sep with morph_cols / morph_rows for every window (the kernels of
//                       before this tuning round: the baseline);
//   (unset)             packed for u8 x 1 images of at least 2^24 pixels (use_packed), else small;
//                       but never morph_u8_comp (below: NVIDIA builds it in 30-80 s): open /
//                       close / tophat / blackhat there run as core's passes through the
//                       packed dilate / erode (as packed-passes);
//   small               morph_small with the defaults below;
//   small,VW,RY,KMAX    morph_small with VW lanes (1, 2, 4, 8, 16), RY rows (0: the default),
//                       windows up to KMAX x KMAX (1..15; also morph_composite's bound);
//                       a trailing ",narrow" keeps u8 / u16 in uchar / ushort lanes instead
//                       of int lanes (-DWIDE_KEYS, common.cl; the default is a guess).
//   packed              u8 dilate / erode of windows up to 5 x 5 (channels 1..4, any anchor,
//                       the reach at most 8 bytes a side) by morph_u8: a work-item 8 row
//                       bytes of RY rows (rows_per_item), the source as words, a byte a
//                       register (bench/NOTES.md, branch ocl-morph); other calls as small;
//   packed,BW,RY,KMAX   the same with BW bytes a work-item (4, 8, 16; 0: 8), RY rows (even;
//                       0: rows_per_item), windows up to KMAX x KMAX (1..7); a trailing
//                       ",doubling" takes the row extremes by doubling instead of chains.
//   packed-passes       packed dilate / erode, every composite as core's passes through them
//                       (no fused kernel; for the A/B against morph_composite).
// Defaults (not yet timed on the H100): VW 4, RY 8 (halved down to 2 while the image gives
// fewer than 2048 work-items a compute unit, rows_per_item.hpp), KMAX 7 (a 7-wide window is 7
// vector loads and 6 min/max a source row, and 6 more an output: about the separable passes' work
// in one pass over memory instead of three).
#include <algorithm>
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
  // morph_u8 (u8 windows up to pkmax x pkmax, row bytes a byte a register): on when packed;
  // pbw row bytes a work-item (0: 8), pry rows (0: rows_per_item).
  bool packed = false;
  // Unset PIXFLOW_OCL_MORPH: packed for u8 x 1 images of at least kPackedAutoPixels (use_packed).
  bool packed_auto = true;
  bool pdouble = false;  // morph_u8's row extremes by doubling (-DMPK_DIRECT=0)
  // morph_u8_comp for open / close / tophat / blackhat: only when PIXFLOW_OCL_MORPH=packed...
  // asks. NVIDIA's OpenCL compiler takes 30-80 s to build it (open 3x3: the first call 78 s on
  // the H100, session 24), which no default may cost a user; with the disk cache later
  // processes load it in milliseconds, but the first one waits.
  bool pcomp = false;
  int pbw = 0, pry = 0, pkmax = 5;
};

// Parsed at every call (a getenv and a few compares beside a launch): the tests switch
// schedules with setenv. A value that is none of the above throws: a misspelt A/B must not
// time the default.
MorphTuning tuning() {
  MorphTuning r;
  {
    const char* e = std::getenv("PIXFLOW_OCL_MORPH");
    if (e == nullptr || *e == '\0') return r;
    r.packed_auto = false;
    const std::string v(e);
    int vw = 0, ry = 0, kmax = 0;
    r.wide = v.find(",narrow") == std::string::npos;
    r.pdouble = v.find(",doubling") != std::string::npos;
    if (v == "sep") {
      r.sep = true;
      r.fuse = false;
    } else if (v == "run") {
      r.sep = r.run = true;
      r.fuse = false;
    } else if (v == "passes") {
      r.fuse = false;
    } else if (v == "packed" || v == "packed,doubling") {
      r.packed = r.pcomp = true;
    } else if (v == "packed-passes") {
      // packed dilate / erode, the composites as core's passes through them (no fused kernel).
      r.packed = true;
      r.fuse = false;
    } else if (v.rfind("packed,", 0) == 0 &&
               std::sscanf(v.c_str() + 7, "%d,%d,%d", &vw, &ry, &kmax) == 3 &&
               (vw == 0 || vw == 4 || vw == 8 || vw == 16) && ry >= 0 && ry <= 16 && ry % 2 == 0 &&
               kmax >= 1 && kmax <= 7) {
      r.packed = r.pcomp = true;
      r.pbw = vw;
      r.pry = ry;
      r.pkmax = kmax;
    } else if (v.rfind("small,", 0) == 0 &&
               std::sscanf(v.c_str() + 6, "%d,%d,%d", &vw, &ry, &kmax) == 3 &&
               (vw == 1 || vw == 2 || vw == 4 || vw == 8 || vw == 16) && ry >= 0 && ry <= 64 &&
               kmax >= 1 && kmax <= 15) {
      r.vw = vw;
      r.ry = ry;
      r.kmax = kmax;
    } else if (v != "small") {
      detail::fail(Status::invalid_argument, "morphology", "PIXFLOW_OCL_MORPH=", v,
                   " is not one of passes|sep|run|small|small,VW,RY,KMAX[,narrow]|"
                   "packed[,doubling]|packed,BW,RY,KMAX[,doubling]|packed-passes");
    }
  }
  return r;
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

// morph_u8's halo (kernels/morphology.cl, HB): the bytes the window reaches either side,
// rounded up to a word or two; 0 where it reaches further (the kernel does not take it).
// The packed u8 kernels by default where the session 23 A/B on the H100 (bench/NOTES.md) found
// them faster: u8 x 1 at 8192^2, dilate 3x3 / 5x5 / 15x15 150 / 171 / 433 us against 164 / 227 /
// 590, open 398 against 458, gradient 184 against 276; at 1920x1080 they lost (dilate 3x3 16.5
// against 12.5, open 51 against 22). Sizes between were not timed: the threshold, 2^24 pixels
// (4096^2), lies between the two.
constexpr std::int64_t kPackedAutoPixels = std::int64_t(1) << 24;

bool use_packed(const MorphTuning& t, const ConstImageView& s) {
  return t.packed || (t.packed_auto && s.depth() == Depth::u8 && s.channels() == 1 &&
                      s.width() * s.height() >= kPackedAutoPixels);
}

int packed_halo(const ConstImageView& s, const detail::MorphPass& m, const MorphTuning& t) {
  if (!use_packed(t, s) || s.depth() != Depth::u8 || s.channels() > 4 || m.kw > t.pkmax ||
      m.kh > t.pkmax)
    return 0;
  const int reach = std::max(m.ax, m.kw - 1 - m.ax) * s.channels();
  return reach <= 4 ? 4 : reach <= 8 ? 8 : 0;
}

// Row bytes a morph_u8 / morph_u8_comp work-item takes unless PIXFLOW_OCL_MORPH says: 8, but 4
// for the gradient and the composites past 3 x 3, which keep two rings of rows (ptxas for
// sm_90 on clang's PTX: 5 x 5 gradient 103 registers at 8, 64 at 4; open 5 x 5 146 at 8, 96
// at 4; bench/NOTES.md, branch ocl-morph).
int default_bw(const detail::MorphPass& m) {
  const bool two = m.op != MorphOp::dilate && m.op != MorphOp::erode;
  // The row pass alone: one row of extremes, the doubling's overhead spread over more bytes
  // (15 wide: 12.4 SASS a byte at 16, 16 at 8).
  if (m.kh == 1 && !two) return 16;
  return two && (m.kw > 3 || m.kh > 3) ? 4 : 8;
}

// morph_u8 (dilate / erode u8, a work-item BW row bytes of RY rows, a byte a register; m.op
// gradient: both and their difference, -DMPK_GRAD).
void morph_u8(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m, int hb,
              const MorphTuning& t, const Launch& l) {
  const int ch = s.channels(), n = int(s.width()) * ch, h = int(s.height());
  // 8 bytes a work-item unless asked (registers: the KH + 1 rows of extremes a work-item keeps
  // take KH + 1 registers a byte); 8-byte halo words need 8-byte steps (their alignment).
  const int bw = std::max(t.pbw ? t.pbw : default_bw(m), hb);
  const std::size_t items_x = (std::size_t(n) + bw - 1) / std::size_t(bw);
  const int ry = t.pry ? t.pry : rows_per_item(items_x, std::size_t(h), l.device, 8);
  const std::string options = depth_options(s.depth()) +
                              detail::cat("-DMPK=1 -DKW=", m.kw, " -DKH=", m.kh, " -DAX=", m.ax,
                                          " -DAY=", m.ay, " -DCH=", ch, " -DBW=", bw, " -DRY=", ry,
                                          " -DHB=", hb, " -DMPK_DIRECT=", t.pdouble ? 0 : 1,
                                          m.op == MorphOp::gradient ? " -DMPK_GRAD=1" : "",
                                          " -DIS_MAX=", m.op == MorphOp::erode ? 0 : 1);
  Kernel k(l, "morphology", options, "morph_u8",
           m.op == MorphOp::gradient ? morph_op_name(m.op) : "morph_pass");
  k.image(s).image(d).arg(cl_int(s.width())).arg(cl_int(h)).arg(cl_int(m.border.type));
  k.arg(detail::saturate_cast<std::uint8_t>(m.border.value));
  // 32 x 4 work-items: a warp spans 32 * BW bytes of a row, the group 4 * RY rows.
  k.run(items_x, (std::size_t(h) + ry - 1) / std::size_t(ry), 32, 4);
}

// The larger u8 windows of PIXFLOW_OCL_MORPH=packed: rows up to 16 wide reaching at most 8
// bytes a side (morph_u8 with KH = 1: doubling to 8 taps, then two overlapping 8s), columns
// up to kMaxVanHerk (morph_u8_vh); two passes through an intermediate where both are wider
// than 1. 0 where the schedule does not take the call.
int packed_large_halo(const ConstImageView& s, const detail::MorphPass& m, const MorphTuning& t) {
  if (!use_packed(t, s) || s.depth() != Depth::u8 || s.channels() > 4 || m.kw > 16 ||
      m.kh > kMaxVanHerk)
    return 0;
  const int reach = std::max(m.ax, m.kw - 1 - m.ax) * s.channels();
  return reach <= 4 ? 4 : reach <= 8 ? 8 : 0;
}

void morph_u8_large(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m, int hb,
                    const MorphTuning& t, const Launch& l) {
  const int w = int(s.width()), h = int(s.height()), n = w * s.channels();
  detail::MorphPass rows = m;  // the row pass: the window's columns, one row
  rows.kh = 1;
  rows.ay = 0;
  if (m.kh == 1) return morph_u8(s, d, rows, hb, t, l);
  std::shared_ptr<std::byte> buf;
  ImageView mid = d;  // the column pass's output: d when the window is one column wide
  if (m.kw > 1) {
    const std::int64_t stride = s.row_bytes();
    buf = workspace(l.device, std::size_t(stride) * std::size_t(h), l.queue);
    mid = ImageView(buf.get(), w, h, stride, s.format(), Location::opencl(l.device));
  }
  // 4 bytes a work-item (KH rows of suffix extremes a byte: 15 x 15 took 80 registers at 4,
  // 156 at 8 in ptxas for sm_90), 8 when asked.
  const int bw = t.pbw == 8 ? 8 : 4;
  const std::string options =
      depth_options(s.depth()) +
      detail::cat("-DMPV=1 -DKW=1 -DAX=0 -DCH=1 -DHB=4 -DKH=", m.kh, " -DBW=", bw,
                  " -DMPK_DIRECT=1 -DIS_MAX=", m.op == MorphOp::dilate ? 1 : 0);
  Kernel k(l, "morphology", options, "morph_u8_vh", "morph_pass");
  k.image(s).image(mid).arg(cl_int(n)).arg(cl_int(h)).arg(cl_int(m.ay)).arg(cl_int(m.border.type));
  k.arg(detail::saturate_cast<std::uint8_t>(m.border.value));
  k.run((std::size_t(n) + bw - 1) / std::size_t(bw),
        (std::size_t(h) + m.kh - 1) / std::size_t(m.kh), 32, 4);
  // The in-order queue runs the row pass after the column pass; the intermediate is the
  // queue's workspace (runtime.hpp), taken again only by later commands of this queue.
  if (m.kw > 1) morph_u8(mid, d, rows, hb, t, l);
}

void morph_pass(const ConstImageView& s, const ImageView& d, const detail::MorphPass& m,
                const Launch& l) {
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  const MorphTuning tune = tuning();
  if (const int hb = packed_halo(s, m, tune)) return morph_u8(s, d, m, hb, tune, l);
  if (const int hb = packed_large_halo(s, m, tune)) return morph_u8_large(s, d, m, hb, tune, l);
  if (!tune.sep && m.kw <= tune.kmax && m.kh <= tune.kmax) return morph_small(s, d, m, tune, l);
  const cl_int is_max = m.op == MorphOp::dilate ? 1 : 0;
  const cl_int btype = cl_int(m.border.type);
  // The column extremes: an image of the source's format, rows packed. The in-order queue
  // runs the row pass after the column pass; the intermediate is the queue's workspace
  // (runtime.hpp), taken again only by later commands of this queue.
  const std::int64_t stride = s.row_bytes();
  const std::shared_ptr<std::byte> buf =
      workspace(l.device, std::size_t(stride) * std::size_t(h), l.queue);
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

// The composites morph_u8_comp takes (PIXFLOW_OCL_MORPH=packed...): open, close, tophat,
// blackhat of one u8 channel, odd centred windows up to 5 x 5 (and KMAX), every border but
// wrap (as morph_comp). gradient goes to morph_u8 wherever it takes the pass (packed_halo).
bool packed_comp(const ConstImageView& s, const detail::MorphPass& m, const MorphTuning& t) {
  const int kmax = std::min(t.pkmax, 5);
  return t.pcomp && use_packed(t, s) && s.depth() == Depth::u8 && s.channels() == 1 &&
         m.kw % 2 == 1 && m.kh % 2 == 1 && m.kw <= kmax && m.kh <= kmax && m.ax == m.kw / 2 &&
         m.ay == m.kh / 2 && m.border.type != BorderType::wrap &&
         (m.op == MorphOp::open || m.op == MorphOp::close || m.op == MorphOp::tophat ||
          m.op == MorphOp::blackhat);
}

// The composites morph_comp takes: one channel, odd windows of at most KMAX x KMAX with the
// centred anchor (what the public ops give for odd sides, iterations included), every
// border but wrap (whose second pass reads E from the image's far side; gradient reads only
// the source and takes wrap too). Before them, the packed kernels' (above).
bool comp_covers(const ConstImageView& s, const detail::MorphPass& m, int device) {
  const MorphTuning t = tuning();
  if (packed_comp(s, m, t) || (m.op == MorphOp::gradient && packed_halo(s, m, t) > 0)) return true;
  // Unset PIXFLOW_OCL_MORPH, where the packed dilate / erode run (u8 x 1 of >= 2^24 pixels):
  // open / close / tophat / blackhat as core's passes through them, not the tile kernel (H100,
  // session 24, 3x3 at 8192^2: open 309 against 457 us, tophat 380 against 485).
  if (t.packed_auto && m.op != MorphOp::gradient && packed_halo(s, m, t) > 0) return false;
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
  const MorphTuning t = tuning();
  if (m.op == MorphOp::gradient) {
    if (const int hb = packed_halo(s, m, t)) return morph_u8(s, d, m, hb, t, l);
  }
  if (packed_comp(s, m, t)) {
    // morph_u8_comp: a work-item BW row bytes (4, 8, 16; 8 unless asked) of RY rows.
    const int bw = t.pbw ? t.pbw : default_bw(m);
    const std::size_t items_x = (std::size_t(w) + bw - 1) / std::size_t(bw);
    const int ry = t.pry ? t.pry : rows_per_item(items_x, std::size_t(h), l.device, 8);
    const bool ext1_max = m.op == MorphOp::close || m.op == MorphOp::blackhat;
    const std::string options =
        depth_options(s.depth()) + detail::cat("-DMPC=", int(m.op), " -DKW=", m.kw, " -DKH=", m.kh,
                                               " -DAX=", m.kw / 2, " -DAY=", m.kh / 2,
                                               " -DCH=1 -DHB=4 -DBW=", bw, " -DRY=", ry,
                                               " -DIS_MAX=", ext1_max ? 1 : 0, " -DMPK_DIRECT=1");
    Kernel k(l, "morphology", options, "morph_u8_comp", morph_op_name(m.op));
    k.image(s).image(d).arg(cl_int(w)).arg(cl_int(h)).arg(cl_int(m.border.type));
    k.arg(detail::saturate_cast<std::uint8_t>(m.border.value));
    k.run(items_x, (std::size_t(h) + ry - 1) / std::size_t(ry), 32, 4);
    return;
  }
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
  // Every channel count: the covers answer says which calls the fused kernels take (morph_comp
  // one channel; morph_u8's gradient u8 up to 4).
  const auto all = opencl::depths({Depth::u8, Depth::u16, Depth::f32});
  opencl::add<&opencl::morph_composite>(table, "morph_composite", all);
  opencl::add<&opencl::morph_composite_covers>(table, "morph_composite.covers", all);
}
