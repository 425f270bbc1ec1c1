// Dumps the binary NVIDIA's OpenCL driver builds for one of pixflow's kernel files (PTX text),
// to check the code the driver made (e.g. FMA contraction). Usage, on the GPU machine:
//   g++ -O1 -o /tmp/cl-ptx scripts/cl-ptx.cpp -lOpenCL
//   /tmp/cl-ptx src/backends/opencl/kernels/bilateral.cl "-DT=float -DT_F32=1 -DCH=1" > b.ptx
// It builds common.cl + the file with -cl-std=CL1.2 -Werror and the options, on the first
// device of the platform whose name contains "NVIDIA" (else the first platform).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string file = argv[1];
  const std::string dir = file.substr(0, file.rfind('/') + 1);
  const std::string text = slurp(dir + "common.cl") + "\n" + slurp(file);
  cl_uint np = 0;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  cl_platform_id pick = ps.empty() ? nullptr : ps[0];
  for (auto p : ps) {
    char name[256] = {};
    clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (std::string(name).find("NVIDIA") != std::string::npos) pick = p;
  }
  cl_device_id dev = nullptr;
  if (!pick || clGetDeviceIDs(pick, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) != CL_SUCCESS) return 3;
  cl_int err = 0;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
  const char* src = text.c_str();
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, nullptr, &err);
  // -I the repository root: the kernels #include "src/base/rules/*.h" (the library embeds them).
  const std::string opts =
      std::string("-cl-std=CL1.2 -Werror -I ") + dir + "../../../.. " + argv[2];
  err = clBuildProgram(prog, 1, &dev, opts.c_str(), nullptr, nullptr);
  if (err != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    std::fprintf(stderr, "build failed %d:\n%s\n", err, log.c_str());
    return 1;
  }
  size_t size = 0;
  clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
  std::vector<unsigned char> bin(size);
  unsigned char* ptr = bin.data();
  clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr);
  std::fwrite(bin.data(), 1, size, stdout);
  return 0;
}
