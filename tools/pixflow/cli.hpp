// Shared pieces of the pixflow command-line tool (docs/contract.md §5): exit codes, the usage-error
// type, and the entry points of the subcommands.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace pixflow::cli {

/// Exit codes (docs/contract.md §5; docs/cli.md).
enum Exit : int {
  kOk = 0,
  kFailed = 1,   ///< a failed operation: unreadable/corrupt file, limit hit, device error, ...
  kUsage = 2,    ///< bad usage: unknown flag, bad pipeline, bad parameter value, ...
  kPartial = 3,  ///< a batch with --keep-going where some items failed
};

/// Bad usage detected by the tool itself (exit 2). Library errors are pixflow::Error.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One stderr line: "pixflow: <message>" with any newline of the message flattened.
void print_error(const std::string& message);

struct RunOptions {
  std::string pipeline, input, output;
  std::string backend = "auto";  ///< auto | cpu | cuda | opencl
  std::optional<int> device;     ///< --device N
  bool keep_going = false;
  std::string progress = "auto";  ///< auto | bar | json | none
  std::optional<std::int64_t> max_side, max_pixels, max_bytes;
};
/// `pixflow run`. Returns the exit code; throws UsageError or pixflow::Error.
int run_command(const RunOptions& opt);

struct InfoOptions {
  bool markdown = false;
};
int info_command(const InfoOptions& opt);

struct DemoOptions {
  std::string output_dir = "demo";
  std::string input;  ///< empty: the bundled data/astronaut.png
  std::uint64_t seed = 20240601;
};
int demo_command(const DemoOptions& opt);

}  // namespace pixflow::cli
