// OpenCL linear filters: box, gaussian, sobel, scharr, filter2d (kernels/linear.cl). What the
// reference computes once per call (the Gaussian and derivative taps, the constant-border
// values and the Gaussian's horizontal pass of a constant row) is computed here with the same
// rule headers (src/base/gaussian_taps.hpp, deriv_taps.hpp, numeric.hpp) and passed in; the
// kernels reproduce the per-sample arithmetic of src/ref in its order. box and gaussian run in
// two passes through a device buffer of sums (the queue's workspace, runtime.hpp: a block
// reused by later calls on the same queue, not a clCreateBuffer per call).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/backends/opencl/variant.hpp"
#include "src/base/deriv_taps.hpp"
#include "src/base/error.hpp"
#include "src/base/gaussian_taps.hpp"
#include "src/base/numeric.hpp"
#include "src/base/visit_depth.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kLx = 64, kLy = 4;

cl_int border_arg(const Border& b) {
  return cl_int(b.type);
}

// The constant border's sample (the border value saturated to the depth), as the kernel's T.
template <class T>
auto cl_sample(double v) {
  const T t = detail::saturate_cast<T>(v);
  if constexpr (std::is_same_v<T, float>)
    return cl_float(t);
  else if constexpr (std::is_same_v<T, std::uint8_t>)
    return cl_uchar(t);
  else
    return cl_ushort(t);
}

// ---- tiles --------------------------------------------------------------------------------
// The tiled kernels (kernels/linear.cl "tiled kernels"): one launch, a work-group of kTileLx x
// kTileLy work-items making a tile of (kTileLx * kTileCx) samples by (kTileLy * cy) rows.
// PIXFLOW_OCL_LINEAR=direct (read once) keeps the first version's kernels (one work-item per
// output, box and gaussian in two passes through a buffer) for the H100 A/B.
constexpr int kTileLx = 32, kTileLy = 8, kTileCx = 2;
// Static local memory a work-group may take: the H100's 48 KiB (PoCL reports more, and the
// choice is kept the same there so that PoCL tests what the GPU runs), or the device's own
// size where it is less (oclgrind's 32 KiB: a larger tile fails to launch).
constexpr std::size_t kTileLocalBytes = 48 * 1024;
std::size_t tile_local_bytes(const Launch& l) {
  return std::min<std::size_t>(kTileLocalBytes, devices()[std::size_t(l.device)].local_mem);
}

bool direct_kernels() {
  static const bool v = [] {
    const char* e = std::getenv("PIXFLOW_OCL_LINEAR");
    return e != nullptr && std::string_view(e) == "direct";
  }();
  return v;
}

// PIXFLOW_OCL_BOX=auto (default) | both | cols | direct | packed (variant.hpp): running sums
// along both axes where cheaper, along the columns only (the first round's kernel), or every
// window summed; packed: u8 by sep_packed (below; the box_tile kernel with `both` elsewhere);
// auto: packed for u8 images of at least kBoxPackedSamples samples, both elsewhere.
// Measured on the H100 (session 24, bench/NOTES.md), µs both -> packed: 9x9 u8x1 8192^2 338 ->
// 197, 31x31 413 -> 340, 9x9 u8x3 1054 -> 784, 9x9 u8x3 1080p 41.5 -> 31.6; but 9x9 u8x1 1080p
// 16.2 -> 19.5 and 31x31 22.2 -> 30.0 (2 M samples do not fill the device at NB * RY rows a
// work-group); 31x31 u8x3 even at both sizes.
enum class BoxRunning { automatic, both, cols, none, packed };
BoxRunning box_running() {
  return BoxRunning(
      variant("PIXFLOW_OCL_BOX", {"auto", "both", "cols", "direct", "packed"}, "box"));
}
constexpr std::int64_t kBoxPackedSamples = std::int64_t(1) << 22;

