// What the device benchmarks share: the case list from the op schema, the random inputs, the
// check against Backend::ref and the backend-neutral half of a result row and its JSON.
// pixflow-bench (CUDA, bench/pixflow_bench.cpp) and pixflow-bench-opencl (bench/
// opencl_bench.cpp) time the same cases under the same names, so that compare.py joins them;
// each binary adds its own timing, copy floor and peers. Nothing here needs a device backend.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/peer_params.hpp"
#include "pixflow/pixflow.hpp"
#include "src/schema/schema.hpp"

namespace pixflow::bench {

// ---- small utilities ------------------------------------------------------------------------

/// "%.*f", or "" for a non-finite value.
std::string fmt_double(double v, int prec = 2);
/// JSON number ("null" for a non-finite value) and JSON string.
std::string jnum(double v);
std::string jstr(const std::string& s);
/// f(0) .. f(n-1) on all hardware threads; the first exception is rethrown after all finish.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& f);
std::uint64_t splitmix(std::uint64_t x);
/// Median (the mean of the middle two for an even count); NaN for none.
double median_of(std::vector<double> v);

// ---- cases ---------------------------------------------------------------------------------

/// The images of one call: device views for the timed call, host views (possibly crops) for
/// the reference.
struct Views {
  ConstImageView src, src2, mx, my;
};
using OpFn = std::function<void(const Views&, ImageView, const Context&)>;

/// How the reference is computed for a band of destination rows [y0, y1).
enum class RefKind {
  local,      ///< dst rows depend on src rows within +-halo (src and src2 cropped with halo)
  remap,      ///< dst rows depend on the same map rows and the whole src
  matmul,     ///< C rows depend on the same A rows and the whole B
  transpose,  ///< dst rows are src columns
  full,       ///< no locality (recursive filters): the whole image, once
};

struct Tol {
  double abs = 0, rel = 0;  ///< pass if |got - want| <= abs + rel * |want|
  std::string text() const;
};

struct Case {
  std::string op, variant;
  std::int64_t w = 0, h = 0;  ///< src size
  Format fmt;                 ///< src format
  std::int64_t ow = 0, oh = 0;
  Format ofmt;
  bool two_inputs = false, maps = false;
  std::int64_t w2 = 0, h2 = 0;  ///< second input size (matmul B), else src's
  /// Catalogue cases: the schema op and its KEY=VALUE list, bound to the case's images
  /// (bind_views) for every call. Hand-written cases (dot, matmul): schema_op is null.
  const schema::Op* schema_op = nullptr;
  schema::KeyValues kv;
  std::string params;  ///< kv as text, for the JSON
  OpFn fn;             ///< one call on the images of a Views (both kinds of case)
  RefKind ref = RefKind::local;
  int halo = 0;  ///< rows of source a destination row reads on either side (RefKind::local)
  Tol tol;
  pixflow_bench::PeerParams peer;
  std::vector<float> kernel;  ///< filter2d taps kept alive for the peer
  std::string target;         ///< PERFORMANCE.md target for 8K u8 (µs), "" if none

