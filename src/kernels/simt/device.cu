// The simt family's device half: its instances (simt_bf16.cu, simt_fp16.cu) behind the shared skinny launcher.
#include "backends/cuda/skinny.h"

namespace skinnygemm::cuda {

SkinnyKernel find_simt_bf16(int tile_m, int unroll);  // simt_bf16.cu
SkinnyKernel find_simt_fp16(int tile_m, int unroll);  // simt_fp16.cu

namespace {
SkinnyKernel find_simt(const Config& c, DType dtype) {
  if (dtype == DType::BF16) return find_simt_bf16(c.tile_m, c.unroll);
  if (dtype == DType::FP16) return find_simt_fp16(c.tile_m, c.unroll);
  return nullptr;
}
}  // namespace

extern const FamilyDevice simt_device = SkinnyFamilyDevice<find_simt, SkinnyGrid::Persistent>::device;

}  // namespace skinnygemm::cuda
