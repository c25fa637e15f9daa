// The reg family's device half: its instances (reg_bf16.cu, reg_fp16.cu) behind the shared skinny launcher.
#include "backends/cuda/skinny.h"

namespace skinnygemm::cuda {

SkinnyKernel find_reg_bf16(int tile_m, int unroll);  // reg_bf16.cu
SkinnyKernel find_reg_fp16(int tile_m, int unroll);  // reg_fp16.cu

namespace {
SkinnyKernel find_reg(const Config& c, DType dtype) {
  if (dtype == DType::BF16) return find_reg_bf16(c.tile_m, c.unroll);
  if (dtype == DType::FP16) return find_reg_fp16(c.tile_m, c.unroll);
  return nullptr;
}
}  // namespace

extern const FamilyDevice reg_device = SkinnyFamilyDevice<find_reg, SkinnyGrid::Persistent>::device;

}  // namespace skinnygemm::cuda
