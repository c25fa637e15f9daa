// Owners of CUDA resources for the host code of the benchmarks (step.cu, mla.cu): device memory freed in reverse
// order when the owner goes away (also when its constructor throws), a non-blocking stream, and an instantiated
// graph with the two events that time its replays.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/cuda/check.cuh"
#include "lab/stats.h"

namespace skinnygemm::cuda {

struct Allocations {
  std::vector<void*> ptrs;
  Allocations() = default;
  Allocations(const Allocations&) = delete;
  Allocations& operator=(const Allocations&) = delete;
  ~Allocations() {
    for (auto it = ptrs.rbegin(); it != ptrs.rend(); ++it) cudaFree(*it);
  }
  char* get(int64_t bytes, const char* what) {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, static_cast<std::size_t>(std::max<int64_t>(bytes, 256)));
    if (err != cudaSuccess) cudaGetLastError();  // a failed allocation must not poison later checks
    SKINNYGEMM_CHECK(err == cudaSuccess, "cudaMalloc of " << bytes << " bytes for " << what << " failed: "
                                                          << cudaGetErrorName(err));
    ptrs.push_back(p);
    return static_cast<char*>(p);
  }
  void release(void* p) {
    ptrs.erase(std::remove(ptrs.begin(), ptrs.end(), p), ptrs.end());
    cudaFree(p);
  }
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { SKINNYGEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(s); }
};

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  // Ends the capture on stream into this graph, instantiates it and creates its timing events.
  void end_capture(cudaStream_t stream) {
    SKINNYGEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    SKINNYGEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    SKINNYGEMM_CUDA_CHECK(cudaEventCreate(&start));
    SKINNYGEMM_CUDA_CHECK(cudaEventCreate(&stop));
  }
  // After two warm-up replays (first-launch costs, clocks): how many back-to-back replays take about
  // sample_ms (1..1000).
  int replays_for(cudaStream_t stream, double sample_ms) const {
    replay_ms(stream, 2);
    const double one = std::max(replay_ms(stream, 1), 1e-3);
    return static_cast<int>(std::clamp(std::ceil(sample_ms / one), 1.0, 1000.0));
  }
  // The one GPU timing loop of the lab: `samples` samples of `replays` back-to-back replays, in microseconds per
  // unit of work (a replay holds `units_per_replay` of them: copies of a GEMM, one step), median and spread.
  SampleSummary sample_us(cudaStream_t stream, int samples, int replays, double units_per_replay = 1) const {
    std::vector<double> us;
    for (int s = 0; s < samples; ++s) us.push_back(1e3 * replay_ms(stream, replays) / (replays * units_per_replay));
    return summarize_samples(std::move(us));
  }
  // Milliseconds of `replays` back-to-back replays on stream.
  double replay_ms(cudaStream_t stream, int replays) const {
    SKINNYGEMM_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < replays; ++i) SKINNYGEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    SKINNYGEMM_CUDA_CHECK(cudaEventRecord(stop, stream));
    SKINNYGEMM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SKINNYGEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

}  // namespace skinnygemm::cuda
