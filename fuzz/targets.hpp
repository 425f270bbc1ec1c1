// The bodies of pixflow's libFuzzer targets (fuzz/README.md). Each is a plain function of
// the input bytes: fuzz/entry.cpp makes one libFuzzer binary per body (clang,
// -fsanitize=fuzzer,address,undefined), and tests/fuzz_regression_test.cpp calls the same
// functions on the committed corpus and the stored findings in the ordinary test build.
//
// A body returns 0, or -1 for an input outside its target (a JPEG given to the PNG target),
// which libFuzzer then keeps out of the corpus. It treats pixflow::Error as an expected
// outcome of bad input and aborts (after printing what went wrong) when an invariant breaks: a
// decoded image outside the format's contract or the limits, a lossless round trip that
// changes pixels, a backend that differs from the reference. Any other exception escapes:
// pixflow throws only Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pixflow/io.hpp"

namespace pixflow::fuzz {

using Body = int (*)(const std::uint8_t* data, std::size_t size);

struct Target {
  const char* name;  ///< the corpus folder fuzz/corpus/<name> and the binary pixflow_fuzz_<name>
  Body body;
  const char* what;
};

/// Every target, in the order `make fuzz` runs them.
const std::vector<Target>& targets();
const Target* find_target(std::string_view name);

/// The decoder limits of the I/O targets: small enough that no input makes the fuzzer run
/// out of memory (64 MiB decoded at most), large enough for every valid seed.
IoLimits fuzz_limits();

// Decoders: the bytes as a file, read by read_image; each takes only its codec's signature.
int fuzz_png(const std::uint8_t* data, std::size_t size);
int fuzz_jpeg(const std::uint8_t* data, std::size_t size);
int fuzz_tiff(const std::uint8_t* data, std::size_t size);
int fuzz_pnm(const std::uint8_t* data, std::size_t size);
int fuzz_npy(const std::uint8_t* data, std::size_t size);
// read_image itself: signature detection, then whichever codec.
int fuzz_read_image(const std::uint8_t* data, std::size_t size);
// Pipeline::parse on arbitrary text (image operands resolve only to fixture files).
int fuzz_pipeline(const std::uint8_t* data, std::size_t size);
// Random small pipelines and images: Backend::cpu must equal Backend::ref exactly.
int fuzz_differential(const std::uint8_t* data, std::size_t size);

/// The seeds that come from the op schema (fuzz/make_seeds.cpp): for every catalogue op and
/// every example, a one-stage pipeline text as `pipeline` and `differential` take them.
struct Seed {
  std::string name, text;
};
std::vector<Seed> pipeline_seeds();
std::vector<Seed> differential_seeds();

}  // namespace pixflow::fuzz
