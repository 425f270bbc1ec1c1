// SKELETON STUB: replaced by the codecs.
#include "pixflow/io.hpp"
#include "src/core/check.hpp"
namespace pixflow {
IoLimits IoLimits::from_env() { return {}; }
FileFormat format_from_path(const std::string&) { detail::fail(Status::internal, "io", "stub"); }
bool have_tiff() { return false; }
Image read_image(const std::string&, const IoLimits&) { detail::fail(Status::internal, "io", "stub"); }
void write_image(const std::string&, ConstImageView, const WriteOptions&) { detail::fail(Status::internal, "io", "stub"); }
}  // namespace pixflow
