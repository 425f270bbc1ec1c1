// Shared test helpers: random images with awkward strides and offsets, poisoning,
// pixel-exact comparison with a readable report, OpenCV bridges.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pixflow/pixflow.hpp"
#include "src/schema/schema.hpp"

#if PIXFLOW_HAVE_OPENCV
#include <opencv2/core.hpp>
#endif

namespace pixflow::test {

/// The seed of this test run: PIXFLOW_TEST_SEED if set, else a fresh one from the clock.
/// Printed by every failure report (SeedTrace) so that a failure can be replayed.
std::uint64_t run_seed();

/// An RNG seeded from run_seed() and a per-case salt (e.g. a hash of the case name).
std::mt19937_64 make_rng(std::uint64_t salt);

/// An image whose view sits at an odd byte offset inside a larger buffer, with a stride
/// larger than the row, so every test exercises ROI views. `view` is what ops get.
struct TestImage {
  Image backing;
  ImageView view;
  operator ImageView() const { return view; }       // NOLINT
  operator ConstImageView() const { return view; }  // NOLINT
};

/// width x height of `fmt` inside a padded buffer (offset and stride padding from `rng`
/// unless `tight`), filled with uniform random samples over the depth's range (f32: [-1000,
/// 1000]; `lo`/`hi` override the range when lo < hi).
TestImage random_image(std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng,
                       bool tight = false, double lo = 0, double hi = 0);
/// An uninitialised destination in a padded buffer, poisoned.
TestImage make_dst(std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng,
                   bool tight = false);
/// Backends checked against the reference: cpu always, cuda when built and a GPU is
/// present. (A test that finds no GPU says so once, visibly, via cuda_skip_note().)
std::vector<Backend> test_backends();
/// test_backends() plus opencl when an OpenCL device is present and the OpenCL backend has
/// `op` (a catalogue op, "dot" or "matmul"); ops listed in opencl_pending_ops() are left out.
/// The family tests that check an op against the reference loop over this, so a backend's
/// port can land op by op; test_backends() stays cpu + cuda for the device-specific tests.
std::vector<Backend> test_backends_for(std::string_view op);
/// PIXFLOW_TEST_OPENCL=off: the OpenCL backend is left out of every test (scripts/gpu-check.sh
/// runs the CUDA suite so and the OpenCL tests as a stage of their own).
bool opencl_tests_off();
/// The ops the OpenCL backend does not have (empty since session 21; checked both ways by
/// OpenclBackend.PendingListIsExactlyWhatItLacks).
const std::vector<std::string>& opencl_pending_ops();
/// The OpenCL device the tests use: PIXFLOW_TEST_OPENCL_DEVICE (exits with a message when
/// that is not a device here), else 0.
int test_opencl_device();
/// The SIMD targets the checks run backend b under: for `cpu` (built with Highway) every
/// target the machine has, best first (AVX3, AVX2, SSE4, SCALAR = the reference); {""}
/// (whatever dispatch picks) otherwise.
std::vector<std::string> cpu_targets_for(Backend b);
/// Forces the cpu backend's SIMD target for a scope ("" = leave dispatch alone).
class SimdTargetScope {
 public:
  explicit SimdTargetScope(const std::string& target);
  ~SimdTargetScope();
  SimdTargetScope(const SimdTargetScope&) = delete;
  SimdTargetScope& operator=(const SimdTargetScope&) = delete;

