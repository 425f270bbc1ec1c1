// Device memory hooks, implemented by src/backends/cuda/memory.cu or, without CUDA, by
// src/core/no_cuda.cpp (which answers backend_unavailable).
#pragma once

#include <cstddef>
#include <memory>

#include "pixflow/image.hpp"

namespace pixflow::detail {

/// Allocates `bytes` on `loc` (a cuda device); the deleter frees it.
std::shared_ptr<std::byte> device_alloc(Location loc, std::size_t bytes);
/// Pinned host memory (falls back to ordinary memory without CUDA).
std::shared_ptr<std::byte> pinned_alloc(std::size_t bytes);
/// 2-D copy of `rows` rows of `row_bytes` between any locations, on `stream`.
void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
             std::size_t src_stride, Location src_loc, std::size_t row_bytes, std::size_t rows,
             void* stream, bool synchronous);
int device_count() noexcept;
void device_synchronize(void* stream);

}  // namespace pixflow::detail
