// The reference implementation: plain, scalar, obviously correct. It is the specification
// as code and the oracle of every test. Each function computes destination rows
// [rows.begin, rows.end) and assumes validated input (src/core validates).
#pragma once

#include "pixflow/ops.hpp"
#include "src/base/passes.hpp"
#include "src/base/rows.hpp"

namespace pixflow::ref {

using detail::Rows;

void median(const ConstImageView& src, const ImageView& dst, const MedianParams& p, Rows rows);

/// One dilate or erode pass (m.op is MorphOp::dilate or MorphOp::erode) with the window
/// already enlarged for iterations; composites (open, close, ...) are sequences run by
/// src/core. OpenCV's enlarged rect for n iterations keeps the anchor at (n*(kw0/2),
/// n*(kh0/2)), which differs from the centre for even sizes.
void morph_pass(const ConstImageView& src, const ImageView& dst, const detail::MorphPass& m,
                Rows rows);

void box(const ConstImageView& src, const ImageView& dst, const BoxParams& p, Rows rows);

/// Integer taps for the fixed-point Gaussian, floats for f32 (see docs/ops/gaussian.md).
void gaussian(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
              Rows rows);

/// IIR Gaussian in two passes through a 1-channel-per-channel f32 buffer `tmp` of src's
/// size and channels: horizontal over rows, then vertical over column bands
/// [cols.begin, cols.end) (a Rows range used for columns).
void gaussian_iir_h(const ConstImageView& src, const ImageView& tmp, const GaussianIirParams& p,
                    Rows rows);
void gaussian_iir_v(const ConstImageView& tmp, const ImageView& dst, const GaussianIirParams& p,
                    Rows cols);

void sobel(const ConstImageView& src, const ImageView& dst, const SobelParams& p, Rows rows);
void scharr(const ConstImageView& src, const ImageView& dst, const ScharrParams& p, Rows rows);
void filter2d(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p,
              Rows rows);
void epsilon(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p, Rows rows);
void bilateral(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
               Rows rows);
void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, Rows rows);
void transpose(const ConstImageView& src, const ImageView& dst, Rows rows);
void flip(const ConstImageView& src, const ImageView& dst, const FlipParams& p, Rows rows);
void rotate(const ConstImageView& src, const ImageView& dst, const RotateParams& p, Rows rows);
void crop(const ConstImageView& src, const ImageView& dst, const CropParams& p, Rows rows);
void pad(const ConstImageView& src, const ImageView& dst, const PadParams& p, Rows rows);
/// resize to dst's size by p.interp (the size fields are core's; docs/ops/resize.md).
void resize(const ConstImageView& src, const ImageView& dst, const ResizeParams& p, Rows rows);
void gray(const ConstImageView& src, const ImageView& dst, const GrayParams& p, Rows rows);
void channels(const ConstImageView& src, const ImageView& dst, const ChannelsParams& p, Rows rows);
void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           Rows rows);
void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op, Rows rows);
void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p, Rows rows);
void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               Rows rows);
void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, Rows rows);
void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, Rows rows);

}  // namespace pixflow::ref
