// Micro-benchmark: how close to the copy floor can a 3x3 u8 window op (dilate, border
// replicate) get at 8192x8192 and 1920x1080 on the H100, with no shared memory and no barrier?
// Each thread owns V adjacent 32-bit words of a row and walks S rows down the image, P rows of
// loads in flight in a register ring; the bytes left and right of its words come from the
// neighbouring lanes by shuffles (lanes 0 and 31 load their outside word themselves). Timed as
// pixflow-bench times ops (graph of N calls, median of 5 replays / N) beside the device copy of
// the same bytes; every variant's output is poisoned before and checked against the host after.
// Build and run on the GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 -o /tmp/s3 bench/micro/stream3x3.cu && /tmp/s3
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "micro_timing.cuh"

template <int V>
struct Vec;
template <>
struct Vec<1> {
  using T = unsigned;
  static __device__ void get(T v, unsigned* w) { w[0] = v; }
  static __device__ T put(const unsigned* w) { return w[0]; }
};
template <>
struct Vec<2> {
  using T = uint2;
  static __device__ void get(T v, unsigned* w) { w[0] = v.x, w[1] = v.y; }
  static __device__ T put(const unsigned* w) { return make_uint2(w[0], w[1]); }
};
template <>
struct Vec<4> {
  using T = uint4;
  static __device__ void get(T v, unsigned* w) { w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w; }
  static __device__ T put(const unsigned* w) { return make_uint4(w[0], w[1], w[2], w[3]); }
};

// Horizontal max of the 3-byte windows of word w, with byte 3 of l left and byte 0 of r right:
// two words of u16x2 lanes, each byte as v * 257 (PRMT dup), max by VIMNMX3.U16x2.
__device__ __forceinline__ void hmax(unsigned l, unsigned w, unsigned r, unsigned& lo,
                                     unsigned& hi) {
  const unsigned c0 = __byte_perm(w, 0, 0x1100), c1 = __byte_perm(w, 0, 0x3322);
  const unsigned mid = __byte_perm(w, 0, 0x2211);
  const unsigned left = __byte_perm(l, w, 0x4433), right = __byte_perm(w, r, 0x4433);
  lo = __vimax3_u16x2(left, c0, mid);
  hi = __vimax3_u16x2(mid, c1, right);
}

// S output rows a thread (rows y0 .. y0 + S - 1), P rows of loads in flight.
template <int V, int S, int P, bool kCS = false, bool kStacked = false>
__global__ void __launch_bounds__(128)
    dilate_stream(const uint8_t* __restrict__ s, uint8_t* __restrict__ d, int pitch, int w, int h) {
  using VT = typename Vec<V>::T;
  constexpr int T = S + 2;
  const int lane = threadIdx.x & 31;
  const int words = w / 4;
  // kStacked: the block's 4 warps one above the other (pixflow's rows8 layout: a block 256
  // bytes x 4 S rows), else side by side (1024 bytes x S rows).
  const int c0 = kStacked ? (blockIdx.x * 32 + (threadIdx.x & 31)) * V
                          : (blockIdx.x * blockDim.x + threadIdx.x) * V;  // first word
  // Threads past the row end still take part in the shuffles: they clamp to the last vector.
  const int cc = c0 + V <= words ? c0 : words - V;
  const bool active = c0 + V <= words;
  const int y0 = kStacked ? (blockIdx.y * 4 + (threadIdx.x >> 5)) * S : blockIdx.y * S;
  const bool first = c0 == 0, last = c0 + V >= words;
  const int eword = lane == 0 ? (first ? 0 : cc - 1) : (last ? words - 1 : cc + V);
  const bool eload = lane == 0 || lane == 31;
  auto row = [&](int t) {
    int y = y0 - 1 + t;
    y = y < 0 ? 0 : (y >= h ? h - 1 : y);
    return s + (size_t)y * pitch;
  };
  VT ring[P];
  unsigned edge[P];
#pragma unroll
  for (int t = 0; t < P; ++t) {
    const uint8_t* p = row(t);
    ring[t] = __ldg((const VT*)(p + 4 * cc));
    edge[t] = eload ? __ldg((const unsigned*)(p + 4 * eword)) : 0u;
  }
  unsigned plo[V], phi[V], qlo[V], qhi[V];
#pragma unroll
  for (int t = 0; t < T; ++t) {
    unsigned wv[V];
    Vec<V>::get(ring[t % P], wv);
    const unsigned e = edge[t % P];
    if (t + P < T) {
      const uint8_t* p = row(t + P);
      ring[t % P] = __ldg((const VT*)(p + 4 * cc));
      edge[t % P] = eload ? __ldg((const unsigned*)(p + 4 * eword)) : 0u;
    }
    unsigned l = __shfl_up_sync(0xffffffffu, wv[V - 1], 1);
    unsigned r = __shfl_down_sync(0xffffffffu, wv[0], 1);
    if (lane == 0) l = e;
    if (lane == 31) r = e;
    if (first) l = wv[0] << 24;
    if (last) r = wv[V - 1] >> 24;
    unsigned lo[V], hi[V];
#pragma unroll
    for (int k = 0; k < V; ++k)
      hmax(k == 0 ? l : wv[k - 1], wv[k], k == V - 1 ? r : wv[k + 1], lo[k], hi[k]);
    if (t >= 2) {
      const int y = y0 + t - 2;
      if (active && y < h) {
        unsigned o[V];
#pragma unroll
        for (int k = 0; k < V; ++k)
          o[k] = __byte_perm(__vimax3_u16x2(plo[k], qlo[k], lo[k]),
                             __vimax3_u16x2(phi[k], qhi[k], hi[k]), 0x6420);
        if constexpr (kCS)
          __stcs((VT*)(d + (size_t)y * pitch + 4 * c0), Vec<V>::put(o));
        else
          *(VT*)(d + (size_t)y * pitch + 4 * c0) = Vec<V>::put(o);
      }
    }
#pragma unroll
    for (int k = 0; k < V; ++k) plo[k] = qlo[k], phi[k] = qhi[k], qlo[k] = lo[k], qhi[k] = hi[k];
  }
}

