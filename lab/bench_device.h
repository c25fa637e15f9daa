// The GPU half of the measurement protocol for one problem (docs/measuring.md), run by tune::bench_problem:
// lab/cuda/measure.cu in CUDA builds, lab/no_cuda/bench_stub.cpp's error otherwise.
#pragma once

#include <cstdint>
#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/problem.h"

namespace skinnygemm::cuda {

struct BenchRequest {
  Problem problem;
  Config config;
  int samples = 5;
  int replays = 20;
  bool baselines = true;  // cuBLASLt default and best-of-heuristics, stream-read limit
  bool check = true;      // output vs an FP64 reference computed on the GPU, before timing
  int lab_ablate = 0;     // BenchOptions::lab_ablate (the check runs without it)
};
struct BenchResult {
  double us = 0, spread = 0;
  double stream_read_us = 0;
  double cublaslt_us = 0, cublaslt_best_us = 0;
  std::string cublaslt_best_config;
  double cublaslt_torch_us = 0;  // cublaslt_torch: reduced-precision split-K reductions allowed, as in torch
  double chain_us = 0;           // the dependent-chain floor of the same bytes (lab/cuda/chain_floor.cuh)
  bool checked = false;
  double rel_error = 0;
};
BenchResult bench(const BenchRequest& request);
// Throws Error naming the bytes needed and free unless bench(request for problem) fits in device memory (and its
// FP64 reference in host memory); bench checks it too, callers check every problem before the first measurement.
void check_bench_memory(const Problem& problem);
void check_bench_memory(const Problem& problem, int64_t l2_bytes);

}  // namespace skinnygemm::cuda
