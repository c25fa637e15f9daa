// The cost model behind the heuristic: how long a config should take on a problem. Each family's descriptor
// carries its own model (src/kernels/<family>/family.cpp); this is the part that ranks them. Host-only.
#pragma once

#include <functional>
#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

struct CostBreakdown {
  double us = 0;            // predicted time
  double stream_us = 0;     // weight bytes at full bandwidth
  double wave_eff = 0;      // waves / ceil(waves)
  double inflight_eff = 0;  // achieved fraction of bandwidth from bytes in flight
  double chain_us = 0;      // latency-bound lower bound from each warp's serial load chain
  double compute_us = 0;    // tensor-core / FMA issue bound
  int ctas_per_sm = 0;
  double waves = 0;         // bulk: CTAs / (SMs x resident CTAs per SM); above 1 a second wave waits
  std::string str() const;
};
// The family's model on a GPU; on the CPU device every config is scored by the CPU's model.
CostBreakdown estimate(const Config& config, const Problem& problem, const DeviceInfo& device);

// Whether the GPU heuristic scores c for p (the family's heuristic_scores; false for families without one).
bool heuristic_scores(const Config& c, const Problem& p);
// A kernel is the heuristic's pick only where the model predicts it at most this fraction of cuBLASLt's
// predicted time (scripts/heuristic_cv.py: 0.85 kept picks within 10% of the best at the most points under
// cross-validation; 0.9 picked kernels slower than cuBLASLt at 14 of 701 points, 0.85 at 3).
constexpr double kHeuristicKernelMargin = 0.85;
// Whether a prediction of us for c beats the best so far: faster by more than 0.1%, or as fast with a smaller
// unroll (fewer registers: more CTAs fit beside the next kernel's). Deterministic for equal predictions.
bool better_pick(double us, const Config& c, double best_us, const Config& best);

// The shape arithmetic of supports() (the family's fits_shape: token tile, K slices, CTAs along N, shared memory):
// what needs no GPU and no built instance. True for families without shape limits.
bool fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not = nullptr);

// The heuristic's kernel: among the listed configs that heuristic_scores() admits on a GPU (every CPU config on
// the CPU) and `runnable` lets through (select.cpp: supports()), the fastest predicted; families marked
// single_wave only where every CTA is resident at once. False if none is left. Whether it beats cuBLASLt is
// select.cpp's decision (kHeuristicKernelMargin).
bool best_scored_config(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                        Config* best, double* best_us);

// Registers per thread and dynamic shared memory per CTA the family's instance needs (estimates kept in step
// with ptxas -v of the built instances; see docs/kernels.md). Shared memory may depend on M (bulk).
int estimated_registers(const Config& config);
int64_t smem_bytes(const Config& config, const Problem& problem);

}  // namespace skinnygemm
