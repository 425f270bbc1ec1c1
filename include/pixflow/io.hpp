// Image files: PNG, JPEG, TIFF, PGM/PPM, NPY (docs/contract.md §1), through libpng, libjpeg-turbo
// and libtiff. Decoders check header sizes against IoLimits with overflow-checked
// arithmetic before any allocation.
#pragma once

#include <cstdint>
#include <string>

#include "pixflow/image.hpp"

namespace pixflow {

/// Decoder limits. Defaults: 2^20 per side, 2^28 pixels, 2 GiB decoded; the environment
/// variables PIXFLOW_MAX_SIDE, PIXFLOW_MAX_PIXELS, PIXFLOW_MAX_BYTES override the defaults
/// (read by IoLimits::from_env(), which the CLI uses).
struct IoLimits {
  std::int64_t max_side = std::int64_t(1) << 20;
  std::int64_t max_pixels = std::int64_t(1) << 28;
  std::int64_t max_bytes = std::int64_t(2) << 30;
  static IoLimits from_env();
};

enum class FileFormat { png, jpeg, tiff, pnm, npy };
/// From the extension (.png .jpg .jpeg .tif .tiff .pgm .ppm .pnm .npy), case-insensitive;
/// throws invalid_argument for others.
FileFormat format_from_path(const std::string& path);
/// False when pixflow was built without libtiff.
bool have_tiff();

/// Reads a file (format from its contents' signature, not the extension). Throws io_error
/// for unreadable, truncated or corrupt files, limit_exceeded for sizes over `limits`,
/// unsupported for valid files of a kind pixflow does not take (e.g. CMYK JPEG).
Image read_image(const std::string& path, const IoLimits& limits = IoLimits::from_env());

struct WriteOptions {
  int jpeg_quality = 95;
};
/// Writes `img` (host) in the format of the path's extension, atomically: a temporary file
/// in the same folder, renamed over `path` on success, removed on failure. Throws
/// unsupported when the format cannot hold the image's depth/channels.
void write_image(const std::string& path, ConstImageView img, const WriteOptions& opt = {});

}  // namespace pixflow
