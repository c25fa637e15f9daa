// How many CTAs of a config an SM holds, from the device's limits: the stage ring's cost model (bulk) bounds its
// in-flight bytes with it. Host-only.
#pragma once

#include <cstdint>

#include "runtime/cost_model.h"

namespace skinnygemm {

// Resident CTAs per SM the device allows for a CTA of `threads` threads using `registers` registers per thread
// (rounded up to the allocation unit of 8; 0: not limited by registers) and `smem` bytes of shared memory (0: not
// limited by shared memory), from the device's limits per SM.
int64_t resident_ctas_per_sm(const DeviceInfo& device, int threads, int registers, int64_t smem);

}  // namespace skinnygemm
