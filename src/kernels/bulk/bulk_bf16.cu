// Instances of the bulk family for bf16: every (tile_m, unroll) of include/skinnygemm/config.h.
#include "kernels/common/find_instance.cuh"
#include "kernels/bulk/kernel.cuh"

namespace skinnygemm::cuda {

struct BulkKernels {
  static constexpr const int (&kTiles)[std::size(kSkinnyTileM)] = kSkinnyTileM;
  template <typename T, int kTile, int kUnroll>
  static SkinnyKernel get() { return &skinny_bulk_kernel<T, kTile, kUnroll, bulk_leader_reduce(kTile)>; }
};

SkinnyKernel find_bulk_bf16(int tile_m, int unroll) { return find_instance<BulkKernels, __nv_bfloat16>(tile_m, unroll); }

}  // namespace skinnygemm::cuda
