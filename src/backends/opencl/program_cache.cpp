// The disk cache of OpenCL program binaries (program_cache.hpp).
#include "src/backends/opencl/program_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "src/base/error.hpp"

#ifndef PIXFLOW_VERSION
#error "PIXFLOW_VERSION must be defined for program_cache.cpp (CMakeLists.txt)"
#endif

namespace pixflow::opencl::program_cache {

namespace {

constexpr char kMagic[8] = {'P', 'X', 'F', 'C', 'L', 'B', 'I', 'N'};
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

struct Counters {
  std::atomic<std::uint64_t> built{0}, loaded{0}, saved{0}, unsaved{0}, corrupt{0}, rejected{0};
};
Counters g_counters;

// Two FNV-1a lanes from different offset bases, each ending in a full-avalanche mix of its
// state and the length: a 128-bit key, so an accidental collision between the few hundred
// programs of a cache folder is out of reach (a key that matched the wrong binary would
// give a wrong program, found only when a kernel name is missing).
struct Hasher {
  std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull, n = 0;
  void bytes(std::string_view s) {
    for (unsigned char c : s) {
      a = (a ^ c) * kFnvPrime;
      b = (b ^ c) * kFnvPrime;
    }
    n += s.size();
  }
  // Each field with its length first: ("ab", "c") and ("a", "bc") hash differently.
  void field(std::string_view s) {
    const std::uint64_t len = s.size();
    char le[8];
    for (int i = 0; i < 8; ++i) le[i] = char((len >> (8 * i)) & 0xff);
    bytes(std::string_view(le, 8));
    bytes(s);
  }
  static std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
};

std::string hex(std::uint64_t v) {
  static const char* const kDigits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[std::size_t(i)] = kDigits[v & 15];
  return s;
}

void put_u32(unsigned char* p, std::uint32_t v) {
  std::memcpy(p, &v, 4);
}
void put_u64(unsigned char* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::string path_of(const std::string& dir, const Key& key) {
  return dir + "/" + key.file;
}

// mkdir -p, the folders it makes private to the user (the binaries are code the driver runs).
bool make_folder(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  const std::size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !make_folder(dir.substr(0, slash))) return false;
  return mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST;
}

bool write_all(int fd, const unsigned char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= std::size_t(w);
  }
  return true;
}

}  // namespace

std::uint64_t fnv1a(std::span<const unsigned char> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * kFnvPrime;
  return h;
}

Key key_of(const DeviceInfo& device, std::string_view source, std::string_view text,
           std::string_view options) {
  Hasher h;
  h.field(detail::cat("pixflow ", PIXFLOW_VERSION, " format ", kFormatVersion));
  h.field(device.platform_name);
  h.field(device.platform_version);
  h.field(device.name);
  h.field(device.version);
  h.field(device.driver);
  h.field(options);
  h.field(text);
  Key k;
  k.hash[0] = Hasher::mix(h.a ^ h.n);
  k.hash[1] = Hasher::mix(h.b ^ (h.n * kFnvPrime));
  k.file = detail::cat(source, "-", hex(k.hash[0]), hex(k.hash[1]), ".clbin");
  return k;
}

std::string folder() {
  if (const char* e = std::getenv("PIXFLOW_OPENCL_CACHE_DIR"); e && *e) {
    if (std::strcmp(e, "off") == 0) return {};
    return e;
  }
  // XDG: a relative XDG_CACHE_HOME is invalid and ignored.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/')
    return detail::cat(x, "/pixflow/opencl");
  if (const char* h = std::getenv("HOME"); h && *h) return detail::cat(h, "/.cache/pixflow/opencl");
  return {};
}

std::vector<unsigned char> load(const std::string& dir, const Key& key) {
  const std::string path = path_of(dir, key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};  // not cached (or not readable: the same to us)
  std::vector<unsigned char> file;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) {
    file.resize(std::size_t(st.st_size));
    std::size_t got = 0;
    while (got < file.size()) {
      const ssize_t r = ::read(fd, file.data() + got, file.size() - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += std::size_t(r);
    }
    file.resize(got);
  }
  ::close(fd);
  if (!ok) return {};
  const unsigned char* h = file.data();
  const bool whole = file.size() > kHeaderBytes && std::memcmp(h, kMagic, 8) == 0 &&
                     get_u32(h + 8) == kFormatVersion && get_u32(h + 12) == kHeaderBytes &&
                     get_u64(h + 16) == key.hash[0] && get_u64(h + 24) == key.hash[1] &&
                     get_u64(h + 32) == file.size() - kHeaderBytes &&
                     get_u64(h + 40) == fnv1a(std::span(file).subspan(kHeaderBytes));
  if (!whole) {
    // Truncated (a full disk, a copy cut short), damaged, or of another format version:
    // rebuilt from source and written again.
    ::unlink(path.c_str());
    ++g_counters.corrupt;
    return {};
  }
  file.erase(file.begin(), file.begin() + std::ptrdiff_t(kHeaderBytes));
  return file;
}

void save(const std::string& dir, const Key& key, std::span<const unsigned char> payload) {
  unsigned char header[kHeaderBytes];
  std::memcpy(header, kMagic, 8);
  put_u32(header + 8, kFormatVersion);
  put_u32(header + 12, std::uint32_t(kHeaderBytes));
  put_u64(header + 16, key.hash[0]);
  put_u64(header + 24, key.hash[1]);
  put_u64(header + 32, payload.size());
  put_u64(header + 40, fnv1a(payload));
  // A dot name in the same folder (rename is atomic only within one file system); mkstemp
  // makes it unique, so processes and threads writing the same key never share a temp file.
  std::string tmp = detail::cat(dir, "/.", key.file, ".XXXXXX");
  int fd = -1;
  if (make_folder(dir)) fd = mkstemp(tmp.data());
  if (fd < 0) {
    ++g_counters.unsaved;
    return;
  }
  bool ok = write_all(fd, header, kHeaderBytes) && write_all(fd, payload.data(), payload.size());
  ok = ::close(fd) == 0 && ok;  // closed either way (a failed close still frees fd)
  if (ok && ::rename(tmp.c_str(), path_of(dir, key).c_str()) == 0) {
    ++g_counters.saved;
    return;
  }
  ::unlink(tmp.c_str());
  ++g_counters.unsaved;
}

void reject(const std::string& dir, const Key& key) {
  ::unlink(path_of(dir, key).c_str());
  ++g_counters.rejected;
}

void note_loaded() {
  ++g_counters.loaded;
}
void note_built() {
  ++g_counters.built;
}

}  // namespace pixflow::opencl::program_cache

namespace pixflow::opencl {

ProgramCacheStats program_cache_stats() noexcept {
  const auto& c = program_cache::g_counters;
  return {c.built.load(),   c.loaded.load(),  c.saved.load(),
          c.unsaved.load(), c.corrupt.load(), c.rejected.load()};
}

std::string program_cache_folder() {
  return program_cache::folder();
}

}  // namespace pixflow::opencl
