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
  std::string str() const;
};
CostBreakdown estimate(const Config& config, const Problem& problem, const DeviceInfo& device);

// Whether the GPU heuristic scores c for p: the register-ring family only (docs/kernels.md: it won every point
// where a kernel beat cuBLASLt in the H200 tuning), the smallest token tile that holds M (larger ones stream the
// same bytes with more MMAs and x loads) and the warp layouts the model was fitted on (1x8, 1x4, 2x4, 4x2).
bool heuristic_scores(const Config& c, const Problem& p);
// Whether a prediction of us for c beats the best so far: faster by more than 0.1%, or as fast with a smaller
// unroll (fewer registers: more CTAs fit beside the next kernel's). Deterministic for equal predictions.
bool better_pick(double us, const Config& c, double best_us, const Config& best);

// Registers per thread and shared memory per CTA the kernel instance needs (estimates kept in step with
// ptxas -v of the built instances; see docs/kernels.md).
int estimated_registers(const Config& config);
int64_t smem_bytes(const Config& config, const Problem& problem);  // dynamic shared memory per CTA (bulk: depends on M)

}  // namespace skinnygemm
