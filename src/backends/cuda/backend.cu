// cuda::gemm: K = 0 writes zeros; otherwise the config's family runs.
#include "runtime/backends.h"
#include "backends/cuda/check.cuh"
#include "backends/cuda/cublaslt.h"
#include "backends/cuda/skinny.h"

namespace skinnygemm::cuda {

bool config_is_built(const Config& config) {
  if (config.family == Family::Cublaslt) return true;
  if (config.family != Family::Mma && config.family != Family::Bulk && config.family != Family::Reg &&
      config.family != Family::Simt)
    return false;
  return find_skinny_kernel(config, DType::BF16) != nullptr && find_skinny_kernel(config, DType::FP16) != nullptr;
}

void gemm(const Problem& p, const void* x, const void* w, void* y, const Config& config, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  const std::size_t e = dtype_size(p.dtype);
  if (p.k == 0) {
    SKINNYGEMM_CUDA_CHECK(cudaMemset2DAsync(y, p.y_stride() * e, 0, p.n * e, p.m, stream));
    return;
  }
  switch (config.family) {
    case Family::Mma:
    case Family::Bulk:
    case Family::Reg:
    case Family::Simt:
      launch_skinny(p, config, x, w, y, stream);
      return;
    case Family::Cublaslt:
      cublaslt_gemm(p, x, w, y, config.algo, stream);
      return;
    case Family::Cpu:
      break;
  }
  SKINNYGEMM_FAIL("config " << config.name() << " cannot run on the CUDA backend");
}

void gemm_segments(const Problem& p, const void* x, const void* w, const OutputSegment* segments, int count,
                   const Config& config, void* stream) {
  SKINNYGEMM_CHECK(config.family == Family::Mma || config.family == Family::Bulk || config.family == Family::Reg ||
                       config.family == Family::Simt,
                   "config " << config.name() << " cannot write per-segment outputs (only the skinny kernels can)");
  SKINNYGEMM_CHECK(p.k > 0, "K=0 into segments: nothing to launch (the caller writes zeros)");
  launch_skinny(p, config, x, w, nullptr, static_cast<cudaStream_t>(stream), segments, count);
}

}  // namespace skinnygemm::cuda
