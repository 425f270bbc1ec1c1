// Micro-benchmark of launch shapes for a point-wise u8 op (threshold binary, t = 100) at
// 1920x1080, timed as pixflow-bench times ops (graph of N calls, median of 5 replays / N),
// beside the device copies of the same traffic; every shape's output is checked against the
// host. It chose the flat one-chunk grid of src/backends/cuda/arith.cu (bench/NOTES.md,
// session 17). Build and run on the GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/pw bench/micro/pointwise_shapes.cu && /tmp/pw
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "micro_timing.cuh"
__device__ __forceinline__ unsigned thr4(unsigned w, unsigned t) {
  unsigned r = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) r |= (((w >> (8 * k)) & 255u) > t ? 255u : 0u) << (8 * k);
  return r;
}
__device__ __forceinline__ uint4 thr16(uint4 v, unsigned t) {
  return make_uint4(thr4(v.x, t), thr4(v.y, t), thr4(v.z, t), thr4(v.w, t));
}
// pixflow's shape: block BX x BY, V chunks a thread, chunks BX apart, rows looped.
template <int V>
__global__ void k2d(const uint8_t* s, uint8_t* d, long long pitch, int w, int h, unsigned t) {
  const long long n = w;
  const long long first = ((long long)blockIdx.x * blockDim.x * V + threadIdx.x) * 16;
  const long long step = (long long)blockDim.x * 16;
  if (first >= n) return;
  for (long long y = (long long)blockIdx.y * blockDim.y + threadIdx.y; y < h;
       y += (long long)gridDim.y * blockDim.y) {
    uint4 v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      long long i = first + k * step;
      if (i + 16 <= n) v[k] = *(const uint4*)(s + y * pitch + i);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) {
      long long i = first + k * step;
      if (i + 16 <= n) *(uint4*)(d + y * pitch + i) = thr16(v[k], t);
    }
  }
}
// flat: chunk c = global thread * V + k (consecutive threads consecutive chunks when V == 1),
// row = c / cpr; 32-bit index math.
template <int V>
__global__ void kflat(const uint8_t* s, uint8_t* d, int pitch, int cpr, int total, unsigned t) {
  const int base = (blockIdx.x * blockDim.x) * V + threadIdx.x;
  uint4 v[V];
  int off[V];
#pragma unroll
  for (int k = 0; k < V; ++k) {
    int c = base + k * blockDim.x;
    int r = c / cpr, q = c - r * cpr;
    off[k] = c < total ? r * pitch + q * 16 : -1;
    if (off[k] >= 0) v[k] = __ldg((const uint4*)(s + off[k]));
  }
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (off[k] >= 0) *(uint4*)(d + off[k]) = thr16(v[k], t);
}
int main() {
  const int w = 1920, h = 1080, N = 1000;
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  for (int pitch : {1920, 2048}) {
    uint8_t *s, *d, *ref;
    CK(cudaMalloc(&s, (size_t)pitch * h));
    CK(cudaMalloc(&d, (size_t)pitch * h));
    CK(cudaMalloc(&ref, (size_t)pitch * h));
    std::vector<uint8_t> hs((size_t)pitch * h), hd((size_t)pitch * h);
    srand(7);
    for (auto& x : hs) x = uint8_t(rand());
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    int bad_shapes = 0;
    auto check = [&](const char* name) {
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          bad += hd[(size_t)y * pitch + x] != (hs[(size_t)y * pitch + x] > 100 ? 255 : 0);
      if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_shapes;
      cudaMemset(d, 0xCD, (size_t)pitch * h);  // poison for the next shape
    };
    cudaMemset(d, 0xCD, (size_t)pitch * h);
    printf("pitch %d\n", pitch);
    printf(
        "  copy2d   %.2f us\n",
        time_graph(
            st, [&] { cudaMemcpy2DAsync(d, pitch, s, pitch, w, h, cudaMemcpyDeviceToDevice, st); },
            N));
    printf("  copy1d   %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    cudaMemset(d, 0xCD, (size_t)pitch * h);
    auto run2d = [&](const char* name, auto kern, int V, int bx, int by) {
      const int chunks = w / 16;
      dim3 grid((chunks + bx * V - 1) / (bx * V), (h + by - 1) / by), blk(bx, by);
      printf("  %-8s V=%d %3dx%-2d grid %ux%u: %.2f us\n", name, V, bx, by, grid.x, grid.y,
             time_graph(
                 st, [&] { kern<<<grid, blk, 0, st>>>(s, d, pitch, w, h, 100u); }, N));
      check(name);
    };
    run2d("2d", k2d<2>, 2, 64, 4);  // pixflow today
    run2d("2d", k2d<1>, 1, 128, 2);
    run2d("2d", k2d<1>, 1, 128, 8);
    run2d("2d", k2d<1>, 1, 64, 16);
    run2d("2d", k2d<2>, 2, 64, 8);
    run2d("2d", k2d<2>, 2, 64, 16);
    run2d("2d", k2d<4>, 4, 32, 8);
    run2d("2d", k2d<4>, 4, 32, 32);
    auto runflat = [&](auto kern, int V, int bt) {
      const int cpr = w / 16, total = cpr * h;
      unsigned grid = (total + bt * V - 1) / (bt * V);
      printf("  flat     V=%d %4d grid %u: %.2f us\n", V, bt, grid,
             time_graph(
                 st, [&] { kern<<<grid, bt, 0, st>>>(s, d, pitch, cpr, total, 100u); }, N));
      check("flat");
    };
    runflat(kflat<1>, 1, 256);
    runflat(kflat<1>, 1, 512);
    runflat(kflat<1>, 1, 1024);
    runflat(kflat<2>, 2, 256);
    runflat(kflat<2>, 2, 512);
    runflat(kflat<4>, 4, 256);
    runflat(kflat<4>, 4, 512);
    runflat(kflat<8>, 8, 128);
    cudaFree(s);
    cudaFree(d);
    cudaFree(ref);
    if (bad_shapes) return 1;
  }
  return 0;
}
