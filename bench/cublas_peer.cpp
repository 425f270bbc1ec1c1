// cuBLAS sgemm as the peer of the matmul case.
#include "bench/peers.hpp"

#if PIXFLOW_HAVE_CUBLAS

#include <cublas_v2.h>

namespace pixflow_bench {

bool cublas_compiled() {
  return true;
}

PeerLaunch make_cublas_peer(const PeerCase& c) {
  PeerLaunch l;
  if (c.op != "matmul" || c.src.depth != PDepth::f32) {
    l.note = "no cuBLAS equivalent";
    return l;
  }
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    l.note = "cublasCreate failed";
    return l;
  }
  auto owner = std::shared_ptr<cublasContext>(h, [](cublasHandle_t p) { (void)cublasDestroy(p); });
  if (cublasSetStream(h, c.stream) != CUBLAS_STATUS_SUCCESS) {
    l.note = "cublasSetStream failed";
    return l;
  }
  l.state = owner;
  l.name = "cublasSgemm";
  l.note = "FP32 (default math mode)";
  // Row-major C = A * B is column-major C^T = B^T * A^T: pass B first. Leading dimensions are
  // the row strides in elements.
  const int m = c.m, n = c.n, k = c.k;
  const float* a = static_cast<const float*>(c.src.data);
  const float* b = static_cast<const float*>(c.src2.data);
  float* out = static_cast<float*>(c.dst.data);
  const int lda = static_cast<int>(c.src.stride / 4), ldb = static_cast<int>(c.src2.stride / 4),
            ldc = static_cast<int>(c.dst.stride / 4);
  l.launch = [=]() -> std::string {
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t st =
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, ldb, a, lda, &zero, out, ldc);
    if (st != CUBLAS_STATUS_SUCCESS) return "cublasSgemm returned " + std::to_string(int(st));
    return "";
  };
  return l;
}

}  // namespace pixflow_bench

#else

namespace pixflow_bench {
bool cublas_compiled() {
  return false;
}
PeerLaunch make_cublas_peer(const PeerCase&) {
  PeerLaunch l;
  l.note = "cuBLAS not built";
  return l;
}
}  // namespace pixflow_bench

#endif
