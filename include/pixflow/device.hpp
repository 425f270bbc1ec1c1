// Devices and explicit host<->device copies.
#pragma once

#include "pixflow/image.hpp"

namespace pixflow {

/// Number of CUDA devices visible (0 when CUDA is compiled out or no GPU is present).
int cuda_device_count() noexcept;
/// True when pixflow was compiled with the CUDA backend.
bool cuda_compiled() noexcept;

/// Copies between any two locations (host/host, host/device, device/device) on `stream`
/// (a cudaStream_t; null = default stream). Asynchronous for device copies; the host
/// buffer of an async host<->device copy must stay alive until the stream reaches it.
void copy_async(ConstImageView src, ImageView dst, void* stream);

/// Waits for all work on `stream` (null = default stream) of the current device.
void synchronize(void* stream = nullptr);

/// Host memory that the device can DMA from/to directly (cudaMallocHost); falls back to
/// ordinary memory when CUDA is compiled out.
Image pinned_image(std::int64_t width, std::int64_t height, Format fmt);

}  // namespace pixflow
