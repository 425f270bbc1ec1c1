// Registration of op families into the pipeline registry. Each src/core/ops/<family>.cpp
// defines its register function next to the op's validation and dispatch.
#pragma once

#include <vector>

#include "pixflow/pipeline.hpp"

namespace pixflow::detail {

void register_median(std::vector<OpInfo>& r);
void register_morphology(std::vector<OpInfo>& r);
void register_box(std::vector<OpInfo>& r);
void register_gaussian(std::vector<OpInfo>& r);     // gaussian, gaussian_iir
void register_derivatives(std::vector<OpInfo>& r);  // sobel, scharr
void register_filter2d(std::vector<OpInfo>& r);
void register_epsilon(std::vector<OpInfo>& r);
void register_bilateral(std::vector<OpInfo>& r);
void register_remap(std::vector<OpInfo>& r);
void register_transpose(std::vector<OpInfo>& r);
void register_color(std::vector<OpInfo>& r);  // gray
void register_arith(std::vector<OpInfo>& r);  // add, sub, absdiff, mul
void register_convert(std::vector<OpInfo>& r);
void register_threshold(std::vector<OpInfo>& r);

/// The common `border` and `value` parameter docs, appended by neighbourhood ops.
std::vector<ParamInfo> border_params(const char* default_border);

}  // namespace pixflow::detail
