// The parameters of a benchmark case as the peer libraries see them. Apart from peers.hpp
// (which needs the CUDA runtime header for the images and the stream) so that the shared case
// list (bench/cases.hpp) also builds without CUDA, for pixflow-bench-opencl.
#pragma once

#include <string>

namespace pixflow_bench {

/// One benchmark case's parameters, described for a peer library. `op` is the pixflow op name.
struct PeerParams {
  std::string op;
  int kw = 3, kh = 3;  ///< window (median, morphology, box, gaussian, filter2d)
  int d = 0;           ///< bilateral diameter
  double sigma_color = 0, sigma_space = 0;
  double t = 127, maxval = 255;   ///< threshold
  const float* kernel = nullptr;  ///< filter2d taps on the host, kh rows of kw
  int m = 0, n = 0, k = 0;        ///< matmul: C (m x n) = A (m x k) * B (k x n), row-major
  std::string mode, border;       ///< flip's mode (h, v, both), pad's border mode
  int angle = 0;                  ///< rotate
  int x = 0, y = 0;               ///< crop's origin (its size is the destination's)
  int top = 0, left = 0;          ///< pad (the other sides follow from the destination)
  std::string interp;             ///< resize: nearest, linear or area
};

}  // namespace pixflow_bench
