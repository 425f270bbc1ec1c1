// OpenCL gaussian_iir (kernels/iir.cl): the block-rule line filter of src/base/iir.hpp in
// double, rows into an f32 intermediate, then columns, on one of two schedules (the same bits;
// PIXFLOW_OCL_IIR picks, for A/B timing):
//  - fused (default): CUDA's fused pass (src/backends/cuda/iir_fused.hpp), a work-group per
//    32 lines walking them in tiles of 256 positions, the blocks of a tile in parallel, x
//    read twice, 3 doubles of carry a block in global scratch;
//    On NVIDIA's driver (cl_nv_compiler_options) built with at most 128 registers a
//    work-item: two work-groups of 256 an SM, as CUDA's __launch_bounds__(256, 2) for the same
//    kernel (ncu, CUDA: 25 % occupancy at 128 registers was the fused kernel's shape); the
//    compiler's own choice may take up to 255 (one work-group an SM). fused-free: no cap;
//  - line: one work-item per line with its whole extended line in global scratch (the first
//    port, kept as the plain statement of the schedule).
// The coefficients (iir_coeffs: B, b1..b3, the Triggs-Sdika matrix, the block response tables)
// are computed here on the host by the same header and uploaded per call. The intermediate
// and the scratch are the queue's workspace (runtime.hpp: reused by later calls on the same
// queue, no allocation per call), so no "gaussian_iir.workspace" entry: core asks a backend for one
// only to size a caller's workspace, and a backend without it needs none.
#include <CL/cl.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pixflow/ops.hpp"
#include "src/backends/opencl/register.hpp"
#include "src/backends/opencl/runtime.hpp"
#include "src/backends/opencl/variant.hpp"
#include "src/base/error.hpp"
#include "src/base/iir.hpp"
#include "src/base/numeric.hpp"

namespace pixflow::opencl {
namespace {

constexpr std::size_t kLx = 64;
// The fused kernel's shape (kernels/iir.cl: IIR_LINES lines x IIR_SLOTS blocks a tile).
constexpr std::int64_t kFusedLines = 32;
constexpr std::size_t kFusedThreads = 256;

// The coefficient buffer of kernels/iir.cl: B, b1, b2, b3, M row-major, H row-major.
std::vector<double> coeff_buffer(const detail::IirCoeffs& k) {
  std::vector<double> v = {k.B, k.b1, k.b2, k.b3};
  for (const auto& row : k.M) v.insert(v.end(), std::begin(row), std::end(row));
  for (const auto& row : k.H) v.insert(v.end(), std::begin(row), std::end(row));
  return v;
}

// Whether the device takes NVIDIA's -cl-nv-* build options (the extension string names them).
bool nv_compiler_options(int device) {
  const cl_device_id id = devices()[std::size_t(device)].id;
  std::size_t bytes = 0;
  if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, nullptr, &bytes) != CL_SUCCESS) return false;
  std::string ext(bytes, '\0');
  if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, bytes, ext.data(), nullptr) != CL_SUCCESS)
    return false;
  return ext.find("cl_nv_compiler_options") != std::string::npos;
}

enum class Schedule { fused, fused_free, line };

// A pass's build options.
std::string pass_options(const Launch& l, Depth sd, Depth dd, bool rows, int ch, Schedule sched) {
  std::string opts = depth_options(sd, "S") + depth_options(dd, "D") +
                     detail::cat(" -DIIR_ROWS=", rows ? 1 : 0, " -DCH=", ch);
  if (sched == Schedule::fused && nv_compiler_options(l.device)) opts += " -cl-nv-maxrregcount=128";
  return opts;
}

