// `pixflow info`: version, build, devices, limits and every registry op with its
// parameters and defaults; `--markdown` prints the op table for the README.
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>

#include "pixflow/pixflow.hpp"
#include "tools/pixflow/cli.hpp"

namespace pixflow::cli {

namespace {

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += '\\';
    o += c;
  }
  return o;
}

void print_markdown(const std::vector<OpInfo>& ops) {
  std::cout << "| op | parameters (default) | what it does |\n|---|---|---|\n";
  for (const auto& op : ops) {
    std::string params;
    for (const auto& p : op.params) {
      if (!params.empty()) params += "<br>";
      params += "`" + p.name + "`";
      if (!p.default_value.empty()) params += " (`" + md_escape(p.default_value) + "`)";
      if (!p.doc.empty()) params += ": " + md_escape(p.doc);
    }
    if (params.empty()) params = "—";
    std::cout << "| `" << op.name << "` | " << params << " | " << md_escape(op.doc) << " |\n";
  }
}

void print_text(const std::vector<OpInfo>& ops) {
  const IoLimits lim = IoLimits::from_env();
  const int devices = cuda_device_count();
  std::cout << "pixflow " << PIXFLOW_VERSION << "\n"
            << "build:\n"
            << "  CUDA backend:  " << (cuda_compiled() ? "compiled" : "not compiled") << "\n"
            << "  CUDA devices:  " << devices << "\n";
  for (int d = 0; d < devices; ++d)
    std::cout << "    " << describe_device(Location::cuda(d)) << "\n";
  std::string backends;
  bool opencl_built = false;
  const int cl_devices = device_count(Location::Kind::opencl);
  for (Backend b : compiled_backends()) opencl_built = opencl_built || b == Backend::opencl;
  for (Backend b : compiled_backends())
    backends += (backends.empty() ? "" : ", ") + std::string(backend_name(b));
  std::cout << "  backends:      " << backends << "\n"
            << "  OpenCL backend: " << (opencl_built ? "compiled" : "not compiled") << "\n"
            << "  OpenCL devices: " << cl_devices
            << (opencl_built ? " (every platform the ICD loader finds; --device N)" : "") << "\n";
  for (int d = 0; d < cl_devices; ++d)
    std::cout << "    " << describe_device(Location::opencl(d)) << "\n";
  std::cout << "  CPU threads:   " << std::thread::hardware_concurrency() << "\n"
            << "  CPU backend:   " << backend_note(Backend::cpu) << "\n"
            << "  TIFF support:  " << (have_tiff() ? "yes" : "no") << "\n"
            << "  WebP support:  " << (have_webp() ? "yes" : "no") << "\n"
            << "  auto backend:  " << (devices > 0 ? "cuda:0" : "cpu") << "\n"
            << "limits (PIXFLOW_MAX_SIDE/PIXELS/BYTES): " << lim.max_side << " per side, "
            << lim.max_pixels << " pixels, " << lim.max_bytes << " bytes\n"
            << "ops (" << ops.size() << "):\n";
  std::size_t width = 0;
  for (const auto& op : ops) width = std::max(width, op.name.size());
  for (const auto& op : ops) {
    std::cout << "  " << op.name << std::string(width - op.name.size() + 2, ' ') << op.doc << "\n";
    for (const auto& p : op.params) {
      std::cout << "      " << p.name;
      if (!p.default_value.empty()) std::cout << "=" << p.default_value;
      if (!p.doc.empty()) std::cout << "  " << p.doc;
      std::cout << "\n";
    }
  }
  if (ops.empty()) std::cout << "  (none registered)\n";
}

}  // namespace

int info_command(const InfoOptions& opt) {
  const auto& ops = op_registry();
  if (opt.markdown)
    print_markdown(ops);
  else
    print_text(ops);
  std::cout << std::flush;
  return kOk;
}

}  // namespace pixflow::cli
