// The mma family (kernels/mma/kernel.cuh): the swapped-operand MMAs fed by each warp's cp.async chunk ring.
#include <iterator>

#include "kernels/common/ring_cost.h"
#include "kernels/common/tiled.h"
#include "kernels/common/tiling.h"

namespace skinnygemm {

#ifdef SKINNYGEMM_WITH_CUDA
namespace cuda {
extern const FamilyDevice mma_device;  // kernels/mma/device.cu
}
#endif

namespace {

constexpr TiledTraits kTraits{kMmaTileM, std::size(kMmaTileM), kChunkK};

int mma_registers(const Config& c) {  // ptxas -v, sm_90a, bf16, persistent kernels with the shared-memory chunk ring
  const bool u4 = c.unroll == 4;
  switch (c.tile_m) {
    case 8: return u4 ? 60 : 72;
    case 16: return 72;
    case 32: return 90;
    default: return 144;
  }
}

int64_t mma_smem_bytes(const Config& c, const Problem&) {
  return skinny_smem_bytes(/*mma=*/true, c.tile_m, c.warps_n, c.warps_k, c.unroll);
}

bool mma_fits_shape(const Config& c, const Problem& p, const DeviceInfo& dev, std::string* why_not) {
  return tiled_fits_shape(c, p, dev, why_not, every_warp_has_a_chunk);
}

CostBreakdown mma_estimate(const Config& c, const Problem& p, const DeviceInfo& dev) {
  return estimate_chunk_ring(c, p, dev, /*mma=*/true);
}

}  // namespace

// Not scored by the heuristic (heuristic_scores null): the tuner and forced configs still run it.
extern const FamilyDescriptor mma_family{"mma", /*gpu=*/true, /*kernel=*/true, &kTraits,
                                         parse_tiled, print_tiled, listed_tiled, /*storable=*/nullptr,
                                         tiled_supports, mma_fits_shape, mma_smem_bytes, mma_registers,
                                         mma_estimate, /*heuristic_scores=*/nullptr, /*single_wave=*/false,
                                         /*fitted_constants=*/nullptr, SKINNYGEMM_DEVICE_HALF(cuda::mma_device),
                                         /*first_cut=*/nullptr, /*structural_pick=*/nullptr};

}  // namespace skinnygemm
