#include "cuda/skinny.h"

#include <mutex>
#include <set>

#include "core/cost_model.h"
#include "cuda/launch.cuh"

namespace skinnygemm::cuda {

SkinnyKernel find_skinny_kernel(const Config& c, DType dtype) {
  const bool bf16 = dtype == DType::BF16;
  if (dtype != DType::BF16 && dtype != DType::FP16) return nullptr;
  if (c.family == Family::Mma) return bf16 ? find_mma_bf16(c.tile_m, c.unroll) : find_mma_fp16(c.tile_m, c.unroll);
  if (c.family == Family::Simt) return bf16 ? find_simt_bf16(c.tile_m, c.unroll) : find_simt_fp16(c.tile_m, c.unroll);
  return nullptr;
}

namespace {
// Raise a kernel's dynamic shared-memory limit once (only needed above the 48 KB default).
void allow_smem(SkinnyKernel kernel, std::size_t bytes) {
  if (bytes <= 48 * 1024) return;
  static std::mutex mutex;
  static std::set<std::pair<SkinnyKernel, std::size_t>> done;
  std::lock_guard<std::mutex> lock(mutex);
  if (!done.insert({kernel, bytes}).second) return;
  SKINNYGEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
}
}  // namespace

void launch_skinny(const Problem& p, const Config& c, const void* x, const void* w, void* y, cudaStream_t stream) {
  SkinnyKernel kernel = find_skinny_kernel(c, p.dtype);
  SKINNYGEMM_CHECK(kernel != nullptr, c.name() << " is not built for " << dtype_name(p.dtype));
  const Decomposition d = decompose(c, p);
  SkinnyParams params{};
  params.x = x;
  params.w = w;
  params.y = y;
  params.m = static_cast<int>(p.m);
  params.n = static_cast<int>(p.n);
  params.k = static_cast<int>(p.k);
  params.ldx = p.x_stride();
  params.ldw = p.w_stride();
  params.ldy = p.y_stride();
  params.warps_n = c.warps_n;
  params.warps_k = c.warps_k;
  params.split_k = c.split_k;
  params.k_chunks = static_cast<int>(d.k_chunks);
  LaunchShape shape;
  shape.grid = dim3(static_cast<unsigned>(c.split_k), static_cast<unsigned>(d.row_blocks), 1);
  shape.block = dim3(static_cast<unsigned>(c.threads()), 1, 1);
  shape.smem = static_cast<std::size_t>(skinny_smem_bytes(c.family == Family::Mma, c.tile_m, c.warps_n, c.warps_k, c.unroll));
  shape.cluster_x = c.split_k;
  allow_smem(kernel, shape.smem);
  launch(kernel, shape, stream, params);
}

}  // namespace skinnygemm::cuda
