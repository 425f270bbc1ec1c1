// Entry points of the CUDA backend, called by src/core/ops/* after validation. Each one
// enqueues its kernels on `stream` (a cudaStream_t; null = default stream), checks the
// launch, and never synchronises the host. Ops that need scratch (gaussian_iir, the
// morphology composites) take it from the stream-ordered allocator (cudaMallocAsync /
// cudaFreeAsync on the same stream), which CUDA graph capture records as memory nodes.
#pragma once

#include "pixflow/ops.hpp"

namespace pixflow::cuda {

/// A device image from the stream-ordered allocator, freed on `stream` when the last
/// reference goes (scratch for multi-pass ops; no host synchronisation).
Image scratch_image(std::int64_t width, std::int64_t height, Format fmt, Location loc,
                    void* stream);

void median(const ConstImageView& src, const ImageView& dst, const MedianParams& p, void* stream);
/// Scratch (an f32 intermediate and the recursion's double buffers) comes from the
/// stream-ordered allocator (cudaMallocAsync), which graph capture records as memory nodes.
void gaussian_iir(const ConstImageView& src, const ImageView& dst, const GaussianIirParams& p,
                  void* stream);
/// One dilate or erode pass with the (already enlarged) window kw x kh, anchor (ax, ay).
void morph_pass(const ConstImageView& src, const ImageView& dst, MorphOp op, int kw, int kh,
                int ax, int ay, const Border& border, void* stream);
void box(const ConstImageView& src, const ImageView& dst, const BoxParams& p, void* stream);
/// `p` resolved (kw, kh, sigma, sigma_y all set) by src/core.
void gaussian(const ConstImageView& src, const ImageView& dst, const GaussianParams& p,
              void* stream);
void filter2d(const ConstImageView& src, const ImageView& dst, const Filter2dParams& p,
              void* stream);
void epsilon(const ConstImageView& src, const ImageView& dst, const EpsilonParams& p,
             void* stream);
void remap(const ConstImageView& src, const ConstImageView& map_x, const ConstImageView& map_y,
           const ImageView& dst, const RemapParams& p, void* stream);
void transpose(const ConstImageView& src, const ImageView& dst, void* stream);
void gray(const ConstImageView& src, const ImageView& dst, const GrayParams& p, void* stream);
void dot(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, void* stream);
void matmul(const ConstImageView& a, const ConstImageView& b, const ImageView& c, void* stream);

}  // namespace pixflow::cuda

namespace pixflow::cuda {
void sobel(const ConstImageView& src, const ImageView& dst, const SobelParams& p, void* stream);
void scharr(const ConstImageView& src, const ImageView& dst, const ScharrParams& p, void* stream);
void bilateral(const ConstImageView& src, const ImageView& dst, const BilateralParams& p,
               void* stream);
}  // namespace pixflow::cuda

namespace pixflow::cuda {
void arith(const ConstImageView& a, const ConstImageView& b, const ImageView& dst, ArithOp op,
           void* stream);
void arith(const ConstImageView& a, double value, const ImageView& dst, ArithOp op, void* stream);
void convert(const ConstImageView& src, const ImageView& dst, const ConvertParams& p,
             void* stream);
void threshold(const ConstImageView& src, const ImageView& dst, const ThresholdParams& p,
               void* stream);
}  // namespace pixflow::cuda
