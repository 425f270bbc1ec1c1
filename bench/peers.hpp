// Peers timed in the same process as pixflow-bench: NVIDIA NPP and cuBLAS.
// Self-contained on purpose (only the CUDA runtime header and bench/peer_params.hpp):
// bench/CMakeLists.txt compiles npp_peers.cpp in a try_compile first, so that an NPP header that
// differs from the one these calls were written against disables the NPP column instead of breaking
// the benchmark build.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>

#include "bench/peer_params.hpp"

namespace pixflow_bench {

enum class PDepth { u8, s16, f32 };

/// A device image as the peers see it (pixflow's views translated by the caller).
struct PeerImage {
  void* data = nullptr;
  long long stride = 0;  ///< bytes
  int width = 0, height = 0;
  PDepth depth = PDepth::u8;
  int channels = 1;
};

/// One benchmark case for a peer library: its parameters and the device images and stream.
struct PeerCase : PeerParams {
  PeerImage src, src2, map_x, map_y, dst;
  cudaStream_t stream = nullptr;
};

/// What a peer offers for a case: `launch` enqueues one call on the case's stream and returns
/// "" on success or the error text. Empty `launch`: no equivalent (`note` says why).
struct PeerLaunch {
  std::string name;  ///< the function timed, e.g. nppiFilterMedian_8u_C1R_Ctx
  std::string note;  ///< differences from the pixflow case (border, mask), or why not available
  std::function<std::string()> launch;
  std::shared_ptr<void> state;  ///< device buffers and handles, released with the launch
  explicit operator bool() const { return static_cast<bool>(launch); }
};

/// Whether the peer was compiled in (CMake found it and the peer file compiled).
bool npp_compiled();
bool cublas_compiled();
PeerLaunch make_npp_peer(const PeerCase& c);
PeerLaunch make_cublas_peer(const PeerCase& c);

}  // namespace pixflow_bench