// One pass: `lines` lines of `len` samples (rows: channel L % ch of row L / ch; else
// element L of every row), s -> d. line: scratch w of (len + 2e + 6) doubles a line; fused:
// scratch w of 3 (J + 1) doubles a line.
void pass(const Launch& l, const ConstImageView& s, const ImageView& d, std::int64_t lines,
          std::int64_t len, bool rows, int e, const GaussianIirParams& p, double cval,
          cl_mem coeffs, cl_mem w, Schedule sched) {
  const std::string opts = pass_options(l, s.depth(), d.depth(), rows, s.channels(), sched);
  if (sched != Schedule::line) {
    // A work-group of 256 per 32 lines (kernels/iir.cl IIR_LINES, IIR_SLOTS).
    const std::size_t groups = std::size_t((lines + kFusedLines - 1) / kFusedLines);
    Kernel(l, "iir", opts, "iir_fused", "gaussian_iir")
        .image(s)
        .image(d)
        .arg(cl_int(lines))
        .arg(cl_int(len))
        .arg(cl_int(e))
        .arg(cl_int(p.border.type))
        .arg(cl_double(cval))
        .arg(coeffs)
        .arg(w)
        .run(groups * kFusedThreads, 1, kFusedThreads, 1);
    return;
  }
  Kernel(l, "iir", opts, "iir_pass", "gaussian_iir")
      .image(s)
      .image(d)
      .arg(cl_int(lines))
      .arg(cl_int(len))
      .arg(cl_int(s.channels()))
      .arg(cl_int(rows ? 1 : 0))
      .arg(cl_int(e))
      .arg(cl_int(p.border.type))
      .arg(cl_double(cval))
      .arg(coeffs)
      .arg(w)
      .run(std::size_t(lines), 1, kLx, 1);
}

// Scratch doubles of a pass on its schedule.
std::int64_t pass_doubles(std::int64_t lines, std::int64_t len, std::int64_t e, Schedule sched) {
  if (sched == Schedule::line) return lines * (len + 2 * e + 6);
  const std::int64_t J = (len + 2 * e + detail::kIirBlock - 1) / detail::kIirBlock;
  return 3 * lines * (J + 1);
}

void gaussian_iir(const ConstImageView& s, const ImageView& d, const GaussianIirParams& p,
                  const Launch& l) {
  require_fp64(l, "gaussian_iir");
  auto sched =
      Schedule(variant("PIXFLOW_OCL_IIR", {"fused", "fused-free", "line"}, "gaussian_iir"));
  // The fused kernel's local tile (about 40 KiB) needs more than some devices have (oclgrind:
  // 32 KiB): the line schedule there (the same bits).
  if (sched != Schedule::line &&
      !fits_local_memory(l, "iir",
                         pass_options(l, s.depth(), Depth::f32, true, s.channels(), sched),
                         "iir_fused", "gaussian_iir"))
    sched = Schedule::line;
  const detail::IirCoeffs k = detail::iir_coeffs(p.sigma);
  const std::int64_t e = detail::iir_extension(p);
  const int cn = s.channels();
  const std::int64_t w = s.width(), h = s.height();
  // The constant border's value in the op's depth, for both passes (as the reference).
  const double cval = s.depth() == Depth::u8
                          ? double(detail::saturate_cast<std::uint8_t>(p.border.value))
                          : double(detail::saturate_cast<float>(p.border.value));
  const std::vector<double> c = coeff_buffer(k);
  const DeviceBuffer coeff_buf =
      device_buffer(l, c.size() * sizeof(double), "gaussian_iir", c.data());
  const cl_mem coeffs = coeff_buf.mem;
  // Scratch for the larger pass.
  const std::int64_t doubles =
      std::max(pass_doubles(h * cn, w, e, sched), pass_doubles(w * cn, h, e, sched));
  const DeviceBuffer scratch =
      scratch_buffer(l, std::size_t(doubles) * sizeof(double), "gaussian_iir");
  const cl_mem wmem = scratch.mem;
  const Format ft{Depth::f32, cn};
  const std::int64_t tmp_stride = std::int64_t(ft.pixel_bytes()) * w;
  const std::shared_ptr<std::byte> tmp_block =
      workspace(l.device, std::size_t(tmp_stride * h), l.queue);
  const ImageView tmp(tmp_block.get(), w, h, tmp_stride, ft, s.location());
  pass(l, s, tmp, h * cn, w, true, int(e), p, cval, coeffs, wmem, sched);
  pass(l, tmp, d, w * cn, h, false, int(e), p, cval, coeffs, wmem, sched);
}

}  // namespace
}  // namespace pixflow::opencl

PIXFLOW_REGISTER_IMPLS(opencl_iir) {
  using namespace pixflow;
  opencl::add<&opencl::gaussian_iir>(table, "gaussian_iir",
                                     opencl::depths({Depth::u8, Depth::f32}));
}
