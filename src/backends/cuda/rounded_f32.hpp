// The separately rounded arithmetic of src/base/rounded.hpp under the names the CUDA kernel
// bodies use (pixflow::cuda::mul_rn, ...).
#pragma once

#include "src/base/rounded.hpp"

namespace pixflow::cuda {

using rounded::add_rn;
using rounded::bits_float;
using rounded::dadd_rn;
using rounded::ddiv_rn;
using rounded::div_rn;
using rounded::dmul_rn;
using rounded::float_bits;
using rounded::mul_rn;
using rounded::sub_rn;

}  // namespace pixflow::cuda