struct Tile {
  int kw, kh, ax, ay, ch;
  int cy = 0;  ///< rows a work-item makes (4, 2 or 1); 0: no tile fits the local memory
  int ow() const { return kTileLx * kTileCx; }
  int oh() const { return kTileLy * cy; }
  std::size_t tile_samples(int c) const {
    return std::size_t(kTileLy * c + kh - 1) * std::size_t(kTileLx * kTileCx + (kw - 1) * ch);
  }
  // Picks cy from 8 (where max_cy allows), 4, 2, 1: the first whose tile of `sample` bytes
  // plus extra(cy) bytes fits.
  template <class Extra>
  Tile& fit(const Launch& l, std::size_t sample, Extra&& extra, int max_cy = 4) {
    cy = 0;
    if (direct_kernels()) return *this;
    const std::size_t limit = tile_local_bytes(l);
    for (int c : {8, 4, 2, 1})
      if (c <= max_cy && tile_samples(c) * sample + extra(c) <= limit) {
        cy = c;
        break;
      }
    return *this;
  }
  std::string options() const {
    return "-DTILE=1 -DKW=" + std::to_string(kw) + " -DKH=" + std::to_string(kh) +
           " -DAX=" + std::to_string(ax) + " -DAY=" + std::to_string(ay) +
           " -DCH=" + std::to_string(ch) + " -DCY=" + std::to_string(cy) + " ";
  }
  void run(Kernel& k, int n, int h) const {
    const std::size_t gx = (std::size_t(n) + std::size_t(ow()) - 1) / std::size_t(ow());
    const std::size_t gy = (std::size_t(h) + std::size_t(oh()) - 1) / std::size_t(oh());
    k.run(gx * kTileLx, gy * kTileLy, kTileLx, kTileLy);
  }
};

// ---- packed 3x3 on u8 -----------------------------------------------------------------------
// kernels/linear.cl linear3_packed: u8 3x3 box, gaussian, sobel and scharr (u8 -> s16, scale 1,
// delta 0) with two samples' sums a 32-bit word (the CUDA round's packed scheme), one word of
// outputs (4 samples) on kLin3Rows rows a work-item.
// PIXFLOW_OCL_LINEAR3=packed (default) | tile (variant.hpp): tile keeps the one-sample tile
// kernels for the H100 A/B; PIXFLOW_OCL_LINEAR=direct turns it off as well.
constexpr int kLin3Lx = 32, kLin3Ly = 8, kLin3Rows = 4;

bool linear3_packed_on(const char* op) {
  return variant("PIXFLOW_OCL_LINEAR3", {"packed", "tile"}, op) == 0 && !direct_kernels();
}

// kind: 0 box mean, 1 box sum saturated, 2 gaussian with Q8 taps tx, ty (3 each), 3 sobel /
// scharr to s16 (signed taps as uint). The caller has checked that the lanes cannot carry
// (2: taps >= 0 summing to <= 256 a pass; 3: 255 * sum|tx| * sum|ty| <= 32767).
void linear3_packed(const ConstImageView& s, const ImageView& d, int kind, const cl_uint* tx,
                    const cl_uint* ty, const Border& b, const char* op, const Launch& l) {
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  const std::string opts = depth_options(Depth::u8) + "-DLIN3P=1 -DKIND=" + std::to_string(kind) +
                           " -DCH=" + std::to_string(ch) + " -DRY=" + std::to_string(kLin3Rows) +
                           " ";
  Kernel k(l, "linear", opts, "linear3_packed", op);
  k.image(s)
      .image(d)
      .arg(cl_int(n))
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(border_arg(b))
      .arg(cl_sample<std::uint8_t>(b.value))
      .arg(tx[0])
      .arg(tx[1])
      .arg(tx[2])
      .arg(ty[0])
      .arg(ty[1])
      .arg(ty[2]);
  const std::size_t ow = 4 * kLin3Lx, oh = std::size_t(kLin3Ly) * kLin3Rows;
  k.run((std::size_t(n) + ow - 1) / ow * kLin3Lx, (std::size_t(h) + oh - 1) / oh * kLin3Ly, kLin3Lx,
        kLin3Ly);
}

// Whether 3 taps fit the packed lanes: each >= 0, summing to <= 256 (255 * 256 < 2^16).
template <class Tap>
bool packable_taps(const std::vector<Tap>& t) {
  if (t.size() != 3) return false;
  long sum = 0;
  for (Tap v : t) {
    if (v < 0) return false;
    sum += long(v);
  }
  return sum <= 256;
}

