// Declarations shared between the CUDA backend's own files. Internal to src/backends/cuda:
// core reaches the backend only through what its files register (src/base/backend.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "pixflow/image.hpp"

namespace pixflow::cuda {

/// `bytes` (at least 1) from the stream-ordered allocator of the current device: usable by
/// work enqueued on `stream` after this call and freed on `stream` (cudaFreeAsync) when the
/// last reference goes. No host synchronisation; graph capture records memory nodes.
std::shared_ptr<std::byte> stream_alloc(std::size_t bytes, cudaStream_t stream);

/// transpose.cu's entry point; also the transposition passes of gaussian_iir (iir.cu).
void transpose(const ConstImageView& src, const ImageView& dst, cudaStream_t stream);

}  // namespace pixflow::cuda
