// The analytic cost model behind the heuristic: how long a config should take on a problem, from the
// bytes each CTA streams, waves and wave efficiency at the device's SM count, bytes in flight, the serial
// chain of loads each warp walks, split-K reduction and tensor-core issue. Host-only.
#pragma once

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

// Whether the GPU heuristic scores c for p: the stage ring (bulk) with the 8-token tile at M <= 8, in its two
// layouts (w1x4, w1x8). Measured on the H200 (docs/tuning.md, "The heuristic"): the stage ring won 32 of the
// 40 points where a kernel beat cuBLASLt in the Kimi-K3 table, all at M <= 8 or on shapes under 2.1 MB; the
// register-ring model that scored alone before (2a0a274) picked a kernel slower than cuBLASLt's default at 123
// of 259 held-out points. Past M = 8 cuBLASLt is the heuristic's pick.
bool heuristic_scores(const Config& c, const Problem& p);
// A kernel is the heuristic's pick only where the model predicts it at most this fraction of cuBLASLt's
// predicted time: the bulk model's level is off by 20% (median) on the shapes it was fitted to.
constexpr double kHeuristicKernelMargin = 0.85;
// Whether a prediction of us for c beats the best so far: faster by more than 0.1%, or as fast with a smaller
// unroll (fewer registers: more CTAs fit beside the next kernel's). Deterministic for equal predictions.
bool better_pick(double us, const Config& c, double best_us, const Config& best);

// Registers per thread and shared memory per CTA the kernel instance needs (estimates kept in step with
// ptxas -v of the built instances; see docs/kernels.md).
int estimated_registers(const Config& config);
int64_t smem_bytes(const Config& config, const Problem& problem);  // dynamic shared memory per CTA (bulk: depends on M)

}  // namespace skinnygemm