// ---- separable u8 with the vertical pass on packed lanes -----------------------------------
// kernels/linear.cl sep_packed: box and gaussian on u8, a work-group of 256 work-items making
// 128 samples by NB * RY rows: vertical sums two samples a 32-bit word straight from global
// memory (a task: one source word, RY rows), the column sums through local memory, then 4
// outputs a work-item along the row from a window held in registers. The caller has checked
// that a 16-bit lane cannot overflow (box: 255 * kh <= 65535; gaussian: taps >= 0 summing to
// <= 256 on each axis).
struct SepPacked {
  static constexpr int kOww = 32;  ///< output words a tile row (128 samples)
  int hlw = 0, hrw = 0;            ///< halo words left and right of the output words
  int ry = 0, nb = 0;              ///< rows a vertical task, vertical tasks a column word
  bool ok() const { return ry > 0; }
  /// The tile for a kw x kh window on ch channels, at most ry_max rows a vertical task, or
  /// !ok() where the window's column sums would not fit 64 registers (NWIN words of 4) or
  /// the local memory (then the caller keeps its tile kernel).
  static SepPacked plan(int kw, int ch, int ry_max, const Launch& l) {
    SepPacked p;
    const int ax = kw / 2;
    p.hlw = (ax * ch + 3) / 4;
    p.hrw = ((kw - 1 - ax) * ch + 3) / 4;
    const int first = 4 * p.hlw - ax * ch, nwin = (first + (kw - 1) * ch + 7) / 4;
    if (4 * nwin > 64 || direct_kernels()) return p;
    const int tww = kOww + p.hlw + p.hrw;
    p.nb = 256 / tww;  // every vertical task in one round of the 256 work-items
    // Local memory: NB * RY rows of TWW words of 16 bytes, under the tile budget less 1 KiB
    // (the driver's own use of a work-group's local memory).
    const std::size_t row = std::size_t(p.nb) * std::size_t(tww) * 16;
    const std::size_t budget = tile_local_bytes(l) - 1024;
    p.ry = p.nb > 0 ? std::min<int>(ry_max, int(budget / row)) : 0;
    return p;
  }
  std::string options(int kind, int kw, int kh, int ch) const {
    return depth_options(Depth::u8) + "-DSEPP=1 -DKIND=" + std::to_string(kind) +
           " -DKW=" + std::to_string(kw) + " -DKH=" + std::to_string(kh) +
           " -DAX=" + std::to_string(kw / 2) + " -DAY=" + std::to_string(kh / 2) +
           " -DCH=" + std::to_string(ch) + " -DOWW=" + std::to_string(kOww) +
           " -DHLW=" + std::to_string(hlw) + " -DHRW=" + std::to_string(hrw) +
           " -DRY=" + std::to_string(ry) + " -DNB=" + std::to_string(nb) + " ";
  }
  void run(Kernel& k, int n, int h) const {
    const std::size_t ow = 4 * kOww, oh = std::size_t(nb) * std::size_t(ry);
    k.run((std::size_t(n) + ow - 1) / ow * 32, (std::size_t(h) + oh - 1) / oh * 8, 32, 8);
  }
};

