// The disk cache of OpenCL program binaries (issue 11): what runtime.cpp's build() asks before
// it builds a program from source, and where it puts the binary after.
//
// Folder: $PIXFLOW_OPENCL_CACHE_DIR, else $XDG_CACHE_HOME/pixflow/opencl, else
// $HOME/.cache/pixflow/opencl; PIXFLOW_OPENCL_CACHE_DIR=off disables the cache. The variable is
// read at every build (a build is rare and costs milliseconds at least), so a process may change
// it between builds. A folder that cannot be created or written only means nothing is saved.
//
// One file per program, `<source>-<key as 32 hex digits>.clbin`:
//   offset  0  8 bytes  magic "PXFCLBIN"
//           8  u32      format version (kFormatVersion)
//          12  u32      header size (48)
//          16  u64 x 2  key (as in the name)
//          32  u64      payload size (the file's size - 48)
//          40  u64      payload checksum (64-bit FNV-1a of the payload)
//          48  payload: the driver's CL_PROGRAM_BINARIES for the program's one device
// (integers in the machine's byte order), so that a truncated, damaged or misplaced file is
// found before the driver sees it. Files are written to a temporary name in the same folder
// and renamed: a reader sees a whole file or none, and processes building the same program at
// once each replace it with an equal one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/backends/opencl/runtime.hpp"

namespace pixflow::opencl::program_cache {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kHeaderBytes = 48;

/// What names one program's binary: a 128-bit hash of everything the binary depends on.
struct Key {
  std::uint64_t hash[2] = {0, 0};
  std::string file;  ///< "<source>-<32 hex digits>.clbin"
};

/// The key of the program built from `text` with `options` (the whole option string given to
/// clBuildProgram) for `device`: hashes the text, the options, the platform's name and
/// version, the device's name and version, the driver version, pixflow's version and the
/// format version.
Key key_of(const DeviceInfo& device, std::string_view source, std::string_view text,
           std::string_view options);

/// The folder in use now (see above), "" when the cache is off.
std::string folder();

/// The payload of `key`'s file in `dir`; empty when there is none, or when the file is not a
/// whole, undamaged file of this key (then it is deleted and counted as corrupt).
std::vector<unsigned char> load(const std::string& dir, const Key& key);

/// Writes `payload` as `key`'s file in `dir` (creating the folder), atomically; a failure is
/// only counted (the cache is an optimisation: it never fails a build).
void save(const std::string& dir, const Key& key, std::span<const unsigned char> payload);

/// Deletes `key`'s file: the driver refused its binary (counted as rejected).
void reject(const std::string& dir, const Key& key);

/// Counts a program made from a cached binary.
void note_loaded();
/// Counts a program built from source.
void note_built();

/// 64-bit FNV-1a of `bytes` (the payload checksum).
std::uint64_t fnv1a(std::span<const unsigned char> bytes);

}  // namespace pixflow::opencl::program_cache
