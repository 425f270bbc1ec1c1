// Helpers shared by the fuzz target bodies (fuzz/targets.hpp).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>

#include "pixflow/pixflow.hpp"
#include "src/base/error.hpp"

namespace pixflow::fuzz {

/// Prints "pixflow fuzz: <message>" to stderr and aborts: libFuzzer reports it as a crash
/// and saves the input; the regression test's process dies with the message.
template <class... A>
[[noreturn]] void die(const A&... msg) {
  const std::string s = detail::cat(msg...);
  std::fprintf(stderr, "\npixflow fuzz: %s\n", s.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Aborts unless `e` has one of the statuses a target expects from bad input.
void check_error_status(const char* who, const Error& e, std::initializer_list<Status> allowed);

/// A folder of this process for files a target writes (removed at exit).
const std::filesystem::path& scratch_dir();

/// Reads every byte of every row (so that AddressSanitizer sees a short buffer).
void touch(const ConstImageView& v);

/// "" when `got` and `want` have the same size, format and bytes (row by row; f32 samples
/// that are NaN in both count as equal whatever their payload), else a description of the
/// first differences.
std::string compare_bits(const ConstImageView& got, const ConstImageView& want);

/// One sample as text ("12", "-0.5", "nan"), for messages.
std::string sample_text(const ConstImageView& v, std::int64_t x, std::int64_t y, int c);

}  // namespace pixflow::fuzz
