// Core's device layer: allocation and copies for every location, through the DeviceApi that
// the location's backend registered (src/base/backend.hpp). A location whose backend is not
// built, or a device index that does not exist, answers backend_unavailable.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "pixflow/image.hpp"
#include "src/base/backend.hpp"

namespace pixflow::detail {

/// The device interface of `loc` (a device location) after checking the device exists.
const DeviceApi& device_api(std::string_view who, Location loc);
/// `bytes` of device memory at `loc`; the deleter frees it.
std::shared_ptr<std::byte> device_alloc(Location loc, std::size_t bytes);
/// 2-D copy of `rows` rows of `row_bytes` between any two locations on `queue`.
void copy_2d(void* dst, std::size_t dst_stride, Location dst_loc, const void* src,
             std::size_t src_stride, Location src_loc, std::size_t row_bytes, std::size_t rows,
             Queue queue, bool synchronous);

}  // namespace pixflow::detail
