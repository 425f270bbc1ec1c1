// The op catalogue (docs/ops/README.md). Every op writes into a caller-provided destination of
// the documented size and format, validates everything on the host first and throws
// pixflow::Error (naming the op and the parameter) before any work is queued.
//
// Backend choice follows the images: host images run on the CPU backend (threads over
// row bands), cuda:N images on the CUDA backend. `Context::backend = Backend::ref` runs
// the plain reference instead (host only) — the tests' oracle.
//
// Unless stated, an op works per channel, takes 1, 3 or 4 channels, and its destination
// has the size and format of its source. dst must not overlap src, except that the
// point-wise ops (add, sub, absdiff, mul, convert with same depth, threshold) may run
// in place on identical views.
//
// Scratch: gaussian_iir on CUDA and the morphology composites (open, close, gradient,
// tophat, blackhat) need scratch memory beside src and dst. By default they allocate it on
// the call's queue (stream-ordered, cudaMallocAsync: no host synchronisation; a captured
// graph records memory nodes). A caller that wants no allocation inside ops gives its own
// buffer in Context::workspace, sized by the op's *_workspace_bytes query (or
// Pipeline::workspace_bytes for any catalogue op by name); every other op needs 0 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "pixflow/border.hpp"
#include "pixflow/device.hpp"
#include "pixflow/image.hpp"

namespace pixflow {

/// A caller-owned scratch buffer for ops that need one (Context::workspace). `data` null
/// (the default) means none is given: such ops allocate their scratch themselves, stream-
/// ordered on the call's queue. Given, an op takes all its scratch from it (aligned sub-
/// buffers, at most the op's *_workspace_bytes) and allocates nothing; the buffer must stay
/// untouched by other work until the op's queued work is done (as for src and dst).
///
/// Errors (invalid_argument, naming the op, before anything is queued): a location other than
/// the images'; `data` not aligned to kAlignment; `bytes` smaller than the call needs (the
/// message gives both sizes). A workspace larger than needed is fine; ops needing no scratch
/// ignore its size (they still check its location).
///
/// Which allocations count: device memory (CUDA's scratch, core's intermediate images of the
/// composites on any location). Host-side temporaries inside the CPU kernels (line buffers,
/// the cpu backend's cache-sized strips) are ordinary heap memory and are not taken from it.
struct Workspace {
  static constexpr std::size_t kAlignment = 256;  ///< cudaMalloc's alignment
  void* data = nullptr;
  std::size_t bytes = 0;
  Location location;  ///< where `data` lives: the location of the call's images

