// The cost model of the warp chunk-ring families (mma: cp.async ring + MMAs; simt: the same ring + FP32 FMAs),
// from the H200 sweeps of 2026-11-29 (docs/kernels.md). The heuristic does not score these families (it scores
// bulk and reg); the model ranks them for SKINNYGEMM_LOG and the tuner's notes. Host-only.
#pragma once

#include "runtime/cost_model.h"

namespace skinnygemm {

CostBreakdown estimate_chunk_ring(const Config& config, const Problem& problem, const DeviceInfo& device, bool mma);

// Resident CTAs per SM the device allows for a CTA of `threads` threads using `registers` registers per thread
// (rounded up to the allocation unit of 8; 0: not limited by registers) and `smem` bytes of shared memory (0: not
// limited by shared memory), from the device's limits per SM.
int64_t resident_ctas_per_sm(const DeviceInfo& device, int threads, int registers, int64_t smem);

}  // namespace skinnygemm
