// The mma family's device half: its instances (mma_bf16.cu, mma_fp16.cu) behind the shared skinny launcher.
#include "backends/cuda/skinny.h"

namespace skinnygemm::cuda {

SkinnyKernel find_mma_bf16(int tile_m, int unroll);  // mma_bf16.cu
SkinnyKernel find_mma_fp16(int tile_m, int unroll);  // mma_fp16.cu

namespace {
SkinnyKernel find_mma(const Config& c, DType dtype) {
  if (dtype == DType::BF16) return find_mma_bf16(c.tile_m, c.unroll);
  if (dtype == DType::FP16) return find_mma_fp16(c.tile_m, c.unroll);
  return nullptr;
}
}  // namespace

extern const FamilyDevice mma_device = SkinnyFamilyDevice<find_mma, SkinnyGrid::Persistent>::device;

}  // namespace skinnygemm::cuda
