// Instances of the reg family for bf16: every (tile_m, unroll) of include/skinnygemm/config.h.
#include "kernels/common/find_instance.cuh"
#include "kernels/reg/kernel.cuh"

namespace skinnygemm::cuda {

struct RegKernels {
  static constexpr const int (&kTiles)[std::size(kSkinnyTileM)] = kSkinnyTileM;
  template <typename T, int kTile, int kUnroll>
  static SkinnyKernel get() { return &skinny_reg_kernel<T, kTile, kUnroll>; }
};

SkinnyKernel find_reg_bf16(int tile_m, int unroll) { return find_instance<RegKernels, __nv_bfloat16>(tile_m, unroll); }

}  // namespace skinnygemm::cuda
