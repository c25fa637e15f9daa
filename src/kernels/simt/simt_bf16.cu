// Instances of the simt family for bf16: every (tile_m, unroll) of include/skinnygemm/config.h.
#include "kernels/common/find_instance.cuh"
#include "kernels/simt/kernel.cuh"

namespace skinnygemm::cuda {

struct SimtKernels {
  static constexpr const int (&kTiles)[std::size(kSimtTileM)] = kSimtTileM;
  template <typename T, int kTile, int kUnroll>
  static SkinnyKernel get() { return &skinny_simt_kernel<T, kTile, kUnroll>; }
};

SkinnyKernel find_simt_bf16(int tile_m, int unroll) { return find_instance<SimtKernels, __nv_bfloat16>(tile_m, unroll); }

}  // namespace skinnygemm::cuda