 private:
  bool forced_;
};
/// Where images for backend b live: host for ref/cpu, cuda:N for cuda with N =
/// test_cuda_device(), opencl:N for opencl with N = test_opencl_device().
Location backend_location(Backend b);
/// The CUDA device the tests put their device images on: PIXFLOW_TEST_CUDA_DEVICE (exits
/// with a message when that is not a device here), else 0, unless set_test_cuda_device chose.
int test_cuda_device();
void set_test_cuda_device(int device);
/// A copy of a host view at backend b's location, in a padded buffer (odd offset and
/// stride unless `tight`), so that device tests exercise ROI views too.
TestImage to_backend(Backend b, const ConstImageView& host, std::mt19937_64& rng,
                     bool tight = false);
/// A poisoned destination at backend b's location.
TestImage make_dst_on(Backend b, std::int64_t w, std::int64_t h, Format fmt, std::mt19937_64& rng,
                      bool tight = false);
/// A tight host copy of any view (device views are copied back).
Image to_host(const ConstImageView& v);

/// Fills every byte of the view with a pattern that is no valid result (f32: NaN); a device
/// view through a host copy.
void poison(const ImageView& v);

/// Compares two images sample by sample. `tol` is the allowed absolute difference (0 =
/// exact; f32 additionally allows `rel` times the magnitude). Returns "" on a match, else a
/// report: the count of differing samples, the first few with coordinates and values, and
/// the largest difference.
std::string compare(const ConstImageView& got, const ConstImageView& want, double tol = 0,
                    double rel = 0);

/// "" when the two views hold the same bits (f32: NaN payloads and the sign of zero
/// included), else where they first differ.
std::string compare_bits(const ConstImageView& got, const ConstImageView& want);

/// Sample (x, y, c) as double, for any depth.
double sample(const ConstImageView& v, std::int64_t x, std::int64_t y, int c);

/// Runs f and expects a pixflow::Error with `status` whose message contains every needle
/// (the shared check of the bad-input tables).
void expect_error(const std::function<void()>& f, Status status,
                  const std::vector<std::string>& needles);

/// One entry of a bad-input table: what it is (the trace), the call, the expected status
/// and the texts its message must contain.
struct BadCase {
  std::string what;
  std::function<void()> f;
  Status status;
  std::vector<std::string> needles;
};
/// Runs expect_error on every case, each under a trace of its `what`.
void expect_errors(std::span<const BadCase> cases);

/// Sets every sample of the view to v (converted to the view's depth).
void fill_constant(const ImageView& v, double value);

/// Every border of docs/contract.md §2 (constant with a non-zero value).
std::vector<Border> all_borders();
std::string describe(const Border& b);
/// A border as stage parameters: "border=wrap", "border=constant value=77".
std::string border_params(const Border& b);

/// Awkward sizes every op is swept over: 1x1, 1xN, Nx1, 17x13, ...
struct Size {
  std::int64_t w, h;
};
std::vector<Size> awkward_sizes();

/// Splits a stage's "KEY=VALUE KEY=VALUE" text (values hold no spaces) into a map.
std::map<std::string, std::string> split_params(const std::string& text);

/// The shared backend-versus-reference check, driven by the op schema (src/schema): binds
/// `params` for catalogue op `op` (required image parameters not in `params` are added;
/// image parameters are random images of their role: like_src = src's size and format,
/// map_x/map_y = 1-channel f32 coordinates of src's size over [-3, w+3] / [-3, h+3]), runs
/// it on host `src` with Backend::ref and with every backend of test_backends() (source at
/// the backend's location in an ROI view, poisoned destination) and expects bit-identical
/// results, f32 included. The reference's f32 output must hold no NaN (the poison).
/// Use inside PIXFLOW_TRACE: ASSERT_TRUE(backends_match_ref("median", "k=5", src, rng)).
::testing::AssertionResult backends_match_ref(std::string_view op, const std::string& params,
                                              const ConstImageView& src, std::mt19937_64& rng);
/// Same on a random source of `fmt` and size `s`.
::testing::AssertionResult backends_match_ref(std::string_view op, const std::string& params,
                                              Format fmt, Size s, std::mt19937_64& rng);
/// The image parameters backends_match_ref binds: random host images in ROI views, like_src
/// of src's size and format, map_x / map_y 1-channel f32 coordinates over [-3, w+3] /
/// [-3, h+3]. Holds `rng` by reference.
schema::ImageSource random_images(const ConstImageView& src, std::mt19937_64& rng);

/// For ops whose f32 contract covers every bit pattern (median, dilate, erode order by
/// totalOrder): the same check on a source full of special values (special_f32_image), the
/// results compared bit for bit (NaN payloads and the sign of zero included). The
/// destinations are poisoned with the NaN 0x7fc00000, which the source never holds.
::testing::AssertionResult backends_match_ref_bits(std::string_view op, const std::string& params,
                                                   int channels, Size s, std::mt19937_64& rng);
/// An f32 image whose samples are, about one in two, a special value (NaN of either sign
/// with various payloads, a signalling NaN, +-inf, +-0, +-FLT_MAX, +-denormals), else random
/// finite values in [-4, 4] (repeats likely, so ties happen).
TestImage special_f32_image(std::int64_t w, std::int64_t h, int channels, std::mt19937_64& rng);

#if PIXFLOW_HAVE_OPENCV
/// Wraps a host view as a cv::Mat (no copy).
cv::Mat to_mat(const ConstImageView& v);
/// Views a cv::Mat's pixels (no copy).
ConstImageView view_of(const cv::Mat& m);
int cv_border(const Border& b);
int cv_depth(Depth d);
/// Copies a cv::Mat into a new host Image.
Image from_mat(const cv::Mat& m);
#endif

/// Sets (or unsets, with nullopt) environment variables for a scope, then restores what they
/// were: the schedule switches (PIXFLOW_OCL_*), the cache folder, the I/O limits.
class EnvScope {
 public:
  EnvScope(std::initializer_list<std::pair<const char*, std::optional<std::string>>> vars);
  ~EnvScope();
  EnvScope(const EnvScope&) = delete;
  EnvScope& operator=(const EnvScope&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

/// A fresh folder under the system temp dir (named PREFIX_XXXXXX), removed with its contents
/// at scope exit (its permissions restored first, for tests that make it unwritable).
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "pixflow");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// The path of `name` in the folder.
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  /// Names of everything in the folder (to check that no temp file was left).
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

}  // namespace pixflow::test

/// Puts the run seed and the case description into every failure message.
#define PIXFLOW_TRACE(desc) \
  SCOPED_TRACE(::testing::Message() << "seed=" << ::pixflow::test::run_seed() << " " << (desc))
