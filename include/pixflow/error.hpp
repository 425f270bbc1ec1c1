// pixflow::Error — the one exception type of the library.
#pragma once

#include <stdexcept>
#include <string>

namespace pixflow {

/// What kind of failure an Error reports. The CLI maps these to exit codes.
enum class Status {
  invalid_argument,     ///< a parameter or image is outside the op's contract
  unsupported,          ///< valid in general, not for this depth/channels/backend
  backend_unavailable,  ///< the backend was compiled out or has no device
  out_of_memory,        ///< host or device allocation failed (recoverable)
  backend_error,        ///< a CUDA/OpenCL call failed
  io_error,             ///< a file could not be read or written, or is corrupt
  limit_exceeded,       ///< an image is larger than the configured limits
  internal,             ///< a bug in pixflow
};

const char* status_name(Status s) noexcept;

/// Thrown by every pixflow function on failure. The message names the op (or the
/// file), the parameter and what was expected, e.g. "median: k must be odd (got 4)".
class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

}  // namespace pixflow
