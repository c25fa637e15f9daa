// The simt family (kernels/simt/kernel.cuh): FP32 FMAs on CUDA cores for the smallest M, on the same chunk ring.
#include <iterator>

#include "kernels/common/ring_cost.h"
#include "kernels/common/tiled.h"
#include "kernels/common/tiling.h"

namespace skinnygemm {

#ifdef SKINNYGEMM_WITH_CUDA
namespace cuda {
extern const FamilyDevice simt_device;  // kernels/simt/device.cu
}
#endif

namespace {

constexpr TiledTraits kTraits{kSimtTileM, std::size(kSimtTileM), kChunkK};

int simt_registers(const Config& c) {  // ptxas -v, sm_90a, bf16, persistent kernels with the shared-memory chunk ring
  return c.tile_m == 4 ? 80 : (c.unroll == 4 ? 64 : 72);
}

int64_t simt_smem_bytes(const Config& c, const Problem&) {
  return skinny_smem_bytes(/*mma=*/false, c.tile_m, c.warps_n, c.warps_k, c.unroll);
}

bool simt_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  return tiled_fits_shape(c, p, dev, why_not, every_warp_has_a_chunk);
}

CostBreakdown simt_estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  return estimate_chunk_ring(c, p, dev, /*mma=*/false);
}

}  // namespace

// Not scored by the heuristic (heuristic_scores null): the tuner and forced configs still run it.
extern const FamilyDescriptor simt_family{"simt", /*gpu=*/true, /*kernel=*/true, &kTraits,
                                         parse_tiled, print_tiled, listed_tiled, /*storable=*/nullptr,
                                         tiled_supports, simt_fits_shape, simt_smem_bytes, simt_registers,
                                         simt_estimate, /*heuristic_scores=*/nullptr, /*single_wave=*/false,
                                         /*fitted_constants=*/nullptr, SKINNYGEMM_DEVICE_HALF(cuda::simt_device),
                                         /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