int main() {
  cudaStream_t st;
  cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
  int bad_variants = 0;
  const int sizes[2][3] = {{8192, 8192, 200}, {1920, 1080, 1000}};
  for (const auto& sz : sizes) {
    const int w = sz[0], h = sz[1], N = sz[2];
    const int pitch = w;
    uint8_t *s, *d;
    CK(cudaMalloc(&s, (size_t)pitch * h));
    CK(cudaMalloc(&d, (size_t)pitch * h));
    std::vector<uint8_t> hs((size_t)pitch * h), hd((size_t)pitch * h), ref((size_t)pitch * h);
    srand(7);
    for (auto& x : hs) x = uint8_t(rand());
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        uint8_t m = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            int yy = y + dy < 0 ? 0 : (y + dy >= h ? h - 1 : y + dy);
            int xx = x + dx < 0 ? 0 : (x + dx >= w ? w - 1 : x + dx);
            m = hs[(size_t)yy * pitch + xx] > m ? hs[(size_t)yy * pitch + xx] : m;
          }
        ref[(size_t)y * pitch + x] = m;
      }
    CK(cudaMemcpy(s, hs.data(), hs.size(), cudaMemcpyHostToDevice));
    auto check = [&](const char* name) {
      cudaMemcpy(hd.data(), d, hd.size(), cudaMemcpyDeviceToHost);
      long long bad = 0;
      for (size_t i = 0; i < hd.size(); ++i) bad += hd[i] != ref[i];
      if (bad) printf("  %s: %lld wrong pixels\n", name, bad), ++bad_variants;
      cudaMemset(d, 0xCD, (size_t)pitch * h);
    };
    printf("%dx%d\n", w, h);
    printf("  copy1d            %.2f us\n",
           time_graph(
               st, [&] { cudaMemcpyAsync(d, s, (size_t)w * h, cudaMemcpyDeviceToDevice, st); }, N));
    cudaMemset(d, 0xCD, (size_t)pitch * h);
    auto run = [&](auto kern, int V, int S, int P, bool stacked = false, int smem = 0) {
      const int words = w / 4;
      dim3 grid = stacked ? dim3((words / V + 31) / 32, (h + 4 * S - 1) / (4 * S))
                          : dim3((words / V + 127) / 128, (h + S - 1) / S);
      char name[64];
      snprintf(name, sizeof name, "V=%d S=%-3d P=%-2d%s%s", V, S, P, stacked ? " stacked" : "",
               smem ? " 8/SM" : "");
      if (smem) cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      printf("  %s grid %4ux%-4u %.2f us\n", name, grid.x, grid.y,
             time_graph(
                 st, [&] { kern<<<grid, 128, smem, st>>>(s, d, pitch, w, h); }, N));
      check(name);
    };
    run(dilate_stream<2, 4, 6>, 2, 4, 6);
    run(dilate_stream<2, 4, 6, false, true>, 2, 4, 6, true);
    run(dilate_stream<2, 4, 6>, 2, 4, 6, false, 26 * 1024);
    run(dilate_stream<2, 4, 6, true>, 2, 4, 6);
    run(dilate_stream<2, 4, 6, true, true>, 2, 4, 6, true, 26 * 1024);
    run(dilate_stream<2, 8, 10>, 2, 8, 10);
    run(dilate_stream<2, 8, 10, false, true>, 2, 8, 10, true);
    cudaFree(s);
    cudaFree(d);
  }
  return bad_variants ? 1 : 0;
}
