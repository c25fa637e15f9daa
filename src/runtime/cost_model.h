// The analytic cost model behind the heuristic: how long a config should take on a problem, from the
// bytes each CTA streams, waves and wave efficiency at the device's SM count, bytes in flight, the serial
// chain of loads each warp walks, split-K reduction and tensor-core issue. Host-only.
#pragma once

#include <functional>
#include <string>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm {

// Tile and split arithmetic, shared by the launcher (grid sizes) and the model.
struct Decomposition {
  int64_t row_tiles = 0;    // ceil(N / 16)
  int64_t row_blocks = 0;   // ceil(row_tiles / warps_n): CTAs along N
  int64_t ctas = 0;         // row_blocks * split_k
  int64_t k_chunks = 0;     // ceil(K / 32); bulk: ceil(K / 256) stages
  int64_t chunks_per_warp = 0;  // ceil(k_chunks / (warps_k * split_k))
};
Decomposition decompose(const Config& config, const Problem& problem);

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
CostBreakdown estimate(const Config& config, const Problem& problem, const DeviceInfo& device);

// Whether the GPU heuristic scores c for p: the stage ring (bulk, 8-token tile, layouts w1x4 and w1x8) up to
// M = kHeuristicBulkMaxM, and the register ring at the smallest token tile holding M in the layouts the tuner
// measures (w1x8, w1x4, w2x4, w4x2). The stage ring stops at M = 4 as in the shipped table (scripts/tune-table):
// a register ring launched behind a stage ring runs at half speed (docs/kernels.md, "Session 4").
bool heuristic_scores(const Config& c, const Problem& p);
constexpr int64_t kHeuristicBulkMaxM = 4;
// A kernel is the heuristic's pick only where the model predicts it at most this fraction of cuBLASLt's
// predicted time (scripts/heuristic_cv.py: 0.85 kept picks within 10% of the best at the most points under
// cross-validation; 0.9 picked kernels slower than cuBLASLt at 14 of 701 points, 0.85 at 3).
constexpr double kHeuristicKernelMargin = 0.85;
// Whether a prediction of us for c beats the best so far: faster by more than 0.1%, or as fast with a smaller
// unroll (fewer registers: more CTAs fit beside the next kernel's). Deterministic for equal predictions.
bool better_pick(double us, const Config& c, double best_us, const Config& best);

// The shape arithmetic of supports() for a tiled kernel config (token tile, K a multiple of 8 with work for every
// K slice, the bulk ring's layout, CTAs along N, shared memory): what needs no GPU and no built instance.
bool fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not = nullptr);

// The heuristic's kernel: among the listed configs that heuristic_scores() admits on a GPU (every CPU config on
// the CPU) and `runnable` lets through (select.cpp: supports()), the fastest predicted; stage rings only in one
// wave (the model misses what a second wave costs: 7168x1536 M = 1 predicted 0.82x cuBLASLt, measured 1.04x).
// False if none is left. Whether it beats cuBLASLt is select.cpp's decision (kHeuristicKernelMargin).
bool best_scored_config(const Problem& p, const DeviceInfo& dev, const std::function<bool(const Config&)>& runnable,
                        Config* best, double* best_us);

// Registers per thread and shared memory per CTA the kernel instance needs (estimates kept in step with
// ptxas -v of the built instances; see docs/kernels.md).
int estimated_registers(const Config& config);
int64_t smem_bytes(const Config& config, const Problem& problem);  // dynamic shared memory per CTA (bulk: depends on M)

}  // namespace skinnygemm