// ---- box ----------------------------------------------------------------------------------
template <class T>
void box_t(const ConstImageView& s, const ImageView& d, const BoxParams& p, const Launch& l) {
  constexpr bool f32 = std::is_same_v<T, float>;
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    if (p.kw == 3 && p.kh == 3 && ch <= 4 && linear3_packed_on("box")) {
      const cl_uint ones[3] = {1, 1, 1};
      linear3_packed(s, d, p.normalize ? 0 : 1, ones, ones, p.border, "box", l);
      return;
    }
  }
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    // u8 by sep_packed (PIXFLOW_OCL_BOX=packed), where the column sums fit 16-bit lanes.
    const BoxRunning br = box_running();
    const bool packed = br == BoxRunning::packed ||
                        (br == BoxRunning::automatic && std::int64_t(n) * h >= kBoxPackedSamples);
    const SepPacked sp = packed && ch <= 4 && 255 * p.kh <= 65535
                             ? SepPacked::plan(p.kw, ch, 16, l)
                             : SepPacked{};
    if (sp.ok()) {
      Kernel k(l, "linear", sp.options(p.normalize ? 0 : 1, p.kw, p.kh, ch), "sep_packed", "box");
      k.image(s)
          .image(d)
          .arg(cl_int(n))
          .arg(cl_int(w))
          .arg(cl_int(h))
          .arg(border_arg(p.border))
          .arg(cl_sample<T>(p.border.value));
      sp.run(k, n, h);
      return;
    }
  }
  std::string opts = depth_options(s.depth()) + "-DBOX=1 ";
  if constexpr (f32) {
    require_fp64(l, "box");
    opts += "-DNEED_FP64=1 ";
  }
  Tile t{p.kw, p.kh, p.kw / 2, p.kh / 2, ch};
  // Column sums: OH rows of the tile's width, int (double for f32).
  t.fit(l, sizeof(T), [&](int c) {
    return std::size_t(kTileLy * c) * std::size_t(t.ow() + (p.kw - 1) * ch) * (f32 ? 8 : 4);
  });
  if (t.cy > 0) {
    // Running column sums where the serial walk (KH + 2 OH reads) beats the direct sums
    // (OH * TW * KH / 256 reads a work-item): KH >= 9 at OH = 32; integers only (f32 sums
    // in the reference's order). PIXFLOW_OCL_BOX=direct keeps the direct sums for the A/B.
    const std::size_t tw = std::size_t(t.ow() + (p.kw - 1) * ch);
    const bool running = !f32 && box_running() != BoxRunning::none &&
                         std::size_t(p.kh + 2 * t.oh()) * kTileLx * kTileLy <
                             std::size_t(t.oh()) * tw * std::size_t(p.kh);
    // Running row sums likewise (kernels/linear.cl BOX_HRUN: walks of kSeg outputs, OH * CH *
    // ceil(OW / (CH * kSeg)) of them, KW + 2 (kSeg - 1) reads each, plus the trip of the
    // results through local memory, against OH * OW * KW direct reads): from KW = 5 on one
    // channel. kw >= 2 is what lets the results fit the source tile.
    constexpr std::size_t kSeg = 8;
    const std::size_t ow = std::size_t(t.ow()), oh = std::size_t(t.oh()), kw = std::size_t(p.kw);
    const std::size_t walks = oh * std::size_t(ch) * ((ow + ch * kSeg - 1) / (ch * kSeg));
    const BoxRunning br = box_running();
    const bool hrun = !f32 && br != BoxRunning::cols && br != BoxRunning::none && p.kw >= 2 &&
                      walks * (kw + 2 * (kSeg - 1)) + 2 * oh * ow < oh * ow * kw;
    Kernel k(l, "linear",
             opts + t.options() + (running ? "-DBOX_RUNNING=1 " : "") +
                 (hrun ? "-DBOX_HRUN=1 -DSEG=" + std::to_string(kSeg) : std::string()),
             "box_tile", "box");
    k.image(s)
        .image(d)
        .arg(cl_int(n))
        .arg(cl_int(w))
        .arg(cl_int(h))
        .arg(border_arg(p.border))
        .arg(cl_sample<T>(p.border.value))
        .arg(cl_int(p.normalize ? 1 : 0));
    t.run(k, n, h);
    return;
  }
  using Acc = std::conditional_t<f32, cl_double, cl_long>;
  const Acc cval = Acc(detail::saturate_cast<T>(p.border.value));
  const DeviceBuffer col = scratch_buffer(l, std::size_t(n) * std::size_t(h) * sizeof(Acc), "box");
  Kernel(l, "linear", opts, "box_cols", "box")
      .image(s)
      .arg(col.mem)
      .arg(cl_int(n))
      .arg(cl_int(h))
      .arg(cl_int(p.kh))
      .arg(cl_int(p.kh / 2))
      .arg(border_arg(p.border))
      .arg(cval)
      .run(std::size_t(n), std::size_t(h), kLx, kLy);
  Kernel(l, "linear", opts, "box_rows", "box")
      .arg(col.mem)
      .image(d)
      .arg(cl_int(n))
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(cl_int(ch))
      .arg(cl_int(p.kw))
      .arg(cl_int(p.kh))
      .arg(cl_int(p.kw / 2))
      .arg(border_arg(p.border))
      .arg(cval)
      .arg(cl_int(p.normalize ? 1 : 0))
      .run(std::size_t(n), std::size_t(h), kLx, kLy);
}

void box(const ConstImageView& s, const ImageView& d, const BoxParams& p, const Launch& l) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      s.depth(), [&](auto t) { box_t<decltype(t)>(s, d, p, l); });
}

