// Host time per call of the runtime's entry points on the CPU backend, with the work itself taken out: each path
// is timed as a whole and next to the backend call it ends in (the "launch"), on problems whose launch is
// nearly free (K = 0: the CPU backend writes N zeros; the fused projection's segments have K = 8). What is left,
// total minus launch, is the selection, plan-cache and bookkeeping time that an eager decode loop pays per call
// beside its kernels (`skinnygemm overhead`, docs/benchmarks/cpu/host_overhead.md).
#pragma once

#include <string>

#include "lab/stats.h"
#include <vector>

namespace skinnygemm::tune {

struct OverheadOptions {
  int samples = 21;     // median over these
  int calls = 200000;   // back-to-back calls per sample
};

struct OverheadRow {
  std::string path;     // "gemm_cache_hit", "plan_run", "select_cache_hit", "fused_run"; GPU: also "launch_alone",
                        // "plan_run_tma", "plan_run_cublaslt" and what other libraries take of those (no target):
                        // "cublaslt_matmul_alone" (cuBLASLt's own call), "tma_two_map_encodes" (the driver's, no launch)
  std::string problem;  // what it ran
  double total_us = 0;     // per call, median over the samples
  double launch_us = 0;    // the backend call(s) alone, per call, median (0 where there is none)
  double host_us = 0;      // total_us - launch_us
  double best_host_us = 0; // the same from the fastest sample of each (a loaded machine only adds time)
  double spread = 0;       // of total_us
  double target_us = 0;    // the acceptance bound on host time (0 = none), judged on best_host_us
};

std::vector<OverheadRow> measure_host_overhead(const OverheadOptions& options);

// One row: host = total - launch, from the medians and from the fastest samples.
OverheadRow overhead_row(const std::string& path, const std::string& problem, const SampleSummary& total,
                         const SampleSummary& launch, double target_us);

// On the GPU at most this many calls per sample: the launch queue (1024 entries) never fills, so the host is never
// throttled by the GPU.
constexpr int kGpuOverheadMaxCalls = 256;

// The same paths on the GPU (lab/cuda/overhead.cu), in a graph-free loop of real launches on one stream:
// samples of min(calls, kGpuOverheadMaxCalls) calls, the queue drained before each sample (untimed). The launch is
// a cudaLaunchKernelEx of an empty kernel with the same PDL attribute and a 128-byte argument block, timed in
// samples alternating with each path's (so that clock drift hits both); host = total - launch. The problems are
// small (1 x 256 x 256, two 128-row segments fused into one launch), so the GPU keeps up with the host; the
// problem column names the config each path ran.
std::vector<OverheadRow> measure_host_overhead_cuda(const OverheadOptions& options);

}  // namespace skinnygemm::tune