  constexpr bool given() const { return data != nullptr; }
};

/// Per-call options. `queue` is where device work is enqueued (default: the default
/// queue of the images' device); `threads` caps the CPU backend's threads (0 = all cores);
/// `workspace` is the caller's scratch buffer (default: none, ops allocate their own).
struct Context {
  Backend backend = Backend::automatic;
  Queue queue;
  int threads = 0;
  Workspace workspace;
};

// ---- median -------------------------------------------------------------------------
/// Median of the kw x kh window. u8, u16, f32; exact; equals cv::medianBlur (which uses
/// replicate) for square windows. kw, kh odd, 1..255.
struct MedianParams {
  int kw = 3, kh = 3;
  Border border = Border::replicate();
};
void median(ConstImageView src, ImageView dst, const MedianParams& p, const Context& ctx = {});

// ---- morphology -----------------------------------------------------------------------
/// Rectangular structuring element kw x kh (any size >= 1, anchor at the centre, kw/2).
/// `iterations` follows OpenCV: n iterations of a rect kw x kh equal one pass of the rect
/// (kw + (n-1)(kw-1)) x (kh + (n-1)(kh-1)). u8, u16, f32; exact vs cv::dilate/erode/
/// morphologyEx. A constant border uses `value` like OpenCV's explicit borderValue.
struct MorphParams {
  int kw = 3, kh = 3;
  int iterations = 1;
  Border border = Border::reflect101();
};
enum class MorphOp { dilate, erode, open, close, gradient, tophat, blackhat };
const char* morph_op_name(MorphOp op) noexcept;
void morphology(ConstImageView src, ImageView dst, MorphOp op, const MorphParams& p,
                const Context& ctx = {});
inline void dilate(ConstImageView s, ImageView d, const MorphParams& p, const Context& c = {}) {
  morphology(s, d, MorphOp::dilate, p, c);
}
inline void erode(ConstImageView s, ImageView d, const MorphParams& p, const Context& c = {}) {
  morphology(s, d, MorphOp::erode, p, c);
}
/// Bytes of Context::workspace that morphology(src, dst, op, p, ctx) takes: exactly what the
/// call carves (the same code computes both), 0 for dilate and erode and for a backend that
/// runs composites in one call (the cpu backend built with SIMD: its strips are host
/// temporaries), else the intermediate images (1 for open/close, 2 for the others, each
/// src.width() x src.height() of src's format, rows padded to 64 bytes, each 256-aligned).
/// Reads no pixels (src may be a view without data); throws as the op would for src's
/// format, the parameters, the backend and ctx.
std::size_t morphology_workspace_bytes(ConstImageView src, MorphOp op, const MorphParams& p,
                                       const Context& ctx = {});

// ---- box ------------------------------------------------------------------------------
/// Box filter. Integer depths: exact integer window sum; normalize=1 divides by kw*kh with
/// round-half-to-even; normalize=0 saturates the sum. f32: float sum (/n).
struct BoxParams {
  int kw = 3, kh = 3;
  bool normalize = true;
  Border border = Border::reflect101();
};
void box(ConstImageView src, ImageView dst, const BoxParams& p, const Context& ctx = {});

// ---- gaussian -------------------------------------------------------------------------
/// Separable Gaussian. kw/kh = 0: from sigma as OpenCV (round(sigma*(u8 ? 3 : 4)*2+1)|1);
/// sigma <= 0: from k as OpenCV. sigma_y = 0 means sigma. Fixed-point rule for u8/u16 in
/// docs/ops/gaussian.md (exact across backends, ±1 of cv::GaussianBlur).
struct GaussianParams {
  double sigma = 1.0, sigma_y = 0.0;
  int kw = 0, kh = 0;
  Border border = Border::reflect101();
};
void gaussian(ConstImageView src, ImageView dst, const GaussianParams& p, const Context& ctx = {});

/// Recursive (IIR) Gaussian, Young–van Vliet 3rd order; cost independent of sigma
/// (0.5 <= sigma <= 256). u8, f32. Error bound vs the exact Gaussian in docs/ops/gaussian.md.
struct GaussianIirParams {
  double sigma = 2.0;
  Border border = Border::replicate();
};
void gaussian_iir(ConstImageView src, ImageView dst, const GaussianIirParams& p,
                  const Context& ctx = {});
/// Bytes of Context::workspace that gaussian_iir(src, dst, p, ctx) takes, computed by the
/// backend's own layout (the same function carves): CUDA, an f32 intermediate of src's size
/// plus the recursion's checkpoints; 0 on the host backends. Reads no pixels; throws as the
/// op would for src's format, the parameters, the backend and ctx.
std::size_t gaussian_iir_workspace_bytes(ConstImageView src, const GaussianIirParams& p,
                                         const Context& ctx = {});

// ---- derivatives ----------------------------------------------------------------------
/// Sobel derivative, kernel size k in {1,3,5,7} (k=1: 3x1/1x3 without smoothing, as
/// OpenCV). u8 -> s16 (exact vs cv::Sobel when scale=1 and delta is an integer) or
/// u8/f32 -> f32. `to` is the destination depth.
struct SobelParams {
  int dx = 1, dy = 0, k = 3;
  double scale = 1.0, delta = 0.0;
  Depth to = Depth::s16;
  Border border = Border::reflect101();
};
void sobel(ConstImageView src, ImageView dst, const SobelParams& p, const Context& ctx = {});

/// Scharr 3x3 derivative, dx+dy == 1. Same depths and rules as sobel.
struct ScharrParams {
  int dx = 1, dy = 0;
  double scale = 1.0, delta = 0.0;
  Depth to = Depth::s16;
  Border border = Border::reflect101();
};
void scharr(ConstImageView src, ImageView dst, const ScharrParams& p, const Context& ctx = {});

/// 2-D correlation with a kw x kh kernel (<= 15x15, anchor at (kw/2, kh/2), as
/// cv::filter2D). u8, f32. The float sum is accumulated in kernel row-major order.
struct Filter2dParams {
  std::vector<float> kernel;  ///< kh rows of kw values
  int kw = 0, kh = 0;
  double delta = 0.0;
  Border border = Border::reflect101();
};
void filter2d(ConstImageView src, ImageView dst, const Filter2dParams& p, const Context& ctx = {});

// ---- edge-preserving ------------------------------------------------------------------
/// Epsilon filter: mean of the (2r+1)^2 window pixels p with |p - c| <= t (the centre c
/// always counts). u8: (2*sum + n) / (2*n) in integers. f32: sum / n.
struct EpsilonParams {
  int r = 2;
  double t = 20.0;
  Border border = Border::reflect101();
};
void epsilon(ConstImageView src, ImageView dst, const EpsilonParams& p, const Context& ctx = {});

/// cv::bilateralFilter semantics (d <= 0: radius from sigma_space). u8 (±1), f32. 1 or 3
/// channels.
struct BilateralParams {
  int d = 9;
  double sigma_color = 75.0, sigma_space = 75.0;
  Border border = Border::reflect101();
};
void bilateral(ConstImageView src, ImageView dst, const BilateralParams& p,
               const Context& ctx = {});

// ---- geometry -------------------------------------------------------------------------
enum class Interp { nearest, linear };
/// dst(x, y) = src(map_x(x, y), map_y(x, y)); maps are 1-channel f32 of dst's size.
/// nearest: floor(x + 0.5); linear: float bilinear, rounded half to even for integers.
/// Non-finite map values give the border value (constant) or 0.
struct RemapParams {
  Interp interp = Interp::linear;
  Border border = Border::constant(0);
};
void remap(ConstImageView src, ConstImageView map_x, ConstImageView map_y, ImageView dst,
           const RemapParams& p, const Context& ctx = {});

/// dst is src.height x src.width. Any depth and channel count.
void transpose(ConstImageView src, ImageView dst, const Context& ctx = {});

// Simple geometry (docs/ops/flip.md, rotate.md, crop.md, pad.md): exact pixel copies, any
// depth (u8, u16, s16, s32, f32) and channel count, any ROI view; dst must not overlap src.

/// h mirrors left-right (= cv::flip(src, 1)), v upside down (flipCode 0), both (-1).
enum class FlipMode { h, v, both };
struct FlipParams {
  FlipMode mode = FlipMode::h;
};
void flip(ConstImageView src, ImageView dst, const FlipParams& p = {}, const Context& ctx = {});

/// Clockwise rotation by 90, 180 or 270 degrees (= cv::rotate ROTATE_90_CLOCKWISE,
/// ROTATE_180, ROTATE_90_COUNTERCLOCKWISE). dst is src.height x src.width for 90 and 270.
/// Any other angle: invalid_argument.
struct RotateParams {
  int angle = 90;
};
void rotate(ConstImageView src, ImageView dst, const RotateParams& p = {}, const Context& ctx = {});

/// A copy of the w x h rectangle at (x, y): dst is w x h. The rectangle must lie inside src
/// and w, h >= 1 (else invalid_argument naming the parameter and the image size). A crop
/// without a copy is a view: src.roi(x, y, w, h).
struct CropParams {
  std::int64_t x = 0, y = 0, w = 0, h = 0;
};
void crop(ConstImageView src, ImageView dst, const CropParams& p, const Context& ctx = {});

/// src with top/bottom rows and left/right columns added by the border rule (any mode;
/// constant uses `value` saturated to the depth; wider than the image repeats the rule).
/// dst is (left + w + right) x (top + h + bottom); each side in [0, 65535] and each output
/// side below 2^31 (else invalid_argument).
struct PadParams {
  int top = 0, bottom = 0, left = 0, right = 0;
  Border border = Border::constant(0);
};
void pad(ConstImageView src, ImageView dst, const PadParams& p, const Context& ctx = {});
/// Resize (docs/ops/resize.md). The destination size comes from the parameters
/// (resize_size): `w` and `h`; one of them (the other from the aspect ratio); `scale` (both
/// axes) or `sx` / `sy`; `fit` = the largest size within w x h keeping the aspect ratio.
/// u8 is bit-exact to OpenCV 4.x cv::resize with that dsize: nearest = INTER_NEAREST_EXACT,
/// linear = INTER_LINEAR_EXACT, area = INTER_AREA. u16, s16, f32: the rules of the doc.
/// Errors (invalid_argument, naming the parameter): no size given, a size and a factor
/// together, a side of 0 or over 2^20, fit without both w and h.
enum class ResizeInterp { nearest, linear, area };
struct ResizeParams {
  ResizeInterp interp = ResizeInterp::linear;
  std::int64_t w = 0, h = 0;  ///< destination size; 0 = not given
  double scale = 0;           ///< factor of both axes; 0 = not given
  double sx = 0, sy = 0;      ///< factor of one axis; 0 = not given
  bool fit = false;           ///< fit within w x h keeping the aspect ratio
};
/// The destination {width, height} of resize for a src_w x src_h source (throws
/// invalid_argument naming the op and the parameter).
std::pair<std::int64_t, std::int64_t> resize_size(std::int64_t src_w, std::int64_t src_h,
                                                  const ResizeParams& p);
/// dst must be resize_size(src) in src's format.
void resize(ConstImageView src, ImageView dst, const ResizeParams& p, const Context& ctx = {});

// ---- colour ---------------------------------------------------------------------------
/// RGB(A) -> gray. u8/u16: (R*9798 + G*19235 + B*3735 + 16384) >> 15 (= cv::cvtColor of
/// OpenCV 4.x, bit-exact; see docs/ops/color.md);
/// f32: 0.299R + 0.587G + 0.114B. `from_bgr` swaps R and B. dst has 1 channel.
struct GrayParams {
  bool from_bgr = false;
};
void gray(ConstImageView src, ImageView dst, const GrayParams& p = {}, const Context& ctx = {});

/// Picks, reorders, repeats or drops channels: dst channel i = src channel pick[i] (0-based).
/// dst has pick.size() channels (1..4); every index < src's channels. Any depth. CLI
/// `channels pick=2,1,0` (RGB <-> BGR), `pick=0,1,2` (drop alpha), `pick=0,0,0` (gray -> RGB).
struct ChannelsParams {
  std::vector<int> pick;
};
void channels(ConstImageView src, ImageView dst, const ChannelsParams& p, const Context& ctx = {});

// ---- arithmetic -----------------------------------------------------------------------
/// Element-wise a (op) b, saturating for integer depths (exact vs cv::add etc.). mul
/// rounds half to even. With a scalar, the op is computed in double, rounded half to
/// even and saturated. Any depth, any channels; a and b of equal size and format.
enum class ArithOp { add, sub, absdiff, mul };
const char* arith_op_name(ArithOp op) noexcept;
void arith(ConstImageView a, ConstImageView b, ImageView dst, ArithOp op, const Context& ctx = {});
void arith(ConstImageView a, double value, ImageView dst, ArithOp op, const Context& ctx = {});

/// dst = saturate(round_half_even(abs?(x * scale + offset))) computed in double; dst
/// depth is `to`, same channels.
struct ConvertParams {
  Depth to = Depth::u8;
  double scale = 1.0, offset = 0.0;
  bool abs = false;
  /// scale from the two depths' ranges instead of `scale` (CLI `scale=auto`): u8 [0, 255],
  /// u16 [0, 65535], f32 [0, 1]; u16 -> u8 is x / 257, f32 -> u8 is x * 255, and so on.
  /// Defined between u8, u16 and f32 only (docs/ops/convert.md).
  bool auto_scale = false;
};
/// The scale `scale=auto` means from `from` to `to` (1 for the same depth); throws
/// invalid_argument for a pair it does not define (s16, s32).
double auto_scale(Depth from, Depth to);
void convert(ConstImageView src, ImageView dst, const ConvertParams& p, const Context& ctx = {});

/// cv::threshold semantics (integer depths compare against floor(t), maxval rounded).
enum class ThresholdType { binary, binary_inv, trunc, tozero, tozero_inv };
struct ThresholdParams {
  double t = 127.0, maxval = 255.0;
  ThresholdType type = ThresholdType::binary;
};
void threshold(ConstImageView src, ImageView dst, const ThresholdParams& p,
               const Context& ctx = {});

// ---- linear algebra (API only) ----------------------------------------------------------
/// Per-pixel dot product of two 4-channel f32 images -> 1-channel f32.
void dot(ConstImageView a, ConstImageView b, ImageView dst, const Context& ctx = {});
/// C (M x N) = A (M x K) * B (K x N); 1-channel f32 (relative error <= 1e-5*K) or s32
/// (exact, 64-bit accumulation, saturated to int32). Image width = columns.
void matmul(ConstImageView a, ConstImageView b, ImageView c, const Context& ctx = {});

}  // namespace pixflow
