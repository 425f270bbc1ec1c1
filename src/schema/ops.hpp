// The typed schema entries that core validates with. Stage structs are the parameters of
// ops whose C++ API takes more than one image (the second image is a parameter of a
// pipeline stage: a file on the CLI, an array in the bindings).
#pragma once

#include <memory>

#include "pixflow/ops.hpp"
#include "src/schema/schema.hpp"

namespace pixflow::schema {

struct NoParams {};

/// add/sub/absdiff/mul as a stage: with an image (`with`) or a scalar (`value`).
struct ArithStage {
  std::shared_ptr<const Image> with;
  double value = 0;
  bool has_value = false;
};

/// remap as a stage: the maps are parameters.
struct RemapStage : RemapParams {
  std::shared_ptr<const Image> map_x, map_y;
};

const OpDef<MedianParams>& median_op();
const OpDef<MorphParams>& morph_op(MorphOp op);
const OpDef<BoxParams>& box_op();
const OpDef<GaussianParams>& gaussian_op();
const OpDef<GaussianIirParams>& gaussian_iir_op();
const OpDef<SobelParams>& sobel_op();
const OpDef<ScharrParams>& scharr_op();
const OpDef<Filter2dParams>& filter2d_op();
const OpDef<EpsilonParams>& epsilon_op();
const OpDef<BilateralParams>& bilateral_op();
const OpDef<RemapStage>& remap_op();
const OpDef<NoParams>& transpose_op();
const OpDef<FlipParams>& flip_op();
const OpDef<RotateParams>& rotate_op();
const OpDef<CropParams>& crop_op();
const OpDef<PadParams>& pad_op();
const OpDef<ResizeParams>& resize_op();
const OpDef<GrayParams>& gray_op();
const OpDef<ChannelsParams>& channels_op();
const OpDef<ArithStage>& arith_op(ArithOp op);
const OpDef<ConvertParams>& convert_op();
const OpDef<ThresholdParams>& threshold_op();

/// gaussian's parameters resolved as cv::GaussianBlur does for a source of depth d:
/// sigma_y <= 0 -> sigma; a window size of 0 from its sigma (3 sigma for u8, 4 otherwise).
/// Throws invalid_argument when the window from sigma exceeds the limit.
GaussianParams resolve_gaussian(const GaussianParams& p, Depth d);

}  // namespace pixflow::schema