// ---- gaussian -----------------------------------------------------------------------------
// PIXFLOW_OCL_GAUSS=auto (default) | fold | tile | packed | packed-imm (variant.hpp): tile
// keeps the first round's tile kernel (taps in global memory, one multiply a tap, tiles of at
// most 32 rows) for the H100 A/B; fold takes the taps from constant memory, folds symmetric
// integer taps and allows 64-row tiles; packed runs u8 by sep_packed (the taps as
// constant-memory arguments), packed-imm the same with the taps written into the program (one
// program per window and sigma) so that they become immediates; other depths take fold there.
// auto: u8 packed-imm for windows of kGaussImmSide and more on a side, packed below, fold for
// the other depths. Measured on the H100 (session 24, bench/NOTES.md), µs fold / packed /
// packed-imm: sigma=2 (13 taps) u8x1 8192^2 471 / 309 / 371, u8x3 1198 / 855 / 1072, u8x1
// 1080p 67.7 / 61.4 / 57.6, u8x3 82.3 / 62.5 / 76.8; sigma=8 (49 taps) u8x1 8192^2 1594 / 1301
// / 927, 1080p 105.4 / 113.7 / 71.4 (u8x3 at 49 taps does not fit sep_packed's registers:
// fold).
enum class GaussSchedule { automatic, fold, tile, packed, packed_imm };
GaussSchedule gauss_schedule() {
  return GaussSchedule(variant("PIXFLOW_OCL_GAUSS", {"auto", "fold", "tile", "packed", "packed-imm"},
                               "gaussian"));
}
constexpr int kGaussImmSide = 25;
bool gauss_v2() {
  return gauss_schedule() != GaussSchedule::tile;
}

// Tap and horizontal-sum types of src/ref/gaussian.cpp per depth.
template <class T>
struct GaussTypes {
  using Tap = std::int32_t;
  using H = std::conditional_t<std::is_same_v<T, std::uint8_t>, std::int32_t, std::int64_t>;
  static constexpr int shift = std::is_same_v<T, std::uint8_t> ? 16 : 32;
  static constexpr int bits =
      std::is_same_v<T, std::uint8_t> ? detail::kGaussianBitsU8 : detail::kGaussianBitsU16;
  static void taps(int n, double sigma, Tap* t) { detail::gaussian_taps_fixed(n, sigma, bits, t); }
};
template <>
struct GaussTypes<float> {
  using Tap = float;
  using H = float;
  static constexpr int shift = 0;
  static void taps(int n, double sigma, Tap* t) { detail::gaussian_taps_float(n, sigma, t); }
};

