// The seam between the host-only core and the backends. No CUDA header here: the core and every CPU test
// build without a toolkit. When the library is built without CUDA, cuda_stub.cpp answers instead.
#pragma once

#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

// The fused-kernel rung of a FusedProjection: merged output rows [begin, begin + rows) go to y (row stride ldy
// elements, column 0 = row begin); merged rows outside every segment (padding) are not written.
struct OutputSegment {
  int64_t begin = 0, rows = 0;
  void* y = nullptr;
  int64_t ldy = 0;
};
constexpr int kMaxOutputSegments = 4;  // what the kernels' parameter block holds

namespace cpu {
// y = x·w^T with FP32 accumulation, multi-threaded; config must be a cpu_* config.
void gemm(const Problem& problem, const void* x, const void* w, void* y, const Config& config);
// FP64 reference: out[i*n + j] = sum_k x[i,k]*w[j,k] in double (out has m*n elements).
void reference_f64(const Problem& problem, const void* x, const void* w, double* out);
// The same with FP32 accumulation in plain k order, rounded to the dtype (the "naive low-precision"
// reference that GPU tolerances are measured against).
void reference_naive(const Problem& problem, const void* x, const void* w, void* y);
}  // namespace cpu

namespace cuda {
bool built();      // compiled with CUDA
bool available();  // built() and a usable device is present
int device_count();  // visible CUDA devices (CUDA_VISIBLE_DEVICES applies); 0 without CUDA or a device
DeviceInfo device_info();  // the current device (cached per device id)
bool config_is_built(const Config& config);  // an instance exists for this kernel config
// Launches on stream (cudaStream_t). config is mma_*, simt_* or cublaslt*.
void gemm(const Problem& problem, const void* x, const void* w, void* y, const Config& config, void* stream);
// One skinny-kernel launch (config: mma/bulk/reg/simt, supports() checked) whose epilogue writes each
// OutputSegment's rows to its own destination (problem.ldy is ignored; 1..kMaxOutputSegments segments).
void gemm_segments(const Problem& problem, const void* x, const void* w, const OutputSegment* segments, int count,
                   const Config& config, void* stream);

// The GPU half of the benchmark protocol (docs/BENCHMARKING.md), run by tune::bench_problem.
struct BenchRequest {
  Problem problem;
  Config config;
  int samples = 5;
  int replays = 20;
  bool baselines = true;  // cuBLASLt default and best-of-heuristics, stream-read limit
  bool check = true;      // output vs an FP64 reference computed on the GPU, before timing
};
struct BenchResult {
  double us = 0, spread = 0;
  double stream_read_us = 0;
  double cublaslt_us = 0, cublaslt_best_us = 0;
  std::string cublaslt_best_config;
  double cublaslt_torch_us = 0;  // cublaslt_torch: reduced-precision split-K reductions allowed, as in torch
  double chain_us = 0;           // the dependent-chain floor of the same bytes (bench_common.cuh)
  bool checked = false;
  double rel_error = 0;
};
BenchResult bench(const BenchRequest& request);
// Throws Error naming the bytes needed and free unless bench(request for problem) fits in device memory (and its
// FP64 reference in host memory); bench checks it too, callers check every problem before the first measurement.
void check_bench_memory(const Problem& problem);
void check_bench_memory(const Problem& problem, int64_t l2_bytes);
}  // namespace cuda

}  // namespace skinnygemm
