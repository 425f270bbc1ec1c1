// What the micro-benchmarks in this folder share: CK (a CUDA call that returns 1 from main on
// an error) and time_graph, which times a launch as pixflow-bench times ops: a CUDA graph of N
// calls, the median of 5 replays, divided by N (µs per call).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>

#define CK(x)                                        \
  do {                                               \
    cudaError_t e = (x);                             \
    if (e) {                                         \
      printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                      \
    }                                                \
  } while (0)

template <class F>
float time_graph(cudaStream_t st, F launch, int N) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  launch();
  cudaStreamSynchronize(st);
  cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < N; ++i) launch();
  cudaStreamEndCapture(st, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaGraphLaunch(ge, st);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best[5];
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(a, st);
    cudaGraphLaunch(ge, st);
    cudaEventRecord(b, st);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&best[r], a, b);
  }
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 5; ++j)
      if (best[j] < best[i]) {
        float x = best[i];
        best[i] = best[j];
        best[j] = x;
      }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  return best[2] * 1000.f / N;
}