template <class T>
void gaussian_t(const ConstImageView& s, const ImageView& d, const GaussianParams& p,
                const Launch& l) {
  using G = GaussTypes<T>;
  using Tap = typename G::Tap;
  using H = typename G::H;
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  std::vector<Tap> tx(std::size_t(p.kw)), ty(std::size_t(p.kh));
  G::taps(p.kw, p.sigma, tx.data());
  G::taps(p.kh, p.sigma_y, ty.data());
  // A window row outside the image (constant border): the horizontal pass of cval, summed
  // as the reference sums it.
  const T cval = detail::saturate_cast<T>(p.border.value);
  H hconst = 0;
  for (int i = 0; i < p.kw; ++i) hconst += H(cval) * H(tx[std::size_t(i)]);
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    if (ch <= 4 && packable_taps(tx) && packable_taps(ty) && linear3_packed_on("gaussian")) {
      const cl_uint ux[3] = {cl_uint(tx[0]), cl_uint(tx[1]), cl_uint(tx[2])};
      const cl_uint uy[3] = {cl_uint(ty[0]), cl_uint(ty[1]), cl_uint(ty[2])};
      linear3_packed(s, d, 2, ux, uy, p.border, "gaussian", l);
      return;
    }
  }
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    // sep_packed where the lanes cannot overflow: taps >= 0 summing to <= 256 on each axis
    // (the Q8 taps sum to exactly 256); kh <= 64 bounds the unrolled vertical pass.
    auto in_lanes = [](const std::vector<Tap>& t) {
      long sum = 0;
      for (Tap v : t) {
        if (v < 0) return false;
        sum += long(v);
      }
      return sum <= 256;
    };
    GaussSchedule gs = gauss_schedule();
    if (gs == GaussSchedule::automatic)
      gs = std::max(p.kw, p.kh) >= kGaussImmSide ? GaussSchedule::packed_imm
                                                   : GaussSchedule::packed;
    const SepPacked sp = (gs == GaussSchedule::packed || gs == GaussSchedule::packed_imm) &&
                                 ch <= 4 && p.kh <= 64 && in_lanes(tx) && in_lanes(ty)
                             ? SepPacked::plan(p.kw, ch, 12, l)
                             : SepPacked{};
    if (sp.ok()) {
      std::vector<cl_uint> uy(ty.begin(), ty.end());
      std::vector<cl_float> fx(tx.size());
      for (std::size_t k = 0; k < tx.size(); ++k) fx[k] = cl_float(tx[k]);  // exact: <= 256
      std::string o = sp.options(2, p.kw, p.kh, ch);
      if (gs == GaussSchedule::packed_imm) {
        o += "-DSEPP_TAPS_IMM=1 -DSEPP_TY=";
        for (std::size_t k = 0; k < uy.size(); ++k)
          o += (k ? "," : "") + std::to_string(uy[k]) + "u";
        o += " -DSEPP_TX=";
        for (std::size_t k = 0; k < tx.size(); ++k)
          o += (k ? "," : "") + std::to_string(tx[k]) + ".0f";
        o += " ";
      }
      const DeviceBuffer by = device_buffer(l, uy.size() * sizeof(cl_uint), "gaussian", uy.data());
      const DeviceBuffer bx = device_buffer(l, fx.size() * sizeof(cl_float), "gaussian", fx.data());
      Kernel k(l, "linear", o, "sep_packed", "gaussian");
      k.image(s)
          .image(d)
          .arg(by.mem)
          .arg(bx.mem)
          .arg(cl_int(n))
          .arg(cl_int(w))
          .arg(cl_int(h))
          .arg(border_arg(p.border))
          .arg(cl_sample<T>(p.border.value));
      sp.run(k, n, h);
      return;
    }
  }
  const std::string opts = depth_options(s.depth()) + "-DGAUSS=1 ";
  const DeviceBuffer btx = device_buffer(l, tx.size() * sizeof(Tap), "gaussian", tx.data());
  const DeviceBuffer bty = device_buffer(l, ty.size() * sizeof(Tap), "gaussian", ty.data());
  Tile t{p.kw, p.kh, p.kw / 2, p.kh / 2, ch};
  // Row sums: every tile row, OW samples of H. The horizontal pass makes OH + KH - 1 rows for
  // OH outputs, so a taller tile (cy = 8: 64 rows) costs less at large KH where it fits
  // (u8 sigma = 8, 49 taps: 112 / 64 rows instead of 80 / 32).
  const bool v2 = gauss_v2();
  t.fit(
      l, sizeof(T),
      [&](int c) { return std::size_t(kTileLy * c + p.kh - 1) * std::size_t(t.ow()) * sizeof(H); },
      v2 ? 8 : 4);
  if (t.cy > 0) {
    std::string o = opts + t.options();
    if (v2) {
      o += "-DGAUSS_CONST=1 ";
      // Symmetric taps fold (integers only: f32 sums keep the reference's order).
      auto symmetric = [](const std::vector<Tap>& v) {
        for (std::size_t k = 0; k < v.size() / 2; ++k)
          if (v[k] != v[v.size() - 1 - k]) return false;
        return true;
      };
      if (!std::is_same_v<T, float> && symmetric(tx)) o += "-DSYMX=1 ";
      if (!std::is_same_v<T, float> && symmetric(ty)) o += "-DSYMY=1 ";
    }
    Kernel k(l, "linear", o, "gauss_tile", "gaussian");
    k.image(s)
        .image(d)
        .arg(btx.mem)
        .arg(bty.mem)
        .arg(cl_int(n))
        .arg(cl_int(w))
        .arg(cl_int(h))
        .arg(border_arg(p.border))
        .arg(cl_sample<T>(p.border.value))
        .arg(cl_int(G::shift));
    t.run(k, n, h);
    return;
  }
  const DeviceBuffer hb =
      scratch_buffer(l, std::size_t(n) * std::size_t(h) * sizeof(H), "gaussian");
  Kernel(l, "linear", opts, "gauss_rows", "gaussian")
      .image(s)
      .arg(hb.mem)
      .arg(btx.mem)
      .arg(cl_int(n))
      .arg(cl_int(w))
      .arg(cl_int(h))
      .arg(cl_int(ch))
      .arg(cl_int(p.kw))
      .arg(cl_int(p.kw / 2))
      .arg(border_arg(p.border))
      .arg(cl_sample<T>(p.border.value))
      .run(std::size_t(n), std::size_t(h), kLx, kLy);
  Kernel(l, "linear", opts, "gauss_cols", "gaussian")
      .arg(hb.mem)
      .arg(bty.mem)
      .image(d)
      .arg(cl_int(n))
      .arg(cl_int(h))
      .arg(cl_int(p.kh))
      .arg(cl_int(p.kh / 2))
      .arg(border_arg(p.border))
      .arg(hconst)
      .arg(cl_int(G::shift))
      .run(std::size_t(n), std::size_t(h), kLx, kLy);
}

