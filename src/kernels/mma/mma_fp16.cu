// Instances of the mma family for fp16: every (tile_m, unroll) of include/skinnygemm/config.h.
#include "kernels/common/find_instance.cuh"
#include "kernels/mma/kernel.cuh"

namespace skinnygemm::cuda {

struct MmaKernels {
  static constexpr const int (&kTiles)[std::size(kMmaTileM)] = kMmaTileM;
  template <typename T, int kTile, int kUnroll>
  static SkinnyKernel get() { return &skinny_mma_kernel<T, kTile, kUnroll>; }
};

SkinnyKernel find_mma_fp16(int tile_m, int unroll) { return find_instance<MmaKernels, __half>(tile_m, unroll); }

}  // namespace skinnygemm::cuda
