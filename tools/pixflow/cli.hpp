// Shared pieces of the pixflow command-line tool (docs/contract.md §5): exit codes, the usage-error
// type, and the entry points of the subcommands.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

/// One stderr line: "pixflow: <message>", the message passed through escape_text.
void print_error(const std::string& message);

/// Text for one terminal line: control characters as \n, \r, \t or \xNN and every byte
/// that is not part of well-formed UTF-8 as \xNN (a file name with a newline or in Latin-1
/// cannot break a line or a terminal). Other text is unchanged.
std::string escape_text(std::string_view s);
/// A JSON string literal that is valid UTF-8: quotes, backslashes and control characters
/// escaped; bytes that are not well-formed UTF-8 become U+FFFD (the item's `index` still
/// identifies it).
std::string json_string(std::string_view s);

/// SIGINT and SIGTERM (tools/pixflow/signals.cpp). A single run: the first signal removes the
/// pending temporary files (pixflow::remove_pending_temporaries) and ends the process as the
/// signal would. A batch (`batch`): the first signal only asks the batch to stop (items in
/// flight finish and are written, no new one starts; see stop_signal()); a second one ends
/// the process as in a single run.
void install_signal_handlers(bool batch);
/// The signal that asked a batch to stop, or 0.
int stop_signal();

struct RunOptions {
  std::string pipeline;
  /// Files, folders (batch), glob patterns (expanded when no file has that name), or "-"
  /// (stdin, alone).
  std::vector<std::string> inputs;
  /// A file, a folder (batch), a pattern with {stem} {name} {ext} {dir}, or "-" (stdout).
  std::string output;
  std::optional<std::string> format;  ///< --format: the outputs' format (png, jpg, tif, ...)
  std::optional<int> quality;         ///< --quality: JPEG 1..100 (default 95)
  std::optional<int> compression;     ///< --compression: PNG zlib 0..9, TIFF 0 none / 1..9
  bool lossless = false;              ///< --lossless: WebP lossless
  bool strip = false;                 ///< --strip: drop the ICC profile and resolution
  bool recursive = false;             ///< folders: their sub-folders too, structure kept
  int jobs = 1;                       ///< --jobs: items at once in a CPU batch
  std::string backend = "auto";       ///< auto | cpu | cuda | opencl | ref
  std::optional<std::string> device;  ///< --device N (or P:D for OpenCL)
  int threads = 0;                    ///< --threads N: CPU backend threads (0 = all cores)
  bool keep_going = false;
  bool overwrite_input = false;   ///< allow an output that is an input or an operand file
  bool no_clobber = false;        ///< keep existing outputs (skip those items)
  std::string progress = "auto";  ///< auto | bar | json | none
  std::optional<std::int64_t> max_side, max_pixels, max_bytes;
};
/// `pixflow run`. Returns the exit code; throws UsageError or pixflow::Error.
int run_command(const RunOptions& opt);

struct InfoOptions {
  bool markdown = false;
};
int info_command(const InfoOptions& opt);

/// The bytes of data/astronaut.png, embedded at build time (tools/pixflow/demo_image.cpp).
std::span<const std::byte> demo_image_png();

struct DemoOptions {
  std::string output_dir = "demo";
  std::string input;  ///< empty: the embedded data/astronaut.png
  std::uint64_t seed = 20240601;
};
int demo_command(const DemoOptions& opt);

}  // namespace pixflow::cli