  std::string size() const { return std::to_string(w) + "x" + std::to_string(h); }
  std::string name() const {
    return op + (variant.empty() ? "" : " " + variant) + " " + to_string(fmt) +
           (ofmt == fmt ? "" : "->" + to_string(ofmt)) + " " + size();
  }
  double in_bytes() const {
    double b = double(w) * double(h) * double(fmt.pixel_bytes());
    if (two_inputs) b += double(w2) * double(h2) * double(fmt.pixel_bytes());
    if (maps) b += 2.0 * double(ow) * double(oh) * 4.0;
    return b;
  }
  double out_bytes() const { return double(ow) * double(oh) * double(ofmt.pixel_bytes()); }
  /// The copy floor's bytes: (in + out) / 2 copied, so that read + write traffic equals the
  /// op's.
  double copy_bytes() const;
};

struct Size {
  std::int64_t w = 0, h = 0;
};
/// The standard sizes: 1920x1080, then 8192x8192 unless `quick`.
std::vector<Size> standard_sizes(bool quick);
/// "WxH" -> Size; nullopt when it is not two positive integers.
std::optional<Size> parse_size(const std::string& text);

/// Every schema::catalogue() op, every entry of op->bench(), in the op's benchmark formats, at
/// each size (format-major within a size), then dot and matmul by hand. The 8192x8192 dot is
/// 4096x4096 and the matmul 4096^3; at 1920x1080 the matmul is 1024^3, at another size
/// min(1024, w, h)^3. Throws when the schema rejects a bench entry.
std::vector<Case> make_cases(const std::vector<Size>& sizes);

/// The cases the command line asks for: make_cases(sizes) (the standard sizes when `sizes` is
/// empty, which it then holds) whose names match `filter`. nullopt, after a message naming
/// `tool` on stderr, when the schema rejects a bench entry.
std::optional<std::vector<Case>> select_cases(std::vector<Size>& sizes, bool quick,
                                              const std::regex& filter, const char* tool);

/// The case's schema op bound to the images of `v` (catalogue cases only).
std::unique_ptr<schema::Bound> bind_views(const Case& c, const Views& v);

// ---- inputs --------------------------------------------------------------------------------

struct Buffer {
  Image host, dev;
};

/// Random inputs (u8/u16/s16 over the full range, s32 around 0, f32 uniform [0, 1)) and the
/// remap maps (bench/maps.hpp), on the host and copied to `dev`. Cached by (size, format,
/// salt) so that cases share uploads; clear() frees them (before the next size).
class Inputs {
 public:
  explicit Inputs(Location dev) : dev_(dev) {}
  std::shared_ptr<Buffer> random(std::int64_t w, std::int64_t h, Format f, int salt);
  std::pair<std::shared_ptr<Buffer>, std::shared_ptr<Buffer>> maps(std::int64_t w, std::int64_t h);
  void clear() { cache_.clear(); }

 private:
  Location dev_;
  std::map<std::tuple<std::int64_t, std::int64_t, int, int, int>, std::shared_ptr<Buffer>> cache_;
};

/// The device and host views of a case's inputs (made or taken from `in`).
struct CaseViews {
  Views dev, host;
  std::shared_ptr<Buffer> in, in2, mx, my;  ///< keep the images alive
};
CaseViews case_views(const Case& c, Inputs& in);

// ---- reference and comparison ----------------------------------------------------------------

struct CheckResult {
  std::int64_t checked = 0, mismatches = 0;
  double max_err = 0;
  std::string first;
};

/// Compares the downloaded output with Backend::ref on the host: every pixel up to 4 M output
/// pixels, else the first and last 4 rows, the middle row and random rows (whole rows, >= 120k
/// pixels). Throws pixflow::Error when the reference itself is not available.
CheckResult check_case(const Case& c, const Views& host, const Image& got);

// ---- result rows -----------------------------------------------------------------------------

/// What both benchmarks report of a case besides their timings.
struct RowBase {
  std::string name, op, variant, params, size, fmt, out_fmt;
  std::string status = "not run";  ///< ok, n/a (...), FAILED (...), error (...)
  double in_bytes = 0, out_bytes = 0, out_pixels = 0, copy_bytes = 0;
  std::string check = "not run", check_detail;
  std::int64_t checked = 0, mismatches = 0;
  double max_err = 0;
  std::string tol;
  std::string target;
  bool failed = false;
};

/// The case's description into the row.
void describe(const Case& c, RowBase& row);

/// The row status for an Error thrown by the warm-up call on `backend` ("CUDA", "OpenCL"), and
/// whether it is a failure: an op without a kernel there (unsupported) or still a skeleton stub
/// is "n/a"; anything else (a backend_error, an invalid_argument for a valid case) is a defect.
std::pair<std::string, bool> error_status(const Error& e, const char* backend);

/// Checks `got` (the case's output, downloaded) against the reference into row.check,
/// check_detail, checked, mismatches, max_err and failed.
void check_into(const Case& c, const Views& host, const Image& got, RowBase& row);

/// The row's backend-neutral JSON fields, '"key": value' pairs joined by ", " (no braces).
std::string row_json_fields(const RowBase& r);

}  // namespace pixflow::bench
