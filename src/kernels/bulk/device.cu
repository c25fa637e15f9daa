// The bulk family's device half: its instances (bulk_bf16.cu, bulk_fp16.cu) behind the shared skinny launcher.
#include "backends/cuda/skinny.h"

namespace skinnygemm::cuda {

SkinnyKernel find_bulk_bf16(int tile_m, int unroll);  // bulk_bf16.cu
SkinnyKernel find_bulk_fp16(int tile_m, int unroll);  // bulk_fp16.cu

namespace {
SkinnyKernel find_bulk(const Config& c, DType dtype) {
  if (dtype == DType::BF16) return find_bulk_bf16(c.tile_m, c.unroll);
  if (dtype == DType::FP16) return find_bulk_fp16(c.tile_m, c.unroll);
  return nullptr;
}
}  // namespace

extern const FamilyDevice bulk_device = SkinnyFamilyDevice<find_bulk>::device;

}  // namespace skinnygemm::cuda