void gaussian(const ConstImageView& s, const ImageView& d, const GaussianParams& p,
              const Launch& l) {
  detail::visit_depth<Depth::u8, Depth::u16, Depth::f32>(
      s.depth(), [&](auto t) { gaussian_t<decltype(t)>(s, d, p, l); });
}

// ---- sobel / scharr -----------------------------------------------------------------------
struct DerivTaps {
  cl_int8 x{}, y{};
  int nx = 0, ny = 0;
};

void deriv(const ConstImageView& s, const ImageView& d, const DerivTaps& t, double scale,
           double delta, const Border& b, const char* op, const Launch& l) {
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  const bool f32 = s.depth() == Depth::f32;
  const bool plain = scale == 1.0 && delta == 0.0;
  // The u8 source's scaled or f32 results are computed in double.
  const bool fp64 = !f32 && (d.depth() == Depth::f32 || !plain);
  if (!f32 && d.depth() == Depth::s16 && plain && ch <= 4 && linear3_packed_on(op)) {
    // A 1-tap axis (sobel k = 1, order 0) is the 3 taps (0, t, 0): the same integer sums.
    auto three = [](const cl_int8& v, int len, cl_uint* o) {
      const int k[3] = {len == 3 ? v.s[0] : 0, len == 3 ? v.s[1] : v.s[0], len == 3 ? v.s[2] : 0};
      int abs_sum = 0;
      for (int i = 0; i < 3; ++i) {
        o[i] = cl_uint(k[i]);  // two's complement: the kernel's sums are modulo 2^32
        abs_sum += k[i] < 0 ? -k[i] : k[i];
      }
      return abs_sum;
    };
    cl_uint ux[3], uy[3];
    if ((t.nx == 1 || t.nx == 3) && (t.ny == 1 || t.ny == 3) &&
        255 * three(t.x, t.nx, ux) * three(t.y, t.ny, uy) <= 32767) {
      linear3_packed(s, d, 3, ux, uy, b, op, l);
      return;
    }
  }
  std::string opts = depth_options(s.depth()) + "-DDERIV=1 ";
  if (!f32 && d.depth() == Depth::f32) opts += "-DOUT_F32=1 ";
  if (fp64) {
    require_fp64(l, op);
    opts += "-DNEED_FP64=1 ";
  }
  Tile tile{t.nx, t.ny, t.nx / 2, t.ny / 2, ch};
  tile.fit(l, f32 ? 4 : 1, [](int) { return std::size_t(0); });
  const bool tiled = tile.cy > 0;
  Kernel k(l, "linear", tiled ? opts + tile.options() : opts, tiled ? "deriv_tile" : "deriv", op);
  k.image(s).image(d).arg(cl_int(n)).arg(cl_int(w)).arg(cl_int(h));
  if (tiled)
    k.arg(t.x).arg(t.y).arg(border_arg(b));
  else
    k.arg(cl_int(ch)).arg(t.x).arg(t.y).arg(cl_int(t.nx)).arg(cl_int(t.ny)).arg(border_arg(b));
  if (f32)
    k.arg(cl_sample<float>(b.value));
  else
    k.arg(cl_sample<std::uint8_t>(b.value));
  k.arg(cl_int(plain ? 1 : 0));
  if (fp64)
    k.arg(cl_double(scale)).arg(cl_double(delta));
  else
    k.arg(cl_float(float(scale))).arg(cl_float(float(delta)));
  if (tiled)
    tile.run(k, n, h);
  else
    k.run(std::size_t(n), std::size_t(h), kLx, kLy);
}

void sobel(const ConstImageView& s, const ImageView& d, const SobelParams& p, const Launch& l) {
  DerivTaps t;
  t.nx = detail::sobel_taps_len(p.k, p.dx);
  t.ny = detail::sobel_taps_len(p.k, p.dy);
  detail::sobel_taps(p.k, p.dx, t.x.s);
  detail::sobel_taps(p.k, p.dy, t.y.s);
  deriv(s, d, t, p.scale, p.delta, p.border, "sobel", l);
}

void scharr(const ConstImageView& s, const ImageView& d, const ScharrParams& p, const Launch& l) {
  DerivTaps t;
  t.nx = t.ny = 3;
  detail::scharr_taps(p.dx, t.x.s);
  detail::scharr_taps(p.dy, t.y.s);
  deriv(s, d, t, p.scale, p.delta, p.border, "scharr", l);
}

