// Test hooks of the f32 bilateral's colour weight (src/backends/cpu/simd/bilateral.cpp, built
// with Highway only).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pixflow::cpu {

/// out[i] = float(std::exp(x[i])) for x[i] <= 0 or NaN (the domain of delta^2 * color_coeff),
/// by the kernel's vector exp and its scalar fallback on the dispatched target. Returns how
/// many lanes took the fallback.
std::size_t bilateral_colour_weights(const double* x, float* out, std::size_t n);

/// Lanes whose colour weight the f32 bilateral took from the scalar std::exp because the
/// vector exp could not decide the float (all threads, since the start).
std::uint64_t bilateral_exp_fallbacks() noexcept;

}  // namespace pixflow::cpu