// ---- filter2d -----------------------------------------------------------------------------
void filter2d(const ConstImageView& s, const ImageView& d, const Filter2dParams& p,
              const Launch& l) {
  const int ch = s.channels(), w = int(s.width()), h = int(s.height()), n = w * ch;
  if (w == 0 || h == 0) return;
  const DeviceBuffer kern =
      device_buffer(l, p.kernel.size() * sizeof(float), "filter2d", p.kernel.data());
  const bool f32 = s.depth() == Depth::f32;
  // PIXFLOW_OCL_FILTER2D=tile (default) | rows (variant.hpp): rows runs u8 by filter2d_rows
  // (kernels/linear.cl: 4 outputs on kF2dRows rows a work-item from source words streamed out
  // of global memory, no local memory) where a source row's converted window fits 40
  // registers and the taps 81.
  constexpr int kF2dRows = 8;
  const int hlw = (p.kw / 2 * ch + 3) / 4, first = 4 * hlw - p.kw / 2 * ch;
  if (!f32 && ch <= 4 && first + (p.kw - 1) * ch + 4 <= 40 && p.kw * p.kh <= 81 &&
      !direct_kernels() && variant("PIXFLOW_OCL_FILTER2D", {"tile", "rows"}, "filter2d") == 1) {
    const std::string o = depth_options(Depth::u8) + "-DF2DR=1 -DKW=" + std::to_string(p.kw) +
                          " -DKH=" + std::to_string(p.kh) + " -DAX=" + std::to_string(p.kw / 2) +
                          " -DAY=" + std::to_string(p.kh / 2) + " -DCH=" + std::to_string(ch) +
                          " -DHLW=" + std::to_string(hlw) + " -DRY=" + std::to_string(kF2dRows) +
                          " ";
    Kernel k(l, "linear", o, "filter2d_rows", "filter2d");
    k.image(s)
        .image(d)
        .arg(kern.mem)
        .arg(cl_int(n))
        .arg(cl_int(w))
        .arg(cl_int(h))
        .arg(border_arg(p.border))
        .arg(cl_sample<std::uint8_t>(p.border.value))
        .arg(cl_float(float(p.delta)));
    k.run((std::size_t(n) + 3) / 4, (std::size_t(h) + kF2dRows - 1) / kF2dRows, 32, 8);
    return;
  }
  Tile tile{p.kw, p.kh, p.kw / 2, p.kh / 2, ch};
  tile.fit(l, f32 ? 4 : 1, [](int) { return std::size_t(0); });
  const bool tiled = tile.cy > 0;
  const std::string opts = depth_options(s.depth()) + "-DF2D=1 ";
  Kernel k(l, "linear", tiled ? opts + tile.options() : opts, tiled ? "filter2d_tile" : "filter2d",
           "filter2d");
  k.image(s).image(d).arg(kern.mem).arg(cl_int(n)).arg(cl_int(w)).arg(cl_int(h));
  if (!tiled) k.arg(cl_int(ch)).arg(cl_int(p.kw)).arg(cl_int(p.kh));
  k.arg(border_arg(p.border));
  if (f32)
    k.arg(cl_sample<float>(p.border.value));
  else
    k.arg(cl_sample<std::uint8_t>(p.border.value));
  k.arg(cl_float(float(p.delta)));
  if (tiled)
    tile.run(k, n, h);
  else
    k.run(std::size_t(n), std::size_t(h), kLx, kLy);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_linear) {
  using namespace pixflow;
  const auto u8_u16_f32 = opencl::depths({Depth::u8, Depth::u16, Depth::f32});
  const auto u8_f32 = opencl::depths({Depth::u8, Depth::f32});
  opencl::add<&opencl::box>(table, "box", u8_u16_f32);
  // `p` arrives resolved (kw, kh, sigma, sigma_y all set) by core.
  opencl::add<&opencl::gaussian>(table, "gaussian", u8_u16_f32);
  // Derivatives: u8 -> s16 or f32, f32 -> f32 (the destination depth is validated by core).
  opencl::add<&opencl::sobel>(table, "sobel", u8_f32);
  opencl::add<&opencl::scharr>(table, "scharr", u8_f32);
  opencl::add<&opencl::filter2d>(table, "filter2d", u8_f32);
}
